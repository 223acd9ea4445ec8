//! `anarchon pause` and `anarchon resume`: a job's pause, recorded in its `:job` hash where every
//! claimant's claim script reads it (lua/lease/pause.lua), so the whole fleet skips it atomically.
//! Each action reads the pause, decides, writes it and records itself in the job's events in one
//! script (lua/store/pause.lua, lua/store/resume.lua): the audit is true however many operators
//! act at once.

use serde::Serialize;

use crate::commands::Context;
use crate::error::{ExitCode, Result};
use crate::operate::{self, Who, pause::not_in_the_future};
use crate::settings::operator::{PauseSettings, ResumeSettings};
use crate::store::events;
use crate::store::pause::Pause;
use crate::strategy::Strategy;
use crate::time::millis;

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct PauseReport<'a> {
    job: &'a str,
    #[serde(flatten)]
    pause: &'a Pause,
    /// Whether the job is paused now.
    paused: bool,
}

pub async fn pause(settings: &PauseSettings, ctx: &Context) -> Result<ExitCode> {
    ctx.lease_keys(&settings.job)?;
    let (mut conn, check) = ctx.open_for_write(Strategy::Lease).await?;
    let now = check.server_now_ms;
    // `--until` is a time; `--for` runs from the pause's own start, which the script takes.
    let until = settings.until.map(|t| t.resolve(now));
    let for_ms = match (until, settings.for_) {
        (None, Some(d)) => Some(millis(d)),
        _ => None,
    };
    if let Some(u) = until.filter(|u| *u <= now) {
        return Err(not_in_the_future(u, now));
    }
    let who = Who {
        by: &settings.audit.by,
        reason: settings.audit.reason.as_deref(),
    };
    let paused =
        operate::pause::pause(&mut conn, ctx.prefix(), &settings.job, who, (until, for_ms)).await?;
    warn_if_unrecorded(
        paused.audit_error.as_deref(),
        "pause",
        &settings.job,
        ctx.prefix(),
    );
    // Another operator's pause in force is replaced (the store keeps one): said, so nobody's
    // reason goes unseen.
    if let Some(replaced) = paused.replaced.as_ref().filter(|_| !ctx.out.json) {
        crate::errln!(
            "anarchon: this replaces the pause in force: {}",
            replaced.describe()
        );
    }
    report(ctx, &settings.job, &paused.record, paused.now);
    Ok(ExitCode::Ok)
}

pub async fn resume(settings: &ResumeSettings, ctx: &Context) -> Result<ExitCode> {
    ctx.lease_keys(&settings.job)?;
    let (mut conn, _) = ctx.open_for_write(Strategy::Lease).await?;
    let who = Who {
        by: &settings.audit.by,
        reason: settings.audit.reason.as_deref(),
    };
    let decided = operate::pause::resume(&mut conn, ctx.prefix(), &settings.job, who).await?;
    if decided.outcome != "resumed" {
        crate::outln!("{} is not paused: nothing to resume", settings.job);
        return Ok(ExitCode::Ok);
    }
    let job = &settings.job;
    warn_if_unrecorded(decided.audit_error.as_deref(), "resume", job, ctx.prefix());
    report(ctx, job, &decided.pause, decided.now);
    Ok(ExitCode::Ok)
}

/// The action was done, but the events stream refused its entry (a key of another type): said,
/// as [`events::record`] says it.
fn warn_if_unrecorded(audit_error: Option<&str>, action: &str, job: &str, prefix: &str) {
    if let Some(e) = audit_error {
        let key = events::events_key(prefix, job);
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
