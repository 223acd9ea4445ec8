//! `redis+sentinel://`: anarchon asks a real Sentinel for the primary of a primary+replica pair on
//! loopback, and after `SENTINEL FAILOVER` its claims go to the new primary.

use crate::common;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common::{Server, json, server_binary, stderr, wait_for};

/// A Sentinel process (the server binary with `--sentinel`) watching `master` on `primary_port`.
struct Sentinel {
    child: Child,
    port: u16,
    /// The sentinel's own `requirepass`, if any.
    password: Option<String>,
    _dir: tempfile::TempDir,
}

impl Sentinel {
    /// Starts a Sentinel on a free port. The port is picked by binding and releasing it, so
    /// another test may take it before the Sentinel binds it: then the Sentinel exits (or the
    /// port answers from another process), and the start is tried again on another port.
    fn start(primary_port: u16) -> Sentinel {
        Sentinel::start_with(primary_port, None, None)
    }

    /// A sentinel that asks its clients for `password`, and gives `primary_password` to the
    /// primary it watches: on a fresh port each try, until one is its own.
    fn start_with(
        primary_port: u16,
        password: Option<&str>,
        primary_password: Option<&str>,
    ) -> Sentinel {
        for _ in 0..20 {
            if let Some(sentinel) = Sentinel::try_start(primary_port, password, primary_password) {
                return sentinel;
            }
        }
        panic!("could not start a sentinel on a free port");
    }

    fn try_start(
        primary_port: u16,
        password: Option<&str>,
        primary_password: Option<&str>,
    ) -> Option<Sentinel> {
        let dir = tempfile::tempdir().unwrap();
        let port = common::free_port();
        let conf = dir.path().join("sentinel.conf");
        std::fs::write(
            &conf,
            format!(
                "port {port}\nbind 127.0.0.1\ndir {}\nsentinel monitor mymaster 127.0.0.1 {primary_port} 1\nsentinel down-after-milliseconds mymaster 2000\nsentinel failover-timeout mymaster 10000\n{}{}",
                dir.path().display(),
                password.map_or(String::new(), |p| format!("requirepass {p}\n")),
                primary_password.map_or(String::new(), |p| format!(
                    "sentinel auth-pass mymaster {p}\n"
                )),
            ),
        )
        .unwrap();
        let child = Command::new(server_binary())
            .arg(&conf)
            .arg("--sentinel")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut sentinel = Sentinel {
            child,
            port,
            password: password.map(str::to_string),
            _dir: dir,
        };
        // Up: it answers PING and the port is its own. Or gone: it could not bind the port.
        let mut exited = false;
        wait_for("the sentinel", Duration::from_secs(10), || {
            exited = matches!(sentinel.child.try_wait(), Ok(Some(_)));
            exited
                || (sentinel.query(&["PING"]).is_ok()
                    && common::listens_on(sentinel.child.id(), port))
        });
        (!exited).then_some(sentinel)
    }

    fn query(&self, args: &[&str]) -> redis::RedisResult<redis::Value> {
        let auth = self
            .password
            .as_ref()
            .map_or(String::new(), |p| format!(":{p}@"));
        let client = redis::Client::open(format!("redis://{auth}127.0.0.1:{}", self.port))?;
        let mut c = client.get_connection_with_timeout(Duration::from_secs(2))?;
        let mut cmd = redis::cmd(args[0]);
        for a in &args[1..] {
            cmd.arg(*a);
        }
        cmd.query(&mut c)
    }

    /// The port of the primary in the sentinel's own table (`SENTINEL MASTER`), which is what
    /// clients are given once a failover is complete (+switch-master).
    fn primary_port(&self) -> Option<u16> {
        let v = self.query(&["SENTINEL", "MASTER", "mymaster"]).ok()?;
        let fields: std::collections::HashMap<String, String> = redis::from_redis_value(v).ok()?;
        fields.get("port")?.parse().ok()
    }
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn claims_follow_the_primary_through_a_sentinel_failover() {
    let primary = Server::start();
    let replica_of = primary.port.to_string();
    let replica = Server::start_with(&["--replicaof", "127.0.0.1", &replica_of]);
    wait_for("the replica to sync", Duration::from_secs(15), || {
        replica
            .info_field("replication", "master_link_status")
            .as_deref()
            == Some("up")
    });
    let sentinel = Sentinel::start(primary.port);
    let url = format!("redis+sentinel://127.0.0.1:{}/mymaster", sentinel.port);
    let claim = |slot: &str| {
        common::anarchon()
            .args(["--redis", &url, "claim", "fo", "--slot", slot, "--json"])
            .output()
            .unwrap()
    };

    let out = claim("60000");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["outcome"], "won");
    assert!(
        primary.run("fo", "60000").is_some(),
        "the claim went to the primary"
    );

    // The sentinel must know the replica before it can fail over to it.
    wait_for(
        "the sentinel to see the replica",
        Duration::from_secs(30),
        || {
            matches!(
                sentinel.query(&["SENTINEL", "replicas", "mymaster"]),
                Ok(redis::Value::Array(r)) if !r.is_empty()
            )
        },
    );
    wait_for(
        "the replica to hold the claim",
        Duration::from_secs(10),
        || replica.run("fo", "60000").is_some(),
    );
    wait_for("the failover to start", Duration::from_secs(30), || {
        sentinel
            .query(&["SENTINEL", "FAILOVER", "mymaster"])
            .is_ok()
    });
    wait_for(
        "the replica to be promoted",
        Duration::from_secs(30),
        || {
            sentinel.primary_port() == Some(replica.port)
                && replica.info_field("replication", "role").as_deref() == Some("master")
        },
    );

    // The same URL now reaches the new primary: the old run is known there, a new one is written.
    let out = claim("60000");
    assert_eq!(out.status.code(), Some(82), "{}", stderr(&out));
    let out = common::anarchon()
        .args([
            "--redis",
            &url,
            "claim",
            "fo",
            "--slot",
            "120000",
            "--overlap",
            "allow",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        replica.run("fo", "120000").is_some(),
        "the claim went to the new primary"
    );
    let out = common::anarchon()
        .args(["--redis", &url, "doctor"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("sentinel"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Passwords in the query of a Sentinel URL (issue 46, item 10): `?password=` (or `?pass=`) is the
/// primary's, `?sentinel_password=` the sentinel's; both are used, and neither is ever printed,
/// in a run's, `list`'s and `doctor`'s output or in an error.
#[test]
fn passwords_in_a_sentinel_url_s_query_are_used_and_never_printed() {
    let primary = Server::start_with(&["--requirepass", "S3cr3tPW"]);
    let sentinel = Sentinel::start_with(primary.port, Some("Sent1nelPW"), Some("S3cr3tPW"));
    let base = format!("redis+sentinel://127.0.0.1:{}/mymaster", sentinel.port);
    let said = |out: &std::process::Output| {
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(out));
        for secret in ["S3cr3tPW", "Sent1nelPW", "Wr0ngPW"] {
            assert!(!said.contains(secret), "{said}");
        }
        said
    };
    for (i, query) in [
        "?password=S3cr3tPW&sentinel_password=Sent1nelPW",
        "?sentinel_password=Sent1nelPW&pass=S3cr3tPW",
    ]
    .into_iter()
    .enumerate()
    {
        let url = format!("{base}{query}");
        let slot = (60_000 * (i + 1)).to_string();
        let anarchon = |args: &[&str]| {
            common::anarchon()
                .env("ANARCHON_REDIS_URL", &url)
                .args(args)
                .output()
                .unwrap()
        };
        let out = anarchon(&["run", "--job", "sq", "--slot", &slot, "--", "echo", "ran"]);
        let text = said(&out);
        assert_eq!(out.status.code(), Some(0), "{query}: {text}");
        let out = anarchon(&["list"]);
        let text = said(&out);
        assert_eq!(out.status.code(), Some(0), "{query}: {text}");
        assert!(text.contains("sq"), "{text}");
        let out = anarchon(&["doctor"]);
        let text = said(&out);
        assert!(text.contains("sentinel"), "{text}");
        // On the --redis flag too (which warns that ps shows it, without showing it).
        let out = common::anarchon()
            .args(["--redis", &url, "list"])
            .output()
            .unwrap();
        let text = said(&out);
        assert_eq!(out.status.code(), Some(0), "{query}: {text}");
    }
    // Wrong passwords are refused, and not printed either.
    for query in [
        "?password=Wr0ngPW&sentinel_password=Sent1nelPW",
        "?password=S3cr3tPW&sentinel_password=Wr0ngPW",
        "?password=S3cr3tPW",
    ] {
        let out = common::anarchon()
            .env("ANARCHON_REDIS_URL", format!("{base}{query}"))
            .args(["--connect-timeout", "2s", "list"])
            .output()
            .unwrap();
        let text = said(&out);
        assert_ne!(out.status.code(), Some(0), "{query}: {text}");
    }
}
