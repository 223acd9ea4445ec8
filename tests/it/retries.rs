//! `--retries`: a failed command is run again as a new attempt of the same slot, by any host or
//! replica, after its delay, never beside another attempt; judged by the command's own log (its
//! copies, `common::ticker`) against what the store records, in both store formats.

use std::path::Path;
use std::process::{Child, Output};
use std::time::Duration;

use crate::common::replica::Replica;
use crate::common::ticker::{Copy, assert_no_two_copies_at_once, copies, ticker_as};
use crate::common::{Server, spawn_run, wait_for};
use anarchon::store::read::ResultEntry;

/// A shell command line that logs itself as a ticker of 300 ms (labelled `<slot>/<attempt>`) and
/// fails (exit `code`) the first `fails` times it runs for a slot (a count per slot in `dir`).
fn flaky(dir: &Path, fails: u32, code: i32) -> String {
    let log = dir.join("log");
    format!(
        "f={dir}/count.$ANARCHON_SLOT; n=$(( $(cat $f 2>/dev/null || echo 0) + 1 )); echo $n > $f; {}; [ $n -gt {fails} ] || exit {code}",
        ticker_as(&log, "$ANARCHON_SLOT/$ANARCHON_ATTEMPT", 300, false),
        dir = dir.display()
    )
}

fn run_args<'a>(runner: &'a str, slot: &'a str, cmd: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["--job", "flaky", "--slot", slot, "--runner", runner];
    args.extend(extra);
    args.extend(["--shell", "--", cmd]);
    args
}

fn finished(child: Child) -> Output {
    child.wait_with_output().unwrap()
}

/// The slot's records, oldest attempt first.
fn records(s: &Server, slot: i64) -> Vec<ResultEntry> {
    let mut all: Vec<ResultEntry> = s
        .results("flaky")
        .into_iter()
        .filter(|r| r.slot == slot)
        .collect();
    all.sort_by_key(|r| r.attempt);
    all
}

/// Waits until the slot's first attempt is recorded failed (its retry then pending).
fn wait_for_failure(s: &Server, slot: i64) {
    wait_for("attempt 1's failure", Duration::from_secs(20), || {
        records(s, slot).iter().any(|r| r.status == "failed")
    });
}

fn of_slot(log: &Path, slot: i64) -> Vec<Copy> {
    copies(log)
        .into_iter()
        .filter(|c| c.slot() == Some(slot))
        .collect()
}

/// Each retry came after the attempt before it ended, by at least `delay` ms (less the log's
/// granularity).
fn assert_spaced(copies: &[Copy], delays: &[i64]) {
    for (pair, delay) in copies.windows(2).zip(delays) {
        let gap = pair[1].first - pair[0].last;
        assert!(
            gap >= delay - 100,
            "attempt {} started {gap} ms after {} ended, before its {delay} ms delay: {copies:?}",
            pair[1].label,
            pair[0].label
        );
    }
}

#[test]
fn a_failed_command_is_retried_after_its_delay_and_recorded_attempt_by_attempt() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let cmd = flaky(dir.path(), 1, 3);
    let slot = s.now_ms() / 1000 * 1000;
    let at = slot.to_string();
    let extra = ["--retries", "2", "--retry-delay", "2s"];
    let a = spawn_run(&s, &run_args("host-a", &at, &cmd, &extra));
    let b = spawn_run(&s, &run_args("host-b", &at, &cmd, &extra));
    let (a, b) = (finished(a), finished(b));
    let said = format!(
        "a: {}\nb: {}",
        String::from_utf8_lossy(&a.stderr),
        String::from_utf8_lossy(&b.stderr)
    );
    let ran = of_slot(&dir.path().join("log"), slot);
    assert_eq!(ran.len(), 2, "{ran:?}\n{said}");
    assert_no_two_copies_at_once(&ran);
    assert_eq!(
        ran.iter().map(|c| c.attempt()).collect::<Vec<_>>(),
        vec![Some(1), Some(2)]
    );
    assert_spaced(&ran, &[2_000]);
    let recorded = records(&s, slot);
    assert_eq!(recorded.len(), 2, "{recorded:?}");
    let (first, second) = (&recorded[0], &recorded[1]);
    assert_eq!(first.status, "failed", "{first:?}");
    assert_eq!(first.result["exit_code"], 3);
    assert_eq!(first.result["retry"], 1);
    let due = first.result["retry_at"].as_i64().expect("retry_at");
    assert!(
        due >= first.ended_at.unwrap() + 2_000 - 5,
        "{first:?}: the retry is due its delay after the attempt ended"
    );
    assert_eq!(second.status, "finished", "{second:?}");
    assert!(second.claimed_at.unwrap() >= due, "{second:?} before {due}");
    assert!(second.result.get("retry_at").is_none());
    let run = s.run("flaky", &at).expect("the run");
    assert_eq!((run.status.as_str(), run.attempt), ("finished", 2));
    assert!(
        said.contains("retry 1 is due at"),
        "the failed attempt's host says when the retry is due:\n{said}"
    );
    // One host's command exited 0 (the retry); neither says its command failed last.
    assert!(
        a.status.code() == Some(0) || b.status.code() == Some(0),
        "{:?} {:?}\n{said}",
        a.status,
        b.status
    );
}

#[test]
fn the_retry_of_a_host_killed_while_it_waits_is_run_by_another() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let cmd = flaky(dir.path(), 1, 3);
    let slot = s.now_ms() / 1000 * 1000;
    let at = slot.to_string();
    let extra = ["--retries", "1", "--retry-delay", "3s"];
    let mut hosts = [
        (
            "host-a",
            spawn_run(&s, &run_args("host-a", &at, &cmd, &extra)),
        ),
        (
            "host-b",
            spawn_run(&s, &run_args("host-b", &at, &cmd, &extra)),
        ),
    ];
    wait_for_failure(&s, slot);
    let failed_on = records(&s, slot)[0].runner.clone();
    let (failed, other) = if failed_on == "host-a" {
        let (x, y) = hosts.split_at_mut(1);
        (&mut x[0], &mut y[0])
    } else {
        let (x, y) = hosts.split_at_mut(1);
        (&mut y[0], &mut x[0])
    };
    // The retry is pending (due 3 s after the failure): its host is killed while it waits.
    assert_eq!(s.in_progress("flaky"), vec![slot]);
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(failed.1.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let _ = failed.1.wait();
    let out = std::mem::replace(
        &mut other.1,
        std::process::Command::new("true").spawn().unwrap(),
    );
    let out = finished(out);
    let ran = of_slot(&dir.path().join("log"), slot);
    assert_eq!(
        ran.len(),
        2,
        "{ran:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_no_two_copies_at_once(&ran);
    assert_spaced(&ran, &[3_000]);
    let recorded = records(&s, slot);
    assert_eq!(recorded.len(), 2, "{recorded:?}");
    assert_eq!(recorded[1].status, "finished");
    assert_eq!(recorded[1].runner, other.0, "{recorded:?}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn spent_retries_leave_the_slot_failed_with_the_last_attempt_s_code() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let cmd = flaky(dir.path(), 100, 3);
    let slot = s.now_ms() / 1000 * 1000;
    let at = slot.to_string();
    let extra = [
        "--retries",
        "2",
        "--retry-delay",
        "500ms",
        "--retry-backoff",
        "2",
    ];
    let out = finished(spawn_run(&s, &run_args("host-a", &at, &cmd, &extra)));
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ran = of_slot(&dir.path().join("log"), slot);
    assert_eq!(ran.len(), 3, "{ran:?}");
    assert_spaced(&ran, &[500, 1_000]);
    let recorded = records(&s, slot);
    let shape: Vec<(Option<u32>, &str, Option<i64>)> = recorded
        .iter()
        .map(|r| (r.attempt, r.status.as_str(), r.result["retry"].as_i64()))
        .collect();
    assert_eq!(
        shape,
        vec![
            (Some(1), "failed", Some(1)),
            (Some(2), "failed", Some(2)),
            (Some(3), "failed", None)
        ]
    );
    let run = s.run("flaky", &at).expect("the run");
    assert_eq!((run.status.as_str(), run.attempt), ("failed", 3));
    // The retry field is gone with the run's end.
    let job: Vec<String> = s.cmd(&["HKEYS", "{cron:flaky}:job"]);
    assert!(!job.iter().any(|f| f.starts_with("retry:")), "{job:?}");
}

#[test]
fn only_the_exit_codes_of_retry_on_are_retried() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let cmd = flaky(dir.path(), 1, 3);
    let slot = s.now_ms() / 1000 * 1000;
    let at = slot.to_string();
    let extra = [
        "--retries",
        "2",
        "--retry-delay",
        "200ms",
        "--retry-on",
        "75,111",
    ];
    let out = finished(spawn_run(&s, &run_args("host-a", &at, &cmd, &extra)));
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(of_slot(&dir.path().join("log"), slot).len(), 1);
    let recorded = records(&s, slot);
    assert_eq!(recorded.len(), 1);
    assert!(recorded[0].result.get("retry_at").is_none());

    let cmd = flaky(dir.path(), 1, 75);
    let next = (slot + 1_000).to_string();
    let out = finished(spawn_run(&s, &run_args("host-a", &next, &cmd, &extra)));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(of_slot(&dir.path().join("log"), slot + 1_000).len(), 2);
}

/// A pending retry is a run in progress: under --overlap forbid the next slot is refused while it
/// waits; `release` ends it at once, the retry recorded as not run (with the release's reason),
/// and nobody runs it.
#[test]
fn a_pending_retry_holds_the_job_and_release_ends_it() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let cmd = flaky(dir.path(), 1, 3);
    let slot = s.now_ms() / 1000 * 1000;
    let at = slot.to_string();
    let extra = ["--retries", "1", "--retry-delay", "30s"];
    let waiting = spawn_run(&s, &run_args("host-a", &at, &cmd, &extra));
    wait_for_failure(&s, slot);
    let next = (slot + 1_000).to_string();
    s.cli(&["run", "--job", "flaky", "--slot", &next, "--", "true"])
        .expect(80);
    let released = s
        .cli(&["release", "flaky", "--slot", &at, "--yes"])
        .expect(0);
    let said = String::from_utf8_lossy(&released.stdout).to_string();
    assert!(
        said.contains("the run was waiting for its retry; the retry is recorded not run")
            && !said.contains("held by"),
        "{said}"
    );
    let out = finished(waiting);
    assert_eq!(
        of_slot(&dir.path().join("log"), slot).len(),
        1,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = s.run("flaky", &at).expect("the run");
    assert_eq!(run.status, "interrupted", "{run:?}");
    assert!(s.in_progress("flaky").is_empty());
    let recorded = records(&s, slot);
    let not_run = recorded.last().unwrap();
    assert_eq!(
        (
            not_run.attempt,
            not_run.status.as_str(),
            not_run.token.as_str()
        ),
        (Some(2), "interrupted", "retry-not-run"),
        "{recorded:?}"
    );
    assert!(not_run.result["released_by"].is_string(), "{not_run:?}");
    let job: Vec<String> = s.cmd(&["HKEYS", "{cron:flaky}:job"]);
    assert!(!job.iter().any(|f| f.starts_with("retry:")), "{job:?}");
    // The job is free again (the refused slot was recorded skipped: another one).
    let later = (slot + 2_000).to_string();
    s.cli(&["run", "--job", "flaky", "--slot", &later, "--", "true"])
        .expect(0);
}

/// Replicas of `anarchon cron` retry a crontab line's failed runs: each slot's first attempt fails
/// and its retry, by whichever replica takes it, finishes; no two attempts at once.
#[test]
fn cron_replicas_retry_a_failed_slot_once_each() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crontab");
    std::fs::write(
        &file,
        format!(
            "# anarchon: --job flaky --retries 1 --retry-delay 1s\n*/4 * * * * * {}\n",
            flaky(dir.path(), 1, 3)
        ),
    )
    .unwrap();
    let _a = Replica::start(&s.url, &file, dir.path(), "a", &[]);
    let _b = Replica::start(&s.url, &file, dir.path(), "b", &[]);
    let log = dir.path().join("log");
    wait_for("two slots retried", Duration::from_secs(40), || {
        let done: Vec<i64> = s
            .results("flaky")
            .iter()
            .filter(|r| r.status == "finished")
            .map(|r| r.slot)
            .collect();
        done.len() >= 2
    });
    let all = copies(&log);
    assert_no_two_copies_at_once(&all);
    for r in s.results("flaky").iter().filter(|r| r.status == "finished") {
        let ran = of_slot(&log, r.slot);
        assert_eq!(
            ran.iter().map(|c| c.attempt()).collect::<Vec<_>>(),
            vec![Some(1), Some(2)],
            "{ran:?}"
        );
        assert_spaced(&ran, &[1_000]);
        assert_eq!(r.attempt, Some(2));
    }
}

/// `--retries 1 --retry-delay 1s --lease 1s`.
const RETRY_ONCE: [&str; 6] = ["--retries", "1", "--retry-delay", "1s", "--lease", "1s"];

/// A slot of `flaky` (failing once) whose only host (host-a, [`RETRY_ONCE`]) was killed -9 while
/// it waited for its retry, and whose lease (to the retry's time) has lapsed by more than a lease:
/// its slot, as text, and the command.
fn a_retry_nobody_took(s: &Server, dir: &Path) -> (i64, String, String) {
    let cmd = flaky(dir, 1, 3);
    let slot = s.now_ms() / 1000 * 1000;
    let at = slot.to_string();
    let mut only = spawn_run(s, &run_args("host-a", &at, &cmd, &RETRY_ONCE));
    wait_for_failure(s, slot);
    crate::common::signal_group("-KILL", only.id()).unwrap();
    let _ = only.wait();
    let due = records(s, slot)[0].retry_due().unwrap();
    crate::common::wait_for_server_time(s, due + 1_100);
    (slot, at, cmd)
}

/// A retry nobody takes (its only host killed while it waited) is ended by the job's next run under
/// --overlap replace once its lease has lapsed, recorded as a retry not run, superseded by that
/// run: the slot's end says why, and no monitor reads it as still running. (Under forbid and
/// buffer the next run takes the retry over first: the next test.)
#[test]
fn a_retry_nobody_took_is_superseded_by_the_next_run_and_says_so() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (slot, at, _) = a_retry_nobody_took(&s, dir.path());
    let next = (slot + 60_000).to_string();
    s.cli(&[
        "run",
        "--job",
        "flaky",
        "--slot",
        &next,
        "--lease",
        "1s",
        "--overlap",
        "replace",
        "--",
        "true",
    ])
    .expect(0);
    assert_eq!(of_slot(&dir.path().join("log"), slot).len(), 1);
    let recorded = records(&s, slot);
    let not_run = recorded.last().unwrap();
    assert_eq!(
        (not_run.attempt, not_run.status.as_str()),
        (Some(2), "interrupted"),
        "{recorded:?}"
    );
    assert_eq!(not_run.result["reason"], "retry not run");
    assert_eq!(not_run.result["superseded_by"], slot + 60_000);
    assert_eq!(s.run("flaky", &at).unwrap().status, "interrupted");
    let job: Vec<String> = s.cmd(&["HKEYS", "{cron:flaky}:job"]);
    assert!(!job.iter().any(|f| f.starts_with("retry:")), "{job:?}");
}

/// A retry nobody took (its only host killed while it waited), met by the job's next run under
/// --overlap forbid once its lease has lapsed: the retry is owed, so that host runs it first (the
/// slot's attempt 2, by its command), then its own slot. Before, the next run superseded it and
/// the slot was lost with a retry left.
#[test]
fn a_retry_nobody_took_is_run_by_the_next_run_first() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (slot, _, cmd) = a_retry_nobody_took(&s, dir.path());
    let extra = RETRY_ONCE;
    let next = slot + 60_000;
    let out = spawn_run(&s, &run_args("host-c", &next.to_string(), &cmd, &extra));
    let out = finished(out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = dir.path().join("log");
    assert_eq!(
        of_slot(&log, slot).len(),
        2,
        "the slot's first try and its retry"
    );
    assert_eq!(
        of_slot(&log, next).len(),
        2,
        "the next slot: a try and its retry"
    );
    let ends: Vec<(Option<u32>, String, String)> = records(&s, slot)
        .into_iter()
        .map(|r| (r.attempt, r.status, r.runner))
        .collect();
    assert_eq!(
        ends,
        [
            (Some(1), "failed".to_string(), "host-a".to_string()),
            (Some(2), "finished".to_string(), "host-c".to_string())
        ]
    );
    assert_eq!(records(&s, next).last().unwrap().status, "finished");
}

/// While a retry is pending, `next` says when it is due, and `check` does not call the job failing
/// (a slot fails only when its retries are spent); once spent, it does.
#[test]
fn next_shows_a_pending_retry_and_check_waits_for_the_retries_to_be_spent() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let cmd = flaky(dir.path(), 100, 3);
    let extra = ["--retries", "1", "--retry-delay", "4s"];
    let mut args = vec![
        "--job",
        "flaky",
        "--schedule",
        "* * * * *",
        "--runner",
        "host-a",
    ];
    args.extend(extra);
    args.extend(["--shell", "--", &cmd]);
    crate::common::wait_clear_of_the_minute_end(&s, Duration::from_secs(15));
    let waiting = spawn_run(&s, &args);
    wait_for("attempt 1's failure", Duration::from_secs(20), || {
        s.results("flaky").iter().any(|r| r.status == "failed")
    });
    let next = s.cli(&["next", "flaky", "--json"]).expect(0).json();
    let pending = &next["pending_retries"];
    assert_eq!(pending.as_array().map(Vec::len), Some(1), "{next}");
    assert_eq!(pending[0]["retry"], 1);
    assert_eq!(pending[0]["attempt"], 2);
    let due = s.results("flaky")[0].retry_due().unwrap();
    assert_eq!(pending[0]["due"], due);
    let text = String::from_utf8_lossy(&s.cli(&["next", "flaky"]).expect(0).stdout).to_string();
    assert!(text.contains("retry 1 of the run of"), "{text}");
    let check = s.cli(&["check", "flaky", "--json"]).json();
    assert_eq!(check["jobs"][0]["health"]["failed_in_a_row"], 0, "{check}");
    let inspected = s.cli(&["inspect", "flaky", "--json"]).expect(0).json();
    assert_eq!(inspected["active"][0]["retry_due"], due, "{inspected}");
    let listed = s.cli(&["list", "--json"]).expect(0).json();
    assert_eq!(listed["jobs"][0]["state"], "retrying", "{listed}");
    // The retry fails too: now the slot has failed.
    let out = finished(waiting);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let check = s.cli(&["check", "flaky", "--json"]).json();
    assert_eq!(check["jobs"][0]["health"]["failed_in_a_row"], 1, "{check}");
}

/// A retry that has just fallen due is not superseded by the job's next run while the hosts
/// standing by take it over (a red-team trial found the next slot's claim, 5 ms after the retry's
/// time, ending it as not run under forbid, and under buffer most of the time): it holds the job a
/// lease past its time.
#[test]
fn the_next_slot_never_supersedes_a_retry_just_due() {
    for policy in ["forbid", "buffer"] {
        let s = Server::start();
        let dir = tempfile::tempdir().unwrap();
        let cmd = flaky(dir.path(), 1, 3);
        let slot = s.now_ms() / 1000 * 1000;
        let at = slot.to_string();
        let extra = ["--retries", "1", "--retry-delay", "2s", "--overlap", policy];
        let a = spawn_run(&s, &run_args("host-a", &at, &cmd, &extra));
        let b = spawn_run(&s, &run_args("host-b", &at, &cmd, &extra));
        wait_for_failure(&s, slot);
        let due = records(&s, slot)[0].retry_due().unwrap();
        crate::common::wait_for_server_time(&s, due);
        let next = (slot + 1_000).to_string();
        let c = spawn_run(
            &s,
            &run_args("host-c", &next, "true", &["--overlap", policy]),
        );
        let (_a, _b, c) = (finished(a), finished(b), finished(c));
        let recorded = records(&s, slot);
        assert_eq!(
            recorded.last().map(|r| (r.attempt, r.status.as_str())),
            Some((Some(2), "finished")),
            "{policy}: the retry ran: {recorded:?}\n{}",
            String::from_utf8_lossy(&c.stderr)
        );
        let ran = copies(&dir.path().join("log"));
        assert_no_two_copies_at_once(&ran);
        // Under forbid the next slot is skipped (80) when a host standing by had taken the retry
        // over before its claim, or runs after the retry when its claim found the retry still
        // owed (it took it over, or stood by for it); buffer waits for it either way.
        let allowed: &[i32] = if policy == "forbid" { &[0, 80] } else { &[0] };
        let code = c.status.code().unwrap_or(-1);
        assert!(allowed.contains(&code), "{policy}: exit {code}");
    }
}

/// `run` waiting for its retry stops at SIGTERM (systemd, cron, a person), at once, with its
/// command's code: the retry is left to the hosts standing by (here none: the run stays in progress
/// until its retry's time, for them or the job's next run).
#[test]
fn a_run_waiting_for_its_retry_stops_at_sigterm() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let cmd = flaky(dir.path(), 1, 3);
    let slot = s.now_ms() / 1000 * 1000;
    let at = slot.to_string();
    let extra = ["--retries", "1", "--retry-delay", "60s"];
    let waiting = spawn_run(&s, &run_args("host-a", &at, &cmd, &extra));
    wait_for_failure(&s, slot);
    let pid = nix::unistd::Pid::from_raw(waiting.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let stopped = std::time::Instant::now();
    let out = finished(waiting);
    assert!(
        stopped.elapsed() < Duration::from_secs(5),
        "it took {:?}",
        stopped.elapsed()
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("stopped while waiting for the retry"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        s.in_progress("flaky"),
        vec![slot],
        "the retry is still to come"
    );
}
