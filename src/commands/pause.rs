//! `anarchon pause` and `anarchon resume`: a job's pause, recorded in its `:job` hash where every
//! claimant's claim script reads it (lua/lease/pause.lua), so the whole fleet skips it atomically.
//! Each action reads the pause, decides, writes it and records itself in the job's events in one
//! script (lua/store/pause.lua, lua/store/resume.lua): the audit is true however many operators
//! act at once.

use serde::Serialize;

use crate::commands::Context;
use crate::error::{Error, ExitCode, Result};
use crate::settings::operator::{PauseSettings, ResumeSettings};
use crate::store::Layout;
use crate::store::events;
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
    // `--until` is a time; `--for` runs from the pause's own start, which the script takes.
    let until = settings.until.map(|t| t.resolve(now));
    let for_ms = match (until, settings.for_) {
        (None, Some(d)) => Some(millis(d)),
        _ => None,
    };
    let not_in_the_future = |until: i64, now: i64| {
        Error::usage(format!(
            "--until {} is not in the future (the server's clock says {})",
            rfc3339(until),
            rfc3339(now)
        ))
    };
    if let Some(u) = until.filter(|u| *u <= now) {
        return Err(not_in_the_future(u, now));
    }
    // Garbage in the pause's fields is refused before anything is written.
    pause::read_pause(&mut conn, &keys).await?;
    // Read, decide, write and record in one step: the events say what happened, in order, however
    // many operators act at once.
    let events_key = events::events_key(ctx.prefix(), &settings.job);
    let who = (settings.audit.by.as_str(), settings.audit.reason.as_deref());
    let decided = pause::pause(
        &mut conn,
        &keys,
        (&events_key, events::KEPT),
        who,
        until,
        for_ms,
    )
    .await?;
    if decided.outcome == "past" {
        return Err(not_in_the_future(until.unwrap_or_default(), decided.now));
    }
    warn_if_unrecorded(&decided, "pause", &settings.job, &events_key);
    // Another operator's pause in force is replaced (the store keeps one): said, so nobody's
    // reason goes unseen.
    if decided.pause.is_paused(decided.now) && !ctx.out.json {
        crate::errln!(
            "anarchon: this replaces the pause in force: {}",
            decided.pause.describe()
        );
    }
    let record = Pause {
        paused_at: Some(decided.now),
        paused_until: until.or(for_ms.map(|f| decided.now + f)),
        resumed_at: None,
        paused_by: Some(settings.audit.by.clone()),
        paused_reason: settings.audit.reason.clone().filter(|r| !r.is_empty()),
    };
    report(ctx, &settings.job, &record, decided.now);
    Ok(ExitCode::Ok)
}

pub async fn resume(settings: &ResumeSettings, ctx: &Context) -> Result<ExitCode> {
    let keys = ctx.lease_keys(&settings.job)?;
    let (mut conn, _) = ctx.open_for_write(Strategy::Lease).await?;
    locate_job(&mut conn, ctx.prefix(), &settings.job, Some(Layout::Lease)).await?;
    pause::read_pause(&mut conn, &keys).await?;
    let events_key = events::events_key(ctx.prefix(), &settings.job);
    let who = (settings.audit.by.as_str(), settings.audit.reason.as_deref());
    let decided = pause::resume(&mut conn, &keys, (&events_key, events::KEPT), who).await?;
    if decided.outcome != "resumed" {
        crate::outln!("{} is not paused: nothing to resume", settings.job);
        return Ok(ExitCode::Ok);
    }
    warn_if_unrecorded(&decided, "resume", &settings.job, &events_key);
    report(ctx, &settings.job, &decided.pause, decided.now);
    Ok(ExitCode::Ok)
}

/// The action was done, but the events stream refused its entry (a key of another type): said,
/// as [`events::record`] says it.
fn warn_if_unrecorded(decided: &pause::Decided, action: &str, job: &str, key: &str) {
    if let Some(e) = &decided.audit_error {
        crate::errln!(
            "warning: {action} of {job} was done, but its entry in the job's events ({key}) could not be written: {e}"
        );
    }
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
