use super::*;
use crate::rollout_lines::is_uuid;

const THREAD: &str = "01a22910-326b-75c2-9010-53f5cc9d8fbf";

#[test]
fn uuid_v7_text_is_unique_and_versioned() {
    let a = uuid_v7(1_767_225_600_123, 1);
    let b = uuid_v7(1_767_225_600_123, 2);
    assert!(is_uuid(a.as_bytes()), "{a}");
    assert_ne!(a, b);
    assert_eq!(&a[14..15], "7");
    assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
    // The first 48 bits are the milliseconds.
    let ms = u64::from_str_radix(&(a[..8].to_string() + &a[9..13]), 16).unwrap();
    assert_eq!(ms, 1_767_225_600_123);
    let ids: std::collections::HashSet<String> =
        (0..10_000).map(|i| copy_spec(i, 10_000, "h").id).collect();
    assert_eq!(ids.len(), 10_000);
}

#[test]
fn path_naming() {
    // 2026-03-04T05:06:07Z
    let secs = 1_772_600_767;
    assert_eq!(utc_parts(secs), ((2026, 3, 4), (5, 6, 7)));
    let path = rollout_path(Path::new("/h/sessions"), secs, THREAD);
    assert_eq!(
        path,
        Path::new(
            "/h/sessions/2026/03/04/rollout-2026-03-04T05-06-07-01a22910-326b-75c2-9010-53f5cc9d8fbf.jsonl"
        )
    );
    assert_eq!(iso_time(secs), "2026-03-04T05:06:07.000Z");
}

#[test]
fn copies_rewrite_the_header_and_the_id() {
    let seed = Seed {
        thread: THREAD.into(),
        lines: vec![
            format!(
                r#"{{"ts":1000000,"type":"session_meta","payload":{{"id":"{THREAD}","created_at":1000,"cwd":"/a","model_provider":"mock","source":"vscode"}}}}"#
            ),
            format!(
                r#"{{"ts":1001000,"type":"turn_started","payload":{{"turn_id":"t","started_at":1001,"thread":"{THREAD}","text":"{SEED_PROMPT}","context":{{"model_provider":"mock","cwd":"/a"}}}}}}"#
            ),
        ],
    };
    let mut copy = copy_spec(3, 100, "h");
    copy.name = Some("n".into());
    copy.active_for = 10;
    let text = copy_text(Kind::Weft, &seed, &copy).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["payload"]["id"], copy.id.as_str());
    assert_eq!(lines[0]["payload"]["created_at"], copy.created_at);
    assert_eq!(lines[0]["payload"]["cwd"], copy.cwd.as_str());
    assert_eq!(lines[1]["payload"]["thread"], copy.id.as_str());
    assert_eq!(lines[1]["payload"]["text"], copy.preview.as_str());
    assert_eq!(lines[1]["payload"]["started_at"], copy.created_at + 1);
    assert_eq!(lines[1]["payload"]["context"]["cwd"], copy.cwd.as_str());
    assert_eq!(
        lines[1]["payload"]["context"]["model_provider"],
        copy.provider
    );
    assert_eq!(lines[1]["ts"], (copy.created_at + 1 + 10) * 1000);
    assert_eq!(lines[2]["type"], "thread_name_set");
    assert!(!text.contains(THREAD));
}

#[test]
fn shifts_numbers() {
    assert_eq!(
        shift_numbers(r#"{"ts":10,"a":{"ts":-2},"tsx":1}"#, "ts", 5),
        r#"{"ts":15,"a":{"ts":3},"tsx":1}"#
    );
}

#[test]
fn renumbers_all_uuids_but_the_thread() {
    let turn = "01a22910-4444-75c2-9010-abcdefabcdef";
    let line = format!(r#"{{"t":"{THREAD}","u":"{turn}","c":"call_{turn}","é":1}}"#);
    let out = renumber_uuids(&line, THREAD, 3);
    let new = "01a22910-4444-75c2-9010-abcd00000003";
    assert_eq!(
        out,
        format!(r#"{{"t":"{THREAD}","u":"{new}","c":"call_{new}","é":1}}"#)
    );
}

#[test]
fn grows_to_the_size() {
    let head = vec!["h".to_string()];
    let block = vec![
        format!(r#"{{"ordinal":1,"id":"{THREAD}"}}"#),
        r#"{"id":"01a22910-4444-75c2-9010-abcdefabcdef"}"#.to_string(),
    ];
    let mut out = Vec::new();
    let (bytes, reps) = grow_pattern(&mut out, &head, &block, "x", 200).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(bytes, text.len() as u64);
    assert!(bytes >= 200);
    assert_eq!(text.lines().count() as u64, 1 + 2 * reps);
    assert!(text.contains(r#""ordinal":3,"#));
    assert!(text.contains("abcd00000001"));
}

#[test]
fn spec_spreads_filters() {
    let copies: Vec<CopySpec> = (0..10_000).map(|i| copy_spec(i, 10_000, "h")).collect();
    let count = |f: &dyn Fn(&CopySpec) -> bool| copies.iter().filter(|c| f(c)).count();
    assert!(count(&|c| c.provider == "ollama") > 50);
    assert!(count(&|c| c.source == "exec") > 500);
    assert!(count(&|c| c.parent.is_some()) > 100);
    assert!(count(&|c| c.archived) > 300);
    assert!(count(&|c| c.preview.contains(NEEDLE)) > 50);
    assert!(copies.windows(2).all(|w| w[0].created_at < w[1].created_at));
}
