//! `anarchon run`: real processes racing, dying and being signalled against a real server.

use crate::common;
use std::collections::HashMap;
use std::process::{Child, Output};
use std::time::{Duration, Instant};

use crate::common::{Server, json, spawn_run, stderr, wait_for_claim};
use serde_json::Value;

const SLOT: &str = "1796220300000";

fn state(s: &Server, job: &str) -> HashMap<String, String> {
    s.state_map(job)
}

fn results(s: &Server, job: &str) -> Vec<Value> {
    let members: Vec<String> = s.cmd(&["ZRANGE", &format!("{{cron:{job}}}:results"), "0", "-1"]);
    members
        .iter()
        .map(|m| serde_json::from_str(m).unwrap())
        .collect()
}

fn run(s: &Server, args: &[&str]) -> Output {
    s.anarchon().arg("run").args(args).output().unwrap()
}

/// A command line that records its pid in `pidfile` and then sleeps.
pub(crate) fn sleeper(pidfile: &std::path::Path) -> String {
    format!("echo $$ > {}; exec sleep 30", pidfile.display())
}

/// kill -9 a runner and its command, as when their host dies.
pub(crate) fn kill_host(runner: Child, pidfile: &std::path::Path) {
    let pid = common::wait_for_line(pidfile);
    for pid in [runner.id(), pid.parse().unwrap()] {
        // The command may be gone already (its guard stops it once the runner is).
        let _ = common::signal("-KILL", pid);
    }
    let _ = runner.wait_with_output();
}

fn signal(child: &Child, sig: &str) {
    common::signal(sig, child.id()).unwrap();
}

/// What docs/store-format.md ("Trace context") says a run's `traceparent` is, derived here by
/// another implementation (Python's uuid module) from that page alone.
pub(crate) fn documented_traceparent(
    prefix: &str,
    job: &str,
    slot: &str,
    kind: &str,
    attempt: u32,
) -> String {
    let program = "import sys, uuid\n\
        ns = uuid.uuid5(uuid.NAMESPACE_URL, 'https://anarchon.invalid/trace')\n\
        run = sys.argv[1]\n\
        trace = uuid.uuid5(ns, run).hex\n\
        span = uuid.uuid5(ns, run + '\\n' + sys.argv[2]).hex[:16]\n\
        print('00-' + trace + '-' + span + '-01')";
    let run = format!("{prefix}{job}\n{slot}\n{kind}");
    let out = std::process::Command::new(common::python())
        .args(["-c", program, &run, &attempt.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// One trace per scheduled run across hosts (issue 51): the command on the host that won and the
/// command on the host that took the run over after it died each get `TRACEPARENT` in their
/// environment, with the slot's one trace ID and each attempt's own parent span, as every host
/// derives them (no host passed anything to the other), and a `TRACEPARENT` anarchon was started
/// with does not leak to the command.
#[test]
fn a_takeover_on_another_host_runs_in_the_same_trace() {
    let s = Server::start();
    let seen = |name: &str| s.dir.path().join(name);
    let pidfile = seen("winner.pid");
    let record = |file: &std::path::Path| format!("echo \"$TRACEPARENT\" > {}", file.display());
    let winner_line = format!("{}; {}", record(&seen("winner.tp")), sleeper(&pidfile));
    let mut winner = s.anarchon_process();
    winner
        .env(
            "TRACEPARENT",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        )
        .args([
            "run", "--job", "traced", "--slot", SLOT, "--lease", "1s", "--runner", "winner",
        ])
        .args(["--shell", "--", &winner_line])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let winner = winner.spawn().unwrap();
    wait_for_claim(&s, "traced", SLOT);
    let backup_line = record(&seen("backup.tp"));
    let backup = spawn_run(
        &s,
        &[
            "--job",
            "traced",
            "--slot",
            SLOT,
            "--lease",
            "1s",
            "--runner",
            "backup",
            "--backup-for",
            "20s",
            "--shell",
            "--",
            &backup_line,
        ],
    );
    common::wait_for_clients(&s, 3);
    kill_host(winner, &pidfile);
    let out = backup.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let read = |name: &str| {
        std::fs::read_to_string(seen(name))
            .unwrap()
            .trim()
            .to_string()
    };
    let (first, second) = (read("winner.tp"), read("backup.tp"));
    assert_eq!(
        first,
        documented_traceparent("cron:", "traced", SLOT, "scheduled", 1)
    );
    assert_eq!(
        second,
        documented_traceparent("cron:", "traced", SLOT, "scheduled", 2)
    );
    let trace_of = |tp: &str| tp.split('-').nth(1).unwrap().to_string();
    assert_eq!(trace_of(&first), trace_of(&second), "{first} / {second}");
    assert_ne!(first, second);
    assert!(
        !first.contains("0af7651916cd43dd8448eb211c80319c"),
        "{first}"
    );
    // `history --json` says where each attempt is traced: the slot's trace, the attempt's span.
    let history = s.cli(&["history", "traced", "--json"]).expect(0).json();
    let traced: Vec<(u64, String, String)> = history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["attempt"].as_u64().unwrap(),
                e["trace_id"].as_str().unwrap().to_string(),
                e["span_id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let parent_of = |tp: &str| tp.split('-').nth(2).unwrap().to_string();
    for (attempt, tp) in [(1, &first), (2, &second)] {
        assert!(
            traced.contains(&(attempt, trace_of(tp), parent_of(tp))),
            "attempt {attempt} ({tp}) in {traced:?}"
        );
    }
}

/// The `--on-failure` hook of a failed attempt gets the attempt's `TRACEPARENT`, the one its
/// command had (issue 51): a page or a chat message can link the failure to its trace. One
/// anarchon itself was started with reaches neither.
#[test]
fn the_failure_hook_is_in_the_failed_attempts_trace() {
    let s = Server::start();
    let seen = |name: &str| s.dir.path().join(name);
    let record = |file: &std::path::Path| format!("echo \"$TRACEPARENT\" > {}", file.display());
    let line = format!("{}; exit 3", record(&seen("command.tp")));
    let hook = record(&seen("hook.tp"));
    let out = s
        .anarchon_process()
        .env(
            "TRACEPARENT",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        )
        .args([
            "run",
            "--job",
            "hooked",
            "--slot",
            SLOT,
            "--on-failure",
            &hook,
        ])
        .args(["--shell", "--", &line])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let read = |name: &str| {
        std::fs::read_to_string(seen(name))
            .unwrap_or_else(|e| panic!("{name}: {e}\n{}", stderr(&out)))
            .trim()
            .to_string()
    };
    let expected = documented_traceparent("cron:", "hooked", SLOT, "scheduled", 1);
    assert_eq!(read("command.tp"), expected);
    assert_eq!(read("hook.tp"), expected);
}

#[test]
fn ten_concurrent_runs_of_one_slot_run_the_command_once() {
    let s = Server::start();
    let file = s.dir.path().join("ran.txt");
    let line = format!("echo \"$ANARCHON_RUNNER\" >> {}", file.display());
    let outputs = common::race(&s, 10, |_| {
        common::owned(&[
            "run", "--job", "once", "--slot", SLOT, "--shell", "--", &line,
        ])
    });
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    let codes = common::codes(&outputs);
    assert_eq!(codes.iter().filter(|c| **c == 0).count(), 1, "{codes:?}");
    assert!(codes.iter().all(|c| *c == 0 || *c == 81), "{codes:?}");
    let st = state(&s, "once");
    assert_eq!(st[&format!("{SLOT}:status")], "finished");
    assert_eq!(st[&format!("{SLOT}:runner")].as_str(), text.trim());
    assert_eq!(results(&s, "once").len(), 1);
}

#[test]
fn a_backup_takes_over_when_the_winner_is_killed() {
    let s = Server::start();
    let file = s.dir.path().join("attempt.txt");
    let pidfile = s.dir.path().join("winner.pid");
    let winner = spawn_run(
        &s,
        &[
            "--job",
            "k",
            "--slot",
            SLOT,
            "--lease",
            "1s",
            "--runner",
            "winner",
            "--shell",
            "--",
            &sleeper(&pidfile),
        ],
    );
    wait_for_claim(&s, "k", SLOT);
    let line = format!("echo $ANARCHON_ATTEMPT > {}", file.display());
    let backup = spawn_run(
        &s,
        &[
            "--job",
            "k",
            "--slot",
            SLOT,
            "--lease",
            "1s",
            "--runner",
            "backup",
            "--backup-for",
            "20s",
            "--json",
            "--shell",
            "--",
            &line,
        ],
    );
    // The winner, the backup and this test's own client.
    common::wait_for_clients(&s, 3);
    kill_host(winner, &pidfile);

    let out = backup.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["outcome"], "ran");
    assert_eq!(v["backup"], true);
    assert_eq!(v["attempt"], 2);
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), "2");
    let st = state(&s, "k");
    assert_eq!(st[&format!("{SLOT}:status")], "finished");
    assert_eq!(st[&format!("{SLOT}:attempt")], "2");
    assert_eq!(st[&format!("{SLOT}:runner")], "backup");
    let attempts = s.ended_attempts("k");
    let attempts: Vec<(&str, &str, &str)> = attempts
        .iter()
        .map(|(a, r, st)| (a.as_str(), r.as_str(), st.as_str()))
        .collect();
    assert_eq!(
        attempts,
        vec![("1", "winner", "interrupted"), ("2", "backup", "finished")]
    );
}

#[test]
fn with_attempts_exhausted_a_killed_run_ends_interrupted() {
    let s = Server::start();
    let args = [
        "--job",
        "k",
        "--slot",
        SLOT,
        "--lease",
        "1s",
        "--max-attempts",
        "1",
    ];
    let pidfile = s.dir.path().join("winner.pid");
    let line = sleeper(&pidfile);
    let winner = spawn_run(&s, &[&args[..], &["--shell", "--", &line]].concat());
    wait_for_claim(&s, "k", SLOT);
    let backup = spawn_run(
        &s,
        &[&args[..], &["--backup-for", "20s", "--json", "--", "true"]].concat(),
    );
    common::wait_for_clients(&s, 3);
    kill_host(winner, &pidfile);
    let out = backup.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(81), "{}", stderr(&out));
    assert_eq!(json(&out)["status"], "interrupted");
    assert_eq!(state(&s, "k")[&format!("{SLOT}:status")], "interrupted");
    assert!(s.in_progress("k").is_empty());
}

#[test]
fn a_live_holder_keeps_its_lease_with_heartbeats() {
    let s = Server::start();
    let holder = spawn_run(
        &s,
        &[
            "--job", "hb", "--slot", SLOT, "--lease", "1s", "--json", "--", "sleep", "3.5",
        ],
    );
    wait_for_claim(&s, "hb", SLOT);
    // Well past the first lease (by the server's clock): a claim still finds the run held by
    // attempt 1.
    let claimed_at: i64 = state(&s, "hb")[&format!("{SLOT}:claimed_at")]
        .parse()
        .unwrap();
    common::wait_for_server_time(&s, claimed_at + 2000);
    let out = s
        .anarchon()
        .args(["claim", "hb", "--slot", SLOT, "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(82), "{}", stderr(&out));
    assert_eq!(json(&out)["attempt"], 1);
    let out = holder.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(state(&s, "hb")[&format!("{SLOT}:status")], "finished");
}

#[test]
fn exit_codes_and_signals_of_the_command_are_passed_on_and_recorded() {
    let s = Server::start();
    let out = run(
        &s,
        &[
            "--job",
            "a",
            "--slot",
            "1000",
            "--",
            "sh",
            "-c",
            "echo oops >&2; exit 7",
        ],
    );
    assert_eq!(out.status.code(), Some(7));
    assert!(stderr(&out).contains("oops"), "stderr passes through");
    let r = &results(&s, "a")[0];
    assert_eq!(r["status"], "failed");
    assert_eq!(r["result"]["exit_code"], 7);
    assert_eq!(r["result"]["stderr_tail"], "oops\n");
    assert!(r["result"]["duration_ms"].is_u64());

    let out = run(
        &s,
        &[
            "--job",
            "b",
            "--slot",
            "1000",
            "--",
            "sh",
            "-c",
            "kill -9 $$",
        ],
    );
    assert_eq!(out.status.code(), Some(137));
    let r = &results(&s, "b")[0];
    assert_eq!(r["result"]["signal"], 9);
    assert_eq!(r["result"]["exit_code"], Value::Null);

    let out = run(
        &s,
        &["--job", "c", "--slot", "1000", "--", "/nonexistent/program"],
    );
    assert_eq!(out.status.code(), Some(127));
    assert!(stderr(&out).contains("cannot run"), "{}", stderr(&out));
    let r = &results(&s, "c")[0];
    assert_eq!(r["status"], "failed");
    assert!(r["result"]["spawn_error"].is_string());

    // Success: stdin and stdout pass through, the run is finished.
    let out = s
        .anarchon()
        .args(["run", "--job", "d", "--slot", "1000", "--", "cat"])
        .write_stdin("hello\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hello\n");
    assert_eq!(results(&s, "d")[0]["status"], "finished");
    assert_eq!(results(&s, "d")[0]["result"]["exit_code"], 0);
}

#[test]
fn long_stderr_keeps_only_its_last_four_kib() {
    let s = Server::start();
    let out = run(
        &s,
        &[
            "--job",
            "t",
            "--slot",
            "1000",
            "--shell",
            "--",
            "head -c 10000 /dev/zero | tr '\\0' a >&2; echo END >&2",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let tail = results(&s, "t")[0]["result"]["stderr_tail"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(tail.len(), 4096);
    assert!(tail.ends_with("aEND\n"));
}

#[test]
fn sigterm_is_forwarded_and_recorded() {
    let s = Server::start();
    let pidfile = s.dir.path().join("sig.pid");
    let child = spawn_run(
        &s,
        &[
            "--job",
            "sig",
            "--slot",
            SLOT,
            "--shell",
            "--",
            &sleeper(&pidfile),
        ],
    );
    wait_for_claim(&s, "sig", SLOT);
    common::wait_for_line(&pidfile);
    let start = Instant::now();
    signal(&child, "-TERM");
    let out = child.wait_with_output().unwrap();
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    let r = &results(&s, "sig")[0];
    assert_eq!(r["status"], "failed");
    assert_eq!(r["result"]["signal"], 15);
}

#[test]
fn timeout_stops_the_command() {
    let s = Server::start();
    let start = Instant::now();
    let out = run(
        &s,
        &[
            "--job",
            "slow",
            "--slot",
            SLOT,
            "--timeout",
            "500ms",
            "--kill-after",
            "1s",
            "--",
            "sleep",
            "30",
        ],
    );
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(124), "{}", stderr(&out));
    assert!(stderr(&out).contains("--timeout"));
    let r = &results(&s, "slow")[0];
    assert_eq!(r["status"], "failed");
    assert_eq!(r["result"]["timed_out"], true);

    // A command that ignores SIGTERM is killed after --kill-after.
    let out = run(
        &s,
        &[
            "--job",
            "stubborn",
            "--slot",
            SLOT,
            "--timeout",
            "300ms",
            "--kill-after",
            "500ms",
            "--shell",
            "--",
            "trap '' TERM; sleep 30",
        ],
    );
    assert_eq!(out.status.code(), Some(124));
    assert!(start.elapsed() < Duration::from_secs(15));
}

#[test]
fn overlap_is_skipped_unless_allowed() {
    let s = Server::start();
    let out = s
        .anarchon()
        .args(["claim", "ov", "--slot", "60000", "--lease", "1m"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let file = s.dir.path().join("ov.txt");
    let touch = format!("touch {}", file.display());
    let out = run(
        &s,
        &[
            "--job", "ov", "--slot", "120000", "--json", "--shell", "--", &touch,
        ],
    );
    assert_eq!(out.status.code(), Some(80));
    assert_eq!(json(&out)["outcome"], "overlap");
    assert!(!file.exists());
    // (The refused slot is recorded skipped: a_slot_refused_by_overlap_is_recorded_skipped...)
    let out = run(
        &s,
        &[
            "--job",
            "ov",
            "--slot",
            "180000",
            "--overlap",
            "allow",
            "--shell",
            "--",
            &touch,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(file.exists());
}

#[test]
fn no_backup_exits_at_once_when_the_run_is_held() {
    let s = Server::start();
    let out = s
        .anarchon()
        .args(["claim", "nb", "--slot", SLOT, "--lease", "1m"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let start = Instant::now();
    let out = run(
        &s,
        &["--job", "nb", "--slot", SLOT, "--no-backup", "--", "true"],
    );
    assert_eq!(out.status.code(), Some(82));
    assert!(start.elapsed() < Duration::from_secs(3));
    // --skipped-ok: another host has it, and that is fine for monitoring.
    let out = run(
        &s,
        &[
            "--job",
            "nb",
            "--slot",
            SLOT,
            "--no-backup",
            "--skipped-ok",
            "--json",
            "--",
            "true",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["outcome"], "running");
    assert_eq!(json(&out)["exit_code"], 0);
    // A backup gives up after --backup-for while the holder lives.
    let out = run(
        &s,
        &[
            "--job",
            "nb",
            "--slot",
            SLOT,
            "--backup-for",
            "500ms",
            "--json",
            "--",
            "true",
        ],
    );
    assert_eq!(out.status.code(), Some(82));
    assert_eq!(json(&out)["backup"], true);
}

#[test]
fn a_lost_lease_stops_the_command_by_default() {
    let s = Server::start();
    let child = spawn_run(
        &s,
        &[
            "--job",
            "lost",
            "--slot",
            SLOT,
            "--lease",
            "900ms",
            "--kill-after",
            "1s",
            "--",
            "sleep",
            "30",
        ],
    );
    wait_for_claim(&s, "lost", SLOT);
    // Another runner took the run over (as if our lease had expired unnoticed).
    s.steal_run("lost", SLOT, "someone-else");
    let start = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("lease lost"), "{err}");
    assert!(err.contains("not recorded"), "{err}");
    // The new holder's run is untouched.
    assert_eq!(state(&s, "lost")[&format!("{SLOT}:status")], "running");
    assert_eq!(s.cmd::<i64>(&["EXISTS", "{cron:lost}:results"]), 0);
}

#[test]
fn on_lease_lost_continue_lets_the_command_finish() {
    let s = Server::start();
    let child = spawn_run(
        &s,
        &[
            "--job",
            "cont",
            "--slot",
            SLOT,
            "--lease",
            "600ms",
            "--on-lease-lost",
            "continue",
            "--",
            "sleep",
            "1.5",
        ],
    );
    wait_for_claim(&s, "cont", SLOT);
    s.steal_run("cont", SLOT, "someone-else");
    let out = child.wait_with_output().unwrap();
    // The command succeeded, but its end could not be recorded: lease lost.
    assert_eq!(out.status.code(), Some(83), "{}", stderr(&out));
    assert!(stderr(&out).contains("keeps running"));
}

#[test]
fn a_server_stopped_mid_run_means_a_lost_lease_and_nothing_hangs() {
    let mut s = Server::start();
    let child = spawn_run(
        &s,
        &[
            "--job",
            "down",
            "--slot",
            SLOT,
            "--lease",
            "1s",
            "--kill-after",
            "1s",
            "--command-timeout",
            "1s",
            "--connect-timeout",
            "1s",
            "--",
            "sleep",
            "30",
        ],
    );
    wait_for_claim(&s, "down", SLOT);
    s.stop();
    let start = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "took {:?}",
        start.elapsed()
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(
        err.contains("lease lost") && err.contains("could not be reached"),
        "{err}"
    );
    assert!(err.contains("not recorded"), "{err}");
}

#[test]
fn a_scheduled_slot_comes_from_the_server_clock() {
    let s = Server::start();
    let before = s.now_ms();
    let out = run(
        &s,
        &[
            "--job",
            "sch",
            "--schedule",
            "* * * * *",
            "--json",
            "--",
            "true",
        ],
    );
    let after = s.now_ms();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let slot = json(&out)["slot"].as_i64().unwrap();
    assert!(slot == before - before % 60_000 || slot == after - after % 60_000);

    // Under faketime, a host 90 s off picks the same slot.
    if common::skewed_anarchon("+0").is_none() {
        assert!(
            !crate::common::nothing_may_be_skipped(),
            ".ci/run must install faketime"
        );
        return;
    }
    for skew in ["-90s", "+90s"] {
        let before = s.now_ms();
        let out = common::skewed_anarchon(skew)
            .unwrap()
            .args([
                "run",
                "--job",
                &format!("skew{skew}"),
                "--schedule",
                "* * * * *",
                "--json",
            ])
            .args(["--redis", &s.url, "--", "true"])
            .output()
            .unwrap();
        let after = s.now_ms();
        assert_eq!(out.status.code(), Some(0), "{skew}: {}", stderr(&out));
        let slot = json(&out)["slot"].as_i64().unwrap();
        assert!(
            slot == before - before % 60_000 || slot == after - after % 60_000,
            "{skew}: slot {slot}, server {before}"
        );
    }
}

#[test]
fn a_slot_older_than_max_late_is_not_run() {
    let s = Server::start();
    // Midnight on January 1st is always more than a minute ago, except for one minute a year.
    let out = run(
        &s,
        &[
            "--job",
            "late",
            "--schedule",
            "0 0 1 1 *",
            "--max-late",
            "1m",
            "--json",
            "--",
            "true",
        ],
    );
    use chrono::{Datelike, Timelike};
    let now = chrono::Utc::now();
    let new_year = now.month() == 1 && now.day() == 1 && now.hour() == 0 && now.minute() < 2;
    if !new_year {
        assert_eq!(out.status.code(), Some(84), "{}", stderr(&out));
        assert_eq!(json(&out)["outcome"], "too_late");
        assert!(s.runs("late").is_empty());
    }
}

#[test]
fn catch_up_runs_every_unclaimed_slot_once() {
    let s = Server::start();
    let file = s.dir.path().join("slots.txt");
    let line = format!("echo $ANARCHON_SLOT >> {}", file.display());
    let args = [
        "--job",
        "cu",
        "--schedule",
        "*/10 * * * *",
        "--catch-up",
        "1h",
        "--json",
        "--shell",
        "--",
        &line,
    ];
    // The expected slots are computed from the clock before the run: not within seconds of a */10
    // fire time, where the run's own clock (read a moment later) would see another window.
    common::wait_for(
        "a moment away from a */10 fire time",
        std::time::Duration::from_secs(15),
        || (5_000..595_000).contains(&(s.now_ms() % 600_000)),
    );
    let now = s.now_ms();
    // The store first saw the job two hours ago (a first deployment catches up nothing).
    let _: () = s.cmd(&[
        "HSET",
        "{cron:cu}:job",
        "first_seen",
        &(now - 7_200_000).to_string(),
    ]);
    let out = run(&s, &args);
    assert!(out.status.code() == Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&file).unwrap();
    let slots: Vec<i64> = text.lines().map(|l| l.parse().unwrap()).collect();
    // Every */10 slot in the last hour, oldest first, each once.
    let newest = now - now % 600_000;
    let expected: Vec<i64> = (0..6)
        .rev()
        .map(|i| newest - i * 600_000)
        .filter(|t| *t > now - 3_600_000)
        .collect();
    assert_eq!(slots, expected);
    let v = json(&out);
    assert_eq!(v["catch_up"].as_array().unwrap().len(), expected.len() - 1);

    // Run again: everything is claimed, nothing runs twice.
    let out = run(&s, &args);
    assert!(
        matches!(out.status.code(), Some(81) | Some(84)),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn usage_errors_are_caught_before_anything_runs() {
    let url = format!("redis://127.0.0.1:{}", common::dead_port());
    for args in [
        vec!["run", "--job", "x", "--", "true"],
        vec!["run", "--job", "x", "--slot", "now"],
        vec![
            "run",
            "--job",
            "x",
            "--schedule",
            "61 * * * *",
            "--",
            "true",
        ],
        vec![
            "run",
            "--job",
            "x",
            "--schedule",
            "* * * * *",
            "--tz",
            "Nowhere/City",
            "--",
            "true",
        ],
        vec![
            "run",
            "--job",
            "x",
            "--slot",
            "now",
            "--lease",
            "1s",
            "--heartbeat",
            "2s",
            "--",
            "true",
        ],
        vec![
            "run",
            "--job",
            "x",
            "--slot",
            "now",
            "--catch-up",
            "1h",
            "--",
            "true",
        ],
        vec!["run", "--job", "{x}", "--slot", "now", "--", "true"],
    ] {
        let out = common::anarchon()
            .args(["--redis", &url])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_successful_run_records_only_what_says_something() {
    let s = Server::start();
    let out = run(&s, &["--job", "lean", "--slot", SLOT, "--", "true"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = &results(&s, "lean")[0];
    let result = r["result"].as_object().unwrap();
    let keys: Vec<&str> = result.keys().map(String::as_str).collect();
    // No runner, attempt (the member has them) and no false/null/empty fields.
    assert_eq!(keys, vec!["duration_ms", "exit_code"], "{result:?}");
    assert_eq!(result["exit_code"], 0);
}

/// Under --json stdout is one JSON document: the command's own stdout goes to stderr, so that
/// `run --json | jq` parses (it failed on the command's lines before).
#[test]
fn run_json_keeps_the_document_apart_from_the_command_output() {
    let s = Server::start();
    let out = s.cli(&[
        "run",
        "--job",
        "j",
        "--slot",
        "now",
        "--json",
        "--shell",
        "--",
        "echo from-stdout; echo from-stderr >&2",
    ]);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {}", out.dump()));
    assert_eq!(doc["status"], "finished");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("from-stdout") && err.contains("from-stderr"),
        "{err}"
    );
}

/// A scheduled slot refused by `--overlap forbid` is recorded as skipped, with the run that held
/// the job: history shows it, and no host runs it later (it is decided, not missed).
#[test]
fn a_slot_refused_by_overlap_is_recorded_skipped_and_never_run_later() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("ran");
    let release = dir.path().join("release");
    let minute = s.now_ms() / 60_000 * 60_000;
    let (older, newer) = (
        (minute - 120_000).to_string(),
        (minute - 60_000).to_string(),
    );
    let line = format!(
        "echo $ANARCHON_SLOT >> {}; while [ ! -f {} ]; do sleep 0.05; done",
        log.display(),
        release.display()
    );
    let mut holder = common::spawn_run(
        &s,
        &[
            "--job",
            "ov",
            "--slot",
            &older,
            "--max-late",
            "1h",
            "--runner",
            "holder:1",
            "--shell",
            "--",
            &line,
        ],
    );
    common::wait_for_line(&log);
    // A run of the newer slot, as every host's crontab line sends it.
    let run_newer = || {
        s.cli(&[
            "run",
            "--job",
            "ov",
            "--slot",
            &newer,
            "--max-late",
            "1h",
            "--json",
            "--shell",
            "--",
            &line,
        ])
    };
    let out = run_newer();
    assert_eq!(out.code(), Some(80), "{}", out.dump());
    assert_eq!(out.json()["skip_recorded"], true, "{}", out.dump());
    std::fs::write(&release, "").unwrap();
    assert!(holder.wait().unwrap().success());

    let history = s
        .cli(&["history", "ov", "--status", "skipped", "--json"])
        .expect(0)
        .json();
    let entries = history["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{history}");
    assert_eq!(entries[0]["slot"].to_string(), newer);
    let reason = entries[0]["result"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("--overlap forbid") && reason.contains("holder:1"),
        "{reason}"
    );
    // Once the older run ended, the refused slot is decided: nobody runs it.
    let out = run_newer();
    assert_eq!(out.code(), Some(81), "{}", out.dump());
    let ran = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        ran.lines().collect::<Vec<_>>(),
        vec![older.as_str()],
        "{ran}"
    );
}

/// The README's crontab recipe under cron's own environment: `PATH=/usr/bin:/bin`, no variable of
/// a login shell, no terminal. With the binary's full path and the connection in the crontab's
/// environment line, the slot runs and anarchon prints nothing of its own (so cron mails only the
/// command's output); with a line naming no server it names the address it tried and exits 90.
#[test]
fn the_crontab_recipe_works_in_cron_s_environment() {
    let s = Server::start();
    let password = s.dir.path().join("redis.pass");
    std::fs::write(&password, "\n").unwrap();
    // A file only its user can read, as the recipe says (else anarchon warns, and cron mails it).
    std::fs::set_permissions(
        &password,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let cron = |url: Option<&str>| -> Output {
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", s.dir.path())
            .env("SHELL", "/bin/sh")
            .current_dir(s.dir.path())
            .stdin(std::process::Stdio::null())
            .arg("-c")
            .arg(format!(
                "{} run --job sync --schedule '* * * * *' --max-late 1h --password-file {} -- echo synced",
                common::anarchon_path().display(),
                password.display()
            ));
        if let Some(url) = url {
            cmd.env("ANARCHON_REDIS_URL", url);
        }
        cmd.output().unwrap()
    };
    let out = cron(Some(&s.url));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "synced\n");
    assert_eq!(stderr(&out), "", "cron would mail this");
    // A second host's line for the same slot: nothing runs, nothing printed, exit 81.
    let out = cron(Some(&s.url));
    assert_eq!(out.status.code(), Some(81), "{}", stderr(&out));
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "{}",
        stderr(&out)
    );
    // A line that names no server listening (a typo): the address, named, and exit 90. (Not the
    // line left out: that is localhost:6379, which may be a real server on this machine.)
    let url = format!("redis://127.0.0.1:{}", common::dead_port());
    let out = cron(Some(&url));
    assert_eq!(out.status.code(), Some(90), "{}", stderr(&out));
    assert!(stderr(&out).contains(&url), "{}", stderr(&out));
}

/// `run --on-failure CMD`: after a failed attempt, only the host that ran it runs CMD, with the
/// run's facts in its environment and the stderr tail in a file; a hook that fails or hangs is
/// reported and bounded, and never changes the run's exit code. A run that succeeds runs no hook.
#[test]
fn on_failure_notifies_once_from_the_host_that_ran_the_attempt() {
    let s = Server::start();
    let log = s.dir.path().join("notified");
    let hook = format!(
        "echo \"$ANARCHON_JOB $ANARCHON_SLOT $ANARCHON_STATUS $ANARCHON_EXIT_CODE $ANARCHON_RUNNER $(tail -n 1 \"$ANARCHON_STDERR_TAIL\")\" >> {}",
        log.display()
    );
    let command = "echo working >&2; sleep 0.5; echo disk full >&2; exit 3";
    let hosts: Vec<_> = ["host-a:1", "host-b:2"]
        .iter()
        .map(|runner| {
            spawn_run(
                &s,
                &[
                    "--job",
                    "n",
                    "--slot",
                    "60000",
                    "--runner",
                    runner,
                    "--no-backup",
                    "--on-failure",
                    &hook,
                    "--",
                    "sh",
                    "-c",
                    command,
                ],
            )
        })
        .collect();
    let codes: Vec<(&str, i32)> = ["host-a:1", "host-b:2"]
        .into_iter()
        .zip(hosts)
        .map(|(runner, h)| (runner, h.wait_with_output().unwrap().status.code().unwrap()))
        .collect();
    let mut sorted: Vec<i32> = codes.iter().map(|(_, c)| *c).collect();
    sorted.sort();
    assert_eq!(
        sorted,
        vec![3, 82],
        "the runner's code and the loser's: {codes:?}"
    );
    // The host that ran the attempt: exit 3 is its command's, and the store says so too.
    let ran = codes.iter().find(|(_, c)| *c == 3).unwrap().0;
    assert_eq!(
        s.ended_attempts("n"),
        vec![("1".into(), ran.to_string(), "failed".into())],
        "{codes:?}"
    );
    let lines = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = lines.lines().collect();
    assert_eq!(lines.len(), 1, "notified once: {lines:?}");
    let fields: Vec<&str> = lines[0].splitn(6, ' ').collect();
    assert_eq!(&fields[..4], &["n", "60000", "failed", "3"], "{lines:?}");
    assert_eq!(
        fields[4], ran,
        "the hook ran on the host that ran the attempt: {lines:?}"
    );
    assert_eq!(fields[5], "disk full", "{lines:?}");

    // A hook that fails, and one that hangs past its timeout: said, bounded, the code unchanged.
    let out = run(
        &s,
        &[
            "--job",
            "n",
            "--slot",
            "120000",
            "--on-failure",
            "exit 9",
            "--",
            "sh",
            "-c",
            "exit 4",
        ],
    );
    assert_eq!(out.status.code(), Some(4));
    assert!(
        stderr(&out).contains("--on-failure ended with"),
        "{}",
        stderr(&out)
    );
    let started = Instant::now();
    let out = run(
        &s,
        &[
            "--job",
            "n",
            "--slot",
            "180000",
            "--on-failure",
            "sleep 30",
            "--on-failure-timeout",
            "300ms",
            "--",
            "false",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("was killed"), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(20));
    // Success: no hook.
    run(
        &s,
        &[
            "--job",
            "n",
            "--slot",
            "240000",
            "--on-failure",
            &hook,
            "--",
            "true",
        ],
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
}

/// Under a parent that adopts orphans and never reaps them (a shell as PID 1 in a container:
/// here a child subreaper that never waits), `anarchon run` leaves no `<defunct>` process behind:
/// its guard is its own child, reaped when the command is done (#35, item 7). Five runs.
#[test]
fn runs_leave_no_zombie_under_a_parent_that_does_not_reap() {
    if !common::have(&crate::common::python()) {
        return common::skip("python3 is needed to play a PID 1 that does not reap");
    }
    let s = Server::start();
    let script = r#"
import ctypes, os, subprocess, sys, time
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
for i in range(5):
    subprocess.run(sys.argv[1:] + ["--slot", str(1000 + i), "--", "true"], check=True)
time.sleep(0.5)
me = str(os.getpid())
zombies = []
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        continue
    fields = stat.rsplit(")", 1)[1].split()
    if fields[1] == me and fields[0] == "Z":
        zombies.append(stat.split(" ", 2)[1])
print(len(zombies), " ".join(zombies))
"#;
    let out = std::process::Command::new(crate::common::python())
        .arg("-c")
        .arg(script)
        .arg(common::anarchon_path())
        .args(["--redis", &s.url, "run", "--job", "reap"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    let report = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(report.starts_with("0 "), "zombies left: {report}");
}

/// A schedule that matches no time at all reads the same in `run` and in `cron --check`, with
/// what to check (issue 62 item 5: "has never fired before now" in one, "never fires" in the
/// other).
#[test]
fn a_schedule_that_never_fires_is_said_alike_by_run_and_cron_check() {
    let s = Server::start();
    let out = s.cli(&[
        "run",
        "--job",
        "feb",
        "--schedule",
        "0 0 31 2 *",
        "--",
        "true",
    ]);
    let run_said = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crontab");
    std::fs::write(&file, "0 0 31 2 * true\n").unwrap();
    let out = common::anarchon()
        .args(["cron", "--check", file.to_str().unwrap()])
        .output()
        .unwrap();
    let check_said = String::from_utf8_lossy(&out.stderr).to_string();
    for said in [&run_said, &check_said] {
        assert!(
            said.contains("the schedule \"0 0 31 2 *\" never fires")
                && said.contains("hint: check its day-of-month"),
            "{said}"
        );
    }
}
