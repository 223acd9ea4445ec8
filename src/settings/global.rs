//! The global flags resolved once for every command: the prefix, the backend and where the store
//! is. Commands get these, never the clap struct, so a command cannot read the flags again.

use std::sync::OnceLock;

use crate::cli::{Backend, GlobalArgs};
use crate::connection::ConnectOptions;
use crate::error::{Error, Result};

/// What every command connects with (beside its own settings).
#[derive(Debug)]
pub struct GlobalSettings {
    pub prefix: String,
    pub backend: Backend,
    flags: GlobalArgs,
    /// Resolved on first use, then kept: the password file is read once and its warnings said
    /// once, however many connections a command opens (a daemon, `top`, `metrics --listen`).
    /// Not at the start: a command that needs no server (`completions`, `cron --check`) must not
    /// fail on an unreadable password file. Every failure here is a usage error, kept as its text.
    connect: OnceLock<std::result::Result<ConnectOptions, String>>,
}

impl GlobalSettings {
    pub fn resolve(flags: &GlobalArgs) -> Self {
        GlobalSettings {
            prefix: flags.prefix.clone(),
            backend: flags.backend,
            flags: flags.clone(),
            connect: OnceLock::new(),
        }
    }

    /// Where and how to connect (see [`GlobalArgs::connect_options`]).
    pub fn connect_options(&self) -> Result<ConnectOptions> {
        self.connect
            .get_or_init(|| self.flags.connect_options().map_err(|e| e.with_hint()))
            .clone()
            .map_err(Error::usage)
    }
}
