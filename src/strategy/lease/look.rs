//! A claim looks before it leaps: test, then test-and-set.
//!
//! At the top of a minute every host of a fleet claims the same runs, and all but one lose. Each
//! claim script costs the shared Redis ~10 µs of Lua (bench/server.sh), and Redis runs one at a
//! time, so a herd of losing scripts is what every other client of that Redis waits behind. Most
//! of those answers are decided before the script runs: the run is held by another host under a
//! live lease. So a claim first reads the slot's run (the read its format gives:
//! `LeaseFormat::queue_look`) and the server's `TIME`, two plain commands in that order in one
//! pipeline, and runs the script only when they do not answer.
//!
//! The look only ever answers what the script would have answered when the run was read:
//! `running`, when another token holds the slot with a lease that ends after the server's `TIME`
//! read just after it (so it was live at the read), and in format 1 `done`, when the run's status
//! is final (finished, failed, interrupted: a format 1 claim answers `done` for those before
//! anything else, and a final status never changes). Everything else (a new run, a takeover of an
//! expired lease, our own retry with the same token, format 2's ended runs, which live in
//! `:results`) is the script's, as is anything the look cannot read cleanly (a key of another type,
//! a value that is not a run, a server that refuses the commands), which the script then names. A
//! look writes nothing, as a losing claim script never did. docs/store-format.md ("A claim's look")
//! states the rule for other implementations.

use redis::Value;

use super::{ClaimOutcome, ClaimReply, ClaimRequest};
use crate::connection::Connection;
use crate::error::Result;
use crate::store::format::parse_time_reply;
use crate::store::lease::LookedRun;
use crate::store::{LeaseKeys, RunStatus};

/// The claim's answer when a look at the slot already decides it, else None (run the script),
/// and the job's keys in the format the store's format key names now (read again in the same
/// round trip: a migration may have switched it since this process first read it). Errors only
/// when the connection failed (which the script would meet too, and the caller retries), or the
/// format key now names a format this build does not know; a reply it cannot use is None.
pub async fn answer(
    conn: &mut Connection,
    keys: &LeaseKeys,
    req: &ClaimRequest,
) -> Result<(Option<ClaimReply>, LeaseKeys)> {
    answer_sending(conn, keys, req, None).await
}

/// [`answer`], with `also` (a write whose reply does not matter: a backup's announcement that it
/// stands by, `lease::announce_standby`) sent first in the same round trip, so that a backup's
/// poll is one round trip. On a cluster connection `also` goes on its own, best effort.
pub async fn answer_sending(
    conn: &mut Connection,
    keys: &LeaseKeys,
    req: &ClaimRequest,
    also: Option<&redis::Cmd>,
) -> Result<(Option<ClaimReply>, LeaseKeys)> {
    // A cluster client may send TIME to another node than the job's (and the format key lives in
    // another slot): the script is simpler there, after the format key is read on its own.
    if conn.is_cluster() {
        if let Some(cmd) = also {
            let _ = conn.query::<Value>(cmd).await;
        }
        return Ok((None, crate::store::format::refresh(conn, keys).await?));
    }
    let mut pipe = redis::pipe();
    if let Some(cmd) = also {
        pipe.add_command(cmd.clone());
    }
    keys.format.queue_look(&mut pipe, keys, req.slot);
    pipe.cmd("TIME");
    pipe.cmd("GET").arg(&keys.format_key);
    let mut look: Vec<Value> = match conn.replies(&pipe).await {
        Ok(values) => values,
        Err(e) if e.is_transient() => return Err(e),
        Err(_) => return Ok((None, crate::store::format::refresh(conn, keys).await?)),
    };
    // The write's own reply (an error too: best effort, as `announce_standby` is).
    if also.is_some() && !look.is_empty() {
        look.remove(0);
    }
    let [run, time, format]: [Value; 3] = match look.try_into() {
        Ok(replies) => replies,
        Err(_) => return Ok((None, crate::store::format::refresh(conn, keys).await?)),
    };
    let found: Option<String> = match redis::from_redis_value(format) {
        Ok(found) => found,
        Err(_) => return Ok((None, crate::store::format::refresh(conn, keys).await?)),
    };
    let fresh = crate::store::format::refreshed(conn, keys, found)?;
    if fresh.format != keys.format {
        // The run was read as the old format's: the script (in the new one) decides.
        return Ok((None, fresh));
    }
    let Some(now) = redis::from_redis_value::<(String, String)>(time)
        .ok()
        .and_then(|(secs, micros)| parse_time_reply(&secs, &micros).ok())
    else {
        return Ok((None, fresh));
    };
    let answer = keys
        .format
        .decode_look(keys, req.slot, run)
        .and_then(|run| decide(req, run, now));
    Ok((answer, fresh))
}

/// The one rule of the look, for every format (docs/store-format.md, "A claim's look"): a run
/// whose status is final is `done` (a claim answers that before anything else, and a final status
/// never changes); a run in progress that another token holds under a lease ending after `now`
/// (the server's TIME, read just after the run) is `running`. Anything else is the script's.
fn decide(req: &ClaimRequest, run: LookedRun, now: i64) -> Option<ClaimReply> {
    let outcome = match run.status {
        RunStatus::Finished | RunStatus::Failed | RunStatus::Interrupted => ClaimOutcome::Done,
        RunStatus::Running => {
            let theirs = run.token.as_deref() != Some(req.token.as_str());
            (theirs && run.lease_end? > now).then_some(ClaimOutcome::Running)?
        }
    };
    Some(ClaimReply {
        outcome,
        attempt: run.attempt,
        lease_end: run.lease_end,
        runner: run.runner,
        status: run.status.as_str().to_string(),
        server_now: now,
        other_slot: None,
        fence: None,
        released: None,
        other_started_at: None,
        retry: None,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::store::RunKind;
    use crate::strategy::claim::HistoryPolicy;

    fn request(token: &str) -> ClaimRequest {
        ClaimRequest {
            slot: 60_000,
            token: token.into(),
            runner: "me:1".into(),
            lease: Duration::from_secs(30),
            max_attempts: 3,
            overlap: crate::strategy::OverlapPolicy::Forbid,
            kind: RunKind::Scheduled,
            history: HistoryPolicy::default(),
            continues: false,
            owed_within: Duration::ZERO,
        }
    }

    fn run(status: RunStatus, token: Option<&str>, lease_end: Option<i64>) -> LookedRun {
        LookedRun {
            status,
            attempt: Some(2),
            token: token.map(str::to_string),
            runner: "other:9".into(),
            lease_end,
        }
    }

    #[test]
    fn a_slot_another_token_holds_under_a_live_lease_is_running() {
        let got = decide(
            &request("mine"),
            run(RunStatus::Running, Some("theirs"), Some(100_001)),
            100_000,
        )
        .expect("answered");
        assert_eq!(got.outcome, ClaimOutcome::Running);
        assert_eq!(
            (got.attempt, got.lease_end, got.runner.as_str()),
            (Some(2), Some(100_001), "other:9")
        );
        assert_eq!(got.server_now, 100_000);
    }

    #[test]
    fn a_final_status_is_done_whatever_else_the_run_kept() {
        let got = decide(
            &request("mine"),
            run(RunStatus::Failed, None, None),
            100_000,
        )
        .expect("answered");
        assert_eq!(
            (got.outcome, got.status.as_str()),
            (ClaimOutcome::Done, "failed")
        );
    }

    #[test]
    fn the_script_decides_everything_else() {
        let req = request("mine");
        // Expired exactly now: a takeover is the script's.
        assert!(
            decide(
                &req,
                run(RunStatus::Running, Some("theirs"), Some(100_000)),
                100_000
            )
            .is_none()
        );
        // Our own token: a retry whose first reply was lost, answered won by the script.
        assert!(
            decide(
                &req,
                run(RunStatus::Running, Some("mine"), Some(200_000)),
                100_000
            )
            .is_none()
        );
        // No lease end: the script names what is wrong.
        assert!(decide(&req, run(RunStatus::Running, Some("theirs"), None), 100_000).is_none());
    }
}
