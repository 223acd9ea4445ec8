//! Release a run in progress without its token: an operator breaks a lease (`anarchon release`,
//! `top`'s release). A holder whose lease is live may still be running the command, so the run is
//! first only marked released (lua/lease/released.lua): it stays held, nothing else can run the
//! job, and the holder's next heartbeat answers `released`; `anarchon run` then stops its command
//! and records the attempt with who released it and why. A holder that is gone cannot answer: its
//! lease expires, and the run ends then.

use std::time::Duration;

use super::Who;
use crate::connection::Connection;
use crate::error::Result;
use crate::store::LeaseKeys;
use crate::store::events::{self, Action};
use crate::store::job::ActiveRun;
use crate::strategy::lease::{self, ReleaseOutcome};

/// How a release is done.
#[derive(Debug, Clone, Copy)]
pub struct How<'a> {
    /// The status the released attempt is recorded with (`interrupted`, `failed`).
    pub status: &'a str,
    /// End the run at once, even while its holder may still run the command.
    pub force: bool,
    /// Wait until the run has ended (its holder stopped it, or its lease expired).
    pub wait: bool,
    /// Show a spinner on a terminal while waiting.
    pub spinner: bool,
    /// The reason recorded when none is given (`released by an operator`, `lease expired`).
    pub default_reason: &'a str,
}

/// What a release did to one run.
#[derive(Debug, Clone, Copy)]
pub struct Done {
    pub outcome: ReleaseOutcome,
    /// How a released run ended: `holder`, `lease_expired`, `at_once` or `forced`.
    pub ended_by: Option<&'static str>,
    /// How long the release waited for the run to end, ms.
    pub waited_ms: Option<u64>,
}

/// Releases `run` of `job` (at `keys`) and records it in the job's events, with who and why.
pub async fn release(
    conn: &mut Connection,
    (prefix, job, keys): (&str, &str, &LeaseKeys),
    run: &ActiveRun,
    who: Who<'_>,
    how: How<'_>,
) -> Result<Done> {
    let reason = who.reason.unwrap_or(how.default_reason);
    let result = serde_json::json!({ "released_by": who.by, "reason": reason }).to_string();
    let request = ReleaseRequest {
        keys,
        slot: run.state.slot,
        attempt: run.state.attempt,
        status: how.status,
        result: &result,
    };
    let (outcome, ended_by, waited_ms) = release_one(conn, &request, how).await?;
    let action = Action::new(
        "release",
        who.by,
        who.reason,
        released_words(run, outcome, ended_by, how.status),
    )
    .at_slot(run.state.slot);
    events::record(conn, prefix, job, &action).await;
    Ok(Done {
        outcome,
        ended_by,
        waited_ms,
    })
}

/// The report's word for a release's outcome.
pub fn outcome_word(outcome: ReleaseOutcome) -> &'static str {
    match outcome {
        ReleaseOutcome::Released => "released",
        ReleaseOutcome::Releasing => "releasing",
        ReleaseOutcome::None => "none",
        ReleaseOutcome::Changed => "changed",
    }
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
        (ReleaseOutcome::Released, Some("retry_not_run")) => format!(
            "released the run: {attempt} had failed and its retry was waiting; the retry is recorded not run ({status})"
        ),
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
    async fn send(&self, conn: &mut Connection, force: bool) -> Result<lease::ReleaseReply> {
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
async fn holder_reported(conn: &mut Connection, req: &ReleaseRequest<'_>) -> Result<bool> {
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
    conn: &mut Connection,
    req: &ReleaseRequest<'_>,
    how: How<'_>,
) -> Result<(ReleaseOutcome, Option<&'static str>, Option<u64>)> {
    let first = req.send(conn, how.force).await?;
    match first.outcome {
        // A run waiting for a retry has no holder: it ended at once, its retry recorded not run.
        ReleaseOutcome::Released if first.token == "retry-not-run" => {
            return Ok((first.outcome, Some("retry_not_run"), None));
        }
        ReleaseOutcome::Released if how.force => {
            return Ok((first.outcome, Some("forced"), None));
        }
        ReleaseOutcome::Released => return Ok((first.outcome, Some("at_once"), None)),
        ReleaseOutcome::Releasing if how.wait => {}
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
    let spinner = crate::lines::stderr_spinner(!how.spinner).inspect(|bar| {
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
