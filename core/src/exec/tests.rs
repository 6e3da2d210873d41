//! Tests of unified exec. Every test owns its `ExecSessions` and checks that the processes it
//! started are gone when it ends.

use std::path::Path;
use std::time::Duration;

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::buffer::OutputBuffer;
use super::process::{Utf8Decoder, pid_alive};
use super::truncate::{Gap, truncate_parts};
use super::*;
use crate::sandbox::SandboxSpec;

fn request(cmd: &str, dir: &Path, yield_time_ms: u64) -> ExecRequest {
    ExecRequest {
        cmd: cmd.to_string(),
        workdir: dir.to_path_buf(),
        shell: Some("/bin/bash".to_string()),
        login: false,
        yield_time_ms,
        max_output_tokens: None,
    }
}

/// Collects what `on_output` receives.
#[derive(Default)]
struct Chunks(Mutex<Vec<String>>);

impl Chunks {
    fn push(&self, chunk: &str) {
        {
            let mut chunks = self.0.lock();
            chunks.push(chunk.to_string());
        }
    }
    fn all(&self) -> Vec<String> {
        self.0.lock().clone()
    }
}

/// Waits (bounded) until none of `pids` is alive.
async fn assert_gone(pids: &[i32]) {
    for _ in 0..100 {
        if pids.iter().all(|pid| !pid_alive(*pid)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let alive: Vec<i32> = pids.iter().copied().filter(|p| pid_alive(*p)).collect();
    panic!("processes still alive: {alive:?}");
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[tokio::test]
async fn output_streams_in_chunks_and_exit_code_is_reported() {
    let dir = tempdir();
    let sessions = ExecSessions::new();
    let chunks = Chunks::default();
    let out = sessions
        .exec_command(
            request(
                "echo one; sleep 0.3; echo two >&2; exit 3",
                dir.path(),
                10_000,
            ),
            &SandboxSpec::unrestricted(dir.path()),
            |c| chunks.push(c),
            &CancellationToken::new(),
        )
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
    assert!(sessions.pids().is_empty());
}

#[tokio::test]
async fn stdout_and_stderr_keep_their_order() {
    let dir = tempdir();
    let sessions = ExecSessions::new();
    let out = sessions
        .exec_command(
            request(
                "for i in 1 2 3; do echo out$i; echo err$i >&2; done",
                dir.path(),
                10_000,
            ),
            &SandboxSpec::unrestricted(dir.path()),
            |_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.output, "out1\nerr1\nout2\nerr2\nout3\nerr3\n");
}

#[tokio::test]
async fn multibyte_characters_are_never_split_across_chunks() {
    let dir = tempdir();
    let sessions = ExecSessions::new();
    let chunks = Chunks::default();
    // "é" is c3 a9; "€" is e2 82 ac. Each is written in two pieces with a pause between.
    let cmd = r"printf '\xc3'; sleep 0.2; printf '\xa9 \xe2\x82'; sleep 0.2; printf '\xac\n'";
    let out = sessions
        .exec_command(
            request(cmd, dir.path(), 10_000),
            &SandboxSpec::unrestricted(dir.path()),
            |c| chunks.push(c),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.output, "é €\n");
    assert_eq!(chunks.all().concat(), "é €\n");
    assert!(!chunks.all().iter().any(|c| c.contains('\u{FFFD}')));
}

#[tokio::test]
async fn yielded_command_becomes_a_session_that_reads_stdin() {
    let dir = tempdir();
    let sessions = ExecSessions::new();
    let started = sessions
        .exec_command(
            request("echo ready; read line; echo got $line", dir.path(), 300),
            &SandboxSpec::unrestricted(dir.path()),
            |_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(started.exit_code, None);
    let id = started.session_id.unwrap();
    assert_eq!(started.output, "ready\n");
    assert_eq!(sessions.session_ids(), vec![id]);
    let text = format_for_model(&started);
    assert!(
        text.contains(&format!("\nProcess running with session ID {id}\n")),
        "{text}"
    );

    let chunks = Chunks::default();
    let answer = sessions
        .write_stdin(
            id,
            "hello\n".to_string(),
            5_000,
            None,
            |c| chunks.push(c),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer.output, "got hello\n");
    assert_eq!(answer.exit_code, Some(0));
    assert_eq!(answer.session_id, None);
    assert_eq!(chunks.all().concat(), "got hello\n");
    // Collected: the session is gone.
    assert!(sessions.session_ids().is_empty());
    let err = sessions
        .write_stdin(
            id,
            String::new(),
            0,
            None,
            |_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(err, ExecError::UnknownSession(id));
    assert!(
        err.to_string()
            .contains(&format!("Unknown session ID {id}"))
    );
}

#[tokio::test]
async fn cat_session_echoes_input_and_keeps_running() {
    let dir = tempdir();
    let sessions = ExecSessions::new();
    let started = sessions
        .exec_command(
            request("cat", dir.path(), 250),
            &SandboxSpec::unrestricted(dir.path()),
            |_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    let id = started.session_id.unwrap();
    let pids = sessions.pids();
    let echoed = sessions
        .write_stdin(
            id,
            "abc\n".to_string(),
            300,
            None,
            |_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(echoed.output, "abc\n");
    assert_eq!(echoed.session_id, Some(id));
    assert_eq!(echoed.exit_code, None);
    sessions.shutdown().await;
    assert!(sessions.pids().is_empty());
    assert_gone(&pids).await;
}

#[tokio::test]
async fn a_session_survives_a_later_cancel() {
    let dir = tempdir();
    let sessions = ExecSessions::new();
    let turn = CancellationToken::new();
    let started = sessions
        .exec_command(
            request("cat", dir.path(), 250),
            &SandboxSpec::unrestricted(dir.path()),
            |_| {},
            &turn,
        )
        .await
        .unwrap();
    let id = started.session_id.unwrap();
    let pids = sessions.pids();
    assert_eq!(pids.len(), 1);

    // The turn is interrupted: a poll that is waiting stops, a new command is aborted, and the
    // session is left alone.
    turn.cancel();
    let polled = sessions
        .write_stdin(id, String::new(), 5_000, None, |_| {}, &turn)
        .await;
    assert!(matches!(polled, Err(ExecError::Aborted { .. })));
    let other = sessions
        .exec_command(
            request("sleep 30", dir.path(), 30_000),
            &SandboxSpec::unrestricted(dir.path()),
            |_| {},
            &turn,
        )
        .await;
    assert!(matches!(other, Err(ExecError::Aborted { .. })));
    assert!(pid_alive(pids[0]));
    assert_eq!(sessions.session_ids(), vec![id]);

    // The next turn can still talk to it.
    let echoed = sessions
        .write_stdin(
            id,
            "still here\n".to_string(),
            300,
            None,
            |_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(echoed.output, "still here\n");
    drop(sessions);
    assert_gone(&pids).await;
}

#[tokio::test]
async fn cancelling_a_foreground_command_kills_it_quickly() {
    let dir = tempdir();
    let sessions = ExecSessions::new();
    let cancel = CancellationToken::new();
    let pids = Mutex::new(Vec::new());
    let spec = SandboxSpec::unrestricted(dir.path());
    let run = sessions.exec_command(
        request("sleep 30", dir.path(), 30_000),
        &spec,
        |_| {},
        &cancel,
    );
    let interrupt = async {
        for _ in 0..100 {
            let running = sessions.pids();
            if !running.is_empty() {
                {
                    let mut pids = pids.lock();
                    *pids = running;
                }
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
        std::time::Instant::now()
    };
    let (result, cancelled_at) = tokio::join!(run, interrupt);
    let took = cancelled_at.elapsed();
    match result {
        Err(ExecError::Aborted { wall_time }) => {
            assert!(wall_time >= Duration::from_millis(200));
            assert!(wall_time < Duration::from_secs(10));
            assert_eq!(
                format_aborted_for_model(Duration::from_millis(1234)),
                "Wall time: 1.2 seconds\naborted by user"
            );
        }
        other => panic!("expected Aborted, got {other:?}"),
    }
    assert!(took < Duration::from_secs(5), "abort took {took:?}");
    let pids = pids.lock().clone();
    assert_eq!(pids.len(), 1);
    assert!(sessions.pids().is_empty());
    assert_gone(&pids).await;
}

#[tokio::test]
async fn dropping_a_foreground_call_kills_the_command() {
    let dir = tempdir();
    let sessions = ExecSessions::new();
    let spec = SandboxSpec::unrestricted(dir.path());
    let cancel = CancellationToken::new();
    let run = sessions.exec_command(
        request("sleep 30", dir.path(), 30_000),
        &spec,
        |_| {},
        &cancel,
    );
    let mut pids = Vec::new();
    tokio::select! {
        _ = run => panic!("sleep 30 finished"),
        () = async {
            loop {
                pids = sessions.pids();
                if !pids.is_empty() { break; }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        } => {}
    }
    assert_eq!(pids.len(), 1);
    assert!(sessions.pids().is_empty());
    assert_gone(&pids).await;
}

#[tokio::test]
async fn shutdown_and_drop_kill_every_session() {
    let dir = tempdir();
    let sessions = ExecSessions::new();
    let spec = SandboxSpec::unrestricted(dir.path());
    for _ in 0..2 {
        let out = sessions
            .exec_command(
                request("sleep 30", dir.path(), 250),
                &spec,
                |_| {},
                &CancellationToken::new(),
            )
            .await
            .unwrap();
        assert!(out.session_id.is_some());
    }
    let pids = sessions.pids();
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|p| pid_alive(*p)));
    sessions.shutdown().await;
    assert_gone(&pids).await;
    let refused = sessions
        .exec_command(
            request("echo hi", dir.path(), 250),
            &spec,
            |_| {},
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(refused, Err(ExecError::ShutDown));

    let sessions = ExecSessions::new();
    sessions
        .exec_command(
            request("sleep 30", dir.path(), 250),
            &spec,
            |_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    let pids = sessions.pids();
    drop(sessions);
    assert_gone(&pids).await;
}

#[tokio::test]
async fn background_jobs_die_with_their_command() {
    let dir = tempdir();
    let sessions = ExecSessions::new();
    let out = sessions
        .exec_command(
            request("sleep 30 >/dev/null 2>&1 & echo $!", dir.path(), 10_000),
            &SandboxSpec::unrestricted(dir.path()),
            |_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0));
    let pid: i32 = out.output.trim().parse().unwrap();
    assert_gone(&[pid]).await;
}

#[tokio::test]
async fn long_output_is_truncated_for_the_model() {
    let dir = tempdir();
    let sessions = ExecSessions::new();
    let mut req = request(
        "for i in $(seq 1 2000); do echo line$i; done",
        dir.path(),
        10_000,
    );
    req.max_output_tokens = Some(10);
    let out = sessions
        .exec_command(
            req,
            &SandboxSpec::unrestricted(dir.path()),
            |_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap();
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

#[tokio::test]
async fn unknown_session_and_bad_workdir_are_clear_errors() {
    let dir = tempdir();
    let sessions = ExecSessions::new();
    let err = sessions
        .write_stdin(
            42,
            "x".to_string(),
            250,
            None,
            |_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(err, ExecError::UnknownSession(42));
    let err = sessions
        .exec_command(
            request("true", &dir.path().join("missing"), 250),
            &SandboxSpec::unrestricted(dir.path()),
            |_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, ExecError::Spawn(ref m) if m.contains("does not exist")),
        "{err}"
    );
    let mut req = request("true", dir.path(), 250);
    req.shell = Some("/nonexistent/shell".to_string());
    let err = sessions
        .exec_command(
            req,
            &SandboxSpec::unrestricted(dir.path()),
            |_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, ExecError::Spawn(ref m) if m.contains("/nonexistent/shell")),
        "{err}"
    );
}

#[tokio::test]
async fn the_session_limit_evicts_the_least_recently_used() {
    let dir = tempdir();
    let sessions = ExecSessions::new();
    let spec = SandboxSpec::unrestricted(dir.path());
    let cancel = CancellationToken::new();
    let mut ids = Vec::new();
    for _ in 0..MAX_SESSIONS / 8 {
        let batch = (0..8).map(|_| {
            sessions.exec_command(request("exec cat", dir.path(), 250), &spec, |_| {}, &cancel)
        });
        for out in futures::future::join_all(batch).await {
            ids.push(out.unwrap().session_id.unwrap());
        }
    }
    assert_eq!(sessions.session_ids().len(), MAX_SESSIONS);
    let all_pids = sessions.pids();
    // Touch the oldest so that another session is the least recently used.
    ids.sort_unstable();
    sessions
        .write_stdin(
            ids[0],
            "x\n".to_string(),
            250,
            None,
            |_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    let out = sessions
        .exec_command(
            request("exec cat", dir.path(), 250),
            &spec,
            |_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    let open = sessions.session_ids();
    assert_eq!(open.len(), MAX_SESSIONS);
    assert!(open.contains(&ids[0]));
    // The first batch yielded together; one of them other than the touched one was evicted.
    let evicted: Vec<u64> = ids[1..8]
        .iter()
        .copied()
        .filter(|id| !open.contains(id))
        .collect();
    assert_eq!(evicted.len(), 1, "{open:?}");
    assert!(
        out.warnings
            .iter()
            .any(|w| w.contains(&format!("session {} (`", evicted[0]))),
        "{:?}",
        out.warnings
    );
    let text = format_for_model(&out);
    assert!(text.contains("\nWarning: "), "{text}");
    sessions.shutdown().await;
    assert_gone(&all_pids).await;
}

#[test]
fn calls_are_send_futures() {
    fn assert_send<T: Send>(_: &T) {}
    let sessions = ExecSessions::new();
    let spec = SandboxSpec::unrestricted(Path::new("/"));
    let cancel = CancellationToken::new();
    let exec = sessions.exec_command(request("true", Path::new("/"), 250), &spec, |_| {}, &cancel);
    assert_send(&exec);
    let write = sessions.write_stdin(1, String::new(), 250, None, |_| {}, &cancel);
    assert_send(&write);
    let shutdown = sessions.shutdown();
    assert_send(&shutdown);
}

#[test]
fn format_for_model_matches_the_reference() {
    let output = ExecOutput {
        chunk_id: "adff25".to_string(),
        wall_time: Duration::from_micros(12),
        exit_code: Some(0),
        session_id: None,
        output: "hi\n".to_string(),
        aggregated_output: "hi\n".to_string(),
        original_token_count: 1,
        warnings: Vec::new(),
    };
    assert_eq!(
        format_for_model(&output),
        "Chunk ID: adff25\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 1\nOutput:\nhi\n"
    );
    let running = ExecOutput {
        exit_code: None,
        session_id: Some(7),
        wall_time: Duration::from_millis(10_002),
        output: String::new(),
        original_token_count: 0,
        ..output
    };
    assert_eq!(
        format_for_model(&running),
        "Chunk ID: adff25\nWall time: 10.0020 seconds\nProcess running with session ID 7\nOriginal token count: 0\nOutput:\n"
    );
}

#[test]
fn chunk_ids_are_six_hex_digits() {
    let id = chunk_id();
    assert_eq!(id.len(), 6);
    assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
}

#[test]
fn display_command_quotes_like_a_shell() {
    let mut req = request("echo hi", Path::new("/"), 250);
    req.login = true;
    assert_eq!(req.display_command(), "/bin/bash -lc 'echo hi'");
    req.cmd = "echo 'it'\"s\"".to_string();
    req.login = false;
    assert_eq!(
        req.display_command(),
        r#"/bin/bash -c 'echo '"'"'it'"'"'"s"'"#
    );
}

#[test]
fn truncation_keeps_head_and_tail() {
    assert_eq!(
        truncate_output("short", TruncationPolicy::Tokens(10)),
        "short"
    );
    // 26 bytes, 8-byte budget: 4 + 4 kept, 18 removed → ceil(18/4) = 5 tokens.
    assert_eq!(
        truncate_output("abcdefghijklmnopqrstuvwxyz", TruncationPolicy::Tokens(2)),
        "abcd\u{2026}5 tokens truncated\u{2026}wxyz"
    );
    assert_eq!(
        truncate_output("abcdefghijklmnopqrstuvwxyz", TruncationPolicy::Bytes(9)),
        "abcd\u{2026}17 chars truncated\u{2026}vwxyz"
    );
    assert_eq!(
        truncate_output("abcdef", TruncationPolicy::Bytes(0)),
        "\u{2026}6 chars truncated\u{2026}"
    );
    // Never cuts inside a character: "é" is two bytes.
    let text = "éééééééééé";
    let cut = truncate_output(text, TruncationPolicy::Bytes(7));
    assert_eq!(cut, "é\u{2026}7 chars truncated\u{2026}éé");
    assert_eq!(
        formatted_truncate_output("a\nb\nc\nd\ne\nf\n", TruncationPolicy::Bytes(4)),
        "Total output lines: 6\n\na\n\u{2026}8 chars truncated\u{2026}f\n"
    );
    assert_eq!(
        formatted_truncate_output("a\nb", TruncationPolicy::Bytes(4)),
        "a\nb"
    );
    assert_eq!(approx_token_count("hi\n"), 1);
    assert_eq!(approx_token_count("slept\n"), 2);
    assert_eq!(TruncationPolicy::Bytes(10).token_budget(), 3);
    assert_eq!(
        TruncationPolicy::Tokens(10).scaled(1.2),
        TruncationPolicy::Tokens(12)
    );
}

#[test]
fn truncation_counts_a_buffer_gap() {
    let gap = Gap {
        bytes: 100,
        chars: 90,
        newlines: 10,
    };
    let cut = truncate_parts(
        "0123456789",
        gap,
        "abcdefghij\n",
        TruncationPolicy::Bytes(8),
    );
    assert_eq!(cut.text, "0123\u{2026}103 chars truncated\u{2026}hij\n");
    assert!(cut.truncated);
    assert_eq!(cut.original_lines, 11);
    assert_eq!(cut.original_bytes, 121);
}

#[test]
fn output_buffer_keeps_head_and_tail() {
    let mut buffer = OutputBuffer::new(10);
    for chunk in ["01234", "56789", "abcde", "fghij", "klmno"] {
        buffer.push(chunk);
    }
    assert_eq!(buffer.total_bytes(), 25);
    let taken = buffer.take();
    assert_eq!(taken.head, "01234");
    assert_eq!(taken.tail, "klmno");
    assert_eq!(taken.gap.bytes, 15);
    assert_eq!(buffer.total_bytes(), 0);

    let mut collected = OutputBuffer::new(100);
    collected.push("xy");
    collected.push_taken(&taken);
    assert_eq!(collected.total_bytes(), 27);
    assert!(collected.display_text().contains("bytes of output omitted"));
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

#[test]
fn arguments_parse_leniently_with_clear_errors() {
    let args = parse_exec_command_args(
        r#"{"cmd":"ls","yield_time_ms":2000.0,"max_output_tokens":"500","workdir":"sub","login":false}"#,
    )
    .unwrap();
    assert_eq!(args.yield_time_ms, Some(2000));
    assert_eq!(args.max_output_tokens, Some(500));
    let req = args.to_request(Path::new("/work"));
    assert_eq!(req.workdir, Path::new("/work/sub"));
    assert!(!req.login);
    assert_eq!(req.max_output_tokens, Some(500));
    let defaults = parse_exec_command_args(r#"{"cmd":"ls"}"#)
        .unwrap()
        .to_request(Path::new("/work"));
    assert_eq!(defaults.yield_time_ms, DEFAULT_EXEC_YIELD_MS);
    assert!(defaults.login);
    assert_eq!(defaults.workdir, Path::new("/work"));

    let escalated = parse_exec_command_args(
        r#"{"cmd":"curl x","sandbox_permissions":"require_escalated","justification":"net"}"#,
    )
    .unwrap();
    assert!(escalated.wants_escalation());

    let missing = parse_exec_command_args("{}").unwrap_err().to_string();
    assert!(
        missing.starts_with("failed to parse function arguments: missing field `cmd`"),
        "{missing}"
    );
    let empty = parse_exec_command_args(r#"{"cmd":"  "}"#).unwrap_err();
    assert_eq!(
        empty.to_string(),
        "failed to parse function arguments: `cmd` must not be empty"
    );
    assert!(parse_exec_command_args(r#"{"cmd":"ls","yield_time_ms":-5}"#).is_err());
    assert!(parse_exec_command_args("not json").is_err());

    let write = parse_write_stdin_args(r#"{"session_id":7}"#).unwrap();
    assert_eq!(write.session_id, 7);
    assert_eq!(write.chars, "");
    assert_eq!(write.yield_time_ms(), DEFAULT_WRITE_STDIN_YIELD_MS);
    let write = parse_write_stdin_args(r#"{"session_id":"8","chars":"y\n","max_output_tokens":5}"#)
        .unwrap();
    assert_eq!(write.session_id, 8);
    assert_eq!(write.max_output_tokens(), Some(5));
    assert!(parse_write_stdin_args(r#"{"chars":"x"}"#).is_err());
}

#[test]
fn tool_specs_have_the_documented_schemas() {
    let exec = exec_command_tool_spec();
    assert_eq!(exec["type"], "function");
    assert_eq!(exec["name"], "exec_command");
    assert_eq!(exec["strict"], false);
    assert_eq!(exec["parameters"]["required"], serde_json::json!(["cmd"]));
    assert_eq!(exec["parameters"]["additionalProperties"], false);
    let properties = exec["parameters"]["properties"].as_object().unwrap();
    for key in [
        "cmd",
        "workdir",
        "shell",
        "login",
        "yield_time_ms",
        "max_output_tokens",
    ] {
        assert!(properties.contains_key(key), "{key}");
    }
    assert!(!properties.contains_key("sandbox_permissions"));
    let escalating = exec_command_tool_spec_with_escalation();
    assert!(escalating["parameters"]["properties"]["sandbox_permissions"].is_object());
    assert!(escalating["parameters"]["properties"]["justification"].is_object());

    let write = write_stdin_tool_spec();
    assert_eq!(write["name"], "write_stdin");
    assert_eq!(
        write["parameters"]["required"],
        serde_json::json!(["session_id"])
    );
    assert_eq!(
        write["parameters"]["properties"]["session_id"]["type"],
        "number"
    );
    assert_eq!(write["parameters"]["properties"]["chars"]["type"], "string");
}
