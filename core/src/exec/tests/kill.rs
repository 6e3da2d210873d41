//! Cancelling, dropping and shutting down kill the processes started, background jobs too.

use super::*;

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
