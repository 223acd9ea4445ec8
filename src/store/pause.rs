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

pub async fn read_pause(conn: &mut Connection, keys: &LeaseKeys) -> Result<Pause> {
    let mut cmd = redis::cmd("HMGET");
    cmd.arg(&keys.job).arg(&FIELDS[..]);
    let values: Vec<Option<String>> = conn
        .query(&cmd)
        .await
        .map_err(|e| e.on_key(&keys.job, "hash"))?;
    Pause::decode(&keys.job, &values)
}

/// Records a new pause (replacing an earlier one), atomically.
pub async fn write_pause(conn: &mut Connection, keys: &LeaseKeys, p: &Pause) -> Result<()> {
    let mut pipe = redis::pipe();
    pipe.atomic();
    pipe.cmd("HDEL").arg(&keys.job).arg(&FIELDS[..]).ignore();
    let mut set = redis::cmd("HSET");
    set.arg(&keys.job);
    let fields = [
        ("paused_at", p.paused_at.map(|v| v.to_string())),
        ("paused_until", p.paused_until.map(|v| v.to_string())),
        ("paused_by", p.paused_by.clone()),
        ("paused_reason", p.paused_reason.clone()),
    ];
    for (name, value) in fields {
        if let Some(value) = value {
            set.arg(name).arg(value);
        }
    }
    pipe.add_command(set).ignore();
    conn.pipeline::<()>(&pipe)
        .await
        .map_err(|e| e.on_key(&keys.job, "hash"))
}

/// Ends the pause at `now` (the slots due during it stay skipped: lua/lease/pause.lua).
pub async fn write_resume(conn: &mut Connection, keys: &LeaseKeys, now: i64) -> Result<()> {
    conn.query::<()>(redis::cmd("HSET").arg(&keys.job).arg("resumed_at").arg(now))
        .await
        .map_err(|e| e.on_key(&keys.job, "hash"))
}
