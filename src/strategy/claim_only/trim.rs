//! Trimming a claim-only job's streams, by `anarchon trim` and after every won claim, within what
//! the strategy must remember.

use crate::connection::Connection;
use crate::error::Result;
use crate::store::ClaimKeys;
use crate::store::read::{self, RunEntry};
use crate::strategy::claim::HistoryPolicy;
use crate::time::millis;

/// Trims a claim-only job's history: its streams to about `policy.size` entries each and, with a
/// TTL, entries whose ID time is older than that; never an entry younger than
/// `policy.keep_claimable` (the script strategy looks back that far, and stream-id never forgets
/// through its last ID anyway). Results of removed runs go with them. Returns the removed runs'
/// slots.
pub async fn trim(
    conn: &mut Connection,
    keys: &ClaimKeys,
    policy: &HistoryPolicy,
    now: i64,
    dry_run: bool,
) -> Result<Vec<i64>> {
    let mut removed = Vec::new();
    for stream in [&keys.runs, &keys.manual] {
        let len: u64 = conn.query(redis::cmd("XLEN").arg(stream)).await?;
        let rules = StreamTrim {
            keep: policy.size,
            older_than: policy.ttl,
            protect: policy.keep_claimable,
            now,
            dry_run,
            page_size: 500,
        };
        removed.extend(trim_stream(conn, keys, stream, len, &rules).await?);
    }
    Ok(removed)
}

/// What one stream's trimming keeps, and how it walks.
struct StreamTrim {
    /// About this many entries stay.
    keep: u32,
    /// Entries whose ID time is older than this go too.
    older_than: Option<std::time::Duration>,
    /// No entry younger than this goes.
    protect: std::time::Duration,
    /// The server's clock.
    now: i64,
    /// Only say what would go.
    dry_run: bool,
    /// Entries read per XRANGE.
    page_size: usize,
}

/// Trims after a won claim, within the strategy's memory: the oldest entries of `stream` beyond the
/// history size (and past the TTL), never one younger than the protection (for script, its window:
/// the claim looks back that far), and never the newest (stream-id's last ID is what refuses old
/// slots). One XLEN when there is nothing to trim; a short page when there is.
pub async fn trim_after_claim(
    conn: &mut Connection,
    keys: &ClaimKeys,
    stream: &str,
    history: &HistoryPolicy,
    protect: std::time::Duration,
    now: i64,
) -> Result<()> {
    let len: u64 = conn.query(redis::cmd("XLEN").arg(stream)).await?;
    if len <= u64::from(history.size) && history.ttl.is_none() {
        return Ok(());
    }
    let rules = StreamTrim {
        keep: history.size,
        older_than: history.ttl,
        protect,
        now,
        dry_run: false,
        page_size: 16,
    };
    trim_stream(conn, keys, stream, len, &rules)
        .await
        .map(|_| ())
}

async fn trim_stream(
    conn: &mut Connection,
    keys: &ClaimKeys,
    stream: &str,
    len: u64,
    rules: &StreamTrim,
) -> Result<Vec<i64>> {
    let StreamTrim {
        keep,
        older_than,
        protect,
        now,
        dry_run,
        page_size,
    } = *rules;
    let protect_from = now - millis(protect);
    let expire_before = older_than.map(|d| now - millis(d));
    let mut removed = Vec::new();
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
            delete_claims(conn, keys, stream, &doomed).await?;
        }
        removed.extend(doomed.iter().map(|e| e.slot));
        if !complete {
            break 'walk;
        }
        cursor = page
            .last()
            .map_or("0-0".to_string(), |e| next_stream_id(&e.id));
    }
    Ok(removed)
}

/// Deletes claim entries from `stream` and their results, in one round trip.
async fn delete_claims(
    conn: &mut Connection,
    keys: &ClaimKeys,
    stream: &str,
    doomed: &[&RunEntry],
) -> Result<()> {
    let mut del = redis::cmd("XDEL");
    del.arg(stream);
    for e in doomed {
        del.arg(&e.id);
    }
    let mut pipe = redis::pipe();
    pipe.add_command(del);
    for e in doomed {
        pipe.cmd("ZREMRANGEBYSCORE")
            .arg(&keys.results)
            .arg(e.slot)
            .arg(e.slot);
    }
    for reply in conn.replies(&pipe).await? {
        read::decode::<i64>(&keys.results, reply)?;
    }
    Ok(())
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
}
