//! `anarchon metrics [--listen ADDR]`: Prometheus metrics of every job (src/metrics.rs), printed
//! once for node_exporter's textfile collector, or served over HTTP (hyper, on the tokio runtime
//! already in use) at `/metrics`, reading the store afresh at each scrape.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, Response, StatusCode};
use tokio::sync::Mutex;

use crate::commands::{Context, Interrupt};
use crate::connection::Connection;
use crate::error::{Error, ExitCode, Result};
use crate::metrics::{scrape, store_unreadable, text_reply};
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

/// Serves `/metrics` until SIGINT or SIGTERM. One connection to Redis, shared by the scrapes
/// (it multiplexes) and opened again after a failure; a scrape that cannot read the store
/// answers `anarchon_up 0`, as exporters do, so Prometheus alerts on it instead of on a gap.
async fn serve(addr: &str, ctx: &Context) -> Result<ExitCode> {
    let addr = crate::settings::listen_address(addr)?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| Error::Other(format!("cannot listen on {addr}: {e}")))?;
    let options = ctx.global.connect_options()?;
    let prefix: Arc<str> = Arc::from(ctx.prefix());
    let conn: Arc<Mutex<Option<Connection>>> = Arc::new(Mutex::new(None));
    crate::errln!(
        "anarchon: serving metrics on http://{}/metrics (Ctrl-C stops)",
        listener.local_addr().map_or(addr, |a| a)
    );
    let mut interrupt = Interrupt::new()?;
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(_) => continue,
            },
            () = interrupt.wait() => return Ok(ExitCode::Ok),
        };
        let (conn, prefix, options) = (conn.clone(), prefix.clone(), options.clone());
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                let (conn, prefix, options) = (conn.clone(), prefix.clone(), options.clone());
                async move { Ok::<_, Infallible>(respond(&req, &conn, &prefix, &options).await) }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}

async fn respond(
    req: &Request<hyper::body::Incoming>,
    conn: &Mutex<Option<Connection>>,
    prefix: &str,
    options: &crate::connection::ConnectOptions,
) -> Response<Full<Bytes>> {
    let reply = text_reply;
    match req.uri().path() {
        "/metrics" => {}
        "/" => {
            return reply(
                StatusCode::OK,
                "anarchon metrics exporter: see /metrics\n".to_string(),
            );
        }
        _ => {
            return reply(
                StatusCode::NOT_FOUND,
                "not found: try /metrics\n".to_string(),
            );
        }
    }
    let started = Instant::now();
    let mut held = conn.lock().await;
    if held.is_none() {
        *held = Connection::open(options).await.ok();
    }
    let mut current = held.clone();
    drop(held);
    let text = match current.as_mut() {
        Some(c) => scrape(c, prefix).await,
        None => Err(Error::Other("cannot connect".into())),
    };
    match text {
        Ok(text) => reply(StatusCode::OK, text),
        Err(e) => {
            // Open a fresh connection next time: after a restart the old one stays broken.
            *conn.lock().await = None;
            let why = e.to_string();
            let why = why.lines().next().unwrap_or_default();
            reply(
                StatusCode::OK,
                store_unreadable(why, started.elapsed().as_secs_f64() * 1000.0),
            )
        }
    }
}
