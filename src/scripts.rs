//! The server-side Lua scripts, compiled into the binary from `lua/`.
//!
//! The machinery ([`LuaScript`], [`FunctionLibrary`], [`bundle`]) and the scripts that belong to no
//! lease store format: the claim-only layout's (`lua/claim_only/`) and the store's own
//! (`lua/store/`: the job registry, `migrate`'s switch and lock, `run --overlap buffer`'s place,
//! `pause` and `resume`). Each lease store format's scripts
//! are defined by its module (`store::lease::v1`, `v2`) from `lua/lease/v1/`, `lua/lease/v2/`.
//! Redis runs a script atomically: the check and the write of a claim cannot be split by another
//! client.
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

    /// A lease store format's script `file`: the helpers of `library` it uses, then `body`, and
    /// the same as the function of `functions` that runs it (a store format module defines its
    /// scripts with this: `store::lease::v1`).
    pub fn in_library(
        library: &[&str],
        functions: &'static FunctionLibrary,
        file: &str,
        body: &str,
    ) -> Self {
        let mut script = Self::bundled(library, body);
        script.function = Some(functions.function(file));
        script
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
    pub fn new(library: &str, scripts: &[(&str, &str)]) -> Self {
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

/// Each claim-only script is `lua/claim_only/one_key.lua` followed by its own file.
macro_rules! one_key_script {
    ($file:literal) => {
        LazyLock::new(|| {
            LuaScript::bundled(
                &[include_str!("../lua/claim_only/one_key.lua")],
                include_str!(concat!("../lua/claim_only/", $file)),
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
    LazyLock::new(|| LuaScript::new(include_str!("../lua/store/register.lua")));
/// A renamed job's registration: marks an old name's registry with the name it runs under now.
pub static MARK_RENAMED: LazyLock<LuaScript> =
    LazyLock::new(|| LuaScript::new(include_str!("../lua/store/mark_renamed.lua")));
/// `run --overlap buffer`: the one slot of a job that may wait for an older run, one key.
pub static OVERLAP_BUFFER: LazyLock<LuaScript> =
    LazyLock::new(|| LuaScript::new(include_str!("../lua/store/overlap_buffer.lua")));
/// `anarchon migrate`: the format key's switch, one key.
pub static FORMAT_SWITCH: LazyLock<LuaScript> =
    LazyLock::new(|| LuaScript::new(include_str!("../lua/store/format_switch.lua")));
/// `anarchon migrate`: the lock that keeps two migrations apart, one key.
pub static MIGRATION_LOCK: LazyLock<LuaScript> =
    LazyLock::new(|| LuaScript::new(include_str!("../lua/store/migration_lock.lua")));

/// `anarchon pause`: reads the job's pause, replaces it and records the action in the job's
/// events, in one step (two keys of one job: its `:job` hash and its events stream).
pub static PAUSE: LazyLock<LuaScript> = LazyLock::new(|| {
    LuaScript::bundled(
        &[include_str!("../lua/store/pause_lib.lua")],
        include_str!("../lua/store/pause.lua"),
    )
});
/// `anarchon resume`: ends the pause in force (lua/lease/pause.lua's rule) and records which one
/// in the job's events, in one step (the same two keys).
pub static RESUME: LazyLock<LuaScript> = LazyLock::new(|| {
    LuaScript::bundled(
        &[
            include_str!("../lua/lease/pause.lua"),
            include_str!("../lua/store/pause_lib.lua"),
        ],
        include_str!("../lua/store/resume.lua"),
    )
});

/// Every script that is not a lease store format's (those are in `store::lease::v1` and `v2`), by
/// its file under `lua/`.
pub fn all() -> Vec<(&'static str, &'static LuaScript)> {
    vec![
        ("claim_only/claim_window.lua", &*CLAIM_WINDOW),
        ("claim_only/finish_claim_only.lua", &*FINISH_CLAIM_ONLY),
        ("claim_only/idmp_prepare.lua", &*IDMP_PREPARE),
        ("store/format_switch.lua", &*FORMAT_SWITCH),
        ("store/migration_lock.lua", &*MIGRATION_LOCK),
        ("store/register.lua", &*REGISTER),
        ("store/mark_renamed.lua", &*MARK_RENAMED),
        ("store/overlap_buffer.lua", &*OVERLAP_BUFFER),
        ("store/pause.lua", &*PAUSE),
        ("store/resume.lua", &*RESUME),
    ]
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
}
