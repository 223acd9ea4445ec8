//! `anarchon finish JOB --slot S --token T --status ok|failed`: ends a held run.

use crate::cli::{FinishArgs, FinishStatusArg};
use crate::commands::Context;
use crate::commands::heartbeat::TokenReport;
use crate::error::{Error, ExitCode, Result};
use crate::store::RunKind;
use crate::strategy::{self, lease::FinishStatus};

pub async fn execute(args: FinishArgs, ctx: &Context) -> Result<ExitCode> {
    let job = args.target.job.as_str();
    ctx.lease_keys(job)?;
    let strategy = ctx.strategy(&args.strategy)?;
    let result_json = result_json(args.result.as_deref(), args.result_json.as_deref())?;
    let status = match args.status {
        FinishStatusArg::Ok => FinishStatus::Finished,
        FinishStatusArg::Failed => FinishStatus::Failed,
    };
    let (mut conn, check) = ctx.open_for_write(strategy).await?;
    let now = check.server_now_ms;
    let slot = args.target.slot.resolve(now);
    let token = if strategy.has_leases() {
        let keys = check.lease_keys(ctx.prefix(), job);
        crate::commands::full_token(&mut conn, &keys, slot, &args.token, now).await?
    } else {
        args.token.clone()
    };
    let target = strategy::Target::new(ctx.prefix(), job, strategy, &check);
    let ending = strategy::Ending {
        kind: RunKind::Scheduled,
        slot,
        token: &token,
        status,
        result_json: &result_json,
        ended_at: now,
        by_itself: false,
    };
    let reply = strategy::finish(&mut conn, target, &ending).await?;
    let report = TokenReport::new(job, slot, &reply);
    let attempt = reply
        .attempt
        .map_or(String::new(), |a| format!(" (attempt {a})"));
    report.print(ctx, &format!("{}{attempt}", reply.status));
    Ok(report.exit_code())
}

/// The largest result `finish` stores, as compact JSON text. Results live in Redis with every run
/// of history; a run's story (anarchon's own results keep 4 KiB of stderr) fits well below this.
pub const MAX_RESULT_BYTES: usize = 64 * 1024;

/// The deepest nesting of arrays and objects a result may have. Every reader (serde_json stops at
/// 128, Lua's cjson at 1000) must be able to decode every stored value: a result it cannot read
/// would make `list`, `inspect` and `history` fail for the whole job.
pub const MAX_RESULT_DEPTH: usize = 32;

/// The result as compact JSON text: `--result` becomes a JSON string, `--result-json` must parse.
/// Refuses results larger than [`MAX_RESULT_BYTES`] or deeper than [`MAX_RESULT_DEPTH`].
pub fn result_json(text: Option<&str>, json: Option<&str>) -> Result<String> {
    let value = match (text, json) {
        (Some(text), _) => serde_json::Value::String(text.to_string()),
        (None, Some(json)) => serde_json::from_str(json).map_err(|e| {
            Error::usage(format!("--result-json is not valid JSON ({e})\n  hint: quote it for the shell, e.g. --result-json '{{\"rows\":42}}'"))
        })?,
        (None, None) => serde_json::Value::Null,
    };
    let depth = json_depth(&value);
    if depth > MAX_RESULT_DEPTH {
        return Err(Error::usage(format!(
            "the result nests {depth} levels deep; at most {MAX_RESULT_DEPTH} are stored, so that every reader can decode it"
        )));
    }
    let text = value.to_string();
    if text.len() > MAX_RESULT_BYTES {
        return Err(Error::usage(format!(
            "the result is {} bytes as JSON; at most {MAX_RESULT_BYTES} are stored with each run\n  hint: store a summary, and keep large output elsewhere (a log, an object store)",
            text.len()
        )));
    }
    Ok(text)
}

/// How many arrays and objects nest in `value` at the deepest point (`[]` is 1, a scalar 0).
fn json_depth(value: &serde_json::Value) -> usize {
    // Iterative, so no input can exhaust the stack here either.
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((v, depth)) = stack.pop() {
        match v {
            serde_json::Value::Array(items) => {
                deepest = deepest.max(depth);
                stack.extend(items.iter().map(|i| (i, depth + 1)));
            }
            serde_json::Value::Object(map) => {
                deepest = deepest.max(depth);
                stack.extend(map.values().map(|i| (i, depth + 1)));
            }
            _ => {}
        }
    }
    deepest
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
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(result_json(None, Some(&deep(MAX_RESULT_DEPTH))).is_ok());
        assert!(result_json(None, Some(&deep(MAX_RESULT_DEPTH + 1))).is_err());
        assert!(result_json(Some(&"x".repeat(MAX_RESULT_BYTES)), None).is_err());
    }
}
