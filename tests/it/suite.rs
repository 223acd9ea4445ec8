//! The suite's own wiring, checked: what tests/setup-and-test.sh (the README's command and CI's)
//! leaves out of a pass names modules that exist, so that a renamed module cannot fall out of the
//! format 2 pass unseen, and a new one joins it by default.

use std::collections::BTreeSet;

fn modules_of_the_suite() -> BTreeSet<String> {
    let main =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/main.rs")).unwrap();
    main.lines()
        .filter_map(|l| l.trim().strip_prefix("mod "))
        .map(|m| m.trim_end_matches(';').to_string())
        .filter(|m| m != "common")
        .collect()
}

#[test]
fn the_format_2_pass_leaves_out_only_modules_that_exist_each_for_a_reason() {
    let script = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/setup-and-test.sh"
    ))
    .unwrap();
    let line = script
        .lines()
        .find(|l| l.starts_with("format2_left_out=("))
        .expect("tests/setup-and-test.sh names what the format 2 pass leaves out");
    let left_out: Vec<&str> = line
        .trim_start_matches("format2_left_out=(")
        .trim_end_matches(')')
        .split_whitespace()
        .collect();
    let modules = modules_of_the_suite();
    for m in &left_out {
        assert!(
            modules.contains(*m),
            "the format 2 pass leaves out {m}, which is no module of tests/it/main.rs: {modules:?}"
        );
        // Each is named in the comment above with its reason.
        let reasons: String = script
            .lines()
            .take_while(|l| !l.starts_with("format2_left_out="))
            .filter(|l| l.starts_with("#   "))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            reasons
                .split_whitespace()
                .any(|w| w.trim_end_matches(':') == *m),
            "the format 2 pass leaves out {m} without saying why"
        );
    }
    assert!(
        modules.len() > left_out.len() + 20,
        "the format 2 pass runs most of the suite"
    );
}

#[test]
fn no_variable_that_switches_checks_off_reaches_ci() {
    for file in ["/tests/setup-and-test.sh", "/.ci/run"] {
        let text =
            std::fs::read_to_string(format!("{}{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        for v in [
            "ANARCHON_SOAK_REPORT_ONLY",
            "ANARCHON_SOAK_AS",
            "ANARCHON_SOAK_OVERLAP",
            "ANARCHON_SOAK_BINARY",
            "UPDATE_GENERATED",
        ] {
            assert!(text.contains(v), "{file} neither clears nor refuses {v}");
        }
    }
    if std::env::var_os("CI").is_some() {
        for v in [
            "ANARCHON_SOAK_REPORT_ONLY",
            "ANARCHON_SOAK_AS",
            "ANARCHON_SOAK_OVERLAP",
            "UPDATE_GENERATED",
        ] {
            assert!(std::env::var_os(v).is_none(), "{v} is set under CI");
        }
    }
}
