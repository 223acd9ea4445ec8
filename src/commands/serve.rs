//! `anarchon serve [--listen ADDR]`: the read-only status page and `/metrics`, for a fleet of
//! `run` hosts that has no `anarchon cron` to serve them (src/page/).

use crate::commands::{Context, Interrupt};
use crate::error::{Error, ExitCode, Result};
use crate::store::validate_prefix;

pub async fn execute(listen: &str, ctx: &Context) -> Result<ExitCode> {
    if ctx.out.json {
        return Err(Error::usage(
            "serve serves HTML pages; it has no --json\n  hint: `anarchon list --json` and `anarchon inspect JOB --json` answer scripts",
        ));
    }
    validate_prefix(ctx.prefix())?;
    let addr = crate::settings::listen_address(listen)?;
    let options = ctx.global.connect_options()?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| Error::Other(format!("cannot listen on {addr}: {e}\n  hint: another program may hold the port; give --listen another")))?;
    let at = listener.local_addr().map_or(addr, |a| a);
    crate::errln!(
        "anarchon: serving the status page on http://{at}/ and metrics on http://{at}/metrics (read-only; Ctrl-C stops)"
    );
    if let Some(exposed) = crate::page::server::exposure(at) {
        crate::errln!("anarchon: warning: {exposed}");
    }
    let mut interrupt = Interrupt::new()?;
    crate::page::server::serve(listener, options, ctx.prefix(), interrupt.wait()).await?;
    Ok(ExitCode::Ok)
}
