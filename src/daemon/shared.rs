//! What the daemon's parts share ([`Shared`]): the one connection to the store and how it is
//! opened again, the server's clock as last read, whether the store answers, the slot tasks and
//! the daemon's counters. Its own module so that the job loops ([`super::daemon`]) and the health
//! endpoint ([`super::health`]) both read it without importing each other.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::connection::{ConnectOptions, Connection};
use crate::lines::RunLabel;
use crate::settings::run::RunSettings;
use crate::store::StoreCheck;
use crate::time::millis;

/// What the job loops, slot tasks, signals and the health endpoint share.
pub(super) struct Shared {
    pub(super) prefix: String,
    /// How the connection is opened (the readiness probe opens one of its own with them).
    pub(super) options: ConnectOptions,
    /// The server's address without its password, for messages.
    pub(super) shown_url: String,
    /// The one connection, and how many times it was opened (a task that saw it fail opens it
    /// again only if nobody has since).
    pub(super) conn: tokio::sync::Mutex<(Connection, u64)>,
    /// The server's clock as last read: its ms then, and this machine's monotonic instant then.
    pub(super) clock: std::sync::Mutex<(i64, Instant)>,
    /// Whether the store answers: set by a slot's opening and its reconnects, and every second by
    /// the readiness probe when there is one (`--listen`: [`health`]), which alone notices a
    /// store lost between slots.
    pub(super) connected: AtomicBool,
    /// Whether a slot's opening has asked the server's eviction policy (once: it is said once,
    /// and CONFIG GET at every slot would cost every slot).
    pub(super) eviction_asked: AtomicBool,
    /// Told to the commands when the shutdown grace is over.
    pub(super) stop_commands: watch::Receiver<bool>,
    /// The slot tasks, running and done (pruned as they end).
    pub(super) slots: std::sync::Mutex<Vec<SlotTask>>,
    pub(super) stats: Stats,
    /// Whether orphans re-parented to this process are reaped here
    /// ([`crate::settings::cron::DaemonSettings::owns_the_process`]).
    pub(super) reaps_orphans: bool,
    /// The crontab's jobs as the job loops run them (set by every reload), for the run-now
    /// requests ([`super::requests`]): a request runs the job's own line.
    pub(super) crontab: std::sync::Mutex<Vec<Arc<RunSettings>>>,
    /// Told when `crontab` changes: the replica's presence is written again at once.
    pub(super) crontab_changed: tokio::sync::Notify,
    /// What each job's last slot read of the store (the format, its keys' types, its registry),
    /// so the next reads it again only when something changed.
    pub(super) known: crate::scheduler::known::KnownStores,
    /// The status page's pages of this store, served beside `/metrics` by `--listen`.
    pub(super) pages: crate::page::server::Pages,
    /// How late this daemon's runs started, per job, for `/metrics` ([`super::lateness`]).
    pub(super) lateness: Arc<super::lateness::Lateness>,
    /// The live replicas, for who claims a slot first ([`super::herd`]).
    pub(super) fleet: super::herd::Fleet,
    /// `--max-running`: the room for commands on this replica ([`super::cap`]).
    pub(super) cap: Option<super::cap::Cap>,
    /// The backups standing by here, woken by a hand-over the requests stream tells of
    /// ([`super::requests`]).
    pub(super) wakeups: Arc<crate::runner::backup::Wakeups>,
    /// Where the runs' spans go (None: tracing is off).
    pub(super) trace: Option<crate::trace::Exporter>,
}

/// The daemon's own counters, for `/metrics`.
#[derive(Default)]
pub(super) struct Stats {
    pub jobs: AtomicU64,
    pub slots_taken: AtomicU64,
    pub runs_started: AtomicU64,
    pub reloads: AtomicU64,
    pub reload_errors: AtomicU64,
    pub reconnects: AtomicU64,
    pub orphans_reaped: AtomicU64,
}

pub(super) struct SlotTask {
    pub(super) label: Arc<RunLabel>,
    pub(super) handle: JoinHandle<()>,
}

impl Shared {
    /// The server's time now, from its clock as last read and this machine's monotonic clock
    /// since (never this machine's wall clock).
    pub(super) fn server_now(&self) -> i64 {
        let (ms, at) = *self.clock.lock().unwrap_or_else(|e| e.into_inner());
        ms + millis(at.elapsed())
    }

    pub(super) fn note_clock(&self, check: &StoreCheck) {
        let at = Instant::from_std(check.server_now_read_at);
        *self.clock.lock().unwrap_or_else(|e| e.into_inner()) = (check.server_now_ms, at);
    }

    pub(super) async fn connection(&self) -> (Connection, u64) {
        let held = self.conn.lock().await;
        (held.0.clone(), held.1)
    }

    /// Opens the connection again after `failed` (its generation) failed, unless another task has
    /// already; says once that the store was lost.
    pub(super) async fn reconnect(&self, failed: u64, why: &crate::error::Error) {
        self.note_lost(why.to_string().lines().next().unwrap_or_default());
        let mut held = self.conn.lock().await;
        if held.1 != failed {
            return;
        }
        if let Ok(Ok(fresh)) =
            tokio::time::timeout(Duration::from_secs(5), Connection::open(&self.options)).await
        {
            *held = (fresh, failed + 1);
            self.stats.reconnects.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A slot's task found the shared connection (generation `failed`) broken and opened a fresh
    /// one, `fresh` (the runner reconnects its own handle: a restart, a cut connection): the fresh
    /// one becomes the shared one, unless another task replaced it since, and the outage is said
    /// as one found by a slot's opening is. Without this, a slot whose opening read nothing (the
    /// job's store known: `scheduler::known`) would hand every next slot the broken connection,
    /// each paying a failed command and a reconnect, and the daemon would never say it lost the
    /// store.
    pub(super) async fn adopt(&self, failed: u64, fresh: Connection) {
        let mut held = self.conn.lock().await;
        if held.1 != failed || held.0.serial() == fresh.serial() {
            return;
        }
        self.note_lost("a run found the connection broken; it reconnected");
        *held = (fresh, failed + 1);
        self.stats.reconnects.fetch_add(1, Ordering::Relaxed);
        drop(held);
        self.note_connected();
    }

    /// The crontab's jobs now (a reload calls it with the jobs it leaves running).
    pub(super) fn set_crontab(&self, jobs: Vec<Arc<RunSettings>>) {
        *self.crontab.lock().unwrap_or_else(|e| e.into_inner()) = jobs;
        self.crontab_changed.notify_one();
    }

    /// The crontab's job named `name`.
    pub(super) fn crontab_job(&self, name: &str) -> Option<Arc<RunSettings>> {
        self.crontab
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|j| j.job == name)
            .cloned()
    }

    pub(super) fn note_connected(&self) {
        if !self.connected.swap(true, Ordering::Relaxed) {
            crate::errln!("anarchon: connected to {}", self.shown_url);
        }
    }

    /// The store does not answer (`why`): said once, until it answers again, as a warning (a log
    /// collector alerting on level must see an outage; issue 62 item 5).
    pub(super) fn note_lost(&self, why: &str) {
        if self.connected.swap(false, Ordering::Relaxed) {
            crate::errln!(
                "anarchon: warning: lost the connection to {} ({why}); reconnecting with back-off",
                self.shown_url,
            );
        }
    }
}
