//! A job's history, newest first, in either layout: runs in progress, then ended attempts (lease
//! layout, from `:results`), or claims with their results (claim-only layout, from the streams).

use serde::Serialize;

use crate::connection::Connection;
use crate::error::Result;
use crate::store::JobKeys;
use crate::store::job::{active_runs_for, runs_with_results};
use crate::store::read::{self, ResultEntry};
use crate::time::rfc3339;

/// Which history to read.
#[derive(Debug, Clone, Default)]
pub struct HistoryFilter {
    /// Only runs whose slot is at or after this (ms).
    pub since: Option<i64>,
    /// Only entries with this status.
    pub status: Option<String>,
    /// At most this many entries.
    pub last: usize,
}

/// One line of history: an ended attempt (from `:results`) or a run in progress.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct HistoryEntry {
    pub slot: i64,
    pub slot_time: String,
    pub attempt: Option<u32>,
    pub status: String,
    pub runner: String,
    pub token: String,
    pub claimed_at: Option<i64>,
    /// `claimed_at` as RFC 3339.
    pub claimed_at_time: Option<String>,
    pub ended_at: Option<i64>,
    /// `ended_at` as RFC 3339.
    pub ended_at_time: Option<String>,
    pub duration_ms: Option<i64>,
    pub result: serde_json::Value,
    /// The attempt's fencing token (store format 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fence: Option<i64>,
    /// `manual` for a run of `run-now` (absent: scheduled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

impl From<ResultEntry> for HistoryEntry {
    fn from(r: ResultEntry) -> Self {
        HistoryEntry {
            slot: r.slot,
            slot_time: rfc3339(r.slot),
            attempt: r.attempt,
            status: r.status,
            runner: r.runner,
            token: r.token,
            duration_ms: match (r.claimed_at, r.ended_at) {
                (Some(a), Some(b)) => Some(b - a),
                _ => None,
            },
            claimed_at: r.claimed_at,
            claimed_at_time: r.claimed_at.map(rfc3339),
            ended_at: r.ended_at,
            ended_at_time: r.ended_at.map(rfc3339),
            result: r.result,
            fence: r.fence,
            kind: r.kind.filter(|k| k == "manual"),
        }
    }
}

impl HistoryFilter {
    /// Whether an entry of `status` is wanted (`--status`).
    fn wants(&self, status: &str) -> bool {
        self.status.as_deref().is_none_or(|s| s == status)
    }

    /// Whether a run of `slot` is wanted (`--since`).
    fn wants_slot(&self, slot: i64) -> bool {
        self.since.is_none_or(|s| slot >= s)
    }
}

/// Reads `keys`' history as `filter` asks, newest first. `now`: the server's clock.
pub async fn read_history(
    conn: &mut Connection,
    keys: &JobKeys,
    filter: &HistoryFilter,
    now: i64,
) -> Result<Vec<HistoryEntry>> {
    let mut entries = match keys {
        JobKeys::ClaimOnly(claim_keys) => claims(conn, claim_keys, filter).await?,
        JobKeys::Lease(lease_keys) => {
            let mut entries = in_progress(conn, lease_keys, filter, now).await?;
            ended_attempts(conn, lease_keys, filter, &mut entries).await?;
            entries
        }
    };
    entries.truncate(filter.last);
    Ok(entries)
}

/// A claim-only job's history: its claims, with their results. Claims that have no result yet are
/// history too ("claimed"): the streams are read, not only `:results`.
async fn claims(
    conn: &mut Connection,
    claim_keys: &crate::store::ClaimKeys,
    filter: &HistoryFilter,
) -> Result<Vec<HistoryEntry>> {
    let scan = (filter.last * 4).max(1000);
    let runs = runs_with_results(
        conn,
        &[&claim_keys.runs, &claim_keys.manual],
        &claim_keys.results,
        scan,
    )
    .await?;
    Ok(runs
        .into_iter()
        .filter(|r| filter.wants_slot(r.entry.slot))
        .map(|r| HistoryEntry {
            slot: r.entry.slot,
            slot_time: r.slot_time,
            attempt: None,
            status: r.entry.status.unwrap_or_default(),
            runner: r.entry.runner,
            token: r.entry.token,
            claimed_at: r.entry.claimed_at,
            claimed_at_time: r.entry.claimed_at.map(rfc3339),
            ended_at: r.entry.ended_at,
            ended_at_time: r.entry.ended_at.map(rfc3339),
            duration_ms: r.entry.ended_at.zip(r.entry.claimed_at).map(|(b, a)| b - a),
            result: r.result.unwrap_or_default(),
            fence: None,
            kind: (r.entry.kind == "manual").then(|| r.entry.kind.clone()),
        })
        .filter(|e| filter.wants(&e.status))
        .collect())
}

/// A lease job's runs in progress, first in its history: they are the newest news. One whose
/// lease has ended is `expired`, the word `list` and `inspect` use for it (its holder died or
/// hangs; nobody took it over).
async fn in_progress(
    conn: &mut Connection,
    lease_keys: &crate::store::LeaseKeys,
    filter: &HistoryFilter,
    now: i64,
) -> Result<Vec<HistoryEntry>> {
    let mut entries = Vec::new();
    if !(filter.wants("running") || filter.wants("expired")) {
        return Ok(entries);
    }
    for a in active_runs_for(conn, lease_keys, now).await? {
        let status = if a.lease_left_ms > 0 {
            "running"
        } else {
            "expired"
        };
        if filter.wants_slot(a.state.slot) && filter.wants(status) {
            entries.push(HistoryEntry {
                slot: a.state.slot,
                slot_time: rfc3339(a.state.slot),
                attempt: Some(a.state.attempt),
                status: status.into(),
                runner: a.state.runner,
                token: a.state.token,
                claimed_at: Some(a.state.claimed_at),
                claimed_at_time: Some(rfc3339(a.state.claimed_at)),
                ended_at: None,
                ended_at_time: None,
                duration_ms: None,
                result: serde_json::Value::Null,
                fence: a.state.fence,
                kind: (a.state.kind == crate::store::RunKind::Manual).then(|| "manual".to_string()),
            });
        }
    }
    Ok(entries)
}

/// A lease job's ended attempts, from `:results`, a page at a time until `--last` entries are
/// found, appended to `entries`.
async fn ended_attempts(
    conn: &mut Connection,
    lease_keys: &crate::store::LeaseKeys,
    filter: &HistoryFilter,
    entries: &mut Vec<HistoryEntry>,
) -> Result<()> {
    let page = 500;
    let mut offset = 0;
    while entries.len() < filter.last {
        let batch = read::results_page(
            conn,
            &lease_keys.results,
            filter.since.unwrap_or(i64::MIN),
            i64::MAX,
            offset,
            page,
        )
        .await?;
        let done = batch.len() < page;
        offset += batch.len();
        entries.extend(
            batch
                .into_iter()
                .filter(|r| filter.wants(&r.status))
                .map(HistoryEntry::from),
        );
        if done {
            break;
        }
    }
    Ok(())
}
