//! Exactly once under faults: a killed wrapper, slow, stalled and partitioned networks, lost
//! replies, and trimming against catch-up. Real processes and a real server; network faults go
//! through the loopback fault proxy (tests/it/common/proxy.rs).
//!
//! The wrapped command writes its own log: one line `<attempt> <ms>` every 50 ms while it runs.
//! "Never two copies at once" is checked on that log: the time spans of different attempts never
//! overlap, whatever the exit codes say.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::time::Duration;

use crate::common::proxy::{Fault, FaultProxy};
use crate::common::ticker::{assert_no_two_spans_overlap, copies, spans_of, ticker_as};
use crate::common::{Server, json, stderr, wait_for, wait_for_claim};

const SLOT: &str = "1796220300000";

/// A shell command line that logs `<attempt> <ms>` every 50 ms for `ms` milliseconds, then exits 0.
/// With `ignore_term` it survives SIGTERM, so only a SIGKILL stops it.
fn ticker(log: &Path, ms: u64, ignore_term: bool) -> String {
    ticker_as(log, "$ANARCHON_ATTEMPT", ms, ignore_term)
}

/// Each attempt's first and last logged time.
fn spans(log: &Path) -> BTreeMap<u32, (i64, i64)> {
    spans_of(log)
}

/// Fails when two attempts' spans overlap: two copies of the command ran at once.
fn assert_never_two_at_once(log: &Path) -> BTreeMap<u32, (i64, i64)> {
    assert_no_two_spans_overlap(log)
}

/// The attempts that ended, as (attempt, runner, status), in order.
fn attempts(s: &Server, job: &str) -> Vec<(String, String, String)> {
    s.ended_attempts(job)
}

fn status(s: &Server, job: &str, slot: &str) -> Option<String> {
    s.run(job, slot).map(|r| r.status)
}

fn kill9(pid: u32) {
    crate::common::signal("-KILL", pid).unwrap();
}

fn logged(log: &Path, attempt: u32) -> bool {
    spans(log).contains_key(&attempt)
}

/// `anarchon run` of `job` @ SLOT with a ticker command, pointed at `url`.
fn runner(s: &Server, url: &str, job: &str, name: &str, extra: &[&str], command: &str) -> Child {
    use std::os::unix::process::CommandExt;
    s.anarchon_process()
        .env("ANARCHON_REDIS_URL", url)
        .args([
            "run", "--job", job, "--slot", SLOT, "--runner", name, "--json",
        ])
        .args(extra)
        .args(["--shell", "--", command])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap()
}

fn log_in(s: &Server, name: &str) -> PathBuf {
    s.dir.path().join(name)
}

fn finished(child: Child) -> Output {
    child.wait_with_output().unwrap()
}

/// The holder is killed with SIGKILL while its command runs (a command that ignores SIGTERM, and
/// --kill-after far beyond the lease): the guard kills the command by the lease deadline, and the
/// standing-by backup runs attempt 2 after it, never beside it.
#[test]
fn kill_9_of_the_winner_mid_run_stops_its_command_before_the_backup_runs() {
    let s = Server::start();
    let log = log_in(&s, "k9.log");
    let lease = ["--lease", "2s", "--kill-after", "60s"];
    let holder = runner(&s, &s.url, "k9", "a", &lease, &ticker(&log, 60_000, true));
    wait_for("attempt 1 to run", Duration::from_secs(10), || {
        logged(&log, 1)
    });
    let backup = runner(&s, &s.url, "k9", "b", &lease, &ticker(&log, 500, false));
    // Let the holder renew its lease a few times while the backup stands by.
    wait_for("a few heartbeats", Duration::from_secs(20), || {
        spans(&log)
            .get(&1)
            .is_some_and(|(first, last)| last - first > 2500)
    });
    // Attempt 1's shell, seen alive now (so the wait for its end below can see it).
    let marker = log.display().to_string();
    let shell: u32 = copies(&log)
        .iter()
        .find(|c| c.label == "1") // this file labels a copy by its attempt alone
        .map(|c| c.id.split('.').next().unwrap().parse().unwrap())
        .unwrap();
    assert!(crate::common::alive_running(shell, &marker), "{shell}");
    kill9(holder.id());
    let holder_out = finished(holder);
    assert_eq!(holder_out.status.code(), None, "killed by SIGKILL");

    let out = finished(backup);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["attempt"], 2);
    assert_eq!(v["backup"], true);
    let spans = assert_never_two_at_once(&log);
    assert_eq!(spans.keys().copied().collect::<Vec<_>>(), vec![1, 2]);
    assert_eq!(
        attempts(&s, "k9"),
        vec![
            ("1".into(), "a".into(), "interrupted".into()),
            ("2".into(), "b".into(), "finished".into())
        ]
    );
    // Attempt 1's command stays dead: its shell (the pid in its own log lines, its command line
    // naming this test's log) is gone, so nothing can follow in its span after the backup's run.
    // The guard kills it by the lease deadline, before the backup starts; the wait only covers a
    // SIGKILL's delivery. A shell still alive after it fails the test.
    let before = spans[&1].1;
    wait_for(
        "attempt 1's command to be gone",
        Duration::from_secs(10),
        || !crate::common::alive_running(shell, &marker),
    );
    assert_eq!(self::spans(&log)[&1].1, before);
}

/// SIGKILL as soon as the claim is visible, possibly before the command started: no copy of
/// attempt 1 runs beside attempt 2, and the history says attempt 1 was interrupted.
#[test]
fn kill_9_of_the_winner_right_after_its_claim() {
    let s = Server::start();
    let log = log_in(&s, "early.log");
    let lease = ["--lease", "1s"];
    let holder = runner(
        &s,
        &s.url,
        "early",
        "a",
        &lease,
        &ticker(&log, 60_000, false),
    );
    wait_for_claim(&s, "early", SLOT);
    kill9(holder.id());
    let _ = finished(holder);
    let backup = runner(&s, &s.url, "early", "b", &lease, &ticker(&log, 300, false));
    let out = finished(backup);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["attempt"], 2);
    let spans = assert_never_two_at_once(&log);
    assert!(spans.contains_key(&2));
    let a = attempts(&s, "early");
    assert_eq!(a[0], ("1".into(), "a".into(), "interrupted".into()));
    assert_eq!(a[1], ("2".into(), "b".into(), "finished".into()));
}

/// SIGKILL while the finish is in flight (its reply delayed by the proxy): the finish reached the
/// server, so the run is finished and the backup does not run it again.
#[test]
fn kill_9_of_the_winner_during_its_finish() {
    let s = Server::start();
    let proxy = FaultProxy::start(s.port);
    let log = log_in(&s, "fin.log");
    let lease = ["--lease", "3s"];
    // A server that has run finishes before knows the script: its EVALSHA is applied at once
    // (a first one would wait for the NOSCRIPT reply before sending the source).
    let warm = runner(&s, &s.url, "warm", "w", &lease, "true");
    assert_eq!(finished(warm).status.code(), Some(0));
    let holder = runner(
        &s,
        &proxy.url,
        "fin",
        "a",
        &lease,
        &ticker(&log, 300, false),
    );
    wait_for("attempt 1 to run", Duration::from_secs(10), || {
        logged(&log, 1)
    });
    proxy.set(Fault::DelayReplies(Duration::from_secs(30)));
    wait_for(
        "the finish to reach the server",
        Duration::from_secs(10),
        || status(&s, "fin", SLOT).as_deref() == Some("finished"),
    );
    kill9(holder.id());
    let _ = finished(holder);
    let backup = runner(&s, &s.url, "fin", "b", &lease, &ticker(&log, 300, false));
    let out = finished(backup);
    assert_eq!(out.status.code(), Some(81), "{}", stderr(&out));
    assert_never_two_at_once(&log);
    assert_eq!(spans(&log).keys().copied().collect::<Vec<_>>(), vec![1]);
    assert_eq!(
        attempts(&s, "fin"),
        vec![("1".into(), "a".into(), "finished".into())]
    );
}

/// The holder talks to Redis through the proxy; after its command started, `fault` hits that
/// path, while the backup talks to Redis directly. The holder must stop its command before the
/// backup can win attempt 2, and the run must end recorded.
fn holder_cut_off(job: &str, fault: Fault) {
    let s = Server::start();
    let proxy = FaultProxy::start(s.port);
    let log = log_in(&s, &format!("{job}.log"));
    let flags = [
        "--lease",
        "3s",
        "--kill-after",
        "60s",
        "--command-timeout",
        "1s",
        "--connect-timeout",
        "1s",
    ];
    let holder = runner(
        &s,
        &proxy.url,
        job,
        "a",
        &flags,
        &ticker(&log, 60_000, true),
    );
    wait_for("attempt 1 to run", Duration::from_secs(10), || {
        logged(&log, 1)
    });
    let backup = runner(&s, &s.url, job, "b", &flags, &ticker(&log, 500, false));
    proxy.set(fault);
    let out = finished(backup);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["attempt"], 2);
    proxy.set(Fault::Pass);
    let holder_out = finished(holder);
    let err = stderr(&holder_out);
    assert!(err.contains("lease lost"), "{err}");
    // Stopped by SIGKILL (it ignores SIGTERM): 128 + 9.
    assert_eq!(holder_out.status.code(), Some(137), "{err}");
    let spans = assert_never_two_at_once(&log);
    assert_eq!(spans.keys().copied().collect::<Vec<_>>(), vec![1, 2]);
    assert_eq!(
        attempts(&s, job),
        vec![
            ("1".into(), "a".into(), "interrupted".into()),
            ("2".into(), "b".into(), "finished".into())
        ]
    );
    assert_eq!(status(&s, job, SLOT).as_deref(), Some("finished"));
}

#[test]
fn replies_delayed_beyond_the_lease_stop_the_command_before_a_takeover() {
    holder_cut_off("slow", Fault::DelayReplies(Duration::from_secs(10)));
}

#[test]
fn a_stalled_network_stops_the_command_before_a_takeover() {
    holder_cut_off("stall", Fault::Stall);
}

#[test]
fn a_partition_stops_the_command_before_a_takeover() {
    holder_cut_off("cut", Fault::Partition);
}

#[test]
fn heartbeat_replies_lost_stop_the_command_before_a_takeover() {
    holder_cut_off("drop", Fault::DropReplies);
}

/// The claim is applied on the server but its reply is lost: the retry with the same token is
/// answered won, and the command runs once, as attempt 1, instead of the run waiting for a backup.
#[test]
fn a_claim_whose_reply_was_lost_is_retried_and_runs_once() {
    let s = Server::start();
    let proxy = FaultProxy::start(s.port);
    // The claim's reply is the only one that says "won".
    proxy.drop_next_reply_containing(b"\r\nwon\r\n");
    let log = log_in(&s, "lost.log");
    let holder = runner(
        &s,
        &proxy.url,
        "lost",
        "a",
        &["--lease", "1m", "--command-timeout", "1s"],
        &ticker(&log, 200, false),
    );
    let out = finished(holder);
    assert!(proxy.dropped(), "the claim's reply was lost");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["attempt"], 1);
    // The repeat is answered the fence the lost reply carried, not a new one (both formats).
    assert_eq!(json(&out)["fence"], 1, "{}", stderr(&out));
    let fence: String = s.cmd(&["HGET", "{cron:lost}:job", "fence"]);
    assert_eq!(fence, "1");
    assert_never_two_at_once(&log);
    assert_eq!(spans(&log).keys().copied().collect::<Vec<_>>(), vec![1]);
    assert_eq!(
        attempts(&s, "lost"),
        vec![("1".into(), "a".into(), "finished".into())]
    );
}

/// A backup stands by for as long as the holder lives, not for one lease: the holder is killed
/// after more than ten lease lengths, and the backup still takes over.
#[test]
fn a_holder_killed_long_after_its_backups_started_is_replaced() {
    let s = Server::start();
    let log = log_in(&s, "long.log");
    let lease = ["--lease", "1s"];
    let holder = runner(
        &s,
        &s.url,
        "long",
        "a",
        &lease,
        &ticker(&log, 120_000, false),
    );
    wait_for("attempt 1 to run", Duration::from_secs(10), || {
        logged(&log, 1)
    });
    let backup = runner(&s, &s.url, "long", "b", &lease, &ticker(&log, 300, false));
    wait_for("ten lease lengths", Duration::from_secs(60), || {
        spans(&log)
            .get(&1)
            .is_some_and(|(first, last)| last - first > 10_500)
    });
    kill9(holder.id());
    let _ = finished(holder);
    let out = finished(backup);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["attempt"], 2);
    assert_never_two_at_once(&log);
    assert_eq!(status(&s, "long", SLOT).as_deref(), Some("finished"));
}

/// A run whose lease expired and that nobody can take over any more is ended `interrupted` by the
/// next claim of the job, so it does not show as running for ever.
#[test]
fn an_abandoned_run_is_ended_by_the_next_claim() {
    let s = Server::start();
    let claim = |slot: &str, extra: &[&str]| {
        s.anarchon()
            .args([&["claim", "ab", "--slot", slot, "--json"], extra].concat())
            .output()
            .unwrap()
    };
    let out = claim("60000", &["--lease", "100ms", "--max-attempts", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lease_end = json(&out)["lease_end"].as_i64().unwrap();
    wait_for(
        "the lease to be long expired",
        Duration::from_secs(10),
        || s.now_ms() > lease_end + 200,
    );
    assert_eq!(status(&s, "ab", "60000").as_deref(), Some("running"));
    let out = claim("120000", &["--lease", "100ms", "--max-attempts", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(status(&s, "ab", "60000").as_deref(), Some("interrupted"));
    assert_eq!(s.in_progress("ab"), vec![120000]);
    assert_eq!(
        attempts(&s, "ab")[0].2,
        "interrupted",
        "the abandoned attempt is in the history"
    );
}

/// `run --catch-up 2h` after `trim` with its defaults: no slot runs a second time, because a slot
/// at or before the trim horizon is refused; and once a catch-up host recorded its need, `trim`
/// refuses a shorter --protect.
#[test]
fn catch_up_after_trim_never_runs_a_slot_twice() {
    let s = Server::start();
    let log = log_in(&s, "slots.log");
    let line = format!("echo $ANARCHON_SLOT >> {}", log.display());
    let now = s.now_ms();
    let five_min = 300_000;
    let newest = now - now.rem_euclid(five_min);
    // The job has been around for a while: its slots of the last two hours may be caught up.
    let _: () = s.cmd(&[
        "HSET",
        "{cron:cu}:job",
        "first_seen",
        &(now - 3 * 3_600_000).to_string(),
    ]);
    // Two hours of five-minute slots, each run once (with the claim's default protection, 1 h).
    for i in 1..=24 {
        let slot = (newest - i * five_min).to_string();
        let out = s
            .anarchon()
            .args([
                "run", "--job", "cu", "--slot", &slot, "--shell", "--", &line,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let out = s
        .anarchon()
        .args(["trim", "cu", "--keep", "1", "--yes", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        json(&out)["total"].as_i64().unwrap() >= 10,
        "{}",
        stderr(&out)
    );

    let out = s
        .anarchon()
        .args([
            "run",
            "--job",
            "cu",
            "--schedule",
            "*/5 * * * *",
            "--catch-up",
            "2h",
            "--max-late",
            "5m",
            "--json",
            "--shell",
            "--",
            &line,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&log).unwrap();
    let mut seen = std::collections::HashSet::new();
    for slot in text.lines() {
        assert!(
            seen.insert(slot.to_string()),
            "slot {slot} ran twice:\n{text}"
        );
    }
    assert!(seen.contains(&newest.to_string()), "the current slot ran");

    // The catch-up host recorded that it may claim 2 h late: a 1 h --protect is refused.
    let out = s
        .anarchon()
        .args(["trim", "cu", "--protect", "1h", "--yes"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--protect"), "{}", stderr(&out));
}

/// The holder's anarchon is stopped (SIGSTOP) past its lease while its command runs on: the guard
/// stops the command by the deadline, the backup runs attempt 2 after it, and the resumed holder
/// says it was stopped, not that Redis was unreachable.
#[test]
fn a_stopped_holder_loses_its_command_before_the_takeover_and_says_why() {
    let s = Server::start();
    let log = log_in(&s, "stop.log");
    let flags = ["--lease", "2s", "--kill-after", "60s"];
    let holder = runner(&s, &s.url, "stop", "a", &flags, &ticker(&log, 60_000, true));
    wait_for("attempt 1 to run", Duration::from_secs(10), || {
        logged(&log, 1)
    });
    let backup = runner(&s, &s.url, "stop", "b", &flags, &ticker(&log, 300, false));
    let signal = |sig: &str| crate::common::signal(sig, holder.id()).unwrap();
    signal("-STOP");
    let out = finished(backup);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["attempt"], 2);
    signal("-CONT");
    let holder_out = finished(holder);
    let err = stderr(&holder_out);
    assert!(err.contains("stopped or starved"), "{err}");
    assert!(!err.contains("could not be reached"), "{err}");
    assert_eq!(holder_out.status.code(), Some(137), "{err}");
    assert_never_two_at_once(&log);
    assert_eq!(
        attempts(&s, "stop"),
        vec![
            ("1".into(), "a".into(), "interrupted".into()),
            ("2".into(), "b".into(), "finished".into())
        ]
    );
}

/// A server that stalls across a fire time (CLIENT PAUSE, longer than the hosts' connect and
/// command timeouts) while three hosts start for a slot: they ride it out, and the run is the
/// slot cron started them for, not the next one by the clock the server answers with after the
/// stall; it runs once. Before, every host gave up (exit 90) and the slot was lost without a
/// record; one that got through named the next slot (#35: a lost run found by the soak).
#[test]
fn a_stall_across_a_fire_time_neither_loses_the_slot_nor_moves_it() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("ran");
    let mut c = s.client();
    // 100-400 ms past a fire time of */3 seconds, by the server's clock.
    let slot = loop {
        let (secs, micros): (i64, i64) = redis::cmd("TIME").query(&mut c).unwrap();
        let now = secs * 1000 + micros / 1000;
        if (100..400).contains(&now.rem_euclid(3000)) {
            break now - now.rem_euclid(3000);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // Past the next fire time (slot + 3 s).
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(4000)
        .query(&mut c)
        .unwrap();
    let line = format!("echo $ANARCHON_SLOT >> {}", log.display());
    let hosts: Vec<_> = (0..3)
        .map(|h| {
            s.anarchon_process()
                .args([
                    "run",
                    "--job",
                    "stall",
                    "--schedule",
                    "*/3 * * * * *",
                    "--connect-timeout",
                    "1s",
                    "--command-timeout",
                    "2s",
                    "--runner",
                    &format!("host{h}:1"),
                    "--json",
                    "--shell",
                    "--",
                    &line,
                ])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<_> = hosts
        .into_iter()
        .map(|h| h.wait_with_output().unwrap())
        .collect();
    for out in &outs {
        let v = crate::common::json(out);
        assert_eq!(v["slot"], slot, "{v} {}", crate::common::stderr(out));
    }
    let ran = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(ran.lines().collect::<Vec<_>>(), [slot.to_string()], "{ran}");
}
