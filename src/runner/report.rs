//! What became of one slot, and the exit code it stands for (`run --json` prints the report).

use serde::Serialize;

use crate::error::{ExitCode, ExitStatus};
use crate::runner::child::CommandOutcome;
use crate::strategy::lease::ClaimReply;
use crate::time::rfc3339;

/// What became of one slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SlotOutcome {
    /// We won it and ran the command.
    Ran,
    Overlap,
    Done,
    Running,
    /// Older than `--max-late`: not run.
    TooLate,
    /// The job is paused (`anarchon pause`): not claimed.
    Paused,
    /// Won, but fewer replicas than `--wait-replicas` acknowledged the claim in time, and
    /// `--if-unreplicated skip`: ended as failed without starting the command.
    Unreplicated,
    /// Won, but a `--limit` had no room until `--max-late`: ended `interrupted` without starting
    /// the command.
    NoPermit,
    /// In an exclusion window (`--exclude`, `--calendar`): not claimed, recorded skipped with the
    /// window's name.
    Excluded,
}

/// Whether the end of the run reached the store.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "state", content = "detail")]
pub enum Recorded {
    /// finished / failed is stored.
    Yes,
    /// The token was no longer current: someone else holds or ended the run.
    LeaseLost(String),
    /// Redis could not be reached before the lease expired.
    Unreachable(String),
    /// Redis refused the finish (permissions, memory, bad data): retrying cannot help.
    Refused { reason: String, exit_code: i32 },
    /// An operator released the run (`anarchon release`): the command was stopped, and the
    /// attempt is recorded with the release's status (`interrupted` or `failed`).
    Released { reason: String, status: String },
    /// `anarchon cron` shut down: the command was stopped when its grace ended, and the run
    /// handed over (its lease ended now): the next claim records the attempt `interrupted` (handed
    /// over) and takes the run over.
    HandedOver {
        /// The backup that said last it stands by for the run (None: nobody did).
        standing_by: Option<String>,
    },
    /// The command failed with retries left (`--retries`): the attempt is recorded failed and the
    /// run waits, in progress, for retry `nth`, due at `at` (ms), which any host or replica takes
    /// over as the next attempt.
    Retry { nth: u32, at: i64 },
}

/// The summary of one slot (`run --json` prints it).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SlotReport {
    pub job: String,
    pub slot: i64,
    pub slot_time: String,
    pub outcome: SlotOutcome,
    /// Ours when we ran it; the holder's when skipped.
    pub attempt: Option<u32>,
    pub runner: String,
    /// Whether we took the run over as a backup.
    pub backup: bool,
    /// The run's status after us (`finished`, `failed`, ... or the holder's view when skipped).
    pub status: String,
    pub command: Option<CommandOutcome>,
    pub recorded: Option<Recorded>,
    /// The fencing token of our attempt when we ran it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fence: Option<i64>,
    /// For a scheduled slot refused by `--overlap forbid`: whether this host recorded it as
    /// skipped (false: another host had, or a claim reached it meanwhile).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_recorded: Option<bool>,
    /// Why an overlapping slot was skipped (the reason recorded with it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<String>,
    /// `--overlap replace` or `buffer`: the older run this slot waited for, and how long.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlap: Option<crate::runner::overlap::OverlapWait>,
    /// Not claimed yet: the job is held by the run of this older slot, which a host catching up
    /// put ahead of this one ([`crate::runner::run_in_turn`] stands by for it, then claims again).
    #[serde(skip)]
    pub behind: Option<i64>,
}

impl SlotReport {
    pub fn skipped(job: &str, slot: i64, outcome: SlotOutcome, reply: Option<&ClaimReply>) -> Self {
        SlotReport {
            job: job.to_string(),
            slot,
            slot_time: rfc3339(slot),
            outcome,
            attempt: reply.and_then(|r| r.attempt),
            runner: reply.map(|r| r.runner.clone()).unwrap_or_default(),
            backup: false,
            status: reply.map(|r| r.status.clone()).unwrap_or_default(),
            command: None,
            recorded: None,
            fence: None,
            skip_recorded: None,
            skip_reason: None,
            overlap: None,
            behind: None,
        }
    }

    pub fn too_late(job: &str, slot: i64) -> Self {
        SlotReport::skipped(job, slot, SlotOutcome::TooLate, None)
    }

    /// The process exit code this slot stands for (see the table in error.rs).
    pub fn exit_code(&self) -> i32 {
        self.exit_status().code()
    }

    /// What this slot makes the process exit with: the command's own status when it failed here
    /// (passed on), else a documented code.
    pub fn exit_status(&self) -> ExitStatus {
        match self.outcome {
            SlotOutcome::Overlap => ExitCode::Overlap.into(),
            SlotOutcome::Done => ExitCode::Done.into(),
            SlotOutcome::Running => ExitCode::Running.into(),
            SlotOutcome::TooLate => ExitCode::TooLate.into(),
            SlotOutcome::Paused => ExitCode::Paused.into(),
            SlotOutcome::Unreplicated => ExitCode::Unreplicated.into(),
            SlotOutcome::NoPermit => ExitCode::NoPermit.into(),
            // Not run, as planned: nothing for cron's mail or a monitor to see.
            SlotOutcome::Excluded => ExitStatus::OK,
            SlotOutcome::Ran => {
                let command = self
                    .command
                    .as_ref()
                    .map_or(1, CommandOutcome::process_exit_code);
                match (&self.recorded, command) {
                    // A failing command's own code is what cron and monitoring must see.
                    (_, code) if code != 0 => ExitStatus::External(code),
                    (Some(Recorded::LeaseLost(_)), _) => ExitCode::LeaseLost.into(),
                    (Some(Recorded::Unreachable(_)), _) => ExitCode::Connection.into(),
                    // The code of the error that refused the record: anarchon's own.
                    (Some(Recorded::Refused { exit_code, .. }), _) => ExitCode::ALL
                        .into_iter()
                        .find(|c| c.code() == *exit_code)
                        .map_or(ExitStatus::External(*exit_code), ExitStatus::Code),
                    (
                        Some(Recorded::Yes | Recorded::Released { .. } | Recorded::Retry { .. })
                        | None,
                        _,
                    ) => ExitStatus::OK,
                    (Some(Recorded::HandedOver { .. }), _) => ExitCode::LeaseLost.into(),
                }
            }
        }
    }
}
