//! `anarchon finish JOB --slot S --token T --status ok|failed`: ends a held run.

use crate::commands::Context;
use crate::commands::shared::token_report::TokenReport;
use crate::error::{ExitCode, Result};
use crate::settings::claim::FinishCommand;
use crate::store::RunKind;
use crate::strategy;

pub async fn execute(f: &FinishCommand, ctx: &Context) -> Result<ExitCode> {
    let job = f.job.as_str();
    ctx.lease_keys(job)?;
    let (strategy, status, result_json) = (f.strategy, f.status, &f.result_json);
    let (mut conn, check) = ctx.open_for_write(strategy).await?;
    let now = check.server_now_ms;
    let slot = f.slot.resolve(now);
    let token = if strategy.has_leases() {
        let keys = check.lease_keys(ctx.prefix(), job);
        crate::commands::full_token(&mut conn, &keys, slot, &f.token, now).await?
    } else {
        f.token.clone()
    };
    let target = strategy::Target::new(ctx.prefix(), job, strategy, &check);
    let ending = strategy::Ending {
        kind: RunKind::Scheduled,
        slot,
        token: &token,
        status,
        result_json,
        ended_at: now,
        by_itself: false,
        retry: None,
    };
    let reply = strategy::finish(&mut conn, target, &ending).await?;
    let report = TokenReport::new(job, slot, &reply);
    let attempt = reply
        .attempt
        .map_or(String::new(), |a| format!(" (attempt {a})"));
    report.print(ctx, &format!("{}{attempt}", reply.status));
    Ok(report.exit_code())
}
