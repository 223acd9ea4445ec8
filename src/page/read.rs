//! What the pages show, read from the store as `list` and `inspect` read it: one read of every
//! job (`store::view`, judged by `health`), or of one job with its newest results and the
//! operators' actions.

use crate::connection::Connection;
use crate::error::Result;
use crate::health::{Health, health_rank};
use crate::store::discover::{JobRef, find_jobs};
use crate::store::events::{Event, read_actions};
use crate::store::read::Unreadable;
use crate::store::state::{ResultEntry, RunState};
use crate::store::view::JobView;

/// One job's line on the jobs page.
pub struct JobLine {
    pub job: String,
    pub claim_only: bool,
    pub schedule: Option<String>,
    pub health: Health,
    /// The newest run's state in one word (`list`'s STATUS).
    pub state: Option<String>,
    pub last_slot: Option<i64>,
    pub in_progress: u64,
}

/// `/`: every job, worst first.
pub struct JobsPage {
    pub prefix: String,
    pub server_now: i64,
    pub format: Option<u32>,
    pub jobs: Vec<JobLine>,
    pub unreadable: Vec<Unreadable>,
    /// The prefix's `--limit`s, as `list` shows them under its table.
    pub limits: Vec<crate::store::limit::LimitView>,
}

/// `/job/<name>`: one job.
pub struct JobPage {
    pub prefix: String,
    pub server_now: i64,
    pub line: JobLine,
    pub in_progress: Vec<RunState>,
    /// The newest ended attempts, newest first.
    pub results: Vec<ResultEntry>,
    /// The operators' actions, newest first.
    pub actions: Vec<Event>,
    /// The job's pause while it lasts: who paused it, until when and why.
    pub pause: Option<crate::store::pause::Pause>,
    /// `timeline`'s picture of the job over [`TIMELINE_RANGE`], as SVG (None when it could not be
    /// drawn: the rest of the page stands).
    pub timeline_svg: Option<String>,
}

/// How far back the job page's timeline reaches.
pub const TIMELINE_RANGE: std::time::Duration = std::time::Duration::from_secs(6 * 3600);

/// How many results and actions the job page shows.
const NEWEST: usize = 20;

fn line_of(view: &JobView, now: i64) -> JobLine {
    let summary = view.summary();
    JobLine {
        job: view.job.clone(),
        claim_only: view.layout == crate::store::Layout::ClaimOnly,
        schedule: view
            .registry
            .as_ref()
            .and_then(|r| r.settings.schedule.clone()),
        health: view.health(now, None),
        state: summary.state(now).map(str::to_string),
        last_slot: summary.last_slot,
        in_progress: summary.in_progress,
    }
}

impl JobsPage {
    /// Every job under `prefix`, worst health first, then by name.
    pub async fn read(conn: &mut Connection, prefix: &str) -> Result<JobsPage> {
        let check = crate::store::format::check_for_read(conn, prefix).await?;
        let now = check.server_now_ms;
        let refs = find_jobs(conn, prefix, "*").await?;
        let mut jobs = Vec::with_capacity(refs.len());
        let mut unreadable = Vec::new();
        for batch in refs.chunks(crate::store::read::BATCH) {
            let (views, bad) = crate::store::view::read(conn, prefix, batch, &check).await?;
            jobs.extend(views.iter().map(|v| line_of(v, now)));
            unreadable.extend(bad);
        }
        jobs.sort_by(|a, b| {
            health_rank(Some(a.health.state))
                .cmp(&health_rank(Some(b.health.state)))
                .then_with(|| a.job.cmp(&b.job))
        });
        let limits = crate::store::limit::all(conn, prefix, now).await?;
        Ok(JobsPage {
            prefix: prefix.to_string(),
            server_now: now,
            format: check.format,
            jobs,
            unreadable,
            limits,
        })
    }
}

impl JobPage {
    /// One job (a lease job, else a claim-only one of that name); NotFound when the store has
    /// neither.
    pub async fn read(conn: &mut Connection, prefix: &str, job: &str) -> Result<JobPage> {
        crate::store::validate_job_name(job)?;
        let check = crate::store::format::check_for_read(conn, prefix).await?;
        let now = check.server_now_ms;
        let (layout, _) = crate::store::job::locate_job(conn, prefix, job, None).await?;
        let job_ref = JobRef {
            name: job.to_string(),
            layout,
        };
        let view = crate::store::view::read_one(conn, prefix, &job_ref, &check, NEWEST).await?;
        let actions = read_actions(conn, prefix, &job_ref.name, NEWEST)
            .await
            .unwrap_or_default();
        let window = crate::timeline::Window {
            since: now - crate::time::millis(TIMELINE_RANGE),
            until: now,
            now,
        };
        let spec = crate::timeline::Spec::default();
        let timeline_svg = crate::timeline::read(conn, prefix, &check, &spec, window, &[job_ref])
            .await
            .ok()
            .map(|(report, _)| crate::timeline::svg::render(&report));
        let mut page = JobPage::of(prefix, now, view, actions);
        page.timeline_svg = timeline_svg;
        Ok(page)
    }

    fn of(prefix: &str, now: i64, view: JobView, actions: Vec<Event>) -> JobPage {
        let line = line_of(&view, now);
        let mut results = view.recent.clone();
        results.sort_by_key(|r| std::cmp::Reverse((r.slot, r.attempt)));
        results.truncate(NEWEST);
        JobPage {
            prefix: prefix.to_string(),
            server_now: now,
            line,
            in_progress: view.in_progress.clone(),
            results,
            actions,
            pause: view.pause.clone().filter(|p| p.is_paused(now)),
            timeline_svg: None,
        }
    }
}
