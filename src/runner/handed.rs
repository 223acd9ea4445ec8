//! A takeover of a slot that an old name's claim held for a renamed job (`scheduler::lineage`):
//! a replica of the new name `B` claimed the old name `A`'s slot first, marked it handed to `B`
//! (`{<prefix>A}:handed:<T>` = `<attempt>:B`), ran the slot under `B`, and was killed (or cut off)
//! before it ended `A`'s claim, the second of two steps in two hash slots. `A`'s claim lapses,
//! and a host still running `A` (an old replica, a crontab not yet edited) takes it over. Without
//! a look at `B` it would run the slot again after `B` ran it: the soak's rename finding (format
//! 2, seed 42). So a takeover of such a claim reads `B`'s record of the slot first:
//! - `B` recorded an end of it (ran it, or decided it): not run here. `A`'s slot is ended `finished`,
//!   `{"handed_to": B}`, its marker naming this attempt, so that `B`'s replicas taking over a
//!   lapsed run of `B` still go through `A` to it (lineage's "done" rule) and old replicas are
//!   answered done;
//! - `B` has none (the hand-over never reached `B`), or a run of it still `running` (lapsed as
//!   well: `B`'s lease is a third of `A`'s claim's): run here, as before; `B`'s replicas find
//!   `A`'s slot held and leave it to this host.

use crate::connection::Connection;
use crate::runner::{Run, SlotOutcome, SlotReport, event, retrying};
use crate::store::LeaseKeys;
use crate::strategy::claim::ClaimRequest;
use crate::strategy::lease::{self, ClaimReply};
use crate::time::rfc3339;

/// The newer name that ran (or holds) the slot whose old-name claim this takeover won, and its
/// status there; None when the slot is this name's to run.
async fn newer_name_has_it(
    conn: &mut Connection,
    keys: &LeaseKeys,
    prefix: &str,
    slot: i64,
    attempt: u32,
) -> Option<(String, String)> {
    if attempt < 2 {
        return None;
    }
    let (held_as, newer) = retrying(conn, async |c| lease::handed_to(c, keys, slot).await)
        .await
        .ok()
        .flatten()?;
    if held_as != attempt - 1 || newer.is_empty() {
        return None;
    }
    let newer_keys = LeaseKeys::new(prefix, &newer).with_format(keys.format);
    let statuses = retrying(conn, async |c| {
        lease::slot_statuses(c, &newer_keys, &[slot]).await
    })
    .await
    .ok()?;
    // A run of it still `running` under the new name has lapsed too (the new name's lease is a
    // third of the claim's held here): this takeover runs the slot, as before, and the new
    // name's replicas, finding this name's claim running, leave it to this one. Only an end
    // recorded there (ran, failed, decided) means the slot is the new name's.
    let status = statuses.into_iter().next().flatten()?;
    (status != "running").then_some((newer, status))
}

/// Before a takeover's command starts: when the claim it took over was a renamed job's hand-over
/// and the new name has the slot, ends this name's claim as handed to it and says so; the slot's
/// report. None: run the command.
pub(super) async fn to_a_newer_name(
    conn: &mut Connection,
    run: Run<'_>,
    won: &ClaimReply,
) -> Option<SlotReport> {
    let Run { target, req, opts } = run;
    if !target.strategy.has_leases() {
        return None;
    }
    let keys = target.lease_keys();
    let attempt = won.attempt.unwrap_or(1);
    let (newer, status) = newer_name_has_it(conn, &keys, target.prefix, req.slot, attempt).await?;
    end_as_handed(conn, &keys, req, attempt, &newer).await;
    opts.events.emit(&event::RunEvent::new(
        event::EventKind::NotRunHere,
        target.job,
        req.slot,
        format!(
            "{} @ {}: ran as {newer}, its newer name ({status}): its claim under {} was a hand-over whose holder went before ending it; ended as handed to {newer}, not run again",
            target.job,
            rfc3339(req.slot),
            target.job
        ),
    ).to(event::Audience::Always));
    let mut report = SlotReport::skipped(target.job, req.slot, SlotOutcome::Done, Some(won));
    report.status = "finished".to_string();
    report.backup = true;
    Some(report)
}

/// Ends this name's claim of the slot `finished`, `{"handed_to": newer}`, its marker naming this
/// attempt first (so that the new name's replicas read it as a hand-over of theirs).
async fn end_as_handed(
    conn: &mut Connection,
    keys: &LeaseKeys,
    req: &ClaimRequest,
    attempt: u32,
    newer: &str,
) {
    let result = serde_json::json!({ "handed_to": newer }).to_string();
    let ended = retrying(conn, async |c| {
        lease::mark_handed(c, keys, req.slot, (attempt, newer), &req.history).await?;
        lease::finish(
            c,
            keys,
            req.slot,
            &req.token,
            lease::FinishStatus::Finished,
            &result,
            true,
        )
        .await
    })
    .await;
    if let Err(e) = ended {
        crate::errln!(
            "anarchon: {} @ {}: the claim handed to {newer} was not ended ({e}); its lease ends by itself",
            keys.job,
            rfc3339(req.slot)
        );
    }
}
