//! The layers stay apart: nothing under src/store, src/strategy, src/runner or src/connection
//! knows the command line. The clap structs are resolved into plain settings once, in
//! src/settings.rs (see the module map in src/lib.rs).

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_core_layers_never_import_the_command_line() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for dir in ["store", "strategy", "runner", "connection"] {
        rust_files(&src.join(dir), &mut files);
    }
    assert!(files.len() > 10, "the layers were found: {files:?}");
    let mut leaks = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.contains("crate::cli") || line.contains("clap::") {
                leaks.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "the core imports the command line:\n{}",
        leaks.join("\n")
    );
}
