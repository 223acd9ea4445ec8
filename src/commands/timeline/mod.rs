//! `anarchon timeline JOB... [--all] [--since T] [--until T]`: what happened, as a picture. Each
//! slot's attempts as bars on one time axis, with how each ended, takeovers, late starts and any
//! instant at which two attempts of a job held it at once; as text (fit to the terminal), SVG
//! (`--svg`) or JSON. Reads each job through `store::view` (both store formats: results in the
//! range, runs in progress) and a claim-only job's claims with their results.

mod axis;
mod model;
mod svg;
mod text;

use serde::Serialize;

use crate::commands::Context;
use crate::error::{Error, ExitCode, Result};
use crate::settings::timeline::{DEFAULT_RANGE, DEFAULT_WIDTH, SvgTarget, TimelineSettings};
use crate::store::Layout;
use crate::store::discover::JobRef;
use crate::store::read::Unreadable;
use crate::time::{millis, rfc3339};

use model::{JobTimeline, Seen, Window};

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

pub async fn execute(settings: &TimelineSettings, ctx: &Context) -> Result<ExitCode> {
    crate::store::validate_prefix(ctx.prefix())?;
    for job in &settings.jobs {
        ctx.lease_keys(job)?;
    }
    let mut conn = ctx.connect().await?;
    let check = crate::store::format::check_for_read(&mut conn, ctx.prefix()).await?;
    let now = check.server_now_ms;
    let window = window(settings, now)?;
    let refs = job_refs(&mut conn, ctx.prefix(), settings).await?;
    let mut reading = Reading {
        settings,
        prefix: ctx.prefix(),
        check: &check,
        window,
        late_after: settings.late_after.map(millis),
        jobs: Vec::with_capacity(refs.len().min(crate::store::read::BATCH)),
        errors: Vec::new(),
        empty: Vec::new(),
        idle_jobs: 0,
    };
    reading.read(&mut conn, &refs).await?;
    let Reading {
        mut jobs,
        errors,
        empty,
        idle_jobs,
        ..
    } = reading;
    if !settings.all {
        // As named, in that order.
        jobs.sort_by_key(|j| settings.jobs.iter().position(|n| *n == j.job));
    }
    model::name_holders(&mut jobs);
    let (since, until) = (window.since, window.until);
    let report = TimelineReport {
        clock: crate::output::ServerClock::at(now),
        since,
        since_time: rfc3339(since),
        until,
        until_time: rfc3339(until),
        jobs,
        idle_jobs,
        errors,
    };
    let code = if report.errors.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::StoreData
    };
    save_svg(settings, &report)?;
    for bad in &report.errors {
        crate::errln!("anarchon: {}: cannot be read: {}", bad.job, bad.error);
    }
    if !print(settings, ctx, &report) {
        return Ok(code);
    }
    if !settings.all {
        for (job, results) in &empty {
            crate::errln!(
                "{}",
                newest_run_hint(&mut conn, job, results, window).await?
            );
        }
    }
    Ok(code)
}

/// The range asked for (`--since`, `--until`) by the server's clock; an empty one is refused.
fn window(settings: &TimelineSettings, now: i64) -> Result<Window> {
    let until = settings.until.map_or(now, |u| u.resolve(now));
    let since = settings
        .since
        .map_or(until - millis(DEFAULT_RANGE), |s| s.resolve(now));
    if since >= until {
        return Err(Error::usage(format!(
            "the range is empty: --since {} is not before --until {}\n  hint: give --since an earlier time, or a longer duration ago",
            rfc3339(since),
            rfc3339(until)
        )));
    }
    Ok(Window { since, until, now })
}

/// The jobs to draw: every job with `--all` (of the layout asked for), else those named, each
/// located in the store.
async fn job_refs(
    conn: &mut crate::connection::Connection,
    prefix: &str,
    settings: &TimelineSettings,
) -> Result<Vec<JobRef>> {
    if settings.all {
        return Ok(crate::store::discover::find_jobs(conn, prefix, "*")
            .await?
            .into_iter()
            .filter(|j| settings.layout.is_none_or(|l| j.layout == l))
            .collect());
    }
    let mut refs = Vec::with_capacity(settings.jobs.len());
    for job in &settings.jobs {
        let (layout, _) = crate::store::job::locate_job(conn, prefix, job, settings.layout).await?;
        refs.push(JobRef {
            name: job.clone(),
            layout,
        });
    }
    Ok(refs)
}

/// The jobs being read and modelled, and what is gathered of them.
struct Reading<'a> {
    settings: &'a TimelineSettings,
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
                if !self.settings.all {
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
        let (settings, window) = (self.settings, self.window);
        let Window { since, until, now } = window;
        let keys = self.check.job_keys(view.layout, self.prefix, &view.job);
        // Judged as `check --window` from `since` judges them: the view as that read it. The
        // range is half open here: a slot at `until` has its run after what is drawn.
        let judged = view.read_from(since);
        let without = judged.slots_without_a_run(now, settings.grace, since, until - 1);
        let grace_ms = millis(judged.grace(settings.grace));
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
                Err(error) if settings.all && error.key().is_some() => {
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
            if self.settings.all {
                self.idle_jobs += 1;
                return;
            }
            self.empty.push((name, results.to_string()));
        }
        self.jobs.push(job);
    }
}

/// Writes the SVG to the file `--svg` names, if it names one.
fn save_svg(settings: &TimelineSettings, report: &TimelineReport) -> Result<()> {
    if let Some(SvgTarget::File(path)) = &settings.svg {
        std::fs::write(path, svg::render(report)).map_err(|e| {
            Error::Other(format!(
                "cannot write the SVG to {}: {e}\n  hint: give --svg a path in a directory you can write to",
                path.display()
            ))
        })?;
        crate::errln!("anarchon: wrote the timeline to {}", path.display());
    }
    Ok(())
}

/// Prints the report: JSON, SVG on stdout, or the text picture. Returns whether the text picture
/// was printed whole (the hints for empty jobs follow only it).
fn print(settings: &TimelineSettings, ctx: &Context, report: &TimelineReport) -> bool {
    if ctx.out.json {
        ctx.out.print_json(report);
        return false;
    }
    if settings.svg == Some(SvgTarget::Stdout) {
        crate::output::write_raw(svg::render(report).as_bytes());
        return false;
    }
    let width = usize::from(settings.width.unwrap_or_else(|| terminal_width(ctx)));
    for line in text::render(report, width, &ctx.out) {
        crate::outln!("{line}");
        if crate::output::output_gone() {
            return false;
        }
    }
    true
}

/// The width of the picture: the terminal's, or [`DEFAULT_WIDTH`] when stdout is none (or a
/// terminal that reports no width worth drawing in).
fn terminal_width(ctx: &Context) -> u16 {
    let tty = ctx
        .out
        .tty
        .then(|| terminal_size::terminal_size_of(std::io::stdout()))
        .flatten()
        .map(|(terminal_size::Width(w), _)| w)
        .filter(|w| *w >= 40);
    tty.unwrap_or(DEFAULT_WIDTH).min(2000)
}

/// What to say of a named job with nothing in the range: when its newest run was, and a --since
/// that reaches it.
async fn newest_run_hint(
    conn: &mut crate::connection::Connection,
    job: &str,
    results: &str,
    window: Window,
) -> Result<String> {
    let newest = crate::store::read::results_page(conn, results, i64::MIN, i64::MAX, 0, 1).await?;
    let nothing = format!(
        "no attempt of {job} from {} to {}",
        rfc3339(window.since),
        rfc3339(window.until)
    );
    let Some(newest) = newest.into_iter().next() else {
        return Ok(format!("{nothing}; it has no ended run at all"));
    };
    let at = newest.claimed_at.unwrap_or(newest.slot);
    if at > window.until {
        return Ok(format!(
            "{nothing}\n  hint: its newest run ({}) is after --until",
            rfc3339(newest.slot)
        ));
    }
    let ago = (window.now - at).max(0);
    let reach = match ago {
        a if a < 3_600_000 => format!("{}m", a / 60_000 + 1),
        a if a < 2 * 86_400_000 => format!("{}h", a / 3_600_000 + 1),
        a => format!("{}d", a / 86_400_000 + 1),
    };
    Ok(format!(
        "{nothing}\n  hint: its newest run is {} (claimed {}): `anarchon timeline {job} --since {reach}` reaches it",
        rfc3339(newest.slot),
        rfc3339(at)
    ))
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![(
        "timeline",
        crate::commands::output_schema::<TimelineReport>(),
    )]
}
