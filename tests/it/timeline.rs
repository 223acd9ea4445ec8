//! `anarchon timeline`: real runs made by the real binary (a takeover after a `kill -9`, a
//! replace, a skip under forbid, a late start, a failure, two runs at once under allow), drawn as
//! text, SVG and JSON, read in whichever store format the suite runs in (and claim-only jobs).

use std::process::{Command, Stdio};

use crate::common::{self, Server};

/// This minute by the server's clock, and the slot `minutes` before it.
struct Minutes(i64);

impl Minutes {
    fn now(s: &Server) -> Self {
        Minutes(s.now_ms() / 60_000 * 60_000)
    }

    fn ago(&self, minutes: i64) -> String {
        (self.0 - minutes * 60_000).to_string()
    }
}

/// `anarchon run --job JOB --slot SLOT --max-late 1h --runner RUNNER EXTRA -- CMD...`.
fn run_args<'a>(
    job: &'a str,
    slot: &'a str,
    runner: &'a str,
    extra: &[&'a str],
    cmd: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "--job",
        job,
        "--slot",
        slot,
        "--max-late",
        "1h",
        "--runner",
        runner,
    ];
    args.extend_from_slice(extra);
    args.push("--");
    args.extend_from_slice(cmd);
    args
}

fn run(s: &Server, args: &[&str]) -> common::Ran {
    s.cli(&[&["run"], args].concat())
}

/// The text picture's lines.
fn lines(out: &common::Ran) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The one line that holds every one of `words`.
fn line_with<'a>(lines: &'a [String], words: &[&str]) -> &'a str {
    let found: Vec<&String> = lines
        .iter()
        .filter(|l| words.iter().all(|w| l.contains(w)))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one line with {words:?} in:\n{}",
        lines.join("\n")
    );
    found[0]
}

fn fits(lines: &[String], width: usize) {
    for line in lines {
        assert!(
            line.chars().count() <= width,
            "{} characters, more than {width}: {line:?}",
            line.chars().count()
        );
    }
}

/// The SVG document's elements whose class starts with `class`.
fn count_class(svg: &roxmltree::Document, class: &str) -> usize {
    svg.descendants()
        .filter(|n| {
            n.attribute("class")
                .is_some_and(|c| c.split(' ').next() == Some(class))
        })
        .count()
}

/// The slot row of `slot` in `timeline --json`'s job `job`.
fn slot_row<'a>(doc: &'a serde_json::Value, job: usize, slot: &str) -> &'a serde_json::Value {
    doc["jobs"][job]["slots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["slot"].as_i64().map(|n| n.to_string()).as_deref() == Some(slot))
        .unwrap_or_else(|| panic!("no slot {slot} in {doc:#}"))
}

#[test]
fn takeover_replace_skip_late_start_and_failure_are_drawn() {
    let s = Server::start();
    let m = Minutes::now(&s);
    let (takeover, failed, replaced, replacer) = (m.ago(9), m.ago(8), m.ago(7), m.ago(6));
    let (held, skipped, late) = (m.ago(5), m.ago(4), m.ago(30));

    // A takeover: the holder is killed (-9) mid-run; a backup on another host takes the run over
    // once its lease has expired.
    let mut holder = common::spawn_run(
        &s,
        &run_args(
            "tl",
            &takeover,
            "host-a:1",
            &["--lease", "2s"],
            &["sleep", "5"],
        ),
    );
    common::wait_for_claim(&s, "tl", &takeover);
    common::signal("-KILL", holder.id()).unwrap();
    holder.wait().unwrap();
    run(
        &s,
        &run_args("tl", &takeover, "host-b:2", &["--lease", "2s"], &["true"]),
    )
    .expect(0);

    // A failure.
    run(&s, &run_args("tl", &failed, "host-c:3", &[], &["false"])).expect(1);

    // A replace: the older run is stopped for the newer slot, which then runs.
    let older = common::spawn_run(
        &s,
        &run_args(
            "tl",
            &replaced,
            "host-a:4",
            &["--lease", "3s"],
            &["sleep", "30"],
        ),
    );
    common::wait_for_claim(&s, "tl", &replaced);
    run(
        &s,
        &run_args(
            "tl",
            &replacer,
            "host-b:5",
            &["--lease", "3s", "--overlap", "replace"],
            &["true"],
        ),
    )
    .expect(0);
    older.wait_with_output().unwrap();

    // A late start: a slot half an hour old, run now.
    run(&s, &run_args("tl", &late, "host-b:8", &[], &["true"])).expect(0);

    // A skip under forbid: a newer slot while an older run holds the job (and goes on holding it).
    s.cli(&[
        "claim", "tl", "--slot", &held, "--lease", "5m", "--runner", "host-a:6",
    ])
    .expect(0);
    run(
        &s,
        &run_args(
            "tl",
            &skipped,
            "host-c:7",
            &["--overlap", "forbid"],
            &["true"],
        ),
    )
    .expect(80);

    let range = ["--since", "5m", "--late-after", "20m"];
    let out = s
        .cli(
            &[
                &["timeline", "tl", "--width", "80", "--color", "never"][..],
                &range,
            ]
            .concat(),
        )
        .expect(0);
    let shown = lines(&out);
    fits(&shown, 80);
    let text = shown.join("\n");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(!text.contains('\x1b'), "colour when piped:\n{text}");
    line_with(&shown, &["host-b", "took over from host-a"]);
    line_with(&shown, &["host-a", "↯", "lease expired"]);
    line_with(&shown, &["host-c", "✗", "failed: exit 1"]);
    line_with(&shown, &["host-a", "⇥", "replaced by "]);
    line_with(&shown, &["host-c", "○", "skipped: --overlap forbid"]);
    line_with(&shown, &["host-a", "running, ", " left"]);
    line_with(&shown, &["host-b", "late 3"]);
    assert!(text.contains("--overlap forbid"), "{text}");
    assert!(flat.contains("never two attempts at once"), "{text}");
    assert!(flat.contains("1 takeover: host-a → host-b"), "{text}");
    assert!(flat.contains("1 late start"), "{text}");
    assert!(shown.iter().any(|l| l.starts_with("legend:")), "{text}");
    assert!(!text.contains("OVERLAP"), "{text}");

    // The same as data.
    let doc = s
        .cli(&[&["timeline", "tl", "--json"][..], &range].concat())
        .expect(0)
        .json();
    let job = &doc["jobs"][0];
    assert_eq!(job["job"], "tl");
    assert_eq!(job["overlap_policy"], "forbid");
    assert_eq!(job["late_after_ms"], 20 * 60_000);
    assert_eq!(job["slots"].as_array().unwrap().len(), 7, "{doc:#}");
    let t = slot_row(&doc, 0, &takeover);
    assert_eq!(t["attempts"][0]["outcome"], "interrupted");
    assert_eq!(t["attempts"][0]["host"], "host-a");
    assert_eq!(t["attempts"][1]["outcome"], "finished");
    assert_eq!(t["attempts"][1]["runner"], "host-b:2");
    assert_eq!(t["attempts"][1]["takeover_from"]["host"], "host-a");
    assert_eq!(t["attempts"][1]["takeover_from"]["attempt"], 1);
    assert_eq!(
        slot_row(&doc, 0, &failed)["attempts"][0]["reason"],
        "exit 1"
    );
    let r = &slot_row(&doc, 0, &replaced)["attempts"][0];
    assert_eq!(r["outcome"], "replaced", "{r}");
    assert_eq!(r["newer_slot"].to_string(), replacer);
    assert_eq!(r["released_by"], "host-b:5");
    assert_eq!(
        slot_row(&doc, 0, &replacer)["attempts"][0]["outcome"],
        "finished"
    );
    let k = &slot_row(&doc, 0, &skipped)["attempts"][0];
    assert_eq!(
        (k["outcome"].as_str(), k["attempt"].as_i64()),
        (Some("skipped"), Some(0))
    );
    assert!(
        k["reason"]
            .as_str()
            .unwrap()
            .starts_with("--overlap forbid"),
        "{k}"
    );
    let h = &slot_row(&doc, 0, &held)["attempts"][0];
    assert_eq!(h["outcome"], "running");
    assert!(h["ended_at"].is_null() && h["lease_end"].is_i64(), "{h}");
    let l = slot_row(&doc, 0, &late);
    assert_eq!(l["late"], true);
    assert!(l["start_delay_ms"].as_i64().unwrap() >= 30 * 60_000, "{l}");
    for slot in [&takeover, &failed, &replaced, &replacer, &held] {
        assert_eq!(slot_row(&doc, 0, slot)["late"], false, "{slot}");
    }
    let summary = &job["summary"];
    assert_eq!(summary["attempts"], 8, "{summary}");
    assert_eq!(summary["takeovers"], 1);
    assert_eq!(summary["late"], 1);
    assert_eq!(summary["overlaps"], 0);
    assert_eq!(summary["possible_overlaps"], 0);
    assert_eq!(summary["outcomes"]["finished"], 3, "{summary}");
    assert!(job["overlaps"].as_array().unwrap().is_empty());

    // The same as SVG: well-formed XML, a bar per attempt.
    let file = s.dir.path().join("tl.svg");
    let out = s
        .cli(
            &[
                &["timeline", "tl", "--svg", file.to_str().unwrap()][..],
                &range,
            ]
            .concat(),
        )
        .expect(0);
    assert!(
        common::stderr(&out).contains("wrote the timeline to"),
        "{}",
        out.dump()
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let svg = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(svg.root_element().tag_name().name(), "svg");
    assert_eq!(count_class(&svg, "attempt"), 8, "{text}");
    for outcome in [
        "finished",
        "failed",
        "interrupted",
        "replaced",
        "skipped",
        "running",
    ] {
        let bars = svg
            .descendants()
            .filter(|n| n.attribute("class") == Some(&format!("attempt {outcome}")[..]))
            .count();
        assert!(bars >= 1, "no {outcome} bar in {text}");
    }
    assert_eq!(count_class(&svg, "overlap"), 0);
    assert!(text.contains("took over from host-a"), "{text}");
    // `--svg -` writes the document instead of the text.
    let out = s
        .cli(&[&["timeline", "tl", "--svg", "-"][..], &range].concat())
        .expect(0);
    roxmltree::Document::parse(&String::from_utf8_lossy(&out.stdout)).unwrap();
}

/// Two runs at once (`--overlap allow`, then the job back under forbid), and two members written
/// directly: each overlap is marked on the bars and its own row, counted and said in the summary.
#[test]
fn an_overlap_is_marked_counted_and_called_out_under_forbid() {
    let s = Server::start();
    let m = Minutes::now(&s);
    let (a, b, c) = (m.ago(3), m.ago(2), m.ago(1));
    let started = s.now_ms();
    let long = common::spawn_run(
        &s,
        &run_args(
            "ov",
            &a,
            "host-a:1",
            &["--overlap", "allow"],
            &["sleep", "2"],
        ),
    );
    common::wait_for_claim(&s, "ov", &a);
    run(
        &s,
        &run_args(
            "ov",
            &b,
            "host-b:2",
            &["--overlap", "allow"],
            &["sleep", "0.3"],
        ),
    )
    .expect(0);
    let long = long.wait_with_output().unwrap();
    assert_eq!(long.status.code(), Some(0), "{}", common::stderr(&long));
    // The job's next run is under forbid: the registry says so.
    run(&s, &run_args("ov", &c, "host-c:3", &[], &["true"])).expect(0);

    let since = (started - 1000).to_string();
    let out = s
        .cli(&[
            "timeline", "ov", "--since", &since, "--width", "80", "--color", "never",
        ])
        .expect(0);
    let shown = lines(&out);
    fits(&shown, 80);
    let text = shown.join("\n");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let row = line_with(&shown, &["OVERLAP", "!"]);
    assert!(row.starts_with("OVERLAP"), "{text}");
    let bar_a = line_with(&shown, &["host-a", "OVERLAP"]);
    assert!(
        bar_a.contains('▓'),
        "the overlapping span is drawn on the bar:\n{text}"
    );
    line_with(&shown, &["host-b", "OVERLAP"]);
    assert!(
        flat.contains("OVERLAP: two attempts of ov held it at once (1 overlap): under --overlap forbid this must never happen"),
        "{text}"
    );
    assert!(flat.contains("#1 on host-a and"), "{text}");
    assert!(flat.contains("#1 on host-b"), "{text}");
    assert!(
        shown
            .iter()
            .any(|l| l.contains("▓ held by two attempts at once")),
        "{text}"
    );

    let doc = s
        .cli(&["timeline", "ov", "--since", &since, "--json"])
        .expect(0)
        .json();
    let job = &doc["jobs"][0];
    let overlaps = job["overlaps"].as_array().unwrap();
    assert_eq!(overlaps.len(), 1, "{doc:#}");
    let o = &overlaps[0];
    assert_eq!(o["certain"], true);
    assert!(o["duration_ms"].as_i64().unwrap() >= 250, "{o}");
    let hosts: Vec<&str> = o["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["host"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["host-a", "host-b"]);
    assert_eq!(job["summary"]["overlaps"], 1);
    assert_eq!(slot_row(&doc, 0, &a)["attempts"][0]["overlapping"], true);
    assert_eq!(slot_row(&doc, 0, &c)["attempts"][0]["overlapping"], false);

    let file = s.dir.path().join("ov.svg");
    s.cli(&[
        "timeline",
        "ov",
        "--since",
        &since,
        "--svg",
        file.to_str().unwrap(),
    ])
    .expect(0);
    let text = std::fs::read_to_string(&file).unwrap();
    let svg = roxmltree::Document::parse(&text).unwrap();
    assert_eq!(count_class(&svg, "attempt"), 3);
    assert_eq!(count_class(&svg, "overlap"), 1, "{text}");
    assert_eq!(count_class(&svg, "at-once"), 2, "{text}");

    // Two members written directly, as another writer (or a store that lost a write) could leave
    // them: the second claimed while the first still held the job.
    let now = s.now_ms();
    let member = |slot: i64, runner: &str, claimed: i64, ended: i64| {
        serde_json::json!({"attempt": 1, "token": format!("t{slot}"), "runner": runner,
            "status": "finished", "claimed_at": claimed, "ended_at": ended, "slot": slot,
            "result": {"exit_code": 0}})
        .to_string()
    };
    let (x, y) = (m.0 - 120_000, m.0 - 60_000);
    let _: i64 = s.cmd(&[
        "ZADD",
        "{cron:inj}:results",
        &x.to_string(),
        &member(x, "host-a:1", now - 20_000, now - 5_000),
        &y.to_string(),
        &member(y, "host-b:2", now - 10_000, now - 2_000),
    ]);
    let doc = s
        .cli(&["timeline", "inj", "--since", "1m", "--json"])
        .expect(0)
        .json();
    let o = &doc["jobs"][0]["overlaps"][0];
    assert_eq!(
        (o["from"].as_i64(), o["to"].as_i64()),
        (Some(now - 10_000), Some(now - 5_000))
    );
    assert_eq!(doc["jobs"][0]["summary"]["overlaps"], 1);
    let out = s
        .cli(&["timeline", "inj", "--since", "1m", "--color", "never"])
        .expect(0);
    line_with(&lines(&out), &["OVERLAP", "!"]);
}

/// Several jobs on one axis: named (in that order, a claim-only job with a claim and no result
/// among them) or `--all` (every job with an attempt in the range); `| head -1` is no error.
#[test]
fn several_jobs_share_one_axis_and_a_closed_pipe_is_no_error() {
    let s = Server::start();
    let m = Minutes::now(&s);
    s.cli(&[
        "run",
        "--job",
        "co",
        "--strategy",
        "stream-id",
        "--slot",
        &m.ago(2),
        "--runner",
        "host-a:1",
        "--max-late",
        "1h",
        "--",
        "true",
    ])
    .expect(0);
    s.cli(&[
        "claim",
        "co",
        "--strategy",
        "stream-id",
        "--slot",
        &m.ago(1),
        "--runner",
        "host-b:2",
    ])
    .expect(0);
    run(&s, &run_args("le", &m.ago(1), "host-c:3", &[], &["true"])).expect(0);
    // A job whose only run ended three days ago: nothing in the range.
    let old = m.0 - 3 * 86_400_000;
    let member = serde_json::json!({"attempt": 1, "token": "t", "runner": "host-d:4",
        "status": "finished", "claimed_at": old, "ended_at": old + 1000, "slot": old,
        "result": {"exit_code": 0}});
    let _: i64 = s.cmd(&[
        "ZADD",
        "{cron:old}:results",
        &old.to_string(),
        &member.to_string(),
    ]);

    let out = s
        .cli(&[
            "timeline", "le", "co", "--since", "5m", "--width", "80", "--color", "never",
        ])
        .expect(0);
    let shown = lines(&out);
    fits(&shown, 80);
    let text = shown.join("\n");
    let (le, co) = (
        text.find("\nle · ").unwrap_or_else(|| panic!("{text}")),
        text.find("\nco (claim-only)")
            .unwrap_or_else(|| panic!("{text}")),
    );
    assert!(le < co, "as named:\n{text}");
    line_with(&shown, &["host-a", "✓"]);
    assert!(
        line_with(&shown, &["host-b", "no result yet"]).contains('┄'),
        "{text}"
    );
    line_with(&shown, &["host-c", "✓"]);

    let doc = s
        .cli(&["timeline", "--all", "--since", "5m", "--json"])
        .expect(0)
        .json();
    let names: Vec<&str> = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["job"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["co", "le"], "{doc:#}");
    assert_eq!(doc["idle_jobs"], 1);
    assert_eq!(doc["jobs"][0]["layout"], "claim-only");
    let outcomes: Vec<&str> = doc["jobs"][0]["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["attempts"][0]["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["finished", "claimed"]);
    let out = s
        .cli(&["timeline", "--all", "--since", "5m", "--color", "never"])
        .expect(0);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("1 other job under the prefix had no attempt in the range"),
        "{text}"
    );

    // A named job with nothing in the range: its header, and where its runs are.
    let out = s.cli(&["timeline", "old", "--since", "1h"]).expect(0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("(no attempt in the range)"));
    assert!(
        common::stderr(&out).contains("--since 4d"),
        "{}",
        out.dump()
    );

    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = s
        .anarchon_process()
        .args(["timeline", "--all", "--since", "5m"])
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    assert_eq!(common::stderr(&out), "", "a closed pipe is not an error");

    // A job whose data cannot be read is named (exit 92); every other job is still drawn.
    let _: i64 = s.cmd(&["ZADD", "{cron:bad}:results", &m.ago(1), "not a result"]);
    let out = s
        .cli(&["timeline", "--all", "--since", "5m", "--json"])
        .expect(92);
    let doc = out.json();
    assert_eq!(doc["errors"][0]["job"], "bad", "{doc:#}");
    assert_eq!(doc["jobs"].as_array().unwrap().len(), 2);
    assert!(
        common::stderr(&out).contains("bad: cannot be read"),
        "{}",
        out.dump()
    );
    s.cli(&["timeline", "bad"]).expect(92);
}

/// On a terminal 80 columns wide the picture fits it, in colour unless NO_COLOR says otherwise.
#[test]
fn a_narrow_terminal_gets_a_picture_that_fits() {
    let s = Server::start();
    let m = Minutes::now(&s);
    let host = "a-rather-long-host-name.eu-west-1.compute.internal:4242";
    run(&s, &run_args("narrow", &m.ago(3), host, &[], &["true"])).expect(0);
    run(
        &s,
        &run_args("narrow", &m.ago(2), "host-b:1", &[], &["false"]),
    )
    .expect(1);
    let ansi = regex::Regex::new("\x1b\\[[0-9;]*m").unwrap();
    for no_color in [false, true] {
        let line = format!(
            "stty cols 80 rows 40 2>/dev/null; {} --redis {} timeline narrow --since 5m",
            common::anarchon_path().display(),
            s.url
        );
        let mut cmd = Command::new("script");
        cmd.args(["-qec", &line, "/dev/null"])
            .stdin(Stdio::null())
            .env_remove("NO_COLOR");
        if no_color {
            cmd.env("NO_COLOR", "1");
        }
        let out = cmd.output().expect("script(1) from util-linux");
        let shown = String::from_utf8_lossy(&out.stdout).to_string();
        let plain: Vec<String> = ansi
            .replace_all(&shown, "")
            .lines()
            .map(|l| l.trim_end_matches('\r').to_string())
            .collect();
        fits(&plain, 80);
        assert!(
            plain.iter().any(|l| l.contains("a-rather-long-h…")),
            "{shown}"
        );
        assert!(
            plain.iter().any(|l| l.contains("failed: exit 1")),
            "{shown}"
        );
        assert_eq!(
            shown.contains('\x1b'),
            !no_color,
            "colour (NO_COLOR={no_color}):\n{shown}"
        );
    }
}

#[test]
fn a_range_that_is_empty_or_an_svg_and_json_both_on_stdout_are_usage_errors() {
    let s = Server::start();
    s.cli(&["claim", "u", "--slot", "1796220000000", "--runner", "h:1"])
        .expect(0);
    let out = s
        .cli(&["timeline", "u", "--since", "1h", "--until", "2h"])
        .expect(2);
    assert!(
        common::stderr(&out).contains("is not before --until"),
        "{}",
        out.dump()
    );
    let out = s.cli(&["timeline", "u", "--svg", "-", "--json"]).expect(2);
    assert!(
        common::stderr(&out).contains("both want stdout"),
        "{}",
        out.dump()
    );
    s.cli(&["timeline", "no-such-job"]).expect(85);
    s.cli(&["timeline", "u", "--width", "20"]).expect(2);
    // A fixed range: the run's claim (now) is outside it, its slot inside.
    let out = s
        .cli(&[
            "timeline",
            "u",
            "--since",
            "2026-12-02T13:55:00Z",
            "--until",
            "2026-12-02T14:05:00Z",
            "--json",
        ])
        .expect(0)
        .json();
    assert_eq!(out["since_time"], "2026-12-02T13:55:00.000Z");
    assert_eq!(out["jobs"][0]["slots"].as_array().unwrap().len(), 1);
}

/// Replicas on one host: the HOST column and the takeovers name the runners (`vm:41`, `vm:57`)
/// rather than `vm` for all and "vm → vm" (#48, item 5), in the text and the SVG; JSON keeps the
/// host and the runner as they are.
#[test]
fn replicas_on_one_host_are_told_apart() {
    let s = Server::start();
    let m = Minutes::now(&s);
    let (taken, plain) = (m.ago(3), m.ago(2));
    let mut holder = common::spawn_run(
        &s,
        &run_args("vm", &taken, "vm:41", &["--lease", "2s"], &["sleep", "5"]),
    );
    common::wait_for_claim(&s, "vm", &taken);
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(holder.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    holder.wait().unwrap();
    run(
        &s,
        &run_args("vm", &taken, "vm:57", &["--lease", "2s"], &["true"]),
    )
    .expect(0);
    run(&s, &run_args("vm", &plain, "vm:41", &[], &["true"])).expect(0);

    let range = ["--since", "5m"];
    let out = s
        .cli(
            &[
                &["timeline", "vm", "--width", "100", "--color", "never"][..],
                &range,
            ]
            .concat(),
        )
        .expect(0);
    let shown = lines(&out);
    let text = shown.join("\n");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("1 takeover: vm:41 → vm:57"), "{text}");
    line_with(&shown, &["vm:57", "took over from vm:41"]);
    assert_eq!(
        shown.iter().filter(|l| l.contains(" 1 vm:41 ")).count(),
        2,
        "{text}"
    );

    let svg = s
        .cli(&[&["timeline", "vm", "--svg", "-"][..], &range].concat())
        .expect(0);
    let svg = String::from_utf8_lossy(&svg.stdout).into_owned();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let texts: Vec<&str> = doc
        .descendants()
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    assert!(
        texts.contains(&"vm:57") && texts.contains(&"vm:41"),
        "{texts:?}"
    );

    let doc = s
        .cli(&[&["timeline", "vm", "--json"][..], &range].concat())
        .expect(0)
        .json();
    let t = &slot_row(&doc, 0, &taken)["attempts"][1];
    assert_eq!(
        (t["host"].as_str(), t["runner"].as_str()),
        (Some("vm"), Some("vm:57"))
    );
}

/// The slots `timeline --json` draws with no run for `reason` (`missed`, `paused`, `pending`)
/// in its job `job`.
fn no_run_slots(doc: &serde_json::Value, job: &str, reason: &str) -> Vec<i64> {
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["job"] == job)
        .flat_map(|j| j["slots"].as_array().unwrap())
        .filter(|r| r["no_run"]["reason"] == reason)
        .map(|r| r["slot"].as_i64().unwrap())
        .collect()
}

/// `check JOB --window` from about `from` and `timeline JOB` from the very start of that window
/// (read back from check's clock), both with `--grace 3s`, and that they agree: every slot due by
/// check's clock that the timeline draws missed is one check lists missed, and every one check
/// lists the timeline draws missed (slots that fell due between the two commands aside). Returns
/// the timeline's JSON and check's missed slots.
fn timeline_agrees_with_check(s: &Server, job: &str, from: i64) -> (serde_json::Value, Vec<i64>) {
    let window_ms = s.now_ms() - from;
    let check = s
        .cli(&[
            "check",
            job,
            "--window",
            &format!("{window_ms}ms"),
            "--grace",
            "3s",
            "--json",
        ])
        .json();
    let checked_at = check["server_time"].as_i64().unwrap();
    let missed: Vec<i64> = check["jobs"][0]["health"]["missed_slots"]
        .as_array()
        .unwrap_or_else(|| panic!("no missed_slots in {check:#}"))
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    let since = (checked_at - window_ms).to_string();
    let doc = s
        .cli(&[
            "timeline", job, "--since", &since, "--grace", "3s", "--json",
        ])
        .expect(0)
        .json();
    let drawn: Vec<i64> = no_run_slots(&doc, job, "missed")
        .into_iter()
        .filter(|slot| *slot <= checked_at - 3_000)
        .collect();
    assert_eq!(drawn, missed, "timeline:\n{doc:#}\ncheck:\n{check:#}");
    (doc, missed)
}

/// A job of `anarchon cron` paused for a few seconds, then its replica stopped: `timeline` draws
/// the slots the pause covered (with who paused it and why) and the slots nobody claimed after
/// the stop (missed), in JSON, text and SVG, and `check --window` over the same window says the
/// same slots were missed, no more, no fewer.
#[test]
fn slots_nobody_claimed_are_drawn_missed_or_paused_as_check_judges_them() {
    use crate::common::replica::Replica;
    use std::time::Duration;
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crontab");
    std::fs::write(&file, "# anarchon: --job gaps\n*/2 * * * * * true\n").unwrap();
    let start = s.now_ms();
    let mut replica = Replica::start(&s.url, &file, dir.path(), "r", &[]);
    common::wait_for("a first run", Duration::from_secs(10), || {
        !s.results("gaps").is_empty()
    });
    s.cli(&[
        "pause",
        "gaps",
        "--for",
        "5s",
        "--reason",
        "maintenance",
        "--by",
        "ops",
    ])
    .expect(0);
    let paused = s.now_ms();
    common::wait_for("a run after the pause", Duration::from_secs(20), || {
        s.results("gaps").iter().any(|r| r.slot > paused + 5_000)
    });
    assert_eq!(replica.stop(Duration::from_secs(10)), Some(0));
    let stopped = s.now_ms();
    common::wait_for("two slots and the grace", Duration::from_secs(20), || {
        s.now_ms() > stopped + 4_000 + 3_000 + 1_000
    });

    let (doc, missed) = timeline_agrees_with_check(&s, "gaps", start);
    assert!(missed.len() >= 2, "{doc:#}");
    assert!(missed.iter().all(|slot| *slot > stopped - 2_000), "{doc:#}");
    let during = no_run_slots(&doc, "gaps", "paused");
    assert!(during.len() >= 2, "{doc:#}");
    assert!(
        during
            .iter()
            .all(|slot| (paused..paused + 5_000).contains(slot)),
        "{doc:#}"
    );
    let row = slot_row(&doc, 0, &during[0].to_string());
    assert_eq!(row["attempts"], serde_json::json!([]), "{doc:#}");
    assert_eq!(row["no_run"]["pause"]["paused_by"], "ops", "{doc:#}");
    assert!(
        row["no_run"]["why"]
            .as_str()
            .unwrap()
            .contains("maintenance"),
        "{doc:#}"
    );
    let summary = &doc["jobs"][0]["summary"]["no_run"];
    assert_eq!(summary["paused"], during.len(), "{doc:#}");

    // The text: a line of missed slots, a line of paused ones, each with why, and the legend.
    let since = start.to_string();
    let range = ["--since", since.as_str(), "--grace", "3s"];
    let out = s
        .cli(
            &[
                &["timeline", "gaps", "--width", "120", "--color", "never"][..],
                &range,
            ]
            .concat(),
        )
        .expect(0);
    let shown = lines(&out);
    fits(&shown, 120);
    line_with(&shown, &["✕", "missed: never claimed (grace 3s)"]);
    line_with(&shown, &["‖", "paused by ops", "maintenance"]);
    line_with(&shown, &["legend:", "✕ missed"]);
    // The SVG: a mark per slot with no run, its title saying why.
    let svg_file = dir.path().join("t.svg");
    let svg_path = svg_file.to_str().unwrap();
    s.cli(&[&["timeline", "gaps", "--svg", svg_path][..], &range].concat())
        .expect(0);
    let svg = std::fs::read_to_string(&svg_file).unwrap();
    let parsed = roxmltree::Document::parse(&svg).unwrap();
    let marks = |reason: &str| {
        parsed
            .descendants()
            .filter(|n| n.attribute("class") == Some(&format!("no-run {reason}")))
            .filter(|n| n.attribute("data-slot").is_some())
            .count()
    };
    assert!(marks("missed") >= missed.len(), "{svg}");
    assert_eq!(marks("paused"), during.len(), "{svg}");
    assert!(svg.contains("never claimed"), "{svg}");
}

/// A job renamed in a rolling deploy (`v1`, then `v2 --was v1`): its slots run under the old
/// name are no missed slots of the new one, and the old name, judged under the new, draws none
/// missed; once the fleet stops, the new name's slots nobody claimed are drawn missed, as
/// `check --window` says.
#[test]
fn a_renamed_job_draws_no_slot_of_its_old_name_missed() {
    use crate::common::replica::Replica;
    use std::time::Duration;
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    std::fs::write(&old, "# anarchon: --job v1\n*/2 * * * * * true\n").unwrap();
    std::fs::write(&new, "# anarchon: --job v2 --was v1\n*/2 * * * * * true\n").unwrap();
    let start = s.now_ms();
    let mut a = Replica::start(&s.url, &old, dir.path(), "old", &[]);
    common::wait_for("v1 to run 2 slots", Duration::from_secs(20), || {
        s.results("v1").len() >= 2
    });
    let mut b = Replica::start(&s.url, &new, dir.path(), "new", &[]);
    common::wait_for("v2 to mark v1 renamed", Duration::from_secs(20), || {
        s.cmd::<Option<String>>(&["HGET", "{cron:v1}:registry", "renamed_to"])
            == Some("v2".to_string())
    });
    assert_eq!(a.stop(Duration::from_secs(10)), Some(0));
    let ran = s.results("v2").len();
    common::wait_for("v2 to run 2 slots more", Duration::from_secs(20), || {
        s.results("v2").len() >= ran + 2
    });
    assert_eq!(b.stop(Duration::from_secs(10)), Some(0));
    let stopped = s.now_ms();
    common::wait_for("two slots and the grace", Duration::from_secs(20), || {
        s.now_ms() > stopped + 4_000 + 3_000 + 1_000
    });

    let (doc, missed) = timeline_agrees_with_check(&s, "v2", start);
    assert!(!missed.is_empty(), "{doc:#}");
    // Every slot before the stop ran under one name or the other.
    let v1_ran: Vec<i64> = s.results("v1").iter().map(|r| r.slot).collect();
    let drawn = no_run_slots(&doc, "v2", "missed");
    assert!(drawn.iter().all(|slot| *slot > stopped - 2_000), "{doc:#}");
    assert!(drawn.iter().all(|slot| !v1_ran.contains(slot)), "{doc:#}");
    let (old_doc, old_missed) = timeline_agrees_with_check(&s, "v1", start);
    assert_eq!(old_missed, Vec::<i64>::new(), "{old_doc:#}");
    assert_eq!(
        no_run_slots(&old_doc, "v1", "missed"),
        Vec::<i64>::new(),
        "{old_doc:#}"
    );
    // Both on one axis: the same.
    let since = start.to_string();
    let both = s
        .cli(&[
            "timeline", "v1", "v2", "--since", &since, "--grace", "3s", "--json",
        ])
        .expect(0)
        .json();
    assert_eq!(
        no_run_slots(&both, "v1", "missed"),
        Vec::<i64>::new(),
        "{both:#}"
    );
    assert!(!no_run_slots(&both, "v2", "missed").is_empty(), "{both:#}");
}
