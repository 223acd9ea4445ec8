//! What a long-running process (`anarchon cron`) knows of each job's store between its slots, so
//! that a slot does not read again what the last one found: the format key, the types of the job's
//! keys and its registry ([`super::check_and_register`]). `run` reads them at each start, once per
//! process; the daemon reads them at a job's first slot, and again when the store says something
//! changed:
//! - the connection was opened again (a restart, a failover: another server may answer);
//! - a slot of the job failed, or its finish was refused or lost (a script's refusal: a key of
//!   another type, `ANARCHON_WRONGTYPE`, a format a script does not write; the job's run taken by
//!   a release or another host);
//! - the job's settings changed (a reload: the registry is written again);
//! - [`RECHECK_AFTER`] passed since the last reading: a change no script refuses (a key retyped
//!   that only the finish writes, a registry deleted by hand) is found within it.
//!
//! A migration needs none of this to be followed at once: every claim reads the format key again
//! in its look (`strategy::lease::look`) and writes in the format it names, and every script call
//! follows a job converted under it (`LeaseFormat::eval`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::connection::Connection;
use crate::error::Result;
use crate::runner::{Recorded, SlotReport};
use crate::settings::run::RunSettings;
use crate::store::{StoreCheck, registry};

/// How long a job's reading is taken on trust when nothing said it changed. A job every second
/// reads the store's checks once a minute instead of every run; the host's last-seen time in the
/// registry is due far less often (`registry::HOST_REFRESH`).
pub const RECHECK_AFTER: Duration = Duration::from_secs(60);

/// The daemon's readings, by job name.
#[derive(Default)]
pub struct KnownStores {
    jobs: Mutex<HashMap<String, Reading>>,
}

/// What a slot's full opening found for one job, and under what.
#[derive(Clone)]
struct Reading {
    check: StoreCheck,
    /// The job's settings as they bear on the reading ([`digest`]).
    digest: String,
    /// The connection's generation it was read on.
    connection: u64,
    at: Instant,
}

/// How a slot was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    /// The store was read (the format, the server's clock, the registry, the keys' types).
    Read,
    /// From what an earlier slot of the job read: nothing was sent.
    Known,
}

impl KnownStores {
    /// The check a slot of `run` opens with, on `conn` (generation `connection`): the last
    /// reading, at `server_now` (the caller's reckoning of the server's clock), when it still
    /// holds; else the full opening ([`super::check_and_register`]), remembered when it succeeds.
    pub async fn open(
        &self,
        conn: &mut Connection,
        prefix: &str,
        run: &RunSettings,
        (eviction, connection, server_now): (bool, u64, i64),
    ) -> Result<(StoreCheck, Opened)> {
        let digest = digest(prefix, run);
        if let Some(known) = self.still_holds(&run.job, &digest, connection) {
            return Ok((known.as_of(server_now), Opened::Known));
        }
        let check = super::check_and_register(conn, prefix, run, eviction).await?;
        let reading = Reading {
            check,
            digest,
            connection,
            at: Instant::now(),
        };
        self.lock().insert(run.job.clone(), reading);
        Ok((check, Opened::Read))
    }

    /// The store said something changed for `job`: its next slot reads it again.
    pub fn forget(&self, job: &str) {
        self.lock().remove(job);
    }

    /// After a slot of `job`: forgets the reading when the slot failed, or when one of its runs
    /// could not be recorded as this host ran it ([`changed_under`]).
    pub fn after_slot<'a, T>(
        &self,
        job: &str,
        taken: &Result<T>,
        reports: impl IntoIterator<Item = &'a SlotReport>,
    ) {
        if taken.is_err() || reports.into_iter().any(changed_under) {
            self.forget(job);
        }
    }

    fn still_holds(&self, job: &str, digest: &str, connection: u64) -> Option<StoreCheck> {
        let jobs = self.lock();
        let known = jobs.get(job)?;
        let holds = known.connection == connection
            && known.digest == digest
            && known.at.elapsed() < RECHECK_AFTER;
        holds.then_some(known.check)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Reading>> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether a slot's report says the store changed under the run: its end refused (a key of
/// another type, bad data), unreachable, or the run no longer its to end.
fn changed_under(report: &SlotReport) -> bool {
    matches!(
        report.recorded,
        Some(Recorded::Refused { .. } | Recorded::Unreachable(_) | Recorded::LeaseLost(_))
    )
}

/// The job's settings as they bear on a reading: what its registration writes, and the strategy
/// (which keys, of which types, it has).
fn digest(prefix: &str, run: &RunSettings) -> String {
    let registration = registry::Registration::new(
        prefix,
        &run.job,
        &run.registry,
        registry::host_of(&run.claim.runner),
        &run.lineage,
    );
    format!("{:?}\n{}", run.strategy, registration.digest())
}
