//! What `top` knows and where the person is, apart from how it is drawn: the last picture of the
//! store ([`Snapshot`]: every job as the one read model [`JobView`] holds it, judged by
//! `crate::health` and sorted worst first as `list --sort health`), the view and selection, the
//! filter, an open dialog, the status line, and a server outage.

use std::time::Instant;

use crate::health::Health;
use crate::output::Tone;
use crate::store::Layout;
use crate::store::StoreCheck;
use crate::store::read::Unreadable;
use crate::store::state::RunState;
use crate::store::view::JobView;

/// A job as the screen shows it: what the store holds and its health, judged at the read.
pub struct JobRow {
    pub view: JobView,
    pub health: Health,
    /// The `--limit`s its registry records, as the store holds them at the read.
    pub limits: Vec<crate::store::limit::LimitView>,
}

impl JobRow {
    pub fn key(&self) -> JobKey {
        (self.view.job.clone(), self.view.layout)
    }

    /// Whether the job is paused at `now` (server ms).
    pub fn paused(&self, now: i64) -> bool {
        self.view.pause.as_ref().is_some_and(|p| p.is_paused(now))
    }

    /// The job's runs in progress, newest slot first (as `inspect` lists them).
    pub fn runs_in_progress(&self) -> Vec<&RunState> {
        let mut runs: Vec<&RunState> = self.view.in_progress.iter().collect();
        runs.sort_by_key(|r| std::cmp::Reverse(r.slot));
        runs
    }
}

/// A job by name and layout (a name may have keys in both layouts: two rows).
pub type JobKey = (String, Layout);

/// One picture of the store: every job matching the pattern, read in one go.
pub struct Snapshot {
    /// The server's clock at the read (ms) and when that was by this machine's monotonic clock:
    /// times on screen keep moving between reads from these.
    pub server_now: i64,
    pub read_at: Instant,
    /// The store format found (None: no anarchon data under the prefix).
    pub format: Option<u32>,
    /// Worst health first, then by name.
    pub jobs: Vec<JobRow>,
    /// Jobs whose data could not be read (shown after the others, as `list` does).
    pub unreadable: Vec<Unreadable>,
}

impl Snapshot {
    /// The picture of what one read found: each job judged at the server's clock of the read.
    pub fn new(views: Vec<JobView>, unreadable: Vec<Unreadable>, check: &StoreCheck) -> Self {
        Self::at(
            views,
            unreadable,
            check.server_now_ms,
            check.server_now_read_at,
            check.format,
        )
    }

    /// The same, from the server's clock `now` read at `read_at`, in store format `format`.
    pub fn at(
        views: Vec<JobView>,
        unreadable: Vec<Unreadable>,
        now: i64,
        read_at: Instant,
        format: Option<u32>,
    ) -> Self {
        let mut jobs: Vec<JobRow> = views
            .into_iter()
            .map(|view| JobRow {
                health: view.health(now, None),
                view,
                limits: Vec::new(),
            })
            .collect();
        jobs.sort_by(|a, b| {
            let rank = |r: &JobRow| crate::health::health_rank(Some(r.health.state));
            rank(a)
                .cmp(&rank(b))
                .then_with(|| a.view.job.cmp(&b.view.job))
                .then_with(|| a.view.layout.cmp(&b.view.layout))
        });
        Snapshot {
            server_now: now,
            read_at,
            format,
            jobs,
            unreadable,
        }
    }

    /// The server's clock now, as far as this machine can tell: the read's clock plus the time
    /// since (the picture ages while the server does not answer, and its times say so).
    pub fn now(&self) -> i64 {
        self.server_now + crate::time::millis(self.read_at.elapsed())
    }

    /// Every run in progress across the jobs, the one whose lease ends first first (expired ones
    /// at the top: what needs a person).
    pub fn runs_in_progress(&self) -> Vec<(&JobRow, &RunState)> {
        let mut runs: Vec<(&JobRow, &RunState)> = self
            .jobs
            .iter()
            .flat_map(|j| j.view.in_progress.iter().map(move |r| (j, r)))
            .collect();
        runs.sort_by(|a, b| {
            a.1.lease_end
                .cmp(&b.1.lease_end)
                .then_with(|| a.0.view.job.cmp(&b.0.view.job))
        });
        runs
    }
}

/// A row of the jobs table: a job, or one whose data could not be read.
pub enum Row<'a> {
    Job(&'a JobRow),
    Unreadable(&'a Unreadable),
}

impl Row<'_> {
    pub fn key(&self) -> JobKey {
        match self {
            Row::Job(j) => j.key(),
            Row::Unreadable(u) => (u.job.clone(), u.layout),
        }
    }
}

/// Which screen is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Every job, the runs in progress, the selected job's newest results.
    Jobs,
    /// One job in full.
    Job,
    /// What the job's last failure left behind (`anarchon logs`).
    Logs,
    /// Every key.
    Help,
}

/// An action a person asked for, before it is confirmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Release {
        job: String,
        slot: i64,
        attempt: u32,
        runner: String,
        lease_end: i64,
    },
    Pause {
        job: String,
    },
    Resume {
        job: String,
    },
    RunNow {
        job: String,
        /// `--strategy` of a claim-only job (from the registry); None for a lease job.
        strategy: Option<String>,
    },
}

impl Action {
    pub fn job(&self) -> &str {
        match self {
            Action::Release { job, .. }
            | Action::Pause { job }
            | Action::Resume { job }
            | Action::RunNow { job, .. } => job,
        }
    }

    /// The dialog's title.
    pub fn title(&self) -> &'static str {
        match self {
            Action::Release { .. } => "Release a run in progress",
            Action::Pause { .. } => "Pause a job",
            Action::Resume { .. } => "Resume a job",
            Action::RunNow { .. } => "Run a job now",
        }
    }

    /// What the text field asks for, when the action takes one: the reason recorded with it
    /// (the commands that take `--reason`), or run-now's command (the store keeps no job's
    /// command: they may hold secrets).
    pub fn asks(&self) -> Option<&'static str> {
        match self {
            Action::Release { .. } | Action::Pause { .. } | Action::Resume { .. } => {
                Some("Reason (optional)")
            }
            Action::RunNow { .. } => Some("Command (run by /bin/sh)"),
        }
    }

    /// What the action does, said before it is confirmed.
    pub fn explain(&self, now: i64) -> String {
        match self {
            Action::Release {
                job,
                slot,
                attempt,
                runner,
                lease_end,
            } => format!(
                "Release {job} @ {} (attempt {attempt}, held by {runner}, lease {})? A holder still alive is told to stop its command at its next heartbeat; the attempt is recorded interrupted.",
                crate::time::compact(*slot),
                crate::time::lease_left(lease_end - now)
            ),
            Action::Pause { job } => format!(
                "Pause {job} across the fleet? Every host's `run` skips it until it is resumed; runs in progress go on, and run-now still works."
            ),
            Action::Resume { job } => {
                format!("Resume {job}? Its next scheduled run is claimed as usual.")
            }
            Action::RunNow { job, .. } => format!(
                "Run {job} now, as a manual run beside its schedule: top leaves the screen while the command runs in this terminal, and comes back after Enter."
            ),
        }
    }

    /// The confirmation's question, with the text given.
    pub fn question(&self, text: &str) -> String {
        match self {
            Action::Release { .. } => "Release it?".to_string(),
            Action::Pause { .. } => "Pause it?".to_string(),
            Action::Resume { .. } => "Resume it?".to_string(),
            Action::RunNow { .. } => format!("Run `{text}` now?"),
        }
    }
}

/// Where a dialog is: typing its text, or asking y/n.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Text,
    Confirm,
}

/// An action's dialog on screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dialog {
    pub action: Action,
    pub stage: Stage,
    /// The reason, or run-now's command.
    pub text: String,
}

impl Dialog {
    pub fn new(action: Action) -> Self {
        let stage = if action.asks().is_some() {
            Stage::Text
        } else {
            Stage::Confirm
        };
        Dialog {
            action,
            stage,
            text: String::new(),
        }
    }
}

/// A confirmed action, for the command that does it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub action: Action,
    /// The reason (release, pause) or the command (run-now), trimmed; None when empty.
    pub text: Option<String>,
}

/// A line of news on the status line.
#[derive(Debug, Clone)]
pub struct Status {
    pub text: String,
    pub tone: Tone,
}

/// What `anarchon logs JOB` printed, shown in the logs view.
#[derive(Debug, Clone, Default)]
pub struct LogsPane {
    pub job: String,
    /// None while the command runs.
    pub lines: Option<Vec<String>>,
    /// The first line shown.
    pub scroll: usize,
}

/// The server not answering: the live views' own rule ([`crate::commands::Outage`]), said on
/// the screen ([`Outage::note`], [`Outage::said`]) rather than on stderr, the last picture kept.
pub use crate::commands::Outage;

/// Everything on screen.
pub struct App {
    /// Shown in the title: the prefix and the server.
    pub prefix: String,
    pub server: String,
    pub colour: bool,
    pub snapshot: Option<Snapshot>,
    pub view: View,
    /// The view Esc goes back to from logs and help.
    pub back_to: View,
    /// The selected job (kept by name across reads, as rows move with health).
    pub selected: Option<JobKey>,
    /// The selected run in progress of the open job (job view).
    pub run_cursor: usize,
    /// Only jobs whose name contains this (case-insensitive).
    pub filter: String,
    /// Whether keys go to the filter.
    pub editing_filter: bool,
    pub dialog: Option<Dialog>,
    pub status: Option<Status>,
    pub outage: Outage,
    pub logs: LogsPane,
    /// The action whose command runs now (one at a time).
    pub busy: Option<String>,
    /// Rows of the jobs table the last drawing showed (page up and down move by it).
    pub page: usize,
    /// The first row of the jobs table shown (kept between drawings, as the table scrolls).
    pub jobs_offset: usize,
    /// The first line of the help shown (on a terminal too small for it).
    pub help_scroll: usize,
}

impl App {
    pub fn new(prefix: &str, server: &str, colour: bool) -> Self {
        App {
            prefix: prefix.to_string(),
            server: server.to_string(),
            colour,
            snapshot: None,
            view: View::Jobs,
            back_to: View::Jobs,
            selected: None,
            run_cursor: 0,
            filter: String::new(),
            editing_filter: false,
            dialog: None,
            status: None,
            outage: Outage::default(),
            logs: LogsPane::default(),
            busy: None,
            page: 10,
            jobs_offset: 0,
            help_scroll: 0,
        }
    }

    /// The server's clock now (0 before the first read).
    pub fn now(&self) -> i64 {
        self.snapshot.as_ref().map_or(0, Snapshot::now)
    }

    /// The jobs table's rows: the jobs the filter keeps, worst first, then the unreadable ones.
    pub fn rows(&self) -> Vec<Row<'_>> {
        let Some(s) = &self.snapshot else {
            return Vec::new();
        };
        let wanted = self.filter.to_lowercase();
        let keep = |name: &str| wanted.is_empty() || name.to_lowercase().contains(&wanted);
        s.jobs
            .iter()
            .filter(|j| keep(&j.view.job))
            .map(Row::Job)
            .chain(
                s.unreadable
                    .iter()
                    .filter(|u| keep(&u.job))
                    .map(Row::Unreadable),
            )
            .collect()
    }

    /// The selected row's index among [`App::rows`]: the selected job's, or the first row when
    /// it is gone (filtered out, or no longer in the store).
    pub fn cursor(&self) -> Option<usize> {
        let rows = self.rows();
        if rows.is_empty() {
            return None;
        }
        Some(
            self.selected
                .as_ref()
                .and_then(|key| rows.iter().position(|r| &r.key() == key))
                .unwrap_or(0),
        )
    }

    /// The selected job, when it is one that could be read.
    pub fn selected_job(&self) -> Option<&JobRow> {
        let rows = self.rows();
        let at = self.cursor()?;
        match rows.into_iter().nth(at)? {
            Row::Job(j) => Some(j),
            Row::Unreadable(_) => None,
        }
    }

    /// Moves the selection by `by` rows (negative: up), within the table.
    pub fn move_by(&mut self, by: isize) {
        let rows = self.rows();
        let Some(at) = self.cursor() else {
            return;
        };
        let to = at.saturating_add_signed(by).min(rows.len() - 1);
        self.selected = Some(rows[to].key());
    }

    /// Moves to the first (`end` false) or last row.
    pub fn move_to_end(&mut self, end: bool) {
        let rows = self.rows();
        let row = if end { rows.last() } else { rows.first() };
        self.selected = row.map(Row::key);
    }

    /// A new picture: kept, the selection kept by name (the first row when there was none).
    pub fn apply(&mut self, snapshot: Snapshot) {
        self.snapshot = Some(snapshot);
        if self.selected.is_none() {
            self.selected = self.rows().first().map(Row::key);
        }
        if let Some(job) = self.selected_job() {
            let runs = job.view.in_progress.len();
            self.run_cursor = self.run_cursor.min(runs.saturating_sub(1));
        }
    }

    pub fn say(&mut self, text: impl Into<String>, tone: Tone) {
        self.status = Some(Status {
            text: text.into(),
            tone,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use std::time::Duration;

    fn snapshot(views: Vec<JobView>, now: i64) -> Snapshot {
        Snapshot::at(views, Vec::new(), now, Instant::now(), Some(1))
    }

    fn view(job: &str) -> JobView {
        JobView::unread(job, Layout::Lease)
    }

    fn running(slot: i64, lease_end: i64) -> RunState {
        RunState {
            slot,
            status: crate::store::RunStatus::Running,
            attempt: 1,
            token: "t".into(),
            runner: "host-a:1".into(),
            lease_end,
            claimed_at: slot,
            started_at: slot,
            finished_at: None,
            kind: crate::store::RunKind::Scheduled,
            lease_ms: None,
            fence: None,
        }
    }

    #[test]
    fn jobs_are_worst_first_and_the_selection_follows_its_job() {
        let now = 1_800_000_000_000;
        let mut busy = view("b-busy");
        busy.in_progress.push(running(now - 5_000, now + 25_000));
        let mut gone = view("c-gone");
        // Its holder died long ago with nobody standing by: expired, the worst.
        gone.in_progress.push(running(now - 600_000, now - 60_000));
        let mut app = App::new("cron:", "redis://x", false);
        // a-idle has no schedule and no run: unknown, before running (as `list --sort health`).
        app.apply(snapshot(vec![busy, view("a-idle"), gone.clone()], now));
        let names = |app: &App| -> Vec<String> { app.rows().iter().map(|r| r.key().0).collect() };
        assert_eq!(names(&app), ["c-gone", "a-idle", "b-busy"]);
        assert_eq!(app.cursor(), Some(0), "the first row is selected");
        app.move_by(2);
        assert_eq!(app.selected_job().unwrap().view.job, "b-busy");
        // The next read finds b-busy's holder gone: it moves up, the selection with it.
        let mut stuck = view("b-busy");
        stuck.in_progress.push(running(now - 5_000, now - 30_000));
        app.apply(snapshot(vec![stuck, view("a-idle"), gone], now));
        assert_eq!(names(&app), ["b-busy", "c-gone", "a-idle"]);
        assert_eq!(app.cursor(), Some(0));
        assert_eq!(app.selected_job().unwrap().view.job, "b-busy");
        let runs = app.snapshot.as_ref().unwrap().runs_in_progress();
        let jobs: Vec<&str> = runs.iter().map(|(j, _)| j.view.job.as_str()).collect();
        assert_eq!(
            jobs,
            ["c-gone", "b-busy"],
            "the lease that ended first first"
        );
    }

    #[test]
    fn the_filter_keeps_names_that_contain_it_and_moves_stay_inside() {
        let now = 1_800_000_000_000;
        let mut app = App::new("cron:", "redis://x", false);
        app.apply(snapshot(
            vec![view("billing"), view("Bill-export"), view("sync")],
            now,
        ));
        app.filter = "bill".into();
        let names: Vec<String> = app.rows().iter().map(|r| r.key().0).collect();
        assert_eq!(names, ["Bill-export", "billing"]);
        app.move_by(10);
        assert_eq!(app.selected_job().unwrap().view.job, "billing");
        app.move_by(-10);
        assert_eq!(app.selected_job().unwrap().view.job, "Bill-export");
        app.filter = "nothing-matches".into();
        assert!(app.selected_job().is_none());
        app.move_by(1);
    }

    #[test]
    fn an_outage_backs_off_to_the_interval_and_says_since_when() {
        let mut outage = Outage::default();
        let down = || Error::Connection {
            url: "redis://127.0.0.1:1".into(),
            detail: "Connection refused".into(),
        };
        let interval = Duration::from_secs(3);
        assert_eq!(
            outage.note(down(), interval).unwrap(),
            Duration::from_secs(1)
        );
        assert_eq!(
            outage.note(down(), interval).unwrap(),
            Duration::from_secs(2)
        );
        assert_eq!(outage.note(down(), interval).unwrap(), interval);
        let said = outage.said().unwrap();
        assert!(said.starts_with("no answer since "), "{said}");
        assert!(
            said.contains("; trying again: cannot reach Redis at redis://127.0.0.1:1"),
            "{said}"
        );
        assert!(outage.end().is_some());
        assert!(outage.said().is_none());
        // Bad data is no outage: it ends top, as it ends a watch.
        assert!(outage.note(Error::corrupt("k", "bad"), interval).is_err());
    }
}
