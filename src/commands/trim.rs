//! `anarchon trim JOB|--all [--keep N] [--older-than D] [--dry-run] [--yes]`: trims history
//! server-side with the scheduler's rules: never a run in progress or one a late claim may still
//! ask for.

use std::io::IsTerminal;
use std::time::Duration;

use serde::Serialize;

use crate::commands::Context;
use crate::connection::Connection;
use crate::error::{Error, ExitCode, Result};
use crate::settings::operator::TrimSettings;
use crate::store::Layout;
use crate::store::discover::{JobRef, find_jobs};
use crate::store::events::{self, Action};
use crate::store::job::locate_job;
use crate::store::read::Unreadable;
use crate::store::{LeaseKeys, format, validate_job_name, validate_prefix};
use crate::strategy;
use crate::strategy::claim::HistoryPolicy;
use crate::strategy::lease;
use crate::time::{millis, rfc3339};

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct TrimReport<'a> {
    dry_run: bool,
    keep: u32,
    older_than_ms: Option<i64>,
    protect_ms: i64,
    /// Runs removed (or, dry run, that would be), over all jobs.
    total: usize,
    jobs: Vec<JobTrim>,
    /// Jobs that could not be trimmed because their data is bad (exit code 92).
    errors: &'a [Unreadable],
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct JobTrim {
    job: String,
    layout: Layout,
    trimmed: usize,
    /// The slots removed, oldest first.
    slots: Vec<i64>,
}

pub async fn execute(settings: &TrimSettings, ctx: &Context) -> Result<ExitCode> {
    validate_prefix(ctx.prefix())?;
    if let Some(job) = &settings.job {
        validate_job_name(job)?;
    }
    let mut conn = ctx.connect().await?;
    let check = format::check_for_write(&mut conn, ctx.prefix()).await?;
    let jobs: Vec<JobRef> = match &settings.job {
        Some(job) => {
            let (layout, _) = locate_job(&mut conn, ctx.prefix(), job, settings.layout).await?;
            vec![JobRef {
                name: job.clone(),
                layout,
            }]
        }
        None => find_jobs(&mut conn, ctx.prefix(), "*").await?,
    };
    if !settings.dry_run
        && let Some(held) = crate::store::migrate::holder(&mut conn, ctx.prefix()).await?
    {
        crate::errln!(
            "error: `anarchon migrate` is converting this store ({}; its lock {}migrating lapses in {} unless renewed): nothing was trimmed\n  hint: run trim again after the migration ends",
            held.holder,
            ctx.prefix(),
            crate::time::humanize(held.expires_in.as_millis() as u64)
        );
        return Ok(ExitCode::Running);
    }
    let protect = protection(&mut conn, ctx, &jobs, settings.protect).await?;
    let policy = HistoryPolicy {
        size: settings.keep,
        ttl: settings.older_than,
        keep_claimable: protect,
    };

    if !settings.dry_run && !settings.yes {
        // Show what would go, then ask: a person decides on facts, not on flags.
        let preview = trim_all(&mut conn, ctx, &jobs, &policy, true, false, &check).await?;
        let total: usize = preview.0.iter().map(|j| j.trimmed).sum();
        if total == 0 {
            return report(ctx, settings, &policy, (Vec::new(), preview.1));
        }
        confirm(settings, total, jobs.len())?;
    }
    let trimmed = trim_all(
        &mut conn,
        ctx,
        &jobs,
        &policy,
        settings.dry_run,
        settings.job.is_none(),
        &check,
    )
    .await?;
    if !settings.dry_run {
        for job in trimmed.0.iter().filter(|j| j.trimmed > 0) {
            let newest = job.slots.last().copied().unwrap_or_default();
            let detail = format!(
                "removed {} run{} of history, the newest of {}",
                job.trimmed,
                if job.trimmed == 1 { "" } else { "s" },
                crate::time::rfc3339(newest)
            );
            let audit = &settings.audit;
            let action = Action::new("trim", &audit.by, audit.reason.as_deref(), detail);
            events::record(&mut conn, ctx.prefix(), &job.job, &action).await;
        }
    }
    report(ctx, settings, &policy, trimmed)
}

/// When the store does not know how late a lease job's claimants may claim (no claimant of this
/// version recorded it), trimming keeps a day: longer than any ordinary --max-late + --catch-up.
const UNKNOWN_PROTECTION: Duration = Duration::from_secs(24 * 3600);

/// Protection of claim-only jobs, which record nothing (their claims never come late by design).
const CLAIM_ONLY_PROTECTION: Duration = Duration::from_secs(3600);

/// The protection to trim with: `--protect` if given, refused when shorter than what a lease job's
/// claimants recorded (a late claim would find no state and run the slot again); otherwise the
/// recorded need, or the safe bound when it is unknown. The trim script applies the recorded need
/// per job in any case; this makes the whole run use one figure and say so.
async fn protection(
    conn: &mut Connection,
    ctx: &Context,
    jobs: &[JobRef],
    given: Option<Duration>,
) -> Result<Duration> {
    let mut needed = Duration::ZERO;
    let mut unknown = Vec::new();
    for job in jobs.iter().filter(|j| j.layout == Layout::Lease) {
        let keys = LeaseKeys::new(ctx.prefix(), &job.name);
        // A job whose :job hash cannot be read is reported by the trim itself (its script reads
        // the same hash); here it only cannot raise the protection.
        let recorded = match lease::recorded_protection(conn, &keys).await {
            Err(e) if !e.is_transient() => continue,
            other => other?,
        };
        match recorded {
            Some(need) => {
                if let Some(p) = given.filter(|p| *p < need) {
                    return Err(Error::usage(format!(
                        "--protect {} is shorter than job {}'s claimants may still claim a run ({} after its slot, recorded by their --max-late, --catch-up and lease x attempts): a late claim would find no state and run the slot again\n  hint: drop --protect, or give at least {}",
                        humantime::format_duration(p),
                        job.name,
                        humantime::format_duration(need),
                        humantime::format_duration(need)
                    )));
                }
                needed = needed.max(need);
            }
            None => unknown.push(job.name.as_str()),
        }
    }
    if let Some(p) = given {
        return Ok(p);
    }
    if !unknown.is_empty() {
        if !ctx.out.json {
            crate::errln!(
                "note: the store does not say how late {} may be claimed (no claim by this anarchon version yet); protecting runs younger than {}",
                if unknown.len() == 1 {
                    format!("job {}", unknown[0])
                } else {
                    format!("{} jobs", unknown.len())
                },
                humantime::format_duration(UNKNOWN_PROTECTION)
            );
        }
        needed = needed.max(UNKNOWN_PROTECTION);
    }
    if jobs.iter().any(|j| j.layout == Layout::ClaimOnly) {
        needed = needed.max(CLAIM_ONLY_PROTECTION);
    }
    Ok(needed)
}

fn confirm(settings: &TrimSettings, total: usize, jobs: usize) -> Result<()> {
    let what = match &settings.job {
        Some(job) => format!("job {job}"),
        None => format!("{jobs} jobs"),
    };
    crate::commands::confirm(
        &format!("trim {total} runs"),
        &format!("Trim {total} runs of history from {what}?"),
        "nothing was trimmed",
    )
}

async fn trim_all(
    conn: &mut Connection,
    ctx: &Context,
    jobs: &[JobRef],
    policy: &HistoryPolicy,
    dry_run: bool,
    progress: bool,
    check: &format::StoreCheck,
) -> Result<(Vec<JobTrim>, Vec<Unreadable>)> {
    let now = check.server_now_ms;
    let bar = (progress && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(jobs.len() as u64);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} jobs {msg}")
        {
            bar.set_style(style);
        }
        bar
    });
    let mut out = Vec::with_capacity(jobs.len());
    let mut unreadable = Vec::new();
    for job in jobs {
        let keys = check.job_keys(job.layout, ctx.prefix(), &job.name);
        let trimmed = strategy::trim(conn, &keys, policy, now, dry_run).await;
        if let Some(bar) = &bar {
            bar.set_message(job.name.clone());
            bar.inc(1);
        }
        let mut slots = match trimmed {
            Ok(slots) => slots,
            // One job's bad data must not stop the others: it is reported at the end.
            Err(error) if !error.is_transient() && jobs.len() > 1 => {
                unreadable.push(Unreadable {
                    job: job.name.clone(),
                    layout: job.layout,
                    error,
                });
                continue;
            }
            Err(e) => return Err(e),
        };
        slots.sort_unstable();
        out.push(JobTrim {
            job: job.name.clone(),
            layout: job.layout,
            trimmed: slots.len(),
            slots,
        });
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok((out, unreadable))
}

fn report(
    ctx: &Context,
    settings: &TrimSettings,
    policy: &HistoryPolicy,
    (jobs, unreadable): (Vec<JobTrim>, Vec<Unreadable>),
) -> Result<ExitCode> {
    let total = jobs.iter().map(|j| j.trimmed).sum();
    // Everything that could be trimmed was; the exit code still says some data was bad.
    let code = if unreadable.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::StoreData
    };
    if ctx.out.json {
        ctx.out.print_json(&TrimReport {
            dry_run: settings.dry_run,
            keep: policy.size,
            older_than_ms: policy.ttl.map(millis),
            protect_ms: millis(policy.keep_claimable),
            total,
            jobs,
            errors: &unreadable,
        });
        return Ok(code);
    }
    let verb = if settings.dry_run {
        "would trim"
    } else {
        "trimmed"
    };
    for j in jobs.iter().filter(|j| j.trimmed > 0) {
        let range = match (j.slots.first(), j.slots.last()) {
            (Some(a), Some(b)) => format!(" ({} .. {})", rfc3339(*a), rfc3339(*b)),
            _ => String::new(),
        };
        crate::outln!("{verb} {} runs of {}{range}", j.trimmed, j.job);
    }
    crate::outln!("{verb} {total} runs in all");
    if total == 0 {
        // Say why: the history within --keep, or what is over it younger than the protection.
        crate::outln!(
            "  (runs are kept while they are among the newest {} of their job, in progress, or younger than the protection of {}, which a late claim could still ask for; see --keep, --protect)",
            policy.size,
            humantime::format_duration(policy.keep_claimable)
        );
    }
    for u in &unreadable {
        crate::errln!("error: job {} was not trimmed: {}", u.job, u.error);
    }
    Ok(code)
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![(
        "trim",
        crate::commands::output_schema::<TrimReport<'static>>(),
    )]
}
