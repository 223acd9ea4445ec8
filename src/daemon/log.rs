//! The daemon's sink of run events: each [`RunEvent`] becomes one record of its log
//! ([`crate::lines::log`]), with its level, event name, run, exit code and duration, written as
//! text or JSON (`--log-format`), debug records only with `-v`.

use crate::lines::log::{Record, Stream, current_run, log_record};
use crate::runner::event::{RunEvent, Sink};

/// `anarchon cron`'s log, as a sink of run events.
pub struct DaemonLog;

impl Sink for DaemonLog {
    fn emit(&self, event: &RunEvent) {
        log_record(record_of(event));
    }
}

/// The record of `event`: labelled with the run it names, else with its task's run.
fn record_of(event: &RunEvent) -> Record {
    let label = current_run();
    let mut record = Record::new(
        event.level,
        Stream::Anarchon,
        label.as_deref(),
        &event.message,
    );
    if let (Some(job), Some(slot)) = (&event.job, event.slot) {
        // The task's attempt is the run's only while the task works for that slot.
        let attempt = event.attempt.or_else(|| {
            label
                .as_ref()
                .filter(|l| l.job == *job && l.slot() == slot)
                .map(|l| l.attempt())
                .filter(|a| *a > 0)
        });
        record = record.for_run(job, slot, attempt);
    }
    record.event = Some(event.kind.name().to_string());
    record.exit_code = event.exit_code;
    record.duration = event.duration_ms.map(|ms| ms as f64 / 1000.0);
    record
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::event::EventKind;

    #[test]
    fn a_finished_event_carries_its_code_and_duration_in_seconds() {
        let mut e = RunEvent::new(EventKind::Failed, "sync", 1000, "sync @ ...: failed");
        e.exit_code = Some(3);
        e.duration_ms = Some(1234);
        let r = record_of(&e.for_attempt(1));
        assert_eq!(
            (r.event.as_deref(), r.exit_code, r.duration, r.attempt),
            (Some("failed"), Some(3), Some(1.234), Some(1))
        );
        assert_eq!(r.level, crate::lines::Level::Error);
    }
}
