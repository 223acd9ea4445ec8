//! `run --wait-replicas`: a real primary and a real replica on loopback. The command itself checks
//! that the replica holds its claim when it starts; a stopped replica (SIGSTOP: connected, never
//! acknowledging) makes the wait time out, and `--if-unreplicated` decides.

use crate::common;
use std::time::Duration;

use crate::common::{Server, json, stderr};

/// A primary and one replica whose link is up.
fn primary_and_replica() -> (Server, Server) {
    let primary = Server::start();
    let port = primary.port.to_string();
    let replica = Server::start_with(&["--replicaof", "127.0.0.1", &port]);
    common::wait_for("the replica's link", Duration::from_secs(20), || {
        replica
            .info_field("replication", "master_link_status")
            .as_deref()
            == Some("up")
    });
    (primary, replica)
}

/// `run` of job `job` at a fixed slot whose command records whether the replica holds the run
/// in progress (`:live`, format 2; `:state`, format 1) when it starts.
fn run(primary: &Server, replica: &Server, job: &str, extra: &[&str]) -> std::process::Output {
    let seen = primary.dir.path().join(format!("{job}.seen"));
    let check = format!(
        "redis-cli -p {} EXISTS '{{cron:{job}}}:live' '{{cron:{job}}}:active' > {}",
        replica.port,
        seen.display()
    );
    primary
        .anarchon()
        .args(["run", "--job", job, "--slot", "1796220300000", "--json"])
        .args(extra)
        .args(["--shell", "--", &check])
        .output()
        .unwrap()
}

fn seen(primary: &Server, job: &str) -> Option<String> {
    std::fs::read_to_string(primary.dir.path().join(format!("{job}.seen")))
        .ok()
        .map(|t| t.trim().to_string())
}

fn have_redis_cli() -> bool {
    if common::have("redis-cli") {
        return true;
    }
    assert!(
        !crate::common::nothing_may_be_skipped(),
        ".ci/run must install redis-cli"
    );
    false
}

#[test]
fn the_command_starts_only_once_the_replica_holds_the_claim() {
    if !have_redis_cli() {
        return;
    }
    let (primary, replica) = primary_and_replica();
    let out = run(&primary, &replica, "acked", &["--wait-replicas", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The replica held the run in progress when the command looked.
    assert_eq!(seen(&primary, "acked").as_deref(), Some("1"));
    // And the result was acknowledged before `run` exited: the replica has it.
    let members: i64 = replica.cmd(&["ZCARD", "{cron:acked}:results"]);
    assert_eq!(members, 1);
    assert!(!stderr(&out).contains("replica"), "{}", stderr(&out));
}

#[test]
fn a_stopped_replica_runs_anyway_with_a_warning_or_skips() {
    if !have_redis_cli() {
        return;
    }
    let (primary, replica) = primary_and_replica();
    replica.pause(true);
    // Default: run anyway, and say so.
    let out = primary
        .anarchon()
        .args(["run", "--job", "anyway", "--slot", "1796220300000"])
        .args([
            "--wait-replicas",
            "1",
            "--wait-timeout",
            "300ms",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains("0 of 1 replica(s) acknowledged the claim within 300ms")
            && text.contains("running anyway"),
        "{text}"
    );

    // --if-unreplicated skip: the command never starts; the run ends failed, with the reason.
    let out = run(
        &primary,
        &replica,
        "careful",
        &[
            "--wait-replicas",
            "1",
            "--wait-timeout",
            "300ms",
            "--if-unreplicated",
            "skip",
        ],
    );
    assert_eq!(out.status.code(), Some(88), "{}", stderr(&out));
    assert_eq!(json(&out)["outcome"], "unreplicated");
    assert_eq!(seen(&primary, "careful"), None, "the command ran");
    let results = primary.results("careful");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].status, "failed");
    assert!(
        results[0].result.to_string().contains("not started"),
        "{:?}",
        results[0].result
    );
    // No other host runs it later either.
    let again = run(&primary, &replica, "careful", &[]);
    assert_eq!(again.status.code(), Some(81), "{}", stderr(&again));
    assert_eq!(seen(&primary, "careful"), None);
    replica.pause(false);
}

#[test]
fn wait_replicas_is_checked_before_anything_runs() {
    let s = Server::start();
    for extra in [
        vec!["--wait-replicas", "1", "--wait-timeout", "20s"],
        vec!["--wait-replicas", "1", "--wait-timeout", "0s"],
        vec!["--wait-timeout", "1s"],
        vec!["--if-unreplicated", "skip"],
    ] {
        let out = s
            .anarchon()
            .args(["run", "--job", "x", "--slot", "now"])
            .args(&extra)
            .args(["--", "true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
    }
    assert!(s.results("x").is_empty());
}
