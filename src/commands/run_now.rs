//! `anarchon run-now JOB [-- COMMAND...]`: a manual run, now.
//!
//! Its slot is the server's clock in ms, its kind `manual` (docs/store-format.md). With a command it
//! runs exactly like `run`; without one it only claims, prints the slot and token, and leaves
//! heartbeat and finish to the caller.

use std::io::IsTerminal;

use crate::commands::Context;
use crate::commands::shared::claim_report::{ClaimReport, exit_code, print_claim};
use crate::error::{ExitStatus, Result};
use crate::runner::{Target, run_slot};
use crate::settings::claim::RunNowCommand;
use crate::store::RunKind;
use crate::store::events::{self, Action};
use crate::strategy;

pub async fn execute(r: &RunNowCommand, ctx: &Context) -> Result<ExitStatus> {
    let keys = ctx.lease_keys(&r.job)?;
    let strategy = r.strategy;
    let (mut conn, check) = ctx.open_for_a_run(strategy, &keys).await?;
    crate::store::job::require_job_or_new(
        &mut conn,
        ctx.prefix(),
        &r.job,
        super::may_create(r.new),
    )
    .await?;
    let now = check.server_now_ms;
    let req = r.claim.request(now, RunKind::Manual);
    // Recorded before the run, which may last hours: the events say who asked for it and why
    // from the start; the run's own claim and end follow as run events.
    let asked = match &r.runner {
        Some(_) => format!("asked for a manual run on {}", req.runner),
        None => format!(
            "asked for a manual run on {} (claimed only: heartbeat and finish by hand)",
            req.runner
        ),
    };
    let action =
        Action::new("run-now", &r.audit.by, r.audit.reason.as_deref(), asked).at_slot(req.slot);
    events::record(&mut conn, ctx.prefix(), &r.job, &action).await;
    match &r.runner {
        Some(opts) => {
            let target = Target::new(ctx.prefix(), &r.job, strategy, &check);
            let report = run_slot(&mut conn, target, req, opts, now).await?;
            if ctx.out.json {
                ctx.out.print_json_line(&report);
            } else if !opts.quiet && std::io::stderr().is_terminal() {
                // A run that did not happen says why, as `run` does.
                crate::errln!(
                    "anarchon: {}",
                    crate::scheduler::describe(&report, now, std::time::Duration::ZERO)
                );
            }
            Ok(report.exit_status())
        }
        None => {
            let target = strategy::Target::new(ctx.prefix(), &r.job, strategy, &check);
            let reply = strategy::claim(&mut conn, target, &req, now).await?;
            print_claim(ctx, &ClaimReport::new(&r.job, &req, &reply));
            Ok(exit_code(reply.outcome).into())
        }
    }
}
