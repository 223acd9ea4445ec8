//! `anarchon list [--pattern GLOB]`: every job under the prefix, one row each.

use serde::Serialize;

use crate::cli::{ListArgs, StrategyName};
use crate::commands::Context;
use crate::error::{ExitCode, Result};
use crate::store::discover::{Layout, find_jobs};
use crate::store::read::{JobSummary, summarize};
use crate::store::{format, validate_prefix};
use crate::time::rfc3339;

/// `list --json`.
#[derive(Debug, Serialize)]
struct ListReport<'a> {
    prefix: &'a str,
    server_time: i64,
    /// The store format found (null: no anarchon data under this prefix).
    format: Option<u32>,
    jobs: Vec<JobRow<'a>>,
}

#[derive(Debug, Serialize)]
struct JobRow<'a> {
    #[serde(flatten)]
    summary: &'a JobSummary,
    last_slot_time: Option<String>,
    last_result_age_ms: Option<i64>,
}

pub async fn execute(args: ListArgs, ctx: &Context) -> Result<ExitCode> {
    validate_prefix(ctx.prefix())?;
    let mut conn = ctx.connect().await?;
    let check = format::check_for_read(&mut conn, ctx.prefix()).await?;
    let wanted = args.strategy.map(|s| match s {
        StrategyName::Lease => Layout::Lease,
        _ => Layout::ClaimOnly,
    });
    let jobs: Vec<_> = find_jobs(&mut conn, ctx.prefix(), &args.pattern)
        .await?
        .into_iter()
        .filter(|j| wanted.is_none_or(|layout| j.layout == layout))
        .collect();
    let summaries = summarize(&mut conn, ctx.prefix(), &jobs).await?;
    let now = check.server_now_ms;
    if ctx.out.json {
        let report = ListReport {
            prefix: ctx.prefix(),
            server_time: now,
            format: check.format,
            jobs: summaries
                .iter()
                .map(|s| JobRow {
                    summary: s,
                    last_slot_time: s.last_slot.map(rfc3339),
                    last_result_age_ms: s.last_result_at.map(|t| now - t),
                })
                .collect(),
        };
        ctx.out.print_json(&report);
        return Ok(ExitCode::Ok);
    }
    if summaries.is_empty() {
        eprintln!(
            "no jobs under prefix {:?}{}",
            ctx.prefix(),
            if args.pattern == "*" {
                String::new()
            } else {
                format!(" matching {:?}", args.pattern)
            }
        );
        return Ok(ExitCode::Ok);
    }
    let rows = summaries
        .iter()
        .map(|s| {
            vec![
                s.job.clone(),
                s.layout.as_str().to_string(),
                s.in_progress.to_string(),
                s.last_slot.map_or("-".to_string(), rfc3339),
                s.last_status.clone().unwrap_or_else(|| "-".into()),
                s.last_runner.clone().unwrap_or_else(|| "-".into()),
                ctx.out.when(s.last_result_at, now),
                s.history_entries.to_string(),
            ]
        })
        .collect();
    println!(
        "{}",
        ctx.out.table(
            &[
                "JOB",
                "LAYOUT",
                "ACTIVE",
                "LAST RUN",
                "STATUS",
                "RUNNER",
                "LAST RESULT",
                "HISTORY"
            ],
            rows
        )
    );
    Ok(ExitCode::Ok)
}
