//! A claim as every strategy is asked it: which slot, by whom, for how long, with which overlap
//! policy and history rules ([`ClaimRequest`]), and what it can answer ([`ClaimOutcome`]). The
//! lease strategy's script and the claim-only strategies' commands both take a request and give an
//! outcome; each strategy's module holds only what is its own.

use std::time::Duration;

use serde::Serialize;

use crate::store::RunKind;

/// How long a claim holds a run without a heartbeat, unless told otherwise (`leaseMs`).
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// Attempts of one run in all, unless told otherwise (`maxAttempts`).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// Runs of history kept per job, unless told otherwise (`historySize`).
pub const DEFAULT_HISTORY_SIZE: u32 = 1000;

/// How long after its slot a run stays protected from trimming, at least.
pub const DEFAULT_KEEP_CLAIMABLE: Duration = Duration::from_secs(3600);

/// How much history a claim keeps (the scheduler's `historySize` / `historyTtlMs`).
#[derive(Debug, Clone, Copy)]
pub struct HistoryPolicy {
    /// Keep about this many runs per job.
    pub size: u32,
    /// Also drop runs older than this (None: no age limit).
    pub ttl: Option<Duration>,
    /// Never drop a run younger than this: a late claim could still ask for it, and without its
    /// state that claim would run it a second time.
    pub keep_claimable: Duration,
}

impl Default for HistoryPolicy {
    fn default() -> Self {
        HistoryPolicy {
            size: DEFAULT_HISTORY_SIZE,
            ttl: None,
            keep_claimable: DEFAULT_KEEP_CLAIMABLE,
        }
    }
}

/// Everything a claim needs.
#[derive(Debug, Clone)]
pub struct ClaimRequest {
    pub slot: i64,
    pub token: String,
    pub runner: String,
    pub lease: Duration,
    pub max_attempts: u32,
    pub overlap: super::OverlapPolicy,
    pub kind: RunKind,
    pub history: HistoryPolicy,
    /// The run of this slot is already in progress under an earlier name of the job (a renamed
    /// job's claim that took the old name's run over, `scheduler::lineage`): a pause refuses it no
    /// more than it refuses a takeover. False for every other claim.
    pub continues: bool,
    /// Under `forbid` and `buffer` (`run` and `cron`), how long after its slot an older run whose
    /// holder is gone, with attempts left, is owed its takeover: this claim answers overlap with
    /// it rather than supersede it, and the runner takes it over first (`runner::owed_takeover`).
    /// Zero: never (a claim by hand, a manual run, `replace`, `allow`): the newer run supersedes
    /// it.
    pub owed_within: Duration,
}

/// The answer of the claim script.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ClaimOutcome {
    /// We hold the lease for `attempt`.
    Won,
    /// An older run of the job still holds a live lease.
    Overlap,
    /// The run is over (finished, failed or interrupted).
    Done,
    /// Someone else holds a live lease on this run.
    Running,
    /// The job is paused (`anarchon pause`): a new scheduled run is not claimed. `lease_end` is
    /// when the pause ends (None: until resumed).
    Paused,
}
