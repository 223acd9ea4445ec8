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

use std::sync::{LazyLock, OnceLock};

/// A script's source and its SHA1 (the name EVALSHA knows it by), and, for the lease scripts, the
/// same script as a function of [`LIBRARY`] or [`v2::LIBRARY`] (the name FCALL knows it by).
///
/// The source is put together ([`bundle`]) and hashed the first time it is asked for: a server
/// with Redis Functions runs the lease scripts as functions and never asks, and every process
/// that talks to the store paid for all of them at its start (`anarchon run -- true`: 2.3 ms of
/// its CPU, perf).
pub struct LuaScript {
    library: &'static [&'static str],
    body: &'static str,
    built: OnceLock<(String, String)>,
    function: Option<(String, &'static FunctionLibrary)>,
}

impl LuaScript {
    fn new(source: &'static str) -> Self {
        Self::bundled(&[], source)
    }

    /// The function that runs this script on servers with Redis Functions (7.0+, Valkey), and
    /// the library that defines it.
    pub fn function(&self) -> Option<(&str, &'static FunctionLibrary)> {
        self.function
            .as_ref()
            .map(|(name, lib)| (name.as_str(), *lib))
    }

    /// A library's helpers that `body` needs, followed by `body` (see [`bundle`]).
    fn bundled(library: &'static [&'static str], body: &'static str) -> Self {
        LuaScript {
            library,
            body,
            built: OnceLock::new(),
            function: None,
        }
    }

    /// The source and its SHA1, put together on the first ask.
    fn built(&self) -> &(String, String) {
        self.built.get_or_init(|| {
            let source = if self.library.is_empty() {
                self.body.to_string()
            } else {
                bundle(&self.library.join("\n"), self.body)
            };
            let sha1 = redis::Script::new(&source).get_hash().to_string();
            (source, sha1)
        })
    }

    /// A lease store format's script `file`: the helpers of `library` it uses, then `body`, and
    /// the same as the function of `functions` that runs it (a store format module defines its
    /// scripts with this: `store::lease::v1`).
    pub fn in_library(
        library: &'static [&'static str],
        functions: &'static FunctionLibrary,
        file: &str,
        body: &'static str,
    ) -> Self {
        let mut script = Self::bundled(library, body);
        script.function = Some(functions.function(file));
        script
    }

    pub fn source(&self) -> &str {
        &self.built().0
    }

    pub fn sha1(&self) -> &str {
        &self.built().1
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

/// The identifiers `text` uses: its maximal runs of ASCII letters, digits and `_` (comments
/// included). A name is mentioned when it is one of them, not part of a longer one.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    // By bytes (an identifier is ASCII, so its ends are character boundaries too).
    let bytes = text.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() && !is_ident(bytes[at]) {
            at += 1;
        }
        let start = at;
        while at < bytes.len() && is_ident(bytes[at]) {
            at += 1;
        }
        (at > start).then(|| &text[start..at])
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
    // Each word of the body, then of each definition kept, looked up among the names defined:
    // one pass over each text (searching every text for every name cost every process that talks
    // to the store 2.3 ms at its start: perf of `anarchon run -- true`, 19% of its samples).
    let mut defining: fnv::FnvHashMap<&str, Vec<usize>> = fnv::FnvHashMap::default();
    for (i, definition) in definitions.iter().enumerate() {
        for name in &definition.names {
            defining.entry(name).or_default().push(i);
        }
    }
    let mut kept = vec![false; definitions.len()];
    let mut pending: Vec<usize> = Vec::new();
    let mut keep_what = |text: &str, pending: &mut Vec<usize>| {
        for word in identifiers(text) {
            for &i in defining.get(word).into_iter().flatten() {
                if !kept[i] {
                    kept[i] = true;
                    pending.push(i);
                }
            }
        }
    };
    keep_what(body, &mut pending);
    while let Some(i) = pending.pop() {
        for line in &definitions[i].lines {
            keep_what(line, &mut pending);
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
/// Its name carries a hash, so hosts running different anarchon versions each load and call their
/// own, side by side: the hash of what its text is made from (the library's files, the scripts'
/// files, and this file, which puts them together), so that the name is known without the text,
/// which is put together only when a server needs it loaded (once per server). Putting it
/// together and hashing it at every process's start instead cost `anarchon run -- true` about
/// 0.7 ms of its CPU (perf: the bundling, the copies into fresh pages, SHA1).
pub struct FunctionLibrary {
    pub name: String,
    library: &'static [&'static str],
    scripts: &'static [(&'static str, &'static str)],
    source: OnceLock<String>,
}

/// This file, which makes a library's text from its files: part of what the library's name hashes.
const BUNDLER: &str = include_str!("scripts.rs");

/// The hash in the name of the library of `library` and `scripts` ([`FunctionLibrary`]): 64-bit
/// FNV-1a of their texts and of [`BUNDLER`], each ended by a byte no text has. Worked out by the
/// compiler (a store format module keeps it in a `const`): no process hashes 140 KB at its start.
/// Not a defence against anyone (the names are for telling versions apart, and a library is
/// loaded only by those allowed to load one).
pub const fn library_hash(library: &[&str], scripts: &[(&str, &str)]) -> u64 {
    const fn mix(mut hash: u64, text: &[u8]) -> u64 {
        let mut i = 0;
        while i < text.len() {
            hash ^= text[i] as u64;
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            i += 1;
        }
        hash ^= 0xff;
        hash.wrapping_mul(0x0000_0100_0000_01b3)
    }
    let mut hash = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < library.len() {
        hash = mix(hash, library[i].as_bytes());
        i += 1;
    }
    let mut i = 0;
    while i < scripts.len() {
        hash = mix(hash, scripts[i].0.as_bytes());
        hash = mix(hash, scripts[i].1.as_bytes());
        i += 1;
    }
    mix(hash, BUNDLER.as_bytes())
}

impl FunctionLibrary {
    /// A library of `scripts` (file name, body), each registered as `<name>_<file stem>`, with
    /// the helpers of `library` they use, named by `hash` ([`library_hash`] of the two). Inside a
    /// function, KEYS and ARGV are arguments, not globals: the library keeps them in two locals
    /// of its own that each function sets first, so the scripts' text runs unchanged.
    pub fn new(
        library: &'static [&'static str],
        scripts: &'static [(&'static str, &'static str)],
        hash: u64,
    ) -> Self {
        FunctionLibrary {
            name: format!("anarchon_{:012x}", hash >> 16),
            library,
            scripts,
            source: OnceLock::new(),
        }
    }

    /// The text `FUNCTION LOAD` is given, put together on the first ask.
    pub fn source(&self) -> &str {
        self.source.get_or_init(|| {
            let bodies: Vec<&str> = self.scripts.iter().map(|(_, body)| *body).collect();
            let mut text = format!("#!lua name={}\nlocal KEYS, ARGV\n", self.name);
            text.push_str(&helpers_for(&self.library.join("\n"), &bodies.join("\n")));
            for (file, body) in self.scripts {
                let stem = file.trim_end_matches(".lua");
                text.push_str(&format!("\nlocal function {stem}_body()\n{body}\nend\n"));
            }
            let name = &self.name;
            for (file, body) in self.scripts {
                let stem = file.trim_end_matches(".lua");
                text.push_str(&format!(
                    "redis.register_function{{function_name='{name}_{stem}', callback=function(keys, args) KEYS, ARGV = keys, args return {stem}_body() end{flags}}}\n",
                    flags = function_flags(body),
                ));
            }
            text
        })
    }

    /// The function that runs the script `file`.
    fn function(&'static self, file: &str) -> (String, &'static Self) {
        (
            format!("{}_{}", self.name, file.trim_end_matches(".lua")),
            self,
        )
    }
}

/// The flags a script's function is registered with, as its text declares them on a line
/// `-- function flags: a, b` (Redis Functions' flags, 7.0+ and Valkey), as the `flags` field of
/// `redis.register_function`; empty when it declares none. A function without flags may write and
/// is refused whole at a full server (maxmemory), as a script run by EVAL is not: a renewal that
/// must pass there (the heartbeat) declares `allow-oom`.
fn function_flags(body: &str) -> String {
    let declared: Vec<&str> = body
        .lines()
        .filter_map(|l| l.trim().strip_prefix("-- function flags:"))
        .flat_map(|flags| flags.split(','))
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .collect();
    if declared.is_empty() {
        return String::new();
    }
    let quoted: Vec<String> = declared.iter().map(|f| format!("'{f}'")).collect();
    format!(", flags={{{}}}", quoted.join(", "))
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
/// `--limit NAME=N`: a run's permits of named limits shared by jobs and hosts (store::limit).
pub static LIMIT: LazyLock<LuaScript> =
    LazyLock::new(|| LuaScript::new(include_str!("../lua/store/limit.lua")));
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
        ("store/limit.lua", &*LIMIT),
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
