//! The claim-only strategies (stream-id, idmp, script): one command decides who runs a slot, and
//! nothing more: no leases, no backups, no attempts. Each touches one key, so they need no hash tag.
//!
//! A claim answers `won`, or `done` with status `claimed` (another instance claimed the run; these
//! strategies cannot tell whether it still runs). `finish` records the result in `:results` after
//! checking that the caller's token is the one in the claim.

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::scripts;
use crate::server::ServerInfo;
use crate::store::read::{self, RunEntry};
use crate::store::{ClaimKeys, RunKind};
use crate::strategy::Strategy;
use crate::strategy::lease::{
    ClaimOutcome, ClaimReply, FinishStatus, ScriptReply, TokenOutcome, TokenReply,
};
use crate::time::millis;

/// What a claim-only claim needs.
#[derive(Debug, Clone)]
pub struct Claim<'a> {
    pub slot: i64,
    pub token: &'a str,
    pub runner: &'a str,
    pub kind: RunKind,
    /// The server's clock when the command started (claimed_at for stream-id and manual runs).
    pub server_now: i64,
}

/// Refuses idmp on a server that cannot do it, naming the server, before anything is written.
pub fn require_idmp(server: &ServerInfo) -> Result<()> {
    if server.supports_idmp() {
        return Ok(());
    }
    Err(Error::Unsupported(format!(
        "the idmp strategy needs idempotent XADD (Redis 8.6 or newer), and this server is {}\n  hint: use --strategy stream-id or script (same behaviour, any server), or lease (the default, with leases and backups)",
        server.describe()
    )))
}

pub async fn claim(
    conn: &mut Connection,
    keys: &ClaimKeys,
    job: &str,
    strategy: Strategy,
    c: &Claim<'_>,
) -> Result<ClaimReply> {
    if c.kind == RunKind::Manual {
        // A manual run is new by definition: it only needs recording.
        let cmd = entry_cmd(&keys.manual, "*", None, c);
        let _: String = conn.query(&cmd).await?;
        return Ok(won(c));
    }
    match strategy {
        Strategy::Lease => Err(Error::Other("the lease strategy is not claim-only".into())),
        Strategy::StreamId => {
            if c.slot <= 0 {
                return Err(Error::usage(
                    "the stream-id strategy needs a slot after 1970-01-01T00:00:00.000Z",
                ));
            }
            let cmd = entry_cmd(&keys.runs, &format!("{}-0", c.slot), None, c);
            match conn.query::<String>(&cmd).await {
                Ok(_) => Ok(won(c)),
                Err(Error::Redis(text)) if text.contains("equal or smaller") => {
                    // Our own entry when an earlier try's reply was lost: the claim is ours.
                    let holder = entry_for_slot(conn, &keys.runs, strategy, c.slot).await?;
                    Ok(idmp_outcome(c, holder.as_ref()))
                }
                Err(e) => Err(e),
            }
        }
        Strategy::Script { window } => {
            let args = vec![
                c.slot.to_string(),
                c.token.to_string(),
                c.runner.to_string(),
                millis(window).to_string(),
                c.kind.as_str().to_string(),
            ];
            let reply: Vec<String> = conn
                .eval(&scripts::CLAIM_WINDOW, &[&keys.runs], &args)
                .await?;
            match reply.first().map(String::as_str) {
                Some("won") => Ok(won(c)),
                // The existing claim holds our token: an earlier try's reply was lost.
                Some("done") if reply.get(1).map(String::as_str) == Some(c.token) => Ok(won(c)),
                Some("done") => Ok(ScriptReply {
                    runner: reply.get(2).cloned().unwrap_or_default(),
                    ..taken(c, None)
                }),
                _ => Err(Error::corrupt(
                    &keys.runs,
                    format!("the claim script answered {reply:?}"),
                )),
            }
        }
        Strategy::Idmp {
            duration_secs,
            max_size,
        } => {
            let _: i64 = conn
                .eval(
                    &scripts::IDMP_PREPARE,
                    &[&keys.runs],
                    &[duration_secs.to_string(), max_size.to_string()],
                )
                .await?;
            let id: String = conn
                .query(&entry_cmd(&keys.runs, "*", Some((job, c.slot)), c))
                .await?;
            let value: redis::Value = conn
                .query(redis::cmd("XRANGE").arg(&keys.runs).arg(&id).arg(&id))
                .await?;
            let entry = read::stream_entries(&keys.runs, value)?.into_iter().next();
            Ok(idmp_outcome(c, entry.as_ref()))
        }
    }
}

/// `XADD <key> [IDMP <job> <slot>] <id> slot .. token .. runner .. kind .. claimed_at ..`
pub fn entry_cmd(key: &str, id: &str, idmp: Option<(&str, i64)>, c: &Claim<'_>) -> redis::Cmd {
    let mut cmd = redis::cmd("XADD");
    cmd.arg(key);
    if let Some((job, slot)) = idmp {
        cmd.arg("IDMP").arg(job).arg(slot);
    }
    cmd.arg(id)
        .arg("slot")
        .arg(c.slot)
        .arg("token")
        .arg(c.token)
        .arg("runner")
        .arg(c.runner)
        .arg("kind")
        .arg(c.kind.as_str())
        .arg("claimed_at")
        .arg(c.server_now);
    cmd
}

/// The run's claim entry decides: we won if it holds our token (idmp answers every claimant with the
/// first entry's ID; stream-id and script find the entry of a retried claim of ours).
pub fn idmp_outcome(c: &Claim<'_>, entry: Option<&RunEntry>) -> ClaimReply {
    match entry {
        Some(e) if e.token == c.token => won(c),
        other => taken(c, other),
    }
}

fn won(c: &Claim<'_>) -> ClaimReply {
    ScriptReply {
        outcome: ClaimOutcome::Won,
        attempt: None,
        lease_end: None,
        runner: c.runner.to_string(),
        status: "claimed".to_string(),
        server_now: c.server_now,
        other_slot: None,
    }
}

fn taken(c: &Claim<'_>, holder: Option<&RunEntry>) -> ClaimReply {
    ScriptReply {
        outcome: ClaimOutcome::Done,
        attempt: None,
        lease_end: None,
        runner: holder.map(|h| h.runner.clone()).unwrap_or_default(),
        status: "claimed".to_string(),
        server_now: c.server_now,
        other_slot: None,
    }
}

/// The claim of `slot` in a runs (or manual) stream, if it can be found.
async fn entry_for_slot(
    conn: &mut Connection,
    key: &str,
    strategy: Strategy,
    slot: i64,
) -> Result<Option<RunEntry>> {
    if strategy == Strategy::StreamId && key.ends_with(":runs") {
        let id = format!("{slot}-0");
        let value: redis::Value = conn
            .query(redis::cmd("XRANGE").arg(key).arg(&id).arg(&id))
            .await?;
        return Ok(read::stream_entries(key, value)?.into_iter().next());
    }
    // Auto IDs: look through the newest claims (a finish comes soon after its claim).
    let entries = read::newest_entries(conn, key, 1000).await?;
    Ok(entries.into_iter().find(|e| e.slot == slot))
}

/// Records how a claimed run ended, if `token` is the claim's.
#[allow(clippy::too_many_arguments)]
pub async fn finish(
    conn: &mut Connection,
    keys: &ClaimKeys,
    strategy: Strategy,
    kind: RunKind,
    slot: i64,
    token: &str,
    status: FinishStatus,
    result_json: &str,
    server_now: i64,
) -> Result<TokenReply> {
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

/// Trims a claim-only job's history: its streams to about `keep` entries each and, with
/// `older_than`, entries whose ID time is older than that; never an entry younger than `protect`
/// (the script strategy looks back that far, and stream-id never forgets through its last ID
/// anyway). Results of removed runs go with them. Returns the removed runs' slots.
#[allow(clippy::too_many_arguments)]
pub async fn trim(
    conn: &mut Connection,
    keys: &ClaimKeys,
    keep: u32,
    older_than: Option<std::time::Duration>,
    protect: std::time::Duration,
    now: i64,
    dry_run: bool,
) -> Result<Vec<i64>> {
    let mut removed = Vec::new();
    for stream in [&keys.runs, &keys.manual] {
        let len: u64 = conn.query(redis::cmd("XLEN").arg(stream)).await?;
        removed.extend(
            trim_stream(
                conn, keys, stream, len, keep, older_than, protect, now, dry_run, 500,
            )
            .await?,
        );
    }
    Ok(removed)
}

/// Trims after a won claim, within the strategy's memory: the oldest entries of `stream` beyond the
/// history size (and past the TTL), never one younger than the protection (for script, its window:
/// the claim looks back that far), and never the newest (stream-id's last ID is what refuses old
/// slots). One XLEN when there is nothing to trim; a short page when there is.
pub async fn trim_after_claim(
    conn: &mut Connection,
    keys: &ClaimKeys,
    stream: &str,
    history: &crate::strategy::lease::HistoryPolicy,
    protect: std::time::Duration,
    now: i64,
) -> Result<()> {
    let len: u64 = conn.query(redis::cmd("XLEN").arg(stream)).await?;
    if len <= u64::from(history.size) && history.ttl.is_none() {
        return Ok(());
    }
    trim_stream(
        conn,
        keys,
        stream,
        len,
        history.size,
        history.ttl,
        protect,
        now,
        false,
        16,
    )
    .await
    .map(|_| ())
}

#[allow(clippy::too_many_arguments)]
async fn trim_stream(
    conn: &mut Connection,
    keys: &ClaimKeys,
    stream: &str,
    len: u64,
    keep: u32,
    older_than: Option<std::time::Duration>,
    protect: std::time::Duration,
    now: i64,
    dry_run: bool,
    page_size: usize,
) -> Result<Vec<i64>> {
    let protect_from = now - millis(protect);
    let expire_before = older_than.map(|d| now - millis(d));
    let mut removed = Vec::new();
    {
        // The newest entry always stays (stream-id refuses slots up to it).
        let mut excess = len.saturating_sub(u64::from(keep.max(1)));
        let mut left = len.saturating_sub(1);
        let mut cursor = "-".to_string();
        'walk: loop {
            let value: redis::Value = conn
                .query(
                    redis::cmd("XRANGE")
                        .arg(stream)
                        .arg(&cursor)
                        .arg("+")
                        .arg("COUNT")
                        .arg(page_size),
                )
                .await?;
            let page = read::stream_entries(stream, value)?;
            if page.is_empty() {
                break;
            }
            let mut doomed = Vec::new();
            for e in &page {
                let id_ms: i64 =
                    e.id.split('-')
                        .next()
                        .and_then(|ms| ms.parse().ok())
                        .unwrap_or(i64::MAX);
                let expired = expire_before.is_some_and(|t| id_ms < t);
                if (excess == 0 && !expired) || id_ms >= protect_from || left == 0 {
                    break;
                }
                doomed.push(e);
                excess = excess.saturating_sub(1);
                left -= 1;
            }
            let complete = doomed.len() == page.len();
            if !dry_run && !doomed.is_empty() {
                let mut del = redis::cmd("XDEL");
                del.arg(stream);
                for e in &doomed {
                    del.arg(&e.id);
                }
                let mut pipe = redis::pipe();
                pipe.add_command(del);
                for e in &doomed {
                    pipe.cmd("ZREMRANGEBYSCORE")
                        .arg(&keys.results)
                        .arg(e.slot)
                        .arg(e.slot);
                }
                for reply in conn.replies(&pipe).await? {
                    read::decode::<i64>(&keys.results, reply)?;
                }
            }
            removed.extend(doomed.iter().map(|e| e.slot));
            if !complete {
                break 'walk;
            }
            cursor = page
                .last()
                .map_or("0-0".to_string(), |e| next_stream_id(&e.id));
        }
    }
    Ok(removed)
}

/// The smallest stream ID after `id` (`XRANGE (id` needs Redis 6.2; this works on 5).
fn next_stream_id(id: &str) -> String {
    match id
        .split_once('-')
        .map(|(ms, seq)| (ms.parse::<u64>(), seq.parse::<u64>()))
    {
        Some((Ok(ms), Ok(u64::MAX))) => format!("{}-0", ms + 1),
        Some((Ok(ms), Ok(seq))) => format!("{ms}-{}", seq + 1),
        _ => id.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn stream_ids_step_to_the_next() {
        assert_eq!(super::next_stream_id("1000-0"), "1000-1");
        assert_eq!(super::next_stream_id(&format!("7-{}", u64::MAX)), "8-0");
    }

    use super::*;

    fn words(cmd: &redis::Cmd) -> Vec<String> {
        cmd.args_iter()
            .map(|a| match a {
                redis::Arg::Simple(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                _ => "<cursor>".into(),
            })
            .collect()
    }

    fn claim(token: &str) -> Claim<'_> {
        Claim {
            slot: 1_791_633_610_000,
            token,
            runner: "host-a:1",
            kind: RunKind::Scheduled,
            server_now: 1_791_633_610_012,
        }
    }

    #[test]
    fn idmp_xadd_names_the_job_and_slot_as_idempotency_key() {
        let c = claim("a1");
        let cmd = entry_cmd("cron:sync:runs", "*", Some(("sync", c.slot)), &c);
        assert_eq!(
            words(&cmd),
            [
                "XADD",
                "cron:sync:runs",
                "IDMP",
                "sync",
                "1791633610000",
                "*",
                "slot",
                "1791633610000",
                "token",
                "a1",
                "runner",
                "host-a:1",
                "kind",
                "scheduled",
                "claimed_at",
                "1791633610012"
            ]
        );
    }

    #[test]
    fn stream_id_xadd_uses_the_slot_as_entry_id() {
        let c = claim("a1");
        let cmd = entry_cmd("cron:sync:runs", "1791633610000-0", None, &c);
        assert_eq!(
            words(&cmd)[..4],
            ["XADD", "cron:sync:runs", "1791633610000-0", "slot"]
        );
    }

    #[test]
    fn idmp_replies_are_won_only_with_our_token() {
        let ours = claim("a1");
        let entry = |token: &str| RunEntry {
            id: "1791633610012-0".into(),
            slot: ours.slot,
            attempt: None,
            token: token.into(),
            runner: "host-b:2".into(),
            status: None,
            claimed_at: None,
            ended_at: None,
            kind: "scheduled".into(),
        };
        assert_eq!(
            idmp_outcome(&ours, Some(&entry("a1"))).outcome,
            ClaimOutcome::Won
        );
        let lost = idmp_outcome(&ours, Some(&entry("b7")));
        assert_eq!(lost.outcome, ClaimOutcome::Done);
        assert_eq!(lost.runner, "host-b:2");
        assert_eq!(lost.status, "claimed");
        assert_eq!(idmp_outcome(&ours, None).outcome, ClaimOutcome::Done);
    }

    #[test]
    fn idmp_is_refused_where_the_server_lacks_it() {
        let valkey = ServerInfo::parse("server_name:valkey\r\nvalkey_version:8.0.1\r\n");
        let err = require_idmp(&valkey).unwrap_err().to_string();
        assert!(
            err.contains("Valkey 8.0.1") && err.contains("stream-id"),
            "{err}"
        );
        assert!(require_idmp(&ServerInfo::parse("redis_version:7.4.0\r\n")).is_err());
        assert!(require_idmp(&ServerInfo::parse("redis_version:8.6.1\r\n")).is_ok());
    }
}
