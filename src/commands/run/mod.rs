//! `anarchon run --job JOB (--schedule CRON | --slot S) -- COMMAND...`: the crontab wrapper.
//!
//! The slot comes from the schedule evaluated at the *server's* clock, so hosts whose clocks
//! disagree still name the same run. Then [`crate::runner::run_slot`] claims it and runs the command.

mod backfill;

use std::io::IsTerminal;

use serde::Serialize;

use crate::commands::Context;
use crate::error::{ExitStatus, Result};
use crate::runner::{RunnerOptions, SlotReport, Target};
use crate::scheduler::{Outcome, Skipped, current_slot, open_and_register, slot_event, take_slot};
use crate::settings::run::RunSettings;
use crate::store::RunKind;
use crate::strategy::claim::ClaimRequest;
use crate::time::rfc3339;

/// `run --json`: one line, the current slot's report plus the caught-up and skipped ones.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct RunSummary<'a> {
    #[serde(flatten)]
    current: &'a SlotReport,
    catch_up: &'a [SlotReport],
    skipped: &'a [Skipped],
    exit_code: i32,
}

/// `run` with its settings resolved (from the command line, or a crontab line).
pub async fn execute(run: &RunSettings, ctx: &Context) -> Result<ExitStatus> {
    ctx.lease_keys(&run.job)?;
    let traced;
    let run = match ctx.trace(&run.claim.runner) {
        Some(exporter) => {
            traced = RunSettings {
                runner: RunnerOptions {
                    trace: Some(exporter),
                    ..run.runner.clone()
                },
                ..run.clone()
            };
            &traced
        }
        None => run,
    };
    let options = ctx.global.connect_options()?;
    let (mut conn, check) = open_and_register(&options, ctx.prefix(), run, run.strategy).await?;
    let (current, early) = current_slot(run, &check)?;
    if !early.is_zero() {
        // Started just before the slot by the server's clock: its run waits for it.
        tokio::time::sleep(early).await;
    }
    if let (Some(b), Some(schedule)) = (run.backfill, run.schedule.as_ref()) {
        let request = |slot: i64| -> ClaimRequest { run.claim.request(slot, RunKind::Scheduled) };
        let exclusions = run.exclusions(&mut conn, ctx.prefix()).await?;
        let backfill = backfill::Backfill {
            target: Target::new(ctx.prefix(), &run.job, run.strategy, &check),
            schedule,
            exclusions: &exclusions,
            flags: b,
            opts: &run.runner,
            request: &request,
            now: check.server_now_ms,
        };
        return backfill::execute(&mut conn, ctx, run, backfill).await;
    }
    let outcome = take_slot(&mut conn, ctx.prefix(), run, &check, current).await?;
    print_outcome(run, ctx, &outcome, check.server_now_ms);
    Ok(outcome.exit_status)
}

/// What a run did: the JSON summary line, or on a terminal a line per missed run skipped and per
/// slot (nothing with `--quiet`, or when stderr is a file: the command's output is the log there).
fn print_outcome(run: &RunSettings, ctx: &Context, outcome: &Outcome, now: i64) {
    let Outcome {
        skipped,
        caught_up,
        report,
        exit_status,
    } = outcome;
    let exit_code = exit_status.code();
    if ctx.out.json {
        let summary = RunSummary {
            current: report,
            catch_up: caught_up,
            skipped,
            exit_code,
        };
        ctx.out.print_json_line(&summary);
    } else if !run.quiet() && std::io::stderr().is_terminal() {
        // A line per reason: those older than the window, then the policy's.
        let mut rest = &skipped[..];
        while let Some(first) = rest.first() {
            let n = rest.iter().take_while(|s| s.reason == first.reason).count();
            let last = &rest[n - 1];
            crate::errln!(
                "anarchon: {}: {} missed run(s) from {} to {} not run ({}); recorded as skipped",
                run.job,
                n,
                rfc3339(first.slot),
                rfc3339(last.slot),
                first.reason
            );
            rest = &rest[n..];
        }
        for r in caught_up.iter().chain(std::iter::once(report)) {
            run.runner.events.emit(&slot_event(r, now, run.max_late));
        }
    }
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![
        (
            "run",
            crate::commands::output_schema::<RunSummary<'static>>(),
        ),
        (
            "run-backfill",
            crate::commands::output_schema::<backfill::Summary<'static>>(),
        ),
        ("run-now", crate::commands::output_schema::<SlotReport>()),
    ]
}
