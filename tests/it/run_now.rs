//! `anarchon run-now JOB` without a command: a crontab line run now on one replica of `anarchon
//! cron`, as `kubectl create job --from=cronjob/x` runs a CronJob's command in the cluster. The
//! ground truth is the command's own log (`common::ticker`: each copy logs its own pid and start
//! time), checked against what run-now printed and what the store recorded: one copy, on one
//! replica, soon after the request, recorded `manual` with who and why; refused when no live
//! replica runs the job; a holder killed with -9 taken over by a backup, never two copies at once.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::replica::Replica;
use crate::common::ticker::{Copy, assert_no_two_copies_at_once, copies, ticker_as};
use crate::common::{Server, stderr, wait_for};

/// A crontab whose jobs never come due during a test (January 1st), so that every run is a
/// request's: `sync`, a ticker of `ms` logging `<slot>/<attempt>` to `log`, with `flags`; and
/// `fails`, which exits 3.
fn crontab(dir: &Path, log: &Path, ms: u64, flags: &str) -> std::path::PathBuf {
    let file = dir.join("crontab");
    std::fs::write(
        &file,
        format!(
            "# anarchon: --job sync {flags}\n0 0 1 1 * {}\n# anarchon: --job fails\n0 0 1 1 * echo failing; exit 3\n",
            ticker_as(log, "$ANARCHON_SLOT/$ANARCHON_ATTEMPT", ms, false)
        ),
    )
    .unwrap();
    file
}

fn replicas(s: &Server, file: &Path, dir: &Path, n: usize) -> Vec<Replica> {
    (0..n)
        .map(|i| {
            Replica::start(
                &s.url,
                file,
                dir,
                &format!("r{i}"),
                // -v: the test waits for "standing by", a routine note (debug) of the log.
                &["--shutdown-grace", "1s", "-v"],
            )
        })
        .collect()
}

/// The copies the command ran for `slot`.
fn copies_of(log: &Path, slot: i64) -> Vec<Copy> {
    copies(log)
        .into_iter()
        .filter(|c| c.slot() == Some(slot))
        .collect()
}

/// The job's events as the stream holds them: each entry's fields.
fn events(s: &Server, job: &str) -> Vec<std::collections::HashMap<String, String>> {
    let key = format!("{{cron:{job}}}:events");
    let reply: redis::streams::StreamRangeReply = s.cmd(&["XRANGE", &key, "-", "+"]);
    reply
        .ids
        .into_iter()
        .map(|e| {
            e.map
                .into_iter()
                .map(|(k, v)| (k, redis::from_redis_value::<String>(v).unwrap()))
                .collect()
        })
        .collect()
}

/// Three replicas share a crontab; `run-now sync` runs the line's command once, on one replica,
/// within a couple of seconds, and says which; the run is recorded `manual`, and the job's events
/// say who asked and why. `--wait` exits with the command's own status.
#[test]
fn three_replicas_run_a_request_once_on_one_replica() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("sync.log");
    let file = crontab(dir.path(), &log, 1_000, "");
    let replicas = replicas(&s, &file, dir.path(), 3);
    let asked_at = s.now_ms();
    let began = Instant::now();
    let out = s.cli(&[
        "run-now",
        "sync",
        "--by",
        "alice",
        "--reason",
        "INC-7 rerun",
        "--json",
    ]);
    let answered = began.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", out.dump());
    let doc = out.json();
    assert_eq!(doc["status"], "started", "{doc}");
    let slot = doc["slot"].as_i64().unwrap();
    assert!(slot >= asked_at && slot - asked_at < 2_000, "{doc}");
    assert_eq!(doc["replicas"].as_array().unwrap().len(), 3, "{doc}");
    let runner = doc["runner"].as_str().unwrap().to_string();
    let picked = doc["picked_up_after_ms"].as_i64().unwrap();
    eprintln!("run-now answered after {answered:?}; claimed {picked} ms after the request");
    assert!(picked < 2_000, "claimed {picked} ms after the request");

    // The command's own log: one copy, started within a couple of seconds of the request.
    wait_for("the run to end", Duration::from_secs(20), || {
        copies_of(&log, slot).iter().any(|c| c.completed)
    });
    let all = copies(&log);
    assert_eq!(all.len(), 1, "one copy in all: {all:?}");
    assert_eq!(all[0].label, format!("{slot}/1"));
    let started_after = all[0].first - slot;
    eprintln!("the command started {started_after} ms after the request's slot");
    assert!(started_after < 2_000, "started {started_after} ms after");

    // On the replica run-now named, and no other: the others stood by and found it done.
    let ran: Vec<&Replica> = replicas
        .iter()
        .filter(|r| r.stderr().contains("won; running the command"))
        .collect();
    assert_eq!(ran.len(), 1, "one replica ran it");
    assert_eq!(ran[0].runner(), runner);
    wait_for(
        "every replica to have answered the request",
        Duration::from_secs(10),
        || {
            replicas.iter().all(|r| {
                r.stderr()
                    .contains("run-now requested by alice (INC-7 rerun)")
            })
        },
    );

    // Recorded as a manual run, ended finished, with who asked and why in the job's events.
    // Read once its end is recorded: the store helper reads `:results`, then (format 2) `:live`,
    // and a finish that lands between the two reads finds the run in neither.
    wait_for(
        "the run's end to be recorded",
        Duration::from_secs(10),
        || {
            s.results("sync")
                .iter()
                .any(|r| r.slot == slot && r.status == "finished")
        },
    );
    let run = s
        .run("sync", &slot.to_string())
        .expect("the run is recorded");
    assert_eq!(run.kind, "manual");
    let asked: Vec<_> = events(&s, "sync")
        .into_iter()
        .filter(|e| e["action"] == "run-now")
        .collect();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["by"], "alice");
    assert_eq!(asked[0]["reason"], "INC-7 rerun");
    assert_eq!(asked[0]["slot"], slot.to_string());
    let history = s.cli(&["history", "sync", "--events"]);
    assert!(
        String::from_utf8_lossy(&history.stdout).contains("alice"),
        "{}",
        history.dump()
    );
    // `wait` on the slot it printed reports the end.
    s.cli(&["wait", "sync", "--slot", &slot.to_string()])
        .expect(0);

    // --wait: until the end, exiting with the command's status.
    let out = s.cli(&["run-now", "fails", "--wait"]);
    assert_eq!(out.status.code(), Some(3), "{}", out.dump());
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(said.contains("failed as attempt 1"), "{said}");
}

/// Refused with exit 89, nothing asked and nothing run, when no live replica runs the job: a job
/// no replica's crontab has, every replica stopped (SIGTERM: at once), the last one killed with
/// -9 (its presence goes stale, or the request is recorded skipped when nobody claims it). A
/// request while another run of the job is in progress is refused with the replicas' words (80).
#[test]
fn refused_when_no_replica_runs_the_job() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("sync.log");
    let file = crontab(dir.path(), &log, 1_500, "");
    let mut replicas = replicas(&s, &file, dir.path(), 2);

    let out = s.cli(&["run-now", "other"]);
    assert_eq!(out.status.code(), Some(89), "{}", out.dump());
    let said = stderr(&out);
    assert!(said.contains("has other in its crontab"), "{said}");
    assert!(said.contains("hint:"), "{said}");
    // A typo of a replica's job: the hint names it.
    let out = s.cli(&["run-now", "synk"]);
    assert_eq!(out.status.code(), Some(89), "{}", out.dump());
    assert!(
        stderr(&out).contains("did you mean sync?"),
        "{}",
        out.dump()
    );
    let requests: i64 = s.cmd(&["XLEN", "{cron:}:requests"]);
    assert_eq!(requests, 0, "nothing was asked");

    // Another run of the job in progress (--overlap forbid): the replicas' claim says so, at
    // once, with their words.
    let first = s.cli(&["run-now", "sync", "--json"]).expect(0).json();
    let began = Instant::now();
    let out = s.cli(&["run-now", "sync"]);
    assert_eq!(out.status.code(), Some(80), "{}", out.dump());
    assert!(stderr(&out).contains("not run on"), "{}", out.dump());
    assert!(
        began.elapsed() < Duration::from_secs(4),
        "{:?}",
        began.elapsed()
    );
    let slot = first["slot"].as_i64().unwrap().to_string();
    s.cli(&["wait", "sync", "--slot", &slot]).expect(0);
    let ran = copies(&log).len();
    assert_eq!(ran, 1, "{:?}", copies(&log));

    // Every replica stopped: refused at once, naming the last one seen.
    for r in &mut replicas {
        assert_eq!(r.stop(Duration::from_secs(20)), Some(0));
    }
    let began = Instant::now();
    let out = s.cli(&["run-now", "sync"]);
    assert_eq!(out.status.code(), Some(89), "{}", out.dump());
    assert!(stderr(&out).contains("is live"), "{}", out.dump());
    assert!(began.elapsed() < Duration::from_secs(2));

    // Killed with -9: refused once its presence is stale; before that the request finds nobody
    // to claim it, and is recorded skipped so that it never runs late.
    let mut last = Replica::start(&s.url, &file, dir.path(), "r9", &[]);
    last.kill();
    let out = s.cli(&["run-now", "sync", "--json"]);
    assert_eq!(out.status.code(), Some(89), "{}", out.dump());
    let doc = out.json();
    match doc["status"].as_str().unwrap() {
        "not_picked_up" => {
            let slot = doc["slot"].as_i64().unwrap();
            let skipped = s.results("sync");
            assert!(
                skipped
                    .iter()
                    .any(|r| r.slot == slot && r.status == "skipped"),
                "{skipped:?}"
            );
        }
        status => assert_eq!(status, "no_replica", "{doc}"),
    }
    wait_for(
        "the killed replica's presence to go stale",
        Duration::from_secs(15),
        || s.cli(&["run-now", "sync", "--json"]).json()["status"] == "no_replica",
    );
    assert_eq!(
        copies(&log).len(),
        ran,
        "nothing more ran: {:?}",
        copies(&log)
    );
}

/// The replica that runs a request is killed with -9 mid-run: its guard stops the command, and a
/// replica standing by takes the run over when the lease ends, as attempt 2. Never two copies at
/// once, and the run ends finished.
#[test]
fn a_request_whose_holder_is_killed_is_taken_over_never_run_twice() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("sync.log");
    let file = crontab(dir.path(), &log, 3_000, "--lease 3s");
    let mut replicas = replicas(&s, &file, dir.path(), 3);
    let out = s.cli(&["run-now", "sync", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", out.dump());
    let doc = out.json();
    let slot = doc["slot"].as_i64().unwrap();
    let runner = doc["runner"].as_str().unwrap().to_string();
    let holder = replicas
        .iter()
        .position(|r| r.runner() == runner)
        .expect("the holder is one of the replicas");
    wait_for("the command to start", Duration::from_secs(10), || {
        !copies_of(&log, slot).is_empty()
    });
    wait_for("the others to stand by", Duration::from_secs(10), || {
        replicas
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != holder)
            .all(|(_, r)| r.stderr().contains("standing by"))
    });
    replicas[holder].kill();
    wait_for("attempt 2 to complete", Duration::from_secs(30), || {
        copies_of(&log, slot)
            .iter()
            .any(|c| c.attempt() == Some(2) && c.completed)
    });
    let all = copies(&log);
    assert_no_two_copies_at_once(&all);
    let attempts: Vec<Option<u32>> = all.iter().map(Copy::attempt).collect();
    assert_eq!(attempts, vec![Some(1), Some(2)], "{all:?}");
    assert!(!all[0].completed, "attempt 1 was stopped with its replica");
    let took_over: Vec<&Replica> = replicas
        .iter()
        .enumerate()
        .filter(|(i, r)| *i != holder && r.stderr().contains("taking the run over"))
        .map(|(_, r)| r)
        .collect();
    assert_eq!(took_over.len(), 1, "one backup took it over");
    let out = s.cli(&["wait", "sync", "--slot", &slot.to_string(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", out.dump());
    let ended = out.json();
    assert_eq!(ended["run"]["status"], "finished", "{ended}");
    assert_eq!(ended["run"]["attempt"], 2, "{ended}");
    assert_eq!(ended["run"]["runner"], took_over[0].runner());
}

/// What `run-now` offers to follow the run is a command that works (issue 62 item 5): `logs -f`
/// only for a job that sends its output to the store (`--live-output`; for another it fails with
/// "job not found"'s exit code), `wait` and `logs` always.
#[test]
fn run_now_offers_to_follow_only_a_run_it_can_follow() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    for (flags, live) in [("", false), ("--live-output", true)] {
        let log = dir.path().join(format!("sync{live}.log"));
        let file = crontab(dir.path(), &log, 3_000, flags);
        let replica = Replica::start(&s.url, &file, dir.path(), "r", &[]);
        let out = s.cli(&["run-now", "sync"]);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert_eq!(out.status.code(), Some(0), "{}", out.dump());
        assert_eq!(
            text.contains("follow  anarchon logs -f sync"),
            live,
            "{text}"
        );
        assert!(text.contains("wait    anarchon wait sync"), "{text}");
        assert!(text.contains("logs    anarchon logs sync --slot"), "{text}");
        let slot = text
            .split("(slot ")
            .nth(1)
            .and_then(|t| t.split(')').next())
            .unwrap();
        s.cli(&["wait", "sync", "--slot", slot]).expect(0);
        drop(replica);
    }
}
