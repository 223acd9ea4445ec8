//! The settings of an operator's commands that change the store (`trim`, `release`, `pause`,
//! `resume`, `migrate`), each resolved once from its flags into plain values.

use std::time::Duration;

use crate::cli::{
    AuditArgs, ForgetArgs, MigrateArgs, PauseArgs, ReleaseArgs, ResumeArgs, StrategyName, TrimArgs,
};
use crate::error::{Error, Result};
use crate::store::{Layout, LeaseFormat};
use crate::strategy::lease::ReleaseStatus;
use crate::time::SlotSpec;

/// Who does an operator's action and why, as recorded in the job's events
/// (`crate::store::events`).
#[derive(Debug, Clone)]
pub struct Audit {
    /// `--by`, or `user@host:pid` ([`default_by`]).
    pub by: String,
    pub reason: Option<String>,
}

impl From<AuditArgs> for Audit {
    fn from(args: AuditArgs) -> Self {
        Audit {
            by: args.by.unwrap_or_else(default_by),
            reason: args.reason.filter(|r| !r.is_empty()),
        }
    }
}

/// Who does an operator's action, as recorded with it: `user@host:pid`, the user from `$USER`, or,
/// where that is unset (cron, systemd, `env -i`), the account of this process's user id.
pub fn default_by() -> String {
    let user = std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(|| {
            nix::unistd::User::from_uid(nix::unistd::getuid())
                .ok()
                .flatten()
                .map(|u| u.name)
        })
        .unwrap_or_else(|| format!("uid {}", nix::unistd::getuid()));
    format!("{user}@{}", crate::strategy::default_runner())
}

/// `anarchon trim`.
#[derive(Debug, Clone)]
pub struct TrimSettings {
    /// The job (None: every job under the prefix, `--all`).
    pub job: Option<String>,
    pub layout: Option<Layout>,
    /// Keep about this many runs per job.
    pub keep: u32,
    /// Also remove runs whose slot is older than this.
    pub older_than: Option<Duration>,
    /// Never remove a run younger than this (None: what the job's claimants recorded).
    pub protect: Option<Duration>,
    pub dry_run: bool,
    /// Confirmed beforehand (`--yes`).
    pub yes: bool,
    pub audit: Audit,
}

impl From<TrimArgs> for TrimSettings {
    fn from(args: TrimArgs) -> Self {
        TrimSettings {
            job: args.job.filter(|_| !args.all),
            layout: args.strategy.map(StrategyName::layout),
            keep: args.keep,
            older_than: args.older_than,
            protect: args.protect,
            dry_run: args.dry_run,
            yes: args.yes,
            audit: args.audit.into(),
        }
    }
}

/// `anarchon release`.
#[derive(Debug, Clone)]
pub struct ReleaseSettings {
    /// The job (None: every job, `--all`).
    pub job: Option<String>,
    pub slot: Option<SlotSpec>,
    /// Only runs whose lease has been expired this long.
    pub expired: Option<Duration>,
    pub all: bool,
    pub status: ReleaseStatus,
    /// Who releases and why: recorded with the attempt and in the job's events.
    pub audit: Audit,
    pub dry_run: bool,
    /// Do not wait for the holder to stop its command.
    pub no_wait: bool,
    /// End the run at once, even under a live lease.
    pub force: bool,
    /// Confirmed beforehand (`--yes`).
    pub yes: bool,
}

impl From<ReleaseArgs> for ReleaseSettings {
    fn from(args: ReleaseArgs) -> Self {
        ReleaseSettings {
            job: args.job,
            slot: args.slot,
            expired: args.expired,
            all: args.all,
            status: args.status,
            audit: args.audit.into(),
            dry_run: args.dry_run,
            no_wait: args.no_wait,
            force: args.force,
            yes: args.yes,
        }
    }
}

/// `anarchon pause`.
#[derive(Debug, Clone)]
pub struct PauseSettings {
    pub job: String,
    /// Until this time (None with no `for_`: until `resume`).
    pub until: Option<SlotSpec>,
    /// For this long from now.
    pub for_: Option<Duration>,
    /// Who pauses and why: kept with the pause (`list`, `inspect`) and in the job's events.
    pub audit: Audit,
}

impl From<PauseArgs> for PauseSettings {
    fn from(args: PauseArgs) -> Self {
        PauseSettings {
            job: args.job,
            until: args.until,
            for_: args.for_,
            audit: args.audit.into(),
        }
    }
}

/// `anarchon forget`.
#[derive(Debug, Clone)]
pub struct ForgetSettings {
    pub job: String,
    /// Delete the job's history and state too.
    pub drop_history: bool,
    /// `--dry-run`: say, do nothing.
    pub dry_run: bool,
    /// Asked already (`--yes`).
    pub yes: bool,
    pub audit: Audit,
}

impl From<ForgetArgs> for ForgetSettings {
    fn from(args: ForgetArgs) -> Self {
        ForgetSettings {
            job: args.job,
            drop_history: args.drop_history,
            dry_run: args.dry_run,
            yes: args.yes,
            audit: args.audit.into(),
        }
    }
}

/// `anarchon resume`.
#[derive(Debug, Clone)]
pub struct ResumeSettings {
    pub job: String,
    pub audit: Audit,
}

impl From<ResumeArgs> for ResumeSettings {
    fn from(args: ResumeArgs) -> Self {
        ResumeSettings {
            job: args.job,
            audit: args.audit.into(),
        }
    }
}

/// `anarchon migrate`.
#[derive(Debug, Clone)]
pub struct MigrateSettings {
    /// The store format to move to.
    pub to: LeaseFormat,
    pub dry_run: bool,
    /// Confirmed beforehand (`--yes`).
    pub yes: bool,
    pub audit: Audit,
}

impl MigrateSettings {
    /// Refuses a format number this build does not know.
    pub fn resolve(args: MigrateArgs) -> Result<Self> {
        let to = LeaseFormat::from_number(args.to).ok_or_else(|| {
            Error::usage(format!("this anarchon knows no store format {}", args.to))
        })?;
        Ok(MigrateSettings {
            to,
            dry_run: args.dry_run,
            yes: args.yes,
            audit: args.audit.into(),
        })
    }
}

/// `anarchon calendar`.
#[derive(Debug, Clone)]
pub enum CalendarSettings {
    Set {
        name: String,
        windows: Vec<String>,
        audit: Audit,
    },
    Show {
        name: String,
    },
    List,
    Delete {
        name: String,
        audit: Audit,
    },
}

impl From<crate::cli::CalendarAction> for CalendarSettings {
    fn from(action: crate::cli::CalendarAction) -> Self {
        use crate::cli::CalendarAction;
        match action {
            CalendarAction::Set {
                name,
                windows,
                audit,
            } => CalendarSettings::Set {
                name,
                windows,
                audit: audit.into(),
            },
            CalendarAction::Show { name } => CalendarSettings::Show { name },
            CalendarAction::List => CalendarSettings::List,
            CalendarAction::Delete { name, audit } => CalendarSettings::Delete {
                name,
                audit: audit.into(),
            },
        }
    }
}
