//! Opening the store for a slot: the connection, the format check with the server's clock, the
//! job's registry and the types of its keys in one round trip, retried through a server that
//! does not answer for a moment.

use std::io::IsTerminal;

use crate::connection::retry::Retry;
use crate::connection::{ConnectOptions, Connection};
use crate::error::Result;
use crate::settings::run::RunSettings;
use crate::store::{LeaseKeys, StoreCheck, registry};
use crate::strategy::Strategy;

/// Connects, checks the format key and records the job in the registry when due
/// ([`check_and_register`]), retrying through a server that does not answer for a moment.
pub async fn open_and_register(
    options: &ConnectOptions,
    prefix: &str,
    run: &RunSettings,
    strategy: Strategy,
) -> Result<(Connection, StoreCheck)> {
    // A server that does not answer for a moment (a stall: CLIENT PAUSE, a slow fork, a failover;
    // a network hiccup) must not cost the slot: every host of a fleet would give up at once, and
    // nobody would run or record it. The opening is retried as a claim is; the slot is still
    // the one cron started this process for (`current_slot`).
    // A server that refuses for a reason that passes (full: OOM under noeviction; BUSY, LOADING)
    // is retried until `--max-late` after the slot, which is about when cron started this process:
    // a full Redis is an outage too, and giving up at once lost the slot on every host.
    let mut tries = Retry::for_a_slot(run.max_late).start();
    let mut said = false;
    loop {
        let opened = async {
            let mut conn = crate::strategy::connect_for(options, strategy).await?;
            let check = check_and_register(&mut conn, prefix, run, true).await?;
            Ok::<_, crate::error::Error>((conn, check))
        };
        let e = match opened.await {
            Ok(opened) => return Ok(opened),
            Err(e) => e,
        };
        match tries.after(&e) {
            Some(pause) => {
                if !said && !run.quiet() && std::io::stderr().is_terminal() {
                    crate::errln!(
                        "anarchon: {}; retrying for up to {}",
                        e.with_hint(),
                        humantime::format_duration(tries.span_for(&e).unwrap_or_default())
                    );
                    said = true;
                }
                tokio::time::sleep(pause).await;
            }
            // Refused past --max-late: the slot is missed, and the error says so.
            None if e.can_pass() && run.schedule.is_some() => {
                return Err(e.missed("cron started this run for", run.max_late));
            }
            None => return Err(e),
        }
    }
}

/// The reads sent with the format check when a run opens the store ([`check_and_register`]), and
/// the check of their replies that refuses keys of another type. `eviction`: the server's
/// eviction policy is read too.
fn opening_reads<'a>(
    strategy: Strategy,
    registration: &registry::Registration<'_>,
    keys: &'a LeaseKeys,
    eviction: bool,
) -> (
    Vec<redis::Cmd>,
    impl FnOnce(&[redis::Value]) -> Result<()> + 'a,
) {
    let mut reads = vec![registration.read()];
    if eviction {
        reads.push(crate::server::eviction_policy_read());
    }
    let types_from = reads.len();
    if strategy.has_leases() {
        reads.extend(keys.type_reads());
    }
    let refuse = move |replies: &[redis::Value]| match replies.get(types_from..) {
        Some(types) if strategy.has_leases() => keys.refuse_other_types(types),
        _ => Ok(()),
    };
    (reads, refuse)
}

/// The registry's reply among the opening reads; a warning about the eviction policy, when it was
/// read and evicts.
fn opening_read_back(reads: Vec<redis::Value>, eviction: bool) -> Option<redis::Value> {
    let mut reads = reads.into_iter();
    let registry_read = reads.next();
    if eviction
        && let Some(warning) = reads
            .next()
            .as_ref()
            .and_then(crate::server::eviction_warning)
    {
        crate::errln!("anarchon: {warning}");
    }
    registry_read
}

/// What `run` does when it opens the store, on a connection already open: the format check (the
/// server's clock with it); monitoring's record of the job (the registry), the server's eviction
/// policy (with `eviction`: each `run`, and `anarchon cron` once, since it opens the store at
/// every slot and CONFIG GET is no cheap read) and the types of the job's keys are read in the same
/// round trip, so most runs add no round trip. A job whose keys hold another type than its scripts
/// write is refused there, before the format key, the registry or a claim writes anything and
/// before the command runs (a `:runs` of another type was found only when the finish failed,
/// after the command had run). The registry is written when something changed
/// ([`register_if_due`]; not for a backfill: an operator's one-off is not the crontab line whose
/// settings monitoring reads). `anarchon cron` does this at each slot it takes, on its one
/// connection.
pub async fn check_and_register(
    conn: &mut Connection,
    prefix: &str,
    run: &RunSettings,
    eviction: bool,
) -> Result<StoreCheck> {
    let registration = registry::Registration::new(
        prefix,
        &run.job,
        &run.registry,
        registry::host_of(&run.claim.runner),
        &run.lineage,
    );
    let keys = LeaseKeys::new(prefix, &run.job);
    let (reads, refuse) = opening_reads(run.strategy, &registration, &keys, eviction);
    let (check, reads) =
        crate::store::format::check_for_write_and_read(conn, prefix, &reads, refuse).await?;
    let registry_read = opening_read_back(reads, eviction);
    if run.backfill.is_none() {
        register_if_due(conn, &registration, registry_read, check.server_now_ms).await;
    }
    Ok(check)
}

/// Writes the registry (a script) only when something changed since `registry_read`. A failure
/// here (a registry key of another type) must not keep the job from running.
async fn register_if_due(
    conn: &mut Connection,
    registration: &registry::Registration<'_>,
    registry_read: Option<redis::Value>,
    now: i64,
) {
    if registration.is_due(registry_read, now)
        && let Err(e) = registration.write(conn).await
    {
        crate::errln!("anarchon: warning: the job registry was not updated: {e}");
    }
}
