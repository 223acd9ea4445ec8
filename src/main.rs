use anarchon::cli::{Cli, Command};
use anarchon::commands::{Context, dispatch};

fn main() {
    anarchon::time::mark_process_start();
    if let Some(said) = redis_cli_habit(std::env::args_os().skip(1)) {
        anarchon::errln!("error: {said}");
        std::process::exit(anarchon::error::ExitCode::Usage.code());
    }
    let cli = match Cli::from_command_line(std::env::args_os().collect()) {
        Ok(cli) => cli,
        Err(e) => std::process::exit(clap_exit(&e)),
    };
    // rustls needs one process-wide crypto provider for rediss:// connections.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            anarchon::errln!("error: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    let ctx = Context::new(&cli.global);
    // `run` passes on its command's exit code, which an output error must not replace.
    let runs_a_command = matches!(cli.command, Command::Run(_) | Command::RunNow(_));
    let mut code = runtime.block_on(async {
        match dispatch(cli.command, &cli.global, &ctx).await {
            Ok(status) => status.code(),
            Err(e) => {
                anarchon::errln!("error: {}", e.with_hint());
                if matches!(e, anarchon::error::Error::Connection { .. })
                    && cli.global.url_is_the_default()
                {
                    anarchon::errln!(
                        "  hint: no Redis URL was set (--redis, $ANARCHON_REDIS_URL, $REDIS_URL, --host/--port), so the default redis://localhost:6379 was tried; cron starts commands with almost no environment: set ANARCHON_REDIS_URL=redis://HOST:PORT on a line of the crontab itself, or pass --redis"
                    );
                }
                e.exit_code().code()
            }
        }
    });
    // The runs' last spans, after every run is recorded (bounded: a collector gone or slow costs
    // the spans, not the exit).
    ctx.finish_trace();
    if let Some(why) = anarchon::output::write_failure() {
        anarchon::errln!("error: cannot write the output: {why}");
        if code == 0 && !runs_a_command {
            code = anarchon::error::ExitCode::Failure.code();
        }
    }
    // `anarchon cron` writes its lines through a queue: its last ones go out before the exit.
    anarchon::lines::flush_daemon_log(std::time::Duration::from_secs(2));
    std::process::exit(code);
}

/// Prints clap's help, version or usage error and says the exit code, under the output rule: help
/// to a closed pipe ends quietly (0); help that cannot be written otherwise (`--help > /dev/full`)
/// exits 1, as a command whose output failed; a usage error exits 2 whether or not stderr took it.
fn clap_exit(e: &clap::Error) -> i32 {
    let printed = e.print();
    // `run --job x /bin/true`: the command's first word taken for an argument of run's.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if e.kind() == clap::error::ErrorKind::UnknownArgument
        && matches!(args.first().map(String::as_str), Some("run" | "run-now"))
        && !args.iter().any(|a| a == "--")
    {
        anarchon::errln!(
            "  tip: the command goes after `--`, so that its own flags are not taken for anarchon's: anarchon {} ... -- COMMAND [ARGS]",
            args[0]
        );
    }
    match printed {
        Err(failure) if !e.use_stderr() && failure.kind() != std::io::ErrorKind::BrokenPipe => {
            anarchon::errln!("error: cannot write the output: {failure}");
            anarchon::error::ExitCode::Failure.code()
        }
        _ => e.exit_code(),
    }
}

/// redis-cli's connection flags, which mean something else here or nothing: said with what to type
/// instead, before clap would print the help for `-h 127.0.0.1` (and exit 0, so that a script
/// believes `anarchon -h host list` ran). Only anarchon's own arguments are looked at (up to `--`).
/// What a command name anarchon does not have is called here (clap's own suggestion goes by
/// spelling: `health` would get `heartbeat`).
fn other_spelling(word: &str) -> Option<&'static str> {
    match word {
        "health" | "status" | "healthcheck" => Some(
            "`anarchon check [JOB]` judges each job's health (a monitoring plugin: exit 0-3); `anarchon list` shows it for every job",
        ),
        _ => None,
    }
}

fn redis_cli_habit(args: impl Iterator<Item = std::ffi::OsString>) -> Option<String> {
    use clap::CommandFactory;
    let args: Vec<String> = args
        .map(|a| a.to_string_lossy().into_owned())
        .take_while(|a| a != "--")
        .collect();
    // Whether anarchon has a command of that name. The whole command tree is built only when
    // asked: clap builds it again to parse, and every start (`anarchon run` from a crontab) would
    // pay for it twice.
    let is_command = |word: &str| {
        Cli::command()
            .get_subcommands()
            .any(|c| c.get_name() == word)
    };
    // The first word that is no option (nor an option's value: close enough for a hint) is the
    // command: a name people reach for that anarchon spells otherwise.
    if let Some(word) = args.iter().find(|a| !a.starts_with('-'))
        && let Some(hint) = other_spelling(word)
        && !is_command(word)
    {
        return Some(format!("there is no command {word:?}\n  hint: {hint}"));
    }
    for (i, arg) in args.iter().enumerate() {
        let value = args.get(i + 1).filter(|v| !v.starts_with('-'));
        match (arg.as_str(), value) {
            ("-h", Some(host)) if !is_command(host) => {
                return Some(format!(
                    "-h is --help here, not redis-cli's host\n  hint: type --host {host} (and --port, --db; or --redis redis://{host}:PORT)"
                ));
            }
            ("-a", _) => {
                return Some(
                    "-a is redis-cli's password flag, which anarchon does not take: a password in the arguments is visible to every user of this host (ps)\n  hint: use --password-file FILE, or $ANARCHON_REDIS_PASSWORD (or redis-cli's $REDISCLI_AUTH)".to_string(),
                );
            }
            ("-u", _) => {
                return Some("-u is redis-cli's URL flag\n  hint: type --redis URL (or set $ANARCHON_REDIS_URL)".to_string());
            }
            _ => {}
        }
    }
    None
}
