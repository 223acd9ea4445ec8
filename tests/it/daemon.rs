//! The daemon driven in-process, through its library API: `anarchon::daemon::run(settings,
//! crontab, shutdown)` with settings built here, as mini-redis's tests drive `server::run`. No
//! binary, no signal: the shutdown is a future. What only a process can show (signals, PID 1 and
//! the orphan reaper, kill -9, the log on stderr) stays in cron.rs and deploys.rs.

use std::path::Path;
use std::time::Duration;

use anarchon::daemon::DaemonSettings;
use anarchon::error::ExitCode;
use anarchon::settings::cron::CronSettings;
use clap::Parser;

use crate::common::ticker::{copies, overlapping, ticker_as};
use crate::common::{Server, wait_for};

/// A daemon running on a thread of its own (its runtime has one thread, as the binary's), and
/// the way to stop it.
struct InProcess {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<anarchon::error::Result<ExitCode>>>,
}

impl InProcess {
    /// Starts the daemon of `file` on the store at `url`: its settings resolved as `anarchon
    /// --redis URL cron FILE` resolves them, but not owning the process (no reaper: the test's
    /// other children are not its orphans).
    fn start(url: &str, file: &Path) -> InProcess {
        let cli = anarchon::cli::Cli::try_parse_from([
            "anarchon",
            "--redis",
            url,
            "cron",
            &file.display().to_string(),
        ])
        .unwrap();
        let anarchon::cli::Command::Cron(args) = cli.command else {
            unreachable!()
        };
        let cron = CronSettings::resolve(args, &cli.global).unwrap();
        let tab = cron.crontab.read_file(&cron.file).unwrap();
        let global = anarchon::settings::global::GlobalSettings::resolve(&cli.global);
        let settings = DaemonSettings {
            cron,
            connect: global.connect_options().unwrap(),
            prefix: global.prefix.clone(),
            owns_the_process: false,
            trace: None,
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(anarchon::daemon::run(settings, tab, async {
                    let _ = stopped.await;
                }))
        });
        InProcess {
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Asks it to stop, as SIGTERM does, and waits for it to return (at most `limit`).
    fn stop(mut self, limit: Duration) -> anarchon::error::Result<ExitCode> {
        let _ = self.stop.take().unwrap().send(());
        let thread = self.thread.take().unwrap();
        wait_for("the daemon to return", limit, || thread.is_finished());
        thread.join().unwrap()
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        // A failed test still stops its daemon, so its runs end with the test.
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A crontab line for job `job` every second: the ticker logs to `log` for `ms` milliseconds.
fn every_second(job: &str, log: &Path, ms: u64) -> String {
    format!(
        "# anarchon: --job {job}\n*/1 * * * * * {}\n",
        ticker_as(log, "$ANARCHON_SLOT/$ANARCHON_ATTEMPT", ms, false)
    )
}

/// Write through a file beside it and a rename, as an editor or a ConfigMap does: the daemon
/// never reads a file half written.
fn write(file: &Path, text: &str) {
    let next = file.with_extension("next");
    std::fs::write(&next, text).unwrap();
    std::fs::rename(&next, file).unwrap();
}

/// The slots a log's copies were run for, each once, none two at one instant.
fn slots_run_once(log: &Path) -> Vec<String> {
    let all = copies(log);
    if let Some((a, b, ms)) = overlapping(&all).into_iter().next() {
        panic!("two copies ran at the same time, for {ms} ms: {a:?} and {b:?}");
    }
    let mut labels: Vec<String> = all.iter().map(|c| c.label.clone()).collect();
    let n = labels.len();
    labels.sort();
    labels.dedup();
    assert_eq!(labels.len(), n, "a slot ran twice: {all:?}");
    labels
}

#[test]
fn a_daemon_in_process_runs_its_jobs_and_returns_when_told_to_stop() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (file, log) = (dir.path().join("crontab"), dir.path().join("a.log"));
    write(&file, &every_second("a", &log, 100));
    let daemon = InProcess::start(&s.url, &file);
    wait_for("two runs of job a", Duration::from_secs(15), || {
        copies(&log).iter().filter(|c| c.completed).count() >= 2
    });
    // The shutdown future ends it as SIGTERM does: Ok, each run it held ended first.
    let code = daemon
        .stop(Duration::from_secs(20))
        .expect("the daemon ran");
    assert_eq!(code, ExitCode::Ok);
    let all = copies(&log);
    assert!(
        all.iter().all(|c| c.completed),
        "a run left unfinished: {all:?}"
    );
    let ran = slots_run_once(&log);
    // Each slot it ran is recorded finished in the store (read with the binary, as an operator).
    let out = std::process::Command::new(crate::common::anarchon_path())
        .args(["--redis", &s.url, "history", "a", "--json"])
        .output()
        .unwrap();
    let history: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = history["entries"]
        .as_array()
        .expect("history --json has entries");
    for label in &ran {
        let slot: i64 = label.split('/').next().unwrap().parse().unwrap();
        let statuses: Vec<&str> = runs
            .iter()
            .filter(|r| r["slot"] == slot)
            .filter_map(|r| r["status"].as_str())
            .collect();
        assert_eq!(statuses, ["finished"], "slot {slot}: {history}");
    }
}

#[test]
fn a_daemon_in_process_reloads_a_good_file_and_keeps_its_jobs_through_a_bad_one() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crontab");
    let (a, b) = (dir.path().join("a.log"), dir.path().join("b.log"));
    let job_a = every_second("a", &a, 100);
    write(&file, &job_a);
    let daemon = InProcess::start(&s.url, &file);
    wait_for("job a to run", Duration::from_secs(10), || a.exists());
    write(&file, &format!("{job_a}{}", every_second("b", &b, 100)));
    wait_for(
        "job b to run after the reload",
        Duration::from_secs(10),
        || b.exists(),
    );
    let grows = |log: &Path, what: &str| {
        let seen = copies(log).len();
        wait_for(what, Duration::from_secs(10), || copies(log).len() > seen);
    };
    // A line that does not read, then a file caught empty: refused, both jobs run on.
    write(
        &file,
        &format!("{job_a}*/1 * * * * * \n# anarchon: --lease\n"),
    );
    grows(&b, "job b to keep running after a bad file");
    write(&file, "");
    grows(&b, "job b to keep running after an empty file");
    grows(&a, "job a to keep running after an empty file");
    // Job b removed: it stops (its last run ends), a runs on.
    write(&file, &job_a);
    wait_for("job b to stop", Duration::from_secs(10), || {
        let before = copies(&b).len();
        grows(&a, "job a to run on");
        grows(&a, "job a to run on");
        copies(&b).len() == before
    });
    assert_eq!(daemon.stop(Duration::from_secs(20)).unwrap(), ExitCode::Ok);
    slots_run_once(&a);
    slots_run_once(&b);
}
