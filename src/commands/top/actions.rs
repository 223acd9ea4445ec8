//! The actions, done by this same binary's own commands (`release`, `pause`, `resume`,
//! `run-now`) and the logs read by `logs`: one implementation of each, and of what it records
//! of who did it and why, whether typed at a shell or chosen in top. Each runs as a child process
//! with the connection top uses ([`ChildConnection`]: the URL in the environment, never in the
//! arguments). The writes answer with `--json`, whose outcome goes to the status line.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};

use serde::Deserialize;

use super::model::{Action, Request, Status};
use crate::error::{Error, Result};
use crate::output::Tone;
use crate::settings::top::ChildConnection;
use crate::store::Layout;

/// A command in flight and what the status line says when it is done.
pub type Running = Pin<Box<dyn Future<Output = Status>>>;

/// `anarchon logs` in flight: the lines to show.
pub type Reading = Pin<Box<dyn Future<Output = Vec<String>>>>;

/// Runs this binary's commands against top's server and prefix.
pub struct Commands {
    exe: PathBuf,
    connection: ChildConnection,
    /// Who acts, as the job's events record it: the person at this screen, `user@host:pid` of
    /// top itself (the commands it runs would say their own pids).
    by: String,
}

impl Commands {
    pub fn new(connection: &ChildConnection) -> Result<Self> {
        let exe = std::env::current_exe().map_err(|e| {
            Error::Other(format!(
                "cannot find this program's own path to run its commands: {e}"
            ))
        })?;
        Ok(Commands {
            exe,
            connection: connection.clone(),
            by: crate::settings::operator::default_by(),
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

    /// Runs the command of a confirmed release, pause or resume, its output captured.
    pub fn act(&self, request: Request) -> Running {
        let mut cmd = self.command(&self.as_this_screen(arguments(&request)));
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        Box::pin(async move {
            match cmd.output().await {
                Ok(out) => outcome(&request, out.status, &out.stdout, &out.stderr),
                Err(e) => Status {
                    text: format!("cannot run `{}`: {e}", Commands::shown(&request)),
                    tone: Tone::Bad,
                },
            }
        })
    }

    /// `anarchon logs JOB`, as it prints for a pipe (no colour), or what it said on stderr.
    pub fn logs(&self, job: &str, layout: Layout) -> Reading {
        let mut args: Vec<String> = vec!["--color".into(), "never".into()];
        args.push("--time-format".into());
        args.push(
            self.connection
                .time_format
                .clone()
                .unwrap_or_else(|| "compact".into()),
        );
        args.extend(["logs".to_string(), job.to_string(), "--strategy".into()]);
        // `logs` reads the layout its --strategy names; any claim-only one names the same.
        args.push(
            match layout {
                Layout::Lease => "lease",
                Layout::ClaimOnly => "stream-id",
            }
            .into(),
        );
        let mut cmd = self.command(&args);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        Box::pin(async move {
            match cmd.output().await {
                Ok(out) => {
                    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
                    if !out.status.success() {
                        text.push_str(&String::from_utf8_lossy(&out.stderr));
                    }
                    text.lines().map(str::to_string).collect()
                }
                Err(e) => vec![format!("cannot run `anarchon logs`: {e}")],
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

/// `release --json`'s answer, the part the status line tells.
#[derive(Deserialize)]
struct ReleaseAnswer {
    status: String,
    runs: Vec<ReleasedRun>,
}

#[derive(Deserialize)]
struct ReleasedRun {
    slot_time: String,
    attempt: u32,
    outcome: String,
}

/// `pause --json` and `resume --json`'s answer.
#[derive(Deserialize)]
struct PauseAnswer {
    paused: bool,
    paused_by: Option<String>,
    paused_until: Option<i64>,
    paused_reason: Option<String>,
}

/// What the status line says of a command's end: its JSON answer's outcome, or its error.
pub fn outcome(request: &Request, status: ExitStatus, stdout: &[u8], stderr: &[u8]) -> Status {
    let job = request.action.job();
    let said = |tone: Tone, text: String| Status { text, tone };
    if !status.success() {
        let stderr = String::from_utf8_lossy(stderr);
        let error = stderr
            .lines()
            .find_map(|l| l.strip_prefix("error: "))
            .or_else(|| stderr.lines().find(|l| !l.trim().is_empty()))
            .unwrap_or("no word on stderr");
        let code = status
            .code()
            .map_or("a signal".to_string(), |c| format!("exit {c}"));
        // A release that found the run ended or taken over meanwhile answers JSON and exit 83.
        if let Some(text) = release_said(job, stdout) {
            return said(Tone::Warn, text);
        }
        return said(
            Tone::Bad,
            format!("{} failed ({code}): {error}", Commands::shown(request)),
        );
    }
    match &request.action {
        Action::Release { .. } => said(
            Tone::Good,
            release_said(job, stdout)
                .unwrap_or_else(|| format!("release {job}: {}", first_line(stdout))),
        ),
        Action::Pause { .. } | Action::Resume { .. } => {
            match serde_json::from_slice::<PauseAnswer>(stdout) {
                Ok(p) if p.paused => said(
                    Tone::Good,
                    format!(
                        "{job} is paused by {} {}{}",
                        p.paused_by.as_deref().unwrap_or("someone"),
                        p.paused_until
                            .map_or("until resumed".to_string(), |u| format!(
                                "until {}",
                                crate::time::rfc3339(u)
                            )),
                        p.paused_reason.map_or(String::new(), |r| format!(": {r}"))
                    ),
                ),
                Ok(_) => said(
                    Tone::Good,
                    format!("{job} is resumed: its next scheduled run is claimed as usual"),
                ),
                // `resume` of a job that is not paused says so in a sentence.
                Err(_) => said(Tone::Dim, first_line(stdout)),
            }
        }
        Action::RunNow { .. } => said(Tone::Dim, first_line(stdout)),
    }
}

/// A release's outcome in words (None when the answer is not release's JSON).
fn release_said(job: &str, stdout: &[u8]) -> Option<String> {
    let answer: ReleaseAnswer = serde_json::from_slice(stdout).ok()?;
    let Some(run) = answer.runs.first() else {
        return Some(format!(
            "release {job}: no run in progress matched; nothing was released"
        ));
    };
    let what = match run.outcome.as_str() {
        "releasing" => format!(
            "marked released: its holder stops the command at its next heartbeat and records attempt {} {}",
            run.attempt, answer.status
        ),
        "released" => format!("released: attempt {} ended {}", run.attempt, answer.status),
        "none" => "not released: it ended meanwhile".to_string(),
        "changed" => "not released: another attempt took it over meanwhile".to_string(),
        other => other.to_string(),
    };
    Some(format!("release {job} @ {}: {what}", run.slot_time))
}

fn first_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("done")
        .to_string()
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
    use std::os::unix::process::ExitStatusExt;

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
        let ok = ExitStatus::from_raw(0);
        let json = br#"{"dry_run":false,"status":"interrupted","by":"me","reason":null,
            "runs":[{"job":"billing","slot":1,"slot_time":"2026-12-02T03:00:00.000Z","attempt":1,
            "runner":"h:1","lease_left_ms":5000,"outcome":"releasing"}]}"#;
        let said = outcome(&release(), ok, json, b"");
        assert!(
            said.text
                .starts_with("release billing @ 2026-12-02T03:00:00.000Z: marked released"),
            "{}",
            said.text
        );
        let failed = outcome(
            &release(),
            ExitStatus::from_raw(85 << 8),
            b"",
            b"error: no job \"billing\"\n  hint: anarchon list\n",
        );
        assert!(
            failed.text.contains("failed (exit 85): no job"),
            "{}",
            failed.text
        );
        let paused = outcome(
            &Request {
                action: Action::Pause { job: "b".into() },
                text: None,
            },
            ok,
            br#"{"job":"b","paused_at":1,"paused_by":"ops@h:1","paused_reason":"INC-7","paused":true}"#,
            b"",
        );
        assert_eq!(paused.text, "b is paused by ops@h:1 until resumed: INC-7");
    }
}
