//! `anarchon history JOB [--since D|T] [--status S] [--last N]`: attempts and results, newest first.

use serde::Serialize;

use crate::cli::HistoryArgs;
use crate::cli::StrategyName;
use crate::commands::Context;
use crate::error::{ExitCode, Result};
use crate::output::result_summary;
use crate::store::history::{HistoryEntry, HistoryFilter, read_history};
use crate::store::job::locate_job;
use crate::store::{JobKeys, format};
use crate::time::humanize;

#[derive(Debug, Serialize)]
struct HistoryReport<'a> {
    job: &'a str,
    server_time: i64,
    since: Option<i64>,
    entries: Vec<HistoryEntry>,
}

pub async fn execute(args: HistoryArgs, ctx: &Context) -> Result<ExitCode> {
    ctx.lease_keys(&args.job)?;
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
    let keys = JobKeys::new(layout, ctx.prefix(), &args.job, check.lease_format());
    let filter = HistoryFilter {
        since,
        status: args.status.clone(),
        last: args.last,
    };
    let entries = read_history(&mut conn, &keys, &filter, now).await?;

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
            let mut row = vec![
                ctx.out.time(e.slot),
                e.attempt.map_or("-".into(), |a| a.to_string()),
                e.status.clone(),
                e.runner.clone(),
                ctx.out.when(e.ended_at, now),
                e.duration_ms
                    .map_or("-".into(), |d| humanize(d.max(0) as u64)),
                result_summary(Some(&e.result)),
            ];
            if args.verbose {
                row.push(crate::output::result_detail(&e.result));
            }
            row
        })
        .collect();
    let mut header = vec![
        "SLOT", "ATTEMPT", "STATUS", "RUNNER", "ENDED", "TOOK", "RESULT",
    ];
    if args.verbose {
        header.push("STDERR (LAST LINE)");
    }
    crate::outln!("{}", ctx.out.table(&header, rows));
    Ok(ExitCode::Ok)
}
