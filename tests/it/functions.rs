//! Format 2's lease scripts run as Redis Functions (FCALL) where the server has them (Redis 7+,
//! Valkey): their library is loaded on first use, again after FUNCTION FLUSH or a restart, and a
//! server without Functions, or an ACL that denies them, gets the same scripts by EVALSHA.

use crate::common;
use crate::common::{Server, stderr};

fn libraries(s: &Server) -> usize {
    let list: redis::Value = s.cmd(&["FUNCTION", "LIST", "LIBRARYNAME", "anarchon_*"]);
    match list {
        redis::Value::Array(items) => items.len(),
        _ => 0,
    }
}

fn run(s: &Server, url: &str, slot: &str) {
    let out = s
        .anarchon()
        .args([
            "--redis", url, "run", "--job", "fx", "--slot", slot, "--", "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn lease_scripts_run_as_functions_where_the_server_has_them() {
    let s = Server::start();
    let has_functions = s.info_field("commandstats", "cmdstat_ping").is_some()
        && redis::cmd("FUNCTION")
            .arg("LIST")
            .query::<redis::Value>(&mut s.client())
            .is_ok();
    run(&s, &s.url, "1796220300000");
    if !has_functions {
        common::skip("no Redis Functions: the scripts ran by EVALSHA");
        assert!(s.command_calls("evalsha") + s.command_calls("eval") >= 2);
        return;
    }
    assert_eq!(libraries(&s), 1, "the library is loaded on first use");
    assert!(
        s.command_calls("fcall") >= 2,
        "claim and finish ran as functions"
    );

    // Gone (FUNCTION FLUSH, a restart without persistence): loaded again, the run goes on.
    let _: () = s.cmd(&["FUNCTION", "FLUSH"]);
    run(&s, &s.url, "1796220360000");
    assert_eq!(libraries(&s), 1);
    assert_eq!(s.results("fx").len(), 2);

    // An ACL that denies Functions: the same scripts by EVALSHA, each run once.
    if !s.has_acl() {
        return;
    }
    let _: () = s.cmd(&[
        "ACL",
        "SETUSER",
        "noffi",
        "on",
        ">pw",
        "~*",
        "+@all",
        "-fcall",
        "-function",
    ]);
    let _: () = s.cmd(&["FUNCTION", "FLUSH"]);
    let before = s.command_calls("evalsha") + s.command_calls("eval");
    let url = format!("redis://noffi:pw@127.0.0.1:{}", s.port);
    run(&s, &url, "1796220420000");
    assert!(s.command_calls("evalsha") + s.command_calls("eval") >= before + 2);
    assert_eq!(libraries(&s), 0, "nothing was loaded");
    assert_eq!(s.results("fx").len(), 3);
}
