//! Cron schedules: which slot a `run` is for.
//!
//! Accepts crontab's 5 fields (`*/5 * * * *`), 6 fields with seconds first (`0 */5 * * * *`), and the
//! aliases `@yearly @annually @monthly @weekly @daily @midnight @hourly`. Day-of-week numbers follow
//! crontab (0 and 7 are Sunday); they are rewritten as names for the `cron` crate, which counts from
//! 1 = Sunday. A schedule is evaluated in `--tz` (default UTC) against the server's clock.

use std::str::FromStr;

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;

/// A parsed schedule in a time zone.
#[derive(Debug, Clone)]
pub struct Schedule {
    inner: cron::Schedule,
    tz: Tz,
    source: String,
}

const DAY_NAMES: [&str; 8] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"];

impl Schedule {
    pub fn parse(expression: &str, tz: &str) -> Result<Schedule, String> {
        let tz = Tz::from_str(tz.trim()).map_err(|_| {
            format!("--tz {tz:?} is not a time zone; use an IANA name such as UTC or Europe/Berlin")
        })?;
        let text = expression.trim();
        let normalized = normalize(text)?;
        let inner = cron::Schedule::from_str(&normalized).map_err(|e| {
            format!(
                "--schedule {text:?} is not a cron expression ({e}); write 5 fields like '*/5 * * * *', 6 with seconds first, or @hourly"
            )
        })?;
        Ok(Schedule {
            inner,
            tz,
            source: text.to_string(),
        })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// The latest fire time at or before `now_ms`, in ms (None if the schedule never fired).
    pub fn latest_at_or_before(&self, now_ms: i64) -> Option<i64> {
        // `after(t).next_back()` walks backwards from t, excluding t itself: start 1 ms later.
        let start = self.at(now_ms + 1)?;
        self.inner
            .after(&start)
            .next_back()
            .map(|t| t.timestamp_millis())
    }

    /// Fire times strictly after `from_ms` and strictly before `until_ms`, oldest first, at most `limit`.
    pub fn between(&self, from_ms: i64, until_ms: i64, limit: usize) -> Vec<i64> {
        let Some(start) = self.at(from_ms) else {
            return Vec::new();
        };
        self.inner
            .after(&start)
            .map(|t| t.timestamp_millis())
            .take_while(|ms| *ms < until_ms)
            .take(limit)
            .collect()
    }

    fn at(&self, ms: i64) -> Option<DateTime<Tz>> {
        Utc.timestamp_millis_opt(ms)
            .single()
            .map(|t| t.with_timezone(&self.tz))
    }
}

/// Turns crontab syntax into what the `cron` crate reads: adds the seconds field to 5-field lines
/// and rewrites numeric days of week as names.
fn normalize(text: &str) -> Result<String, String> {
    if text.starts_with('@') {
        return Ok(match text.to_ascii_lowercase().as_str() {
            "@midnight" => "@daily".to_string(),
            other => other.to_string(),
        });
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
    fields[5] = day_of_week_names(&fields[5]).map_err(|e| format!("--schedule {text:?}: {e}"))?;
    Ok(fields.join(" "))
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

    fn ms(rfc: &str) -> i64 {
        DateTime::parse_from_rfc3339(rfc)
            .unwrap()
            .timestamp_millis()
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
}
