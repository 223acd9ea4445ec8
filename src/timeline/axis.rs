//! The time axis both pictures share: where a time falls, and which ticks to label.

use chrono::{TimeZone, Utc};

/// `ms` formatted by `pattern` (chrono's strftime), UTC.
pub fn format(ms: i64, pattern: &str) -> String {
    match Utc.timestamp_millis_opt(ms).single() {
        Some(t) => t.format(pattern).to_string(),
        None => format!("@{ms}ms"),
    }
}

/// The UTC day of `ms`.
fn day(ms: i64) -> i64 {
    ms.div_euclid(86_400_000)
}

/// How a slot or a time in the picture is written: as short as the range allows (`14:05`), with
/// seconds when some slot has them, with the date when the times shown span more than one day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeStyle {
    pub date: bool,
    pub seconds: bool,
}

impl TimeStyle {
    /// The style for the window `[since, until]` and the slots shown in it.
    pub fn of(since: i64, until: i64, slots: impl IntoIterator<Item = i64>) -> Self {
        let mut days = vec![day(since), day(until)];
        let mut seconds = false;
        for slot in slots {
            days.push(day(slot));
            seconds |= slot.rem_euclid(60_000) != 0;
        }
        days.sort_unstable();
        days.dedup();
        TimeStyle {
            date: days.len() > 1,
            seconds,
        }
    }

    fn pattern(self, seconds: bool) -> &'static str {
        match (self.date, seconds) {
            (false, false) => "%H:%M",
            (false, true) => "%H:%M:%S",
            (true, false) => "%m-%d %H:%M",
            (true, true) => "%m-%d %H:%M:%S",
        }
    }

    /// A slot (seconds only when some slot has them).
    pub fn slot(self, ms: i64) -> String {
        format(ms, self.pattern(self.seconds))
    }

    /// An instant (always with seconds).
    pub fn clock(self, ms: i64) -> String {
        format(ms, self.pattern(true))
    }
}

/// Maps `[since, until]` onto `width` units (columns of text, pixels of SVG).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Axis {
    pub since: i64,
    pub until: i64,
    pub width: usize,
}

impl Axis {
    /// Where `t` falls, as a fraction of the width (not clamped).
    pub fn x(&self, t: i64) -> f64 {
        let span = (self.until - self.since).max(1) as f64;
        (t - self.since) as f64 / span * self.width as f64
    }

    /// The column `t` falls in, clamped to the axis.
    pub fn col(&self, t: i64) -> usize {
        let span = i128::from((self.until - self.since).max(1));
        let at =
            i128::from(t.clamp(self.since, self.until) - self.since) * self.width as i128 / span;
        (at as usize).min(self.width.saturating_sub(1))
    }

    /// The time one column stands for, in ms.
    pub fn column_ms(&self) -> i64 {
        (self.until - self.since) / self.width.max(1) as i64
    }

    /// The labelled ticks: round times (every 1s, 2s, 5s, ... 1d, 7d, 30d) as many as fit when
    /// each label needs its width and two columns more; each with its label.
    pub fn ticks(&self) -> Vec<(i64, String)> {
        const SECOND: i64 = 1000;
        const MINUTE: i64 = 60 * SECOND;
        const HOUR: i64 = 60 * MINUTE;
        const DAY: i64 = 24 * HOUR;
        let steps = [
            SECOND,
            2 * SECOND,
            5 * SECOND,
            10 * SECOND,
            15 * SECOND,
            30 * SECOND,
            MINUTE,
            2 * MINUTE,
            5 * MINUTE,
            10 * MINUTE,
            15 * MINUTE,
            30 * MINUTE,
            HOUR,
            2 * HOUR,
            3 * HOUR,
            6 * HOUR,
            12 * HOUR,
            DAY,
            2 * DAY,
            7 * DAY,
            14 * DAY,
            30 * DAY,
            90 * DAY,
            365 * DAY,
        ];
        let span = (self.until - self.since).max(1);
        for step in steps {
            let (pattern, label_width) = match step {
                s if s < MINUTE => ("%H:%M:%S", 8),
                s if s < DAY => ("%H:%M", 5),
                _ => ("%m-%d", 5),
            };
            let room = (self.width / (label_width + 2)).max(1) as i64;
            if span / step > room {
                continue;
            }
            let first = self.since.div_euclid(step) * step;
            let first = if first < self.since {
                first + step
            } else {
                first
            };
            return (0..)
                .map(|i| first + i * step)
                .take_while(|t| *t <= self.until)
                .map(|t| (t, format(t, pattern)))
                .collect();
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 1_796_220_000_000; // 2026-12-02T14:00:00Z

    #[test]
    fn times_map_to_columns_within_the_axis() {
        let axis = Axis {
            since: T,
            until: T + 600_000,
            width: 60,
        };
        assert_eq!(axis.col(T), 0);
        assert_eq!(axis.col(T + 10_000), 1);
        assert_eq!(axis.col(T + 600_000), 59, "the end is the last column");
        assert_eq!(axis.col(T - 1), 0);
        assert_eq!(axis.column_ms(), 10_000);
    }

    #[test]
    fn ticks_are_round_times_that_fit() {
        let axis = Axis {
            since: T + 1,
            until: T + 3_600_000,
            width: 60,
        };
        let ticks = axis.ticks();
        assert_eq!(ticks.first().unwrap().1, "14:10");
        assert_eq!(ticks.last().unwrap().1, "15:00");
        assert!(ticks.len() * 7 <= 60, "{ticks:?}");
        let short = Axis {
            since: T,
            until: T + 20_000,
            width: 80,
        };
        assert_eq!(short.ticks()[1].1, "14:00:05");
    }

    #[test]
    fn times_are_as_short_as_the_range_allows() {
        let style = TimeStyle::of(T, T + 3_600_000, [T, T + 60_000]);
        assert_eq!(style.slot(T), "14:00");
        assert_eq!(style.clock(T + 1500), "14:00:01");
        let days = TimeStyle::of(T - 86_400_000, T, [T + 5_000]);
        assert_eq!(days.slot(T + 5_000), "12-02 14:00:05");
    }
}
