//! A claim looks before it leaps: test, then test-and-set.
//!
//! At the top of a minute every host of a fleet claims the same runs, and all but one lose. Each
//! claim script costs the shared Redis ~10 µs of Lua (bench/server.sh), and Redis runs one at a
//! time, so a herd of losing scripts is what every other client of that Redis waits behind. Most
//! of those answers are already decided before the script runs: the run is held by another host
//! under a live lease, or it has ended. So a claim of a format 2 store first reads the slot with
//! plain commands in one `MULTI`/`EXEC` (a consistent snapshot, ~1.5 µs on the server, no Lua),
//! and only runs the script when the snapshot cannot answer.
//!
//! The snapshot only ever gives an answer the script would have given at the moment it was taken:
//! `running` when another token holds the slot with a lease that outlives the server's `TIME` in
//! the same transaction, `done` when the slot has ended (its `:results` members, in a job already
//! in format 2, with no run in progress). Everything that decides or writes (a new run, a takeover
//! of an expired lease, our own retry with the same token, a pause, overlap, trimming, format
//! conversion) is the script's, as before. Anything the snapshot cannot read cleanly (a key of
//! another type, a member it cannot parse, a server that refuses the commands) goes to the script
//! too, which names the problem. A claim the snapshot answers writes nothing, as a losing claim
//! script never did. docs/store-format.md ("A claim's look") states the rule for other
//! implementations.

use redis::Value;

use super::{ClaimOutcome, ClaimReply, ClaimRequest};
use crate::connection::Connection;
use crate::error::Result;
use crate::store::read::ResultEntry;
use crate::store::state::decode_live;
use crate::store::{LeaseFormat, LeaseKeys};

/// The claim's answer when a snapshot of the slot already decides it, else None (run the script).
/// Errors only when the connection failed (which the script would meet too, and the caller
/// retries); a reply it cannot use is None.
pub async fn answer(
    conn: &mut Connection,
    keys: &LeaseKeys,
    req: &ClaimRequest,
) -> Result<Option<ClaimReply>> {
    // Format 1 keeps runs in nine hash fields of :state: no single read answers. A cluster
    // client's MULTI would need all of it on one node, TIME included: the script is simpler there.
    if keys.format != LeaseFormat::V2 || conn.is_cluster() {
        return Ok(None);
    }
    let mut pipe = redis::pipe();
    pipe.atomic()
        .cmd("HGET")
        .arg(&keys.live)
        .arg(req.slot)
        .cmd("HGET")
        .arg(&keys.job)
        .arg("format")
        .cmd("ZRANGEBYSCORE")
        .arg(&keys.results)
        .arg(req.slot)
        .arg(req.slot)
        .cmd("TIME");
    let snapshot: Vec<Value> = match conn.pipeline(&pipe).await {
        Ok(values) => values,
        Err(e) if e.is_transient() => return Err(e),
        Err(_) => return Ok(None),
    };
    Ok(decide(keys, req, snapshot))
}

/// The answer a snapshot `[live field, job format, results members, TIME]` gives, if any.
fn decide(keys: &LeaseKeys, req: &ClaimRequest, snapshot: Vec<Value>) -> Option<ClaimReply> {
    let [live, format, members, time]: [Value; 4] = snapshot.try_into().ok()?;
    let live: Option<String> = redis::from_redis_value(live).ok()?;
    let format: Option<String> = redis::from_redis_value(format).ok()?;
    let members: Vec<String> = redis::from_redis_value(members).ok()?;
    let (secs, micros): (i64, i64) = redis::from_redis_value(time).ok()?;
    let now = secs * 1000 + micros / 1000;
    let reply = |outcome, attempt, lease_end, runner: String, status: &str| ClaimReply {
        outcome,
        attempt: Some(attempt),
        lease_end,
        runner,
        status: status.to_string(),
        server_now: now,
        other_slot: None,
        fence: None,
    };
    match live {
        // Held by someone else, lease live: running, as the script answers it.
        Some(text) => {
            let run = decode_live(&keys.live, &req.slot.to_string(), &text).ok()?;
            (run.token != req.token && run.lease_end > now).then(|| {
                reply(
                    ClaimOutcome::Running,
                    run.attempt,
                    Some(run.lease_end),
                    run.runner,
                    "running",
                )
            })
        }
        // Ended: its final attempt. Only in a job in format 2: a format 1 job's run in progress is
        // not in :live until its first format 2 script converts it.
        None if format.as_deref() == Some("2") => {
            let mut last: Option<ResultEntry> = None;
            for member in &members {
                let entry = ResultEntry::parse(&keys.results, member).ok()?;
                entry.attempt?;
                if !matches!(
                    entry.status.as_str(),
                    "finished" | "failed" | "interrupted" | "skipped"
                ) {
                    return None;
                }
                if last.as_ref().is_none_or(|l| entry.attempt > l.attempt) {
                    last = Some(entry);
                }
            }
            let last = last?;
            let status = last.status.clone();
            Some(reply(
                ClaimOutcome::Done,
                last.attempt?,
                None,
                last.runner,
                &status,
            ))
        }
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::store::RunKind;
    use crate::strategy::lease::HistoryPolicy;

    fn request(token: &str) -> ClaimRequest {
        ClaimRequest {
            slot: 60_000,
            token: token.into(),
            runner: "me:1".into(),
            lease: Duration::from_secs(30),
            max_attempts: 3,
            allow_overlap: false,
            kind: RunKind::Scheduled,
            history: HistoryPolicy::default(),
        }
    }

    fn bulk(text: &str) -> Value {
        Value::BulkString(text.as_bytes().to_vec())
    }

    /// A snapshot at server time 100.000 s.
    fn snapshot(live: Option<&str>, format: Option<&str>, members: &[&str]) -> Vec<Value> {
        vec![
            live.map_or(Value::Nil, bulk),
            format.map_or(Value::Nil, bulk),
            Value::Array(members.iter().map(|m| bulk(m)).collect()),
            Value::Array(vec![bulk("100"), bulk("0")]),
        ]
    }

    fn live(token: &str, lease_end: i64) -> String {
        format!(
            r#"{{"attempt":2,"token":"{token}","runner":"other:9","lease_end":{lease_end},"claimed_at":1,"started_at":1,"kind":"scheduled","lease_ms":30000,"fence":7}}"#
        )
    }

    #[test]
    fn a_slot_another_token_holds_under_a_live_lease_is_running() {
        let keys = LeaseKeys::new("cron:", "j");
        let got = decide(
            &keys,
            &request("mine"),
            snapshot(Some(&live("theirs", 100_001)), Some("2"), &[]),
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
    fn the_script_decides_an_expired_lease_our_own_token_and_a_new_run() {
        let keys = LeaseKeys::new("cron:", "j");
        let req = request("mine");
        // Expired exactly now: a takeover is the script's.
        assert!(
            decide(
                &keys,
                &req,
                snapshot(Some(&live("theirs", 100_000)), Some("2"), &[])
            )
            .is_none()
        );
        // Our own token: a retry whose first reply was lost, answered won by the script.
        assert!(
            decide(
                &keys,
                &req,
                snapshot(Some(&live("mine", 200_000)), Some("2"), &[])
            )
            .is_none()
        );
        // Nothing yet: a new run.
        assert!(decide(&keys, &req, snapshot(None, Some("2"), &[])).is_none());
        // Garbage in :live: the script names it.
        assert!(decide(&keys, &req, snapshot(Some("{"), Some("2"), &[])).is_none());
    }

    #[test]
    fn an_ended_run_is_done_with_its_last_attempt_only_in_a_format_2_job() {
        let keys = LeaseKeys::new("cron:", "j");
        let req = request("mine");
        let members = [
            r#"{"attempt":1,"token":"a","runner":"h1:1","status":"interrupted","claimed_at":1,"ended_at":2,"result":null}"#,
            r#"{"attempt":2,"token":"b","runner":"h2:1","status":"finished","claimed_at":3,"ended_at":4,"result":{"exit_code":0}}"#,
        ];
        let got = decide(&keys, &req, snapshot(None, Some("2"), &members)).expect("answered");
        assert_eq!(got.outcome, ClaimOutcome::Done);
        assert_eq!(
            (got.attempt, got.runner.as_str(), got.status.as_str()),
            (Some(2), "h2:1", "finished")
        );
        // A job not converted yet may hold attempt 2 in its format 1 :state.
        assert!(decide(&keys, &req, snapshot(None, None, &members)).is_none());
        // A member that is not a result: the script names it.
        assert!(decide(&keys, &req, snapshot(None, Some("2"), &["garbage"])).is_none());
    }
}
