//! `anarchon release`: an operator breaks the lease of a run in progress, without its token.
//!
//! For the 3 a.m. case: a holder hung (or its host is gone and nobody stands by), and the run blocks
//! the next ones (overlap) or must be run again by hand. The run's current attempt is recorded
//! `interrupted` (or `failed`) with who released it and why, and the run ends; its holder, if it is
//! still alive, is told `lost` at its next heartbeat and `anarchon run` stops its command.

use std::io::IsTerminal;

use serde::Serialize;

use crate::cli::{ReleaseArgs, ReleaseStatusArg};
use crate::commands::Context;
use crate::error::{Error, ExitCode, Result};
use crate::store::discover::{JobRef, Layout, find_jobs};
use crate::store::job::{ActiveRun, active_runs_for, locate_job};
use crate::store::{LeaseKeys, validate_job_name, validate_prefix};
use crate::strategy::Strategy;
use crate::strategy::lease::{self, ReleaseOutcome};
use crate::time::{millis, rfc3339};

/// One run `release` ends (or, with --dry-run, would).
#[derive(Debug, Serialize)]
struct Released {
    job: String,
    slot: i64,
    slot_time: String,
    attempt: u32,
    runner: String,
    /// Milliseconds the lease had left when released (negative: expired that long ago).
    lease_left_ms: i64,
    /// released, none (it ended meanwhile), changed (another attempt took it meanwhile), or
    /// would_release (--dry-run).
    outcome: String,
}

#[derive(Debug, Serialize)]
struct Report {
    dry_run: bool,
    status: &'static str,
    by: String,
    reason: Option<String>,
    runs: Vec<Released>,
}

pub async fn execute(args: ReleaseArgs, ctx: &Context) -> Result<ExitCode> {
    validate_prefix(ctx.prefix())?;
    if let Some(job) = &args.job {
        validate_job_name(job)?;
    }
    let (mut conn, check) = ctx.open_for_write(Strategy::Lease).await?;
    let now = check.server_now_ms;
    let jobs: Vec<String> = match &args.job {
        Some(job) => {
            locate_job(&mut conn, ctx.prefix(), job, Some(Layout::Lease)).await?;
            vec![job.clone()]
        }
        None => {
            // Only jobs with runs in progress are read run by run: one pipelined summary of every
            // job says which (as `list --active` does).
            let lease_jobs: Vec<JobRef> = find_jobs(&mut conn, ctx.prefix(), "*")
                .await?
                .into_iter()
                .filter(|j| j.layout == Layout::Lease)
                .collect();
            let (summaries, unreadable) = crate::store::read::summarize(
                &mut conn,
                ctx.prefix(),
                &lease_jobs,
                check.lease_format(),
            )
            .await?;
            // A job whose data cannot be read stops the release, as reading its runs would.
            if let Some(bad) = unreadable.into_iter().next() {
                return Err(bad.error);
            }
            summaries
                .into_iter()
                .filter(|s| s.in_progress > 0)
                .map(|s| s.job)
                .collect()
        }
    };
    let mut chosen: Vec<(String, ActiveRun)> = Vec::new();
    for job in &jobs {
        let keys = LeaseKeys::new(ctx.prefix(), job).with_format(check.lease_format());
        let active = active_runs_for(&mut conn, &keys, now).await?;
        let slot = args.slot.map(|s| s.resolve(now));
        let wanted: Vec<ActiveRun> = active
            .into_iter()
            .filter(|a| slot.is_none_or(|s| a.state.slot == s))
            .filter(|a| {
                args.expired
                    .is_none_or(|grace| a.lease_left_ms < -millis(grace))
            })
            .collect();
        if args.expired.is_none() {
            // One job, one run: say exactly what is wrong when that is not what the store holds.
            if wanted.is_empty() {
                return Err(Error::NotFound(
                    match slot {
                        Some(s) => format!(
                            "{job} @ {} is not in progress\n  hint: `anarchon history {job}` shows how its runs ended",
                            rfc3339(s)
                        ),
                        None => format!(
                            "no run of {job} is in progress\n  hint: `anarchon history {job}` shows how its runs ended"
                        ),
                    }
                    .into(),
                ));
            }
            if wanted.len() > 1 {
                let slots: Vec<String> = wanted.iter().map(|a| rfc3339(a.state.slot)).collect();
                return Err(Error::usage(format!(
                    "{job} has {} runs in progress ({}); name one\n  hint: pass --slot",
                    wanted.len(),
                    slots.join(", ")
                )));
            }
        }
        chosen.extend(wanted.into_iter().map(|a| (job.clone(), a)));
    }

    let status = match args.status {
        ReleaseStatusArg::Interrupted => "interrupted",
        ReleaseStatusArg::Failed => "failed",
    };
    let by = args.by.clone().unwrap_or_else(crate::commands::default_by);
    let mut report = Report {
        dry_run: args.dry_run,
        status,
        by: by.clone(),
        reason: args.reason.clone(),
        runs: Vec::new(),
    };
    if !args.dry_run && !chosen.is_empty() && !args.yes {
        confirm(&chosen, status)?;
    }
    let result = serde_json::json!({
        "released_by": by,
        "reason": args.reason.clone().unwrap_or_else(|| if args.expired.is_some() {
            "lease expired".to_string()
        } else {
            "released by an operator".to_string()
        }),
    })
    .to_string();
    for (job, run) in chosen {
        let outcome = if args.dry_run {
            "would_release".to_string()
        } else {
            let keys = LeaseKeys::new(ctx.prefix(), &job).with_format(check.lease_format());
            let reply = lease::release(
                &mut conn,
                &keys,
                run.state.slot,
                Some(run.state.attempt),
                status,
                &result,
            )
            .await?;
            match reply.outcome {
                ReleaseOutcome::Released => "released",
                ReleaseOutcome::None => "none",
                ReleaseOutcome::Changed => "changed",
            }
            .to_string()
        };
        report.runs.push(Released {
            slot_time: rfc3339(run.state.slot),
            slot: run.state.slot,
            attempt: run.state.attempt,
            runner: run.state.runner.clone(),
            lease_left_ms: run.lease_left_ms,
            outcome,
            job,
        });
    }
    print(ctx, &report);
    // A run that ended or changed hands meanwhile was not released: say so in the exit code.
    Ok(
        if report
            .runs
            .iter()
            .all(|r| r.outcome == "released" || r.outcome == "would_release")
        {
            ExitCode::Ok
        } else {
            ExitCode::LeaseLost
        },
    )
}

fn lease_words(left_ms: i64) -> String {
    format!("lease {}", crate::time::lease_left(left_ms))
}

fn confirm(chosen: &[(String, ActiveRun)], status: &str) -> Result<()> {
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        for (job, run) in chosen {
            eprintln!(
                "  {job} @ {}: attempt {} held by {}, {}",
                rfc3339(run.state.slot),
                run.state.attempt,
                run.state.runner,
                lease_words(run.lease_left_ms)
            );
        }
    }
    crate::commands::confirm(
        &format!("release {} runs", chosen.len()),
        &format!(
            "End {} run(s) as {status}? A holder still alive loses its lease and its command is stopped.",
            chosen.len()
        ),
        "nothing was released",
    )
}

fn print(ctx: &Context, report: &Report) {
    if ctx.out.json {
        ctx.out.print_json(report);
        return;
    }
    if report.runs.is_empty() {
        crate::outln!("no run in progress matched: nothing to release");
        return;
    }
    for r in &report.runs {
        let what = match r.outcome.as_str() {
            "released" => format!("released: attempt {} ended {}", r.attempt, report.status),
            "would_release" => format!("would end attempt {} as {}", r.attempt, report.status),
            "none" => "not released: it ended meanwhile".to_string(),
            _ => "not released: another attempt took it over meanwhile".to_string(),
        };
        crate::outln!(
            "{} @ {} (held by {}, {}): {what}",
            r.job,
            r.slot_time,
            r.runner,
            lease_words(r.lease_left_ms)
        );
    }
    if !report.dry_run && report.runs.iter().any(|r| r.outcome == "released") {
        crate::outln!(
            "recorded as released by {}; `anarchon run-now JOB -- CMD` runs a job again now",
            report.by
        );
    }
}
