//! A run of the lease layout as every store format reads into it ([`RunState`]): each format's
//! decoders are in its module (`store::lease::v1`, `v2`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Where a run is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Claimed; the holder of `token` runs it while its lease lives.
    Running,
    /// Ended with success.
    Finished,
    /// Ended with failure (non-zero exit, signal, timeout).
    Failed,
    /// Every attempt's lease expired without a finish: the holders died.
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

impl FromStr for RunStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "running" => Ok(RunStatus::Running),
            "finished" => Ok(RunStatus::Finished),
            "failed" => Ok(RunStatus::Failed),
            "interrupted" => Ok(RunStatus::Interrupted),
            other => Err(format!(
                "status {other:?} is none of running, finished, failed, interrupted"
            )),
        }
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a run came from the schedule or from `run-now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    Scheduled,
    Manual,
}

impl RunKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Scheduled => "scheduled",
            RunKind::Manual => "manual",
        }
    }
}

/// One run as the state hash records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RunState {
    /// The run's scheduled time, ms since the epoch; it names the run.
    pub slot: i64,
    pub status: RunStatus,
    /// 1 for the first attempt, +1 for each takeover after a lease expired.
    pub attempt: u32,
    /// The current attempt's token: only its holder may heartbeat or finish.
    pub token: String,
    /// Who holds the current attempt (`host:pid` by default).
    pub runner: String,
    /// When the current lease ends, by the server's clock.
    pub lease_end: i64,
    /// When the current attempt was claimed.
    pub claimed_at: i64,
    /// When attempt 1 was claimed.
    pub started_at: i64,
    /// When the run ended (absent while running).
    pub finished_at: Option<i64>,
    pub kind: RunKind,
    /// The lease the current attempt was claimed with (format 2 records it; format 1 does not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease_ms: Option<i64>,
    /// The current attempt's fencing token (format 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fence: Option<i64>,
}

/// One member of `:results` (see docs/store-format.md). Format 1 members hold their slot; format 2
/// ones leave it to the score, which [`ResultEntry::parse_scored`] fills in.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema, Deserialize)]
pub struct ResultEntry {
    #[serde(default)]
    pub slot: i64,
    #[serde(default)]
    pub attempt: Option<u32>,
    #[serde(default)]
    pub token: String,
    #[serde(default)]
    pub runner: String,
    pub status: String,
    #[serde(default)]
    pub claimed_at: Option<i64>,
    #[serde(default)]
    pub ended_at: Option<i64>,
    #[serde(default)]
    pub result: serde_json::Value,
    /// `manual` for a run of `run-now` (format 2 writes it only then; absent: scheduled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The attempt's fencing token (format 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fence: Option<i64>,
}

impl ResultEntry {
    /// Whether `run --overlap replace` stopped this attempt for a newer slot ([`replaced`]).
    pub fn was_replaced(&self) -> bool {
        replaced(&self.status, &self.result)
    }

    /// Whether a planned stop of its holder handed this attempt over ([`handed_over`]).
    pub fn was_handed_over(&self) -> bool {
        handed_over(&self.status, &self.result)
    }

    /// When the retry of this failed attempt was due (`--retries`: its finish left the run in
    /// progress for it, lua/lease/retry.lua); None for an attempt that ended its run, or another.
    pub fn retry_due(&self) -> Option<i64> {
        if self.status != "failed" {
            return None;
        }
        self.result
            .get("retry_at")
            .and_then(serde_json::Value::as_i64)
    }

    /// The record of `run`'s current attempt among `recent` when that attempt failed and the run
    /// waits for its retry (`--retries`): the run is in progress, but no command runs.
    pub fn awaited_retry<'a>(recent: &'a [ResultEntry], run: &RunState) -> Option<&'a ResultEntry> {
        recent
            .iter()
            .find(|r| r.slot == run.slot && r.attempt == Some(run.attempt))
            .filter(|r| r.retry_due().is_some())
    }

    /// Whether this attempt failed and was retried: a retry was due, and the slot has a later
    /// attempt among `recent` or is still in progress (its retry pending or running). A retry that
    /// never ran (the run released or ended while it waited) leaves this attempt its last: failed.
    pub fn was_retried(&self, recent: &[ResultEntry], in_progress: &[RunState]) -> bool {
        self.retry_due().is_some()
            && (in_progress.iter().any(|p| p.slot == self.slot)
                || recent
                    .iter()
                    .any(|r| r.slot == self.slot && r.attempt > self.attempt))
    }

    /// A member read WITHSCORES: its slot is the score.
    pub fn parse_scored(key: &str, member: &str, score: &str) -> crate::error::Result<Self> {
        let mut entry = Self::parse(key, member)?;
        entry.slot = parse_score(score).ok_or_else(|| {
            crate::error::Error::corrupt(
                key,
                format!("the score {score:?} of a member is not a slot"),
            )
        })?;
        Ok(entry)
    }

    pub fn parse(key: &str, member: &str) -> crate::error::Result<Self> {
        serde_json::from_str(member).map_err(|e| {
            crate::error::Error::corrupt(
                key,
                format!("member {} is not a result object ({e})", clip(member)),
            )
        })
    }
}

fn clip(text: &str) -> String {
    let mut s: String = text.chars().take(60).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    format!("{s:?}")
}

/// Whether an attempt that ended with `status` and `result` was stopped by `run --overlap replace`
/// for a newer slot: interrupted, its result naming `replaced_by` (lua/lease/released.lua). The
/// policy at work, not trouble: health, metrics and `inspect` tell it apart from other
/// interrupted runs.
pub fn replaced(status: &str, result: &serde_json::Value) -> bool {
    status == "interrupted" && result.get("replaced_by").is_some()
}

/// Whether an attempt that ended with `status` and `result` was handed over: interrupted by a
/// planned stop of its holder (`anarchon cron` shutting down, a deploy), its result naming
/// `handed_over_by` (lua/lease/handed_over.lua), and taken over by a replica standing by. A
/// deploy, not a failure: health's `failed_in_a_row` and last failure, and `logs`' newest failure,
/// leave it out (whether its slot was then run to an end is judged apart: lost slots).
pub fn handed_over(status: &str, result: &serde_json::Value) -> bool {
    status == "interrupted" && result.get("handed_over_by").is_some()
}

/// A sorted-set score that holds a slot: an integer (Redis prints whole scores without a fraction).
pub fn parse_score(score: &str) -> Option<i64> {
    score.parse::<i64>().ok().or_else(|| {
        score
            .parse::<f64>()
            .ok()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9e15)
            .map(|f| f as i64)
    })
}

/// One entry of a `:runs` stream: an ended attempt (lease layout) or a claim (claim-only layout).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RunEntry {
    /// The stream entry's ID; absent for a run read from `:results` alone (format 2 keeps no
    /// stream).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub id: String,
    pub slot: i64,
    pub attempt: Option<u32>,
    pub token: String,
    pub runner: String,
    /// Absent in the claim-only layout, where the entry is the claim itself.
    pub status: Option<String>,
    pub claimed_at: Option<i64>,
    pub ended_at: Option<i64>,
    pub kind: String,
}

impl RunEntry {
    pub fn parse(key: &str, id: String, fields: &[(String, String)]) -> crate::error::Result<Self> {
        let get = |name: &str| {
            fields
                .iter()
                .find(|(f, _)| f == name)
                .map(|(_, v)| v.as_str())
        };
        let int = |name: &str| -> crate::error::Result<Option<i64>> {
            match get(name) {
                None | Some("") => Ok(None),
                Some(v) => v.parse().map(Some).map_err(|_| {
                    crate::error::Error::corrupt(
                        key,
                        format!("entry {id} field {name} is {v:?}, not an integer"),
                    )
                }),
            }
        };
        let slot = int("slot")?.ok_or_else(|| {
            crate::error::Error::corrupt(key, format!("entry {id} has no slot field"))
        })?;
        Ok(RunEntry {
            slot,
            attempt: int("attempt")?.and_then(|a| u32::try_from(a).ok()),
            token: get("token").unwrap_or_default().to_string(),
            runner: get("runner").unwrap_or_default().to_string(),
            status: get("status").map(str::to_string),
            claimed_at: int("claimed_at")?,
            ended_at: int("ended_at")?,
            kind: get("kind").unwrap_or("scheduled").to_string(),
            id,
        })
    }
}
