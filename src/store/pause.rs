//! A job's pause, as its `:job` hash records it (both formats; lua/lease/pause.lua decides claims by
//! the same fields). All times are ms by the server's clock.

use serde::Serialize;

use crate::connection::Connection;
use crate::error::Result;
use crate::store::LeaseKeys;
use crate::time::rfc3339;

/// The `:job` fields of a pause.
pub const FIELDS: [&str; 5] = [
    "paused_at",
    "paused_until",
    "resumed_at",
    "paused_by",
    "paused_reason",
];

/// A job's pause (all None: never paused).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Pause {
    pub paused_at: Option<i64>,
    /// None: until resumed.
    pub paused_until: Option<i64>,
    pub resumed_at: Option<i64>,
    pub paused_by: Option<String>,
    pub paused_reason: Option<String>,
}

impl Pause {
    /// Decodes HMGET of [`FIELDS`], naming the key on bad data.
    pub fn decode(key: &str, values: &[Option<String>]) -> Result<Self> {
        let int = |i: usize| {
            crate::store::decode::int_field(
                key,
                FIELDS[i],
                values.get(i).and_then(|v| v.as_deref()),
            )
        };
        Ok(Pause {
            paused_at: int(0)?,
            paused_until: int(1)?,
            resumed_at: int(2)?,
            paused_by: values.get(3).cloned().flatten(),
            paused_reason: values.get(4).cloned().flatten(),
        })
    }

    /// When the pause ends: at paused_until, or when it was resumed if that came first (None:
    /// until resumed). The same rule as lua/lease/pause.lua.
    pub fn ends(&self) -> Option<i64> {
        match (self.paused_at, self.resumed_at, self.paused_until) {
            (Some(at), Some(resumed), until)
                if resumed >= at && until.is_none_or(|u| resumed < u) =>
            {
                Some(resumed)
            }
            (_, _, until) => until,
        }
    }

    /// Whether the job is paused at `now`.
    pub fn is_paused(&self, now: i64) -> bool {
        self.paused_at
            .is_some_and(|at| now >= at && self.ends().is_none_or(|end| now < end))
    }

    /// "by ops until 2026-12-26T00:00:00.000Z: bank holiday".
    pub fn describe(&self) -> String {
        format!(
            "by {} {}{}",
            self.paused_by.as_deref().unwrap_or("someone"),
            self.ends().map_or("until resumed".to_string(), |e| format!(
                "until {}",
                rfc3339(e)
            )),
            self.paused_reason
                .as_deref()
                .map_or(String::new(), |r| format!(": {r}"))
        )
    }
}

/// A job's past pauses, from its events stream's `pause` and `resume` entries (an `XREVRANGE` of
/// it, newest first), oldest first: the `:job` hash keeps only the newest pause, and `check
/// --window` over a job paused twice must not read the first pause's slots as missed. A pause
/// begins at its entry's time and ends at its `until`, at the next `resume`, or at the next
/// `pause` (which replaced it), the earliest (docs/store-format.md, "Events"). Entries that are
/// not read as such are skipped: this is a reading aid, never a reason to refuse the job.
pub fn history(value: redis::Value) -> Vec<Pause> {
    let Ok(reply) = redis::from_redis_value::<redis::streams::StreamRangeReply>(value) else {
        return Vec::new();
    };
    let mut pauses: Vec<Pause> = Vec::new();
    let mut open: Option<Pause> = None;
    for entry in reply.ids.iter().rev() {
        let Some(at) = entry
            .id
            .split_once('-')
            .and_then(|(ms, _)| ms.parse::<i64>().ok())
        else {
            continue;
        };
        let text = |field: &str| -> Option<String> {
            entry
                .map
                .get(field)
                .and_then(|v| redis::from_redis_value(v.clone()).ok())
        };
        let action = text("action").unwrap_or_default();
        if action != "pause" && action != "resume" {
            continue;
        }
        if let Some(mut ended) = open.take() {
            ended.resumed_at = Some(at);
            pauses.push(ended);
        }
        if action == "pause" {
            let until = text("until").and_then(|u| u.parse().ok()).or_else(|| {
                let detail = text("detail")?;
                let when = detail.strip_prefix("until ")?;
                chrono::DateTime::parse_from_rfc3339(when)
                    .ok()
                    .map(|t| t.timestamp_millis())
            });
            open = Some(Pause {
                paused_at: Some(at),
                paused_until: until,
                resumed_at: None,
                paused_by: text("by"),
                paused_reason: text("reason"),
            });
        }
    }
    // The newest pause, if it has not ended, is the `:job` hash's (which knows of a resume that
    // left no entry): only pauses known to have ended are history.
    pauses.extend(open.filter(|p| p.ends().is_some()));
    pauses
}

pub async fn read_pause(conn: &mut Connection, keys: &LeaseKeys) -> Result<Pause> {
    let mut cmd = redis::cmd("HMGET");
    cmd.arg(&keys.job).arg(&FIELDS[..]);
    let values: Vec<Option<String>> = conn
        .query(&cmd)
        .await
        .map_err(|e| e.on_key(&keys.job, "hash"))?;
    Pause::decode(&keys.job, &values)
}

/// What a pause or resume script decided, and the pause it saw (see lua/store/pause.lua and
/// lua/store/resume.lua).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided {
    /// `paused`, `past` (pause: the end given is not after the server's time; nothing written),
    /// `resumed` or `not_paused` (resume: nothing written).
    pub outcome: String,
    /// The server's time of the decision, ms: a pause's `paused_at`, a resume's `resumed_at`.
    pub now: i64,
    /// The events stream's error, when the action was done but could not be recorded.
    pub audit_error: Option<String>,
    /// Pause: the pause it replaced. Resume: the pause it ended (with its `resumed_at`), or the
    /// one it found not in force.
    pub pause: Pause,
}

impl Decided {
    fn decode(key: &str, reply: Vec<Option<String>>) -> Result<Self> {
        let bad =
            || crate::error::Error::corrupt(key, "the pause script's reply is not understood");
        let now = reply
            .get(1)
            .cloned()
            .flatten()
            .and_then(|n| n.parse().ok())
            .ok_or_else(bad)?;
        Ok(Decided {
            outcome: reply.first().cloned().flatten().ok_or_else(bad)?,
            now,
            audit_error: reply.get(2).cloned().flatten(),
            pause: Pause::decode(key, reply.get(3..).unwrap_or_default())?,
        })
    }
}

/// `anarchon pause`, in one step on the server: replaces the job's pause with one that begins at
/// the server's time now and ends at `until` (ms), `for_ms` after now, or when resumed (neither),
/// and records it in the job's events, `events` (its key, and how many entries it keeps), as
/// `audit` (who, why) (lua/store/pause.lua).
pub async fn pause(
    conn: &mut Connection,
    keys: &LeaseKeys,
    events: (&str, usize),
    audit: (&str, Option<&str>),
    until: Option<i64>,
    for_ms: Option<i64>,
) -> Result<Decided> {
    let number = |n: Option<i64>| n.map_or(String::new(), |n| n.to_string());
    let args = [
        audit.0.to_string(),
        audit.1.unwrap_or_default().to_string(),
        number(until),
        number(for_ms),
        events.1.to_string(),
    ];
    let reply: Vec<Option<String>> = conn
        .eval(
            &crate::scripts::PAUSE,
            &[keys.job.as_str(), events.0],
            &args,
        )
        .await
        .map_err(|e| e.on_key(&keys.job, "hash"))?;
    Decided::decode(&keys.job, reply)
}

/// `anarchon resume`, in one step on the server: ends the pause in force at the server's time now
/// (the slots due during it stay skipped: lua/lease/pause.lua) and records which pause it ended in
/// the job's events (as [`pause`]); a job not paused now is left alone (lua/store/resume.lua).
pub async fn resume(
    conn: &mut Connection,
    keys: &LeaseKeys,
    events: (&str, usize),
    audit: (&str, Option<&str>),
) -> Result<Decided> {
    let args = [
        audit.0.to_string(),
        audit.1.unwrap_or_default().to_string(),
        events.1.to_string(),
    ];
    let reply: Vec<Option<String>> = conn
        .eval(
            &crate::scripts::RESUME,
            &[keys.job.as_str(), events.0],
            &args,
        )
        .await
        .map_err(|e| e.on_key(&keys.job, "hash"))?;
    Decided::decode(&keys.job, reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use redis::Value;

    /// An `XREVRANGE` reply of `(ms, fields)` entries, newest first.
    fn entries(list: &[(i64, &[(&str, &str)])]) -> Value {
        Value::Array(
            list.iter()
                .rev()
                .map(|(ms, fields)| {
                    Value::Array(vec![
                        Value::BulkString(format!("{ms}-0").into_bytes()),
                        Value::Array(
                            fields
                                .iter()
                                .flat_map(|(k, v)| {
                                    [
                                        Value::BulkString(k.as_bytes().to_vec()),
                                        Value::BulkString(v.as_bytes().to_vec()),
                                    ]
                                })
                                .collect(),
                        ),
                    ])
                })
                .collect(),
        )
    }

    #[test]
    fn past_pauses_end_at_their_end_a_resume_or_the_next_pause() {
        let h = history(entries(&[
            (100, &[("action", "pause"), ("until", "150")]),
            (200, &[("action", "release")]),
            (300, &[("action", "pause"), ("detail", "until resumed")]),
            (400, &[("action", "resume")]),
            // Written before `until` was: read from the detail.
            (
                500,
                &[
                    ("action", "pause"),
                    ("detail", "until 1970-01-01T00:00:00.700Z"),
                ],
            ),
            (600, &[("action", "pause"), ("detail", "until resumed")]),
        ]));
        let spans: Vec<(Option<i64>, Option<i64>)> =
            h.iter().map(|p| (p.paused_at, p.ends())).collect();
        // The newest, not ended, is the `:job` hash's to tell.
        assert_eq!(
            spans,
            [
                (Some(100), Some(150)),
                (Some(300), Some(400)),
                (Some(500), Some(600))
            ]
        );
        assert!(history(Value::Nil).is_empty());
    }
}
