//! A heartbeat's or a finish's answer, as `heartbeat` and `finish` print it.

use serde::Serialize;

use crate::commands::{Context, RunRef};
use crate::error::ExitCode;
use crate::output::Tone;
use crate::strategy::lease::{TokenOutcome, TokenReply};
use crate::time::rfc3339;

/// `heartbeat --json` and `finish --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TokenReport<'a> {
    #[serde(flatten)]
    pub run: RunRef<'a>,
    pub outcome: TokenOutcome,
    pub attempt: Option<u32>,
    /// The run's status after the command (empty when the run has no state).
    pub status: &'a str,
    pub runner: &'a str,
    pub lease_end: Option<i64>,
    pub lease_end_time: Option<String>,
    #[serde(flatten)]
    pub clock: crate::output::ServerClock,
    /// Why the token no longer holds the run (text output only).
    #[serde(skip)]
    pub lost_reason: String,
}

impl<'a> TokenReport<'a> {
    pub fn new(job: &'a str, slot: i64, reply: &'a TokenReply) -> Self {
        TokenReport {
            run: RunRef::new(job, slot),
            outcome: reply.outcome,
            attempt: reply.attempt,
            status: &reply.status,
            runner: &reply.runner,
            lease_end: reply.lease_end,
            lease_end_time: reply.lease_end.map(rfc3339),
            clock: crate::output::ServerClock::at(reply.server_now),
            lost_reason: reply.lost_reason(),
        }
    }

    /// Prints the report; `ok_line` says what succeeded ("lease until ...", "finished").
    pub fn print(&self, ctx: &Context, ok_line: &str) {
        if ctx.out.json {
            ctx.out.print_json(self);
            return;
        }
        match self.outcome {
            TokenOutcome::Ok | TokenOutcome::Retry => crate::outln!(
                "{} {} @ {}: {ok_line}",
                ctx.out.paint("ok", Tone::Good),
                self.run.job,
                self.run.slot_time
            ),
            TokenOutcome::Lost => {
                let why = &self.lost_reason;
                crate::outln!(
                    "{} {} @ {}: {why}; this token no longer holds the run",
                    ctx.out.paint("lost", Tone::Bad),
                    self.run.job,
                    self.run.slot_time
                );
            }
            TokenOutcome::Released => crate::outln!(
                "{} {} @ {}: {}; stop the command, then `anarchon finish` records the attempt as released",
                ctx.out.paint("released", Tone::Bad),
                self.run.job,
                self.run.slot_time,
                self.lost_reason
            ),
        }
    }

    pub fn exit_code(&self) -> ExitCode {
        match self.outcome {
            TokenOutcome::Ok | TokenOutcome::Retry => ExitCode::Ok,
            TokenOutcome::Lost | TokenOutcome::Released => ExitCode::LeaseLost,
        }
    }
}
