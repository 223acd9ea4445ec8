//! The lease scripts' contract on the Rust side: one type per script call (as tokio's mini-redis
//! has one per command), each the one place that knows its script, the order of its `ARGV` and the
//! shape of its reply. Every store format's scripts take the same arguments and answer the same
//! shape (`lua/lease/v<N>/*.lua` document them); [`call`] runs one in the job's format.
//!
//! A reply of another shape is bad data naming one of the job's keys (exit code 92), never a
//! guess: a script of a newer build, or a key another program wrote, must not be read as an
//! answer.

use std::sync::LazyLock;
use std::time::Duration;

use super::{
    FinishStatus, ReleaseOutcome, ReleaseReply, Released, ScriptReply, SkipOutcome, TokenOutcome,
};
use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::scripts::LuaScript;
use crate::store::LeaseKeys;
use crate::store::lease::Scripts;
use crate::strategy::claim::{ClaimOutcome, ClaimRequest, HistoryPolicy};
use crate::time::millis;

/// A call of one lease script.
pub trait LeaseCall {
    /// What its reply decodes to.
    type Reply;
    /// The script of a format's set that it runs.
    fn pick(scripts: &Scripts) -> &'static LazyLock<LuaScript>;
    /// Its `ARGV`, in the order the script documents.
    fn args(&self) -> Vec<String>;
    /// Its reply, decoded.
    fn decode(&self, keys: &LeaseKeys, reply: Vec<String>) -> Result<Self::Reply>;
}

/// Runs `c` on `keys`' job, in the format its scripts write (following a job converted meanwhile:
/// [`crate::store::LeaseFormat::eval`]).
pub async fn call<C: LeaseCall>(
    conn: &mut Connection,
    keys: &LeaseKeys,
    c: &C,
) -> Result<C::Reply> {
    let reply = keys.format.eval(conn, keys, C::pick, &c.args()).await?;
    c.decode(keys, reply)
}

/// claim: `slot, token, runner, lease_ms, max_attempts, allow_overlap (0|1), kind, history_size,
/// history_ttl_ms (0 = none), keep_ms, continues, owed_ms`; answers a [`ScriptReply`] with a [`ClaimOutcome`].
pub struct Claim<'a>(pub &'a ClaimRequest);

impl LeaseCall for Claim<'_> {
    type Reply = ScriptReply<ClaimOutcome>;

    fn pick(scripts: &Scripts) -> &'static LazyLock<LuaScript> {
        scripts.claim
    }

    fn args(&self) -> Vec<String> {
        let req = self.0;
        vec![
            req.slot.to_string(),
            req.token.clone(),
            req.runner.clone(),
            millis(req.lease).to_string(),
            req.max_attempts.to_string(),
            flag(req.overlap.claims_beside_a_live_run()),
            req.kind.as_str().to_string(),
            req.history.size.to_string(),
            req.history.ttl.map(millis).unwrap_or(0).to_string(),
            millis(req.history.keep_claimable).to_string(),
            flag(req.continues),
            millis(req.owed_within).to_string(),
        ]
    }

    fn decode(&self, keys: &LeaseKeys, reply: Vec<String>) -> Result<Self::Reply> {
        script_reply(&keys.state, &reply, |o| match o {
            "won" => Some(ClaimOutcome::Won),
            "overlap" => Some(ClaimOutcome::Overlap),
            "done" => Some(ClaimOutcome::Done),
            "running" => Some(ClaimOutcome::Running),
            "paused" => Some(ClaimOutcome::Paused),
            _ => None,
        })
    }
}

/// heartbeat: `slot, token, lease_ms`; answers a [`ScriptReply`] with a [`TokenOutcome`].
pub struct Heartbeat<'a> {
    pub slot: i64,
    pub token: &'a str,
    pub lease: Duration,
    /// The holder gives the run up, its command stopped: the lease ends now ([`super::hand_over`]).
    pub hand_over: bool,
}

impl LeaseCall for Heartbeat<'_> {
    type Reply = ScriptReply<TokenOutcome>;

    fn pick(scripts: &Scripts) -> &'static LazyLock<LuaScript> {
        scripts.heartbeat
    }

    fn args(&self) -> Vec<String> {
        let mut args = vec![
            self.slot.to_string(),
            self.token.to_string(),
            millis(self.lease).to_string(),
        ];
        if self.hand_over {
            args.push("hand_over".to_string());
        }
        args
    }

    fn decode(&self, keys: &LeaseKeys, reply: Vec<String>) -> Result<Self::Reply> {
        script_reply(&keys.state, &reply, token_outcome)
    }
}

/// finish: `slot, token, status (finished|failed), result_json, by_itself ('1': the command ended
/// by itself, not stopped for a release)[, retries, delay_ms, backoff, max_delay_ms]`; answers
/// like heartbeat, or retry.
pub struct Finish<'a> {
    pub slot: i64,
    pub token: &'a str,
    pub status: FinishStatus,
    /// Valid JSON text (an object, or `null`).
    pub result_json: &'a str,
    pub by_itself: bool,
    /// Sent only with a failure that counts (`RetryPolicy::counts`).
    pub retry: Option<&'a crate::strategy::retry::RetryPolicy>,
}

impl LeaseCall for Finish<'_> {
    type Reply = ScriptReply<TokenOutcome>;

    fn pick(scripts: &Scripts) -> &'static LazyLock<LuaScript> {
        scripts.finish
    }

    fn args(&self) -> Vec<String> {
        let status = match self.status {
            FinishStatus::Finished => "finished",
            FinishStatus::Failed => "failed",
        };
        let mut args = vec![
            self.slot.to_string(),
            self.token.to_string(),
            status.to_string(),
            self.result_json.to_string(),
            if self.by_itself { "1" } else { "" }.to_string(),
        ];
        if let Some(retry) = self.retry.filter(|r| r.retries > 0) {
            args.extend(retry.script_args());
        }
        args
    }

    fn decode(&self, keys: &LeaseKeys, reply: Vec<String>) -> Result<Self::Reply> {
        script_reply(&keys.state, &reply, token_outcome)
    }
}

/// release: `slot, expected_attempt ('' for any), status, result_json, force (0|1)`; answers
/// `{outcome, attempt, runner, token, server_now, lease_end}`.
pub struct Release<'a> {
    pub slot: i64,
    pub expected_attempt: Option<u32>,
    pub status: &'a str,
    pub result_json: &'a str,
    pub force: bool,
}

impl LeaseCall for Release<'_> {
    type Reply = ReleaseReply;

    fn pick(scripts: &Scripts) -> &'static LazyLock<LuaScript> {
        scripts.release
    }

    fn args(&self) -> Vec<String> {
        vec![
            self.slot.to_string(),
            self.expected_attempt
                .map_or(String::new(), |a| a.to_string()),
            self.status.to_string(),
            self.result_json.to_string(),
            flag(self.force),
        ]
    }

    fn decode(&self, keys: &LeaseKeys, reply: Vec<String>) -> Result<Self::Reply> {
        let bad = || {
            Error::corrupt(
                &keys.state,
                format!("the release script answered {reply:?}"),
            )
        };
        let [outcome, attempt, runner, token, now, lease_end] = reply.as_slice() else {
            return Err(bad());
        };
        Ok(ReleaseReply {
            outcome: match outcome.as_str() {
                "released" => ReleaseOutcome::Released,
                "releasing" => ReleaseOutcome::Releasing,
                "none" => ReleaseOutcome::None,
                "changed" => ReleaseOutcome::Changed,
                _ => return Err(bad()),
            },
            attempt: attempt.parse().ok(),
            runner: runner.clone(),
            token: token.clone(),
            server_now: now.parse().map_err(|_| bad())?,
            lease_end: lease_end.parse().ok(),
        })
    }
}

/// One call of trim: `history_size, history_ttl_ms (0 = none), keep_ms, budget, dry_run (0|1),
/// cursor ('-inf' or '(<slot>'), entries planned by earlier calls of this dry run`; answers
/// `{complete (0|1), cursor, slot...}`.
pub struct TrimStep<'a> {
    pub policy: &'a HistoryPolicy,
    /// How many runs this call may look at.
    pub budget: usize,
    pub dry_run: bool,
    pub cursor: &'a str,
    pub already: usize,
}

/// What one [`TrimStep`] did.
pub struct TrimStepReply {
    /// Nothing more can go.
    pub complete: bool,
    /// Where the next call goes on.
    pub cursor: String,
    /// The slots trimmed (with a dry run: that would be).
    pub slots: Vec<i64>,
}

impl LeaseCall for TrimStep<'_> {
    type Reply = TrimStepReply;

    fn pick(scripts: &Scripts) -> &'static LazyLock<LuaScript> {
        scripts.trim
    }

    fn args(&self) -> Vec<String> {
        vec![
            self.policy.size.to_string(),
            self.policy.ttl.map(millis).unwrap_or(0).to_string(),
            millis(self.policy.keep_claimable).to_string(),
            self.budget.to_string(),
            flag(self.dry_run),
            self.cursor.to_string(),
            self.already.to_string(),
        ]
    }

    fn decode(&self, keys: &LeaseKeys, reply: Vec<String>) -> Result<Self::Reply> {
        let [complete, next, slots @ ..] = reply.as_slice() else {
            return Err(Error::corrupt(
                &keys.slots,
                format!("the trim script answered {reply:?}"),
            ));
        };
        let slots = slots
            .iter()
            .map(|s| {
                s.parse()
                    .map_err(|_| Error::corrupt(&keys.slots, format!("member {s:?} is not a slot")))
            })
            .collect::<Result<_>>()?;
        Ok(TrimStepReply {
            complete: complete == "1",
            cursor: next.clone(),
            slots,
        })
    }
}

/// skip: `slot, runner, reason`; answers `{outcome, status, server_now}`.
pub struct Skip<'a> {
    pub slot: i64,
    pub runner: &'a str,
    pub reason: &'a str,
}

impl LeaseCall for Skip<'_> {
    type Reply = SkipOutcome;

    fn pick(scripts: &Scripts) -> &'static LazyLock<LuaScript> {
        scripts.skip
    }

    fn args(&self) -> Vec<String> {
        vec![
            self.slot.to_string(),
            self.runner.to_string(),
            self.reason.to_string(),
        ]
    }

    fn decode(&self, keys: &LeaseKeys, reply: Vec<String>) -> Result<Self::Reply> {
        match reply.as_slice() {
            [outcome, ..] if outcome == "skipped" => Ok(SkipOutcome::Skipped),
            [outcome, status, ..] if outcome == "running" || outcome == "done" => {
                Ok(SkipOutcome::Claimed(status.clone()))
            }
            [outcome, ..] if outcome == "paused" => Ok(SkipOutcome::Paused),
            _ => Err(Error::corrupt(
                &keys.job,
                format!("the skip script answered {reply:?}"),
            )),
        }
    }
}

/// unskip: `slot`; answers `{unskipped | not_skipped}`: whether the skip was taken back.
pub struct Unskip {
    pub slot: i64,
}

impl LeaseCall for Unskip {
    type Reply = bool;

    fn pick(scripts: &Scripts) -> &'static LazyLock<LuaScript> {
        scripts.unskip
    }

    fn args(&self) -> Vec<String> {
        vec![self.slot.to_string()]
    }

    fn decode(&self, keys: &LeaseKeys, reply: Vec<String>) -> Result<Self::Reply> {
        match reply.first().map(String::as_str) {
            Some("unskipped") => Ok(true),
            Some("not_skipped") => Ok(false),
            _ => Err(Error::corrupt(
                &keys.job,
                format!("the unskip script answered {reply:?}"),
            )),
        }
    }
}

fn flag(on: bool) -> String {
    if on { "1" } else { "0" }.to_string()
}

fn token_outcome(o: &str) -> Option<TokenOutcome> {
    match o {
        "ok" => Some(TokenOutcome::Ok),
        "lost" => Some(TokenOutcome::Lost),
        "released" => Some(TokenOutcome::Released),
        "retry" => Some(TokenOutcome::Retry),
        _ => None,
    }
}

/// The reply of claim, heartbeat and finish: `{outcome, attempt, lease_end, runner, status,
/// server_now[, other_slot, fence, released_by, reason, other_started_at]}`.
pub(super) fn script_reply<O>(
    key: &str,
    reply: &[String],
    outcome: impl Fn(&str) -> Option<O>,
) -> Result<ScriptReply<O>> {
    let bad = || Error::corrupt(key, format!("the script answered {reply:?}"));
    if reply.len() < 6 {
        return Err(bad());
    }
    let optional_int = |text: &str| -> Result<Option<i64>> {
        if text.is_empty() {
            Ok(None)
        } else {
            text.parse().map(Some).map_err(|_| {
                Error::corrupt(
                    key,
                    format!("a run holds {text:?} where an integer belongs"),
                )
            })
        }
    };
    let optional = |i: usize| -> Result<Option<i64>> {
        match reply.get(i) {
            Some(text) => optional_int(text),
            None => Ok(None),
        }
    };
    Ok(ScriptReply {
        outcome: outcome(&reply[0]).ok_or_else(bad)?,
        attempt: optional_int(&reply[1])?
            .map(|a| u32::try_from(a).map_err(|_| bad()))
            .transpose()?,
        lease_end: optional_int(&reply[2])?,
        runner: reply[3].clone(),
        status: reply[4].clone(),
        server_now: optional_int(&reply[5])?.ok_or_else(bad)?,
        other_slot: optional(6)?,
        fence: optional(7)?,
        released: match (reply.get(8), reply.get(9)) {
            (Some(by), Some(reason)) if !by.is_empty() || !reason.is_empty() => Some(Released {
                by: by.clone(),
                reason: reason.clone(),
            }),
            _ => None,
        },
        // A finish answered retry says there which retry is due; a claim's overlap, when the
        // other run started.
        other_started_at: if reply[0] == "retry" {
            None
        } else {
            optional(10)?
        },
        retry: if reply[0] == "retry" {
            optional(10)?.and_then(|n| u32::try_from(n).ok())
        } else {
            None
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_claim_replies() {
        let r = script_reply(
            "k",
            &strings(&["overlap", "1", "5000", "h:1", "running", "4000", "900"]),
            |o| (o == "overlap").then_some(ClaimOutcome::Overlap),
        )
        .unwrap();
        assert_eq!(r.outcome, ClaimOutcome::Overlap);
        assert_eq!(r.attempt, Some(1));
        assert_eq!(r.lease_end, Some(5000));
        assert_eq!(r.other_slot, Some(900));

        let r = script_reply(
            "k",
            &strings(&["lost", "", "", "", "", "4000"]),
            token_outcome,
        )
        .unwrap();
        assert_eq!(r.outcome, TokenOutcome::Lost);
        assert_eq!(r.attempt, None);
    }

    #[test]
    fn garbage_replies_name_the_key() {
        for bad in [
            strings(&["won"]),
            strings(&["maybe", "1", "1", "", "", "1"]),
            strings(&["ok", "x", "1", "", "", "1"]),
            strings(&["ok", "1", "1", "", "", ""]),
        ] {
            let err = script_reply("{cron:j}:state", &bad, token_outcome).unwrap_err();
            assert!(err.to_string().contains("{cron:j}:state"));
        }
    }
}
