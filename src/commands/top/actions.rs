//! The actions. A release, a pause and a resume are done by the library the commands use
//! ([`crate::operate`]): one implementation of each, and of what it records of who did it and why,
//! whether typed at a shell or chosen in top, its answer a value the status line words; the logs
//! view reads and words a run's end as `logs` does ([`attempts`]). One runs as this binary's own
//! command in a child process, with the connection top uses ([`ChildConnection`]: the URL in the
//! environment, never in the arguments): `run-now`, whose command runs on the terminal, under a
//! lease, a guard and signal handling of its own, as a process of its own: inside top, the
//! command's process group, its guard's fork and its signals (Ctrl-C goes to the command) would
//! share top's process and terminal state, and top dying would take the run's bookkeeping with
//! it.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};

use super::model::{Action, Request, Status};
use crate::cli::TimeFormat;
use crate::commands::shared::attempts::{self, Selection};
use crate::connection::{ConnectOptions, Connection};
use crate::error::{Error, Result};
use crate::operate::{self, Who};
use crate::output::{Output, Tone};
use crate::settings::top::ChildConnection;
use crate::store::Layout;
use crate::strategy::lease::{ReleaseOutcome, ReleaseStatus};
use crate::time::rfc3339;

/// A command in flight and what the status line says when it is done.
pub type Running = Pin<Box<dyn Future<Output = Status>>>;

/// `anarchon logs` in flight: the lines to show.
pub type Reading = Pin<Box<dyn Future<Output = Vec<String>>>>;

/// Acts on top's server and prefix: through the library, or this binary's commands.
pub struct Commands {
    exe: PathBuf,
    connection: ChildConnection,
    /// Where the library's actions connect (each action on a connection of its own).
    options: ConnectOptions,
    prefix: String,
    /// Who acts, as the job's events record it: the person at this screen, `user@host:pid` of
    /// top itself (the commands it runs would say their own pids).
    by: String,
    /// How the logs view words an attempt: as `logs` prints for a pipe (no colour, no "ago"),
    /// its times in the `--time-format` given (compact when none was).
    logs_output: Output,
}

impl Commands {
    pub fn new(
        connection: &ChildConnection,
        options: &ConnectOptions,
        prefix: &str,
        out: &Output,
    ) -> Result<Self> {
        let exe = std::env::current_exe().map_err(|e| {
            Error::Other(format!(
                "cannot find this program's own path to run its commands: {e}"
            ))
        })?;
        Ok(Commands {
            exe,
            connection: connection.clone(),
            options: options.clone(),
            prefix: prefix.to_string(),
            by: crate::settings::operator::default_by(),
            logs_output: Output {
                json: false,
                color: false,
                tty: false,
                time_format: match out.time_format {
                    TimeFormat::Auto => TimeFormat::Compact,
                    given => given,
                },
                ..*out
            },
        })
    }

    /// An action's arguments with `--by` naming this screen's person, after the command and its
    /// job (every action takes it: `AuditArgs`).
    fn as_this_screen(&self, mut args: Vec<String>) -> Vec<String> {
        let at = args.len().min(2);
        args.splice(at..at, ["--by".to_string(), self.by.clone()]);
        args
    }

    /// `anarchon [connection flags] ARGS`, with the URL, prefix and backend in its environment.
    fn command(&self, args: &[String]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&self.exe);
        cmd.args(&self.connection.args).args(args);
        for (name, value) in &self.connection.env {
            cmd.env(name, value);
        }
        cmd
    }

    /// The command line a person would type for `request` (the connection flags aside).
    pub fn shown(request: &Request) -> String {
        let words: Vec<String> = arguments(request)
            .iter()
            .map(|w| shlex::try_quote(w).map_or_else(|_| w.clone(), |q| q.into_owned()))
            .collect();
        format!("anarchon {}", words.join(" "))
    }

    /// Does a confirmed release, pause or resume; its answer, worded for the status line.
    pub fn act(&self, request: Request) -> Running {
        let (options, prefix, by) = (self.options.clone(), self.prefix.clone(), self.by.clone());
        Box::pin(async move {
            let who = Who {
                by: &by,
                reason: request.text.as_deref(),
            };
            match operated(&options, &prefix, who, &request.action).await {
                Ok(status) => status,
                Err(e) => Status {
                    text: format!(
                        "{} failed: {}",
                        Commands::shown(&request),
                        e.to_string().lines().next().unwrap_or_default()
                    ),
                    tone: Tone::Bad,
                },
            }
        })
    }

    /// What `anarchon logs JOB` prints (the job's newest failure), read by the library `logs`
    /// uses, in the lines it would print for a pipe (no colour), or why there is none.
    pub fn logs(&self, job: &str, layout: Layout) -> Reading {
        let (options, prefix, out, job) = (
            self.options.clone(),
            self.prefix.clone(),
            self.logs_output,
            job.to_string(),
        );
        Box::pin(async move {
            match newest_failure(&options, &prefix, &out, &job, layout).await {
                Ok(lines) => lines,
                Err(e) => format!("anarchon logs {job}: {e}")
                    .lines()
                    .map(str::to_string)
                    .collect(),
            }
        })
    }

    /// `anarchon run-now JOB --shell -- CMD` on the terminal: its output shown as it comes, its
    /// input the terminal's.
    pub fn run_now(&self, request: &Request) -> tokio::process::Command {
        let mut cmd = self.command(&self.as_this_screen(arguments(request)));
        cmd.stdin(Stdio::inherit())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit());
        cmd
    }
}

/// The command's arguments for `request`, as `--help` of each names them.
pub fn arguments(request: &Request) -> Vec<String> {
    let mut args: Vec<String> = Vec::new();
    let reason = |args: &mut Vec<String>| {
        if let Some(reason) = &request.text {
            args.push("--reason".into());
            args.push(reason.clone());
        }
    };
    match &request.action {
        Action::Release { job, slot, .. } => {
            args.extend([
                "release".into(),
                job.clone(),
                "--slot".into(),
                slot.to_string(),
                // Asked on screen already; and the screen does not wait for the holder to stop:
                // the next read shows the run end.
                "--yes".into(),
                "--no-wait".into(),
                "--json".into(),
            ]);
            reason(&mut args);
        }
        Action::Pause { job } => {
            args.extend(["pause".into(), job.clone(), "--json".into()]);
            reason(&mut args);
        }
        Action::Resume { job } => {
            args.extend(["resume".into(), job.clone(), "--json".into()]);
            reason(&mut args);
        }
        Action::RunNow { job, strategy } => {
            args.extend(["run-now".into(), job.clone()]);
            if let Some(strategy) = strategy {
                args.extend(["--strategy".into(), strategy.clone()]);
            }
            args.extend([
                "--shell".into(),
                "--".into(),
                request.text.clone().unwrap_or_default(),
            ]);
        }
    }
    args
}

/// The job's newest failed or interrupted attempt, as `logs JOB` reads and words it, on a
/// connection of its own.
async fn newest_failure(
    options: &ConnectOptions,
    prefix: &str,
    out: &Output,
    job: &str,
    layout: Layout,
) -> Result<Vec<String>> {
    let mut conn = Connection::open(options).await?;
    let check = crate::store::format::check_for_read(&mut conn, prefix).await?;
    // As `logs` opens a job: its keys' types checked, the job found in the layout top saw.
    let (layout, _) = crate::store::job::locate_job(&mut conn, prefix, job, Some(layout)).await?;
    let keys = check.job_keys(layout, prefix, job);
    let now = check.server_now_ms;
    let entries = attempts::read(&mut conn, &keys, job, Selection::default(), now).await?;
    let mut lines = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            lines.push(String::new());
        }
        lines.extend(attempts::lines(out, job, e, now));
    }
    Ok(lines)
}

/// A release, pause or resume on a connection of its own, as the commands do it.
async fn operated(
    options: &ConnectOptions,
    prefix: &str,
    who: Who<'_>,
    action: &Action,
) -> Result<Status> {
    let mut conn = Connection::open(options).await?;
    let check = crate::store::format::check_for_write(&mut conn, prefix).await?;
    match action {
        Action::Release { job, slot, .. } => {
            let keys = check.lease_keys(prefix, job);
            let active =
                crate::store::job::active_runs_for(&mut conn, &keys, check.server_now_ms).await?;
            let Some(run) = active.into_iter().find(|a| a.state.slot == *slot) else {
                return Ok(Status {
                    text: format!(
                        "release {job} @ {}: not released: it ended meanwhile",
                        rfc3339(*slot)
                    ),
                    tone: Tone::Warn,
                });
            };
            // Asked on screen already; and the screen does not wait for the holder to stop: the
            // next read shows the run end.
            let how = operate::release::How {
                status: ReleaseStatus::Interrupted.as_str(),
                force: false,
                wait: false,
                spinner: false,
                default_reason: "released by an operator",
            };
            let done =
                operate::release::release(&mut conn, (prefix, job, &keys), &run, who, how).await?;
            Ok(release_said(job, *slot, run.state.attempt, done.outcome))
        }
        Action::Pause { job } => {
            let paused = operate::pause::pause(&mut conn, prefix, job, who, (None, None)).await?;
            Ok(pause_said(job, &paused.record))
        }
        Action::Resume { job } => {
            let decided = operate::pause::resume(&mut conn, prefix, job, who).await?;
            Ok(match decided.outcome.as_str() {
                "resumed" => Status {
                    text: format!("{job} is resumed: its next scheduled run is claimed as usual"),
                    tone: Tone::Good,
                },
                _ => Status {
                    text: format!("{job} is not paused: nothing to resume"),
                    tone: Tone::Dim,
                },
            })
        }
        Action::RunNow { .. } => Err(Error::Other(
            "run-now runs its command on the terminal, not as an action".into(),
        )),
    }
}

/// A release's outcome in words.
fn release_said(job: &str, slot: i64, attempt: u32, outcome: ReleaseOutcome) -> Status {
    let status = ReleaseStatus::Interrupted.as_str();
    let (what, tone) = match outcome {
        ReleaseOutcome::Releasing => (
            format!(
                "marked released: its holder stops the command at its next heartbeat and records attempt {attempt} {status}"
            ),
            Tone::Good,
        ),
        ReleaseOutcome::Released => (
            format!("released: attempt {attempt} ended {status}"),
            Tone::Good,
        ),
        ReleaseOutcome::None => ("not released: it ended meanwhile".to_string(), Tone::Warn),
        ReleaseOutcome::Changed => (
            "not released: another attempt took it over meanwhile".to_string(),
            Tone::Warn,
        ),
    };
    Status {
        text: format!("release {job} @ {}: {what}", rfc3339(slot)),
        tone,
    }
}

/// A pause in words: by whom, until when, why.
fn pause_said(job: &str, p: &crate::store::pause::Pause) -> Status {
    Status {
        text: format!(
            "{job} is paused by {} {}{}",
            p.paused_by.as_deref().unwrap_or("someone"),
            p.paused_until
                .map_or("until resumed".to_string(), |u| format!(
                    "until {}",
                    rfc3339(u)
                )),
            p.paused_reason
                .as_deref()
                .map_or(String::new(), |r| format!(": {r}"))
        ),
        tone: Tone::Good,
    }
}

/// How run-now ended, for the status line.
pub fn run_now_said(request: &Request, status: std::io::Result<ExitStatus>) -> Status {
    use std::os::unix::process::ExitStatusExt;
    let job = request.action.job();
    match status {
        Ok(s) if s.success() => Status {
            text: format!("run-now {job}: the command finished (exit 0)"),
            tone: Tone::Good,
        },
        Ok(s) => Status {
            text: match (s.code(), s.signal()) {
                (Some(code), _) => {
                    format!("run-now {job}: exit {code} (`anarchon logs {job}` shows what it left)")
                }
                (None, Some(sig)) => format!("run-now {job}: ended by signal {sig}"),
                _ => format!("run-now {job}: ended"),
            },
            tone: Tone::Bad,
        },
        Err(e) => Status {
            text: format!("cannot run `{}`: {e}", Commands::shown(request)),
            tone: Tone::Bad,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release() -> Request {
        Request {
            action: Action::Release {
                job: "billing".into(),
                slot: 1_796_220_300_000,
                attempt: 1,
                runner: "host-a:1".into(),
                lease_end: 0,
            },
            text: Some("hung on a lock".into()),
        }
    }

    #[test]
    fn each_action_is_its_command_with_its_own_flags() {
        assert_eq!(
            arguments(&release()),
            [
                "release",
                "billing",
                "--slot",
                "1796220300000",
                "--yes",
                "--no-wait",
                "--json",
                "--reason",
                "hung on a lock"
            ]
        );
        let pause = Request {
            action: Action::Pause { job: "b".into() },
            text: None,
        };
        assert_eq!(arguments(&pause), ["pause", "b", "--json"]);
        let run_now = Request {
            action: Action::RunNow {
                job: "b".into(),
                strategy: Some("script".into()),
            },
            text: Some("./x.sh 'a b'".into()),
        };
        assert_eq!(
            arguments(&run_now),
            [
                "run-now",
                "b",
                "--strategy",
                "script",
                "--shell",
                "--",
                "./x.sh 'a b'"
            ]
        );
        assert_eq!(
            Commands::shown(&run_now),
            r#"anarchon run-now b --strategy script --shell -- "./x.sh 'a b'""#
        );
    }

    #[test]
    fn the_status_line_tells_the_answer() {
        let said = release_said("billing", 1_796_220_300_000, 1, ReleaseOutcome::Releasing);
        assert!(
            said.text
                .starts_with("release billing @ 2026-12-02T14:05:00.000Z: marked released"),
            "{}",
            said.text
        );
        let changed = release_said("billing", 1_796_220_300_000, 1, ReleaseOutcome::Changed);
        assert!(matches!(changed.tone, Tone::Warn), "{}", changed.text);
        let pause = crate::store::pause::Pause {
            paused_at: Some(1),
            paused_until: None,
            resumed_at: None,
            paused_by: Some("ops@h:1".into()),
            paused_reason: Some("INC-7".into()),
        };
        assert_eq!(
            pause_said("b", &pause).text,
            "b is paused by ops@h:1 until resumed: INC-7"
        );
    }
}
