//! anarchon's own spans of a run, in the one trace every host derives for it ([`super`]):
//!
//! ```text
//! slot        fire time ─────────────────────────────────────────────── final record
//!  ├ jitter / waiting for the older run / standing by / waiting for the retry  (each host's waits)
//!  ├ attempt 1   claim ─────── end recorded           (host A; the command's TRACEPARENT parent)
//!  │  ├ waiting for a permit
//!  │  └ command  spawn ── exit
//!  └ attempt 2   claim (a takeover on host B) ──────── end recorded
//! ```
//!
//! The slot and attempt spans have the IDs every host derives ([`TraceContext`]); the others get
//! fresh ones. Each span is sent once, by the host whose script wrote what it ends with: an
//! attempt's by the host that recorded its end (its own host, or the host whose takeover recorded
//! it interrupted, on its behalf: [`RunTrace::attempt_ended_by_takeover`]); the slot's by the
//! host that recorded the run's final end. So a partitioned host that comes back does not send a
//! second copy of an attempt span that its taker sent, and a killed host's attempt is still in
//! the trace, as the store has it.

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};

use super::TraceContext;
use super::export::Exporter;
use crate::store::RunKind;

/// The spans of one run (a job's slot, scheduled or manual) as one host sees it.
#[derive(Clone, Copy)]
pub struct RunTrace<'a> {
    pub exporter: &'a Exporter,
    pub prefix: &'a str,
    pub job: &'a str,
    pub slot: i64,
    pub kind: RunKind,
    /// This host (its runner name).
    pub runner: &'a str,
}

/// How a span ended, as the store recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Finished well.
    Ok,
    /// Failed, interrupted, released...: the status and why.
    Error(String),
    /// Neither (a skip, a wait).
    Unset,
}

impl Ended {
    /// The span status of a run's recorded status (`why` for the error's text).
    pub fn of_status(status: &str, why: &str) -> Ended {
        match status {
            "finished" => Ended::Ok,
            "skipped" => Ended::Unset,
            _ if why.is_empty() => Ended::Error(status.to_string()),
            _ => Ended::Error(format!("{status}: {why}")),
        }
    }

    fn status(&self) -> Status {
        match self {
            Ended::Ok => Status::Ok,
            Ended::Error(why) => Status::error(why.clone()),
            Ended::Unset => Status::Unset,
        }
    }
}

/// A time the store wrote (Unix ms) as a span's time; None before 1970.
pub fn time_of_ms(ms: i64) -> Option<SystemTime> {
    Some(SystemTime::UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).ok()?))
}

/// One attempt of the run, as its end was recorded.
#[derive(Debug, Clone)]
pub struct AttemptSpan {
    pub attempt: u32,
    /// The host that ran it.
    pub runner: String,
    pub fence: Option<i64>,
    pub claimed: SystemTime,
    pub ended: SystemTime,
    /// The recorded status (`finished`, `failed`, `interrupted`...).
    pub status: String,
    pub how: Ended,
}

impl RunTrace<'_> {
    fn context(&self, attempt: u32) -> TraceContext {
        TraceContext::of_attempt(self.prefix, self.job, self.slot, self.kind, attempt)
    }

    fn trace_id(&self) -> TraceId {
        TraceId::from_bytes(self.context(0).trace_id)
    }

    fn slot_span(&self) -> SpanId {
        SpanId::from_bytes(TraceContext::slot_span_id(
            self.prefix,
            self.job,
            self.slot,
            self.kind,
        ))
    }

    /// The attributes every span of the run carries.
    fn run_attributes(&self) -> Vec<KeyValue> {
        vec![
            KeyValue::new("anarchon.job", self.job.to_string()),
            KeyValue::new("anarchon.slot", crate::time::rfc3339(self.slot)),
            KeyValue::new("anarchon.kind", self.kind.as_str()),
        ]
    }

    /// A wait of this host's (`name`: jitter, standing by...), from `since` to now.
    pub fn wait(&self, name: &'static str, since: SystemTime, attributes: Vec<KeyValue>) {
        self.wait_under(self.slot_span(), name, since, attributes);
    }

    /// A wait of an attempt this host won (for a permit), under the attempt's span.
    pub fn wait_in_attempt(
        &self,
        attempt: u32,
        name: &'static str,
        since: SystemTime,
        attributes: Vec<KeyValue>,
    ) {
        let parent = SpanId::from_bytes(self.context(attempt).span_id);
        self.wait_under(parent, name, since, attributes);
    }

    fn wait_under(
        &self,
        parent: SpanId,
        name: &'static str,
        since: SystemTime,
        mut attributes: Vec<KeyValue>,
    ) {
        attributes.push(KeyValue::new("anarchon.runner", self.runner.to_string()));
        let span = Span {
            name: Cow::Borrowed(name),
            id: fresh_span_id(),
            parent,
            start: since,
            end: SystemTime::now(),
            attributes,
            how: Ended::Unset,
        };
        self.send(span);
    }

    /// An attempt whose end this host recorded.
    pub fn attempt(&self, a: &AttemptSpan, mut attributes: Vec<KeyValue>) {
        attributes.extend([
            KeyValue::new("anarchon.attempt", i64::from(a.attempt)),
            KeyValue::new("anarchon.runner", a.runner.clone()),
            KeyValue::new("anarchon.status", a.status.clone()),
        ]);
        if let Some(fence) = a.fence {
            attributes.push(KeyValue::new("anarchon.fence", fence));
        }
        let span = Span {
            name: Cow::Owned(format!("attempt {}", a.attempt)),
            id: SpanId::from_bytes(self.context(a.attempt).span_id),
            parent: self.slot_span(),
            start: a.claimed,
            end: a.ended.max(a.claimed),
            attributes,
            how: a.how.clone(),
        };
        self.send(span);
    }

    /// The attempt before this host's takeover, whose end the takeover recorded (interrupted: its
    /// lease ended, its host gone or cut off): sent on its behalf, as the store has it.
    pub fn attempt_ended_by_takeover(&self, a: &AttemptSpan) {
        let reported = vec![KeyValue::new(
            "anarchon.recorded_by",
            self.runner.to_string(),
        )];
        self.attempt(a, reported);
    }

    /// The command this host ran for `attempt`: from its spawn to its exit.
    pub fn command(
        &self,
        attempt: u32,
        ran: Duration,
        ended: SystemTime,
        exit: (Option<i32>, Option<i32>),
    ) {
        let mut attributes = vec![
            KeyValue::new("anarchon.attempt", i64::from(attempt)),
            KeyValue::new("anarchon.runner", self.runner.to_string()),
        ];
        let (code, signal) = exit;
        if let Some(code) = code {
            attributes.push(KeyValue::new("process.exit.code", i64::from(code)));
        }
        if let Some(signal) = signal {
            attributes.push(KeyValue::new("anarchon.signal", i64::from(signal)));
        }
        let how = match (code, signal) {
            (Some(0), _) => Ended::Ok,
            (Some(code), _) => Ended::Error(format!("exit code {code}")),
            (None, Some(signal)) => Ended::Error(format!("ended by signal {signal}")),
            (None, None) => Ended::Error("not started".to_string()),
        };
        let span = Span {
            name: Cow::Borrowed("command"),
            id: fresh_span_id(),
            parent: SpanId::from_bytes(self.context(attempt).span_id),
            start: ended.checked_sub(ran).unwrap_or(ended),
            end: ended,
            attributes,
            how,
        };
        self.send(span);
    }

    /// The run's own span, from its fire time (the slot) to the final record this host wrote
    /// (`reason`: a skip's, as recorded).
    pub fn slot_ended(
        &self,
        status: &str,
        how: Ended,
        attempts: Option<u32>,
        reason: Option<&str>,
    ) {
        let start = time_of_ms(self.slot).unwrap_or(SystemTime::UNIX_EPOCH);
        let mut attributes = vec![
            KeyValue::new("anarchon.status", status.to_string()),
            KeyValue::new("anarchon.recorded_by", self.runner.to_string()),
        ];
        if let Some(n) = attempts {
            attributes.push(KeyValue::new("anarchon.attempts", i64::from(n)));
        }
        if let Some(reason) = reason {
            attributes.push(KeyValue::new("anarchon.reason", reason.to_string()));
        }
        let span = Span {
            name: Cow::Owned(self.job.to_string()),
            id: self.slot_span(),
            parent: SpanId::INVALID,
            start,
            end: SystemTime::now().max(start),
            attributes,
            how,
        };
        self.send(span);
    }

    fn send(&self, span: Span) {
        let mut attributes = self.run_attributes();
        attributes.extend(span.attributes);
        self.exporter.send(SpanData {
            span_context: SpanContext::new(
                self.trace_id(),
                span.id,
                TraceFlags::SAMPLED,
                false,
                TraceState::NONE,
            ),
            parent_span_id: span.parent,
            parent_span_is_remote: false,
            span_kind: SpanKind::Internal,
            name: span.name,
            start_time: span.start,
            end_time: span.end,
            attributes,
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links: SpanLinks::default(),
            status: span.how.status(),
            instrumentation_scope: scope(),
        });
    }
}

/// A span to send, before the run's attributes join it.
struct Span {
    name: Cow<'static, str>,
    id: SpanId,
    parent: SpanId,
    start: SystemTime,
    end: SystemTime,
    attributes: Vec<KeyValue>,
    how: Ended,
}

fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("anarchon")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build()
}

/// A span ID of a host's own (a wait, a command): random, never zero.
fn fresh_span_id() -> SpanId {
    let mut id = [0u8; 8];
    id.copy_from_slice(&uuid::Uuid::new_v4().as_bytes()[..8]);
    if id == [0; 8] {
        id[7] = 1;
    }
    SpanId::from_bytes(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_status_is_the_span_s() {
        assert_eq!(Ended::of_status("finished", ""), Ended::Ok);
        assert_eq!(Ended::of_status("skipped", "forbid"), Ended::Unset);
        assert_eq!(
            Ended::of_status("failed", "exit code 3"),
            Ended::Error("failed: exit code 3".to_string())
        );
        assert_eq!(
            Ended::of_status("interrupted", ""),
            Ended::Error("interrupted".to_string())
        );
    }

    #[test]
    fn a_fresh_span_id_is_valid() {
        assert_ne!(fresh_span_id(), SpanId::INVALID);
        assert_ne!(fresh_span_id(), fresh_span_id());
    }
}
