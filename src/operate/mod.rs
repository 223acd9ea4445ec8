//! What an operator does to the store, as values: a pause, a resume, a release of a run in
//! progress, each with its record in the job's events. The commands (`pause`, `resume`,
//! `release`) print what these return; `top` shows it on its status line. One implementation of
//! each, and of what it records of who did it and why, whether typed at a shell or chosen in top,
//! without a child process or a JSON answer to parse between them.

pub mod pause;
pub mod release;

/// Who acts, and why, as the job's events record it.
#[derive(Debug, Clone, Copy)]
pub struct Who<'a> {
    pub by: &'a str,
    pub reason: Option<&'a str>,
}
