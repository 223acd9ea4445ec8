//! Exactly once, round 2: the faults that gave two copies of a command, or a run nobody finished,
//! or a run reported failed that ran once. Each test injects its fault with real processes (the
//! loopback fault relay, CLIENT PAUSE, a server restart, a command that leaves a child behind) and
//! checks what the wrapped command itself did: it logs `<slot>/<attempt> <ms>` every 50 ms, and two
//! ids whose time spans intersect are two copies at once (tests/it/common/ticker.rs).
//!
//! The suite runs these on stores in format 2 (`cargo test`) and again in format 1
//! (`ANARCHON_TEST_STORE_FORMAT=1`, .ci/run).

use crate::common;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::Duration;

use crate::common::proxy::{Fault, FaultProxy};
use crate::common::ticker::{assert_no_two_spans_overlap, copies, spans_of, ticker_as};
use crate::common::{Server, stderr, wait_for, wait_for_lease_end};

const SLOT: i64 = 1_796_220_300_000;

/// A ticker that logs `<slot>/<attempt>`, so runs of different slots are told apart.
fn ticker(log: &Path, ms: u64, ignore_term: bool) -> String {
    ticker_as(log, "$ANARCHON_SLOT/$ANARCHON_ATTEMPT", ms, ignore_term)
}

fn id(slot: i64, attempt: u32) -> String {
    format!("{slot}/{attempt}")
}

fn logged(log: &Path, id: &str) -> bool {
    spans_of::<String>(log).contains_key(id)
}

fn log_in(s: &Server, name: &str) -> PathBuf {
    s.dir.path().join(name)
}

/// `anarchon run` of `job` @ `slot` as `name`, through `url`, with a shell command line.
fn run_at(
    s: &Server,
    url: &str,
    job: &str,
    slot: i64,
    name: &str,
    extra: &[&str],
    command: &str,
) -> Child {
    use std::os::unix::process::CommandExt;
    s.anarchon_process()
        .env("ANARCHON_REDIS_URL", url)
        .args([
            "run",
            "--job",
            job,
            "--slot",
            &slot.to_string(),
            "--runner",
            name,
            "--json",
        ])
        .args(extra)
        .args(["--shell", "--", command])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap()
}

fn finished(child: Child) -> Output {
    child.wait_with_output().unwrap()
}

fn kill(signal: &str, pid: u32) {
    // A command's pid (from its pid file) may be gone already.
    let _ = crate::common::signal(signal, pid);
}

fn results_of(s: &Server, job: &str, slot: i64) -> Vec<anarchon::store::read::ResultEntry> {
    s.results(job)
        .into_iter()
        .filter(|r| r.slot == slot)
        .collect()
}

/// The lease of the item-0 tests: short, and a --kill-after far beyond it.
const SHORT_LEASE: [&str; 4] = ["--lease", "2s", "--kill-after", "60s"];

/// A holder of `job` @ `slot` that dies (kill -9) mid-command, its lease then expired: the guard
/// stopped its command (which ignores SIGTERM) by the lease deadline.
fn dead_holder(s: &Server, job: &str, slot: i64, log: &Path) {
    let holder = started(s, job, slot, "a", log, &ticker(log, 60_000, true));
    kill("-KILL", holder.id());
    let _ = finished(holder);
    wait_for_lease_end(s, job, &slot.to_string());
}

/// `anarchon run` of `job` @ `slot` as `name` with SHORT_LEASE, once its command has run.
fn started(s: &Server, job: &str, slot: i64, name: &str, log: &Path, command: &str) -> Child {
    let child = run_at(s, &s.url, job, slot, name, &SHORT_LEASE, command);
    wait_for("the command to run", Duration::from_secs(10), || {
        logged(log, &id(slot, 1)) || logged(log, &id(slot, 2))
    });
    child
}

/// Item 0. Slot N's holder dies and its lease lapses; slot N+1 is claimed meanwhile (no live lease
/// blocks it); then a backup of slot N would take over as attempt 2 beside slot N+1's run. Under
/// `--overlap forbid` the takeover is checked like a new run: slot N is superseded, ends
/// interrupted, and runs nothing.
#[test]
fn a_takeover_of_an_older_slot_never_runs_beside_a_newer_slots_run() {
    let s = Server::start();
    let log = log_in(&s, "sup.log");
    let newer = SLOT + 60_000;
    dead_holder(&s, "sup", SLOT, &log);
    let next = started(&s, "sup", newer, "c", &log, &ticker(&log, 3_000, false));
    // Overtaken with nobody standing by: ended by N+1's claim, not left running.
    assert_eq!(s.in_progress("sup"), vec![newer]);
    let late_backup = run_at(
        &s,
        &s.url,
        "sup",
        SLOT,
        "b",
        &SHORT_LEASE,
        &ticker(&log, 500, false),
    );
    let out = finished(late_backup);
    assert_eq!(out.status.code(), Some(81), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "interrupted", "{v}");
    let next = finished(next);
    assert_eq!(next.status.code(), Some(0), "{}", stderr(&next));

    let spans = assert_no_two_spans_overlap::<String>(&log);
    assert!(
        !spans.contains_key(&id(SLOT, 2)),
        "slot N ran again: {spans:?}"
    );
    let ended = results_of(&s, "sup", SLOT);
    assert_eq!(ended.len(), 1, "{ended:?}");
    assert_eq!(ended[0].status, "interrupted");
    assert_eq!(
        ended[0].result["superseded_by"], newer,
        "{:?}",
        ended[0].result
    );
    assert!(s.in_progress("sup").is_empty());
}

/// Item 0, the other way round: a takeover beside an older run under a live lease answers overlap
/// and writes nothing.
#[test]
fn a_takeover_beside_an_older_live_run_answers_overlap() {
    let s = Server::start();
    let log = log_in(&s, "ovl.log");
    let newer = SLOT + 60_000;
    // The newer slot first, its holder dead; then the older slot runs (a new run: the newer one's
    // lease has lapsed, and an older run is never superseded by it).
    dead_holder(&s, "ovl", newer, &log);
    let older = started(&s, "ovl", SLOT, "c", &log, &ticker(&log, 3_000, false));
    let backup = run_at(
        &s,
        &s.url,
        "ovl",
        newer,
        "b",
        &SHORT_LEASE,
        &ticker(&log, 500, false),
    );
    let out = finished(backup);
    assert_eq!(out.status.code(), Some(80), "{}", stderr(&out));
    let older = finished(older);
    assert_eq!(older.status.code(), Some(0), "{}", stderr(&older));
    let spans = assert_no_two_spans_overlap::<String>(&log);
    assert!(!spans.contains_key(&id(newer, 2)), "{spans:?}");
}

/// A holder of `job` @ SLOT with a lease of 6 s (heartbeat every 2 s) whose command runs a minute.
fn live_holder(s: &Server, job: &str, log: &Path, extra: &[&str]) -> Child {
    let mut flags = vec!["--lease", "6s"];
    flags.extend_from_slice(extra);
    let holder = run_at(
        s,
        &s.url,
        job,
        SLOT,
        "a",
        &flags,
        &ticker(log, 60_000, false),
    );
    wait_for(
        "the holder's command to run",
        Duration::from_secs(10),
        || logged(log, &id(SLOT, 1)),
    );
    holder
}

/// Item 1. `release` of a live run, then `run-now`, as release's own output suggests: the holder
/// stops its command before the release returns, so the manual run never runs beside it, and the
/// holder says truthfully what happened.
#[test]
fn release_then_run_now_never_runs_two_copies() {
    let s = Server::start();
    let log = log_in(&s, "rel.log");
    let holder = live_holder(&s, "rel", &log, &[]);
    let released = s
        .cli(&["release", "rel", "--yes", "--reason", "INC-1"])
        .expect(0);
    let text = String::from_utf8_lossy(&released.stdout).into_owned();
    assert!(text.contains("its holder stopped the command"), "{text}");
    // At once: the run ended, the job is free.
    let now = s
        .cli(&["run-now", "rel", "--shell", "--", &ticker(&log, 500, false)])
        .expect(0);
    let holder = finished(holder);
    let err = stderr(&holder);
    assert!(err.contains("released the run: INC-1"), "{err}");
    assert!(err.contains("is recorded interrupted"), "{err}");
    assert!(!err.contains("backup takes over"), "{err}");
    assert_eq!(holder.status.code(), Some(143), "{err}");
    assert!(now.status.success());
    let spans = assert_no_two_spans_overlap::<String>(&log);
    assert_eq!(spans.len(), 2, "{spans:?}");
    let ended = results_of(&s, "rel", SLOT);
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0].status, "interrupted");
    assert_eq!(ended[0].result["reason"], "INC-1", "{:?}", ended[0].result);
    assert_eq!(
        ended[0].result["command"]["signal"], 15,
        "{:?}",
        ended[0].result
    );
}

/// Item 1 with --no-wait: the release returns at once, and until the holder has stopped, the run
/// stays held: the job's next slot answers overlap instead of running beside it.
#[test]
fn a_released_run_blocks_the_next_slot_until_its_holder_has_stopped() {
    let s = Server::start();
    let log = log_in(&s, "relnw.log");
    // A command that takes its time to stop: SIGTERM is trapped and it goes on 1 s more.
    let slow_stop = format!(
        "trap 'sleep 1; exit 143' TERM; {}",
        ticker(&log, 60_000, false)
    );
    let holder = run_at(
        &s,
        &s.url,
        "relnw",
        SLOT,
        "a",
        &["--lease", "6s"],
        &slow_stop,
    );
    wait_for("the holder's command", Duration::from_secs(10), || {
        logged(&log, &id(SLOT, 1))
    });
    let out = s
        .cli(&["release", "relnw", "--yes", "--no-wait", "--json"])
        .expect(0);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runs"][0]["outcome"], "releasing", "{v}");
    let next = SLOT + 60_000;
    let blocked = s.cli(&[
        "run",
        "--job",
        "relnw",
        "--slot",
        &next.to_string(),
        "--shell",
        "--",
        &ticker(&log, 300, false),
    ]);
    assert_eq!(blocked.code(), Some(80), "{}", blocked.dump());
    let holder = finished(holder);
    assert!(stderr(&holder).contains("released"), "{}", stderr(&holder));
    // The refused slot was recorded skipped (decided, not missed): it stays unrun; the slot
    // after it runs, after the released holder's command.
    let again = s.cli(&[
        "run",
        "--job",
        "relnw",
        "--slot",
        &next.to_string(),
        "--json",
        "--shell",
        "--",
        &ticker(&log, 300, false),
    ]);
    assert_eq!(again.code(), Some(81), "{}", again.dump());
    assert_eq!(again.json()["status"], skipped_status(), "{}", again.dump());
    s.cli(&[
        "run",
        "--job",
        "relnw",
        "--slot",
        &(next + 60_000).to_string(),
        "--shell",
        "--",
        &ticker(&log, 300, false),
    ])
    .expect(0);
    assert_no_two_spans_overlap::<String>(&log);
}

/// Item 1, a holder that is gone: nobody answers, so the release waits for the lease to end (no
/// longer), then ends the run; `run-now` after it runs once, after the dead holder's command.
#[test]
fn releasing_a_vanished_holder_waits_no_longer_than_its_lease() {
    let s = Server::start();
    let log = log_in(&s, "relgone.log");
    let holder = run_at(
        &s,
        &s.url,
        "relgone",
        SLOT,
        "a",
        &["--lease", "3s", "--kill-after", "60s"],
        &ticker(&log, 60_000, true),
    );
    wait_for("the holder's command", Duration::from_secs(10), || {
        logged(&log, &id(SLOT, 1))
    });
    kill("-KILL", holder.id());
    let _ = finished(holder);
    let out = s.cli(&["release", "relgone", "--yes", "--json"]).expect(0);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &v["runs"][0];
    assert_eq!(run["outcome"], "released", "{v}");
    assert!(
        run["ended_by"] == "lease_expired" || run["ended_by"] == "at_once",
        "{v}"
    );
    let waited = run["waited_ms"]
        .as_u64()
        .unwrap_or_else(|| panic!("release says how long it waited: {v}"));
    assert!(waited <= 5_000, "{v}");
    s.cli(&[
        "run-now",
        "relgone",
        "--shell",
        "--",
        &ticker(&log, 300, false),
    ])
    .expect(0);
    assert_no_two_spans_overlap::<String>(&log);
}

/// Item 2. A command that exits but leaves a background child (`(work) & exit 3`): the child is
/// stopped before the run is recorded ended, the failure's stderr is kept, and the duration is the
/// command's own. With --leave-children it runs on, as before.
#[test]
fn a_background_child_is_stopped_before_the_run_is_recorded_ended() {
    let s = Server::start();
    let log = log_in(&s, "bg.log");
    let pid_file = log_in(&s, "bg.pid");
    let script = format!(
        "(while :; do echo \"child $$ $(date +%s%3N)\" >> {log}; sleep 0.05; done) > /dev/null & echo $! > {pid}; sleep 0.2; echo 'it went wrong' >&2; exit 3",
        log = log.display(),
        pid = pid_file.display()
    );
    let out = s.cli(&[
        "run",
        "--job",
        "bg",
        "--slot",
        &SLOT.to_string(),
        "--kill-after",
        "2s",
        "--shell",
        "--",
        &script,
    ]);
    assert_eq!(out.code(), Some(3), "{}", out.dump());
    assert!(
        stderr(&out).contains("the command exited but left"),
        "{}",
        out.dump()
    );
    let child: u32 = common::wait_for_line(&pid_file).parse().unwrap();
    let gone = common::exited(child);
    assert!(gone, "the background child {child} still runs");
    let ended = results_of(&s, "bg", SLOT);
    assert_eq!(ended.len(), 1, "{ended:?}");
    let r = &ended[0];
    assert_eq!(r.status, "failed");
    assert_eq!(r.result["exit_code"], 3);
    assert!(
        r.result["stderr_tail"]
            .as_str()
            .unwrap_or("")
            .contains("it went wrong"),
        "{:?}",
        r.result
    );
    assert!(
        r.result["duration_ms"].as_u64().unwrap() < 1_500,
        "{:?}",
        r.result
    );
    assert!(
        r.result["children_stopped"].as_u64() >= Some(1),
        "{:?}",
        r.result
    );
    // Its last line came before the run was recorded ended.
    let last = spans_of::<String>(&log)["child"].1;
    assert!(
        last <= r.ended_at.unwrap(),
        "child at {last}, ended at {:?}",
        r.ended_at
    );

    // --leave-children: the old behaviour, on request. (The child's stdout goes to /dev/null, so
    // this test's pipe from anarchon ends when anarchon does; its stderr is anarchon's pipe.)
    let out = s.cli(&[
        "run",
        "--job",
        "bg2",
        "--slot",
        &SLOT.to_string(),
        "--leave-children",
        "--shell",
        "--",
        &script,
    ]);
    assert_eq!(out.code(), Some(3), "{}", out.dump());
    let child: u32 = common::wait_for_line(&pid_file).parse().unwrap();
    assert!(
        !common::exited(child),
        "the child should run on with --leave-children"
    );
    kill("-KILL", child);
    let r = &results_of(&s, "bg2", SLOT)[0];
    assert!(
        r.result["stderr_tail"]
            .as_str()
            .unwrap_or("")
            .contains("it went wrong"),
        "{:?}",
        r.result
    );
}

/// A child the command left behind is still guarded while anarchon stops it: anarchon asks its
/// guard whether the group is empty (the guard steps out of the group to ask), and when it is
/// not, the guard leads it again. A kill -9 of anarchon's whole process group then (a shell's
/// `kill -9 %1`, `timeout -s KILL`) does not take the guard along, and the guard stops the child.
#[test]
fn a_child_left_behind_is_stopped_when_anarchon_and_its_group_are_killed_meanwhile() {
    let s = Server::start();
    let pid_file = log_in(&s, "left.pid");
    let termed = log_in(&s, "left.term");
    let trapped = log_in(&s, "left.trapped");
    // The child takes its SIGTERM and runs on; the SIGKILL is a minute away. The command ends
    // only once the child's trap is set: a SIGTERM before it (a loaded machine, the command gone
    // at once) would end the child unseen, and the test would wait for its "term" in vain.
    let script = format!(
        "(trap 'echo term >> {termed}' TERM; echo set > {trapped}; while :; do sleep 0.05; done) > /dev/null 2>&1 & while [ ! -s {trapped} ]; do sleep 0.01; done; echo $! > {pid}; exit 0",
        termed = termed.display(),
        trapped = trapped.display(),
        pid = pid_file.display()
    );
    let slot = SLOT.to_string();
    let args = ["--job", "left", "--slot", &slot, "--kill-after", "60s"];
    let mut anarchon = common::spawn_run(&s, &[&args[..], &["--shell", "--", &script]].concat());
    let child: u32 = common::wait_for_line(&pid_file).parse().unwrap();
    // anarchon has found the child and sent it its SIGTERM: it is in the stopping phase.
    wait_for("the child's SIGTERM", Duration::from_secs(20), || {
        std::fs::read_to_string(&termed).is_ok_and(|t| t.contains("term"))
    });
    // anarchon leads its group (spawn_run): the group is anarchon and, if it had stayed out of
    // the command's, the guard.
    crate::common::signal_group("-KILL", anarchon.id()).unwrap();
    let _ = anarchon.wait();
    wait_for(
        "the guard to stop the child",
        Duration::from_secs(20),
        || common::exited(child),
    );
}

/// A holder of `job` @ SLOT whose command runs a minute (ignoring SIGTERM when `stubborn`), and a
/// second host standing by as its backup with a command of `backup_ms`, both connected.
fn holder_and_backup(
    s: &Server,
    job: &str,
    flags: &[&str],
    log: &Path,
    stubborn: bool,
    backup_ms: u64,
) -> (Child, Child) {
    let holder = run_at(
        s,
        &s.url,
        job,
        SLOT,
        "a",
        flags,
        &ticker(log, 60_000, stubborn),
    );
    wait_for("attempt 1", Duration::from_secs(10), || {
        logged(log, &id(SLOT, 1))
    });
    let backup = run_at(
        s,
        &s.url,
        job,
        SLOT,
        "b",
        flags,
        &ticker(log, backup_ms, false),
    );
    // This test's client, the holder's connection and the backup's.
    common::wait_for_clients(s, 3);
    (holder, backup)
}

/// Item 3. The server stalls longer than the lease (CLIENT PAUSE): a claim queued during the
/// pause may win after its own local deadline has passed. It claims again with the same token
/// instead of stopping at once, so the slot is finished by someone, once.
#[test]
fn after_a_server_stall_longer_than_the_lease_the_slot_is_finished_once() {
    let s = Server::start();
    let log = log_in(&s, "stall.log");
    let flags = [
        "--lease",
        "3s",
        "--kill-after",
        "1s",
        "--command-timeout",
        "20s",
    ];
    let (holder, backup) = holder_and_backup(&s, "stall", &flags, &log, false, 1_000);
    // The backup looks again just after the holder's lease would end; pause across that moment.
    let _: () = s.cmd(&["CLIENT", "PAUSE", "6000"]);
    let holder = finished(holder);
    let backup = finished(backup);
    wait_for("the slot to end", Duration::from_secs(30), || {
        s.in_progress("stall").is_empty()
    });
    assert_no_two_spans_overlap::<String>(&log);
    let ended = results_of(&s, "stall", SLOT);
    let finished_attempts: Vec<_> = ended.iter().filter(|r| r.status == "finished").collect();
    assert_eq!(
        finished_attempts.len(),
        1,
        "{ended:?}\nholder: {}\nbackup: {}",
        stderr(&holder),
        stderr(&backup)
    );
}

/// Item 4. A backup standing by keeps standing by through errors that pass (OOM at maxmemory
/// with noeviction), says so, and takes over when the holder dies and the server accepts writes.
#[test]
fn a_standby_backup_rides_out_an_out_of_memory_server() {
    let s = Server::start();
    let log = log_in(&s, "oom.log");
    let flags = ["--lease", "2s", "--kill-after", "60s"];
    let (holder, backup) = holder_and_backup(&s, "oom", &flags, &log, true, 500);
    // The backup is standing by once it has registered (its opening round trip is done): an
    // OOM on that write is no refused takeover.
    wait_for("the backup to register", Duration::from_secs(10), || {
        s.cmd::<i64>(&["HEXISTS", "{cron:oom}:registry", "host:b"]) == 1
    });
    let _: () = s.cmd(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
    let _: () = s.cmd(&["CONFIG", "SET", "maxmemory", "1"]);
    kill("-KILL", holder.id());
    let _ = finished(holder);
    // Counted from here, once the holder is dead: a heartbeat of the holder's refused in the
    // moment before the kill is no refused takeover either (CI saw one end the wait early).
    let ooms = || {
        s.info_field("errorstats", "errorstat_OOM")
            .and_then(|v| v.strip_prefix("count=").and_then(|n| n.parse::<u64>().ok()))
            .unwrap_or(0)
    };
    let ooms_at_kill = ooms();
    // The backup's takeover is refused for a while (OOM), then the memory limit goes.
    let lease_end = s
        .run("oom", &SLOT.to_string())
        .and_then(|r| r.lease_end)
        .unwrap();
    if s.info_field("stats", "total_error_replies").is_some() {
        wait_for(
            "the backup to meet OOM twice",
            Duration::from_secs(20),
            || ooms() >= ooms_at_kill + 2,
        );
    } else {
        // Redis 5 counts no errors: time, by the server's clock, for a few refused takeovers.
        common::wait_for_server_time(&s, lease_end + 2_000);
    }
    let _: () = s.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
    let out = finished(backup);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("retrying"), "{}", stderr(&out));
    let spans = assert_no_two_spans_overlap::<String>(&log);
    assert!(spans.contains_key(&id(SLOT, 2)), "{spans:?}");
}

/// Item 5. The finish is applied but its reply is lost (past --command-timeout): the wrapper
/// sends it again, hears that its own finish was recorded, and exits with the command's code.
#[test]
fn a_finish_whose_reply_was_lost_is_answered_recorded() {
    let s = Server::start();
    let proxy = FaultProxy::start(s.port);
    let log = log_in(&s, "fin.log");
    proxy.drop_next_reply_containing(b"finished");
    let run = run_at(
        &s,
        &proxy.url,
        "fin",
        SLOT,
        "a",
        &["--command-timeout", "1s"],
        &ticker(&log, 200, false),
    );
    let out = finished(run);
    assert!(proxy.dropped(), "the finish's reply was not lost");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "finished", "{v}");
    assert_eq!(
        s.ended_attempts("fin"),
        vec![("1".into(), "a".into(), "finished".into())]
    );
    proxy.set(Fault::Pass);
}

/// Item 6. Redis restarted without persistence while a run is held: the holder's next heartbeat
/// finds the run gone (not taken: gone), says the server lost its data, and stops its command at
/// once (within a second, not --kill-after), even one that ignores SIGTERM.
#[test]
fn a_lost_store_stops_the_command_at_once_and_says_so() {
    let mut s = Server::start();
    let log = log_in(&s, "lost.log");
    let holder = run_at(
        &s,
        &s.url,
        "lost",
        SLOT,
        "a",
        &["--lease", "9s", "--kill-after", "60s"],
        &ticker(&log, 60_000, true),
    );
    wait_for("attempt 1", Duration::from_secs(10), || {
        logged(&log, &id(SLOT, 1))
    });
    let restarted_at = s.now_ms();
    s.restart(&[]);
    let out = finished(holder);
    let err = stderr(&out);
    assert!(err.contains("lost its data"), "{err}");
    // What comes next, truthfully: not "a backup takes over".
    assert!(err.contains("another host may claim it again"), "{err}");
    assert!(!err.contains("backup takes over"), "{err}");
    assert_eq!(out.status.code(), Some(137), "{err}");
    // A heartbeat every 3 s, then a second at most: not the 8 s the local deadline allowed.
    let last = spans_of::<String>(&log)[&id(SLOT, 1)].1;
    assert!(
        last - restarted_at < 5_000,
        "ran {} ms after the restart",
        last - restarted_at
    );
}

/// Items 6 and 7: `doctor` warns when a restart loses claims (no persistence), and `run` warns
/// once when the server may evict the store's keys.
#[test]
fn run_warns_when_the_server_may_evict_the_store_and_doctor_when_it_forgets() {
    let s = Server::start_with(&["--maxmemory-policy", "allkeys-lru"]);
    let out = s
        .cli(&[
            "run",
            "--job",
            "ev",
            "--slot",
            &SLOT.to_string(),
            "--",
            "true",
        ])
        .expect(0);
    let err = stderr(&out);
    assert!(err.contains("maxmemory-policy allkeys-lru"), "{err}");
    assert!(err.contains("may evict"), "{err}");
    let quiet = Server::start();
    let out = quiet
        .cli(&[
            "run",
            "--job",
            "ev",
            "--slot",
            &SLOT.to_string(),
            "--",
            "true",
        ])
        .expect(0);
    assert!(!stderr(&out).contains("evict"), "{}", stderr(&out));

    let doctor = quiet.cli(&["doctor"]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&doctor.stdout),
        stderr(&doctor)
    );
    assert!(text.contains("persistence"), "{text}");
    assert!(text.contains("a restart loses"), "{text}");
}

/// Item 8. A holder cut off by a stalled network is told what was observed (a heartbeat still
/// unanswered), not that it was stopped or starved, and its command gets one SIGTERM.
#[test]
fn a_cut_off_holder_says_what_it_saw_and_signals_once() {
    let s = Server::start();
    let proxy = FaultProxy::start(s.port);
    let log = log_in(&s, "term.log");
    let terms = log_in(&s, "terms.log");
    let command = format!(
        "trap 'echo TERM >> {terms}; exit 143' TERM; {}",
        ticker(&log, 60_000, false),
        terms = terms.display()
    );
    let flags = [
        "--lease",
        "3s",
        "--kill-after",
        "5s",
        "--command-timeout",
        "10s",
    ];
    let holder = run_at(&s, &proxy.url, "term", SLOT, "a", &flags, &command);
    wait_for("attempt 1", Duration::from_secs(10), || {
        logged(&log, &id(SLOT, 1))
    });
    let marker = log.display().to_string();
    let shells: Vec<u32> = copies(&log)
        .iter()
        .map(|c| c.id.split('.').next().unwrap().parse().unwrap())
        .collect();
    // The wait for its end below can see it: it is seen alive now.
    assert!(
        shells
            .iter()
            .all(|pid| common::alive_running(*pid, &marker)),
        "{shells:?}"
    );
    proxy.set(Fault::Stall);
    let out = finished(holder);
    proxy.set(Fault::Pass);
    let err = stderr(&out);
    assert!(err.contains("still unanswered"), "{err}");
    assert!(!err.contains("stopped or starved"), "{err}");
    // Every SIGTERM the command will get has been counted once it is gone: its trap writes the
    // line before it exits, and a signal to a process that ended is heard by nobody. (The shell's
    // pid is in its own log lines; its command line names this test's log, so a pid reused by
    // another program is not mistaken for it.)
    for pid in shells {
        wait_for("the command to exit", Duration::from_secs(30), || {
            !common::alive_running(pid, &marker)
        });
    }
    let received = std::fs::read_to_string(&terms).unwrap_or_default();
    assert_eq!(received.lines().count(), 1, "SIGTERMs: {received:?}");
}

/// Item 9. Garbage in the job hash's fields is refused naming key and field (exit 92), nothing
/// written; a negative fence never lets fencing tokens go back; a trim horizon in the future does
/// not silently answer every claim "trimmed".
#[test]
fn garbage_in_the_job_hash_is_refused_by_name() {
    let s = Server::start();
    let mut cases = vec![
        ("protect_ms", "1e3"),
        ("trimmed_to", "garbage"),
        ("trimmed_to", "99999999999999"),
        ("paused_until", "soon"),
    ];
    if Server::test_store_format() != 1 {
        cases.extend([
            ("fence", "garbage"),
            ("fence", "1e3"),
            ("fence", ""),
            ("fence", "-5"),
            ("first_seen", "x"),
        ]);
    }
    for (i, (field, value)) in cases.into_iter().enumerate() {
        let job = format!("g{i}");
        // The job exists in the store's format first.
        s.cli(&[
            "run",
            "--job",
            &job,
            "--slot",
            &SLOT.to_string(),
            "--",
            "true",
        ])
        .expect(0);
        let key = format!("{{cron:{job}}}:job");
        let _: () = s.cmd(&["HSET", &key, field, value]);
        let before = s.keys();
        let out = s.cli(&[
            "run",
            "--job",
            &job,
            "--slot",
            &(SLOT + 60_000).to_string(),
            "--",
            "true",
        ]);
        assert_eq!(out.code(), Some(92), "{field}={value:?}: {}", out.dump());
        let err = stderr(&out);
        assert!(
            err.contains(&key) && err.contains(field),
            "{field}={value:?}: {err}"
        );
        assert_eq!(s.keys(), before, "{field}={value:?}: something was written");
    }
}

/// The status a claim of a recorded skip answers: format 1 keeps it as a final `interrupted`
/// state (every format 1 reader knows it), format 2 answers from the `skipped` member.
fn skipped_status() -> &'static str {
    if Server::test_store_format() == 1 {
        "interrupted"
    } else {
        "skipped"
    }
}
