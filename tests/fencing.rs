//! Fencing tokens (store format 2): every won claim of a job gets a number strictly greater than
//! every earlier won claim's, assigned in the claim script, kept with the attempt, and given to
//! the command as ANARCHON_FENCE.

mod common;

use common::{Server, json, stderr};

fn claim(s: &Server, job: &str, slot: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["claim", job, "--slot", slot, "--json", "--overlap", "allow"];
    args.extend_from_slice(extra);
    let out = s.cli(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)
}

#[test]
fn every_won_claim_gets_a_greater_fence_and_the_command_sees_it() {
    let s = Server::start();
    if Server::test_store_format() == 1 {
        common::skip("format 1 stores have no place for a fencing token");
        return;
    }
    let mut seen = Vec::new();
    // First attempts of scheduled slots, in any order of slots.
    for slot in ["180000", "60000", "120000"] {
        seen.push(claim(&s, "f", slot, &[])["fence"].as_i64().unwrap());
    }
    // A takeover after an expired lease.
    let held = claim(&s, "f", "240000", &["--lease", "200ms"]);
    seen.push(held["fence"].as_i64().unwrap());
    common::wait_for_lease_end(&s, "f", "240000");
    let taken = claim(&s, "f", "240000", &[]);
    assert_eq!(taken["attempt"], 2);
    seen.push(taken["fence"].as_i64().unwrap());
    // A manual run, and commands run by `run`, which see it as ANARCHON_FENCE.
    seen.push(
        json(&s.cli(&["run-now", "f", "--json", "--overlap", "allow"]))["fence"]
            .as_i64()
            .unwrap(),
    );
    let file = s.dir.path().join("fence.txt");
    for slot in ["300000", "360000"] {
        let line = format!("echo $ANARCHON_FENCE >> {}", file.display());
        let out = s.cli(&[
            "run",
            "--job",
            "f",
            "--slot",
            slot,
            "--overlap",
            "allow",
            "--shell",
            "--",
            &line,
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let from_commands: Vec<i64> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    seen.extend(&from_commands);
    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "not strictly increasing: {seen:?}"
    );

    // Kept with the attempt: history shows each ended attempt's fence.
    let v = json(&s.cli(&["history", "f", "--json"]));
    let fences: Vec<i64> = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["fence"].as_i64())
        .collect();
    assert!(fences.contains(&from_commands[1]), "{fences:?}");
}
