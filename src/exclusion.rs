//! Exclusion windows (`--exclude`, issue #50 item 4): holidays, month-end freezes, maintenance
//! windows. A scheduled slot whose local time (in the job's zone, as its schedule reads it) falls
//! in a window is not run: it is recorded skipped with the window's name, so that monitoring
//! counts it decided, never missed or lost. Operators keep shared windows in named calendars
//! (`anarchon calendar`, [`crate::store::calendar`]) that many jobs name (`--calendar`).
//!
//! A window is `[NAME=]DAYS[@HH:MM-HH:MM]` or `[NAME=]HH:MM-HH:MM`, where DAYS is a date
//! (`2026-12-24`), a range of dates (`2026-12-24..2026-12-26`), a day of every year (`12-25`), or
//! days of the week (`sat,sun`, `mon-fri`). A time range's end is excluded and may wrap past
//! midnight (`22:00-06:00`: 22:00 to 06:00 the next morning, started on one of DAYS).

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike, Weekday};

/// Which days a window covers.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Days {
    /// Every day.
    Every,
    /// From one date to another, both included.
    Dates(NaiveDate, NaiveDate),
    /// One day of every year (month, day).
    Yearly(u32, u32),
    /// Days of the week.
    Weekdays(Vec<Weekday>),
}

/// One exclusion window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exclusion {
    /// Its name in skip records and `next` (the window as written when it has none).
    pub name: String,
    /// The window as written (`[NAME=]WINDOW`).
    pub text: String,
    days: Days,
    /// Minutes of the day: from (included) to (excluded); None: the whole day.
    times: Option<(u32, u32)>,
}

impl Exclusion {
    /// Parses one window (see the module's documentation).
    pub fn parse(text: &str) -> Result<Exclusion, String> {
        let text = text.trim();
        let (name, spec) = match text.split_once('=') {
            Some((name, spec)) if !name.is_empty() && !name.contains(['@', ':']) => {
                (name.to_string(), spec)
            }
            _ => (text.to_string(), text),
        };
        let bad = |why: &str| {
            format!(
                "{text:?} is not an exclusion window: {why} (examples: 2026-12-24, 2026-12-24..2026-12-26, 12-25, sat,sun, mon-fri@22:00-06:00, 02:00-03:00)"
            )
        };
        let (days, times) = match spec.split_once('@') {
            Some((days, times)) => (days, Some(times)),
            None if looks_like_times(spec) => ("", Some(spec)),
            None => (spec, None),
        };
        let days = if days.is_empty() {
            Days::Every
        } else {
            parse_days(days).ok_or_else(|| bad("the days do not read"))?
        };
        let times = match times {
            Some(t) => Some(parse_times(t).ok_or_else(|| bad("the times do not read"))?),
            None => None,
        };
        if days == Days::Every && times.is_none() {
            return Err(bad("it covers nothing"));
        }
        Ok(Exclusion {
            name,
            text: text.to_string(),
            days,
            times,
        })
    }

    /// Whether a slot at local time `at` falls in this window.
    pub fn covers(&self, at: NaiveDateTime) -> bool {
        let minute = at.hour() * 60 + at.minute();
        match self.times {
            None => self.on(at.date()),
            Some((from, to)) if from < to => self.on(at.date()) && (from..to).contains(&minute),
            // Wrapping past midnight: the evening of one of its days, or the morning after.
            Some((from, to)) => {
                (minute >= from && self.on(at.date()))
                    || (minute < to && at.date().pred_opt().is_some_and(|d| self.on(d)))
            }
        }
    }

    fn on(&self, date: NaiveDate) -> bool {
        match &self.days {
            Days::Every => true,
            Days::Dates(from, to) => (*from..=*to).contains(&date),
            Days::Yearly(m, d) => date.month() == *m && date.day() == *d,
            Days::Weekdays(days) => days.contains(&date.weekday()),
        }
    }
}

/// The first window of `windows` that covers the local time `at`.
pub fn covering(windows: &[Exclusion], at: NaiveDateTime) -> Option<&Exclusion> {
    windows.iter().find(|w| w.covers(at))
}

fn looks_like_times(spec: &str) -> bool {
    spec.len() >= 11 && spec.as_bytes().get(2) == Some(&b':') && spec.contains('-')
}

fn parse_days(text: &str) -> Option<Days> {
    if let Some((from, to)) = text.split_once("..") {
        let from = NaiveDate::parse_from_str(from, "%Y-%m-%d").ok()?;
        let to = NaiveDate::parse_from_str(to, "%Y-%m-%d").ok()?;
        return (from <= to).then_some(Days::Dates(from, to));
    }
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Some(Days::Dates(date, date));
    }
    if let Some((m, d)) = text.split_once('-')
        && let (Ok(m), Ok(d)) = (m.parse::<u32>(), d.parse::<u32>())
    {
        // Checked against a leap year, so that 02-29 is a day.
        NaiveDate::from_ymd_opt(2024, m, d)?;
        return Some(Days::Yearly(m, d));
    }
    let mut days = Vec::new();
    for part in text.split(',') {
        match part.split_once('-') {
            Some((from, to)) => {
                let (mut day, to) = (weekday(from)?, weekday(to)?);
                loop {
                    days.push(day);
                    if day == to {
                        break;
                    }
                    day = day.succ();
                }
            }
            None => days.push(weekday(part)?),
        }
    }
    (!days.is_empty()).then_some(Days::Weekdays(days))
}

fn weekday(text: &str) -> Option<Weekday> {
    text.trim().parse::<Weekday>().ok()
}

fn parse_times(text: &str) -> Option<(u32, u32)> {
    let (from, to) = text.split_once('-')?;
    let minutes = |t: &str| -> Option<u32> {
        if t == "24:00" {
            return Some(24 * 60);
        }
        let t = NaiveTime::parse_from_str(t, "%H:%M").ok()?;
        Some(t.hour() * 60 + t.minute())
    };
    let (from, to) = (minutes(from)?, minutes(to)?);
    (from != to && from < 24 * 60).then_some((from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M").unwrap()
    }

    #[test]
    fn dates_ranges_yearly_days_and_weekdays() {
        let xmas = Exclusion::parse("xmas=2026-12-24..2026-12-26").unwrap();
        assert_eq!(xmas.name, "xmas");
        assert!(xmas.covers(at("2026-12-24 00:00")));
        assert!(xmas.covers(at("2026-12-26 23:59")));
        assert!(!xmas.covers(at("2026-12-27 00:00")));
        let yearly = Exclusion::parse("12-25").unwrap();
        assert_eq!(yearly.name, "12-25");
        assert!(yearly.covers(at("2031-12-25 10:00")));
        let weekend = Exclusion::parse("sat,sun").unwrap();
        assert!(weekend.covers(at("2026-12-05 10:00")));
        assert!(!weekend.covers(at("2026-12-07 10:00")));
        let weekdays = Exclusion::parse("mon-fri").unwrap();
        assert!(weekdays.covers(at("2026-12-04 10:00")));
        assert!(!weekdays.covers(at("2026-12-05 10:00")));
    }

    #[test]
    fn times_of_day_wrap_past_midnight_from_their_days() {
        let nights = Exclusion::parse("fri@22:00-06:00").unwrap();
        assert!(nights.covers(at("2026-12-04 23:00")), "Friday evening");
        assert!(nights.covers(at("2026-12-05 05:59")), "Saturday morning");
        assert!(!nights.covers(at("2026-12-05 06:00")));
        assert!(!nights.covers(at("2026-12-03 23:00")), "Thursday");
        let hour = Exclusion::parse("backup=02:00-03:00").unwrap();
        assert!(hour.covers(at("2026-03-29 02:30")));
        assert!(!hour.covers(at("2026-03-29 03:00")));
    }

    #[test]
    fn windows_that_do_not_read_are_refused_with_examples() {
        for bad in [
            "",
            "tomorrow",
            "2026-13-01",
            "25:00-26:00",
            "02:00-02:00",
            "12-32",
            "x=@",
        ] {
            let e = Exclusion::parse(bad).unwrap_err();
            assert!(e.contains("examples"), "{bad}: {e}");
        }
    }
}
