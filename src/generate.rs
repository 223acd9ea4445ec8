//! Shell completions and man pages, generated from the clap definitions in [`crate::cli`].
//! The files in `completions/` and `man/` are these functions' output; tests/generated.rs fails
//! when they are stale (regenerate with `anarchon completions --dir completions` and
//! `anarchon man --dir man`).

use std::io;
use std::path::Path;

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;

/// Each shell and the file its completions are committed as.
pub const COMPLETION_FILES: [(Shell, &str); 5] = [
    (Shell::Bash, "anarchon.bash"),
    (Shell::Zsh, "_anarchon"),
    (Shell::Fish, "anarchon.fish"),
    (Shell::PowerShell, "_anarchon.ps1"),
    (Shell::Elvish, "anarchon.elv"),
];

/// The completion script for `shell`.
pub fn completion(shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "anarchon", &mut out);
    out
}

/// Writes every shell's completions into `dir`.
pub fn write_completions(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (shell, file) in COMPLETION_FILES {
        std::fs::write(dir.join(file), completion(shell))?;
    }
    Ok(())
}

/// The top-level man page (roff).
pub fn man_page() -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut out)?;
    Ok(out)
}

/// Writes `anarchon.1` and one `anarchon-<command>.1` per subcommand into `dir`.
pub fn write_man_pages(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    clap_mangen::generate_to(Cli::command(), dir)
}
