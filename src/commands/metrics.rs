//! `anarchon metrics [--listen ADDR]`: Prometheus metrics of every job (src/metrics.rs), printed
//! once for node_exporter's textfile collector, or served over HTTP (hyper, on the tokio runtime
//! already in use) at `/metrics`, reading the store afresh at each scrape.

use crate::commands::{Context, Interrupt};
use crate::error::{Error, ExitCode, Result};
use crate::metrics::scrape;
use crate::settings::read::MetricsSettings;
use crate::store::validate_prefix;

pub async fn execute(settings: &MetricsSettings, ctx: &Context) -> Result<ExitCode> {
    if ctx.out.json {
        // The exposition format is text by definition; printing it under --json would hand a
        // script something it cannot parse, without a word.
        return Err(Error::usage(
            "metrics prints the Prometheus text format; it has no --json\n  hint: `anarchon check --json` and `anarchon list --json` give each job's health as JSON",
        ));
    }
    validate_prefix(ctx.prefix())?;
    match &settings.listen {
        None => {
            let mut conn = ctx.connect().await?;
            let text = scrape(&mut conn, ctx.prefix()).await?;
            crate::outln!("{}", text.trim_end());
            Ok(ExitCode::Ok)
        }
        Some(addr) => serve(addr, ctx).await,
    }
}

/// Serves `/metrics` until SIGINT or SIGTERM, with the status page beside it (src/page/: the
/// same server as `anarchon serve`). A scrape that cannot read the store answers `anarchon_up 0`,
/// as exporters do, so Prometheus alerts on it instead of on a gap.
async fn serve(addr: &str, ctx: &Context) -> Result<ExitCode> {
    let addr = crate::settings::listen_address(addr)?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| Error::Other(format!("cannot listen on {addr}: {e}")))?;
    let options = ctx.global.connect_options()?;
    let at = listener.local_addr().map_or(addr, |a| a);
    crate::errln!(
        "anarchon: serving metrics on http://{at}/metrics and the status page on http://{at}/ (Ctrl-C stops)"
    );
    if let Some(exposed) = crate::page::server::exposure(at) {
        crate::errln!("anarchon: warning: {exposed}");
    }
    let mut interrupt = Interrupt::new()?;
    crate::page::server::serve(listener, options, ctx.prefix(), interrupt.wait()).await?;
    Ok(ExitCode::Ok)
}
