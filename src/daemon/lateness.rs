//! How late runs start: from a run's fire time (its slot, the server's clock) to its command's
//! start, per job, as the Prometheus histogram `anarchon_cron_run_start_lateness_seconds` of the
//! daemon's `/metrics` (what Kubernetes' CronJob controller exports as its job creation skew,
//! and gocron as `JobSchedulingDelay`). The daemon learns of a start from the run's `started`
//! event ([`crate::runner::event`]): [`MetricsSink`] is the daemon's sink of run events, which
//! writes each to the log as before and observes the starts here.
//!
//! Only a run's first attempt is observed: a takeover starts when the holder's lease ended, which
//! says how long the lease was, not how late the scheduler was. A run-now request's fire time is
//! when it was asked; a run `--catch-up` caught up is as late as it was caught up.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use super::log::DaemonLog;
use crate::runner::event::{EventKind, RunEvent, Sink};

/// The family's name: `anarchon_cron_*`, the daemon's own series (a replica is scraped for
/// those only: docs/deploy/kubernetes.yaml).
pub(super) const NAME: &str = "anarchon_cron_run_start_lateness_seconds";

/// The buckets' upper bounds, seconds: fine where a daemon on time starts its runs (tens of
/// milliseconds), with 300 ms and 1 s among them (the herd's goals: a p99 and a max), seconds
/// where a herd on a small machine lands (2, 3, 5: the machine's own floor for starting a
/// thousand commands at once is about 1 s on two cores), then up to the default `--max-late`
/// (1 m), past which a run starts only when caught up.
pub(super) const BUCKETS: [f64; 13] = [
    0.01, 0.025, 0.05, 0.1, 0.3, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0,
];

/// One job's histogram: the count in each bucket (not cumulative: the text adds them up), all of
/// them, and their sum.
#[derive(Default, Clone)]
struct Histogram {
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        if let Some(i) = BUCKETS.iter().position(|le| seconds <= *le) {
            self.buckets[i] += 1;
        }
        self.count += 1;
        self.sum += seconds;
    }
}

/// Every job's histogram, by job name.
#[derive(Default)]
pub(super) struct Lateness {
    jobs: Mutex<BTreeMap<String, Histogram>>,
}

impl Lateness {
    /// A run of `job` started `seconds` after its fire time.
    pub(super) fn observe(&self, job: &str, seconds: f64) {
        let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        match jobs.get_mut(job) {
            Some(h) => h.observe(seconds),
            None => {
                let mut h = Histogram::default();
                h.observe(seconds);
                jobs.insert(job.to_string(), h);
            }
        }
    }

    /// Keeps only the jobs `keep` says yes to (a reload removed the others: their series go,
    /// or a crontab whose names change would grow them without end).
    pub(super) fn retain(&self, keep: impl Fn(&str) -> bool) {
        self.jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|job, _| keep(job));
    }

    /// The family in the text format: its HELP and TYPE, then each job's buckets (cumulative,
    /// `+Inf` last), sum and count.
    pub(super) fn render(&self, text: &mut String) {
        let _ = write!(
            text,
            "# HELP {NAME} How long after its fire time (the slot, the server's clock) each run this daemon won started its command, per job (first attempts).\n# TYPE {NAME} histogram\n"
        );
        let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner()).clone();
        for (job, h) in &jobs {
            let job = crate::metrics::label(job);
            let mut cumulative = 0;
            for (le, n) in BUCKETS.iter().zip(h.buckets) {
                cumulative += n;
                let _ = writeln!(
                    text,
                    "{NAME}_bucket{{job=\"{job}\",le=\"{le}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                text,
                "{NAME}_bucket{{job=\"{job}\",le=\"+Inf\"}} {}\n{NAME}_sum{{job=\"{job}\"}} {}\n{NAME}_count{{job=\"{job}\"}} {}",
                h.count, h.sum, h.count
            );
        }
    }
}

/// The server's time now, ms, as the daemon keeps it (None once the daemon is gone).
pub(super) type Clock = Box<dyn Fn() -> Option<i64> + Send + Sync>;

/// The daemon's sink of run events: each goes to its log ([`DaemonLog`]), and a first attempt's
/// start is observed in [`Lateness`], by the server's clock as the daemon keeps it.
pub(super) struct MetricsSink {
    pub(super) lateness: Arc<Lateness>,
    pub(super) clock: Clock,
}

impl Sink for MetricsSink {
    fn emit(&self, event: &RunEvent) {
        DaemonLog.emit(event);
        if event.kind != EventKind::Started || event.attempt.is_some_and(|a| a > 1) {
            return;
        }
        let (Some(job), Some(slot), Some(now)) = (&event.job, event.slot, (self.clock)()) else {
            return;
        };
        // A command started by this machine's clock a little before the server's reached the
        // slot (the daemon waits for it) is on time: not negative.
        let late_ms = (now - slot).max(0);
        self.lateness.observe(job, late_ms as f64 / 1000.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_has_cumulative_buckets_a_sum_and_a_count_per_job() {
        let l = Lateness::default();
        l.observe("a", 0.004);
        l.observe("a", 0.2);
        l.observe("a", 120.0);
        l.observe("b\"x", 0.05);
        let mut text = String::new();
        l.render(&mut text);
        let a = |suffix: &str| {
            text.lines()
                .find_map(|line| line.strip_prefix(&format!("{NAME}{suffix} ")))
                .unwrap_or_else(|| panic!("no {suffix} in {text}"))
                .to_string()
        };
        assert_eq!(a("_bucket{job=\"a\",le=\"0.01\"}"), "1");
        assert_eq!(a("_bucket{job=\"a\",le=\"0.1\"}"), "1");
        assert_eq!(a("_bucket{job=\"a\",le=\"0.3\"}"), "2");
        assert_eq!(a("_bucket{job=\"a\",le=\"60\"}"), "2");
        assert_eq!(a("_bucket{job=\"a\",le=\"+Inf\"}"), "3");
        assert_eq!(a("_count{job=\"a\"}"), "3");
        let sum: f64 = a("_sum{job=\"a\"}").parse().unwrap();
        assert!((sum - 120.204).abs() < 1e-9, "{sum}");
        assert_eq!(a("_bucket{job=\"b\\\"x\",le=\"0.05\"}"), "1");
        assert!(text.starts_with(&format!("# HELP {NAME} ")));
        assert!(text.contains(&format!("# TYPE {NAME} histogram\n")));
        l.retain(|job| job == "a");
        let mut text = String::new();
        l.render(&mut text);
        assert!(!text.contains("b\\\"x"), "{text}");
    }
}
