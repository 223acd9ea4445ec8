//! Every command's `--json` output has a JSON Schema in `docs/schemas/` (one per command and
//! shape), generated from the types that serialize it. Here: the committed files are current
//! (`UPDATE_GENERATED=1` rewrites them), and real output of every command, run against a real
//! server with runs in every state, validates against its schema, with no field the schema does
//! not name.

use crate::common;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::common::Server;
use serde_json::Value;

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schemas")
}

fn file_of(name: &str) -> PathBuf {
    schema_dir().join(format!("{name}.schema.json"))
}

#[test]
fn the_committed_schemas_are_current() {
    let schemas = anarchon::commands::json_schemas();
    let update = std::env::var_os("UPDATE_GENERATED").is_some();
    if update {
        std::fs::create_dir_all(schema_dir()).unwrap();
    }
    let mut stale = Vec::new();
    for (name, schema) in &schemas {
        let text = serde_json::to_string_pretty(schema.as_value()).unwrap() + "\n";
        let path = file_of(name);
        if update {
            std::fs::write(&path, &text).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "out of date (run the tests with UPDATE_GENERATED=1): {stale:?}"
    );
    // No file for a shape that is gone.
    let names: Vec<String> = schemas
        .iter()
        .map(|(n, _)| format!("{n}.schema.json"))
        .collect();
    for entry in std::fs::read_dir(schema_dir()).unwrap() {
        let file = entry.unwrap().file_name().to_string_lossy().to_string();
        assert!(names.contains(&file), "docs/schemas/{file} is no command's");
    }
}

/// Every time the documents give in ms has an RFC 3339 twin beside it, as the README promises:
/// `<name>_time` (`server_time_rfc3339` for `server_time`).
#[test]
fn times_in_ms_have_their_rfc3339_twins() {
    fn walk(v: &Value, schema: &str, missing: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                if let Some(Value::Object(props)) = map.get("properties") {
                    for name in props.keys() {
                        let twin = match name.as_str() {
                            "server_time" => "server_time_rfc3339".to_string(),
                            "claimed_at" | "ended_at" | "last_result_at" | "slot" | "lease_end"
                            | "last_slot" => format!("{name}_time"),
                            _ => continue,
                        };
                        if !props.contains_key(&twin) {
                            missing.push(format!("{schema}: {name} without {twin}"));
                        }
                    }
                }
                map.values().for_each(|v| walk(v, schema, missing));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, schema, missing)),
            _ => {}
        }
    }
    let mut missing = Vec::new();
    for (name, schema) in anarchon::commands::json_schemas() {
        walk(schema.as_value(), name, &mut missing);
    }
    assert!(missing.is_empty(), "{missing:#?}");
}

/// The schema, strict: every object that names its properties allows no others, so a field the
/// output has and the schema does not is an error (schemars leaves them open).
fn strict(mut schema: Value) -> Value {
    fn close(v: &mut Value) {
        match v {
            Value::Object(map) => {
                if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                    map.insert("additionalProperties".into(), Value::Bool(false));
                }
                map.values_mut().for_each(close);
            }
            Value::Array(items) => items.iter_mut().for_each(close),
            _ => {}
        }
    }
    close(&mut schema);
    schema
}

fn assert_valid(name: &str, doc: &Value) {
    let schema = anarchon::commands::json_schemas()
        .into_iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no schema {name}"))
        .1;
    let validator = jsonschema::validator_for(&strict(schema.to_value())).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{name}: {errors:#?}\n{}",
        serde_json::to_string_pretty(doc).unwrap()
    );
}

/// Runs `anarchon ARGS --json` and validates its one document against `schema`.
fn check(s: &Server, schema: &str, args: &[&str]) -> Value {
    let out = s.cli(&[&["--json"], args].concat());
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{schema}: not one JSON document ({e}): {}", out.dump()));
    assert_valid(schema, &doc);
    doc
}

#[test]
fn every_commands_json_output_matches_its_schema() {
    let s = Server::start();
    let slot = |minutes_ago: i64| (s.now_ms() / 60_000 * 60_000 - minutes_ago * 60_000).to_string();
    // Runs in every state: finished, failed (with stderr), skipped, in progress, paused.
    let (done, failed, held) = (slot(5), slot(4), slot(2));
    check(
        &s,
        "run",
        &["run", "--job", "sj", "--slot", &done, "--", "true"],
    );
    check(
        &s,
        "run",
        &[
            "run",
            "--job",
            "sj",
            "--slot",
            &failed,
            "--keep-stdout",
            "--shell",
            "--",
            "echo out; echo err >&2; exit 3",
        ],
    );
    let claimed = check(
        &s,
        "claim",
        &[
            "claim", "sj", "--slot", &held, "--runner", "h:1", "--lease", "5m",
        ],
    );
    let token = claimed["token"].as_str().unwrap().to_string();
    check(
        &s,
        "heartbeat",
        &["heartbeat", "sj", "--slot", &held, "--token", &token],
    );
    // A newer slot refused by the held one: recorded skipped.
    check(
        &s,
        "run",
        &[
            "run",
            "--job",
            "sj",
            "--slot",
            &slot(1),
            "--max-late",
            "1h",
            "--",
            "true",
        ],
    );
    check(&s, "run-now", &["run-now", "other", "--", "true"]);
    // Without a command and no replica running the job: refused (89), the document says why.
    check(&s, "run-now-on-replica", &["run-now", "other"]);
    check(
        &s,
        "run-backfill",
        &[
            "run",
            "--job",
            "bf",
            "--schedule",
            "* * * * *",
            "--backfill",
            "3m..now",
            "--",
            "true",
        ],
    );
    check(
        &s,
        "run-backfill",
        &[
            "run",
            "--job",
            "bf",
            "--schedule",
            "* * * * *",
            "--backfill",
            "5m..now",
            "--dry-run",
        ],
    );

    let crontab = s.dir.path().join("crontab");
    std::fs::write(
        &crontab,
        "# anarchon: --job c1\n*/5 * * * * true\n@hourly /bin/true\n",
    )
    .unwrap();
    check(
        &s,
        "cron-check",
        &["cron", "--check", crontab.to_str().unwrap()],
    );
    check(&s, "list", &["list"]);
    check(&s, "list-active", &["list", "--active"]);
    check(&s, "inspect", &["inspect", "sj"]);
    check(
        &s,
        "run",
        &[
            "run",
            "--job",
            "nx",
            "--schedule",
            "*/5 * * * *",
            "--tz",
            "Europe/Berlin",
            "--jitter",
            "10s",
            "--catch-up",
            "1h",
            "--max-late",
            "5m",
            "--",
            "true",
        ],
    );
    check(&s, "next", &["next", "nx", "--after-outage", "3h"]);
    check(
        &s,
        "next",
        &[
            "next",
            "--schedule",
            "30 2 * * *",
            "--tz",
            "Europe/Berlin",
            "--jitter",
            "1m",
            "--from",
            "2026-03-27T00:00:00Z",
            "--after-outage",
            "2d",
            "--catch-up",
            "1d",
        ],
    );
    check(&s, "history", &["history", "sj", "-v"]);
    check(&s, "history-all", &["history", "--all", "--since", "1h"]);
    // An operator's action among the run events.
    s.anarchon()
        .args(["pause", "sj", "--for", "1m", "--reason", "schema"])
        .assert()
        .success();
    check(&s, "history-events", &["history", "sj", "--events"]);
    s.anarchon().args(["resume", "sj"]).assert().success();
    check(&s, "timeline", &["timeline", "sj", "--since", "1h"]);
    check(&s, "timeline", &["timeline", "--all"]);
    check(&s, "logs", &["logs", "sj"]);
    check(&s, "check", &["check", "sj"]);
    check(&s, "doctor", &["doctor"]);
    check(&s, "trim", &["trim", "sj", "--dry-run"]);
    check(&s, "wait", &["wait", "sj", "--slot", &failed]);
    check(&s, "pause", &["pause", "other", "--reason", "schema"]);
    check(&s, "resume", &["resume", "other"]);
    check(
        &s,
        "finish",
        &[
            "finish", "sj", "--slot", &held, "--token", &token, "--status", "ok",
        ],
    );
    let claimed = check(
        &s,
        "claim",
        &["claim", "sj", "--slot", "now", "--lease", "5m"],
    );
    assert_eq!(claimed["outcome"], "won");
    check(&s, "release", &["release", "sj", "--yes", "--force"]);
    check(&s, "migrate", &["migrate", "--dry-run"]);

    // history --follow: one line per entry, each a document of its own.
    let mut follow = s
        .anarchon_process()
        .args(["history", "sj", "--follow", "--since", "1h", "--json"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(follow.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = follow.kill();
    let _ = follow.wait();
    assert_valid("history-follow", &serde_json::from_str(&line).unwrap());

    // logs -f: a line per line of output, then how the run ended.
    let out = s.cli(&[
        "run",
        "--job",
        "lf",
        "--slot",
        "60000",
        "--live-output",
        "--",
        "sh",
        "-c",
        "echo one; echo two >&2",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let out = s.cli(&["logs", "lf", "-f", "--slot", "60000", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    for line in &lines[..2] {
        assert_valid("logs-follow", line);
    }
    assert_valid("logs-follow-end", &lines[2]);

    // check's UNKNOWN (the server cannot be reached) has the same shape.
    let out = common::anarchon()
        .args(["check", "sj", "--json"])
        .env(
            "ANARCHON_REDIS_URL",
            format!("redis://127.0.0.1:{}", common::dead_port()),
        )
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["status"], "UNKNOWN");
    assert_valid("check", &doc);
}

/// The daemon's JSON log (`cron --log-format json -v`) validates, record by record, against
/// docs/schemas/cron-log.schema.json: a run that finished, one that failed with its exit code,
/// the command's own lines, the routine notes of debug, a reload's error.
#[test]
fn the_daemons_json_log_matches_its_schema() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crontab");
    let jobs = "# anarchon: --job fine\n*/1 * * * * * echo fine\n# anarchon: --job sour\n*/1 * * * * * echo sour >&2; exit 3\n";
    std::fs::write(&file, jobs).unwrap();
    let args = ["--log-format", "json", "-v"];
    let replicas: Vec<common::replica::Replica> = ["a", "b"]
        .iter()
        .map(|name| common::replica::Replica::start(&s.url, &file, dir.path(), name, &args))
        .collect();
    let all = || {
        replicas
            .iter()
            .map(|r| format!("{}{}", r.stdout(), r.stderr()))
            .collect::<String>()
    };
    for event in ["\"failed\"", "\"finished\"", "\"output\"", "\"debug\""] {
        common::wait_for(event, std::time::Duration::from_secs(20), || {
            all().contains(event)
        });
    }
    std::fs::write(&file, format!("{jobs}not a line\n")).unwrap();
    common::wait_for(
        "the reload's error",
        std::time::Duration::from_secs(15),
        || all().contains("run on as they were"),
    );
    for line in all().lines() {
        let doc: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_valid("cron-log", &doc);
    }
}
