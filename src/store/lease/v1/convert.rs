//! Converting one format 2 job back to format 1 (`anarchon migrate --to 1`).
//!
//! Format 1 keeps the `status` of every ended run in history in `:state` (the seed's scheduler
//! never claims a slot that has one), its slot in `:slots` and an entry per ended attempt in
//! `:runs`; format 2 keeps all that only in the job's `:results` members. Rebuilding it costs a
//! command or so per run of history: far too long for one script on a shared server (a thousand
//! runs would hold it for milliseconds). So it is done in two steps:
//!
//! 1. **Staging**, by plain pipelined commands, into three keys under the job's hash tag that no
//!    scheduler reads (`:to-format-1:state`, `:slots`, `:runs`), from one read of the members.
//!    The job goes on being claimed, in format 2, meanwhile. Before the members, it reads what
//!    tells whether the job changed: its last fencing token (every won claim raises it, and only
//!    a won claim trims), how many skips were taken back (`:job` `unskipped`), its runs in
//!    progress, and how many members `:results` has.
//! 2. **The switch**, one short script (`lua/lease/v1/convert.lua`), which writes nothing unless
//!    the job is as staging found it, then renames the staged keys into place and adds the runs in
//!    progress: a read per run in progress, whatever the history's size. A job that changed is
//!    staged again (a run ended, a claim won), up to [`TRIES`] times.
//!
//! So every change to the members is seen: one added (an ended attempt, a skip) raises the
//! count or changes the runs in progress; one removed is a trim (a won claim's, which raises the
//! fence, or `anarchon trim`'s, which is refused while a migration holds its lock) or a skip
//! taken back (counted).

use redis::Value;

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::store::decode::decode;
use crate::store::lease::LeaseKeys;
use crate::store::state::ResultEntry;

/// How many times a job that keeps changing is staged again before the conversion gives up on it
/// (and `migrate` reports it: run again to go on).
pub const TRIES: usize = 10;

/// Members read per round trip, and staged writes sent per pipeline.
const PAGE: usize = 1000;

/// Fields (or members) one staged `HSET` (or `ZADD`) writes: each such command costs the server
/// time in proportion, and a shared server must not wait on one for long (a 500-field HSET took
/// milliseconds on a loaded machine).
const FIELDS_PER_WRITE: usize = 64;

/// What the staging keys' names hold after the job's hash tag: `{<prefix><job>}:to-format-1:state`.
pub const STAGING_INFIX: &str = ":to-format-1:";

/// The keys a job's history is staged in, under its hash tag (so the switch can rename them).
fn staging_keys(keys: &LeaseKeys) -> [String; 3] {
    let tag = keys
        .state
        .strip_suffix(":state")
        .unwrap_or(keys.state.as_str());
    ["state", "slots", "runs"].map(|k| format!("{tag}{STAGING_INFIX}{k}"))
}

/// What staging found, to be compared by the switch.
struct Staged {
    /// The job's last fencing token and how many skips were taken back: `<fence>:<unskipped>`.
    marks: String,
    results: u64,
    /// `<slot> <token> <attempt>` for each run in progress, sorted, one per line.
    in_progress: String,
}

/// Converts `keys`' job back to format 1: Some(runs in progress moved) when it was converted,
/// None when it is not a format 2 job (converted already, or never written in format 2).
/// `marker`: the text of format 2's `:state` (only a job holding it is converted).
pub async fn convert_job(
    conn: &mut Connection,
    keys: &LeaseKeys,
    marker: &str,
) -> Result<Option<u64>> {
    let staging = staging_keys(keys);
    for _ in 0..TRIES {
        let Some(staged) = stage(conn, keys, &staging).await? else {
            return Ok(None);
        };
        let mut script_keys: Vec<&str> = keys.with_job().to_vec();
        script_keys.push(&keys.live);
        script_keys.extend(staging.iter().map(String::as_str));
        let reply: Vec<String> = conn
            .eval(
                &super::CONVERT,
                &script_keys,
                &[
                    staged.marks,
                    staged.results.to_string(),
                    staged.in_progress,
                    marker.to_string(),
                ],
            )
            .await?;
        match reply.as_slice() {
            [changed] if changed == "changed" => continue,
            [done, moved] if done == "1" => return Ok(Some(moved.parse().unwrap_or(0))),
            [done, _] if done == "0" => {
                discard(conn, &staging).await?;
                return Ok(None);
            }
            _ => {
                return Err(Error::corrupt(
                    &keys.state,
                    format!("the conversion script answered {reply:?}"),
                ));
            }
        }
    }
    discard(conn, &staging).await?;
    Err(Error::Other(format!(
        "job {} changed under each of {TRIES} tries to convert it (runs ending, claims won): it is still in format 2\n  hint: run `anarchon migrate --to 1` again to go on with it",
        keys.state.strip_suffix(":state").unwrap_or(&keys.state)
    )))
}

/// Deletes what a stopped conversion staged for `keys`' job.
pub async fn discard_staging(conn: &mut Connection, keys: &LeaseKeys) -> Result<()> {
    discard(conn, &staging_keys(keys)).await
}

async fn discard(conn: &mut Connection, staging: &[String; 3]) -> Result<()> {
    // Freed off the server's main thread: a big job's staging is millions of bytes.
    let mut del = redis::cmd("UNLINK");
    for key in staging {
        del.arg(key);
    }
    conn.query::<()>(&del).await
}

/// Stages the job's ended history into `staging` (None when the job is not in format 2).
async fn stage(
    conn: &mut Connection,
    keys: &LeaseKeys,
    staging: &[String; 3],
) -> Result<Option<Staged>> {
    let mut pipe = redis::pipe();
    pipe.cmd("TYPE").arg(&keys.state);
    pipe.cmd("HMGET")
        .arg(&keys.job)
        .arg("fence")
        .arg("unskipped");
    pipe.cmd("ZCARD").arg(&keys.results);
    pipe.cmd("HGETALL").arg(&keys.live);
    let mut replies = conn.replies(&pipe).await?.into_iter();
    let mut next = || replies.next().unwrap_or(Value::Nil);
    let state_type: String = decode(&keys.state, next())?;
    if state_type != super::super::v2::STATE_TYPE {
        return Ok(None);
    }
    let (fence, unskipped): (Option<String>, Option<String>) = decode(&keys.job, next())?;
    let results: u64 = decode(&keys.results, next())?;
    let live: Vec<(String, String)> = decode(&keys.live, next())?;
    // Read as format 2 reads its runs in progress (bad data refused, naming the field).
    let runs = live
        .iter()
        .map(|(slot, value)| super::super::v2::decode_live(&keys.live, slot, value))
        .collect::<Result<Vec<_>>>()?;
    let mut in_progress: Vec<String> = runs
        .iter()
        .map(|r| format!("{} {} {}", r.slot, r.token, r.attempt))
        .collect();
    in_progress.sort();
    let live_slots: std::collections::HashSet<i64> = runs.iter().map(|r| r.slot).collect();

    // Every member, a page a round trip.
    let mut members = Vec::new();
    let mut start = 0usize;
    loop {
        let page: Value = conn
            .query(
                redis::cmd("ZRANGE")
                    .arg(&keys.results)
                    .arg(start)
                    .arg(start + PAGE - 1)
                    .arg("WITHSCORES"),
            )
            .await?;
        let page: Vec<(String, String)> = decode(&keys.results, page)?;
        let n = page.len();
        for (member, score) in &page {
            members.push(ResultEntry::parse_scored(&keys.results, member, score)?);
        }
        if n < PAGE {
            break;
        }
        start += PAGE;
    }

    let mut writes = staged_writes(&members, &live_slots, staging)
        .into_iter()
        .peekable();
    discard(conn, staging).await?;
    while writes.peek().is_some() {
        let mut pipe = redis::pipe();
        for cmd in writes.by_ref().take(PAGE) {
            pipe.add_command(cmd).ignore();
        }
        conn.pipeline::<()>(&pipe).await?;
    }
    Ok(Some(Staged {
        marks: format!(
            "{}:{}",
            fence.unwrap_or_default(),
            unskipped.unwrap_or_default()
        ),
        results,
        in_progress: in_progress.join("\n"),
    }))
}

/// The commands that stage `members` (every member of the job's `:results`) as format 1 keeps an
/// ended history: the final status of each ended run not in progress (its last attempt's; a skip
/// is `interrupted`, as format 1 records skips), its slot, and a `:runs` entry per ended attempt
/// that ran, in the order they ended (the ID's time is the end, as format 1's `XADD *` makes it).
fn staged_writes(
    members: &[ResultEntry],
    in_progress: &std::collections::HashSet<i64>,
    staging: &[String; 3],
) -> Vec<redis::Cmd> {
    let [state, slots, runs] = staging;
    let mut last: std::collections::BTreeMap<i64, &ResultEntry> = Default::default();
    for m in members.iter().filter(|m| !in_progress.contains(&m.slot)) {
        let newer = last
            .get(&m.slot)
            .is_none_or(|seen| m.attempt.unwrap_or(0) >= seen.attempt.unwrap_or(0));
        if newer {
            last.insert(m.slot, m);
        }
    }
    let mut writes = Vec::new();
    let ended: Vec<(i64, &ResultEntry)> = last.into_iter().collect();
    for chunk in ended.chunks(FIELDS_PER_WRITE) {
        let mut hset = redis::cmd("HSET");
        hset.arg(state);
        let mut zadd = redis::cmd("ZADD");
        zadd.arg(slots);
        for (slot, m) in chunk {
            let status = if m.status == "skipped" {
                "interrupted"
            } else {
                m.status.as_str()
            };
            hset.arg(format!("{slot}:status")).arg(status);
            zadd.arg(slot).arg(slot);
        }
        writes.push(hset);
        writes.push(zadd);
    }
    let mut attempts: Vec<&ResultEntry> = members
        .iter()
        .filter(|m| m.status != "skipped" && m.attempt.unwrap_or(0) > 0)
        .collect();
    let end = |m: &ResultEntry| m.ended_at.or(m.claimed_at).unwrap_or(m.slot).max(0);
    attempts.sort_by_key(|m| (end(m), m.slot, m.attempt));
    let (mut last_ms, mut seq) = (0i64, 0u64);
    for m in attempts {
        let ms = end(m);
        if ms > last_ms {
            (last_ms, seq) = (ms, 0);
        } else {
            seq += 1;
        }
        let mut xadd = redis::cmd("XADD");
        xadd.arg(runs)
            .arg(format!("{last_ms}-{seq}"))
            .arg("slot")
            .arg(m.slot)
            .arg("attempt")
            .arg(m.attempt.unwrap_or(1))
            .arg("token")
            .arg(&m.token)
            .arg("status")
            .arg(&m.status);
        if m.kind.as_deref() == Some("manual") {
            xadd.arg("kind").arg("manual");
        }
        writes.push(xadd);
    }
    writes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(slot: i64, attempt: u32, status: &str, ended_at: i64) -> ResultEntry {
        ResultEntry {
            slot,
            attempt: Some(attempt),
            token: format!("t{slot}-{attempt}"),
            runner: "h:1".into(),
            status: status.into(),
            claimed_at: Some(ended_at - 5),
            ended_at: Some(ended_at),
            result: serde_json::Value::Null,
            kind: None,
            fence: None,
        }
    }

    #[test]
    fn a_run_s_status_is_its_last_attempt_s_and_entries_follow_their_ends() {
        let staging = ["s".to_string(), "z".to_string(), "r".to_string()];
        let members = [
            member(60_000, 1, "interrupted", 70_000),
            member(60_000, 2, "finished", 90_000),
            member(120_000, 1, "finished", 80_000),
            member(180_000, 0, "skipped", 85_000),
            member(240_000, 1, "interrupted", 95_000),
        ];
        let in_progress = [240_000].into_iter().collect();
        let writes = staged_writes(&members, &in_progress, &staging);
        let text: Vec<String> = writes
            .iter()
            .map(|c| {
                c.args_iter()
                    .map(|a| match a {
                        redis::Arg::Simple(b) => String::from_utf8_lossy(b).to_string(),
                        _ => "*".into(),
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        assert_eq!(
            text[0],
            "HSET s 60000:status finished 120000:status finished 180000:status interrupted"
        );
        assert_eq!(text[1], "ZADD z 60000 60000 120000 120000 180000 180000");
        // Skips have no entry; ends in order, whatever the slots.
        assert_eq!(
            &text[2..],
            [
                "XADD r 70000-0 slot 60000 attempt 1 token t60000-1 status interrupted",
                "XADD r 80000-0 slot 120000 attempt 1 token t120000-1 status finished",
                "XADD r 90000-0 slot 60000 attempt 2 token t60000-2 status finished",
                "XADD r 95000-0 slot 240000 attempt 1 token t240000-1 status interrupted",
            ]
        );
    }
}
