//! A claim looks before it leaps: test, then test-and-set.
//!
//! At the top of a minute every host of a fleet claims the same runs, and all but one lose. Each
//! claim script costs the shared Redis ~10 µs of Lua (bench/server.sh), and Redis runs one at a
//! time, so a herd of losing scripts is what every other client of that Redis waits behind. Most
//! of those answers are decided before the script runs: the run is held by another host under a
//! live lease. So a claim first reads the slot's run (format 2: its `:live` field; format 1: its
//! `:state` fields, one `HMGET`) and the server's `TIME`, two plain commands in that order in one
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
use crate::store::state::{RUN_FIELDS, decode_live, field_name};
use crate::store::{LeaseFormat, LeaseKeys};

/// The claim's answer when a look at the slot already decides it, else None (run the script).
/// Errors only when the connection failed (which the script would meet too, and the caller
/// retries); a reply it cannot use is None.
pub async fn answer(
    conn: &mut Connection,
    keys: &LeaseKeys,
    req: &ClaimRequest,
) -> Result<Option<ClaimReply>> {
    // A cluster client may send TIME to another node than the job's: the script is simpler there.
    if conn.is_cluster() {
        return Ok(None);
    }
    let mut pipe = redis::pipe();
    match keys.format {
        LeaseFormat::V1 => {
            let mut read = redis::cmd("HMGET");
            read.arg(&keys.state);
            // Every field a run may have, in RUN_FIELDS' order: the script checks them all
            // before it answers (lua/lib.lua `validate_run`), and so does the look.
            for name in RUN_FIELDS {
                read.arg(field_name(req.slot, name));
            }
            pipe.add_command(read);
        }
        LeaseFormat::V2 => {
            pipe.cmd("HGET").arg(&keys.live).arg(req.slot);
        }
    }
    pipe.cmd("TIME");
    let look: Vec<Value> = match conn.replies(&pipe).await {
        Ok(values) => values,
        Err(e) if e.is_transient() => return Err(e),
        Err(_) => return Ok(None),
    };
    Ok(match keys.format {
        LeaseFormat::V1 => decide_format_1(req, look),
        LeaseFormat::V2 => decide(keys, req, look),
    })
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

/// The answer a format 1 look `[HMGET of RUN_FIELDS, TIME]` gives, if any.
fn decide_format_1(req: &ClaimRequest, look: Vec<Value>) -> Option<ClaimReply> {
    let [fields, time]: [Value; 2] = look.try_into().ok()?;
    let [
        status,
        attempt,
        token,
        runner,
        lease_end,
        claimed_at,
        started_at,
        finished_at,
        kind,
    ]: [Option<String>; 9] = redis::from_redis_value(fields).ok()?;
    let (secs, micros): (String, String) = redis::from_redis_value(time).ok()?;
    let now = parse_time_reply(&secs, &micros).ok()?;
    let status = status?;
    // As the script's validate_run: a run in progress has every field but finished_at and kind;
    // an ended one keeps fewer as it ages; whatever is there must be sound. Anything else is the
    // script's to refuse, naming the field.
    let running = match status.as_str() {
        "running" => true,
        "finished" | "failed" | "interrupted" => false,
        _ => return None,
    };
    let int = |text: &Option<String>| -> Option<Option<i64>> {
        match text {
            None => Some(None),
            Some(t) if is_int(t) => Some(t.parse().ok()),
            Some(_) => None,
        }
    };
    let attempt = int(&attempt)?;
    let lease_end = int(&lease_end)?;
    let (claimed_at, started_at) = (int(&claimed_at)?, int(&started_at)?);
    int(&finished_at)?;
    if attempt.is_some_and(|a| !(1..=1_000_000).contains(&a))
        || token.as_deref() == Some("")
        || kind
            .as_deref()
            .is_some_and(|k| k != "scheduled" && k != "manual")
    {
        return None;
    }
    let whole = attempt.is_some()
        && token.is_some()
        && lease_end.is_some()
        && claimed_at.is_some()
        && started_at.is_some();
    if running && !whole {
        return None;
    }
    let reply = |outcome| ClaimReply {
        outcome,
        attempt: attempt.and_then(|a| u32::try_from(a).ok()),
        lease_end,
        runner: runner.clone().unwrap_or_default(),
        status: status.clone(),
        server_now: now,
        other_slot: None,
        fence: None,
        released: None,
    };
    if !running {
        return Some(reply(ClaimOutcome::Done));
    }
    (token.as_deref() != Some(req.token.as_str()) && lease_end? > now)
        .then(|| reply(ClaimOutcome::Running))
}

/// An integer as the scripts accept one (lua/lib.lua `is_int`): an optional minus sign and at most
/// 16 characters of decimal digits.
fn is_int(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    text.len() <= 16 && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
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

    /// A format 1 look at server time 100.000 s: [status, attempt, token, runner, lease_end],
    /// claimed_at and started_at 1, no finished_at or kind.
    fn look_1(fields: [Option<&str>; 5]) -> Vec<Value> {
        let times = if fields[1].is_some() { Some("1") } else { None };
        let all = [
            fields[0], fields[1], fields[2], fields[3], fields[4], times, times, None, None,
        ];
        vec![
            Value::Array(all.iter().map(|f| f.map_or(Value::Nil, bulk)).collect()),
            Value::Array(vec![bulk("100"), bulk("0")]),
        ]
    }

    #[test]
    fn format_1_answers_running_and_final_statuses_only() {
        let req = request("mine");
        let running = |token, end| {
            look_1([
                Some("running"),
                Some("2"),
                Some(token),
                Some("other:9"),
                Some(end),
            ])
        };
        // Garbage the script refuses is the script's: an attempt out of range, a running run
        // without a token.
        let bad = look_1([Some("running"), Some("-3"), Some("x"), None, Some("100001")]);
        assert!(decide_format_1(&req, bad).is_none());
        let tokenless = look_1([Some("running"), Some("2"), None, None, Some("100001")]);
        assert!(decide_format_1(&req, tokenless).is_none());
        let got = decide_format_1(&req, running("theirs", "100001")).expect("answered");
        assert_eq!(got.outcome, ClaimOutcome::Running);
        assert_eq!((got.attempt, got.lease_end), (Some(2), Some(100_001)));
        // An ended run, whole or with its status alone (compacted): done, with that status.
        let got = decide_format_1(&req, look_1([Some("failed"), None, None, None, None]))
            .expect("answered");
        assert_eq!(
            (got.outcome, got.status.as_str()),
            (ClaimOutcome::Done, "failed")
        );
        // Expired, our own token, no state, garbage: the script's.
        assert!(decide_format_1(&req, running("theirs", "100000")).is_none());
        assert!(decide_format_1(&req, running("mine", "200000")).is_none());
        assert!(decide_format_1(&req, look_1([None, None, None, None, None])).is_none());
        assert!(decide_format_1(&req, running("theirs", "soon")).is_none());
        assert!(decide_format_1(&req, look_1([Some("skipped"), None, None, None, None])).is_none());
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
