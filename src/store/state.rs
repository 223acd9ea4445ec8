//! A run of the lease layout as every store format reads into it ([`RunState`]): each format's
//! decoders are in its module (`store::lease::v1`, `v2`).

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

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
