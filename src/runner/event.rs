//! A run's life as values: the runner, the scheduler and the daemon say what happened to a run
//! (claimed and started, stood by, took over, ended with a code after so long, skipped and why,
//! handed over, lost its lease...) as a [`RunEvent`] given to a [`Sink`], and each sink decides
//! what to do with it. `run` at a terminal uses [`Terminal`] (the lines a person has always seen,
//! nothing more); `anarchon cron` its log (`daemon::log`: a record with time, level, job, slot,
//! attempt, exit code and duration, as text or JSON). A new message is one constructor here, and
//! every sink shows it.

use std::sync::Arc;

pub use crate::lines::Level;

/// What happened, by name (the `event` field of the daemon's JSON log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// Another host holds the run; this one stands by to take it over if its lease ends.
    StandingBy,
    /// The lease of the host stood by for ended: this one took the run over.
    TookOver,
    /// The claim was won: the command starts.
    Started,
    /// The command ended and the run is recorded finished.
    Finished,
    /// The command ended and the run is recorded failed.
    Failed,
    /// The command ended, the run recorded otherwise (interrupted, released, not recorded).
    Ended,
    /// Stopped for the daemon's shutdown; handed over to a replica standing by.
    HandedOver,
    /// Stopped for the daemon's shutdown with no replica standing by.
    GivenUp,
    /// An operator released the run (`anarchon release`).
    Released,
    /// The lease was lost: the command was stopped, its end not recorded here.
    LeaseLost,
    /// The run's end could not be recorded.
    NotRecorded,
    /// The slot was decided without a run here: an overlap, a catch-up's policy.
    Skipped,
    /// Another host ran it or runs it: a routine note.
    NotRunHere,
    /// Older than --max-late.
    TooLate,
    /// The job is paused.
    Paused,
    /// Too few replicas acknowledged the claim: not started.
    Unreplicated,
    /// The command failed with retries left: the run waits for its retry (`--retries`).
    RetryPending,
    /// Won, but a `--limit` has no room: the command waits for a permit.
    WaitingForPermit,
    /// Won, but a `--limit` had no room until `--max-late`: ended without starting the command.
    NoPermit,
}

impl EventKind {
    /// Its name in the log.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::StandingBy => "standing_by",
            EventKind::TookOver => "took_over",
            EventKind::Started => "started",
            EventKind::Finished => "finished",
            EventKind::Failed => "failed",
            EventKind::Ended => "ended",
            EventKind::HandedOver => "handed_over",
            EventKind::GivenUp => "given_up",
            EventKind::Released => "released",
            EventKind::LeaseLost => "lease_lost",
            EventKind::NotRecorded => "not_recorded",
            EventKind::Skipped => "skipped",
            EventKind::NotRunHere => "not_run_here",
            EventKind::TooLate => "too_late",
            EventKind::Paused => "paused",
            EventKind::Unreplicated => "unreplicated",
            EventKind::RetryPending => "retry_pending",
            EventKind::WaitingForPermit => "waiting_for_permit",
            EventKind::NoPermit => "no_permit",
        }
    }

    /// How severe it is: routine notes are debug (most of a fleet's lines otherwise, one per
    /// replica that did not run a slot), a failed run is an error.
    pub fn level(self) -> Level {
        match self {
            EventKind::StandingBy | EventKind::NotRunHere => Level::Debug,
            EventKind::TookOver
            | EventKind::Started
            | EventKind::Finished
            | EventKind::HandedOver
            | EventKind::Skipped
            | EventKind::Paused
            | EventKind::WaitingForPermit => Level::Info,
            EventKind::Ended
            | EventKind::GivenUp
            | EventKind::Released
            | EventKind::LeaseLost
            | EventKind::TooLate
            | EventKind::RetryPending
            | EventKind::NoPermit => Level::Warn,
            EventKind::Failed | EventKind::NotRecorded | EventKind::Unreplicated => Level::Error,
        }
    }
}

/// Who, besides a log, wants an event: `run` at a terminal has always shown some of them only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// A log's only (standing by, won, took over: a terminal has its spinner and the summary).
    Log,
    /// A slot's summary: a terminal shows it when its front-end asks (not `--quiet`, not `--json`,
    /// stderr a terminal; it emits it only then).
    Note,
    /// Always said, also to cron's mail: the run's end went otherwise than recorded.
    Always,
}

/// One thing that happened in a run's life.
#[derive(Debug, Clone)]
pub struct RunEvent {
    pub kind: EventKind,
    pub level: Level,
    pub audience: Audience,
    /// The run it is about (None: the task's own, as the daemon labels it).
    pub job: Option<String>,
    pub slot: Option<i64>,
    /// The attempt this host runs, once won.
    pub attempt: Option<u32>,
    /// The command's exit code, when it ended.
    pub exit_code: Option<i32>,
    /// How long the command ran, when it ended.
    pub duration_ms: Option<u64>,
    /// What a person reads, without the `anarchon:` prefix.
    pub message: String,
}

impl RunEvent {
    /// An event of `kind` about `job` @ `slot`, at the kind's level.
    pub fn new(kind: EventKind, job: &str, slot: i64, message: impl Into<String>) -> RunEvent {
        RunEvent {
            kind,
            level: kind.level(),
            audience: Audience::Log,
            job: Some(job.to_string()),
            slot: Some(slot),
            attempt: None,
            exit_code: None,
            duration_ms: None,
            message: message.into(),
        }
    }

    pub fn for_attempt(mut self, attempt: u32) -> RunEvent {
        self.attempt = Some(attempt);
        self
    }

    pub fn to(mut self, audience: Audience) -> RunEvent {
        self.audience = audience;
        self
    }

    pub fn at(mut self, level: Level) -> RunEvent {
        self.level = level;
        self
    }

    /// Another host holds the run (`holder`, its `attempt`); this one stands by.
    pub fn standing_by(job: &str, slot: i64, holder: &str, attempt: u32) -> RunEvent {
        RunEvent::new(
            EventKind::StandingBy,
            job,
            slot,
            format!(
                "held by {holder} (attempt {attempt}); standing by to take over if its lease ends"
            ),
        )
    }

    /// The lease of `from` ended: this host takes the run over.
    pub fn took_over(job: &str, slot: i64, from: &str) -> RunEvent {
        RunEvent::new(
            EventKind::TookOver,
            job,
            slot,
            format!(
                "the lease of {from} ended (handed over, its holder gone, or a retry due): taking the run over"
            ),
        )
    }

    /// The claim was won as `attempt`: the command starts.
    pub fn started(job: &str, slot: i64, attempt: u32, backup: bool) -> RunEvent {
        let how = if backup {
            " after taking over as backup"
        } else {
            ""
        };
        RunEvent::new(
            EventKind::Started,
            job,
            slot,
            format!("won{how}; running the command"),
        )
        .for_attempt(attempt)
    }

    /// Attempt `attempt` failed and retry `nth` is due at `due` (ms): any host standing by takes
    /// the run over then.
    pub fn retry_pending(job: &str, slot: i64, attempt: u32, nth: u32, due: i64) -> RunEvent {
        let at = crate::time::rfc3339(slot);
        RunEvent::new(
            EventKind::RetryPending,
            job,
            slot,
            format!(
                "attempt {attempt} of {job} @ {at} failed; retry {nth} is due at {}: this host or another standing by takes the run over then, as attempt {}",
                crate::time::rfc3339(due),
                attempt + 1
            ),
        )
    }

    /// `run` was stopped (SIGTERM, SIGINT) while it waited for a retry.
    pub fn stopped_before_retry(job: &str, slot: i64) -> RunEvent {
        RunEvent::new(
            EventKind::GivenUp,
            job,
            slot,
            "stopped while waiting for the retry: it is left to the hosts standing by, or to the job's next run",
        )
        .to(Audience::Always)
    }

    /// The line a terminal shows: `anarchon: ...`, or `error: ...` for a run's end that was not
    /// recorded (as ever: a failed run's summary is anarchon's word on the command's error).
    pub fn terminal_line(&self) -> String {
        let unrecorded = matches!(self.kind, EventKind::NotRecorded | EventKind::LeaseLost);
        let prefix = if self.level == Level::Error && unrecorded {
            "error"
        } else {
            "anarchon"
        };
        format!("{prefix}: {}", self.message)
    }
}

/// Where a run's events go.
pub trait Sink: Send + Sync {
    fn emit(&self, event: &RunEvent);
}

/// The sink a run's events go to, carried by the runner's options (a value, not process state):
/// [`Terminal`] unless the daemon gives its own.
#[derive(Clone)]
pub struct Events(Arc<dyn Sink>);

impl Events {
    pub fn new(sink: impl Sink + 'static) -> Events {
        Events(Arc::new(sink))
    }

    pub fn emit(&self, event: &RunEvent) {
        self.0.emit(event);
    }
}

impl Default for Events {
    fn default() -> Events {
        Events::new(Terminal)
    }
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Events")
    }
}

/// `run`'s stderr, for a person or cron's mail: what it has always said (the summaries its
/// front-end emits, and what went otherwise than recorded), not a log's notes.
pub struct Terminal;

impl Sink for Terminal {
    fn emit(&self, event: &RunEvent) {
        if event.audience != Audience::Log {
            crate::errln!("{}", event.terminal_line());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routine_notes_are_debug_and_a_failed_run_an_error() {
        assert_eq!(EventKind::StandingBy.level(), Level::Debug);
        assert_eq!(EventKind::NotRunHere.level(), Level::Debug);
        assert_eq!(EventKind::Failed.level(), Level::Error);
        let e = RunEvent::started("sync", 0, 2, true);
        assert_eq!(e.attempt, Some(2));
        assert_eq!(
            e.terminal_line(),
            "anarchon: won after taking over as backup; running the command"
        );
    }
}
