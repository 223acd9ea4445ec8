//! `--limit NAME=N`: at most N runs of all the jobs that name a limit run at once, across hosts and
//! replicas; judged by the commands' own logs (`common::ticker`: every copy's span), in both store
//! formats.

use std::path::Path;
use std::process::{Child, Output};
use std::time::Duration;

use crate::common::replica::Replica;
use crate::common::ticker::{Copy, copies, ticker_as};
use crate::common::{Server, spawn_run, wait_for};

fn finished(child: Child) -> Output {
    child.wait_with_output().unwrap()
}

/// The most copies that ran at one instant, and when.
fn most_at_once(all: &[Copy]) -> (usize, i64) {
    let mut edges: Vec<(i64, i32)> = all
        .iter()
        .flat_map(|c| [(c.first, 1), (c.last, -1)])
        .collect();
    // At one instant a start counts before an end: spans that touch ran together.
    edges.sort_by_key(|&(t, d)| (t, -d));
    let (mut now, mut most, mut at) = (0i32, 0usize, 0i64);
    for (t, d) in edges {
        now += d;
        if now as usize > most {
            most = now as usize;
            at = t;
        }
    }
    (most, at)
}

fn run_args<'a>(job: &'a str, runner: &'a str, slot: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["--job", job, "--slot", slot, "--runner", runner];
    args.extend(extra);
    args
}

fn ticker(log: &Path, ms: u64) -> String {
    ticker_as(
        log,
        "$ANARCHON_JOB@$ANARCHON_SLOT/$ANARCHON_ATTEMPT",
        ms,
        false,
    )
}

#[test]
fn at_most_n_runs_of_a_limit_run_at_once_across_jobs_and_hosts() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let cmd = ticker(&log, 1_000);
    let slot = (s.now_ms() / 1000 * 1000).to_string();
    let extra = [
        "--limit",
        "heavy=2",
        "--max-late",
        "30s",
        "--shell",
        "--",
        &cmd,
    ];
    let mut hosts = Vec::new();
    for job in ["j1", "j2", "j3", "j4", "j5"] {
        for host in ["host-a", "host-b"] {
            hosts.push(spawn_run(&s, &run_args(job, host, &slot, &extra)));
        }
    }
    let outs: Vec<Output> = hosts.into_iter().map(finished).collect();
    let said: String = outs
        .iter()
        .map(|o| String::from_utf8_lossy(&o.stderr).to_string())
        .collect();
    let all = copies(&log);
    assert_eq!(all.len(), 5, "each job's slot ran once: {all:?}\n{said}");
    for job in ["j1", "j2", "j3", "j4", "j5"] {
        assert_eq!(
            all.iter().filter(|c| c.job() == Some(job)).count(),
            1,
            "{job}: {all:?}"
        );
    }
    let (most, at) = most_at_once(&all);
    assert!(most <= 2, "{most} runs at once at {at}: {all:?}\n{said}");
    assert_eq!(most, 2, "the limit's room was used: {all:?}");
    // Every permit is given back.
    let left: Vec<String> = s.cmd(&["ZRANGE", "{cron:}:limit:heavy", "0", "-1"]);
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn two_jobs_racing_for_the_last_permit_run_one_and_record_the_other() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let cmd = ticker(&log, 3_000);
    let slot = (s.now_ms() / 1000 * 1000).to_string();
    let extra = [
        "--limit",
        "heavy=1",
        "--max-late",
        "2s",
        "--shell",
        "--",
        &cmd,
    ];
    let racers: Vec<Child> = [
        ("x", "host-a"),
        ("y", "host-b"),
        ("x", "host-b"),
        ("y", "host-a"),
    ]
    .into_iter()
    .map(|(job, host)| spawn_run(&s, &run_args(job, host, &slot, &extra)))
    .collect();
    let codes: Vec<Option<i32>> = racers
        .into_iter()
        .map(|c| finished(c).status.code())
        .collect();
    let all = copies(&log);
    assert_eq!(all.len(), 1, "{all:?} {codes:?}");
    let winner = all[0].job().unwrap().to_string();
    let loser = if winner == "x" { "y" } else { "x" };
    let records = s.results(loser);
    assert_eq!(records.len(), 1, "{records:?}");
    let r = &records[0];
    assert_eq!(r.status, "interrupted", "{r:?}");
    assert_eq!(r.result["limit"], "heavy");
    let held_by = r.result["held_by"][0].as_str().unwrap_or_default();
    assert!(held_by.starts_with(&format!("{winner}@")), "{r:?}");
    assert!(codes.contains(&Some(94)), "{codes:?}");
}

#[test]
fn a_killed_holder_s_permit_comes_back_at_its_lease_end() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let slot = (s.now_ms() / 1000 * 1000).to_string();
    let long = ticker(&log, 60_000);
    let holder = spawn_run(
        &s,
        &run_args(
            "holder",
            "host-a",
            &slot,
            &[
                "--limit", "heavy=1", "--lease", "2s", "--shell", "--", &long,
            ],
        ),
    );
    wait_for("the holder's command", Duration::from_secs(10), || {
        !copies(&log).is_empty()
    });
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(holder.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let killed_at = s.now_ms();
    let _ = finished(holder);
    let short = ticker(&log, 200);
    let next = finished(spawn_run(
        &s,
        &run_args(
            "next",
            "host-b",
            &slot,
            &[
                "--limit",
                "heavy=1",
                "--max-late",
                "30s",
                "--shell",
                "--",
                &short,
            ],
        ),
    ));
    assert_eq!(
        next.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&next.stderr)
    );
    let all = copies(&log);
    let ran = all
        .iter()
        .find(|c| c.job() == Some("next"))
        .expect("next ran");
    let held = all.iter().find(|c| c.job() == Some("holder")).unwrap();
    assert!(ran.first > held.last, "{all:?}");
    // Not before the killed holder's lease could have ended, and well before its command would.
    assert!(
        ran.first >= killed_at - 100 && ran.first <= killed_at + 10_000,
        "{ran:?}, killed at {killed_at}"
    );
}

/// Replicas of `anarchon cron` with three jobs under one limit of 1: never two of their commands
/// at once; a slot that found no room in time is recorded interrupted with why, never lost.
#[test]
fn cron_replicas_share_a_limit_and_record_what_found_no_room() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let file = dir.path().join("crontab");
    let mut crontab = String::new();
    for job in ["c1", "c2", "c3"] {
        crontab.push_str(&format!(
            "# anarchon: --job {job} --limit heavy=1 --max-late 1s\n*/2 * * * * * {}\n",
            ticker(&log, 600)
        ));
    }
    std::fs::write(&file, crontab).unwrap();
    let a = Replica::start(&s.url, &file, dir.path(), "a", &[]);
    let b = Replica::start(&s.url, &file, dir.path(), "b", &[]);
    let started = s.now_ms();
    wait_for("12 s of slots", Duration::from_secs(30), || {
        s.now_ms() > started + 12_000
    });
    drop(a);
    drop(b);
    let all = copies(&log);
    let (most, at) = most_at_once(&all);
    assert!(most <= 1, "{most} at once at {at}: {all:?}");
    assert!(all.len() >= 4, "{all:?}");
    for job in ["c1", "c2", "c3"] {
        for r in s.results(job) {
            let ran = all
                .iter()
                .any(|c| c.job() == Some(job) && c.slot() == Some(r.slot));
            match r.status.as_str() {
                "finished" => assert!(ran, "{r:?}"),
                "interrupted" if r.result["limit"] == "heavy" => assert!(!ran, "{r:?}"),
                // A replica stopped by the test mid-run.
                "interrupted" => {}
                other => panic!("{job}: {other} {r:?}"),
            }
        }
    }
}

/// `list --json` and the metrics show a limit's permits, who waits, and who gave up.
#[test]
fn list_and_metrics_show_who_holds_and_who_waits() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let slot = (s.now_ms() / 1000 * 1000).to_string();
    // The holder outlasts the waiter's whole wait.
    let long = ticker(&log, 10_000);
    let cmd = ticker(&log, 100);
    let limit = ["--limit", "heavy=1", "--max-late", "3s", "--shell", "--"];
    let holder = spawn_run(&s, &{
        let mut a = run_args("holder", "host-a", &slot, &limit);
        a.push(&long);
        a
    });
    wait_for("the holder's command", Duration::from_secs(10), || {
        !copies(&log).is_empty()
    });
    // Its own slot, taken now: it waits for a permit up to 3 s after it, however slow the
    // holder's start was (with the holder's slot it could be past --max-late at once: Redis 5.0's
    // CI pass found the waiter never seen waiting).
    let waiter_slot = (s.now_ms() / 1000 * 1000).to_string();
    let waiter = spawn_run(&s, &{
        let mut a = run_args("waiter", "host-b", &waiter_slot, &limit);
        a.push(&cmd);
        a
    });
    let mut seen = serde_json::Value::Null;
    wait_for(
        "list to show a holder and a waiter",
        Duration::from_secs(10),
        || {
            seen = s.cli(&["list", "--json"]).json();
            seen["limits"][0]["waiting"].as_array().map(Vec::len) == Some(1)
        },
    );
    let l = &seen["limits"][0];
    assert_eq!(l["name"], "heavy", "{seen}");
    assert_eq!(l["held"][0]["run"], format!("holder@{slot}"), "{seen}");
    assert_eq!(l["held"][0]["runner"], "host-a", "{seen}");
    assert_eq!(
        l["waiting"][0]["run"],
        format!("waiter@{waiter_slot}"),
        "{seen}"
    );
    let inspected = s.cli(&["inspect", "holder", "--json"]).expect(0).json();
    assert_eq!(inspected["limits"][0]["name"], "heavy", "{inspected}");
    assert_eq!(
        inspected["limits"][0]["held"][0]["run"],
        format!("holder@{slot}"),
        "{inspected}"
    );
    let waiter = finished(waiter);
    assert_eq!(waiter.status.code(), Some(94));
    let metrics = String::from_utf8_lossy(&s.cli(&["metrics"]).expect(0).stdout).to_string();
    for line in [
        "anarchon_limit_held{limit=\"heavy\"} 1",
        "anarchon_limit_waiting{limit=\"heavy\"} 0",
        "anarchon_limit_gave_up{limit=\"heavy\"} 1",
    ] {
        assert!(metrics.contains(line), "{line} not in:\n{metrics}");
    }
    let _ = finished(holder);
    let text = String::from_utf8_lossy(&s.cli(&["list"]).expect(0).stdout).to_string();
    assert!(
        text.contains("limit heavy: 0 held, 0 waiting, 1 gave up waiting"),
        "{text}"
    );
}
