//! The settings of `anarchon top`: what it reads and how often, and how the commands it runs for
//! an action (`release`, `pause`, `resume`, `run-now`, `logs`) reach the same server and prefix.

use std::time::Duration;

use clap::ValueEnum;

use crate::cli::{GlobalArgs, TopArgs};
use crate::error::{Error, Result};

/// `anarchon top`.
#[derive(Debug, Clone)]
pub struct TopSettings {
    /// Only jobs whose name matches this Redis glob.
    pub pattern: String,
    /// How often the store is read again.
    pub interval: Duration,
    /// The connection settings of the commands top runs.
    pub children: ChildConnection,
}

/// The shortest `--interval`: a read of every job more often is a load, not a view.
const SHORTEST_INTERVAL: Duration = Duration::from_millis(100);

impl TopSettings {
    pub fn resolve(args: TopArgs, global: &GlobalArgs) -> Result<Self> {
        if args.interval < SHORTEST_INTERVAL {
            return Err(Error::usage(format!(
                "--interval {} is too short: top reads every job each time\n  hint: give 100ms or more (the default is 2s)",
                humantime::format_duration(args.interval)
            )));
        }
        Ok(TopSettings {
            pattern: args.pattern,
            interval: args.interval,
            children: ChildConnection::of(global),
        })
    }
}

/// How a command top runs (this same binary) reaches the server and prefix top reads: the URL,
/// prefix and backend through the environment variables the command line reads them from
/// (`$ANARCHON_REDIS_URL`, `$ANARCHON_PREFIX`, `$ANARCHON_BACKEND`), so that a password in the URL
/// never shows in the process list; the other connection flags, none of them secret (a password
/// file is passed by its path), as flags. A password from `$ANARCHON_REDIS_PASSWORD` or
/// `$REDISCLI_AUTH` reaches the command as top's whole environment does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChildConnection {
    pub env: Vec<(&'static str, String)>,
    pub args: Vec<String>,
}

impl ChildConnection {
    pub fn of(global: &GlobalArgs) -> Self {
        // The URL top connects to before the password and TLS options are applied to it: what
        // `connect_options` starts from, so the command resolves it the same way.
        let url = if global.host.is_some() || global.port.is_some() || global.db.is_some() {
            global.url_with_parts()
        } else {
            global.redis_url()
        };
        let backend = global
            .backend
            .to_possible_value()
            .map_or("redis".to_string(), |v| v.get_name().to_string());
        let env = vec![
            ("ANARCHON_REDIS_URL", url),
            ("ANARCHON_PREFIX", global.prefix.clone()),
            ("ANARCHON_BACKEND", backend),
        ];
        let mut args = Vec::new();
        let mut pass = |flag: &str, value: Option<String>| {
            if let Some(value) = value {
                args.push(flag.to_string());
                args.push(value);
            }
        };
        pass("--user", global.user.clone());
        pass(
            "--password-file",
            global
                .password_file
                .as_ref()
                .map(|p| p.display().to_string()),
        );
        pass(
            "--tls-ca",
            global.tls_ca.as_ref().map(|p| p.display().to_string()),
        );
        pass(
            "--connect-timeout",
            Some(humantime::format_duration(global.connect_timeout).to_string()),
        );
        pass(
            "--command-timeout",
            Some(humantime::format_duration(global.command_timeout).to_string()),
        );
        if global.tls_insecure {
            args.push("--tls-insecure".into());
        }
        if global.cluster {
            args.push("--cluster".into());
        }
        ChildConnection { env, args }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn global(args: &[&str]) -> GlobalArgs {
        let mut argv = vec!["anarchon"];
        argv.extend_from_slice(args);
        argv.push("top");
        crate::cli::Cli::try_parse_from(argv).unwrap().global
    }

    #[test]
    fn the_url_and_prefix_go_through_the_environment_never_the_arguments() {
        let child = ChildConnection::of(&global(&[
            "--redis",
            "redis://ops:s3cret@db.internal:6380/2",
            "--prefix",
            "jobs:",
            "--backend",
            "valkey",
            "--cluster",
        ]));
        assert_eq!(
            child.env,
            vec![
                (
                    "ANARCHON_REDIS_URL",
                    "redis://ops:s3cret@db.internal:6380/2".into()
                ),
                ("ANARCHON_PREFIX", "jobs:".into()),
                ("ANARCHON_BACKEND", "valkey".into()),
            ]
        );
        assert!(
            !child.args.iter().any(|a| a.contains("s3cret")),
            "{:?}",
            child.args
        );
        assert!(child.args.contains(&"--cluster".to_string()));
        assert!(child.args.contains(&"5s".to_string()), "{:?}", child.args);
    }

    #[test]
    fn host_and_port_flags_become_the_url() {
        let child = ChildConnection::of(&global(&["--host", "10.0.0.5", "--port", "6390"]));
        assert_eq!(child.env[0].1, "redis://10.0.0.5:6390");
        let with_file = ChildConnection::of(&global(&["--password-file", "/run/pw"]));
        assert!(
            with_file
                .args
                .windows(2)
                .any(|w| w == ["--password-file", "/run/pw"])
        );
    }
}
