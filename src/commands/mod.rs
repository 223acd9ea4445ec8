//! One module per command. Each takes its parsed arguments and the [`Context`] and returns the
//! exit code; errors travel up as [`crate::error::Error`] and `main` prints them.

pub mod claim;
pub mod finish;
pub mod heartbeat;
pub mod history;
pub mod inspect;
pub mod list;
pub mod run;

use crate::cli::{Command, GlobalArgs, LeaseArgs, Overlap};
use crate::connection::{ConnectOptions, Connection};
use crate::error::Result;
use crate::output::Output;
use crate::store::{LeaseKeys, RunKind, validate_job_name, validate_prefix};
use crate::strategy::lease::{ClaimRequest, HistoryPolicy};
use crate::strategy::{default_runner, new_token};

/// What every command gets besides its own arguments.
pub struct Context {
    pub global: GlobalArgs,
    pub out: Output,
}

impl Context {
    pub fn new(global: GlobalArgs) -> Self {
        let out = Output::from_args(&global);
        Context { global, out }
    }

    pub fn prefix(&self) -> &str {
        &self.global.prefix
    }

    /// Opens the connection (after the arguments were checked, so usage errors need no server).
    pub async fn connect(&self) -> Result<Connection> {
        let mut options = ConnectOptions::new(self.global.redis_url());
        options.connect_timeout = self.global.connect_timeout;
        options.command_timeout = self.global.command_timeout;
        Connection::open(&options).await
    }

    /// The lease-layout keys of `job`, after checking the job name and the prefix.
    pub fn lease_keys(&self, job: &str) -> Result<LeaseKeys> {
        validate_prefix(self.prefix())?;
        validate_job_name(job)?;
        Ok(LeaseKeys::new(self.prefix(), job))
    }
}

/// Runs the parsed command and returns the process exit code.
pub async fn dispatch(command: Command, ctx: &Context) -> Result<i32> {
    let code = match command {
        Command::Claim(args) => claim::execute(args, ctx).await?,
        Command::Heartbeat(args) => heartbeat::execute(args, ctx).await?,
        Command::Finish(args) => finish::execute(args, ctx).await?,
        Command::List(args) => list::execute(args, ctx).await?,
        Command::Inspect(args) => inspect::execute(args, ctx).await?,
        Command::History(args) => history::execute(args, ctx).await?,
        // `run` passes on its command's own exit code.
        Command::Run(args) => return run::execute(args, ctx).await,
    };
    Ok(code.code())
}

impl LeaseArgs {
    /// A claim of `slot` with a fresh token, as these flags describe it.
    pub fn claim_request(&self, slot: i64, kind: RunKind) -> ClaimRequest {
        let history = HistoryPolicy {
            size: self.history_size,
            ttl: self.history_ttl,
            ..HistoryPolicy::default()
        };
        ClaimRequest {
            slot,
            token: new_token(),
            runner: self.runner.clone().unwrap_or_else(default_runner),
            lease: self.lease,
            max_attempts: self.max_attempts,
            allow_overlap: self.overlap == Overlap::Allow,
            kind,
            history,
        }
    }
}
