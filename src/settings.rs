//! The command line resolved into plain settings, once, at the top (as uv's `settings.rs` or
//! ripgrep's `HiArgs`): the clap structs of [`crate::cli`] become a [`Strategy`],
//! [`run::ClaimSettings`], [`RunnerOptions`] and [`ConnectOptions`], and each command's whole
//! settings: `run`'s [`run::RunSettings`], `claim`'s and `run-now`'s in [`claim`], the readers'
//! in [`read`], an operator's writes in [`operator`]. Every command's `execute` takes its
//! settings, never its clap struct, so a settings value can come from elsewhere (a crontab line,
//! a test). Nothing below this layer (`store`, `strategy`, `runner`, `connection`) knows the
//! command line; a test checks that.

pub mod claim;
pub mod cron;
pub mod crontab;
pub mod global;
pub mod next;
pub mod operator;
pub mod read;
pub mod run;
pub mod timeline;
pub mod top;

use std::time::Duration;

use crate::cli::{
    Backend, ExecArgs, GlobalArgs, LeaseArgs, LeaseLostAction, StrategyArgs, StrategyName,
};
use crate::connection::ConnectOptions;
use crate::error::{Error, Result};
use crate::runner::child::CommandSpec;
use crate::runner::{Backup, RunnerOptions};
use crate::store::Layout;
use crate::strategy::claim::{DEFAULT_LEASE, DEFAULT_MAX_ATTEMPTS};
use crate::strategy::{Strategy, default_runner};

/// `--listen` (`metrics`, `cron`): an address, or a port alone on loopback.
pub fn listen_address(text: &str) -> Result<std::net::SocketAddr> {
    let text = text.trim();
    let full = if text.chars().all(|c| c.is_ascii_digit()) {
        format!("127.0.0.1:{text}")
    } else {
        text.to_string()
    };
    full.parse().map_err(|_| {
        Error::usage(format!(
            "--listen {text:?} is not host:port (for example 127.0.0.1:9464) or a port"
        ))
    })
}

impl GlobalArgs {
    /// Whether no URL was set at all (no --redis, $ANARCHON_REDIS_URL, $REDIS_URL, --host, --port
    /// or --db): the default redis://localhost:6379 is what was tried. Under cron's almost empty
    /// environment that is the first pitfall, and an unreachable store says so (`main`).
    pub fn url_is_the_default(&self) -> bool {
        let set = |name: &str| std::env::var(name).is_ok_and(|u| !u.is_empty());
        self.redis.as_deref().is_none_or(str::is_empty)
            && !set("ANARCHON_REDIS_URL")
            && !set("REDIS_URL")
            && self.host.is_none()
            && self.port.is_none()
            && self.db.is_none()
    }

    /// The URL to connect to: --redis / $ANARCHON_REDIS_URL, then $REDIS_URL, then localhost.
    pub fn redis_url(&self) -> String {
        self.redis
            .clone()
            .filter(|u| !u.is_empty())
            .or_else(|| {
                std::env::var("ANARCHON_REDIS_URL")
                    .ok()
                    .filter(|u| !u.is_empty())
            })
            .or_else(|| std::env::var("REDIS_URL").ok().filter(|u| !u.is_empty()))
            .unwrap_or_else(|| "redis://localhost:6379".to_string())
    }

    /// The URL with --host, --port, --db (and --tls) in place of those parts of the URL from
    /// $ANARCHON_REDIS_URL / $REDIS_URL, keeping its others (user, password, the rest), as
    /// redis-cli's flags do: `-n 1` alone changes the database, not the server. A sentinel or
    /// cluster URL is not merged into: the parts name one server there.
    fn url_with_parts(&self) -> String {
        let plain = || {
            crate::connection::url_for(
                self.host.as_deref().unwrap_or("localhost"),
                self.port,
                self.db,
                self.tls,
            )
        };
        let base = self.redis_url();
        let Ok(mut url) = url::Url::parse(&base) else {
            return plain();
        };
        if !matches!(url.scheme(), "redis" | "rediss") {
            return plain();
        }
        if self.tls && url.scheme() == "redis" && url.set_scheme("rediss").is_err() {
            return plain();
        }
        if let Some(host) = &self.host
            && url.set_host(Some(host)).is_err()
        {
            return plain();
        }
        if url.port().is_none() && url.set_port(Some(6379)).is_err() {
            return plain();
        }
        if let Some(port) = self.port
            && url.set_port(Some(port)).is_err()
        {
            return plain();
        }
        if let Some(db) = self.db {
            url.set_path(&format!("/{db}"));
        }
        url.to_string()
    }

    /// The password from `--password-file` (its first line), else from the environment
    /// (`ANARCHON_REDIS_PASSWORD`, or redis-cli's own `REDISCLI_AUTH`, as its users have it set).
    fn password(&self) -> Result<Option<String>> {
        Ok(match &self.password_file {
            Some(path) => Some(
                warn_if_others_can_read(path)
                    .and_then(|()| std::fs::read_to_string(path))
                    .map_err(|e| {
                        Error::usage(format!(
                            "cannot read --password-file {}: {e}\n  hint: give a file this user can read holding the password alone (readable by it only: chmod 600), or set $ANARCHON_REDIS_PASSWORD",
                            path.display()
                        ))
                    })?
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            ),
            None => std::env::var("ANARCHON_REDIS_PASSWORD")
                .ok()
                .or_else(|| std::env::var("REDISCLI_AUTH").ok()),
        })
    }

    /// The URL as given: a flag typed on the command line beats a URL from the environment, as
    /// with redis-cli; `--port 6380` alone means localhost.
    fn url_text(&self) -> String {
        if self.host.is_some() || self.port.is_some() || self.db.is_some() {
            self.url_with_parts()
        } else {
            self.redis_url()
        }
    }

    /// Whether the Redis Cluster client is used (--cluster, or a +cluster:// URL from a flag or
    /// the environment), known without resolving the rest (no password file read).
    pub fn uses_cluster(&self) -> bool {
        self.cluster || self.url_text().contains("+cluster://")
    }

    /// Everything needed to connect: the URL (built from --host and friends when given), the
    /// password from --password-file or $ANARCHON_REDIS_PASSWORD when the URL has none, TLS, cluster.
    pub fn connect_options(&self) -> Result<ConnectOptions> {
        let text = self.url_text();
        let (text, sentinel) = if text.contains("+sentinel://") {
            let (target, plain) = crate::connection::SentinelTarget::parse(&text).map_err(|e| {
                Error::usage(format!(
                    "the sentinel URL is not usable: {e}\n  hint: use redis+sentinel://[user:password@]host:port[,host:port...]/<master-name>[/db]"
                ))
            })?;
            (plain, Some(target))
        } else {
            (text, None)
        };
        let (text, cluster_scheme) = match text.split_once("+cluster://") {
            Some((scheme, rest)) => (format!("{scheme}://{rest}"), true),
            None => (text, false),
        };
        let unparsed = |why: String| {
            let problem = crate::connection::unparsed_url_problem(&text)
                .map_or(String::new(), |p| format!(": {p}"));
            Error::usage(format!(
                "{} is not a Redis URL ({why}){problem}\n  hint: use redis://[user:password@]host:port[/db], rediss:// for TLS",
                crate::connection::redact_unparsed_url(&text)
            ))
        };
        // `host:6379` parses as a URL of the scheme `host`: no scheme the client knows.
        if !text.contains("://") {
            let shown = crate::connection::redact_unparsed_url(&text);
            return Err(Error::usage(format!(
                "{shown} is not a Redis URL: it has no scheme\n  hint: write redis://{shown} (rediss:// for TLS)"
            )));
        }
        let mut url = url::Url::parse(&text).map_err(|e| unparsed(e.to_string()))?;
        if let Some(user) = &self.user {
            url.set_username(user)
                .map_err(|_| Error::usage("--user cannot be set on this URL"))?;
        }
        let query_password = url
            .query_pairs()
            .any(|(name, _)| name == "pass" || name == "password");
        if url.password().is_none()
            && !query_password
            && let Some(password) = self.password()?.filter(|p| !p.is_empty())
            && url.set_password(Some(&password)).is_err()
        {
            // A unix socket URL has no user information: the client reads `?pass=` there.
            url.query_pairs_mut().append_pair("pass", &password);
        }
        warn_of_password_in_argv(self.redis.as_deref());
        // Only --tls-insecure turns certificate checks off: a `#insecure` left in a URL from the
        // environment must not do it silently.
        if url.fragment().is_some() && !self.tls_insecure {
            crate::errln!(
                "warning: ignoring #{} in the Redis URL; only --tls-insecure turns off certificate checks",
                url.fragment().unwrap_or_default()
            );
            url.set_fragment(None);
        }
        if self.tls_insecure {
            url.set_fragment(Some("insecure"));
        }
        let tls_ca = match &self.tls_ca {
            Some(path) => Some(std::fs::read(path).map_err(|e| {
                Error::usage(format!("cannot read --tls-ca {}: {e}", path.display()))
            })?),
            None => None,
        };
        let mut options = ConnectOptions::new(url.to_string());
        options.cluster = self.cluster || cluster_scheme;
        options.sentinel = sentinel;
        options.tls_ca = tls_ca;
        options.connect_timeout = self.connect_timeout;
        options.command_timeout = self.command_timeout;
        Ok(options)
    }
}

/// Builds the strategy from its flags: refuses settings of another strategy, and idmp on the
/// Valkey flavour.
pub fn strategy(args: &StrategyArgs, backend: Backend) -> Result<Strategy> {
    let name = args.strategy.unwrap_or(StrategyName::Lease);
    let misplaced = |flag: &str, owner: &str| {
        Error::usage(format!(
            "{flag} is a setting of the {owner} strategy, not of {}\n  hint: drop {flag}, or pass --strategy {owner}",
            name.name()
        ))
    };
    if args.window.is_some() && name != StrategyName::Script {
        return Err(misplaced("--window", "script"));
    }
    if args.idmp_duration.is_some() && name != StrategyName::Idmp {
        return Err(misplaced("--idmp-duration", "idmp"));
    }
    if args.idmp_max_size.is_some() && name != StrategyName::Idmp {
        return Err(misplaced("--idmp-max-size", "idmp"));
    }
    Ok(match name {
        StrategyName::Lease => Strategy::Lease,
        StrategyName::StreamId => Strategy::StreamId,
        StrategyName::Script => Strategy::Script {
            window: args.window.unwrap_or(Strategy::DEFAULT_WINDOW),
        },
        StrategyName::Idmp if backend == Backend::Valkey => {
            return Err(Error::usage(
                "the valkey backend has no idmp strategy: Valkey has no idempotent XADD\n  hint: use --strategy lease (leases, backups) or stream-id / script",
            ));
        }
        StrategyName::Idmp => Strategy::Idmp {
            duration_secs: args
                .idmp_duration
                .unwrap_or(Strategy::DEFAULT_IDMP_DURATION),
            max_size: args
                .idmp_max_size
                .unwrap_or(Strategy::DEFAULT_IDMP_MAX_SIZE),
        },
    })
}

impl StrategyName {
    /// The strategy's name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            StrategyName::Lease => "lease",
            StrategyName::StreamId => "stream-id",
            StrategyName::Idmp => "idmp",
            StrategyName::Script => "script",
        }
    }

    /// The key layout this strategy uses.
    pub fn layout(self) -> Layout {
        match self {
            StrategyName::Lease => Layout::Lease,
            StrategyName::StreamId | StrategyName::Idmp | StrategyName::Script => Layout::ClaimOnly,
        }
    }
}

impl LeaseArgs {
    /// The lease options given on the command line, for [`Strategy::refuse_lease_options`].
    pub fn given(&self) -> Vec<(&'static str, bool)> {
        vec![
            ("--lease", self.lease.is_some()),
            ("--max-attempts", self.max_attempts.is_some()),
            ("--overlap", self.overlap.is_some()),
        ]
    }

    /// `--overlap replace` and `buffer` act on a scheduled slot that an older run holds, by
    /// waiting; `claim` answers at once and `run-now` is a manual run: both refuse them.
    pub fn refuse_waiting_overlap(&self, command: &str) -> Result<()> {
        match self.overlap {
            Some(policy) if policy.needs_a_runner() => Err(Error::usage(format!(
                "--overlap {policy} works with `anarchon run` (scheduled slots) only; `{command}` takes forbid or allow"
            ))),
            Some(_) | None => Ok(()),
        }
    }

    pub fn lease_or_default(&self) -> Duration {
        self.lease.unwrap_or(DEFAULT_LEASE)
    }

    pub fn max_attempts_or_default(&self) -> u32 {
        self.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS)
    }
}

impl ExecArgs {
    /// Runner options for `command` under a lease of `lease`; checks the heartbeat fits the lease.
    /// `json`: stdout carries the JSON document, so the command's stdout goes to stderr.
    pub fn runner_options(
        &self,
        command: &[String],
        lease: Duration,
        json: bool,
    ) -> Result<RunnerOptions> {
        let heartbeat = self.heartbeat.unwrap_or(lease / 3);
        if heartbeat >= lease {
            return Err(Error::usage(format!(
                "--heartbeat {} must be shorter than --lease {}, or the lease expires between heartbeats",
                humantime::format_duration(heartbeat),
                humantime::format_duration(lease)
            )));
        }
        Ok(RunnerOptions {
            command: CommandSpec {
                argv: command.to_vec(),
                shell: self.shell,
                foreground: self.foreground,
                env: Vec::new(),
                env_remove: credential_variables(),
                timeout: self.timeout,
                kill_after: self.kill_after,
                stop_on_lease_lost: self.on_lease_lost != Some(LeaseLostAction::Continue),
                leave_children: self.leave_children,
                stdout_to_stderr: json,
                keep_stdout: self.keep_stdout,
                // Only `anarchon cron` supervises its commands; it sets this itself.
                supervised: None,
                // The runner starts the writer of each attempt's output itself.
                live: None,
            },
            live_output: self.live_output.then_some(crate::runner::live::LiveOutput {
                lines: self.live_output_lines,
            }),
            on_overlap: crate::runner::overlap::OnOverlap::Skip,
            // `run` sets its own (`--retries`); a manual run is not retried.
            retry: None,
            // `run` sets its own (`--limit`).
            limits: Vec::new(),
            // The command that runs it gives its exporter (`Context::trace`), started once.
            trace: None,
            // `run`'s terminal; the daemon gives its log instead.
            events: Default::default(),
            ping: None,
            // Only `run --catch-up` and `--backfill` go through missed runs in turn.
            in_turn: None,
            heartbeat,
            // Only `run` waits as a backup; it sets this itself.
            backup: Backup::No,
            quiet: self.quiet,
            // Only `run` waits for replicas; it sets this itself.
            replicas: None,
            standby_poll: crate::runner::backup::STANDBY_POLL_MAX,
            // Only `cron`'s replicas are woken by a hand-over (their requests stream).
            wakeups: None,
            // Only `run` (and `cron`'s lines) retry a refused claim until --max-late.
            max_late: None,
        })
    }
}

/// A password file that other users of the host can read is a password they have: warn (ssh
/// refuses such a key; a password file given on purpose is still used), once per process.
fn warn_if_others_can_read(path: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let mode = std::fs::metadata(path)?.permissions().mode();
    if mode & 0o077 != 0 && !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        crate::errln!(
            "warning: --password-file {} can be read by other users of this host (mode {:o})\n  hint: chmod 600 {}",
            path.display(),
            mode & 0o777,
            path.display()
        );
    }
    Ok(())
}

/// A password in `--redis` is in anarchon's argv, which every user of the host can read with `ps`
/// for the whole run (and the guard, forked without exec, carries the same argv): warn, once per
/// process, as redis-cli does for `-a`, and say what to use instead.
fn warn_of_password_in_argv(flag: Option<&str>) {
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let has_secret = flag.is_some_and(|text| !crate::connection::url_secrets(text).is_empty());
    if has_secret && !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        crate::errln!(
            "warning: a password in --redis is visible to every user of this host (ps) while anarchon runs\n  hint: use --password-file FILE or ANARCHON_REDIS_PASSWORD, or put the URL in ANARCHON_REDIS_URL"
        );
    }
}

/// anarchon's own credentials in its environment, which neither the wrapped command nor the
/// `--on-failure` hook may inherit: the password variables always, the URL variables when they
/// carry a user, a password or a `pass=` ([`crate::connection::url_secrets`], which also reads the
/// multi-Sentinel form). A URL without one stays: the command may use the same server itself.
pub fn credential_variables() -> Vec<String> {
    let mut names = vec![
        "ANARCHON_REDIS_PASSWORD".to_string(),
        "REDISCLI_AUTH".to_string(),
    ];
    for name in ["ANARCHON_REDIS_URL", "REDIS_URL"] {
        let has_secret = std::env::var(name)
            .ok()
            .is_some_and(|v| !crate::connection::url_secrets(&v).is_empty());
        if has_secret {
            names.push(name.to_string());
        }
    }
    names
}

impl ExecArgs {
    /// The lease options among these flags, for [`Strategy::refuse_lease_options`].
    pub fn given(&self) -> Vec<(&'static str, bool)> {
        vec![
            ("--heartbeat", self.heartbeat.is_some()),
            ("--on-lease-lost", self.on_lease_lost.is_some()),
        ]
    }
}

impl LeaseArgs {
    /// Who claims: `--runner`, or `host:pid`.
    pub fn runner(&self) -> String {
        self.runner.clone().unwrap_or_else(default_runner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(name: Option<StrategyName>) -> StrategyArgs {
        StrategyArgs {
            strategy: name,
            window: None,
            idmp_duration: None,
            idmp_max_size: None,
        }
    }

    #[test]
    fn settings_belong_to_their_strategy() {
        assert_eq!(
            strategy(&args(None), Backend::Redis).unwrap(),
            Strategy::Lease
        );
        let mut a = args(Some(StrategyName::Script));
        a.window = Some(Duration::from_secs(600));
        assert_eq!(
            strategy(&a, Backend::Redis).unwrap(),
            Strategy::Script {
                window: Duration::from_secs(600)
            }
        );
        a.strategy = Some(StrategyName::StreamId);
        let err = strategy(&a, Backend::Redis).unwrap_err().to_string();
        assert!(err.contains("--window") && err.contains("script"), "{err}");
        let mut a = args(None);
        a.idmp_max_size = Some(5);
        assert!(strategy(&a, Backend::Redis).is_err());
        let a = args(Some(StrategyName::Idmp));
        assert_eq!(
            strategy(&a, Backend::Redis).unwrap(),
            Strategy::Idmp {
                duration_secs: 300,
                max_size: 1000
            }
        );
        let err = strategy(&a, Backend::Valkey).unwrap_err();
        assert!(matches!(err, Error::Usage(_)));
    }

    /// clap needs durations as text; these defaults must be the constants the code uses.
    #[test]
    fn the_command_line_defaults_are_the_named_constants() {
        use clap::Parser;
        let cli = crate::cli::Cli::parse_from([
            "anarchon",
            "heartbeat",
            "j",
            "--slot",
            "1",
            "--token",
            "t",
        ]);
        assert_eq!(
            cli.global.connect_timeout,
            crate::connection::DEFAULT_CONNECT_TIMEOUT
        );
        assert_eq!(
            cli.global.command_timeout,
            crate::connection::DEFAULT_COMMAND_TIMEOUT
        );
        match cli.command {
            crate::cli::Command::Heartbeat(args) => assert_eq!(args.lease, DEFAULT_LEASE),
            other => panic!("{other:?}"),
        }
    }
}
