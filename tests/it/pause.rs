//! `anarchon pause` / `resume`: every host's `run` skips a paused job (exit 87), atomically in the
//! claim script; the slots due during a pause stay skipped; manual runs go on.

use crate::common;
use crate::common::{Server, json, stderr};

fn run(s: &Server, job: &str, slot: &str, extra: &[&str]) -> Option<i32> {
    let mut args = vec!["run", "--job", job, "--slot", slot];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "true"]);
    s.cli(&args).status.code()
}

#[test]
fn a_pause_stops_every_host_and_after_resume_the_next_slot_runs_once() {
    let s = Server::start();
    assert_eq!(run(&s, "p", "60000", &[]), Some(0));
    let out = s.cli(&[
        "pause",
        "p",
        "--reason",
        "bank holiday, INC-77",
        "--by",
        "ops",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["paused"], true);
    let during = s.now_ms().to_string();

    // Ten hosts: none runs, each says paused.
    let file = s.dir.path().join("ran.txt");
    let line = format!("echo ran >> {}", file.display());
    let outputs = common::race(&s, 10, |_| {
        common::owned(&[
            "run", "--job", "p", "--slot", "120000", "--shell", "--", &line,
        ])
    });
    assert!(
        common::codes(&outputs).iter().all(|c| *c == 87),
        "{:?}",
        common::codes(&outputs)
    );
    assert!(!file.exists(), "a paused job ran");
    assert_eq!(run(&s, "p", "120000", &["--skipped-ok"]), Some(0));
    // Nothing was claimed.
    assert!(s.run("p", "120000").is_none());

    // Everyone can see who paused it and why.
    let v = json(&s.cli(&["list", "--json"]));
    assert_eq!(v["jobs"][0]["state"], "paused");
    let v = json(&s.cli(&["inspect", "p", "--json"]));
    assert_eq!(v["paused"], true);
    assert_eq!(v["pause"]["paused_by"], "ops");
    assert_eq!(v["pause"]["paused_reason"], "bank holiday, INC-77");
    let text = String::from_utf8_lossy(&s.cli(&["inspect", "p"]).stdout).into_owned();
    assert!(
        text.contains("paused") && text.contains("bank holiday"),
        "{text}"
    );

    // A manual run still works (an operator's explicit act).
    assert_eq!(
        s.cli(&["run-now", "p", "--", "true"]).status.code(),
        Some(0)
    );

    let out = s.cli(&["resume", "p"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The slot that was due during the pause stays skipped: it is not caught up.
    assert_eq!(run(&s, "p", &during, &[]), Some(87));
    // The next slot runs once.
    let next = (s.now_ms() + 60_000).to_string();
    let outputs = common::race(&s, 10, |_| {
        common::owned(&["run", "--job", "p", "--slot", &next, "--shell", "--", &line])
    });
    assert_eq!(
        common::codes(&outputs).iter().filter(|c| **c == 0).count(),
        1
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "ran\n");
    let out = s.cli(&["resume", "p"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("not paused"));
}

#[test]
fn a_pause_with_an_end_ends_by_itself() {
    let s = Server::start();
    assert_eq!(run(&s, "t", "60000", &[]), Some(0));
    let out = s.cli(&["pause", "t", "--until", "60000"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a pause that ended already: {}",
        stderr(&out)
    );
    let out = s.cli(&["pause", "t", "--for", "400ms", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let until = json(&out)["paused_until"].as_i64().unwrap();
    assert_eq!(run(&s, "t", "120000", &[]), Some(87));
    common::wait_for_server_time(&s, until);
    // After its end, even a slot from before the pause is claimed as usual.
    assert_eq!(run(&s, "t", "120000", &[]), Some(0));
    // A resume after it ended by itself has nothing to end, and records nothing.
    let out = s.cli(&["resume", "t"]).expect(0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("not paused"));
    let events: Vec<redis::Value> = s.cmd(&["XRANGE", "{cron:t}:events", "-", "+"]);
    assert_eq!(events.len(), 1, "only the pause: {events:?}");
    // A job that does not exist cannot be paused (a typo).
    assert_eq!(s.cli(&["pause", "nope"]).status.code(), Some(85));
}

/// Concurrent pause-then-resume pairs (issue 46, item 9): the final state is right, and the
/// events are a true history: read in order, every `resume` ends the pause in force just before
/// it (the latest `pause`, not ended yet), so no two resumes end one pause, and every `pause`
/// shows the end its own operator gave, as that operator's command reported it.
#[test]
fn concurrent_pauses_and_resumes_leave_a_true_audit_trail() {
    const PAIRS: usize = 40;
    let s = Server::start();
    assert_eq!(run(&s, "r", "60000", &[]), Some(0));
    // Even operators pause until resumed, odd ones for an hour.
    let gave_for = |i: usize| i % 2 == 1;
    let reports: Vec<(serde_json::Value, std::process::Output)> = std::thread::scope(|scope| {
        let pairs: Vec<_> = (0..PAIRS)
            .map(|i| {
                let s = &s;
                scope.spawn(move || {
                    let by = format!("op-{i}");
                    let mut pause = vec!["pause", "r", "--by", &by, "--json"];
                    if gave_for(i) {
                        pause.extend(["--for", "1h"]);
                    }
                    let paused = s.cli(&pause).expect(0).json();
                    let resumed = s.cli(&["resume", "r", "--by", &by]).expect(0);
                    (paused, resumed.output)
                })
            })
            .collect();
        pairs.into_iter().map(|p| p.join().unwrap()).collect()
    });
    // Each pause command reported its own pause.
    let rfc3339 = |ms: i64| {
        let t = chrono::DateTime::from_timestamp_millis(ms).unwrap();
        t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
    };
    let mut until_of = std::collections::HashMap::new();
    let mut began = std::collections::HashMap::new();
    for (i, (paused, _)) in reports.iter().enumerate() {
        began.insert(
            format!("op-{i}"),
            rfc3339(paused["paused_at"].as_i64().unwrap()),
        );
        assert_eq!(paused["paused_by"], format!("op-{i}"), "{paused}");
        assert_eq!(paused["paused"], true, "{paused}");
        let until = paused["paused_until"].as_i64();
        assert_eq!(until.is_some(), gave_for(i), "op-{i}: {paused}");
        let said = until.map_or("until resumed".to_string(), |u| {
            format!("until {}", rfc3339(u))
        });
        until_of.insert(format!("op-{i}"), said);
    }
    // The final state: the last action of every pair was a resume.
    let v = s.cli(&["inspect", "r", "--json"]).expect(0).json();
    assert_eq!(v["paused"], false, "{v}");

    let entries: redis::streams::StreamRangeReply = s.cmd(&["XRANGE", "{cron:r}:events", "-", "+"]);
    let field = |e: &redis::streams::StreamId, name: &str| -> String {
        e.get::<String>(name).unwrap_or_default()
    };
    let mut in_force: Option<String> = None;
    let (mut pauses, mut resumes) = (0, 0);
    let mut history = Vec::new();
    for e in &entries.ids {
        let (action, by, detail) = (field(e, "action"), field(e, "by"), field(e, "detail"));
        history.push(format!("{action} {by}: {detail}"));
        match action.as_str() {
            "pause" => {
                pauses += 1;
                assert_eq!(
                    Some(&detail),
                    until_of.get(&by),
                    "a pause shows an end its operator did not give:\n{}",
                    history.join("\n")
                );
                in_force = Some(by);
            }
            "resume" => {
                resumes += 1;
                // It names the pause in force by who began it and when (as that pause's own
                // command reported it).
                let ended = in_force
                    .as_ref()
                    .map(|who| format!("ended the pause {who} began at {}", began[who.as_str()]));
                assert_eq!(
                    Some(&detail),
                    ended.as_ref(),
                    "a resume ends a pause that is not the one in force:\n{}",
                    history.join("\n")
                );
                in_force = None;
            }
            other => panic!("unexpected event {other}"),
        }
    }
    assert_eq!(pauses, PAIRS, "{}", history.join("\n"));
    assert!(resumes >= 1 && in_force.is_none(), "{}", history.join("\n"));
    // A resume that found no pause in force said so and recorded nothing.
    let quiet = reports
        .iter()
        .filter(|(_, out)| String::from_utf8_lossy(&out.stdout).contains("not paused"))
        .count();
    assert_eq!(resumes + quiet, PAIRS, "{}", history.join("\n"));
}

/// The scripts' own RFC 3339 (what a `pause` event says of its end, a `resume` of the pause's
/// start) is the Rust side's, across leap days, year ends and the epoch.
#[test]
fn the_scripts_write_times_as_the_rest_of_anarchon_does() {
    let s = Server::start();
    let script = format!(
        "{}\nreturn rfc3339(tonumber(ARGV[1]))",
        include_str!("../../lua/store/pause_lib.lua")
    );
    for rfc in [
        "1970-01-01T00:00:00.000Z",
        "2000-02-29T23:59:59.999Z",
        "2024-02-29T12:00:00.001Z",
        "2026-12-05T13:16:00.982Z",
        "2026-12-31T23:59:59.500Z",
        "2027-01-01T00:00:00.000Z",
        "2100-03-01T00:00:00.000Z",
        "2400-02-29T06:07:08.090Z",
    ] {
        let ms = chrono::DateTime::parse_from_rfc3339(rfc)
            .unwrap()
            .timestamp_millis()
            .to_string();
        let said: String = s.cmd(&["EVAL", &script, "0", &ms]);
        assert_eq!(said, rfc, "{ms}");
    }
}

/// `check --window` over a job paused twice (once by `--for`, once until resumed) reads the slots
/// of both pauses as decided, not missed: the `:job` hash keeps only the newest pause, the job's
/// events both. The slots between the pauses, which ran, and a slot missed after them are judged
/// as ever.
#[test]
fn check_over_a_window_knows_every_pause_in_it() {
    use crate::common::replica::Replica;
    use std::time::Duration;
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crontab");
    std::fs::write(&file, "# anarchon: --job twice\n*/2 * * * * * true\n").unwrap();
    let start = s.now_ms();
    let mut replica = Replica::start(&s.url, &file, dir.path(), "r", &[]);
    let results = |s: &Server| s.results("twice").len();
    common::wait_for("a first run", Duration::from_secs(10), || results(&s) >= 1);
    assert!(s.cli(&["pause", "twice", "--for", "5s"]).status.success());
    let first_pause = s.now_ms();
    common::wait_for(
        "runs after the first pause",
        Duration::from_secs(20),
        || {
            s.results("twice")
                .iter()
                .any(|r| r.slot > first_pause + 5_000)
        },
    );
    assert!(s.cli(&["pause", "twice"]).status.success());
    let second_pause = s.now_ms();
    common::wait_for(
        "two slots in the second pause",
        Duration::from_secs(10),
        || s.now_ms() > second_pause + 4_500,
    );
    assert!(s.cli(&["resume", "twice"]).status.success());
    let resumed = s.now_ms();
    common::wait_for("a run after the resume", Duration::from_secs(10), || {
        s.results("twice").iter().any(|r| r.slot > resumed)
    });
    let window = format!("{}ms", s.now_ms() - start);
    let check = |s: &Server| {
        s.cli(&[
            "check", "twice", "--window", &window, "--grace", "3s", "--json",
        ])
    };
    let out = check(&s);
    let v = out.json();
    assert_eq!(out.code(), Some(0), "{v}");
    assert_eq!(
        v["jobs"][0]["health"]["missed_slots"],
        serde_json::json!([]),
        "{v}"
    );
    // Losses are still losses: the replica stops, and slots after the pauses go missed.
    assert_eq!(replica.stop(Duration::from_secs(10)), Some(0));
    let stopped = s.now_ms();
    common::wait_for("two slots and the grace", Duration::from_secs(20), || {
        s.now_ms() > stopped + 4_000 + 3_000 + 1_000
    });
    let out = check(&s);
    assert_eq!(out.code(), Some(2), "{}", out.json());
}

/// A job a replica of `anarchon cron` has in its crontab but has never run (a new job, a yearly
/// one) can be paused ahead of its first run: the replica's presence says it is a job. A name no
/// replica has and the store never saw is still refused, with the nearest names.
#[test]
fn a_cron_job_that_never_ran_can_be_paused_before_its_first_run() {
    use crate::common::replica::Replica;
    use std::time::Duration;
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crontab");
    std::fs::write(&file, "# anarchon: --job yearly\n0 0 1 1 * true\n").unwrap();
    let _replica = Replica::start(&s.url, &file, dir.path(), "r", &[]);
    common::wait_for("the replica's presence", Duration::from_secs(10), || {
        s.cmd::<Vec<String>>(&["HKEYS", "{cron:}:replicas"]).len() == 1
    });
    let paused = s.cli(&["pause", "yearly", "--reason", "freeze"]);
    assert_eq!(paused.status.code(), Some(0), "{}", stderr(&paused));
    assert_eq!(
        s.cmd::<Option<String>>(&["HGET", "{cron:yearly}:job", "paused_reason"]),
        Some("freeze".to_string())
    );
    let resumed = s.cli(&["resume", "yearly"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let typo = s.cli(&["pause", "yearlyy"]);
    assert_eq!(typo.status.code(), Some(85), "{}", stderr(&typo));
    assert!(
        stderr(&typo).contains("did you mean yearly"),
        "{}",
        stderr(&typo)
    );
}
