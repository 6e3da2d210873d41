//! Cancelling, dropping and shutting down kill the processes started, background jobs too.

use super::*;

#[tokio::test]
async fn cancelling_a_foreground_command_kills_it_quickly() {
    let shell = Shell::new();
    let cancel = CancellationToken::new();
    let pids = Mutex::new(Vec::new());
    let run = shell.exec_cancelled_by(request("sleep 30", shell.dir(), 30_000), &cancel);
    let interrupt = async {
        for _ in 0..100 {
            let running = shell.sessions.pids();
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
    shell.assert_none_left(&pids).await;
}

#[tokio::test]
async fn dropping_a_foreground_call_kills_the_command() {
    let shell = Shell::new();
    let cancel = CancellationToken::new();
    let run = shell.exec_cancelled_by(request("sleep 30", shell.dir(), 30_000), &cancel);
    let mut pids = Vec::new();
    tokio::select! {
        _ = run => panic!("sleep 30 finished"),
        () = async {
            loop {
                pids = shell.sessions.pids();
                if !pids.is_empty() { break; }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        } => {}
    }
    assert_eq!(pids.len(), 1);
    shell.assert_none_left(&pids).await;
}

#[tokio::test]
async fn shutdown_and_drop_kill_every_session() {
    let shell = Shell::new();
    for _ in 0..2 {
        let out = shell.run("sleep 30", 250).await.unwrap();
        assert!(out.session_id.is_some());
    }
    let pids = shell.sessions.pids();
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|p| pid_alive(*p)));
    shell.sessions.shutdown().await;
    assert_gone(&pids).await;
    let refused = shell.run("echo hi", 250).await;
    assert_eq!(refused, Err(ExecError::ShutDown));

    let shell = Shell::new();
    shell.run("sleep 30", 250).await.unwrap();
    let pids = shell.sessions.pids();
    drop(shell);
    assert_gone(&pids).await;
}

#[tokio::test]
async fn background_jobs_die_with_their_command() {
    let shell = Shell::new();
    let background = "sleep 30 >/dev/null 2>&1 & echo $!";
    let out = shell.run(background, 10_000).await.unwrap();
    assert_eq!(out.exit_code, Some(0));
    let pid: i32 = out.output.trim().parse().unwrap();
    assert_gone(&[pid]).await;
}
