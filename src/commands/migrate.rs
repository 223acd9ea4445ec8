//! `anarchon migrate`: converts the store under a prefix from format 1 to format 2, or back (see
//! src/store/migrate.rs for why it is safe while hosts claim, and resumable).

use std::io::IsTerminal;
use std::time::Instant;

use serde::Serialize;

use crate::commands::Context;
use crate::error::{Error, ExitCode, Result};
use crate::settings::operator::MigrateSettings;
use crate::store::events::{self, Action};
use crate::store::migrate::{self, JobToConvert, Plan};
use crate::store::read::Unreadable;
use crate::store::{LeaseFormat, format, validate_prefix};

/// `migrate --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Report<'a> {
    prefix: &'a str,
    /// The format found before (null: no anarchon data).
    from: Option<u32>,
    to: u32,
    dry_run: bool,
    /// Lease jobs still in the other format, with their runs in progress.
    jobs_to_convert: &'a [JobToConvert],
    /// Jobs converted by this command (0 for a dry run).
    converted: usize,
    /// Runs in progress moved to the target format's keys.
    runs_moved: u64,
    /// Lease jobs in the target format already.
    already: u64,
    errors: &'a [Unreadable],
}

pub async fn execute(settings: &MigrateSettings, ctx: &Context) -> Result<ExitCode> {
    let prefix = ctx.prefix();
    validate_prefix(prefix)?;
    let to = settings.to;
    let mut conn = ctx.connect().await?;
    let check = format::check_for_read(&mut conn, prefix).await?;
    let from = check.format;
    let mut plan = migrate::plan(&mut conn, prefix, to).await?;
    // Staging a stopped `migrate --to 1` left is work too, whatever the jobs' formats.
    let staging_left = !migrate::staging_left(&mut conn, prefix).await?.is_empty();
    let unreadable = std::mem::take(&mut plan.unreadable);
    let report = |converted, runs_moved, dry_run, errors| Report {
        prefix,
        from,
        to: to.number(),
        dry_run,
        jobs_to_convert: &plan.to_convert,
        converted,
        runs_moved,
        already: plan.already,
        errors,
    };
    let n = to.number();
    if found_format(from) == n && plan.to_convert.is_empty() && !staging_left {
        let line = format!("the store under {prefix:?} is in format {n}: nothing to convert");
        return finish(ctx, &report(0, 0, settings.dry_run, &unreadable), &line);
    }
    if settings.dry_run {
        let line = dry_run_line(prefix, from, &plan, to);
        return finish(ctx, &report(0, 0, true, &unreadable), &line);
    }
    if !settings.yes {
        confirm(prefix, &plan, to)?;
    }
    let Some(mut done) = convert_under_lock(&mut conn, ctx, settings, from, &plan).await? else {
        return Ok(ExitCode::Running);
    };
    done.errors.extend(unreadable);
    let line = if empty_prefix(from, &plan) {
        format!(
            "the empty prefix {prefix:?} is marked format {n}: {}",
            to.who_reads()
        )
    } else {
        format!(
            "the store under {prefix:?} is in format {n}: converted {} jobs ({} runs in progress moved to {}), {} were in format {n} already",
            done.jobs,
            done.runs_moved,
            to.runs_in_progress_keys(),
            plan.already
        )
    };
    finish(
        ctx,
        &report(done.jobs, done.runs_moved, false, &done.errors),
        &line,
    )
}

/// The store's format: with no format key, the format a new store is created in.
fn found_format(from: Option<u32>) -> u32 {
    from.unwrap_or(LeaseFormat::NEW.number())
}

/// Whether the prefix holds no anarchon data: only a move to another format marks it.
fn empty_prefix(from: Option<u32>, plan: &Plan) -> bool {
    from.is_none() && plan.to_convert.is_empty() && plan.already == 0
}

/// What `--dry-run` says the move would do.
fn dry_run_line(prefix: &str, from: Option<u32>, plan: &Plan, to: LeaseFormat) -> String {
    let (n, found) = (to.number(), found_format(from));
    if empty_prefix(from, plan) {
        return format!(
            "would mark the empty prefix {prefix:?} as format {n} (a new store is created in format {}). Nothing was written.",
            LeaseFormat::NEW.number()
        );
    }
    let running: u64 = plan.to_convert.iter().map(|j| j.runs_in_progress).sum();
    format!(
        "would {} and convert {} jobs ({running} runs in progress move to {}); {} jobs are in format {n} already. Nothing was written.",
        if found == n {
            format!("leave the store under {prefix:?} in format {n}")
        } else {
            format!("move the store under {prefix:?} from format {found} to {n}")
        },
        plan.to_convert.len(),
        to.runs_in_progress_keys(),
        plan.already
    )
}

/// The conversion under the migrate lock, released even after a failure (a rerun goes on where
/// this one stopped). None when another migrate holds the lock, as it says.
async fn convert_under_lock(
    conn: &mut crate::connection::Connection,
    ctx: &Context,
    settings: &MigrateSettings,
    from: Option<u32>,
    plan: &Plan,
) -> Result<Option<Converted>> {
    let prefix = ctx.prefix();
    let holder = crate::strategy::default_runner();
    let lock = match migrate::take_lock(conn, prefix, &holder).await? {
        Ok(lock) => lock,
        Err(held) => {
            crate::errln!(
                "error: another `anarchon migrate` is converting this store ({}; its lock {prefix}migrating lapses in {} unless renewed)\n  hint: wait for it to end; run this again afterwards to convert whatever is left",
                held.holder,
                crate::time::humanize(held.expires_in.as_millis() as u64)
            );
            return Ok(None);
        }
    };
    let converted = convert(conn, prefix, from, settings, plan, &lock, ctx.out.json).await;
    // Released even after a failure: a rerun goes on where this one stopped.
    let released = lock.release(conn).await;
    let converted = converted?;
    released?;
    Ok(Some(converted))
}

/// What a conversion did: the jobs converted, the runs in progress moved, and the jobs that
/// could not be converted (bad data, or a job that kept changing: the rest go on).
#[derive(Default)]
struct Converted {
    jobs: usize,
    runs_moved: u64,
    errors: Vec<Unreadable>,
}

/// Switches the format key, then converts each job; then looks again for jobs left in the other
/// format (a host that read the format key before the switch may have written one), a few
/// times.
async fn convert(
    conn: &mut crate::connection::Connection,
    prefix: &str,
    from: Option<u32>,
    settings: &MigrateSettings,
    plan: &Plan,
    lock: &migrate::MigrationLock,
    json: bool,
) -> Result<Converted> {
    let to = settings.to;
    switch_format(conn, prefix, from, to).await?;
    let switched = Instant::now();
    // What a stopped `migrate --to 1` staged and left: nobody stages while we hold the lock.
    migrate::delete_staging_left(conn, prefix).await?;
    let bar = (!json && std::io::stderr().is_terminal())
        .then(|| progress_bar(plan.to_convert.len() as u64));
    let mut done = Converted::default();
    let mut renewed = Instant::now();
    let mut jobs: Vec<String> = plan.to_convert.iter().map(|j| j.job.clone()).collect();
    for _pass in 0..3 {
        for job in &jobs {
            if renewed.elapsed() > migrate::LOCK_TTL / 4 {
                lock.renew(conn).await?;
                renewed = Instant::now();
            }
            convert_job(conn, prefix, job, settings, &mut done).await?;
            if let Some(bar) = &bar {
                bar.set_message(job.clone());
                bar.inc(1);
            }
        }
        // Jobs a host created in the old format meanwhile: one whose claim read the format key
        // (in its look) just before the switch. Listed again once such claims are over.
        if let Some(left) = SWITCH_GRACE.checked_sub(switched.elapsed()) {
            tokio::time::sleep(left).await;
        }
        jobs = migrate::plan(conn, prefix, to)
            .await?
            .to_convert
            .into_iter()
            .map(|j| j.job)
            .filter(|j| !done.errors.iter().any(|e| e.job == *j))
            .collect();
        if jobs.is_empty() {
            break;
        }
        if let Some(bar) = &bar {
            bar.inc_length(jobs.len() as u64);
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(done)
}

/// Moves the format key to `to`, refusing when it changed since it was read.
async fn switch_format(
    conn: &mut crate::connection::Connection,
    prefix: &str,
    from: Option<u32>,
    to: LeaseFormat,
) -> Result<()> {
    if let migrate::Switch::Moved(found) = migrate::switch_format(conn, prefix, from, to).await? {
        return Err(crate::error::Error::Other(format!(
            "the format key {prefix}format changed while migrate ran (found {}, expected {}): nothing was converted; run migrate again",
            found.map_or("none".to_string(), |f| f.to_string()),
            from.map_or("none".to_string(), |f| f.to_string()),
        )));
    }
    Ok(())
}

/// The jobs converted so far on a terminal, as the conversion goes.
fn progress_bar(jobs: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(jobs);
    if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} jobs {msg}") {
        bar.set_style(style);
    }
    bar
}

/// Converts one job and records it in the job's events; a job that cannot be converted is
/// counted among the errors, and the others go on.
async fn convert_job(
    conn: &mut crate::connection::Connection,
    prefix: &str,
    job: &str,
    settings: &MigrateSettings,
    done: &mut Converted,
) -> Result<()> {
    let (to, audit) = (settings.to, &settings.audit);
    match migrate::convert_job(conn, prefix, job, to).await {
        Ok((true, n)) => {
            done.jobs += 1;
            done.runs_moved += n;
            let detail = format!(
                "converted the job to store format {} ({n} runs in progress moved to {})",
                to.number(),
                to.runs_in_progress_keys()
            );
            let action = Action::new("migrate", &audit.by, audit.reason.as_deref(), detail);
            events::record(conn, prefix, job, &action).await;
        }
        // A claim converted it meanwhile.
        Ok((false, _)) => {}
        // Bad data, or a job that kept changing: reported, and the others go on.
        Err(error) if error.key().is_some() || matches!(error, Error::Other(_)) => {
            done.errors.push(Unreadable {
                job: job.to_string(),
                layout: crate::store::Layout::Lease,
                error,
            })
        }
        Err(e) => return Err(e),
    }
    Ok(())
}

/// How long after the switch the jobs are listed again: a claim reads the format key in the same
/// round trip as its look, and sends its script right after (milliseconds, seconds on a server
/// that stalls).
const SWITCH_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

fn confirm(prefix: &str, plan: &Plan, to: LeaseFormat) -> Result<()> {
    crate::errln!("{}", to.what_the_move_costs());
    crate::commands::confirm(
        "migrate",
        &format!(
            "Move the store under {prefix:?} to format {} (converting {} jobs)?",
            to.number(),
            plan.to_convert.len()
        ),
        "nothing was changed",
    )
}

fn finish(ctx: &Context, report: &Report, line: &str) -> Result<ExitCode> {
    if ctx.out.json {
        ctx.out.print_json(report);
    } else {
        crate::outln!("{line}");
        for e in report.errors {
            crate::errln!("error: job {}: {}", e.job, e.error.with_hint());
        }
    }
    Ok(if report.errors.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::StoreData
    })
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![(
        "migrate",
        crate::commands::output_schema::<Report<'static>>(),
    )]
}
