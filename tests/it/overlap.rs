//! `run --overlap replace` and `--overlap buffer`: several hosts (processes) run the newer slot of
//! a job while an older run still holds it. The wrapped commands' own logs (each slot's ticker) are
//! the ground truth: never two copies at once, and the newer slot runs once.

use crate::common;
use std::path::Path;
use std::process::Child;
use std::time::Duration;

use crate::common::Server;
use crate::common::ticker::{assert_no_two_spans_overlap, spans_of, ticker_as};

/// `anarchon run` of `slot` on one host, with a short lease so that a release is heard quickly.
fn run_args<'a>(slot: &'a str, policy: &'a str, runner: &'a str, line: &'a str) -> Vec<&'a str> {
    vec![
        "--job",
        "ov",
        "--slot",
        slot,
        "--max-late",
        "1h",
        "--lease",
        "3s",
        "--overlap",
        policy,
        "--runner",
        runner,
        "--json",
        "--shell",
        "--",
        line,
    ]
}

/// Two slots a minute apart, both in the past: the older and the newer run of the job.
fn two_slots(s: &Server) -> (String, String) {
    let minute = s.now_ms() / 60_000 * 60_000;
    (
        (minute - 120_000).to_string(),
        (minute - 60_000).to_string(),
    )
}

/// Three slots a minute apart, all in the past: the older run, the newer slot, a third.
fn three_slots(s: &Server) -> (String, String, String) {
    let minute = s.now_ms() / 60_000 * 60_000;
    (
        (minute - 180_000).to_string(),
        (minute - 120_000).to_string(),
        (minute - 60_000).to_string(),
    )
}

/// A command that ticks into `log` until the file `go` exists.
fn ticks_until(go: &Path, log: &Path) -> String {
    format!(
        "copy=$$.$(date +%s%3N); while [ ! -f {go} ]; do echo \"$ANARCHON_SLOT $copy $(date +%s%3N)\" >> {log}; sleep 0.05; done",
        go = go.display(),
        log = log.display()
    )
}

fn wait_for_ticks(log: &Path, slot: &str) {
    common::wait_for(
        &format!("slot {slot}'s command to start"),
        Duration::from_secs(10),
        || spans_of::<i64>(log).contains_key(&slot.parse().unwrap()),
    );
}

fn json_of(child: std::process::Output) -> (i32, serde_json::Value) {
    let doc = serde_json::from_slice(&child.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON document ({e}): {} / {}",
            String::from_utf8_lossy(&child.stdout),
            String::from_utf8_lossy(&child.stderr)
        )
    });
    (child.status.code().unwrap_or(-1), doc)
}

/// replace: the newer slot's hosts release the older run; its holder stops the command and
/// records the attempt interrupted, "replaced by" the newer slot; then exactly one host runs the
/// newer slot, after the older command has stopped.
#[test]
fn replace_stops_the_older_run_before_one_host_runs_the_newer_slot() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("ticks");
    let (older, newer) = two_slots(&s);
    let long = ticker_as(&log, "$ANARCHON_SLOT", 120_000, false);
    let short = ticker_as(&log, "$ANARCHON_SLOT", 600, false);
    // Its --on-failure hook must stay quiet: being replaced is the policy at work, not a failure.
    let hook = dir.path().join("hook-ran");
    let hook_line = format!("touch {}", hook.display());
    let mut holder_args = run_args(&older, "forbid", "old-host:1", &long);
    holder_args.splice(0..0, ["--on-failure", hook_line.as_str()]);
    let holder = common::spawn_run(&s, &holder_args);
    wait_for_ticks(&log, &older);

    let hosts: Vec<_> = (1..=3)
        .map(|i| {
            let runner = format!("new-host:{i}");
            common::spawn_run(&s, &run_args(&newer, "replace", &runner, &short))
        })
        .collect();
    let results: Vec<_> = hosts
        .into_iter()
        .map(|h| json_of(h.wait_with_output().unwrap()))
        .collect();
    let holder = holder.wait_with_output().unwrap();

    // The older run's holder heard the release, stopped its command and recorded it.
    let (_, old_doc) = json_of(holder);
    assert_eq!(old_doc["status"], "interrupted", "{old_doc}");
    assert!(!hook.exists(), "the replaced run's hook ran");
    let old_results: Vec<_> = s
        .results("ov")
        .into_iter()
        .filter(|r| r.slot.to_string() == older)
        .collect();
    assert_eq!(old_results.len(), 1, "{old_results:?}");
    assert_eq!(old_results[0].status, "interrupted", "{old_results:?}");
    let history = s.cli(&["history", "ov", "--json"]).expect(0).json();
    let old_entry = history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["slot"].as_i64() == older.parse().ok())
        .unwrap_or_else(|| panic!("{history}"));
    let reason = old_entry["result"]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("replaced by"), "{old_entry}");
    assert_eq!(
        old_entry["result"]["replaced_by"].to_string(),
        newer,
        "{old_entry}"
    );
    // Neither does inspect's "failed" line: being replaced is no failure.
    let shown = s.cli(&["inspect", "ov"]).expect(0);
    let shown = String::from_utf8_lossy(&shown.stdout).to_string();
    assert!(!shown.contains("\nfailed "), "{shown}");
    // Metrics tell a replaced run from one interrupted by trouble.
    let metrics = s.cli(&["metrics"]).expect(0);
    let metrics = String::from_utf8_lossy(&metrics.stdout).to_string();
    assert!(
        metrics.contains(r#"anarchon_job_recent_runs{job="ov",status="replaced"} 1"#),
        "{metrics}"
    );

    // One host ran the newer slot; the others stood by and found it done.
    let ran: Vec<_> = results
        .iter()
        .filter(|(_, d)| d["outcome"] == "ran")
        .collect();
    assert_eq!(ran.len(), 1, "{results:?}");
    assert_eq!(ran[0].0, 0, "{results:?}");
    assert_eq!(ran[0].1["overlap"]["policy"], "replace", "{results:?}");
    assert_eq!(ran[0].1["overlap"]["older_slot"].to_string(), older);
    for (code, doc) in results.iter().filter(|(_, d)| d["outcome"] != "ran") {
        assert!(
            doc["outcome"] == "done" && *code == 81,
            "a loser of the newer slot: {code} {doc}"
        );
    }
    // What the commands did: the older stopped long before its 120 s, then the newer ran once.
    let spans = assert_no_two_spans_overlap::<i64>(&log);
    let (old_span, new_span) = (
        spans[&older.parse::<i64>().unwrap()],
        spans[&newer.parse::<i64>().unwrap()],
    );
    assert!(old_span.1 < new_span.0, "{spans:?}");
    assert!(old_span.1 - old_span.0 < 60_000, "{spans:?}");
}

/// buffer: the newer slot's hosts wait while the older run goes on; a third slot that finds one
/// waiting is recorded skipped; when the older run ends, exactly one host runs the newer slot.
#[test]
fn buffer_runs_the_waiting_slot_once_when_the_older_run_ends_and_skips_a_third() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("ticks");
    let go = dir.path().join("go");
    let (older, newer, third) = three_slots(&s);
    // The older run ticks until the test lets it end.
    let held = ticks_until(&go, &log);
    let short = ticker_as(&log, "$ANARCHON_SLOT", 600, false);
    let holder = common::spawn_run(&s, &run_args(&older, "buffer", "old-host:1", &held));
    wait_for_ticks(&log, &older);

    let hosts: Vec<_> = (1..=2)
        .map(|i| {
            let runner = format!("new-host:{i}");
            common::spawn_run(&s, &run_args(&newer, "buffer", &runner, &short))
        })
        .collect();
    common::wait_for(
        "the newer slot to take the waiting place",
        Duration::from_secs(10),
        || {
            let place: Option<String> = s.cmd(&["HGET", "{cron:ov}:job", "buffered"]);
            place.is_some_and(|p| p.starts_with(&format!("{newer}:")))
        },
    );
    // On-call sees who waits, and until when.
    let detail = s.cli(&["inspect", "ov", "--json"]).expect(0).json();
    assert_eq!(detail["waiting"]["slot"].to_string(), newer, "{detail}");
    let shown = s.cli(&["inspect", "ov"]).expect(0);
    assert!(
        String::from_utf8_lossy(&shown.stdout).contains("waiting  the run of"),
        "{}",
        shown.dump()
    );
    // A third slot while one waits: skipped, and recorded so.
    let out = s.cli(
        &[
            &["run"][..],
            &run_args(&third, "buffer", "late-host:1", &short),
        ]
        .concat(),
    );
    let (code, doc) = (out.code(), out.json());
    assert_eq!(code, Some(80), "{doc}");
    assert_eq!(doc["skip_recorded"], true, "{doc}");
    let reason = doc["skip_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("already waits"), "{doc}");

    std::fs::write(&go, "").unwrap();
    let results: Vec<_> = hosts
        .into_iter()
        .map(|h| json_of(h.wait_with_output().unwrap()))
        .collect();
    assert!(holder.wait_with_output().unwrap().status.success());
    let ran: Vec<_> = results
        .iter()
        .filter(|(_, d)| d["outcome"] == "ran")
        .collect();
    assert_eq!(ran.len(), 1, "{results:?}");
    assert_eq!(ran[0].0, 0, "{results:?}");
    assert_eq!(ran[0].1["overlap"]["policy"], "buffer", "{results:?}");
    let spans = assert_no_two_spans_overlap::<i64>(&log);
    assert_eq!(spans.len(), 2, "the third slot never ran: {spans:?}");
    assert!(
        spans[&older.parse::<i64>().unwrap()].1 < spans[&newer.parse::<i64>().unwrap()].0,
        "{spans:?}"
    );
    // The place is given up, and history tells the story.
    let place: Option<String> = s.cmd(&["HGET", "{cron:ov}:job", "buffered"]);
    assert_eq!(place, None);
    let history = s
        .cli(&["history", "ov", "--status", "skipped", "--json"])
        .expect(0)
        .json();
    let skipped = history["entries"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{history}");
    assert_eq!(skipped[0]["slot"].to_string(), third);
    // The third slot is decided: a later run of it does nothing.
    let again = s.cli(
        &[
            &["run"][..],
            &run_args(&third, "buffer", "late-host:2", &short),
        ]
        .concat(),
    );
    assert_eq!(again.code(), Some(81), "{}", again.dump());
}

/// buffer: a slot whose older run outlasts its --max-late gives up waiting and is recorded
/// skipped with the reason; it gives its place up for later slots.
#[test]
fn buffer_gives_up_at_max_late_and_records_the_skip() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("ticks");
    let (older, _) = two_slots(&s);
    let long = ticker_as(&log, "$ANARCHON_SLOT", 120_000, false);
    let mut holder = common::spawn_run(&s, &run_args(&older, "forbid", "old-host:1", &long));
    wait_for_ticks(&log, &older);
    // The newer slot is now: a 2-second --max-late lets it wait about that long.
    let newer = s.now_ms().to_string();
    let mut args = [
        &["run"][..],
        &run_args(&newer, "buffer", "new-host:1", "true"),
    ]
    .concat();
    args[6] = "2s";
    let out = s.cli(&args);
    let doc = out.json();
    assert_eq!(out.code(), Some(80), "{doc}");
    assert_eq!(doc["skip_recorded"], true, "{doc}");
    assert!(
        doc["skip_reason"]
            .as_str()
            .is_some_and(|r| r.contains("--max-late")),
        "{doc}"
    );
    assert!(
        doc["overlap"]["waited_ms"].as_u64().unwrap() >= 1000,
        "{doc}"
    );
    let place: Option<String> = s.cmd(&["HGET", "{cron:ov}:job", "buffered"]);
    assert_eq!(place, None);
    let spans = spans_of::<i64>(&log);
    assert_eq!(spans.len(), 1, "only the older slot ran: {spans:?}");
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(i32::try_from(holder.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    );
    let _ = holder.wait();
}

/// The waiting policies are for scheduled slots: `claim` and `run-now` refuse them, saying which
/// they take.
#[test]
fn claim_and_run_now_refuse_the_waiting_policies() {
    let s = Server::start();
    let out = s.cli(&[
        "run-now",
        "ov",
        "--new",
        "--overlap",
        "buffer",
        "--",
        "true",
    ]);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(
        out.dump().contains("works with `anarchon run`"),
        "{}",
        out.dump()
    );
    let out = s.cli(&[
        "claim",
        "ov",
        "--new",
        "--slot",
        "now",
        "--overlap",
        "replace",
    ]);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
}

/// replace, when the older run's holder is gone (its wrapper killed with SIGKILL; its guard stops
/// the command): nobody hears the release, so the newer slot runs once the older lease has ended,
/// and never beside the older command.
#[test]
fn replace_of_a_dead_holder_waits_for_its_lease() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("ticks");
    let (older, newer) = two_slots(&s);
    let long = ticker_as(&log, "$ANARCHON_SLOT", 120_000, true);
    let mut holder = common::spawn_run(&s, &run_args(&older, "forbid", "old-host:1", &long));
    wait_for_ticks(&log, &older);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(holder.id()).unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let _ = holder.wait();

    let short = ticker_as(&log, "$ANARCHON_SLOT", 300, false);
    let hosts: Vec<_> = (1..=2)
        .map(|i| {
            let runner = format!("new-host:{i}");
            common::spawn_run(&s, &run_args(&newer, "replace", &runner, &short))
        })
        .collect();
    let results: Vec<_> = hosts
        .into_iter()
        .map(|h| json_of(h.wait_with_output().unwrap()))
        .collect();
    let ran = results
        .iter()
        .filter(|(_, d)| d["outcome"] == "ran")
        .count();
    assert_eq!(ran, 1, "{results:?}");
    let spans = assert_no_two_spans_overlap::<i64>(&log);
    assert!(
        spans[&older.parse::<i64>().unwrap()].1 < spans[&newer.parse::<i64>().unwrap()].0,
        "{spans:?}"
    );
    let old = s
        .results("ov")
        .into_iter()
        .find(|r| r.slot.to_string() == older)
        .expect("the older run ended");
    assert_eq!(old.status, "interrupted", "{old:?}");
    assert_eq!(old.result["replaced_by"].to_string(), newer, "{old:?}");
}

/// A late claim (a host that stalled past the next slot) meets a *newer* run in progress: replace
/// does not stop it and buffer does not wait for it; the late slot is skipped, as under forbid.
#[test]
fn a_late_slot_neither_replaces_nor_waits_for_a_newer_run() {
    let s = Server::start();
    let (older, newer) = two_slots(&s);
    s.cli(&[
        "claim", "ov", "--slot", &newer, "--new", "--runner", "newer:1", "--lease", "5m",
    ])
    .expect(0);
    let even_older = (older.parse::<i64>().unwrap() - 60_000).to_string();
    for (policy, late) in [("replace", &older), ("buffer", &even_older)] {
        let out = s.cli(&[&["run"][..], &run_args(late, policy, "late:1", "true")].concat());
        let doc = out.json();
        assert_eq!(out.code(), Some(80), "{policy}: {doc}");
        let reason = doc["skip_reason"].as_str().unwrap_or_default();
        assert!(reason.contains("a newer run"), "{policy}: {doc}");
    }
    // The newer run was left alone: still held by its claimant, no release mark.
    let run = s.run("ov", &newer).expect("the newer run");
    assert_eq!(
        (run.status.as_str(), run.runner.as_str()),
        ("running", "newer:1")
    );
    let mark: Option<String> = s.cmd(&["HGET", "{cron:ov}:job", &format!("released:{newer}")]);
    assert_eq!(mark, None);
}

/// A run released (`--overlap replace`, `anarchon release`) whose command then ends by itself,
/// before its holder heard of the release, is recorded as it ended, not `interrupted` (#35, item
/// 2). The holder's connection is stalled (a relay) while the release is marked and the command
/// exits 0, so the holder cannot hear of it first.
#[test]
fn a_released_run_whose_command_ended_by_itself_is_recorded_as_it_ended() {
    let s = Server::start();
    let proxy = common::proxy::FaultProxy::start(s.port);
    let dir = tempfile::tempdir().unwrap();
    let (go, pid_file, log) = (
        dir.path().join("go"),
        dir.path().join("pid"),
        dir.path().join("log"),
    );
    let (older, _) = two_slots(&s);
    let line = format!(
        "echo $$ > {pid}; while [ ! -f {go} ]; do sleep 0.02; done; echo A-done >> {log}",
        pid = pid_file.display(),
        go = go.display(),
        log = log.display()
    );
    let holder = s
        .anarchon_process()
        .env("ANARCHON_REDIS_URL", &proxy.url)
        .arg("run")
        .args(run_args(&older, "forbid", "old-host:1", &line))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = common::wait_for_line(&pid_file);
    proxy.set(common::proxy::Fault::Stall);
    s.cli(&[
        "release",
        "ov",
        "--slot",
        &older,
        "--reason",
        "replaced by the next slot",
        "--no-wait",
        "--yes",
    ])
    .expect(0);
    std::fs::write(&go, "").unwrap();
    common::wait_for("the command to exit", Duration::from_secs(10), || {
        common::exited(pid.trim().parse().unwrap())
    });
    proxy.set(common::proxy::Fault::Pass);
    let (code, doc) = json_of(holder.wait_with_output().unwrap());
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["status"], "finished", "{doc}");
    let results: Vec<_> = s
        .results("ov")
        .into_iter()
        .filter(|r| r.slot.to_string() == older)
        .collect();
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0].status, "finished", "{results:?}");
    assert_eq!(results[0].result["exit_code"], 0, "{results:?}");
    // The mark is gone with it: nothing is left to end the run again.
    let marked: bool = s.cmd(&["HEXISTS", "{cron:ov}:job", &format!("released:{older}")]);
    assert!(!marked);
}

/// How soon after the release mark a holder whose keeper looks every second has stopped its
/// command and ended: about a second, with the margin a loaded machine needs.
const HEARD_WITHIN: Duration = Duration::from_secs(4);

/// `--overlap replace` with a long lease (a heartbeat every 20 s): the older command hears of the
/// release within about a second (its keeper looks for the release mark every second; asserted
/// under [`HEARD_WITHIN`], 4 s, from the mark to the holder's end), stops, and the replacing slot
/// runs, once (#35, item 3).
#[test]
fn replace_is_heard_before_the_next_heartbeat_and_the_replacing_slot_runs() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("ticks");
    let (older, newer) = two_slots(&s);
    let long = ticker_as(&log, "$ANARCHON_SLOT", 120_000, false);
    let short = ticker_as(&log, "$ANARCHON_SLOT", 300, false);
    let with_lease = |mut args: Vec<&str>| -> Child {
        let i = args.iter().position(|a| *a == "3s").unwrap();
        args[i] = "60s";
        common::spawn_run(&s, &args)
    };
    let holder = with_lease(run_args(&older, "forbid", "old-host:1", &long));
    wait_for_ticks(&log, &older);
    let hosts: Vec<_> = (1..=2)
        .map(|i| {
            let runner = format!("new-host:{i}");
            with_lease(run_args(&newer, "replace", &runner, &short))
        })
        .collect();
    let mut holder = holder;
    // From the moment the replacing host's release mark is in the store (or the holder already
    // gone: it heard of the mark before this look saw it).
    let mark = format!("released:{older}");
    common::wait_for("the release mark", Duration::from_secs(20), || {
        s.cmd::<bool>(&["HEXISTS", "{cron:ov}:job", &mark])
            || holder.try_wait().is_ok_and(|e| e.is_some())
    });
    let marked = std::time::Instant::now();
    let (_, old_doc) = json_of(holder.wait_with_output().unwrap());
    let heard_in = marked.elapsed();
    eprintln!("the holder heard of the release and ended {heard_in:?} after the mark");
    assert_eq!(old_doc["status"], "interrupted", "{old_doc}");
    // About a second: the keeper's look (every second), then the command stopped and the
    // attempt recorded. 4 s leaves a loaded 2-core machine three seconds of margin and still
    // fails a holder that hears only at its heartbeat (20 s) or looks every 5 s or more.
    assert!(
        heard_in < HEARD_WITHIN,
        "heard {heard_in:?} after the release mark (at most {HEARD_WITHIN:?})"
    );
    let docs: Vec<_> = hosts
        .into_iter()
        .map(|h| json_of(h.wait_with_output().unwrap()).1)
        .collect();
    let ran: Vec<_> = docs.iter().filter(|d| d["outcome"] == "ran").collect();
    assert_eq!(ran.len(), 1, "{docs:?}");
    assert_eq!(ran[0]["status"], "finished", "{docs:?}");
    let spans = spans_of::<i64>(&log);
    assert!(spans.contains_key(&newer.parse().unwrap()), "{spans:?}");
    assert_no_two_spans_overlap::<i64>(&log);
    assert!(
        !s.results("ov")
            .iter()
            .any(|r| r.slot.to_string() == newer && r.status == "skipped"),
        "{:?}",
        s.results("ov")
    );
}

/// buffer: the waiting slot's only host dies (SIGKILL) while it waits. Its place lapses within
/// seconds (it is held again at every look, never past the last one by more than 5 s), and the
/// next slot, coming at once, sees the place is no longer held again: it waits in its stead and
/// runs when the older run ends, instead of being recorded skipped behind a waiter that is gone
/// (until its --max-late before #35 item 8; for up to 5 s after, as a trial found).
#[test]
fn buffer_frees_the_place_of_a_waiter_that_died() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("ticks");
    let go = dir.path().join("go");
    let (older, newer, third) = three_slots(&s);
    let held = ticks_until(&go, &log);
    let short = ticker_as(&log, "$ANARCHON_SLOT", 300, false);
    let holder = common::spawn_run(&s, &run_args(&older, "buffer", "old-host:1", &held));
    wait_for_ticks(&log, &older);
    let mut waiter = common::spawn_run(&s, &run_args(&newer, "buffer", "new-host:1", &short));
    let place = || -> Option<String> { s.cmd(&["HGET", "{cron:ov}:job", "buffered"]) };
    common::wait_for("the newer slot to wait", Duration::from_secs(10), || {
        place().is_some_and(|p| p.starts_with(&format!("{newer}:")))
    });
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(waiter.id()).unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let _ = waiter.wait();
    // The next slot comes at once, while the dead waiter's place has not lapsed yet: it sees
    // that nobody holds the place any more (it is not renewed) and waits in its stead, rather
    // than be recorded skipped behind a slot nobody waits for.
    let third_host = common::spawn_run(&s, &run_args(&third, "buffer", "late-host:1", &short));
    common::wait_for("the third slot to wait", Duration::from_secs(10), || {
        place().is_some_and(|p| p.starts_with(&format!("{third}:")))
    });
    std::fs::write(&go, "").unwrap();
    let (_, doc) = json_of(third_host.wait_with_output().unwrap());
    assert_eq!(doc["outcome"], "ran", "{doc}");
    assert_eq!(doc["status"], "finished", "{doc}");
    let _ = holder.wait_with_output();
    assert_no_two_spans_overlap::<i64>(&log);
}
