//! The on-call toolkit: breaking a stuck lease (`release`), reading a failure (`logs`,
//! `history -v`), tokens pasted from a table.

use crate::common;
use std::time::Duration;

use crate::common::{Server, json, spawn_run, stderr, wait_for, wait_for_claim, wait_for_line};

fn claim(s: &Server, job: &str, slot: &str, extra: &[&str]) -> String {
    let mut args = vec!["claim", job, "--slot", slot, "--json"];
    args.extend_from_slice(extra);
    let out = s.cli(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)["token"].as_str().unwrap().to_string()
}

#[test]
fn release_ends_a_stuck_run_and_records_who_and_why() {
    let s = Server::start();
    let token = claim(
        &s,
        "billing",
        "60000",
        &["--runner", "hung-host:1", "--lease", "10m"],
    );

    // Without a terminal and without --yes: refused; a dry run changes nothing either.
    let out = s.cli(&["release", "billing"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = s.cli(&["release", "billing", "--dry-run", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["runs"][0]["outcome"], "would_release");
    assert_eq!(s.in_progress("billing"), vec![60_000]);

    // A holder that cannot be told (this one heartbeats by hand, under a 10-minute lease): --force
    // ends the run at once instead of waiting for its lease to end.
    let out = s.cli(&[
        "release",
        "billing",
        "--reason",
        "hung on a lock, INC-1",
        "--by",
        "ops",
        "--force",
        "--yes",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["runs"][0]["outcome"], "released");
    assert_eq!(v["runs"][0]["ended_by"], "forced");
    assert_eq!(v["runs"][0]["runner"], "hung-host:1");
    assert!(s.in_progress("billing").is_empty());
    let ended = &s.results("billing")[0];
    assert_eq!(ended.status, "interrupted");
    assert_eq!(ended.runner, "hung-host:1");
    assert_eq!(ended.result["released_by"], "ops");
    assert_eq!(ended.result["reason"], "hung on a lock, INC-1");

    // The holder has lost it; the run is over; the job can run again by hand.
    let out = s.cli(&["heartbeat", "billing", "--slot", "60000", "--token", &token]);
    assert_eq!(out.status.code(), Some(83), "{}", stderr(&out));
    assert_eq!(
        s.cli(&["claim", "billing", "--slot", "60000"])
            .status
            .code(),
        Some(81)
    );
    assert_eq!(
        s.cli(&["run-now", "billing", "--", "true"]).status.code(),
        Some(0)
    );

    // Nothing in progress: nothing to do (exit 0), with the next step.
    let out = s.cli(&["release", "billing", "--yes"]);
    assert_eq!(out.status.code(), Some(0));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("no run of billing is in progress"), "{said}");
    assert!(said.contains("anarchon history billing"), "{said}");
    // Two in progress: name one.
    claim(&s, "two", "60000", &["--lease", "10m"]);
    claim(
        &s,
        "two",
        "120000",
        &["--lease", "10m", "--overlap", "allow"],
    );
    let out = s.cli(&["release", "two", "--yes"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--slot"), "{}", stderr(&out));
    let out = s.cli(&[
        "release", "two", "--slot", "120000", "--status", "failed", "--force", "--yes",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(s.in_progress("two"), vec![60_000]);
    assert_eq!(s.run("two", "120000").unwrap().status, "failed");
    // A job that does not exist: did you mean.
    let out = s.cli(&["release", "biling", "--yes"]);
    assert_eq!(out.status.code(), Some(85));
    assert!(
        stderr(&out).contains("did you mean billing"),
        "{}",
        stderr(&out)
    );
}

/// A holder that is alive but stuck: releasing its run stops its command at its next heartbeat.
#[test]
fn release_stops_a_live_holders_command() {
    let s = Server::start();
    let pidfile = s.dir.path().join("cmd.pid");
    let line = format!("echo $$ > {}; exec sleep 60", pidfile.display());
    let child = spawn_run(
        &s,
        &[
            "--job", "stuck", "--slot", "60000", "--lease", "3s", "--shell", "--", &line,
        ],
    );
    wait_for_claim(&s, "stuck", "60000");
    let pid = wait_for_line(&pidfile);
    let out = s.cli(&["release", "stuck", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = child.wait_with_output().unwrap();
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    // It says what happened: released, not a lost lease (the release waited for it to stop).
    assert!(
        stderr(&out).contains("released the run"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("lease lost"), "{}", stderr(&out));
    wait_for(
        "the released command to be gone",
        Duration::from_secs(10),
        || !std::path::Path::new(&format!("/proc/{pid}")).exists(),
    );
    // Recorded once: the release, not a second end by the stopped holder.
    assert_eq!(s.results("stuck").len(), 1);
}

#[test]
fn release_expired_ends_every_run_nobody_renews() {
    let s = Server::start();
    for job in ["a", "b"] {
        claim(&s, job, "60000", &["--lease", "200ms"]);
    }
    claim(&s, "live", "60000", &["--lease", "10m"]);
    common::wait_for_lease_end(&s, "b", "60000");
    common::wait_for_lease_end(&s, "a", "60000");
    let out = s.cli(&["release", "--expired", "1ms", "--all", "--yes", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let released: Vec<&str> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["job"].as_str().unwrap())
        .collect();
    assert_eq!(released, vec!["a", "b"]);
    assert_eq!(s.results("a")[0].result["reason"], "lease expired");
    assert_eq!(s.in_progress("live"), vec![60_000]);
}

#[test]
fn logs_shows_the_newest_failure_and_history_v_its_last_line() {
    let s = Server::start();
    let run = |slot: &str, cmd: &str| {
        s.cli(&["run", "--job", "j", "--slot", slot, "--shell", "--", cmd])
            .status
            .code()
    };
    // The error that ended it is the last line, as programs print it.
    assert_eq!(
        run("60000", "echo 'copying' >&2; echo 'disk full' >&2; exit 3"),
        Some(3)
    );
    assert_eq!(run("120000", "true"), Some(0));
    let out = s.cli(&["logs", "j"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.contains("failed") && text.contains("exit 3"), "{text}");
    assert!(text.contains("disk full"), "{text}");
    assert!(
        !text.contains("1970-01-01T00:02:00"),
        "only the failure: {text}"
    );
    let out = s.cli(&["logs", "j", "--last", "2", "--json"]);
    let v = json(&out);
    assert_eq!(v["entries"].as_array().unwrap().len(), 2);
    assert_eq!(
        v["entries"][1]["result"]["stderr_tail"],
        "copying\ndisk full\n"
    );
    let out = s.cli(&["history", "j", "-v"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("disk full") && !text.contains("copying"),
        "{text}"
    );

    assert_eq!(run("180000", "true"), Some(0));
    let out = s.cli(&["logs", "ok-job"]);
    assert_eq!(out.status.code(), Some(85));
    s.cli(&["run", "--job", "fine", "--slot", "60000", "--", "true"]);
    let out = s.cli(&["logs", "fine"]);
    assert_eq!(out.status.code(), Some(85));
    assert!(stderr(&out).contains("--last"), "{}", stderr(&out));
}

#[test]
fn a_token_prefix_from_a_table_stands_for_the_token() {
    let s = Server::start();
    let token = claim(&s, "t", "60000", &[]);
    let abbreviated = format!("{}…", &token[..8]);
    let out = s.cli(&["heartbeat", "t", "--slot", "60000", "--token", &abbreviated]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Too short to stand for the token: said so (a usage error), not "lost ... held by".
    let out = s.cli(&[
        "finish",
        "t",
        "--slot",
        "60000",
        "--token",
        &token[..5],
        "--status",
        "ok",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("shorter than 6"), "{}", stderr(&out));
    // Five characters that are not the token's start: passed on, and the script answers lost.
    let out = s.cli(&[
        "finish", "t", "--slot", "60000", "--token", "zzzzz", "--status", "ok",
    ]);
    assert_eq!(out.status.code(), Some(83), "{}", stderr(&out));
    let out = s.cli(&[
        "finish",
        "t",
        "--slot",
        "60000",
        "--token",
        &token[..10],
        "--status",
        "ok",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn list_tells_an_expired_lease_from_a_running_one_and_lists_live_leases() {
    let s = Server::start();
    claim(
        &s,
        "healthy",
        "60000",
        &["--lease", "10m", "--runner", "a:1"],
    );
    claim(
        &s,
        "hung",
        "60000",
        &["--lease", "200ms", "--runner", "b:2"],
    );
    let out = s.cli(&["run", "--job", "done", "--slot", "60000", "--", "true"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    common::wait_for_lease_end(&s, "hung", "60000");

    let states = |args: &[&str]| -> Vec<(String, String)> {
        let mut all = vec!["list", "--json"];
        all.extend_from_slice(args);
        let out = s.cli(&all);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        json(&out)["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| {
                (
                    j["job"].as_str().unwrap().into(),
                    j["state"].as_str().unwrap().into(),
                )
            })
            .collect()
    };
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        states(&[]),
        vec![
            pair("done", "finished"),
            pair("healthy", "running"),
            pair("hung", "expired")
        ]
    );
    assert_eq!(
        states(&["--status", "expired"]),
        vec![pair("hung", "expired")]
    );
    assert_eq!(states(&["--sort", "state"])[0], pair("hung", "expired"));

    let out = s.cli(&["list", "--active", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let active = v["active"].as_array().unwrap();
    assert_eq!(active.len(), 2);
    assert_eq!(
        (active[0]["job"].as_str(), active[0]["state"].as_str()),
        (Some("healthy"), Some("running"))
    );
    assert_eq!(
        (active[1]["job"].as_str(), active[1]["state"].as_str()),
        (Some("hung"), Some("expired"))
    );
    // Since the claim, by the server's clock the document was read at: the claim the store
    // holds, at least the hung lease's 200 ms ago (waited out above).
    let claimed_at = s
        .run("healthy", "60000")
        .and_then(|r| r.claimed_at)
        .expect("the healthy run's claim time");
    assert_eq!(active[0]["claimed_at"], claimed_at, "{v}");
    let running_for = active[0]["running_for_ms"].as_i64().unwrap();
    assert_eq!(
        running_for,
        v["server_time"].as_i64().unwrap() - claimed_at,
        "{v}"
    );
    assert!(running_for >= 200, "{v}");
    let text = String::from_utf8_lossy(&s.cli(&["list", "--active"]).stdout).into_owned();
    assert!(
        text.contains("RUNNING FOR") && text.contains("expired"),
        "{text}"
    );

    // inspect says how long it has run and when its lease was last renewed (format 2 records the
    // lease each attempt was claimed with).
    let out = s.cli(&["inspect", "healthy", "--json"]);
    let inspected = json(&out);
    let run = &inspected["active"][0];
    assert_eq!(
        run["running_for_ms"].as_i64().unwrap(),
        inspected["server_time"].as_i64().unwrap() - claimed_at,
        "{inspected}"
    );
    if !s.is_format_1("healthy") {
        assert_eq!(run["lease_ms"], 600_000);
        assert_eq!(
            run["renewed_at"].as_i64().unwrap(),
            run["lease_end"].as_i64().unwrap() - 600_000
        );
    }
}

/// A child whose stdout lines arrive on a channel, so a test can wait for one with a deadline.
struct Watched {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Watched {
    fn start(s: &Server, args: &[&str]) -> Watched {
        use std::io::BufRead;
        let mut child = s
            .anarchon_process()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                if tx.send(line.unwrap_or_default()).is_err() {
                    break;
                }
            }
        });
        Watched { child, lines }
    }

    /// Waits (up to 15 s) for a line that satisfies `want`, returning it.
    fn wait_for(&self, what: &str, want: impl Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if want(&line) => return line,
                Ok(_) => {}
                Err(_) => panic!("no line: {what}"),
            }
        }
    }

    /// Ctrl-C: the watch ends quietly with exit 0, within 10 s (else it is killed and the test
    /// fails, rather than hang).
    fn interrupt(mut self) {
        crate::common::signal("-INT", self.child.id()).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert_eq!(status.code(), Some(0));
                return;
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("Ctrl-C did not end the live view");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn list_watch_repeats_and_history_follow_prints_runs_as_they_end() {
    let s = Server::start();
    assert_eq!(
        s.cli(&["run", "--job", "a", "--slot", "60000", "--", "true"])
            .status
            .code(),
        Some(0)
    );

    // Piped, as `kubectl get -w`: the table once, then only the rows that changed.
    let watch = Watched::start(&s, &["list", "--watch", "--interval", "200ms"]);
    watch.wait_for("a first round", |l| l.starts_with("--- "));
    watch.wait_for("the header", |l| l.starts_with("JOB"));
    watch.wait_for("the job", |l| l.starts_with("a "));
    assert_eq!(
        s.cli(&[
            "run", "--job", "a", "--slot", "90000", "--", "sh", "-c", "exit 3"
        ])
        .status
        .code(),
        Some(3)
    );
    watch.wait_for("a round with a change", |l| l.starts_with("--- "));
    let changed = watch.wait_for("the changed row", |_| true);
    assert!(
        changed.starts_with("a ") && changed.contains("failed"),
        "only the changed row follows the time, not the header: {changed:?}"
    );
    // A job that goes away is said to be gone, not left standing in the reader's view.
    assert_eq!(
        s.cli(&["run", "--job", "z", "--slot", "60000", "--", "true"])
            .status
            .code(),
        Some(0)
    );
    watch.wait_for("the new job", |l| l.starts_with("z "));
    for key in s.keys().into_iter().filter(|k| k.starts_with("{cron:z}")) {
        let _: () = s.cmd(&["DEL", &key]);
    }
    watch.wait_for("the job gone", |l| l.starts_with("gone: z "));
    watch.interrupt();

    let follow = Watched::start(
        &s,
        &["history", "a", "--follow", "--interval", "200ms", "--json"],
    );
    follow.wait_for("the backlog", |l| l.contains("\"slot\":60000"));
    assert_eq!(
        s.cli(&[
            "run", "--job", "a", "--slot", "120000", "--", "sh", "-c", "exit 4"
        ])
        .status
        .code(),
        Some(4)
    );
    let line = follow.wait_for("the new run", |l| l.contains("\"slot\":120000"));
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        (v["job"].as_str(), v["status"].as_str()),
        (Some("a"), Some("failed"))
    );
    follow.interrupt();

    // Every job, those that appear later too.
    let all = Watched::start(&s, &["history", "--follow", "--all", "--interval", "200ms"]);
    all.wait_for("the backlog", |l| l.contains(" a @ "));
    assert_eq!(
        s.cli(&["run", "--job", "b", "--slot", "60000", "--", "true"])
            .status
            .code(),
        Some(0)
    );
    let line = all.wait_for("the new job's run", |l| l.contains(" b @ "));
    assert!(line.contains("finished"), "{line}");
    all.interrupt();
}

/// Small answers an on-call engineer meets: each says what happened and what to type.
#[test]
fn small_answers_say_what_happened_and_what_to_type() {
    let s = Server::start();
    s.cli(&["run", "--job", "sync", "--slot", "now", "--", "true"])
        .expect(0);
    let text = |out: &common::Ran| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    // What a command printed, on either stream, says `what`.
    let says = |out: &common::Ran, what: &str| {
        assert!(text(out).contains(what), "{what:?} not in:\n{}", text(out));
    };

    // Releasing a job with nothing in progress: nothing to do, exit 0, said exactly.
    let out = s.cli(&["release", "sync", "--yes"]).expect(0);
    says(&out, "no run of sync is in progress: nothing to release");
    let out = s.cli(&["release", "--expired", "--all", "--yes"]).expect(0);
    says(&out, "more than 1m ago (--expired 1m)");
    // A job that does not exist is still 85.
    s.cli(&["release", "nosuch", "--yes"]).expect(85);

    // A schedule field out of range is named with crontab's range, not the parser's internals.
    let out = s
        .cli(&[
            "run",
            "--job",
            "sync",
            "--schedule",
            "0 25 * * *",
            "--",
            "true",
        ])
        .expect(2);
    says(&out, "hour 25 is out of range (0-23)");
    assert!(!text(&out).contains('^'), "{}", text(&out));
    // With what to do next, as every error (issue 62 item 5).
    says(
        &out,
        "hint: 5 fields (minute hour day-of-month month day-of-week)",
    );

    // An unreadable password file, and a flag a crontab's annotation does not take: each with
    // its hint.
    let out = s
        .cli(&["--password-file", "/nonexistent/pw", "list"])
        .expect(2);
    says(&out, "hint: give a file this user can read");
    let dir = tempfile::tempdir().unwrap();
    let crontab = dir.path().join("crontab");
    std::fs::write(&crontab, "# anarchon: --bogus 1\n* * * * * true\n").unwrap();
    let out = s
        .cli(&["cron", "--check", crontab.to_str().unwrap()])
        .expect(2);
    says(
        &out,
        "unexpected argument '--bogus' found in its `# anarchon:` line",
    );
    says(
        &out,
        "hint: a `# anarchon:` line takes `anarchon run`'s flags",
    );

    // A prefix without its separator: the jobs all start with ':'.
    let out = s.cli(&["--prefix", "cron", "list"]).expect(0);
    says(&out, "did you mean --prefix cron:");
    let out = s.cli(&["--prefix", "cron", "inspect", "sync"]).expect(85);
    says(&out, "did you mean --prefix cron:");

    // redis-cli's habits: -h is help here, -a and -u do not exist; never a silent exit 0.
    let port = s.port.to_string();
    for (args, says) in [
        (
            vec!["-h", "127.0.0.1", "-p", &port, "list"],
            "--host 127.0.0.1",
        ),
        (vec!["-a", "secret", "list"], "--password-file"),
        (vec!["-u", &s.url, "list"], "--redis URL"),
    ] {
        let out = s.cli(&args).expect(2);
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // redis-cli's password variable is taken.
    let locked = Server::start_with(&["--requirepass", "pa55"]);
    let out = locked
        .anarchon()
        .env("REDISCLI_AUTH", "pa55")
        .args(["list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // A command without `--`: the tip says where it goes.
    let out = s
        .cli(&["run", "--job", "x", "--slot", "now", "/bin/true"])
        .expect(2);
    assert!(stderr(&out).contains("goes after `--`"), "{}", stderr(&out));

    // Who paused, with $USER unset (cron, systemd): the account's name, not "unknown".
    let out = s
        .anarchon()
        .env_remove("USER")
        .args(["pause", "sync", "--for", "1m", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let by = json(&out)["paused_by"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!by.starts_with("unknown@") && by.contains('@'), "{by}");

    // A dry run that trims nothing says what keeps the runs.
    let out = s
        .cli(&["trim", "sync", "--keep", "1", "--dry-run"])
        .expect(0);
    says(&out, "younger than the protection");
}

/// `inspect --json`: every key the job has, its registry too; each run has the fields of a
/// `history` entry (duration, fence in format 2) and a stream ID only where a stream holds it.
#[test]
fn inspect_shows_the_registry_key_and_runs_shaped_as_history_entries() {
    let s = Server::start();
    s.cli(&["run", "--job", "shape", "--slot", "60000", "--", "true"])
        .expect(0);
    let out = s.cli(&["inspect", "shape", "--json"]).expect(0);
    let v = json(&out);
    let keys: Vec<&str> = v["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["key"].as_str().unwrap())
        .collect();
    assert!(keys.contains(&"{cron:shape}:registry"), "{keys:?}");
    let run = &v["runs"][0];
    // From the claim to the end, as `history` measures it.
    assert_eq!(
        run["duration_ms"].as_i64(),
        Some(run["ended_at"].as_i64().unwrap() - run["claimed_at"].as_i64().unwrap()),
        "{run}"
    );
    let history = json(&s.cli(&["history", "shape", "--json"]).expect(0));
    let entry = &history["entries"][0];
    for field in [
        "slot",
        "attempt",
        "status",
        "runner",
        "claimed_at",
        "ended_at",
        "duration_ms",
    ] {
        assert_eq!(run[field], entry[field], "{field}: {run} / {entry}");
    }
    // Read from the same :results member in every format: no stream entry ID, the same fence.
    assert!(run.get("id").is_none(), "{run}");
    assert_eq!(run["fence"], entry["fence"], "{run}");
    let text = s.cli(&["inspect", "shape"]).expect(0);
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("{cron:shape}:registry"),
        "{}",
        String::from_utf8_lossy(&text.stdout)
    );
}

/// One word for a run still marked running whose lease has ended, everywhere: `history` says
/// `expired` as `list` and `inspect` do, and `--status` tells the two apart.
#[test]
fn an_abandoned_claim_is_expired_in_history_as_in_list() {
    let s = Server::start();
    s.cli(&[
        "claim", "gone", "--slot", "60000", "--lease", "1s", "--runner", "dead:1",
    ])
    .expect(0);
    s.cli(&[
        "claim",
        "gone",
        "--slot",
        "120000",
        "--lease",
        "1h",
        "--runner",
        "alive:2",
        "--overlap",
        "allow",
    ])
    .expect(0);
    wait_for("the first lease to end", Duration::from_secs(10), || {
        json(&s.cli(&["list", "--active", "--json"]).expect(0))["active"]
            .as_array()
            .is_some_and(|a| a.iter().any(|r| r["state"] == "expired"))
    });
    let history = json(&s.cli(&["history", "gone", "--json"]).expect(0));
    let status_of = |slot: i64| {
        history["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["slot"] == slot)
            .map(|e| e["status"].as_str().unwrap().to_string())
    };
    assert_eq!(status_of(60000).as_deref(), Some("expired"), "{history}");
    assert_eq!(status_of(120000).as_deref(), Some("running"), "{history}");
    let only = |status: &str| {
        json(
            &s.cli(&["history", "gone", "--status", status, "--json"])
                .expect(0),
        )["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["slot"].as_i64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(only("expired"), vec![60000]);
    assert_eq!(only("running"), vec![120000]);
}

/// `inspect` shows the newest failure's last stderr lines, as `systemctl status` shows a unit's
/// last log lines, and points at `logs` for the rest.
#[test]
fn inspect_shows_the_last_lines_a_failure_left() {
    let s = Server::start();
    s.cli(&[
        "run",
        "--job",
        "etl",
        "--slot",
        "60000",
        "--",
        "sh",
        "-c",
        "for i in 1 2 3 4 5 6 7; do echo \"step $i\" >&2; done; exit 3",
    ])
    .expect(3);
    let out = s.cli(&["inspect", "etl"]).expect(0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("exit 3") && text.contains("`anarchon logs etl` for all"),
        "{text}"
    );
    for shown in ["step 3", "step 7"] {
        assert!(text.contains(shown), "{shown}: {text}");
    }
    assert!(
        !text.contains("step 2"),
        "more than the last 5 lines: {text}"
    );
}

/// `anarchon wait JOB` follows the run in progress to its end and exits with how it ended (the
/// command's exit code when it failed), as `gh run watch --exit-status`; the run's own file says
/// it had ended when `wait` returned. With nothing in progress it reports the newest ended run at
/// once; `--timeout` gives up with 124.
#[test]
fn wait_exits_with_how_the_run_ended() {
    let s = Server::start();
    let gate = s.dir.path().join("go");
    let ended = s.dir.path().join("ended");
    let script = format!(
        "while [ ! -e {} ]; do sleep 0.05; done; touch {}; exit 4",
        gate.display(),
        ended.display()
    );
    let mut holder = spawn_run(
        &s,
        &["--job", "w", "--slot", "60000", "--", "sh", "-c", &script],
    );
    wait_for_claim(&s, "w", "60000");
    // Still running: a short --timeout gives up.
    let out = s
        .cli(&["wait", "w", "--timeout", "300ms", "--interval", "100ms"])
        .expect(124);
    assert!(stderr(&out).contains("has not ended"), "{}", stderr(&out));
    let waiter = s
        .anarchon_process()
        .args(["wait", "w", "--interval", "100ms"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::fs::write(&gate, "").unwrap();
    let out = waiter.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(ended.exists(), "wait returned before the command ended");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("failed as attempt 1") && said.contains("(exit 4)"),
        "{said}"
    );
    assert_eq!(holder.wait().unwrap().code(), Some(4));
    // Nothing in progress: the newest ended run, at once; a finished one exits 0.
    s.cli(&["wait", "w"]).expect(4);
    s.cli(&["run", "--job", "w", "--slot", "120000", "--", "true"])
        .expect(0);
    let out = s.cli(&["wait", "w", "--json"]).expect(0);
    assert_eq!(json(&out)["run"]["status"], "finished");
    s.cli(&["wait", "nosuch"]).expect(85);
}

/// `run --keep-stdout` keeps the last 4 KiB of the command's stdout in its result, as stderr's
/// always is, still printing it as it comes; `logs` shows it. Without the flag nothing of stdout
/// is stored.
#[test]
fn keep_stdout_stores_a_bounded_tail_of_what_the_command_printed() {
    let s = Server::start();
    let script =
        "i=0; while [ $i -lt 600 ]; do echo \"row $i of the report\"; i=$((i+1)); done; echo done";
    let out = s
        .cli(&[
            "run",
            "--job",
            "rep",
            "--slot",
            "60000",
            "--keep-stdout",
            "--",
            "sh",
            "-c",
            script,
        ])
        .expect(0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("row 0 of the report\n"));
    let history = json(&s.cli(&["history", "rep", "--json"]).expect(0));
    let tail = history["entries"][0]["result"]["stdout_tail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        tail.len() <= 4096 && tail.ends_with("done\n"),
        "{} bytes",
        tail.len()
    );
    assert!(
        !tail.contains("row 0 of"),
        "the tail is bounded: {}",
        tail.len()
    );
    let logs = s.cli(&["logs", "rep", "--last", "1"]).expect(0);
    let text = String::from_utf8_lossy(&logs.stdout);
    assert!(
        text.contains("stdout (its last 4 KiB):") && text.contains("    done"),
        "{text}"
    );
    s.cli(&[
        "run", "--job", "rep", "--slot", "120000", "--", "echo", "hi",
    ])
    .expect(0);
    let history = json(&s.cli(&["history", "rep", "--json"]).expect(0));
    assert!(
        history["entries"][0]["result"].get("stdout_tail").is_none(),
        "{history}"
    );
}

/// `history --all` answers "what failed on host-b in the last hour" across jobs: every job's
/// attempts merged newest first with their job, filtered by --since, --status and --runner (a
/// runner name or its host).
#[test]
fn history_across_jobs_by_runner_status_and_time() {
    let s = Server::start();
    let now = json(
        &s.cli(&["claim", "probe", "--slot", "now", "--json"])
            .expect(0),
    )["slot"]
        .as_i64()
        .unwrap();
    let ran = |job: &str, slot: i64, runner: &str, code: &str| {
        s.cli(&[
            "run",
            "--job",
            job,
            "--slot",
            &slot.to_string(),
            "--runner",
            runner,
            "--",
            "sh",
            "-c",
            &format!("exit {code}"),
        ]);
    };
    ran("a", now - 7_200_000, "host-b:1", "1"); // two hours ago
    ran("a", now - 600_000, "host-b:2", "1");
    ran("b", now - 300_000, "host-b:3", "0");
    ran("c", now - 200_000, "host-a:4", "1");
    let entries = |args: &[&str]| {
        let mut all = vec!["history", "--all", "--json"];
        all.extend(args);
        json(&s.cli(&all).expect(0))["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["job"].as_str().unwrap().to_string(),
                    e["runner"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        entries(&["--status", "failed", "--runner", "host-b", "--since", "1h"]),
        vec![("a".to_string(), "host-b:2".to_string())]
    );
    assert_eq!(entries(&["--status", "failed"]).len(), 3);
    assert_eq!(entries(&["--runner", "host-a:4"]).len(), 1);
    // Newest first across jobs.
    let newest = entries(&["--last", "2", "--status", "failed"]);
    assert_eq!(newest[0].0, "c", "{newest:?}");
    let text = s.cli(&["history", "--all", "--since", "1h"]).expect(0);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.starts_with("JOB") && text.contains("host-a:4"),
        "{text}"
    );
}

/// A manual claim of an old slot does not move the job's health floor back before the store first
/// saw it: the slots between were never due, so the job is not suddenly missed.
#[test]
fn a_manual_claim_of_an_old_slot_leaves_health_alone() {
    let s = Server::start();
    s.cli(&[
        "run",
        "--job",
        "floor",
        "--schedule",
        "* * * * *",
        "--max-late",
        "1h",
        "--",
        "true",
    ])
    .expect(0);
    let health = |s: &Server| {
        json(&s.cli(&["list", "--json"]).expect(0))["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["job"] == "floor")
            .map(|j| j["health"]["state"].as_str().unwrap().to_string())
            .unwrap()
    };
    let before = health(&s);
    assert!(before == "ok" || before == "running", "{before}");
    // An operator claims and finishes a run of three hours ago by hand.
    let now = json(&s.cli(&["list", "--json"]).expect(0))["server_time"]
        .as_i64()
        .unwrap();
    let old_slot = (now - 3 * 3_600_000) / 60_000 * 60_000;
    let out = s.cli(&["claim", "floor", "--slot", &old_slot.to_string(), "--json"]);
    let won = json(&out);
    assert_eq!(won["outcome"], "won", "{won}");
    {
        s.cli(&[
            "finish",
            "floor",
            "--slot",
            &won["slot"].to_string(),
            "--token",
            won["token"].as_str().unwrap(),
            "--status",
            "ok",
        ])
        .expect(0);
    }
    assert_eq!(health(&s), before, "the old slot moved the health floor");
}

/// kubectl's habits: `-o name` prints job names alone, `--no-headers` drops the header row,
/// `-o json` is `--json`.
#[test]
fn output_formats_as_kubectl_users_type_them() {
    let s = Server::start();
    for job in ["beta", "alpha"] {
        s.cli(&["run", "--job", job, "--slot", "now", "--", "true"])
            .expect(0);
    }
    let names = s.cli(&["list", "-o", "name"]).expect(0);
    assert_eq!(String::from_utf8_lossy(&names.stdout), "alpha\nbeta\n");
    let table = s.cli(&["list"]).expect(0);
    let bare = s.cli(&["list", "--no-headers"]).expect(0);
    let (table, bare) = (
        String::from_utf8_lossy(&table.stdout).to_string(),
        String::from_utf8_lossy(&bare.stdout).to_string(),
    );
    assert!(table.starts_with("JOB"), "{table}");
    assert_eq!(bare.lines().count(), 2, "{bare}");
    assert!(bare.starts_with("alpha"), "{bare}");
    let json = s.cli(&["list", "-o", "json"]).expect(0).json();
    assert_eq!(json["jobs"].as_array().unwrap().len(), 2);
}

/// Small things an on-call engineer met (#36, item 5): `anarchon health` points to `check` (clap
/// suggested `heartbeat` and `help`), and `metrics --json` refuses rather than print Prometheus
/// text where a script expects JSON.
#[test]
fn health_points_to_check_and_metrics_refuses_json() {
    let s = Server::start();
    let out = s.cli(&["health"]);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(err.contains("anarchon check"), "{err}");
    assert!(!err.contains("heartbeat"), "{err}");
    let out = s.cli(&["metrics", "--json"]);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(out.stdout.is_empty(), "{}", out.dump());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("check --json"),
        "{}",
        out.dump()
    );
}
