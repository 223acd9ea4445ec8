//! `anarchon next [JOB]`: when a job runs next. Its fire times in UTC and in the schedule's zone
//! with the jitter `run` waits, the daylight-saving changes ahead with what the scheduler does
//! there, and with `--after-outage` what the first run after an outage would catch up.
//!
//! Nothing here decides anything of its own: the fire times and the daylight-saving policy are
//! [`Schedule`]'s (the code `run` takes its slot by), the jitter is `run`'s
//! [`jitter_delay`], and the catch-up is `run`'s [`catch_up::decide`], asked about an outage
//! this command supposes ([`Supposed`]).

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{SecondsFormat, TimeZone, Utc};
use serde::Serialize;

use crate::commands::Context;
use crate::error::{Error, ExitCode, Result};
use crate::schedule::{CatchUpPolicy, OffsetChange, Schedule};
use crate::scheduler::catch_up::{self, Claims, MAX_CATCH_UP_SLOTS};
use crate::scheduler::{jitter_delay, scheduled_slot};
use crate::settings::next::{NextSettings, NextSource, OutageSettings};
use crate::settings::run::CatchUp;
use crate::store::pause::Pause;
use crate::store::{Layout, LeaseKeys, format};
use crate::strategy::Strategy;
use crate::time::{humanize, millis, rfc3339};

/// How far ahead the daylight-saving changes are looked for (or up to the last fire time shown,
/// if that is later): a year holds every zone's changes once.
const DST_HORIZON_MS: i64 = 366 * 86_400_000;

/// How many of an outage's missed slots are listed (the newest, besides every one decided).
const MAX_OUTAGE_SLOTS: usize = MAX_CATCH_UP_SLOTS;

/// `next --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct NextReport {
    /// The job (null: --schedule without a JOB).
    job: Option<String>,
    /// Where the schedule comes from: `registry` (what `run` recorded of the job) or `flags`
    /// (--schedule and --tz).
    source: &'static str,
    schedule: String,
    tz: String,
    /// Whether the hour field is a wildcard, so that across daylight saving the job follows the
    /// local clock (else the fixed-hour policy: see `daylight_saving`).
    follows_local_clock: bool,
    /// The strategy the registry records (null: --schedule).
    strategy: Option<String>,
    /// Fire times are those at or after this (ms).
    from: i64,
    from_time: String,
    /// Which clock `from` is: `server` (the store's TIME), `machine` (this machine's: --schedule,
    /// no store read) or `from` (--from).
    clock: &'static str,
    /// The server's clock when the store was read (null: not read).
    server_time: Option<i64>,
    server_time_rfc3339: Option<String>,
    /// The jitter `run` waits before claiming a slot: up to this (0: none).
    jitter_ms: i64,
    /// Whether each fire time's delay is known (the job's name is): else only its range.
    jitter_exact: bool,
    /// The job's pause, when it is paused at one of the fire times or later (its runs are then
    /// skipped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pause: Option<Pause>,
    fire_times: Vec<FireTime>,
    daylight_saving: DaylightSaving,
    /// What the first run after the outage would do (--after-outage).
    #[serde(skip_serializing_if = "Option::is_none")]
    after_outage: Option<AfterOutage>,
    /// Runs whose command failed and that wait for a retry (`run --retries`), oldest slot first.
    pending_retries: Vec<PendingRetry>,
}

/// The job's exclusion windows as its registry records them (its own, and its calendars' as the
/// store holds them now). Windows that do not read are left out (`run` refuses such data).
async fn registered_windows(
    conn: &mut crate::connection::Connection,
    prefix: &str,
    settings: &crate::store::registry::JobSettings,
) -> Result<Vec<crate::exclusion::Exclusion>> {
    let mut windows: Vec<crate::exclusion::Exclusion> = settings
        .exclude
        .lines()
        .filter_map(|w| crate::exclusion::Exclusion::parse(w).ok())
        .collect();
    let calendars: Vec<&str> = settings
        .calendars
        .split(',')
        .filter(|n| !n.is_empty())
        .collect();
    windows.extend(crate::store::calendar::windows_of(conn, prefix, &calendars).await?);
    Ok(windows)
}

/// A run waiting for its retry: any host or replica standing by takes it over when due.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
struct PendingRetry {
    slot: i64,
    slot_time: String,
    /// Which retry (1 for the first).
    retry: u64,
    /// The attempt the retry is.
    attempt: u32,
    due: i64,
    due_time: String,
}

/// The runs in progress of `view` that wait for a retry: the failed attempt, recorded with when
/// its retry is due, is the run's current one.
fn pending_retries(view: &crate::store::view::JobView) -> Vec<PendingRetry> {
    let mut pending: Vec<PendingRetry> = view
        .in_progress
        .iter()
        .filter_map(|run| {
            let failed = crate::store::read::ResultEntry::awaited_retry(&view.recent, run)?;
            let due = failed.retry_due()?;
            Some(PendingRetry {
                slot: run.slot,
                slot_time: rfc3339(run.slot),
                retry: failed.result["retry"].as_u64().unwrap_or(1),
                attempt: run.attempt + 1,
                due,
                due_time: rfc3339(due),
            })
        })
        .collect();
    pending.sort_by_key(|p| p.slot);
    pending
}

/// One fire time of the schedule: a slot `run` claims.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct FireTime {
    slot: i64,
    slot_time: String,
    /// The same instant in the schedule's zone, RFC 3339 with its offset.
    local_time: String,
    /// The zone's abbreviation then (CET, CEST; an offset where the zone has none).
    zone: String,
    /// The delay `run --jitter` waits before claiming this slot, the same on every host (null:
    /// the job's name is not known; it is then from 0 to `jitter_ms`).
    jitter_ms: Option<i64>,
    /// When the claim is made: the slot plus its jitter (null: not known).
    claim_at: Option<i64>,
    claim_at_time: Option<String>,
    /// What a daylight-saving change makes of this fire time (null: nothing).
    daylight_saving: Option<String>,
    /// Whether the job is paused then: `run` skips the slot (exit 87).
    paused: bool,
    /// The exclusion window it falls in (`--exclude`, `--calendar`): `run` skips it, recorded so
    /// (null: none).
    excluded: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct DaylightSaving {
    /// The changes are those before this (12 months after `from`, or after the last fire time
    /// shown if later).
    until: i64,
    until_time: String,
    changes: Vec<Change>,
}

/// A change of the zone's UTC offset and what the scheduler does with the schedule there.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Change {
    at: i64,
    at_time: String,
    /// `skip` (the clock jumps forward: local times do not occur) or `repeat` (it goes back:
    /// local times occur twice).
    kind: &'static str,
    /// The local wall clock at the change: what it shows just before, and what it shows from it.
    clock_before: String,
    clock_after: String,
    offset_before: String,
    offset_after: String,
    zone_before: String,
    zone_after: String,
    /// The schedule's local times the change skips or repeats (at most 60 listed; all counted).
    schedule_times: Vec<String>,
    schedule_time_count: usize,
    /// What the scheduler does with them: `unaffected` (none), `run_once_at_the_jump` (fixed
    /// hours, skipped), `not_run` (wildcard hours, skipped), `run_once_the_first_time` (fixed
    /// hours, repeated), `run_each_time` (wildcard hours, repeated).
    effect: &'static str,
    /// The fire times it gives them, oldest first (at most 120 listed; all counted).
    runs: Vec<ChangeRun>,
    run_count: usize,
    /// The same, in words.
    summary: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct ChangeRun {
    slot: i64,
    slot_time: String,
    local_time: String,
}

/// `--after-outage`: what the first run after it would do.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct AfterOutage {
    duration_ms: i64,
    /// Every host was down from `down_from` (included) to `down_until` (excluded): the slots in
    /// between were never claimed; those before are supposed claimed.
    down_from: i64,
    down_from_time: String,
    down_until: i64,
    down_until_time: String,
    /// The first run after it: the one cron starts at the schedule's next fire time.
    first_run: i64,
    first_run_time: String,
    /// The catch-up supposed: the window (0: no --catch-up), the policy, at most this many.
    catch_up_ms: i64,
    catch_up_policy: String,
    catch_up_max: u32,
    /// Where each comes from: `registry`, `flag`, or `default` (run's).
    catch_up_from: &'static str,
    catch_up_policy_from: &'static str,
    catch_up_max_from: &'static str,
    /// When the store first saw the job, as `run` reads it (with --schedule: supposed the start
    /// of the outage). Nothing before it is caught up.
    first_seen: Option<i64>,
    /// The missed slots and the first run's, oldest first, each with its fate.
    slots: Vec<OutageSlot>,
    /// Whether the outage has missed slots older than those listed (the newest 1000 are, with
    /// every one decided).
    older_not_listed: bool,
    /// How many are run (the first run's slot among them), recorded skipped, and left.
    run: usize,
    skipped: usize,
    not_run: usize,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
struct OutageSlot {
    slot: i64,
    slot_time: String,
    /// `run` (claimed and run), `skipped` (recorded skipped: no host runs it later) or `not_run`
    /// (left alone: monitoring counts it missed).
    fate: &'static str,
    reason: String,
}

/// What the report is computed from: the schedule and settings, from the registry or the flags.
struct Basis {
    job: Option<String>,
    source: &'static str,
    schedule: Schedule,
    strategy: Option<String>,
    from: i64,
    clock: &'static str,
    server_time: Option<i64>,
    jitter: Duration,
    pause: Option<Pause>,
    max_late: Duration,
    /// The registry's catch-up (window, policy name), when there is a registry.
    registry_catch_up: Option<(Duration, String)>,
    pending_retries: Vec<PendingRetry>,
    exclusions: Vec<crate::exclusion::Exclusion>,
}

pub async fn execute(settings: &NextSettings, ctx: &Context) -> Result<ExitCode> {
    let (basis, mut store) = match &settings.source {
        NextSource::Registered { job } => {
            let (basis, conn, keys) = registered(job, settings, ctx).await?;
            (basis, Some((conn, keys)))
        }
        NextSource::Given { schedule, job } => (given(schedule, job.as_deref(), settings), None),
    };
    let fire_times = fire_times(&basis, settings.count);
    let until = fire_times
        .last()
        .map_or(0, |t| t + 1)
        .max(basis.from + DST_HORIZON_MS);
    let changes = basis.schedule.offset_changes(basis.from, until);
    let after_outage = match settings.outage {
        Some(outage) => {
            let store = store
                .as_mut()
                .map(|(conn, keys)| catch_up::Store { conn, keys: &*keys });
            Some(after_outage(&basis, outage, store).await?)
        }
        None => None,
    };
    let report = report(&basis, &fire_times, &changes, until, after_outage);
    if ctx.out.json {
        ctx.out.print_json(&report);
    } else {
        print_text(ctx, &report);
    }
    Ok(ExitCode::Ok)
}

/// A registered job: the registry (and pause) read as every view reads a job, with the server's
/// clock. Refuses a job the store does not know (with near names), one with no schedule recorded,
/// and --after-outage for a claim-only strategy (which has no catch-up).
async fn registered(
    job: &str,
    settings: &NextSettings,
    ctx: &Context,
) -> Result<(Basis, crate::connection::Connection, LeaseKeys)> {
    ctx.lease_keys(job)?;
    let mut conn = ctx.connect().await?;
    let check = format::check_for_read(&mut conn, ctx.prefix()).await?;
    // The keys `run` reads the job's first sight and claims through, in the store's format.
    let lease_keys = check.lease_keys(ctx.prefix(), job);
    let (layout, _) = crate::store::job::locate_job(&mut conn, ctx.prefix(), job, None).await?;
    let job_ref = crate::store::discover::JobRef {
        name: job.to_string(),
        layout,
    };
    let view = crate::store::view::read_one(&mut conn, ctx.prefix(), &job_ref, &check, 1).await?;
    let pending_retries = pending_retries(&view);
    let Some(registry) = view.registry else {
        return Err(no_schedule(
            job,
            layout,
            "no job registry (no `anarchon run` recorded its schedule)",
        ));
    };
    let r = &registry.settings;
    let Some(text) = r.schedule.as_deref() else {
        return Err(no_schedule(
            job,
            layout,
            "no schedule in its job registry (it was run with --slot only)",
        ));
    };
    let schedule = Schedule::parse(text, &r.tz).map_err(|e| {
        Error::corrupt(
            crate::store::registry::registry_key(ctx.prefix(), job),
            format!("its schedule is not one this anarchon reads: {e}"),
        )
    })?;
    if settings.outage.is_some() {
        refuse_outage_without_catch_up(job, &r.strategy, layout)?;
    }
    let now = check.server_now_ms;
    let ms = |v: i64| Duration::from_millis(u64::try_from(v).unwrap_or(0));
    let exclusions = registered_windows(&mut conn, ctx.prefix(), r).await?;
    let basis = Basis {
        job: Some(job.to_string()),
        source: "registry",
        schedule,
        strategy: Some(r.strategy.clone()).filter(|s| !s.is_empty()),
        from: settings.from.unwrap_or(now),
        clock: if settings.from.is_some() {
            "from"
        } else {
            "server"
        },
        server_time: Some(now),
        jitter: settings.jitter.unwrap_or(ms(r.jitter_ms)),
        pause: view.pause,
        max_late: ms(r.max_late_ms),
        registry_catch_up: Some((ms(r.catch_up_ms), r.catch_up_policy.clone())),
        pending_retries,
        exclusions,
    };
    Ok((basis, conn, lease_keys))
}

/// The refusal of a job whose schedule the store does not hold, with how to give it one.
fn no_schedule(job: &str, layout: Layout, why: &str) -> Error {
    let claim_only = if layout == Layout::ClaimOnly {
        " (a claim-only job: its claims came from `anarchon claim` or another scheduler, which record no schedule)"
    } else {
        ""
    };
    Error::NotFound(
        format!(
            "job {job:?} has {why}{claim_only}\n  hint: run it once with `anarchon run --job {job} --schedule CRON ...` (its crontab line does this at its next run), or show a schedule without the store: `anarchon next --schedule CRON --tz ZONE`"
        )
        .into(),
    )
}

/// Refuses --after-outage for a job with no catch-up to show: one of a claim-only strategy.
fn refuse_outage_without_catch_up(job: &str, strategy: &str, layout: Layout) -> Result<()> {
    // A strategy other than the lease (a name this build may not know, written by another
    // scheduler, counts as one too) has no catch-up.
    let claim_only = !strategy.is_empty() && strategy != Strategy::Lease.name();
    if claim_only || layout == Layout::ClaimOnly {
        return Err(Error::usage(format!(
            "--after-outage: job {job:?} runs with the {} strategy, which has no catch-up (run refuses --catch-up with a claim-only strategy): after an outage its missed runs are simply not run\n  hint: `anarchon next {job}` shows its fire times",
            if strategy.is_empty() {
                "claim-only"
            } else {
                strategy
            }
        )));
    }
    Ok(())
}

/// `--schedule`: no store, this machine's clock (or --from).
fn given(schedule: &Schedule, job: Option<&str>, settings: &NextSettings) -> Basis {
    Basis {
        job: job.map(str::to_string),
        source: "flags",
        schedule: schedule.clone(),
        strategy: None,
        from: settings
            .from
            .unwrap_or_else(|| Utc::now().timestamp_millis()),
        clock: if settings.from.is_some() {
            "from"
        } else {
            "machine"
        },
        server_time: None,
        jitter: settings.jitter.unwrap_or(Duration::ZERO),
        pause: None,
        // run's default --max-late.
        max_late: Duration::from_secs(60),
        registry_catch_up: None,
        pending_retries: Vec::new(),
        exclusions: Vec::new(),
    }
}

/// The first `count` fire times at or after `from`.
fn fire_times(basis: &Basis, count: usize) -> Vec<i64> {
    let mut out = Vec::new();
    let mut at = basis.from - 1;
    while out.len() < count {
        let Some(t) = basis.schedule.next_after(at) else {
            break;
        };
        out.push(t);
        at = t;
    }
    out
}

/// `run --catch-up` asked about a supposed outage: the store's first sight of the job as `run`
/// reads it (with --schedule: the outage's start, as if the job had run until then), and every
/// slot claimed but those of the outage.
struct Supposed<'a> {
    store: Option<catch_up::Store<'a>>,
    down: std::ops::Range<i64>,
}

impl Claims for Supposed<'_> {
    async fn first_seen(&mut self) -> Result<Option<i64>> {
        match &mut self.store {
            Some(store) => store.first_seen().await,
            None => Ok(Some(self.down.start)),
        }
    }

    async fn were_claimed(&mut self, slots: &[i64]) -> Result<Vec<bool>> {
        Ok(slots.iter().map(|s| !self.down.contains(s)).collect())
    }
}

/// What the first run after `outage` (ending at `basis.from`) would do: the same decision `run`
/// takes, each of the outage's missed slots given its fate.
async fn after_outage(
    basis: &Basis,
    outage: OutageSettings,
    store: Option<catch_up::Store<'_>>,
) -> Result<AfterOutage> {
    let schedule = &basis.schedule;
    let first = first_run_after(schedule, millis(outage.length), basis.from)?;
    let catch_up = OutageCatchUp::of(basis, &outage);
    let rule = catch_up::Rule {
        schedule: Some(schedule),
        catch_up: (!catch_up.window.is_zero()).then_some(CatchUp {
            window: catch_up.window,
            policy: catch_up.policy,
            max: catch_up.max,
        }),
        max_late: basis.max_late,
    };
    let mut supposed = Supposed {
        store,
        down: first.down.clone(),
    };
    let decision = catch_up::decide(&rule, first.current, first.now, &mut supposed).await?;
    let (slots, older_not_listed) = outage_fates(basis, &first, &catch_up, &decision);
    let count = |fate: &str| slots.iter().filter(|s| s.fate == fate).count();
    let down = &first.down;
    Ok(AfterOutage {
        duration_ms: millis(outage.length),
        down_from: down.start,
        down_from_time: rfc3339(down.start),
        down_until: down.end,
        down_until_time: rfc3339(down.end),
        first_run: first.current,
        first_run_time: rfc3339(first.current),
        catch_up_ms: millis(catch_up.window),
        catch_up_policy: catch_up.policy.name().to_string(),
        catch_up_max: catch_up.max,
        catch_up_from: catch_up.window_from,
        catch_up_policy_from: catch_up.policy_from,
        catch_up_max_from: catch_up.max_from,
        first_seen: decision.first_seen,
        run: count("run"),
        skipped: count("skipped"),
        not_run: count("not_run"),
        slots,
        older_not_listed,
    })
}

/// The outage supposed and the first run after it: the instants every missed slot is judged by.
struct FirstRun {
    /// When every host was down, ending at the report's `from`.
    down: std::ops::Range<i64>,
    /// The first run's slot.
    current: i64,
    /// The server's clock as the first run reads it.
    now: i64,
}

/// The first run after an outage of `length_ms` ending at `until`, as cron would start it.
fn first_run_after(schedule: &Schedule, length_ms: i64, until: i64) -> Result<FirstRun> {
    let down = (until - length_ms)..until;
    // Cron starts the first run at the schedule's next fire time once the hosts are back; the
    // server's clock reads a moment later (a slot exactly --catch-up before it is outside the
    // window, as for a real run).
    let first = schedule.next_after(down.end - 1).ok_or_else(|| {
        Error::usage(format!(
            "--after-outage: {:?} does not fire again after {}",
            schedule.source(),
            rfc3339(down.end)
        ))
    })?;
    let now = first + 1;
    let current = scheduled_slot(schedule, first, now).map_or(first, |(slot, _)| slot);
    Ok(FirstRun { down, current, now })
}

/// The catch-up the first run after an outage takes, each part with where it came from (the
/// report says which the flags decided and which the registry).
struct OutageCatchUp {
    window: Duration,
    window_from: &'static str,
    policy: CatchUpPolicy,
    policy_from: &'static str,
    max: u32,
    max_from: &'static str,
}

impl OutageCatchUp {
    /// The flags first, then the registry's, then the defaults `run` takes.
    fn of(basis: &Basis, outage: &OutageSettings) -> OutageCatchUp {
        let (registry_window, registry_policy) = basis
            .registry_catch_up
            .clone()
            .unwrap_or((Duration::ZERO, String::new()));
        let (window, window_from) = match outage.catch_up {
            Some(w) => (w, "flag"),
            None if basis.registry_catch_up.is_some() => (registry_window, "registry"),
            None => (Duration::ZERO, "default"),
        };
        let (policy, policy_from) = match outage.policy {
            Some(p) => (p, "flag"),
            None => match CatchUpPolicy::ALL
                .into_iter()
                .find(|p| p.name() == registry_policy)
            {
                Some(p) => (p, "registry"),
                None => (CatchUpPolicy::default(), "default"),
            },
        };
        let (max, max_from) = match outage.max {
            Some(m) => (m, "flag"),
            None => (crate::cli::DEFAULT_CATCH_UP_MAX, "default"),
        };
        OutageCatchUp {
            window,
            window_from,
            policy,
            policy_from,
            max,
            max_from,
        }
    }
}

/// The outage's slots, oldest first, each with its fate: those the decision runs or skips, then
/// the newest of the rest, not run; and whether older slots were left out of the list.
fn outage_fates(
    basis: &Basis,
    first: &FirstRun,
    catch_up: &OutageCatchUp,
    decision: &catch_up::Decision,
) -> (Vec<OutageSlot>, bool) {
    let schedule = &basis.schedule;
    let down = &first.down;
    let mut fates: BTreeMap<i64, OutageSlot> = BTreeMap::new();
    let mut put = |slot: i64, fate: &'static str, reason: String| {
        fates.entry(slot).or_insert(OutageSlot {
            slot,
            slot_time: rfc3339(slot),
            fate,
            reason,
        });
    };
    if decision.runs_current() {
        put(
            first.current,
            "run",
            "the first run after the outage, on time".to_string(),
        );
    } else {
        put(
            first.current,
            "not_run",
            format!(
                "later than --max-late {}",
                humantime::format_duration(basis.max_late)
            ),
        );
    }
    for slot in &decision.to_run {
        put(
            *slot,
            "run",
            format!(
                "caught up: run before the first run's slot, oldest first, one at a time (--catch-up-policy {})",
                catch_up.policy.name()
            ),
        );
    }
    for (slot, reason) in &decision.to_skip {
        put(*slot, "skipped", reason.clone());
    }
    let listed = schedule.newest_between(down.start - 1, down.end - 1, MAX_OUTAGE_SLOTS);
    let older_not_listed = listed
        .first()
        .is_some_and(|oldest| schedule.next_after(down.start - 1) != Some(*oldest));
    let why = WhyNotRun::of(first, catch_up.window, decision);
    for slot in listed {
        put(slot, "not_run", why.reason(slot));
    }
    (fates.into_values().collect(), older_not_listed)
}

/// What a missed slot the decision neither runs nor skips is judged by: why nobody runs it.
struct WhyNotRun {
    window: Duration,
    window_start: i64,
    first_seen: Option<i64>,
    /// Whether the decision recorded slots before the --catch-up window skipped.
    before_window_decided: bool,
}

impl WhyNotRun {
    /// The window the first run looks at, and what the decision read and recorded.
    fn of(first: &FirstRun, window: Duration, decision: &catch_up::Decision) -> WhyNotRun {
        let window_start = first.now - millis(window);
        WhyNotRun {
            window,
            window_start,
            first_seen: decision.first_seen,
            before_window_decided: decision
                .to_skip
                .iter()
                .any(|(slot, _)| *slot < window_start),
        }
    }

    /// Why `slot` is not run, as the report says it.
    fn reason(&self, slot: i64) -> String {
        match self.first_seen {
            _ if self.window.is_zero() => {
                "no --catch-up: nobody runs it (check and metrics count it missed)".to_string()
            }
            None => "the store never saw the job run: nothing is caught up".to_string(),
            Some(seen) if slot < seen => "before the store first saw the job".to_string(),
            Some(_) if slot >= self.window_start => {
                format!("beyond the newest {MAX_CATCH_UP_SLOTS} slots --catch-up looks at")
            }
            Some(_) if self.before_window_decided => format!(
                "beyond the newest {MAX_CATCH_UP_SLOTS} before the --catch-up window that are recorded"
            ),
            Some(_) => format!(
                "before the --catch-up {} window, which holds no missed run: not recorded skipped",
                humantime::format_duration(self.window)
            ),
        }
    }
}

/// The report: each fire time with its jitter, zone and daylight-saving note; each change.
fn report(
    basis: &Basis,
    fire_times: &[i64],
    changes: &[OffsetChange],
    until: i64,
    after_outage: Option<AfterOutage>,
) -> NextReport {
    let schedule = &basis.schedule;
    let jitter_ms = millis(basis.jitter);
    let fire_times: Vec<FireTime> = fire_times
        .iter()
        .map(|&slot| {
            let jitter = basis
                .job
                .as_deref()
                .map(|job| millis(jitter_delay(job, slot, basis.jitter)));
            FireTime {
                slot,
                slot_time: rfc3339(slot),
                local_time: local_rfc3339(schedule, slot),
                zone: zone_name(schedule, slot),
                jitter_ms: jitter,
                claim_at: jitter.map(|j| slot + j),
                claim_at_time: jitter.map(|j| rfc3339(slot + j)),
                daylight_saving: changes
                    .iter()
                    .find(|c| c.runs.contains(&slot))
                    .map(|c| fire_note(schedule, c, slot)),
                paused: basis.pause.as_ref().is_some_and(|p| p.is_paused(slot)),
                excluded: schedule
                    .local(slot)
                    .and_then(|t| crate::exclusion::covering(&basis.exclusions, t.naive_local()))
                    .map(|w| w.name.clone()),
            }
        })
        .collect();
    // A pause is shown unless it ended before `from`.
    let pause = basis
        .pause
        .clone()
        .filter(|p| p.paused_at.is_some() && p.ends().is_none_or(|end| end > basis.from));
    NextReport {
        job: basis.job.clone(),
        source: basis.source,
        schedule: schedule.source().to_string(),
        tz: schedule.time_zone().to_string(),
        follows_local_clock: schedule.follows_local_clock(),
        strategy: basis.strategy.clone(),
        from: basis.from,
        from_time: rfc3339(basis.from),
        clock: basis.clock,
        server_time: basis.server_time,
        server_time_rfc3339: basis.server_time.map(rfc3339),
        jitter_ms,
        jitter_exact: basis.job.is_some() || jitter_ms == 0,
        pause,
        fire_times,
        daylight_saving: DaylightSaving {
            until,
            until_time: rfc3339(until),
            changes: changes.iter().map(|c| change(schedule, c)).collect(),
        },
        after_outage,
        pending_retries: basis.pending_retries.clone(),
    }
}

/// An instant in the schedule's zone, RFC 3339 with its offset.
fn local_rfc3339(schedule: &Schedule, ms: i64) -> String {
    schedule.local(ms).map_or_else(
        || rfc3339(ms),
        |t| t.to_rfc3339_opts(SecondsFormat::Millis, true),
    )
}

/// The zone's abbreviation at an instant (CET), or its offset where it has none.
fn zone_name(schedule: &Schedule, ms: i64) -> String {
    schedule
        .local(ms)
        .map_or_else(String::new, |t| t.format("%Z").to_string())
}

/// `+01:00`.
fn offset_text(offset_ms: i64) -> String {
    let minutes = offset_ms.abs() / 60_000;
    let sign = if offset_ms < 0 { '-' } else { '+' };
    format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

/// A local wall-clock time ("naive" local ms) as `2026-03-29T02:30:00`.
fn naive_text(local_ms: i64) -> String {
    Utc.timestamp_millis_opt(local_ms).single().map_or_else(
        || rfc3339(local_ms),
        |t| t.format("%Y-%m-%dT%H:%M:%S").to_string(),
    )
}

/// A local wall-clock time of day: `02:30`, or `02:30:15` when it has seconds.
fn clock_text(local_ms: i64) -> String {
    Utc.timestamp_millis_opt(local_ms).single().map_or_else(
        || rfc3339(local_ms),
        |t| {
            if local_ms.rem_euclid(60_000) == 0 {
                t.format("%H:%M").to_string()
            } else {
                t.format("%H:%M:%S").to_string()
            }
        },
    )
}

/// The schedule's local times a change touches, in words: `02:30`, `02:00 and 02:30`, `02:00,
/// 02:15, ... 02:45 (4 times)`.
fn times_text(c: &OffsetChange) -> String {
    let times: Vec<String> = c.local_times.iter().map(|t| clock_text(*t)).collect();
    match (times.as_slice(), c.local_time_count) {
        ([one], 1) => one.clone(),
        ([a, b], 2) => format!("{a} and {b}"),
        ([a, b, c], 3) => format!("{a}, {b} and {c}"),
        ([first, second, ..], n) => format!(
            "{first}, {second}, … {} ({n} times)",
            clock_text(*c.local_times.last().unwrap_or(&0))
        ),
        _ => String::new(),
    }
}

/// What the scheduler does with a change, as a word for scripts and a sentence for people.
fn effect(schedule: &Schedule, c: &OffsetChange) -> (&'static str, String) {
    let (start, end) = c.local_span();
    let span = format!("{}-{}", clock_text(start), clock_text(end));
    if c.local_time_count == 0 {
        let what = if c.skips() { "skipped" } else { "repeated" };
        return (
            "unaffected",
            format!("no run in the {what} {span}: unaffected"),
        );
    }
    let times = times_text(c);
    let plural = c.local_time_count > 1;
    if c.skips() {
        let occur = if plural {
            "do not occur"
        } else {
            "does not occur"
        };
        match c.runs.first() {
            Some(at) => (
                "run_once_at_the_jump",
                format!(
                    "{times} {occur}: {} once, right after the jump, at {}",
                    if plural { "they run" } else { "runs" },
                    clock_zone(schedule, *at)
                ),
            ),
            None => (
                "not_run",
                format!("{times} {occur}: not run (wildcard hours follow the local clock)"),
            ),
        }
    } else {
        let occur = if plural {
            "occur twice"
        } else {
            "occurs twice"
        };
        // Each repeated time fires once (the first time), or twice.
        if c.run_count <= c.local_time_count {
            let first: Vec<String> = c
                .runs
                .iter()
                .take(1)
                .map(|t| clock_zone(schedule, *t))
                .collect();
            (
                "run_once_the_first_time",
                format!(
                    "{times} {occur}: {} once, the first time{}",
                    if plural { "each runs" } else { "runs" },
                    if plural {
                        String::new()
                    } else {
                        format!(" ({})", first.join(""))
                    }
                ),
            )
        } else {
            (
                "run_each_time",
                format!(
                    "{times} {occur}: {} both times ({} runs; wildcard hours follow the local clock)",
                    if plural { "each runs" } else { "runs" },
                    c.run_count
                ),
            )
        }
    }
}

/// `03:00 CEST`.
fn clock_zone(schedule: &Schedule, ms: i64) -> String {
    schedule.local(ms).map_or_else(
        || rfc3339(ms),
        |t| {
            if ms.rem_euclid(60_000) == 0 {
                t.format("%H:%M %Z").to_string()
            } else {
                t.format("%H:%M:%S %Z").to_string()
            }
        },
    )
}

/// What a change makes of one of its fire times, for the fire time's row.
fn fire_note(schedule: &Schedule, c: &OffsetChange, slot: i64) -> String {
    let local = schedule
        .local(slot)
        .map_or(0, |t| t.naive_local().and_utc().timestamp_millis());
    if c.skips() {
        format!("for {} (skipped by the change)", times_text(c))
    } else if c.is_second_occurrence(slot) {
        format!("{} again (the clock went back)", clock_text(local))
    } else if c.runs.iter().any(|t| c.is_second_occurrence(*t)) {
        format!("{} the first time; it comes again", clock_text(local))
    } else {
        format!("{} the first time; not run again", clock_text(local))
    }
}

fn change(schedule: &Schedule, c: &OffsetChange) -> Change {
    let (kind, summary) = effect(schedule, c);
    Change {
        at: c.at,
        at_time: rfc3339(c.at),
        kind: if c.skips() { "skip" } else { "repeat" },
        clock_before: naive_text(c.at + c.before_ms),
        clock_after: naive_text(c.at + c.after_ms),
        offset_before: offset_text(c.before_ms),
        offset_after: offset_text(c.after_ms),
        zone_before: zone_name(schedule, c.at - 1),
        zone_after: zone_name(schedule, c.at),
        schedule_times: c.local_times.iter().map(|t| naive_text(*t)).collect(),
        schedule_time_count: c.local_time_count,
        effect: kind,
        runs: c
            .runs
            .iter()
            .map(|t| ChangeRun {
                slot: *t,
                slot_time: rfc3339(*t),
                local_time: local_rfc3339(schedule, *t),
            })
            .collect(),
        run_count: c.run_count,
        summary,
    }
}

fn print_text(ctx: &Context, r: &NextReport) {
    let out = &ctx.out;
    let utc = r.tz == "UTC";
    let clock = match r.clock {
        "server" => "the server's clock",
        "machine" => "this machine's clock",
        _ => "--from",
    };
    crate::outln!(
        "{}{} in {}{}{}; from {} ({clock}):",
        r.job.as_deref().map_or(String::new(), |j| format!("{j}: ")),
        r.schedule,
        r.tz,
        // Which daylight-saving policy applies, where the zone has changes.
        match (r.daylight_saving.changes.is_empty(), r.follows_local_clock) {
            (true, _) => "",
            (false, true) => " (wildcard hours: follows the local clock)",
            (false, false) => " (fixed hours)",
        },
        if r.jitter_ms > 0 {
            format!(", jitter up to {}", span(r.jitter_ms))
        } else {
            String::new()
        },
        utc_time(out, r.from),
    );
    if r.fire_times.is_empty() {
        crate::outln!("no fire time in the next 9 years");
    } else {
        print_fire_times(ctx, r, utc);
    }
    if let Some(p) = &r.pause {
        crate::outln!(
            "paused {}: its runs until then are skipped (exit 87; `anarchon resume {}` ends it)",
            p.describe(),
            r.job.as_deref().unwrap_or("JOB")
        );
    }
    if r.jitter_ms > 0 && !r.jitter_exact {
        crate::outln!(
            "jitter: each run waits from 0 to {} before claiming, derived from the job's name and the slot (the same on every host); name the job for the exact delay: anarchon next JOB --schedule ...",
            span(r.jitter_ms)
        );
    }
    for p in &r.pending_retries {
        crate::outln!(
            "retry {} of the run of {} is due at {}: its command failed; attempt {} then, on whichever host or replica takes it",
            p.retry,
            utc_time(out, p.slot),
            utc_time(out, p.due),
            p.attempt
        );
    }
    print_changes(ctx, r, utc);
    if let Some(o) = &r.after_outage {
        print_outage(ctx, o);
    }
}

fn print_fire_times(ctx: &Context, r: &NextReport, utc: bool) {
    let out = &ctx.out;
    let local_header = format!("LOCAL ({})", r.tz);
    let mut header: Vec<&str> = vec!["UTC"];
    if !utc {
        header.push(&local_header);
    }
    if r.jitter_ms > 0 {
        header.push("JITTER");
        if r.jitter_exact {
            header.push("CLAIMS AT (UTC)");
        }
    }
    // A NOTE column only when a fire time has one.
    let noted = r
        .fire_times
        .iter()
        .any(|t| t.daylight_saving.is_some() || t.paused || t.excluded.is_some());
    if noted {
        header.push("NOTE");
    }
    let rows = r
        .fire_times
        .iter()
        .map(|t| {
            let mut row = vec![out.time(t.slot)];
            if !utc {
                // In the form of the UTC column: RFC 3339 (with the offset) when that is.
                row.push(if out.time(t.slot) == t.slot_time {
                    t.local_time.clone()
                } else {
                    local_text_of(t)
                });
            }
            if r.jitter_ms > 0 {
                match (t.jitter_ms, t.claim_at) {
                    (Some(j), Some(at)) => {
                        row.push(format!("+{}", jitter_text(j)));
                        row.push(out.time(at));
                    }
                    _ => row.push(format!("+0–{}", span(r.jitter_ms))),
                }
            }
            let mut notes: Vec<String> = t.daylight_saving.iter().cloned().collect();
            if t.paused {
                notes.push("paused: skipped".to_string());
            }
            if let Some(window) = &t.excluded {
                notes.push(format!("excluded ({window}): skipped"));
            }
            if noted {
                row.push(notes.join("; "));
            }
            row
        })
        .collect();
    crate::outln!("{}", out.table(&header, rows));
}

/// A duration as given on a command line: `2h`, `90m`, `1h 30m 15s`.
fn span(ms: i64) -> String {
    let ms = u64::try_from(ms).unwrap_or(0);
    let short = humanize(ms);
    match crate::time::parse_duration(&short) {
        Ok(d) if d.as_millis() == u128::from(ms) => short,
        _ => humantime::format_duration(Duration::from_millis(ms)).to_string(),
    }
}

/// A time in a sentence: as the tables show it, with `UTC` after a compact one.
fn utc_time(out: &crate::output::Output, ms: i64) -> String {
    let shown = out.time(ms);
    if shown == rfc3339(ms) {
        shown
    } else {
        format!("{shown} UTC")
    }
}

/// A fire time's local time for a person: `2026-03-29 03:00:00 CEST`.
fn local_text_of(t: &FireTime) -> String {
    chrono::DateTime::parse_from_rfc3339(&t.local_time).map_or_else(
        |_| t.local_time.clone(),
        |d| format!("{} {}", d.format("%Y-%m-%d %H:%M:%S"), t.zone),
    )
}

/// A jitter delay to the millisecond: `14.074s`, `4m 3.500s`.
fn jitter_text(ms: i64) -> String {
    let (minutes, seconds, millis) = (ms / 60_000, ms % 60_000 / 1000, ms % 1000);
    if minutes > 0 {
        format!("{minutes}m {seconds}.{millis:03}s")
    } else {
        format!("{seconds}.{millis:03}s")
    }
}

fn print_changes(ctx: &Context, r: &NextReport, utc: bool) {
    let out = &ctx.out;
    let d = &r.daylight_saving;
    if d.changes.is_empty() {
        if utc {
            crate::outln!("\nno daylight saving in UTC");
        } else {
            crate::outln!(
                "\nno daylight-saving change in {} before {}",
                r.tz,
                utc_time(out, d.until)
            );
        }
        return;
    }
    crate::outln!(
        "\ndaylight saving in {} before {}:",
        r.tz,
        utc_time(out, d.until)
    );
    let rows = d
        .changes
        .iter()
        .map(|c| {
            vec![
                out.time(c.at),
                format!(
                    "{} {} → {} {}",
                    &c.clock_before[11..16],
                    c.zone_before,
                    &c.clock_after[11..16],
                    c.zone_after
                ),
                c.summary.clone(),
            ]
        })
        .collect();
    crate::outln!(
        "{}",
        out.table(&["CHANGE (UTC)", "CLOCKS", "THIS SCHEDULE"], rows)
    );
}

fn print_outage(ctx: &Context, o: &AfterOutage) {
    let out = &ctx.out;
    let whence = |from: &str| match from {
        "registry" => "the registry's",
        "flag" => "given",
        _ => "run's default",
    };
    crate::outln!(
        "\nafter an outage of {} (every host down from {} to {}), the first run is at {}, the schedule's next fire time:",
        span(o.duration_ms),
        utc_time(out, o.down_from),
        utc_time(out, o.down_until),
        utc_time(out, o.first_run)
    );
    if o.catch_up_ms == 0 {
        crate::outln!(
            "no --catch-up ({}): the missed runs are not run",
            whence(o.catch_up_from)
        );
    } else {
        crate::outln!(
            "--catch-up {} ({}), --catch-up-policy {} ({}), --catch-up-max {} ({})",
            span(o.catch_up_ms),
            whence(o.catch_up_from),
            o.catch_up_policy,
            whence(o.catch_up_policy_from),
            o.catch_up_max,
            whence(o.catch_up_max_from)
        );
    }
    // Consecutive slots with the same fate and reason, one row each.
    let mut rows = Vec::new();
    let mut rest = &o.slots[..];
    while let Some(first) = rest.first() {
        let n = rest
            .iter()
            .take_while(|s| s.fate == first.fate && s.reason == first.reason)
            .count();
        let last = &rest[n - 1];
        rows.push(vec![
            if n == 1 {
                out.time(first.slot)
            } else {
                format!("{} to {}", out.time(first.slot), out.time(last.slot))
            },
            n.to_string(),
            first.fate.replace('_', " "),
            first.reason.clone(),
        ]);
        rest = &rest[n..];
    }
    crate::outln!(
        "{}",
        out.table(&["SLOTS (UTC)", "COUNT", "DECISION", "REASON"], rows)
    );
    crate::outln!(
        "{} run, {} recorded skipped (no host runs them later), {} not run{}",
        o.run,
        o.skipped,
        o.not_run,
        if o.older_not_listed {
            "; older missed slots not listed"
        } else {
            ""
        }
    );
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![("next", crate::commands::output_schema::<NextReport>())]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(rfc: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(rfc)
            .unwrap()
            .timestamp_millis()
    }

    fn basis(schedule: &str, tz: &str, from: &str) -> Basis {
        let settings = NextSettings {
            source: NextSource::Registered { job: "j".into() },
            count: 5,
            from: Some(ms(from)),
            jitter: None,
            outage: None,
        };
        let schedule = Schedule::parse(schedule, tz).unwrap();
        given(&schedule, Some("sync"), &settings)
    }

    fn outage(length: &str, catch_up: Option<&str>, policy: CatchUpPolicy) -> OutageSettings {
        OutageSettings {
            length: crate::time::parse_duration(length).unwrap(),
            catch_up: catch_up.map(|c| crate::time::parse_duration(c).unwrap()),
            policy: Some(policy),
            max: None,
        }
    }

    /// Consecutive slots with the same fate and reason: (count, fate, reason).
    fn groups(o: &AfterOutage) -> Vec<(usize, &'static str, String)> {
        let mut out: Vec<(usize, &'static str, String)> = Vec::new();
        for s in &o.slots {
            match out.last_mut() {
                Some((n, fate, reason)) if *fate == s.fate && *reason == s.reason => *n += 1,
                _ => out.push((1, s.fate, s.reason.clone())),
            }
        }
        out
    }

    #[tokio::test]
    async fn an_outage_is_decided_as_run_decides_it() {
        // Down 12:00:00.5 to 14:00:00.5: the slots 12:05 to 14:00 were missed; the first run is
        // 14:05's, whose --catch-up 2h window starts just after 12:05.
        let b = basis("*/5 * * * *", "UTC", "2026-12-02T14:00:00.5Z");
        let o = after_outage(&b, outage("2h", Some("2h"), CatchUpPolicy::All), None)
            .await
            .unwrap();
        assert_eq!(o.first_run, ms("2026-12-02T14:05:00Z"));
        let g = groups(&o);
        assert_eq!(g.len(), 4, "{g:?}");
        assert_eq!((g[0].0, g[0].1), (1, "skipped"));
        assert!(g[0].2.starts_with("older than --catch-up 2h"), "{g:?}");
        assert_eq!(g[1], (13, "skipped", "over --catch-up-max 10".to_string()));
        assert_eq!((g[2].0, g[2].1), (10, "run"));
        assert_eq!((g[3].0, g[3].1), (1, "run"));
        assert_eq!((o.run, o.skipped, o.not_run), (11, 14, 0));

        let o = after_outage(&b, outage("2h", Some("1h"), CatchUpPolicy::Latest), None)
            .await
            .unwrap();
        let g = groups(&o);
        assert_eq!((g[0].0, g[0].1), (13, "skipped"));
        assert_eq!(
            g[1],
            (11, "skipped", "--catch-up-policy latest".to_string())
        );
        assert_eq!((o.run, o.skipped), (1, 24));

        // No --catch-up: the missed runs are left, nothing recorded.
        let o = after_outage(&b, outage("2h", None, CatchUpPolicy::All), None)
            .await
            .unwrap();
        assert_eq!((o.run, o.skipped, o.not_run), (1, 0, 24));
        assert!(o.slots[0].reason.starts_with("no --catch-up"));

        // A daily job down for 12 h with --catch-up 6h: its first run comes a day later, and
        // its window holds no missed run: nothing is caught up or recorded.
        let b = basis("30 2 * * *", "Europe/Berlin", "2026-12-06T13:00:00Z");
        let o = after_outage(&b, outage("12h", Some("6h"), CatchUpPolicy::All), None)
            .await
            .unwrap();
        assert_eq!(o.first_run, ms("2026-12-07T01:30:00Z"));
        assert_eq!((o.run, o.skipped, o.not_run), (1, 0, 1));
        assert!(o.slots[0].reason.contains("which holds no missed run"));
    }

    #[test]
    fn a_change_reads_as_the_scheduler_does_it() {
        let said = |expr: &str, from: &str| {
            let s = Schedule::parse(expr, "Europe/Berlin").unwrap();
            let changes = s.offset_changes(ms(from), ms(from) + DST_HORIZON_MS);
            changes.iter().map(|c| effect(&s, c)).collect::<Vec<_>>()
        };
        let fixed = said("30 2 * * *", "2026-01-01T00:00:00Z");
        assert_eq!(
            fixed[0],
            (
                "run_once_at_the_jump",
                "02:30 does not occur: runs once, right after the jump, at 03:00 CEST".into()
            )
        );
        assert_eq!(
            fixed[1],
            (
                "run_once_the_first_time",
                "02:30 occurs twice: runs once, the first time (02:30 CEST)".into()
            )
        );
        let wild = said("*/15 * * * *", "2026-01-01T00:00:00Z");
        assert_eq!(wild[0].0, "not_run");
        assert!(
            wild[0]
                .1
                .starts_with("02:00, 02:15, … 02:45 (4 times) do not occur")
        );
        assert_eq!(wild[1].0, "run_each_time");
        assert!(wild[1].1.contains("8 runs"), "{}", wild[1].1);
        let nine = said("0 9 * * *", "2026-01-01T00:00:00Z");
        assert_eq!(
            nine[0],
            (
                "unaffected",
                "no run in the skipped 02:00-03:00: unaffected".into()
            )
        );
    }

    #[test]
    fn small_words() {
        assert_eq!(offset_text(3_600_000), "+01:00");
        assert_eq!(offset_text(-(3 * 3_600_000 + 30 * 60_000)), "-03:30");
        assert_eq!(jitter_text(14_074), "14.074s");
        assert_eq!(jitter_text(243_500), "4m 3.500s");
        assert_eq!(span(7_200_000), "2h");
        assert_eq!(span(5_400_000), "1h 30m");
    }
}
