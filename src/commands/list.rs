//! `anarchon list [--pattern GLOB]`: every job under the prefix, one row each.

use serde::Serialize;

use crate::cli::{ListArgs, StrategyName};
use crate::commands::Context;
use crate::error::{ExitCode, Result};
use crate::store::discover::find_jobs;
use crate::store::read::{JobSummary, Unreadable, summarize};
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
    /// Jobs whose data could not be read, each with the key and the reason (exit code 92).
    errors: &'a [Unreadable],
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
    let wanted = args.strategy.map(StrategyName::layout);
    let jobs: Vec<_> = find_jobs(&mut conn, ctx.prefix(), &args.pattern)
        .await?
        .into_iter()
        .filter(|j| wanted.is_none_or(|layout| j.layout == layout))
        .collect();
    let (summaries, unreadable) =
        summarize(&mut conn, ctx.prefix(), &jobs, check.lease_format()).await?;
    let now = check.server_now_ms;
    // Bad data in one job never hides the others: everything readable is printed, then the exit
    // code says that some data was bad.
    let code = if unreadable.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::StoreData
    };
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
            errors: &unreadable,
        };
        ctx.out.print_json(&report);
        return Ok(code);
    }
    if summaries.is_empty() && unreadable.is_empty() {
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
    let mut rows: Vec<Vec<String>> = summaries
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
    rows.extend(unreadable.iter().map(|u| {
        let mut row = vec!["-".to_string(); 8];
        row[0] = u.job.clone();
        row[1] = u.layout.as_str().to_string();
        row[4] = "unreadable".to_string();
        row
    }));
    rows.sort_by(|a, b| a[0].cmp(&b[0]));
    crate::outln!(
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
    for u in &unreadable {
        eprintln!("error: job {} is unreadable: {}", u.job, u.error);
    }
    Ok(code)
}
