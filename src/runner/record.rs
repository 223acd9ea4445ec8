//! Recording how a run ended: `finish` with the command's result, retried through connection
//! trouble while the lease (or, claim-only, a fixed time) allows.

use std::time::Duration;

use tokio::time::{Instant, timeout};

use crate::connection::Connection;
use crate::connection::retry::Retry;
use crate::runner::Target;
use crate::runner::child::CommandOutcome;
use crate::runner::keeper::HeldLease;
use crate::runner::report::Recorded;
use crate::strategy;
use crate::strategy::claim::ClaimRequest;
use crate::strategy::lease::{FinishStatus, TokenOutcome};
use crate::strategy::retry::RetryPolicy;

/// How a won run is recorded at its end.
pub enum Claimed {
    /// Heartbeated while the command runs; finished with its token before its deadline.
    Lease(Box<HeldLease>),
    /// No lease: the result is added to `:results` when the command ends.
    ClaimOnly { started: Instant, server_now: i64 },
}

impl Claimed {
    /// Until when the run's end is tried, through connection trouble and refusals that pass, as
    /// read at each try: with a lease, while it lives (renewed between tries that a server refused
    /// for now, [`renew_between_tries`], so a server that answers but refuses the record, full at
    /// maxmemory, leaves the run with its holder until the record goes through), and at least a second from
    /// `first_try`: past its deadline once (if nobody took over, the run is ours: the script
    /// checks the token, so a late finish can never overwrite another attempt); claim-only, a
    /// fixed time.
    fn record_until(&self, first_try: Instant) -> Instant {
        let at_least = first_try + Duration::from_secs(1);
        match self {
            // A deadline passed is no moment that moves with the clock: then only the second
            // from the first try is left (taken as `now` plus nothing, it would never pass).
            Claimed::Lease(held) => match held.deadline.deadline().left() {
                left if left.is_zero() => at_least,
                left => (Instant::now() + left).max(at_least),
            },
            Claimed::ClaimOnly { .. } => first_try + CLAIM_ONLY_RECORD_FOR,
        }
    }
}

/// The result stored with the run: how the command ended (see docs/store-format.md, "the result
/// of `anarchon run`"). `exit_code` and `duration_ms` always; the rest only when they say
/// something (a signal, a timeout, a lost lease, stderr, a spawn error): the runner and attempt are
/// in the member already, and every byte here is kept for each run of history.
fn result_json(outcome: &CommandOutcome) -> String {
    let mut result = serde_json::Map::new();
    result.insert("exit_code".into(), outcome.exit_code.into());
    result.insert("duration_ms".into(), outcome.duration_ms.into());
    if let Some(signal) = outcome.signal {
        result.insert("signal".into(), signal.into());
    }
    if outcome.timed_out {
        result.insert("timed_out".into(), true.into());
    }
    if outcome.lease_lost {
        result.insert("lease_lost".into(), true.into());
    }
    if outcome.children_stopped > 0 {
        result.insert("children_stopped".into(), outcome.children_stopped.into());
    }
    if !outcome.stdout_tail.is_empty() {
        result.insert("stdout_tail".into(), outcome.stdout_tail.clone().into());
    }
    if !outcome.stderr_tail.is_empty() {
        result.insert("stderr_tail".into(), outcome.stderr_tail.clone().into());
    }
    if let Some(e) = &outcome.spawn_error {
        result.insert("spawn_error".into(), e.clone().into());
    }
    serde_json::Value::Object(result).to_string()
}

/// How long a claim-only run's end is retried through connection trouble (it has no lease to
/// bound the retries).
const CLAIM_ONLY_RECORD_FOR: Duration = Duration::from_secs(10);

/// How an attempt ends, as given to finish.
pub struct End<'a> {
    pub status: FinishStatus,
    /// JSON text.
    pub result: &'a str,
    /// See [`strategy::Ending::by_itself`].
    pub by_itself: bool,
    /// The retries a failure may be given (see [`strategy::Ending::retry`]).
    pub retry: Option<&'a RetryPolicy>,
}

/// Finishes the run, retrying through connection trouble while our lease still lives. A failure
/// that `retry` counts, and not stopped by a release, may be answered [`Recorded::Retry`].
pub async fn record(
    conn: &mut Connection,
    target: Target<'_>,
    req: &ClaimRequest,
    claimed: &Claimed,
    outcome: &CommandOutcome,
    retry: Option<&RetryPolicy>,
) -> Recorded {
    let status = if outcome.succeeded() {
        FinishStatus::Finished
    } else {
        FinishStatus::Failed
    };
    // Not stopped for a release: ended by itself, and recorded as it ended even if a release came
    // meanwhile (`--overlap replace` releasing it just as it finished).
    let by_itself = !outcome.released;
    let retry = retry
        .filter(|r| status == FinishStatus::Failed && by_itself && r.counts(outcome.exit_code));
    let end = End {
        status,
        result: &result_json(outcome),
        by_itself,
        retry,
    };
    record_result(conn, target, req, claimed, &end).await
}

/// Finishes the run as `end` says, retrying as [`record`] does.
pub async fn record_result(
    conn: &mut Connection,
    target: Target<'_>,
    req: &ClaimRequest,
    claimed: &Claimed,
    end: &End<'_>,
) -> Recorded {
    let End {
        status,
        result,
        by_itself,
        retry,
    } = *end;
    let reply = answered(conn, claimed, async |conn| {
        // A lease run's end time is read by its script; a claim-only run's is the server's clock
        // at the claim plus the time since.
        let ended_at = match claimed {
            Claimed::Lease(_) => 0,
            Claimed::ClaimOnly {
                started,
                server_now,
            } => server_now + crate::time::millis(started.elapsed()),
        };
        let ending = strategy::Ending {
            kind: req.kind,
            slot: req.slot,
            token: &req.token,
            status,
            result_json: result,
            ended_at,
            by_itself,
            retry,
        };
        strategy::finish(conn, target, &ending).await
    })
    .await;
    match reply {
        Ok(reply) if reply.outcome == TokenOutcome::Ok => match reply.released {
            Some(released) => Recorded::Released {
                reason: released.to_string(),
                status: reply.status,
            },
            None => Recorded::Yes,
        },
        Ok(reply) if reply.outcome == TokenOutcome::Retry => Recorded::Retry {
            nth: reply.retry.unwrap_or(1),
            at: reply.lease_end.unwrap_or(reply.server_now),
        },
        Ok(reply) => Recorded::LeaseLost(reply.lost_reason()),
        Err(not_recorded) => not_recorded,
    }
}

/// Sends `call` until the server answers it, through connection trouble and refusals that pass
/// (OOM: each try bounded by the time left, a fresh connection after a failure), until
/// [`Claimed::record_until`] (read anew at each try: a lease its keeper renews moves it): the
/// answer, or why the run's end could not be recorded (refused, or unreachable).
async fn answered<T>(
    conn: &mut Connection,
    claimed: &Claimed,
    mut call: impl AsyncFnMut(&mut Connection) -> crate::error::Result<T>,
) -> Result<T, Recorded> {
    let first_try = Instant::now();
    let give_up = || claimed.record_until(first_try);
    let mut tries = Retry::AROUND_A_CLAIM.until(give_up()).start();
    loop {
        let left = give_up().saturating_duration_since(Instant::now());
        let error = match timeout(left.max(Duration::from_millis(100)), call(conn)).await {
            Ok(Ok(reply)) => return Ok(reply),
            // A refusal that passes (a full server: OOM) wrote nothing: retried as an outage is,
            // while the lease lives; given up, the lease ends by itself and a backup takes over.
            Ok(Err(e)) if !e.is_transient() && !e.can_pass() => {
                return Err(Recorded::Refused {
                    reason: e.to_string(),
                    exit_code: e.exit_code().code(),
                });
            }
            Ok(Err(e)) if e.can_pass() => {
                renew_between_tries(conn, claimed).await;
                e.to_string()
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => "Redis did not answer in time".to_string(),
        };
        if Instant::now() >= give_up() {
            return Err(Recorded::Unreachable(error));
        }
        // The answer's own kind does not matter here: any trouble is retried until `give_up`.
        tries.pause_and_reconnect(conn, give_up()).await;
    }
}

/// Renews a held lease between two tries of its end that the server refused for now (full:
/// OOM under noeviction; the renewal adds no memory and passes there, lua/lease/v1/lib.lua
/// `renew_in_place`): a holder whose command ended keeps the run until its end is recorded, and
/// no backup takes a completed run over to run it again. Sent on the record's own connection,
/// between its tries, never beside one. An answer that the run is no longer ours changes
/// nothing here: the next try of the end hears it too.
async fn renew_between_tries(conn: &mut Connection, claimed: &Claimed) {
    let Claimed::Lease(held) = claimed else {
        return;
    };
    let left = held.deadline.deadline().left();
    if left.is_zero() {
        return;
    }
    let sent = crate::runner::deadline::BootTime::now();
    let beat = strategy::lease::heartbeat(
        conn,
        &held.keys,
        held.slot,
        &held.token,
        held.deadline.lease(),
    );
    if let Ok(Ok(reply)) = timeout(left, beat).await
        && reply.outcome == TokenOutcome::Ok
    {
        held.deadline.confirmed(sent);
    }
}

/// Tells the replicas standing by for the run just handed over that its lease has ended
/// ([`crate::store::requests::Wake`] on the requests stream, which every replica reads): one takes
/// it over at once, not at its next look. Best effort: unsaid, they find it at that look.
async fn wake_the_backups(conn: &mut Connection, target: Target<'_>, slot: i64, by: &str) {
    let wake = crate::store::requests::wake_command(target.prefix, target.job, slot, by);
    let _ = timeout(Duration::from_secs(1), conn.query::<redis::Value>(&wake)).await;
}

/// `anarchon cron` shut down and stopped the command at the end of its grace: the run is handed
/// over ([`strategy::lease::hand_over`]: its lease ends now) so that a replica standing by takes
/// it over at once as the next attempt, instead of when the lease would have ended. Retried
/// through connection trouble while the lease lives; if it cannot be done, the lease ends by
/// itself and the takeover comes then. A run an operator released meanwhile is finished with the
/// release's status instead, as any released run is.
pub async fn hand_over(
    conn: &mut Connection,
    target: Target<'_>,
    req: &ClaimRequest,
    claimed: &Claimed,
    outcome: &CommandOutcome,
) -> Recorded {
    let Claimed::Lease(held) = claimed else {
        return record(conn, target, req, claimed, outcome, None).await;
    };
    // Whether a replica stands by to take it over (it says so: `LeaseKeys::standby`), read first:
    // a backup that announced itself and then stopped is said as standing by for its
    // announcement's life at most (two of its slowest looks and a second: 21 s under `cron`).
    // Best effort: unread, nobody is said to.
    let standing_by = timeout(
        Duration::from_secs(1),
        strategy::lease::standing_by(conn, &held.keys, held.slot),
    )
    .await
    .ok()
    .and_then(Result::ok)
    .flatten()
    .filter(|runner| *runner != req.runner);
    let reply = answered(conn, claimed, async |conn| {
        strategy::lease::hand_over(conn, &held.keys, held.slot, &held.token).await
    })
    .await;
    match reply {
        Ok(reply) => match reply.outcome {
            TokenOutcome::Ok => {
                if standing_by.is_some() {
                    wake_the_backups(conn, target, held.slot, &req.runner).await;
                }
                Recorded::HandedOver { standing_by }
            }
            TokenOutcome::Released => record(conn, target, req, claimed, outcome, None).await,
            // A hand-over's heartbeat is never answered retry.
            TokenOutcome::Lost | TokenOutcome::Retry => Recorded::LeaseLost(reply.lost_reason()),
        },
        Err(not_recorded) => not_recorded,
    }
}
