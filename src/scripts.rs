//! The server-side Lua scripts, compiled into the binary from `lua/`.
//!
//! Each lease-layout script is `lua/lib.lua` (shared helpers) followed by its own file, so the
//! helpers exist once. Redis runs a script atomically: the check and the write of a claim cannot be
//! split by another client.
//!
//! A script carries only the helpers it uses ([`bundle`]): Redis runs a script's whole text on
//! every call, and each `local function` of a library is a closure built again each time (about
//! 0.1 µs apiece on Redis 7), a cost every other client of the server waits for.

use std::sync::LazyLock;

/// A script's source and its SHA1 (the name EVALSHA knows it by), and, for the lease scripts, the
/// same script as a function of [`LIBRARY`] or [`v2::LIBRARY`] (the name FCALL knows it by).
pub struct LuaScript {
    source: String,
    sha1: String,
    function: Option<(String, &'static FunctionLibrary)>,
}

impl LuaScript {
    fn new(source: impl Into<String>) -> Self {
        let source = source.into();
        let sha1 = redis::Script::new(&source).get_hash().to_string();
        LuaScript {
            source,
            sha1,
            function: None,
        }
    }

    /// The function that runs this script on servers with Redis Functions (7.0+, Valkey), and
    /// the library that defines it.
    pub fn function(&self) -> Option<(&str, &'static FunctionLibrary)> {
        self.function
            .as_ref()
            .map(|(name, lib)| (name.as_str(), *lib))
    }

    /// A library's helpers that `body` needs, followed by `body` (see [`bundle`]).
    fn bundled(library: &[&str], body: &str) -> Self {
        Self::new(bundle(&library.join("\n"), body))
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    pub fn sha1(&self) -> &str {
        &self.sha1
    }
}

/// One top-level definition of a library: the names it defines and its text (with the comment
/// right above it).
struct Definition<'a> {
    names: Vec<&'a str>,
    lines: Vec<&'a str>,
}

/// The names a top-level `local` line defines: `local function name(`, `local a, b = `.
fn defined_names(line: &str) -> Option<Vec<&str>> {
    let rest = line.strip_prefix("local ")?;
    let rest = rest.strip_prefix("function ").unwrap_or(rest);
    let end = rest.find(['=', '(']).unwrap_or(rest.len());
    let names: Vec<&str> = rest[..end].split(',').map(str::trim).collect();
    names
        .iter()
        .all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then_some(names)
}

/// Whether `text` uses the identifier `name` (not as part of a longer one).
fn mentions(text: &str, name: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// `library` cut down to what `body` uses, then `body`. The library is read as its preamble (the
/// lines before its first definition, always kept) and top-level definitions, each a line starting
/// `local ` at column 0, with the comment lines right above it and everything up to the next one.
/// A definition is kept when the body, or a kept definition, mentions a name it defines (a mention
/// in a comment keeps it too: erring towards keeping is safe). Order is kept, so every helper is
/// still defined before its users.
pub fn bundle(library: &str, body: &str) -> String {
    let mut out = helpers_for(library, body);
    out.push('\n');
    out.push_str(body);
    out
}

/// The preamble and the definitions of `library` that `body` uses, directly or through other
/// helpers (see [`bundle`]).
fn helpers_for(library: &str, body: &str) -> String {
    let mut preamble: Vec<&str> = Vec::new();
    let mut definitions: Vec<Definition> = Vec::new();
    let mut comment: Vec<&str> = Vec::new();
    for line in library.lines() {
        if let Some(names) = defined_names(line) {
            let mut lines = std::mem::take(&mut comment);
            lines.push(line);
            definitions.push(Definition { names, lines });
        } else if line.starts_with("--") || line.trim().is_empty() {
            comment.push(line);
        } else {
            match definitions.last_mut() {
                Some(last) => last.lines.append(&mut comment),
                None => preamble.append(&mut comment),
            }
            match definitions.last_mut() {
                Some(last) => last.lines.push(line),
                None => preamble.push(line),
            }
        }
    }
    if definitions.is_empty() {
        preamble.append(&mut comment);
    }
    let mut kept = vec![false; definitions.len()];
    let mut pending = vec![body.to_string()];
    while let Some(text) = pending.pop() {
        for (i, definition) in definitions.iter().enumerate() {
            if !kept[i] && definition.names.iter().any(|n| mentions(&text, n)) {
                kept[i] = true;
                pending.push(definition.lines.join("\n"));
            }
        }
    }
    let mut out: Vec<&str> = preamble;
    for (definition, _) in definitions.iter().zip(&kept).filter(|(_, k)| **k) {
        out.extend(&definition.lines);
    }
    out.join("\n")
}

/// A Redis Functions library (`FUNCTION LOAD`): the library's helpers are defined once, when
/// it is loaded, instead of on every call as a script's are, which is most of what a short script
/// costs beyond its commands (tests measure FCALL at about 80% of EVALSHA for claim + finish).
/// Its name carries a hash of its text, so hosts running different anarchon versions each load
/// and call their own, side by side.
pub struct FunctionLibrary {
    pub name: String,
    pub source: String,
}

impl FunctionLibrary {
    /// A library of `scripts` (file name, body), each registered as `<name>_<file stem>`, with
    /// the helpers of `library` they use. Inside a function, KEYS and ARGV are arguments, not
    /// globals: the library keeps them in two locals of its own that each function sets first,
    /// so the scripts' text runs unchanged.
    fn new(library: &str, scripts: &[(&str, &str)]) -> Self {
        let bodies: Vec<&str> = scripts.iter().map(|(_, body)| *body).collect();
        let mut text = String::from("local KEYS, ARGV\n");
        text.push_str(&helpers_for(library, &bodies.join("\n")));
        for (file, body) in scripts {
            let stem = file.trim_end_matches(".lua");
            text.push_str(&format!("\nlocal function {stem}_body()\n{body}\nend\n"));
        }
        let hash = redis::Script::new(&text).get_hash().to_string();
        let name = format!("anarchon_{}", &hash[..12]);
        for (file, _) in scripts {
            let stem = file.trim_end_matches(".lua");
            text.push_str(&format!(
                "redis.register_function('{name}_{stem}', function(keys, args) KEYS, ARGV = keys, args return {stem}_body() end)\n"
            ));
        }
        FunctionLibrary {
            source: format!("#!lua name={name}\n{text}"),
            name,
        }
    }

    /// The function that runs the script `file`.
    fn function(&'static self, file: &str) -> (String, &'static Self) {
        (
            format!("{}_{}", self.name, file.trim_end_matches(".lua")),
            self,
        )
    }
}

/// Store format 1's lease scripts: each is `lua/lib.lua` (with `lua/pause.lua` and
/// `lua/released.lua`) followed by its own file, and a function of [`LIBRARY`] as format 2's are.
const LIB: [&str; 3] = [
    include_str!("../lua/lib.lua"),
    include_str!("../lua/pause.lua"),
    include_str!("../lua/released.lua"),
];

/// Every format 1 lease script, by file: one library of functions holds them all.
const SCRIPTS: [(&str, &str); 6] = [
    ("claim.lua", include_str!("../lua/claim.lua")),
    ("heartbeat.lua", include_str!("../lua/heartbeat.lua")),
    ("finish.lua", include_str!("../lua/finish.lua")),
    ("trim.lua", include_str!("../lua/trim.lua")),
    ("release.lua", include_str!("../lua/release.lua")),
    ("skip.lua", include_str!("../lua/skip.lua")),
];

/// The format 1 lease scripts as a Redis Functions library (see [`FunctionLibrary`]).
pub static LIBRARY: LazyLock<FunctionLibrary> =
    LazyLock::new(|| FunctionLibrary::new(&LIB.join("\n"), &SCRIPTS));

macro_rules! lease_script {
    ($file:literal) => {
        LazyLock::new(|| {
            let mut script = LuaScript::bundled(&LIB, include_str!(concat!("../lua/", $file)));
            script.function = Some(LIBRARY.function($file));
            script
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
/// Records a missed run that `run --catch-up` will not run as skipped, once.
pub static SKIP: LazyLock<LuaScript> = lease_script!("skip.lua");

/// Each claim-only script is `lua/one_key.lua` followed by its own file.
macro_rules! one_key_script {
    ($file:literal) => {
        LazyLock::new(|| {
            LuaScript::bundled(
                &[include_str!("../lua/one_key.lua")],
                include_str!(concat!("../lua/", $file)),
            )
        })
    };
}

/// The script strategy's claim (claim-only layout: one key).
pub static CLAIM_WINDOW: LazyLock<LuaScript> = one_key_script!("claim_window.lua");
/// Records a claim-only run's result, once (one key).
pub static FINISH_CLAIM_ONLY: LazyLock<LuaScript> = one_key_script!("finish_claim_only.lua");
/// Creates and configures an idmp stream once.
pub static IDMP_PREPARE: LazyLock<LuaScript> = one_key_script!("idmp_prepare.lua");

/// `anarchon run`: records the job's settings and this host in the job registry, one key.
pub static REGISTER: LazyLock<LuaScript> =
    LazyLock::new(|| LuaScript::new(include_str!("../lua/register.lua")));
/// `anarchon migrate`: the format key's switch, one key.
pub static FORMAT_SWITCH: LazyLock<LuaScript> =
    LazyLock::new(|| LuaScript::new(include_str!("../lua/format_switch.lua")));
/// `anarchon migrate`: the lock that keeps two migrations apart, one key.
pub static MIGRATION_LOCK: LazyLock<LuaScript> =
    LazyLock::new(|| LuaScript::new(include_str!("../lua/migration_lock.lua")));

/// Store format 2's lease-layout scripts: each is `lua/v2/lib.lua` followed by its own file.
pub mod v2 {
    use super::{FunctionLibrary, LuaScript};
    use std::sync::LazyLock;

    const LIB: [&str; 3] = [
        include_str!("../lua/v2/lib.lua"),
        include_str!("../lua/pause.lua"),
        include_str!("../lua/released.lua"),
    ];

    /// Every format 2 lease script, by file: one library of functions holds them all.
    const SCRIPTS: [(&str, &str); 7] = [
        ("claim.lua", include_str!("../lua/v2/claim.lua")),
        ("heartbeat.lua", include_str!("../lua/v2/heartbeat.lua")),
        ("finish.lua", include_str!("../lua/v2/finish.lua")),
        ("trim.lua", include_str!("../lua/v2/trim.lua")),
        ("release.lua", include_str!("../lua/v2/release.lua")),
        ("convert.lua", include_str!("../lua/v2/convert.lua")),
        ("skip.lua", include_str!("../lua/v2/skip.lua")),
    ];

    /// The format 2 lease scripts as a Redis Functions library (see [`FunctionLibrary`]).
    pub static LIBRARY: LazyLock<FunctionLibrary> =
        LazyLock::new(|| FunctionLibrary::new(&LIB.join("\n"), &SCRIPTS));

    macro_rules! format_2_script {
        ($file:literal) => {
            LazyLock::new(|| {
                let mut script =
                    LuaScript::bundled(&LIB, include_str!(concat!("../lua/v2/", $file)));
                script.function = Some(LIBRARY.function($file));
                script
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
    /// Records a missed run that `run --catch-up` will not run as skipped, once.
    pub static SKIP: LazyLock<LuaScript> = format_2_script!("skip.lua");
}

/// Every script, by a file name: the lease layout's in both formats (format 2's under `v2/`), the
/// claim-only layout's and migrate's.
pub fn all() -> Vec<(&'static str, &'static LuaScript)> {
    vec![
        ("claim.lua", &*CLAIM),
        ("heartbeat.lua", &*HEARTBEAT),
        ("finish.lua", &*FINISH),
        ("trim.lua", &*TRIM),
        ("release.lua", &*RELEASE),
        ("skip.lua", &*SKIP),
        ("claim_window.lua", &*CLAIM_WINDOW),
        ("finish_claim_only.lua", &*FINISH_CLAIM_ONLY),
        ("idmp_prepare.lua", &*IDMP_PREPARE),
        ("format_switch.lua", &*FORMAT_SWITCH),
        ("migration_lock.lua", &*MIGRATION_LOCK),
        ("register.lua", &*REGISTER),
        ("v2/claim.lua", &*v2::CLAIM),
        ("v2/heartbeat.lua", &*v2::HEARTBEAT),
        ("v2/finish.lua", &*v2::FINISH),
        ("v2/trim.lua", &*v2::TRIM),
        ("v2/release.lua", &*v2::RELEASE),
        ("v2/convert.lua", &*v2::CONVERT),
        ("v2/skip.lua", &*v2::SKIP),
    ]
}

/// Writes every script into `dir` exactly as it is sent to the server (for review, and for
/// `bench/server.sh`, which must measure what anarchon runs: `cargo run --example scripts DIR`).
pub fn write_all(dir: &std::path::Path) -> std::io::Result<()> {
    for (name, script) in all() {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, script.source())?;
    }
    std::fs::write(dir.join("library.lua"), &LIBRARY.source)?;
    std::fs::write(dir.join("v2/library.lua"), &v2::LIBRARY.source)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIBRARY: &str = "-- preamble\nif x then y() end\n\n-- a's comment\nlocal function a()\n  return 1\nend\n\nlocal B = {1}\n-- c uses a\nlocal function c(v)\n  return a() + v\nend\nlocal function unused() return B end\n";

    #[test]
    fn bundle_keeps_what_the_body_uses_directly_or_through_helpers() {
        let out = bundle(LIBRARY, "return c(2)");
        assert_eq!(
            out,
            "-- preamble\nif x then y() end\n\n-- a's comment\nlocal function a()\n  return 1\nend\n-- c uses a\nlocal function c(v)\n  return a() + v\nend\nreturn c(2)"
        );
    }

    #[test]
    fn bundle_matches_whole_identifiers_only() {
        assert!(!bundle(LIBRARY, "return ab").contains("local function a()"));
        assert!(bundle(LIBRARY, "return unused()").contains("local B = {1}"));
    }

    #[test]
    fn each_format_s_lease_scripts_are_functions_of_one_library() {
        for (library, scripts) in [
            (
                &*super::LIBRARY,
                [&*CLAIM, &*FINISH, &*HEARTBEAT, &*RELEASE],
            ),
            (
                &*v2::LIBRARY,
                [&*v2::CLAIM, &*v2::FINISH, &*v2::HEARTBEAT, &*v2::SKIP],
            ),
        ] {
            assert!(
                library
                    .source
                    .starts_with(&format!("#!lua name={}\n", library.name))
            );
            for script in scripts {
                let (function, lib) = script.function().unwrap();
                assert_eq!(lib.name, library.name);
                assert!(
                    library.source.contains(&format!("'{function}'")),
                    "{function}"
                );
            }
        }
        assert_ne!(super::LIBRARY.name, v2::LIBRARY.name);
        // The one-key scripts stay scripts.
        assert!(REGISTER.function().is_none() && CLAIM_WINDOW.function().is_none());
    }

    #[test]
    fn every_script_defines_each_helper_once_and_drops_some() {
        for script in [
            &*v2::CLAIM,
            &*v2::FINISH,
            &*v2::HEARTBEAT,
            &*v2::TRIM,
            &*CLAIM,
            &*FINISH,
        ] {
            assert!(
                script.source().contains("server_now_ms"),
                "{}",
                script.source()
            );
        }
        assert!(!v2::FINISH.source().contains("local function plan_trim"));
        assert!(v2::CLAIM.source().contains("local function plan_trim"));
        assert!(v2::CLAIM.source().contains("local function paused"));
    }
}
