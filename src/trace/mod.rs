//! One trace per scheduled run, whichever hosts touch it (issue 51, item 1): the W3C Trace
//! Context of a run is derived from what every host already knows of it — the prefix, the job, the
//! slot and the attempt — so that the claim on one host, a takeover on another and the command's
//! own spans land in one trace without anyone passing an ID along. The command gets it as
//! `TRACEPARENT` (W3C Trace Context, `00-<trace id>-<parent id>-01`), which the OpenTelemetry SDKs
//! of every language read.
//!
//! The derivation is part of the store's conventions (docs/store-format.md, "Trace context"), so
//! that another implementation sharing the store joins the same traces: name-based UUIDs (RFC 9562
//! version 5, SHA-1) in [`NAMESPACE`]:
//! - trace ID: the 16 bytes of the UUID of `<prefix><job>\n<slot>\n<kind>`;
//! - an attempt's span ID: the first 8 bytes of the UUID of `<prefix><job>\n<slot>\n<kind>\n<attempt>`
//!   (the command's parent: attempt 2, a takeover on another host, is a sibling of attempt 1);
//! - the slot's own span ID (the root every attempt hangs from): the same with attempt `0`.
//!
//! `<slot>` is the slot in ms, `<kind>` `scheduled` or `manual` (a `run-now` of the same slot time
//! is a run of its own), `<attempt>` decimal.
//!
//! anarchon's own spans of a run (the slot, each attempt, each host's waits, the command) are
//! [`spans`], with these IDs; [`export`] sends them to a collector over OTLP when the standard
//! `OTEL_EXPORTER_OTLP_*` variables name one (off otherwise: then no span is even made).

pub mod export;
pub mod spans;

pub use export::Exporter;
pub use spans::RunTrace;

use uuid::Uuid;

use crate::store::RunKind;

/// The namespace of anarchon's trace IDs, `5dbeb254-2f8a-52c6-a6a5-d6f5cf11cf89`: the UUID v5 of the URL
/// `https://anarchon.invalid/trace` in RFC 9562's URL namespace (any fixed value would do; this one
/// is written down).
pub const NAMESPACE: Uuid = Uuid::from_u128(0x5dbe_b254_2f8a_52c6_a6a5_d6f5_cf11_cf89);

/// The trace context of one attempt of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceContext {
    pub trace_id: [u8; 16],
    /// The attempt's span: the command's parent.
    pub span_id: [u8; 8],
}

impl TraceContext {
    /// Attempt `attempt` (1 for the first claim) of the run of `job` at `slot` under `prefix`.
    pub fn of_attempt(prefix: &str, job: &str, slot: i64, kind: RunKind, attempt: u32) -> Self {
        let run = run_name(prefix, job, slot, kind);
        TraceContext {
            trace_id: *Uuid::new_v5(&NAMESPACE, run.as_bytes()).as_bytes(),
            span_id: span_id(&run, attempt),
        }
    }

    /// The slot's own span, the parent of every attempt of it.
    pub fn slot_span_id(prefix: &str, job: &str, slot: i64, kind: RunKind) -> [u8; 8] {
        span_id(&run_name(prefix, job, slot, kind), 0)
    }

    /// `00-<trace id>-<span id>-01`: W3C Trace Context's `traceparent`, sampled (the run chose to
    /// be traced by being scheduled; a collector's sampler decides what it keeps).
    pub fn traceparent(&self) -> String {
        format!("00-{}-{}-01", hex(&self.trace_id), hex(&self.span_id))
    }

    pub fn trace_id_hex(&self) -> String {
        hex(&self.trace_id)
    }

    pub fn span_id_hex(&self) -> String {
        hex(&self.span_id)
    }
}

fn run_name(prefix: &str, job: &str, slot: i64, kind: RunKind) -> String {
    format!("{prefix}{job}\n{slot}\n{}", kind.as_str())
}

fn span_id(run: &str, attempt: u32) -> [u8; 8] {
    let uuid = Uuid::new_v5(&NAMESPACE, format!("{run}\n{attempt}").as_bytes());
    let mut id = [0u8; 8];
    id.copy_from_slice(&uuid.as_bytes()[..8]);
    // An all-zero span ID is invalid (W3C); one in 2^64, made valid.
    if id == [0; 8] {
        id[7] = 1;
    }
    id
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The namespace is what its doc says it is.
    #[test]
    fn the_namespace_is_the_documented_one() {
        let derived = Uuid::new_v5(&Uuid::NAMESPACE_URL, b"https://anarchon.invalid/trace");
        assert_eq!(NAMESPACE, derived, "{derived:#x}");
    }

    /// Every host derives the same trace for a slot; each attempt its own span; another slot,
    /// job, prefix or kind another trace.
    #[test]
    fn one_trace_per_run_one_span_per_attempt() {
        let one = TraceContext::of_attempt("cron:", "sync", 1_000, RunKind::Scheduled, 1);
        let two = TraceContext::of_attempt("cron:", "sync", 1_000, RunKind::Scheduled, 2);
        assert_eq!(one.trace_id, two.trace_id);
        assert_ne!(one.span_id, two.span_id);
        assert_eq!(
            one,
            TraceContext::of_attempt("cron:", "sync", 1_000, RunKind::Scheduled, 1)
        );
        for other in [
            TraceContext::of_attempt("cron:", "sync", 2_000, RunKind::Scheduled, 1),
            TraceContext::of_attempt("cron:", "sync2", 1_000, RunKind::Scheduled, 1),
            TraceContext::of_attempt("x:", "sync", 1_000, RunKind::Scheduled, 1),
            TraceContext::of_attempt("cron:", "sync", 1_000, RunKind::Manual, 1),
        ] {
            assert_ne!(one.trace_id, other.trace_id);
        }
        let parent = one.traceparent();
        assert_eq!(parent.len(), 55, "{parent}");
        assert!(
            parent.starts_with("00-") && parent.ends_with("-01"),
            "{parent}"
        );
        assert_ne!(
            TraceContext::slot_span_id("cron:", "sync", 1_000, RunKind::Scheduled),
            one.span_id
        );
    }
}
