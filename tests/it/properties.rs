//! Property tests over everything that parses user or store input: arbitrary text must give a
//! value or an error that names what is wrong, never a panic.

use anarchon::schedule::Schedule;
use anarchon::store::Layout;
use anarchon::store::discover::classify_key;
use anarchon::store::keys::{LeaseKeys, hash_slot, validate_job_name};
use anarchon::store::lease::v1::decode_state;
use anarchon::store::read::ResultEntry;
use anarchon::time::{SlotSpec, parse_duration, parse_since, parse_slot};
use proptest::prelude::*;

const STATE: &str = "{cron:p}:state";
const RESULTS: &str = "{cron:p}:results";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn durations_parse_or_explain(text in "\\PC{0,20}") {
        match parse_duration(&text) {
            Ok(d) => prop_assert!(!d.is_zero()),
            Err(e) => prop_assert!(e.contains("duration") || e.contains("zero")),
        }
    }

    #[test]
    fn well_formed_durations_parse(n in 1u64..100_000, unit in prop::sample::select(vec!["ms", "s", "m", "h"])) {
        let d = parse_duration(&format!("{n}{unit}")).unwrap();
        let ms = match unit { "ms" => n, "s" => n * 1000, "m" => n * 60_000, _ => n * 3_600_000 };
        prop_assert_eq!(d.as_millis(), u128::from(ms));
    }

    #[test]
    fn slots_parse_or_explain(text in "\\PC{0,40}") {
        match parse_slot(&text) {
            Ok(SlotSpec::At(ms)) => prop_assert!(ms >= 0),
            Ok(SlotSpec::Now) => prop_assert!(text.trim().eq_ignore_ascii_case("now")),
            Err(e) => prop_assert!(e.contains("slot") || e.contains("1970")),
        }
        let _ = parse_since(&text);
    }

    #[test]
    fn millisecond_slots_round_trip(ms in 0i64..=anarchon::time::MAX_SLOT) {
        prop_assert_eq!(parse_slot(&ms.to_string()).unwrap(), SlotSpec::At(ms));
    }

    /// Slots past year 9999 are refused: with a lease added they approach what a Lua number holds.
    #[test]
    fn slots_past_the_last_one_are_refused(ms in (anarchon::time::MAX_SLOT + 1)..i64::MAX) {
        prop_assert!(parse_slot(&ms.to_string()).is_err());
    }

    #[test]
    fn job_names_are_accepted_exactly_when_the_layout_allows(job in "\\PC{0,60}|.{0,3}[{}\\x00-\\x1f].{0,3}") {
        let ok = !job.is_empty()
            && job.len() <= 200
            && !job.contains(['{', '}'])
            && !job.chars().any(char::is_control);
        prop_assert_eq!(validate_job_name(&job).is_ok(), ok);
        if ok {
            let keys = LeaseKeys::new("cron:", &job);
            let slot = hash_slot(&keys.state);
            prop_assert!(keys.all().iter().all(|k| hash_slot(k) == slot));
            let found = classify_key("cron:", &keys.results).unwrap();
            prop_assert_eq!(found.name, job);
            prop_assert_eq!(found.layout, Layout::Lease);
        }
    }

    #[test]
    fn any_state_hash_decodes_or_names_the_key(
        fields in prop::collection::vec(("[0-9a-z:_]{0,16}", "\\PC{0,12}"), 0..12)
    ) {
        if let Err(e) = decode_state(STATE, &fields) {
            prop_assert!(e.to_string().contains(STATE), "{}", e);
        }
    }

    #[test]
    fn state_hashes_with_valid_shape_but_wild_values(
        status in "running|finished|failed|interrupted|\\PC{0,8}",
        attempt in "-?[0-9]{0,12}|\\PC{0,4}",
        lease_end in "-?[0-9]{0,20}",
    ) {
        let fields: Vec<(String, String)> = vec![
            ("7:status".into(), status),
            ("7:attempt".into(), attempt),
            ("7:token".into(), "t".into()),
            ("7:lease_end".into(), lease_end),
            ("7:claimed_at".into(), "1".into()),
            ("7:started_at".into(), "1".into()),
        ];
        match decode_state(STATE, &fields) {
            Ok(runs) => prop_assert!(runs[&7].attempt >= 1),
            Err(e) => prop_assert!(e.to_string().contains("7:")),
        }
    }

    #[test]
    fn result_members_parse_or_name_the_key(member in "\\PC{0,80}") {
        if let Err(e) = ResultEntry::parse(RESULTS, &member) {
            prop_assert!(e.to_string().contains(RESULTS), "{}", e);
        }
    }

    #[test]
    fn schedules_parse_or_explain(expr in "[-*/,0-9A-Za-z@? ]{0,30}") {
        // A refusal says where: the field by its place or name, the count, or the alias.
        if let Err(e) = Schedule::parse(&expr, "UTC") {
            let says_where = ["field", "out of range", "step 0", "alias", "fire times"];
            prop_assert!(e.contains("--schedule") && says_where.iter().any(|w| e.contains(w)), "{}", e);
        }
    }

    #[test]
    fn any_key_classifies_without_panic(key in "\\PC{0,40}") {
        let _ = classify_key("cron:", &key);
    }
}

/// The global flags `anarchon cron` would run a crontab under (none given).
fn no_global_flags() -> anarchon::cli::GlobalArgs {
    use clap::Parser;
    anarchon::cli::Cli::try_parse_from(["anarchon", "list"])
        .unwrap()
        .global
}

/// A crontab's lines: schedules, commands, `# anarchon:` annotations with real and wild flags,
/// variables, and noise.
fn crontab_line() -> impl Strategy<Value = String> {
    prop_oneof![
        "[-*/,0-9 ]{0,20} [a-z ;|&$]{0,12}",
        "@(reboot|hourly|daily|weekly|monthly|yearly|annually|midnight|every) [a-z ]{0,8}",
        "# anarchon: (--job [a-z{}]{0,6}|--lease [0-9a-z]{0,4}|--exclude [-0-9a-z@:.=,]{0,16}|--was [a-z]{0,4}|--after [a-z]{0,4}|--[a-z-]{0,10} [\\PC]{0,6}){0,3}",
        "[A-Z_]{1,8}=[\\PC]{0,12}",
        "\\PC{0,40}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Any crontab reads as jobs or as errors that each name a line of the text (issue 62 item
    /// 6): never a panic, never a line that is not there.
    #[test]
    fn crontabs_read_or_name_the_line(lines in prop::collection::vec(crontab_line(), 0..8)) {
        let text = lines.join("\n");
        let global = no_global_flags();
        if let Err(errors) = anarchon::settings::crontab::read(&text, &global) {
            prop_assert!(!errors.is_empty());
            for e in &errors {
                prop_assert!(e.line <= lines.len().max(1), "{e} in {} lines", lines.len());
                prop_assert!(!e.message.is_empty());
            }
        }
    }

    /// Any exclusion window parses or is refused naming itself (no panic).
    #[test]
    fn exclusion_windows_parse_or_name_themselves(text in "[-0-9a-z@:.=,]{0,24}|\\PC{0,24}") {
        if let Err(e) = anarchon::exclusion::Exclusion::parse(&text) {
            prop_assert!(e.contains("not an exclusion window"), "{e}");
        }
    }

    /// A URL that does not parse never shows what stands between `//` and its last `@`, whatever
    /// the password holds (issue 62 item 3), and nothing panics on any text.
    #[test]
    fn an_unparsed_url_never_shows_its_user_information(
        scheme in "(redis|rediss|redis\\+sentinel|valkey)",
        password in "[A-Za-z0-9#/?:%@!$&'()*+,;=]{4,16}",
        host in "[a-z]{1,8}(:[0-9x]{0,6})?(/[0-9]{0,2})?",
    ) {
        let secret = format!("SECRET{password}");
        let url = format!("{scheme}://user:{secret}@{host}");
        let shown = anarchon::connection::redact_unparsed_url(&url);
        prop_assert!(!shown.contains(&secret), "{shown}");
        prop_assert!(!shown.contains("SECRET"), "{shown}");
        let _ = anarchon::connection::unparsed_url_problem(&url);
        let _ = anarchon::connection::redact_url(&url);
    }

    #[test]
    fn any_text_as_a_url_is_judged_without_panic(text in "\\PC{0,60}") {
        let _ = anarchon::connection::redact_unparsed_url(&text);
        let _ = anarchon::connection::unparsed_url_problem(&text);
        let _ = anarchon::connection::url_secrets(&text);
    }
}
