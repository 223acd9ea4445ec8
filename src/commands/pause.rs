//! `anarchon pause` and `anarchon resume`: a job's pause, recorded in its `:job` hash where every
//! claimant's claim script reads it (lua/lease/pause.lua), so the whole fleet skips it atomically.

use serde::Serialize;

use crate::commands::Context;
use crate::error::{Error, ExitCode, Result};
use crate::settings::operator::{Audit, PauseSettings, ResumeSettings};
use crate::store::Layout;
use crate::store::events::{self, Action};
use crate::store::job::locate_job;
use crate::store::pause::{self, Pause};
use crate::strategy::Strategy;
use crate::time::{millis, rfc3339};

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct PauseReport<'a> {
    job: &'a str,
    #[serde(flatten)]
    pause: &'a Pause,
    /// Whether the job is paused now.
    paused: bool,
}

pub async fn pause(settings: &PauseSettings, ctx: &Context) -> Result<ExitCode> {
    let keys = ctx.lease_keys(&settings.job)?;
    let (mut conn, check) = ctx.open_for_write(Strategy::Lease).await?;
    let now = check.server_now_ms;
    locate_job(&mut conn, ctx.prefix(), &settings.job, Some(Layout::Lease)).await?;
    let until = match (settings.until, settings.for_) {
        (Some(t), _) => Some(t.resolve(now)),
        (None, Some(d)) => Some(now + millis(d)),
        (None, None) => None,
    };
    if until.is_some_and(|u| u <= now) {
        return Err(Error::usage(format!(
            "--until {} is not in the future (the server's clock says {})",
            rfc3339(until.unwrap_or_default()),
            rfc3339(now)
        )));
    }
    let record = Pause {
        paused_at: Some(now),
        paused_until: until,
        resumed_at: None,
        paused_by: Some(settings.audit.by.clone()),
        paused_reason: settings.audit.reason.clone(),
    };
    // Another operator's pause in force is replaced (the store keeps one): said, so nobody's
    // reason goes unseen.
    let before = pause::read_pause(&mut conn, &keys).await?;
    if before.is_paused(now) && !ctx.out.json {
        crate::errln!(
            "anarchon: this replaces the pause in force: {}",
            before.describe()
        );
    }
    pause::write_pause(&mut conn, &keys, &record).await?;
    let until = match until {
        Some(at) => format!("until {}", rfc3339(at)),
        None => "until resumed".to_string(),
    };
    audit(
        &mut conn,
        ctx,
        &settings.job,
        "pause",
        &settings.audit,
        until,
    )
    .await;
    report(ctx, &settings.job, &record, now);
    Ok(ExitCode::Ok)
}

pub async fn resume(settings: &ResumeSettings, ctx: &Context) -> Result<ExitCode> {
    let keys = ctx.lease_keys(&settings.job)?;
    let (mut conn, check) = ctx.open_for_write(Strategy::Lease).await?;
    let now = check.server_now_ms;
    locate_job(&mut conn, ctx.prefix(), &settings.job, Some(Layout::Lease)).await?;
    let before = pause::read_pause(&mut conn, &keys).await?;
    if !before.is_paused(now) {
        crate::outln!("{} is not paused: nothing to resume", settings.job);
        return Ok(ExitCode::Ok);
    }
    pause::write_resume(&mut conn, &keys, now).await?;
    let paused_by = before.paused_by.as_deref().unwrap_or("someone");
    let since = rfc3339(before.paused_at.unwrap_or(now));
    audit(
        &mut conn,
        ctx,
        &settings.job,
        "resume",
        &settings.audit,
        format!("ended the pause {paused_by} began at {since}"),
    )
    .await;
    let after = pause::read_pause(&mut conn, &keys).await?;
    report(ctx, &settings.job, &after, now);
    Ok(ExitCode::Ok)
}

/// Records the operator's action in the job's events.
async fn audit(
    conn: &mut crate::connection::Connection,
    ctx: &Context,
    job: &str,
    action: &str,
    who: &Audit,
    detail: String,
) {
    let action = Action::new(action, &who.by, who.reason.as_deref(), detail);
    events::record(conn, ctx.prefix(), job, &action).await;
}

fn report(ctx: &Context, job: &str, p: &Pause, now: i64) {
    let paused = p.is_paused(now);
    if ctx.out.json {
        ctx.out.print_json(&PauseReport {
            job,
            pause: p,
            paused,
        });
    } else if paused {
        crate::outln!("{job} is paused: {}", p.describe());
    } else {
        crate::outln!("{job} is resumed: its next scheduled run is claimed as usual");
    }
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![
        (
            "pause",
            crate::commands::output_schema::<PauseReport<'static>>(),
        ),
        (
            "resume",
            crate::commands::output_schema::<PauseReport<'static>>(),
        ),
    ]
}
