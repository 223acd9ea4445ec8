//! Manual runs asked of `anarchon cron`'s replicas (`anarchon run-now JOB` without a command), and
//! the replicas' presence that decides whether any replica would take one: two keys per prefix
//! (docs/store-format.md, "Run-now requests and replicas"):
//!
//! - `{<prefix>}:requests`, a stream: one entry per request (`job`, `slot`, `by`, `reason`),
//!   added with `XADD ... MAXLEN ~ 1000`; every daemon reads it with one blocking `XREAD` on a
//!   connection of its own, and each that has the job in its crontab claims the manual run at
//!   `slot` (the lease decides which one runs it);
//! - `{<prefix>}:replicas`, a hash: one field per live daemon (its runner name), refreshed every
//!   [`PRESENCE_EVERY`] with the server's time and the jobs it would run a request of; a field
//!   older than [`PRESENCE_STALE`] is a daemon gone.
//!
//! Both are in the hash tag `{<prefix>}` (one Redis Cluster slot for the pair), which no job's keys
//! share: a job's tag is `{<prefix><job>}` and a job's name is never empty.

use std::time::Duration;

use redis::Value;
use serde::{Deserialize, Serialize};

use crate::connection::Connection;
use crate::error::{Error, Result};

/// How often a daemon writes its presence (and at once when its crontab changes).
pub const PRESENCE_EVERY: Duration = Duration::from_secs(2);

/// A presence older than this (server clock) is a daemon gone: killed, stopped, or cut off.
pub const PRESENCE_STALE: Duration = Duration::from_secs(10);

/// A presence older than this is deleted by the next daemon that starts or prunes (a daemon
/// killed with -9 never deletes its own).
pub const PRESENCE_FORGOTTEN: Duration = Duration::from_secs(3600);

/// The stream's approximate length cap (`MAXLEN ~`).
pub const REQUESTS_KEPT: usize = 1000;

/// A request older than this by the server's clock when a daemon reads it is not acted on: its
/// requester has long given up on it (and recorded it skipped).
pub const REQUEST_STALE: Duration = Duration::from_secs(30);

/// `{<prefix>}:requests`.
pub fn requests_key(prefix: &str) -> String {
    format!("{{{prefix}}}:requests")
}

/// `{<prefix>}:replicas`.
pub fn replicas_key(prefix: &str) -> String {
    format!("{{{prefix}}}:replicas")
}

/// One request, as the stream entry holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The entry's ID.
    pub id: String,
    pub job: String,
    /// The manual run's slot: the server's time in ms when it was asked for.
    pub slot: i64,
    pub by: String,
    pub reason: Option<String>,
}

/// The `XADD` of an entry to the requests stream, kept about [`REQUESTS_KEPT`] long, its fields
/// to be added.
fn append_command(prefix: &str) -> redis::Cmd {
    let mut cmd = redis::cmd("XADD");
    cmd.arg(requests_key(prefix))
        .arg("MAXLEN")
        .arg("~")
        .arg(REQUESTS_KEPT)
        .arg("*");
    cmd
}

/// The `XADD` of a request.
pub fn request_command(
    prefix: &str,
    job: &str,
    slot: i64,
    by: &str,
    reason: Option<&str>,
) -> redis::Cmd {
    let mut cmd = append_command(prefix);
    cmd.arg("job")
        .arg(job)
        .arg("slot")
        .arg(slot)
        .arg("by")
        .arg(by);
    if let Some(reason) = reason.filter(|r| !r.is_empty()) {
        cmd.arg("reason").arg(reason);
    }
    cmd
}

/// A wake-up for the replicas standing by for a run: its holder handed it over (`anarchon cron`
/// shutting down: its lease ended now), so a backup takes it over at once rather than at its next
/// look. The entry's fields are `woke` (the job), `at` (the slot) and `by` (the holder): no `job`,
/// so that a reader that knows only requests (this one before wake-ups, or another
/// implementation following docs/store-format.md) leaves it out as another writer's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wake {
    pub job: String,
    pub slot: i64,
}

/// The `XADD` of a wake-up ([`Wake`]).
pub fn wake_command(prefix: &str, job: &str, slot: i64, by: &str) -> redis::Cmd {
    let mut cmd = append_command(prefix);
    cmd.arg("woke")
        .arg(job)
        .arg("at")
        .arg(slot)
        .arg("by")
        .arg(by);
    cmd
}

/// What one read of the requests stream found: run-now requests, wake-ups, and the ID of the last
/// entry read (to read on from).
#[derive(Debug, Default)]
pub struct Read {
    pub requests: Vec<Request>,
    pub wakes: Vec<Wake>,
    pub last: Option<String>,
}

/// The entries of an `XREAD` reply on the requests stream (a nil reply: none). An entry that is
/// neither a request (a job and a slot that read) nor a wake-up is another writer's, left out.
pub fn decode_read(value: Value) -> Result<Read> {
    if value == Value::Nil {
        return Ok(Read::default());
    }
    let reply: redis::streams::StreamReadReply = redis::FromRedisValue::from_redis_value(value)
        .map_err(|e| Error::corrupt("requests", format!("not a stream read reply ({e})")))?;
    let entries: Vec<redis::streams::StreamId> =
        reply.keys.into_iter().flat_map(|k| k.ids).collect();
    let mut read = Read {
        last: entries.last().map(|e| e.id.clone()),
        ..Read::default()
    };
    for entry in entries {
        let text = |field: &str| entry.get::<String>(field);
        let request = || {
            Some(Request {
                job: text("job")?,
                slot: text("slot")?.parse().ok()?,
                by: text("by").unwrap_or_default(),
                reason: text("reason"),
                id: entry.id.clone(),
            })
        };
        let wake = || {
            Some(Wake {
                job: text("woke")?,
                slot: text("at")?.parse().ok()?,
            })
        };
        if let Some(request) = request() {
            read.requests.push(request);
        } else if let Some(wake) = wake() {
            read.wakes.push(wake);
        }
    }
    Ok(read)
}

/// The ID of the newest request (`0-0` when none): where a daemon that starts reads from.
pub async fn newest_request_id(conn: &mut Connection, prefix: &str) -> Result<String> {
    let key = requests_key(prefix);
    let value: Value = conn
        .query(
            redis::cmd("XREVRANGE")
                .arg(&key)
                .arg("+")
                .arg("-")
                .arg("COUNT")
                .arg(1),
        )
        .await?;
    let entries: redis::streams::StreamRangeReply = redis::FromRedisValue::from_redis_value(value)
        .map_err(|e| Error::corrupt(&key, format!("is not a stream ({e})")))?;
    Ok(entries
        .ids
        .first()
        .map_or_else(|| "0-0".to_string(), |e| e.id.clone()))
}

/// What a daemon's field in `{<prefix>}:replicas` holds (JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Presence {
    /// When it was written: ms, the server's clock.
    pub seen: i64,
    /// The jobs of its crontab that it runs a request of (strategy `lease`), sorted.
    pub jobs: Vec<String>,
    /// The service it is a replica of (`cron --service`), if it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// With a service: every job of its crontab, any strategy, sorted (monitoring reads a job of
    /// the service that no live replica has as removed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crontab: Vec<String>,
}

/// A live or gone daemon, as the requester reads the hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replica {
    pub runner: String,
    pub presence: Presence,
}

impl Replica {
    pub fn is_live(&self, now: i64) -> bool {
        now - self.presence.seen < crate::time::millis(PRESENCE_STALE)
    }

    pub fn runs(&self, job: &str) -> bool {
        self.presence.jobs.iter().any(|j| j == job)
    }

    /// Whether its crontab has `job`, under any strategy.
    pub fn has(&self, job: &str) -> bool {
        self.runs(job) || self.presence.crontab.iter().any(|j| j == job)
    }
}

/// The job of these replicas' crontabs (lease jobs, the ones run-now and pause act on) whose
/// name is nearest to `job`, if one is near enough to be a typo of it.
pub fn nearest_job<'a>(
    job: &str,
    replicas: impl IntoIterator<Item = &'a Replica>,
) -> Option<String> {
    replicas
        .into_iter()
        .flat_map(|r| r.presence.jobs.iter())
        .map(|name| (strsim::jaro_winkler(job, name), name))
        .filter(|(score, _)| *score > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name.clone())
}

/// The `HSET` of a daemon's presence.
pub fn presence_command(prefix: &str, runner: &str, presence: &Presence) -> redis::Cmd {
    let mut cmd = redis::cmd("HSET");
    cmd.arg(replicas_key(prefix))
        .arg(runner)
        .arg(serde_json::to_string(presence).unwrap_or_default());
    cmd
}

/// Every daemon's presence, newest first (fields that do not read are left out).
pub async fn read_replicas(conn: &mut Connection, prefix: &str) -> Result<Vec<Replica>> {
    let key = replicas_key(prefix);
    let value: Value = match conn.query(redis::cmd("HGETALL").arg(&key)).await {
        Err(e) if e.to_string().contains("WRONGTYPE") => {
            return Err(Error::corrupt(
                &key,
                "is not a hash (another program wrote it)",
            ));
        }
        read => read?,
    };
    let fields: Vec<(String, String)> = redis::FromRedisValue::from_redis_value(value)
        .map_err(|e| Error::corrupt(&key, format!("is not a hash of texts ({e})")))?;
    let mut replicas: Vec<Replica> = fields
        .into_iter()
        .filter_map(|(runner, text)| {
            serde_json::from_str(&text)
                .ok()
                .map(|presence| Replica { runner, presence })
        })
        .collect();
    replicas.sort_by_key(|r| std::cmp::Reverse(r.presence.seen));
    Ok(replicas)
}

/// Deletes the presences older than [`PRESENCE_FORGOTTEN`] (daemons killed long ago).
pub async fn prune_replicas(conn: &mut Connection, prefix: &str, now: i64) -> Result<usize> {
    let gone: Vec<String> = read_replicas(conn, prefix)
        .await?
        .into_iter()
        .filter(|r| now - r.presence.seen > crate::time::millis(PRESENCE_FORGOTTEN))
        .map(|r| r.runner)
        .collect();
    if !gone.is_empty() {
        let _: Value = conn
            .query(redis::cmd("HDEL").arg(replicas_key(prefix)).arg(&gone))
            .await?;
    }
    Ok(gone.len())
}

/// A replica's answer to a request it did not run (the claim answered `overlap` or `paused`),
/// recorded in the job's events as a `run-now` entry with `outcome`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declined {
    pub by: String,
    pub outcome: String,
    pub detail: String,
}

/// The answers of replicas that did not run the request of `slot`, from the job's events written
/// at or after the slot's time.
pub async fn declined(
    conn: &mut Connection,
    prefix: &str,
    job: &str,
    slot: i64,
) -> Result<Vec<Declined>> {
    let key = crate::store::names::events_key(prefix, job);
    let value: Value = conn
        .query(
            redis::cmd("XRANGE")
                .arg(&key)
                .arg(format!("{slot}-0"))
                .arg("+")
                .arg("COUNT")
                .arg(100),
        )
        .await?;
    let entries: redis::streams::StreamRangeReply = redis::FromRedisValue::from_redis_value(value)
        .map_err(|e| Error::corrupt(&key, format!("is not a stream of events ({e})")))?;
    Ok(entries
        .ids
        .into_iter()
        .filter_map(|entry| {
            let text = |field: &str| entry.get::<String>(field);
            (text("action")? == "run-now" && text("slot")?.parse::<i64>().ok()? == slot)
                .then_some(())?;
            Some(Declined {
                outcome: text("outcome")?,
                by: text("by").unwrap_or_default(),
                detail: text("detail").unwrap_or_default(),
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_share_the_prefix_tag_and_no_job_tag() {
        assert_eq!(requests_key("cron:"), "{cron:}:requests");
        assert_eq!(replicas_key(""), "{}:replicas");
        assert_eq!(
            crate::store::discover::classify_key("cron:", "{cron:}:requests"),
            None
        );
        assert_eq!(
            crate::store::discover::classify_key("cron:", "{cron:}:replicas"),
            None
        );
    }

    /// A stream entry as `XREAD` answers it.
    fn entry(id: &str, fields: &[(&str, &str)]) -> Value {
        let map = fields
            .iter()
            .flat_map(|(k, v)| {
                [
                    Value::BulkString(k.as_bytes().to_vec()),
                    Value::BulkString(v.as_bytes().to_vec()),
                ]
            })
            .collect();
        Value::Array(vec![
            Value::BulkString(id.as_bytes().to_vec()),
            Value::Array(map),
        ])
    }

    #[test]
    fn a_wake_up_is_no_request_to_a_reader_of_requests_alone() {
        let entries = vec![
            entry("1-0", &[("job", "sync"), ("slot", "60000"), ("by", "me")]),
            entry(
                "2-0",
                &[("woke", "sync"), ("at", "120000"), ("by", "old:1")],
            ),
            entry("3-0", &[("something", "else")]),
        ];
        let reply = Value::Array(vec![Value::Array(vec![
            Value::BulkString(b"{cron:}:requests".to_vec()),
            Value::Array(entries),
        ])]);
        let read = decode_read(reply).unwrap();
        assert_eq!(read.requests.len(), 1);
        assert_eq!(read.requests[0].slot, 60_000);
        assert_eq!(
            read.wakes,
            vec![Wake {
                job: "sync".into(),
                slot: 120_000
            }]
        );
        assert_eq!(read.last.as_deref(), Some("3-0"));
        // What a wake-up's command writes: no `job` field (a request's), so readers of requests
        // alone leave it out.
        let cmd = wake_command("cron:", "sync", 120_000, "old:1");
        let args: Vec<String> = cmd
            .args_iter()
            .filter_map(|a| match a {
                redis::Arg::Simple(b) => Some(String::from_utf8_lossy(b).to_string()),
                _ => None,
            })
            .collect();
        assert!(!args.iter().any(|a| a == "job" || a == "slot"), "{args:?}");
    }

    #[test]
    fn liveness_is_by_the_servers_clock() {
        let r = Replica {
            runner: "a:1".into(),
            presence: Presence {
                seen: 1_000_000,
                jobs: vec!["sync".into()],
                service: Some("svc".into()),
                crontab: vec!["sync".into(), "claim-only".into()],
            },
        };
        assert!(r.is_live(1_000_000 + 9_999));
        assert!(!r.is_live(1_000_000 + 10_000));
        assert!(r.runs("sync") && !r.runs("other"));
        assert!(r.has("claim-only") && !r.runs("claim-only"));
    }
}
