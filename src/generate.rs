//! Shell completions and man pages, generated from the clap definitions in [`crate::cli`].
//! The files in `completions/` and `man/` are these functions' output; tests/it/generated.rs fails
//! when they are stale (regenerate with `anarchon completions --dir completions` and
//! `anarchon man --dir man`).

use std::io;
use std::path::Path;

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

/// The commands whose first argument is a job name, completed from the store.
const JOB_COMMANDS: &str =
    "inspect history logs release pause resume trim claim heartbeat finish run-now";

/// Bash: job names for the commands that take one, read from the store with `anarchon list` (the
/// connection as the environment gives it: $ANARCHON_REDIS_URL...); everything else as clap's
/// generated `_anarchon` completes it.
const BASH_JOBS: &str = r#"
# Job names, read from the store (`anarchon list`), for the commands whose argument is a job.
_anarchon_with_jobs() {
    local cur="${COMP_WORDS[COMP_CWORD]}" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        [[ "${COMP_WORDS[i]}" == -* ]] || break
    done
    if [[ $i -lt $COMP_CWORD && $COMP_CWORD -eq $((i + 1)) && "$cur" != -* ]]; then
        case " JOB_COMMANDS " in
            *" ${COMP_WORDS[i]} "*)
                COMPREPLY=($(compgen -W "$(anarchon list 2>/dev/null | awk 'NR > 1 { print $1 }')" -- "$cur"))
                return 0
                ;;
        esac
    fi
    _anarchon "$@"
}
complete -F _anarchon_with_jobs -o bashdefault -o default anarchon
"#;

/// Fish: the same, with fish's own condition.
const FISH_JOBS: &str = r#"
# Job names, read from the store (`anarchon list`), for the commands whose argument is a job.
complete -c anarchon -n "__fish_seen_subcommand_from JOB_COMMANDS" -f -a "(anarchon list 2>/dev/null | awk 'NR > 1 { print \$1 }')"
"#;

/// The completion script for `shell` (bash and fish also complete job names from the store).
pub fn completion(shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command_for_users(), "anarchon", &mut out);
    let jobs = match shell {
        Shell::Bash => BASH_JOBS,
        Shell::Fish => FISH_JOBS,
        _ => "",
    };
    out.extend_from_slice(jobs.replace("JOB_COMMANDS", JOB_COMMANDS).as_bytes());
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

/// The environment anarchon reads, for the ENVIRONMENT section of every man page.
const ENVIRONMENT: [(&str, &str); 9] = [
    (
        "ANARCHON_REDIS_URL",
        "The Redis URL when --redis, --host, --port and --db are not given.",
    ),
    (
        "REDIS_URL",
        "The Redis URL when ANARCHON_REDIS_URL is not set either.",
    ),
    (
        "ANARCHON_REDIS_PASSWORD",
        "The password when the URL carries none and --password-file is not given. Never passed to the command of run.",
    ),
    (
        "REDISCLI_AUTH",
        "redis-cli's password variable: the password when ANARCHON_REDIS_PASSWORD is not set either. Never passed to the command of run.",
    ),
    (
        "ANARCHON_PREFIX",
        "The key prefix (--prefix), cron: by default.",
    ),
    ("ANARCHON_BACKEND", "redis or valkey (--backend)."),
    ("NO_COLOR", "When set, no colour (as --color never)."),
    (
        "ANARCHON_JOB, ANARCHON_SLOT, ANARCHON_ATTEMPT, ANARCHON_RUNNER",
        "Set by run and run-now for the command they run.",
    ),
    (
        "TRACEPARENT",
        "Set for the command: the run's W3C trace context, one trace per scheduled run across hosts (docs/store-format.md, Trace context).",
    ),
];

/// Escapes one line of text for roff: backslashes, hyphens, and a leading dot or quote.
fn roff_text(line: &str) -> String {
    let escaped = line.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// The SYNOPSIS, as git's pages write it: the command, `[GLOBAL OPTIONS]` (the connection and
/// output flags every command takes, listed under OPTIONS), its required flags with their values,
/// `[OPTIONS]`, then its arguments. clap_mangen's own interleaves global and command flags in
/// one long list and shows a required flag as `<--job>`.
fn synopsis(cmd: &clap::Command) -> String {
    let name = cmd
        .get_bin_name()
        .unwrap_or(cmd.get_name())
        .replace('-', "\\-");
    let mut parts = vec![format!("\\fB{name}\\fR")];
    let visible = || cmd.get_arguments().filter(|a| !a.is_hide_set());
    // Global from each command down (`Cli::command_for_users`), the top's own at the top.
    let common = |a: &clap::Arg| {
        a.is_global_set()
            || matches!(
                a.get_help_heading(),
                Some("Connection" | "Store" | "Output")
            )
    };
    if visible().any(common) {
        parts.push("[\\fIGLOBAL OPTIONS\\fR]".to_string());
    }
    let value_of = |a: &clap::Arg| {
        a.get_value_names()
            .and_then(|v| v.first())
            .map_or_else(|| a.get_id().to_string().to_uppercase(), |v| v.to_string())
    };
    for a in visible().filter(|a| a.is_required_set() && a.get_long().is_some()) {
        let long = a.get_long().unwrap_or_default().replace('-', "\\-");
        parts.push(format!("\\fB\\-\\-{long}\\fR \\fI{}\\fR", value_of(a)));
    }
    if visible().any(|a| !common(a) && !a.is_positional() && !a.is_required_set()) {
        parts.push("[\\fIOPTIONS\\fR]".to_string());
    }
    for a in visible().filter(|a| a.is_positional()) {
        let many = matches!(a.get_num_args(), Some(r) if r.max_values() > 1);
        let text = format!("\\fI{}\\fR{}", value_of(a), if many { "..." } else { "" });
        let text = if a.is_last_set() {
            format!("\\-\\- {text}")
        } else {
            text
        };
        parts.push(if a.is_required_set() {
            text
        } else {
            format!("[{text}]")
        });
    }
    if cmd.has_subcommands() {
        parts.push("<\\fISUBCOMMAND\\fR>".to_string());
    }
    format!(".SH SYNOPSIS\n{}\n", parts.join(" "))
}

/// One man page: clap_mangen's sections (name, synopsis, description, options, subcommands), then
/// EXAMPLES (from the command's `Examples:` help), EXIT STATUS and ENVIRONMENT, which clap has no
/// place for.
fn render_page(cmd: &clap::Command, out: &mut Vec<u8>) -> io::Result<()> {
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(out)?;
    man.render_name_section(out)?;
    out.extend_from_slice(synopsis(cmd).as_bytes());
    man.render_description_section(out)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(out)?;
    }
    if cmd.has_subcommands() {
        man.render_subcommands_section(out)?;
    }
    let mut roff = String::new();
    if let Some(help) = cmd.get_after_long_help() {
        let text = help.to_string();
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.trim() != "Examples:")
            .map(str::trim)
            .collect();
        roff.push_str(".SH EXAMPLES\n.nf\n");
        for line in lines {
            roff.push_str(&roff_text(line));
            roff.push('\n');
        }
        roff.push_str(".fi\n");
    }
    roff.push_str(".SH \"EXIT STATUS\"\n");
    for code in crate::error::ExitCode::ALL {
        roff.push_str(&format!(
            ".TP\n{}\n{}\n",
            code.code(),
            roff_text(code.meaning())
        ));
    }
    roff.push_str(".PP\nrun and run\\-now with a command exit with the command's own code (128+N for signal N).\n");
    roff.push_str(".SH ENVIRONMENT\n");
    for (name, meaning) in ENVIRONMENT {
        roff.push_str(&format!(
            ".TP\n.B {}\n{}\n",
            roff_text(name),
            roff_text(meaning)
        ));
    }
    out.extend_from_slice(roff.as_bytes());
    if cmd.get_version().is_some() {
        man.render_version_section(out)?;
    }
    Ok(())
}

/// The command tree as man pages see it (built, so subcommands are named `anarchon-<command>`).
fn built_command() -> clap::Command {
    let mut cmd = Cli::command_for_users().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// `$XDG_DATA_HOME`, else `~/.local/share` (or `$XDG_CONFIG_HOME`, else `~/.config`).
fn user_dir(xdg: &str, fallback: &str) -> io::Result<std::path::PathBuf> {
    if let Some(dir) = std::env::var_os(xdg).filter(|d| !d.is_empty()) {
        return Ok(dir.into());
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or_else(|| io::Error::other("neither $HOME nor $XDG_DATA_HOME is set"))?;
    Ok(Path::new(&home).join(fallback))
}

/// Installs `shell`'s completions where that shell finds them for this user; returns the file.
pub fn install_completion(shell: Shell) -> io::Result<std::path::PathBuf> {
    let path = match shell {
        Shell::Bash => {
            user_dir("XDG_DATA_HOME", ".local/share")?.join("bash-completion/completions/anarchon")
        }
        Shell::Zsh => {
            user_dir("XDG_DATA_HOME", ".local/share")?.join("zsh/site-functions/_anarchon")
        }
        Shell::Fish => {
            user_dir("XDG_CONFIG_HOME", ".config")?.join("fish/completions/anarchon.fish")
        }
        other => {
            return Err(io::Error::other(format!(
                "{other} has no per-user completion directory; redirect `anarchon completions {other}` into your profile"
            )));
        }
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&path, completion(shell))?;
    Ok(path)
}

/// Whether `man` will find pages installed under `dir` (`.../man/man1`), and if not, the line to
/// add to a shell profile. Asks man-db's `manpath`, which derives the search path from `$MANPATH`
/// and `$PATH` (a `~/.local/bin` on `PATH` brings `~/.local/share/man`); without `manpath` there
/// is nothing to ask, and nothing is claimed.
pub fn man_pages_hint(dir: &Path) -> Option<String> {
    let root = dir.parent()?;
    let out = std::process::Command::new("manpath")
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let found = String::from_utf8_lossy(&out.stdout)
        .trim()
        .split(':')
        .any(|d| Path::new(d) == root);
    (!found).then(|| {
        format!(
            "man will not find them: {} is not on your manual path. Add to your shell profile:\n  export MANPATH=\"{}:$MANPATH\"\n(the colon keeps the system's pages: an empty entry stands for them)",
            root.display(),
            root.display()
        )
    })
}

/// Whether `shell` will load completions installed at `path`, and if not, what to add.
pub fn completion_hint(shell: Shell, path: &Path) -> Option<String> {
    match shell {
        // bash loads per-user completions only through the bash-completion package's loader.
        Shell::Bash => (!Path::new("/usr/share/bash-completion/bash_completion").exists()).then(|| {
            format!(
                "bash loads it through the bash-completion package, which is not installed here (apt-get install bash-completion); or add to ~/.bashrc:\n  source {}",
                path.display()
            )
        }),
        // zsh's default fpath has no per-user directory.
        Shell::Zsh => Some(format!(
            "unless your ~/.zshrc has it already, add before compinit:\n  fpath=({} $fpath)",
            path.parent().map_or(String::new(), |p| p.display().to_string())
        )),
        // fish reads ~/.config/fish/completions by default.
        _ => None,
    }
}

/// Installs the man pages where `man` finds them for this user; returns the directory.
pub fn install_man_pages() -> io::Result<std::path::PathBuf> {
    let dir = user_dir("XDG_DATA_HOME", ".local/share")?.join("man/man1");
    write_man_pages(&dir)?;
    Ok(dir)
}

/// The top-level man page (roff).
pub fn man_page() -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    render_page(&built_command(), &mut out)?;
    Ok(out)
}

/// Writes `anarchon.1` and one `anarchon-<command>.1` per subcommand into `dir`.
pub fn write_man_pages(dir: &Path) -> io::Result<()> {
    fn write(cmd: &clap::Command, dir: &Path) -> io::Result<()> {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            write(sub, dir)?;
        }
        let mut out = Vec::new();
        render_page(cmd, &mut out)?;
        let name = clap_mangen::Man::new(cmd.clone()).get_filename();
        std::fs::write(dir.join(name), out)
    }
    std::fs::create_dir_all(dir)?;
    write(&built_command(), dir)
}
