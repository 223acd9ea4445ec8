//! anarchon: operator tool for the Redis/Valkey store of the anarchon distributed cron scheduler.
//!
//! The binary is a thin `main` over this crate, so every piece can be tested without a process.
//! The layers, each using only those below it:
//!
//! ```text
//!  main ─► cli (clap: every flag, once) ─► settings (resolved once into plain settings)
//!            │
//!  commands (one module per subcommand) ─► output (tables, JSON, colour, closed pipes)
//!            │
//!  runner    run's command under a claim: guard, local lease deadline, keeper, backup, record
//!            │
//!  strategy  how one claimant wins: lease (claim, heartbeat, finish, trim) | claim-only
//!            │
//!  store     key names, the format key, discovery, decoding      scripts (lua/, compiled in)
//!            │
//!  connection  single server, cluster or Sentinel; Redis errors become typed errors
//! ```
//!
//! Nothing under `store`, `strategy`, `runner` or `connection` imports `cli` (tests/architecture.rs).
//!
//! - [`store`]: key names, the format key, discovery and decoding (store formats 1 and 2,
//!   docs/store-format.md), and converting 1 to 2
//! - [`scripts`]: the Lua scripts from `lua/`
//! - [`strategy`]: how one claimant wins: lease, and the claim-only stream-id, script, idmp
//! - [`runner`]: `run`'s command under a lease: the guard, the local deadline, heartbeats,
//!   backups, signals, the recorded end
//! - [`schedule`]: cron expressions to slots; [`time`]: durations, slots, timestamps
//! - [`connection`]: the Redis/Valkey connection (single, cluster or Sentinel) and error mapping;
//!   [`server`]: what kind of server it is
//! - [`settings`]: the command line resolved into the plain settings the layers below take
//! - [`commands`]: one module per subcommand; [`cli`] defines their flags; [`output`]: tables,
//!   JSON, colour; [`generate`]: completions and man pages
//! - [`error`]: errors and the exit-code table

pub mod cli;
pub mod commands;
pub mod connection;
pub mod error;
pub mod generate;
pub mod health;
pub mod metrics;
pub mod output;
pub mod runner;
pub mod schedule;
pub mod scripts;
pub mod server;
pub mod settings;
pub mod store;
pub mod strategy;
pub mod time;
