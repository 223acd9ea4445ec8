//! Daylight-saving transitions with real processes: the server's clock is set to the night of a
//! change (faketime on redis-server), and `anarchon run --schedule ... --tz ...` picks the slot the
//! policy in src/schedule.rs names, runs it once, and the command sees that slot.
//! (Every transition's exact slots, both directions, are unit tests in src/schedule.rs.)

use crate::common::{Server, json, stderr};

/// Runs `schedule` in `tz` on a server whose clock starts at `server_utc`; returns the exit code,
/// the slot `run` reported, and the slot the command saw (None when it did not run).
fn run_at(server_utc: &str, schedule: &str, tz: &str) -> Option<(i32, i64, Option<i64>)> {
    let s = Server::start_with_clock_at(server_utc)?;
    Some(run_on(&s, "dst", schedule, tz))
}

/// Runs `schedule` in `tz` as `job` on `s`, at the server's clock: the exit code, the slot `run`
/// reported, and the slot the command saw (None when it did not run).
fn run_on(s: &Server, job: &str, schedule: &str, tz: &str) -> (i32, i64, Option<i64>) {
    let seen = tempfile::NamedTempFile::new_in(s.dir.path())
        .unwrap()
        .into_temp_path();
    std::fs::remove_file(&seen).unwrap();
    let out = s
        .anarchon()
        .args(["run", "--job", job, "--schedule", schedule, "--tz", tz])
        .args(["--json", "--", "sh", "-c", "echo $ANARCHON_SLOT > \"$0\""])
        .arg(&seen)
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    assert!(code == 0 || code == 81 || code == 84, "{}", stderr(&out));
    let slot = json(&out)["slot"].as_i64().unwrap();
    let ran = std::fs::read_to_string(&seen)
        .ok()
        .map(|t| t.trim().parse().unwrap());
    (code, slot, ran)
}

/// The slots `job` has a record of, each with its status.
fn recorded(s: &Server, job: &str) -> Vec<(i64, String)> {
    s.results(job)
        .into_iter()
        .map(|r| (r.slot, r.status))
        .collect()
}

/// The exit code of `run` at the repeated hour's second pass, on the server where the first ran.
const SECOND_0230: i32 = 84;

fn ms(rfc: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc)
        .unwrap()
        .timestamp_millis()
}

#[test]
fn berlin_spring_forward_runs_the_skipped_0230_once_at_the_jump() {
    // 2026-03-29: 02:00 CET -> 03:00 CEST at 01:00 UTC; 02:30 never happens.
    let Some((code, slot, ran)) = run_at("2026-03-29 01:00:05", "30 2 * * *", "Europe/Berlin")
    else {
        return;
    };
    assert_eq!((code, slot), (0, ms("2026-03-29T01:00:00Z")));
    assert_eq!(ran, Some(slot));
}

#[test]
fn berlin_fall_back_runs_the_repeated_0230_only_the_first_time() {
    // 2026-10-25: 03:00 CEST -> 02:00 CET at 01:00 UTC; 02:30 is 00:30 UTC, then 01:30 UTC.
    // One server, one store, its clock moved from the first 02:30 to the second.
    let Some(s) = Server::start_with_clock_file_at("2026-10-25 00:30:05") else {
        return;
    };
    let (code, slot, ran) = run_on(&s, "dst", "30 2 * * *", "Europe/Berlin");
    assert_eq!(
        (code, slot, ran),
        (0, ms("2026-10-25T00:30:00Z"), Some(slot))
    );
    // At the second 02:30 the job's slot is still the first one, an hour old and already run:
    // nothing runs, and the store still holds that one run.
    s.set_clock("2026-10-25 01:30:05");
    let (code, slot, ran) = run_on(&s, "dst", "30 2 * * *", "Europe/Berlin");
    assert_eq!(
        (code, slot, ran),
        (SECOND_0230, ms("2026-10-25T00:30:00Z"), None)
    );
    assert_eq!(
        recorded(&s, "dst"),
        vec![(ms("2026-10-25T00:30:00Z"), "finished".to_string())]
    );
    // A wildcard-hour job follows the clock: the second 02:30 is a run of its own.
    let (code, slot, ran) = run_on(&s, "dst-hourly", "30 * * * *", "Europe/Berlin");
    assert_eq!(
        (code, slot, ran),
        (0, ms("2026-10-25T01:30:00Z"), Some(slot))
    );
}

#[test]
fn new_york_spring_forward_and_fall_back() {
    // 2026-03-08: 02:00 EST -> 03:00 EDT at 07:00 UTC.
    let Some((code, slot, ran)) = run_at("2026-03-08 07:00:05", "30 2 * * *", "America/New_York")
    else {
        return;
    };
    assert_eq!(
        (code, slot, ran),
        (0, ms("2026-03-08T07:00:00Z"), Some(slot))
    );
    // 2026-11-01: 02:00 EDT -> 01:00 EST at 06:00 UTC; 01:30 is 05:30 UTC, then 06:30 UTC. The
    // second 01:30 on the same server as the first: nothing more runs.
    let Some(s) = Server::start_with_clock_file_at("2026-11-01 05:30:05") else {
        return;
    };
    let (code, slot, ran) = run_on(&s, "dst", "30 1 * * *", "America/New_York");
    assert_eq!(
        (code, slot, ran),
        (0, ms("2026-11-01T05:30:00Z"), Some(slot))
    );
    s.set_clock("2026-11-01 06:30:05");
    let (code, slot, ran) = run_on(&s, "dst", "30 1 * * *", "America/New_York");
    assert_eq!(
        (code, slot, ran),
        (SECOND_0230, ms("2026-11-01T05:30:00Z"), None)
    );
    assert_eq!(
        recorded(&s, "dst"),
        vec![(ms("2026-11-01T05:30:00Z"), "finished".to_string())]
    );
}
