//! One replica of `anarchon cron FILE`, as the daemon tests start it: its stdout and stderr in
//! files of the test's directory, started once it has said it runs its jobs, killed when dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::wait_for;

pub struct Replica {
    child: Child,
    out: PathBuf,
    err: PathBuf,
}

impl Replica {
    /// `anarchon cron FILE EXTRA...` on the store at `url`, as `<dir>/<name>.out|.err`; returns
    /// once it has started its jobs.
    pub fn start(url: &str, file: &Path, dir: &Path, name: &str, extra: &[&str]) -> Replica {
        Replica::start_with_env(url, file, dir, name, extra, &[])
    }

    /// As [`Replica::start`], with `env` set for it (a trace collector's variables).
    pub fn start_with_env(
        url: &str,
        file: &Path,
        dir: &Path,
        name: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Replica {
        let out = dir.join(format!("{name}.out"));
        let err = dir.join(format!("{name}.err"));
        let mut cmd = std::process::Command::new(crate::common::anarchon_path());
        for var in [
            "ANARCHON_PREFIX",
            "ANARCHON_BACKEND",
            "NO_COLOR",
            "REDIS_URL",
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ] {
            cmd.env_remove(var);
        }
        cmd.envs(env.iter().copied());
        let child = cmd
            .env("ANARCHON_REDIS_URL", url)
            .arg("cron")
            .arg(file)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .expect("start anarchon cron");
        let replica = Replica { child, out, err };
        wait_for(
            "the replica to start its jobs",
            Duration::from_secs(20),
            // The daemon's log drops the `anarchon:` prefix (issue 48 item 3).
            || replica.stderr().contains(" job(s) from "),
        );
        replica
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its runner name as the daemon gives it by default: `<hostname>:<pid>`.
    pub fn runner(&self) -> String {
        let out = std::process::Command::new("hostname").output().unwrap();
        format!(
            "{}:{}",
            String::from_utf8_lossy(&out.stdout).trim(),
            self.pid()
        )
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }

    /// The port it serves `--listen 127.0.0.1:0` on, as it said.
    pub fn listening_port(&self) -> u16 {
        let said = self.stderr();
        said.lines()
            .find_map(|l| l.split("on http://127.0.0.1:").nth(1))
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("no listening address said:\n{said}"))
    }

    pub fn stdout(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    pub fn signal(&self, sig: &str) {
        crate::common::signal(sig, self.pid()).unwrap();
    }

    /// SIGHUP: reload its crontab.
    pub fn hup(&self) {
        self.signal("-HUP");
    }

    /// Waits for the replica to exit (after a signal), up to `limit`: its exit code.
    pub fn exit_code(&mut self, limit: Duration) -> Option<i32> {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// SIGKILL, and waits for it to be gone.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, then waits for the exit (up to `limit`): its exit code.
    pub fn stop(&mut self, limit: Duration) -> Option<i32> {
        self.signal("-TERM");
        self.exit_code(limit)
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
