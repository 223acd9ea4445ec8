//! `anarchon release`: an operator breaks the lease of a run in progress, without its token.
//!
//! For the 3 a.m. case: a holder hung (or its host is gone and nobody stands by), and the run blocks
//! the next ones (overlap) or must be run again by hand. A holder whose lease is live may still be
//! running the command, so the run is first only marked released (lua/lease/released.lua): it stays held,
//! nothing else can run the job, and the holder's next heartbeat answers `released`; `anarchon run`
//! stops its command and records the attempt `interrupted` (or `failed`) with who released it and
//! why. A holder that is gone cannot answer: its lease expires, and the run ends then. This command
//! waits for either (at most the lease), so that what the operator does next (`run-now`) never runs
//! beside the released command. A run whose lease expired already ends at once.

use std::io::IsTerminal;

use serde::Serialize;

use crate::commands::Context;
use crate::connection::Connection;
use crate::error::{Error, ExitCode, Result};
use crate::operate::Who;
use crate::operate::release::{How, outcome_word, release};
use crate::settings::operator::ReleaseSettings;
use crate::store::Layout;
use crate::store::discover::{JobRef, find_jobs};
use crate::store::job::{ActiveRun, active_runs_for, locate_job};
use crate::store::{StoreCheck, validate_job_name, validate_prefix};
use crate::strategy::Strategy;
use crate::time::{millis, rfc3339};

/// One run `release` ends (or, with --dry-run, would).
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Released {
    job: String,
    slot: i64,
    slot_time: String,
    attempt: u32,
    runner: String,
    /// Milliseconds the lease had left when released (negative: expired that long ago).
    lease_left_ms: i64,
    /// released, releasing (--no-wait: marked, its holder not stopped yet), none (it ended
    /// meanwhile), changed (another attempt took it meanwhile), or would_release (--dry-run).
    outcome: String,
    /// How a released run ended: `holder` (its holder stopped the command and recorded it),
    /// `lease_expired` (its lease ended with no word from the holder), `at_once` (its lease had
    /// expired already), `forced` (--force, or a holder that kept renewing its lease).
    #[serde(skip_serializing_if = "Option::is_none")]
    ended_by: Option<&'static str>,
    /// How long this command waited for the run to end, in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    waited_ms: Option<u64>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Report {
    dry_run: bool,
    status: &'static str,
    by: String,
    reason: Option<String>,
    runs: Vec<Released>,
    /// Why nothing matched, for people (the JSON says it with an empty `runs`).
    #[serde(skip)]
    none_because: Option<String>,
}

pub async fn execute(settings: &ReleaseSettings, ctx: &Context) -> Result<ExitCode> {
    validate_prefix(ctx.prefix())?;
    if let Some(job) = &settings.job {
        validate_job_name(job)?;
    }
    let (mut conn, check) = ctx.open_for_write(Strategy::Lease).await?;
    let jobs = jobs_to_look_at(&mut conn, ctx, settings, &check).await?;
    let (chosen, none_because) = choose_runs(&mut conn, ctx, settings, &check, &jobs).await?;
    let status = settings.status.as_str();
    let by = settings.audit.by.clone();
    let mut report = Report {
        dry_run: settings.dry_run,
        status,
        by: by.clone(),
        reason: settings.audit.reason.clone(),
        runs: Vec::new(),
        none_because,
    };
    if !settings.dry_run && !chosen.is_empty() && !settings.yes {
        confirm(&chosen, status)?;
    }
    let who = Who {
        by: &by,
        reason: settings.audit.reason.as_deref(),
    };
    let how = How {
        status,
        force: settings.force,
        wait: !settings.no_wait,
        spinner: !ctx.out.json,
        default_reason: if settings.expired.is_some() {
            "lease expired"
        } else {
            "released by an operator"
        },
    };
    for (job, run) in chosen {
        let (outcome, ended_by, waited_ms) = if settings.dry_run {
            ("would_release".to_string(), None, None)
        } else {
            let keys = check.lease_keys(ctx.prefix(), &job);
            let done = release(&mut conn, (ctx.prefix(), &job, &keys), &run, who, how).await?;
            (
                outcome_word(done.outcome).to_string(),
                done.ended_by,
                done.waited_ms,
            )
        };
        report.runs.push(Released {
            ended_by,
            waited_ms,
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
        if report.runs.iter().all(|r| {
            matches!(
                r.outcome.as_str(),
                "released" | "releasing" | "would_release"
            )
        }) {
            ExitCode::Ok
        } else {
            ExitCode::LeaseLost
        },
    )
}

/// The jobs whose runs `release` looks at: the one named, or with `--all` every lease job that
/// has a run in progress (one pipelined summary of every job says which, as `list --active` does;
/// only those are then read run by run).
async fn jobs_to_look_at(
    conn: &mut Connection,
    ctx: &Context,
    settings: &ReleaseSettings,
    check: &StoreCheck,
) -> Result<Vec<String>> {
    Ok(match &settings.job {
        Some(job) => {
            locate_job(conn, ctx.prefix(), job, Some(Layout::Lease)).await?;
            vec![job.clone()]
        }
        None => {
            // Only jobs with runs in progress are read run by run: one pipelined summary of every
            // job says which (as `list --active` does).
            let lease_jobs: Vec<JobRef> = find_jobs(conn, ctx.prefix(), "*")
                .await?
                .into_iter()
                .filter(|j| j.layout == Layout::Lease)
                .collect();
            let (summaries, unreadable) =
                crate::store::view::summaries(conn, ctx.prefix(), &lease_jobs, check).await?;
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
    })
}

/// The runs to release in `jobs`, as `--slot` and `--expired` choose them, and when there are
/// none, why (said exactly: exit 0, as releasing an ended run again would be). Without
/// `--expired`, one job with several runs in progress must be told which.
async fn choose_runs(
    conn: &mut Connection,
    ctx: &Context,
    settings: &ReleaseSettings,
    check: &StoreCheck,
    jobs: &[String],
) -> Result<(Vec<(String, ActiveRun)>, Option<String>)> {
    let now = check.server_now_ms;
    let mut chosen: Vec<(String, ActiveRun)> = Vec::new();
    let mut none_because = settings.expired.map(|grace| {
        format!(
            "no run in progress whose lease ended more than {} ago (--expired {}): nothing to release",
            crate::time::humanize(millis(grace) as u64),
            humantime::format_duration(grace)
        )
    });
    for job in jobs {
        let keys = check.lease_keys(ctx.prefix(), job);
        let active = active_runs_for(conn, &keys, now).await?;
        let slot = settings.slot.map(|s| s.resolve(now));
        let wanted: Vec<ActiveRun> = active
            .into_iter()
            .filter(|a| slot.is_none_or(|s| a.state.slot == s))
            .filter(|a| {
                settings
                    .expired
                    .is_none_or(|grace| a.lease_left_ms < -millis(grace))
            })
            .collect();
        if settings.expired.is_none() {
            // One job, one run: nothing in progress is nothing to do (the run the operator meant
            // has ended already), said exactly; exit 0, as releasing it again would be.
            if wanted.is_empty() {
                none_because = Some(match slot {
                    Some(s) => format!(
                        "{job} @ {} is not in progress: nothing to release\n  hint: `anarchon history {job}` shows how its runs ended",
                        rfc3339(s)
                    ),
                    None => format!(
                        "no run of {job} is in progress: nothing to release\n  hint: `anarchon history {job}` shows how its runs ended"
                    ),
                });
                continue;
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
        chosen.extend(wanted.into_iter().map(|a| (job.to_string(), a)));
    }

    Ok((chosen, none_because))
}

fn lease_words(left_ms: i64) -> String {
    format!("lease {}", crate::time::lease_left(left_ms))
}

fn confirm(chosen: &[(String, ActiveRun)], status: &str) -> Result<()> {
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        for (job, run) in chosen {
            crate::errln!(
                "  {job} @ {}: attempt {} held by {}, {}",
                rfc3339(run.state.slot),
                run.state.attempt,
                run.state.runner,
                lease_words(run.lease_left_ms)
            );
        }
    }
    crate::commands::confirm(
        &format!("release {} run(s)", chosen.len()),
        &format!(
            "End {} run(s) as {status}? A holder still alive is told to stop its command first.",
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
        crate::outln!(
            "{}",
            report
                .none_because
                .as_deref()
                .unwrap_or("no run in progress matched: nothing to release")
        );
        return;
    }
    for r in &report.runs {
        let what = match (r.outcome.as_str(), r.ended_by) {
            ("released", Some("holder")) => format!(
                "released: its holder stopped the command and recorded attempt {} {} ({} later)",
                r.attempt,
                report.status,
                crate::time::humanize(r.waited_ms.unwrap_or(0))
            ),
            ("released", Some("lease_expired")) => format!(
                "released: no word from its holder; attempt {} ended {} when its lease expired ({} later)",
                r.attempt,
                report.status,
                crate::time::humanize(r.waited_ms.unwrap_or(0))
            ),
            ("released", Some("retry_not_run")) => format!(
                "released: attempt {} had failed and the run was waiting for its retry; the retry is recorded not run ({}), and nobody runs it",
                r.attempt, report.status
            ),
            ("released", Some("forced")) => format!(
                "released at once (--force): attempt {} ended {}; its holder may still be running the command until its next heartbeat",
                r.attempt, report.status
            ),
            ("released", _) => format!(
                "released: attempt {} ended {} (its lease had expired)",
                r.attempt, report.status
            ),
            ("releasing", _) => format!(
                "marked released: its holder stops the command at its next heartbeat and records attempt {} {}; the run stays held until then, at most until its lease ends",
                r.attempt, report.status
            ),
            ("would_release", _) => format!("would end attempt {} as {}", r.attempt, report.status),
            ("none", _) => "not released: it ended meanwhile".to_string(),
            _ => "not released: another attempt took it over meanwhile".to_string(),
        };
        if r.ended_by == Some("retry_not_run") {
            // Nobody held it: its lease only waited for the retry.
            crate::outln!("{} @ {}: {what}", r.job, r.slot_time);
            continue;
        }
        crate::outln!(
            "{} @ {} (held by {}, {}): {what}",
            r.job,
            r.slot_time,
            r.runner,
            lease_words(r.lease_left_ms)
        );
    }
    if let Some(again) = run_again(report) {
        crate::outln!(
            "recorded as released by {}; to run again now: {again}",
            report.by
        );
    }
}

/// How to run the jobs released (not on a dry run) again now, named: `run-now JOB` for a job
/// replicas run, `run-now JOB -- COMMAND` for one of crontab lines.
fn run_again(report: &Report) -> Option<String> {
    let mut released: Vec<&str> = report
        .runs
        .iter()
        .filter(|r| r.outcome == "released")
        .map(|r| r.job.as_str())
        .collect();
    released.dedup();
    (!report.dry_run && !released.is_empty()).then(|| {
        released
            .iter()
            .map(|job| format!("`anarchon run-now {job}` (the replicas that run it do; a job of crontab lines: `anarchon run-now {job} -- COMMAND`)"))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![("release", crate::commands::output_schema::<Report>())]
}
