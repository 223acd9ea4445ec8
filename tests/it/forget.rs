//! `anarchon forget JOB` (issue 48, item 1): a job taken out of every crontab alerts for ever
//! until it is retired; retired, monitoring expects no run of it, until a host runs it again.
//! Refused while a run is in progress, and without confirmation where nobody can confirm.

use std::time::Duration;

use crate::common::{Server, spawn_run, wait_for, wait_for_claim};

/// A job run every second by `run` hosts, then by none: `check` reads it missed.
fn a_job_nobody_runs_any_more(s: &Server, job: &str) {
    let out = s.cli(&[
        "run",
        "--job",
        job,
        "--schedule",
        "* * * * * *",
        "--max-late",
        "1h",
        "--",
        "true",
    ]);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    let ran = s.now_ms();
    wait_for("two slots and the grace", Duration::from_secs(10), || {
        s.now_ms() > ran + 2_000 + 1_000 + 500
    });
}

fn state_of(s: &Server, job: &str) -> (Option<i32>, serde_json::Value) {
    let out = s.cli(&["check", job, "--grace", "1s", "--json"]);
    (out.code(), out.json()["jobs"][0].clone())
}

#[test]
fn a_retired_job_is_expected_no_more_until_a_host_runs_it_again() {
    let s = Server::start();
    a_job_nobody_runs_any_more(&s, "nyc");
    let (code, before) = state_of(&s, "nyc");
    assert_eq!(code, Some(2), "{before}");
    assert!(
        before["summary"]
            .as_str()
            .unwrap()
            .contains("`anarchon forget nyc` retires it"),
        "{before}"
    );
    // Nobody to confirm (stdin not a terminal) and no --yes: refused, nothing written.
    let out = s.cli(&["forget", "nyc"]);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    let dry = s.cli(&["forget", "nyc", "--dry-run", "--drop-history", "--json"]);
    assert_eq!(dry.code(), Some(0), "{}", dry.dump());
    assert!(dry.json()["dropped_keys"].as_array().unwrap().len() >= 3);
    assert_eq!(state_of(&s, "nyc").0, Some(2), "a dry run changed nothing");

    let out = s.cli(&[
        "forget",
        "nyc",
        "--yes",
        "--reason",
        "moved, CHG-12",
        "--by",
        "ops",
        "--json",
    ]);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    assert_eq!(out.json()["dropped_keys"], serde_json::json!([]));
    let (code, after) = state_of(&s, "nyc");
    assert_eq!(code, Some(0), "{after}");
    assert_eq!(after["state"], "retired", "{after}");
    assert_eq!(after["health"]["retired"]["by"], "ops", "{after}");
    assert_eq!(after["health"]["missed_slots"], serde_json::json!([]));
    // The whole fleet's views agree, and the audit says who and why.
    let list = s.cli(&["list", "--json"]).json();
    assert!(list.to_string().contains("\"retired\""), "{list}");
    let metrics = String::from_utf8_lossy(&s.cli(&["metrics"]).stdout).into_owned();
    assert!(
        metrics.contains("anarchon_job_missed_slots{job=\"nyc\"} 0")
            && metrics.contains("anarchon_job_health{job=\"nyc\",state=\"retired\"} 1"),
        "{metrics}"
    );
    let events = s.cli(&["history", "nyc", "--events", "--json"]).json();
    assert!(events.to_string().contains("moved, CHG-12"), "{events}");
    // A host runs it again: it is back, judged as ever.
    a_job_nobody_runs_any_more(&s, "nyc");
    let (code, back) = state_of(&s, "nyc");
    assert_eq!(
        (code, &back["state"]),
        (Some(2), &"missed".into()),
        "{back}"
    );
}

#[test]
fn a_job_with_a_run_in_progress_is_not_retired() {
    let s = Server::start();
    let slot = (s.now_ms() / 1000 * 1000).to_string();
    let mut run = spawn_run(&s, &["--job", "busy", "--slot", &slot, "--", "sleep", "30"]);
    wait_for_claim(&s, "busy", &slot);
    let out = s.cli(&["forget", "busy", "--yes"]);
    assert_eq!(out.code(), Some(82), "{}", out.dump());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("anarchon release busy --slot"),
        "{}",
        out.dump()
    );
    // A refusal reads as one, as every error does (issue 62 item 5).
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with("error: busy has a run in progress"),
        "{}",
        out.dump()
    );
    let retired: Option<String> = s.cmd(&["HGET", "{cron:busy}:registry", "retired_at"]);
    assert_eq!(retired, None);
    let _ = run.kill();
    let _ = run.wait();
}

#[test]
fn drop_history_deletes_the_runs_and_keeps_the_record() {
    let s = Server::start();
    a_job_nobody_runs_any_more(&s, "old");
    let out = s.cli(&[
        "forget",
        "old",
        "--yes",
        "--drop-history",
        "--reason",
        "gone",
    ]);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    let keys: Vec<String> = s.cmd(&["KEYS", "{cron:old}*"]);
    let mut keys = keys;
    keys.sort();
    assert_eq!(
        keys,
        ["{cron:old}:events", "{cron:old}:registry"],
        "{}",
        out.dump()
    );
    // No job is left to judge (a registry alone is no job), and a check that names it says it
    // was retired, not that it is unknown (an alert for ever where one was named).
    let list = s.cli(&["list", "--json"]).json();
    assert!(!list.to_string().contains("\"old\""), "{list}");
    let check = s.cli(&["check", "old", "--json"]);
    let v = check.json();
    assert_eq!(check.code(), Some(0), "{v}");
    assert_eq!(v["jobs"][0]["state"], "retired", "{v}");
}

/// A crontab line for job `job` every second, touching `file`.
fn every_second(job: &str, file: &std::path::Path) -> String {
    format!(
        "# anarchon: --job {job}\n* * * * * * touch {}\n",
        file.display()
    )
}

/// Item 1's other half: a job removed from the crontab of a service (`cron --service`) is no
/// longer expected once no live replica of the service has it: it reads retired, by the service,
/// with no operator's word; a job still in the crontab reads as before. While the service has no
/// live replica (scaled to zero, or down), its jobs are judged as any: a service that is down
/// alerts, the removed job too.
#[test]
fn a_job_removed_from_a_services_crontab_is_retired_once_no_live_replica_has_it() {
    use crate::common::replica::Replica;
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crontab");
    let (keep, gone) = (dir.path().join("keep.ran"), dir.path().join("gone.ran"));
    let both = format!(
        "{}{}",
        every_second("keep", &keep),
        every_second("gone", &gone)
    );
    std::fs::write(&file, &both).unwrap();
    let service = ["--service", "billing-svc"];
    let mut replicas: Vec<Replica> = ["r1", "r2"]
        .iter()
        .map(|name| Replica::start(&s.url, &file, dir.path(), name, &service))
        .collect();
    wait_for("both jobs to run", Duration::from_secs(15), || {
        keep.exists() && gone.exists()
    });
    assert_ne!(state_of(&s, "gone").1["state"], "retired");

    // `gone` taken out of the crontab: every replica reloads it.
    let next = file.with_extension("next");
    std::fs::write(&next, every_second("keep", &keep)).unwrap();
    std::fs::rename(&next, &file).unwrap();
    wait_for("gone to read retired", Duration::from_secs(20), || {
        state_of(&s, "gone").1["state"] == "retired"
    });
    let (code, gone_now) = state_of(&s, "gone");
    assert_eq!(code, Some(0), "{gone_now}");
    let said = gone_now.to_string();
    assert!(
        said.contains("removed from the crontab of service billing-svc"),
        "who and why: {said}"
    );
    assert_eq!(gone_now["health"]["retired"]["removed"], true, "{gone_now}");
    // Said as what it is, not as an operator's act of a moment ago.
    let line = String::from_utf8_lossy(&s.cli(&["check", "gone"]).stdout).into_owned();
    assert!(
        line.contains("retired: removed from the crontab of service billing-svc")
            && !line.contains("ago ("),
        "{line}"
    );
    let (_, keep_now) = state_of(&s, "keep");
    assert_ne!(keep_now["state"], "retired", "{keep_now}");

    // The whole service stopped: nobody says the job is gone from it any more; judged as any.
    for r in &mut replicas {
        assert_eq!(r.stop(Duration::from_secs(30)), Some(0), "{}", r.stderr());
    }
    let (_, after) = state_of(&s, "gone");
    assert_ne!(after["state"], "retired", "{after}");
}

/// A job renamed in a service's crontab (`--job NEW --was OLD`) reads renamed under its old name
/// while the service's live replicas run it under the new one, never "retired: removed from the
/// crontab" (issue 62 item 5: it read renamed only once every replica had stopped).
#[test]
fn a_renamed_job_of_a_service_reads_renamed_not_removed() {
    use crate::common::replica::Replica;
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crontab");
    let (old_ran, new_ran) = (dir.path().join("old.ran"), dir.path().join("new.ran"));
    std::fs::write(&file, every_second("sync", &old_ran)).unwrap();
    let service = ["--service", "billing-svc"];
    let mut first = Replica::start(&s.url, &file, dir.path(), "r1", &service);
    wait_for("the old name to run", Duration::from_secs(15), || {
        old_ran.exists()
    });
    // The rolling deploy: the new crontab names the job anew, and the old replica goes.
    let renamed = dir.path().join("crontab.new");
    std::fs::write(
        &renamed,
        format!(
            "# anarchon: --job sync-v2 --was sync\n* * * * * * touch {}\n",
            new_ran.display()
        ),
    )
    .unwrap();
    let second = Replica::start(&s.url, &renamed, dir.path(), "r2", &service);
    assert_eq!(
        first.stop(Duration::from_secs(30)),
        Some(0),
        "{}",
        first.stderr()
    );
    wait_for("the new name to run", Duration::from_secs(15), || {
        new_ran.exists()
    });
    wait_for(
        "the old name to read renamed",
        Duration::from_secs(20),
        || state_of(&s, "sync").1["state"] == "renamed",
    );
    let (_, old_now) = state_of(&s, "sync");
    assert!(
        !old_now.to_string().contains("removed from the crontab"),
        "{old_now}"
    );
    drop(second);
}
