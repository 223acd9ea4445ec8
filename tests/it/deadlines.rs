//! At the protocol's deadlines (issue "at the protocol's deadlines"): faults aimed at a lease's
//! end, where a holder that ended its command, or a claim answered late, once handed a slot to a
//! second copy. Each test injects its fault with real processes and servers (maxmemory, CLIENT
//! PAUSE) and judges by what the wrapped command itself logged (tests/it/common/ticker.rs): a
//! copy of attempt 2 is a second run of the slot, whatever the exit codes say.
//!
//! The suite runs these in both store formats and on Valkey (tests/setup-and-test.sh).

use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::Duration;

use crate::common::ticker::{copies, ticker_as};
use crate::common::{Server, spawn_in_group, stderr, wait_for, wait_for_server_time};

const SLOT: i64 = 1_796_220_300_000;

/// A command that logs `<slot>/<attempt>` every 50 ms for `ms`, then its end.
fn ticker(log: &Path, ms: u64) -> String {
    ticker_as(log, "$ANARCHON_SLOT/$ANARCHON_ATTEMPT", ms, false)
}

/// `anarchon run` of `job` @ SLOT as runner `name` through `url`, its command a shell line.
fn run_through(
    url: &str,
    s: &Server,
    job: &str,
    name: &str,
    flags: &[&str],
    command: &str,
) -> Child {
    let slot = SLOT.to_string();
    let mut args = vec![
        "run", "--job", job, "--slot", &slot, "--runner", name, "--json",
    ];
    args.extend_from_slice(flags);
    args.extend(["--shell", "--", command]);
    spawn_in_group(s, url, &args)
}

/// [`run_through`] the server itself.
fn run_as(s: &Server, job: &str, name: &str, flags: &[&str], command: &str) -> Child {
    run_through(&s.url, s, job, name, flags, command)
}

/// A run of daily `schedule` (UTC) with `flags`, running `command` (`anarchon run` as cron starts
/// it on a host).
fn run_daily(s: &Server, job: &str, schedule: &str, flags: &[&str], command: &[&str]) -> Child {
    let mut args = vec!["run", "--job", job, "--schedule", schedule, "--tz", "UTC"];
    args.extend_from_slice(flags);
    args.push("--");
    args.extend_from_slice(command);
    spawn_in_group(s, &s.url, &args)
}

/// The (minute, hour) a daily schedule fires at to have `slot` (UTC).
fn minute_and_hour(slot: i64) -> (i64, i64) {
    const HOUR: i64 = 3_600_000;
    (
        slot.rem_euclid(HOUR) / 60_000,
        slot.rem_euclid(24 * HOUR) / HOUR,
    )
}

/// Records `job` as first seen at `ms` (as an older deploy would have): its slots since are due.
fn first_seen_at(s: &Server, job: &str, ms: i64) {
    let _: () = s.cmd(&[
        "HSET",
        &format!("{{cron:{job}}}:job"),
        "first_seen",
        &ms.to_string(),
    ]);
}

fn finished(child: Child) -> Output {
    child.wait_with_output().unwrap()
}

/// A command that logs as [`ticker`] does until the file `go` exists, then its end: the test
/// decides the instant it ends (here, just after the server filled up).
fn until_told(log: &Path, go: &Path) -> String {
    format!(
        "copy=$$.$(date +%s%3N); while [ ! -e {go} ]; do echo \"$ANARCHON_SLOT/$ANARCHON_ATTEMPT $copy $(date +%s%3N)\" >> {log}; sleep 0.05; done; echo \"$ANARCHON_SLOT/$ANARCHON_ATTEMPT $copy $(date +%s%3N) end\" >> {log}",
        go = go.display(),
        log = log.display()
    )
}

/// The labels (`<slot>/<attempt>`) of every copy of the command that ran.
fn labels(log: &Path) -> Vec<String> {
    copies(log).into_iter().map(|c| c.label).collect()
}

/// Item 1. The holder's command exits just after the server filled up (maxmemory under
/// noeviction): its end is refused, again and again, for two leases. It keeps the run (its
/// renewals add no memory and pass) until the record goes through, so the backup standing by
/// never takes a completed run over: the command ran once, recorded finished, attempt 1.
#[test]
fn a_command_that_ended_while_the_server_was_full_is_never_run_again() {
    let s = Server::start();
    let log = s.dir.path().join("full.log");
    let go = s.dir.path().join("go");
    let flags = ["--lease", "3s", "--kill-after", "60s"];
    let holder = run_as(&s, "full", "a", &flags, &until_told(&log, &go));
    wait_for("attempt 1 to run", Duration::from_secs(10), || {
        labels(&log).contains(&format!("{SLOT}/1"))
    });
    let backup = run_as(&s, "full", "b", &flags, &ticker(&log, 500));
    wait_for("the backup to register", Duration::from_secs(10), || {
        s.cmd::<i64>(&["HEXISTS", "{cron:full}:registry", "host:b"]) == 1
    });
    let _: () = s.cmd(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
    let _: () = s.cmd(&["CONFIG", "SET", "maxmemory", "1"]);
    std::fs::write(&go, "").unwrap();
    wait_for("the command to end", Duration::from_secs(10), || {
        copies(&log).iter().any(|c| c.completed)
    });
    // Two leases past the command's end, every write that adds memory refused: a holder that
    // gave up on its record let its lease lapse by then.
    wait_for_server_time(&s, s.now_ms() + 6_000);
    let run = s.run("full", &SLOT.to_string()).expect("the run is known");
    let kept = run.lease_end.is_some_and(|end| end > s.now_ms());
    let _: () = s.cmd(&["CONFIG", "SET", "maxmemory", "0"]);

    let holder = finished(holder);
    let backup = finished(backup);
    let said = format!("holder: {}\nbackup: {}", stderr(&holder), stderr(&backup));
    assert_eq!(
        labels(&log),
        vec![format!("{SLOT}/1")],
        "the slot ran again after its command completed\n{said}"
    );
    assert!(
        kept,
        "the holder let its lease lapse while its end was refused: {run:?}\n{said}"
    );
    assert_eq!(holder.status.code(), Some(0), "{said}");
    let ended: Vec<_> = s
        .results("full")
        .into_iter()
        .filter(|r| r.slot == SLOT)
        .map(|r| (r.attempt, r.status))
        .collect();
    assert_eq!(ended, vec![(Some(1), "finished".to_string())], "{said}");
}

/// What the first request of a claim carries, in this pass's store format: the claim function's
/// name where the server has Redis Functions (7.0+, Valkey), else the claim script's SHA1
/// (EVALSHA). Either is in no other request a run sends.
fn claim_marker(s: &Server) -> Vec<u8> {
    use anarchon::store::lease::{v1, v2};
    let claim = if Server::test_store_format() == 2 {
        &*v2::CLAIM
    } else {
        &*v1::CLAIM
    };
    let has_functions = s
        .info_field("server", "redis_version")
        .and_then(|v| v.split('.').next()?.parse::<u32>().ok())
        .is_some_and(|major| major >= 7);
    match claim.function() {
        Some((name, _)) if has_functions => format!("{name}\r\n").into_bytes(),
        _ => claim.sha1().as_bytes().to_vec(),
    }
}

/// Item 2. The claim is answered late, with little of its lease left (its request held at the
/// relay for half the lease, as a server paused just before a slot holds it): started then, the
/// command would be stopped before its first heartbeat could be answered, and the slot run again
/// in full by the next host. The holder claims again with the same token first (a fresh lease),
/// so the command runs once, to its end, and a later host finds the slot finished.
#[test]
fn a_claim_answered_near_its_leases_end_starts_no_command_it_must_stop() {
    use crate::common::proxy::FaultProxy;
    let s = Server::start();
    let proxy = FaultProxy::start(s.port);
    let log = s.dir.path().join("late.log");
    proxy.hold_next_request_containing(&claim_marker(&s));
    let flags = ["--lease", "3s", "--kill-after", "60s"];
    let holder = run_through(&proxy.url, &s, "late", "a", &flags, &ticker(&log, 1_500));
    wait_for("the claim to be held", Duration::from_secs(10), || {
        proxy.holding()
    });
    // The fault itself, not a wait for a condition: the claim's answer comes 1.5 s after it was
    // sent, where a 3 s lease leaves 0.75 s to its local deadline (after its 0.75 s margin).
    std::thread::sleep(Duration::from_millis(1_500));
    proxy.release();
    let holder = finished(holder);
    // Another host's run of the same slot, once the holder's lease would have lapsed.
    wait_for_server_time(&s, s.now_ms() + 3_000);
    let later = finished(run_as(&s, "late", "b", &flags, &ticker(&log, 1_500)));
    let said = format!("holder: {}\nlater: {}", stderr(&holder), stderr(&later));
    let ran: Vec<(String, bool)> = copies(&log)
        .into_iter()
        .map(|c| (c.label, c.completed))
        .collect();
    assert_eq!(
        ran,
        vec![(format!("{SLOT}/1"), true)],
        "the command was stopped after a late claim, or run again\n{said}"
    );
    assert!(
        said.contains("claiming again with the same token"),
        "{said}"
    );
}

/// Item 6. A run started hours after its slot (a host back after an outage, `--max-late` of
/// days) claims at once: its jitter is waited for from the slot (the claim time `next` shows as
/// CLAIMS AT), not again from the late start. The job is one whose delay for this slot is over
/// half an hour of its one-hour jitter, which the old rule slept through.
#[test]
fn a_run_started_hours_after_its_slot_does_not_wait_its_jitter_again() {
    let s = Server::start();
    let now = s.now_ms();
    const HOUR: i64 = 3_600_000;
    const DAY: i64 = 24 * HOUR;
    // A daily schedule whose last fire was two and a half to three and a half hours ago (UTC).
    let hour = (now.rem_euclid(DAY) / HOUR + 21) % 24;
    let mut slot = now - now.rem_euclid(DAY) + hour * HOUR + 30 * 60_000;
    if slot > now {
        slot -= DAY;
    }
    let jitter = Duration::from_secs(3_600);
    let job = (0..)
        .map(|i| format!("nightly{i}"))
        .find(|j| anarchon::scheduler::jitter_delay(j, slot, jitter) > Duration::from_secs(1_800))
        .unwrap();
    let started = std::time::Instant::now();
    let mut run = s
        .anarchon_process()
        .args([
            "run",
            "--job",
            &job,
            "--schedule",
            &format!("30 {hour} * * *"),
        ])
        .args([
            "--tz",
            "UTC",
            "--jitter",
            "1h",
            "--catch-up",
            "6h",
            "--max-late",
            "2d",
        ])
        .args(["--", "true"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A minute is far more than a claim needs, and far less than the half hour it slept before.
    let mut exited = None;
    while exited.is_none() && started.elapsed() < Duration::from_secs(60) {
        exited = run.try_wait().unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    if exited.is_none() {
        let _ = run.kill();
    }
    let out = run.wait_with_output().unwrap();
    assert!(
        exited.is_some(),
        "a run started {} after its slot still waited for its jitter\n{}",
        humantime::format_duration(Duration::from_millis((now - slot) as u64)),
        stderr(&out)
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ended: Vec<_> = s
        .results(&job)
        .into_iter()
        .map(|r| (r.slot, r.status))
        .collect();
    assert_eq!(ended, vec![(slot, "finished".to_string())]);
}

/// Every monitor a command reads says `job` lost `slot`, and only it: `check` and `check --window`
/// CRITICAL with lost=1, `metrics`' `anarchon_job_lost_slots` 1, `inspect`'s `lost_slots`. Its
/// health, as `inspect --json` gives it.
fn monitors_say_lost(s: &Server, job: &str, slot: i64) -> serde_json::Value {
    for args in [vec!["check", job], vec!["check", job, "--window", "10m"]] {
        let out = s.cli(&args);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert_eq!(out.code(), Some(2), "{args:?}: {}", out.dump());
        assert!(text.contains("lost=1;"), "{args:?}: {text}");
    }
    let metrics = String::from_utf8_lossy(&s.cli(&["metrics"]).stdout).to_string();
    let lost: Vec<&str> = metrics
        .lines()
        .filter(|l| {
            l.starts_with("anarchon_job_lost_slots{") && l.contains(&format!("job=\"{job}\""))
        })
        .collect();
    assert!(
        lost.len() == 1 && lost[0].ends_with(" 1"),
        "anarchon_job_lost_slots: {lost:?}\n{metrics}"
    );
    let health = s.cli(&["inspect", job, "--json"]).json()["health"].clone();
    assert_eq!(
        health["lost_slots"],
        serde_json::json!([slot]),
        "{health:#}"
    );
    health
}

/// Plants a lost run of `job`: a daily slot three minutes ago (the job first seen a minute before
/// it), claimed by a host killed with it (kill -9 of the whole group), then ended `interrupted` by
/// another host's claim that finds its lease lapsed and its one attempt spent; the job registered
/// last with `--max-late 1s`, so the slot is judged a minute after it. Its slot.
pub(crate) fn plant_a_lost_slot(s: &Server, job: &str) -> i64 {
    let now = s.now_ms();
    let slot = now - now.rem_euclid(60_000) - 3 * 60_000;
    let (minute, hour) = minute_and_hour(slot);
    let schedule = format!("{minute} {hour} * * *");
    first_seen_at(s, job, slot - 60_000);
    let run = |max_late: &str, command: &[&str]| {
        let flags = [
            "--max-late",
            max_late,
            "--max-attempts",
            "1",
            "--lease",
            "2s",
        ];
        run_daily(s, job, &schedule, &flags, command)
    };
    let holder = run("10m", &["sleep", "60"]);
    wait_for("the claim", Duration::from_secs(10), || {
        s.run(job, &slot.to_string()).is_some()
    });
    crate::common::signal_group("-KILL", holder.id()).unwrap();
    let _ = finished(holder);
    crate::common::wait_for_lease_end(s, job, &slot.to_string());
    let later = finished(run("10m", &["true"]));
    let ended: Vec<_> = s
        .results(job)
        .into_iter()
        .map(|r| (r.slot, r.status))
        .collect();
    assert_eq!(
        ended,
        vec![(slot, "interrupted".to_string())],
        "{}",
        stderr(&later)
    );
    let _ = finished(run("1s", &["true"]));
    slot
}

/// Item 7. A slot claimed and never run to an end (its holder killed, its attempts spent) turns
/// every monitor: `check` and `check --window` say CRITICAL with lost=1, `metrics` gives
/// `anarchon_job_lost_slots` 1, `inspect` lists the slot and says what to read, and the status
/// page says the run was lost (`top`: top::a_lost_run_is_on_the_open_job). A monitor forced to OK
/// over it fails here.
#[test]
fn a_lost_slot_turns_every_monitor() {
    let s = Server::start();
    let slot = plant_a_lost_slot(&s, "lost");

    monitors_say_lost(&s, "lost", slot);
    let text = String::from_utf8_lossy(&s.cli(&["inspect", "lost"]).stdout).to_string();
    assert!(
        text.contains("lost     the run of") && text.contains("anarchon logs lost --slot"),
        "{text}"
    );

    let (mut page, base) = crate::page::serve(&s);
    let port: u16 = base.rsplit(':').next().unwrap().parse().unwrap();
    let (status, body) = crate::common::http::get(port, "/");
    let _ = page.kill();
    let _ = page.wait();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("1 run(s) lost"), "{body}");
}

/// Item 3. A fleet back after the next fire time: slot N's holder died two seconds into it with
/// nobody standing by, and the first host back is for slot N+1. `fleet_back` plays it out under
/// `policy` and gives the two slots and the schedule that has both; the command writes `<slot> <attempt>` to `log` each time it
/// starts.
fn fleet_back(s: &Server, job: &str, policy: &str, log: &Path) -> (i64, i64, String) {
    let now = s.now_ms();
    // Two daily slots, four and three minutes ago; the job first seen a minute before the first.
    let older = now - now.rem_euclid(60_000) - 4 * 60_000;
    let newer = older + 60_000;
    let ((m, h), (m2, h2)) = (minute_and_hour(older), minute_and_hour(newer));
    // As cron knows them: the older slot's crontab line alone, then both.
    let only_older = format!("{m} {h} * * *");
    let both = if h == h2 {
        format!("{m},{m2} {h} * * *")
    } else {
        format!("{m},{m2} {h},{h2} * * *")
    };
    first_seen_at(s, job, older - 60_000);
    let started = format!(
        "echo \"$ANARCHON_SLOT $ANARCHON_ATTEMPT\" >> {}",
        log.display()
    );
    let run = |schedule: &str, max_late: &str, then: &str| {
        let command = format!("{started}; {then}");
        let flags = ["--max-late", max_late, "--lease", "2s", "--overlap", policy];
        run_daily(s, job, schedule, &flags, &["sh", "-c", &command])
    };
    let holder = run(&only_older, "10m", "sleep 60");
    wait_for("the older slot's command", Duration::from_secs(10), || {
        std::fs::read_to_string(log).is_ok_and(|l| l.contains(&older.to_string()))
    });
    crate::common::signal_group("-KILL", holder.id()).unwrap();
    let _ = finished(holder);
    crate::common::wait_for_lease_end(s, job, &older.to_string());
    // The fleet is back: its first host is for the newer slot.
    let back = finished(run(&both, "10m", "true"));
    assert_eq!(back.status.code(), Some(0), "{}", stderr(&back));
    (older, newer, both)
}

/// Item 3, `--overlap forbid`: the older run's holder is gone with attempts left, and it is owed
/// them. The host back for slot N+1 takes N over first (attempt 2, as a backup would have), then
/// runs N+1: both slots ran to an end, each once, one after the other, and every monitor says OK.
/// Before, N+1's claim superseded N after one attempt of three, and nobody ran N again.
#[test]
fn a_run_cut_off_before_the_next_fire_is_taken_over_by_the_fleet_back_after_it() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("started");
    let (older, newer, _) = fleet_back(&s, "fleet", "forbid", &log);
    let started = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        started.lines().collect::<Vec<_>>(),
        [
            format!("{older} 1"),
            format!("{older} 2"),
            format!("{newer} 1")
        ],
        "the commands started, in order"
    );
    let ends: Vec<(i64, Option<u32>, String)> = s
        .results("fleet")
        .into_iter()
        .map(|r| (r.slot, r.attempt, r.status))
        .collect();
    assert_eq!(
        ends,
        [
            (older, Some(1), "interrupted".to_string()),
            (older, Some(2), "finished".to_string()),
            (newer, Some(1), "finished".to_string())
        ],
        "the attempts' ends, oldest first"
    );
    let check = s.cli(&["check", "fleet", "--window", "10m"]);
    let text = String::from_utf8_lossy(&check.stdout).to_string();
    assert!(
        check.code() == Some(0) && text.contains("lost=0;"),
        "{}",
        check.dump()
    );
}

/// Item 3, `--overlap replace`: the newer slot's run supersedes the older one (replace would
/// have stopped it), which never ran to an end: every monitor counts it lost (`check`, `check
/// --window`, `metrics` and `inspect`: they said OK, lost=0).
#[test]
fn a_run_superseded_by_the_fleet_back_after_the_next_fire_is_counted_lost() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("started");
    let (older, newer, both) = fleet_back(&s, "fleet", "replace", &log);
    let older_records: Vec<_> = s
        .results("fleet")
        .into_iter()
        .filter(|r| r.slot == older)
        .collect();
    assert!(
        older_records.len() == 1 && older_records[0].result["superseded_by"] == newer,
        "{older_records:?}"
    );
    // The job as registered now: --max-late 1s, so both slots are judged a minute after them.
    let _ = finished(run_daily(
        &s,
        "fleet",
        &both,
        &["--max-late", "1s", "--lease", "2s", "--overlap", "replace"],
        &["true"],
    ));
    monitors_say_lost(&s, "fleet", older);
}

/// Item 4. A hand-over storm: the replica running a slot's long command is stopped (SIGTERM, a
/// 1 s grace) again and again, each time with a new replica standing by, until the hand-overs
/// have spent what a slot may be given (`--max-attempts 1`, plus 10 hand-overs). The slot never
/// ran to an end, and nothing more can happen to it: `check` says it was lost at once (it said
/// OK until the slot's grace had passed), and so do `metrics` and `inspect`.
#[test]
fn a_slot_handed_over_until_its_budget_is_spent_is_lost_at_once() {
    use crate::common::replica::Replica;
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crontab");
    let log = dir.path().join("storm.log");
    std::fs::write(
        &file,
        format!(
            "# anarchon: --job storm --max-attempts 1 --lease 4s --max-late 1m\n*/20 * * * * * {}\n",
            ticker(&log, 100_000)
        ),
    )
    .unwrap();
    let grace = ["--shutdown-grace", "1s", "-v"];
    // A slot's storm is over well before the next slot (20 s): start 1 to 4 s before a slot.
    s.wait_for_phase(20_000, 16_000, 19_000);
    let mut holder = Replica::start(&s.url, &file, dir.path(), "r0", &grace);
    wait_for("the run to start", Duration::from_secs(10), || {
        !labels(&log).is_empty()
    });
    let slot: i64 = labels(&log)[0].split('/').next().unwrap().parse().unwrap();
    for n in 1..=11 {
        let standby = Replica::start(&s.url, &file, dir.path(), &format!("r{n}"), &grace);
        wait_for(
            &format!("replica r{n} to stand by"),
            Duration::from_secs(10),
            || standby.stderr().contains("standing by"),
        );
        assert_eq!(holder.stop(Duration::from_secs(20)), Some(0));
        holder = standby;
        if n < 11 {
            wait_for(
                &format!("attempt {} to run", n + 1),
                Duration::from_secs(10),
                || labels(&log).contains(&format!("{slot}/{}", n + 1)),
            );
        }
    }
    // The eleventh hand-over spent the budget: the standing-by replica's claim ended the run.
    wait_for("the run to end", Duration::from_secs(10), || {
        !s.in_progress("storm").contains(&slot)
    });
    let handed = s
        .results("storm")
        .into_iter()
        .filter(|r| r.slot == slot && r.was_handed_over())
        .count();
    assert_eq!(handed, 11, "{:?}", s.results("storm"));
    drop(holder);

    // Judged at once, within the slot's grace (--max-late 1m + 1m).
    let health = monitors_say_lost(&s, "storm", slot);
    assert_eq!(
        health["failed_in_a_row"], 0,
        "hand-overs are no failures: {health:#}"
    );
}

/// A run whose server goes away while its command runs gives its record up once its lease has
/// passed (a backup may take the run over then), and exits: it never waits for ever. (A deadline
/// passed was once taken as "now": the record's tries never ended, and the process spun.)
#[test]
fn a_run_whose_server_is_gone_gives_its_record_up_after_the_lease() {
    let mut s = Server::start();
    let log = s.dir.path().join("gone.log");
    let mut run = run_as(
        &s,
        "gone",
        "a",
        &["--lease", "2s", "--kill-after", "60s"],
        &ticker(&log, 1_000),
    );
    wait_for("the command to run", Duration::from_secs(10), || {
        !labels(&log).is_empty()
    });
    s.stop();
    let began = std::time::Instant::now();
    let mut exited = None;
    while exited.is_none() && began.elapsed() < Duration::from_secs(30) {
        exited = run.try_wait().unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
    if exited.is_none() {
        let _ = crate::common::signal_group("-KILL", run.id());
    }
    let out = finished(run);
    assert!(
        exited.is_some(),
        "the run went on trying to record its end 30 s after its server went away (a 2 s lease)"
    );
    assert!(
        stderr(&out).contains("the run's end was not recorded"),
        "{}",
        stderr(&out)
    );
}
