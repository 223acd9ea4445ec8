//! Cron schedules: which slot a `run` is for.
//!
//! Accepts crontab's 5 fields (`*/5 * * * *`), 6 fields with seconds first (`0 */5 * * * *`), and the
//! aliases `@yearly @annually @monthly @weekly @daily @midnight @hourly`. Day-of-week numbers follow
//! crontab (0 and 7 are Sunday); they are rewritten as names for the `cron` crate, which counts from
//! 1 = Sunday. A schedule is evaluated in `--tz` (default UTC) against the server's clock.
//!
//! # Day of month and day of week
//!
//! Cron's own rule, as Vixie cron and cronie apply it: when both day fields are restricted
//! (neither starts with `*`), a day matches if either field matches (`0 0 13 * FRI`: every 13th
//! and every Friday); when either starts with `*` (`*`, `*/2`), a day must match both. The `cron`
//! crate always requires both, so a schedule with both fields restricted is matched as two (see
//! [`Days`]), its fire times the union of theirs.
//!
//! # Daylight saving time
//!
//! The timeline is cut into stretches of constant UTC offset; in each, the schedule is matched
//! against the local clock. Where a change skips or repeats local times, the policy is Vixie
//! cron's, by the schedule's hour field:
//!
//! - **Fixed hours** (`30 2 * * *`, `@daily`): a local time the change skips (02:30 on a spring-
//!   forward night in Europe/Berlin) fires once, at the instant of the jump (03:00 local); several
//!   skipped times fire once together. A local time that occurs twice (02:30 on an autumn night)
//!   fires once, the first time.
//! - **Wildcard hours** (`*/15 * * * *`, `30 * * * *`, `@hourly`): the job follows the local
//!   clock: skipped times do not fire, repeated times fire each time they occur (an hourly job
//!   runs every hour of real time).
//!
//! Every host computes the same instants, so the slots (and so the runs) are the same fleet-wide.

use std::str::FromStr;

use chrono::{Offset, TimeZone, Utc};
use chrono_tz::Tz;

/// A parsed schedule in a time zone.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// Matched against local times, written as if they were UTC ("naive" local milliseconds).
    inner: Days,
    tz: Tz,
    /// The hour field is a wildcard (`*`, `*/2`): skipped local times are skipped, repeated ones
    /// fire twice. Otherwise (fixed hours) see the module doc.
    follows_local_clock: bool,
    source: String,
}

/// How far apart offset changes are probed for: no time zone changes its offset twice in 6 hours.
const PROBE_MS: i64 = 6 * 3_600_000;
/// How far back a schedule is looked for before saying it never fired (Feb 29 fires every 4 years).
const LOOKBACK_MS: i64 = 9 * 366 * 86_400_000;

const DAY_NAMES: [&str; 8] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"];

impl Schedule {
    pub fn parse(expression: &str, tz: &str) -> Result<Schedule, String> {
        let tz = Tz::from_str(tz.trim()).map_err(|_| {
            format!("--tz {tz:?} is not a time zone; use an IANA name such as UTC or Europe/Berlin")
        })?;
        let text = expression.trim();
        let normalized = normalize(text)?;
        let inner = Days::parse(&normalized).map_err(|e| {
            if let Some(field) = refused_field(text, &normalized) {
                return format!(
                    "--schedule {text:?}: {field}; write 5 fields like '*/5 * * * *', 6 with seconds first, or @hourly"
                );
            }
            // The parser's message quotes its own 6-field form with a caret under it: its last
            // line is the reason.
            let reason = e.to_string();
            let reason = reason
                .lines()
                .rev()
                .map(str::trim)
                .find(|l| l.chars().any(char::is_alphabetic))
                .unwrap_or("not understood")
                .to_string();
            format!(
                "--schedule {text:?} is not a cron expression ({reason}); write 5 fields like '*/5 * * * *', 6 with seconds first, or @hourly"
            )
        })?;
        let follows_local_clock = normalized
            .split_whitespace()
            .nth(2)
            .is_some_and(|hours| hours.starts_with('*'));
        Ok(Schedule {
            inner,
            tz,
            follows_local_clock,
            source: text.to_string(),
        })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    pub fn time_zone(&self) -> &str {
        self.tz.name()
    }

    /// The latest fire time at or before `now_ms`, in ms (None if the schedule never fired).
    pub fn latest_at_or_before(&self, now_ms: i64) -> Option<i64> {
        let stop = now_ms.checked_sub(LOOKBACK_MS)?;
        let mut hi = now_ms;
        while hi > stop {
            // The latest fire by the clock now in effect, then whether the offset changed between
            // it and `hi` (probing only that span: cheap for frequent schedules).
            let offset = self.offset_ms(hi);
            let local = self.latest_local_before(hi + offset + 1)?;
            let candidate = local - offset;
            match self.previous_change(hi, candidate) {
                None if self.is_repeat_of_a_fixed_time(candidate) => hi = candidate - 1,
                None => return Some(candidate),
                // The stretch [t, hi] has no fire of its own; the change itself may stand for one.
                Some(t) if self.jumps_over_a_fire_time(t) => return Some(t),
                Some(t) => hi = t - 1,
            }
        }
        None
    }

    /// The first fire time strictly after `after_ms` (None within the look-back span: never).
    pub fn next_after(&self, after_ms: i64) -> Option<i64> {
        let stop = after_ms.checked_add(LOOKBACK_MS)?;
        let mut after = after_ms;
        while after < stop {
            // The next fire by the clock in effect, then whether the offset changes before it.
            let offset = self.offset_ms(after + 1);
            let candidate = self.first_local_after(after + offset)? - offset;
            match self.next_change(after + 1, candidate + 1) {
                None if self.is_repeat_of_a_fixed_time(candidate) => after = candidate,
                None => return Some(candidate),
                Some(t) if self.jumps_over_a_fire_time(t) => return Some(t),
                Some(t) => after = t - 1,
            }
        }
        None
    }

    /// The newest fire times strictly after `from_ms` and at or before `until_ms`, at most
    /// `limit`, oldest first (walking back from `until_ms`: cheap however long the span).
    pub fn newest_between(&self, from_ms: i64, until_ms: i64, limit: usize) -> Vec<i64> {
        let mut out = Vec::new();
        let mut at = until_ms;
        while out.len() < limit {
            match self.latest_at_or_before(at) {
                Some(t) if t > from_ms => {
                    out.push(t);
                    at = t - 1;
                }
                _ => break,
            }
        }
        out.reverse();
        out
    }

    /// Whether the hour field is a wildcard: across daylight saving the schedule follows the local
    /// clock (skipped times do not fire, repeated ones fire each time) rather than the fixed-hour
    /// policy (see the module doc).
    pub fn follows_local_clock(&self) -> bool {
        self.follows_local_clock
    }

    /// An instant as the schedule's zone shows it (its local time, offset and abbreviation).
    pub fn local(&self, ms: i64) -> Option<chrono::DateTime<Tz>> {
        Utc.timestamp_millis_opt(ms)
            .single()
            .map(|t| t.with_timezone(&self.tz))
    }

    /// The zone's offset changes in `[from_ms, until_ms)`, oldest first, each with what the
    /// policy of the module doc does there with this schedule: the fire times it gives the local
    /// times the change skips or repeats are found by the predicates [`Schedule::next_after`]
    /// itself decides by, and the walk of [`Schedule::between`], so they are the scheduler's own.
    pub fn offset_changes(&self, from_ms: i64, until_ms: i64) -> Vec<OffsetChange> {
        let mut out = Vec::new();
        // From just before `from_ms`: a change at `from_ms` itself counts.
        let mut from = from_ms - 1;
        while let Some(at) = self.next_change(from, until_ms) {
            out.push(self.change_at(at));
            from = at;
        }
        out
    }

    /// What the change at `at` does to this schedule.
    fn change_at(&self, at: i64) -> OffsetChange {
        let (before_ms, after_ms) = (self.offset_ms(at - 1), self.offset_ms(at));
        let (span_start, span_end) = if after_ms > before_ms {
            (at + before_ms, at + after_ms)
        } else {
            (at + after_ms, at + before_ms)
        };
        // The schedule's own local times in the span, by its matcher.
        let mut local_times = Vec::new();
        let mut local_time_count = 0;
        let mut local = span_start - 1;
        while let Some(t) = self.first_local_after(local).filter(|t| *t < span_end) {
            if local_times.len() < MAX_LISTED {
                local_times.push(t);
            }
            local_time_count += 1;
            local = t;
        }
        let (runs, run_count) = if after_ms > before_ms {
            // A skip: the jump itself fires for the skipped times exactly when `next_after` returns
            // it for them.
            if self.jumps_over_a_fire_time(at) {
                (vec![at], 1)
            } else {
                (Vec::new(), 0)
            }
        } else {
            // A repeat: the real fire times over both occurrences of the span.
            let delta = before_ms - after_ms;
            let all = self.between(at - delta - 1, at + delta, usize::MAX);
            let count = all.len();
            (all.into_iter().take(2 * MAX_LISTED).collect(), count)
        };
        OffsetChange {
            at,
            before_ms,
            after_ms,
            local_times,
            local_time_count,
            runs,
            run_count,
        }
    }

    /// Whether `t` is the second occurrence of a local time a fall-back repeats, for a schedule
    /// with fixed hours (which fires only at the first).
    fn is_repeat_of_a_fixed_time(&self, t: i64) -> bool {
        if self.follows_local_clock {
            return false;
        }
        let Some(local) = Utc.timestamp_millis_opt(t + self.offset_ms(t)).single() else {
            return false;
        };
        match self.tz.from_local_datetime(&local.naive_utc()) {
            chrono::LocalResult::Ambiguous(first, _) => first.timestamp_millis() != t,
            _ => false,
        }
    }

    /// Fire times strictly after `from_ms` and strictly before `until_ms`, oldest first, at most `limit`.
    pub fn between(&self, from_ms: i64, until_ms: i64, limit: usize) -> Vec<i64> {
        let mut out = Vec::new();
        let mut at = from_ms;
        while out.len() < limit {
            match self.next_after(at) {
                Some(t) if t < until_ms => {
                    out.push(t);
                    at = t;
                }
                _ => break,
            }
        }
        out
    }

    /// The UTC offset at an instant, in ms.
    fn offset_ms(&self, ms: i64) -> i64 {
        Utc.timestamp_millis_opt(ms).single().map_or(0, |t| {
            i64::from(
                self.tz
                    .offset_from_utc_datetime(&t.naive_utc())
                    .fix()
                    .local_minus_utc(),
            ) * 1000
        })
    }

    /// The first instant in `[from_ms, until_ms)` whose offset differs from the one just before it.
    fn next_change(&self, from_ms: i64, until_ms: i64) -> Option<i64> {
        let offset = self.offset_ms(from_ms);
        let mut lo = from_ms;
        while lo < until_ms {
            let hi = (lo + PROBE_MS).min(until_ms);
            if self.offset_ms(hi) != offset {
                return Some(self.change_within(lo, hi));
            }
            lo = hi;
        }
        None
    }

    /// The latest instant in `(stop_ms, at_ms]` whose offset differs from the one just before it.
    fn previous_change(&self, at_ms: i64, stop_ms: i64) -> Option<i64> {
        let offset = self.offset_ms(at_ms);
        let mut hi = at_ms;
        while hi > stop_ms {
            let lo = (hi - PROBE_MS).max(stop_ms);
            if self.offset_ms(lo) != offset {
                return Some(self.change_within(lo, hi));
            }
            hi = lo;
        }
        None
    }

    /// The instant of the change in `(lo, hi]`, where the offsets at lo and hi differ.
    fn change_within(&self, mut lo: i64, mut hi: i64) -> i64 {
        let before = self.offset_ms(lo);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.offset_ms(mid) == before {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi
    }

    /// Whether the change at `t` skips local times (spring forward) among which the schedule
    /// fires, for a schedule with fixed hours: those fire once, at `t`.
    fn jumps_over_a_fire_time(&self, t: i64) -> bool {
        let (before, after) = (self.offset_ms(t - 1), self.offset_ms(t));
        !self.follows_local_clock
            && after > before
            && self
                .first_local_after(t + before - 1)
                .is_some_and(|local| local < t + after)
    }

    /// The first fire time strictly after the local time `local_ms` ("naive" local ms).
    fn first_local_after(&self, local_ms: i64) -> Option<i64> {
        let start = Utc.timestamp_millis_opt(local_ms).single()?;
        let first = |s: &cron::Schedule| s.after(&start).next().map(|t| t.timestamp_millis());
        match &self.inner {
            Days::Both(s) => first(s),
            Days::Either {
                month_day,
                week_day,
            } => earliest(first(month_day), first(week_day)),
        }
    }

    /// The last fire time strictly before the local time `local_ms`.
    fn latest_local_before(&self, local_ms: i64) -> Option<i64> {
        let start = Utc.timestamp_millis_opt(local_ms).single()?;
        let last = |s: &cron::Schedule| s.after(&start).next_back().map(|t| t.timestamp_millis());
        match &self.inner {
            Days::Both(s) => last(s),
            Days::Either {
                month_day,
                week_day,
            } => last(month_day).max(last(week_day)),
        }
    }
}

/// The earlier of two fire times, either of which may be missing.
fn earliest(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// How the two day fields combine: cron's own rule (Vixie cron, cronie, crontab(5)). When both
/// day of month and day of week are restricted (neither starts with `*`), a day matches if
/// **either** does: `0 0 13 * FRI` fires on every 13th and on every Friday. When either field
/// starts with `*` (`*`, `*/2`, `*,10`), a day must match both, so the other field alone decides
/// (`*` matches every day) and a stepped star ANDs: `0 0 */2 * FRI` fires on Fridays with an
/// odd day of month. Cronie decides by the field's first character (`entry.c` sets `DOM_STAR`
/// and `DOW_STAR` when it reads `*` there, `cron.c`'s `find_jobs` ANDs when either is set and
/// ORs otherwise), and so does this. A `?` counts as a `*`.
#[derive(Debug, Clone)]
enum Days {
    /// A day matches when both fields match (either starts with `*`).
    Both(cron::Schedule),
    /// Both fields restricted: the day-of-month schedule (day of week `*`) and the day-of-week
    /// one (day of month `*`); a time fires when either fires.
    Either {
        month_day: cron::Schedule,
        week_day: Box<cron::Schedule>,
    },
}

impl Days {
    /// `normalized` is a 6-field expression (see [`normalize`]).
    fn parse(normalized: &str) -> Result<Days, cron::error::Error> {
        let both = cron::Schedule::from_str(normalized)?;
        let fields: Vec<&str> = normalized.split_whitespace().collect();
        let unrestricted = |f: &str| f.starts_with('*') || f.starts_with('?');
        if fields.len() != 6 || unrestricted(fields[3]) || unrestricted(fields[5]) {
            return Ok(Days::Both(both));
        }
        let with = |day_of_month: &str, day_of_week: &str| {
            let mut f = fields.clone();
            f[3] = day_of_month;
            f[5] = day_of_week;
            cron::Schedule::from_str(&f.join(" "))
        };
        Ok(Days::Either {
            month_day: with(fields[3], "*")?,
            week_day: Box::new(with("*", fields[5])?),
        })
    }
}

/// How many of the local times a change affects [`OffsetChange`] lists (a schedule of seconds has
/// 3600 in an hour); the counts are whole.
const MAX_LISTED: usize = 60;

/// A change of a zone's UTC offset (daylight saving) and what the schedule does across it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetChange {
    /// The instant of the change, UTC ms.
    pub at: i64,
    /// The zone's UTC offset just before and from the change, ms.
    pub before_ms: i64,
    pub after_ms: i64,
    /// The schedule's local times (naive: local ms written as if UTC) that the change skips (a
    /// jump forward) or repeats (a jump back), oldest first; at most [`MAX_LISTED`].
    pub local_times: Vec<i64>,
    pub local_time_count: usize,
    /// The fire times the scheduler gives them, oldest first: for a skip, the jump itself when it
    /// stands for the skipped times (fixed hours) or none (wildcard hours); for a repeat, every
    /// fire time over both occurrences of the repeated span (fixed hours: the first only).
    pub runs: Vec<i64>,
    pub run_count: usize,
}

impl OffsetChange {
    /// Whether the clock jumps forward (local times are skipped); else back (they repeat).
    pub fn skips(&self) -> bool {
        self.after_ms > self.before_ms
    }

    /// The local times skipped or repeated, `[start, end)` (naive local ms: 02:00 to 03:00).
    pub fn local_span(&self) -> (i64, i64) {
        if self.skips() {
            (self.at + self.before_ms, self.at + self.after_ms)
        } else {
            (self.at + self.after_ms, self.at + self.before_ms)
        }
    }

    /// For a repeat: whether the fire time `t` is in the second occurrence of the span.
    pub fn is_second_occurrence(&self, t: i64) -> bool {
        !self.skips() && t >= self.at
    }
}

/// Turns crontab syntax into what the `cron` crate reads: adds the seconds field to 5-field lines
/// and rewrites numeric days of week as names.
fn normalize(text: &str) -> Result<String, String> {
    if text.starts_with('@') {
        // Vixie cron's aliases, as 6-field expressions (the parser's own know no @annually).
        return match text.to_ascii_lowercase().as_str() {
            "@yearly" | "@annually" => Ok("0 0 0 1 1 *".to_string()),
            "@monthly" => Ok("0 0 0 1 * *".to_string()),
            "@weekly" => Ok("0 0 0 * * SUN".to_string()),
            "@daily" | "@midnight" => Ok("0 0 0 * * *".to_string()),
            "@hourly" => Ok("0 0 * * * *".to_string()),
            "@reboot" => Err(format!(
                "--schedule {text:?} has no fire times: a run at boot is not a scheduled run (start the command from the service itself)"
            )),
            _ => Err(format!(
                "--schedule {text:?} is no alias; the aliases are @yearly (@annually), @monthly, @weekly, @daily (@midnight) and @hourly"
            )),
        };
    }
    let mut fields: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    match fields.len() {
        5 => fields.insert(0, "0".to_string()),
        6 => {}
        n => {
            return Err(format!(
                "--schedule {text:?} has {n} fields; write 5 (min hour day month weekday) or 6 (seconds first)"
            ));
        }
    }
    check_ranges(&fields).map_err(|e| format!("--schedule {text:?}: {e}"))?;
    fields[5] = day_of_week_names(&fields[5]).map_err(|e| format!("--schedule {text:?}: {e}"))?;
    Ok(fields.join(" "))
}

/// The first field of `text` (as the user wrote it) that the parser refuses on its own, named by
/// its place and what it holds: `field 4 (month) "1x" is not understood`. The parser's own
/// message names its internal form's field, sometimes another one than the culprit (it calls the
/// month `1x` "not a valid day of the week"), and many refusals give no reason at all (`5,,6`).
/// None when every field passes alone (the fields only clash together).
fn refused_field(text: &str, normalized: &str) -> Option<String> {
    let fields: Vec<&str> = normalized.split_whitespace().collect();
    // A 5-field line's first field is normalized's second (seconds come first).
    let shift = if text.split_whitespace().count() == 5 {
        1
    } else {
        0
    };
    (shift..fields.len()).find_map(|i| {
        let alone: Vec<&str> = (0..fields.len())
            .map(|j| if j == i { fields[j] } else { "*" })
            .collect();
        cron::Schedule::from_str(&alone.join(" ")).err()?;
        let written = text.split_whitespace().nth(i - shift).unwrap_or(fields[i]);
        Some(format!(
            "field {} ({}) {written:?} is not understood",
            i - shift + 1,
            FIELD_RANGES[i].0
        ))
    })
}

/// The fields of a 6-field expression, their names and the values crontab allows.
const FIELD_RANGES: [(&str, u32, u32); 6] = [
    ("second", 0, 59),
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day of month", 1, 31),
    ("month", 1, 12),
    ("day of week", 0, 7),
];

/// Refuses a number outside its field's range, naming the field and the range as crontab(5)
/// gives them (the cron crate's own message names its internal 6-field form, points a caret at
/// the wrong place, and says "Hours must be less than 23" of hour 24). Names (`MON`, `JAN`) and
/// anything else that is not a number are left to the parser.
fn check_ranges(fields: &[String]) -> Result<(), String> {
    for (field, (name, low, high)) in fields.iter().zip(FIELD_RANGES) {
        for item in field.split(',') {
            let (range, step) = match item.split_once('/') {
                Some((r, s)) => (r, Some(s)),
                None => (item, None),
            };
            for bound in range.split('-') {
                if let Ok(n) = bound.parse::<u32>()
                    && !(low..=high).contains(&n)
                {
                    return Err(format!("{name} {n} is out of range ({low}-{high})"));
                }
            }
            if let Some(Ok(0)) = step.map(str::parse::<u32>) {
                return Err(format!("{name} step 0 never fires; use 1 or more"));
            }
        }
    }
    Ok(())
}

/// `1-5` -> `MON-FRI`, `0,6` -> `SUN,SAT`, `5-7` -> `FRI-SAT,SUN`; `*`, steps and names pass through.
fn day_of_week_names(field: &str) -> Result<String, String> {
    let name = |n: &str| -> Result<String, String> {
        match n.parse::<usize>() {
            Ok(i) if i <= 7 => Ok(DAY_NAMES[i].to_string()),
            Ok(i) => Err(format!("day of week {i} is out of range 0-7")),
            Err(_) => Ok(n.to_string()),
        }
    };
    let items: Result<Vec<String>, String> = field
        .split(',')
        .map(|item| {
            let (range, step) = match item.split_once('/') {
                Some((r, s)) => (r, Some(s)),
                None => (item, None),
            };
            let with_step = |r: String| match step {
                Some(s) => format!("{r}/{s}"),
                None => r,
            };
            match range.split_once('-') {
                // Sunday as 7 ends a range: the cron crate has no day after SAT.
                Some((a, "7")) if step.is_none() => Ok(format!("{}-SAT,SUN", name(a)?)),
                Some((a, b)) => Ok(with_step(format!("{}-{}", name(a)?, name(b)?))),
                None if range == "*" || range == "?" => Ok(with_step(range.to_string())),
                None => Ok(with_step(name(range)?)),
            }
        })
        .collect();
    Ok(items?.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    fn ms(rfc: &str) -> i64 {
        DateTime::parse_from_rfc3339(rfc)
            .unwrap()
            .timestamp_millis()
    }

    #[test]
    fn out_of_range_fields_are_named_with_crontab_s_ranges() {
        for (expr, says) in [
            ("0 25 * * *", "hour 25 is out of range (0-23)"),
            ("60 * * * *", "minute 60 is out of range (0-59)"),
            ("0 0 32 * *", "day of month 32 is out of range (1-31)"),
            ("0 0 * 13 *", "month 13 is out of range (1-12)"),
            ("0 0 * * 8", "day of week 8 is out of range (0-7)"),
            ("0 1-24 * * *", "hour 24 is out of range (0-23)"),
            ("*/0 * * * *", "minute step 0 never fires"),
        ] {
            let err = Schedule::parse(expr, "UTC").unwrap_err();
            assert!(err.contains(says), "{expr}: {err}");
            assert!(!err.contains('^') && !err.contains('\n'), "{expr}: {err}");
        }
        // The parser's own reasons keep only their last line: no internal form, no caret.
        let err = Schedule::parse("a b c d e", "UTC").unwrap_err();
        assert!(!err.contains('^') && !err.contains('\n'), "{err}");
        assert!(Schedule::parse("0 23 * * 0-7", "UTC").is_ok());
    }

    #[test]
    fn a_refused_field_is_named_by_its_place_as_written() {
        for (expr, says) in [
            ("*/5 * * 1x *", r#"field 4 (month) "1x""#),
            ("5,,6 * * * *", r#"field 1 (minute) "5,,6""#),
            ("0 1-/2 * * *", r#"field 2 (hour) "1-/2""#),
            ("0 0 * * MON-", r#"field 5 (day of week) "MON-""#),
            ("0 0 0 L * *", r#"field 4 (day of month) "L""#),
            ("x 0 0 * * *", r#"field 1 (second) "x""#),
        ] {
            let err = Schedule::parse(expr, "UTC").unwrap_err();
            assert!(err.contains(says), "{expr}: {err}");
        }
    }

    #[test]
    fn latest_fire_time_at_or_before() {
        let s = Schedule::parse("*/5 * * * *", "UTC").unwrap();
        assert_eq!(
            s.latest_at_or_before(ms("2026-12-02T14:07:30Z")),
            Some(ms("2026-12-02T14:05:00Z"))
        );
        // Exactly on a fire time: that fire time.
        assert_eq!(
            s.latest_at_or_before(ms("2026-12-02T14:05:00Z")),
            Some(ms("2026-12-02T14:05:00Z"))
        );
        assert_eq!(
            s.latest_at_or_before(ms("2026-12-02T14:04:59.999Z")),
            Some(ms("2026-12-02T14:00:00Z"))
        );
    }

    #[test]
    fn six_fields_and_aliases() {
        let s = Schedule::parse("30 * * * * *", "UTC").unwrap();
        assert_eq!(
            s.latest_at_or_before(ms("2026-12-02T14:07:10Z")),
            Some(ms("2026-12-02T14:06:30Z"))
        );
        let s = Schedule::parse("@hourly", "UTC").unwrap();
        assert_eq!(
            s.latest_at_or_before(ms("2026-12-02T14:07:10Z")),
            Some(ms("2026-12-02T14:00:00Z"))
        );
        let s = Schedule::parse("@midnight", "UTC").unwrap();
        assert_eq!(
            s.latest_at_or_before(ms("2026-12-02T14:07:10Z")),
            Some(ms("2026-12-02T00:00:00Z"))
        );
    }

    #[test]
    fn crontab_days_of_week() {
        // 2026-12-02 is a Wednesday.
        let weekdays = Schedule::parse("0 9 * * 1-5", "UTC").unwrap();
        assert_eq!(
            weekdays.latest_at_or_before(ms("2026-12-06T12:00:00Z")), // Sunday
            Some(ms("2026-12-04T09:00:00Z"))                          // Friday
        );
        let sunday = Schedule::parse("0 9 * * 0", "UTC").unwrap();
        assert_eq!(
            sunday.latest_at_or_before(ms("2026-12-02T12:00:00Z")),
            Some(ms("2026-11-29T09:00:00Z"))
        );
        let sunday7 = Schedule::parse("0 9 * * 7", "UTC").unwrap();
        assert_eq!(
            sunday7.latest_at_or_before(ms("2026-12-02T12:00:00Z")),
            Some(ms("2026-11-29T09:00:00Z"))
        );
        let weekend = Schedule::parse("0 9 * * 6-7", "UTC").unwrap();
        assert_eq!(
            weekend.latest_at_or_before(ms("2026-12-02T12:00:00Z")),
            Some(ms("2026-11-29T09:00:00Z"))
        );
        let named = Schedule::parse("0 9 * * Mon-Fri", "UTC").unwrap();
        assert_eq!(
            named.latest_at_or_before(ms("2026-12-06T12:00:00Z")),
            Some(ms("2026-12-04T09:00:00Z"))
        );
        assert_eq!(day_of_week_names("*/2").unwrap(), "*/2");
        assert_eq!(day_of_week_names("1-5/2,0").unwrap(), "MON-FRI/2,SUN");
        assert!(day_of_week_names("8").is_err());
    }

    #[test]
    fn time_zones() {
        let s = Schedule::parse("0 9 * * *", "Europe/Berlin").unwrap();
        assert_eq!(
            s.latest_at_or_before(ms("2026-12-02T12:00:00Z")),
            Some(ms("2026-12-02T08:00:00Z"))
        );
        assert!(Schedule::parse("0 9 * * *", "Mars/Olympus").is_err());
    }

    #[test]
    fn fire_times_between() {
        let s = Schedule::parse("*/10 * * * *", "UTC").unwrap();
        assert_eq!(
            s.between(ms("2026-12-02T14:00:00Z"), ms("2026-12-02T14:30:00Z"), 100),
            vec![ms("2026-12-02T14:10:00Z"), ms("2026-12-02T14:20:00Z")]
        );
        assert_eq!(
            s.between(ms("2026-12-02T14:00:00Z"), ms("2026-12-02T15:00:00Z"), 2)
                .len(),
            2
        );
    }

    #[test]
    fn bad_expressions_say_how_to_write_one() {
        for bad in [
            "",
            "* * *",
            "61 * * * *",
            "* * * * * * * *",
            "@fortnightly",
            "x y z a b",
        ] {
            let err = Schedule::parse(bad, "UTC").unwrap_err();
            assert!(err.contains("--schedule"), "{bad}: {err}");
        }
    }

    fn slots(s: &Schedule, from: &str, until: &str) -> Vec<String> {
        s.between(ms(from), ms(until), 100)
            .into_iter()
            .map(crate::time::rfc3339)
            .collect()
    }

    fn latest(s: &Schedule, at: &str) -> String {
        crate::time::rfc3339(s.latest_at_or_before(ms(at)).unwrap())
    }

    // Europe/Berlin, 2026: clocks go 02:00 CET -> 03:00 CEST on March 29 (01:00 UTC), and
    // 03:00 CEST -> 02:00 CET on October 25 (01:00 UTC).
    #[test]
    fn berlin_spring_forward_a_skipped_fixed_time_runs_once_at_the_jump() {
        let s = Schedule::parse("30 2 * * *", "Europe/Berlin").unwrap();
        assert_eq!(
            slots(&s, "2026-03-27T00:00:00Z", "2026-03-31T00:00:00Z"),
            [
                "2026-03-27T01:30:00.000Z", // 02:30 CET
                "2026-03-28T01:30:00.000Z",
                "2026-03-29T01:00:00.000Z", // 02:30 does not exist: 03:00 CEST, the jump
                "2026-03-30T00:30:00.000Z", // 02:30 CEST
            ]
        );
        assert_eq!(
            latest(&s, "2026-03-29T01:00:00Z"),
            "2026-03-29T01:00:00.000Z"
        );
        assert_eq!(
            latest(&s, "2026-03-29T00:59:59Z"),
            "2026-03-28T01:30:00.000Z"
        );
        assert_eq!(
            latest(&s, "2026-03-29T23:00:00Z"),
            "2026-03-29T01:00:00.000Z"
        );
        // Two skipped times and the first time after the jump: one run.
        let s = Schedule::parse("0,30 2,3 * * *", "Europe/Berlin").unwrap();
        assert_eq!(
            slots(&s, "2026-03-29T00:00:00Z", "2026-03-29T03:00:00Z"),
            ["2026-03-29T01:00:00.000Z", "2026-03-29T01:30:00.000Z"]
        );
    }

    #[test]
    fn berlin_fall_back_a_repeated_fixed_time_runs_once_the_first_time() {
        let s = Schedule::parse("30 2 * * *", "Europe/Berlin").unwrap();
        assert_eq!(
            slots(&s, "2026-10-24T00:00:00Z", "2026-10-27T00:00:00Z"),
            [
                "2026-10-24T00:30:00.000Z", // 02:30 CEST
                "2026-10-25T00:30:00.000Z", // 02:30 CEST, the first; not 02:30 CET (01:30Z)
                "2026-10-26T01:30:00.000Z", // 02:30 CET
            ]
        );
        assert_eq!(
            latest(&s, "2026-10-25T01:45:00Z"),
            "2026-10-25T00:30:00.000Z"
        );
        assert_eq!(
            latest(&s, "2026-10-25T00:45:00Z"),
            "2026-10-25T00:30:00.000Z"
        );
    }

    #[test]
    fn berlin_wildcard_hours_follow_the_local_clock() {
        let s = Schedule::parse("30 * * * *", "Europe/Berlin").unwrap();
        // Spring: 02:30 does not exist, so there is no run for it.
        assert_eq!(
            slots(&s, "2026-03-29T00:00:00Z", "2026-03-29T03:00:00Z"),
            [
                "2026-03-29T00:30:00.000Z", // 01:30 CET
                "2026-03-29T01:30:00.000Z", // 03:30 CEST
                "2026-03-29T02:30:00.000Z", // 04:30 CEST
            ]
        );
        // Autumn: 02:30 occurs twice and runs twice: every hour of real time has its run.
        assert_eq!(
            slots(&s, "2026-10-24T23:00:00Z", "2026-10-25T03:00:00Z"),
            [
                "2026-10-24T23:30:00.000Z", // 01:30 CEST
                "2026-10-25T00:30:00.000Z", // 02:30 CEST
                "2026-10-25T01:30:00.000Z", // 02:30 CET
                "2026-10-25T02:30:00.000Z", // 03:30 CET
            ]
        );
        assert_eq!(
            latest(&s, "2026-10-25T01:45:00Z"),
            "2026-10-25T01:30:00.000Z"
        );
        assert_eq!(
            latest(&s, "2026-10-25T01:29:00Z"),
            "2026-10-25T00:30:00.000Z"
        );
    }

    // America/New_York, 2026: 02:00 EST -> 03:00 EDT on March 8 (07:00 UTC), and 02:00 EDT ->
    // 01:00 EST on November 1 (06:00 UTC).
    #[test]
    fn new_york_spring_and_autumn() {
        let s = Schedule::parse("30 2 * * *", "America/New_York").unwrap();
        assert_eq!(
            slots(&s, "2026-03-07T00:00:00Z", "2026-03-10T00:00:00Z"),
            [
                "2026-03-07T07:30:00.000Z", // 02:30 EST
                "2026-03-08T07:00:00.000Z", // 02:30 does not exist: 03:00 EDT, the jump
                "2026-03-09T06:30:00.000Z", // 02:30 EDT
            ]
        );
        assert_eq!(
            latest(&s, "2026-03-08T12:00:00Z"),
            "2026-03-08T07:00:00.000Z"
        );
        let s = Schedule::parse("30 1 * * *", "America/New_York").unwrap();
        assert_eq!(
            slots(&s, "2026-10-31T00:00:00Z", "2026-11-03T00:00:00Z"),
            [
                "2026-10-31T05:30:00.000Z", // 01:30 EDT
                "2026-11-01T05:30:00.000Z", // 01:30 EDT, the first; not 01:30 EST (06:30Z)
                "2026-11-02T06:30:00.000Z", // 01:30 EST
            ]
        );
        assert_eq!(
            latest(&s, "2026-11-01T07:00:00Z"),
            "2026-11-01T05:30:00.000Z"
        );
        let s = Schedule::parse("*/30 * * * *", "America/New_York").unwrap();
        assert_eq!(
            slots(&s, "2026-11-01T04:45:00Z", "2026-11-01T07:15:00Z"),
            [
                "2026-11-01T05:00:00.000Z", // 01:00 EDT
                "2026-11-01T05:30:00.000Z", // 01:30 EDT
                "2026-11-01T06:00:00.000Z", // 01:00 EST
                "2026-11-01T06:30:00.000Z", // 01:30 EST
                "2026-11-01T07:00:00.000Z", // 02:00 EST
            ]
        );
        let s = Schedule::parse("@daily", "America/New_York").unwrap();
        assert_eq!(
            latest(&s, "2026-11-01T12:00:00Z"),
            "2026-11-01T04:00:00.000Z" // midnight EDT
        );
    }

    #[test]
    fn rare_schedules_are_found_far_back() {
        let s = Schedule::parse("0 0 29 2 *", "Europe/Berlin").unwrap();
        assert_eq!(
            latest(&s, "2026-12-02T12:00:00Z"),
            "2024-02-28T23:00:00.000Z"
        );
    }

    #[test]
    fn newest_between_walks_back_from_the_end() {
        let s = Schedule::parse("*/5 * * * *", "Europe/Berlin").unwrap();
        let all = s.between(ms("2026-03-28T22:00:00Z"), ms("2026-03-29T03:00:01Z"), 1000);
        assert_eq!(all.len(), 60);
        assert_eq!(
            s.newest_between(ms("2026-03-28T22:00:00Z"), ms("2026-03-29T03:00:00Z"), 1000),
            all
        );
        assert_eq!(
            s.newest_between(ms("2026-03-28T22:00:00Z"), ms("2026-03-29T03:00:00Z"), 3),
            all[57..]
        );
        // A second-by-second schedule over a month: only the newest are evaluated.
        let s = Schedule::parse("* * * * * *", "UTC").unwrap();
        let newest = s.newest_between(0, ms("2026-12-02T12:00:00Z"), 1000);
        assert_eq!(newest.len(), 1000);
        assert_eq!(newest[999], ms("2026-12-02T12:00:00Z"));
    }

    fn naive(local: &str) -> i64 {
        ms(&format!("{local}Z"))
    }

    #[test]
    fn offset_changes_say_what_the_policy_does_with_fixed_hours() {
        let s = Schedule::parse("30 2 * * *", "Europe/Berlin").unwrap();
        let changes = s.offset_changes(ms("2026-01-01T00:00:00Z"), ms("2027-01-01T00:00:00Z"));
        assert_eq!(changes.len(), 2);
        let spring = &changes[0];
        assert!(spring.skips());
        assert_eq!(spring.at, ms("2026-03-29T01:00:00Z"));
        assert_eq!((spring.before_ms, spring.after_ms), (3_600_000, 7_200_000));
        assert_eq!(
            spring.local_span(),
            (naive("2026-03-29T02:00:00"), naive("2026-03-29T03:00:00"))
        );
        assert_eq!(spring.local_times, [naive("2026-03-29T02:30:00")]);
        // Runs once, at the jump: the slot `between` gives that night.
        assert_eq!(spring.runs, [ms("2026-03-29T01:00:00Z")]);
        assert_eq!(
            s.between(ms("2026-03-28T12:00:00Z"), ms("2026-03-29T12:00:00Z"), 10),
            spring.runs
        );
        let autumn = &changes[1];
        assert!(!autumn.skips());
        assert_eq!(autumn.at, ms("2026-10-25T01:00:00Z"));
        assert_eq!(autumn.local_times, [naive("2026-10-25T02:30:00")]);
        // Once, the first time (02:30 CEST).
        assert_eq!(autumn.runs, [ms("2026-10-25T00:30:00Z")]);
        assert!(!autumn.is_second_occurrence(autumn.runs[0]));
        // A change at the first instant asked about counts.
        assert_eq!(
            s.offset_changes(spring.at, spring.at + 1),
            std::slice::from_ref(spring)
        );
        // A time the change does not touch: nothing to say but the change.
        let nine = Schedule::parse("0 9 * * *", "Europe/Berlin").unwrap();
        let changes = nine.offset_changes(ms("2026-01-01T00:00:00Z"), ms("2027-01-01T00:00:00Z"));
        assert!(
            changes
                .iter()
                .all(|c| c.local_times.is_empty() && c.runs.is_empty())
        );
        assert!(
            Schedule::parse("30 2 * * *", "UTC")
                .unwrap()
                .offset_changes(0, ms("2027-01-01T00:00:00Z"))
                .is_empty()
        );
    }

    #[test]
    fn offset_changes_say_what_the_policy_does_with_wildcard_hours() {
        let s = Schedule::parse("*/15 * * * *", "Europe/Berlin").unwrap();
        let changes = s.offset_changes(ms("2026-01-01T00:00:00Z"), ms("2027-01-01T00:00:00Z"));
        let (spring, autumn) = (&changes[0], &changes[1]);
        assert_eq!(spring.local_time_count, 4);
        assert!(spring.runs.is_empty(), "skipped times do not run");
        assert_eq!(autumn.local_time_count, 4);
        // Each repeated time runs twice: 8 runs, the second four after the change.
        assert_eq!(autumn.run_count, 8);
        assert_eq!(
            autumn.runs,
            s.between(ms("2026-10-24T23:59:59Z"), ms("2026-10-25T02:00:00Z"), 100)
        );
        assert_eq!(
            autumn
                .runs
                .iter()
                .filter(|t| autumn.is_second_occurrence(**t))
                .count(),
            4
        );
        // New York's changes, for a fixed time in the skipped hour and one in the repeated hour.
        let s = Schedule::parse("30 1,2 * * *", "America/New_York").unwrap();
        let changes = s.offset_changes(ms("2026-01-01T00:00:00Z"), ms("2027-01-01T00:00:00Z"));
        assert_eq!(changes[0].local_times, [naive("2026-03-08T02:30:00")]);
        assert_eq!(changes[0].runs, [ms("2026-03-08T07:00:00Z")]);
        assert_eq!(changes[1].local_times, [naive("2026-11-01T01:30:00")]);
        assert_eq!(changes[1].runs, [ms("2026-11-01T05:30:00Z")]);
    }

    #[test]
    fn walking_forward_and_back_agree_across_changes() {
        for (expr, tz) in [
            ("30 2 * * *", "Europe/Berlin"),
            ("30 * * * *", "Europe/Berlin"),
            ("*/30 * * * *", "America/New_York"),
            ("30 1 * * *", "America/New_York"),
        ] {
            let s = Schedule::parse(expr, tz).unwrap();
            for (from, until) in [
                ("2026-03-07T00:00:00Z", "2026-03-31T00:00:00Z"),
                ("2026-10-24T00:00:00Z", "2026-11-03T00:00:00Z"),
            ] {
                // Walking forward (next_after) and back (latest_at_or_before) agree.
                let all = s.newest_between(ms(from), ms(until) - 1, 10_000);
                let mut walked = Vec::new();
                let mut at = ms(from);
                while let Some(t) = s.next_after(at).filter(|t| *t < ms(until)) {
                    walked.push(t);
                    at = t;
                }
                assert_eq!(walked, all, "{expr} {tz}");
            }
        }
        let s = Schedule::parse("0 0 29 2 *", "UTC").unwrap();
        assert_eq!(
            s.next_after(ms("2026-12-02T00:00:00Z")),
            Some(ms("2028-02-29T00:00:00Z"))
        );
    }

    /// Cron's day rule (Vixie cron, cronie): both day fields restricted, either matches; a field
    /// that starts with `*` makes them AND. Known fire times from Saturday 2026-12-05.
    #[test]
    fn day_of_month_or_day_of_week_as_cron_decides() {
        let from = ms("2026-12-05T12:00:00Z");
        let table: [(&str, &[&str]); 9] = [
            // Both restricted: the 13th or a Friday.
            (
                "0 0 13 * fri",
                &[
                    "2026-12-11",
                    "2026-12-13",
                    "2026-12-18",
                    "2026-12-25",
                    "2027-01-01",
                    "2027-01-08",
                    "2027-01-13",
                    "2027-01-15",
                ],
            ),
            (
                "0 0 13 * 5",
                &["2026-12-11", "2026-12-13", "2026-12-18", "2026-12-25"],
            ),
            (
                "0 0 1,15 * mon",
                &[
                    "2026-12-07",
                    "2026-12-14",
                    "2026-12-15",
                    "2026-12-21",
                    "2026-12-28",
                    "2027-01-01",
                    "2027-01-04",
                ],
            ),
            (
                "0 0 0 13 * FRI",
                &["2026-12-11", "2026-12-13", "2026-12-18"],
            ),
            // One field `*`: the other alone decides.
            ("0 0 13 * *", &["2026-12-13", "2027-01-13", "2027-02-13"]),
            ("0 0 * * fri", &["2026-12-11", "2026-12-18", "2026-12-25"]),
            // A field that starts with `*` is unrestricted for the rule (cronie's DOM_STAR): AND,
            // so `*/2` (odd days) and Friday means the odd-day Fridays.
            (
                "0 0 */2 * fri",
                &["2026-12-11", "2026-12-25", "2027-01-01", "2027-01-15"],
            ),
            // `*/7` is Sunday (0 and 7): the 13ths that are Sundays.
            ("0 0 13 * */7", &["2026-12-13", "2027-06-13", "2028-02-13"]),
            // A month restricts both sides: the 13th or a Friday, in January only.
            (
                "0 0 13 1 fri",
                &[
                    "2027-01-01",
                    "2027-01-08",
                    "2027-01-13",
                    "2027-01-15",
                    "2027-01-22",
                ],
            ),
        ];
        for (expr, want) in table {
            let s = Schedule::parse(expr, "UTC").unwrap();
            let got: Vec<String> = s
                .between(from, i64::MAX, want.len())
                .into_iter()
                .map(|t| s.local(t).unwrap().format("%Y-%m-%d").to_string())
                .collect();
            assert_eq!(got, want, "{expr}");
            // Backwards the same days: the latest at or before each is itself, and the one
            // before it the previous entry.
            for pair in want.windows(2) {
                let at = ms(&format!("{}T00:00:00Z", pair[1]));
                assert_eq!(s.latest_at_or_before(at), Some(at), "{expr} at {}", pair[1]);
                assert_eq!(
                    s.latest_at_or_before(at - 1),
                    Some(ms(&format!("{}T00:00:00Z", pair[0]))),
                    "{expr} before {}",
                    pair[1]
                );
            }
        }
        // Across daylight saving: 02:30 on the 13th or a Sunday, in Berlin; 2027-03-28 (a
        // Sunday) skips 02:30, so it fires at the jump (03:00 CEST = 01:00 UTC), as fixed hours do.
        let s = Schedule::parse("30 2 13 * sun", "Europe/Berlin").unwrap();
        let got: Vec<i64> = s.between(ms("2027-03-20T00:00:00Z"), i64::MAX, 3);
        assert_eq!(
            got,
            [
                ms("2027-03-21T01:30:00Z"),
                ms("2027-03-28T01:00:00Z"),
                ms("2027-04-04T00:30:00Z"),
            ]
        );
    }
}

/// `run --catch-up-policy`: which of a schedule's missed runs a host coming back runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CatchUpPolicy {
    /// Every missed run, oldest first (at most --catch-up-max, the newest).
    #[default]
    All,
    /// Only the newest due run, if it was missed; the older ones are skipped.
    Latest,
}

impl CatchUpPolicy {
    pub const ALL: [CatchUpPolicy; 2] = [CatchUpPolicy::All, CatchUpPolicy::Latest];

    /// Its name on the command line and in the job registry.
    pub const fn name(self) -> &'static str {
        match self {
            CatchUpPolicy::All => "all",
            CatchUpPolicy::Latest => "latest",
        }
    }

    /// What `--help` says of it.
    pub const fn help(self) -> &'static str {
        match self {
            CatchUpPolicy::All => {
                "Every missed run, oldest first (at most --catch-up-max, the newest)"
            }
            CatchUpPolicy::Latest => {
                "Only the newest due run, if it was missed; the older ones are skipped"
            }
        }
    }
}

/// What `run` and `cron --check` say of a schedule that matches no time at all (`0 0 31 2 *`),
/// in the same words.
pub fn never_fires(schedule: &str) -> String {
    format!(
        "the schedule {schedule:?} never fires (a day that no month has?)\n  hint: check its day-of-month and month fields; `anarchon next --schedule {schedule:?}` shows the fire times of a schedule"
    )
}

/// A schedule's refusal with what to do next (its own hint, when it has one, stays).
pub fn with_hint(refusal: &str) -> String {
    if refusal.contains("\n  hint:") {
        return refusal.to_string();
    }
    format!(
        "{refusal}\n  hint: 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first, or @hourly, @daily...; `anarchon next --schedule EXPR` shows when one fires"
    )
}
