//! anarchon: operator tool for the Redis/Valkey store of the anarchon distributed cron scheduler.
//!
//! The binary is a thin `main` over this crate, so every piece can be tested without a process.
//! The layers, each using only those below it (tests/it/architecture.rs checks every import):
//!
//! ```text
//!  main
//!  commands    one module per subcommand, a front-end: resolves, calls below, prints; none
//!              imports another
//!  daemon      `anarchon cron`'s daemon: job loops, reload, reaper, health server
//!  scheduler · operate · page   a slot's whole life: slot, jitter, catch-up, old names, claim,
//!              run, records | an operator's pause, resume and release, as values | the status page
//!  settings · output · generate   flags resolved once into plain settings | tables, JSON, colour
//!  timeline    `timeline`'s model, read and pictures (text, SVG), for the command and the page
//!  cli         clap: every flag, once
//!  runner · metrics   run's command under a claim (guard, deadline, keeper, backup, record) |
//!              the Prometheus text
//!  strategy · health · trace  how one claimant wins: lease | claim-only | a job's health,
//!              judged | a run's trace context, derived (W3C `TRACEPARENT`)
//!  store       key names, the format key, discovery, decoding; one module per lease store
//!              format (store::lease::v1, v2)
//!  server      what kind of server it is
//!  connection  single server, cluster or Sentinel; Redis errors become typed errors
//!  time · scripts · schedule · exclusion   durations and slots | the Lua machinery | cron
//!              expressions | exclusion windows (holidays, freezes)
//!  error · lines               errors and exit codes | stdout and stderr that never panic
//! ```
//!
//! Nothing under `store`, `strategy`, `runner` or `connection` imports `cli`.
//!
//! - [`store`]: key names, the format key, discovery and decoding (docs/store-format.md); each
//!   lease store format is a module of [`store::lease`], which owns its scripts (`lua/lease/`)
//! - [`scripts`]: the Lua machinery and the scripts of no lease format (`lua/claim_only/`,
//!   `lua/store/`)
//! - [`strategy`]: how one claimant wins: lease, and the claim-only stream-id, script, idmp
//! - [`runner`]: `run`'s command under a lease: the guard, the local deadline, heartbeats,
//!   backups, signals, the recorded end
//! - [`health`]: a job's health from what `store::view` read; [`metrics`]: its Prometheus text
//! - [`schedule`]: cron expressions to slots; [`exclusion`]: the windows whose slots are not
//!   run; [`time`]: durations, slots, timestamps
//! - [`connection`]: the Redis/Valkey connection (single, cluster or Sentinel) and error mapping;
//!   [`server`]: what kind of server it is
//! - [`settings`]: the command line resolved into the plain settings the layers below take
//! - [`scheduler`]: a slot's whole life below `run`, `cron`, `next` and `run-now`;
//!   [`daemon`]: `anarchon cron`'s daemon, `daemon::run(settings, crontab, shutdown)`;
//!   [`operate`]: an operator's pause, resume and release, for the commands and `top`
//! - [`commands`]: one module per subcommand; [`cli`] defines their flags; [`output`]: tables,
//!   JSON, colour; [`generate`]: completions and man pages
//! - [`error`]: errors and the exit-code table; [`lines`]: `outln!` and `errln!`

pub mod cli;
pub mod commands;
pub mod connection;
pub mod daemon;
pub mod error;
pub mod exclusion;
pub mod generate;
pub mod health;
pub mod lines;
pub mod metrics;
pub mod operate;
pub mod output;
pub mod page;
pub mod runner;
pub mod schedule;
pub mod scheduler;
pub mod scripts;
pub mod server;
pub mod settings;
pub mod store;
pub mod strategy;
pub mod time;
pub mod timeline;
pub mod trace;
