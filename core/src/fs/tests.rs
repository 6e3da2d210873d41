//! Unit tests of the confined file access (docs/protocol.md §7.31).

use std::os::unix::fs::symlink;

use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    base: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(base.join("home")).unwrap();
        std::fs::write(base.join("home/auth.json"), "secret").unwrap();
        std::fs::create_dir_all(base.join("work/sub")).unwrap();
        std::fs::write(base.join("work/a.txt"), "hello").unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("outside/o.txt"), "out").unwrap();
        Fixture { _dir: dir, base }
    }

    fn path(&self, rel: &str) -> AbsolutePathBuf {
        AbsolutePathBuf::new(self.base.join(rel)).unwrap()
    }

    fn access(&self, roots: Option<&[&str]>, max: u64) -> FsAccess {
        let fs = FsConfig {
            roots: roots.map(|r| r.iter().map(|r| self.base.join(r)).collect()),
            ..FsConfig::default()
        };
        FsAccess::with(&fs, &self.base.join("home"), max)
    }
}

fn invalid(result: Result<impl std::fmt::Debug, FsError>) -> String {
    match result {
        Err(FsError::Invalid(message)) => message,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn reads_writes_and_lists_without_roots() {
    let fx = Fixture::new();
    let fs = fx.access(None, 1024);
    assert_eq!(fs.read_file(&fx.path("work/a.txt")).unwrap(), b"hello");
    fs.write_file(&fx.path("work/new.txt"), b"new").unwrap();
    assert_eq!(std::fs::read(fx.base.join("work/new.txt")).unwrap(), b"new");
    fs.write_file(&fx.path("work/new.txt"), b"n").unwrap();
    assert_eq!(std::fs::read(fx.base.join("work/new.txt")).unwrap(), b"n");
    let mut names: Vec<_> = fs
        .read_directory(&fx.path("work"))
        .unwrap()
        .entries
        .into_iter()
        .map(|e| (e.file_name, e.is_directory, e.is_file))
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            ("a.txt".into(), false, true),
            ("new.txt".into(), false, true),
            ("sub".into(), true, false)
        ]
    );
    // Links are followed, as in the reference.
    symlink(fx.base.join("outside/o.txt"), fx.base.join("work/link")).unwrap();
    assert_eq!(fs.read_file(&fx.path("work/link")).unwrap(), b"out");
    let meta = fs.metadata(&fx.path("work/link")).unwrap();
    assert!(meta.is_symlink && meta.is_file && !meta.is_directory);
    assert!(meta.modified_at_ms > 0);
    let err = invalid(fs.read_file(&fx.path("work/sub")));
    assert_eq!(
        err,
        format!(
            "path `{}` is not a file",
            fx.base.join("work/sub").display()
        )
    );
}

#[test]
fn weft_home_is_never_reached() {
    let fx = Fixture::new();
    for fs in [fx.access(None, 1024), fx.access(Some(&[""]), 1024)] {
        let err = invalid(fs.read_file(&fx.path("home/auth.json")));
        assert!(err.contains("$WEFT_HOME"), "{err}");
        invalid(fs.write_file(&fx.path("home/x"), b"x"));
        invalid(fs.read_directory(&fx.path("home")));
        invalid(fs.metadata(&fx.path("home/auth.json")));
        invalid(fs.create_directory(&fx.path("home/d"), true));
        invalid(fs.remove(&fx.path("home/auth.json"), true, true));
        invalid(fs.check_watch(&fx.path("home")));
        // Nor a directory that holds it.
        let err = invalid(fs.remove(&fx.path(""), true, true));
        assert!(
            err.contains("contains $WEFT_HOME") || err.contains("root"),
            "{err}"
        );
        invalid(fs.copy(&fx.path(""), &fx.path("work/copy"), true));
        invalid(fs.copy(&fx.path("work/a.txt"), &fx.path("home/a.txt"), false));
    }
    // Not through a link either.
    let fs = fx.access(None, 1024);
    symlink(fx.base.join("home/auth.json"), fx.base.join("work/token")).unwrap();
    invalid(fs.read_file(&fx.path("work/token")));
    invalid(fs.write_file(&fx.path("work/token"), b"x"));
    symlink(fx.base.join("home"), fx.base.join("work/h")).unwrap();
    invalid(fs.read_file(&fx.path("work/h/auth.json")));
    invalid(fs.read_directory(&fx.path("work/h")));
    assert_eq!(
        std::fs::read(fx.base.join("home/auth.json")).unwrap(),
        b"secret"
    );
}

#[test]
fn the_own_process_is_never_reached() {
    let fx = Fixture::new();
    let fs = fx.access(None, 1 << 20);
    let own = format!("/proc/{}/environ", std::process::id());
    for path in [
        "/proc/self/environ",
        "/proc/thread-self/environ",
        own.as_str(),
    ] {
        let err = invalid(fs.read_file(&AbsolutePathBuf::new(path).unwrap()));
        assert!(err.contains("own process"), "{path}: {err}");
    }
    invalid(fs.read_directory(&AbsolutePathBuf::new("/proc/self/fd").unwrap()));
    // Another process's entries are what the reference reaches.
    assert!(
        fs.read_directory(&AbsolutePathBuf::new("/proc").unwrap())
            .is_ok()
    );
}

#[test]
fn roots_confine_without_following_links() {
    let fx = Fixture::new();
    let fs = fx.access(Some(&["work"]), 1024);
    assert_eq!(fs.read_file(&fx.path("work/a.txt")).unwrap(), b"hello");
    let err = invalid(fs.read_file(&fx.path("outside/o.txt")));
    assert!(err.contains("outside the [fs] roots"), "{err}");
    symlink(fx.base.join("outside"), fx.base.join("work/esc")).unwrap();
    symlink(fx.base.join("outside/o.txt"), fx.base.join("work/esc.txt")).unwrap();
    for path in ["work/esc/o.txt", "work/esc.txt"] {
        let err = invalid(fs.read_file(&fx.path(path)));
        assert!(err.contains("symbolic link"), "{path}: {err}");
    }
    invalid(fs.write_file(&fx.path("work/esc.txt"), b"x"));
    invalid(fs.write_file(&fx.path("work/esc/new"), b"x"));
    invalid(fs.read_directory(&fx.path("work/esc")));
    invalid(fs.create_directory(&fx.path("work/esc/d"), true));
    assert_eq!(
        std::fs::read(fx.base.join("outside/o.txt")).unwrap(),
        b"out"
    );
    assert!(!fx.base.join("outside/new").exists() && !fx.base.join("outside/d").exists());
    // A link resolves to nothing beneath roots, and is removed as a link.
    let meta = fs.metadata(&fx.path("work/esc")).unwrap();
    assert!(meta.is_symlink && !meta.is_directory && !meta.is_file);
    fs.remove(&fx.path("work/esc"), true, false).unwrap();
    assert!(fx.base.join("outside/o.txt").exists());
    invalid(fs.remove(&fx.path("work"), true, false));
}

#[test]
fn sizes_and_special_files() {
    let fx = Fixture::new();
    let fs = fx.access(None, 4);
    let err = invalid(fs.read_file(&fx.path("work/a.txt")));
    assert!(err.contains("limits.max_fs_file_bytes"), "{err}");
    invalid(fs.write_file(&fx.path("work/big"), b"12345"));
    assert!(!fx.base.join("work/big").exists());
    let fifo = fx.base.join("work/fifo");
    rustix::fs::mknodat(CWD, &fifo, FileType::Fifo, Mode::from_raw_mode(0o644), 0).unwrap();
    let started = std::time::Instant::now();
    let err = invalid(fs.read_file(&fx.path("work/fifo")));
    assert!(err.contains("is not a file"), "{err}");
    invalid(fs.write_file(&fx.path("work/fifo"), b"x"));
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    let err = invalid(fs.copy(&fx.path("work/fifo"), &fx.path("work/f2"), false));
    assert_eq!(
        err,
        "fs/copy only supports regular files, directories, and symlinks"
    );
}

#[test]
fn directories_copy_and_remove() {
    let fx = Fixture::new();
    let fs = fx.access(Some(&["work"]), 1024);
    fs.create_directory(&fx.path("work/x/y/z"), true).unwrap();
    fs.create_directory(&fx.path("work/x/y/z"), true).unwrap();
    let err = fs
        .create_directory(&fx.path("work/x/y/z"), false)
        .unwrap_err();
    assert_eq!(err.to_string(), "File exists (os error 17)");
    let err = fs
        .create_directory(&fx.path("work/q/r"), false)
        .unwrap_err();
    assert_eq!(err.to_string(), "No such file or directory (os error 2)");
    std::fs::write(fx.base.join("work/x/y/z/f"), "f").unwrap();
    symlink("../../../a.txt", fx.base.join("work/x/y/l")).unwrap();
    let err = invalid(fs.copy(&fx.path("work/x"), &fx.path("work/x2"), false));
    assert_eq!(
        err,
        "fs/copy requires recursive: true when sourcePath is a directory"
    );
    let err = invalid(fs.copy(&fx.path("work/x"), &fx.path("work/x/in"), true));
    assert_eq!(
        err,
        "fs/copy cannot copy a directory to itself or one of its descendants"
    );
    fs.copy(&fx.path("work/x"), &fx.path("work/x2"), true)
        .unwrap();
    assert_eq!(std::fs::read(fx.base.join("work/x2/y/z/f")).unwrap(), b"f");
    assert!(
        fx.base
            .join("work/x2/y/l")
            .symlink_metadata()
            .unwrap()
            .is_symlink()
    );
    fs.copy(&fx.path("work/a.txt"), &fx.path("work/b.txt"), false)
        .unwrap();
    assert_eq!(std::fs::read(fx.base.join("work/b.txt")).unwrap(), b"hello");
    let err = fs.remove(&fx.path("work/x"), false, true).unwrap_err();
    assert_eq!(err.to_string(), "Directory not empty (os error 39)");
    fs.remove(&fx.path("work/x"), true, true).unwrap();
    assert!(!fx.base.join("work/x").exists());
    fs.remove(&fx.path("work/nope"), true, true).unwrap();
    let err = fs.remove(&fx.path("work/nope"), true, false).unwrap_err();
    assert_eq!(err.to_string(), "No such file or directory (os error 2)");
}
