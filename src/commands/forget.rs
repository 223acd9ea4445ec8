//! `anarchon forget JOB`: retires a job no host runs any more (issue 48, item 1). A job taken out
//! of every crontab is still expected by monitoring, which would read it missed for ever; this
//! records it retired in its registry (`retired_at`, `retired_by`, `retired_reason`:
//! docs/store-format.md, "Job registry") and in its events, after which health reads it `retired`
//! (`crate::health`) until a run of it is claimed again. With `--drop-history` its runs, results
//! and state go too; the registry and events stay, as the record of what was done.
//!
//! Refused while a run of the job is in progress (its holder may be alive, or a backup may take it
//! over): `anarchon release` ends such a run first. The check and the write are two steps: a host
//! that claims a run between them brings the job back, as any run after the retirement does.

use serde::Serialize;

use crate::commands::Context;
use crate::error::{ExitCode, Result};
use crate::settings::operator::ForgetSettings;
use crate::store::discover::JobRef;
use crate::store::events::{self, Action};
use crate::store::job::locate_job;
use crate::store::registry::{self, Retired};
use crate::store::{validate_job_name, validate_prefix, view};
use crate::strategy::Strategy;
use crate::time::rfc3339;

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct ForgetReport {
    job: String,
    /// Nothing was changed (`--dry-run`): what would be.
    dry_run: bool,
    /// When it was retired (server ms; with `--dry-run`, the server's time now).
    retired_at: i64,
    /// `retired_at` as RFC 3339.
    retired_time: String,
    retired_by: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// The keys deleted with `--drop-history` (none without it); with `--dry-run`, the keys that
    /// would be.
    dropped_keys: Vec<String>,
}

pub async fn execute(settings: &ForgetSettings, ctx: &Context) -> Result<ExitCode> {
    validate_prefix(ctx.prefix())?;
    validate_job_name(&settings.job)?;
    let job = settings.job.as_str();
    let (mut conn, check) = ctx.open_for_write(Strategy::Lease).await?;
    let (layout, keys) = locate_job(&mut conn, ctx.prefix(), job, None).await?;
    let job_ref = JobRef {
        name: job.to_string(),
        layout,
    };
    let view = view::read_one(&mut conn, ctx.prefix(), &job_ref, &check, 1).await?;
    if let Some(run) = view.in_progress.iter().min_by_key(|r| r.slot) {
        crate::errln!(
            "error: {job} has a run in progress: {} (attempt {}, held by {}); nothing was changed\n  hint: a job with a run in progress is not one nobody runs; `anarchon release {job} --slot {}` ends the run first",
            rfc3339(run.slot),
            run.attempt,
            run.runner,
            run.slot
        );
        return Ok(ExitCode::Running);
    }
    // Its history goes, its record of what was done stays.
    let record = [
        registry::registry_key(ctx.prefix(), job),
        events::events_key(ctx.prefix(), job),
    ];
    let dropped: Vec<String> = if settings.drop_history {
        keys.iter()
            .map(|k| k.key.clone())
            .filter(|k| !record.contains(k))
            .collect()
    } else {
        Vec::new()
    };
    let retired = Retired {
        at: check.server_now_ms,
        by: settings.audit.by.clone(),
        reason: settings.audit.reason.clone(),
        removed: false,
    };
    let report = ForgetReport {
        job: job.to_string(),
        dry_run: settings.dry_run,
        retired_at: retired.at,
        retired_time: rfc3339(retired.at),
        retired_by: retired.by.clone(),
        reason: retired.reason.clone(),
        dropped_keys: dropped,
    };
    if settings.dry_run {
        print(ctx, &report);
        return Ok(ExitCode::Ok);
    }
    let dropped = &report.dropped_keys;
    if !settings.yes {
        confirm(job, dropped.len(), settings.drop_history)?;
    }
    conn.query::<redis::Value>(&registry::retire(ctx.prefix(), job, &retired))
        .await
        .map_err(|e| e.on_key(&record[0], "hash"))?;
    // One key a command: a claim-only job's keys have no hash tag (another cluster slot each).
    for key in dropped {
        conn.query::<redis::Value>(redis::cmd("UNLINK").arg(key))
            .await?;
    }
    let detail = match dropped.len() {
        0 => "retired: monitoring expects no run of it; its history stays".to_string(),
        n => format!("retired: monitoring expects no run of it; {n} key(s) of its history deleted"),
    };
    let action = Action::new("forget", &retired.by, retired.reason.as_deref(), detail);
    events::record(&mut conn, ctx.prefix(), job, &action).await;
    print(ctx, &report);
    Ok(ExitCode::Ok)
}

/// Asks the person at the terminal (refused where there is none: `--yes`).
fn confirm(job: &str, dropped: usize, drop_history: bool) -> Result<()> {
    let what = if drop_history {
        format!(
            "Retire {job} and delete its history ({dropped} key(s))? Monitoring stops expecting its runs."
        )
    } else {
        format!("Retire {job}? Monitoring stops expecting its runs; its history stays.")
    };
    crate::commands::confirm(&format!("retire {job}"), &what, "nothing was changed")
}

fn print(ctx: &Context, report: &ForgetReport) {
    if ctx.out.json {
        ctx.out.print_json(report);
        return;
    }
    let reason = report
        .reason
        .as_deref()
        .map_or(String::new(), |r| format!(" ({r})"));
    let dropped = if report.dropped_keys.is_empty() {
        String::new()
    } else {
        format!("; deleted {}", report.dropped_keys.join(", "))
    };
    if report.dry_run {
        crate::outln!(
            "would retire {} as {}{reason}{}",
            report.job,
            report.retired_by,
            dropped.replace("deleted", "would delete")
        );
        return;
    }
    crate::outln!(
        "{} retired at {} by {}{reason}{dropped}",
        report.job,
        report.retired_time,
        report.retired_by
    );
    crate::errln!(
        "anarchon: check, list, metrics and top read it `retired` and expect no run; a host that runs it again brings it back"
    );
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![("forget", crate::commands::output_schema::<ForgetReport>())]
}
