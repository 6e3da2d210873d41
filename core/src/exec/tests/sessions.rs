//! Sessions: yielded commands, stdin, cancels, clear errors, the session limit, Send futures.

use super::*;

#[tokio::test]
async fn yielded_command_becomes_a_session_that_reads_stdin() {
    let shell = Shell::new();
    let started = shell
        .run("echo ready; read line; echo got $line", 300)
        .await
        .unwrap();
    assert_eq!(started.exit_code, None);
    let id = started.session_id.unwrap();
    assert_eq!(started.output, "ready\n");
    assert_eq!(shell.sessions.session_ids(), vec![id]);
    let text = format_for_model(&started);
    assert!(
        text.contains(&format!("\nProcess running with session ID {id}\n")),
        "{text}"
    );

    let chunks = Chunks::default();
    let answer = shell
        .write_streaming(id, "hello\n", 5_000, &chunks)
        .await
        .unwrap();
    assert_eq!(answer.output, "got hello\n");
    assert_eq!(answer.exit_code, Some(0));
    assert_eq!(answer.session_id, None);
    assert_eq!(chunks.all().concat(), "got hello\n");
    // Collected: the session is gone.
    assert!(shell.sessions.session_ids().is_empty());
    let err = shell.write(id, "", 0).await.unwrap_err();
    assert_eq!(err, ExecError::UnknownSession(id));
    assert!(
        err.to_string()
            .contains(&format!("Unknown session ID {id}"))
    );
}

#[tokio::test]
async fn cat_session_echoes_input_and_keeps_running() {
    let shell = Shell::new();
    let started = shell.run("cat", 250).await.unwrap();
    let id = started.session_id.unwrap();
    let pids = shell.sessions.pids();
    let echoed = shell.write(id, "abc\n", 300).await.unwrap();
    assert_eq!(echoed.output, "abc\n");
    assert_eq!(echoed.session_id, Some(id));
    assert_eq!(echoed.exit_code, None);
    shell.sessions.shutdown().await;
    shell.assert_none_left(&pids).await;
}

#[tokio::test]
async fn a_session_survives_a_later_cancel() {
    let shell = Shell::new();
    let turn = CancellationToken::new();
    let started = shell
        .exec_cancelled_by(request("cat", shell.dir(), 250), &turn)
        .await
        .unwrap();
    let id = started.session_id.unwrap();
    let pids = shell.sessions.pids();
    assert_eq!(pids.len(), 1);

    // The turn is interrupted: a poll that is waiting stops, a new command is aborted, and the
    // session is left alone.
    turn.cancel();
    let polled = shell
        .sessions
        .write_stdin(id, String::new(), 5_000, None, |_| {}, &turn)
        .await;
    assert!(matches!(polled, Err(ExecError::Aborted { .. })));
    let other = shell
        .exec_cancelled_by(request("sleep 30", shell.dir(), 30_000), &turn)
        .await;
    assert!(matches!(other, Err(ExecError::Aborted { .. })));
    assert!(pid_alive(pids[0]));
    assert_eq!(shell.sessions.session_ids(), vec![id]);

    // The next turn can still talk to it.
    let echoed = shell.write(id, "still here\n", 300).await.unwrap();
    assert_eq!(echoed.output, "still here\n");
    drop(shell);
    assert_gone(&pids).await;
}

#[tokio::test]
async fn unknown_session_and_bad_workdir_are_clear_errors() {
    let shell = Shell::new();
    let err = shell.write(42, "x", 250).await.unwrap_err();
    assert_eq!(err, ExecError::UnknownSession(42));
    let err = shell
        .exec(request("true", &shell.dir().join("missing"), 250))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ExecError::Spawn(ref m) if m.contains("does not exist")),
        "{err}"
    );
    let mut req = request("true", shell.dir(), 250);
    req.shell = Some("/nonexistent/shell".to_string());
    let err = shell.exec(req).await.unwrap_err();
    assert!(
        matches!(err, ExecError::Spawn(ref m) if m.contains("/nonexistent/shell")),
        "{err}"
    );
}

#[tokio::test]
async fn the_session_limit_evicts_the_least_recently_used() {
    let shell = Shell::new();
    let spec = shell.spec();
    let cancel = CancellationToken::new();
    let mut ids = Vec::new();
    for _ in 0..MAX_SESSIONS / 8 {
        let batch = (0..8).map(|_| {
            shell.sessions.exec_command(
                request("exec cat", shell.dir(), 250),
                &spec,
                |_| {},
                &cancel,
            )
        });
        for out in futures::future::join_all(batch).await {
            ids.push(out.unwrap().session_id.unwrap());
        }
    }
    assert_eq!(shell.sessions.session_ids().len(), MAX_SESSIONS);
    let all_pids = shell.sessions.pids();
    // Touch the oldest so that another session is the least recently used.
    ids.sort_unstable();
    shell.write(ids[0], "x\n", 250).await.unwrap();
    let out = shell.run("exec cat", 250).await.unwrap();
    let open = shell.sessions.session_ids();
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
    shell.sessions.shutdown().await;
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
