//! `run --backfill FROM..TO`: the schedule's slots in a past range that never ran, oldest first,
//! one at a time, each claimed like any run. Several hosts (processes) backfill one range at once;
//! the commands' own logs show each slot ran once and never two at a time.

use crate::common;
use crate::common::Server;
use crate::common::ticker::{assert_no_two_spans_overlap, ticker_as};

fn backfill_args<'a>(range: &'a str, runner: &'a str, line: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "--job",
        "bf",
        "--schedule",
        "* * * * *",
        "--backfill",
        range,
        "--lease",
        "5s",
        "--runner",
        runner,
        "--json",
        "--shell",
        "--",
        line,
    ]
}

/// The minute `n` minutes before the server's current one, in ms.
fn minutes_ago(s: &Server, n: i64) -> i64 {
    s.now_ms() / 60_000 * 60_000 - n * 60_000
}

#[test]
fn several_hosts_backfilling_one_range_run_each_slot_once_oldest_first() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("ticks");
    let (from, to) = (minutes_ago(&s, 7), minutes_ago(&s, 2));
    // One slot in the range already ran (this also makes the job first seen now: the older
    // slots are before that, and a backfill runs them anyway).
    let ran_before = (from + 2 * 60_000).to_string();
    s.cli(&["run", "--job", "bf", "--slot", &ran_before, "--", "true"])
        .expect(0);
    let range = format!("{from}..{to}");
    let line = ticker_as(&log, "$ANARCHON_SLOT", 300, false);
    let hosts: Vec<_> = (1..=3)
        .map(|i| {
            let runner = format!("host-{i}:1");
            let args = backfill_args(&range, &runner, &line);
            s.anarchon_process()
                .args(&args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<_> = hosts
        .into_iter()
        .map(|h| h.wait_with_output().unwrap())
        .collect();
    for out in &outputs {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // What the commands did: each of the 5 slots that never ran, once, never two at a time.
    let spans = assert_no_two_spans_overlap::<i64>(&log);
    let expected: Vec<i64> = (0..6)
        .map(|i| from + i * 60_000)
        .filter(|slot| slot.to_string() != ran_before)
        .collect();
    assert_eq!(spans.keys().copied().collect::<Vec<_>>(), expected);
    // Oldest first: each slot started after the one before it ended.
    let starts: Vec<i64> = spans.values().map(|(start, _)| *start).collect();
    assert!(starts.windows(2).all(|w| w[0] < w[1]), "{spans:?}");
    // The store: one attempt per slot, every one finished.
    let results = s.results("bf");
    assert_eq!(results.len(), 6, "{results:?}");
    assert!(
        results.iter().all(|r| r.status == "finished"),
        "{results:?}"
    );
    // Between them the hosts ran all five.
    let ran: usize = outputs
        .iter()
        .map(|o| {
            let doc = common::json(o);
            doc["runs"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["outcome"] == "ran")
                .count()
        })
        .sum();
    assert_eq!(ran, 5);
}

#[test]
fn a_dry_run_lists_what_would_run_and_writes_nothing() {
    let s = Server::start();
    let (from, to) = (minutes_ago(&s, 4), minutes_ago(&s, 1));
    let done = (from + 60_000).to_string();
    s.cli(&["run", "--job", "bf", "--slot", &done, "--", "true"])
        .expect(0);
    let results_before = s.results("bf").len();
    let range = format!("{from}..{to}");
    let out = s
        .cli(&[
            "run",
            "--job",
            "bf",
            "--schedule",
            "* * * * *",
            "--backfill",
            &range,
            "--backfill-max",
            "2",
            "--dry-run",
            "--json",
        ])
        .expect(0);
    let doc = out.json();
    let actions: Vec<(i64, String)> = doc["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["slot"].as_i64().unwrap(),
                p["action"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        actions,
        vec![
            (from, "run".to_string()),
            (from + 60_000, "done".to_string()),
            (from + 120_000, "run".to_string()),
            (from + 180_000, "over_max".to_string()),
        ],
        "{doc}"
    );
    assert_eq!(doc["left_over"], 1);
    assert_eq!(s.results("bf").len(), results_before);
    assert!(s.run("bf", &from.to_string()).is_none());
    // The same for a person: a line per slot.
    let text = s
        .cli(&[
            "run",
            "--job",
            "bf",
            "--schedule",
            "* * * * *",
            "--backfill",
            &range,
            "--dry-run",
        ])
        .expect(0);
    let shown = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(
        shown.contains("3 would run") && shown.contains("never run    would run"),
        "{shown}"
    );
}

/// A slot `--overlap forbid` recorded skipped is left alone, and run (once) with
/// --include-skipped.
#[test]
fn skipped_slots_run_only_with_include_skipped() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("ran");
    let release = dir.path().join("release");
    let (older, skipped) = (minutes_ago(&s, 3), minutes_ago(&s, 2));
    let line = format!(
        "echo $ANARCHON_SLOT >> {}; while [ ! -f {} ]; do sleep 0.05; done",
        log.display(),
        release.display()
    );
    let mut holder = common::spawn_run(
        &s,
        &[
            "--job",
            "bf",
            "--slot",
            &older.to_string(),
            "--shell",
            "--",
            &line,
        ],
    );
    common::wait_for_line(&log);
    s.cli(&[
        "run",
        "--job",
        "bf",
        "--slot",
        &skipped.to_string(),
        "--max-late",
        "1h",
        "--",
        "true",
    ])
    .expect(80);
    std::fs::write(&release, "").unwrap();
    assert!(holder.wait().unwrap().success());

    let range = format!("{older}..{skipped}");
    let echo = format!("echo $ANARCHON_SLOT >> {}", log.display());
    let out = s.cli(&backfill_args(&range, "op:1", &echo)).expect(0);
    let doc = out.json();
    assert_eq!(doc["runs"].as_array().unwrap().len(), 0, "{doc}");
    assert_eq!(doc["slots"][1]["action"], "skipped", "{doc}");

    let mut args = backfill_args(&range, "op:1", &echo);
    args.insert(7, "--include-skipped");
    let out = s.cli(&args).expect(0);
    let doc = out.json();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{doc}");
    assert_eq!(runs[0]["slot"], skipped, "{doc}");
    assert_eq!(runs[0]["status"], "finished", "{doc}");
    // Once run, it is done: a second backfill leaves it alone.
    s.cli(&args).expect(0);
    let ran = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        ran.lines().collect::<Vec<_>>(),
        vec![older.to_string(), skipped.to_string()],
        "{ran}"
    );
    let history = s.cli(&["history", "bf", "--json"]).expect(0).json();
    let statuses: Vec<String> = history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["slot"] == skipped)
        .map(|e| e["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(statuses, vec!["finished"], "{history}");
}
