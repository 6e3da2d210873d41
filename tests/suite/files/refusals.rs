//! What the `fs/*` methods refuse: relative paths (with the reference's wording), paths
//! outside `[fs] roots`, links that lead out of them, anything beneath `$WEFT_HOME`, files
//! larger than `limits.max_fs_file_bytes`, and a FIFO (answered at once, never hanging).

use std::os::unix::fs::symlink;
use std::time::{Duration, Instant};

use serde_json::json;
use weft_test_support::Transport;

use super::{Files, INVALID_REQUEST, at};

async fn relative_paths_are_refused_as_the_reference_does(transport: Transport) {
    let mut f = Files::start(transport, false, "").await;
    let requests = [
        ("fs/readFile", json!({"path": "a.txt"})),
        ("fs/writeFile", json!({"path": "", "dataBase64": ""})),
        ("fs/readDirectory", json!({"path": "."})),
        ("fs/getMetadata", json!({"path": "../x"})),
        ("fs/createDirectory", json!({"path": "d"})),
        ("fs/remove", json!({"path": "d"})),
        (
            "fs/copy",
            json!({"sourcePath": "/tmp", "destinationPath": "d"}),
        ),
        ("fs/watch", json!({"path": "d", "watchId": "w"})),
    ];
    for (method, params) in requests {
        let message = f.refused(method, params, INVALID_REQUEST).await;
        assert_eq!(
            message, "Invalid request: AbsolutePathBuf deserialized without a base path",
            "{method}"
        );
    }
    // The connection goes on.
    let file = f.write("a.txt", "a");
    f.client.request_ok("fs/readFile", at(&file)).await;
}

async fn roots_confine_every_path(transport: Transport) {
    let mut f = Files::start(transport, true, "").await;
    let inside = f.write("root/in.txt", "in");
    let outside = f.write("outside.txt", "out");
    f.client.request_ok("fs/readFile", at(&inside)).await;
    let message = f
        .refused("fs/readFile", at(&outside), INVALID_REQUEST)
        .await;
    assert_eq!(
        message,
        format!("`{outside}` is outside the [fs] roots this server allows")
    );
    // `..` cannot climb out either: the path is normalized first.
    let climb = format!("{}/root/../outside.txt", f.work.display());
    f.refused("fs/readFile", at(&climb), INVALID_REQUEST).await;
    let write = json!({"path": f.path("new.txt"), "dataBase64": ""});
    f.refused("fs/writeFile", write, INVALID_REQUEST).await;
    let copy = json!({"sourcePath": inside, "destinationPath": f.path("stolen.txt")});
    f.refused("fs/copy", copy, INVALID_REQUEST).await;
    let watch = json!({"path": f.path(""), "watchId": "w"});
    f.refused("fs/watch", watch, INVALID_REQUEST).await;
    assert!(!f.work.join("new.txt").exists() && !f.work.join("stolen.txt").exists());
}

async fn links_do_not_lead_out_of_the_roots(transport: Transport) {
    let mut f = Files::start(transport, true, "").await;
    let outside = f.write("outside/secret.txt", "out");
    symlink(f.work.join("outside"), f.work.join("root/esc")).unwrap();
    symlink(&outside, f.work.join("root/esc.txt")).unwrap();
    let through_dir = f.path("root/esc/secret.txt");
    let message = f
        .refused("fs/readFile", at(&through_dir), INVALID_REQUEST)
        .await;
    assert!(message.contains("symbolic link"), "{message}");
    let message = f
        .refused("fs/readFile", at(&f.path("root/esc.txt")), INVALID_REQUEST)
        .await;
    assert!(message.contains("symbolic link"), "{message}");
    let write = json!({"path": f.path("root/esc.txt"), "dataBase64": "eA=="});
    f.refused("fs/writeFile", write, INVALID_REQUEST).await;
    let write = json!({"path": f.path("root/esc/new.txt"), "dataBase64": "eA=="});
    f.refused("fs/writeFile", write, INVALID_REQUEST).await;
    f.refused("fs/readDirectory", at(&f.path("root/esc")), INVALID_REQUEST)
        .await;
    let mkdir = at(&f.path("root/esc/made"));
    f.refused("fs/createDirectory", mkdir, INVALID_REQUEST)
        .await;
    let copy = json!({"sourcePath": f.path("root/esc/secret.txt"), "destinationPath": f.path("root/c.txt")});
    f.refused("fs/copy", copy, INVALID_REQUEST).await;
    // A link is reported as a link that resolves to nothing, and removed as a link.
    let meta = f
        .client
        .request_ok("fs/getMetadata", at(&f.path("root/esc")))
        .await;
    assert_eq!(
        (&meta["isSymlink"], &meta["isDirectory"], &meta["isFile"]),
        (&json!(true), &json!(false), &json!(false))
    );
    f.client
        .request_ok("fs/remove", at(&f.path("root/esc")))
        .await;
    assert_eq!(std::fs::read(&outside).unwrap(), b"out");
    assert!(!f.work.join("outside/new.txt").exists() && !f.work.join("outside/made").exists());
}

async fn weft_home_is_never_served(transport: Transport) {
    let mut f = Files::start(transport, false, "").await;
    let home = f.home_dir();
    let secret = home.join("auth.json").to_string_lossy().into_owned();
    let home_str = home.to_string_lossy().into_owned();
    let config = home.join("config.toml").to_string_lossy().into_owned();
    for (method, params) in [
        ("fs/readFile", at(&secret)),
        ("fs/readFile", at(&config)),
        ("fs/getMetadata", at(&secret)),
        ("fs/readDirectory", at(&home_str)),
        (
            "fs/writeFile",
            json!({"path": secret, "dataBase64": "eA=="}),
        ),
        ("fs/remove", at(&secret)),
        ("fs/createDirectory", at(&format!("{home_str}/made"))),
        ("fs/watch", json!({"path": home_str, "watchId": "w"})),
        (
            "fs/copy",
            json!({"sourcePath": secret, "destinationPath": f.path("copy.json")}),
        ),
        (
            "fs/copy",
            json!({"sourcePath": f.write("x", "x"), "destinationPath": format!("{home_str}/x")}),
        ),
    ] {
        let message = f.refused(method, params, INVALID_REQUEST).await;
        assert!(message.contains("$WEFT_HOME"), "{method}: {message}");
    }
    // Nor through a link, nor by removing or copying a directory that holds it.
    symlink(&secret, f.work.join("token")).unwrap();
    f.refused("fs/readFile", at(&f.path("token")), INVALID_REQUEST)
        .await;
    let parent = home.parent().unwrap().to_string_lossy().into_owned();
    let message = f.refused("fs/remove", at(&parent), INVALID_REQUEST).await;
    assert!(message.contains("contains $WEFT_HOME"), "{message}");
    let copy = json!({"sourcePath": parent, "destinationPath": f.path("all"), "recursive": true});
    let message = f.refused("fs/copy", copy, INVALID_REQUEST).await;
    assert!(message.contains("contains $WEFT_HOME"), "{message}");
    assert_eq!(
        std::fs::read_to_string(home.join("auth.json")).unwrap(),
        "{\"token\": \"secret\"}"
    );
    assert!(!home.join("made").exists() && !f.work.join("copy.json").exists());
    // Nor the daemon's own process entries (its environment holds the provider keys).
    let own = format!("/proc/{}/environ", f.daemon.pid());
    for path in ["/proc/self/environ", own.as_str()] {
        let message = f.refused("fs/readFile", at(path), INVALID_REQUEST).await;
        assert!(message.contains("own process"), "{message}");
    }
}

async fn oversized_files_are_refused(transport: Transport) {
    let mut f = Files::start(transport, false, "[limits]\nmax_fs_file_bytes = 8\n").await;
    let small = f.write("small.txt", "12345678");
    f.client.request_ok("fs/readFile", at(&small)).await;
    let big = f.write("big.txt", "123456789");
    let message = f.refused("fs/readFile", at(&big), INVALID_REQUEST).await;
    assert_eq!(
        message,
        format!("`{big}` is larger than limits.max_fs_file_bytes (8 bytes)")
    );
    // Nine bytes ("123456789") is too many to write; eight is fine.
    let write = json!({"path": f.path("w.txt"), "dataBase64": "MTIzNDU2Nzg5"});
    let message = f.refused("fs/writeFile", write, INVALID_REQUEST).await;
    assert!(message.contains("limits.max_fs_file_bytes"), "{message}");
    assert!(!f.work.join("w.txt").exists());
    let huge = json!({"path": f.path("w.txt"), "dataBase64": "A".repeat(64 * 1024)});
    f.refused("fs/writeFile", huge, INVALID_REQUEST).await;
    let write = json!({"path": f.path("w.txt"), "dataBase64": "MTIzNDU2Nzg="});
    f.client.request_ok("fs/writeFile", write).await;
    assert_eq!(std::fs::read(f.work.join("w.txt")).unwrap(), b"12345678");
}

async fn a_fifo_is_refused_at_once(transport: Transport) {
    let mut f = Files::start(transport, false, "").await;
    let fifo = f.path("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let started = Instant::now();
    let message = f.refused("fs/readFile", at(&fifo), INVALID_REQUEST).await;
    assert_eq!(message, format!("path `{fifo}` is not a file"));
    let write = json!({"path": fifo, "dataBase64": "eA=="});
    let message = f.refused("fs/writeFile", write, INVALID_REQUEST).await;
    assert_eq!(message, format!("path `{fifo}` is not a file"));
    let message = f
        .refused("fs/readFile", at("/dev/zero"), INVALID_REQUEST)
        .await;
    assert_eq!(message, "path `/dev/zero` is not a file");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // The listing names it as neither a file nor a directory.
    let listing = f
        .client
        .request_ok("fs/readDirectory", at(&f.path("")))
        .await;
    assert_eq!(
        listing["entries"],
        json!([{"fileName": "fifo", "isDirectory": false, "isFile": false}])
    );
}

on_both_transports!(
    relative_paths_are_refused_as_the_reference_does,
    roots_confine_every_path,
    links_do_not_lead_out_of_the_roots,
    weft_home_is_never_served,
    oversized_files_are_refused,
    a_fifo_is_refused_at_once,
);
