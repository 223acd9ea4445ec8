//! Durations, slots and timestamps.
//!
//! Store times are milliseconds since the Unix epoch by the *server's* clock (`TIME`); the client's
//! clock is only used to print "3m ago" style hints.

use std::time::Duration;

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};

use crate::error::Result;

/// Parses `500ms`, `30s`, `5m`, `1h`, `1h 30m` (humantime syntax). Zero is refused: a zero lease or
/// interval is always a mistake.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(text.trim()).map_err(|e| {
        format!("{text:?} is not a duration ({e}); write it like 500ms, 30s, 5m or 1h")
    })?;
    if d.is_zero() {
        return Err(format!("{text:?} is zero; give a positive duration"));
    }
    if d < Duration::from_millis(1) {
        return Err(format!(
            "{text:?} is shorter than a millisecond, the store's unit; give at least 1ms"
        ));
    }
    if d > MAX_DURATION {
        return Err(format!(
            "{text:?} is longer than {}, the longest duration anarchon stores (times are integer ms that Lua must hold exactly)",
            humantime::format_duration(MAX_DURATION)
        ));
    }
    Ok(d)
}

/// The longest duration accepted anywhere: a slot plus this stays far below 2^53 ms, the largest
/// integer a Lua number (a double) holds exactly, so every stored time stays readable.
/// When this process started (by the monotonic clock), as main recorded it: the moment cron
/// started it, which names the slot it is for even when the server answers late.
static PROCESS_STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// The same moment by this machine's wall clock, ms since the epoch.
static PROCESS_STARTED_WALL: std::sync::OnceLock<i64> = std::sync::OnceLock::new();

/// Records that the process starts now (main, first thing). Later calls change nothing.
pub fn mark_process_start() {
    let _ = PROCESS_STARTED.set(std::time::Instant::now());
    if let Ok(since_epoch) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        let _ = PROCESS_STARTED_WALL.set(millis(since_epoch));
    }
}

/// When this process started by this machine's wall clock, ms (None when main did not record
/// it): only ever taken within bounds the server's clock sets
/// ([`crate::store::StoreCheck::server_ms_at_process_start`]).
pub fn process_start_wall_ms() -> Option<i64> {
    PROCESS_STARTED_WALL.get().copied()
}

/// How long before `at` the process started (zero when main did not record it).
pub fn since_process_start(at: std::time::Instant) -> Duration {
    PROCESS_STARTED
        .get()
        .map_or(Duration::ZERO, |start| at.saturating_duration_since(*start))
}

pub const MAX_DURATION: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// A duration in milliseconds, as the scripts take it.
pub fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Which run a command names with `--slot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotSpec {
    /// The current minute by the server's clock, rounded down.
    Now,
    /// A fixed time, in ms since the epoch.
    At(i64),
}

impl SlotSpec {
    /// Resolves `now` against the server's clock.
    pub fn resolve(self, server_now_ms: i64) -> i64 {
        match self {
            SlotSpec::Now => server_now_ms - server_now_ms.rem_euclid(60_000),
            SlotSpec::At(ms) => ms,
        }
    }
}

/// Parses `now`, milliseconds since the epoch, or an RFC 3339 time (`2026-12-02T14:05:00Z`).
pub fn parse_slot(text: &str) -> Result<SlotSpec, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("now") {
        return Ok(SlotSpec::Now);
    }
    if let Ok(ms) = text.parse::<i64>() {
        if ms < 0 {
            return Err(format!("slot {ms} is before 1970; give ms since the epoch"));
        }
        return check_slot_range(SlotSpec::At(ms));
    }
    DateTime::parse_from_rfc3339(text)
        .map(|t| SlotSpec::At(t.timestamp_millis()))
        .map_err(|_| {
            format!(
                "{text:?} is not a slot; give `now`, ms since the epoch (1796220300000) or RFC 3339 (2026-12-02T14:05:00Z)"
            )
        })
        .and_then(|spec| match spec {
            SlotSpec::At(ms) if ms < 0 => Err(format!("slot {text} is before 1970")),
            ok => Ok(ok),
        })
        .and_then(check_slot_range)
}

/// One end of a time range (`run --backfill FROM..TO`): a slot (`now` is the server's clock, to
/// the millisecond), or a duration before now (`6h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeEnd {
    Slot(SlotSpec),
    Ago(Duration),
}

impl RangeEnd {
    /// The time this end names, by the server's clock.
    pub fn resolve(self, server_now_ms: i64) -> i64 {
        match self {
            RangeEnd::Slot(SlotSpec::Now) => server_now_ms,
            RangeEnd::Slot(spec) => spec.resolve(server_now_ms),
            RangeEnd::Ago(d) => server_now_ms.saturating_sub(crate::time::millis(d)),
        }
    }
}

/// `FROM..TO`, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeRange {
    pub from: RangeEnd,
    pub to: RangeEnd,
}

/// Parses `FROM..TO`: each end `now`, ms since the epoch, RFC 3339, or a duration ago (`6h`).
pub fn parse_time_range(text: &str) -> Result<TimeRange, String> {
    let Some((from, to)) = text.split_once("..") else {
        return Err(format!(
            "{text:?} is not a range; give FROM..TO, each `now`, ms, RFC 3339 or a duration ago (`2026-12-01T00:00:00Z..now`, `6h..1h`)"
        ));
    };
    Ok(TimeRange {
        from: parse_range_end(from)?,
        to: parse_range_end(to)?,
    })
}

/// Parses one end of a time range: `now`, ms since the epoch, RFC 3339, or a duration ago (`6h`).
pub fn parse_range_end(text: &str) -> Result<RangeEnd, String> {
    match parse_slot(text) {
        Ok(spec) => Ok(RangeEnd::Slot(spec)),
        Err(slot_error) => parse_duration(text)
            .map(RangeEnd::Ago)
            .map_err(|_| format!("{slot_error}, or a duration ago (6h)")),
    }
}

/// The last slot accepted: 9999-12-31T23:59:59.999Z. Later ones print badly and, with a lease
/// added, approach what a Lua number holds exactly.
pub const MAX_SLOT: i64 = 253_402_300_799_999;

fn check_slot_range(spec: SlotSpec) -> Result<SlotSpec, String> {
    match spec {
        SlotSpec::At(ms) if ms > MAX_SLOT => Err(format!(
            "slot {ms} is after 9999-12-31T23:59:59.999Z; give ms since the epoch"
        )),
        ok => Ok(ok),
    }
}

/// RFC 3339 in UTC with milliseconds, the form every `--json` time uses.
pub fn rfc3339(ms: i64) -> String {
    match Utc.timestamp_millis_opt(ms).single() {
        Some(t) => t.to_rfc3339_opts(SecondsFormat::Millis, true),
        None => format!("@{ms}ms"),
    }
}

/// A time for a table on a terminal: `2026-12-02 15:10:00` (UTC, whole seconds), a third shorter
/// than RFC 3339 with milliseconds, so a row fits a 100-column terminal.
pub fn compact(ms: i64) -> String {
    match Utc.timestamp_millis_opt(ms).single() {
        Some(t) => t.format("%Y-%m-%d %H:%M:%S").to_string(),
        None => format!("@{ms}ms"),
    }
}

/// A lease by the time it has left: "4m left", or "expired 3h ago" once its end has come (a lease
/// ending now is expired, as the scripts judge it).
pub fn lease_left(left_ms: i64) -> String {
    if left_ms > 0 {
        format!("{} left", humanize(left_ms as u64))
    } else {
        format!("expired {} ago", humanize(left_ms.unsigned_abs()))
    }
}

/// "3m ago" / "in 25s", relative to `now_ms`, rounded to one unit.
pub fn relative(ms: i64, now_ms: i64) -> String {
    let delta = ms - now_ms;
    let span = humanize(delta.unsigned_abs());
    if delta >= 0 {
        format!("in {span}")
    } else {
        format!("{span} ago")
    }
}

/// A short span: `850ms`, `25s`, `4m`, `3h`, `2d`.
pub fn humanize(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms}ms"),
        1_000..60_000 => format!("{}s", ms / 1_000),
        60_000..3_600_000 => format!("{}m", ms / 60_000),
        3_600_000..86_400_000 => format!("{}h", ms / 3_600_000),
        _ => format!("{}d", ms / 86_400_000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_takes_slots_and_durations_ago() {
        let now = 1_796_220_345_678;
        let r = parse_time_range("6h..now").unwrap();
        assert_eq!(r.from.resolve(now), now - 6 * 3_600_000);
        assert_eq!(
            r.to.resolve(now),
            now,
            "`now` ends a range at the clock, not its minute"
        );
        let r = parse_time_range("2026-12-01T00:00:00Z..1796220300000").unwrap();
        assert_eq!(r.from.resolve(now), 1_796_083_200_000);
        assert_eq!(r.to.resolve(now), 1_796_220_300_000);
        for bad in ["6h", "x..now", "now..", "..now"] {
            assert!(parse_time_range(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(
            parse_duration(" 1h 30m ").unwrap(),
            Duration::from_secs(5400)
        );
        for bad in ["", "0s", "abc", "30", "-5s", "5 parsecs", "1e99h"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
        assert!(parse_duration("30").unwrap_err().contains("30s"));
    }

    #[test]
    fn slots() {
        assert_eq!(parse_slot("now").unwrap(), SlotSpec::Now);
        assert_eq!(parse_slot("NOW").unwrap(), SlotSpec::Now);
        assert_eq!(
            parse_slot("1796220300000").unwrap(),
            SlotSpec::At(1_796_220_300_000)
        );
        assert_eq!(
            parse_slot("2026-12-02T14:05:00Z").unwrap(),
            SlotSpec::At(1_796_220_300_000)
        );
        assert_eq!(
            parse_slot("2026-12-02T15:05:00+01:00").unwrap(),
            SlotSpec::At(1_796_220_300_000)
        );
        for bad in ["", "-1", "yesterday", "2026-13-02T00:00:00Z", "12.5"] {
            assert!(parse_slot(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn now_rounds_down_to_the_minute() {
        assert_eq!(SlotSpec::Now.resolve(1_796_220_359_999), 1_796_220_300_000);
        assert_eq!(SlotSpec::Now.resolve(1_796_220_300_000), 1_796_220_300_000);
        assert_eq!(SlotSpec::At(5).resolve(1_796_220_359_999), 5);
    }

    #[test]
    fn printing_times() {
        assert_eq!(rfc3339(1_796_220_300_000), "2026-12-02T14:05:00.000Z");
        assert_eq!(relative(1_000, 181_000), "3m ago");
        assert_eq!(relative(26_000, 1_000), "in 25s");
        assert_eq!(humanize(999), "999ms");
        assert_eq!(humanize(2 * 86_400_000), "2d");
    }
}

/// A lower bound in time: `--since 1h` (that long ago) or `--since 2026-12-02T00:00:00Z`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    Ago(Duration),
    At(i64),
}

impl Since {
    pub fn resolve(self, server_now_ms: i64) -> i64 {
        match self {
            Since::Ago(d) => server_now_ms - millis(d),
            Since::At(ms) => ms,
        }
    }
}

/// Parses a duration (`1h`, `30m`) or a time (RFC 3339 or ms since the epoch).
pub fn parse_since(text: &str) -> Result<Since, String> {
    if let Ok(d) = parse_duration(text) {
        return Ok(Since::Ago(d));
    }
    match parse_slot(text) {
        Ok(SlotSpec::At(ms)) => Ok(Since::At(ms)),
        _ => Err(format!(
            "{text:?} is neither a duration (1h, 30m) nor a time (RFC 3339 or ms since the epoch)"
        )),
    }
}

#[cfg(test)]
mod since_tests {
    use super::*;

    #[test]
    fn since_takes_durations_and_times() {
        assert_eq!(
            parse_since("1h").unwrap(),
            Since::Ago(Duration::from_secs(3600))
        );
        assert_eq!(
            parse_since("1796220300000").unwrap(),
            Since::At(1_796_220_300_000)
        );
        assert_eq!(
            parse_since("2026-12-02T14:05:00Z").unwrap(),
            Since::At(1_796_220_300_000)
        );
        assert!(parse_since("now").is_err());
        assert!(parse_since("soon").is_err());
        assert_eq!(Since::Ago(Duration::from_secs(1)).resolve(5000), 4000);
    }
}
