//! `anarchon run-now JOB [-- COMMAND...]`: a manual run, now.
//!
//! Its slot is the server's clock in ms, its kind `manual` (docs/store-format.md). With a command it
//! runs exactly like `run`; without one it only claims, prints the slot and token, and leaves
//! heartbeat and finish to the caller.

use crate::cli::RunNowArgs;
use crate::commands::Context;
use crate::commands::claim::{ClaimReport, print_claim};
use crate::error::Result;
use crate::runner::run_slot;
use crate::store::{RunKind, format};
use crate::strategy::lease;

pub async fn execute(args: RunNowArgs, ctx: &Context) -> Result<i32> {
    let keys = ctx.lease_keys(&args.job)?;
    let opts = if args.command.is_empty() {
        None
    } else {
        Some(
            args.exec
                .runner_options(&args.command, args.lease.lease, None)?,
        )
    };
    let mut conn = ctx.connect().await?;
    let check = format::check_for_write(&mut conn, ctx.prefix()).await?;
    let req = args
        .lease
        .claim_request(check.server_now_ms, RunKind::Manual);
    match opts {
        Some(opts) => {
            let report = run_slot(&mut conn, &keys, &args.job, req, &opts).await?;
            if ctx.out.json {
                println!("{}", serde_json::to_string(&report).unwrap_or_default());
            }
            Ok(report.exit_code())
        }
        None => {
            let reply = lease::claim(&mut conn, &keys, &req).await?;
            print_claim(ctx, &ClaimReport::new(&args.job, &req, &reply));
            Ok(crate::commands::claim::exit_code(reply.outcome).code())
        }
    }
}
