//! The settings of the commands that read the store (`list`, `inspect`, `history`, `wait`,
//! `logs`, `check`, `metrics`, `doctor`), each resolved once from its flags into plain values: a
//! strategy named on the command line becomes the layout to read, `--watch` a [`Watch`]. Each
//! can be built without a command line (a daemon's status page, a test).

use std::time::Duration;

use crate::cli::{
    CheckArgs, DoctorArgs, HistoryArgs, InspectArgs, ListArgs, ListSort, LogsArgs, MetricsArgs,
    StrategyName, WaitArgs, WatchArgs,
};
use crate::store::Layout;
use crate::time::{Since, SlotSpec};

/// Whether a read is shown once or again and again (`--watch`), and how often the store is read
/// again (`--interval`: the watch's, and `history --follow`'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watch {
    pub repeat: bool,
    pub interval: Duration,
}

impl Watch {
    fn of(args: &WatchArgs) -> Self {
        Watch {
            repeat: args.watch,
            interval: args.interval,
        }
    }
}

/// The layout a `--strategy` flag names (None: whichever the job has).
fn layout(strategy: Option<StrategyName>) -> Option<Layout> {
    strategy.map(StrategyName::layout)
}

/// `anarchon inspect`.
#[derive(Debug, Clone)]
pub struct InspectSettings {
    pub job: String,
    pub layout: Option<Layout>,
    /// How many of the newest runs to show.
    pub last: usize,
    pub watch: Watch,
}

impl From<InspectArgs> for InspectSettings {
    fn from(args: InspectArgs) -> Self {
        InspectSettings {
            job: args.job,
            layout: layout(args.strategy),
            last: args.last,
            watch: Watch::of(&args.watch),
        }
    }
}

/// `anarchon history`.
#[derive(Debug, Clone)]
pub struct HistorySettings {
    /// The job (None: every job under the prefix, `--all`).
    pub job: Option<String>,
    /// Only attempts of this runner, or of any runner of this host.
    pub runner: Option<String>,
    pub layout: Option<Layout>,
    pub since: Option<Since>,
    /// Only attempts with this status (`expired` too).
    pub status: Option<String>,
    pub last: usize,
    pub verbose: bool,
    /// The job's events instead of its attempts (`--events`).
    pub events: bool,
    /// Print each attempt as it ends, until interrupted.
    pub follow: bool,
    pub watch: Watch,
}

impl From<HistoryArgs> for HistorySettings {
    fn from(args: HistoryArgs) -> Self {
        HistorySettings {
            job: args.job.filter(|_| !args.all),
            runner: args.runner,
            layout: layout(args.strategy),
            since: args.since,
            status: args.status,
            last: args.last,
            verbose: args.verbose,
            events: args.events,
            follow: args.follow,
            watch: Watch::of(&args.watch),
        }
    }
}

/// `anarchon list`.
#[derive(Debug, Clone)]
pub struct ListSettings {
    /// Only jobs whose name matches this Redis glob.
    pub pattern: String,
    pub layout: Option<Layout>,
    /// Every run in progress across the jobs instead of a row per job.
    pub active: bool,
    /// Only jobs whose newest run is in this state.
    pub status: Option<String>,
    /// Only jobs that need a person.
    pub unhealthy: bool,
    pub sort: ListSort,
    pub watch: Watch,
}

impl From<ListArgs> for ListSettings {
    fn from(args: ListArgs) -> Self {
        ListSettings {
            pattern: args.pattern,
            layout: layout(args.strategy),
            active: args.active,
            status: args.status,
            unhealthy: args.unhealthy,
            sort: args.sort,
            watch: Watch::of(&args.watch),
        }
    }
}

/// `anarchon wait`.
#[derive(Debug, Clone)]
pub struct WaitSettings {
    pub job: String,
    pub layout: Option<Layout>,
    /// The run to wait for (None: the newest in progress).
    pub slot: Option<SlotSpec>,
    /// Give up after this long (None: never).
    pub timeout: Option<Duration>,
    /// How often the store is read while waiting.
    pub interval: Duration,
}

impl From<WaitArgs> for WaitSettings {
    fn from(args: WaitArgs) -> Self {
        WaitSettings {
            job: args.job,
            layout: layout(args.strategy),
            slot: args.slot,
            timeout: args.timeout,
            interval: args.interval,
        }
    }
}

/// `anarchon logs`.
#[derive(Debug, Clone)]
pub struct LogsSettings {
    pub job: String,
    pub layout: Option<Layout>,
    /// Every ended attempt of this run.
    pub slot: Option<SlotSpec>,
    /// The newest N ended attempts, whatever their status.
    pub last: Option<u64>,
    /// Follow a run's live output (`-f`).
    pub follow: bool,
}

impl From<LogsArgs> for LogsSettings {
    fn from(args: LogsArgs) -> Self {
        LogsSettings {
            job: args.job,
            layout: layout(args.strategy),
            slot: args.slot,
            last: args.last,
            follow: args.follow,
        }
    }
}

/// `anarchon check`.
#[derive(Debug, Clone)]
pub struct CheckSettings {
    /// The jobs to judge (empty: every job under the prefix).
    pub jobs: Vec<String>,
    pub all: bool,
    pub grace: Option<Duration>,
    /// Consecutive failures that make a job failing.
    pub failures: u32,
    /// Judge every due slot of this window, not only the newest results.
    pub window: Option<Duration>,
}

impl From<CheckArgs> for CheckSettings {
    fn from(args: CheckArgs) -> Self {
        CheckSettings {
            jobs: args.jobs,
            all: args.all,
            grace: args.grace,
            failures: args.failures,
            window: args.window,
        }
    }
}

/// `anarchon metrics`.
#[derive(Debug, Clone)]
pub struct MetricsSettings {
    /// Serve the exposition on this address (None: print it once).
    pub listen: Option<String>,
}

impl From<MetricsArgs> for MetricsSettings {
    fn from(args: MetricsArgs) -> Self {
        MetricsSettings {
            listen: args.listen,
        }
    }
}

/// `anarchon doctor`.
#[derive(Debug, Clone)]
pub struct DoctorSettings {
    /// Round trips timed.
    pub pings: u16,
}

impl From<DoctorArgs> for DoctorSettings {
    fn from(args: DoctorArgs) -> Self {
        DoctorSettings { pings: args.pings }
    }
}
