//! Reading what the store holds about jobs, for the operator commands (list, inspect, history).
//! Reads are pipelined: a batch of jobs costs a fixed number of round trips, not one per job.

use redis::Value;
use serde::Serialize;

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::store::Layout;
pub use crate::store::decode::{decode, int_field};

/// How many jobs one pipeline covers.
pub const BATCH: usize = 500;

pub use crate::store::state::{ResultEntry, RunEntry, parse_score, replaced};

/// When the store first saw a job: the `first_seen` its claims recorded in `:job` (`recorded`:
/// the first claim records the older of its time and the job's oldest run then), else its oldest
/// run `oldest` (a job no claim of this version touched yet). A run claimed later for an older
/// slot (a manual `claim`, a backfill) does not move it back: those slots were asked for, not
/// due, and health must not start counting every slot since then as missed. None for a job with
/// neither.
pub fn first_seen(
    job_key: &str,
    recorded: Option<&str>,
    oldest: Option<i64>,
) -> Result<Option<i64>> {
    let recorded = int_field(job_key, "first_seen", recorded)?;
    Ok(recorded.or(oldest))
}

/// The job's waiting place (`run --overlap buffer`) from its `:job` field `buffered`
/// (`<slot>:<until>`, ms): the slot and until when.
pub fn waiting_place(job_key: &str, text: &str) -> Result<(i64, i64)> {
    text.split_once(':')
        .and_then(|(s, u)| Some((s.parse::<i64>().ok()?, u.parse::<i64>().ok()?)))
        .ok_or_else(|| {
            Error::corrupt(
                job_key,
                format!("field buffered is {text:?}, not <slot>:<until>"),
            )
        })
}

/// Parses a stream reply (XRANGE/XREVRANGE) into entries.
pub fn stream_entries(key: &str, value: Value) -> Result<Vec<RunEntry>> {
    let raw: Vec<(String, Vec<(String, String)>)> = decode(key, value)?;
    raw.into_iter()
        .map(|(id, fields)| RunEntry::parse(key, id, &fields))
        .collect()
}

/// One row of `anarchon list`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct JobSummary {
    pub job: String,
    pub layout: Layout,
    /// Runs not ended (lease layout; 0 for claim-only).
    pub in_progress: u64,
    pub last_slot: Option<i64>,
    pub last_status: Option<String>,
    pub last_runner: Option<String>,
    /// The lease end of the newest run when it is in progress (server ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_lease_end: Option<i64>,
    /// The job's pause, if it was ever paused (`anarchon pause`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pause: Option<crate::store::pause::Pause>,
    /// When the newest result was recorded (server ms).
    pub last_result_at: Option<i64>,
    /// Entries in `:runs`.
    pub history_entries: u64,
}

impl JobSummary {
    /// The newest run's state in one word, by the server's clock `now`: its status, or `expired`
    /// for a run still marked running whose lease has ended (its holder is gone or hung, and no
    /// backup took it over yet).
    pub fn state(&self, now: i64) -> Option<&str> {
        match (self.last_status.as_deref(), self.last_lease_end) {
            (Some("running"), Some(end)) if end <= now => Some("expired"),
            (Some("running"), _) => Some("running"),
            _ if self.pause.as_ref().is_some_and(|p| p.is_paused(now)) => Some("paused"),
            (status, _) => status,
        }
    }
}

/// A job that could not be read: which, and why (the error names the key).
#[derive(Debug)]
pub struct Unreadable {
    pub job: String,
    pub layout: Layout,
    pub error: Error,
}

/// The shape [`Unreadable`] serializes to, for its JSON Schema.
#[derive(schemars::JsonSchema)]
#[allow(dead_code)]
struct UnreadableShape {
    job: String,
    layout: Layout,
    /// The key that could not be read (when the error names one).
    key: Option<String>,
    /// What is wrong with it, and what to do.
    error: String,
}

impl schemars::JsonSchema for Unreadable {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Unreadable".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        UnreadableShape::json_schema(generator)
    }
}

impl Serialize for Unreadable {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Unreadable", 4)?;
        st.serialize_field("job", &self.job)?;
        st.serialize_field("layout", &self.layout)?;
        st.serialize_field("key", &self.error.key())?;
        st.serialize_field("error", &self.error.to_string())?;
        st.end()
    }
}

/// A key of a job, as `inspect` shows it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct KeyInfo {
    pub key: String,
    /// `none` when the key does not exist.
    #[serde(rename = "type")]
    pub kind: String,
    /// MEMORY USAGE in bytes (null when absent or not permitted).
    pub memory_bytes: Option<u64>,
    /// The Redis Cluster hash slot of this key.
    pub hash_slot: u16,
}

/// Reads the TYPE and MEMORY USAGE of `keys` in one round trip.
pub async fn key_infos(conn: &mut Connection, keys: &[&str]) -> Result<Vec<KeyInfo>> {
    let mut pipe = redis::pipe();
    for key in keys {
        pipe.cmd("TYPE").arg(*key);
        pipe.cmd("MEMORY").arg("USAGE").arg(*key);
    }
    let mut values = conn.replies(&pipe).await?.into_iter();
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        let kind: String = decode(key, values.next().unwrap_or(Value::Nil))?;
        let memory = match values.next() {
            Some(Value::Int(n)) => u64::try_from(n).ok(),
            _ => None,
        };
        out.push(KeyInfo {
            key: key.to_string(),
            kind,
            memory_bytes: memory,
            hash_slot: crate::store::keys::hash_slot(key),
        });
    }
    Ok(out)
}

/// Fails with a WRONGTYPE error naming the first key whose type is none of its `expected` ones.
pub fn check_types(infos: &[KeyInfo], expected: &[&[&str]]) -> Result<()> {
    for (info, want) in infos.iter().zip(expected) {
        if info.kind != "none" && !want.contains(&info.kind.as_str()) {
            return Err(Error::WrongType {
                key: info.key.clone(),
                found: info.kind.clone(),
                expected: want.join(" or "),
            });
        }
    }
    Ok(())
}

/// Results of `results_key` with slots in `[min, max]`, newest first, at most `count` per page from
/// `offset`.
pub async fn results_page(
    conn: &mut Connection,
    results_key: &str,
    min: i64,
    max: i64,
    offset: usize,
    count: usize,
) -> Result<Vec<ResultEntry>> {
    let members: Value = conn
        .query(
            redis::cmd("ZREVRANGEBYSCORE")
                .arg(results_key)
                .arg(max)
                .arg(min)
                .arg("WITHSCORES")
                .arg("LIMIT")
                .arg(offset)
                .arg(count),
        )
        .await?;
    let members: Vec<(String, String)> = decode(results_key, members)?;
    members
        .iter()
        .map(|(m, score)| ResultEntry::parse_scored(results_key, m, score))
        .collect()
}

/// The newest `count` entries of a stream, newest first.
pub async fn newest_entries(
    conn: &mut Connection,
    key: &str,
    count: usize,
) -> Result<Vec<RunEntry>> {
    let value: Value = conn
        .query(
            redis::cmd("XREVRANGE")
                .arg(key)
                .arg("+")
                .arg("-")
                .arg("COUNT")
                .arg(count),
        )
        .await?;
    stream_entries(key, value)
}
