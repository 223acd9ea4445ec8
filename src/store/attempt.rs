//! One attempt of a run as every view of runs reads it (`timeline`, the events of `inspect` and
//! `history --events`): an ended attempt (a `:results` member), the current attempt of a run in
//! progress, a claim-only job's claim with its result, or a line of history; and the one judgement
//! of how it ended ([`Outcome`]) and of when a first claim came late ([`late_after_ms`]).

use serde::Serialize;

use crate::store::history::HistoryEntry;
use crate::store::job::RunWithResult;
use crate::store::read::ResultEntry;
use crate::store::state::RunState;

/// How a command ended, from the result `run` records: `timed out`, `exit 3` or `signal 9`; None
/// for a result that is not a command's (a release's, a skip's, a script's own). The one reading
/// of it for every view (events, `wait`, `logs -f`, the RESULT columns).
pub fn command_end(result: &serde_json::Value) -> Option<String> {
    if result.get("timed_out").and_then(|t| t.as_bool()) == Some(true) {
        return Some("timed out".to_string());
    }
    match (
        result.get("exit_code").and_then(|c| c.as_i64()),
        result.get("signal").and_then(|s| s.as_i64()),
    ) {
        (Some(code), _) => Some(format!("exit {code}")),
        (None, Some(signal)) => Some(format!("signal {signal}")),
        _ => None,
    }
}

/// A first claim later than the job's `--jitter` plus this after its slot is a late start: cron
/// starts a process within a second of its minute, and a host claims right after.
pub const LATE_SLACK_MS: i64 = 10_000;

/// How long after its slot a first claim of a job whose claims `--jitter` delays by up to
/// `jitter_ms` is late.
pub fn late_after_ms(jitter_ms: i64) -> i64 {
    jitter_ms.max(0) + LATE_SLACK_MS
}

/// How an attempt ended (or that it has not).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Its command succeeded.
    Finished,
    /// Its command failed (an exit code, a signal, a timeout).
    Failed,
    /// Its lease expired: its holder stopped renewing it (the next attempt, if any, took over).
    Interrupted,
    /// Its holder handed it over (`anarchon cron` shutting down: a deploy, not a crash): its lease
    /// ended at once, for a replica standing by to take the run over as the next attempt.
    #[serde(rename = "handed_over")]
    HandedOver,
    /// `run --overlap replace` stopped it for a newer slot.
    Replaced,
    /// A newer slot's claim ended it after its lease had expired (`--overlap forbid`).
    Superseded,
    /// An operator released it (`anarchon release`).
    Released,
    /// A policy decided not to run the slot (`--overlap forbid`, `--catch-up-policy`): attempt 0.
    Skipped,
    /// In progress, its lease live.
    Running,
    /// Still in progress in the store, its lease ended: its holder is gone or hung, and nobody
    /// took it over (yet).
    Expired,
    /// A claim-only job's claim with no result yet (those strategies have no leases).
    Claimed,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Finished => "finished",
            Outcome::Failed => "failed",
            Outcome::Interrupted => "interrupted",
            Outcome::HandedOver => "handed_over",
            Outcome::Replaced => "replaced",
            Outcome::Superseded => "superseded",
            Outcome::Released => "released",
            Outcome::Skipped => "skipped",
            Outcome::Running => "running",
            Outcome::Expired => "expired",
            Outcome::Claimed => "claimed",
        }
    }

    /// Whether the attempt is still open: drawn to now.
    pub fn open(self) -> bool {
        matches!(self, Outcome::Running | Outcome::Expired | Outcome::Claimed)
    }
}

/// One attempt as read, before it is judged: an ended attempt (a `:results` member), a run in
/// progress, or a claim-only job's claim with its result.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub slot: i64,
    /// None: a claim-only job's claim; 0: a skip.
    pub attempt: Option<u32>,
    pub runner: String,
    /// As recorded: finished, failed, interrupted, skipped; `running` for a run in progress,
    /// `claimed` for a claim with no result.
    pub status: String,
    pub claimed_at: Option<i64>,
    pub ended_at: Option<i64>,
    /// The lease's end of a run in progress.
    pub lease_end: Option<i64>,
    pub result: serde_json::Value,
    pub manual: bool,
}

impl From<ResultEntry> for Attempt {
    fn from(r: ResultEntry) -> Self {
        Attempt {
            slot: r.slot,
            attempt: r.attempt,
            runner: r.runner,
            status: r.status,
            claimed_at: r.claimed_at,
            ended_at: r.ended_at,
            lease_end: None,
            result: r.result,
            manual: r.kind.as_deref() == Some("manual"),
        }
    }
}

impl Attempt {
    /// The current attempt of a run in progress.
    pub fn in_progress(r: RunState) -> Self {
        Attempt {
            slot: r.slot,
            attempt: Some(r.attempt),
            runner: r.runner,
            status: "running".to_string(),
            claimed_at: Some(r.claimed_at),
            ended_at: None,
            lease_end: Some(r.lease_end),
            result: serde_json::Value::Null,
            manual: r.kind == crate::store::state::RunKind::Manual,
        }
    }

    /// A claim-only job's claim, with its result when it has one.
    pub fn claim(r: RunWithResult) -> Self {
        Attempt {
            slot: r.entry.slot,
            attempt: r.entry.attempt,
            status: r.entry.status.unwrap_or_else(|| "claimed".to_string()),
            runner: r.entry.runner,
            claimed_at: r.entry.claimed_at,
            ended_at: r.entry.ended_at,
            lease_end: None,
            result: r.result.unwrap_or_default(),
            manual: r.entry.kind == "manual",
        }
    }

    /// How it ended (or that it has not), by the server's clock `now`.
    pub fn outcome(&self, now: i64) -> Outcome {
        let field = |name: &str| self.result.get(name).filter(|v| !v.is_null());
        match self.status.as_str() {
            "running" if self.lease_end.is_some_and(|end| end > now) => Outcome::Running,
            "running" => Outcome::Expired,
            "claimed" => Outcome::Claimed,
            "skipped" => Outcome::Skipped,
            status if crate::store::read::replaced(status, &self.result) => Outcome::Replaced,
            // An operator's release, recorded interrupted or (`--status failed`) failed.
            _ if field("released_by").is_some() => Outcome::Released,
            "finished" => Outcome::Finished,
            "failed" => Outcome::Failed,
            _ if field("superseded_by").is_some() => Outcome::Superseded,
            // Recorded interrupted, with who handed it over and why (docs/store-format.md).
            _ if field("handed_over_by").is_some() => Outcome::HandedOver,
            // interrupted, or a status another writer recorded that this build does not know.
            _ => Outcome::Interrupted,
        }
    }
}

impl From<&HistoryEntry> for Attempt {
    /// A line of history (`history`'s read).
    fn from(h: &HistoryEntry) -> Self {
        Attempt {
            slot: h.slot,
            attempt: h.attempt,
            runner: h.runner.clone(),
            status: h.status.clone(),
            claimed_at: h.claimed_at,
            ended_at: h.ended_at,
            lease_end: None,
            result: h.result.clone(),
            manual: h.kind.as_deref() == Some("manual"),
        }
    }
}

impl Attempt {
    /// Its number: as recorded; a claim-only job's claim (which records none) 1, a skip 0.
    pub fn number(&self) -> u32 {
        self.attempt
            .unwrap_or(if self.status == "skipped" { 0 } else { 1 })
    }

    /// Whether it is a first claim that came `late_after` ms or more after its slot (a manual
    /// run never is: its slot is when it was asked for).
    pub fn is_late(&self, late_after: i64) -> bool {
        !self.manual
            && self.number() == 1
            && self
                .claimed_at
                .is_some_and(|at| at - self.slot > late_after)
    }
}
