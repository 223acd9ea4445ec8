//! The lease strategy: one Lua script decides each claim (won / overlap / done / running), the
//! winner keeps its lease alive with heartbeats and ends the run with finish. Both only work with
//! the current attempt's token, so a runner whose lease was taken over can change nothing.

use std::time::Duration;

use serde::Serialize;

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::store::LeaseKeys;
use crate::time::millis;

pub mod codec;
pub mod look;

use super::claim::{ClaimOutcome, ClaimRequest, HistoryPolicy};

/// A script's reply: the outcome and the run as the script saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptReply<O> {
    pub outcome: O,
    /// The attempt (ours when won; the holder's otherwise). None when the run has no state.
    pub attempt: Option<u32>,
    pub lease_end: Option<i64>,
    pub runner: String,
    /// The run's status after the script (`running`, `finished`, ...), empty when it has none.
    pub status: String,
    pub server_now: i64,
    /// For overlap: the slot of the older run that holds the lease.
    pub other_slot: Option<i64>,
    /// For overlap: when that run was first claimed. A run first claimed after this slot was due
    /// was put ahead of it by a host catching up: one host alone would have run it first.
    pub other_started_at: Option<i64>,
    /// For a finish answered [`TokenOutcome::Retry`]: which retry of the slot is due (1 for the
    /// first); `lease_end` is when.
    pub retry: Option<u32>,
    /// For a won claim: its fencing token, greater than every earlier won claim's of the job
    /// (both formats; None from a format 1 script of a build before fences came to it).
    pub fence: Option<i64>,
    /// For heartbeat and finish of a run an operator released (`anarchon release`): who and why.
    pub released: Option<Released>,
}

/// Who released a run, and why (`anarchon release --by --reason`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Released {
    pub by: String,
    pub reason: String,
}

impl std::fmt::Display for Released {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.by.is_empty(), self.reason.is_empty()) {
            (true, true) => write!(f, "an operator released the run"),
            (false, true) => write!(f, "{} released the run", self.by),
            (true, false) => write!(f, "the run was released: {}", self.reason),
            (false, false) => write!(f, "{} released the run: {}", self.by, self.reason),
        }
    }
}

pub type ClaimReply = ScriptReply<ClaimOutcome>;

/// The answer of heartbeat and finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TokenOutcome {
    /// Done with our token.
    Ok,
    /// The run is gone, over, or held by another token: we no longer hold it.
    Lost,
    /// An operator released the run (`anarchon release`): the lease was not renewed, the command
    /// must stop and the attempt be finished (recorded with the release's status).
    Released,
    /// finish: the command failed with retries left (`--retries`): the attempt is recorded failed
    /// and the run waits, still in progress, for its retry at the reply's `lease_end`, which any
    /// claimant takes over as the next attempt (lua/lease/retry.lua).
    Retry,
}

pub type TokenReply = ScriptReply<TokenOutcome>;

impl TokenReply {
    /// In words, why a `lost` answer means the caller no longer holds the run.
    pub fn lost_reason(&self) -> String {
        if let Some(released) = &self.released {
            released.to_string()
        } else if self.status.is_empty() {
            "the run's state is gone (never claimed, or trimmed)".to_string()
        } else if self.status != "running" {
            format!("the run is {} already", self.status)
        } else {
            format!(
                "attempt {} is now held by {}",
                self.attempt.unwrap_or(0),
                self.runner
            )
        }
    }
}

/// Final status of a run given to finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishStatus {
    Finished,
    Failed,
}

/// The claim script's ARGV for `req` ([`codec::Claim`]; the tests seed stores with it too).
pub fn claim_args(req: &ClaimRequest) -> Vec<String> {
    use codec::LeaseCall;
    codec::Claim(req).args()
}

/// Claims `req.slot`: the claim script decides, atomically, unless a look at the slot taken first
/// already answers (held by another under a live lease: [`look`]), which spares the shared Redis a
/// script for every losing host of a herd.
pub async fn claim(
    conn: &mut Connection,
    keys: &LeaseKeys,
    req: &ClaimRequest,
) -> Result<ClaimReply> {
    // The look also reads the store's format key again: a claim creates a job, and must create
    // it in the format the store is in now, not the one this process read when it started.
    claim_sending(conn, keys, req, None).await
}

/// [`claim`], with `also` sent in the look's round trip ([`look::answer_sending`]): a backup
/// standing by announces itself in the same round trip as its look at the holder.
pub async fn claim_sending(
    conn: &mut Connection,
    keys: &LeaseKeys,
    req: &ClaimRequest,
    also: Option<&redis::Cmd>,
) -> Result<ClaimReply> {
    let (answer, keys) = look::answer_sending(conn, keys, req, also).await?;
    if let Some(answer) = answer {
        return Ok(answer);
    }
    codec::call(conn, &keys, &codec::Claim(req)).await
}

pub async fn heartbeat(
    conn: &mut Connection,
    keys: &LeaseKeys,
    slot: i64,
    token: &str,
    lease: Duration,
) -> Result<TokenReply> {
    let heartbeat = codec::Heartbeat {
        slot,
        token,
        lease,
        hand_over: false,
    };
    codec::call(conn, keys, &heartbeat).await
}

/// How many attempts beyond `--max-attempts` a run may have when the attempts before were handed
/// over (a hand-over spends none): `HAND_OVER_LEEWAY` of `lua/lease/handed_over.lua`.
pub const HAND_OVER_LEEWAY: u32 = 10;

/// The holder gives its run up (`anarchon cron` shutting down, its command stopped and gone): the
/// lease ends now, so the next claim (a backup standing by on another replica) records the
/// attempt `interrupted` and takes the run over at once, rather than when the lease would have
/// ended, and the attempt is not counted against `--max-attempts`. The heartbeat script with its
/// hand-over argument: only the current attempt's token can.
pub async fn hand_over(
    conn: &mut Connection,
    keys: &LeaseKeys,
    slot: i64,
    token: &str,
) -> Result<TokenReply> {
    let heartbeat = codec::Heartbeat {
        slot,
        token,
        lease: Duration::ZERO,
        hand_over: true,
    };
    codec::call(conn, keys, &heartbeat).await
}

/// A backup standing by for `slot` says so ([`LeaseKeys::standby`]) for `ttl`: the holder's
/// hand-over reads it. Best effort: a look at a run that it cannot write costs the backup nothing.
pub async fn announce_standby(
    conn: &mut Connection,
    keys: &LeaseKeys,
    slot: i64,
    runner: &str,
    ttl: Duration,
) -> Result<()> {
    conn.query::<()>(&standby_announcement(keys, slot, runner, ttl))
        .await
}

/// The command of [`announce_standby`], for a backup that sends it with its look
/// ([`claim_sending`]).
pub fn standby_announcement(
    keys: &LeaseKeys,
    slot: i64,
    runner: &str,
    ttl: Duration,
) -> redis::Cmd {
    let mut cmd = redis::cmd("SET");
    cmd.arg(keys.standby(slot))
        .arg(runner)
        .arg("PX")
        .arg(crate::time::millis(ttl).max(1));
    cmd
}

/// Who announced last, within their announcement's TTL, that they stand by for `slot` (None:
/// nobody does).
pub async fn standing_by(
    conn: &mut Connection,
    keys: &LeaseKeys,
    slot: i64,
) -> Result<Option<String>> {
    conn.query(redis::cmd("GET").arg(keys.standby(slot))).await
}

/// A renamed job's hand-over (`scheduler::lineage`): `slot` of this, the old name, claimed as
/// `attempt`, is the new name `newer`'s. The marker ([`LeaseKeys::handed`], `<attempt>:<newer>`)
/// lasts as long as the run is claimable (a minute at least), so that a later claimant of the old
/// name's slot tells this hand-over from a run under the old name.
pub async fn mark_handed(
    conn: &mut Connection,
    keys: &LeaseKeys,
    slot: i64,
    (attempt, newer): (u32, &str),
    history: &HistoryPolicy,
) -> Result<()> {
    let keep = millis(history.keep_claimable).max(60_000);
    let mut cmd = redis::cmd("SET");
    cmd.arg(keys.handed(slot))
        .arg(format!("{attempt}:{newer}"))
        .arg("PX")
        .arg(keep);
    conn.query::<()>(&cmd).await
}

/// The hand-over marker of `slot` ([`mark_handed`]): the attempt it was made as, and the newer
/// name. None: no marker (or none that reads as one).
pub async fn handed_to(
    conn: &mut Connection,
    keys: &LeaseKeys,
    slot: i64,
) -> Result<Option<(u32, String)>> {
    let marker: Option<String> = conn.query(redis::cmd("GET").arg(keys.handed(slot))).await?;
    Ok(marker.and_then(|m| {
        let (attempt, newer) = m.split_once(':')?;
        Some((attempt.parse().ok()?, newer.to_string()))
    }))
}

/// `result_json` must be valid JSON text (an object, or `null`).
pub async fn finish(
    conn: &mut Connection,
    keys: &LeaseKeys,
    slot: i64,
    token: &str,
    status: FinishStatus,
    result_json: &str,
    by_itself: bool,
) -> Result<TokenReply> {
    let finish = codec::Finish {
        slot,
        token,
        status,
        result_json,
        by_itself,
        retry: None,
    };
    codec::call(conn, keys, &finish).await
}

/// Whether the run of `slot` carries a release mark (`anarchon release`, `--overlap replace`): the
/// job hash's `released:<slot>` field, the same in both store formats (lua/lease/released.lua). One
/// HEXISTS, no script: the holder's keeper asks every second between heartbeats, so its command
/// hears of a release within about a second instead of a heartbeat interval.
pub async fn is_released(conn: &mut Connection, keys: &LeaseKeys, slot: i64) -> Result<bool> {
    conn.query(
        redis::cmd("HEXISTS")
            .arg(&keys.job)
            .arg(format!("released:{slot}")),
    )
    .await
}

/// What `release` did to a run in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReleaseOutcome {
    /// Its attempt was recorded and the run ended.
    Released,
    /// Its holder still has a live lease: the run is marked released and stays held until the
    /// holder, told at its next heartbeat, has stopped its command and recorded the attempt, or
    /// until the lease expires (then the next claim or release ends it).
    Releasing,
    /// It was not in progress (any more).
    None,
    /// Another attempt than the expected one holds it now: nothing was written.
    Changed,
}

/// How `release` records the attempt it ends: one type from the command line (`--status`) down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReleaseStatus {
    Interrupted,
    Failed,
}

impl ReleaseStatus {
    /// Every status, in the order `--help` lists them.
    pub const ALL: [ReleaseStatus; 2] = [ReleaseStatus::Interrupted, ReleaseStatus::Failed];

    /// The attempt's status as the store records it, and its name on the command line.
    pub const fn as_str(self) -> &'static str {
        match self {
            ReleaseStatus::Interrupted => "interrupted",
            ReleaseStatus::Failed => "failed",
        }
    }

    /// What `--help` says of it.
    pub const fn help(self) -> &'static str {
        match self {
            ReleaseStatus::Interrupted => "the attempt did not end by itself (the default)",
            ReleaseStatus::Failed => "the attempt is recorded as a failure, as a failed command's",
        }
    }
}

/// The release script's reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseReply {
    pub outcome: ReleaseOutcome,
    pub attempt: Option<u32>,
    pub runner: String,
    pub token: String,
    pub server_now: i64,
    /// The lease end of the attempt the script saw (None when nothing was in progress).
    pub lease_end: Option<i64>,
}

/// Releases the run in progress `slot` without its token (`anarchon release`). A holder with a
/// live lease may still be running the command, so unless `force`, such a run is only marked
/// (answered [`ReleaseOutcome::Releasing`]): it stays held until its holder has stopped the
/// command and recorded the attempt with `status` and `result_json` (who released it, why), or
/// until the lease expires. A run whose lease has expired, or any run with `force`, ends at once.
/// With `expected_attempt`, only if that attempt still holds it.
pub async fn release(
    conn: &mut Connection,
    keys: &LeaseKeys,
    slot: i64,
    expected_attempt: Option<u32>,
    status: &str,
    result_json: &str,
    force: bool,
) -> Result<ReleaseReply> {
    let release = codec::Release {
        slot,
        expected_attempt,
        status,
        result_json,
        force,
    };
    codec::call(conn, keys, &release).await
}

/// Trims history with the claim's rules; returns the trimmed slots (with `dry_run`, those that
/// would be). Works in calls that each look at no more than [`TRIM_BUDGET`] runs, so no single
/// script keeps the server busy for long, until nothing more can go.
pub async fn trim(
    conn: &mut Connection,
    keys: &LeaseKeys,
    policy: &HistoryPolicy,
    dry_run: bool,
) -> Result<Vec<i64>> {
    let mut trimmed = Vec::new();
    let mut cursor = "-inf".to_string();
    loop {
        // Each call goes on after the last run the previous one looked at. A real trim has
        // deleted what it planned (the count of runs shrank); a dry run counts its plan.
        let step = codec::TrimStep {
            policy,
            budget: if dry_run { DRY_RUN_BUDGET } else { TRIM_BUDGET },
            dry_run,
            cursor: &cursor,
            already: if dry_run { trimmed.len() } else { 0 },
        };
        let reply = codec::call(conn, keys, &step).await?;
        trimmed.extend(reply.slots);
        if reply.complete {
            return Ok(trimmed);
        }
        cursor = reply.cursor;
    }
}

/// How many runs one call of the trim script looks at, so that no call keeps the server busy for
/// a millisecond (measured by bench/server.sh: deleting a run costs about 10 µs of server time,
/// looking at one without deleting it a few).
pub const TRIM_BUDGET: usize = 16;

/// The same for a dry run, which only looks (but in format 2 reads each member whole: ~200 bytes).
pub const DRY_RUN_BUDGET: usize = 64;

/// How long after its slot the job's claimants may still claim a run, as they recorded it in the
/// job hash (`protect_ms`); None when no claimant of this version recorded it.
pub async fn recorded_protection(
    conn: &mut Connection,
    keys: &LeaseKeys,
) -> Result<Option<Duration>> {
    let value: Option<String> = conn
        .query(redis::cmd("HGET").arg(&keys.job).arg("protect_ms"))
        .await
        .map_err(|e| e.on_key(&keys.job, "hash"))?;
    value
        .map(|v| {
            v.parse::<u64>().map(Duration::from_millis).map_err(|_| {
                Error::corrupt(
                    &keys.job,
                    format!("field protect_ms is {v:?}, not an integer"),
                )
            })
        })
        .transpose()
}

/// For each of `slots`, whether any claim of it ever reached the store (what that means is the
/// format's: `LeaseFormat::queue_claimed`), in one pipeline. `run --catch-up` uses it
/// to pick only runs no host ever claimed; the claim itself still decides atomically.
pub async fn were_claimed(
    conn: &mut Connection,
    keys: &LeaseKeys,
    slots: &[i64],
) -> Result<Vec<bool>> {
    if slots.is_empty() {
        return Ok(Vec::new());
    }
    // In the job's own format (a migration may be converting it under the store's format key).
    let (replies, per_slot) = crate::store::job::in_job_format(conn, keys, async |conn, format| {
        let mut pipe = redis::pipe();
        let mut per_slot = 0;
        for slot in slots {
            per_slot = format.queue_claimed(&mut pipe, keys, *slot);
        }
        let replies: Vec<u64> = conn
            .pipeline(&pipe)
            .await
            .map_err(|e| e.on_key(&keys.state, "hash"))?;
        Ok((replies, per_slot))
    })
    .await?;
    Ok(replies
        .chunks(per_slot)
        .map(|c| c.iter().sum::<u64>() > 0)
        .collect())
}

/// What [`skip`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipOutcome {
    /// Recorded as skipped: no claim will run it.
    Skipped,
    /// Another host claimed it meanwhile: in progress or ended (with this status), left alone.
    Claimed(String),
    /// The job is paused over this slot: the pause skipped it already.
    Paused,
}

/// Records `slot`, a scheduled run nobody claimed, as skipped with `reason` (`run --catch-up`'s
/// policy), so that no later claim runs it and history and health show it. Atomic against claims:
/// a slot another host claimed first is left alone.
pub async fn skip(
    conn: &mut Connection,
    keys: &LeaseKeys,
    slot: i64,
    runner: &str,
    reason: &str,
) -> Result<SkipOutcome> {
    // A skip may create the job: in the format the store is in now.
    let keys = &crate::store::format::refresh(conn, keys).await?;
    codec::call(
        conn,
        keys,
        &codec::Skip {
            slot,
            runner,
            reason,
        },
    )
    .await
}

/// Takes back the skip of `slot` (a scheduled run nobody ran, recorded skipped by [`skip`]) so
/// that the next claim runs it: `run --backfill --include-skipped`. Only a slot whose whole
/// history is that skip; true when it was taken back, false when the slot is not such a skip (in
/// progress, ran, or never recorded).
pub async fn unskip(conn: &mut Connection, keys: &LeaseKeys, slot: i64) -> Result<bool> {
    let keys = &crate::store::format::refresh(conn, keys).await?;
    codec::call(conn, keys, &codec::Unskip { slot }).await
}

/// What became of each of `slots` (sorted, oldest first), as `run --backfill` needs to know:
/// `running` for a run in progress; the final attempt's status for an ended one (`skipped` for a
/// skip); `claimed` for one the store knows was claimed but whose history is gone (trimmed or
/// compacted); None for a slot no claim ever reached. Three reads: the runs in progress, the
/// `:results` members in the range, and the claim marks of the rest.
pub async fn slot_statuses(
    conn: &mut Connection,
    keys: &LeaseKeys,
    slots: &[i64],
) -> Result<Vec<Option<String>>> {
    let (Some(first), Some(last)) = (slots.first(), slots.last()) else {
        return Ok(Vec::new());
    };
    let in_progress: std::collections::HashSet<i64> =
        crate::store::job::in_job_format(conn, keys, async |conn, format| {
            format.runs_in_progress(conn, keys).await
        })
        .await?
        .into_iter()
        .map(|r| r.slot)
        .collect();
    let members: Vec<(String, String)> = conn
        .query(
            redis::cmd("ZRANGEBYSCORE")
                .arg(&keys.results)
                .arg(first)
                .arg(last)
                .arg("WITHSCORES"),
        )
        .await
        .map_err(|e| e.on_key(&keys.results, "zset"))?;
    let mut ended: std::collections::HashMap<i64, (u32, String)> = Default::default();
    for (member, score) in &members {
        let r = crate::store::read::ResultEntry::parse_scored(&keys.results, member, score)?;
        let attempt = r.attempt.unwrap_or(0);
        match ended.get(&r.slot) {
            Some((a, _)) if *a > attempt => {}
            _ => {
                ended.insert(r.slot, (attempt, r.status));
            }
        }
    }
    let unknown: Vec<i64> = slots
        .iter()
        .copied()
        .filter(|s| !in_progress.contains(s) && !ended.contains_key(s))
        .collect();
    let claimed: std::collections::HashSet<i64> = unknown
        .iter()
        .zip(were_claimed(conn, keys, &unknown).await?)
        .filter_map(|(slot, claimed)| claimed.then_some(*slot))
        .collect();
    Ok(slots
        .iter()
        .map(|slot| {
            if in_progress.contains(slot) {
                Some("running".to_string())
            } else if let Some((_, status)) = ended.get(slot) {
                Some(status.clone())
            } else {
                claimed.contains(slot).then(|| "claimed".to_string())
            }
        })
        .collect())
}

/// What [`hold_buffer`] answered: whether this slot is the job's one waiting slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferPlace {
    /// This slot waits for the older run (the place was free, had lapsed, or was this slot's).
    Held,
    /// Another slot (this one) waits already: `--overlap buffer` keeps one at most.
    Taken(i64),
}

/// How long a waiting place is held past the waiting host's last look (it looks every second
/// and holds it again each time): a waiter that dies frees the place within this.
pub const BUFFER_HOLD: Duration = Duration::from_secs(5);

/// `run --overlap buffer`: takes the job's one waiting place for `slot` until `until` (server
/// ms) or [`BUFFER_HOLD`] from now, whichever comes first (the waiting host holds it again at
/// every look, so a host that died waiting does not block later slots), unless another slot
/// holds it (lua/store/overlap_buffer.lua). Hosts of the same slot all hold it.
pub async fn hold_buffer(
    conn: &mut Connection,
    keys: &LeaseKeys,
    slot: i64,
    until: i64,
) -> Result<BufferPlace> {
    let args = [
        "hold".to_string(),
        slot.to_string(),
        until.to_string(),
        millis(BUFFER_HOLD).to_string(),
    ];
    let reply: Vec<String> = conn
        .eval(&crate::scripts::OVERLAP_BUFFER, &[keys.job.as_str()], &args)
        .await?;
    match reply.as_slice() {
        [answer, _] if answer == "buffered" => Ok(BufferPlace::Held),
        [answer, other] if answer == "full" => {
            other.parse().map(BufferPlace::Taken).map_err(|_| {
                Error::corrupt(&keys.job, format!("the buffer script answered {reply:?}"))
            })
        }
        _ => Err(Error::corrupt(
            &keys.job,
            format!("the buffer script answered {reply:?}"),
        )),
    }
}

/// The job's waiting place (`--overlap buffer`) at `now` (server ms): the slot that holds it and
/// until when, unless it is free or lapsed. One HGET.
pub async fn waiting_place(
    conn: &mut Connection,
    keys: &LeaseKeys,
    now: i64,
) -> Result<Option<(i64, i64)>> {
    let held: Option<String> = conn
        .query(redis::cmd("HGET").arg(&keys.job).arg("buffered"))
        .await
        .map_err(|e| e.on_key(&keys.job, "hash"))?;
    let Some(held) = held else { return Ok(None) };
    let (waiting, until) = crate::store::read::waiting_place(&keys.job, &held)?;
    Ok((until > now).then_some((waiting, until)))
}

/// Whether the slot in the job's waiting place is still waited for by a live host: a waiter
/// holds the place again at every look (each second), which moves the place's `until`; one that
/// has not moved within [`BUFFER_HOLD`] and a second belongs to a waiter that died (killed while
/// it waited), and its slot must not make a later one skipped. Looks four times a second, for at
/// most that long; true at once when the place moves or another slot takes it.
pub async fn waiter_alive(conn: &mut Connection, keys: &LeaseKeys) -> Result<bool> {
    let Some(first) = waiting_place(conn, keys, i64::MIN).await? else {
        return Ok(false);
    };
    let give_up = tokio::time::Instant::now() + BUFFER_HOLD + Duration::from_secs(1);
    while tokio::time::Instant::now() < give_up {
        tokio::time::sleep(Duration::from_millis(250)).await;
        match waiting_place(conn, keys, i64::MIN).await? {
            None => return Ok(false),
            Some(place) if place != first => return Ok(true),
            Some(_) => {}
        }
    }
    Ok(false)
}

/// The slot that holds the job's waiting place at `now`, unless the place is free, lapsed, or
/// `slot`'s own.
pub async fn waiting_slot(
    conn: &mut Connection,
    keys: &LeaseKeys,
    slot: i64,
    now: i64,
) -> Result<Option<i64>> {
    Ok(waiting_place(conn, keys, now)
        .await?
        .map(|(waiting, _)| waiting)
        .filter(|waiting| *waiting != slot))
}

/// Gives up `slot`'s waiting place (it was claimed, or waited too long): a later slot may wait.
/// The place of another slot is left alone.
pub async fn free_buffer(conn: &mut Connection, keys: &LeaseKeys, slot: i64) -> Result<()> {
    let args = ["free".to_string(), slot.to_string(), String::new()];
    let _: Vec<String> = conn
        .eval(&crate::scripts::OVERLAP_BUFFER, &[keys.job.as_str()], &args)
        .await?;
    Ok(())
}

/// When the job's first claim reached the store (`first_seen` in the job hash), or, for a job from
/// before that field (and every format 1 job), its oldest run in history; None for a job the store
/// has never seen. `run --catch-up` never catches up a slot before it: a first deployment must not
/// run every past slot of its schedule.
pub async fn first_seen(conn: &mut Connection, keys: &LeaseKeys) -> Result<Option<i64>> {
    let mut pipe = redis::pipe();
    pipe.cmd("HGET").arg(&keys.job).arg("first_seen");
    pipe.cmd("ZRANGE")
        .arg(&keys.results)
        .arg(0)
        .arg(0)
        .arg("WITHSCORES");
    let (recorded, oldest): (Option<String>, Vec<(String, f64)>) = conn
        .pipeline(&pipe)
        .await
        .map_err(|e| e.on_key(&keys.job, "hash"))?;
    let oldest = oldest.first().map(|(_, score)| *score as i64);
    crate::store::read::first_seen(&keys.job, recorded.as_deref(), oldest)
}

#[cfg(test)]
mod tests {
    /// The daemon stands by for runs under the same leeway the claim script gives them.
    #[test]
    fn the_hand_over_leeway_is_the_claim_script_s() {
        let script = include_str!("../../lua/lease/handed_over.lua");
        let said = format!("local HAND_OVER_LEEWAY = {}\n", super::HAND_OVER_LEEWAY);
        assert!(
            script.contains(&said),
            "{said:?} not in lua/lease/handed_over.lua"
        );
    }
}
