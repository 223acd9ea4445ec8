//! One line about a slot, for a person: what `run` says at a terminal and the daemon logs.

use std::time::Duration;

use crate::runner::event::{Audience, EventKind, RunEvent};
use crate::runner::{SlotOutcome, SlotReport};
use crate::time::rfc3339;

/// One line about a slot, for a person at a terminal, with the next step when it was not run.
pub fn describe(r: &SlotReport, now: i64, max_late: Duration) -> String {
    let at = format!("{} @ {}", r.job, rfc3339(r.slot));
    match r.outcome {
        SlotOutcome::Ran => format!(
            "{at}: {} as attempt {}{}{} (exit {})",
            r.status,
            r.attempt.unwrap_or(1),
            if r.backup {
                " after taking over as backup"
            } else {
                ""
            },
            waited_for_older(r),
            r.exit_code()
        ),
        SlotOutcome::Running => format!(
            "{at}: held by {} (attempt {}); not run here (`anarchon inspect {}` shows it)",
            r.runner,
            r.attempt.unwrap_or(0),
            r.job
        ),
        // Decided under an old name of the job (`lineage`): ran or skipped there.
        SlotOutcome::Done if r.skip_reason.is_some() => format!(
            "{at}: not run here ({}){}",
            r.skip_reason.as_deref().unwrap_or_default(),
            if r.skip_recorded == Some(true) {
                "; recorded as skipped"
            } else {
                ""
            }
        ),
        SlotOutcome::Done => format!(
            "{at}: already {}; not run here (`anarchon logs {}` shows how it ended)",
            r.status, r.job
        ),
        SlotOutcome::Overlap => format!(
            "{at}: skipped{} ({}; --overlap allow runs it anyway; `anarchon release {}` ends a stuck one)",
            if r.skip_recorded == Some(true) {
                ", recorded as skipped"
            } else {
                ""
            },
            r.skip_reason
                .clone()
                .unwrap_or_else(|| format!("an older run is still held by {}", r.runner)),
            r.job
        ),
        SlotOutcome::Unreplicated => format!(
            "{at}: won, but too few replicas acknowledged the claim; the command did not start and the run is recorded failed (--if-unreplicated run starts it anyway)"
        ),
        SlotOutcome::Excluded => format!(
            "{at}: in the exclusion window {}; skipped, and recorded so",
            r.skip_reason
                .as_deref()
                .map_or("-", |why| why.strip_prefix("excluded: ").unwrap_or(why))
        ),
        SlotOutcome::NoPermit => format!(
            "{at}: won, but a --limit had no room within --max-late; the command did not start and the run is recorded interrupted (`anarchon history {}` says who held the permits)",
            r.job
        ),
        SlotOutcome::Paused => match &r.skip_reason {
            Some(why) => format!("{at}: the job is paused ({why}); skipped"),
            None => format!(
                "{at}: the job is paused; skipped (`anarchon inspect {}` says by whom and why)",
                r.job
            ),
        },
        SlotOutcome::TooLate => format!(
            "{at}: {}s late, more than --max-late {}; skipped",
            (now - r.slot) / 1000,
            humantime::format_duration(max_late)
        ),
    }
}

/// ", after replacing the run of X" / ", after waiting 12s for the run of X" (`--overlap`).
fn waited_for_older(r: &SlotReport) -> String {
    use crate::runner::overlap::WaitedAs;
    let Some(w) = &r.overlap else {
        return String::new();
    };
    let older = w.older_slot.map_or("an older run".to_string(), |s| {
        format!("the run of {} ({})", rfc3339(s), w.older_runner)
    });
    let waited = crate::time::humanize(w.waited_ms);
    match w.policy {
        WaitedAs::Replace => format!(", after stopping {older} ({waited})"),
        WaitedAs::Buffer | WaitedAs::Wait => format!(", after waiting {waited} for {older}"),
    }
}

/// A slot's end as an event ([`crate::runner::event`]): [`describe`]'s line, with what a log
/// collector reads from it: finished or failed (and the command's exit code and duration),
/// skipped and why, or a routine "not run here" (another host ran it, or runs it).
pub fn event(r: &SlotReport, now: i64, max_late: Duration) -> RunEvent {
    let kind = match r.outcome {
        SlotOutcome::Ran => match r.status.as_str() {
            "finished" => EventKind::Finished,
            "failed" => EventKind::Failed,
            _ => EventKind::Ended,
        },
        // Decided under an old name and recorded skipped here: a decision, not a routine note.
        SlotOutcome::Done if r.skip_recorded == Some(true) => EventKind::Skipped,
        SlotOutcome::Running | SlotOutcome::Done => EventKind::NotRunHere,
        SlotOutcome::Overlap => EventKind::Skipped,
        SlotOutcome::Paused => EventKind::Paused,
        SlotOutcome::TooLate => EventKind::TooLate,
        SlotOutcome::Unreplicated => EventKind::Unreplicated,
        SlotOutcome::NoPermit => EventKind::NoPermit,
        SlotOutcome::Excluded => EventKind::Skipped,
    };
    let mut event =
        RunEvent::new(kind, &r.job, r.slot, describe(r, now, max_late)).to(Audience::Note);
    // The attempt is this host's only when it ran it (a skip names the holder's).
    if matches!(
        r.outcome,
        SlotOutcome::Ran | SlotOutcome::Unreplicated | SlotOutcome::NoPermit
    ) {
        event.attempt = r.attempt;
    }
    if let Some(command) = &r.command {
        event.exit_code = Some(command.process_exit_code());
        event.duration_ms = Some(command.duration_ms);
    }
    event
}
