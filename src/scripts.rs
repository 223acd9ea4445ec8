//! The server-side Lua scripts, compiled into the binary from `lua/`.
//!
//! Each lease-layout script is `lua/lib.lua` (shared helpers) followed by its own file, so the
//! helpers exist once. Redis runs a script atomically: the check and the write of a claim cannot be
//! split by another client.

use std::sync::LazyLock;

/// A script's source and its SHA1 (the name EVALSHA knows it by).
pub struct LuaScript {
    source: &'static str,
    sha1: String,
}

impl LuaScript {
    fn new(source: &'static str) -> Self {
        let sha1 = redis::Script::new(source).get_hash().to_string();
        LuaScript { source, sha1 }
    }

    pub fn source(&self) -> &'static str {
        self.source
    }

    pub fn sha1(&self) -> &str {
        &self.sha1
    }
}

macro_rules! lease_script {
    ($file:literal) => {
        LazyLock::new(|| {
            LuaScript::new(concat!(
                include_str!("../lua/lib.lua"),
                "\n",
                include_str!("../lua/pause.lua"),
                "\n",
                include_str!(concat!("../lua/", $file))
            ))
        })
    };
}

/// Claims a run: won / overlap / done / running.
pub static CLAIM: LazyLock<LuaScript> = lease_script!("claim.lua");
/// Extends the lease of the current attempt.
pub static HEARTBEAT: LazyLock<LuaScript> = lease_script!("heartbeat.lua");
/// Ends the current attempt as finished or failed.
pub static FINISH: LazyLock<LuaScript> = lease_script!("finish.lua");
/// Trims history on demand.
pub static TRIM: LazyLock<LuaScript> = lease_script!("trim.lua");
/// Ends a run in progress for an operator (`anarchon release`).
pub static RELEASE: LazyLock<LuaScript> = lease_script!("release.lua");

/// Each claim-only script is `lua/one_key.lua` followed by its own file.
macro_rules! one_key_script {
    ($file:literal) => {
        LazyLock::new(|| {
            LuaScript::new(concat!(
                include_str!("../lua/one_key.lua"),
                "\n",
                include_str!(concat!("../lua/", $file))
            ))
        })
    };
}

/// The script strategy's claim (claim-only layout: one key).
pub static CLAIM_WINDOW: LazyLock<LuaScript> = one_key_script!("claim_window.lua");
/// Records a claim-only run's result, once (one key).
pub static FINISH_CLAIM_ONLY: LazyLock<LuaScript> = one_key_script!("finish_claim_only.lua");
/// Creates and configures an idmp stream once.
pub static IDMP_PREPARE: LazyLock<LuaScript> = one_key_script!("idmp_prepare.lua");

/// `anarchon migrate`: the format key's switch, one key.
pub static FORMAT_SWITCH: LazyLock<LuaScript> =
    LazyLock::new(|| LuaScript::new(include_str!("../lua/format_switch.lua")));
/// `anarchon migrate`: the lock that keeps two migrations apart, one key.
pub static MIGRATION_LOCK: LazyLock<LuaScript> =
    LazyLock::new(|| LuaScript::new(include_str!("../lua/migration_lock.lua")));

/// Store format 2's lease-layout scripts: each is `lua/v2/lib.lua` followed by its own file.
pub mod v2 {
    use super::LuaScript;
    use std::sync::LazyLock;

    macro_rules! format_2_script {
        ($file:literal) => {
            LazyLock::new(|| {
                LuaScript::new(concat!(
                    include_str!("../lua/v2/lib.lua"),
                    "\n",
                    include_str!("../lua/pause.lua"),
                    "\n",
                    include_str!(concat!("../lua/v2/", $file))
                ))
            })
        };
    }

    /// Claims a run: won / overlap / done / running.
    pub static CLAIM: LazyLock<LuaScript> = format_2_script!("claim.lua");
    /// Extends the lease of the current attempt.
    pub static HEARTBEAT: LazyLock<LuaScript> = format_2_script!("heartbeat.lua");
    /// Ends the current attempt as finished or failed.
    pub static FINISH: LazyLock<LuaScript> = format_2_script!("finish.lua");
    /// Trims history on demand.
    pub static TRIM: LazyLock<LuaScript> = format_2_script!("trim.lua");
    /// Ends a run in progress for an operator (`anarchon release`).
    pub static RELEASE: LazyLock<LuaScript> = format_2_script!("release.lua");
    /// Converts one format 1 job (`anarchon migrate`).
    pub static CONVERT: LazyLock<LuaScript> = format_2_script!("convert.lua");
}
