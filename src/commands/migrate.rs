//! `anarchon migrate`: converts the store under a prefix from format 1 to format 2 (see
//! src/store/migrate.rs for why it is safe while hosts claim, and resumable).

use std::io::IsTerminal;
use std::time::Instant;

use serde::Serialize;

use crate::cli::MigrateArgs;
use crate::commands::Context;
use crate::error::{ExitCode, Result};
use crate::store::migrate::{self, JobToConvert, Plan};
use crate::store::read::Unreadable;
use crate::store::{format, validate_prefix};

/// `migrate --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Report<'a> {
    prefix: &'a str,
    /// The format found before (null: no anarchon data).
    from: Option<u32>,
    to: u32,
    dry_run: bool,
    /// Lease jobs still in format 1, with their runs in progress.
    jobs_to_convert: &'a [JobToConvert],
    /// Jobs converted by this command (0 for a dry run).
    converted: usize,
    /// Runs in progress moved to `:live`.
    runs_moved: u64,
    /// Lease jobs in format 2 already.
    already: u64,
    errors: &'a [Unreadable],
}

pub async fn execute(args: MigrateArgs, ctx: &Context) -> Result<ExitCode> {
    let prefix = ctx.prefix();
    validate_prefix(prefix)?;
    let mut conn = ctx.connect().await?;
    let check = format::check_for_read(&mut conn, prefix).await?;
    let from = check.format;
    let mut plan = migrate::plan(&mut conn, prefix).await?;
    let unreadable = std::mem::take(&mut plan.unreadable);
    let running: u64 = plan.to_convert.iter().map(|j| j.runs_in_progress).sum();
    let report = |converted, runs_moved, dry_run, errors| Report {
        prefix,
        from,
        to: 2,
        dry_run,
        jobs_to_convert: &plan.to_convert,
        converted,
        runs_moved,
        already: plan.already,
        errors,
    };
    let empty = from.is_none() && plan.to_convert.is_empty() && plan.already == 0;
    if from == Some(2) && plan.to_convert.is_empty() {
        let line = format!("the store under {prefix:?} is in format 2: nothing to convert");
        return finish(ctx, &report(0, 0, args.dry_run, &unreadable), &line);
    }
    if args.dry_run {
        let line = if empty {
            format!(
                "would mark the empty prefix {prefix:?} as format 2 (a new store is created in format 1). Nothing was written."
            )
        } else {
            format!(
                "would move the store under {prefix:?} from format {} to 2 and convert {} jobs ({running} runs in progress move to :live); {} jobs are in format 2 already. Nothing was written.",
                from.unwrap_or(1),
                plan.to_convert.len(),
                plan.already
            )
        };
        return finish(ctx, &report(0, 0, true, &unreadable), &line);
    }
    if !args.yes {
        confirm(prefix, &plan)?;
    }

    let holder = crate::strategy::default_runner();
    let lock = match migrate::take_lock(&mut conn, prefix, &holder).await? {
        Ok(lock) => lock,
        Err(held) => {
            crate::errln!(
                "error: another `anarchon migrate` is converting this store ({}; its lock {prefix}migrating lapses in {} unless renewed)\n  hint: wait for it to end; run this again afterwards to convert whatever is left",
                held.holder,
                crate::time::humanize(held.expires_in.as_millis() as u64)
            );
            return Ok(ExitCode::Running);
        }
    };
    let converted = convert(&mut conn, prefix, from, &plan, &lock, ctx.out.json).await;
    // Released even after a failure: a rerun goes on where this one stopped.
    let released = lock.release(&mut conn).await;
    let (converted, runs_moved, mut errors) = converted?;
    released?;
    errors.extend(unreadable);
    let line = if empty {
        format!(
            "the empty prefix {prefix:?} is marked format 2: readers of format 1 (RedisBackend, earlier anarchon releases) refuse it"
        )
    } else {
        format!(
            "the store under {prefix:?} is in format 2: converted {converted} jobs ({runs_moved} runs in progress moved to :live), {} were in format 2 already",
            plan.already
        )
    };
    finish(ctx, &report(converted, runs_moved, false, &errors), &line)
}

/// Switches the format key, then converts each job. Returns the jobs converted, the runs moved,
/// and the jobs that could not be converted (bad data: the rest go on).
async fn convert(
    conn: &mut crate::connection::Connection,
    prefix: &str,
    from: Option<u32>,
    plan: &Plan,
    lock: &migrate::MigrationLock,
    json: bool,
) -> Result<(usize, u64, Vec<Unreadable>)> {
    if let migrate::Switch::Moved(found) = migrate::switch_format(conn, prefix, from).await? {
        return Err(crate::error::Error::Other(format!(
            "the format key {prefix}format changed while migrate ran (found {}, expected {}): nothing was converted; run migrate again",
            found.map_or("none".to_string(), |f| f.to_string()),
            from.map_or("none".to_string(), |f| f.to_string()),
        )));
    }
    let bar = (!json && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(plan.to_convert.len() as u64);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} jobs {msg}")
        {
            bar.set_style(style);
        }
        bar
    });
    let (mut converted, mut moved, mut errors) = (0, 0, Vec::new());
    let mut renewed = Instant::now();
    for job in &plan.to_convert {
        if renewed.elapsed() > migrate::LOCK_TTL / 4 {
            lock.renew(conn).await?;
            renewed = Instant::now();
        }
        match migrate::convert_job(conn, prefix, &job.job).await {
            Ok((true, n)) => {
                converted += 1;
                moved += n;
            }
            // A claim converted it meanwhile.
            Ok((false, _)) => {}
            Err(error) if error.key().is_some() => errors.push(Unreadable {
                job: job.job.clone(),
                layout: crate::store::Layout::Lease,
                error,
            }),
            Err(e) => return Err(e),
        }
        if let Some(bar) = &bar {
            bar.set_message(job.job.clone());
            bar.inc(1);
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok((converted, moved, errors))
}

fn confirm(prefix: &str, plan: &Plan) -> Result<()> {
    crate::errln!("{LOCKED_OUT}");
    crate::commands::confirm(
        "migrate",
        &format!(
            "Move the store under {prefix:?} to format 2 (converting {} jobs)?",
            plan.to_convert.len()
        ),
        "nothing was changed",
    )
}

/// What the move to format 2 costs the other readers of the store, said before it is confirmed.
const LOCKED_OUT: &str = "Format 2 is read by this anarchon only. Afterwards every reader of format 1 under this prefix is locked out and writes nothing:
  - the scheduler's RedisBackend / ValkeyBackend instances refuse to start (ANARCHON_STORE_FORMAT),
  - earlier anarchon releases exit 91 and their runs are skipped.
What it buys: less than half the memory per run of history (about 315 B against 570 B) and about
a fifth less script time per run (docs/guide.md, \"Store formats: which to use\"). Move only a prefix
that anarchon alone uses.";

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
