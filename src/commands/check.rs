//! `anarchon check [JOB...|--all]`: the dead man's switch. Says whether each job ran when its
//! schedule said, as a monitoring plugin: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (the
//! Nagios / Icinga / monitoring-plugins conventions), one line per job, worst first, with
//! performance data after `|`. Reads only; works from one host's cron or a monitoring system.
//!
//! | health (src/health.rs) | status |
//! |---|---|
//! | ok, running, paused, renamed (judged under its new name), retired (`forget`) | OK |
//! | late (the newest due slot has no claim) | WARNING |
//! | missed (more due slots without a claim) | CRITICAL |
//! | failing, fewer than --failures in a row | WARNING |
//! | failing, --failures or more in a row | CRITICAL |
//! | unknown (no schedule recorded), unreadable data, job not found | UNKNOWN |

use std::time::Duration;

use serde::Serialize;

use crate::commands::Context;
use crate::connection::Connection;
use crate::error::{ExitStatus, Result};
use crate::health::{Health, HealthState};
use crate::settings::read::CheckSettings;
use crate::store::discover::{JobRef, find_jobs};
use crate::store::job::layouts_of;
use crate::store::{format, validate_job_name, validate_prefix, view};
use crate::time::{humanize, rfc3339};

/// A monitoring plugin's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    Ok,
    Warning,
    Critical,
    Unknown,
}

impl Status {
    /// The plugin exit code.
    pub fn code(self) -> i32 {
        match self {
            Status::Ok => 0,
            Status::Warning => 1,
            Status::Critical => 2,
            Status::Unknown => 3,
        }
    }

    /// How bad, for the worst-of (CRITICAL > WARNING > UNKNOWN > OK, as monitoring-plugins'
    /// max_state_alt).
    fn rank(self) -> u8 {
        match self {
            Status::Ok => 0,
            Status::Unknown => 1,
            Status::Warning => 2,
            Status::Critical => 3,
        }
    }

    fn word(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Warning => "WARNING",
            Status::Critical => "CRITICAL",
            Status::Unknown => "UNKNOWN",
        }
    }
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct JobCheck {
    job: String,
    status: Status,
    /// The health state, or `unreadable` / `not found`.
    state: String,
    summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    health: Option<Health>,
    #[serde(skip)]
    perf: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct CheckReport {
    status: Status,
    exit_code: i32,
    /// The server's clock (absent when it could not be asked: then `error` says why).
    #[serde(flatten)]
    clock: Option<crate::output::ServerClock>,
    jobs: Vec<JobCheck>,
    /// Why the check could not be made (status UNKNOWN, exit code 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// Runs the check; any error (Redis unreachable, a newer store) is UNKNOWN, as a plugin must say.
pub async fn execute(settings: &CheckSettings, ctx: &Context) -> Result<ExitStatus> {
    match check(settings, ctx).await {
        Ok(status) => Ok(ExitStatus::External(status.code())),
        Err(e) if e.exit_code() == crate::error::ExitCode::Usage => Err(e),
        Err(e) => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            if ctx.out.json {
                ctx.out.print_json(&CheckReport {
                    status: Status::Unknown,
                    exit_code: Status::Unknown.code(),
                    clock: None,
                    jobs: Vec::new(),
                    error: Some(text.clone()),
                });
            } else {
                crate::outln!("ANARCHON UNKNOWN - {first}");
            }
            Ok(ExitStatus::External(Status::Unknown.code()))
        }
    }
}

async fn check(settings: &CheckSettings, ctx: &Context) -> Result<Status> {
    validate_prefix(ctx.prefix())?;
    for job in &settings.jobs {
        validate_job_name(job)?;
    }
    let mut conn = ctx.connect().await?;
    let store = format::check_for_read(&mut conn, ctx.prefix()).await?;
    let now = store.server_now_ms;
    let mut checks = Vec::new();
    let jobs = named_jobs(&mut conn, settings, ctx, &mut checks).await?;
    let window_start = settings.window.map(|w| now - crate::time::millis(w));
    let (monitored, unreadable) =
        view::read_over(&mut conn, ctx.prefix(), &jobs, &store, window_start).await?;
    for m in &monitored {
        let health = m.health_over(now, settings.grace, window_start);
        let status = status_of(&health, settings.failures);
        checks.push(JobCheck {
            job: m.job.clone(),
            status,
            state: health.state.as_str().to_string(),
            summary: summary(&m.job, &health, now, m.pause.as_ref()),
            perf: perf_data(&health, settings.failures),
            health: Some(health),
        });
    }
    for u in &unreadable {
        let first_line = u
            .error
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        checks.push(JobCheck::unknown(&u.job, "unreadable", first_line));
    }
    checks.sort_by(|a, b| {
        b.status
            .rank()
            .cmp(&a.status.rank())
            .then(a.job.cmp(&b.job))
    });
    let worst = checks
        .iter()
        .map(|c| c.status)
        .max_by_key(|s| s.rank())
        .unwrap_or(Status::Unknown);
    if ctx.out.json {
        ctx.out.print_json(&CheckReport {
            status: worst,
            exit_code: worst.code(),
            clock: Some(crate::output::ServerClock::at(now)),
            jobs: checks,
            error: None,
        });
    } else {
        print_plugin_lines(ctx, &checks);
    }
    Ok(worst)
}

/// The jobs to check: the ones named (each found in its layouts; one not found is UNKNOWN in
/// `checks`), or every job under the prefix.
async fn named_jobs(
    conn: &mut Connection,
    settings: &CheckSettings,
    ctx: &Context,
    checks: &mut Vec<JobCheck>,
) -> Result<Vec<JobRef>> {
    if settings.jobs.is_empty() {
        return find_jobs(conn, ctx.prefix(), "*").await;
    }
    let mut jobs = Vec::new();
    for name in &settings.jobs {
        let found = layouts_of(conn, ctx.prefix(), name).await?;
        if found.is_empty() {
            match retired_without_history(conn, ctx.prefix(), name).await {
                // `forget --drop-history` left its registry as the record: what was asked for.
                Some(retired) => checks.push(JobCheck::retired(name, &retired)),
                None => {
                    let why = format!("no job {name:?} under prefix {:?}", ctx.prefix());
                    checks.push(JobCheck::unknown(name, "not found", why));
                }
            }
        }
        jobs.extend(found);
    }
    Ok(jobs)
}

/// The plugin's lines: one per job, `ANARCHON <STATUS> - <job>: <summary> | <perfdata>`.
fn print_plugin_lines(ctx: &Context, checks: &[JobCheck]) {
    if checks.is_empty() {
        crate::outln!("ANARCHON UNKNOWN - no jobs under prefix {:?}", ctx.prefix());
    }
    for c in checks {
        let perf = if c.perf.is_empty() {
            String::new()
        } else {
            format!(" | {}", c.perf)
        };
        crate::outln!(
            "ANARCHON {} - {}: {}{perf}",
            c.status.word(),
            c.job,
            c.summary
        );
    }
}

/// The retirement of a job whose history `forget --drop-history` deleted (its registry stays):
/// a check that names it says it is retired, not that it is not found (UNKNOWN for ever).
async fn retired_without_history(
    conn: &mut Connection,
    prefix: &str,
    job: &str,
) -> Option<crate::store::registry::Retired> {
    let key = crate::store::registry::registry_key(prefix, job);
    let fields: Vec<(String, String)> = conn.query(redis::cmd("HGETALL").arg(&key)).await.ok()?;
    crate::store::registry::decode(&key, &fields).ok()??.retired
}

impl JobCheck {
    /// A job retired with its history deleted: OK, as a retired job with history is.
    fn retired(job: &str, retired: &crate::store::registry::Retired) -> Self {
        JobCheck {
            job: job.to_string(),
            status: Status::Ok,
            state: HealthState::Retired.as_str().to_string(),
            summary: format!(
                "retired by {} at {}{}, its history deleted: no run is expected",
                retired.by,
                rfc3339(retired.at),
                retired
                    .reason
                    .as_deref()
                    .map_or(String::new(), |why| format!(" ({why})"))
            ),
            health: None,
            perf: String::new(),
        }
    }

    /// A job whose health cannot be told (not found, unreadable): UNKNOWN, with why.
    fn unknown(job: &str, state: &str, summary: String) -> Self {
        JobCheck {
            job: job.to_string(),
            status: Status::Unknown,
            state: state.into(),
            summary,
            health: None,
            perf: String::new(),
        }
    }
}

/// The plugin status of a job's health (see the module doc).
pub fn status_of(h: &Health, failures: u32) -> Status {
    match h.state {
        HealthState::Ok
        | HealthState::Running
        | HealthState::Paused
        | HealthState::Renamed
        | HealthState::Retired => Status::Ok,
        HealthState::Late => Status::Warning,
        HealthState::Missed | HealthState::Expired => Status::Critical,
        HealthState::Failing if h.failed_in_a_row >= failures => Status::Critical,
        HealthState::Failing => Status::Warning,
        HealthState::Unknown => Status::Unknown,
    }
}

/// Slots as RFC 3339 times, the first five and how many more.
fn slot_list(slots: &[i64]) -> String {
    let mut shown: Vec<String> = slots.iter().take(5).map(|s| rfc3339(*s)).collect();
    if slots.len() > 5 {
        shown.push(format!("and {} more", slots.len() - 5));
    }
    shown.join(", ")
}

fn ago(ms: Option<i64>, now: i64) -> String {
    ms.map_or("never".to_string(), |t| {
        format!("{} ago", humanize((now - t).max(0) as u64))
    })
}

/// One line of words: the state, and what a person needs next.
fn summary(job: &str, h: &Health, now: i64, pause: Option<&crate::store::pause::Pause>) -> String {
    let last_ok = format!("last success {}", ago(h.last_success, now));
    match h.state {
        HealthState::Ok | HealthState::Running => format!(
            "{}, {last_ok}, next {}",
            h.state.as_str(),
            h.next_due.map_or("-".into(), rfc3339)
        ),
        HealthState::Paused => format!("paused {}", pause.map_or(String::new(), |p| p.describe())),
        HealthState::Retired => match &h.retired {
            Some(r) if r.removed => format!(
                "retired: {}: no run is expected (a replica that has it again brings it back), {last_ok}",
                r.reason.as_deref().unwrap_or("removed from its crontab")
            ),
            Some(r) => format!(
                "retired by {} {} ago{}: no run is expected (a host that runs it again brings it back), {last_ok}",
                r.by,
                humanize((now - r.at).max(0).unsigned_abs()),
                r.reason
                    .as_deref()
                    .map_or(String::new(), |why| format!(" ({why})"))
            ),
            None => "retired".to_string(),
        },
        HealthState::Renamed => format!(
            "renamed to {}: its runs are judged there, {last_ok}",
            h.renamed_to.as_deref().unwrap_or("-")
        ),
        HealthState::Expired => {
            let slot = h.expired_slots.first().copied().unwrap_or_default();
            format!(
                "expired: the run of {} stopped renewing its lease {} ago and nobody took it over (its holder died with no backup standing by); {}, {last_ok}",
                rfc3339(slot),
                humanize(h.expired_for_ms.max(0) as u64),
                crate::health::expired_way_out(job, slot),
            )
        }
        HealthState::Late | HealthState::Missed if h.missed_slots.is_empty() => format!(
            "{} ({} run(s) claimed but never run to an end (interrupted, nobody finished them): {}), {last_ok}",
            h.state.as_str(),
            h.lost_slots.len(),
            slot_list(&h.lost_slots),
        ),
        HealthState::Late | HealthState::Missed => format!(
            "{} ({} due run(s) never claimed, the oldest {} ({} ago); grace {}{}), {last_ok}; is a host running it? (if none should, `anarchon forget {job}` retires it)",
            h.state.as_str(),
            h.missed_slots.len(),
            h.oldest_missed.map_or("-".into(), rfc3339),
            humanize(
                h.oldest_missed
                    .map_or(0, |slot| (now - slot).max(0))
                    .unsigned_abs()
            ),
            humantime::format_duration(std::time::Duration::from_millis(
                h.grace_ms.max(0).unsigned_abs()
            )),
            if h.lost_slots.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} claimed but never run to an end: {}",
                    h.lost_slots.len(),
                    slot_list(&h.lost_slots)
                )
            },
        ),
        HealthState::Failing => format!(
            "failing ({} run(s) in a row failed, last exit {}), {last_ok}",
            h.failed_in_a_row,
            h.last_exit_code.map_or("-".into(), |c| c.to_string())
        ),
        HealthState::Unknown => {
            "no schedule known: run it with `anarchon run --schedule ...` to record one".into()
        }
    }
}

/// Performance data (`'label'=value[UOM];warn;crit;min;max`), per the plugin guidelines.
fn perf_data(h: &Health, failures: u32) -> String {
    let grace_s = Duration::from_millis(h.grace_ms.max(0) as u64).as_secs();
    let mut out = vec![
        format!("late={}s;{grace_s};;0", h.late_seconds),
        format!("missed={};1;2;0", h.missed_slots.len()),
        format!("lost={};1;1;0", h.lost_slots.len()),
        format!("failed_in_a_row={};1;{failures};0", h.failed_in_a_row),
    ];
    if let Some(ok) = h.last_success {
        out.push(format!("last_success={}", ok / 1000));
    }
    if let Some(d) = h.last_duration_ms {
        out.push(format!("duration={:.3}s;;;0", d as f64 / 1000.0));
    }
    out.join(" ")
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![("check", crate::commands::output_schema::<CheckReport>())]
}
