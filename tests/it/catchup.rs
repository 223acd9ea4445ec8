//! `run --catch-up` after an outage, with real processes and a real server: `--catch-up-policy all`
//! runs every missed run once (at most `--catch-up-max`, the newest), `latest` runs only the newest
//! due run and records the others as skipped; a first deployment catches up nothing from before
//! the store first saw the job. What ran is what the command itself wrote down.

use crate::common::{Server, json};

const FIVE_MIN: i64 = 300_000;

/// A job whose first claim reached the store three hours ago and whose hosts were all down since:
/// returns the current slot, the missed ones in the last two hours (a `--catch-up 2h` window,
/// oldest first), and those before it: the hosts were down longer than the window, so `run`
/// records them skipped, "older than --catch-up" (oldest first).
/// Waits until the server's clock is a few seconds away from a */5 fire time: a test computes the
/// slots it expects from a clock reading, the run its own a moment later; within seconds of a fire
/// time the two would see different windows (failed at 22:55:00 once).
fn away_from_a_fire_time(s: &Server) {
    crate::common::wait_for(
        "a moment away from a */5 fire time",
        std::time::Duration::from_secs(15),
        || (5_000..FIVE_MIN - 5_000).contains(&s.now_ms().rem_euclid(FIVE_MIN)),
    );
}

fn after_an_outage(s: &Server, job: &str) -> (i64, Vec<i64>, Vec<i64>) {
    away_from_a_fire_time(s);
    let now = s.now_ms();
    let _: () = s.cmd(&[
        "HSET",
        &format!("{{cron:{job}}}:job"),
        "first_seen",
        &(now - 3 * 3_600_000).to_string(),
    ]);
    let current = now - now.rem_euclid(FIVE_MIN);
    let missed = (1..=24)
        .rev()
        .map(|i| current - i * FIVE_MIN)
        .filter(|slot| *slot >= now - 2 * 3_600_000)
        .collect();
    let before = (1..=40)
        .rev()
        .map(|i| current - i * FIVE_MIN)
        .filter(|slot| *slot > now - 3 * 3_600_000 && *slot < now - 2 * 3_600_000)
        .collect();
    (current, missed, before)
}

/// `before`, then `then`: every slot recorded skipped, oldest first.
fn and(before: &[i64], then: &[i64]) -> Vec<i64> {
    before.iter().chain(then).copied().collect()
}

fn run_args<'a>(job: &'a str, log: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--job",
        job,
        "--schedule",
        "*/5 * * * *",
        "--catch-up",
        "2h",
        "--max-late",
        "5m",
        "--json",
    ];
    args.extend_from_slice(extra);
    args.extend(["--shell", "--", log]);
    args
}

fn ran(s: &Server, file: &str) -> Vec<i64> {
    std::fs::read_to_string(s.dir.path().join(file))
        .unwrap_or_default()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

fn log_line(s: &Server, file: &str) -> String {
    format!(
        "echo $ANARCHON_SLOT >> {}",
        s.dir.path().join(file).display()
    )
}

fn skipped(s: &Server, job: &str) -> Vec<i64> {
    s.results(job)
        .into_iter()
        .filter(|r| r.status == "skipped")
        .map(|r| r.slot)
        .collect()
}

#[test]
fn policy_all_runs_each_missed_run_once_oldest_first() {
    let s = Server::start();
    let (current, missed, before) = after_an_outage(&s, "all");
    assert_eq!(missed.len(), 23);
    let line = log_line(&s, "all.log");
    let out = s
        .cli(&run_args("all", &line, &["--catch-up-max", "30"]))
        .expect(0);
    let mut expected = missed.clone();
    expected.push(current);
    assert_eq!(ran(&s, "all.log"), expected);
    assert_eq!(out.json()["catch_up"].as_array().unwrap().len(), 23);
    // The hosts were down for three hours, the window is two: the hour before it is recorded.
    assert_eq!(skipped(&s, "all"), before);
    assert!(!before.is_empty());
    let v = out.json();
    assert!(
        v["skipped"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("older than --catch-up 2h"),
        "{v}"
    );

    // Again: every run is claimed, nothing runs twice.
    s.cli(&run_args("all", &line, &["--catch-up-max", "30"]));
    assert_eq!(ran(&s, "all.log"), expected);
}

#[test]
fn policy_all_runs_at_most_catch_up_max_and_records_the_older_as_skipped() {
    let s = Server::start();
    let (current, missed, before) = after_an_outage(&s, "capped");
    let line = log_line(&s, "capped.log");
    // The default --catch-up-max is 10: the newest 10 missed runs, then the current one.
    let out = s.cli(&run_args("capped", &line, &[])).expect(0);
    let mut expected = missed[13..].to_vec();
    expected.push(current);
    assert_eq!(ran(&s, "capped.log"), expected);
    assert_eq!(skipped(&s, "capped"), and(&before, &missed[..13]));
    let v = out.json();
    assert_eq!(v["skipped"].as_array().unwrap().len(), before.len() + 13);
    assert!(
        v["skipped"][before.len()]["reason"]
            .as_str()
            .unwrap()
            .contains("--catch-up-max 10"),
        "{v}"
    );
    assert_eq!(v["skipped"][before.len()]["recorded"], true);
    // A skipped run is never run later, by any policy.
    s.cli(&run_args("capped", &line, &["--catch-up-max", "100"]));
    assert_eq!(ran(&s, "capped.log"), expected);
}

#[test]
fn policy_latest_runs_one_and_records_the_others_as_skipped() {
    let s = Server::start();
    let (current, missed, before) = after_an_outage(&s, "latest");
    let line = log_line(&s, "latest.log");
    let out = s
        .cli(&run_args("latest", &line, &["--catch-up-policy", "latest"]))
        .expect(0);
    assert_eq!(ran(&s, "latest.log"), [current]);
    assert_eq!(skipped(&s, "latest"), and(&before, &missed));
    assert_eq!(skipped(&s, "latest").len(), before.len() + 23);
    assert!(out.json()["catch_up"].as_array().unwrap().is_empty());

    // history shows them; a claim of one is answered done, skipped, and runs nothing.
    let history = s
        .cli(&["history", "latest", "--status", "skipped", "--json"])
        .expect(0);
    assert_eq!(
        history.json()["entries"].as_array().unwrap().len(),
        before.len() + 23
    );
    let out = s
        .cli(&[
            "run",
            "--job",
            "latest",
            "--slot",
            &missed[5].to_string(),
            "--json",
            "--shell",
            "--",
            &line,
        ])
        .expect(81);
    // Format 1 keeps a skipped slot's state as a final `interrupted`, the status every format 1
    // reader knows (its :results member says skipped); format 2 answers from the member.
    let status = if Server::test_store_format() == 1 {
        "interrupted"
    } else {
        "skipped"
    };
    assert_eq!(json(&out)["status"], status);
    assert_eq!(ran(&s, "latest.log"), [current]);
}

#[test]
fn policy_latest_runs_the_newest_due_run_when_it_is_the_one_missed() {
    let s = Server::start();
    let (current, missed, before) = after_an_outage(&s, "late");
    let line = log_line(&s, "late.log");
    // --max-late 1s: the current slot is late, so it is the newest missed run, and it runs.
    let mut args = run_args("late", &line, &["--catch-up-policy", "latest"]);
    let i = args.iter().position(|a| *a == "5m").unwrap();
    args[i] = "1s";
    // (Unless this runs within a second of a slot: then it is simply on time.)
    s.cli(&args).expect(0);
    assert_eq!(ran(&s, "late.log"), [current]);
    assert_eq!(skipped(&s, "late"), and(&before, &missed));
}

#[test]
fn a_first_deployment_catches_up_nothing_from_before_it() {
    let s = Server::start();
    away_from_a_fire_time(&s);
    let now = s.now_ms();
    let current = now - now.rem_euclid(FIVE_MIN);
    let line = log_line(&s, "new.log");
    for policy in ["all", "latest"] {
        let job = format!("new-{policy}");
        let out = s
            .cli(&run_args(&job, &line, &["--catch-up-policy", policy]))
            .expect(0);
        let v = out.json();
        assert!(v["catch_up"].as_array().unwrap().is_empty(), "{v}");
        assert!(v["skipped"].as_array().unwrap().is_empty(), "{v}");
        assert!(skipped(&s, &job).is_empty());
        // The store now knows when it first saw the job.
        let first: i64 = s.cmd(&["HGET", &format!("{{cron:{job}}}:job"), "first_seen"]);
        assert!(first >= now && first < now + 60_000, "{first} vs {now}");
    }
    assert_eq!(ran(&s, "new.log"), [current, current]);
}

#[test]
fn racing_hosts_with_either_policy_run_each_missed_run_once() {
    let s = Server::start();
    let (current, missed, before) = after_an_outage(&s, "race");
    let line = log_line(&s, "race.log");
    let mut children = Vec::new();
    for host in 0..6 {
        let policy = if host % 2 == 0 { "all" } else { "latest" };
        let args = run_args(
            "race",
            &line,
            &["--catch-up-policy", policy, "--catch-up-max", "30"],
        );
        children.push(
            s.anarchon_process()
                .args(&args)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap(),
        );
    }
    for mut c in children {
        c.wait().unwrap();
    }
    let ran = ran(&s, "race.log");
    let mut unique = ran.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ran.len(), "a run ran twice: {ran:?}");
    assert!(ran.contains(&current));
    // Before the window: recorded skipped by whichever host came first, never run.
    for slot in &before {
        assert!(!ran.contains(slot), "{slot} ran");
    }
    // Every missed run either ran once or is recorded as skipped, never both.
    let skipped = skipped(&s, "race");
    assert!(
        before.iter().all(|slot| skipped.contains(slot)),
        "{skipped:?}"
    );
    for slot in &missed {
        assert!(
            ran.contains(slot) != skipped.contains(slot),
            "slot {slot}: ran {} skipped {}",
            ran.contains(slot),
            skipped.contains(slot)
        );
    }
}

/// What each run of `fleet.log` did: (slot, started ns, ended ns), in the order they started.
fn fleet_runs(s: &Server, file: &str) -> Vec<(i64, u128, u128)> {
    let text = std::fs::read_to_string(s.dir.path().join(file)).unwrap_or_default();
    let mut starts = Vec::new();
    let mut ends = std::collections::HashMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (slot, at): (i64, u128) = (f[0].parse().unwrap(), f[1].parse().unwrap());
        if f[2] == "start" {
            starts.push((slot, at));
        } else {
            ends.insert(slot, at);
        }
    }
    starts
        .into_iter()
        .map(|(slot, at)| (slot, at, ends.get(&slot).copied().unwrap_or(u128::MAX)))
        .collect()
}

/// Three hosts run the same crontab line after an outage (issue #35): together they run exactly
/// the missed runs one host alone would run, each once, one at a time (`--overlap forbid`), and
/// skip exactly what it would skip; the others stand by instead of recording newer runs skipped.
#[test]
fn a_fleet_runs_the_missed_runs_one_host_would_each_once() {
    for policy in ["all", "latest"] {
        let s = Server::start();
        let job = format!("fleet-{policy}");
        let (current, missed, before) = after_an_outage(&s, &job);
        let log = s.dir.path().join("fleet.log");
        let line = format!(
            "echo \"$ANARCHON_SLOT $(date +%s%N) start\" >> {log}; sleep 0.2; echo \"$ANARCHON_SLOT $(date +%s%N) end\" >> {log}",
            log = log.display()
        );
        let args = run_args(&job, &line, &["--catch-up-policy", policy]);
        let hosts: Vec<_> = (0..3)
            .map(|h| {
                s.anarchon_process()
                    .args(&args)
                    .env("ANARCHON_RUNNER", format!("host{h}"))
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut h in hosts {
            h.wait().unwrap();
        }
        // One host alone: the newest --catch-up-max (10) missed runs under `all`, none under
        // `latest`, then the current one; the older ones recorded skipped.
        let (to_run, to_skip) = match policy {
            "all" => (missed[13..].to_vec(), and(&before, &missed[..13])),
            _ => (Vec::new(), and(&before, &missed)),
        };
        let mut expected = to_run;
        expected.push(current);
        let runs = fleet_runs(&s, "fleet.log");
        let slots: Vec<i64> = runs.iter().map(|r| r.0).collect();
        assert_eq!(slots, expected, "{policy}: ran {runs:?}");
        let mut recorded_skipped = skipped(&s, &job);
        recorded_skipped.sort();
        assert_eq!(recorded_skipped, to_skip, "{policy}");
        for pair in runs.windows(2) {
            assert!(
                pair[0].2 <= pair[1].1,
                "{policy}: two runs at once under --overlap forbid: {pair:?}"
            );
        }
        // Every run ended finished, and monitoring has nothing missed to report.
        let check = s.cli(&["check", &job, "--json"]);
        let v = check.json();
        assert_eq!(check.code(), Some(0), "{policy}: {v}");
    }
}
