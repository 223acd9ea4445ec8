//! The daemon behind `anarchon cron FILE`: one long-running process that runs every job of a crontab file, in
//! every replica of a service; each scheduled run executes once, on one replica.
//!
//! ```text
//!            ┌─ job loop (one per crontab line): sleeps to the next fire time by the server's clock
//! daemon ────┤        └─► slot task: check + registry ─► scheduler::take_slot (the one path of `run`:
//!  signals,  │                                           claim, lease, backups, overlap, catch-up,
//!  reload,   │                                           guard, records)
//!  reaper    └─ health (--listen): /metrics, /healthz, /readyz
//! ```
//!
//! Nothing here decides who runs a slot: each slot goes through [`crate::scheduler::take_slot`]
//! exactly as a crontab line's `anarchon run` does, with the line's settings. What the daemon adds
//! is what a process of its own has to do:
//! - **time**: slots by the server's clock (`TIME`, read with every slot's check), never this
//!   machine's; a loop that woke late (a stopped process) takes the latest due slot, and
//!   `--catch-up` the ones before it;
//! - **one connection** shared by every job (it multiplexes), opened again after a failure,
//!   said once when lost and once when back;
//! - **children**: commands run under the daemon ([`crate::runner::child::Supervised`]): signals are the daemon's, their
//!   output goes out line by line labelled with the run; orphans are reaped
//!   ([`crate::runner::children`]), as tini does for PID 1;
//! - **room**: `--max-running` caps the commands a replica runs at once, taken before a claim
//!   ([`cap`]), so the other replicas take the runs;
//! - **reload** on SIGHUP and when the file changes; a file that does not read keeps the jobs;
//! - **shutdown**: SIGTERM stops claiming, lets running commands finish for `--shutdown-grace`,
//!   then stops them and hands their runs over to a replica standing by.

//!
//! Built from a resolved [`DaemonSettings`]; [`run`] runs it until SIGTERM or the `shutdown`
//! future, as mini-redis's `server::run(listener, shutdown)`.

mod cap;
mod health;
mod herd;
mod lateness;
mod lineage;
mod log;
mod probe;
mod requests;
mod shared;
mod supervisor;

use crate::settings::crontab::{Crontab, describe_errors};

pub use crate::settings::cron::DaemonSettings;
pub use supervisor::run;

/// The crontab's warnings (lines that read but are not acted on, `MAILTO=`), on stderr, as
/// compilers give theirs: at start, on a reload and with `--check`.
pub fn say_warnings(file: &std::path::Path, tab: &Crontab) {
    for line in describe_errors(file, &tab.warnings) {
        crate::errln!("warning: {line}");
    }
}
