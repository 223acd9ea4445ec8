//! The supervisor: the daemon's main loop (signals, reload, reaper, shutdown) over one job loop per
//! crontab line, each taking its slots through [`crate::scheduler`].

use super::health;
use super::herd;
use super::lineage;
use super::shared::{Shared, SlotTask, Stats};

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::connection::retry::Retry;
use crate::connection::{ConnectOptions, Connection};
use crate::error::{ExitCode, Result};
use crate::lines::RunLabel;
use crate::runner::child::Supervised;
use crate::runner::event::{EventKind, RunEvent};
use crate::scheduler::known::Opened;
use crate::scheduler::{slot_event, take_in_turn, take_slot};
use crate::settings::cron::{CronSettings, DaemonSettings};
use crate::settings::crontab::{CronJob, Crontab, Naming, describe_errors, read_text};
use crate::settings::run::RunSettings;
use crate::store::StoreCheck;
use crate::time::{millis, rfc3339};

/// How soon a replica waiting for an old name's claim of a slot claims it again (a renamed job:
/// `scheduler::lineage`). A backup standing by for a run looks every
/// [`crate::runner::backup::STANDBY_POLL_WOKEN`] instead: a hand-over wakes it (the requests
/// stream), and a lease that ends without a word ends when its last look said. A claim answered
/// `running` is decided from one hash read.
const STANDBY_POLL: Duration = Duration::from_millis(500);

/// How often the file's text is read for a change ([`FileWatch`]).
const FILE_POLL: Duration = Duration::from_secs(1);

/// Every how many file polls the reaper looks for orphans without a SIGCHLD.
const REAP_EVERY_TICKS: u64 = 30;

/// The reaper looks for orphans at a SIGCHLD at most this often: each look reads every process
/// of the machine in /proc, and a herd's thousand commands ending one by one sent as many
/// SIGCHLDs, each a scan of thousands of processes on the thread that starts the commands. An
/// orphan waits this long at most to be reaped (a zombie holds no more than its pid meanwhile).
const REAP_AT_MOST_EVERY: Duration = Duration::from_millis(500);

/// How long a shutdown waits, after the commands were told to stop, for them to be gone and
/// their runs handed over (SIGKILL comes after [`crate::runner::child::SHUTDOWN_KILL_AFTER`]).
const HAND_OVER_FOR: Duration = Duration::from_secs(8);

/// A job the daemon runs: its settings, what they were read from, and its loop.
struct Running {
    job: Arc<RunSettings>,
    fingerprint: String,
    line: usize,
    stop: watch::Sender<bool>,
    handle: JoinHandle<()>,
}

impl Shared {
    /// A slot's opening: the format check (the server's clock with it) and the registry, on the
    /// shared connection, retried through connection trouble for up to [`OPEN_RETRY_FOR`], and
    /// through a refusal that passes (a full server: OOM; BUSY, LOADING) until `--max-late` after
    /// the slot (the task opens it when the slot is due): a full Redis is an outage too.
    async fn open_slot(&self, job: &RunSettings) -> Result<(Connection, StoreCheck, u64)> {
        let mut tries = Retry::for_a_slot(job.max_late).start();
        loop {
            let (mut conn, generation) = self.connection().await;
            let eviction = !self.eviction_asked.swap(true, Ordering::Relaxed);
            let with = (eviction, generation, self.server_now());
            let e = match self.known.open(&mut conn, &self.prefix, job, with).await {
                Ok((check, Opened::Known)) => return Ok((conn, check, generation)),
                Ok((check, Opened::Read)) => {
                    self.note_connected();
                    self.note_clock(&check);
                    return Ok((conn, check, generation));
                }
                Err(e) => e,
            };
            let Some(pause) = tries.after(&e) else {
                return Err(e);
            };
            // A server that answers but refuses for now keeps its connection: it is good.
            if e.is_transient() {
                self.reconnect(generation, &e).await;
            }
            tokio::time::sleep(pause).await;
        }
    }

    /// Starts the task that takes `slot` of `job`.
    fn spawn_slot(self: &Arc<Self>, job: Arc<RunSettings>, slot: i64) {
        let (label, shared) = (RunLabel::new(&job.job, slot), self.clone());
        self.spawn_labelled(label, async move {
            shared.take(&job, slot).await;
        });
    }

    /// Starts `task`, its lines labelled with `label` (a job and slot), among the slot tasks the
    /// shutdown waits for.
    fn spawn_labelled(
        &self,
        label: Arc<RunLabel>,
        task: impl std::future::Future<Output = ()> + 'static,
    ) {
        let handle = tokio::task::spawn_local(crate::lines::in_run(label.clone(), task));
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.retain(|t| !t.handle.is_finished());
        slots.push(SlotTask { label, handle });
    }

    /// A slot's opening when it is due: after the herd's step back (another replica is the job's
    /// first choice: it claims first, `herd`), the store opened, and the server's clock at the
    /// slot. None, said, when the store cannot be opened.
    async fn open_when_due(
        &self,
        job: &RunSettings,
        slot: i64,
    ) -> Option<(Connection, StoreCheck, u64)> {
        let back = self.fleet.step_back(job, self.server_now());
        if !back.is_zero() {
            tokio::time::sleep(back).await;
        }
        let (conn, check, generation) = match self.open_slot(job).await {
            Ok(opened) => opened,
            Err(e) => {
                crate::errln!(
                    "anarchon: cannot open the store for this run ({}); not taken here (another replica may have)",
                    e.with_hint()
                );
                return None;
            }
        };
        // Woken by this machine's clock a little before the server's reached the slot.
        if check.server_now_ms < slot {
            let early = u64::try_from(slot - check.server_now_ms).unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(early)).await;
        }
        Some((conn, check, generation))
    }

    /// Room for the slot under the replica's `--max-running` (`cap`): None when the slot is not
    /// to be taken here (another replica took it, or `--max-late` passed while this one was full).
    async fn room(
        &self,
        job: &RunSettings,
        conn: &mut Connection,
        check: &StoreCheck,
        slot: i64,
    ) -> Option<super::cap::Room> {
        let Some(cap) = &self.cap else {
            return Some(super::cap::Room::Unlimited);
        };
        // An excluded slot runs nothing and takes no room: it goes on at once to be recorded
        // skipped (take_slot), where a full replica waiting for room left it with no record.
        if let Ok(Some(_)) = crate::scheduler::exclusion_of(conn, &self.prefix, job, slot).await {
            return Some(super::cap::Room::Unlimited);
        }
        let now = || self.server_now();
        cap.room_for(job, conn, check, slot, (&self.prefix, &now))
            .await
            .map(super::cap::Room::Held)
    }

    /// Takes one slot as `run` would, and says what became of it.
    async fn take(&self, job: &RunSettings, slot: i64) {
        self.stats.slots_taken.fetch_add(1, Ordering::Relaxed);
        let Some((mut conn, check, generation)) = self.open_when_due(job, slot).await else {
            return;
        };
        // At its --max-running, this replica claims nothing until a command here ends.
        let Some(_room) = self.room(job, &mut conn, &check, slot).await else {
            return;
        };
        // Claimed under the job's old names first, if it has any (`scheduler::lineage`).
        let opened = conn.serial();
        let taken = take_slot(&mut conn, &self.prefix, job, &check, slot).await;
        if conn.serial() != opened {
            self.adopt(generation, conn.clone()).await;
        }
        let reports = taken
            .iter()
            .flat_map(|o| o.caught_up.iter().chain([&o.report]));
        self.known.after_slot(&job.job, &taken, reports);
        match taken {
            Ok(outcome) => {
                let now = self.server_now();
                for s in &outcome.skipped {
                    let said = format!(
                        "missed run {} not run ({}){}",
                        rfc3339(s.slot),
                        s.reason,
                        if s.recorded {
                            "; recorded as skipped"
                        } else {
                            ""
                        }
                    );
                    job.runner.events.emit(&RunEvent::new(
                        EventKind::Skipped,
                        &job.job,
                        s.slot,
                        said,
                    ));
                }
                for r in outcome.caught_up.iter().chain([&outcome.report]) {
                    if r.outcome == crate::runner::SlotOutcome::Ran {
                        self.stats.runs_started.fetch_add(1, Ordering::Relaxed);
                    }
                    // Under --catch-up a slot older than --max-late is claimed only when nobody
                    // did (the daemon's start takes the latest due slot for its catch-up).
                    if r.outcome == crate::runner::SlotOutcome::TooLate && job.catch_up.is_some() {
                        let said = format!(
                            "{} @ {}: claimed before, more than --max-late ago; not run here (`anarchon logs {}` shows how it ended)",
                            r.job,
                            rfc3339(r.slot),
                            r.job
                        );
                        job.runner.events.emit(&RunEvent::new(
                            EventKind::NotRunHere,
                            &r.job,
                            r.slot,
                            said,
                        ));
                        continue;
                    }
                    job.runner.events.emit(&slot_event(r, now, job.max_late));
                }
            }
            Err(e) => crate::errln!("error: {}", e.with_hint()),
        }
    }
}

/// The job loop: sleeps until the job's next fire time by the server's clock and starts its slot
/// task, until told to stop (a reload that changed or removed the job, the shutdown). Beside it,
/// [`on_start`] looks once at what the store knows of the job ([`Shared::look`]): it stands by
/// for the job's runs in progress that have attempts left, whenever they started (a run handed
/// over by a replica that shuts down during a rolling deploy must find a replica to take it
/// over), and, at the daemon's start (`start`: the line to say), decides whether a slot already
/// due is taken ([`StartRule`]), said in one line per job.
async fn job_loop(
    shared: Arc<Shared>,
    job: Arc<RunSettings>,
    mut stop: watch::Receiver<bool>,
    start: Option<StartLine>,
) {
    let Some(schedule) = job.schedule.as_ref() else {
        return;
    };
    let now = shared.server_now();
    // The look at the store goes beside the loop: through trouble it can take seconds, and the
    // slots that come due meanwhile must be taken at their time, each.
    tokio::task::spawn_local(on_start(
        shared.clone(),
        job.clone(),
        stop.clone(),
        start,
        now,
    ));
    let mut last = now;
    loop {
        let Some(next) = schedule.next_after(last) else {
            return;
        };
        let wait = u64::try_from(next - shared.server_now()).unwrap_or(0);
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(wait)) => {}
            _ = stop.changed() => return,
        }
        if *stop.borrow() {
            return;
        }
        // A loop that woke long after `next` (the process was stopped) takes the latest due slot;
        // the ones between are `--catch-up`'s.
        let now = shared.server_now();
        let due = schedule
            .latest_at_or_before(now)
            .filter(|d| *d > next)
            .unwrap_or(next);
        shared.spawn_slot(job.clone(), due);
        last = due;
    }
}

/// Standing by for runs in progress a job loop finds when it starts.
impl Shared {
    /// What the store knows of `job` ([`Known`]), on the shared connection, retried through
    /// trouble as a claim's reads are. It reads only: registering the job here (as a slot's
    /// opening does) would make it known to the next replica that starts before its first slot.
    async fn look(&self, job: &RunSettings) -> Result<Known> {
        if !job.strategy.has_leases() {
            return Ok(Known {
                first_seen: Some(0),
                in_progress: Vec::new(),
            });
        }
        let (mut conn, _) = self.connection().await;
        let prefix = self.prefix.as_str();
        crate::runner::retrying(&mut conn, async |conn| {
            let check = crate::store::format::check_for_write(conn, prefix).await?;
            let target = crate::strategy::Target::new(prefix, &job.job, job.strategy, &check);
            let keys = target.lease_keys();
            let first_seen = crate::strategy::lease::first_seen(conn, &keys).await?;
            // A job a slot's opening registered (here or on another host) is known, though no
            // claim of it reached the store (an outage of the whole fleet at its first slot).
            let registered: i64 = conn
                .query(
                    redis::cmd("EXISTS")
                        .arg(crate::store::registry::registry_key(prefix, &job.job)),
                )
                .await?;
            let mut in_progress = match job.runner.backup {
                crate::runner::Backup::No => Vec::new(),
                crate::runner::Backup::Standby { .. } => {
                    check.lease_format().runs_in_progress(conn, &keys).await?
                }
            };
            // A renamed job's runs in progress under its old names too: an old replica's run
            // that it hands over at its SIGTERM in a rolling deploy must find a replica of the
            // new name standing by (which takes it under the old name first: `scheduler::lineage`).
            let old_keys = crate::scheduler::lineage::old_keys(prefix, job, &check);
            if matches!(job.runner.backup, crate::runner::Backup::Standby { .. }) {
                for keys in &old_keys {
                    in_progress.extend(check.lease_format().runs_in_progress(conn, keys).await?);
                }
            }
            // Attempts left: under --max-attempts, or more after a hand-over, which spends none
            // (the claim script decides which: `lua/lease/handed_over.lua`).
            in_progress.retain(|r| {
                r.kind == crate::store::RunKind::Scheduled
                    && r.attempt < job.claim.max_attempts + crate::strategy::lease::HAND_OVER_LEEWAY
            });
            in_progress.sort_by_key(|r| r.slot);
            in_progress.dedup_by_key(|r| r.slot);
            // A run in progress is a job the store has seen, whatever its records say.
            let mut first_seen = first_seen
                .or(in_progress.first().map(|r| r.slot))
                .or((registered > 0).then_some(0));
            // A renamed job (`--was`) is the job its old names were: known if any of them is,
            // from when the store first saw that one (the rename's steps then take its slots
            // under the old names first).
            for (old, keys) in job.lineage.iter().zip(&old_keys) {
                if first_seen.is_some() {
                    break;
                }
                first_seen = seen_under(conn, prefix, old, keys, &check).await?;
            }
            Ok(Known {
                first_seen,
                in_progress,
            })
        })
        .await
    }

    /// A job new to the store is seen from now (its deploy): `:job` `first_seen` is written, once
    /// (as a first claim writes it), so that `--catch-up` and monitoring count its slots from here,
    /// not from its first claim: a fleet that goes down before that claim catches up the slots it
    /// missed since. Best effort: unwritten, they count from the first claim, as before.
    async fn note_first_seen(&self, job: &RunSettings, now: i64) {
        let (mut conn, _) = self.connection().await;
        let keys = crate::store::LeaseKeys::new(&self.prefix, &job.job);
        let written = conn
            .query::<i64>(
                redis::cmd("HSETNX")
                    .arg(&keys.job)
                    .arg("first_seen")
                    .arg(now),
            )
            .await;
        if let Err(e) = written {
            crate::errln!(
                "anarchon: job {}: when the store first saw it was not recorded ({e}); --catch-up counts from its first claim",
                job.job
            );
        }
    }

    /// Whether a task of this replica is taking `slot` of `job` now.
    fn has_task(&self, job: &str, slot: i64) -> bool {
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.iter().any(|t| {
            !t.handle.is_finished()
                && t.label.job == job
                && t.label.slot.load(Ordering::Relaxed) == slot
        })
    }

    /// Starts the task that stands by for `run`, a run of `job` in progress that this replica did
    /// not claim (see [`Shared::stand_by`]).
    fn spawn_standby(self: &Arc<Self>, job: Arc<RunSettings>, run: &crate::store::state::RunState) {
        let said = format!(
            "job {}: the run of {} is in progress (attempt {} of {}, held by {}): standing by to take it over if its lease ends",
            job.job,
            rfc3339(run.slot),
            run.attempt,
            job.claim.max_attempts,
            run.runner
        );
        let standing = RunEvent::new(EventKind::StandingBy, &job.job, run.slot, said);
        job.runner.events.emit(&standing);
        let slot = run.slot;
        let (label, shared) = (RunLabel::new(&job.job, slot), self.clone());
        self.spawn_labelled(label, async move {
            shared.stand_by(&job, slot).await;
        });
    }

    /// Stands by for a run in progress of `job`, whenever it started (more than `--max-late` ago
    /// too: `--max-late` governs a first claim, not the takeover of a run with attempts left), and
    /// takes it over as the next attempt when its lease ends (its holder handed it over, or died).
    /// The claim decides as for any backup: a run that ended meanwhile answers done.
    async fn stand_by(&self, job: &RunSettings, slot: i64) {
        let (mut conn, check, _) = match self.open_slot(job).await {
            Ok(opened) => opened,
            Err(e) => {
                crate::errln!(
                    "anarchon: cannot open the store to stand by for this run ({}); not standing by here",
                    e.with_hint()
                );
                return;
            }
        };
        // As any slot is taken: under the job's old names first (`scheduler::lineage`), so that a
        // takeover of a renamed job's run never races an old replica's takeover of it.
        let mut ahead = Vec::new();
        let taken = take_in_turn(&mut conn, &self.prefix, job, &check, slot, &mut ahead).await;
        self.known
            .after_slot(&job.job, &taken, ahead.iter().chain(taken.as_ref().ok()));
        match taken {
            Ok(report) => {
                for r in ahead.iter().chain([&report]) {
                    if r.outcome == crate::runner::SlotOutcome::Ran {
                        self.stats.runs_started.fetch_add(1, Ordering::Relaxed);
                    }
                    let said = slot_event(r, self.server_now(), job.max_late);
                    job.runner.events.emit(&said);
                }
            }
            Err(e) => crate::errln!("error: {}", e.with_hint()),
        }
    }
}

/// When the store first saw `name` (its lease `keys`), an old name of a job (`--was`): its first
/// claim or result, a run in progress, or a registry entry (0); `None` when it never did.
async fn seen_under(
    conn: &mut Connection,
    prefix: &str,
    name: &str,
    keys: &crate::store::LeaseKeys,
    check: &StoreCheck,
) -> Result<Option<i64>> {
    if let Some(seen) = crate::strategy::lease::first_seen(conn, keys).await? {
        return Ok(Some(seen));
    }
    let running = check.lease_format().runs_in_progress(conn, keys).await?;
    if let Some(oldest) = running.iter().map(|r| r.slot).min() {
        return Ok(Some(oldest));
    }
    let registered: i64 = conn
        .query(redis::cmd("EXISTS").arg(crate::store::registry::registry_key(prefix, name)))
        .await?;
    Ok((registered > 0).then_some(0))
}

/// What a job loop does once when it starts (see [`job_loop`]), beside the loop: looks at the
/// store, says the start rule (at the daemon's start), takes the slot it says, and stands by for
/// the job's runs in progress. `now`: the server's time when the loop started.
async fn on_start(
    shared: Arc<Shared>,
    job: Arc<RunSettings>,
    stop: watch::Receiver<bool>,
    start: Option<StartLine>,
    now: i64,
) {
    let Some(schedule) = job.schedule.as_ref() else {
        return;
    };
    let look = shared.look(&job).await;
    if *stop.borrow() {
        return;
    }
    let rule = start
        .as_ref()
        .map(|_| StartRule::of(&job, schedule, now, &look));
    let taken = rule.as_ref().and_then(StartRule::slot);
    if let Some(start) = &start
        && let Some(rule) = &rule
    {
        let next = schedule
            .next_after(now)
            .map_or_else(|| "never".to_string(), rfc3339);
        crate::errln!(
            "anarchon: job {} (line {}): {} ({}), next run {next}; {}{}",
            job.job,
            start.line,
            start.schedule,
            start.tz,
            rule.words(&job),
            start.naming
        );
    }
    if let Some(StartRule::New) = rule {
        shared.note_first_seen(&job, now).await;
    }
    if let Some(due) = taken {
        shared.spawn_slot(job.clone(), due);
    }
    if let Ok(known) = &look {
        for run in &known.in_progress {
            if Some(run.slot) != taken && !shared.has_task(&job.job, run.slot) {
                shared.spawn_standby(job.clone(), run);
            }
        }
    }
}

/// What the daemon's start line of a job says besides the rule: its line, schedule and naming.
struct StartLine {
    line: usize,
    schedule: String,
    tz: String,
    naming: &'static str,
}

/// What the store knows of a job when its loop starts.
struct Known {
    /// When the store first saw the job (None: never, a job new to the store: no claim, no
    /// result, no registry entry; 0 when only the registry knows it). Always `Some` for the
    /// strategies without leases, which keep no such record (today's restart rule for them).
    first_seen: Option<i64>,
    /// Its scheduled runs in progress with attempts left under this job's `--max-attempts`, when
    /// this replica stands by (not `--no-backup`).
    in_progress: Vec<crate::store::state::RunState>,
}

/// Which slot already due when the daemon starts is taken, and why (said at start, one line per
/// job). A job the store has never seen starts at its next fire time, as cron starts a new line:
/// a cut-over from another scheduler that already ran the slot due must not run it again; and
/// `--catch-up` never reaches before the store first saw a job. A job the store knows takes a slot
/// that came due less than `--max-late` ago (a replica restarted just after its slot; the claim
/// says if another replica has it), and with `--catch-up` the latest due slot whatever its age, so
/// that the missed runs are caught up at once as `run --catch-up` does, not at the next fire time.
enum StartRule {
    /// Never seen by the store: nothing due is taken.
    New,
    /// Known: `due` is taken (within --max-late).
    Restart { due: i64, late_ms: i64 },
    /// Known, with --catch-up: `due`, the latest due slot, is taken with the catch-up before it.
    CatchUp { due: i64 },
    /// Known, and nothing due within --max-late (no --catch-up).
    Nothing,
    /// The store could not be read: today's restart rule, said so.
    Unread { due: Option<i64>, why: String },
}

impl StartRule {
    fn of(
        job: &RunSettings,
        schedule: &crate::schedule::Schedule,
        now: i64,
        look: &Result<Known>,
    ) -> StartRule {
        let due = schedule.latest_at_or_before(now);
        let within = due.filter(|d| now - d <= millis(job.max_late));
        match look {
            Err(e) => StartRule::Unread {
                due: within,
                why: e.to_string().lines().next().unwrap_or_default().to_string(),
            },
            Ok(Known {
                first_seen: None, ..
            }) => StartRule::New,
            // A slot due before the store first saw the job is never taken (nor caught up): the
            // job was not deployed yet (another replica started it, new, after that slot).
            Ok(Known {
                first_seen: Some(seen),
                ..
            }) => match (
                within.filter(|d| d >= seen),
                due.filter(|d| d >= seen),
                job.catch_up,
            ) {
                (Some(due), _, _) => StartRule::Restart {
                    due,
                    late_ms: now - due,
                },
                (None, Some(due), Some(_)) => StartRule::CatchUp { due },
                _ => StartRule::Nothing,
            },
        }
    }

    /// The due slot taken now, if any.
    fn slot(&self) -> Option<i64> {
        match self {
            StartRule::Restart { due, .. } | StartRule::CatchUp { due } => Some(*due),
            StartRule::Unread { due, .. } => *due,
            StartRule::New | StartRule::Nothing => None,
        }
    }

    fn words(&self, job: &RunSettings) -> String {
        let max_late = humantime::format_duration(job.max_late);
        let catch_up = job
            .catch_up
            .map(|c| humantime::format_duration(c.window).to_string());
        match self {
            StartRule::New => format!(
                "new to the store: its first run is its next fire time, as cron starts a new line{}",
                if catch_up.is_some() {
                    " (--catch-up reaches back only to when the store first saw the job)"
                } else {
                    ""
                }
            ),
            StartRule::Restart { due, late_ms } => format!(
                "known to the store: the run of {} came due {} ago, within --max-late {max_late}: claimed now{}",
                rfc3339(*due),
                crate::time::humanize(u64::try_from(*late_ms).unwrap_or(0)),
                match &catch_up {
                    Some(w) => format!(", with the runs --catch-up {w} finds missed before it"),
                    None => " (done already if another replica ran it)".to_string(),
                }
            ),
            StartRule::CatchUp { due } => format!(
                "known to the store: --catch-up {}: the runs missed up to {} are caught up now",
                catch_up.unwrap_or_default(),
                rfc3339(*due)
            ),
            StartRule::Nothing => {
                format!("known to the store: no run came due within --max-late {max_late}")
            }
            StartRule::Unread { due, why } => format!(
                "the store could not be read ({why}): {}",
                match due {
                    Some(d) => format!(
                        "the run of {} due within --max-late is claimed now",
                        rfc3339(*d)
                    ),
                    None => "no run came due within --max-late".to_string(),
                }
            ),
        }
    }
}

/// Runs the daemon until SIGTERM or SIGINT (exit 0 after the shutdown). Its tasks are local to
/// this thread (the runtime has one): a slot's task borrows across awaits in ways that are not
/// `Send`, and nothing here would gain from other threads.
///
/// `shutdown`: a future that ends the daemon as SIGTERM does (a test's; `anarchon cron` passes one
/// that never ends).
pub async fn run(
    daemon: DaemonSettings,
    tab: Crontab,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<ExitCode> {
    tokio::task::LocalSet::new()
        .run_until(run_local(daemon, tab, shutdown))
        .await
}

async fn run_local(
    daemon: DaemonSettings,
    tab: Crontab,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<ExitCode> {
    let DaemonSettings {
        cron: settings,
        connect: options,
        prefix,
        owns_the_process,
        trace,
    } = daemon;
    let settings = &settings;
    crate::lines::set_daemon_log(settings.log_format, settings.verbose);
    if owns_the_process {
        become_subreaper();
        // Before the daemon grows: each run's guard is forked from this small process, not from
        // the daemon (`runner::guard::spawner`).
        if let Err(e) = crate::runner::guard::spawner::start() {
            crate::errln!(
                "warning: cannot start the guard spawner ({e}); each run's guard is forked from the daemon"
            );
        }
    }
    crate::store::validate_prefix(&prefix)?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut signals = Signals::new()?;
    let started: health::Started = Default::default();
    if let Some(addr) = settings.listen {
        health::serve(addr, started.clone()).await?;
    }
    let Some((mut conn, check)) = first_connection(&options, &prefix, &mut signals).await? else {
        return Ok(ExitCode::Ok);
    };
    check_the_server(&mut conn, &tab).await?;
    let pages = crate::page::server::Pages::new(options.clone(), &prefix);
    let shared = Arc::new(Shared {
        pages,
        prefix,
        shown_url: conn.shown_url().to_string(),
        options,
        conn: tokio::sync::Mutex::new((conn, 0)),
        clock: std::sync::Mutex::new((
            check.server_now_ms,
            Instant::from_std(check.server_now_read_at),
        )),
        connected: AtomicBool::new(true),
        eviction_asked: AtomicBool::new(false),
        stop_commands: stop_rx,
        slots: Default::default(),
        stats: Stats::default(),
        reaps_orphans: owns_the_process,
        crontab: Default::default(),
        crontab_changed: Default::default(),
        known: Default::default(),
        lateness: Default::default(),
        fleet: herd::Fleet::new(crate::strategy::default_runner()),
        cap: super::cap::Cap::new(settings.max_running),
        wakeups: Default::default(),
        trace,
    });
    say_started(settings, &tab, &shared, &check);
    let mut jobs: HashMap<String, Running> = HashMap::new();
    apply(&shared, &mut jobs, tab, true);
    let requests = super::requests::start(&shared);
    let fleet = tokio::task::spawn_local(watch_fleet(shared.clone()));
    let _ = started.set(shared.clone());
    until_stopped(settings, &shared, &mut jobs, &mut signals, shutdown).await;
    fleet.abort();
    requests.stop(&shared).await;
    shut_down(settings, &shared, jobs, stop_tx, &mut signals).await;
    Ok(ExitCode::Ok)
}

/// The daemon's first line: its jobs, its runner name, the store.
fn say_started(settings: &CronSettings, tab: &Crontab, shared: &Shared, check: &StoreCheck) {
    crate::errln!(
        "anarchon: cron: {} job(s) from {}, as runner {} (store {}, format {})",
        tab.jobs.len(),
        settings.file.display(),
        crate::strategy::default_runner(),
        shared.shown_url,
        check
            .format
            .map_or_else(|| "not set yet".to_string(), |f| f.to_string())
    );
}

/// What the daemon says of the server once, at its start: a store that a restart can lose lets
/// runs run again (docs: "The server under the store"), said as `doctor` says it; and a job of the
/// idmp strategy needs a server that has it (as `run` checks when it connects).
async fn check_the_server(conn: &mut Connection, tab: &Crontab) -> Result<()> {
    let (aof, save) = crate::server::read_persistence(conn).await;
    if let (false, words) = crate::server::persistence_verdict(aof, save.as_deref()) {
        crate::errln!("anarchon: warning: {words}");
    }
    if tab
        .jobs
        .iter()
        .any(|j| matches!(j.run.strategy, crate::strategy::Strategy::Idmp { .. }))
    {
        let info = crate::server::detect(conn).await?;
        crate::strategy::claim_only::require_idmp(&info)?;
    }
    Ok(())
}

/// The main loop, until SIGTERM, SIGINT or `shutdown`: reloads on SIGHUP and when the file
/// changes, reaps orphans, passes SIGUSR1 and SIGUSR2 on to the commands.
async fn until_stopped(
    settings: &CronSettings,
    shared: &Arc<Shared>,
    jobs: &mut HashMap<String, Running>,
    signals: &mut Signals,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let mut file = FileWatch::new(&settings.file);
    let mut poll = tokio::time::interval(FILE_POLL);
    let mut ticks: u64 = 0;
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut shutdown = std::pin::pin!(shutdown);
    // When the reaper looks next after a SIGCHLD (None: no SIGCHLD since it last looked).
    let mut reap_at: Option<Instant> = None;
    let mut reaped_at = Instant::now();
    let mut memory = FreeMemory::default();
    loop {
        tokio::select! {
            () = signals.shutdown.wait() => break,
            () = &mut shutdown => break,
            _ = signals.hup.recv() => {
                let text = file.take_now();
                reload(settings, shared, jobs, "SIGHUP", text);
            }
            _ = poll.tick() => {
                if let Some(text) = file.changed() {
                    reload(settings, shared, jobs, "the file changed", text);
                }
                // SIGCHLD says when to reap; a look now and then catches one that was coalesced
                // away while a reap was under way (the look reads /proc: not every second).
                ticks += 1;
                if ticks.is_multiple_of(REAP_EVERY_TICKS) {
                    reap(shared);
                }
                memory.tick(shared, ticks.is_multiple_of(REAP_EVERY_TICKS));
            }
            _ = signals.child.recv() => {
                reap_at.get_or_insert(reaped_at + REAP_AT_MOST_EVERY);
            }
            () = tokio::time::sleep_until(reap_at.unwrap_or_else(Instant::now)), if reap_at.is_some() => {
                reap(shared);
                (reap_at, reaped_at) = (None, Instant::now());
            }
            _ = signals.usr1.recv() => forward(nix::sys::signal::Signal::SIGUSR1),
            _ = signals.usr2.recv() => forward(nix::sys::signal::Signal::SIGUSR2),
        }
    }
}

/// Gives the allocator's free pages back to the system once the runs in flight are all done, and
/// every [`REAP_EVERY_TICKS`] polls: a herd's slot tasks (about 24 KB a run in flight) leave
/// their pages free inside glibc's heap, which keeps them (a replica of a 1,000-job herd stayed
/// at 54 MiB after it, from 26 MiB before). `malloc_trim(0)` returns free pages anywhere in the
/// heap; it walks the heap, so not more often than that.
#[derive(Default)]
struct FreeMemory {
    /// Whether runs were in flight at the last poll.
    busy: bool,
}

impl FreeMemory {
    fn tick(&mut self, shared: &Shared, now_and_then: bool) {
        let busy = {
            let slots = shared.slots.lock().unwrap_or_else(|e| e.into_inner());
            slots.iter().any(|t| !t.handle.is_finished())
        };
        if (self.busy && !busy) || now_and_then {
            trim_heap();
        }
        self.busy = busy;
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim_heap() {
    // SAFETY: malloc_trim only returns free memory of the allocator to the system.
    unsafe {
        nix::libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim_heap() {}

/// Connects and reads the format key, retrying with back-off until the store answers (a replica
/// may start before Redis does) or a signal asks to stop (None). A full server (OOM) is waited for
/// the same way: the format key is written only when absent (a new store), so a store in use
/// starts at once, and a new one once the server has room; exiting instead put an orchestrator
/// into a restart loop.
async fn first_connection(
    options: &ConnectOptions,
    prefix: &str,
    signals: &mut Signals,
) -> Result<Option<(Connection, StoreCheck)>> {
    let mut tries = Retry::UNTIL_STOPPED.start();
    let mut said = false;
    loop {
        let opened = async {
            let mut conn = Connection::open(options).await?;
            let (check, _) =
                crate::store::format::check_for_write_and_read(&mut conn, prefix, &[], |_| Ok(()))
                    .await?;
            Ok::<_, crate::error::Error>((conn, check))
        };
        let e = match opened.await {
            Ok(opened) => return Ok(Some(opened)),
            Err(e) => e,
        };
        let Some(pause) = tries.after(&e) else {
            return Err(e);
        };
        if !said {
            let why = e.to_string().lines().next().unwrap_or_default().to_string();
            if e.is_transient() {
                crate::errln!(
                    "anarchon: warning: cannot reach the store yet ({why}); retrying with back-off"
                );
            } else {
                crate::errln!(
                    "anarchon: warning: the store refuses for now ({why}); retrying with back-off{}",
                    e.hint()
                        .map(|h| format!("\n  hint: {h}"))
                        .unwrap_or_default()
                );
            }
            said = true;
        }
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = signals.shutdown.wait() => return Ok(None),
        }
    }
}

/// Starts, restarts and stops job loops so that they are the crontab's jobs: a job whose line,
/// flags or environment changed is restarted; a removed job's loop stops (a run of it in
/// progress finishes). `at_start`: the daemon's start (see [`job_loop`]).
fn apply(shared: &Arc<Shared>, jobs: &mut HashMap<String, Running>, tab: Crontab, at_start: bool) {
    // Hook (issue 46 item 5, lineage.rs): a job renamed by this reload keeps its old name.
    let mut tab = tab;
    let previous: Vec<lineage::Previous<'_>> = jobs
        .values()
        .map(|r| lineage::Previous {
            line: r.line,
            job: &r.job,
        })
        .collect();
    lineage::carry_over(&previous, &mut tab);
    drop(previous);
    let mut seen = std::collections::HashSet::new();
    let (mut added, mut changed, mut unchanged) = (0, 0, 0);
    for cron_job in tab.jobs {
        seen.insert(cron_job.name.clone());
        if let Some(old) = jobs.get(&cron_job.name) {
            if old.fingerprint == cron_job.fingerprint {
                unchanged += 1;
                continue;
            }
            changed += 1;
            let _ = old.stop.send(true);
        } else {
            added += 1;
        }
        if !at_start {
            crate::errln!(
                "anarchon: job {} (line {}) {}",
                cron_job.name,
                cron_job.line,
                if jobs.contains_key(&cron_job.name) {
                    "changed; its next runs follow the new line"
                } else {
                    "added"
                }
            );
        }
        let running = start_job(shared, cron_job, at_start);
        jobs.insert(running.job.job.clone(), running);
    }
    let removed: Vec<String> = jobs
        .keys()
        .filter(|name| !seen.contains(*name))
        .cloned()
        .collect();
    for name in &removed {
        if let Some(old) = jobs.remove(name) {
            let _ = old.stop.send(true);
            crate::errln!(
                "anarchon: job {name} (was line {}) removed; a run of it in progress finishes (monitoring still expects its runs: once no replica runs it, `anarchon forget {name}` retires it)",
                old.line
            );
        }
    }
    shared
        .stats
        .jobs
        .store(jobs.len() as u64, Ordering::Relaxed);
    shared.lateness.retain(|job| jobs.contains_key(job));
    shared.set_crontab(jobs.values().map(|r| r.job.clone()).collect());
    if !at_start {
        crate::errln!(
            "anarchon: reloaded: {added} added, {changed} changed, {} removed, {unchanged} unchanged",
            removed.len()
        );
    }
}

/// A crontab job made ready for the daemon and its loop started.
fn start_job(shared: &Arc<Shared>, cron_job: CronJob, at_start: bool) -> Running {
    let CronJob {
        line,
        naming,
        schedule,
        tz,
        mut run,
        fingerprint,
        ..
    } = cron_job;
    run.runner.command.supervised = Some(Supervised {
        stop: shared.stop_commands.clone(),
    });
    run.runner.standby_poll = STANDBY_POLL;
    run.runner.wakeups = Some(shared.wakeups.clone());
    run.runner.trace = shared.trace.clone();
    // A run's events are records of the daemon's log, not a terminal's lines; its starts are
    // observed for /metrics too.
    // (The clock holds the daemon's state weakly: the state holds the jobs, which hold the sink.)
    let state = Arc::downgrade(shared);
    run.runner.events = crate::runner::event::Events::new(super::lateness::MetricsSink {
        lateness: shared.lateness.clone(),
        clock: Box::new(move || state.upgrade().map(|s| s.server_now())),
    });
    let start = at_start.then(|| StartLine {
        line,
        schedule: schedule.to_string(),
        tz: tz.to_string(),
        naming: match naming {
            Naming::Annotated => "",
            Naming::Derived => {
                "; its name is derived from the line: editing the line renames the job (name it with `# anarchon: --job NAME` above it)"
            }
        },
    });
    let job = Arc::new(run);
    let (stop, stop_rx) = watch::channel(false);
    let handle = tokio::task::spawn_local(job_loop(shared.clone(), job.clone(), stop_rx, start));
    Running {
        job,
        fingerprint,
        line,
        stop,
        handle,
    }
}

/// Applies the file's new `text` (the one [`FileWatch`] took: the file is not read again, so
/// what is applied is what was seen settled); a file that does not read changes nothing (said,
/// and counted in `/metrics`).
fn reload(
    settings: &CronSettings,
    shared: &Arc<Shared>,
    jobs: &mut HashMap<String, Running>,
    why: &str,
    text: std::result::Result<String, String>,
) {
    shared.stats.reloads.fetch_add(1, Ordering::Relaxed);
    match settings.crontab.jobs_of(text) {
        Ok(tab) => {
            crate::errln!("anarchon: reloading {} ({why})", settings.file.display());
            super::say_warnings(&settings.file, &tab);
            apply(shared, jobs, tab, false);
        }
        Err(errors) => {
            shared.stats.reload_errors.fetch_add(1, Ordering::Relaxed);
            crate::errln!(
                "error: reloading {} ({why}) failed; the {} job(s) run on as they were:\n  {}",
                settings.file.display(),
                jobs.len(),
                describe_errors(&settings.file, &errors).join("\n  ")
            );
        }
    }
}

/// SIGTERM (or SIGINT): no new claims; the runs this replica holds get `--shutdown-grace` to end by
/// themselves; then their commands are stopped and the runs handed over. Tasks that hold no run
/// (standing by, waiting for an older run, claiming) end at once: the other replicas have them;
/// but a task settling bookkeeping only it would finish ([`crate::lines::Settling`]) is let
/// finish it, within the same grace.
async fn shut_down(
    settings: &CronSettings,
    shared: &Arc<Shared>,
    jobs: HashMap<String, Running>,
    stop_commands: watch::Sender<bool>,
    signals: &mut Signals,
) {
    for running in jobs.values() {
        let _ = running.stop.send(true);
    }
    for running in jobs.into_values() {
        running.handle.abort();
    }
    let holding: Vec<SlotTask> = {
        let mut slots = shared.slots.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *slots)
            .into_iter()
            .filter(|t| {
                let holds =
                    (t.label.attempt() > 0 || t.label.settling()) && !t.handle.is_finished();
                if !holds {
                    t.handle.abort();
                }
                holds
            })
            .collect()
    };
    let grace = settings.shutdown_grace;
    crate::errln!(
        "anarchon: shutting down: no new runs here; {} run(s) in progress get up to {} to finish",
        holding.iter().filter(|t| t.label.attempt() > 0).count(),
        humantime::format_duration(grace)
    );
    let all_done = all_finished(shared, &holding, &mut signals.child);
    let finished = tokio::select! {
        done = tokio::time::timeout(grace, all_done) => done.is_ok(),
        // A second signal: no more grace.
        () = signals.shutdown.wait() => {
            crate::errln!("anarchon: a second signal: ending the grace now");
            false
        }
    };
    if !finished {
        let left = holding.iter().filter(|t| !t.handle.is_finished()).count();
        crate::errln!(
            "anarchon: {left} command(s) still running; stopping them and handing their runs over"
        );
        let _ = stop_commands.send(true);
        let handed = all_finished(shared, &holding, &mut signals.child);
        let _ = tokio::time::timeout(HAND_OVER_FOR, handed).await;
    }
    for t in holding {
        t.handle.abort();
    }
    reap(shared);
    crate::errln!("anarchon: stopped");
}

/// Resolves when every task of `tasks` has ended, reaping orphans meanwhile at each SIGCHLD (the
/// main loop that reaps them is over).
async fn all_finished(
    shared: &Shared,
    tasks: &[SlotTask],
    child_exited: &mut tokio::signal::unix::Signal,
) {
    while tasks.iter().any(|t| !t.handle.is_finished()) {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(20)) => {}
            _ = child_exited.recv() => reap(shared),
        }
    }
}

/// Reaps orphans re-parented to the daemon (see [`crate::runner::children`]).
fn reap(shared: &Shared) {
    if !shared.reaps_orphans {
        return;
    }
    let reaped = crate::runner::children::reap_orphans();
    shared
        .stats
        .orphans_reaped
        .fetch_add(reaped.len() as u64, Ordering::Relaxed);
}

/// Reads the replicas' presences every [`herd::READ_EVERY`] on the shared connection, for who
/// claims a slot first ([`herd::Fleet::step_back`]). A read that fails keeps the last one: a
/// presence older than 10 s is a replica gone anyway.
async fn watch_fleet(shared: Arc<Shared>) {
    loop {
        let (mut conn, _) = shared.connection().await;
        let read = crate::store::requests::read_replicas(&mut conn, &shared.prefix);
        if let Ok(Ok(replicas)) = tokio::time::timeout(herd::READ_EVERY, read).await {
            shared.fleet.note(replicas);
        }
        tokio::time::sleep(herd::READ_EVERY).await;
    }
}

/// Passes a signal meant for the commands on to every running command's process group.
fn forward(signal: nix::sys::signal::Signal) {
    let n = crate::runner::children::signal_groups(signal);
    crate::errln!("anarchon: forwarded {signal} to {n} running command(s)");
}

/// Makes orphaned descendants (what a command leaves running) this process's children, as they
/// are PID 1's in a container, so that the reaper can wait for them (Linux; elsewhere they go to
/// init as before).
fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_CHILD_SUBREAPER takes an integer flag and touches no memory of ours.
    unsafe {
        nix::libc::prctl(nix::libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// The signals the daemon handles itself.
struct Signals {
    shutdown: Shutdown,
    hup: tokio::signal::unix::Signal,
    child: tokio::signal::unix::Signal,
    usr1: tokio::signal::unix::Signal,
    usr2: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        let listen = |kind| {
            signal(kind)
                .map_err(|e| crate::error::Error::Other(format!("cannot listen for signals: {e}")))
        };
        Ok(Signals {
            shutdown: Shutdown {
                term: listen(SignalKind::terminate())?,
                int: listen(SignalKind::interrupt())?,
            },
            hup: listen(SignalKind::hangup())?,
            child: listen(SignalKind::child())?,
            usr1: listen(SignalKind::user_defined1())?,
            usr2: listen(SignalKind::user_defined2())?,
        })
    }
}

/// SIGTERM and SIGINT: the daemon's shutdown (a second one ends the grace).
struct Shutdown {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

impl Shutdown {
    async fn wait(&mut self) {
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.int.recv() => {}
        }
    }
}

/// Whether the crontab file changed: its text is read at every look (a file's size and time can
/// stay the same across a change: a ConfigMap's symlink swap, a copy that keeps times), and a
/// new text is taken only once two looks in a row read it the same, so a file caught while it is
/// written (an editor, `cat > crontab`) is not taken half-written. A file that cannot be read is
/// a text too: its error.
struct FileWatch {
    path: std::path::PathBuf,
    /// The text the jobs were last read from.
    taken: std::result::Result<String, String>,
    /// A new text seen once, waiting for the next look to confirm it.
    seen: Option<std::result::Result<String, String>>,
}

impl FileWatch {
    fn new(path: &std::path::Path) -> FileWatch {
        FileWatch {
            path: path.to_path_buf(),
            taken: read_text(path),
            seen: None,
        }
    }

    /// The file is read now (SIGHUP): what it holds is taken, and returned.
    fn take_now(&mut self) -> std::result::Result<String, String> {
        self.taken = read_text(&self.path);
        self.seen = None;
        self.taken.clone()
    }

    /// The new text, once two looks in a row read it the same; None while nothing changed.
    fn changed(&mut self) -> Option<std::result::Result<String, String>> {
        let text = read_text(&self.path);
        if text == self.taken {
            self.seen = None;
            return None;
        }
        if self.seen.as_ref() == Some(&text) {
            self.taken = text.clone();
            self.seen = None;
            return Some(text);
        }
        self.seen = Some(text);
        None
    }
}
