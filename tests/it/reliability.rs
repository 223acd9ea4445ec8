//! Reliability: load, server restarts with and without AOF, a stalled server, a full server, and
//! garbage in the store. Each ends with a clear error and exit code, no double run, and no lost
//! record the server acknowledged.

use std::collections::BTreeMap;
use std::process::{Child, Output};
use std::time::{Duration, Instant};

use crate::common::{Server, json, spawn_run, stderr, wait_for, wait_for_claim};

const SLOT: &str = "1796220300000";

/// The load test starts 40 processes at once; the timing tests must not share the 2 cores with it.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[test]
fn load_200_runs_over_50_slots_run_each_slot_exactly_once() {
    let _alone = alone();
    let s = Server::start();
    let file = s.dir.path().join("ran.txt");
    let line = format!("echo $ANARCHON_SLOT >> {}", file.display());
    // 4 contenders per slot, 10 slots at a time: 40 processes racing at once on 2 cores.
    for wave in 0..5 {
        let children: Vec<Child> = (0..10)
            .flat_map(|i| {
                let slot = (1_000_000 + (wave * 10 + i) * 60_000).to_string();
                (0..4)
                    .map(|_| {
                        spawn_run(
                            &s,
                            &[
                                "--job",
                                "load",
                                "--slot",
                                &slot,
                                "--overlap",
                                "allow",
                                "--shell",
                                "--",
                                &line,
                            ],
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(
                matches!(out.status.code(), Some(0) | Some(81)),
                "{}",
                stderr(&out)
            );
        }
    }
    let text = std::fs::read_to_string(&file).unwrap();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for slot in text.lines() {
        *counts.entry(slot).or_default() += 1;
    }
    assert_eq!(counts.len(), 50, "every slot ran");
    assert!(
        counts.values().all(|n| *n == 1),
        "a slot ran twice: {counts:?}"
    );
    assert_eq!(s.cmd::<i64>(&["ZCARD", "{cron:load}:results"]), 50);
}

#[test]
fn a_restart_without_persistence_loses_the_lease_and_stops_the_command() {
    let _alone = alone();
    let mut s = Server::start();
    let child = spawn_run(
        &s,
        &[
            "--job",
            "r",
            "--slot",
            SLOT,
            "--lease",
            "1500ms",
            "--kill-after",
            "1s",
            "--",
            "sleep",
            "30",
        ],
    );
    wait_for_claim(&s, "r", SLOT);
    s.restart(&[]);
    let start = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(start.elapsed() < Duration::from_secs(15));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(
        err.contains("lease lost") && err.contains("lost its data"),
        "{err}"
    );
}

#[test]
fn a_restart_with_aof_keeps_the_lease_and_every_acknowledged_record() {
    let _alone = alone();
    let aof = ["--appendonly", "yes", "--appendfsync", "always"];
    let mut s = Server::start_with(&aof);
    // A finished run before the restart.
    let out = s
        .anarchon()
        .args(["run", "--job", "a", "--slot", "1000", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let child = spawn_run(
        &s,
        &[
            "--job", "a", "--slot", SLOT, "--lease", "3s", "--json", "--", "sleep", "2",
        ],
    );
    wait_for_claim(&s, "a", SLOT);
    s.restart(&aof);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "finished");
    assert_eq!(v["attempt"], 1);
    let results: Vec<String> = s.cmd(&["ZRANGE", "{cron:a}:results", "0", "-1"]);
    assert_eq!(
        results.len(),
        2,
        "a record acknowledged before the restart was lost"
    );
    assert_eq!(
        s.cmd::<String>(&["GET", "cron:format"]),
        Server::test_store_format().to_string()
    );
}

#[test]
fn a_stall_longer_than_the_lease_never_lets_two_commands_overlap() {
    let _alone = alone();
    let s = Server::start();
    let log = s.dir.path().join("log.txt");
    let body = |name: &str| {
        format!(
            "echo {name}-start >> {log}; trap 'echo {name}-end >> {log}; exit 143' TERM; sleep 30 & wait",
            log = log.display()
        )
    };
    let a_body = body("A");
    let a = spawn_run(
        &s,
        &[
            "--job",
            "st",
            "--slot",
            SLOT,
            "--lease",
            "1s",
            "--kill-after",
            "2s",
            "--command-timeout",
            "500ms",
            "--shell",
            "--",
            &a_body,
        ],
    );
    wait_for("A's command", Duration::from_secs(10), || log.exists());
    s.pause(true);
    // A gives up at its lease deadline; its command is gone before the server comes back.
    wait_for("A's command to be stopped", Duration::from_secs(10), || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("A-end"))
    });
    let a_log = std::fs::read_to_string(&log).unwrap();
    s.pause(false);
    assert!(
        a_log.contains("A-end"),
        "A's command still ran after its lease: {a_log}"
    );
    let out = a.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert!(stderr(&out).contains("lease lost"), "{}", stderr(&out));
    // A backup arriving now finds the run ended or takes it over; either way, one at a time.
    let b_body = format!("echo B-start >> {}", log.display());
    let out = s
        .anarchon()
        .args([
            "run",
            "--job",
            "st",
            "--slot",
            SLOT,
            "--lease",
            "1s",
            "--backup-for",
            "5s",
            "--shell",
            "--",
            &b_body,
        ])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0) | Some(81)),
        "{}",
        stderr(&out)
    );
    let lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(&lines[..2], ["A-start", "A-end"], "{lines:?}");
}

#[test]
fn a_full_server_gives_a_clear_error_and_writes_nothing_half() {
    let s = Server::start();
    let out = s
        .anarchon()
        .args(["claim", "full", "--slot", "1000", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let token = json(&out)["token"].as_str().unwrap().to_string();
    let info: String = s.cmd(&["INFO", "memory"]);
    let used: i64 = info
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _: () = s.cmd(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
    let _: () = s.cmd(&["CONFIG", "SET", "maxmemory", &(used + 200_000).to_string()]);
    let mut c = s.client();
    let junk = "x".repeat(10_000);
    for i in 0..1000 {
        if redis::cmd("SET")
            .arg(format!("junk{i}"))
            .arg(&junk)
            .query::<()>(&mut c)
            .is_err()
        {
            break;
        }
    }
    // Full, and kept full: filled to the limit, the server's own housekeeping (clientsCron
    // shrinking the filling client's query buffer) can free enough for one more write a moment
    // later, which let this claim through once on a loaded machine. Below what it holds, nothing
    // that adds memory passes.
    let _: () = s.cmd(&["CONFIG", "SET", "maxmemory", &(used / 2).to_string()]);
    let out = s
        .anarchon()
        .args(["claim", "full", "--slot", "2000", "--overlap", "allow"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("OOM") && err.contains("maxmemory"), "{err}");
    assert!(
        !s.runs("full").contains_key(&2000),
        "a refused claim left state behind"
    );
    // The finish of the held run is refused whole, too: no stream entry without its result.
    let out = s
        .anarchon()
        .args([
            "finish", "full", "--slot", "1000", "--token", &token, "--status", "ok",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(s.cmd::<i64>(&["EXISTS", "{cron:full}:runs"]), 0);
    assert_eq!(s.cmd::<i64>(&["EXISTS", "{cron:full}:results"]), 0);
    // Room again: the held run finishes normally.
    let _: () = s.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
    let out = s
        .anarchon()
        .args([
            "finish", "full", "--slot", "1000", "--token", &token, "--status", "ok",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Hand-written garbage in every key of a job: each command fails with the key's name, never a
/// panic (exit 101).
#[test]
fn garbage_written_by_hand_is_reported_by_key_never_a_panic() {
    let s = Server::start();
    // Format 1 keys are read in a format 1 store; format 2's in a format 2 one.
    let cases: Vec<(&str, &str, Vec<Vec<&str>>)> = vec![
        (
            "1",
            "{cron:g}:state",
            vec![
                vec![
                    "HSET",
                    "{cron:g}:state",
                    "5:status",
                    "running",
                    "5:attempt",
                    "x",
                    "5:token",
                    "t",
                    "5:lease_end",
                    "zz",
                ],
                vec!["SADD", "{cron:g}:active", "5"],
            ],
        ),
        (
            "1",
            "{cron:g}:active",
            vec![
                vec!["HSET", "{cron:g}:state", "oops", "1"],
                vec!["SADD", "{cron:g}:active", "oops"],
            ],
        ),
        (
            "1",
            "{cron:g}:slots",
            vec![
                vec![
                    "HSET",
                    "{cron:g}:state",
                    "1:status",
                    "finished",
                    "1:attempt",
                    "1",
                    "1:token",
                    "t",
                    "1:lease_end",
                    "1",
                    "1:claimed_at",
                    "1",
                    "1:started_at",
                    "1",
                ],
                vec!["ZADD", "{cron:g}:slots", "1", "not-a-slot"],
            ],
        ),
        (
            "2",
            "{cron:g}:live",
            vec![vec!["HSET", "{cron:g}:live", "5", "{\"attempt\":\"x\"}"]],
        ),
        (
            "2",
            "{cron:g}:results",
            vec![
                vec!["ZADD", "{cron:g}:results", "1", "not json"],
                vec!["XADD", "{cron:g}:runs", "*", "slot", "1", "token", "t"],
            ],
        ),
        (
            "1",
            "{cron:g}:runs",
            vec![vec!["XADD", "{cron:g}:runs", "*", "slot", "soon"]],
        ),
        (
            "1",
            "{cron:g}:active",
            vec![vec!["SET", "{cron:g}:active", "x"]],
        ),
        (
            "2",
            "cron:g:runs",
            vec![vec!["XADD", "cron:g:runs", "*", "token", "t"]],
        ),
    ];
    for (format, key, writes) in cases {
        let _: () = s.cmd(&["FLUSHALL"]);
        let _: () = s.cmd(&["SET", "cron:format", format]);
        for w in &writes {
            let _: redis::Value = s.cmd(w);
        }
        let mut named = false;
        for args in [
            vec!["inspect", "g"],
            vec!["history", "g"],
            vec!["list"],
            vec!["claim", "g", "--slot", "5"],
        ] {
            let out: Output = s.anarchon().args(&args).output().unwrap();
            let code = out.status.code();
            assert_ne!(
                code,
                Some(101),
                "{args:?} panicked on {key}: {}",
                stderr(&out)
            );
            if code != Some(0) && code != Some(82) && code != Some(81) {
                assert!(
                    stderr(&out).starts_with("error: "),
                    "{args:?}: {}",
                    stderr(&out)
                );
                named |= stderr(&out).contains(key);
            }
        }
        assert!(named, "no command named {key}");
    }
}

/// A full server (maxmemory, noeviction: writes refused with OOM) is an outage for `run` like any
/// other: two hosts whose cron started them while it was full wait within `--max-late`, and the
/// slot runs once when it has room again (the command's own log: its pid, start and end), with
/// one attempt in the store and nothing half-written by the scripts it refused.
#[test]
fn a_run_due_while_the_server_is_full_runs_once_when_it_has_room_again() {
    let _alone = alone();
    let s = Server::start();
    s.fill_to_maxmemory();
    crate::common::wait_clear_of_the_minute_end(&s, Duration::from_secs(30));
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let command = format!(
        "echo \"$$ $(date +%s%3N) start\" >> {0}; sleep 0.3; echo \"$$ $(date +%s%3N) end\" >> {0}",
        log.display()
    );
    let mut hosts: Vec<Child> = (0..2)
        .map(|_| {
            spawn_run(
                &s,
                &[
                    "--job",
                    "fullrun",
                    "--schedule",
                    "* * * * *",
                    "--max-late",
                    "90s",
                    "--",
                    "sh",
                    "-c",
                    &command,
                ],
            )
        })
        .collect();
    crate::common::wait_for_server_time(&s, s.now_ms() + 3_000);
    for host in &mut hosts {
        if host.try_wait().unwrap().is_some() {
            let mut said = String::new();
            std::io::Read::read_to_string(host.stderr.as_mut().unwrap(), &mut said).unwrap();
            panic!("a host gave up on a full server:\n{said}");
        }
    }
    assert!(!log.exists(), "ran while every write was refused");
    s.free_memory();
    let outs: Vec<Output> = hosts
        .into_iter()
        .map(|h| h.wait_with_output().unwrap())
        .collect();
    let said: String = outs.iter().map(stderr).collect();
    let lines = std::fs::read_to_string(&log).unwrap_or_default();
    let starts: Vec<&str> = lines.lines().filter(|l| l.ends_with(" start")).collect();
    assert_eq!(starts.len(), 1, "{lines}\n{said}");
    assert_eq!(
        outs.iter().filter(|o| o.status.code() == Some(0)).count(),
        1,
        "{said}"
    );
    let runs = s.runs("fullrun");
    assert_eq!(runs.len(), 1, "{runs:?}");
    let run = runs.values().next().unwrap();
    assert_eq!(
        (run.status.as_str(), run.attempt),
        ("finished", 1),
        "{run:?}"
    );
}

/// A server that stays full past `--max-late`: the slot is not run, and the error says it was
/// missed and what a full server means (nothing can be recorded on it).
#[test]
fn a_run_refused_past_max_late_says_it_was_missed() {
    // A store in use (its format key written by an earlier command): the claim is refused.
    refused_past_max_late(true);
}

/// The same when the store is new (format 1: its format key cannot be written): the opening is
/// refused, for its 10 s.
#[test]
fn a_run_that_cannot_open_a_full_new_store_says_it_was_missed() {
    if Server::test_store_format() == 1 {
        refused_past_max_late(false);
    }
}

fn refused_past_max_late(in_use: bool) {
    let s = Server::start();
    if in_use {
        let format = Server::test_store_format().to_string();
        let _: () = s.cmd(&["SET", "cron:format", &format, "NX"]);
    }
    s.fill_to_maxmemory();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let out = s
        .anarchon()
        .args([
            "run",
            "--job",
            "stillfull",
            "--schedule",
            "* * * * * *",
            "--max-late",
            "3s",
            "--",
            "sh",
            "-c",
            &format!("echo ran >> {}", log.display()),
        ])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("missed") && said.contains("maxmemory"),
        "{said}"
    );
    assert!(!log.exists(), "ran on a full server");
    assert!(s.runs("stillfull").is_empty());
}

/// A run whose command ends while the server is full: its end (a script that writes) is refused
/// with OOM, and is sent again while the lease lives, so the run is recorded finished once the
/// server has room, instead of staying held until its lease expires (which under --overlap forbid
/// skipped every next slot meanwhile).
#[test]
fn a_run_that_ends_while_the_server_is_full_is_recorded_when_it_has_room() {
    let s = Server::start();
    crate::common::wait_clear_of_the_minute_end(&s, Duration::from_secs(30));
    let dir = tempfile::tempdir().unwrap();
    let (started, go) = (dir.path().join("started"), dir.path().join("go"));
    let command = format!(
        "touch {}; while [ ! -e {} ]; do sleep 0.05; done",
        started.display(),
        go.display()
    );
    let mut host = spawn_run(
        &s,
        &[
            "--job",
            "fullend",
            "--schedule",
            "* * * * *",
            "--",
            "sh",
            "-c",
            &command,
        ],
    );
    wait_for("the command to start", Duration::from_secs(10), || {
        started.exists()
    });
    s.fill_to_maxmemory();
    std::fs::write(&go, "").unwrap();
    crate::common::wait_for_server_time(&s, s.now_ms() + 2_000);
    if host.try_wait().unwrap().is_some() {
        let out = host.wait_with_output().unwrap();
        panic!("gave up recording the end:\n{}", stderr(&out));
    }
    s.free_memory();
    let out = host.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let runs = s.runs("fullend");
    let run = runs.values().next().expect("a run");
    assert_eq!(
        (run.status.as_str(), run.attempt),
        ("finished", 1),
        "{run:?}"
    );
}
