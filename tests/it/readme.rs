//! The documents' transcripts are what the tool does. Every ```console block of README.md,
//! docs/guide.md and CONTRIBUTING.md is marked
//! either `<!-- transcript -->` (run here, top to bottom, against a fresh throwaway server: each
//! `$ command` is run on a terminal (script(1)) with `anarchon` being this build and `redis-cli`
//! pointed at the server, and
//! what it prints must be what the README shows) or `<!-- illustration: why -->` (a session that
//! needs history or hosts a fresh store does not have; the reason is said there). A block with
//! neither fails this test, so no example escapes by being forgotten. `<!-- transcript, after:
//! COMMAND -->` runs COMMAND first, unseen: the store the README's context implies (a job that
//! exists).
//!
//! Compared as a person reads them: times, durations, tokens, slots taken from the server's
//! clock and runner names (`host:pid`) match any value of their kind, and a value the README shows
//! once stands for the same real value in the commands after it (the token `claim` printed is the
//! one `heartbeat` is given). A line ending in `...` matches any line that starts the same way.

use crate::common;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::common::Server;
use regex::Regex;

/// One ```console block and the marker above it.
struct Block {
    /// The document it is in (README.md, docs/guide.md, ...).
    file: &'static str,
    line: usize,
    marker: Option<String>,
    text: Vec<String>,
}

fn blocks(file: &'static str, readme: &str) -> Vec<Block> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_start().starts_with("```console") {
            let indent = lines[i].len() - lines[i].trim_start().len();
            let marker = lines[..i]
                .iter()
                .rev()
                .take(3)
                .map(|l| l.trim())
                .find(|l| l.starts_with("<!--"))
                .map(str::to_string);
            let start = i;
            let mut text = Vec::new();
            i += 1;
            while i < lines.len() && lines[i].trim_start() != "```" {
                text.push(lines[i].get(indent..).unwrap_or("").to_string());
                i += 1;
            }
            out.push(Block {
                file,
                line: start + 1,
                marker,
                text,
            });
        }
        i += 1;
    }
    out
}

/// A command of a transcript (continuation lines joined) and the lines it is shown printing.
struct Step {
    command: String,
    expected: Vec<String>,
}

fn steps(text: &[String]) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    let mut lines = text.iter().peekable();
    while let Some(line) = lines.next() {
        if let Some(cmd) = line.strip_prefix("$ ") {
            let mut command = cmd.to_string();
            while command.trim_end().ends_with('\\') {
                command = command.trim_end().trim_end_matches('\\').to_string();
                if let Some(next) = lines.next() {
                    command.push(' ');
                    command.push_str(next.trim());
                }
            }
            out.push(Step {
                command,
                expected: Vec::new(),
            });
        } else if let Some(step) = out.last_mut() {
            step.expected.push(line.clone());
        }
    }
    out
}

/// The kinds of values that differ from run to run, each matched by any value of its kind.
fn kinds() -> Vec<(&'static str, Regex)> {
    vec![
        (
            "TIME",
            Regex::new(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d{3}Z)?").unwrap(),
        ),
        ("TOKEN", Regex::new(r"\b[0-9A-Za-z]{22}\b").unwrap()),
        ("SLOT", Regex::new(r"\b1\d{12}\b").unwrap()),
        (
            "RUNNER",
            Regex::new(r"\b[A-Za-z][\w.-]*(@[\w.-]+)?:\d+\b").unwrap(),
        ),
        (
            "DURATION",
            Regex::new(r"\b\d+(\.\d+)?(ms|s|m|h|d)( \d+(ms|s|m|h))?\b").unwrap(),
        ),
    ]
}

/// `line` with every varying value replaced by its kind, and the values in order.
fn normalize(line: &str, kinds: &[(&'static str, Regex)]) -> (String, Vec<String>) {
    let mut text = line.trim_end().to_string();
    let mut values = Vec::new();
    for (name, re) in kinds {
        let mut found = Vec::new();
        text = re
            .replace_all(&text, |c: &regex::Captures| {
                found.push(c[0].to_string());
                format!("<{name}>")
            })
            .into_owned();
        values.extend(found);
    }
    // Columns are aligned by the width of what they hold: compare words, not spaces.
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (text, values)
}

fn matches(expected: &str, actual: &str, kinds: &[(&'static str, Regex)]) -> bool {
    let (e, _) = normalize(expected, kinds);
    let (a, _) = normalize(actual, kinds);
    match e.strip_suffix("...") {
        Some(prefix) => a.starts_with(prefix.trim_end()),
        None => a == e,
    }
}

/// Runs one transcript against a fresh server (after `setup`, unseen); returns what differs.
fn run_transcript(block: &Block, setup: Option<&str>) -> Vec<String> {
    let s = Server::start();
    // The README shows what a user gets: a fresh store, created in format 1 by its first write
    // (whatever store format the rest of the suite is asked to prepare).
    let _: () = s.cmd(&["DEL", "cron:format"]);
    // A transcript of `--slot now` runs ("this minute") shows two hosts taking the same slot: it
    // must not straddle a minute's end, where the second host's "now" is the next slot.
    if block.text.iter().any(|l| l.contains("--slot now")) {
        common::wait_clear_of_the_minute_end(&s, Duration::from_secs(20));
    }
    let kinds = kinds();
    let bin = common::anarchon_path();
    let bin_dir = bin.parent().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // `redis-cli` in a transcript means the server under test.
    let real = std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .map(|d| Path::new(d).join("redis-cli"))
        .find(|p| p.exists())
        .expect("redis-cli on PATH");
    let shim = dir.path().join("redis-cli");
    std::fs::write(
        &shim,
        format!("#!/bin/sh\nexec {} -p {} \"$@\"\n", real.display(), s.port),
    )
    .unwrap();
    std::fs::set_permissions(&shim, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}:{}",
        dir.path().display(),
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut last_code = 0;
    let mut wrong = Vec::new();
    let setup = setup.map(|command| Step {
        command: format!("{{ {command}; }} >/dev/null 2>&1"),
        expected: Vec::new(),
    });
    for step in setup.into_iter().chain(steps(&block.text)) {
        if step.command.starts_with("export ANARCHON_REDIS_URL=") {
            continue;
        }
        let mut command = step.command.clone();
        for (shown, real) in &seen {
            command = command.replace(shown, real);
        }
        let (code, output) = if command.trim() == "echo $?" {
            (0, format!("{last_code}\n"))
        } else {
            // On a terminal, as a person at the README would run it (script(1) gives the
            // command a pseudo-terminal), without colour.
            let out = Command::new("script")
                .args(["-qec", &command, "/dev/null"])
                .env("NO_COLOR", "1")
                .env("TERM", "dumb")
                .current_dir(dir.path())
                .env("PATH", &path)
                .env("ANARCHON_REDIS_URL", &s.url)
                .env_remove("ANARCHON_PREFIX")
                .output()
                .unwrap();
            (
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            )
        };
        last_code = code;
        let mut actual: Vec<String> = output
            .lines()
            .map(|l| l.trim_end_matches('\r').to_string())
            .collect();
        let mut expected = step.expected.clone();
        // SCAN's order is the server's: compare the keys as a set.
        if command.contains("--scan") {
            actual.sort();
            expected.sort();
        }
        let same = actual.len() == expected.len()
            && expected
                .iter()
                .zip(&actual)
                .all(|(e, a)| matches(e, a, &kinds));
        if !same {
            wrong.push(format!(
                "{} line {}: `$ {}`\n--- the document shows:\n{}\n--- it printed (exit {code}):\n{}",
                block.file,
                block.line,
                step.command,
                expected.join("\n"),
                actual.join("\n")
            ));
            continue;
        }
        // What the README shows stands for what was printed, in the commands that follow.
        for (e, a) in expected.iter().zip(&actual) {
            let (_, shown) = normalize(e, &kinds);
            let (_, real) = normalize(a, &kinds);
            for (x, y) in shown.into_iter().zip(real) {
                // Tokens and slots (13 digits): what later commands pass on.
                if x != y && (x.len() == anarchon::store::token::TOKEN_LEN || x.len() == 13) {
                    seen.insert(x, y);
                }
            }
        }
    }
    wrong
}

/// The documents whose console blocks are run: the README, the guide, the contributors' file.
const DOCUMENTS: [&str; 3] = ["README.md", "docs/guide.md", "CONTRIBUTING.md"];

#[test]
fn every_console_block_of_the_documents_is_run_or_says_why_not() {
    let mut blocks = Vec::new();
    for file in DOCUMENTS {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        blocks.extend(self::blocks(file, &text));
    }
    assert!(blocks.len() > 10, "{} console blocks", blocks.len());
    let mut unmarked = Vec::new();
    let mut wrong = Vec::new();
    let mut run = 0;
    for block in &blocks {
        match block.marker.as_deref() {
            Some("<!-- transcript -->") => {
                run += 1;
                wrong.extend(run_transcript(block, None));
            }
            Some(m) if m.starts_with("<!-- transcript, after: ") => {
                run += 1;
                let setup = m
                    .trim_start_matches("<!-- transcript, after: ")
                    .trim_end_matches("-->")
                    .trim();
                wrong.extend(run_transcript(block, Some(setup)));
            }
            Some(m) if m.starts_with("<!-- illustration: ") && m.len() > 30 => {}
            _ => unmarked.push(format!("{} line {}", block.file, block.line)),
        }
    }
    assert!(
        unmarked.is_empty(),
        "console blocks with neither <!-- transcript --> nor <!-- illustration: why --> above them: {unmarked:?}"
    );
    assert!(run >= 3, "only {run} transcripts are run");
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// No document links to a file outside the repository, nor to one that is not there.
#[test]
fn the_documents_link_only_to_files_in_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let link = Regex::new(r"\]\(([^)#\s]+)(#[^)]*)?\)").unwrap();
    let mut broken = Vec::new();
    for file in DOCUMENTS
        .iter()
        .chain(&["docs/store-format.md", "docs/deploy/README.md"])
    {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let dir = root.join(file).parent().unwrap().to_path_buf();
        for c in link.captures_iter(&text) {
            let target = &c[1];
            if target.starts_with("http://") || target.starts_with("https://") {
                continue;
            }
            let path = dir.join(target);
            let inside = path
                .canonicalize()
                .is_ok_and(|p| p.starts_with(root.canonicalize().unwrap()));
            if !inside {
                broken.push(format!("{file}: {target}"));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing in the repository: {broken:?}"
    );
}

#[test]
fn values_that_vary_match_any_of_their_kind() {
    let k = kinds();
    assert!(matches(
        "  token    1D9nhmuxn4VWYjcOwQJo0B",
        "  token    0296tiiBb3U904RIpygpjj",
        &k
    ));
    assert!(matches(
        "  lease    until 2026-12-02T14:05:48.647Z (in 30s)",
        "  lease    until 2027-01-01T00:00:01.000Z (in 29s)",
        &k
    ));
    assert!(matches(
        "running sync @ x: held by host-a:5660, attempt 1 of 3, lease until ...",
        "running sync @ x: held by vm:99, attempt 1 of 3, lease until 2027",
        &k
    ));
    assert!(!matches("won sync", "running sync", &k));
}
