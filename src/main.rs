use clap::Parser;

use anarchon::cli::Cli;
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
    let code = runtime.block_on(async {
        match dispatch(cli.command, &ctx).await {
            Ok(code) => code,
            Err(e) => {
                eprintln!("error: {}", e.with_hint());
                e.exit_code().code()
            }
        }
    });
    std::process::exit(code);
}
