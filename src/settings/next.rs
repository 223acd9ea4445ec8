//! `anarchon next`'s settings, resolved once from its command line: where the schedule comes from
//! (the job registry, or --schedule parsed here), and what --after-outage supposes.

use std::time::Duration;

use crate::cli::NextArgs;
use crate::error::{Error, Result};
use crate::schedule::{CatchUpPolicy, Schedule};
use crate::time::SlotSpec;

/// Whose schedule `next` shows.
#[derive(Debug, Clone)]
pub enum NextSource {
    /// A job's, from the job registry (the store is read).
    Registered { job: String },
    /// `--schedule` (with `--tz`), parsed; `job` names it for the jitter (the store is not read).
    Given {
        schedule: Box<Schedule>,
        job: Option<String>,
    },
}

/// `--after-outage` and the catch-up flags that override the registry's.
#[derive(Debug, Clone, Copy)]
pub struct OutageSettings {
    /// How long every host was down.
    pub length: Duration,
    /// `--catch-up` (None: the registry's, or none with --schedule).
    pub catch_up: Option<Duration>,
    pub policy: Option<CatchUpPolicy>,
    pub max: Option<u32>,
}

/// `anarchon next`.
#[derive(Debug, Clone)]
pub struct NextSettings {
    pub source: NextSource,
    /// How many fire times.
    pub count: usize,
    /// `--from` (None: now, by the server's clock, or this machine's with --schedule).
    pub from: Option<i64>,
    /// `--jitter` (None: the registry's, or none with --schedule).
    pub jitter: Option<Duration>,
    pub outage: Option<OutageSettings>,
}

impl NextSettings {
    pub fn resolve(args: NextArgs) -> Result<NextSettings> {
        let source = match args.schedule.as_deref() {
            Some(text) => NextSource::Given {
                schedule: Box::new(
                    Schedule::parse(text, args.tz.as_deref().unwrap_or("UTC"))
                        .map_err(Error::usage)?,
                ),
                job: args.job,
            },
            None => NextSource::Registered {
                job: args
                    .job
                    .ok_or_else(|| Error::usage("give a JOB, or --schedule"))?,
            },
        };
        let outage = args.after_outage.map(|length| OutageSettings {
            length,
            catch_up: args.catch_up,
            policy: args.catch_up_policy,
            max: args.catch_up_max,
        });
        if let (NextSource::Given { .. }, Some(o)) = (&source, &outage)
            && o.catch_up.is_none()
        {
            for (flag, given) in [
                ("--catch-up-policy", o.policy.is_some()),
                ("--catch-up-max", o.max.is_some()),
            ] {
                if given {
                    return Err(Error::usage(format!(
                        "{flag} needs --catch-up with --schedule (as run's does): there is no registry to take the window from"
                    )));
                }
            }
        }
        Ok(NextSettings {
            source,
            count: usize::from(args.count),
            // `now` is the clock itself, not its minute: as no --from.
            from: match args.from {
                Some(SlotSpec::At(ms)) => Some(ms),
                Some(SlotSpec::Now) | None => None,
            },
            jitter: args.jitter,
            outage,
        })
    }

    /// The job named on the command line, if any.
    pub fn job(&self) -> Option<&str> {
        match &self.source {
            NextSource::Registered { job } => Some(job),
            NextSource::Given { job, .. } => job.as_deref(),
        }
    }
}
