use clap::Parser;

use anarchon::cli::{Cli, Command};
use anarchon::commands::{Context, dispatch};

fn main() {
    let cli = match Cli::try_parse() {
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
    let ctx = Context::new(cli.global);
    // `run` passes on its command's exit code, which an output error must not replace.
    let runs_a_command = matches!(cli.command, Command::Run(_) | Command::RunNow(_));
    let mut code = runtime.block_on(async {
        match dispatch(cli.command, &ctx).await {
            Ok(code) => code,
            Err(e) => {
                anarchon::errln!("error: {}", e.with_hint());
                e.exit_code().code()
            }
        }
    });
    if let Some(why) = anarchon::output::write_failure() {
        anarchon::errln!("error: cannot write the output: {why}");
        if code == 0 && !runs_a_command {
            code = anarchon::error::ExitCode::Failure.code();
        }
    }
    std::process::exit(code);
}

/// Prints clap's help, version or usage error and says the exit code, under the output rule: help
/// to a closed pipe ends quietly (0); help that cannot be written otherwise (`--help > /dev/full`)
/// exits 1, as a command whose output failed; a usage error exits 2 whether or not stderr took it.
fn clap_exit(e: &clap::Error) -> i32 {
    let printed = e.print();
    match printed {
        Err(failure) if !e.use_stderr() && failure.kind() != std::io::ErrorKind::BrokenPipe => {
            anarchon::errln!("error: cannot write the output: {failure}");
            anarchon::error::ExitCode::Failure.code()
        }
        _ => e.exit_code(),
    }
}
