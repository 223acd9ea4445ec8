//! `claim` and `run-now`, resolved once from their command lines: the claim flags they share
//! become [`ClaimSettings`] (as `run`'s do), and nothing below `execute` reads a clap type.

use crate::cli::{ClaimArgs, GlobalArgs, LeaseArgs, RunNowArgs};
use crate::error::Result;
use crate::runner::RunnerOptions;
use crate::settings::run::ClaimSettings;
use crate::strategy::Strategy;
use crate::strategy::claim::HistoryPolicy;
use crate::time::SlotSpec;

impl ClaimSettings {
    /// The claim flags, as `claim`, `run-now` and `run` share them (`run` adds its keep-claimable:
    /// [`crate::settings::run::RunSettings::resolve`]).
    pub fn of_flags(lease: &LeaseArgs) -> ClaimSettings {
        ClaimSettings {
            lease: lease.lease_or_default(),
            max_attempts: lease.max_attempts_or_default(),
            overlap: lease.overlap.unwrap_or_default(),
            runner: lease.runner(),
            history: HistoryPolicy {
                size: lease.history_size.unwrap_or(HistoryPolicy::default().size),
                ttl: lease.history_ttl,
                ..HistoryPolicy::default()
            },
        }
    }
}

/// `anarchon claim JOB --slot S`.
#[derive(Debug, Clone)]
pub struct ClaimCommand {
    pub job: String,
    pub slot: SlotSpec,
    pub strategy: Strategy,
    pub claim: ClaimSettings,
    /// `--new`: a job the store does not know yet may be created.
    pub new: bool,
}

impl ClaimCommand {
    pub fn resolve(args: ClaimArgs, global: &GlobalArgs) -> Result<ClaimCommand> {
        // --overlap replace and buffer act on a scheduled slot an older run holds, by waiting: a
        // claim answers at once, and a manual run is no scheduled slot.
        args.lease.refuse_waiting_overlap("claim")?;
        let claim = ClaimSettings::of_flags(&args.lease);
        let strategy = crate::settings::strategy(&args.strategy, global.backend)?;
        strategy.refuse_lease_options(&args.lease.given())?;
        Ok(ClaimCommand {
            job: args.target.job,
            slot: args.target.slot,
            strategy,
            claim,
            new: args.new,
        })
    }
}

/// `anarchon run-now JOB [-- COMMAND]`.
#[derive(Debug, Clone)]
pub struct RunNowCommand {
    pub job: String,
    pub strategy: Strategy,
    pub claim: ClaimSettings,
    /// How the command runs; None: only claim, and leave heartbeat and finish to the caller.
    pub runner: Option<RunnerOptions>,
    /// `--new`.
    pub new: bool,
}

impl RunNowCommand {
    pub fn resolve(args: RunNowArgs, global: &GlobalArgs, json: bool) -> Result<RunNowCommand> {
        args.lease.refuse_waiting_overlap("run-now")?;
        let claim = ClaimSettings::of_flags(&args.lease);
        let strategy = crate::settings::strategy(&args.strategy, global.backend)?;
        let mut lease_options = args.lease.given();
        lease_options.extend(args.exec.given());
        strategy.refuse_lease_options(&lease_options)?;
        let runner = if args.command.is_empty() {
            None
        } else {
            Some(args.exec.runner_options(&args.command, claim.lease, json)?)
        };
        Ok(RunNowCommand {
            job: args.job,
            strategy,
            claim,
            runner,
            new: args.new,
        })
    }
}
