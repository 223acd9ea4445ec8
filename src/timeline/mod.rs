//! `timeline`'s model and pictures, below the commands so that more than the command draws it (the
//! status page's job page, src/page/): each slot's attempts as bars on one time axis, with how each
//! ended, takeovers, late starts and any instant at which two attempts of a job held it at once;
//! as text (fit to a width), SVG, or JSON. Reads each job through `store::view` (both store
//! formats: results in the range, runs in progress) and a claim-only job's claims with their
//! results ([`read`]).

mod axis;
pub mod model;
pub mod svg;
pub mod text;

use std::time::Duration;

use serde::Serialize;

use crate::error::Result;
use crate::store::Layout;
use crate::store::discover::JobRef;
use crate::store::read::Unreadable;
use crate::time::{millis, rfc3339};

pub use model::Window;
use model::{JobTimeline, Seen};

/// How many of a claim-only job's newest claims are read first, and at most (its streams are not
/// ordered by slot: they are read newest first until the range is covered).
const CLAIMS_FIRST: usize = 1_000;
const CLAIMS_MOST: usize = 10_000;

/// How far before `--since` a slot may be and still be read, so that a run claimed in the range
/// for an older slot (a catch-up, a takeover, a long run) is drawn: as long as the range, at least
/// an hour, at most a day. What is read grows with the range asked for, never past twice it plus an
/// hour (`--all` over a large fleet in an incident reads what it draws).
fn lookback_ms(window: Window) -> i64 {
    (window.until - window.since).clamp(3_600_000, 86_400_000)
}

/// A claim-only job's claims with their results, newest first, read until one is older than
/// `from` (or [`CLAIMS_MOST`]); and whether that covered `from`.
async fn claims(
    conn: &mut crate::connection::Connection,
    keys: &crate::store::JobKeys,
    from: i64,
) -> Result<(Vec<Seen>, bool)> {
    let mut last = CLAIMS_FIRST;
    loop {
        let read = crate::store::job::runs_with_results(
            conn,
            &keys.history_streams(),
            keys.results(),
            last,
        )
        .await?;
        let covered =
            read.len() < last || read.last().is_some_and(|oldest| oldest.entry.slot < from);
        if covered || last >= CLAIMS_MOST {
            return Ok((read.into_iter().map(Seen::claim).collect(), covered));
        }
        last = CLAIMS_MOST;
    }
}

/// `timeline --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TimelineReport {
    #[serde(flatten)]
    pub clock: crate::output::ServerClock,
    /// The range drawn (server ms).
    pub since: i64,
    pub since_time: String,
    pub until: i64,
    pub until_time: String,
    /// The jobs drawn: as named, or with --all every job with an attempt in the range.
    pub jobs: Vec<JobTimeline>,
    /// With --all, how many jobs had no attempt in the range (left out).
    pub idle_jobs: u64,
    /// Jobs whose data cannot be read (--all: every other job is drawn; the exit code is 92).
    pub errors: Vec<Unreadable>,
}

/// What is drawn of each job besides the range: judged as `check --window` with this grace, late
/// after this many ms (None: each job's own threshold), and whether every job is drawn (`--all`:
/// a job that cannot be read is reported, not the error).
#[derive(Debug, Clone, Copy, Default)]
pub struct Spec {
    pub all: bool,
    pub grace: Option<Duration>,
    pub late_after: Option<i64>,
}

/// The report of `refs` over `window`, and the jobs drawn with nothing in the range (each with its
/// results key, for a hint).
pub async fn read(
    conn: &mut crate::connection::Connection,
    prefix: &str,
    check: &crate::store::format::StoreCheck,
    spec: &Spec,
    window: Window,
    refs: &[JobRef],
) -> Result<(TimelineReport, Vec<(String, String)>)> {
    let mut reading = Reading {
        spec,
        prefix,
        check,
        window,
        late_after: spec.late_after,
        jobs: Vec::with_capacity(refs.len().min(crate::store::read::BATCH)),
        errors: Vec::new(),
        empty: Vec::new(),
        idle_jobs: 0,
    };
    reading.read(conn, refs).await?;
    let Reading {
        mut jobs,
        errors,
        empty,
        idle_jobs,
        ..
    } = reading;
    model::name_holders(&mut jobs);
    let report = TimelineReport {
        clock: crate::output::ServerClock::at(window.now),
        since: window.since,
        since_time: rfc3339(window.since),
        until: window.until,
        until_time: rfc3339(window.until),
        jobs,
        idle_jobs,
        errors,
    };
    Ok((report, empty))
}

/// The jobs being read and modelled, and what is gathered of them.
struct Reading<'a> {
    spec: &'a Spec,
    prefix: &'a str,
    check: &'a crate::store::format::StoreCheck,
    window: Window,
    late_after: Option<i64>,
    jobs: Vec<JobTimeline>,
    errors: Vec<Unreadable>,
    /// The named jobs with nothing in the range, each with its results key.
    empty: Vec<(String, String)>,
    idle_jobs: u64,
}

impl Reading<'_> {
    /// Reads and models every job of `refs`.
    async fn read(
        &mut self,
        conn: &mut crate::connection::Connection,
        refs: &[JobRef],
    ) -> Result<()> {
        let Window { since, until, .. } = self.window;
        // A batch of jobs at a time, each job's data dropped once drawn: `--all` over a large fleet
        // holds one batch's results, not every job's.
        for batch in refs.chunks(crate::store::read::BATCH) {
            let (views, bad) = crate::store::view::read_between(
                conn,
                self.prefix,
                batch,
                self.check,
                since - lookback_ms(self.window),
                until,
            )
            .await?;
            if let Some(bad) = bad.into_iter().next() {
                if !self.spec.all {
                    return Err(bad.error);
                }
                self.errors.push(bad);
            }
            for view in views {
                self.add(conn, view).await?;
            }
        }
        Ok(())
    }

    /// Models one job from its view (a claim-only job's claims read besides) and keeps it.
    async fn add(
        &mut self,
        conn: &mut crate::connection::Connection,
        view: crate::store::view::JobView,
    ) -> Result<()> {
        let (spec, window) = (self.spec, self.window);
        let Window { since, until, now } = window;
        let keys = self.check.job_keys(view.layout, self.prefix, &view.job);
        // Judged as `check --window` from `since` judges them: the view as that read it. The
        // range is half open here: a slot at `until` has its run after what is drawn.
        let judged = view.read_from(since);
        let without = judged.slots_without_a_run(now, spec.grace, since, until - 1);
        let grace_ms = millis(judged.grace(spec.grace));
        drop(judged);
        let crate::store::view::JobView {
            job: name,
            layout,
            registry,
            recent,
            recent_is_all,
            in_progress,
            ..
        } = view;
        let (seen, complete) = match layout {
            Layout::Lease => (
                recent
                    .into_iter()
                    .map(Seen::from)
                    .chain(in_progress.into_iter().map(Seen::in_progress))
                    .collect(),
                recent_is_all,
            ),
            Layout::ClaimOnly => match claims(conn, &keys, since - lookback_ms(window)).await {
                Ok(read) => read,
                Err(error) if spec.all && error.key().is_some() => {
                    self.errors.push(Unreadable {
                        job: name,
                        layout,
                        error,
                    });
                    return Ok(());
                }
                Err(error) => return Err(error),
            },
        };
        let threshold = model::late_after_ms(registry.as_ref(), self.late_after);
        let mut job = model::build(
            &name,
            layout,
            registry.as_ref(),
            seen,
            window,
            threshold,
            complete,
        );
        job.add_slots_without_a_run(&without, grace_ms);
        self.keep(job, name, keys.results());
        Ok(())
    }

    /// Keeps a modelled job: warns when it was read in part, counts it idle with `--all` when
    /// it has nothing in the range, or notes it for a hint.
    fn keep(&mut self, job: JobTimeline, name: String, results: &str) {
        if !job.complete {
            crate::errln!(
                "anarchon: {name}: more attempts in the range than are read at once: only the newest are drawn; give a shorter range"
            );
        }
        if job.slots.is_empty() {
            if self.spec.all {
                self.idle_jobs += 1;
                return;
            }
            self.empty.push((name, results.to_string()));
        }
        self.jobs.push(job);
    }
}
