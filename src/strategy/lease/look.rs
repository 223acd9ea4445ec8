//! A claim looks before it leaps: test, then test-and-set.
//!
//! At the top of a minute every host of a fleet claims the same runs, and all but one lose. Each
//! claim script costs the shared Redis ~10 µs of Lua (bench/server.sh), and Redis runs one at a
//! time, so a herd of losing scripts is what every other client of that Redis waits behind. Most
//! of those answers are decided before the script runs: the run is held by another host under a
//! live lease. So a claim of a format 2 store first reads the slot's `:live` field and the server's
//! `TIME`, two plain commands in that order in one pipeline, and runs the script only when they do
//! not answer.
//!
//! The look only ever answers what the script would have answered when the field was read:
//! `running`, when another token holds the slot with a lease that ends after the server's `TIME`
//! read just after it (so it was live at the read). Everything else (a new run, an ended one, a
//! takeover of an expired lease, our own retry with the same token) is the script's, as before, as
//! is anything the look cannot read cleanly (a key of another type, a value that is not a run, a
//! server that refuses the commands), which the script then names. A look writes nothing, as a
//! losing claim script never did. Ended runs are left to the script: asking :results and the job's
//! format as well would cost every look three more commands (and a MULTI, to read them as one) for
//! an answer a herd rarely needs, the run being still in progress when the other hosts arrive.
//! docs/store-format.md ("A claim's look") states the rule for other implementations.

use redis::Value;

use super::{ClaimOutcome, ClaimReply, ClaimRequest};
use crate::connection::Connection;
use crate::error::Result;
use crate::store::format::parse_time_reply;
use crate::store::state::decode_live;
use crate::store::{LeaseFormat, LeaseKeys};

/// The claim's answer when a look at the slot already decides it, else None (run the script).
/// Errors only when the connection failed (which the script would meet too, and the caller
/// retries); a reply it cannot use is None.
pub async fn answer(
    conn: &mut Connection,
    keys: &LeaseKeys,
    req: &ClaimRequest,
) -> Result<Option<ClaimReply>> {
    // Format 1 keeps a run in nine fields of :state: no single read answers. A cluster client may
    // send TIME to another node than the job's: the script is simpler there.
    if keys.format != LeaseFormat::V2 || conn.is_cluster() {
        return Ok(None);
    }
    let mut pipe = redis::pipe();
    pipe.cmd("HGET").arg(&keys.live).arg(req.slot).cmd("TIME");
    let look: Vec<Value> = match conn.replies(&pipe).await {
        Ok(values) => values,
        Err(e) if e.is_transient() => return Err(e),
        Err(_) => return Ok(None),
    };
    Ok(decide(keys, req, look))
}

/// The answer a look `[the slot's :live field, TIME]` gives, if any.
fn decide(keys: &LeaseKeys, req: &ClaimRequest, look: Vec<Value>) -> Option<ClaimReply> {
    let [live, time]: [Value; 2] = look.try_into().ok()?;
    let text: String = redis::from_redis_value(live).ok()?;
    let (secs, micros): (String, String) = redis::from_redis_value(time).ok()?;
    let now = parse_time_reply(&secs, &micros).ok()?;
    let run = decode_live(&keys.live, &req.slot.to_string(), &text).ok()?;
    (run.token != req.token && run.lease_end > now).then(|| ClaimReply {
        outcome: ClaimOutcome::Running,
        attempt: Some(run.attempt),
        lease_end: Some(run.lease_end),
        runner: run.runner,
        status: "running".to_string(),
        server_now: now,
        other_slot: None,
        fence: None,
        released: None,
    })
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

    /// A look at server time 100.000 s.
    fn look(live: Option<&str>) -> Vec<Value> {
        vec![
            live.map_or(Value::Nil, bulk),
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
            look(Some(&live("theirs", 100_001))),
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
    fn the_script_decides_everything_else() {
        let keys = LeaseKeys::new("cron:", "j");
        let req = request("mine");
        // Expired exactly now: a takeover is the script's.
        assert!(decide(&keys, &req, look(Some(&live("theirs", 100_000)))).is_none());
        // Our own token: a retry whose first reply was lost, answered won by the script.
        assert!(decide(&keys, &req, look(Some(&live("mine", 200_000)))).is_none());
        // Not in progress: new, ended, paused, trimmed or a format 1 job's.
        assert!(decide(&keys, &req, look(None)).is_none());
        // Garbage in :live, or a key of another type: the script names it.
        assert!(decide(&keys, &req, look(Some("{"))).is_none());
        // A reply that is no string (a server error in its place, as `replies` gives it).
        let wrongtype = vec![
            Value::Array(vec![]),
            Value::Array(vec![bulk("100"), bulk("0")]),
        ];
        assert!(decide(&keys, &req, wrongtype).is_none());
    }
}
