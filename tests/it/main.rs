//! The integration tests, one module per file, in one test binary: the library is linked once
//! instead of once per file (`cargo test --no-run` after a change to `src/`: ~45 s -> ~10 s).
//! `cargo test --test it -- lease::` runs one file's tests.

mod common;

mod architecture;
mod backfill;
mod cap;
mod catchup;
mod connections;
mod cron;
mod daemon;
mod deadlines;
mod deploy_files;
mod deploys;
mod dst;
mod events;
mod exactly_once;
mod exclusions;
mod faults;
mod fencing;
mod forget;
mod format1_client;
mod functions;
mod generated;
mod hardening;
mod herd;
mod lease;
mod limits;
mod live_output;
mod live_views;
mod migrate;
mod monitoring;
mod next;
mod oncall;
mod operator;
mod overlap;
mod page;
mod pause;
mod ping;
mod properties;
mod readme;
mod reliability;
mod rename;
mod replicas;
mod retries;
mod run;
mod run_now;
mod schemas;
mod sentinel;
mod soak;
mod strategies;
mod suite;
mod timeline;
mod top;
mod traces;
mod tty;
