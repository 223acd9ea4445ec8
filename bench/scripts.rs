//! `cargo run --example scripts -- DIR`: writes every server-side script, exactly as anarchon sends
//! it (each with only the library helpers it uses), into DIR. bench/server.sh measures these.

fn main() {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: cargo run --example scripts -- DIR");
        std::process::exit(2);
    };
    if let Err(e) = anarchon::store::lease::write_scripts(std::path::Path::new(&dir)) {
        eprintln!("cannot write the scripts: {e}");
        std::process::exit(1);
    }
}
