//! `cron --max-running N` (issue 50 item 3): a replica's own cap on the commands it runs at once.
//! Judged by the commands' own log (`common::ticker`: each copy labelled with the replica that ran
//! it, the job and the slot), never by what the replicas say.

use std::path::Path;
use std::time::Duration;

use crate::common::replica::Replica;
use crate::common::ticker::{Copy, copies, ticker_as};
use crate::common::{Server, wait_for};

/// A crontab line: `job` on `schedule` (6 fields), logging `<runner>/<job>/<slot>` for `ms`.
fn line(job: &str, schedule: &str, log: &Path, ms: u64, flags: &str) -> String {
    format!(
        "# anarchon: --job {job} {flags}\n{schedule} {}\n",
        ticker_as(
            log,
            "$ANARCHON_RUNNER/$ANARCHON_JOB/$ANARCHON_SLOT",
            ms,
            false
        )
    )
}

/// A copy's (runner, job, slot).
fn labelled(c: &Copy) -> (String, String, i64) {
    let mut parts = c.label.rsplitn(3, '/');
    let slot = parts.next().unwrap().parse().unwrap();
    let job = parts.next().unwrap().to_string();
    (parts.next().unwrap().to_string(), job, slot)
}

/// No replica ran two commands at one instant.
fn assert_one_at_a_time_per_replica(all: &[Copy]) {
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            if labelled(a).0 == labelled(b).0 {
                assert!(!a.overlaps(b), "{a:?} and {b:?} ran at once on one replica");
            }
        }
    }
}

/// Three jobs firing together and three replicas at `--max-running 1`: a replica running one
/// command claims nothing more, so the other replicas take the other jobs (without the cap the
/// herd's first choice of two of the jobs is often one replica, which runs both). Each slot runs
/// once.
#[test]
fn a_replica_at_its_cap_leaves_the_other_slots_to_the_others() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (file, log) = (dir.path().join("crontab"), dir.path().join("log"));
    let text: String = ["a", "b", "c"]
        .iter()
        .map(|job| line(job, "*/10 * * * * *", &log, 3_000, ""))
        .collect();
    std::fs::write(&file, text).unwrap();
    s.wait_for_phase(10_000, 1_000, 5_000);
    let _replicas: Vec<Replica> = ["r1", "r2", "r3"]
        .iter()
        .map(|name| Replica::start(&s.url, &file, dir.path(), name, &["--max-running", "1"]))
        .collect();
    wait_for(
        "two fire times of the three jobs",
        Duration::from_secs(40),
        || copies(&log).iter().filter(|c| c.completed).count() >= 6,
    );
    let all = copies(&log);
    assert_one_at_a_time_per_replica(&all);
    let mut runs: Vec<(String, i64)> = all.iter().map(|c| (labelled(c).1, labelled(c).2)).collect();
    let first_slot = runs.iter().map(|r| r.1).min().unwrap();
    runs.sort();
    let before = runs.len();
    runs.dedup();
    assert_eq!(before, runs.len(), "a slot ran twice: {all:?}");
    for job in ["a", "b", "c"] {
        assert!(
            runs.contains(&(job.to_string(), first_slot)),
            "{job} did not run at the first fire time: {all:?}"
        );
    }
}

/// One replica at `--max-running 1` with a long command running: a job whose `--max-late` ends
/// before the command does is not run, and is recorded skipped with why; one whose `--max-late`
/// reaches past it runs when the room frees, after the long one, never beside it.
#[test]
fn a_slot_that_finds_no_room_waits_up_to_max_late_then_is_recorded_skipped() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (file, log) = (dir.path().join("crontab"), dir.path().join("log"));
    let text = [
        line("long", "*/10 * * * * *", &log, 6_000, ""),
        line(
            "gives-up",
            "1,11,21,31,41,51 * * * * *",
            &log,
            500,
            "--max-late 2s",
        ),
        line(
            "waits",
            "2,12,22,32,42,52 * * * * *",
            &log,
            500,
            "--max-late 7s",
        ),
    ]
    .concat();
    std::fs::write(&file, text).unwrap();
    s.wait_for_phase(10_000, 3_000, 8_000);
    let replica = Replica::start(
        &s.url,
        &file,
        dir.path(),
        "r",
        &["--max-running", "1", "--listen", "127.0.0.1:0"],
    );
    wait_for("the waiting job to run", Duration::from_secs(40), || {
        copies(&log)
            .iter()
            .any(|c| labelled(c).1 == "waits" && c.completed)
    });
    let all = copies(&log);
    assert_one_at_a_time_per_replica(&all);
    let long = all.iter().find(|c| labelled(c).1 == "long").unwrap();
    let waited = all.iter().find(|c| labelled(c).1 == "waits").unwrap();
    assert!(
        waited.first >= long.last,
        "waits started before long ended: {all:?}"
    );
    let gave_up_slot = labelled(long).2 + 1_000;
    assert!(
        !all.iter()
            .any(|c| labelled(c).1 == "gives-up" && labelled(c).2 == gave_up_slot),
        "gives-up ran: {all:?}"
    );
    let skipped = s.results("gives-up");
    let record = skipped
        .iter()
        .find(|r| r.slot == gave_up_slot)
        .unwrap_or_else(|| {
            panic!(
                "no record of gives-up's slot: {skipped:?}\n{}",
                replica.stderr()
            )
        });
    assert_eq!(record.status, "skipped", "{record:?}");
    let reason = record.result["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("--max-running 1") && reason.contains("--max-late 2s"),
        "{reason}"
    );
    // /metrics says the cap, and how many slots found no room (gives-up's and waits').
    let (_, metrics) = crate::common::http::get(replica.listening_port(), "/metrics");
    assert!(metrics.contains("anarchon_cron_max_running 1"), "{metrics}");
    let without_room =
        crate::common::http::sample(&metrics, "anarchon_cron_slots_without_room_total")
            .unwrap_or_else(|| panic!("{metrics}"));
    assert!(without_room >= 2, "{metrics}");
}
