//! `anarchon doctor`: is this server fit to hold the scheduler's store? One line per check.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::commands::Context;
use crate::connection::Connection;
use crate::error::{ExitCode, Result};
use crate::output::Tone;
use crate::server::{self, ServerInfo};
use crate::settings::read::DoctorSettings;
use crate::store::format::{STORE_FORMAT, parse_time_reply, readers};
use crate::store::{format_key, validate_prefix};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Ok,
    Warn,
    Fail,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Check {
    pub name: &'static str,
    pub status: Verdict,
    pub detail: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct DoctorReport {
    url: String,
    server: ServerInfo,
    /// Strategies this server can run.
    strategies: Vec<&'static str>,
    checks: Vec<Check>,
    ok: bool,
}

fn check(name: &'static str, status: Verdict, detail: impl Into<String>) -> Check {
    Check {
        name,
        status,
        detail: detail.into(),
    }
}

pub async fn execute(settings: &DoctorSettings, ctx: &Context) -> Result<ExitCode> {
    validate_prefix(ctx.prefix())?;
    let started = Instant::now();
    let mut conn = ctx.connect().await?;
    let connect_ms = started.elapsed().as_millis();
    let mut checks = vec![check(
        "connection",
        Verdict::Ok,
        format!("{} in {connect_ms} ms", conn.shown_url()),
    )];

    // The options the connection was opened with: resolving them again would repeat warnings.
    match conn.options().tls_verified() {
        Some(true) => checks.push(check("tls", Verdict::Ok, "the server's certificate is verified")),
        Some(false) => checks.push(check(
            "tls",
            Verdict::Warn,
            "certificate verification is off (--tls-insecure): anyone on the path can pose as this server",
        )),
        None => {}
    }

    let info = server::detect(&mut conn).await?;
    let mut strategies = vec!["lease", "stream-id", "script"];
    if info.supports_idmp() {
        strategies.push("idmp");
    }
    checks.extend(server_checks(&info));
    checks.extend(store_checks(&mut conn, ctx.prefix()).await);
    checks.extend(timing_checks(&mut conn, settings.pings).await?);
    let ok = checks.iter().all(|c| c.status != Verdict::Fail);
    if ctx.out.json {
        ctx.out.print_json(&DoctorReport {
            url: conn.shown_url().to_string(),
            server: info,
            strategies,
            checks,
            ok,
        });
    } else {
        for c in &checks {
            let (word, tone) = match c.status {
                Verdict::Ok => ("ok  ", Tone::Good),
                Verdict::Warn => ("warn", Tone::Warn),
                Verdict::Fail => ("fail", Tone::Bad),
            };
            crate::outln!("{} {:<11} {}", ctx.out.paint(word, tone), c.name, c.detail);
        }
    }
    Ok(if ok {
        ExitCode::Ok
    } else {
        ExitCode::CheckFailed
    })
}

/// What the server is, and whether it suits the store: version, strategies, mode, eviction.
fn server_checks(info: &ServerInfo) -> Vec<Check> {
    let mut checks = Vec::new();
    checks.push(if info.supports_anarchon() {
        check(
            "server",
            Verdict::Ok,
            format!("{} ({})", info.describe(), info.mode),
        )
    } else {
        check(
            "server",
            Verdict::Fail,
            format!(
                "{}: anarchon needs Redis 5 or newer (streams)",
                info.describe()
            ),
        )
    });
    checks.push(check(
        "strategies",
        Verdict::Ok,
        if info.supports_idmp() {
            "lease, stream-id, script, idmp".to_string()
        } else {
            format!(
                "lease, stream-id, script (idmp needs Redis 8.6+; this is {})",
                info.describe()
            )
        },
    ));
    checks.push(check(
        "mode",
        Verdict::Ok,
        match info.mode.as_str() {
            "cluster" => {
                "cluster: each job's lease keys share a hash tag, so every script touches one node"
                    .to_string()
            }
            other => other.to_string(),
        },
    ));
    checks.push(match info.maxmemory_policy.as_deref() {
        Some(p) if server::evicts_store_keys(p) => check(
            "eviction",
            Verdict::Warn,
            format!("maxmemory-policy {p} may evict claims, and an evicted claim can run twice; use noeviction"),
        ),
        Some(p) => check("eviction", Verdict::Ok, format!("maxmemory-policy {p}")),
        None => check("eviction", Verdict::Warn, "maxmemory-policy not reported"),
    });

    checks
}

/// Whether the store's data is safe here: persistence, the format key, scripting.
async fn store_checks(conn: &mut Connection, prefix: &str) -> Vec<Check> {
    let mut checks = Vec::new();
    let (aof, save) = server::read_persistence(conn).await;
    let (durable, words) = server::persistence_verdict(aof, save.as_deref());
    checks.push(check(
        "persistence",
        if durable { Verdict::Ok } else { Verdict::Warn },
        words,
    ));

    let key = format_key(prefix);
    let found: Result<Option<String>> = conn.query(redis::cmd("GET").arg(&key)).await;
    checks.push(match found {
        Ok(None) => check("format", Verdict::Ok, format!("{key} absent: {}", readers(None))),
        Ok(Some(v)) => match crate::store::format::parse_format(&v).ok_or(()) {
            Ok(n) if n <= STORE_FORMAT => check("format", Verdict::Ok, format!("{key} = {n}: {}", readers(Some(n)))),
            Ok(n) => check(
                "format",
                Verdict::Fail,
                format!("{key} = {n}, newer than format {STORE_FORMAT} this anarchon reads (error ANARCHON_STORE_FORMAT): upgrade"),
            ),
            Err(_) => check("format", Verdict::Fail, format!("{key} = {v:?}, not a number")),
        },
        Err(e) => check("format", Verdict::Fail, format!("{key}: {e}")),
    });

    let eval: Result<i64> = conn.query(redis::cmd("EVAL").arg("return 1").arg(0)).await;
    checks.push(match eval {
        Ok(1) => check("scripting", Verdict::Ok, "Lua scripts run"),
        Ok(other) => check("scripting", Verdict::Fail, format!("EVAL answered {other}")),
        Err(e) => check("scripting", Verdict::Fail, format!("{e}")),
    });

    checks
}

/// This host's clock against the server's, and the round trip to it.
async fn timing_checks(conn: &mut Connection, pings: u16) -> Result<Vec<Check>> {
    let mut checks = Vec::new();
    let (clock, latency) = clock_and_latency(conn, usize::from(pings)).await?;
    let skew = clock.abs();
    checks.push(check(
        "clock",
        if skew < 2_000 {
            Verdict::Ok
        } else {
            Verdict::Warn
        },
        format!(
            "this host's clock is {}{} ms {} the server's; anarchon uses only the server's clock",
            if skew < 2_000 { "" } else { "about " },
            skew,
            if clock >= 0 { "ahead of" } else { "behind" }
        ),
    ));
    let median = latency.as_secs_f64() * 1000.0;
    checks.push(check(
        "latency",
        if median < 50.0 {
            Verdict::Ok
        } else {
            Verdict::Warn
        },
        format!("median round trip {median:.2} ms over {} PINGs", pings),
    ));

    Ok(checks)
}

/// The client's clock minus the server's (ms, corrected by half a round trip), and the median
/// round trip of `pings` PINGs.
async fn clock_and_latency(
    conn: &mut crate::connection::Connection,
    pings: usize,
) -> Result<(i64, Duration)> {
    let before = Instant::now();
    let (secs, micros): (String, String) = conn.query(&redis::cmd("TIME")).await?;
    let rtt = before.elapsed();
    let server =
        parse_time_reply(&secs, &micros)? + i64::try_from(rtt.as_millis() / 2).unwrap_or(0);
    let client = chrono::Utc::now().timestamp_millis();
    let mut samples = Vec::with_capacity(pings);
    for _ in 0..pings.max(1) {
        let t = Instant::now();
        let _: String = conn.query(&redis::cmd("PING")).await?;
        samples.push(t.elapsed());
    }
    samples.sort();
    Ok((client - server, samples[samples.len() / 2]))
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![("doctor", crate::commands::output_schema::<DoctorReport>())]
}
