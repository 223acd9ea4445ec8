//! A store anarchon creates is one every scheduler reads: format 1, the seed's layout. An
//! independent client of format 1 (tests/clients/format1.py, written from docs/store-format.md
//! alone, in Python with redis-py) shares a job with anarchon: they race for the same slots and
//! exactly one wins each, and each reads what the other wrote.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::common::{Server, json, stderr};
use serde_json::Value;

/// Runs the independent client; its stdout is JSON.
fn python(s: &Server, args: &[&str]) -> Value {
    let out = client(s, args).output().unwrap();
    assert!(
        out.status.success(),
        "format1.py {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out)
}

fn client(s: &Server, args: &[&str]) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/format1.py");
    let mut cmd = Command::new(crate::common::python());
    cmd.arg(script).arg(&s.url).args(args);
    cmd
}

/// redis-py must be there: tests/setup-and-test.sh installs it. Missing here is a failure, not a skip.
fn require_redis_py() {
    let ok = Command::new(crate::common::python())
        .args(["-c", "import redis"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "python3 with redis-py is needed (apt-get install python3-redis; tests/setup-and-test.sh installs it)"
    );
}

/// A server with nothing in it: no format key (under ANARCHON_TEST_STORE_FORMAT=2 too, since
/// these tests are about what a fresh store becomes).
fn empty_server() -> Server {
    require_redis_py();
    let s = Server::start();
    let _: () = s.cmd(&["FLUSHALL"]);
    s
}

fn assert_seed_layout(s: &Server, job: &str) {
    assert_eq!(
        s.cmd::<String>(&["GET", "cron:format"]),
        "1",
        "{:?}",
        s.keys()
    );
    assert_eq!(
        s.cmd::<String>(&["TYPE", &format!("{{cron:{job}}}:live")]),
        "none"
    );
    let state = s.cmd::<String>(&["TYPE", &format!("{{cron:{job}}}:state")]);
    assert!(state == "hash" || state == "none", "{state}");
}

const MINUTE: i64 = 60_000;

#[test]
fn every_writing_command_leaves_a_fresh_store_in_format_1_for_other_readers() {
    let s = empty_server();
    let minute = s.now_ms() / MINUTE * MINUTE;
    let later = (minute + 5 * MINUTE).to_string();
    // `pause` of a job no claim ever reached is refused (a typo must not pause nothing): on an
    // empty Redis it writes no format 2 either.
    s.cli(&["pause", "lx", "--for", "1m"]).expect(85);
    let format: Option<String> = s.cmd(&["GET", "cron:format"]);
    assert_ne!(format.as_deref(), Some("2"));
    let commands: [&[&str]; 6] = [
        &[
            "run",
            "--job",
            "lx",
            "--schedule",
            "* * * * *",
            "--",
            "true",
        ],
        &[
            "run",
            "--job",
            "lx",
            "--schedule",
            "* * * * *",
            "--overlap",
            "buffer",
            "--",
            "true",
        ],
        &[
            "run",
            "--job",
            "lx",
            "--schedule",
            "* * * * *",
            "--backfill",
            "3m..now",
            "--include-skipped",
            "--",
            "true",
        ],
        &["claim", "lx", "--slot", "now", "--new"],
        &["run-now", "lx", "--", "true"],
        // A job that exists only as a manual run's claim: pause reaches it.
        &["pause", "lx", "--for", "1m"],
    ];
    for args in commands {
        if args[0] == "pause" {
            let _: () = s.cmd(&["FLUSHALL"]);
            s.cli(&["claim", "lx", "--slot", "now", "--new"]).expect(0);
            let _: () = s.cmd(&["DEL", "cron:format"]);
            s.cli(args).expect(0);
            assert_seed_layout(&s, "lx");
            continue;
        }
        let _: () = s.cmd(&["FLUSHALL"]);
        s.cli(args).expect(0);
        assert_seed_layout(&s, "lx");
        // A format 1 client goes on with the job: it is not refused, and it wins a new slot
        // (a manual slot, not scheduled: the pause does not hold it).
        let _: () = s.cmd(&["DEL", "{cron:lx}:job"]);
        let won = python(&s, &["claim", "lx", &later, "py-token", "py:1", "30000"]);
        let outcome = won["outcome"].as_str().unwrap();
        // Next to a claim in progress (anarchon `claim`), the older live run is an overlap.
        assert!(outcome == "won" || outcome == "overlap", "{args:?}: {won}");
        assert_eq!(s.cmd::<String>(&["GET", "cron:format"]), "1");
    }
}

#[test]
fn each_reads_what_the_other_wrote() {
    let s = empty_server();
    let minute = s.now_ms() / MINUTE * MINUTE;
    let (ours, theirs) = (minute - 2 * MINUTE, minute - MINUTE);
    // anarchon runs one slot; the client sees it ended, finished, in history, and answers done.
    s.cli(&[
        "run",
        "--job",
        "mix",
        "--slot",
        &ours.to_string(),
        "--max-late",
        "1h",
        "--",
        "true",
    ])
    .expect(0);
    let history = python(&s, &["history", "mix"]);
    assert_eq!(history.as_array().unwrap().len(), 1, "{history}");
    assert_eq!(history[0]["slot"], ours);
    assert_eq!(history[0]["status"], "finished");
    let again = python(
        &s,
        &["claim", "mix", &ours.to_string(), "py", "py:1", "30000"],
    );
    assert_eq!(
        (again["outcome"].as_str(), again["status"].as_str()),
        (Some("done"), Some("finished"))
    );

    // The client runs the next slot: anarchon sees it in progress (who, which attempt), its
    // claims answer running (a `run` would stand by as its backup), its history shows the
    // finish with the client's result.
    let slot = theirs.to_string();
    let won = python(&s, &["claim", "mix", &slot, "py-tok", "py-host:7", "30000"]);
    assert_eq!(won["outcome"], "won");
    assert_eq!(
        python(&s, &["heartbeat", "mix", &slot, "py-tok", "30000"])["outcome"],
        "ok"
    );
    let inspect = s.cli(&["inspect", "mix", "--json"]).expect(0).json();
    assert_eq!(inspect["active"][0]["slot"], theirs, "{inspect}");
    assert_eq!(inspect["active"][0]["runner"], "py-host:7", "{inspect}");
    assert_eq!(inspect["format"], 1);
    assert!(
        inspect["format_readers"]
            .as_str()
            .unwrap()
            .contains("RedisBackend"),
        "{inspect}"
    );
    let doctor = s.cli(&["doctor"]);
    let said = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        said.lines()
            .any(|l| l.contains("cron:format = 1") && l.contains("RedisBackend")),
        "{said}"
    );
    let out = s
        .cli(&["claim", "mix", "--slot", &slot, "--json"])
        .expect(82);
    assert_eq!(out.json()["runner"], "py-host:7");
    let finished = python(
        &s,
        &[
            "finish",
            "mix",
            &slot,
            "py-tok",
            "finished",
            r#"{"rows":3}"#,
        ],
    );
    assert_eq!(finished["outcome"], "ok");
    let history = s.cli(&["history", "mix", "--json"]).expect(0).json();
    let entries = history["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{history}");
    assert_eq!(entries[0]["slot"], theirs);
    assert_eq!(entries[0]["runner"], "py-host:7");
    assert_eq!(entries[0]["result"]["rows"], 3);
    assert_eq!(entries[1]["status"], "finished");
    // And the client's run is over for anarchon's claims too.
    let out = s
        .cli(&["claim", "mix", "--slot", &slot, "--json"])
        .expect(81);
    assert_eq!(out.json()["status"], "finished", "{}", stderr(&out));
}

#[test]
fn anarchon_and_the_format_1_client_race_for_the_same_slots_and_one_wins_each() {
    let s = empty_server();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("ran");
    let log_text = log.to_str().unwrap();
    let minute = s.now_ms() / MINUTE * MINUTE;
    let slots: Vec<i64> = (1..=12).rev().map(|k| minute - k * MINUTE).collect();
    for slot in &slots {
        let slot = slot.to_string();
        // Two anarchon hosts and two format 1 clients at once; each winner writes one line.
        let mut racers: Vec<Child> = Vec::new();
        for host in ["a", "b"] {
            let line = format!("echo '{slot} anarchon-{host}' >> {log_text}");
            racers.push(
                s.anarchon_process()
                    // No standing by: the race is who wins (a loser would wait up to 5 s for a
                    // winner from the other client to end, per slot).
                    .args([
                        "run",
                        "--job",
                        "race",
                        "--slot",
                        &slot,
                        "--max-late",
                        "1h",
                        "--no-backup",
                    ])
                    .args([
                        "--runner",
                        &format!("anarchon-{host}:1"),
                        "--shell",
                        "--",
                        &line,
                    ])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap(),
            );
        }
        for host in ["c", "d"] {
            racers.push(
                client(
                    &s,
                    &["race", "race", &slot, &format!("py-{host}"), log_text],
                )
                .stdout(Stdio::null())
                .spawn()
                .unwrap(),
            );
        }
        for mut racer in racers {
            racer.wait().unwrap();
        }
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let ran: Vec<(i64, String)> = text
        .lines()
        .map(|l| {
            let (slot, who) = l.split_once(' ').unwrap();
            (slot.parse().unwrap(), who.to_string())
        })
        .collect();
    let ran_slots: Vec<i64> = ran.iter().map(|(slot, _)| *slot).collect();
    assert_eq!(ran_slots, slots, "each slot ran exactly once:\n{text}");
    // Both kinds of client won some (four racers a slot: a race, not a queue), and the store
    // agrees with the log: one finished run per slot, by its winner.
    let history = python(&s, &["history", "race"]);
    let recorded: Vec<(i64, String)> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let runner = h["runner"].as_str().unwrap();
            (
                h["slot"].as_i64().unwrap(),
                runner.trim_end_matches(":1").to_string(),
            )
        })
        .collect();
    assert_eq!(recorded, ran, "{history}");
    assert!(
        history
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["status"] == "finished")
    );
    assert_eq!(s.cmd::<String>(&["GET", "cron:format"]), "1");
}

/// A store moved to format 2 and back (`anarchon migrate --to 1`) is one the format 1 client
/// shares again: every run that ran in format 2 is done for it (none runs twice), the run still in
/// progress is held, and it runs the next slot, which anarchon sees.
#[test]
fn after_the_way_back_the_format_1_client_runs_no_slot_twice() {
    let s = empty_server();
    let minute = s.now_ms() / MINUTE * MINUTE;
    let first = (minute - 6 * MINUTE).to_string();
    s.cli(&[
        "run",
        "--job",
        "back",
        "--slot",
        &first,
        "--max-late",
        "1h",
        "--",
        "true",
    ])
    .expect(0);
    let out = s.cli(&["migrate", "--yes"]).expect(0);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    assert_eq!(s.cmd::<String>(&["GET", "cron:format"]), "2");
    // In format 2: three runs end (one fails), one is taken over, one stays in progress.
    let slots: Vec<i64> = (1..=4).map(|i| minute - (6 - i) * MINUTE).collect();
    for (i, slot) in slots.iter().enumerate() {
        let out = s.cli(&[
            "run",
            "--job",
            "back",
            "--slot",
            &slot.to_string(),
            "--max-late",
            "1h",
            "--",
            if i == 1 { "false" } else { "true" },
        ]);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{:?} {}",
            out.status.code(),
            stderr(&out)
        );
    }
    let held = minute - MINUTE;
    let token = s
        .cli(&["claim", "back", "--slot", &held.to_string(), "--json"])
        .expect(0)
        .json()["token"]
        .as_str()
        .unwrap()
        .to_string();
    // The client cannot read it now.
    let out = client(
        &s,
        &["claim", "back", &held.to_string(), "py", "py:1", "30000"],
    )
    .output()
    .unwrap();
    assert!(!out.status.success());

    s.cli(&["migrate", "--to", "1", "--yes"]).expect(0);
    assert_seed_layout(&s, "back");
    for slot in &slots {
        let again = python(
            &s,
            &["claim", "back", &slot.to_string(), "py", "py:1", "30000"],
        );
        assert_eq!(again["outcome"], "done", "{slot}: {again}");
        let state = python(&s, &["state", "back", &slot.to_string()]);
        assert!(
            ["finished", "failed"].contains(&state["status"].as_str().unwrap()),
            "{state}"
        );
    }
    let again = python(
        &s,
        &["claim", "back", &held.to_string(), "py", "py:1", "30000"],
    );
    assert_eq!(again["outcome"], "running", "{again}");
    // Its holder ends it, in format 1 now; the client runs the next slot, anarchon sees it and
    // its history reads every run.
    s.cli(&[
        "finish",
        "back",
        "--slot",
        &held.to_string(),
        "--token",
        &token,
        "--status",
        "ok",
    ])
    .expect(0);
    let next = minute.to_string();
    let log = s.dir.path().join("py.log");
    let won = python(
        &s,
        &["race", "back", &next, "py-host:7", log.to_str().unwrap()],
    );
    assert_eq!(won["outcome"], "won");
    s.cli(&["claim", "back", "--slot", &next, "--json"])
        .expect(81);
    let history = s.cli(&["history", "back", "--json"]).expect(0).json();
    let entries = history["entries"].as_array().unwrap();
    // The run of format 1 and four of format 2, the run in progress, the client's run.
    assert_eq!(entries.len(), 7, "{history}");
    assert_eq!(entries[0]["runner"], "py-host:7", "{history}");
}
