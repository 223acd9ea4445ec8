//! Recording a claim-only run's result, once: the caller's token must be the claim's, and a run
//! that has a result already keeps it (`lua/claim_only/finish_claim_only.lua`).

use super::entry_for_slot;
use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::scripts;
use crate::store::{ClaimKeys, RunKind};
use crate::strategy::lease::{FinishStatus, ScriptReply, TokenOutcome, TokenReply};
use crate::strategy::{Ending, Strategy};

/// Records how a claimed run ended, if `ending.token` is the claim's.
pub async fn finish(
    conn: &mut Connection,
    keys: &ClaimKeys,
    strategy: Strategy,
    ending: &Ending<'_>,
) -> Result<TokenReply> {
    let Ending {
        kind,
        slot,
        token,
        status,
        result_json,
        ended_at: server_now,
        // Claim-only runs have no lease to release, nor to wait for a retry under.
        by_itself: _,
        retry: _,
    } = *ending;
    let stream = if kind == RunKind::Manual {
        &keys.manual
    } else {
        &keys.runs
    };
    let mut entry = entry_for_slot(conn, stream, strategy, slot).await?;
    if entry.is_none() && kind == RunKind::Scheduled {
        // `finish` does not know a run's kind: a manual run is in the other stream.
        entry = entry_for_slot(conn, &keys.manual, strategy, slot).await?;
    }
    let reply = |outcome, runner: String, status: String| ScriptReply {
        outcome,
        attempt: None,
        lease_end: None,
        runner,
        status,
        server_now,
        other_slot: None,
        fence: None,
        released: None,
        other_started_at: None,
        retry: None,
    };
    let Some(entry) = entry.filter(|e| e.token == token) else {
        return Ok(reply(TokenOutcome::Lost, String::new(), String::new()));
    };
    let status = match status {
        FinishStatus::Finished => "finished",
        FinishStatus::Failed => "failed",
    };
    let result: serde_json::Value = serde_json::from_str(result_json)
        .map_err(|e| Error::usage(format!("the result is not JSON: {e}")))?;
    let member = serde_json::json!({
        "slot": slot,
        "token": token,
        "runner": entry.runner,
        "status": status,
        "kind": entry.kind,
        "claimed_at": entry.claimed_at,
        "ended_at": server_now,
        "result": result,
    });
    let answer: Vec<String> = conn
        .eval(
            &scripts::FINISH_CLAIM_ONLY,
            &[&keys.results],
            &[slot.to_string(), token.to_string(), member.to_string()],
        )
        .await?;
    match answer.first().map(String::as_str) {
        Some("ok") => Ok(reply(TokenOutcome::Ok, entry.runner, status.to_string())),
        // Finished once already: one result per run.
        Some("done") => Ok(reply(
            TokenOutcome::Lost,
            entry.runner,
            answer.get(1).cloned().unwrap_or_default(),
        )),
        _ => Err(Error::corrupt(
            &keys.results,
            format!("the finish script answered {answer:?}"),
        )),
    }
}
