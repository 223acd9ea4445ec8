//! `anarchon history JOB [--since D|T] [--status S] [--last N]`: attempts and results, newest first.

use serde::Serialize;

use crate::cli::HistoryArgs;
use crate::commands::Context;
use crate::commands::inspect::{not_found, result_summary};
use crate::error::{ExitCode, Result};
use crate::store::read::{self, ResultEntry};
use crate::store::{ClaimKeys, LeaseKeys, format};
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

    let mut all: Vec<&str> = lease_keys.all().to_vec();
    all.extend(claim_keys.all());
    let infos = read::key_infos(&mut conn, &all).await?;
    read::check_types(&infos[..5], &LeaseKeys::TYPES)?;
    read::check_types(&infos[5..], &ClaimKeys::TYPES)?;
    let has_lease = infos[..5].iter().any(|i| i.kind != "none");
    if !has_lease && infos[5..].iter().all(|i| i.kind == "none") {
        return Err(not_found(&mut conn, ctx.prefix(), &args.job).await);
    }
    let results_key = if has_lease {
        &lease_keys.results
    } else {
        &claim_keys.results
    };
    let wanted = |status: &str| args.status.as_deref().is_none_or(|s| s == status);

    let mut entries: Vec<HistoryEntry> = Vec::new();
    // Runs in progress first: they are the newest news.
    if has_lease && wanted("running") {
        let detail = crate::commands::inspect::active_runs_for(&mut conn, &lease_keys, now).await?;
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
    while entries.len() < args.last {
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
    println!(
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
