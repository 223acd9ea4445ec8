//! `anarchon cron`'s own settings (the crontab's jobs are read by [`super::crontab`]).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::cli::{CronArgs, CronLogFormat, GlobalArgs};
use crate::error::Result;
use crate::lines::LogFormat;

/// How the daemon runs, beyond its jobs.
#[derive(Debug, Clone)]
pub struct CronSettings {
    pub file: PathBuf,
    /// `--check`: read the file, show the jobs and their next runs, exit.
    pub check: Option<CheckSettings>,
    /// How long running commands may take to finish after SIGTERM before they are stopped and
    /// their runs handed over.
    pub shutdown_grace: Duration,
    pub log_format: LogFormat,
    /// `-v`: the log's debug records too (routine notes).
    pub verbose: bool,
    /// Where /metrics and /healthz are served, if anywhere.
    pub listen: Option<SocketAddr>,
    /// `--max-running`: how many commands this replica runs at once, at most (None: no cap).
    pub max_running: Option<usize>,
    /// How the crontab's text becomes jobs, with the global flags the daemon runs under.
    pub crontab: super::crontab::CrontabReader,
}

/// Everything the daemon runs by, resolved once by `anarchon cron FILE` (or a test): it never goes
/// back to the command line, at start or at a reload.
#[derive(Debug, Clone)]
pub struct DaemonSettings {
    pub cron: CronSettings,
    /// Where the store is (its password read once, here).
    pub connect: crate::connection::ConnectOptions,
    pub prefix: String,
    /// Whether the daemon owns its process: it becomes a subreaper and reaps every orphan
    /// re-parented to it (as tini does for PID 1). `anarchon cron` does; a test that runs the
    /// daemon inside its own process must not, or the reaper would wait for the test's children.
    pub owns_the_process: bool,
    /// Where the runs' spans go (None: tracing is off).
    pub trace: Option<crate::trace::Exporter>,
}

/// `cron --check`.
#[derive(Debug, Clone, Copy)]
pub struct CheckSettings {
    /// How many next runs to show for each job.
    pub next: usize,
}

impl CronSettings {
    pub fn resolve(args: CronArgs, global: &GlobalArgs) -> Result<CronSettings> {
        Ok(CronSettings {
            crontab: super::crontab::CrontabReader::new(global).of_service(args.service.clone()),
            file: args.file,
            check: args.check.then_some(CheckSettings {
                next: usize::from(args.next),
            }),
            shutdown_grace: args.shutdown_grace,
            log_format: match args.log_format {
                CronLogFormat::Text => LogFormat::Text,
                CronLogFormat::Json => LogFormat::Json,
            },
            verbose: args.verbose,
            listen: args
                .listen
                .as_deref()
                .map(crate::settings::listen_address)
                .transpose()?,
            max_running: args.max_running.map(|n| n as usize),
        })
    }
}
