use clap::Parser;

use anarchon::cli::{Cli, Command};
use anarchon::commands::{Context, dispatch};

fn main() {
    let cli = Cli::parse();
    // rustls needs one process-wide crypto provider for rediss:// connections.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
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
                eprintln!("error: {}", e.with_hint());
                e.exit_code().code()
            }
        }
    });
    if let Some(why) = anarchon::output::write_failure() {
        eprintln!("error: cannot write the output: {why}");
        if code == 0 && !runs_a_command {
            code = anarchon::error::ExitCode::Failure.code();
        }
    }
    std::process::exit(code);
}
