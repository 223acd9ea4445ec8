//! The claim-only strategies (stream-id, idmp, script): one command decides who runs a slot, and
//! nothing more: no leases, no backups, no attempts. Each touches one key, so they need no hash tag.
//!
//! A claim answers `won`, or `done` with status `claimed` (another instance claimed the run; these
//! strategies cannot tell whether it still runs). `finish` records the result in `:results` after
//! checking that the caller's token is the one in the claim ([`finish`]); claims and `anarchon
//! trim` trim the streams ([`trim`]).

mod finish;
mod trim;

pub use finish::finish;
pub use trim::{trim, trim_after_claim};

use crate::connection::Connection;
use crate::error::{Error, Message, Result};
use crate::scripts;
use crate::server::ServerInfo;
use crate::store::read::{self, RunEntry};
use crate::store::{ClaimKeys, RunKind};
use crate::strategy::Strategy;
use crate::strategy::claim::ClaimOutcome;
use crate::strategy::lease::{ClaimReply, ScriptReply};
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
    Err(Error::Unsupported(Message::from(format!(
        "the idmp strategy needs idempotent XADD (Redis 8.6 or newer), and this server is {}\n  hint: use --strategy stream-id or script (same behaviour, any server), or lease (the default, with leases and backups)",
        server.describe()
    ))))
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
                // Redis's documented refusal of an ID at or below the stream's top (code ERR).
                Err(Error::Redis { message, .. }) if message.contains("equal or smaller") => {
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
        fence: None,
        released: None,
        other_started_at: None,
        retry: None,
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
        fence: None,
        released: None,
        other_started_at: None,
        retry: None,
    }
}

/// The claim of `slot` in a runs (or manual) stream, if it can be found.
pub(super) async fn entry_for_slot(
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

#[cfg(test)]
mod tests {

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
        let err = require_idmp(&valkey).unwrap_err().with_hint();
        assert!(
            err.contains("Valkey 8.0.1") && err.contains("stream-id"),
            "{err}"
        );
        assert!(require_idmp(&ServerInfo::parse("redis_version:7.4.0\r\n")).is_err());
        assert!(require_idmp(&ServerInfo::parse("redis_version:8.6.1\r\n")).is_ok());
    }
}
