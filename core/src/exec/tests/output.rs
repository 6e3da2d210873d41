//! What a command prints: chunks and exit codes, stream order, multibyte characters, truncation
//! for the model.

use super::*;

#[tokio::test]
async fn output_streams_in_chunks_and_exit_code_is_reported() {
    let shell = Shell::new();
    let chunks = Chunks::default();
    let out = shell
        .run_streaming("echo one; sleep 0.3; echo two >&2; exit 3", 10_000, &chunks)
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(out.session_id, None);
    assert_eq!(out.output, "one\ntwo\n");
    assert_eq!(out.aggregated_output, "one\ntwo\n");
    assert_eq!(out.original_token_count, 2);
    let chunks = chunks.all();
    assert!(
        chunks.len() >= 2,
        "expected separate chunks, got {chunks:?}"
    );
    assert_eq!(chunks.concat(), "one\ntwo\n");
    assert!(out.wall_time >= Duration::from_millis(300));
    assert!(shell.sessions.pids().is_empty());
}

#[tokio::test]
async fn stdout_and_stderr_keep_their_order() {
    let shell = Shell::new();
    let out = shell
        .run(
            "for i in 1 2 3; do echo out$i; echo err$i >&2; done",
            10_000,
        )
        .await
        .unwrap();
    assert_eq!(out.output, "out1\nerr1\nout2\nerr2\nout3\nerr3\n");
}

#[tokio::test]
async fn multibyte_characters_are_never_split_across_chunks() {
    let shell = Shell::new();
    let chunks = Chunks::default();
    // "é" is c3 a9; "€" is e2 82 ac. Each is written in two pieces with a pause between.
    let cmd = r"printf '\xc3'; sleep 0.2; printf '\xa9 \xe2\x82'; sleep 0.2; printf '\xac\n'";
    let out = shell.run_streaming(cmd, 10_000, &chunks).await.unwrap();
    assert_eq!(out.output, "é €\n");
    assert_eq!(chunks.all().concat(), "é €\n");
    assert!(!chunks.all().iter().any(|c| c.contains('\u{FFFD}')));
}

#[tokio::test]
async fn long_output_is_truncated_for_the_model() {
    let shell = Shell::new();
    let mut req = request(
        "for i in $(seq 1 2000); do echo line$i; done",
        shell.dir(),
        10_000,
    );
    req.max_output_tokens = Some(10);
    let out = shell.exec(req).await.unwrap();
    let full: String = (1..=2000).map(|i| format!("line{i}\n")).collect();
    assert_eq!(out.original_token_count, full.len().div_ceil(4));
    assert_eq!(out.aggregated_output, full);
    let removed = full.len() - 40;
    assert_eq!(
        out.output,
        format!(
            "Total output lines: 2000\n\n{}\u{2026}{} tokens truncated\u{2026}{}",
            &full[..20],
            removed.div_ceil(4),
            &full[full.len() - 20..]
        )
    );
    assert!(out.output.contains("line1\nline2\nline3\nli\u{2026}"));
    assert!(out.output.ends_with("8\nline1999\nline2000\n"));
}

#[test]
fn utf8_decoder_carries_incomplete_sequences() {
    let mut decoder = Utf8Decoder::default();
    assert_eq!(decoder.decode(b"a\xc3"), "a");
    assert_eq!(decoder.decode(b"\xa9b"), "\u{e9}b");
    assert_eq!(decoder.decode(b"\xff"), "\u{FFFD}");
    assert_eq!(decoder.decode(b"\xe2\x82"), "");
    assert_eq!(decoder.finish(), "\u{FFFD}");
}
