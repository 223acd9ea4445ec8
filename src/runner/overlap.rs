//! What a host does when its scheduled slot's claim answers `overlap` (an older run of the job
//! still holds a live lease), by `run --overlap`:
//!
//! - `forbid` (the default): nothing more; the slot is recorded skipped.
//! - `replace`: the older run is released, as `anarchon release` does (its holder stops the
//!   command at its next heartbeat and records the attempt `interrupted`, "replaced by" this slot;
//!   a holder that is gone is ended when its lease expires), and then this slot is claimed.
//! - `buffer`: this slot takes the job's one waiting place (BufferOne) and claims again as soon as
//!   the older run has ended, until `--max-late` after the slot; a slot that finds another one
//!   waiting is recorded skipped.
//!
//! Neither ever runs two copies: every host still wins only through the claim script, which
//! answers `overlap` for as long as the older run holds its lease. The scripts claim as under
//! `forbid`; replace and buffer only decide how long a host keeps asking.

use std::time::Duration;

use serde::Serialize;
use tokio::time::{Instant, sleep};

use crate::connection::Connection;
use crate::error::Result;
use crate::runner::backup::Trouble;
use crate::runner::deadline::BootTime;
use crate::runner::retrying;
use crate::store::LeaseKeys;
use crate::strategy::claim::{ClaimOutcome, ClaimRequest};
use crate::strategy::lease::{self, BufferPlace, ClaimReply};
use crate::strategy::{OverlapPolicy, Target};
use crate::time::{humanize, millis, rfc3339};

/// `run --overlap`, beyond the claim: what a host does after an `overlap` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnOverlap {
    /// Record the slot skipped (`forbid`; `allow` never gets the answer).
    Skip,
    /// Stop the older run, then run this slot.
    Replace,
    /// Wait for the older run to end, at most until `max_late` after the slot; one slot at most.
    Buffer { max_late: Duration },
    /// Wait for the older run to end, however long (`run --backfill`: an operator asked for each
    /// slot, so none is skipped for an overlap).
    Wait,
}

impl OnOverlap {
    /// What a host running a scheduled slot under `policy` does after an `overlap` answer
    /// (`max_late`: how long after its slot a buffered one may still start). `allow` never gets
    /// the answer for a run beside an older one; a late claim that meets a newer run does, and
    /// skips as `forbid` does.
    pub fn of(policy: OverlapPolicy, max_late: Duration) -> OnOverlap {
        match policy {
            OverlapPolicy::Forbid | OverlapPolicy::Allow => OnOverlap::Skip,
            OverlapPolicy::Replace => OnOverlap::Replace,
            OverlapPolicy::Buffer => OnOverlap::Buffer { max_late },
        }
    }
}

/// How long a buffered slot waits between claims at most: the older run's end is noticed within
/// this (each claim of a waiting host is one script that writes nothing).
const BUFFER_POLL_MAX: Duration = Duration::from_secs(1);

/// How often a replacing host looks whether the released run has ended.
const REPLACE_POLL: Duration = Duration::from_millis(100);

/// After the released run's lease has ended, how long a replacing host still waits before it gives
/// up: the next claim ends such a run at once, so this only covers a holder that keeps renewing
/// its lease (one that cannot hear a release: another scheduler, an older anarchon).
const REPLACE_SLACK: Duration = Duration::from_secs(2);

/// How the reason of a run that `--overlap replace` released ends ("replaced by <slot> (--overlap
/// replace)"): how its holder tells the policy's work from an operator's release.
pub const REPLACE_REASON_END: &str = " (--overlap replace)";

/// How a host waited for the older run before its slot could start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WaitedAs {
    /// It stopped the older run (`--overlap replace`).
    Replace,
    /// It waited for the older run to end, within `--max-late` (`--overlap buffer`).
    Buffer,
    /// A backfilled slot that waited for the run in progress.
    Wait,
}

/// What waiting for the older run came to, for the slot's report (`run --json`: `overlap`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct OverlapWait {
    pub policy: WaitedAs,
    /// The older run waited for (or stopped), and its holder.
    pub older_slot: Option<i64>,
    pub older_runner: String,
    /// How long this host waited for it.
    pub waited_ms: u64,
}

/// Where waiting left the slot: the last claim's reply, when it was sent, and for a slot still
/// not claimed, why (the reason its skip is recorded with).
pub struct Settled {
    pub reply: ClaimReply,
    pub sent: BootTime,
    pub skip_reason: String,
    pub wait: Option<OverlapWait>,
}

impl Settled {
    /// The claim is decided (won, running elsewhere, done, paused): nothing to record here.
    fn decided(reply: ClaimReply, sent: BootTime) -> Self {
        Settled {
            reply,
            sent,
            skip_reason: String::new(),
            wait: None,
        }
    }

    /// Still refused: the slot is recorded skipped with `reason`.
    fn skipped(reply: ClaimReply, sent: BootTime, reason: String) -> Self {
        Settled {
            reply,
            sent,
            skip_reason: reason,
            wait: None,
        }
    }
}

/// The reason a slot refused by `--overlap forbid` is recorded skipped with.
fn forbid_reason(reply: &ClaimReply) -> String {
    format!(
        "--overlap forbid: {} was still in progress",
        older_run(reply)
    )
}

/// Acts on an `overlap` answer by `policy` (see the module's doc).
pub async fn settle(
    conn: &mut Connection,
    target: Target<'_>,
    req: &ClaimRequest,
    reply: ClaimReply,
    policy: OnOverlap,
    quiet: bool,
) -> Result<Settled> {
    let started = Instant::now();
    let keys = &target.lease_keys();
    let job = target.job;
    let older_slot = reply.other_slot;
    let older_runner = reply.runner.clone();
    let (mut settled, waited_as) = match policy {
        OnOverlap::Skip => {
            let reason = forbid_reason(&reply);
            return Ok(Settled::skipped(reply, BootTime::now(), reason));
        }
        // Replace and buffer act on *older* runs. A newer one in progress means this claim came
        // late (a host that stalled past the next slot): it is skipped, as under forbid.
        OnOverlap::Replace | OnOverlap::Buffer { .. } if newer_holds(&reply, req) => {
            let reason = newer_reason(policy, &reply);
            return Ok(Settled::skipped(reply, BootTime::now(), reason));
        }
        OnOverlap::Replace => (
            replace(conn, keys, job, req, reply, quiet).await?,
            WaitedAs::Replace,
        ),
        OnOverlap::Buffer { max_late } => (
            buffer(conn, keys, job, req, reply, max_late, quiet).await?,
            WaitedAs::Buffer,
        ),
        OnOverlap::Wait => {
            let what = format!(
                "{job} @ {} waits for the run in progress",
                rfc3339(req.slot)
            );
            let (reply, sent) = wait_for_older(conn, keys, &what, req, reply, None, quiet).await?;
            (Settled::decided(reply, sent), WaitedAs::Wait)
        }
    };
    settled.wait = Some(OverlapWait {
        policy: waited_as,
        older_slot,
        older_runner,
        waited_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    });
    Ok(settled)
}

/// `--overlap replace`: releases the older run (each one the claim names, in turn) and claims
/// again until the claim is decided; gives up, for a skip, when a released run outlives its lease
/// by [`REPLACE_SLACK`] (its holder keeps renewing it and cannot hear a release).
async fn replace(
    conn: &mut Connection,
    keys: &LeaseKeys,
    job: &str,
    req: &ClaimRequest,
    mut reply: ClaimReply,
    quiet: bool,
) -> Result<Settled> {
    let what = format!("replacing the older run of {job} @ {}", rfc3339(req.slot));
    let result = serde_json::json!({
        "released_by": req.runner,
        "reason": format!("replaced by {}{REPLACE_REASON_END}", rfc3339(req.slot)),
        "replaced_by": req.slot,
    })
    .to_string();
    let spinner = crate::lines::stderr_spinner(quiet);
    let mut sent = BootTime::now();
    let mut trouble = Trouble::default();
    // Each released (slot, attempt) and when waiting for it ends.
    let mut released: Vec<((i64, Option<u32>), Instant)> = Vec::new();
    while reply.outcome == ClaimOutcome::Overlap {
        let Some(older) = reply.other_slot else { break };
        if newer_holds(&reply, req) {
            finish_spinner(spinner);
            let reason = newer_reason(OnOverlap::Replace, &reply);
            return Ok(Settled::skipped(reply, sent, reason));
        }
        let key = (older, reply.attempt);
        let give_up = match released.iter().find(|(k, _)| *k == key) {
            Some((_, at)) => *at,
            None => {
                let at =
                    release_older(conn, keys, &reply, &result, &what, spinner.as_ref()).await?;
                released.push((key, at));
                at
            }
        };
        if Instant::now() >= give_up {
            let skip_reason = format!(
                "--overlap replace: {} was released but did not end (its holder keeps renewing its lease)",
                older_run(&reply)
            );
            finish_spinner(spinner);
            return Ok(Settled::skipped(reply, sent, skip_reason));
        }
        sleep(REPLACE_POLL).await;
        sent = BootTime::now();
        if let Some(r) = trouble.claim(conn, keys, req, &what, quiet).await? {
            reply = r;
        }
    }
    finish_spinner(spinner);
    Ok(Settled::decided(reply, sent))
}

/// Releases the older run an overlap answer names (as `anarchon release` marks it, with
/// `result`); returns when to stop waiting for it: its lease end as the release saw it, plus
/// [`REPLACE_SLACK`].
async fn release_older(
    conn: &mut Connection,
    keys: &LeaseKeys,
    reply: &ClaimReply,
    result: &str,
    what: &str,
    spinner: Option<&indicatif::ProgressBar>,
) -> Result<Instant> {
    let older = reply.other_slot.unwrap_or_default();
    let marked = retrying(conn, async |conn| {
        lease::release(
            conn,
            keys,
            older,
            reply.attempt,
            "interrupted",
            result,
            false,
        )
        .await
    })
    .await?;
    let left = marked
        .lease_end
        .map_or(0, |end| end - marked.server_now)
        .max(0);
    if let Some(bar) = spinner {
        bar.set_message(format!(
            "{what}: waiting for {} to stop attempt {} of {} (its lease ends in {})",
            marked.runner,
            reply.attempt.unwrap_or(0),
            rfc3339(older),
            humanize(left.unsigned_abs())
        ));
    }
    Ok(Instant::now() + Duration::from_millis(left.unsigned_abs()) + REPLACE_SLACK)
}

/// `--overlap buffer`: holds the job's one waiting place and claims again, just after the older
/// run's lease would end and at least every [`BUFFER_POLL_MAX`], until the claim is decided or
/// `max_late` after the slot has passed; then gives the place up.
async fn buffer(
    conn: &mut Connection,
    keys: &LeaseKeys,
    job: &str,
    req: &ClaimRequest,
    reply: ClaimReply,
    max_late: Duration,
    quiet: bool,
) -> Result<Settled> {
    let until = req.slot + millis(max_late);
    let first_older = older_run(&reply);
    if reply.server_now >= until {
        let reason = format!(
            "--overlap buffer: {first_older} was in progress past --max-late {}",
            humantime::format_duration(max_late)
        );
        return Ok(Settled::skipped(reply, BootTime::now(), reason));
    }
    let hold = async |conn: &mut Connection| {
        retrying(conn, async |conn| {
            lease::hold_buffer(conn, keys, req.slot, until).await
        })
        .await
    };
    let mut place = hold(conn).await?;
    // A waiter that died keeps the place until it lapses (a few seconds): wait that out rather
    // than record this slot skipped behind a slot nobody waits for.
    if matches!(place, BufferPlace::Taken(_))
        && !retrying(conn, async |conn| lease::waiter_alive(conn, keys).await).await?
    {
        place = hold(conn).await?;
    }
    if let BufferPlace::Taken(other) = place {
        let reason = format!(
            "--overlap buffer: the run of {} already waits for {first_older} (one waits at most)",
            rfc3339(other)
        );
        return Ok(Settled::skipped(reply, BootTime::now(), reason));
    }
    let what = format!(
        "{job} @ {} waits for the run in progress",
        rfc3339(req.slot)
    );
    let (reply, sent) = wait_for_older(conn, keys, &what, req, reply, Some(until), quiet).await?;
    // The place is this slot's no longer: it was claimed (here or elsewhere) or waited too long.
    if let Err(e) = retrying(conn, async |conn| {
        lease::free_buffer(conn, keys, req.slot).await
    })
    .await
        && !quiet
    {
        crate::errln!(
            "anarchon: {what}: its waiting place was not given up ({e}); it lapses at {}",
            rfc3339(until)
        );
    }
    let skip_reason = if newer_holds(&reply, req) {
        newer_reason(OnOverlap::Buffer { max_late }, &reply)
    } else {
        format!(
            "--overlap buffer: {} was still in progress at --max-late {}",
            older_run(&reply),
            humantime::format_duration(max_late)
        )
    };
    Ok(Settled::skipped(reply, sent, skip_reason))
}

/// Claims again, just after the older run's lease would end and at least every
/// [`BUFFER_POLL_MAX`], while the answer is `overlap` and (when given) the server's clock is before
/// `until`. Returns the last reply and when its claim was sent.
async fn wait_for_older(
    conn: &mut Connection,
    keys: &LeaseKeys,
    what: &str,
    req: &ClaimRequest,
    mut reply: ClaimReply,
    until: Option<i64>,
    quiet: bool,
) -> Result<(ClaimReply, BootTime)> {
    let spinner = crate::lines::stderr_spinner(quiet);
    let mut sent = BootTime::now();
    let mut trouble = Trouble::default();
    // With a deadline (buffer) only an older run is waited for; a backfill waits for any.
    let waits_for = |reply: &ClaimReply| until.is_none() || !newer_holds(reply, req);
    while reply.outcome == ClaimOutcome::Overlap
        && until.is_none_or(|u| reply.server_now < u)
        && waits_for(&reply)
    {
        let lease_left = reply.lease_end.unwrap_or(reply.server_now) - reply.server_now;
        if let Some(bar) = &spinner {
            bar.set_message(format!(
                "{what}: {} (lease ends in {}); runs when it ends{}",
                older_run(&reply),
                humanize(lease_left.max(0).unsigned_abs()),
                until.map_or(String::new(), |u| format!(", until {}", rfc3339(u)))
            ));
        }
        let mut nap = Duration::from_millis((lease_left + 25).max(0).unsigned_abs())
            .clamp(Duration::from_millis(25), BUFFER_POLL_MAX);
        if let Some(u) = until {
            nap = nap.min(Duration::from_millis(
                (u - reply.server_now).max(1).unsigned_abs(),
            ));
        }
        sleep(nap).await;
        if until.is_some() {
            // buffer: hold the waiting place again (it lapses a few seconds after the last
            // hold, so a waiter that dies does not keep it). Trouble here is the claim's to tell.
            let _ = lease::hold_buffer(conn, keys, req.slot, until.unwrap_or_default()).await;
        }
        sent = BootTime::now();
        if let Some(r) = trouble.claim(conn, keys, req, what, quiet).await? {
            reply = r;
        }
    }
    finish_spinner(spinner);
    Ok((reply, sent))
}

/// Whether the run in progress an overlap answer names is newer than this slot (the claim came
/// late, after the next slot was claimed).
fn newer_holds(reply: &ClaimReply, req: &ClaimRequest) -> bool {
    reply.other_slot.is_some_and(|other| other > req.slot)
}

/// Why a late slot is skipped under replace or buffer: those act on older runs only.
fn newer_reason(policy: OnOverlap, reply: &ClaimReply) -> String {
    let name = if policy == OnOverlap::Replace {
        "replace"
    } else {
        "buffer"
    };
    format!(
        "--overlap {name}: a newer run, {}, was in progress (this slot's claim came late; it neither stops nor waits for a newer run)",
        older_run(reply)
    )
}

/// "the run of <slot> (attempt N, runner)", for the run an overlap answer names.
fn older_run(reply: &ClaimReply) -> String {
    match reply.other_slot {
        Some(other) => format!(
            "the run of {} (attempt {}, {})",
            rfc3339(other),
            reply.attempt.map_or("?".to_string(), |a| a.to_string()),
            reply.runner
        ),
        None => "an older run".to_string(),
    }
}

fn finish_spinner(spinner: Option<indicatif::ProgressBar>) {
    if let Some(bar) = spinner {
        bar.finish_and_clear();
    }
}
