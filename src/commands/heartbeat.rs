//! `anarchon heartbeat JOB --slot S --token T`: keeps a held lease alive.

use crate::commands::Context;
use crate::commands::shared::token_report::TokenReport;
use crate::error::{ExitCode, Result};
use crate::settings::claim::HeartbeatCommand;
use crate::strategy::lease;
use crate::time::{relative, rfc3339};
pub async fn execute(h: &HeartbeatCommand, ctx: &Context) -> Result<ExitCode> {
    let job = h.job.as_str();
    ctx.lease_keys(job)?;
    let strategy = h.strategy;
    let (mut conn, check) = ctx.open_for_write(strategy).await?;
    let slot = h.slot.resolve(check.server_now_ms);
    let keys = check.lease_keys(ctx.prefix(), job);
    let token =
        crate::commands::full_token(&mut conn, &keys, slot, &h.token, check.server_now_ms).await?;
    let reply = lease::heartbeat(&mut conn, &keys, slot, &token, h.lease).await?;
    let report = TokenReport::new(job, slot, &reply);
    let ok_line = match reply.lease_end {
        Some(end) => format!(
            "lease until {} ({})",
            rfc3339(end),
            relative(end, reply.server_now)
        ),
        None => "lease extended".to_string(),
    };
    report.print(ctx, &ok_line);
    Ok(report.exit_code())
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![
        (
            "heartbeat",
            crate::commands::output_schema::<TokenReport<'static>>(),
        ),
        (
            "finish",
            crate::commands::output_schema::<TokenReport<'static>>(),
        ),
    ]
}
