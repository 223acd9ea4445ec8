//! Named calendars of exclusion windows (`anarchon calendar`, `run --calendar NAME`): holidays
//! and freezes an operator edits once for every job that names them. Kept under the prefix's own
//! hash tag (as limits and run-now requests are), so no key of one is a job's:
//!
//! - `{<prefix>}:calendar:<name>`, a hash: `windows` (the windows, one a line, as
//!   [`crate::exclusion::Exclusion::parse`] reads them), `updated_at` (ms, server clock),
//!   `updated_by`, `reason`;
//! - `{<prefix>}:calendar:<name>:events`, a stream: one entry per edit (`action` set | delete,
//!   `by`, `reason`, `windows`), the audit, capped at about 1,000 entries.
//!
//! Both written in one MULTI/EXEC, so the audit says exactly what was done.

use serde::Serialize;

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::exclusion::Exclusion;

/// The calendar's hash.
pub fn calendar_key(prefix: &str, name: &str) -> String {
    format!("{{{prefix}}}:calendar:{name}")
}

/// The calendar's audit stream.
pub fn events_key(prefix: &str, name: &str) -> String {
    format!("{}:events", calendar_key(prefix, name))
}

/// A calendar as the store holds it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Calendar {
    pub name: String,
    /// Its windows, as written.
    pub texts: Vec<String>,
    #[serde(skip)]
    pub windows: Vec<Exclusion>,
    pub updated_at: Option<i64>,
    pub updated_by: Option<String>,
    pub reason: Option<String>,
}

/// One edit of a calendar, from its audit stream.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Edit {
    /// When (ms, server clock: the entry's ID).
    pub at: i64,
    pub action: String,
    pub by: String,
    pub reason: Option<String>,
    pub windows: Vec<String>,
}

/// Checks a calendar's name: as a limit's (no braces, colons, glob characters or spaces).
pub fn validate_name(name: &str) -> Result<()> {
    crate::store::limit::Limit::parse(&format!("{name}=1"))
        .map(|_| ())
        .map_err(|_| {
            Error::usage(format!(
                "{name:?} is not a calendar name: 1 to 200 bytes, without braces, colons, glob characters, spaces or control characters"
            ))
        })
}

/// The calendar `name` (None: there is none). A window that does not read is bad data (exit 92):
/// anarchon writes only windows it reads.
pub async fn read(conn: &mut Connection, prefix: &str, name: &str) -> Result<Option<Calendar>> {
    let key = calendar_key(prefix, name);
    let fields: Vec<Option<String>> = conn
        .query(
            redis::cmd("HMGET")
                .arg(&key)
                .arg("windows")
                .arg("updated_at")
                .arg("updated_by")
                .arg("reason"),
        )
        .await?;
    let [windows, updated_at, updated_by, reason] = <[Option<String>; 4]>::try_from(fields)
        .map_err(|_| Error::corrupt(&key, "HMGET answered oddly"))?;
    let Some(windows) = windows else {
        return Ok(None);
    };
    let texts: Vec<String> = windows
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    let parsed = texts
        .iter()
        .map(|t| Exclusion::parse(t))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::corrupt(&key, format!("field windows: {e}")))?;
    Ok(Some(Calendar {
        name: name.to_string(),
        texts,
        windows: parsed,
        updated_at: updated_at.and_then(|t| t.parse().ok()),
        updated_by,
        reason,
    }))
}

/// The windows of the calendars `names` as the store holds them now, in order (a calendar that
/// does not exist has none).
pub async fn windows_of(
    conn: &mut Connection,
    prefix: &str,
    names: &[&str],
) -> Result<Vec<Exclusion>> {
    let mut windows = Vec::new();
    for name in names {
        windows.extend(
            read(conn, prefix, name)
                .await?
                .map(|c| c.windows)
                .unwrap_or_default(),
        );
    }
    Ok(windows)
}

/// Sets the calendar's windows (replacing them; `windows` empty: deletes it), with its audit entry,
/// in one transaction.
pub async fn write(
    conn: &mut Connection,
    prefix: &str,
    name: &str,
    windows: &[String],
    (by, reason): (&str, Option<&str>),
    now: i64,
) -> Result<()> {
    let key = calendar_key(prefix, name);
    let mut pipe = redis::pipe();
    pipe.atomic();
    pipe.cmd("DEL").arg(&key).ignore();
    if !windows.is_empty() {
        pipe.cmd("HSET")
            .arg(&key)
            .arg("windows")
            .arg(windows.join("\n"))
            .arg("updated_at")
            .arg(now)
            .arg("updated_by")
            .arg(by)
            .ignore();
        if let Some(reason) = reason {
            pipe.cmd("HSET")
                .arg(&key)
                .arg("reason")
                .arg(reason)
                .ignore();
        }
    }
    let mut event = redis::cmd("XADD");
    event
        .arg(events_key(prefix, name))
        .arg("MAXLEN")
        .arg("~")
        .arg(1000)
        .arg("*")
        .arg("action")
        .arg(if windows.is_empty() { "delete" } else { "set" })
        .arg("by")
        .arg(by)
        .arg("windows")
        .arg(windows.join("\n"));
    if let Some(reason) = reason {
        event.arg("reason").arg(reason);
    }
    pipe.add_command(event).ignore();
    conn.pipeline::<()>(&pipe).await
}

/// The calendar's edits, newest first (at most `count`).
pub async fn edits(
    conn: &mut Connection,
    prefix: &str,
    name: &str,
    count: usize,
) -> Result<Vec<Edit>> {
    let reply: redis::streams::StreamRangeReply = conn
        .query(
            redis::cmd("XREVRANGE")
                .arg(events_key(prefix, name))
                .arg("+")
                .arg("-")
                .arg("COUNT")
                .arg(count),
        )
        .await?;
    Ok(reply
        .ids
        .iter()
        .map(|entry| {
            let text = |f: &str| entry.get::<String>(f);
            Edit {
                at: entry
                    .id
                    .split('-')
                    .next()
                    .and_then(|ms| ms.parse().ok())
                    .unwrap_or(0),
                action: text("action").unwrap_or_default(),
                by: text("by").unwrap_or_default(),
                reason: text("reason"),
                windows: text("windows")
                    .unwrap_or_default()
                    .lines()
                    .map(str::to_string)
                    .collect(),
            }
        })
        .collect())
}

/// Every calendar under `prefix`, by name.
pub async fn names(conn: &mut Connection, prefix: &str) -> Result<Vec<String>> {
    let head = format!("{{{prefix}}}:calendar:");
    let pattern = format!("{}*", crate::store::discover::glob_escape(&head));
    let mut names: Vec<String> = crate::store::discover::scan(conn, &pattern)
        .await?
        .into_iter()
        .filter_map(|key| {
            let rest = key.strip_prefix(&head)?;
            (!rest.contains(':')).then(|| rest.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}
