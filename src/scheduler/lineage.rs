//! A job's earlier names (issue 46, item 5): every slot of a renamed job is claimed under its old
//! names first, so that a rename (`--job` changed, or a derived name re-derived by an edit of its
//! line) never runs one scheduled time twice, nor starts beside the old name's run in progress
//! under `--overlap forbid`, on one replica that reloads or across a rolling deploy where old
//! replicas run the old name and new ones the new name. Which names a job had is said by its
//! settings ([`RunSettings::lineage`]: `--was OLD`, and what a reload of `anarchon cron` carried
//! over, `daemon::lineage`); here is what [`super::take_slot`] does with them, for each
//! slot it takes (the current one, and each missed run it catches up) and for a run in progress
//! a replica stands by for.
//!
//! Each slot `T` of the job `B` is first claimed under each old name `A`, by `A`'s own claim
//! script, with `B`'s settings ([`before_slot`]):
//! - **won**: `T` is `B`'s. A marker `{<prefix>A}:handed:<T>` = `<attempt>:<B>` says so, and the
//!   claim of `A`'s `T` is held, heartbeated, while `B` takes `T` (so that under forbid a replica
//!   still running `A` sees `A` busy, as it would see its own run); when `B`'s run of `T` has ended,
//!   `A`'s `T` is finished (`finished`, result `{"handed_to": B}`), and old replicas claiming it
//!   are answered `done`. If `B`'s run did not end here (a shutdown's hand-over, a lost lease),
//!   `A`'s `T` is handed over too (its lease ends now), so that whoever takes `A`'s `T` over next
//!   decides again.
//! - **done**: when it ended `finished` and the marker names this attempt and `B`, a replica of
//!   `B` handed it: go on to claim `B`'s `T` (one of them runs it, the others are answered by
//!   `B`'s claim). Otherwise an old replica ran `T` as `A`, or `A` decided it (superseded by a
//!   newer run of `A` under forbid, or its attempts ran out): `B` does not run it, and records `T`
//!   skipped ("ran as A"; "skipped under A" when A skipped it).
//! - **running**: another replica holds `A`'s `T` (an old one running it, or a new one handing it
//!   to `B`): wait for it, as a backup stands by; a holder that dies leaves a lease that expires,
//!   and the claim then takes it over (and decides as above).
//! - **overlap** (`forbid`, `replace`, `buffer`): an older run of `A` holds a live lease: `T` is
//!   skipped, as the overlap of one job's own runs is; unless a host catching up put that run
//!   ahead of `T`, which is then waited for, as one name's runs wait ([`crate::runner::run_in_turn`]).
//! - **paused**: a pause of any of the job's names pauses the job: an operator who paused
//!   `nightly-v1` during a deploy that renames it to `nightly-v2` did not mean the new replicas to
//!   run it. `T` is not run (nor recorded, as the job's own pause records nothing).
//!
//! `A`'s and `B`'s keys are in two hash slots, so this is two steps: a crash between them leaves
//! `A`'s `T` held by a lease that expires, and the next claim of it (an old replica's takeover, a
//! new replica waiting, or this replica restarted) decides `T` again; the marker's attempt tells a
//! hand-over of this attempt from a later attempt that ran as `A`. An old replica's takeover reads
//! the marker and `B`'s record first (`runner::handed`): after a crash that came once `B`'s end
//! was recorded, it ends `A`'s `T` as handed to `B` rather than run it again.
//!
//! Two lineages that name each other (a rename back, `v1 --was v2`, while replicas of `v2 --was
//! v1` still run) would each claim the other's slot first and could hold what the other waits for:
//! the newer lineage (the registries' `was_at`) leaves the older name out ([`in_a_circle`]), and
//! the two sides meet on the claim the older side makes first.
//!
//! `--catch-up` looks at every name: a slot is missed only when no name claimed it (a claim of an
//! old name that was a hand-over to a newer name counts under that newer name), and it reaches
//! back to when the store first saw the oldest ([`Claims`]).

use std::time::Duration;

use tokio::task::JoinHandle;

use super::catch_up;
use crate::connection::Connection;
use crate::error::Result;
use crate::runner::{SlotOutcome, SlotReport};
use crate::settings::run::RunSettings;
use crate::store::{LeaseKeys, RunKind, StoreCheck};
use crate::strategy::claim::{ClaimOutcome, ClaimRequest};
use crate::strategy::lease;
use crate::strategy::lease::ClaimReply;
use crate::time::rfc3339;

/// The lease keys of each of `job`'s old names, in the format of the job's own keys.
pub(crate) fn old_keys(prefix: &str, job: &RunSettings, check: &StoreCheck) -> Vec<LeaseKeys> {
    if job.lineage.is_empty() || !job.strategy.has_leases() {
        return Vec::new();
    }
    let format = crate::strategy::Target::new(prefix, &job.job, job.strategy, check)
        .lease_keys()
        .format;
    job.lineage
        .iter()
        .map(|old| LeaseKeys::new(prefix, old).with_format(format))
        .collect()
}

/// The job's own lease keys, in its format.
fn own_keys(prefix: &str, job: &RunSettings, check: &StoreCheck) -> LeaseKeys {
    crate::strategy::Target::new(prefix, &job.job, job.strategy, check).lease_keys()
}

/// The job's pause, and the server's clock (ms), in one round trip.
async fn pause_and_now(
    conn: &mut Connection,
    keys: &LeaseKeys,
) -> Result<(crate::store::pause::Pause, i64)> {
    use crate::store::pause::{FIELDS, Pause};
    let mut pipe = redis::pipe();
    pipe.cmd("HMGET")
        .arg(&keys.job)
        .arg(&FIELDS[..])
        .cmd("TIME");
    let (values, (secs, micros)): (Vec<Option<String>>, (i64, i64)) = conn
        .pipeline(&pipe)
        .await
        .map_err(|e| e.on_key(&keys.job, "hash"))?;
    Ok((
        Pause::decode(&keys.job, &values)?,
        secs * 1000 + micros / 1000,
    ))
}

/// What a slot's first look reads, in one round trip: the job's pause, the server's clock (ms), and
/// which old names to leave out of the claims ([`in_a_circle`]).
async fn first_look(
    conn: &mut Connection,
    prefix: &str,
    job: &RunSettings,
    keys: &LeaseKeys,
) -> Result<(crate::store::pause::Pause, i64, Vec<bool>)> {
    use crate::store::pause::{FIELDS, Pause};
    use crate::store::registry::registry_key;
    let mut pipe = redis::pipe();
    pipe.cmd("HMGET")
        .arg(&keys.job)
        .arg(&FIELDS[..])
        .cmd("TIME");
    pipe.cmd("HGET")
        .arg(registry_key(prefix, &job.job))
        .arg("was_at");
    for old in &job.lineage {
        pipe.cmd("HMGET")
            .arg(registry_key(prefix, old))
            .arg("was")
            .arg("was_at");
    }
    let mut replies = conn.replies(&pipe).await?.into_iter();
    let mut next = || replies.next().unwrap_or(redis::Value::Nil);
    let values: Vec<Option<String>> = crate::store::read::decode(&keys.job, next())?;
    let (secs, micros): (i64, i64) = crate::store::read::decode("TIME", next())?;
    // The registries are monitoring's: one that does not read leaves every name claimed.
    let own_was_at: i64 = redis::from_redis_value::<Option<i64>>(next())
        .ok()
        .flatten()
        .unwrap_or(0);
    let skip = job
        .lineage
        .iter()
        .map(|old| {
            let (was, was_at) = redis::from_redis_value::<(Option<String>, Option<i64>)>(next())
                .unwrap_or((None, None));
            in_a_circle(job, own_was_at, old, was.as_deref(), was_at.unwrap_or(0))
        })
        .collect();
    Ok((
        Pause::decode(&keys.job, &values)?,
        secs * 1000 + micros / 1000,
        skip,
    ))
}

/// Whether `old`, an earlier name of `job`, names `job` as an earlier name of its own (`old_was`,
/// its registry's `was`) with an older lineage: a rename back (`v1` -> `v2 --was v1` -> `v1 --was
/// v2`) while replicas of both run. Each side would claim the other's slot first and hold it while
/// claiming its own: two replicas could each hold what the other waits for, and the slot would
/// wait for ever. The newer lineage (`was_at`; on a tie the greater name) leaves the older name out
/// of its claims: the older side still claims the newer name's slot first, so the two still meet
/// on one claim and each slot runs once.
fn in_a_circle(
    job: &RunSettings,
    own_was_at: i64,
    old: &str,
    old_was: Option<&str>,
    old_was_at: i64,
) -> bool {
    let names_us = old_was.is_some_and(|was| was.split(',').any(|name| name == job.job));
    names_us && (own_was_at, job.job.as_str()) > (old_was_at, old)
}

/// The claim of an old name's slot, held while the new name takes the slot.
pub(super) struct Held {
    old: String,
    keys: LeaseKeys,
    slot: i64,
    /// The old name's attempt this claim won: after the first, a takeover of a run in progress.
    attempt: u32,
    token: String,
    heartbeat: JoinHandle<()>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.heartbeat.abort();
    }
}

/// What the old names said of a slot.
pub(super) enum Before {
    /// Take the slot under the job's own name; the old names' claims held meanwhile.
    Take(Vec<Held>),
    /// Not run here: what became of the slot (skipped for an old name's run, recorded where the
    /// store has a place for it; or paused under an old name).
    Skip(Box<SlotReport>),
    /// An older slot's run under an old name, its holder gone with attempts left, holds the job
    /// ([`crate::runner::owed_takeover`]): that slot is taken first, then this one again.
    Behind(i64),
}

/// Each old name's answer.
enum Step {
    Hold(Box<Held>),
    Through,
    /// Decided under the old name (ran or skipped there), or an older run of it in progress: not
    /// run under the new one, recorded skipped with this reason (reported `Done`: decided under
    /// the old name).
    NotHere(String),
    /// The old name is paused over the slot.
    Paused,
    /// An older slot's run under the old name is owed its takeover first ([`Before::Behind`]).
    Behind(i64),
}

/// Before `job`'s slot is taken: its old names' claims of the slot ([`Step`], module docs).
/// Connection trouble is retried as a claim's; an error that stays leaves the slot to the other
/// replicas (what is held is handed over: its lease ends now).
pub(super) async fn before_slot(
    conn: &mut Connection,
    prefix: &str,
    job: &RunSettings,
    check: &StoreCheck,
    slot: i64,
) -> Result<Before> {
    let old_keys = old_keys(prefix, job, check);
    if old_keys.is_empty() {
        return Ok(Before::Take(Vec::new()));
    }
    // Paused under its own name (now, or over the slot): nothing is claimed under the old names,
    // where a claim held would only be handed on, spending one of their attempts; unless the slot
    // is before the pause and its run is in progress under an old name, whose takeover a pause
    // does not stop, as it stops no job's takeovers. (A pause that begins after this look is met
    // by the job's own claim, which continues such a run through it: see `continues`.)
    let own = own_keys(prefix, job, check);
    let (pause, now, in_circle) =
        crate::runner::retrying(conn, async |c| first_look(c, prefix, job, &own).await).await?;
    if pause.is_paused(slot) || (pause.is_paused(now) && !in_progress(conn, &old_keys, slot).await)
    {
        let report = SlotReport::skipped(&job.job, slot, SlotOutcome::Paused, None);
        return Ok(Before::Skip(Box::new(report)));
    }
    let mut held = Vec::new();
    let names: Vec<(&String, LeaseKeys)> = job
        .lineage
        .iter()
        .zip(old_keys)
        .zip(in_circle)
        .filter(|(_, in_circle)| !in_circle)
        .map(|(name, _)| name)
        .collect();
    for (at, (old, keys)) in names.iter().enumerate() {
        let reason = match step(conn, job, old, keys, slot).await {
            Ok(Step::Hold(h)) => {
                held.push(*h);
                continue;
            }
            Ok(Step::Through) => continue,
            Ok(Step::Behind(older)) => {
                finish_held(conn, job, held, Ending::HandedOn).await;
                return Ok(Before::Behind(older));
            }
            Ok(Step::NotHere(reason)) => reason,
            Ok(Step::Paused) => {
                finish_held(conn, job, held, Ending::HandedOn).await;
                return Ok(Before::Skip(Box::new(paused_under(job, old, slot))));
            }
            Err(e) => {
                crate::errln!(
                    "anarchon: {} @ {}: cannot claim it under {old}, its old name; not taken here (another replica may)",
                    job.job,
                    rfc3339(slot),
                );
                finish_held(conn, job, held, Ending::HandedOn).await;
                return Err(e);
            }
        };
        let recorded = crate::runner::retrying(conn, async |c| {
            lease::skip(c, &own, slot, &job.claim.runner, &reason).await
        })
        .await
        .is_ok_and(|o| o == lease::SkipOutcome::Skipped);
        // The names held before this one are handed to the job, which skipped the slot: where
        // its store has no record of the skip (format 1), theirs say why, their markers gone (a
        // `handed_to` with no record under the new name and no reason reads as a slot nobody
        // decided: the soak's checker found it, format 1, seed 13).
        let skipped = (!recorded).then(|| reason.clone());
        finish_held(conn, job, held, Ending::Finished { skipped }).await;
        settle_the_rest(conn, job, &names[at + 1..], slot, &reason).await;
        let mut report = SlotReport::skipped(&job.job, slot, SlotOutcome::Done, None);
        report.status = "skipped".to_string();
        report.skip_reason = Some(reason);
        report.skip_recorded = Some(recorded);
        return Ok(Before::Skip(Box::new(report)));
    }
    Ok(Before::Take(held))
}

/// The slot not run because `old`, an old name of the job, is paused over it.
fn paused_under(job: &RunSettings, old: &str, slot: i64) -> SlotReport {
    let mut report = SlotReport::skipped(&job.job, slot, SlotOutcome::Paused, None);
    report.status = "paused".to_string();
    report.skip_reason = Some(format!(
        "{old}, its old name, is paused (`anarchon resume {old}` ends it)"
    ));
    report
}

/// Whether the run of `slot` is in progress under any of the old names (`old`): read only while the
/// job is paused. A store that cannot be read says no (the pause then holds, as before).
async fn in_progress(conn: &mut Connection, old: &[LeaseKeys], slot: i64) -> bool {
    for keys in old {
        if status_of(conn, keys, slot).await.ok().flatten().as_deref() == Some("running") {
            return true;
        }
    }
    false
}

/// The status of `slot`'s run under `keys` (None: the slot has no run), retried through trouble
/// as a claim's reads are.
async fn status_of(conn: &mut Connection, keys: &LeaseKeys, slot: i64) -> Result<Option<String>> {
    let statuses =
        crate::runner::retrying(conn, async |c| lease::slot_statuses(c, keys, &[slot]).await)
            .await?;
    Ok(statuses.into_iter().next().flatten())
}

/// Whether the job's claim of the slot continues a run in progress under an old name (the claim
/// held there took it over: an attempt after the first), which a pause does not stop
/// ([`ClaimRequest::continues`]): a pause that began after the slot, while its holder under the
/// old name was gone and a replica of the new name waited to take it over, would otherwise refuse
/// the new name's claim, and the old name's claim, handed on, would be claimed by nobody until
/// long after the slot (the mixed soak, format 1, seed 24: a slot nobody ran, and no record of
/// why).
pub(super) fn continues(held: &[Held]) -> bool {
    held.iter().any(|h| h.attempt > 1)
}

/// The slot was decided under an old name (`reason`): the old names after it, not claimed yet,
/// are decided too. Their claims of the slot may be left from an earlier attempt of this lineage
/// (held, then handed over at a shutdown or a lost lease: leases that ran out with no end), and no
/// one else ends them: a replica of a newer name decides the slot from the first old name that
/// says, as this one did. So each is claimed once: an expired claim is taken over (a free one
/// won) and ended `finished`, `{"handed_to": <job>, "skipped": <reason>}`, its marker gone so that
/// it reads as decided under that name (a replica still running it skips the slot as "ran as"
/// it). A claim another replica holds is left to it; one already ended, or refused (an overlap, a
/// pause), says nothing to end.
async fn settle_the_rest(
    conn: &mut Connection,
    job: &RunSettings,
    rest: &[(&String, LeaseKeys)],
    slot: i64,
    reason: &str,
) {
    // Each claim here is ended by this replica alone: a shutdown waits for it.
    let _settling = crate::lines::settling();
    let result = serde_json::json!({ "handed_to": job.job, "skipped": reason }).to_string();
    for (old, keys) in rest {
        let req = old_name_request(job, slot);
        let ended = crate::runner::retrying(conn, async |c| {
            if lease::claim(c, keys, &req).await?.outcome != ClaimOutcome::Won {
                return Ok(false);
            }
            c.query::<()>(redis::cmd("DEL").arg(keys.handed(slot)))
                .await?;
            let status = lease::FinishStatus::Finished;
            lease::finish(c, keys, slot, &req.token, status, &result, true).await?;
            Ok(true)
        })
        .await;
        if let Err(e) = ended {
            crate::errln!(
                "anarchon: {} @ {}: the claim under {old}, its old name, was not ended ({e}); its lease ends by itself",
                job.job,
                rfc3339(slot),
            );
        }
    }
}

/// One old name's claim of `slot`, waiting while another replica holds it.
async fn step(
    conn: &mut Connection,
    job: &RunSettings,
    old: &str,
    keys: &LeaseKeys,
    slot: i64,
) -> Result<Step> {
    // One token for every try: a claim whose reply was lost is answered won again. The old
    // name's lease is three of the new name's: the new name's command is always stopped by its
    // own lease's rules (its heartbeats fail, its guard's deadline) long before this one could
    // lapse under the same faults, so an old replica never claims past it while the command runs.
    let req = old_name_request(job, slot);
    let poll = job.runner.standby_poll.max(Duration::from_millis(100));
    let mut said = false;
    loop {
        let reply =
            crate::runner::retrying(conn, async |c| lease::claim(c, keys, &req).await).await?;
        match reply.outcome {
            ClaimOutcome::Won => {
                let attempt = reply.attempt.unwrap_or(1);
                return Ok(Step::Hold(Box::new(
                    hold(conn, job, old, keys, &req, attempt).await?,
                )));
            }
            ClaimOutcome::Done => return decided_under(conn, job, (old, keys), slot, &reply).await,
            ClaimOutcome::Running => {
                if !said {
                    crate::errln!(
                        "anarchon: {} @ {}: {old}, its old name, holds this time (held by {}); waiting for it",
                        job.job,
                        rfc3339(slot),
                        reply.runner
                    );
                    said = true;
                }
                tokio::time::sleep(poll).await;
            }
            // An older run a host catching up put ahead of this slot: waited for, as one name's
            // runs wait for it (`run_in_turn`), then claimed again.
            ClaimOutcome::Overlap
                if crate::runner::ahead_of(&reply, &req, job.max_late).is_some() =>
            {
                tokio::time::sleep(poll).await;
            }
            ClaimOutcome::Overlap => {
                if let Some(older) = crate::runner::owed_takeover(&reply, &req) {
                    return Ok(Step::Behind(older));
                }
                return Ok(Step::NotHere(format!(
                    "--overlap {}: the run of {} under {old}, its old name (attempt {}, {}), was still in progress",
                    job.claim.overlap,
                    reply
                        .other_slot
                        .map_or_else(|| "an older slot".to_string(), rfc3339),
                    reply.attempt.unwrap_or(1),
                    reply.runner
                )));
            }
            ClaimOutcome::Paused => return Ok(Step::Paused),
        }
    }
}

/// The old name's slot ended ([`step`]'s `done`): through to the new name when a replica of it
/// handed the slot on (the marker names the attempt, ended `finished` once its run under the new
/// name was decided); otherwise the old name decided the slot (ran it, skipped it, or ended it
/// superseded by a newer run of its own, or handed over until its attempts ran out).
async fn decided_under(
    conn: &mut Connection,
    job: &RunSettings,
    (old, keys): (&str, &LeaseKeys),
    slot: i64,
    reply: &ClaimReply,
) -> Result<Step> {
    let marker =
        crate::runner::retrying(conn, async |c| lease::handed_to(c, keys, slot).await).await?;
    let ours = reply.attempt.map(|attempt| (attempt, job.job.clone()));
    if marker.is_some() && marker == ours && reply.status == "finished" {
        return Ok(Step::Through);
    }
    let by = if reply.runner.is_empty() {
        String::new()
    } else {
        format!(", by {}", reply.runner)
    };
    // Format 1 keeps a skip as a run ended `interrupted` (its record says `skipped`): which one
    // it is, the record says (one read, for this rare answer only).
    let status = if reply.status == "interrupted" {
        status_of(conn, keys, slot)
            .await
            .ok()
            .flatten()
            .filter(|s| s == "skipped")
            .unwrap_or_else(|| reply.status.clone())
    } else {
        reply.status.clone()
    };
    Ok(Step::NotHere(match status.as_str() {
        // Skipped under the old name (an overlap under forbid, a catch-up's policy): skipped
        // under both.
        "skipped" | "trimmed" => format!("{status} under {old}, its old name{by}"),
        status => format!("ran as {old}, its old name ({status}{by})"),
    }))
}

/// An old name's claim of the slot won as `attempt`: marked handed to `job` (the marker a later
/// claimant reads to tell this hand-over from a run under the old name) and kept alive while
/// `job` takes the slot.
async fn hold(
    conn: &mut Connection,
    job: &RunSettings,
    old: &str,
    keys: &LeaseKeys,
    req: &ClaimRequest,
    attempt: u32,
) -> Result<Held> {
    let handed = (attempt, job.job.as_str());
    crate::runner::retrying(conn, async |c| {
        lease::mark_handed(c, keys, req.slot, handed, &job.claim.history).await
    })
    .await?;
    Ok(Held {
        old: old.to_string(),
        keys: keys.clone(),
        slot: req.slot,
        attempt,
        token: req.token.clone(),
        heartbeat: keep_alive(conn.clone(), keys.clone(), req, job),
    })
}

/// How many of the new name's leases an old name's claim of a slot lasts ([`step`]).
const OLD_NAME_LEASES: u32 = 3;

/// The claim of `slot` under an old name, with `job`'s settings and [`OLD_NAME_LEASES`] of its
/// leases.
fn old_name_request(job: &RunSettings, slot: i64) -> ClaimRequest {
    let mut req = job.claim.request(slot, RunKind::Scheduled);
    req.lease *= OLD_NAME_LEASES;
    req
}

/// Heartbeats the held claim of an old name's slot while the new name takes it.
fn keep_alive(
    mut conn: Connection,
    keys: LeaseKeys,
    req: &ClaimRequest,
    job: &RunSettings,
) -> JoinHandle<()> {
    let (slot, token, lease) = (req.slot, req.token.clone(), req.lease);
    let every = job
        .runner
        .heartbeat
        .min(lease / 3)
        .max(Duration::from_millis(100));
    tokio::task::spawn_local(async move {
        loop {
            tokio::time::sleep(every).await;
            match lease::heartbeat(&mut conn, &keys, slot, &token, lease).await {
                Ok(reply) if reply.outcome != lease::TokenOutcome::Ok => return,
                Ok(_) => {}
                // Connection trouble: a fresh connection, and the next beat tries again while
                // the lease lives (a broken one would fail every beat after).
                Err(_) => {
                    let _ = tokio::time::timeout(lease / 3, conn.reconnect()).await;
                }
            }
        }
    })
}

/// After `job`'s slot was taken: the old names' held claims end ([`Ending`]).
pub(super) async fn after_slot(
    conn: &mut Connection,
    own: &LeaseKeys,
    job: &RunSettings,
    held: Vec<Held>,
    taken: &Result<SlotReport>,
) {
    if held.is_empty() {
        return;
    }
    let ending = ending(conn, own, job, taken).await;
    finish_held(conn, job, held, ending).await;
}

/// How the old names' held claims of a slot end, once the new name's claim of it is decided.
enum Ending {
    /// `finished`, handed to the new name: its run of the slot is decided (ran and ended, held
    /// by another replica of it, done, skipped, paused over the slot). `skipped`: why, when the
    /// new name skipped the slot and has no record saying so (the old name's is then the one).
    Finished { skipped: Option<String> },
    /// Handed over (the lease ends now): the slot may still need a run (handed over at a
    /// shutdown, its lease lost, an error), and the next claim of the old name's slot decides.
    HandedOn,
    /// Neither: whether the run ended cannot be read ([`leave_to_lapse`]).
    LeftToLapse,
}

async fn ending(
    conn: &mut Connection,
    own: &LeaseKeys,
    job: &RunSettings,
    taken: &Result<SlotReport>,
) -> Ending {
    let Ok(report) = taken else {
        return Ending::HandedOn;
    };
    let finished = Ending::Finished { skipped: None };
    match report.outcome {
        // Ran, its end not known here (the reply of its finish lost, its lease lost as the
        // command ended): what the new name's record says decides. A run recorded ended must not
        // be handed on, for an old replica would take the old name's claim over and run the slot
        // again.
        SlotOutcome::Ran
            if matches!(
                report.status.as_str(),
                "interrupted" | "unknown" | "running" | ""
            ) =>
        {
            match ended_under(conn, own, report.slot).await {
                Some(true) => finished,
                Some(false) => Ending::HandedOn,
                None => Ending::LeftToLapse,
            }
        }
        // Decided under the new name, with its record there (ran, or a skip it wrote), or held
        // by another of its replicas, which decides it.
        // (No room under a --limit: ended under the new name, its record says why.)
        SlotOutcome::Ran | SlotOutcome::Done | SlotOutcome::Running | SlotOutcome::NoPermit => {
            finished
        }
        // A skip the new name's store had no place for (format 1 keeps no skip records): said
        // in the old name's record, the one record of the slot.
        SlotOutcome::Overlap => Ending::Finished {
            skipped: report
                .skip_reason
                .clone()
                .filter(|_| report.skip_recorded != Some(true)),
        },
        // Refused as paused: for good when the pause covers the slot itself (no replica, old or
        // new, is to run it; a pause records nothing under the new name, so the old name's
        // claim, which old replicas read, says why nothing ran), for now when the claim only
        // came during a pause (a catch-up of an older slot: handed on, to be claimed after it).
        SlotOutcome::Paused => {
            let for_good = crate::runner::retrying(conn, async |c| pause_and_now(c, own).await)
                .await
                .is_ok_and(|(pause, _)| pause.is_paused(report.slot));
            if for_good {
                Ending::Finished {
                    skipped: Some(format!("paused under {}, its new name", job.job)),
                }
            } else {
                Ending::HandedOn
            }
        }
        // Not run, and no record under the new name: the old name's claim must not say
        // `finished` over a slot nobody ran. Handed over, the old name decides it again.
        SlotOutcome::TooLate | SlotOutcome::Unreplicated => Ending::HandedOn,
        // In an exclusion window: decided, and said in the old name's record too.
        SlotOutcome::Excluded => Ending::Finished {
            skipped: report.skip_reason.clone(),
        },
    }
}

/// Whether the new name's record of `slot` says its run ended (finished, failed, skipped, or
/// interrupted with its attempts spent): `Some(false)` while it is in progress (a takeover may
/// still run it); None when the store cannot be read.
async fn ended_under(conn: &mut Connection, own: &LeaseKeys, slot: i64) -> Option<bool> {
    Some(match status_of(conn, own, slot).await.ok()?.as_deref() {
        None | Some("running") => false,
        Some(_) => true,
    })
}

/// The old names' claims left to end by themselves (their heartbeats stop, their leases lapse):
/// when the store cannot say whether the new name's run ended, neither a finish (the slot may
/// need a run) nor a hand-over (it may have run) is right; by the time the lease lapses the new
/// name's record, or its lease, has decided, and the next claim of the old name's slot reads it.
fn leave_to_lapse(job: &RunSettings, held: Vec<Held>) {
    for h in held {
        h.heartbeat.abort();
        crate::errln!(
            "anarchon: {} @ {}: whether its run ended is not known here; the claim under {}, its old name, ends when its lease does",
            job.job,
            rfc3339(h.slot),
            h.old
        );
    }
}

/// While a claim of `slot` is refused by a pause that does not cover the slot (a late claim that
/// came during it): how long until the pause ends, if it ends soon enough to hold the old names'
/// claims through it (within the job's `--max-late`, a minute at least). None: the slot is paused
/// for good, or the pause lasts too long (the claims are then handed on, `after_slot`).
pub(super) async fn pause_passes(
    conn: &mut Connection,
    own: &LeaseKeys,
    job: &RunSettings,
    slot: i64,
) -> Option<Duration> {
    let (pause, now) = crate::runner::retrying(conn, async |c| pause_and_now(c, own).await)
        .await
        .ok()?;
    if pause.is_paused(slot) {
        return None;
    }
    let ends = pause.ends()?;
    let limit = crate::time::millis(job.max_late.max(Duration::from_secs(60)));
    let wait = (ends - now).max(0);
    (wait <= limit).then(|| Duration::from_millis(u64::try_from(wait).unwrap_or(0) + 50))
}

/// Ends the held claims as `ending` says: `finished` with the result `{"handed_to": <job>}` (and
/// `"skipped"`: why, when the new name skipped the slot and could not record it), handed over, or
/// left to lapse.
async fn finish_held(conn: &mut Connection, job: &RunSettings, held: Vec<Held>, ending: Ending) {
    // The held claims are ended by this replica alone: a shutdown waits for it.
    let _settling = crate::lines::settling();
    let finished = match ending {
        Ending::Finished { skipped } => {
            let mut result = serde_json::json!({ "handed_to": job.job });
            if let Some(reason) = &skipped {
                result["skipped"] = reason.as_str().into();
            }
            Some((result.to_string(), skipped.is_some()))
        }
        Ending::HandedOn => None,
        Ending::LeftToLapse => return leave_to_lapse(job, held),
    };
    for h in held {
        h.heartbeat.abort();
        let done = crate::runner::retrying(conn, async |c| match &finished {
            Some((result, unmark)) => {
                // A skip the new name has no record of: its marker goes first, so that no
                // replica of the new name goes through to claim the slot under it (and, finding
                // nothing there, run it); with the marker gone the slot reads as decided under
                // the old name.
                if *unmark {
                    c.query::<()>(redis::cmd("DEL").arg(h.keys.handed(h.slot)))
                        .await?;
                }
                lease::finish(
                    c,
                    &h.keys,
                    h.slot,
                    &h.token,
                    lease::FinishStatus::Finished,
                    result,
                    true,
                )
                .await
            }
            None => lease::hand_over(c, &h.keys, h.slot, &h.token).await,
        })
        .await;
        if let Err(e) = done {
            crate::errln!(
                "anarchon: {} @ {}: the claim under {}, its old name, was not ended ({e}); its lease ends by itself",
                job.job,
                rfc3339(h.slot),
                h.old
            );
        }
    }
}

/// What `--catch-up` asks of a renamed job's past, over all its names (module docs): when the
/// store first saw the oldest, and whether any name claimed a slot (an old name's claim that was
/// a hand-over, its marker present, is counted under the name it was handed to).
pub(crate) struct Claims<'a> {
    pub conn: &'a mut Connection,
    pub own: &'a LeaseKeys,
    pub old: &'a [LeaseKeys],
}

impl catch_up::Claims for Claims<'_> {
    async fn first_seen(&mut self) -> Result<Option<i64>> {
        let mut first = lease::first_seen(self.conn, self.own).await?;
        for keys in self.old {
            if let Some(seen) = lease::first_seen(self.conn, keys).await? {
                first = Some(first.map_or(seen, |f| f.min(seen)));
            }
        }
        Ok(first)
    }

    async fn were_claimed(&mut self, slots: &[i64]) -> Result<Vec<bool>> {
        let mut claimed = lease::were_claimed(self.conn, self.own, slots).await?;
        for keys in self.old {
            let asked: Vec<i64> = slots
                .iter()
                .zip(&claimed)
                .filter(|(_, c)| !**c)
                .map(|(s, _)| *s)
                .collect();
            if asked.is_empty() {
                break;
            }
            let under_old = lease::were_claimed(self.conn, keys, &asked).await?;
            let mut markers = redis::pipe();
            for slot in &asked {
                markers.cmd("EXISTS").arg(keys.handed(*slot));
            }
            let handed: Vec<i64> = self.conn.pipeline(&markers).await?;
            for ((slot, old), handed) in asked.iter().zip(under_old).zip(handed) {
                if old && handed == 0 {
                    let i = slots.iter().position(|s| s == slot).unwrap_or(0);
                    claimed[i] = true;
                }
            }
        }
        Ok(claimed)
    }
}
