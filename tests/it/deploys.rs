//! `anarchon cron` through what a fleet's operators do every day (issue 46): a rolling deploy
//! that restarts replicas late after a slot and SIGTERMs the one running a long command, a
//! full-fleet restart with `--catch-up`, and a brand-new job deployed just after a fire time. The
//! ground truth is the commands' own log (`common::ticker`: `<slot>/<attempt> <ms>`), checked
//! against the store's records; every wait is on a condition, with a deadline.

use std::path::Path;
use std::time::Duration;

use crate::common::replica::Replica;
use crate::common::ticker::{spans_of, ticker_as};
use crate::common::{Server, wait_for};

/// A crontab line for `job` every `every` seconds (6 fields): the command logs
/// `<slot>/<attempt> <ms>` to `log` for `ms` milliseconds.
fn line(job: &str, every: u64, log: &Path, ms: u64, flags: &str) -> String {
    format!(
        "# anarchon: --job {job} {flags}\n*/{every} * * * * * {}\n",
        ticker_as(log, "$ANARCHON_SLOT/$ANARCHON_ATTEMPT", ms, false)
    )
}

/// The slots of `log` with the attempts that ran, and when each attempt started (ms).
fn attempts(log: &Path) -> Vec<(i64, u32, i64)> {
    let mut out: Vec<(i64, u32, i64)> = spans_of::<String>(log)
        .into_iter()
        .filter_map(|(id, (start, _))| {
            let (slot, attempt) = id.split_once('/')?;
            Some((slot.parse().ok()?, attempt.parse().ok()?, start))
        })
        .collect();
    out.sort();
    out
}

/// A rolling deploy (issue 46, item 1): the replica that is not running a long command is
/// restarted later than `--max-late` after its slot, then the holder gets SIGTERM. The new
/// replica stands by for the run in progress (a run with attempts left, whenever it started) and
/// takes it over as attempt 2 at once; the holder said a replica stands by, and who. Then that
/// replica is stopped with nobody standing by: it says so, and a replica started after takes the
/// run over as attempt 3. Never two copies at once.
#[test]
fn a_rolling_deploy_hands_a_long_run_to_a_replica_started_late() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crontab");
    let log = dir.path().join("big.log");
    std::fs::write(
        &file,
        line(
            "big",
            30,
            &log,
            100_000,
            "--max-attempts 5 --max-late 3s --lease 10s",
        ),
    )
    .unwrap();
    // -v: "standing by" is a routine note, at debug (issue 48 item 3).
    let grace = ["--shutdown-grace", "1s", "-v"];
    // Both replicas up well before the slot.
    s.wait_for_phase(30_000, 5_000, 22_000);
    let mut a = Replica::start(&s.url, &file, dir.path(), "a", &grace);
    let mut b = Replica::start(&s.url, &file, dir.path(), "b", &grace);
    wait_for("the run to start", Duration::from_secs(40), || {
        !attempts(&log).is_empty()
    });
    let slot = attempts(&log)[0].0;
    let (holder, other) = if a.stderr().contains("won; running the command") {
        (&mut a, &mut b)
    } else {
        (&mut b, &mut a)
    };
    // The other replica restarted more than --max-late after the slot.
    wait_for("slot + 5 s", Duration::from_secs(20), || {
        s.now_ms() > slot + 5_000
    });
    assert_eq!(other.stop(Duration::from_secs(10)), Some(0));
    let c = Replica::start(&s.url, &file, dir.path(), "c", &grace);
    wait_for(
        "the new replica to stand by for the run in progress",
        Duration::from_secs(10),
        || c.stderr().contains("standing by"),
    );
    assert_eq!(holder.stop(Duration::from_secs(20)), Some(0));
    let said = holder.stderr();
    assert!(
        said.contains(&format!(
            "a replica standing by takes the run over as the next attempt ({} said last",
            c.runner()
        )),
        "the holder did not say who stands by: {said}"
    );
    wait_for(
        "attempt 2 on the replica started late",
        Duration::from_secs(8),
        || {
            attempts(&log)
                .iter()
                .any(|(s2, n, _)| *s2 == slot && *n == 2)
        },
    );
    // The takeover says from whom.
    let from = holder.runner();
    wait_for("the takeover's line", Duration::from_secs(5), || {
        c.stderr().contains(&format!("the lease of {from} ended"))
    });
    // Now nobody stands by: the holder says so, and a replica started after takes the run over.
    let mut c = c;
    wait_for("attempt 2 running", Duration::from_secs(5), || {
        c.stderr().contains("won after taking over as backup")
    });
    assert_eq!(c.stop(Duration::from_secs(20)), Some(0));
    let said = c.stderr();
    assert!(
        said.contains("no replica is standing by"),
        "the last holder said a replica stands by: {said}"
    );
    let d = Replica::start(&s.url, &file, dir.path(), "d", &grace);
    wait_for(
        "attempt 3 on a replica started after",
        Duration::from_secs(8),
        || {
            attempts(&log)
                .iter()
                .any(|(s2, n, _)| *s2 == slot && *n == 3)
        },
    );
    let runs = crate::common::ticker::assert_no_two_spans_overlap::<String>(&log);
    assert!(
        runs.keys().all(|id| id.starts_with(&format!("{slot}/"))),
        "{runs:?}"
    );
    drop(d);
}

/// A hand-over spends no attempt of `--max-attempts`: a rolling deploy that SIGTERMs the holder of
/// a long run twice, each time with a replica standing by, moves it to a third replica even under
/// `--max-attempts 2` (each hand-over is an ordinary operation, not a crash: a fleet restarted
/// twice must not lose the run; the soak lost one so, mixed hosts, format 2, seed 18). Never two
/// copies at once.
#[test]
fn hand_overs_at_shutdown_spend_no_attempt() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crontab");
    let log = dir.path().join("long.log");
    std::fs::write(
        &file,
        line("long", 30, &log, 100_000, "--max-attempts 2 --lease 10s"),
    )
    .unwrap();
    let grace = ["--shutdown-grace", "1s", "-v"];
    s.wait_for_phase(30_000, 5_000, 22_000);
    let mut holder = Replica::start(&s.url, &file, dir.path(), "a", &grace);
    wait_for("the run to start", Duration::from_secs(40), || {
        !attempts(&log).is_empty()
    });
    let slot = attempts(&log)[0].0;
    for (next, attempt) in [("b", 2), ("c", 3)] {
        let standby = Replica::start(&s.url, &file, dir.path(), next, &grace);
        wait_for(
            "the new replica to stand by for the run in progress",
            Duration::from_secs(10),
            || standby.stderr().contains("standing by"),
        );
        assert_eq!(holder.stop(Duration::from_secs(20)), Some(0));
        wait_for(
            &format!("attempt {attempt} on replica {next}"),
            Duration::from_secs(10),
            || {
                attempts(&log)
                    .iter()
                    .any(|(s2, n, _)| *s2 == slot && *n == attempt)
            },
        );
        holder = standby;
    }
    // Both ended attempts are recorded as handed over, not as crashes.
    let ended: Vec<(Option<u32>, String)> = s
        .results("long")
        .into_iter()
        .filter(|r| r.slot == slot)
        .map(|r| {
            (
                r.attempt,
                r.result["reason"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        ended,
        vec![
            (Some(1), "handed over".to_string()),
            (Some(2), "handed over".to_string())
        ]
    );
    crate::common::ticker::assert_no_two_spans_overlap::<String>(&log);
    drop(holder);
}

/// A hand-over wakes the replica standing by (issue 49: losers wait without polling each run):
/// once its looks at a long run have slowed to one every 10 s, the holder's SIGTERM hands the run
/// over and says so on the requests stream, and the backup looks at once, on that word, rather
/// than at its next look. (It would look at the very moment of the hand-over, before the word
/// came, about once in 20,000 runs of this test.)
#[test]
fn a_hand_over_wakes_the_replica_standing_by() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crontab");
    let log = dir.path().join("long.log");
    std::fs::write(&file, line("long", 30, &log, 100_000, "--lease 60s")).unwrap();
    let grace = ["--shutdown-grace", "1s", "-v"];
    s.wait_for_phase(30_000, 5_000, 12_000);
    let mut holder = Replica::start(&s.url, &file, dir.path(), "a", &grace);
    wait_for("the run to start", Duration::from_secs(40), || {
        !attempts(&log).is_empty()
    });
    let slot = attempts(&log)[0].0;
    let backup = Replica::start(&s.url, &file, dir.path(), "b", &grace);
    wait_for(
        "the new replica to stand by for the run in progress",
        Duration::from_secs(10),
        || backup.stderr().contains("standing by"),
    );
    // Its looks: 0.5, 1, 2, 4, 8 s apart, then 10 s (the lease ends 40-60 s on).
    let standing = s.now_ms();
    wait_for(
        "the backup's looks to slow",
        Duration::from_secs(30),
        || s.now_ms() > standing + 16_000,
    );
    assert_eq!(holder.stop(Duration::from_secs(20)), Some(0));
    wait_for("attempt 2 on the backup", Duration::from_secs(15), || {
        attempts(&log)
            .iter()
            .any(|(s2, n, _)| *s2 == slot && *n == 2)
    });
    let said = backup.stderr();
    assert!(
        said.contains(&format!("woken: {} handed the run over", holder.runner())),
        "the backup was not woken by the hand-over:\n{said}"
    );
    // The word on the stream: no `job` field, so a reader of run-now requests alone skips it.
    let entries: redis::streams::StreamRangeReply =
        s.cmd(&["XRANGE", "{cron:}:requests", "-", "+"]);
    let wake = entries
        .ids
        .iter()
        .find(|e| e.map.contains_key("woke"))
        .unwrap_or_else(|| panic!("no wake-up on the requests stream: {entries:?}"));
    assert!(!wake.map.contains_key("job"), "{wake:?}");
    assert_eq!(wake.get::<String>("at"), Some(slot.to_string()));
    crate::common::ticker::assert_no_two_spans_overlap::<String>(&log);
    drop(backup);
}

/// A full-fleet restart with `--catch-up` (issue 46, item 2): every replica stopped, two slots
/// missed, and the fleet started again later than `--max-late` after the last of them: the missed
/// runs are caught up at once, as `run --catch-up` does at its start, not at the next fire time.
#[test]
fn a_full_fleet_restart_catches_up_at_once() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crontab");
    let log = dir.path().join("c.log");
    std::fs::write(
        &file,
        line("c", 15, &log, 200, "--catch-up 5m --max-late 2s"),
    )
    .unwrap();
    let mut a = Replica::start(&s.url, &file, dir.path(), "a", &[]);
    wait_for("a first run", Duration::from_secs(40), || {
        !attempts(&log).is_empty()
    });
    s.wait_for_phase(15_000, 3_000, 12_000);
    assert_eq!(a.stop(Duration::from_secs(10)), Some(0));
    let stopped = s.now_ms();
    // Two slots pass while the fleet is down; started again 5 s after the second.
    let last_missed = stopped - stopped.rem_euclid(15_000) + 30_000;
    wait_for("two missed slots", Duration::from_secs(60), || {
        s.now_ms() > last_missed + 5_000
    });
    let started = s.now_ms();
    let next_fire = last_missed + 15_000;
    let b = Replica::start(&s.url, &file, dir.path(), "b", &[]);
    wait_for("the missed runs", Duration::from_secs(30), || {
        let ran = attempts(&log);
        ran.iter().any(|(slot, _, _)| *slot == last_missed)
            && ran.iter().any(|(slot, _, _)| *slot == last_missed - 15_000)
    });
    for (slot, _, at) in attempts(&log)
        .into_iter()
        .filter(|(slot, _, _)| *slot > stopped)
        .filter(|(slot, _, _)| *slot <= last_missed)
    {
        assert!(
            at < next_fire - 2_000,
            "the missed run of {slot} started at {at}, {} ms after the restart ({started}); the next fire time is {next_fire}\n{}",
            at - started,
            b.stderr()
        );
    }
    assert!(
        b.stderr().contains("known to the store: --catch-up"),
        "{}",
        b.stderr()
    );
}

/// A brand-new job (issue 46, item 4), deployed a few seconds after a fire time: the store has
/// never seen it, so it starts at its next fire time, as cron does (a cut-over from a system cron
/// that ran the slot due must not run it twice), and says so. Once the store knows the job, a
/// replica restarted just after a slot it missed takes that slot (today's restart rule), and says
/// that too.
#[test]
fn a_new_job_starts_at_its_next_fire_time_and_a_known_one_takes_the_slot_due() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crontab");
    let log = dir.path().join("n.log");
    std::fs::write(&file, line("n", 10, &log, 200, "")).unwrap();
    let deployed = s.wait_for_phase(10_000, 2_000, 5_000);
    let due = deployed - deployed.rem_euclid(10_000);
    let mut a = Replica::start(&s.url, &file, dir.path(), "a", &[]);
    // A second replica of the deploy, started after the first one saw the job: the slot due
    // before the deploy is not taken by it either.
    let mut a2 = Replica::start(&s.url, &file, dir.path(), "a2", &[]);
    wait_for("the first run", Duration::from_secs(20), || {
        !attempts(&log).is_empty()
    });
    let first = attempts(&log)[0].0;
    assert_eq!(
        first,
        due + 10_000,
        "a new job ran the slot due before it was deployed ({due})\n{}\n{}",
        a.stderr(),
        a2.stderr()
    );
    assert!(
        a.stderr()
            .contains("new to the store: its first run is its next fire time"),
        "{}",
        a.stderr()
    );
    // Known now: killed, a slot missed, started again within --max-late: that slot runs.
    s.wait_for_phase(10_000, 5_000, 8_000);
    for r in [&mut a, &mut a2] {
        r.kill();
    }
    let down = s.now_ms();
    let missed = down - down.rem_euclid(10_000) + 10_000;
    wait_for("the missed slot to pass", Duration::from_secs(20), || {
        s.now_ms() > missed + 2_000
    });
    let b = Replica::start(&s.url, &file, dir.path(), "b", &[]);
    wait_for(
        "the slot missed while down",
        Duration::from_secs(10),
        || attempts(&log).iter().any(|(slot, _, _)| *slot == missed),
    );
    assert!(
        b.stderr().contains("known to the store: the run of"),
        "{}",
        b.stderr()
    );
}

/// A hand-over is recorded as one (issue 46, item 7): SIGTERM to the replica running a long
/// command hands its run to the replica standing by, and the store says attempt 1 was handed over
/// by that replica at its shutdown, not that its lease expired as after kill -9; the events say
/// `handed_over` and that attempt 2 took the run over from the replica that handed it over, and
/// the timeline says "handed over".
#[test]
fn a_hand_over_is_recorded_as_handed_over_not_as_a_crash() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crontab");
    let log = dir.path().join("h.log");
    std::fs::write(&file, line("h", 20, &log, 60_000, "--lease 10s")).unwrap();
    // -v: "standing by" is a routine note, at debug (issue 48 item 3).
    let grace = ["--shutdown-grace", "1s", "-v"];
    let mut a = Replica::start(&s.url, &file, dir.path(), "a", &grace);
    let mut b = Replica::start(&s.url, &file, dir.path(), "b", &grace);
    wait_for("the run to start", Duration::from_secs(40), || {
        !attempts(&log).is_empty()
    });
    let slot = attempts(&log)[0].0;
    let (holder, other) = if a.stderr().contains("won; running the command") {
        (&mut a, &mut b)
    } else {
        (&mut b, &mut a)
    };
    wait_for(
        "the other replica to stand by",
        Duration::from_secs(10),
        || other.stderr().contains("standing by"),
    );
    let handed_by = holder.runner();
    assert_eq!(holder.stop(Duration::from_secs(20)), Some(0));
    wait_for("attempt 2", Duration::from_secs(10), || {
        attempts(&log)
            .iter()
            .any(|(s2, n, _)| *s2 == slot && *n == 2)
    });
    let first = s
        .results("h")
        .into_iter()
        .find(|r| r.slot == slot && r.attempt == Some(1))
        .expect("attempt 1 recorded");
    assert_eq!(first.status, "interrupted");
    assert_eq!(first.result["reason"], "handed over", "{:?}", first.result);
    assert_eq!(first.result["handed_over_by"], handed_by.as_str());
    assert_eq!(first.result["why"], "shutdown");
    let out = s.cli(&["history", "h", "--events", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let events = crate::common::json(&out)["events"]
        .as_array()
        .unwrap()
        .clone();
    let handed: Vec<_> = events
        .iter()
        .filter(|e| e["event"] == "handed_over")
        .collect();
    assert_eq!(handed.len(), 1, "{events:#?}");
    assert_eq!(handed[0]["reason"], "shutdown");
    assert!(
        events.iter().all(|e| e["event"] != "lease_expired"),
        "{events:#?}"
    );
    let took_over = events
        .iter()
        .find(|e| e["event"] == "took_over")
        .expect("a takeover event");
    assert_eq!(
        took_over["detail"],
        format!("from {handed_by}, which handed it over"),
        "{took_over:#}"
    );
    let out = s.cli(&["timeline", "h", "--color", "never"]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.contains("handed over (shutdown)"), "{text}");
    // Planned, not a failure (issue 61 item 5): `inspect` (and so the page, top and /metrics,
    // which read the same health) shows no last failure and none in a row.
    let out = s.cli(&["inspect", "h", "--json"]);
    let health = crate::common::json(&out)["health"].clone();
    assert!(health["last_failure"].is_null(), "{health:#}");
    assert_eq!(health["failed_in_a_row"], 0, "{health:#}");
}
