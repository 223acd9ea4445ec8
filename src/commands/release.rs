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
use std::time::Duration;

use serde::Serialize;

use crate::commands::Context;
use crate::connection::Connection;
use crate::error::{Error, ExitCode, Result};
use crate::settings::operator::ReleaseSettings;
use crate::store::Layout;
use crate::store::discover::{JobRef, find_jobs};
use crate::store::events::{self, Action};
use crate::store::job::{ActiveRun, active_runs_for, locate_job};
use crate::store::{LeaseKeys, StoreCheck, validate_job_name, validate_prefix};
use crate::strategy::Strategy;
use crate::strategy::lease::{self, ReleaseOutcome};
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
    let result = release_result(&by, settings);
    for (job, run) in chosen {
        let (outcome, ended_by, waited_ms) = if settings.dry_run {
            ("would_release".to_string(), None, None)
        } else {
            let keys = check.lease_keys(ctx.prefix(), &job);
            let request = ReleaseRequest {
                keys: &keys,
                slot: run.state.slot,
                attempt: run.state.attempt,
                status,
                result: &result,
            };
            let (outcome, ended_by, waited) =
                release_one(&mut conn, &request, settings, ctx.out.json).await?;
            let action = Action::new(
                "release",
                &by,
                settings.audit.reason.as_deref(),
                released_words(&run, outcome, ended_by, status),
            )
            .at_slot(run.state.slot);
            events::record(&mut conn, ctx.prefix(), &job, &action).await;
            (outcome_word(outcome).to_string(), ended_by, waited)
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

/// The result a released attempt is recorded with: who released it and why.
fn release_result(by: &str, settings: &ReleaseSettings) -> String {
    let reason = settings.audit.reason.clone().unwrap_or_else(|| {
        if settings.expired.is_some() {
            "lease expired".to_string()
        } else {
            "released by an operator".to_string()
        }
    });
    serde_json::json!({ "released_by": by, "reason": reason }).to_string()
}

/// What a release did, as its entry in the job's events says it.
fn released_words(
    run: &ActiveRun,
    outcome: ReleaseOutcome,
    ended_by: Option<&str>,
    status: &str,
) -> String {
    let attempt = format!("attempt {} of {}", run.state.attempt, run.state.runner);
    match (outcome, ended_by) {
        (ReleaseOutcome::Released, Some("holder")) => {
            format!("released {attempt}: its holder stopped the command ({status})")
        }
        (ReleaseOutcome::Released, Some("lease_expired")) => {
            format!("released {attempt}: ended when its lease expired ({status})")
        }
        (ReleaseOutcome::Released, Some("forced")) => {
            format!("released {attempt} by force ({status}); its command may still have run")
        }
        (ReleaseOutcome::Released, _) => format!("released {attempt} ({status})"),
        (ReleaseOutcome::Releasing, _) => {
            format!("marked {attempt} released; its holder stops it at its next heartbeat")
        }
        (ReleaseOutcome::None, _) => format!("nothing to release: {attempt} had ended"),
        (ReleaseOutcome::Changed, _) => {
            format!("nothing released: {attempt} was taken over meanwhile")
        }
    }
}

/// The report's word for a release's outcome.
fn outcome_word(outcome: ReleaseOutcome) -> &'static str {
    match outcome {
        ReleaseOutcome::Released => "released",
        ReleaseOutcome::Releasing => "releasing",
        ReleaseOutcome::None => "none",
        ReleaseOutcome::Changed => "changed",
    }
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

/// One run to release, as the operator saw it.
struct ReleaseRequest<'a> {
    keys: &'a LeaseKeys,
    slot: i64,
    attempt: u32,
    status: &'a str,
    result: &'a str,
}

impl ReleaseRequest<'_> {
    /// The release script for this run (see [`lease::release`]).
    async fn send(
        &self,
        conn: &mut crate::connection::Connection,
        force: bool,
    ) -> Result<lease::ReleaseReply> {
        lease::release(
            conn,
            self.keys,
            self.slot,
            Some(self.attempt),
            self.status,
            self.result,
            force,
        )
        .await
    }
}

/// Whether the released attempt's recorded result holds its holder's report (`command`): the
/// holder stopped the command and finished, rather than a claim ending the run after its lease.
async fn holder_reported(
    conn: &mut crate::connection::Connection,
    req: &ReleaseRequest<'_>,
) -> Result<bool> {
    let attempts =
        crate::store::read::results_page(conn, &req.keys.results, req.slot, req.slot, 0, 1000)
            .await?;
    Ok(attempts
        .iter()
        .any(|r| r.attempt == Some(req.attempt) && r.result.get("command").is_some()))
}

/// How often the release looks whether the released run has ended.
const WAIT_POLL: Duration = Duration::from_millis(100);

/// Releases one run and, unless --no-wait, waits until it has ended: its holder stopped the command
/// and recorded the attempt, or its lease expired (then the release itself ends it). Each look is
/// the release script again, which writes nothing while the run is marked and held. A holder that
/// keeps renewing its lease after the mark (it cannot hear it: another scheduler, an older
/// anarchon) is overridden a second after the lease end seen when it was marked, with a warning.
/// Returns the outcome, how it ended, and how long it waited.
async fn release_one(
    conn: &mut crate::connection::Connection,
    req: &ReleaseRequest<'_>,
    settings: &ReleaseSettings,
    json: bool,
) -> Result<(ReleaseOutcome, Option<&'static str>, Option<u64>)> {
    let first = req.send(conn, settings.force).await?;
    match first.outcome {
        ReleaseOutcome::Released if settings.force => {
            return Ok((first.outcome, Some("forced"), None));
        }
        ReleaseOutcome::Released => return Ok((first.outcome, Some("at_once"), None)),
        ReleaseOutcome::Releasing if !settings.no_wait => {}
        other => return Ok((other, None, None)),
    }
    let started = tokio::time::Instant::now();
    // The lease end when marked, by the server's clock: heartbeats no longer renew it.
    let lease_left = first
        .lease_end
        .map_or(0, |end| end - first.server_now)
        .max(0);
    let override_at =
        started + Duration::from_millis(u64::try_from(lease_left).unwrap_or(0) + 1000);
    let spinner = crate::lines::stderr_spinner(json).inspect(|bar| {
        bar.set_message(format!(
            "waiting for {} to stop attempt {} (its lease ends in {})",
            first.runner,
            req.attempt,
            crate::time::humanize(u64::try_from(lease_left).unwrap_or(0))
        ));
    });
    let waited = || Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
    let ended = loop {
        tokio::time::sleep(WAIT_POLL).await;
        let force = tokio::time::Instant::now() >= override_at;
        let reply = req.send(conn, force).await?;
        match reply.outcome {
            ReleaseOutcome::Releasing => continue,
            // It ended meanwhile: its holder stopped the command and recorded the attempt (its
            // result then says how the command ended), or a claim ended it after its lease.
            ReleaseOutcome::None => {
                let how = if holder_reported(conn, req).await? {
                    "holder"
                } else {
                    "lease_expired"
                };
                break (ReleaseOutcome::Released, Some(how));
            }
            ReleaseOutcome::Released if force => {
                crate::errln!(
                    "warning: {} kept renewing the lease of attempt {} after it was released (another scheduler, or an older anarchon that cannot hear a release): ended now, but its command may still be running",
                    reply.runner,
                    req.attempt
                );
                break (ReleaseOutcome::Released, Some("forced"));
            }
            ReleaseOutcome::Released => break (ReleaseOutcome::Released, Some("lease_expired")),
            ReleaseOutcome::Changed => break (ReleaseOutcome::Changed, None),
        }
    };
    if let Some(bar) = spinner {
        bar.finish_and_clear();
    }
    Ok((ended.0, ended.1, waited()))
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

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![("release", crate::commands::output_schema::<Report>())]
}
