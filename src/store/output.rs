//! A running command's output, kept for `anarchon logs -f` (`run --live-output`): one stream per
//! attempt, `{<prefix><job>}:output:<slot>:<attempt>`, that the attempt's holder writes as the
//! command prints and any host reads. docs/store-format.md, "Live output".
//!
//! Every entry is one field and its value, so a line costs the server one small `XADD`:
//!
//! | field | value |
//! |---|---|
//! | `start` | the runner, written as the command starts (so a reader knows output is on) |
//! | `o`, `e` | one line of the command's stdout or stderr, without its newline |
//! | `cut` | how many lines were sent: the cap (`--live-output-lines`) was reached, the rest was not |
//! | `end` | how many lines the command printed in all: its output is over |
//!
//! The key expires [`TTL`] after its last write (sooner when the job's history has a shorter
//! `--history-ttl`, but never within [`TTL_FLOOR`]), so output goes with the history and never
//! outlives a day.

use std::time::Duration;

use redis::Value;

use crate::connection::Connection;
use crate::error::{Error, Result};

/// How long a run's output is kept after its last line, at most.
pub const TTL: Duration = Duration::from_secs(24 * 3600);

/// How long a run's output is kept after its last line, at least (even with a shorter
/// `--history-ttl`): a run that prints nothing for a while keeps its first lines.
pub const TTL_FLOOR: Duration = Duration::from_secs(3600);

/// The output key of one attempt.
pub fn output_key(prefix: &str, job: &str, slot: i64, attempt: u32) -> String {
    format!("{{{prefix}{job}}}:output:{slot}:{attempt}")
}

/// One entry of an attempt's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// The command started on this runner.
    Start(String),
    Stdout(String),
    Stderr(String),
    /// The cap was reached after this many lines.
    Cut(u64),
    /// The command's output is over: this many lines in all.
    End(u64),
}

impl Entry {
    /// The entry's field and value as written.
    pub fn field(&self) -> (&'static str, String) {
        match self {
            Entry::Start(runner) => ("start", runner.clone()),
            Entry::Stdout(line) => ("o", line.clone()),
            Entry::Stderr(line) => ("e", line.clone()),
            Entry::Cut(n) => ("cut", n.to_string()),
            Entry::End(n) => ("end", n.to_string()),
        }
    }

    fn parse(field: &str, value: String) -> Option<Entry> {
        Some(match field {
            "start" => Entry::Start(value),
            "o" => Entry::Stdout(value),
            "e" => Entry::Stderr(value),
            "cut" => Entry::Cut(value.parse().ok()?),
            "end" => Entry::End(value.parse().ok()?),
            _ => return None,
        })
    }
}

/// The `XADD` of one entry.
pub fn add(key: &str, entry: &Entry) -> redis::Cmd {
    let (field, value) = entry.field();
    let mut cmd = redis::cmd("XADD");
    cmd.arg(key).arg("*").arg(field).arg(value);
    cmd
}

/// The entries after `after` (an entry ID; `0` for all), at most `count`, oldest first, with
/// their IDs. An absent key has none.
pub async fn read_after(
    conn: &mut Connection,
    key: &str,
    after: &str,
    count: usize,
) -> Result<Vec<(String, Entry)>> {
    // The entry after `after`: its sequence + 1 (XRANGE's exclusive `(id` needs Redis 6.2).
    let start = match after.split_once('-') {
        _ if after == "0" => "-".to_string(),
        Some((ms, seq)) => match seq.parse::<u64>() {
            Ok(seq) if seq < u64::MAX => format!("{ms}-{}", seq + 1),
            _ => format!("{}-0", ms.parse::<u64>().unwrap_or(0).saturating_add(1)),
        },
        None => format!("{after}-1"),
    };
    let value: Value = match conn
        .query(
            redis::cmd("XRANGE")
                .arg(key)
                .arg(start)
                .arg("+")
                .arg("COUNT")
                .arg(count),
        )
        .await
    {
        Err(e) if e.to_string().contains("WRONGTYPE") => {
            return Err(Error::corrupt(key, "is not a stream of a run's output"));
        }
        read => read?,
    };
    let reply: redis::streams::StreamRangeReply = redis::FromRedisValue::from_redis_value(value)
        .map_err(|e| Error::corrupt(key, format!("is not a stream of a run's output ({e})")))?;
    Ok(reply
        .ids
        .into_iter()
        .filter_map(|entry| {
            let (field, value) = entry.map.into_iter().next()?;
            let text: String = redis::FromRedisValue::from_redis_value(value).ok()?;
            Some((entry.id, Entry::parse(&field, text)?))
        })
        .collect())
}
