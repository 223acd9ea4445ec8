//! `anarchon finish JOB --slot S --token T --status ok|failed`: ends a held run.

use crate::cli::{FinishArgs, FinishStatusArg};
use crate::commands::Context;
use crate::commands::heartbeat::TokenReport;
use crate::error::{Error, ExitCode, Result};
use crate::store::{ClaimKeys, RunKind};
use crate::strategy::claim_only;
use crate::strategy::lease::{self, FinishStatus};

pub async fn execute(args: FinishArgs, ctx: &Context) -> Result<ExitCode> {
    let job = args.target.job.as_str();
    let keys = ctx.lease_keys(job)?;
    let strategy = ctx.strategy(&args.strategy)?;
    let result_json = result_json(args.result.as_deref(), args.result_json.as_deref())?;
    let status = match args.status {
        FinishStatusArg::Ok => FinishStatus::Finished,
        FinishStatusArg::Failed => FinishStatus::Failed,
    };
    let (mut conn, check) = ctx.open_for_write(strategy).await?;
    let now = check.server_now_ms;
    let slot = args.target.slot.resolve(now);
    let reply = if strategy.has_leases() {
        lease::finish(&mut conn, &keys, slot, &args.token, status, &result_json).await?
    } else {
        let keys = ClaimKeys::new(ctx.prefix(), job);
        claim_only::finish(
            &mut conn,
            &keys,
            strategy,
            RunKind::Scheduled,
            slot,
            &args.token,
            status,
            &result_json,
            now,
        )
        .await?
    };
    let report = TokenReport::new(job, slot, &reply);
    let attempt = reply
        .attempt
        .map_or(String::new(), |a| format!(" (attempt {a})"));
    report.print(ctx, &format!("{}{attempt}", reply.status));
    Ok(report.exit_code())
}

/// The result as compact JSON text: `--result` becomes a JSON string, `--result-json` must parse.
pub fn result_json(text: Option<&str>, json: Option<&str>) -> Result<String> {
    let value = match (text, json) {
        (Some(text), _) => serde_json::Value::String(text.to_string()),
        (None, Some(json)) => serde_json::from_str(json).map_err(|e| {
            Error::usage(format!("--result-json is not valid JSON ({e})\n  hint: quote it for the shell, e.g. --result-json '{{\"rows\":42}}'"))
        })?,
        (None, None) => serde_json::Value::Null,
    };
    Ok(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_become_compact_json() {
        assert_eq!(result_json(None, None).unwrap(), "null");
        assert_eq!(result_json(Some("a \"b\""), None).unwrap(), r#""a \"b\"""#);
        assert_eq!(
            result_json(None, Some(r#"{ "rows": 42 }"#)).unwrap(),
            r#"{"rows":42}"#
        );
        assert!(result_json(None, Some("{oops")).is_err());
    }
}
