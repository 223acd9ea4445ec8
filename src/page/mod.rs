//! The status page (issue 51): a fleet's jobs in a browser, for the people who ask "did last
//! night's export run?" without Redis access or a terminal. Read-only, from the one read model
//! `list` and `inspect` read (`store::view`, judged by `health`), served beside `/metrics` by
//! `anarchon serve` and `metrics --listen`:
//!
//! - `/`: every job, worst first, with its health, schedule, next and last runs (as `list`);
//! - `/job/<name>`: one job: its health and why, runs in progress, newest results, the
//!   operators' actions (as `inspect` and `history --events`);
//! - `/metrics`: the Prometheus text.
//!
//! Plain HTML with its style inline: no build step, no script (the page refreshes itself with a
//! `<meta http-equiv="refresh">`, which works with scripting off), readable on a phone. It is
//! never a way in: GET and HEAD only, nothing on it acts; no secret on it (the store's address is
//! shown with any password removed; a run's stderr is not shown, only how it ended); every text
//! from the store escaped ([`html`], by maud); and a Content-Security-Policy that allows no
//! script, no frame and nothing from elsewhere. It listens on loopback unless told otherwise;
//! docs/guide.md says how to put it behind an organisation's proxy.

pub mod admission;
mod html;
mod read;
pub mod server;

pub use read::{JobPage, JobsPage};
