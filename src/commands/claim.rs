//! `anarchon claim JOB --slot S`: one atomic claim, with any strategy (the lease script, or a
//! claim-only strategy's command).

use crate::commands::Context;
use crate::commands::shared::claim_report::{ClaimReport, exit_code, print_claim};
use crate::error::{ExitCode, Result};
use crate::settings::claim::ClaimCommand;
use crate::store::RunKind;
use crate::strategy;
use crate::strategy::claim::ClaimOutcome;

pub async fn execute(c: &ClaimCommand, ctx: &Context) -> Result<ExitCode> {
    let job = c.job.as_str();
    let keys = ctx.lease_keys(job)?;
    let (mut conn, check) = ctx.open_for_a_run(c.strategy, &keys).await?;
    crate::store::job::require_job_or_new(&mut conn, ctx.prefix(), job, super::may_create(c.new))
        .await?;
    let slot = c.slot.resolve(check.server_now_ms);
    let req = c.claim.request(slot, RunKind::Scheduled);
    let target = strategy::Target::new(ctx.prefix(), job, c.strategy, &check);
    let mut reply = strategy::claim(&mut conn, target, &req, check.server_now_ms).await?;
    if reply.outcome == ClaimOutcome::Done && reply.runner.is_empty() && c.strategy.has_leases() {
        // A compacted run's state keeps its status alone: who ran its last attempt is in that
        // attempt's :results member, one read for the person asking.
        let last = crate::store::read::results_page(&mut conn, &keys.results, slot, slot, 0, 1)
            .await?
            .into_iter()
            .next();
        if let Some(last) = last.filter(|r| r.status == reply.status) {
            reply.runner = last.runner;
            reply.attempt = last.attempt;
        }
    }
    print_claim(ctx, &ClaimReport::new(job, &req, &reply));
    Ok(exit_code(reply.outcome))
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![(
        "claim",
        crate::commands::output_schema::<ClaimReport<'static>>(),
    )]
}
