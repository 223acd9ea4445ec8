//! `run --live-output` and `logs -f`: a running command's output followed from another host, as
//! it prints, across a takeover, capped, and nothing sent without the flag.

use std::io::BufRead;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{Server, spawn_run, stderr, wait_for, wait_for_claim, wait_for_line};

/// `anarchon logs JOB -f ARGS` started, its stdout lines collected as they come.
struct Follower {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Follower {
    fn start(s: &Server, job: &str, args: &[&str]) -> Follower {
        let mut child = s
            .anarchon_process()
            .args(["logs", job, "-f"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let out = child.stdout.take().unwrap();
        let collected = lines.clone();
        let reader = std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                collected.lock().unwrap().push(line);
            }
        });
        Follower {
            child,
            lines,
            reader: Some(reader),
        }
    }

    fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    fn wait_for_line(&self, line: &str) {
        wait_for(
            &format!("{line:?} from logs -f"),
            Duration::from_secs(15),
            || self.lines().iter().any(|l| l == line),
        );
    }

    /// Waits for it to exit: its code and its stderr.
    fn end(mut self) -> (Option<i32>, String) {
        let status = self.child.wait().unwrap();
        if let Some(r) = self.reader.take() {
            r.join().unwrap();
        }
        let mut err = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut err).unwrap();
        (status.code(), err)
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A command that prints `first` lines, waits for `go` to exist, prints `then` more and exits
/// with `code`; each line says which stream and its number.
fn command(go: &std::path::Path, first: u32, then: u32, code: i32) -> String {
    format!(
        "i=0; while [ $i -lt {first} ]; do i=$((i+1)); echo out $i; echo err $i >&2; done; \
         while [ ! -e {go} ]; do sleep 0.05; done; \
         while [ $i -lt {total} ]; do i=$((i+1)); echo out $i; done; exit {code}",
        go = go.display(),
        total = first + then
    )
}

#[test]
fn logs_follow_shows_a_running_commands_output_from_another_host_and_ends_with_its_status() {
    let s = Server::start();
    let go = s.dir.path().join("go");
    let mut run = spawn_run(
        &s,
        &[
            "--job",
            "sync",
            "--slot",
            "60000",
            "--live-output",
            "--runner",
            "host-a:1",
            "--shell",
            "--",
            &command(&go, 3, 2, 4),
        ],
    );
    wait_for_claim(&s, "sync", "60000");
    // Another host follows while the command runs: the lines printed so far, in order.
    let follower = Follower::start(&s, "sync", &[]);
    follower.wait_for_line("out 3");
    let seen = follower.lines();
    let outs: Vec<&String> = seen.iter().filter(|l| l.starts_with("out")).collect();
    assert_eq!(outs, ["out 1", "out 2", "out 3"], "{seen:?}");
    assert!(seen.iter().any(|l| l == "err 3"), "{seen:?}");
    // The run is still going: the follower has not ended.
    assert!(
        s.run("sync", "60000")
            .is_some_and(|r| r.status == "running")
    );
    std::fs::write(&go, "").unwrap();
    let (code, err) = follower.end();
    // It exits as `wait` does: with the command's own exit code.
    assert_eq!(code, Some(4), "{err}");
    assert!(err.contains("failed as attempt 1 on host-a:1"), "{err}");
    assert_eq!(run.wait().unwrap().code(), Some(4));
}

#[test]
fn the_lines_after_the_end_are_all_there_when_the_follower_ends() {
    let s = Server::start();
    let go = s.dir.path().join("go");
    std::fs::write(&go, "").unwrap();
    let out = s.cli(&[
        "run",
        "--job",
        "burst",
        "--slot",
        "60000",
        "--live-output",
        "--shell",
        "--",
        &command(&go, 0, 500, 0),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // An ended run's output is still there (for a day): followed from its start to its end.
    let out = s.cli(&["logs", "burst", "-f", "--slot", "60000"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let expected: Vec<String> = (1..=500).map(|i| format!("out {i}")).collect();
    assert_eq!(text.lines().collect::<Vec<_>>(), expected);
    let ttl: i64 = s.cmd(&["PTTL", "{cron:burst}:output:60000:1"]);
    assert!(0 < ttl && ttl <= 24 * 3600 * 1000, "{ttl}");
}

#[test]
fn a_takeover_is_followed_into_the_next_attempt() {
    let s = Server::start();
    let pid_file = s.dir.path().join("a.pid");
    // host-a's command prints, writes its pid and waits forever; host-a then dies with it.
    let line = format!(
        "echo from a; echo $$ > {}; while true; do sleep 1; done",
        pid_file.display()
    );
    let mut a = spawn_run(
        &s,
        &[
            "--job",
            "t",
            "--slot",
            "60000",
            "--lease",
            "2s",
            "--live-output",
            "--runner",
            "host-a:1",
            "--shell",
            "--",
            &line,
        ],
    );
    wait_for_line(&pid_file);
    let follower = Follower::start(&s, "t", &[]);
    follower.wait_for_line("from a");
    // kill -9 of host-a's wrapper and its command: nobody renews the lease.
    let group = a.id() as i32;
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(group),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let _ = a.wait();
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
    // host-b stands by and takes it over as attempt 2.
    let out = s.cli(&[
        "run",
        "--job",
        "t",
        "--slot",
        "60000",
        "--lease",
        "2s",
        "--live-output",
        "--runner",
        "host-b:2",
        "--shell",
        "--",
        "echo from b",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (code, err) = follower.end();
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("attempt 2 on host-b:2 took the run over"),
        "{err}"
    );
    assert!(err.contains("finished as attempt 2 on host-b:2"), "{err}");
    // host-a died before it could mark its output's end: said, not passed off as whole.
    assert!(err.contains("attempt 1's output stops here"), "{err}");
    // Followed after the end, the run is shown from its first attempt.
    let out = s.cli(&["logs", "t", "-f", "--slot", "60000"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .collect::<Vec<_>>(),
        ["from a", "from b"]
    );
}

#[test]
fn a_long_line_is_one_line_cut_and_ctrl_c_is_not_a_finished_run() {
    let s = Server::start();
    let out = s.cli(&[
        "run",
        "--job",
        "wide",
        "--slot",
        "60000",
        "--live-output",
        "--live-output-lines",
        "2",
        "--shell",
        "--",
        "head -c 20000 /dev/zero | tr '\\0' y; echo; echo after; echo third",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The cap alone left the third line out: nothing was lost, and nothing is said to be.
    assert!(
        !stderr(&out).contains("could not be sent"),
        "{}",
        stderr(&out)
    );
    let out = s.cli(&["logs", "wide", "-f", "--slot", "60000"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0], format!("{}…", "y".repeat(4096)));
    assert_eq!(lines[1], "after");
    let end: Vec<Vec<redis::Value>> = s.cmd(&[
        "XREVRANGE",
        "{cron:wide}:output:60000:1",
        "+",
        "-",
        "COUNT",
        "1",
    ]);
    assert!(
        format!("{end:?}").contains("end") && format!("{end:?}").contains("\"3\""),
        "{end:?}"
    );

    // Interrupted while the run goes on: not 0, which would say it finished.
    let mut run = spawn_run(
        &s,
        &[
            "--job",
            "long",
            "--slot",
            "60000",
            "--live-output",
            "--shell",
            "--",
            "echo up; sleep 30",
        ],
    );
    wait_for_claim(&s, "long", "60000");
    let follower = Follower::start(&s, "long", &[]);
    follower.wait_for_line("up");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(follower.child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let (code, err) = follower.end();
    assert_eq!(code, Some(130), "{err}");
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(run.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let _ = run.wait();
}

#[test]
fn output_is_capped_per_attempt_and_nothing_is_sent_without_the_flag() {
    let s = Server::start();
    let go = s.dir.path().join("go");
    std::fs::write(&go, "").unwrap();
    let out = s.cli(&[
        "run",
        "--job",
        "chatty",
        "--slot",
        "60000",
        "--live-output",
        "--live-output-lines",
        "10",
        "--shell",
        "--",
        &command(&go, 0, 50, 0),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // start, 10 lines, cut, end: the server holds no more than the cap, whatever was printed.
    let n: usize = s.cmd(&["XLEN", "{cron:chatty}:output:60000:1"]);
    assert_eq!(n, 13);
    let out = s.cli(&["logs", "chatty", "-f", "--slot", "60000"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 10);
    assert!(
        stderr(&out).contains("cut after 10 lines"),
        "{}",
        stderr(&out)
    );

    // Without the flag: no output key, and logs -f says how to turn it on.
    let mut quiet = spawn_run(
        &s,
        &[
            "--job", "quiet", "--slot", "60000", "--shell", "--", "sleep 30",
        ],
    );
    wait_for_claim(&s, "quiet", "60000");
    let out = s.cli(&["logs", "quiet", "-f"]);
    assert_eq!(out.status.code(), Some(85), "{}", stderr(&out));
    assert!(stderr(&out).contains("--live-output"), "{}", stderr(&out));
    let keys = s.keys();
    assert!(
        !keys.iter().any(|k| k.starts_with("{cron:quiet}:output")),
        "{keys:?}"
    );
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(quiet.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let _ = quiet.wait();
}
