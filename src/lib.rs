//! anarchon: operator tool for the Redis/Valkey store of the anarchon distributed cron scheduler.
//!
//! The binary is a thin `main` over this crate, so every piece can be tested without a process:
//! - [`store`]: key names, the format key and decoding (store format v1, docs/store-format.md)
//! - [`scripts`]: the Lua scripts from `lua/`
//! - [`strategy`]: how one claimant wins (lease)
//! - [`connection`]: the Redis connection and error mapping
//! - [`commands`]: one module per subcommand; [`cli`] defines their flags
//! - [`error`]: errors and the exit-code table

pub mod cli;
pub mod commands;
pub mod connection;
pub mod error;
pub mod generate;
pub mod output;
pub mod runner;
pub mod schedule;
pub mod scripts;
pub mod server;
pub mod store;
pub mod strategy;
pub mod time;
