//! `anarchon run --backfill FROM..TO`: runs the schedule's slots in a past range that never ran,
//! oldest first, one at a time (Temporal's Backfill).
//!
//! Each slot is claimed like any run, so several hosts backfilling one range run each slot once:
//! a host that finds a slot held stands by as its backup and moves on when it has ended, so the
//! hosts go through the range together. A slot an older run still overlaps waits for it (the
//! operator asked for every slot; none is skipped for an overlap). Slots a policy recorded skipped
//! are run only with `--include-skipped`: their skip is taken back first (`unskip`, only for a slot
//! nothing ever ran), then they are claimed as new.

use std::io::IsTerminal;

use serde::Serialize;

use crate::commands::Context;
use crate::connection::Connection;
use crate::error::{Error, ExitCode, ExitStatus, Result};
use crate::runner::overlap::OnOverlap;
use crate::runner::{RunnerOptions, SlotOutcome, SlotReport, Target, run_in_turn};
use crate::schedule::Schedule;
use crate::settings::run::{Backfill as BackfillFlags, RunSettings};
use crate::strategy::claim::ClaimRequest;
use crate::strategy::lease;
use crate::time::rfc3339;

/// The most slots of the schedule one range may hold (a guard against `* * * * * *` over years).
const MAX_SLOTS_IN_RANGE: usize = 100_000;

/// What a backfill decides for one slot of the range before anything runs.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(super) struct Planned {
    slot: i64,
    slot_time: String,
    /// What the store says of it: null (never claimed), running, finished, failed, interrupted,
    /// skipped, or claimed (its history is gone).
    status: Option<String>,
    /// run, or why not: done (it ran or runs), skipped (a policy skipped it; --include-skipped
    /// runs it), excluded (in one of the job's exclusion windows, `--exclude`/`--calendar`:
    /// recorded skipped with the window's name, never run, --include-skipped or not), over_max
    /// (beyond --backfill-max).
    action: &'static str,
    /// The exclusion window that covers it (its name), for `excluded`.
    #[serde(skip_serializing_if = "Option::is_none")]
    excluded_by: Option<String>,
}

/// `run --backfill --json`: one document.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(super) struct Summary<'a> {
    job: &'a str,
    from: i64,
    from_time: String,
    to: i64,
    to_time: String,
    dry_run: bool,
    slots: &'a [Planned],
    /// The slots run (or claimed elsewhere meanwhile), one report each; empty on a dry run.
    runs: &'a [SlotReport],
    /// Slots that would run but are beyond --backfill-max.
    left_over: usize,
    exit_code: i32,
}

/// The range's slots, what the store says of each, and which to run.
struct Plan {
    from: i64,
    to: i64,
    slots: Vec<Planned>,
}

impl Plan {
    fn to_run(&self) -> impl Iterator<Item = &Planned> {
        self.slots.iter().filter(|p| p.action == "run")
    }

    fn left_over(&self) -> usize {
        self.slots.iter().filter(|p| p.action == "over_max").count()
    }
}

/// How a backfill runs: the job, and a claim request for each slot.
pub struct Backfill<'a> {
    pub target: Target<'a>,
    pub schedule: &'a Schedule,
    /// The job's exclusion windows (`--exclude`, its calendars' windows): their slots are not
    /// run but recorded skipped, as on any other path that decides a slot.
    pub exclusions: &'a [crate::exclusion::Exclusion],
    /// `--backfill` and the flags that go with it.
    pub flags: BackfillFlags,
    pub opts: &'a RunnerOptions,
    pub request: &'a (dyn Fn(i64) -> ClaimRequest + Sync),
    pub now: i64,
}

/// Plans the range and (unless --dry-run) runs it; returns the exit code: the first failing run's,
/// 87 when the job is paused, else 0.
pub async fn execute(
    conn: &mut Connection,
    ctx: &Context,
    run: &RunSettings,
    backfill: Backfill<'_>,
) -> Result<ExitStatus> {
    let plan = plan(conn, &backfill).await?;
    if backfill.flags.dry_run {
        print(ctx, run, &backfill, &plan, &[], 0);
        return Ok(ExitStatus::OK);
    }
    let opts = RunnerOptions {
        on_overlap: OnOverlap::Wait,
        ..backfill.opts.clone()
    };
    let keys = backfill.target.lease_keys();
    record_exclusions(conn, run, &backfill, &plan).await?;
    let slots: Vec<&Planned> = plan.to_run().collect();
    let bar = progress_bar(ctx, run, slots.len());
    let mut runs = Vec::new();
    for planned in slots {
        if let Some(bar) = &bar {
            bar.set_message(format!("running {}", planned.slot_time));
        }
        if planned.status.as_deref() == Some("skipped") {
            // False: it changed meanwhile (another host took it back and ran it); the claim
            // below answers as it is.
            lease::unskip(conn, &keys, planned.slot).await?;
        }
        let mut ahead = Vec::new();
        let report = run_in_turn(
            conn,
            backfill.target,
            backfill.request,
            planned.slot,
            &opts,
            backfill.now,
            &mut ahead,
        )
        .await?;
        runs.append(&mut ahead);
        let line = format!(
            "anarchon: {}",
            crate::scheduler::describe(&report, backfill.now, run.max_late)
        );
        match &bar {
            Some(bar) => {
                bar.inc(1);
                bar.println(line);
            }
            None if !ctx.out.json && !run.quiet() => crate::errln!("{line}"),
            None => {}
        }
        let paused = report.outcome == SlotOutcome::Paused;
        runs.push(report);
        if paused {
            break;
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let exit_status = exit_status(&runs);
    print(ctx, run, &backfill, &plan, &runs, exit_status.code());
    Ok(exit_status)
}

/// Records each excluded slot of the range that has no record yet skipped, with the window's name
/// (`excluded: NAME`), as the scheduled path does: monitoring counts it decided, and a later
/// backfill or catch-up finds it decided. A slot another host claimed meanwhile keeps its run.
async fn record_exclusions(
    conn: &mut Connection,
    run: &RunSettings,
    b: &Backfill<'_>,
    plan: &Plan,
) -> Result<()> {
    if !b.target.strategy.has_leases() {
        return Ok(());
    }
    let keys = b.target.lease_keys();
    for p in plan
        .slots
        .iter()
        .filter(|p| p.action == "excluded" && p.status.is_none())
    {
        let reason = format!("excluded: {}", p.excluded_by.as_deref().unwrap_or_default());
        crate::runner::retrying(conn, async |c| {
            lease::skip(c, &keys, p.slot, &run.claim.runner, &reason).await
        })
        .await?;
    }
    Ok(())
}

/// The schedule's slots in the range, oldest first, and what the store says of each.
async fn plan(conn: &mut Connection, b: &Backfill<'_>) -> Result<Plan> {
    let from = b.flags.range.from.resolve(b.now);
    let to = b.flags.range.to.resolve(b.now).min(b.now);
    if from > to {
        return Err(Error::usage(format!(
            "--backfill starts at {} after it ends at {} (a range's end past now is now)",
            rfc3339(from),
            rfc3339(to)
        )));
    }
    let mut slots = Vec::new();
    let mut after = from - 1;
    while let Some(slot) = b.schedule.next_after(after).filter(|s| *s <= to) {
        if slots.len() == MAX_SLOTS_IN_RANGE {
            return Err(Error::usage(format!(
                "--backfill {}..{} holds more than {MAX_SLOTS_IN_RANGE} slots of {:?}; give a shorter range",
                rfc3339(from),
                rfc3339(to),
                b.schedule.source()
            )));
        }
        slots.push(slot);
        after = slot;
    }
    let keys = b.target.lease_keys();
    let statuses = lease::slot_statuses(conn, &keys, &slots).await?;
    let mut to_run = 0usize;
    let planned = slots
        .into_iter()
        .zip(statuses)
        .map(|(slot, status)| {
            // Read in the schedule's zone, as the scheduled path reads it (across a
            // daylight-saving change too).
            let excluded_by = b
                .schedule
                .local(slot)
                .and_then(|at| crate::exclusion::covering(b.exclusions, at.naive_local()))
                .map(|window| window.name.clone());
            let action = match status.as_deref() {
                _ if excluded_by.is_some()
                    && !matches!(status.as_deref(), Some(s) if s != "skipped") =>
                {
                    "excluded"
                }
                None => "run",
                Some("skipped") if b.flags.include_skipped => "run",
                Some("skipped") => "skipped",
                Some(_) => "done",
            };
            let action = if action == "run" {
                to_run += 1;
                if to_run > b.flags.max as usize {
                    "over_max"
                } else {
                    "run"
                }
            } else {
                action
            };
            Planned {
                slot,
                slot_time: rfc3339(slot),
                status,
                action,
                excluded_by,
            }
        })
        .collect();
    Ok(Plan {
        from,
        to,
        slots: planned,
    })
}

/// The first failing run's exit code; 87 when the job was paused; else 0 (slots another host ran
/// meanwhile count as done: the range is backfilled either way).
fn exit_status(runs: &[SlotReport]) -> ExitStatus {
    crate::scheduler::first_failure(runs)
        .or_else(|| {
            runs.iter()
                .any(|r| r.outcome == SlotOutcome::Paused)
                .then_some(ExitCode::Paused.into())
        })
        .unwrap_or(ExitStatus::OK)
}

/// A bar over the slots to run, on a terminal (not with --json or --quiet).
fn progress_bar(ctx: &Context, run: &RunSettings, len: usize) -> Option<indicatif::ProgressBar> {
    if ctx.out.json || run.quiet() || !std::io::stderr().is_terminal() || len == 0 {
        return None;
    }
    let bar = indicatif::ProgressBar::new(len as u64);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(format!("backfilling {}", run.job));
    Some(bar)
}

/// The plan (dry run) or what ran: the JSON document, or lines for a person.
fn print(
    ctx: &Context,
    run: &RunSettings,
    b: &Backfill<'_>,
    plan: &Plan,
    runs: &[SlotReport],
    exit_code: i32,
) {
    let left_over = plan.left_over();
    if ctx.out.json {
        ctx.out.print_json_line(&Summary {
            job: &run.job,
            from: plan.from,
            from_time: rfc3339(plan.from),
            to: plan.to,
            to_time: rfc3339(plan.to),
            dry_run: b.flags.dry_run,
            slots: &plan.slots,
            runs,
            left_over,
            exit_code,
        });
        return;
    }
    if run.quiet() && !b.flags.dry_run {
        return;
    }
    let count = |action: &str| plan.slots.iter().filter(|p| p.action == action).count();
    let range = format!("{}..{}", rfc3339(plan.from), rfc3339(plan.to));
    if b.flags.dry_run {
        print_plan(b, plan, &range);
        return;
    }
    let ran = runs
        .iter()
        .filter(|r| r.outcome == SlotOutcome::Ran)
        .count();
    crate::errln!(
        "anarchon: {}: backfilled {range}: {ran} run here, {} by another host or already decided{}{}{}",
        run.job,
        runs.len() - ran,
        if count("excluded") > 0 {
            format!(
                ", {} excluded (recorded skipped: the job's exclusion windows)",
                count("excluded")
            )
        } else {
            String::new()
        },
        if count("skipped") > 0 {
            format!(
                ", {} skipped by a policy left alone (--include-skipped runs them)",
                count("skipped")
            )
        } else {
            String::new()
        },
        if left_over > 0 {
            format!(
                "; {left_over} more not run (--backfill-max {})",
                b.flags.max
            )
        } else {
            String::new()
        }
    );
}

/// `--dry-run` for a person: a summary line, then a line per slot of the range.
fn print_plan(b: &Backfill<'_>, plan: &Plan, range: &str) {
    let count = |action: &str| plan.slots.iter().filter(|p| p.action == action).count();
    let left_over = plan.left_over();
    crate::outln!(
        "{} slot(s) of {:?} in {range}: {} would run, {} ran or run already, {} skipped by a policy, {} excluded{}",
        plan.slots.len(),
        b.schedule.source(),
        count("run"),
        count("done"),
        count("skipped"),
        count("excluded"),
        if left_over > 0 {
            format!(", {left_over} over --backfill-max {}", b.flags.max)
        } else {
            String::new()
        }
    );
    for p in &plan.slots {
        let status = p.status.as_deref().unwrap_or("never run");
        let excluded;
        let what = match p.action {
            "run" => "would run",
            "done" => "left alone",
            "skipped" => "left alone (--include-skipped runs it)",
            "excluded" => {
                excluded = format!(
                    "excluded ({}): recorded skipped, never run",
                    p.excluded_by.as_deref().unwrap_or_default()
                );
                &excluded
            }
            _ => "not this time (--backfill-max)",
        };
        crate::outln!("{}  {status:<12} {what}", p.slot_time);
    }
}
