//! Connecting: TLS with a throwaway CA, ACL users, passwords, timeouts, and Redis Cluster.

use crate::common;
use std::path::Path;
use std::process::{Command as Process, Output};
use std::time::{Duration, Instant};

use crate::common::{Server, json, stderr};

fn openssl(dir: &Path, args: &[&str]) {
    let status = Process::new("openssl")
        .args(args)
        .current_dir(dir)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("openssl (Debian package openssl) is needed for the TLS test");
    assert!(status.success(), "openssl {args:?}");
}

/// A CA and a server certificate for 127.0.0.1, made for this test only.
fn make_certs(dir: &Path) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-subj",
            "/CN=anarchon-test-ca",
            "-days",
            "1",
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    );
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "1",
            "-extfile",
            "san.ext",
        ],
    );
}

#[test]
fn tls_with_a_throwaway_ca() {
    let certs = tempfile::tempdir().unwrap();
    make_certs(certs.path());
    let p = |f: &str| certs.path().join(f).to_str().unwrap().to_string();
    let (cert, key, ca) = (p("server.pem"), p("server.key"), p("ca.pem"));
    if !Server::start().has_config("tls-port") {
        return common::skip("this server was built without TLS");
    }
    // The TLS port is picked anew on each try of the start (another test may take a picked port).
    let (s, port) = Server::start_with_port_option(
        "--tls-port",
        &[
            "--tls-cert-file",
            &cert,
            "--tls-key-file",
            &key,
            "--tls-ca-cert-file",
            &ca,
            "--tls-auth-clients",
            "no",
        ],
    );
    let port_s = port.to_string();
    let url = format!("rediss://127.0.0.1:{port}");
    let run = |extra: &[&str]| -> Output {
        common::anarchon()
            .args(extra)
            .args([
                "claim",
                "tls-job",
                "--slot",
                "1000",
                "--json",
                "--overlap",
                "allow",
            ])
            .output()
            .unwrap()
    };
    let out = run(&["--redis", &url, "--tls-ca", &ca]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["outcome"], "won");
    // The claim really went through TLS to the same server.
    assert_eq!(s.cmd::<i64>(&["EXISTS", "{cron:tls-job}:state"]), 1);

    // Without the CA the certificate is unknown: a connection error that says so.
    let out = run(&["--redis", &url]);
    assert_eq!(out.status.code(), Some(90), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot reach Redis"),
        "{}",
        stderr(&out)
    );

    // --tls-insecure skips verification; --host/--port/--tls build the same connection.
    let out = run(&["--redis", &url, "--tls-insecure"]);
    assert_eq!(out.status.code(), Some(82), "{}", stderr(&out));
    let out = run(&[
        "--host",
        "127.0.0.1",
        "--port",
        &port_s,
        "--tls",
        "--tls-ca",
        &ca,
    ]);
    assert_eq!(out.status.code(), Some(82), "{}", stderr(&out));
}

/// The ACL line README documents, for prefix `cron:`.
/// README's ACL line. No `resetchannels` (Redis 6.2+): the user gets no pub/sub command, so its
/// channel permissions never matter, and the line works on every ACL-capable server (6.0+, Valkey).
const ACL: &str = "on >s3cret resetkeys ~cron:* ~{cron:* -@all +@read +@write +@scripting +@connection +info +time -memory +memory|usage -@admin";

#[test]
fn an_acl_user_limited_to_the_prefix_can_run_every_command() {
    let s = Server::start();
    if !s.has_acl() {
        return common::skip("this server has no ACLs");
    }
    let mut args = vec!["ACL", "SETUSER", "anarchon"];
    args.extend(ACL.split_whitespace());
    let _: () = s.cmd(&args);
    let url = format!("redis://anarchon:s3cret@127.0.0.1:{}", s.port);
    let ok = |cmd: &[&str]| -> Output {
        let out = common::anarchon()
            .args(["--redis", &url])
            .args(cmd)
            .output()
            .unwrap();
        assert!(
            out.status.code() == Some(0),
            "{cmd:?} failed for the ACL user: {}",
            stderr(&out)
        );
        out
    };
    let token = json(&ok(&["claim", "acl", "--slot", "1000", "--json"]))["token"]
        .as_str()
        .unwrap()
        .to_string();
    ok(&["heartbeat", "acl", "--slot", "1000", "--token", &token]);
    ok(&[
        "finish", "acl", "--slot", "1000", "--token", &token, "--status", "ok",
    ]);
    ok(&[
        "run",
        "--job",
        "acl",
        "--slot",
        "2000",
        "--overlap",
        "allow",
        "--",
        "true",
    ]);
    ok(&["run-now", "acl", "--", "true"]);
    ok(&["claim", "acl-s", "--slot", "1000", "--strategy", "script"]);
    ok(&[
        "claim",
        "acl-i",
        "--slot",
        "1000",
        "--strategy",
        "stream-id",
    ]);
    ok(&["list"]);
    ok(&["inspect", "acl"]);
    ok(&["history", "acl"]);
    ok(&["trim", "acl", "--keep", "1", "--yes"]);
    ok(&["trim", "--all", "--yes"]);
    ok(&["doctor"]);
    // Another prefix is out of bounds: a clear error naming the ACL.
    let out = common::anarchon()
        .args([
            "--redis", &url, "--prefix", "other:", "claim", "x", "--slot", "1",
        ])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("NOPERM") || stderr(&out).contains("ACL"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn passwords_come_from_the_url_a_file_or_the_environment_and_are_never_printed() {
    let s = Server::start_with(&["--requirepass", "pa55word"]);
    let plain = format!("redis://127.0.0.1:{}", s.port);
    let claim = |cmd: &mut assert_cmd::Command| -> Output {
        cmd.args(["claim", "pw", "--slot", "1000", "--overlap", "allow"])
            .output()
            .unwrap()
    };
    let mut c = common::anarchon();
    c.args([
        "--redis",
        &format!("redis://:pa55word@127.0.0.1:{}", s.port),
    ]);
    assert_eq!(claim(&mut c).status.code(), Some(0));

    let file = s.dir.path().join("password");
    std::fs::write(&file, "pa55word\n").unwrap();
    let mut c = common::anarchon();
    c.args(["--redis", &plain, "--password-file", file.to_str().unwrap()]);
    assert_eq!(claim(&mut c).status.code(), Some(82));

    let mut c = common::anarchon();
    c.env("ANARCHON_REDIS_PASSWORD", "pa55word").args([
        "--host",
        "127.0.0.1",
        "--port",
        &s.port.to_string(),
    ]);
    assert_eq!(claim(&mut c).status.code(), Some(82));

    // A wrong password: a connection error that names neither password.
    let mut c = common::anarchon();
    c.args([
        "--redis",
        &format!("redis://:wrongpass@127.0.0.1:{}", s.port),
    ]);
    let out = claim(&mut c);
    assert_eq!(out.status.code(), Some(90), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        !err.contains("wrongpass") && !err.contains("pa55word"),
        "{err}"
    );
    assert!(err.contains("***") && err.contains("password"), "{err}");
    assert!(err.contains("refused this user name and password"), "{err}");
    // No password at all: said plainly, not as the client library's pipeline dump.
    let mut c = common::anarchon();
    c.args(["--redis", &plain]);
    let out = claim(&mut c);
    assert_eq!(out.status.code(), Some(90));
    let err = stderr(&out);
    assert!(err.contains("the server requires a password"), "{err}");
    assert!(!err.contains("Pipeline failures"), "{err}");
    assert!(err.contains("--password-file"), "{err}");
    // A password sent to a server that has none.
    let open = Server::start();
    let mut c = common::anarchon();
    c.args([
        "--redis",
        &format!("redis://:pa55word@127.0.0.1:{}", open.port),
    ]);
    let out = claim(&mut c);
    assert_eq!(out.status.code(), Some(90), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("the server has no password set"), "{err}");
    assert!(!err.contains("pa55word"), "{err}");
    // An unreadable password file is a usage error.
    let mut c = common::anarchon();
    c.args(["--redis", &plain, "--password-file", "/nonexistent/pw"]);
    assert_eq!(claim(&mut c).status.code(), Some(2));
}

#[test]
fn a_stalled_server_fails_within_the_command_timeout() {
    let s = Server::start();
    s.pause(true);
    let start = Instant::now();
    let out = s
        .anarchon()
        .args([
            "--command-timeout",
            "500ms",
            "--connect-timeout",
            "500ms",
            "claim",
            "j",
            "--slot",
            "1",
        ])
        .output()
        .unwrap();
    s.pause(false);
    assert_eq!(out.status.code(), Some(90), "{}", stderr(&out));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}

/// A three-primary Redis Cluster on loopback, made with `redis-cli --cluster create`.
struct Cluster {
    nodes: Vec<Server>,
}

impl Cluster {
    fn start() -> Option<Cluster> {
        if !common::have("redis-cli") {
            assert!(
                !common::nothing_may_be_skipped(),
                ".ci/run must install redis-tools"
            );
            return None;
        }
        let nodes: Vec<Server> = (0..3)
            .map(|_| {
                Server::start_with(&[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                ])
            })
            .collect();
        let mut args: Vec<String> = vec!["--cluster".into(), "create".into()];
        args.extend(nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)));
        args.extend([
            "--cluster-replicas".into(),
            "0".into(),
            "--cluster-yes".into(),
        ]);
        let out = Process::new("redis-cli").args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        for n in &nodes {
            loop {
                let info: String = n.cmd(&["CLUSTER", "INFO"]);
                if info.contains("cluster_state:ok") {
                    break;
                }
                assert!(Instant::now() < deadline, "cluster did not become ok");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        if Server::test_store_format() == 2 {
            // The format key on the one node that serves its slot (the others answer MOVED), as
            // common::Server does for a single server.
            let set: Vec<bool> = nodes
                .iter()
                .map(|n| {
                    redis::cmd("SET")
                        .arg("cron:format")
                        .arg(2)
                        .query::<()>(&mut n.client())
                        .is_ok()
                })
                .collect();
            assert_eq!(set.iter().filter(|ok| **ok).count(), 1, "{set:?}");
        }
        Some(Cluster { nodes })
    }

    fn url(&self) -> String {
        format!("redis+cluster://127.0.0.1:{}", self.nodes[0].port)
    }
}

#[test]
fn redis_cluster_claims_runs_and_lists_jobs_on_every_node() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.url();
    let cli = |args: &[&str]| -> Output {
        common::anarchon()
            .args(["--redis", &url])
            .args(args)
            .output()
            .unwrap()
    };
    // Enough jobs that their hash tags land on all three nodes.
    let jobs: Vec<String> = (0..12).map(|i| format!("job{i}")).collect();
    for job in &jobs {
        let out = cli(&["run", "--job", job, "--slot", "1000", "--", "true"]);
        assert_eq!(out.status.code(), Some(0), "{job}: {}", stderr(&out));
        let out = cli(&["claim", job, "--slot", "1000"]);
        assert_eq!(out.status.code(), Some(81), "{job}: {}", stderr(&out));
    }
    let per_node: Vec<usize> = cluster
        .nodes
        .iter()
        .map(|n| {
            let keys: Vec<String> = n.cmd(&["KEYS", "{cron:*"]);
            keys.len()
        })
        .collect();
    assert!(
        per_node.iter().filter(|n| **n > 0).count() >= 2,
        "{per_node:?}"
    );

    let v = json(&cli(&["list", "--json"]));
    let listed: Vec<&str> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["job"].as_str().unwrap())
        .collect();
    let mut expected: Vec<&str> = jobs.iter().map(String::as_str).collect();
    expected.sort();
    assert_eq!(listed, expected);
    assert!(
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|j| j["last_status"] == "finished")
    );
    let out = cli(&["inspect", "job7", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["runs"][0]["status"], "finished");
    let out = cli(&["claim", "cj", "--slot", "1000", "--strategy", "script"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&cli(&["doctor", "--json"]));
    assert_eq!(v["server"]["mode"], "cluster");
}

/// redis-cli habits: `-p PORT` alone means localhost, and a flag typed on the command line wins
/// over a URL in the environment.
#[test]
fn port_alone_means_localhost_and_flags_beat_the_environment() {
    let s = Server::start();
    let port = s.port.to_string();
    let dead = format!("redis://127.0.0.1:{}", common::dead_port());
    for env in [None, Some(dead.as_str())] {
        let mut cmd = common::anarchon();
        if let Some(url) = env {
            cmd.env("ANARCHON_REDIS_URL", url);
        }
        let out = cmd
            .args([
                "-p",
                &port,
                "claim",
                "j",
                "--slot",
                "60000",
                "--overlap",
                "allow",
            ])
            .output()
            .unwrap();
        // The first claim wins; the second finds it held: both reached the server.
        assert!(
            [Some(0), Some(82)].contains(&out.status.code()),
            "env {env:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(s.run("j", "60000").is_some());
    // --redis and --port together are a contradiction, said before anything is sent.
    let out = common::anarchon()
        .args(["--redis", &s.url, "--port", &port, "list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A server whose certificate is its own CA (self-signed, given to anarchon as --tls-ca): TLS
/// verification refuses it, and the error says why and what to do, not "check the host and port".
#[test]
fn a_self_signed_ca_as_the_servers_certificate_is_named() {
    let certs = tempfile::tempdir().unwrap();
    make_certs(certs.path());
    let p = |f: &str| certs.path().join(f).to_str().unwrap().to_string();
    if !Server::start().has_config("tls-port") {
        return common::skip("this server was built without TLS");
    }
    let (ca, ca_key) = (p("ca.pem"), p("ca.key"));
    let (_s, port) = Server::start_with_port_option(
        "--tls-port",
        &[
            "--tls-cert-file",
            &ca,
            "--tls-key-file",
            &ca_key,
            "--tls-ca-cert-file",
            &ca,
            "--tls-auth-clients",
            "no",
        ],
    );
    let out = common::anarchon()
        .args([
            "--redis",
            &format!("rediss://127.0.0.1:{port}"),
            "--tls-ca",
            &ca,
            "list",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(90), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("its own CA"), "{err}");
    assert!(!err.contains("check the host and port"), "{err}");
}

/// A database the server does not have, and a password typed on the command line.
#[test]
fn a_missing_database_and_a_password_in_argv_are_named() {
    let s = Server::start_with(&["--requirepass", "s3cret"]);
    let out = common::anarchon()
        .args([
            "--redis",
            &format!("redis://:s3cret@127.0.0.1:{}/99", s.port),
            "list",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(90), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("no such database"), "{err}");
    assert!(!err.contains("nothing listens"), "{err}");
    // Warned once, with what to use instead; the password itself is never printed.
    assert_eq!(err.matches("visible to every user").count(), 1, "{err}");
    assert!(err.contains("--password-file"), "{err}");
    assert!(!err.contains("s3cret"), "{err}");
    // From the environment, not in argv: no warning.
    let out = common::anarchon()
        .env(
            "ANARCHON_REDIS_URL",
            format!("redis://:s3cret@127.0.0.1:{}", s.port),
        )
        .arg("list")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("visible"), "{}", stderr(&out));
}

/// `-n 1` or `-p` alone change that part of $ANARCHON_REDIS_URL and keep the others (host,
/// password), as redis-cli's flags do, instead of replacing the whole URL with localhost's.
#[test]
fn host_port_and_db_flags_change_only_their_part_of_the_url() {
    let s = Server::start_with(&["--requirepass", "pa55"]);
    let env_url = format!("redis://:pa55@127.0.0.1:{}/0", s.port);
    let ran = |args: &[&str]| {
        common::anarchon()
            .env("ANARCHON_REDIS_URL", &env_url)
            .args(args)
            .output()
            .unwrap()
    };
    // Database 3 of the same server, with the URL's password.
    let out = ran(&["-n", "3", "claim", "db3", "--slot", "60000", "--new"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut c = redis::Client::open(format!("redis://:pa55@127.0.0.1:{}/3", s.port))
        .unwrap()
        .get_connection()
        .unwrap();
    let format: Option<String> = redis::cmd("GET").arg("cron:format").query(&mut c).unwrap();
    assert_eq!(format.as_deref(), Some("1"));
    // The port alone: the URL's host and password go with it.
    let out = ran(&["-p", &s.port.to_string(), "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Neither the wrapped command nor the `--on-failure` hook inherits anarchon's credentials: the
/// password variables, a URL with a password, a unix socket URL with `?pass=` (#35, items 6 and
/// 11). What each of them saw is what it wrote down. An error with a wrong `?pass=` names no
/// password either.
#[test]
fn neither_the_command_nor_the_failure_hook_sees_the_redis_password() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("redis.sock");
    let s = Server::start_with(&[
        "--unixsocket",
        sock.to_str().unwrap(),
        "--unixsocketperm",
        "700",
        "--requirepass",
        "Pa55-s3cret",
    ]);
    let urls = [
        format!("redis://:Pa55-s3cret@127.0.0.1:{}", s.port),
        format!("unix://{}?db=0&pass=Pa55-s3cret", sock.display()),
    ];
    for (i, url) in urls.iter().enumerate() {
        let (cmd_env, hook_env) = (
            dir.path().join(format!("cmd-{i}")),
            dir.path().join(format!("hook-{i}")),
        );
        let out = s
            .anarchon_process()
            .env("ANARCHON_REDIS_URL", url)
            .env("REDISCLI_AUTH", "Pa55-s3cret")
            .env("ANARCHON_REDIS_PASSWORD", "Pa55-s3cret")
            .args([
                "run",
                "--job",
                &format!("pw{i}"),
                "--slot",
                "now",
                "--on-failure",
                &format!("env > {}", hook_env.display()),
                "--shell",
                "--",
                &format!("env > {}; exit 3", cmd_env.display()),
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{url}: {}", stderr(&out));
        for file in [&cmd_env, &hook_env] {
            let env = std::fs::read_to_string(file)
                .unwrap_or_else(|e| panic!("{url}: {} not written: {e}", file.display()));
            assert!(env.contains("ANARCHON_JOB="), "{env}");
            assert!(
                !env.contains("s3cret"),
                "{url}: {} saw the password:\n{env}",
                file.display()
            );
        }
    }
    // A wrong password in a unix socket URL is not printed back.
    let out = s
        .anarchon_process()
        .env(
            "ANARCHON_REDIS_URL",
            format!("unix://{}?pass=WRONGPW", sock.display()),
        )
        .args(["list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(90), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(!err.contains("WRONGPW"), "{err}");
    assert!(err.contains("***"), "{err}");
}

/// A password file other users can read is used, with a warning that says how to fix it; one
/// only its owner reads draws no word (#36, item 5).
#[test]
fn a_password_file_others_can_read_is_warned_about() {
    use std::os::unix::fs::PermissionsExt;
    let s = Server::start_with(&["--requirepass", "pa55word"]);
    let file = s.dir.path().join("password");
    std::fs::write(&file, "pa55word\n").unwrap();
    let list = |mode: u32| {
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = common::anarchon()
            .args([
                "--redis",
                &format!("redis://127.0.0.1:{}", s.port),
                "--password-file",
                file.to_str().unwrap(),
                "list",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stderr(&out)
    };
    let err = list(0o644);
    assert!(err.contains("can be read by other users"), "{err}");
    assert!(err.contains("chmod 600"), "{err}");
    assert!(!err.contains("pa55word"), "{err}");
    let err = list(0o600);
    assert!(!err.contains("warning"), "{err}");
}

/// A password in a URL that does not parse is never shown (issue 62 item 3): whatever stands
/// between `//` and the last `@` (an unencoded `#`, `/` or `?` ends a parser's idea of the
/// password early), in `list`'s error, from a flag or the environment, and in `cron`'s log; and
/// the message says what is wrong (the character to percent-encode, or the missing scheme).
#[test]
fn a_password_in_a_url_that_does_not_parse_is_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let crontab = dir.path().join("crontab");
    std::fs::write(&crontab, "* * * * * true\n").unwrap();
    let forms = [
        ("redis://u:Pw#SECRET1@127.0.0.1:6379", Some("%23")),
        ("redis://u:Pw/SECRET2@127.0.0.1:6379", Some("%2F")),
        ("redis://u:Pw?SECRET3@127.0.0.1:6379", Some("%3F")),
        ("redis://u:SECRET4@127.0.0.1:notaport", None),
        ("redis://:SECRET5@[::1", None),
        ("rediss://u:Pw#SECRET6@h:1/0", Some("%23")),
        ("u:SECRET7@localhost:6379", Some("no scheme")),
        ("localhost:6379", Some("write redis://localhost:6379")),
    ];
    for (url, says) in forms {
        let runs = [
            common::anarchon()
                .env("ANARCHON_REDIS_URL", url)
                .arg("list")
                .output()
                .unwrap(),
            common::anarchon()
                .args(["--redis", url, "list"])
                .output()
                .unwrap(),
            common::anarchon()
                .env("ANARCHON_REDIS_URL", url)
                .args(["cron", crontab.to_str().unwrap(), "--log-format", "json"])
                .output()
                .unwrap(),
        ];
        for out in runs {
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert_ne!(out.status.code(), Some(0), "{url}: {said}");
            assert!(!said.contains("SECRET"), "{url}: {said}");
            if let Some(words) = says {
                assert!(said.contains(words), "{url}: {said}");
            }
        }
    }
}

/// With no URL set anywhere (cron's almost empty environment: the README's first crontab
/// pitfall), an unreachable store says that the default was tried and how to set one (issue 62
/// item 5); with a URL set, it does not.
#[test]
fn an_unreachable_default_url_says_no_url_was_set() {
    let bare = common::anarchon()
        .env_remove("ANARCHON_REDIS_URL")
        .env_remove("REDIS_URL")
        .arg("list")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&bare.stderr).to_string();
    // (Something may listen on localhost:6379 on a developer's machine: then it answered.)
    if bare.status.code() == Some(90) {
        assert!(
            said.contains("no Redis URL was set") && said.contains("ANARCHON_REDIS_URL=redis://"),
            "{said}"
        );
    }
    let set = common::anarchon()
        .env(
            "ANARCHON_REDIS_URL",
            format!("redis://127.0.0.1:{}", common::dead_port()),
        )
        .arg("list")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&set.stderr).to_string();
    assert_eq!(set.status.code(), Some(90), "{said}");
    assert!(!said.contains("no Redis URL was set"), "{said}");
}
