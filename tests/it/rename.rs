//! A job renamed or edited while `anarchon cron` runs it (issue 46, item 5): a reload that renames
//! a job during its run, a rolling deploy where old replicas run the old name and new ones the new
//! name (`--was OLD`), and an edit that re-derives a derived name. The ground truth is the
//! command's own log (`common::ticker`, each line `<job>@<slot> <ms>`): two copies at one instant
//! under `--overlap forbid`, or one scheduled time run under two names, fail.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::replica::Replica;
use crate::common::ticker::{assert_no_two_spans_overlap, spans_of, ticker_as};
use crate::common::{Server, wait_for};

/// The ticker's command line: logs `<job>@<slot> <ms>` to `log` for `ms` milliseconds.
fn ticker(log: &Path, ms: u64) -> String {
    ticker_as(log, "$ANARCHON_JOB@$ANARCHON_SLOT", ms, false)
}

/// Each slot, with the jobs (names) that ran it and their spans (first and last logged ms).
type Slots = BTreeMap<i64, Vec<(String, (i64, i64))>>;

/// The runs in the log: each slot, with the jobs (names) that ran it and their spans.
fn runs_by_slot(log: &Path) -> Slots {
    let mut slots: Slots = BTreeMap::new();
    for (id, span) in spans_of::<String>(log) {
        let (job, slot) = id.split_once('@').expect("<job>@<slot>");
        slots
            .entry(slot.parse().unwrap())
            .or_default()
            .push((job.to_string(), span));
    }
    slots
}

/// Fails when one scheduled time ran under two names.
fn assert_each_slot_once(log: &Path) -> Slots {
    let slots = runs_by_slot(log);
    for (slot, runs) in &slots {
        assert!(
            runs.len() == 1,
            "slot {slot} ran {} times: {runs:?}",
            runs.len()
        );
    }
    slots
}

/// Whether a run of a job that `is` picks has logged for at least `ms`.
fn ran_for(log: &Path, is: impl Fn(&str) -> bool, ms: i64) -> bool {
    runs_by_slot(log)
        .values()
        .flatten()
        .any(|(job, (t0, t1))| is(job) && t1 - t0 >= ms)
}

/// The slots each name ran, from the log (`<job>@<slot>`).
fn slots_of(log: &Path, job: &str) -> Vec<i64> {
    runs_by_slot(log)
        .into_iter()
        .filter(|(_, runs)| runs.iter().any(|(j, _)| j == job))
        .map(|(slot, _)| slot)
        .collect()
}

/// The ticker that also logs its attempt: `<job>@<slot>@<attempt> <ms>`.
fn ticker_with_attempts(log: &Path, ms: u64) -> String {
    ticker_as(
        log,
        "$ANARCHON_JOB@$ANARCHON_SLOT@$ANARCHON_ATTEMPT",
        ms,
        false,
    )
}

/// The two crontabs of a deploy that renames job `old` to `new`: `line` under `--job OLD FLAGS`
/// (the file `old`) and under `--job NEW --was OLD FLAGS` (the file `new`).
fn renaming_crontabs(
    dir: &Path,
    (old, new): (&str, &str),
    flags: &str,
    line: &str,
) -> (PathBuf, PathBuf) {
    let files = (dir.join("old"), dir.join("new"));
    std::fs::write(&files.0, format!("# anarchon: --job {old} {flags}\n{line}")).unwrap();
    std::fs::write(
        &files.1,
        format!("# anarchon: --job {new} --was {old} {flags}\n{line}"),
    )
    .unwrap();
    files
}

/// A reload that renames a job (its `--job`) while the old name's run is in progress: under
/// `--overlap forbid` (the default) the new name's slots wait their turn behind that run, as the
/// old name's own would, and the new name runs once it has ended.
#[test]
fn a_rename_on_reload_never_runs_beside_the_old_names_run() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (file, log) = (dir.path().join("crontab"), dir.path().join("log"));
    let line = format!("*/5 * * * * * {}\n", ticker(&log, 8_000));
    std::fs::write(
        &file,
        format!("# anarchon: --job nightly-v1 --overlap forbid\n{line}"),
    )
    .unwrap();
    let replica = Replica::start(&s.url, &file, dir.path(), "r", &[]);
    wait_for("v1 to run", Duration::from_secs(15), || {
        !slots_of(&log, "nightly-v1").is_empty()
    });
    std::fs::write(
        &file,
        format!("# anarchon: --job nightly-v2 --overlap forbid\n{line}"),
    )
    .unwrap();
    replica.hup();
    wait_for(
        "v2 to run 2 s after v1's run",
        Duration::from_secs(40),
        || ran_for(&log, |job| job == "nightly-v2", 2_000),
    );
    let spans = assert_no_two_spans_overlap::<String>(&log);
    assert_each_slot_once(&log);
    assert!(
        replica.stderr().contains("nightly-v1, its old name"),
        "{}\n{spans:?}",
        replica.stderr()
    );
}

/// The same with `--overlap allow`: the new name may run beside the old name's run of an older
/// slot, but every scheduled time runs once.
#[test]
fn a_rename_on_reload_under_overlap_allow_runs_each_slot_once() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (file, log) = (dir.path().join("crontab"), dir.path().join("log"));
    let line = format!("*/2 * * * * * {}\n", ticker(&log, 1_000));
    std::fs::write(
        &file,
        format!("# anarchon: --job nightly-v1 --overlap allow\n{line}"),
    )
    .unwrap();
    let replica = Replica::start(&s.url, &file, dir.path(), "r", &[]);
    wait_for("v1 to run", Duration::from_secs(15), || {
        !slots_of(&log, "nightly-v1").is_empty()
    });
    std::fs::write(
        &file,
        format!("# anarchon: --job nightly-v2 --overlap allow\n{line}"),
    )
    .unwrap();
    replica.hup();
    wait_for("v2 to run 3 slots", Duration::from_secs(30), || {
        slots_of(&log, "nightly-v2").len() >= 3
    });
    assert_each_slot_once(&log);
}

/// A rolling deploy: one replica still runs the old crontab (`nightly-v1`), a new one the renamed
/// job (`--job nightly-v2 --was nightly-v1`). Both claim every scheduled time; each runs once, under
/// one name, and under forbid never two at once.
#[test]
fn a_rolling_deploy_of_a_rename_runs_each_slot_once() {
    for overlap in ["forbid", "allow"] {
        let s = Server::start();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let line = format!("*/2 * * * * * {}\n", ticker(&log, 1_500));
        let flags = format!("--overlap {overlap}");
        let (old, new) = renaming_crontabs(dir.path(), ("nightly-v1", "nightly-v2"), &flags, &line);
        let _a = Replica::start(&s.url, &old, dir.path(), "old", &[]);
        let b = Replica::start(&s.url, &new, dir.path(), "new", &[]);
        wait_for("6 slots to run", Duration::from_secs(40), || {
            runs_by_slot(&log).len() >= 6
        });
        let slots = assert_each_slot_once(&log);
        if overlap == "forbid" {
            assert_no_two_spans_overlap::<String>(&log);
        }
        // Each scheduled time is claimed by both; which name wins is a race, and either may.
        assert!(slots.len() >= 6, "{slots:?}\n{}", b.stderr());
    }
}

/// An edit of a line whose job name is derived from it (no `--job`) renames the job; a reload
/// during its run knows the old name of that line, so the new name waits for the old run.
#[test]
fn an_edit_that_re_derives_a_name_never_runs_beside_the_old_run() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (file, log) = (dir.path().join("crontab"), dir.path().join("log"));
    let before = format!("*/5 * * * * * {}\n", ticker(&log, 8_000));
    let after = format!("*/5 * * * * * {}; true\n", ticker(&log, 8_000));
    std::fs::write(&file, &before).unwrap();
    let replica = Replica::start(&s.url, &file, dir.path(), "r", &[]);
    wait_for("the first name to run", Duration::from_secs(15), || {
        runs_by_slot(&log).len() == 1
    });
    let first: Vec<String> = spans_of::<String>(&log).into_keys().collect();
    let first = first[0].split_once('@').unwrap().0.to_string();
    std::fs::write(&file, &after).unwrap();
    replica.hup();
    wait_for("the new name to run 2 s", Duration::from_secs(40), || {
        ran_for(&log, |job| job != first, 2_000)
    });
    assert_no_two_spans_overlap::<String>(&log);
    assert_each_slot_once(&log);
}

/// A rolling deploy where the new replica that holds a slot (claimed under the old name, then
/// under the new one) is killed (-9) during its run: the leases it held end, and the slot is
/// taken over once, under one name or the other (an old replica started during the run, for the old name, or
/// the other new replica, which waited on the old name's claim), never beside another copy, and
/// it runs to its end.
#[test]
fn a_new_replica_killed_during_a_renamed_run_leaves_the_slot_to_one_takeover() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let command = ticker_with_attempts(&log, 2_000);
    let line = format!("*/5 * * * * * {command}\n");
    let (old, new) = renaming_crontabs(
        dir.path(),
        ("nightly-v1", "nightly-v2"),
        "--lease 3s",
        &line,
    );
    let mut new = [
        Replica::start(&s.url, &new, dir.path(), "new1", &[]),
        Replica::start(&s.url, &new, dir.path(), "new2", &[]),
    ];
    let runs = || -> Vec<(String, i64, u32, (i64, i64))> {
        spans_of::<String>(&log)
            .into_iter()
            .map(|(id, span)| {
                let mut parts = id.split('@');
                let job = parts.next().unwrap().to_string();
                let slot = parts.next().unwrap().parse().unwrap();
                let attempt = parts.next().unwrap().parse().unwrap();
                (job, slot, attempt, span)
            })
            .collect()
    };
    // The first run of the new name: its holder is the one new replica that says it won.
    wait_for("a run under the new name", Duration::from_secs(40), || {
        runs().iter().any(|(job, ..)| job == "nightly-v2")
    });
    let killed_slot = runs()
        .iter()
        .find(|(job, ..)| job == "nightly-v2")
        .map(|r| r.1)
        .unwrap();
    let holder = new
        .iter()
        .position(|r| r.stderr().contains("[nightly-v2 ") && r.stderr().contains("won; running"))
        .expect("a new replica won");
    new[holder].kill();
    // The old replica joins only now, while the killed run's lease lasts: beside the new ones
    // from the start, it won the race to the old name's claim of every slot in one CI run, and
    // the slot to kill was never a new replica's.
    let _old = Replica::start(&s.url, &old, dir.path(), "old", &[]);
    wait_for(
        "the killed slot to run to its end, and two slots after it",
        Duration::from_secs(40),
        || {
            let runs = runs();
            runs.iter()
                .any(|(_, slot, _, (t0, t1))| *slot == killed_slot && t1 - t0 >= 1_800)
                && runs
                    .iter()
                    .any(|(_, slot, _, (t0, t1))| *slot >= killed_slot + 10_000 && t1 - t0 >= 1_800)
        },
    );
    let all = runs();
    eprintln!("killed slot {killed_slot}; runs: {all:?}");
    assert_no_two_spans_overlap::<String>(&log);
    assert!(
        all.iter()
            .any(|(_, slot, _, (t0, t1))| *slot == killed_slot && t1 - t0 < 1_800),
        "the holder was killed after its run had ended: {all:?}"
    );
    // The killed replica's claim under the new name may stay in progress (nothing ends it but a
    // later slot claimed under the new name), but the slot ran under the old name: monitoring
    // calls it neither expired nor lost.
    if all.iter().any(|(job, slot, _, (t0, t1))| {
        job == "nightly-v1" && *slot == killed_slot && t1 - t0 >= 1_800
    }) {
        let list = s.cli(&["list", "--json"]).expect(0).json();
        let v2 = list["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["job"] == "nightly-v2")
            .unwrap_or_else(|| panic!("{list}"))
            .clone();
        assert_eq!(v2["health"]["expired_slots"], serde_json::json!([]), "{v2}");
        assert_eq!(v2["health"]["lost_slots"], serde_json::json!([]), "{v2}");
    }
    for (job, slot, attempt, span) in &all {
        let completed = all
            .iter()
            .filter(|(_, s, _, (t0, t1))| s == slot && t1 - t0 >= 1_800)
            .count();
        assert!(
            completed <= 1,
            "slot {slot} ran to its end {completed} times ({job} #{attempt} {span:?}): {all:?}"
        );
    }
}

/// A rolling deploy's SIGTERM of an old replica that runs the old name: its run is handed over
/// (its lease ends now), and the new replica, which waited on the old name's claim of that slot,
/// takes it over at once under the new name: the run moves on, once, never beside itself.
#[test]
fn an_old_replica_s_run_handed_over_at_sigterm_goes_on_under_the_new_name() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let command = ticker_with_attempts(&log, 20_000);
    let line = format!("*/30 * * * * * {command}\n");
    let (old, new) = renaming_crontabs(
        dir.path(),
        ("nightly-v1", "nightly-v2"),
        "--lease 30s",
        &line,
    );
    let grace = ["--shutdown-grace", "1s"];
    let old_replica = Replica::start(&s.url, &old, dir.path(), "old", &grace);
    wait_for("the old name to run", Duration::from_secs(40), || {
        !spans_of::<String>(&log).is_empty()
    });
    let first = spans_of::<String>(&log).into_keys().next().unwrap();
    assert!(first.starts_with("nightly-v1@"), "{first}");
    let slot = first.split('@').nth(1).unwrap().to_string();
    let new_replica = Replica::start(&s.url, &new, dir.path(), "new", &grace);
    wait_for(
        "the new replica to wait for the old name's claim",
        Duration::from_secs(10),
        || {
            new_replica
                .stderr()
                .contains("its old name, holds this time")
        },
    );
    old_replica.signal("-TERM");
    let moved = format!("nightly-v2@{slot}@1");
    wait_for(
        "the run to go on under the new name",
        Duration::from_secs(15),
        || spans_of::<String>(&log).contains_key(&moved),
    );
    let spans = assert_no_two_spans_overlap::<String>(&log);
    assert_eq!(spans.len(), 2, "{spans:?}");
}

/// A rolling deploy of an edit of a line whose name is derived: the new line names the old line's
/// derived name with `--was` (what `cron --check` shows), and each scheduled time runs once.
#[test]
fn a_rolling_deploy_of_an_edited_derived_line_with_was_runs_each_slot_once() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let command = ticker(&log, 1_500);
    let edited = format!("{command}; true");
    let old_name = anarchon::settings::crontab::derived_name("*/2 * * * * *", &command);
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    std::fs::write(&old, format!("*/2 * * * * * {command}\n")).unwrap();
    std::fs::write(
        &new,
        format!("# anarchon: --was {old_name}\n*/2 * * * * * {edited}\n"),
    )
    .unwrap();
    let _a = Replica::start(&s.url, &old, dir.path(), "old", &[]);
    let b = Replica::start(&s.url, &new, dir.path(), "new", &[]);
    assert!(
        b.stderr().contains(&format!("was {old_name}")),
        "{}",
        b.stderr()
    );
    wait_for("6 slots to run", Duration::from_secs(40), || {
        runs_by_slot(&log).len() >= 6
    });
    assert_each_slot_once(&log);
    assert_no_two_spans_overlap::<String>(&log);
}

/// A full-fleet restart that deploys a rename (`--was`), with `--catch-up`: the slots missed while
/// the fleet was down are caught up at once under the new name. The new name has no past of its
/// own; its catch-up reaches back over its old name's (when the store first saw that name, which
/// slots it claimed), as the job's past is one.
#[test]
fn a_full_fleet_restart_that_renames_a_job_catches_up_its_missed_runs() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let line = format!("*/15 * * * * * {}\n", ticker(&log, 200));
    let flags = "--catch-up 5m --max-late 2s";
    let (old, new) = renaming_crontabs(dir.path(), ("c1", "c2"), flags, &line);
    let mut a = Replica::start(&s.url, &old, dir.path(), "a", &[]);
    wait_for("a first run of c1", Duration::from_secs(40), || {
        !slots_of(&log, "c1").is_empty()
    });
    s.wait_for_phase(15_000, 3_000, 12_000);
    assert_eq!(a.stop(Duration::from_secs(10)), Some(0));
    let stopped = s.now_ms();
    let last_missed = stopped - stopped.rem_euclid(15_000) + 30_000;
    wait_for("two missed slots", Duration::from_secs(60), || {
        s.now_ms() > last_missed + 5_000
    });
    let b = Replica::start(&s.url, &new, dir.path(), "b", &[]);
    let missed = [last_missed - 15_000, last_missed];
    wait_for(
        "the missed runs, under the new name",
        Duration::from_secs(8),
        || missed.iter().all(|m| slots_of(&log, "c2").contains(m)),
    );
    let runs = assert_each_slot_once(&log);
    assert!(
        runs.keys()
            .all(|slot| *slot <= stopped || missed.contains(slot) || *slot > last_missed),
        "{runs:?}\n{}",
        b.stderr()
    );
}

/// A pause of a job's old name pauses the renamed job: an operator who paused `v1` while a deploy
/// renamed it to `v2 --was v1` did not mean the new replicas to run it. `v2` runs nothing while
/// `v1` is paused, says why, and runs again once `v1` is resumed.
#[test]
fn a_pause_of_the_old_name_pauses_the_renamed_job() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let line = format!("*/2 * * * * * {}\n", ticker(&log, 100));
    let (old, new) = renaming_crontabs(dir.path(), ("v1", "v2"), "", &line);
    let mut a = Replica::start(&s.url, &old, dir.path(), "a", &[]);
    wait_for("a run of v1", Duration::from_secs(20), || {
        !slots_of(&log, "v1").is_empty()
    });
    assert_eq!(a.stop(Duration::from_secs(10)), Some(0));
    s.anarchon()
        .args(["pause", "v1", "--for", "1h", "--reason", "incident"])
        .assert()
        .success();
    let b = Replica::start(&s.url, &new, dir.path(), "b", &[]);
    wait_for(
        "v2 to say its old name is paused",
        Duration::from_secs(10),
        || b.stderr().matches("v1, its old name, is paused").count() >= 2,
    );
    assert!(slots_of(&log, "v2").is_empty(), "{:?}", runs_by_slot(&log));
    let resumed = s.now_ms();
    s.anarchon().args(["resume", "v1"]).assert().success();
    wait_for(
        "v2 to run once v1 is resumed",
        Duration::from_secs(10),
        || slots_of(&log, "v2").iter().any(|slot| *slot > resumed),
    );
    assert_each_slot_once(&log);
}

/// A rolling deploy that renames a job while its old name runs a long command: the new replica,
/// started later than `--max-late` after the slot, stands by for the old name's run in progress,
/// and when the old replica hands it over at its SIGTERM, takes it over under the new name, once,
/// never beside the old one.
#[test]
fn a_new_replica_started_late_takes_over_the_old_name_s_run_handed_over() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let command = ticker_with_attempts(&log, 60_000);
    let line = format!("*/30 * * * * * {command}\n");
    let flags = "--lease 10s --max-late 2s --max-attempts 3";
    let (old, new) = renaming_crontabs(dir.path(), ("big-v1", "big-v2"), flags, &line);
    // -v: "standing by" is a routine note, at debug (issue 48 item 3).
    let grace = ["--shutdown-grace", "1s", "-v"];
    s.wait_for_phase(30_000, 5_000, 24_000);
    let mut old_replica = Replica::start(&s.url, &old, dir.path(), "old", &grace);
    wait_for("the old name to run", Duration::from_secs(40), || {
        !spans_of::<String>(&log).is_empty()
    });
    let first = spans_of::<String>(&log).into_keys().next().unwrap();
    let slot: i64 = first.split('@').nth(1).unwrap().parse().unwrap();
    wait_for("slot + 4 s", Duration::from_secs(20), || {
        s.now_ms() > slot + 4_000
    });
    let new_replica = Replica::start(&s.url, &new, dir.path(), "new", &grace);
    wait_for(
        "the new replica to stand by for the old name's run",
        Duration::from_secs(10),
        || new_replica.stderr().contains("standing by"),
    );
    assert_eq!(old_replica.stop(Duration::from_secs(20)), Some(0));
    let moved = format!("big-v2@{slot}@1");
    wait_for(
        "the run to go on under the new name",
        Duration::from_secs(10),
        || spans_of::<String>(&log).contains_key(&moved),
    );
    let spans = assert_no_two_spans_overlap::<String>(&log);
    assert_eq!(spans.len(), 2, "{spans:?}\n{}", new_replica.stderr());
}

/// A renamed job paused under its new name claims nothing under its old name meanwhile: a claim
/// held there would only be handed on at each slot, each replica in turn spending one of the old
/// name's attempts until none was left and the slot stood `interrupted` with no run (the soak's
/// last lost slot). The old name's history has nothing of the pause's slots, and the job runs
/// once resumed.
#[test]
fn a_renamed_job_paused_under_its_new_name_claims_nothing_under_the_old() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (file, log) = (dir.path().join("new"), dir.path().join("log"));
    let line = format!("*/2 * * * * * {}\n", ticker(&log, 100));
    std::fs::write(&file, format!("# anarchon: --job v2 --was v1\n{line}")).unwrap();
    let a = Replica::start(&s.url, &file, dir.path(), "a", &[]);
    let b = Replica::start(&s.url, &file, dir.path(), "b", &[]);
    wait_for("a run of v2", Duration::from_secs(20), || {
        !slots_of(&log, "v2").is_empty()
    });
    s.anarchon()
        .args(["pause", "v2", "--for", "1h", "--reason", "incident"])
        .assert()
        .success();
    let paused = s.now_ms();
    wait_for("three paused slots", Duration::from_secs(20), || {
        a.stderr().matches("the job is paused").count() >= 3
            && b.stderr().matches("the job is paused").count() >= 3
    });
    let history = s.cli(&["history", "v1", "--json"]).json();
    let during: Vec<&serde_json::Value> = history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["slot"].as_i64().unwrap() > paused)
        .collect();
    assert!(
        during.is_empty(),
        "v1 has records of the paused slots: {during:?}\n{}",
        a.stderr()
    );
    let resumed = s.now_ms();
    s.anarchon().args(["resume", "v2"]).assert().success();
    wait_for("v2 to run once resumed", Duration::from_secs(10), || {
        slots_of(&log, "v2").iter().any(|slot| *slot > resumed)
    });
    assert_each_slot_once(&log);
}

/// Monitoring follows a rename: after a rolling deploy of `v1` -> `v2 --was v1`, `check` over a
/// window reaching back before the rename reads no slot as missed (each was run under one name or
/// the other) and reports `v1` renamed to `v2`, not CRITICAL for every slot since; named alone,
/// each says the same. Once the new replicas stop too, `v2` is missed: never an OK over a loss.
#[test]
fn check_across_a_rename_judges_the_job_under_its_new_name() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let line = format!("*/2 * * * * * {}\n", ticker(&log, 300));
    let (old, new) = renaming_crontabs(dir.path(), ("v1", "v2"), "", &line);
    let start = s.now_ms();
    let mut a = Replica::start(&s.url, &old, dir.path(), "old", &[]);
    wait_for("v1 to run 2 slots", Duration::from_secs(20), || {
        slots_of(&log, "v1").len() >= 2
    });
    let mut b = Replica::start(&s.url, &new, dir.path(), "new", &[]);
    wait_for(
        "v2's registration to mark v1",
        Duration::from_secs(20),
        || {
            s.cmd::<Option<String>>(&["HGET", "{cron:v1}:registry", "renamed_to"])
                == Some("v2".to_string())
        },
    );
    assert_eq!(a.stop(Duration::from_secs(10)), Some(0));
    let v2_ran = slots_of(&log, "v2").len();
    wait_for("v2 to run 3 slots more", Duration::from_secs(20), || {
        slots_of(&log, "v2").len() >= v2_ran + 3
    });
    assert_each_slot_once(&log);
    let window = format!("{}ms", s.now_ms() - start);
    let check = |names: &[&str]| {
        let mut args = vec!["check", "--window", &window, "--grace", "3s", "--json"];
        args.extend(names);
        s.cli(&args)
    };
    let out = check(&[]);
    let v = out.json();
    assert_eq!((out.code(), &v["status"]), (Some(0), &"OK".into()), "{v}");
    let state = |v: &serde_json::Value, job: &str| {
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["job"] == job)
            .map(|j| (j["state"].clone(), j["health"]["renamed_to"].clone()))
    };
    assert_eq!(
        state(&v, "v1"),
        Some(("renamed".into(), "v2".into())),
        "{v}"
    );
    assert!(
        matches!(state(&v, "v2"), Some((st, _)) if st == "ok" || st == "running"),
        "{v}"
    );
    for name in ["v1", "v2"] {
        let out = check(&[name]);
        assert_eq!(out.code(), Some(0), "{}", out.json());
    }
    let list = s.cli(&["list", "--json"]).json();
    assert!(list.to_string().contains("\"renamed\""), "{list}");
    // The fleet stops: the new name's slots are missed, and check says so.
    assert_eq!(b.stop(Duration::from_secs(10)), Some(0));
    let stopped = s.now_ms();
    wait_for(
        "two slots and the grace to pass",
        Duration::from_secs(20),
        || s.now_ms() > stopped + 4_000 + 3_000 + 1_000,
    );
    let out = check(&["v2"]);
    let v = out.json();
    assert_eq!(out.code(), Some(2), "{v}");
    assert_eq!(state(&v, "v2").map(|s| s.0), Some("missed".into()), "{v}");
}

/// A rename back (`v1` -> `v2 --was v1`, then `v1 --was v2` once that deploy is over) is followed
/// too: `v2` reads renamed to `v1`, and `v1` is judged again. A registration of the name renamed
/// away made after that (a replica of the old deploy started late) does not mark `v1`, the name in
/// use, renamed again (lua/store/mark_renamed.lua's guard, run here as such a replica would).
#[test]
fn a_rename_back_is_followed_and_not_undone_by_a_late_old_replica() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let line = format!("*/2 * * * * * {}\n", ticker(&log, 200));
    let (_, there) = renaming_crontabs(dir.path(), ("v1", "v2"), "", &line);
    let back = dir.path().join("back");
    std::fs::write(&back, format!("# anarchon: --job v1 --was v2\n{line}")).unwrap();
    let renamed_to = |job: &str| {
        s.cmd::<Option<String>>(&["HGET", &format!("{{cron:{job}}}:registry"), "renamed_to"])
    };
    let mut r2 = Replica::start(&s.url, &there, dir.path(), "r2", &[]);
    wait_for(
        "v1 marked renamed to v2, and v2 run",
        Duration::from_secs(20),
        || renamed_to("v1").as_deref() == Some("v2") && !slots_of(&log, "v2").is_empty(),
    );
    assert_eq!(r2.stop(Duration::from_secs(10)), Some(0));
    let _r1 = Replica::start(&s.url, &back, dir.path(), "r1", &[]);
    wait_for("v2 marked renamed to v1", Duration::from_secs(20), || {
        renamed_to("v2").as_deref() == Some("v1")
    });
    assert_eq!(renamed_to("v1"), None);
    // The late replica of the v2 deploy: its lineage (v1) is older than v1's (v2).
    let v2_was_at: String = s.cmd(&["HGET", "{cron:v2}:registry", "was_at"]);
    let marked: i64 = s.cmd(&[
        "EVAL",
        include_str!("../../lua/store/mark_renamed.lua"),
        "1",
        "{cron:v1}:registry",
        "v2",
        &v2_was_at,
    ]);
    assert_eq!((marked, renamed_to("v1")), (0, None));
    wait_for("v1 to run 2 slots", Duration::from_secs(20), || {
        slots_of(&log, "v1").len() >= 2
    });
    assert_each_slot_once(&log);
    let v = s.cli(&["check", "--json"]).json();
    let state = |job: &str| {
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["job"] == job)
            .map(|j| j["state"].clone())
    };
    assert_eq!(state("v2"), Some("renamed".into()), "{v}");
    assert_ne!(state("v1"), Some("renamed".into()), "{v}");
}

/// A rolling deploy of a second rename (`v1` -> `v2 --was v0 --was v1`) where a new replica
/// registers first and marks `v1` renamed to `v2`, and an old replica of `v1 --was v0` registers
/// its job only after (its first slot came later): that registration adds `v0` to `v1`'s earlier
/// names, and must not take the mark back, or `v1` would be judged live and the slots run under
/// `v2` read as missed (the soak's `check` did so: cron, format 2, seed 20).
#[test]
fn an_old_replica_registering_after_the_new_one_leaves_the_rename_marked() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let line = format!("*/2 * * * * * {}\n", ticker(&log, 200));
    let old = dir.path().join("old");
    let new = dir.path().join("new");
    std::fs::write(&old, format!("# anarchon: --job v1 --was v0\n{line}")).unwrap();
    std::fs::write(
        &new,
        format!("# anarchon: --job v2 --was v0 --was v1\n{line}"),
    )
    .unwrap();
    let renamed_to = |job: &str| {
        s.cmd::<Option<String>>(&["HGET", &format!("{{cron:{job}}}:registry"), "renamed_to"])
    };
    let was =
        |job: &str| s.cmd::<Option<String>>(&["HGET", &format!("{{cron:{job}}}:registry"), "was"]);
    let _r2 = Replica::start(&s.url, &new, dir.path(), "r2", &[]);
    wait_for("v1 marked renamed to v2", Duration::from_secs(20), || {
        renamed_to("v1").as_deref() == Some("v2")
    });
    assert_eq!(was("v1"), None, "v1 registered before the new replica");
    let _r1 = Replica::start(&s.url, &old, dir.path(), "r1", &[]);
    wait_for(
        "the old replica to register v1",
        Duration::from_secs(20),
        || was("v1").as_deref() == Some("v0"),
    );
    assert_eq!(renamed_to("v1").as_deref(), Some("v2"));
    let v = s.cli(&["check", "--json"]).json();
    let v1 = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["job"] == "v1")
        .map(|j| j["state"].clone());
    assert_eq!(v1, Some("renamed".into()), "{v}");
}

/// A rename back while replicas of the first rename still run (`v2 --was v1` and `v1 --was v2`):
/// the two lineages name each other, and if each side held the other's slot while waiting for its
/// own, one slot would wait for ever. The newer lineage (`v1 --was v2`, registered after `v2`'s)
/// leaves `v2` out of its claims: here `v1`'s slot is held (as a replica of `v2` holds it while
/// it runs the slot as `v2`), and the replica of `v1` waits for it without holding `v2`'s slot.
#[test]
fn a_rename_back_beside_the_first_rename_never_holds_a_slot_in_a_circle() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    // v2's lineage, as a replica of `v2 --was v1` recorded it, older than any written now.
    let _: () = s.cmd(&["HSET", "{cron:v2}:registry", "was", "v1", "was_at", "1"]);
    let back = dir.path().join("back");
    std::fs::write(
        &back,
        format!(
            "# anarchon: --job v1 --was v2\n*/5 * * * * * {}\n",
            ticker(&log, 200)
        ),
    )
    .unwrap();
    // The next slot of v1, held as the replica of v2 would hold it (the old name's claim, first).
    s.wait_for_phase(5_000, 1_000, 3_500);
    let slot = s.now_ms() / 5_000 * 5_000 + 5_000;
    let holder = crate::common::spawn_run(
        &s,
        &[
            "--job",
            "v1",
            "--slot",
            &slot.to_string(),
            "--runner",
            "v2-replica:1",
            "--",
            "sleep",
            "30",
        ],
    );
    crate::common::wait_for_claim(&s, "v1", &slot.to_string());
    // -v: "standing by" is a routine note, at debug (issue 48 item 3).
    let r1 = Replica::start(&s.url, &back, dir.path(), "r1", &["-v"]);
    wait_for("r1 to wait for v1's slot", Duration::from_secs(15), || {
        r1.stderr().contains("holds this time") || r1.stderr().contains("standing by")
    });
    assert!(
        s.in_progress("v2").is_empty(),
        "the replica of v1 holds v2's slot while it waits for v1's: {:?}\n{}",
        s.in_progress("v2"),
        r1.stderr()
    );
    let mut holder = holder;
    let _ = holder.kill();
    let _ = holder.wait();
}

/// A job with two old names (`v3 --was v1 --was v2`) whose slot was decided under the first (ran
/// as `v1`) while the second still has a claim of it that nobody ended (a replica of this lineage
/// held it, then handed it over at its shutdown: a lease run out with no end). Deciding the slot
/// from `v1` must not leave `v2`'s claim in progress for ever (the soak's `left_unended`, seed 11,
/// format 1: a rename chain's claims of one slot left expired): it is ended, handed to `v3` and
/// skipped for the same reason, and the slot runs under no name. (Under `--overlap allow`, where
/// no later claim of `v2` supersedes the old claim and ends it by the way.)
#[test]
fn a_slot_decided_under_one_old_name_ends_the_other_old_names_claims() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let file = dir.path().join("crontab");
    std::fs::write(
        &file,
        format!(
            "# anarchon: --job v3 --was v1 --was v2 --overlap allow\n*/5 * * * * * {}\n",
            ticker(&log, 200)
        ),
    )
    .unwrap();
    s.wait_for_phase(5_000, 500, 2_000);
    let slot = s.now_ms() / 5_000 * 5_000 + 5_000;
    let at = slot.to_string();
    // Ran as v1, before any replica of v3 came to it.
    s.cli(&["run", "--job", "v1", "--slot", &at, "--", "true"])
        .expect(0);
    // v2's claim of the slot, left by a holder gone: a lease of 1 s, never ended.
    s.cli(&["claim", "v2", "--slot", &at, "--lease", "1s"])
        .expect(0);
    assert_eq!(s.in_progress("v2"), vec![slot]);
    let replica = Replica::start(&s.url, &file, dir.path(), "r", &[]);
    wait_for("v3 to run the next slot", Duration::from_secs(30), || {
        slots_of(&log, "v3").contains(&(slot + 5_000))
    });
    assert!(
        !s.in_progress("v2").contains(&slot),
        "v2's claim of {slot} is left in progress after the slot was decided under v1\n{}",
        replica.stderr()
    );
    let ended = s
        .results("v2")
        .into_iter()
        .rfind(|r| r.slot == slot)
        .unwrap_or_else(|| panic!("no record of v2's {slot}: {:?}", s.results("v2")));
    assert_eq!(ended.status, "finished", "{ended:?}");
    assert_eq!(ended.result["handed_to"], "v3", "{ended:?}");
    assert!(
        ended.result["skipped"]
            .as_str()
            .is_some_and(|why| why.contains("ran as v1")),
        "{ended:?}"
    );
    assert!(
        !runs_by_slot(&log).contains_key(&slot),
        "{:?}",
        runs_by_slot(&log)
    );
    assert_each_slot_once(&log);
}

/// The other order: the first old name's claim is won (held) and the second says the slot ran
/// under it. The held claim ends handed to the new name; where the new name's store keeps no skip
/// record (format 1) it says why itself, or it would read as a slot nobody decided (the soak's
/// checker, format 1, seed 13: "recorded it handed to ..., which has no attempt of it").
#[test]
fn a_held_old_name_s_claim_says_why_when_a_later_old_name_decided_the_slot() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let file = dir.path().join("crontab");
    std::fs::write(
        &file,
        format!(
            "# anarchon: --job v3 --was v1 --was v2 --overlap allow\n*/5 * * * * * {}\n",
            ticker(&log, 200)
        ),
    )
    .unwrap();
    s.wait_for_phase(5_000, 500, 2_000);
    let slot = s.now_ms() / 5_000 * 5_000 + 5_000;
    let at = slot.to_string();
    s.cli(&["run", "--job", "v2", "--slot", &at, "--", "true"])
        .expect(0);
    let _replica = Replica::start(&s.url, &file, dir.path(), "r", &[]);
    wait_for("v3 to run the next slot", Duration::from_secs(30), || {
        slots_of(&log, "v3").contains(&(slot + 5_000))
    });
    let v1 = s
        .results("v1")
        .into_iter()
        .rfind(|r| r.slot == slot)
        .unwrap_or_else(|| panic!("no record of v1's {slot}: {:?}", s.results("v1")));
    assert_eq!(v1.result["handed_to"], "v3", "{v1:?}");
    let v3_skip = s.results("v3").into_iter().any(|r| r.slot == slot);
    let says_why = v1.result["skipped"]
        .as_str()
        .is_some_and(|why| why.contains("ran as v2"));
    assert!(
        v3_skip || says_why,
        "neither v3 recorded the skip nor v1's record says why: {v1:?}"
    );
    assert!(
        !runs_by_slot(&log).contains_key(&slot),
        "{:?}",
        runs_by_slot(&log)
    );
}

/// A pause that begins while a renamed job's slot is in progress under its old name (its holder
/// gone, a replica of the new name waiting to take it over) does not stop the takeover: a pause
/// stops new runs, never a run in progress or its takeover. The replica takes the old name's
/// claim over, then claims the slot under the new name through the pause, and runs it. (The
/// mixed soak, format 1, seed 24: the claim under the new name was refused as paused, the old
/// name's claim handed on, and the pause outlasted every later claim: nobody ran the slot and
/// nothing said why.)
#[test]
fn a_pause_after_the_slot_never_stops_a_renamed_run_s_takeover() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (file, log) = (dir.path().join("crontab"), dir.path().join("log"));
    let line = format!("*/5 * * * * * {}\n", ticker(&log, 100));
    std::fs::write(&file, format!("# anarchon: --job v2 --was v1\n{line}")).unwrap();
    s.wait_for_phase(5_000, 500, 1_500);
    let slot = s.now_ms() / 5_000 * 5_000 + 5_000;
    let at = slot.to_string();
    // The slot claimed under v1 by a holder that then stopped: its lease ends 1-3 s after the slot.
    s.cli(&["claim", "v1", "--slot", &at, "--lease", "5s"])
        .expect(0);
    let replica = Replica::start(&s.url, &file, dir.path(), "r", &[]);
    wait_for(
        "the replica to wait for v1's claim",
        Duration::from_secs(20),
        || replica.stderr().contains("holds this time"),
    );
    s.anarchon()
        .args(["pause", "v2", "--for", "1h", "--reason", "incident"])
        .assert()
        .success();
    wait_for("the slot to run under v2", Duration::from_secs(20), || {
        slots_of(&log, "v2").contains(&slot)
    });
    wait_for("v2's record of the slot", Duration::from_secs(10), || {
        s.results("v2")
            .iter()
            .any(|r| r.slot == slot && r.status == "finished")
    });
    // v1's attempt 1 ended by its lease; the attempt taken over ends handed to v2 (after v2's).
    wait_for(
        "v1's second attempt to end",
        Duration::from_secs(10),
        || {
            s.results("v1")
                .iter()
                .any(|r| r.slot == slot && r.attempt == Some(2))
        },
    );
    let ended = s
        .results("v1")
        .into_iter()
        .filter(|r| r.slot == slot)
        .max_by_key(|r| r.attempt)
        .unwrap_or_else(|| panic!("no record of v1's {slot}\n{}", replica.stderr()));
    assert_eq!(ended.attempt, Some(2), "{ended:?}");
    assert_eq!(ended.status, "finished", "{ended:?}");
    assert_eq!(ended.result["handed_to"], "v2", "{ended:?}");
    assert!(ended.result.get("skipped").is_none(), "{ended:?}");
    // The slots after it are paused: none runs.
    assert_eq!(slots_of(&log, "v2"), vec![slot], "{}", replica.stderr());
    assert_each_slot_once(&log);
}

/// The same pause met at the first look: a replica of the new name that comes to the slot after
/// the pause began (it started late) still takes over the old name's run in progress, whose holder
/// is gone, and runs it; the slots inside the pause it skips.
#[test]
fn a_replica_that_comes_during_a_pause_takes_over_the_old_name_s_run() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (file, log) = (dir.path().join("crontab"), dir.path().join("log"));
    let line = format!("*/10 * * * * * {}\n", ticker(&log, 100));
    std::fs::write(
        &file,
        format!("# anarchon: --job v2 --was v1 --max-late 8s\n{line}"),
    )
    .unwrap();
    s.wait_for_phase(10_000, 500, 2_000);
    let slot = s.now_ms() / 10_000 * 10_000;
    let at = slot.to_string();
    s.cli(&["claim", "v1", "--slot", &at, "--lease", "1s"])
        .expect(0);
    // v2 known to the store (it ran the slot before), so that it can be paused.
    let before = (slot - 10_000).to_string();
    s.cli(&["run", "--job", "v2", "--slot", &before, "--", "true"])
        .expect(0);
    s.anarchon()
        .args(["pause", "v2", "--for", "1h", "--reason", "incident"])
        .assert()
        .success();
    let replica = Replica::start(&s.url, &file, dir.path(), "r", &[]);
    wait_for("the slot to run under v2", Duration::from_secs(20), || {
        slots_of(&log, "v2").contains(&slot)
    });
    assert_each_slot_once(&log);
    drop(replica);
}

/// A replica that gets its SIGTERM while it ends an old name's claim of a slot decided under
/// another old name (`settle_the_rest`: the claim taken over, its end not yet sent) ends that
/// claim before it stops: nobody else returns to a decided slot, so a claim it left would stand
/// `running` until the claim script abandons it an hour on (the mixed soak, format 1, seed 24).
/// The end is held at a relay until the shutdown has begun; a replica that stopped at once would
/// take its request with it (the relay throws a gone client's held bytes away).
#[test]
fn a_sigterm_while_an_old_name_s_claim_is_ended_waits_for_the_end() {
    let s = Server::start();
    let proxy = crate::common::proxy::FaultProxy::start(s.port);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let file = dir.path().join("crontab");
    std::fs::write(
        &file,
        format!(
            "# anarchon: --job v3 --was v1 --was v2 --overlap allow\n*/5 * * * * * {}\n",
            ticker(&log, 200)
        ),
    )
    .unwrap();
    s.wait_for_phase(5_000, 500, 2_000);
    let slot = s.now_ms() / 5_000 * 5_000 + 5_000;
    let at = slot.to_string();
    s.cli(&["run", "--job", "v1", "--slot", &at, "--", "true"])
        .expect(0);
    s.cli(&["claim", "v2", "--slot", &at, "--lease", "1s"])
        .expect(0);
    // The end of v2's claim carries where the slot went.
    proxy.hold_next_request_containing(b"handed_to");
    let mut replica = Replica::start(&proxy.url, &file, dir.path(), "r", &[]);
    wait_for(
        "the end of v2's claim to be sent",
        Duration::from_secs(30),
        || proxy.holding(),
    );
    assert_eq!(s.in_progress("v2"), vec![slot], "v2's claim taken over");
    replica.signal("-TERM");
    wait_for("the shutdown to begin", Duration::from_secs(10), || {
        replica.stderr().contains("shutting down")
    });
    proxy.release();
    let code = replica.exit_code(Duration::from_secs(20));
    assert_eq!(code, Some(0), "{}", replica.stderr());
    assert!(
        !s.in_progress("v2").contains(&slot),
        "v2's claim of {slot} is left in progress by the shutdown\n{}",
        replica.stderr()
    );
    let ended = s
        .results("v2")
        .into_iter()
        .rfind(|r| r.slot == slot)
        .unwrap_or_else(|| panic!("no record of v2's {slot}: {:?}", s.results("v2")));
    assert_eq!(ended.result["handed_to"], "v3", "{ended:?}");
    assert!(!runs_by_slot(&log).contains_key(&slot));
}

/// The soak's rename finding (format 2, seed 42): a replica of the new name claimed the old
/// name's slot (marked handed to it), ran the slot under the new name and recorded it, and was
/// killed before it ended the old name's claim, the second of two steps. A host still running the
/// old name takes that claim over when it lapses: it finds the new name's record and does not run
/// the slot again; the claim ends handed to the new name, its marker naming the takeover, as a
/// hand-over of the new name's reads. When the new name has no record of the slot (the hand-over
/// never reached it), the old name's host runs it. Judged by the command's own file.
#[test]
fn an_old_name_takeover_does_not_run_again_a_slot_the_new_name_ran() {
    let s = Server::start();
    for (slot, new_name_ran) in [("1796220300000", true), ("1796220360000", false)] {
        // What the killed replica left: the old name's claim (attempt 1, a short lease), its
        // marker, and (or not) the new name's run of the slot.
        s.cli(&[
            "claim",
            "old",
            "--slot",
            slot,
            "--lease",
            "1s",
            "--runner",
            "new-replica",
        ])
        .expect(0);
        let marker = format!("{{cron:old}}:handed:{slot}");
        let _: () = s.cmd(&["SET", &marker, "1:new"]);
        if new_name_ran {
            s.cli(&["run", "--job", "new", "--slot", slot, "--", "true"])
                .expect(0);
        }
        let ran = s.dir.path().join(format!("ran-{slot}"));
        let out = s
            .anarchon()
            .args([
                "run",
                "--job",
                "old",
                "--slot",
                slot,
                "--backup-for",
                "20s",
                "--shell",
                "--",
            ])
            .arg(format!("touch {}", ran.display()))
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr).to_string();
        if new_name_ran {
            assert!(!ran.exists(), "the old name's host ran it again: {said}");
            assert!(said.contains("ran as new, its newer name"), "{said}");
            let history = s.cli(&["history", "old", "--json"]).expect(0).json();
            let ended = history["entries"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["slot"].as_i64().unwrap().to_string() == slot && e["attempt"] == 2)
                .unwrap_or_else(|| panic!("no attempt 2 of {slot}: {history}"))
                .clone();
            assert_eq!(ended["status"], "finished", "{ended}");
            assert_eq!(ended["result"]["handed_to"], "new", "{ended}");
            let now: String = s.cmd(&["GET", &marker]);
            assert_eq!(now, "2:new");
        } else {
            assert_eq!(out.status.code(), Some(0), "{said}");
            assert!(ran.exists(), "the slot nobody ran was not run: {said}");
        }
    }
}

/// A slot owed its takeover under an old name (`v1`'s claim of it left by a holder gone) that the
/// renamed job cannot take, because a later old name (`v2`) is paused over it: the replica takes
/// `v1`'s claim over once, hands it on at the pause, and then lets the next slot's claims
/// supersede it. Before, it stood behind it again at once, each time taking `v1`'s claim over
/// and handing it on (the mixed soak, format 1, seed 13: twelve hand-overs of one slot by one
/// replica, its command never started, until the hand-overs' budget was spent).
#[test]
fn an_owed_slot_an_old_name_s_pause_keeps_is_not_taken_over_again_and_again() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let file = dir.path().join("crontab");
    std::fs::write(
        &file,
        format!(
            "# anarchon: --job v3 --was v1 --was v2 --max-late 1m\n*/5 * * * * * {}\n",
            ticker(&log, 200)
        ),
    )
    .unwrap();
    s.wait_for_phase(5_000, 500, 2_000);
    let older = s.now_ms() / 5_000 * 5_000;
    let at = older.to_string();
    // v1's claim of a slot just past, left by a holder gone: a lease of 1 s, never ended.
    s.cli(&["claim", "v1", "--slot", &at, "--lease", "1s"])
        .expect(0);
    // v2, known to the store by an earlier run, paused.
    let earlier = (older - 60_000).to_string();
    s.cli(&["run", "--job", "v2", "--slot", &earlier, "--", "true"])
        .expect(0);
    s.cli(&["pause", "v2"]).expect(0);
    crate::common::wait_for_lease_end(&s, "v1", &at);
    let replica = Replica::start(&s.url, &file, dir.path(), "r", &[]);
    wait_for(
        "v1's claim of the older slot to end",
        Duration::from_secs(30),
        || !s.in_progress("v1").contains(&older),
    );
    // Two slots later: any more takeovers of it would have come by now.
    let two_later = older + 15_000;
    crate::common::wait_for_server_time(&s, two_later);
    let attempts: Vec<(Option<u32>, String)> = s
        .results("v1")
        .into_iter()
        .filter(|r| r.slot == older)
        .map(|r| (r.attempt, r.status))
        .collect();
    assert!(
        attempts.len() <= 3 && attempts.iter().all(|(_, status)| status == "interrupted"),
        "v1's claims of {older}: {attempts:?}\n{}",
        replica.stderr()
    );
    assert!(
        !runs_by_slot(&log).contains_key(&older),
        "{:?}",
        runs_by_slot(&log)
    );
}
