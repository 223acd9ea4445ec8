//! `anarchon history JOB [--since D|T] [--status S] [--last N]`: attempts and results, newest first.

use serde::Serialize;

use crate::cli::HistoryArgs;
use crate::cli::StrategyName;
use crate::commands::Context;
use crate::error::{ExitCode, Result};
use crate::output::result_summary;
use crate::store::discover::Layout;
use crate::store::job::{locate_job, runs_with_results};
use crate::store::read::{self, ResultEntry};
use crate::store::{ClaimKeys, format};
use crate::time::{humanize, rfc3339};

/// One line of history: an ended attempt (from `:results`) or a run in progress.
#[derive(Debug, Serialize)]
pub struct HistoryEntry {
    pub slot: i64,
    pub slot_time: String,
    pub attempt: Option<u32>,
    pub status: String,
    pub runner: String,
    pub token: String,
    pub claimed_at: Option<i64>,
    pub ended_at: Option<i64>,
    pub duration_ms: Option<i64>,
    pub result: serde_json::Value,
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
            ended_at: r.ended_at,
            result: r.result,
        }
    }
}

#[derive(Debug, Serialize)]
struct HistoryReport<'a> {
    job: &'a str,
    server_time: i64,
    since: Option<i64>,
    entries: Vec<HistoryEntry>,
}

pub async fn execute(args: HistoryArgs, ctx: &Context) -> Result<ExitCode> {
    let lease_keys = ctx.lease_keys(&args.job)?;
    let claim_keys = ClaimKeys::new(ctx.prefix(), &args.job);
    let mut conn = ctx.connect().await?;
    let check = format::check_for_read(&mut conn, ctx.prefix()).await?;
    let now = check.server_now_ms;
    let since = args.since.map(|s| s.resolve(now));

    let (layout, _) = locate_job(
        &mut conn,
        ctx.prefix(),
        &args.job,
        args.strategy.map(StrategyName::layout),
    )
    .await?;
    let wanted = |status: &str| args.status.as_deref().is_none_or(|s| s == status);
    let mut entries: Vec<HistoryEntry> = Vec::new();
    if layout == Layout::ClaimOnly {
        // Claims that have no result yet are history too ("claimed"): read the streams.
        let scan = (args.last * 4).max(1000);
        let runs = runs_with_results(
            &mut conn,
            &[&claim_keys.runs, &claim_keys.manual],
            &claim_keys.results,
            scan,
        )
        .await?;
        entries.extend(
            runs.into_iter()
                .filter(|r| since.is_none_or(|s| r.entry.slot >= s))
                .map(|r| HistoryEntry {
                    slot: r.entry.slot,
                    slot_time: r.slot_time,
                    attempt: None,
                    status: r.entry.status.unwrap_or_default(),
                    runner: r.entry.runner,
                    token: r.entry.token,
                    claimed_at: r.entry.claimed_at,
                    ended_at: r.entry.ended_at,
                    duration_ms: r.entry.ended_at.zip(r.entry.claimed_at).map(|(b, a)| b - a),
                    result: r.result.unwrap_or_default(),
                })
                .filter(|e| wanted(&e.status)),
        );
    }
    let results_key = &lease_keys.results;
    // Runs in progress first: they are the newest news.
    if layout == Layout::Lease && wanted("running") {
        let detail = crate::store::job::active_runs_for(&mut conn, &lease_keys, now).await?;
        for a in detail {
            if since.is_none_or(|s| a.state.slot >= s) {
                entries.push(HistoryEntry {
                    slot: a.state.slot,
                    slot_time: rfc3339(a.state.slot),
                    attempt: Some(a.state.attempt),
                    status: "running".into(),
                    runner: a.state.runner,
                    token: a.state.token,
                    claimed_at: Some(a.state.claimed_at),
                    ended_at: None,
                    duration_ms: None,
                    result: serde_json::Value::Null,
                });
            }
        }
    }
    // Then ended attempts, a page at a time until --last are found.
    let page = 500;
    let mut offset = 0;
    while layout == Layout::Lease && entries.len() < args.last {
        let batch = read::results_page(
            &mut conn,
            results_key,
            since.unwrap_or(i64::MIN),
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
                .filter(|r| wanted(&r.status))
                .map(HistoryEntry::from),
        );
        if done {
            break;
        }
    }
    entries.truncate(args.last);

    if ctx.out.json {
        ctx.out.print_json(&HistoryReport {
            job: &args.job,
            server_time: now,
            since,
            entries,
        });
        return Ok(ExitCode::Ok);
    }
    if entries.is_empty() {
        eprintln!("no history for {} matching these filters", args.job);
        return Ok(ExitCode::Ok);
    }
    let rows = entries
        .iter()
        .map(|e| {
            vec![
                e.slot_time.clone(),
                e.attempt.map_or("-".into(), |a| a.to_string()),
                e.status.clone(),
                e.runner.clone(),
                ctx.out.when(e.ended_at, now),
                e.duration_ms
                    .map_or("-".into(), |d| humanize(d.max(0) as u64)),
                result_summary(Some(&e.result)),
            ]
        })
        .collect();
    crate::outln!(
        "{}",
        ctx.out.table(
            &[
                "SLOT", "ATTEMPT", "STATUS", "RUNNER", "ENDED", "TOOK", "RESULT"
            ],
            rows
        )
    );
    Ok(ExitCode::Ok)
}
