//! What a person at a terminal sees: `script` (util-linux, always on Debian) gives the binary a
//! real pseudo-terminal, so tables, colours, abbreviations and the trim confirmation show as they
//! would for an operator.

use crate::common;
use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};

use crate::common::Server;

/// Runs `anarchon ARGS` on a pseudo-terminal, typing `input`; returns what the terminal showed.
fn on_tty(s: &Server, args: &str, input: &str, env: &[(&str, &str)]) -> Output {
    run_on_tty(s, args, input, env, false)
}

/// The same, typing `answer` once a prompt has appeared.
fn answer_on_tty(s: &Server, args: &str, answer: &str) -> Output {
    run_on_tty(s, args, answer, &[], true)
}

fn run_on_tty(s: &Server, args: &str, input: &str, env: &[(&str, &str)], prompt: bool) -> Output {
    let line = format!(
        "stty cols {cols} rows 40 2>/dev/null; {} --redis {} {args}",
        common::anarchon_path().display(),
        s.url,
        cols = env
            .iter()
            .find(|(k, _)| *k == "COLUMNS")
            .map_or("160", |(_, v)| v)
    );
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"])
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("script(1) from util-linux");
    // Read the terminal as it is drawn, so typing waits for the prompt, as a person would.
    let shown = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut stdout = child.stdout.take().unwrap();
    let reader = {
        let shown = shown.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                shown.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        })
    };
    let mut stdin = child.stdin.take().unwrap();
    if prompt {
        // dialoguer's prompts end in "?" followed by the choices.
        common::wait_for("the prompt", std::time::Duration::from_secs(20), || {
            shown.lock().unwrap().contains(&b'?')
        });
        stdin.write_all(input.as_bytes()).unwrap();
    }
    if !prompt {
        stdin.write_all(input.as_bytes()).unwrap();
    }
    drop(stdin);
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let stdout = shown.lock().unwrap().clone();
    let mut stderr = Vec::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_end(&mut stderr);
    }
    Output {
        status,
        stdout,
        stderr,
    }
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn seed_runs(s: &Server, job: &str, n: i64) {
    for i in 0..n {
        let slot = (1_000_000 + i * 60_000).to_string();
        let out = s
            .anarchon()
            .args([
                "run",
                "--job",
                job,
                "--slot",
                &slot,
                "--overlap",
                "allow",
                "--",
                "true",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
    }
}

#[test]
fn trim_asks_on_a_terminal_and_obeys_the_answer() {
    let s = Server::start();
    seed_runs(&s, "t", 4);
    let out = answer_on_tty(&s, "trim t --keep 1", "n");
    let shown = text(&out);
    assert!(
        shown.contains("Trim 3 runs of history from job t?"),
        "{shown}"
    );
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(shown.contains("not confirmed"), "{shown}");
    assert_eq!(s.runs("t").len(), 4);

    let out = answer_on_tty(&s, "trim t --keep 1", "y");
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(shown.contains("trimmed 3 runs of t"), "{shown}");
    assert_eq!(s.runs("t").len(), 1);
}

#[test]
fn tables_colours_and_relative_times_on_a_terminal() {
    let s = Server::start();
    seed_runs(&s, "billing", 2);
    let out = s
        .anarchon()
        .args(["claim", "billing", "--slot", "now", "--runner", "host-a:1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));

    let shown = text(&on_tty(&s, "list", "", &[]));
    // Borderless, as kubectl and gh print tables.
    assert!(
        !shown.contains('│') && !shown.contains('┆') && !shown.contains("──"),
        "table borders: {shown}"
    );
    assert!(shown.contains(" ago"), "no relative time: {shown}");
    // The STATUS column is coloured by what it says.
    assert!(
        shown.contains("\x1b["),
        "no colour on a terminal: {shown:?}"
    );
    // Compact times (UTC, whole seconds) so a row fits a 100-column terminal (list's own times
    // are relative there; its --active view shows slots).
    let shown = text(&on_tty(&s, "list --active", "", &[]));
    let compact = regex_lite_compact(&shown);
    assert!(compact, "no compact time: {shown}");
    assert!(
        !shown.contains(".000Z"),
        "RFC 3339 with milliseconds on a terminal: {shown}"
    );
    let shown = text(&on_tty(&s, "history billing", "", &[("COLUMNS", "100")]));
    assert!(
        shown
            .lines()
            .filter(|l| l.contains("1970-01-01 00:"))
            .count()
            >= 2,
        "one line per run at 100 columns: {shown}"
    );

    // At 80 columns a row stays one line: a long job name is cut with `…`, the runner's pid and
    // the times are whole, and HEALTH is coloured as STATUS is.
    let long = "nightly-warehouse-export-to-the-reporting-cluster";
    seed_runs(&s, long, 1);
    let shown = text(&on_tty(&s, "list", "", &[("COLUMNS", "80")]));
    let plain = strip_ansi(&shown);
    for line in plain.lines() {
        assert!(
            line.chars().count() <= 80,
            "wider than 80: {line:?}\n{plain}"
        );
    }
    let rows: Vec<&str> = plain.lines().filter(|l| l.starts_with("nightly")).collect();
    assert_eq!(rows.len(), 1, "{plain}");
    assert!(rows[0].contains('…') && !rows[0].contains(long), "{plain}");
    assert!(
        plain.lines().any(|l| l.starts_with("billing")),
        "billing's row begins a line: {plain}"
    );
    let shown = text(&on_tty(&s, "list --active", "", &[("COLUMNS", "80")]));
    assert!(
        strip_ansi(&shown).contains("host-a:1 "),
        "a pid cut: {shown}"
    );
    let shown = text(&on_tty(&s, "list --sort health", "", &[]));
    assert!(
        shown.contains("\x1b[") && shown.contains("HEALTH"),
        "{shown:?}"
    );

    // A terminal that reports no width still gets a readable table.
    let shown = text(&on_tty(&s, "list", "", &[("COLUMNS", "0")]));
    assert!(
        shown.contains("JOB") && shown.contains("billing"),
        "{shown}"
    );

    let shown = text(&on_tty(&s, "inspect billing", "", &[]));
    assert!(
        shown.contains('…'),
        "the token is not abbreviated on a terminal: {shown}"
    );
    assert!(shown.contains(" left"), "{shown}");

    let shown = text(&on_tty(&s, "claim billing --slot now", "", &[]));
    assert!(
        shown.contains("\x1b["),
        "no colour on a terminal: {shown:?}"
    );
    let shown = text(&on_tty(
        &s,
        "claim billing --slot now",
        "",
        &[("NO_COLOR", "1")],
    ));
    assert!(
        !shown.contains("\x1b["),
        "colour despite NO_COLOR: {shown:?}"
    );
}

#[test]
fn foreground_commands_can_read_the_terminal() {
    let s = Server::start();
    // In its own process group a command reading the terminal would be stopped (SIGTTIN);
    // --foreground keeps it in the terminal's group.
    let file = s.dir.path().join("read.txt");
    let args = format!(
        "run-now fg --new --foreground --shell -- 'head -n 1 > {}'",
        file.display()
    );
    let out = on_tty(&s, &args, "typed line\n", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), "typed line");
}

#[test]
fn run_now_says_why_it_did_not_run_on_a_terminal() {
    let s = Server::start();
    let out = s.cli(&[
        "claim",
        "held",
        "--slot",
        "now",
        "--runner",
        "hung-host:7",
        "--lease",
        "10m",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let out = on_tty(&s, "run-now held -- true", "", &[]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(80), "{shown}");
    assert!(
        shown.contains("an older run is still held by hung-host:7")
            && shown.contains("anarchon release held"),
        "{shown}"
    );
}

#[test]
fn a_typo_typed_on_a_terminal_creates_no_job() {
    let s = Server::start();
    let out = s.cli(&["run-now", "billing", "--", "true"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "scripts create jobs as they run them"
    );
    for command in ["run-now biling -- true", "claim biling --slot now"] {
        let out = on_tty(&s, command, "", &[]);
        let shown = text(&out);
        assert_eq!(out.status.code(), Some(85), "{command}: {shown}");
        assert!(
            shown.contains("did you mean billing") && shown.contains("--new"),
            "{shown}"
        );
    }
    assert!(s.runs("biling").is_empty() && s.results("biling").is_empty());
    assert!(
        !s.keys().iter().any(|k| k.contains("biling")),
        "{:?}",
        s.keys()
    );
    let out = on_tty(&s, "run-now brand-new --new -- true", "", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// Whether `text` shows a time as `YYYY-MM-DD HH:MM:SS`.
fn regex_lite_compact(text: &str) -> bool {
    text.as_bytes().windows(19).any(|w| {
        w.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            10 => *b == b' ',
            13 | 16 => *b == b':',
            _ => b.is_ascii_digit(),
        })
    })
}

#[test]
fn watch_redraws_in_place_on_a_terminal() {
    let s = Server::start();
    seed_runs(&s, "w", 1);
    let out = on_tty(
        &s,
        "list --watch --interval 200ms & sleep 1; kill -INT $!; wait",
        "",
        &[],
    );
    let shown = text(&out);
    assert!(
        shown.matches("\x1b[H\x1b[2J").count() >= 2,
        "not redrawn: {shown:?}"
    );
    assert!(
        shown.contains("every 200ms") && shown.contains("Ctrl-C"),
        "{shown}"
    );
}

#[test]
fn time_format_chooses_how_times_are_shown() {
    let s = Server::start();
    seed_runs(&s, "t", 1);
    let piped = |args: &[&str]| String::from_utf8_lossy(&s.cli(args).stdout).into_owned();
    assert!(
        piped(&["history", "t"]).contains("T00:16:40.000Z"),
        "piped default: RFC 3339"
    );
    let compact = piped(&["history", "t", "--time-format", "compact"]);
    assert!(
        regex_lite_compact(&compact) && !compact.contains(".000Z"),
        "{compact}"
    );
    assert!(piped(&["history", "t", "--time-format", "relative"]).contains(" ago"));
    let shown = text(&on_tty(&s, "history t --time-format rfc3339", "", &[]));
    assert!(shown.contains(".000Z"), "{shown}");
}

/// `text` without its colour codes (ESC [ ... m).
fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `run --backfill` on a terminal: a progress bar over the slots, a line per slot, and a summary.
#[test]
fn a_backfill_on_a_terminal_shows_its_progress_and_each_slot() {
    let s = Server::start();
    let minute = s.now_ms() / 60_000 * 60_000;
    let range = format!("{}..{}", minute - 180_000, minute - 60_000);
    let out = on_tty(
        &s,
        &format!("run --job bf --schedule '* * * * *' --backfill {range} -- sleep 0.3"),
        "",
        &[],
    );
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(shown.contains("backfilling bf"), "{shown}");
    assert_eq!(shown.matches("finished as attempt 1").count(), 3, "{shown}");
    assert!(shown.contains("3 run here"), "{shown}");
}

/// `-o wide` on an 80-column terminal: nothing is cut (the default cuts to fit).
#[test]
fn wide_output_is_never_cut_to_the_terminal() {
    let s = Server::start();
    let long = "a-job-name-long-enough-to-be-cut-on-an-eighty-column-terminal-x";
    s.cli(&["run", "--job", long, "--slot", "now", "--", "true"])
        .expect(0);
    let narrow = text(&on_tty(&s, "list", "", &[("COLUMNS", "80")]));
    assert!(!narrow.contains(long), "cut by default: {narrow}");
    let wide = text(&on_tty(&s, "list -o wide", "", &[("COLUMNS", "80")]));
    assert!(wide.contains(long), "{wide}");
}

/// `history` and `inspect` on an 80-column terminal: every row one line (a long runner name cut
/// in its host, its pid kept where there is room), and a script's own result as `key=value`
/// words, not raw JSON (#36, item 5).
#[test]
fn history_and_inspect_rows_keep_to_one_line_of_80_columns() {
    let s = Server::start();
    let claimed = s
        .cli(&[
            "claim",
            "h80",
            "--slot",
            "now",
            "--runner",
            "ip-10-0-12-34.eu-west-1.compute.internal:4311",
            "--json",
        ])
        .expect(0)
        .json();
    let token = claimed["token"].as_str().unwrap().to_string();
    s.cli(&[
        "finish",
        "h80",
        "--slot",
        "now",
        "--token",
        &token,
        "--status",
        "ok",
        "--result-json",
        r#"{"rows":42,"ok":true}"#,
    ])
    .expect(0);
    s.cli(&[
        "run",
        "--job",
        "h80",
        "--slot",
        "1796414000000",
        "--max-late",
        "100d",
        "--runner",
        "ip-10-0-12-35.eu-west-1.compute.internal:99",
        "--",
        "sh",
        "-c",
        "exit 3",
    ]);
    // A run in progress under a long runner name: inspect's widest table (#48, item 5: its rows
    // were 84-95 columns while this test, measuring no such table, passed).
    let earlier = (s.now_ms() / 60_000 * 60_000 - 120_000).to_string();
    s.cli(&[
        "claim",
        "h80",
        "--slot",
        &earlier,
        "--runner",
        "ip-10-0-12-36.eu-west-1.compute.internal:4312",
        "--lease",
        "10m",
    ])
    .expect(0);
    for command in ["history h80", "inspect h80"] {
        let shown = strip_ansi(&text(&on_tty(&s, command, "", &[("COLUMNS", "80")])));
        // Every line of every table, events and runs in progress too (inspect's free-text lines
        // above them may run on: a terminal wraps prose at a space).
        let rows = table_lines(&shown);
        assert!(rows.len() >= 4, "{command}: no tables: {shown}");
        for line in rows {
            let shown_width = line.chars().filter(|c| !c.is_control()).count();
            assert!(
                shown_width <= 80,
                "{command}: a line of {shown_width} columns:\n{line:?}\n{shown}"
            );
        }
        assert!(shown.contains("ok=true"), "{command}: {shown}");
        assert!(
            shown.contains(":4311"),
            "{command}: the pid is kept: {shown}"
        );
        assert!(!shown.contains("{\"rows\""), "{command}: {shown}");
        assert!(shown.contains("exit 3"), "{command}: {shown}");
    }
}

/// The lines of every table in `shown`: from a header line (its first word in capitals: JOB,
/// KEY, SLOT, WHEN...) to the blank line or the labelled line of prose (`schedule `, `hosts    `:
/// a lowercase word padded to nine columns) that ends the table.
fn table_lines(shown: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut in_table = false;
    for line in shown.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        let label = first.chars().all(|c| c.is_ascii_lowercase())
            && line.len() > 9
            && line
                .get(first.len()..9)
                .is_some_and(|pad| pad.trim().is_empty());
        if line.trim().is_empty() || label {
            in_table = false;
        } else if first.len() >= 3 && first.chars().all(|c| c.is_ascii_uppercase()) {
            in_table = true;
        }
        if in_table {
            lines.push(line);
        }
    }
    lines
}

/// `list` on an 80-column terminal: names that fit are shown whole, the counts and the schedule
/// giving way first; a name too long for any row is cut last, with `…` (#48, item 5: names were
/// cut to 11 characters beside a whole SCHEDULE).
#[test]
fn list_keeps_job_names_whole_when_they_fit() {
    let s = Server::start();
    let names = [
        "billing-reconcile-eu-west",
        "nightly-warehouse-export",
        "a-job-name-much-too-long-for-any-row-of-an-eighty-column-terminal",
    ];
    for job in names {
        s.cli(&[
            "run",
            "--job",
            job,
            "--schedule",
            "*/1 0-23 1-31 * *",
            "--",
            "true",
        ]);
    }
    let shown = strip_ansi(&text(&on_tty(&s, "list", "", &[("COLUMNS", "80")])));
    for line in shown.lines() {
        assert!(line.trim_end().chars().count() <= 80, "{line:?}\n{shown}");
    }
    for job in &names[..2] {
        assert!(
            shown.lines().any(|l| l.starts_with(&format!("{job} "))),
            "{job} is cut: {shown}"
        );
    }
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("a-job-name-much") && l.contains('…')),
        "{shown}"
    );
    assert!(
        shown.contains("HEALTH") && shown.contains("STATUS"),
        "{shown}"
    );
}

/// `inspect`'s RENEWED tells a holder that renews from a hung one in both store formats: format 2
/// records each run's lease, so the renewal is exact; format 1 keeps only the lease end, so it is
/// derived from the lease the job's registry records, and marked `~` (#48, item 5: it was always
/// `-` in format 1).
#[test]
fn inspect_says_when_a_lease_was_last_renewed() {
    let s = Server::start();
    let mut child = common::spawn_run(
        &s,
        &[
            "--job", "hb", "--slot", "now", "--lease", "3s", "--", "sleep", "30",
        ],
    );
    // A heartbeat after the claim: the renewal is later than the claim.
    let mut detail = serde_json::Value::Null;
    common::wait_for("a heartbeat", std::time::Duration::from_secs(20), || {
        let out = s.cli(&["inspect", "hb", "--json"]);
        if out.code() != Some(0) {
            return false; // not claimed yet
        }
        detail = out.json();
        let run = &detail["active"][0];
        match (run["renewed_at"].as_i64(), run["claimed_at"].as_i64()) {
            (Some(renewed), Some(claimed)) => renewed > claimed + 500,
            _ => false,
        }
    });
    let run = &detail["active"][0];
    let (renewed, now) = (
        run["renewed_at"].as_i64().unwrap(),
        detail["server_time"].as_i64().unwrap(),
    );
    // `run` heartbeats about every third of its lease: the last renewal is at most a lease old.
    // inspect reads the server's clock before the run, so a heartbeat between the two reads is a
    // few ms after `server_time` (seen: 1 ms, format 2 at eight tests at a time); the text says
    // "0s ago" of it.
    assert!(renewed <= now + 1_000 && now - renewed <= 3_000, "{detail}");
    let derived = Server::test_store_format() == 1;
    assert_eq!(run["renewed_at_derived"], derived, "{detail}");
    let shown = strip_ansi(&text(&on_tty(&s, "inspect hb", "", &[])));
    let row = shown
        .lines()
        .skip_while(|l| !l.starts_with("SLOT "))
        .nth(1)
        .unwrap_or_default()
        .to_string();
    assert_eq!(row.contains(" ~"), derived, "{shown}");
    assert!(row.contains(" ago"), "{shown}");
    assert!(
        !row.split_whitespace().any(|w| w == "-"),
        "RENEWED is `-`: {shown}"
    );
    // The run's process group: anarchon and its `sleep`.
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    let _ = child.wait();
}
