//! The committed completions and man pages must match the clap definitions.
//! Regenerate after changing a flag: `cargo run -- completions --dir completions` and
//! `cargo run -- man --dir man` (or run this test with UPDATE_GENERATED=1).

use crate::common;
use std::collections::BTreeMap;
use std::path::Path;

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap())
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read(e.path()).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn check(name: &str, write: fn(&Path) -> std::io::Result<()>) {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    if std::env::var_os("UPDATE_GENERATED").is_some() {
        let _ = std::fs::remove_dir_all(&committed);
        write(&committed).unwrap();
    }
    let fresh = tempfile::tempdir().unwrap();
    write(fresh.path()).unwrap();
    let (want, have) = (files(fresh.path()), files(&committed));
    assert!(!want.is_empty());
    let stale: Vec<&String> = want
        .keys()
        .chain(have.keys())
        .filter(|f| want.get(*f) != have.get(*f))
        .collect();
    assert!(
        stale.is_empty(),
        "{name}/ is out of date with the clap definitions ({stale:?}); run `cargo run -- {} --dir {name}`",
        if name == "man" { "man" } else { "completions" }
    );
}

#[test]
fn completions_are_up_to_date() {
    check("completions", anarchon::generate::write_completions);
}

#[test]
fn man_pages_are_up_to_date() {
    check("man", anarchon::generate::write_man_pages);
}

#[test]
fn the_completions_command_prints_each_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_anarchon"))
            .args(["completions", shell])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("run-now") && text.contains("strategy"),
            "{shell}"
        );
    }
    let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_anarchon"))
        .arg("man")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains(".TH anarchon"));
}

/// Man pages have the sections a man page reader looks for (clap has no place for them).
#[test]
fn man_pages_have_examples_exit_status_and_environment() {
    let page = std::fs::read_to_string("man/anarchon-release.1").unwrap();
    for section in [".SH EXAMPLES", ".SH \"EXIT STATUS\"", ".SH ENVIRONMENT"] {
        assert!(page.contains(section), "{section} missing");
    }
    assert!(!page.contains(".SH EXTRA"));
    assert!(page.contains("ANARCHON_REDIS_URL"));
}

/// `--install` puts completions and man pages where the shell and `man` look for this user.
#[test]
fn completions_and_man_pages_install_for_the_user() {
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_anarchon"))
            .args(args)
            .env("HOME", home.path())
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let said = run(&["completions", "bash", "--install"]);
    let bash = home
        .path()
        .join(".local/share/bash-completion/completions/anarchon");
    assert!(
        bash.exists() && said.contains(bash.to_str().unwrap()),
        "{said}"
    );
    run(&["completions", "fish", "--install"]);
    assert!(
        home.path()
            .join(".config/fish/completions/anarchon.fish")
            .exists()
    );
    let said = run(&["man", "--install"]);
    assert!(
        home.path()
            .join(".local/share/man/man1/anarchon-release.1")
            .exists(),
        "{said}"
    );
    // Whether `man` will find them is asked, not assumed: man-db's manpath, with a MANPATH that
    // leaves the directory out and then one that has it.
    let manpath_exists = std::process::Command::new("manpath").output().is_ok();
    let man_dir = home.path().join(".local/share/man");
    let with_manpath = |manpath: &str| {
        let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_anarchon"))
            .args(["man", "--install"])
            .env("HOME", home.path())
            .env("MANPATH", manpath)
            .env_remove("XDG_DATA_HOME")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    if manpath_exists {
        let said = with_manpath("/usr/share/man");
        assert!(
            said.contains("man will not find them")
                && said.contains(&format!(
                    "export MANPATH=\"{}:$MANPATH\"",
                    man_dir.display()
                )),
            "{said}"
        );
        let said = with_manpath(&format!("{}:/usr/share/man", man_dir.display()));
        assert!(said.contains("try `man anarchon`"), "{said}");
    } else {
        common::skip("no manpath here: whether man finds the pages is not asked");
    }
    // zsh has no per-user directory on its default fpath: the line to add is printed.
    let said = run(&["completions", "zsh", "--install"]);
    assert!(said.contains("fpath=("), "{said}");
}

/// Bash completes job names from the store for the commands that take one.
#[test]
fn bash_completes_job_names_from_the_store() {
    let s = common::Server::start();
    for job in ["billing", "backup"] {
        assert_eq!(
            s.cli(&["run", "--job", job, "--slot", "60000", "--", "true"])
                .code(),
            Some(0)
        );
    }
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_anarchon"))
        .parent()
        .unwrap();
    let script = "source completions/anarchon.bash; COMP_WORDS=(anarchon inspect bi); COMP_CWORD=2; _anarchon_with_jobs; printf '%s\\n' \"${COMPREPLY[@]}\"";
    let out = std::process::Command::new("bash")
        .args(["-c", script])
        .env(
            "PATH",
            format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap()),
        )
        .env("ANARCHON_REDIS_URL", &s.url)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "billing",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The SYNOPSIS reads as git's do: global options apart, a required flag with its value.
#[test]
fn man_synopsis_keeps_global_options_apart_and_shows_required_values() {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("man/anarchon-run.1"))
            .unwrap();
    let synopsis = page
        .lines()
        .skip_while(|l| *l != ".SH SYNOPSIS")
        .nth(1)
        .unwrap();
    assert_eq!(
        synopsis,
        r"\fBanarchon run\fR [\fIGLOBAL OPTIONS\fR] \fB\-\-job\fR \fIJOB\fR [\fIOPTIONS\fR] [\-\- \fICOMMAND\fR...]"
    );
}

/// `man` and `completions` read no store and print no report: their help, man pages and
/// completions offer none of the connection, store and output options (which every other
/// command's help lists), nor accept them after their name.
#[test]
fn man_and_completions_offer_no_store_or_output_options() {
    let global = [
        "--redis",
        "--prefix",
        "--json",
        "--color",
        "--connect-timeout",
    ];
    for command in ["man", "completions"] {
        let out = common::anarchon()
            .args([command, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && help.contains("--dir"), "{help}");
        for option in global {
            assert!(
                !help.contains(option),
                "{command} --help lists {option}:\n{help}"
            );
        }
        let page = std::fs::read_to_string(format!("man/anarchon-{command}.1")).unwrap();
        let options = page.split(".SH OPTIONS").nth(1).unwrap_or_default();
        let options = options.split(".SH ").next().unwrap_or_default();
        assert!(
            options.contains("\\-\\-dir") && !options.contains("\\-\\-prefix"),
            "man/anarchon-{command}.1's options:\n{options}"
        );
    }
    let list = common::anarchon()
        .args(["list", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&list.stdout);
    for option in global {
        assert!(help.contains(option), "list --help lacks {option}:\n{help}");
    }
    let bash = String::from_utf8(
        common::anarchon()
            .args(["completions", "bash"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let man_words = bash
        .split("anarchon__subcmd__man)")
        .nth(1)
        .and_then(|rest| rest.lines().find(|l| l.contains("opts=")))
        .unwrap_or_default();
    assert!(
        man_words.contains("--dir") && !man_words.contains("--redis"),
        "bash completes `anarchon man` with: {man_words}"
    );
    let before = common::anarchon()
        .args(["--color", "never", "man"])
        .output()
        .unwrap();
    assert!(
        before.status.success() && before.stdout.starts_with(b".ie"),
        "{before:?}"
    );
    let after = common::anarchon()
        .args(["man", "--redis", "redis://x"])
        .output()
        .unwrap();
    let error = String::from_utf8_lossy(&after.stderr);
    assert!(error.contains("unexpected argument '--redis'"), "{error}");
}
