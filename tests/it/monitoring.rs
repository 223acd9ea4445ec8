//! Fleet health with real processes and real servers: a job whose host stops goes from OK to
//! WARNING to CRITICAL in `check` (a server whose clock runs 60 times fast, under faketime), and
//! `list --unhealthy` and the metrics say the same; a failing job; a paused job; bad data in one
//! job never fails the check or the scrape of the others. The exporter's output is parsed by a
//! real Prometheus parser (Python's prometheus_client), fetched over HTTP by a real client, and
//! every metric docs/monitoring/ uses is in it.

use crate::common;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use crate::common::{Server, json, stderr};

fn check(s: &Server, args: &[&str]) -> (i32, String) {
    let out = s.anarchon().arg("check").args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn metrics(s: &Server) -> String {
    let out = s.anarchon().arg("metrics").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_stopped_host_turns_the_check_warning_then_critical() {
    // 60 server seconds pass each real second: a minutely job's slots come and go quickly.
    let Some(s) = Server::start_with_clock_at("2026-12-02 10:00:03 x60") else {
        return;
    };
    let out = s
        .anarchon()
        .args([
            "run",
            "--job",
            "tick",
            "--schedule",
            "* * * * *",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (code, text) = check(&s, &["tick"]);
    assert!(code == 0 || code == 1, "{text}");
    // The host stops: no more runs. The next slot's grace (1m max-late + 1m) passes: WARNING.
    let mut seen = Vec::new();
    common::wait_for("check to say WARNING", Duration::from_secs(60), || {
        let (code, text) = check(&s, &["tick"]);
        seen.push(code);
        code == 1 && text.starts_with("ANARCHON WARNING - tick: late")
    });
    let list = json(
        &s.anarchon()
            .args(["list", "--unhealthy", "--json"])
            .output()
            .unwrap(),
    );
    let names: Vec<&str> = list["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["job"].as_str().unwrap())
        .collect();
    assert!(
        names == ["tick"] || list["jobs"][0]["health"]["state"] == "missed",
        "{list}"
    );
    // Another slot goes by unclaimed: CRITICAL, and the metrics agree.
    common::wait_for("check to say CRITICAL", Duration::from_secs(60), || {
        check(&s, &["tick"]).0 == 2
    });
    let (_, text) = check(&s, &["tick"]);
    assert!(
        text.starts_with("ANARCHON CRITICAL - tick: missed"),
        "{text}"
    );
    assert!(text.contains(" | late="), "performance data: {text}");
    let m = metrics(&s);
    assert!(
        m.contains("anarchon_job_health{job=\"tick\",state=\"missed\"} 1"),
        "{m}"
    );
    assert!(
        !m.contains("anarchon_job_missed_slots{job=\"tick\"} 0\n"),
        "{m}"
    );
    // OK, WARNING, CRITICAL in that order, never back.
    let first_warning = seen.iter().position(|c| *c == 1).unwrap();
    assert!(seen[..first_warning].iter().all(|c| *c == 0), "{seen:?}");
}

#[test]
fn failing_paused_and_healthy_jobs() {
    let s = Server::start();
    // The runs (--max-late 59s) and the checks must fall in one minute: a start at second :59
    // made the next slot due mid-test.
    common::wait_clear_of_the_minute_end(&s, Duration::from_secs(20));
    for (job, command, code) in [
        ("good", "true", 0),
        ("bad", "false", 1),
        ("rest", "true", 0),
    ] {
        s.cli(&[
            "run",
            "--job",
            job,
            "--schedule",
            "* * * * *",
            "--max-late",
            "59s",
            "--",
            command,
        ])
        .expect(code);
    }
    let (code, text) = check(&s, &["good"]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.starts_with("ANARCHON OK - good: ok, last success"),
        "{text}"
    );
    // One failure: WARNING; with --failures 1, CRITICAL.
    let (code, text) = check(&s, &["bad"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("failing (1 run(s) in a row failed, last exit 1)"),
        "{text}"
    );
    assert_eq!(check(&s, &["bad", "--failures", "1"]).0, 2);
    // Paused: OK, and says so.
    s.cli(&["pause", "rest", "--reason", "maintenance"])
        .expect(0);
    let (code, text) = check(&s, &["rest"]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("paused by") && text.contains("maintenance"),
        "{text}"
    );
    // --all: the worst first, the worst's code.
    let (code, text) = check(&s, &[]);
    assert_eq!(code, 1, "{text}");
    assert!(text.lines().next().unwrap().contains("bad"), "{text}");
    assert_eq!(text.lines().count(), 3, "{text}");
    // check --json and list agree.
    let v = json(&s.anarchon().args(["check", "--json"]).output().unwrap());
    assert_eq!(v["status"], "WARNING");
    let list = json(&s.anarchon().args(["list", "--json"]).output().unwrap());
    let state = |job: &str| {
        list["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["job"] == job)
            .unwrap()["health"]["state"]
            .clone()
    };
    assert_eq!(state("good"), "ok");
    assert_eq!(state("bad"), "failing");
    assert_eq!(state("rest"), "paused");
    let unhealthy = json(
        &s.anarchon()
            .args(["list", "--unhealthy", "--json"])
            .output()
            .unwrap(),
    );
    assert_eq!(unhealthy["jobs"].as_array().unwrap().len(), 1);
    assert_eq!(unhealthy["jobs"][0]["job"], "bad");
    let m = metrics(&s);
    assert!(
        m.contains("anarchon_job_failed_in_a_row{job=\"bad\"} 1"),
        "{m}"
    );
    assert!(m.contains("anarchon_job_paused{job=\"rest\"} 1"), "{m}");
    assert!(
        m.contains("anarchon_job_last_exit_code{job=\"bad\"} 1"),
        "{m}"
    );
    // A job never run with a schedule is unknown: UNKNOWN.
    s.cli(&["run", "--job", "adhoc", "--slot", "now", "--", "true"])
        .expect(0);
    let (code, text) = check(&s, &["adhoc"]);
    assert_eq!(code, 3, "{text}");
    let (code, _) = check(&s, &["nosuchjob"]);
    assert_eq!(code, 3);
}

#[test]
fn bad_data_in_one_job_fails_neither_the_check_nor_the_scrape_of_the_others() {
    let s = Server::start();
    for job in ["fine", "broken", "wrongtype"] {
        s.cli(&["run", "--job", job, "--schedule", "* * * * *", "--", "true"])
            .expect(0);
    }
    let _: () = s.cmd(&["HSET", "{cron:broken}:registry", "lease_ms", "soon"]);
    let _: () = s.cmd(&["DEL", "{cron:wrongtype}:registry"]);
    let _: () = s.cmd(&["SET", "{cron:wrongtype}:registry", "x"]);
    let (code, text) = check(&s, &[]);
    assert_eq!(code, 3, "{text}");
    assert!(text.contains("ANARCHON OK - fine"), "{text}");
    assert!(
        text.contains("ANARCHON UNKNOWN - broken") && text.contains("lease_ms"),
        "{text}"
    );
    assert!(text.contains("ANARCHON UNKNOWN - wrongtype"), "{text}");
    let m = metrics(&s);
    assert!(
        m.contains("anarchon_job_unreadable{job=\"broken\",key=\"{cron:broken}:registry\"} 1"),
        "{m}"
    );
    assert!(
        m.contains("anarchon_job_unreadable{job=\"wrongtype\""),
        "{m}"
    );
    assert!(
        m.contains("anarchon_job_health{job=\"fine\",state=\"ok\"} 1"),
        "{m}"
    );
    assert!(m.contains("anarchon_scrape_errors 2"), "{m}");
}

/// The exporter over HTTP, read by Python's urllib and parsed by prometheus_client's parser:
/// every family parses, with the help and type we wrote; the dashboard and alert rules use only
/// metrics that are in it.
#[test]
fn the_exporter_serves_text_a_prometheus_parser_reads() {
    let parser_ok = std::process::Command::new(crate::common::python())
        .args(["-c", "import prometheus_client.parser"])
        .status()
        .is_ok_and(|s| s.success());
    if !parser_ok {
        assert!(
            !crate::common::nothing_may_be_skipped(),
            ".ci/run must install prometheus_client"
        );
        eprintln!(
            "skipped: apt-get install python3-prometheus-client (tests/setup-and-test.sh installs it)"
        );
        return;
    }
    let s = Server::start();
    // The runs and the scrape must fall in one minute, as in `failing_paused_and_healthy_jobs`:
    // a start at second :59 would make the next slot due mid-test.
    common::wait_clear_of_the_minute_end(&s, Duration::from_secs(20));
    // Jobs in every state the metrics describe: ok, failing, running (a lease held), paused.
    for (job, command, code) in [("ok", "true", 0), ("bad", "false", 1), ("held", "true", 0)] {
        s.cli(&[
            "run",
            "--job",
            job,
            "--schedule",
            "* * * * *",
            "--",
            command,
        ])
        .expect(code);
    }
    let out = s
        .anarchon()
        .args(["claim", "held", "--slot", "1796220300000", "--lease", "10m"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    s.cli(&["pause", "ok"]).expect(0);

    // Port 0: the exporter binds a port the kernel picks and says which (a port picked here and
    // released could be taken by another test before the exporter binds it).
    let mut exporter = s
        .anarchon_process()
        .args(["metrics", "--listen", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(exporter.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("serving metrics on"), "{line}");
    let port = common::served_port(&line).unwrap_or_else(|| panic!("no port in {line:?}"));
    let script = r#"
import json, sys, urllib.request
from prometheus_client.parser import text_string_to_metric_families
with urllib.request.urlopen(sys.argv[1]) as r:
    assert r.status == 200, r.status
    ctype = r.headers["Content-Type"]
    text = r.read().decode()
out = {"content_type": ctype, "families": {}}
for f in text_string_to_metric_families(text):
    out["families"][f.name] = {"type": f.type, "help": f.documentation,
                               "samples": [[s.name, s.labels, s.value] for s in f.samples]}
print(json.dumps(out))
"#;
    let out = std::process::Command::new(crate::common::python())
        .args(["-c", script, &format!("http://127.0.0.1:{port}/metrics")])
        .output()
        .unwrap();
    let _ = crate::common::signal("-TERM", exporter.id());
    let _ = exporter.wait();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["content_type"]
            .as_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4"),
        "{v}"
    );
    let families = v["families"].as_object().unwrap();
    for (name, help) in anarchon::metrics::FAMILIES {
        if *name == "anarchon_job_unreadable" || name.starts_with("anarchon_limit_") {
            continue; // only when a job is unreadable (the test above), or a --limit is used
        }
        let f = families
            .get(*name)
            .unwrap_or_else(|| panic!("{name} is not in the scrape: {families:?}"));
        assert_eq!(f["type"], "gauge", "{name}");
        assert_eq!(f["help"], *help, "{name}");
    }
    let health = &families["anarchon_job_health"]["samples"];
    let is = |job: &str, state: &str| {
        health
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s[1]["job"] == job && s[1]["state"] == state && s[2].as_f64() == Some(1.0))
    };
    assert!(
        is("ok", "paused") && is("bad", "failing") && is("held", "running"),
        "{health}"
    );

    // Every metric the dashboard and the alert rules use is one the exporter emitted.
    let root = env!("CARGO_MANIFEST_DIR");
    for file in [
        "docs/monitoring/grafana-dashboard.json",
        "docs/monitoring/alerts.yml",
    ] {
        let text = std::fs::read_to_string(format!("{root}/{file}")).unwrap();
        let mut used = Vec::new();
        for (at, _) in text.match_indices("anarchon_") {
            let name: String = text[at..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            used.push(name);
        }
        assert!(used.len() >= 5, "{file} uses {used:?}");
        for name in used {
            assert!(
                families.contains_key(&name) || name == "anarchon_job_unreadable",
                "{file} uses {name}, which the exporter does not emit"
            );
        }
    }
}

/// The only host running a slot is killed (SIGKILL; its guard stops the command) and nobody stands
/// by: once its lease has run out, the run is one nobody will finish. `check` says CRITICAL
/// `expired` with the slot and what to do, `list` shows HEALTH expired, `inspect` gives the hint,
/// the metrics count the state (#35, item 4). Running the slot again takes it over.
#[test]
fn a_dead_holder_with_nobody_standing_by_is_reported_expired_with_what_to_do() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started");
    let line = format!("echo $ANARCHON_SLOT > {}; sleep 600", started.display());
    let mut holder = common::spawn_run(
        &s,
        &[
            "--job",
            "dead",
            "--schedule",
            "* * * * *",
            "--max-late",
            "1h",
            "--lease",
            "2s",
            "--shell",
            "--",
            &line,
        ],
    );
    let slot = common::wait_for_line(&started).trim().to_string();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(holder.id()).unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let _ = holder.wait();
    // While the lease lives (and a little after: a backup would take over), the job is running.
    let mut last = String::new();
    common::wait_for("check to say expired", Duration::from_secs(40), || {
        let (code, out) = check(&s, &["dead"]);
        last = out.clone();
        code == 2 && out.contains("CRITICAL") && out.contains("expired")
    });
    assert!(last.contains(&format!("--slot {slot}")), "{last}");
    assert!(last.contains("anarchon release dead"), "{last}");
    let list = s.cli(&["list", "--json"]).expect(0).json();
    let job = list["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["job"] == "dead")
        .unwrap_or_else(|| panic!("{list}"))
        .clone();
    assert_eq!(job["health"]["state"], "expired", "{job}");
    assert_eq!(job["health"]["expired_slots"][0].to_string(), slot, "{job}");
    let shown = s.cli(&["inspect", "dead"]).expect(0);
    let shown = String::from_utf8_lossy(&shown.output.stdout).to_string();
    assert!(shown.contains("health   expired"), "{shown}");
    assert!(shown.contains("hint: `anarchon release dead"), "{shown}");
    let metrics = s.cli(&["metrics"]).expect(0);
    let metrics = String::from_utf8_lossy(&metrics.output.stdout).to_string();
    assert!(
        metrics.lines().any(|l| l.contains("state=\"expired\"")
            && l.contains("job=\"dead\"")
            && l.ends_with(" 1")),
        "{metrics}"
    );

    // Running the slot again takes it over (attempt 2): the job is no longer expired (the
    // takeover's run keeps the schedule monitoring judges by).
    s.cli(&[
        "run",
        "--job",
        "dead",
        "--slot",
        &slot,
        "--max-late",
        "1h",
        "--",
        "true",
    ])
    .expect(0);
    let (code, out) = check(&s, &["dead"]);
    assert_eq!(code, 0, "{out}");
    // `logs` shows the interrupted attempt (the dead holder's) as the newest failure.
    let logs = s.cli(&["logs", "dead", "--json"]).expect(0).json();
    assert_eq!(logs["entries"][0]["status"], "interrupted", "{logs}");
    assert_eq!(logs["entries"][0]["attempt"], 1, "{logs}");
}

/// A job that stopped three hours ago (36 slots of `*/5`): `check` names the oldest due run
/// never claimed, where the job stopped, not the oldest of the newest ten it lists (#35, item 5).
#[test]
fn check_names_where_a_stopped_job_stopped() {
    let s = Server::start();
    s.cli(&[
        "run",
        "--job",
        "stop",
        "--schedule",
        "*/5 * * * *",
        "--max-late",
        "10m",
        "--",
        "true",
    ])
    .expect(0);
    // Forget that run: the job was first seen three hours ago, ran then, and never since.
    let keys: Vec<String> = s.cmd(&["KEYS", "{cron:stop}:*"]);
    for k in keys
        .iter()
        .filter(|k| !k.ends_with(":registry") && !k.ends_with(":job"))
    {
        let _: i64 = s.cmd(&["DEL", k]);
    }
    let now = s.now_ms();
    let first = now - 3 * 3_600_000;
    let first = first - first.rem_euclid(300_000);
    s.cli(&[
        "run",
        "--job",
        "stop",
        "--slot",
        &first.to_string(),
        "--max-late",
        "4h",
        "--",
        "true",
    ])
    .expect(0);
    let _: i64 = s.cmd(&["HSET", "{cron:stop}:job", "first_seen", &first.to_string()]);
    let oldest = first + 300_000;
    let out = s.cli(&["check", "stop", "--json"]);
    let v = out.json();
    assert_eq!(v["jobs"][0]["health"]["oldest_missed"], oldest, "{v}");
    let (_, text) = check(&s, &["stop"]);
    let oldest_time = chrono::DateTime::from_timestamp_millis(oldest)
        .unwrap()
        .format("%Y-%m-%dT%H:%M:%S")
        .to_string();
    assert!(text.contains(&oldest_time), "{text}");
    assert!(text.contains("CRITICAL"), "{text}");
}

/// A histogram's buckets (upper bound, cumulative count) in order, its sum and its count.
type Histogram = (Vec<(f64, u64)>, f64, u64);

/// One job's `anarchon_cron_run_start_lateness_seconds` in a daemon's /metrics, checked to be a
/// histogram as Prometheus reads one (cumulative, `+Inf` last and equal to the count).
fn lateness_of(text: &str, job: &str) -> Option<Histogram> {
    let name = "anarchon_cron_run_start_lateness_seconds";
    let value = |suffix: &str| -> Option<String> {
        text.lines().find_map(|l| {
            l.strip_prefix(&format!("{name}{suffix}{{job=\"{job}\"}} "))
                .map(str::to_string)
        })
    };
    let count: u64 = value("_count")?.parse().unwrap();
    let sum: f64 = value("_sum")?.parse().unwrap();
    let prefix = format!("{name}_bucket{{job=\"{job}\",le=\"");
    let buckets: Vec<(f64, u64)> = text
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .map(|rest| {
            let (le, n) = rest.split_once("\"} ").unwrap();
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().unwrap()
            };
            (le, n.parse().unwrap())
        })
        .collect();
    assert!(
        buckets
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1),
        "not cumulative: {buckets:?}"
    );
    assert_eq!(buckets.last(), Some(&(f64::INFINITY, count)), "{text}");
    assert!(
        text.contains(&format!("# TYPE {name} histogram\n")),
        "{text}"
    );
    Some((buckets, sum, count))
}

/// The daemon's /metrics says how late after its fire time each run it won started its command,
/// per job (`anarchon_cron_run_start_lateness_seconds`, as Kubernetes' CronJob controller and
/// gocron have): a job whose runs wait for their `--jitter` is observed as late as its jitter
/// made each of them (`scheduler::jitter_delay`, the same for every host), and a job without one
/// as prompt.
#[test]
fn the_daemon_observes_how_late_each_run_started() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (file, log) = (dir.path().join("crontab"), dir.path().join("jittered"));
    std::fs::write(
        &file,
        format!(
            "# anarchon: --job prompt\n*/1 * * * * * true\n# anarchon: --job jittered --jitter 2s\n*/3 * * * * * echo $ANARCHON_SLOT >> {}\n",
            log.display()
        ),
    )
    .unwrap();
    let replica = common::replica::Replica::start(
        &s.url,
        &file,
        dir.path(),
        "r",
        &["--listen", "127.0.0.1:0"],
    );
    let port = replica.listening_port();
    let mut text = String::new();
    common::wait_for(
        "three jittered runs observed",
        Duration::from_secs(30),
        || {
            text = common::http::get(port, "/metrics").1;
            lateness_of(&text, "jittered").is_some_and(|(_, _, n)| n >= 3)
        },
    );
    let (_, sum, count) = lateness_of(&text, "jittered").unwrap();
    // The runs observed are the first ones the command logged (a run is observed as it starts).
    common::wait_for("the runs' lines", Duration::from_secs(10), || {
        std::fs::read_to_string(&log).is_ok_and(|t| t.lines().count() as u64 >= count)
    });
    let mut slots: Vec<i64> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    slots.sort();
    let jitter: f64 = slots[..count as usize]
        .iter()
        .map(|slot| {
            anarchon::scheduler::jitter_delay("jittered", *slot, Duration::from_secs(2))
                .as_secs_f64()
        })
        .sum();
    // As late as the jitter, and not much later: the daemon claims at once (one replica).
    assert!(
        sum >= jitter - 0.01 * count as f64 && sum <= jitter + 1.5 * count as f64,
        "observed {sum} s over {count} runs, their jitter {jitter} s: {text}"
    );
    let (buckets, _, prompt) = lateness_of(&text, "prompt").expect("the prompt job observed");
    assert!(prompt >= 3, "{text}");
    // Most within a second, on a loaded machine too.
    let within_1s = buckets.iter().find(|(le, _)| *le == 1.0).unwrap().1;
    assert!(within_1s * 2 >= prompt, "{buckets:?}");
}
