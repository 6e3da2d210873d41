//! Writes beneath a root's directory handle: no symlink followed, regular files only, the
//! names reported.

use super::*;

#[cfg(unix)]
#[test]
fn beneath_follows_no_symlink_on_the_way() {
    use std::os::unix::fs::symlink;
    let (_tmp, ws, outside) = race_layout();
    let beneath = Beneath::open(&ws).unwrap();
    beneath
        .write(Path::new("inside/new/deep.txt"), b"ok\n", None)
        .unwrap();
    assert_eq!(
        beneath.read(Path::new("inside/new/deep.txt")).unwrap(),
        Some(b"ok\n".to_vec())
    );
    assert_eq!(beneath.read(Path::new("inside/none.txt")).unwrap(), None);
    assert_eq!(beneath.read(Path::new("missing/none.txt")).unwrap(), None);
    // A directory checked as `inside` and replaced by a symlink to the outside afterwards.
    std::fs::rename(ws.join("inside"), ws.join("moved")).unwrap();
    symlink(&outside, ws.join("inside")).unwrap();
    let err = beneath
        .write(Path::new("inside/escaped.txt"), b"x", None)
        .unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert!(beneath.read(Path::new("inside/escaped.txt")).is_err());
    assert!(beneath.remove(Path::new("inside/escaped.txt")).is_err());
    // The last component is never followed either.
    std::fs::write(outside.join("target.txt"), "outside\n").unwrap();
    symlink(outside.join("target.txt"), ws.join("file-link")).unwrap();
    assert!(beneath.write(Path::new("file-link"), b"x", None).is_err());
    assert!(beneath.read(Path::new("file-link")).is_err());
    assert!(std::fs::read_dir(&outside).unwrap().count() == 1);
    assert_eq!(
        std::fs::read_to_string(outside.join("target.txt")).unwrap(),
        "outside\n"
    );
    // Removing the link removes the link, not its target.
    beneath.remove(Path::new("file-link")).unwrap();
    assert!(outside.join("target.txt").exists());
}

#[cfg(unix)]
#[test]
fn beneath_reads_and_writes_regular_files_only() {
    let (_tmp, ws, _outside) = race_layout();
    let beneath = Beneath::open(&ws).unwrap();
    let fifo = ws.join("inside/fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // Neither hangs on the FIFO.
    assert!(beneath.read(Path::new("inside/fifo")).is_err());
    assert!(beneath.write(Path::new("inside/fifo"), b"x", None).is_err());
    let err = beneath.read(Path::new("inside")).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::IsADirectory);
    assert!(beneath.read(Path::new("../x")).is_err());
}

#[cfg(unix)]
#[test]
fn write_access_names_the_outermost_root_and_the_resolved_path() {
    use std::os::unix::fs::symlink;
    let (_tmp, ws, outside) = race_layout();
    let nested = ws.join("inside");
    let spec = SandboxSpec::from_policy(&workspace_write(&[&nested], true), &ws);
    symlink(ws.join("inside"), ws.join("d")).unwrap();
    assert_eq!(
        spec.write_access(&ws.join("d/x.txt")),
        WriteAccess::Beneath {
            root: ws.clone(),
            relative: PathBuf::from("inside/x.txt"),
        }
    );
    symlink(&outside, ws.join("out")).unwrap();
    assert_eq!(
        spec.write_access(&ws.join("out/x.txt")),
        WriteAccess::Denied
    );
    // Removing the link itself is inside.
    assert_eq!(
        spec.entry_access(&ws.join("out")),
        WriteAccess::Beneath {
            root: ws.clone(),
            relative: PathBuf::from("out"),
        }
    );
    assert_eq!(spec.write_access(&ws), WriteAccess::Denied);
    let full = SandboxSpec::unrestricted(&ws);
    assert_eq!(full.write_access(&outside.join("x")), WriteAccess::Anywhere);
}
