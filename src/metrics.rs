//! Prometheus metrics of the store (`anarchon metrics`): the text exposition format 0.0.4, which
//! Prometheus scrapes and node_exporter's textfile collector reads. Names follow Prometheus'
//! conventions: an `anarchon_` namespace, base units in the name (`_seconds`), `_timestamp_seconds`
//! for points in time; every family has HELP and TYPE. All are gauges: each scrape reads the
//! store afresh, so nothing here counts up between scrapes.
//!
//! A job whose data cannot be read is one `anarchon_job_unreadable{job,key}` sample, never a
//! failed scrape. docs/monitoring/ holds a Grafana dashboard and alert rules built on these names
//! (tests/it/monitoring.rs checks that they use only what this exports).

use std::fmt::Write;

use crate::health::{Health, HealthState};
use crate::store::read::Unreadable;
use crate::store::view::JobView;

/// Every metric family: name, help. The one list the exporter, the docs and the tests share.
pub const FAMILIES: &[(&str, &str)] = &[
    (
        "anarchon_up",
        "Whether the store could be read (1) or not (0).",
    ),
    (
        "anarchon_store_format",
        "The store format of the prefix (0: no anarchon data yet).",
    ),
    (
        "anarchon_server_time_seconds",
        "The Redis server's clock, which judges every lease and slot.",
    ),
    (
        "anarchon_scrape_duration_seconds",
        "How long reading the store took.",
    ),
    ("anarchon_jobs", "Jobs found under the prefix."),
    (
        "anarchon_limit_held",
        "Permits of a --limit held now (runs of its jobs whose commands may run).",
    ),
    (
        "anarchon_limit_waiting",
        "Runs waiting now for a permit of a --limit.",
    ),
    (
        "anarchon_limit_gave_up",
        "Runs that gave up waiting for a permit of a --limit (recorded interrupted), ever.",
    ),
    (
        "anarchon_scrape_errors",
        "Jobs whose data could not be read this scrape.",
    ),
    (
        "anarchon_job_unreadable",
        "1 for a job whose data could not be read, with the key at fault.",
    ),
    (
        "anarchon_job_health",
        "1 for the job's health state (ok, renamed, retired, running, late, missed, expired, failing, paused, unknown), 0 for the others.",
    ),
    (
        "anarchon_job_last_success_timestamp_seconds",
        "When the job's newest successful run ended.",
    ),
    (
        "anarchon_job_last_failure_timestamp_seconds",
        "When the job's newest failed or interrupted run ended.",
    ),
    (
        "anarchon_job_last_duration_seconds",
        "How long the job's newest ended run took.",
    ),
    (
        "anarchon_job_last_exit_code",
        "The exit code of the job's newest ended run.",
    ),
    (
        "anarchon_job_recent_runs",
        "The job's newest results (at most 16) by final status (replaced: interrupted by --overlap replace; retried: a failed attempt given a retry).",
    ),
    (
        "anarchon_job_history_runs",
        "Results kept in the job's history.",
    ),
    ("anarchon_job_active_runs", "Runs of the job in progress."),
    (
        "anarchon_job_lease_remaining_seconds",
        "Seconds until the lease of the job's oldest run in progress ends (negative: expired).",
    ),
    (
        "anarchon_job_attempt",
        "The attempt of the job's newest run in progress.",
    ),
    (
        "anarchon_job_next_due_timestamp_seconds",
        "The job's next scheduled slot.",
    ),
    (
        "anarchon_job_late_seconds",
        "How long past its slot the oldest due run is that nobody claimed since the newest one claimed, skipped or paused (0: none; not capped).",
    ),
    (
        "anarchon_job_missed_slots",
        "Due slots of the job nobody claimed, among its newest 10.",
    ),
    (
        "anarchon_job_lost_slots",
        "Due slots of the job claimed but never run to an end (interrupted, nobody finished them), among its newest 10.",
    ),
    (
        "anarchon_job_expired_runs",
        "Runs of the job in progress whose lease ended over 10 s ago with nobody to take them over.",
    ),
    (
        "anarchon_job_failed_in_a_row",
        "How many of the job's newest ended runs failed, in a row.",
    ),
    (
        "anarchon_job_paused",
        "1 while the job is paused (anarchon pause).",
    ),
];

const STATES: [HealthState; 10] = [
    HealthState::Ok,
    HealthState::Renamed,
    HealthState::Retired,
    HealthState::Running,
    HealthState::Late,
    HealthState::Missed,
    HealthState::Expired,
    HealthState::Failing,
    HealthState::Paused,
    HealthState::Unknown,
];

/// A label value, escaped as the format requires (backslash, double quote, line feed).
pub(crate) fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A float as the format writes it (integers without a fraction).
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn seconds(ms: i64) -> f64 {
    ms as f64 / 1000.0
}

/// One scrape's facts about the store itself.
pub struct Scrape {
    pub up: bool,
    pub format: Option<u32>,
    pub server_now: i64,
    pub duration_ms: f64,
    /// The prefix's `--limit`s.
    pub limits: Vec<crate::store::limit::LimitView>,
}

/// The exposition text of one scrape.
pub fn render(scrape: &Scrape, jobs: &[(JobView, Health)], unreadable: &[Unreadable]) -> String {
    let mut samples = Samples::default();
    store_samples(&mut samples, scrape, jobs.len(), unreadable);
    for (m, h) in jobs {
        job_samples(&mut samples, scrape, m, h);
    }
    samples.exposition()
}

/// The samples of one scrape, in the order they were added: (family, labels, value).
#[derive(Default)]
struct Samples(Vec<(&'static str, String, f64)>);

impl Samples {
    fn add(&mut self, name: &'static str, labels: String, value: f64) {
        self.0.push((name, labels, value));
    }

    /// The text exposition: grouped by family, in FAMILIES' order, each with its HELP and TYPE.
    fn exposition(&self) -> String {
        let mut out = String::new();
        for (name, help) in FAMILIES {
            let family: Vec<_> = self.0.iter().filter(|(n, _, _)| n == name).collect();
            if family.is_empty() {
                continue;
            }
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} gauge");
            for (_, labels, value) in family {
                if labels.is_empty() {
                    let _ = writeln!(out, "{name} {}", number(*value));
                } else {
                    let _ = writeln!(out, "{name}{{{labels}}} {}", number(*value));
                }
            }
        }
        out
    }
}

/// The store's own samples: up, format, server time, job counts, the scrape's duration, and one
/// per job that could not be read.
fn store_samples(
    samples: &mut Samples,
    scrape: &Scrape,
    readable: usize,
    unreadable: &[Unreadable],
) {
    let mut add = |name: &'static str, labels: String, value: f64| samples.add(name, labels, value);
    add("anarchon_up", String::new(), f64::from(u8::from(scrape.up)));
    if scrape.up {
        add(
            "anarchon_store_format",
            String::new(),
            f64::from(scrape.format.unwrap_or(0)),
        );
        add(
            "anarchon_server_time_seconds",
            String::new(),
            seconds(scrape.server_now),
        );
        add(
            "anarchon_jobs",
            String::new(),
            (readable + unreadable.len()) as f64,
        );
        add(
            "anarchon_scrape_errors",
            String::new(),
            unreadable.len() as f64,
        );
    }
    add(
        "anarchon_scrape_duration_seconds",
        String::new(),
        scrape.duration_ms / 1000.0,
    );
    for l in &scrape.limits {
        let labels = format!("limit=\"{}\"", label(&l.name));
        add("anarchon_limit_held", labels.clone(), l.held.len() as f64);
        add(
            "anarchon_limit_waiting",
            labels.clone(),
            l.waiting.len() as f64,
        );
        add("anarchon_limit_gave_up", labels, l.refused as f64);
    }
    for u in unreadable {
        add(
            "anarchon_job_unreadable",
            format!(
                "job=\"{}\",key=\"{}\"",
                label(&u.job),
                label(u.error.key().unwrap_or_default())
            ),
            1.0,
        );
    }
}

/// One job's samples: its health, last results, runs in progress, lateness and pause.
fn job_samples(samples: &mut Samples, scrape: &Scrape, m: &JobView, h: &Health) {
    let job = format!("job=\"{}\"", label(&m.job));
    // A sample labelled with the job alone, when there is a value.
    let mut gauge = |name: &'static str, value: Option<f64>| {
        if let Some(v) = value {
            samples.add(name, job.clone(), v);
        }
    };
    gauge(
        "anarchon_job_last_success_timestamp_seconds",
        h.last_success.map(seconds),
    );
    gauge(
        "anarchon_job_last_failure_timestamp_seconds",
        h.last_failure.map(seconds),
    );
    gauge(
        "anarchon_job_last_duration_seconds",
        h.last_duration_ms.map(seconds),
    );
    gauge(
        "anarchon_job_last_exit_code",
        h.last_exit_code.map(|c| c as f64),
    );
    gauge("anarchon_job_history_runs", Some(m.history_entries as f64));
    gauge("anarchon_job_active_runs", Some(m.in_progress.len() as f64));
    let lease_end = m.in_progress.iter().map(|r| r.lease_end).min();
    gauge(
        "anarchon_job_lease_remaining_seconds",
        lease_end.map(|end| seconds(end - scrape.server_now)),
    );
    let newest = m.in_progress.iter().max_by_key(|r| r.slot);
    gauge("anarchon_job_attempt", newest.map(|r| f64::from(r.attempt)));
    gauge(
        "anarchon_job_next_due_timestamp_seconds",
        h.next_due.map(seconds),
    );
    gauge("anarchon_job_late_seconds", Some(h.late_seconds as f64));
    gauge(
        "anarchon_job_missed_slots",
        Some(h.missed_slots.len() as f64),
    );
    gauge("anarchon_job_lost_slots", Some(h.lost_slots.len() as f64));
    gauge(
        "anarchon_job_expired_runs",
        Some(h.expired_slots.len() as f64),
    );
    gauge(
        "anarchon_job_failed_in_a_row",
        Some(f64::from(h.failed_in_a_row)),
    );
    let paused = m
        .pause
        .as_ref()
        .is_some_and(|p| p.is_paused(scrape.server_now));
    gauge("anarchon_job_paused", Some(f64::from(u8::from(paused))));
    for state in STATES {
        samples.add(
            "anarchon_job_health",
            format!("{job},state=\"{}\"", state.as_str()),
            f64::from(u8::from(h.state == state)),
        );
    }
    for (status, n) in m.counts_by_status() {
        samples.add(
            "anarchon_job_recent_runs",
            format!("{job},status=\"{}\"", label(&status)),
            n as f64,
        );
    }
}

/// The scrape of a store that cannot be read: `anarchon_up 0`, as exporters answer, so that
/// Prometheus alerts on it instead of on a gap (`metrics --listen`, `cron --listen`).
pub fn store_unreadable(why: &str, duration_ms: f64) -> String {
    let mut body = format!("# anarchon could not read the store: {why}\n");
    body.push_str(&render(
        &Scrape {
            up: false,
            format: None,
            server_now: 0,
            duration_ms,
            limits: Vec::new(),
        },
        &[],
        &[],
    ));
    body
}

/// The exposition format's content type.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Reads the store once and renders it (`anarchon cron --listen` serves it too).
pub async fn scrape(
    conn: &mut crate::connection::Connection,
    prefix: &str,
) -> crate::error::Result<String> {
    let started = std::time::Instant::now();
    let check = crate::store::format::check_for_read(conn, prefix).await?;
    let jobs = crate::store::discover::find_jobs(conn, prefix, "*").await?;
    let (monitored, unreadable) = crate::store::view::read(conn, prefix, &jobs, &check).await?;
    let now = check.server_now_ms;
    let limits = crate::store::limit::all(conn, prefix, now).await?;
    let judged: Vec<_> = monitored
        .into_iter()
        .map(|m| {
            let h = m.health(now, None);
            (m, h)
        })
        .collect();
    Ok(render(
        &Scrape {
            up: true,
            format: check.format,
            server_now: now,
            duration_ms: started.elapsed().as_secs_f64() * 1000.0,
            limits,
        },
        &judged,
        &unreadable,
    ))
}

/// A plain-text HTTP answer in the exposition format's content type (`metrics --listen`, `cron
/// --listen`).
pub fn text_reply(
    status: hyper::StatusCode,
    body: String,
) -> hyper::Response<http_body_util::Full<hyper::body::Bytes>> {
    hyper::Response::builder()
        .status(status)
        .header("content-type", CONTENT_TYPE)
        .body(http_body_util::Full::new(hyper::body::Bytes::from(body)))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped_and_families_have_help_and_type() {
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        let text = render(
            &Scrape {
                up: true,
                format: Some(2),
                server_now: 1_796_220_000_000,
                duration_ms: 1.5,
                limits: Vec::new(),
            },
            &[],
            &[],
        );
        assert!(
            text.contains("# TYPE anarchon_up gauge\nanarchon_up 1\n"),
            "{text}"
        );
        assert!(
            text.contains("anarchon_server_time_seconds 1796220000\n"),
            "{text}"
        );
        assert!(
            text.contains("anarchon_scrape_duration_seconds 0.0015\n"),
            "{text}"
        );
        for (name, _) in FAMILIES {
            assert!(name.starts_with("anarchon_"));
            assert!(!name.ends_with("_total"), "all are gauges: {name}");
        }
    }
}
