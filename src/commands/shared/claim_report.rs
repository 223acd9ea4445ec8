//! A claim's answer, as `claim` and `run-now` (without a command) print it, and its exit code.

use serde::Serialize;

use crate::commands::{Context, RunRef};
use crate::error::ExitCode;
use crate::output::Tone;
use crate::strategy::claim::{ClaimOutcome, ClaimRequest};
use crate::strategy::lease::ClaimReply;
use crate::time::{relative, rfc3339};

/// `claim --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ClaimReport<'a> {
    #[serde(flatten)]
    pub run: RunRef<'a>,
    pub outcome: ClaimOutcome,
    /// Ours when won; the holder's otherwise.
    pub attempt: Option<u32>,
    pub max_attempts: u32,
    /// Only when won: pass it to heartbeat and finish.
    pub token: Option<&'a str>,
    /// Ours when won; the holder's for running and overlap.
    pub runner: &'a str,
    pub status: &'a str,
    pub lease_end: Option<i64>,
    pub lease_end_time: Option<String>,
    /// For overlap: the older run that still holds a live lease.
    pub blocking_slot: Option<i64>,
    #[serde(flatten)]
    pub clock: crate::output::ServerClock,
    /// When won: the attempt's fencing token (ANARCHON_FENCE for `run`), strictly rising per job.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fence: Option<i64>,
}

impl<'a> ClaimReport<'a> {
    pub fn new(job: &'a str, req: &'a ClaimRequest, reply: &'a ClaimReply) -> Self {
        ClaimReport {
            run: RunRef::new(job, req.slot),
            outcome: reply.outcome,
            attempt: reply.attempt,
            max_attempts: req.max_attempts,
            token: (reply.outcome == ClaimOutcome::Won).then_some(req.token.as_str()),
            runner: &reply.runner,
            status: &reply.status,
            lease_end: reply.lease_end,
            lease_end_time: reply.lease_end.map(rfc3339),
            blocking_slot: reply.other_slot,
            clock: crate::output::ServerClock::at(reply.server_now),
            fence: reply.fence,
        }
    }
}

pub fn exit_code(outcome: ClaimOutcome) -> ExitCode {
    match outcome {
        ClaimOutcome::Won => ExitCode::Ok,
        ClaimOutcome::Overlap => ExitCode::Overlap,
        ClaimOutcome::Done => ExitCode::Done,
        ClaimOutcome::Running => ExitCode::Running,
        ClaimOutcome::Paused => ExitCode::Paused,
    }
}

/// Prints a claim's outcome as JSON or text.
pub fn print_claim(ctx: &Context, report: &ClaimReport) {
    if ctx.out.json {
        ctx.out.print_json(report);
    } else {
        print_text(ctx, report);
    }
}

fn print_text(ctx: &Context, r: &ClaimReport) {
    let out = &ctx.out;
    let lease = |end: Option<i64>| match end {
        Some(end) => format!("{} ({})", rfc3339(end), relative(end, r.clock.server_time)),
        None => "-".to_string(),
    };
    let attempt = r
        .attempt
        .map_or("-".to_string(), |a| format!("{a} of {}", r.max_attempts));
    match r.outcome {
        ClaimOutcome::Won => {
            crate::outln!(
                "{} {} @ {} (slot {})",
                out.paint("won", Tone::Good),
                r.run.job,
                r.run.slot_time,
                r.run.slot
            );
            print_won_fields(r, &attempt, &lease(r.lease_end));
        }
        ClaimOutcome::Overlap
        | ClaimOutcome::Done
        | ClaimOutcome::Running
        | ClaimOutcome::Paused => print_not_won(ctx, r, &attempt, &lease(r.lease_end)),
    }
}

/// Why a claim did not win: held, overlapping, paused, or over.
fn print_not_won(ctx: &Context, r: &ClaimReport, attempt: &str, lease: &str) {
    let out = &ctx.out;
    match r.outcome {
        ClaimOutcome::Won => {} // print_text's
        ClaimOutcome::Running => {
            crate::outln!(
                "{} {} @ {}: held by {}, attempt {attempt}, lease until {}",
                out.paint("running", Tone::Warn),
                r.run.job,
                r.run.slot_time,
                r.runner,
                lease
            );
        }
        ClaimOutcome::Overlap => {
            // Older, or newer for a late claim: under forbid no run starts beside a live one.
            let which = match r.blocking_slot {
                Some(other) if other > r.run.slot => "newer",
                _ => "older",
            };
            let other = r.blocking_slot.map_or("-".to_string(), rfc3339);
            crate::outln!(
                "{} {} @ {}: the {which} run {other} is still held by {}, lease until {}",
                out.paint("overlap", Tone::Warn),
                r.run.job,
                r.run.slot_time,
                r.runner,
                lease
            );
        }
        ClaimOutcome::Paused => {
            crate::outln!(
                "{} {} @ {}: the job is paused{}; nothing was claimed (`anarchon resume {}` ends the pause)",
                out.paint("paused", Tone::Warn),
                r.run.job,
                r.run.slot_time,
                r.lease_end
                    .map_or(" until resumed".to_string(), |end| format!(
                        " until {}",
                        rfc3339(end)
                    )),
                r.run.job
            );
        }
        ClaimOutcome::Done if r.status == "claimed" => {
            crate::outln!(
                "{} {} @ {}: already claimed by {} (a claim-only strategy cannot tell running from finished)",
                out.paint("done", Tone::Dim),
                r.run.job,
                r.run.slot_time,
                if r.runner.is_empty() {
                    "another instance"
                } else {
                    r.runner
                }
            );
        }
        ClaimOutcome::Done => {
            crate::outln!(
                "{} {} @ {}: the run is over ({}, attempt {attempt}, last runner {})",
                out.paint("done", Tone::Dim),
                r.run.job,
                r.run.slot_time,
                r.status,
                if r.runner.is_empty() { "-" } else { r.runner }
            );
        }
    }
}

/// A won claim's facts, one per line: what `heartbeat` and `finish` need.
fn print_won_fields(r: &ClaimReport, attempt: &str, lease: &str) {
    crate::outln!("  attempt  {attempt}");
    crate::outln!("  token    {}", r.token.unwrap_or("-"));
    crate::outln!("  runner   {}", r.runner);
    crate::outln!("  lease    until {lease}");
    if let Some(fence) = r.fence {
        crate::outln!("  fence    {fence}");
    }
}
