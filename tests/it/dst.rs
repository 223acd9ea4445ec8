//! Daylight-saving transitions with real processes: the server's clock is set to the night of a
//! change (faketime on redis-server), and `anarchon run --schedule ... --tz ...` picks the slot the
//! policy in src/schedule.rs names, runs it once, and the command sees that slot.
//! (Every transition's exact slots, both directions, are unit tests in src/schedule.rs.)

use crate::common::{Server, json, stderr};

/// Runs `schedule` in `tz` on a server whose clock starts at `server_utc`; returns the exit code,
/// the slot `run` reported, and the slot the command saw (None when it did not run).
fn run_at(server_utc: &str, schedule: &str, tz: &str) -> Option<(i32, i64, Option<i64>)> {
    let s = Server::start_with_clock_at(server_utc)?;
    let seen = s.dir.path().join("slot");
    let out = s
        .anarchon()
        .args(["run", "--job", "dst", "--schedule", schedule, "--tz", tz])
        .args(["--json", "--", "sh", "-c", "echo $ANARCHON_SLOT > \"$0\""])
        .arg(&seen)
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    assert!(code == 0 || code == 84, "{}", stderr(&out));
    let slot = json(&out)["slot"].as_i64().unwrap();
    let ran = std::fs::read_to_string(&seen)
        .ok()
        .map(|t| t.trim().parse().unwrap());
    Some((code, slot, ran))
}

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
    let Some((code, slot, ran)) = run_at("2026-10-25 00:30:05", "30 2 * * *", "Europe/Berlin")
    else {
        return;
    };
    assert_eq!(
        (code, slot, ran),
        (0, ms("2026-10-25T00:30:00Z"), Some(slot))
    );
    // At the second 02:30 the job's slot is still the first one, an hour old: nothing runs.
    let Some((code, slot, ran)) = run_at("2026-10-25 01:30:05", "30 2 * * *", "Europe/Berlin")
    else {
        return;
    };
    assert_eq!((code, slot, ran), (84, ms("2026-10-25T00:30:00Z"), None));
    // A wildcard-hour job follows the clock: the second 02:30 is a run of its own.
    let Some((code, slot, ran)) = run_at("2026-10-25 01:30:05", "30 * * * *", "Europe/Berlin")
    else {
        return;
    };
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
    // 2026-11-01: 02:00 EDT -> 01:00 EST at 06:00 UTC; 01:30 is 05:30 UTC, then 06:30 UTC.
    let Some((code, slot, ran)) = run_at("2026-11-01 05:30:05", "30 1 * * *", "America/New_York")
    else {
        return;
    };
    assert_eq!(
        (code, slot, ran),
        (0, ms("2026-11-01T05:30:00Z"), Some(slot))
    );
    let Some((code, slot, ran)) = run_at("2026-11-01 06:30:05", "30 1 * * *", "America/New_York")
    else {
        return;
    };
    assert_eq!((code, slot, ran), (84, ms("2026-11-01T05:30:00Z"), None));
}
