//! Each `fs/*` method's happy path, on both transports, with the reference's answers.

use serde_json::{Value, json};
use weft_protocol::fs_api::{FsGetMetadataResponse, FsReadDirectoryResponse};
use weft_test_support::Transport;

use super::{Files, INTERNAL_ERROR, INVALID_REQUEST, at};

/// "hello" in base64.
const HELLO: &str = "aGVsbG8=";

async fn read_write_and_list(transport: Transport) {
    let mut f = Files::start(transport, false, "").await;
    let file = f.write("a.txt", "hello");
    let read = f.client.request_ok("fs/readFile", at(&file)).await;
    assert_eq!(read, json!({"dataBase64": HELLO}));
    // `.` and `..` are resolved as the reference's absolute paths are.
    let dotted = format!("{}/./sub/../a.txt", f.work.display());
    let read = f.client.request_ok("fs/readFile", at(&dotted)).await;
    assert_eq!(read["dataBase64"], HELLO);

    let new = f.path("new.bin");
    let params = json!({"path": new, "dataBase64": "AAEC/w=="});
    assert_eq!(f.client.request_ok("fs/writeFile", params).await, json!({}));
    assert_eq!(std::fs::read(&new).unwrap(), [0, 1, 2, 255]);
    let params = json!({"path": new, "dataBase64": HELLO});
    f.client.request_ok("fs/writeFile", params).await;
    assert_eq!(std::fs::read(&new).unwrap(), b"hello");
    let bad = json!({"path": new, "dataBase64": "!!"});
    let message = f.refused("fs/writeFile", bad, INVALID_REQUEST).await;
    assert_eq!(
        message,
        "fs/writeFile requires valid base64 dataBase64: Invalid symbol 33, offset 0."
    );

    std::fs::create_dir(f.work.join("dir")).unwrap();
    std::os::unix::fs::symlink(f.work.join("dir"), f.work.join("dlink")).unwrap();
    let listing = f
        .client
        .request_ok("fs/readDirectory", at(&f.path("")))
        .await;
    let listing: FsReadDirectoryResponse = serde_json::from_value(listing).unwrap();
    let mut entries: Vec<_> = listing
        .entries
        .into_iter()
        .map(|e| (e.file_name, e.is_directory, e.is_file))
        .collect();
    entries.sort();
    assert_eq!(
        entries,
        vec![
            ("a.txt".into(), false, true),
            ("dir".into(), true, false),
            ("dlink".into(), true, false),
            ("new.bin".into(), false, true),
        ]
    );
    let message = f
        .refused("fs/readDirectory", at(&file), INTERNAL_ERROR)
        .await;
    assert_eq!(message, "Not a directory (os error 20)");
    let message = f
        .refused("fs/readFile", at(&f.path("dir")), INVALID_REQUEST)
        .await;
    assert_eq!(message, format!("path `{}` is not a file", f.path("dir")));
    let message = f
        .refused("fs/readFile", at(&f.path("nope")), INTERNAL_ERROR)
        .await;
    assert_eq!(message, "No such file or directory (os error 2)");
}

async fn metadata(transport: Transport) {
    let mut f = Files::start(transport, false, "").await;
    let file = f.write("a.txt", "hello");
    std::os::unix::fs::symlink(&file, f.work.join("link")).unwrap();
    let meta = |value: Value| serde_json::from_value::<FsGetMetadataResponse>(value).unwrap();
    let m = meta(f.client.request_ok("fs/getMetadata", at(&file)).await);
    assert!(m.is_file && !m.is_directory && !m.is_symlink);
    assert!(m.modified_at_ms > 1_600_000_000_000, "{m:?}");
    let m = meta(f.client.request_ok("fs/getMetadata", at(&f.path(""))).await);
    assert!(m.is_directory && !m.is_file && !m.is_symlink);
    let m = meta(
        f.client
            .request_ok("fs/getMetadata", at(&f.path("link")))
            .await,
    );
    assert!(m.is_file && m.is_symlink);
    let message = f
        .refused("fs/getMetadata", at(&f.path("nope")), INTERNAL_ERROR)
        .await;
    assert_eq!(message, "No such file or directory (os error 2)");
}

async fn directories_copy_and_remove(transport: Transport) {
    let mut f = Files::start(transport, false, "").await;
    let deep = f.path("x/y/z");
    assert_eq!(
        f.client.request_ok("fs/createDirectory", at(&deep)).await,
        json!({})
    );
    assert!(f.work.join("x/y/z").is_dir());
    // Recursive by default, so an existing directory is fine.
    f.client.request_ok("fs/createDirectory", at(&deep)).await;
    let once = json!({"path": deep, "recursive": false});
    let message = f.refused("fs/createDirectory", once, INTERNAL_ERROR).await;
    assert_eq!(message, "File exists (os error 17)");
    let orphan = json!({"path": f.path("q/r"), "recursive": false});
    let message = f
        .refused("fs/createDirectory", orphan, INTERNAL_ERROR)
        .await;
    assert_eq!(message, "No such file or directory (os error 2)");

    f.write("x/y/z/f.txt", "f");
    std::os::unix::fs::symlink("../a", f.work.join("x/link")).unwrap();
    let copy = json!({"sourcePath": f.path("x"), "destinationPath": f.path("x2")});
    let message = f.refused("fs/copy", copy.clone(), INVALID_REQUEST).await;
    assert_eq!(
        message,
        "fs/copy requires recursive: true when sourcePath is a directory"
    );
    let mut recursive = copy;
    recursive["recursive"] = json!(true);
    assert_eq!(f.client.request_ok("fs/copy", recursive).await, json!({}));
    assert_eq!(std::fs::read(f.work.join("x2/y/z/f.txt")).unwrap(), b"f");
    let link = f.work.join("x2/link");
    assert_eq!(std::fs::read_link(link).unwrap().to_str(), Some("../a"));
    let inside =
        json!({"sourcePath": f.path("x"), "destinationPath": f.path("x/in"), "recursive": true});
    let message = f.refused("fs/copy", inside, INVALID_REQUEST).await;
    assert_eq!(
        message,
        "fs/copy cannot copy a directory to itself or one of its descendants"
    );
    let file = json!({"sourcePath": f.path("x/y/z/f.txt"), "destinationPath": f.path("g.txt")});
    f.client.request_ok("fs/copy", file).await;
    assert_eq!(std::fs::read(f.work.join("g.txt")).unwrap(), b"f");

    let keep = json!({"path": f.path("x"), "recursive": false});
    let message = f.refused("fs/remove", keep, INTERNAL_ERROR).await;
    assert_eq!(message, "Directory not empty (os error 39)");
    assert_eq!(
        f.client.request_ok("fs/remove", at(&f.path("x"))).await,
        json!({})
    );
    assert!(!f.work.join("x").exists());
    f.client.request_ok("fs/remove", at(&f.path("g.txt"))).await;
    assert!(!f.work.join("g.txt").exists());
    // Forced by default: a missing path is fine, unless `force: false`.
    f.client.request_ok("fs/remove", at(&f.path("gone"))).await;
    let strict = json!({"path": f.path("gone"), "force": false});
    let message = f.refused("fs/remove", strict, INTERNAL_ERROR).await;
    assert_eq!(message, "No such file or directory (os error 2)");
}

/// Beneath `[fs] roots` every method works as without them (a root itself included).
async fn every_method_works_beneath_roots(transport: Transport) {
    let mut f = Files::start(transport, true, "").await;
    let root = f.path("root");
    let file = f.path("root/d/a.txt");
    f.client
        .request_ok("fs/createDirectory", at(&f.path("root/d")))
        .await;
    let write = json!({"path": file, "dataBase64": HELLO});
    f.client.request_ok("fs/writeFile", write).await;
    let read = f.client.request_ok("fs/readFile", at(&file)).await;
    assert_eq!(read["dataBase64"], HELLO);
    let listing = f.client.request_ok("fs/readDirectory", at(&root)).await;
    assert_eq!(
        listing["entries"],
        json!([{"fileName": "d", "isDirectory": true, "isFile": false}])
    );
    let meta = f.client.request_ok("fs/getMetadata", at(&root)).await;
    assert_eq!(meta["isDirectory"], true);
    let copy = json!({"sourcePath": f.path("root/d"), "destinationPath": f.path("root/e"), "recursive": true});
    f.client.request_ok("fs/copy", copy).await;
    assert_eq!(
        std::fs::read(f.work.join("root/e/a.txt")).unwrap(),
        b"hello"
    );
    let watch = json!({"watchId": "w", "path": root});
    assert_eq!(
        f.client.request_ok("fs/watch", watch).await,
        json!({"path": root})
    );
    f.client
        .request_ok("fs/remove", at(&f.path("root/d")))
        .await;
    assert!(!f.work.join("root/d").exists());
    let changed = f.client.wait_for_notification("fs/changed").await;
    assert_eq!(changed["params"]["changedPaths"], json!([f.path("root/d")]));
    // A root itself is not removed.
    let message = f.refused("fs/remove", at(&root), INVALID_REQUEST).await;
    assert!(message.contains("root"), "{message}");
    assert!(f.work.join("root").is_dir());
}

on_both_transports!(
    read_write_and_list,
    metadata,
    directories_copy_and_remove,
    every_method_works_beneath_roots,
);
