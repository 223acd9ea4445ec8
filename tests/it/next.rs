//! `anarchon next`: a job's fire times, jitter, daylight-saving changes and the catch-up after an
//! outage, each checked against what `run` really does: the slot a run on the night of a change
//! takes (a server whose clock libfaketime sets, as tests/it/dst.rs), the delay a run with
//! `--jitter` waited before its claim, and what a run after a real outage ran and recorded
//! skipped. A `--schedule` needs no server.

use std::time::Duration;

use serde_json::Value;

use crate::common::{self, Server, json, stderr, wait_for_server_time};

fn ms(rfc: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc)
        .unwrap()
        .timestamp_millis()
}

fn slots(v: &Value) -> Vec<i64> {
    v["fire_times"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["slot"].as_i64().unwrap())
        .collect()
}

/// `anarchon next ARGS --json` with no server at all (a dead port): --schedule needs none.
fn without_a_server(args: &[&str]) -> Value {
    let out = common::anarchon()
        .arg("next")
        .args(args)
        .arg("--json")
        .env(
            "ANARCHON_REDIS_URL",
            format!("redis://127.0.0.1:{}", common::dead_port()),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)
}

#[test]
fn a_schedule_across_berlin_s_changes_needs_no_server() {
    let v = without_a_server(&[
        "--schedule",
        "30 2 * * *",
        "--tz",
        "Europe/Berlin",
        "--from",
        "2026-03-27T00:00:00Z",
    ]);
    assert_eq!(v["clock"], "from");
    assert_eq!(v["server_time"], Value::Null);
    assert_eq!(
        slots(&v),
        [
            ms("2026-03-27T01:30:00Z"), // 02:30 CET
            ms("2026-03-28T01:30:00Z"),
            ms("2026-03-29T01:00:00Z"), // 02:30 does not exist: 03:00 CEST, the jump
            ms("2026-03-30T00:30:00Z"), // 02:30 CEST
            ms("2026-03-31T00:30:00Z"),
        ]
    );
    let jump = &v["fire_times"][2];
    assert_eq!(jump["local_time"], "2026-03-29T03:00:00.000+02:00");
    assert_eq!(jump["zone"], "CEST");
    assert!(
        jump["daylight_saving"]
            .as_str()
            .unwrap()
            .contains("for 02:30"),
        "{jump}"
    );
    assert_eq!(v["fire_times"][0]["daylight_saving"], Value::Null);

    let changes = v["daylight_saving"]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 2, "a year holds Berlin's two changes");
    let (spring, autumn) = (&changes[0], &changes[1]);
    assert_eq!(spring["at"], ms("2026-03-29T01:00:00Z"));
    assert_eq!(
        (
            &spring["kind"],
            &spring["zone_before"],
            &spring["zone_after"]
        ),
        (&"skip".into(), &"CET".into(), &"CEST".into())
    );
    assert_eq!(
        spring["schedule_times"],
        serde_json::json!(["2026-03-29T02:30:00"])
    );
    assert_eq!(spring["effect"], "run_once_at_the_jump");
    assert_eq!(spring["runs"][0]["slot"], ms("2026-03-29T01:00:00Z"));
    assert_eq!(autumn["at"], ms("2026-10-25T01:00:00Z"));
    assert_eq!(autumn["kind"], "repeat");
    assert_eq!(autumn["effect"], "run_once_the_first_time");
    // 02:30 CEST, not 02:30 CET (01:30 UTC).
    assert_eq!(autumn["runs"][0]["slot"], ms("2026-10-25T00:30:00Z"));
    assert_eq!(autumn["run_count"], 1);

    // Wildcard hours follow the local clock: the repeated hour runs twice, the skipped one never.
    let v = without_a_server(&[
        "--schedule",
        "*/30 * * * *",
        "--tz",
        "Europe/Berlin",
        "--from",
        "2026-10-25T00:00:00Z",
        "--count",
        "5",
    ]);
    assert_eq!(
        slots(&v),
        [
            ms("2026-10-25T00:00:00Z"), // 02:00 CEST
            ms("2026-10-25T00:30:00Z"), // 02:30 CEST
            ms("2026-10-25T01:00:00Z"), // 02:00 CET
            ms("2026-10-25T01:30:00Z"), // 02:30 CET
            ms("2026-10-25T02:00:00Z"), // 03:00 CET
        ]
    );
    let changes = v["daylight_saving"]["changes"].as_array().unwrap();
    assert_eq!(changes[0]["effect"], "run_each_time");
    assert_eq!(changes[0]["run_count"], 4);
    assert_eq!(changes[1]["effect"], "not_run");
    assert_eq!(changes[1]["runs"], serde_json::json!([]));
    assert!(
        v["fire_times"][2]["daylight_saving"]
            .as_str()
            .unwrap()
            .contains("02:00 again"),
        "{v}"
    );
}

#[test]
fn piped_text_is_plain_columns_and_says_what_each_change_does() {
    let out = common::anarchon()
        .args(["next", "--schedule", "30 2 * * *", "--tz", "Europe/Berlin"])
        .args(["--from", "2026-03-28T12:00:00Z", "--count", "2"])
        .env("ANARCHON_REDIS_URL", "redis://127.0.0.1:1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\x1b'), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("30 2 * * * in Europe/Berlin (fixed hours)"),
        "{text}"
    );
    assert!(lines[1].starts_with("UTC "), "{text}");
    // RFC 3339 when piped, the local time with its offset.
    assert!(
        lines[2].starts_with("2026-03-29T01:00:00.000Z  2026-03-29T03:00:00.000+02:00"),
        "{text}"
    );
    assert!(text.contains(
        "02:00 CET → 03:00 CEST  02:30 does not occur: runs once, right after the jump, at 03:00 CEST"
    ));
    assert!(text.contains(
        "03:00 CEST → 02:00 CET  02:30 occurs twice: runs once, the first time (02:30 CEST)"
    ));
}

#[test]
fn a_registered_job_is_read_from_the_registry_and_the_server_s_clock() {
    let s = Server::start();
    s.cli(&[
        "run",
        "--job",
        "nightly",
        "--schedule",
        "30 2 * * *",
        "--tz",
        "Europe/Berlin",
        "--jitter",
        "10m",
        "--catch-up",
        "6h",
        "--max-late",
        "2d",
        "--",
        "true",
    ])
    .expect(0);
    let before = s.now_ms();
    let v = s
        .cli(&["next", "nightly", "--json", "-c", "3"])
        .expect(0)
        .json();
    assert_eq!(
        (v["source"].as_str(), v["clock"].as_str()),
        (Some("registry"), Some("server"))
    );
    assert_eq!(v["tz"], "Europe/Berlin");
    assert_eq!(v["strategy"], "lease");
    assert_eq!(v["jitter_ms"], 600_000);
    assert_eq!(v["jitter_exact"], true);
    // From the server's clock: the first fire time is the next one after it.
    let from = v["from"].as_i64().unwrap();
    assert!(
        from >= before && from < before + 60_000,
        "{from} vs {before}"
    );
    let first = slots(&v)[0];
    assert!(first >= from && first - from <= 25 * 3_600_000, "{v}");
    for t in v["fire_times"].as_array().unwrap() {
        let jitter = t["jitter_ms"].as_i64().unwrap();
        assert!((0..600_000).contains(&jitter), "{t}");
        assert_eq!(
            t["claim_at"].as_i64().unwrap(),
            t["slot"].as_i64().unwrap() + jitter
        );
    }

    // --from and --jitter override; the same question gets the same answer.
    let args = [
        "next",
        "nightly",
        "--json",
        "--from",
        "2026-03-28T00:00:00Z",
        "--jitter",
        "1m",
    ];
    let a = s.cli(&args).expect(0).json();
    assert_eq!(a["clock"], "from");
    assert_eq!(slots(&a)[1], ms("2026-03-29T01:00:00Z"));
    assert_eq!(a["jitter_ms"], 60_000);
    let b = s.cli(&args).expect(0).json();
    assert_eq!(a["fire_times"], b["fire_times"]);

    // A pause covers the fire times until it ends.
    s.cli(&["pause", "nightly", "--for", "3d", "--reason", "test"])
        .expect(0);
    let v = s
        .cli(&["next", "nightly", "--json", "-c", "5"])
        .expect(0)
        .json();
    assert_eq!(v["fire_times"][0]["paused"], true);
    assert_eq!(v["fire_times"][4]["paused"], false);
    assert_eq!(v["pause"]["paused_reason"], "test");
}

#[test]
fn the_jitter_shown_is_the_delay_run_waits_before_its_claim() {
    let s = Server::start();
    // Every 2 s, with up to 8 s of jitter: the run claims its slot after the delay `next` shows.
    let started = s.now_ms();
    let out = s
        .cli(&[
            "run",
            "--job",
            "jit",
            "--schedule",
            "*/2 * * * * *",
            "--jitter",
            "8s",
            "--max-late",
            "1m",
            "--json",
            "--",
            "true",
        ])
        .expect(0);
    let slot = out.json()["slot"].as_i64().unwrap();
    let claimed_at = s.results("jit")[0].claimed_at.unwrap();
    let v = s
        .cli(&[
            "next",
            "jit",
            "--from",
            &slot.to_string(),
            "-c",
            "1",
            "--json",
        ])
        .expect(0)
        .json();
    assert_eq!(slots(&v), [slot]);
    let jitter = v["fire_times"][0]["jitter_ms"].as_i64().unwrap();
    let claim_at = v["fire_times"][0]["claim_at"].as_i64().unwrap();
    assert_eq!(claim_at, slot + jitter);
    // The run claimed at the claim time `next` shows, counted from the slot (issue 61 item 6: a
    // late start waits no whole delay again), well within a second and a half of it (a process
    // start and a round trip).
    assert!(
        claimed_at >= claim_at && claimed_at < claim_at.max(started) + 1_500,
        "claimed at {claimed_at} (started {started}), next says it claims at {claim_at} (slot {slot} + {jitter} ms)"
    );
    // Without the job's name only the range is known.
    let v = without_a_server(&["--schedule", "*/2 * * * * *", "--jitter", "8s", "-c", "1"]);
    assert_eq!(v["jitter_exact"], false);
    assert_eq!(v["fire_times"][0]["jitter_ms"], Value::Null);
}

const EVERY_4S: &str = "*/4 * * * * *";

/// Registers `job` (a run that claims the current slot, so the store has seen it), has `next`
/// foretell an outage of 12 s starting right after that slot, waits for the first run after it
/// and runs it as cron would; returns what `next` said and what the run reported, with the
/// slots its command ran.
fn foretold_and_real(job: &str, catch_up: &[&str]) -> (Value, Value, Vec<i64>) {
    let s = Server::start();
    let log = s.dir.path().join(format!("{job}.log"));
    let line = format!("echo $ANARCHON_SLOT >> {}", log.display());
    let mut run: Vec<&str> = vec!["run", "--job", job, "--schedule", EVERY_4S, "--json"];
    run.extend_from_slice(catch_up);
    let registered = s
        .cli(&[&run[..], &["--shell", "--", &line]].concat())
        .expect(0);
    let c0 = registered.json()["slot"].as_i64().unwrap();
    let down_until = c0 + 1 + 12_000;
    let foretold = s
        .cli(&[
            "next",
            job,
            "--after-outage",
            "12s",
            "--from",
            &down_until.to_string(),
            "--catch-up-max",
            "1",
            "--json",
        ])
        .expect(0)
        .json()["after_outage"]
        .clone();
    let first = foretold["first_run"].as_i64().unwrap();
    assert_eq!(first, c0 + 16_000, "{foretold}");
    // No host ran during the outage; cron starts the first run after it at its fire time.
    wait_for_server_time(&s, first - 1);
    let out = s
        .cli(&[&run[..], &["--catch-up-max", "1", "--shell", "--", &line]].concat())
        .expect(0);
    let real = out.json();
    assert_eq!(real["slot"], first, "the run began within 4 s of its slot");
    let ran: Vec<i64> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .filter(|slot| *slot != c0)
        .collect();
    (foretold, real, ran)
}

fn with_fate(foretold: &Value, fate: &str) -> Vec<(i64, String)> {
    foretold["slots"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["fate"] == fate)
        .map(|s| {
            (
                s["slot"].as_i64().unwrap(),
                s["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn skipped(real: &Value) -> Vec<(i64, String)> {
    real["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["slot"].as_i64().unwrap(),
                s["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn after_an_outage_policy_all_runs_and_skips_what_next_foretold() {
    // --catch-up 10s: the window of the first run (at C0+16) holds C0+8 and C0+12; --catch-up-max
    // 1 runs the newest, C0+4 is older than the window.
    let (foretold, real, ran) = foretold_and_real("outage-all", &["--catch-up", "10s"]);
    let run: Vec<i64> = with_fate(&foretold, "run")
        .iter()
        .map(|(s, _)| *s)
        .collect();
    assert_eq!(ran, run, "the command ran the slots next said: {foretold}");
    assert_eq!(run.len(), 2);
    let expected = with_fate(&foretold, "skipped");
    assert_eq!(skipped(&real), expected, "{real}");
    assert!(
        expected[0].1.starts_with("older than --catch-up 10s"),
        "{expected:?}"
    );
    assert_eq!(expected[1].1, "over --catch-up-max 1");
    assert!(with_fate(&foretold, "not_run").is_empty());
}

#[test]
fn after_an_outage_policy_latest_runs_and_skips_what_next_foretold() {
    let (foretold, real, ran) = foretold_and_real(
        "outage-latest",
        &["--catch-up", "10s", "--catch-up-policy", "latest"],
    );
    assert_eq!(foretold["catch_up_policy"], "latest");
    assert_eq!(foretold["catch_up_policy_from"], "registry");
    let run: Vec<i64> = with_fate(&foretold, "run")
        .iter()
        .map(|(s, _)| *s)
        .collect();
    assert_eq!(ran, run);
    assert_eq!(run, [real["slot"].as_i64().unwrap()]);
    let expected = with_fate(&foretold, "skipped");
    assert_eq!(skipped(&real), expected, "{real}");
    assert_eq!(expected.len(), 3);
    assert_eq!(expected[2].1, "--catch-up-policy latest");
}

#[test]
fn errors_say_what_to_do() {
    let s = Server::start();
    s.cli(&[
        "run",
        "--job",
        "billing",
        "--schedule",
        "* * * * *",
        "--",
        "true",
    ])
    .expect(0);
    // An unknown job: the near names.
    let out = s.cli(&["next", "biling"]).expect(85);
    assert!(
        stderr(&out).contains("did you mean billing?"),
        "{}",
        out.dump()
    );
    // A claim-only job claimed by hand: no schedule recorded.
    s.cli(&[
        "claim",
        "handmade",
        "--slot",
        "now",
        "--strategy",
        "stream-id",
    ])
    .expect(0);
    let out = s.cli(&["next", "handmade"]).expect(85);
    let said = stderr(&out);
    assert!(said.contains("a claim-only job"), "{said}");
    assert!(
        said.contains("anarchon run --job handmade --schedule"),
        "{said}"
    );
    assert!(said.contains("anarchon next --schedule"), "{said}");
    // A job run by hand only (`--slot`): no schedule in its registry.
    s.cli(&["run", "--job", "manual", "--slot", "now", "--", "true"])
        .expect(0);
    let out = s.cli(&["next", "manual"]).expect(85);
    assert!(stderr(&out).contains("--slot only"), "{}", out.dump());
    // A claim-only strategy has no catch-up to foretell.
    s.cli(&[
        "run",
        "--job",
        "scripted",
        "--strategy",
        "script",
        "--schedule",
        "* * * * *",
        "--",
        "true",
    ])
    .expect(0);
    s.cli(&["next", "scripted"]).expect(0);
    let out = s
        .cli(&["next", "scripted", "--after-outage", "1h"])
        .expect(2);
    assert!(stderr(&out).contains("no catch-up"), "{}", out.dump());
    // Flags that need a window.
    let out = s
        .cli(&[
            "next",
            "--schedule",
            "* * * * *",
            "--after-outage",
            "1h",
            "--catch-up-max",
            "3",
        ])
        .expect(2);
    assert!(
        stderr(&out).contains("--catch-up-max needs --catch-up"),
        "{}",
        out.dump()
    );
    let out = s.cli(&["next", "--schedule", "61 * * * *"]).expect(2);
    assert!(
        stderr(&out).contains("minute 61 is out of range"),
        "{}",
        out.dump()
    );
}

/// On the night of a change, on a server whose clock is there: the next fire time `next` shows is
/// the slot `run` takes when the clock reaches it (spring: the jump), and the repeated 02:30 of
/// autumn, which `next` does not show for fixed hours, is no run of its own.
#[test]
fn on_the_night_of_a_change_next_shows_the_slot_run_takes() {
    let Some(s) = Server::start_with_clock_at("2026-03-29 00:59:57") else {
        return;
    };
    let register = |job: &str, schedule: &str| {
        s.cli(&[
            "run",
            "--job",
            job,
            "--schedule",
            schedule,
            "--tz",
            "Europe/Berlin",
            "--max-late",
            "2d",
            "--",
            "true",
        ])
        .expect(0);
    };
    register("fixed", "30 2 * * *");
    register("wild", "30 * * * *");
    let next = |job: &str| slots(&s.cli(&["next", job, "-c", "1", "--json"]).expect(0).json())[0];
    assert_eq!(next("fixed"), ms("2026-03-29T01:00:00Z"));
    assert_eq!(
        next("wild"),
        ms("2026-03-29T01:30:00Z"),
        "02:30 does not occur"
    );
    wait_for_server_time(&s, ms("2026-03-29T01:00:00Z"));
    let out = s
        .cli(&[
            "run",
            "--job",
            "fixed",
            "--schedule",
            "30 2 * * *",
            "--tz",
            "Europe/Berlin",
            "--json",
            "--",
            "true",
        ])
        .expect(0);
    assert_eq!(out.json()["slot"], ms("2026-03-29T01:00:00Z"));

    let Some(s) = Server::start_with_clock_at("2026-10-25 01:29:57") else {
        return;
    };
    for (job, schedule) in [("fixed", "30 2 * * *"), ("wild", "30 * * * *")] {
        s.cli(&[
            "run",
            "--job",
            job,
            "--schedule",
            schedule,
            "--tz",
            "Europe/Berlin",
            "--max-late",
            "2d",
            "--",
            "true",
        ])
        .expect(0);
    }
    let next = |job: &str| slots(&s.cli(&["next", job, "-c", "1", "--json"]).expect(0).json())[0];
    assert_eq!(
        next("fixed"),
        ms("2026-10-26T01:30:00Z"),
        "not the second 02:30"
    );
    assert_eq!(
        next("wild"),
        ms("2026-10-25T01:30:00Z"),
        "the second 02:30 runs"
    );
    wait_for_server_time(&s, ms("2026-10-25T01:30:00Z"));
    // At the second 02:30 the fixed-hour job's slot is still the first one, an hour old: nothing
    // new runs (84: too late).
    let out = s
        .cli(&[
            "run",
            "--job",
            "fixed",
            "--schedule",
            "30 2 * * *",
            "--tz",
            "Europe/Berlin",
            "--json",
            "--",
            "true",
        ])
        .expect(84);
    assert_eq!(out.json()["slot"], ms("2026-10-25T00:30:00Z"));
    let out = s
        .cli(&[
            "run",
            "--job",
            "wild",
            "--schedule",
            "30 * * * *",
            "--tz",
            "Europe/Berlin",
            "--json",
            "--",
            "true",
        ])
        .expect(0);
    assert_eq!(out.json()["slot"], ms("2026-10-25T01:30:00Z"));
}

/// Cron's day rule (issue 46, item 6): both day fields restricted, a day matches if either does;
/// a field that starts with `*` makes them AND (cronie's DOM_STAR/DOW_STAR). Known fire times
/// from Saturday 2026-12-05, through the binary.
#[test]
fn both_day_fields_restricted_fire_on_either_as_cron_does() {
    for (schedule, days) in [
        (
            "0 0 13 * fri",
            &[
                "2026-12-11",
                "2026-12-13",
                "2026-12-18",
                "2026-12-25",
                "2027-01-01",
                "2027-01-08",
                "2027-01-13",
            ][..],
        ),
        (
            "0 0 1,15 * 1",
            &["2026-12-07", "2026-12-14", "2026-12-15", "2026-12-21"][..],
        ),
        // One field starting with `*`: AND (odd days that are Fridays; every Friday).
        (
            "0 0 */2 * fri",
            &["2026-12-11", "2026-12-25", "2027-01-01", "2027-01-15"][..],
        ),
        (
            "0 0 * * fri",
            &["2026-12-11", "2026-12-18", "2026-12-25"][..],
        ),
        (
            "0 0 13 * *",
            &["2026-12-13", "2027-01-13", "2027-02-13"][..],
        ),
    ] {
        let count = days.len().to_string();
        let v = without_a_server(&[
            "--schedule",
            schedule,
            "--from",
            "2026-12-05T12:00:00Z",
            "-c",
            &count,
        ]);
        let want: Vec<i64> = days.iter().map(|d| ms(&format!("{d}T00:00:00Z"))).collect();
        assert_eq!(slots(&v), want, "{schedule}: {v}");
    }
}

/// The same rule in `run` (which slot is due), the registry's `next`, and `check` (which slots
/// were missed), on the server's clock: a schedule every 5 s on today's and tomorrow's day of
/// month or on a weekday that is neither. ANDed, it would not fire for months: `run` would find
/// nothing due and `check` would call the missed slots OK.
#[test]
fn run_next_and_check_follow_the_day_rule() {
    use chrono::{Datelike, TimeZone};
    let s = Server::start();
    let now = chrono::Utc.timestamp_millis_opt(s.now_ms()).unwrap();
    let tomorrow = now + chrono::Duration::days(1);
    let other_weekday = (now.weekday().num_days_from_sunday() + 3) % 7;
    let schedule = format!("*/5 * * {},{} * {other_weekday}", now.day(), tomorrow.day());
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    s.cli(&[
        "run",
        "--job",
        "either",
        "--schedule",
        &schedule,
        // Longer than the 5 s between slots: the latest slot is always due.
        "--max-late",
        "30s",
        "--",
        "sh",
        "-c",
        &format!("echo ran >> {}", marker.display()),
    ])
    .expect(0);
    assert!(marker.exists(), "{schedule}: run found no slot due");

    let from = s.now_ms();
    let v = s
        .cli(&["next", "either", "--json", "-c", "2"])
        .expect(0)
        .json();
    assert_eq!(v["source"], "registry");
    let next = slots(&v);
    assert!(
        next[0] > from - 1000 && next[0] <= from + 5000 && next[1] - next[0] == 5000,
        "{schedule}: {v}"
    );

    // No other run: the slots after it are missed, and check says so.
    common::wait_for(
        "check to say runs were missed",
        Duration::from_secs(30),
        || {
            let out = s
                .anarchon()
                .args(["check", "either", "--window", "20s", "--grace", "1s"])
                .output()
                .unwrap();
            out.status.code() == Some(2)
        },
    );
}

/// `anarchon cron FILE` reads a crontab line's day fields by the same rule: a line every 2 s on
/// today's and tomorrow's day of month or on a weekday that is neither runs today (ANDed, it would
/// wait months).
#[test]
fn a_crontab_line_runs_on_either_day_field() {
    use chrono::{Datelike, TimeZone};
    struct Daemon(std::process::Child);
    impl Drop for Daemon {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let s = Server::start();
    let now = chrono::Utc.timestamp_millis_opt(s.now_ms()).unwrap();
    let tomorrow = now + chrono::Duration::days(1);
    let other_weekday = (now.weekday().num_days_from_sunday() + 3) % 7;
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let file = dir.path().join("crontab");
    std::fs::write(
        &file,
        format!(
            "# anarchon: --job either-cron\n*/2 * * {},{} * {other_weekday} echo ran >> {}\n",
            now.day(),
            tomorrow.day(),
            marker.display()
        ),
    )
    .unwrap();
    let _daemon = Daemon(
        s.anarchon_process()
            .arg("cron")
            .arg(&file)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    common::wait_for("two runs of the line", Duration::from_secs(30), || {
        std::fs::read_to_string(&marker).is_ok_and(|t| t.lines().count() >= 2)
    });
}
