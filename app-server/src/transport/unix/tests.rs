use std::os::unix::fs::PermissionsExt;

use super::*;

fn socket_path(dir: &Path) -> PathBuf {
    default_socket_path(dir)
}

#[tokio::test]
async fn the_socket_is_private_in_a_private_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = socket_path(dir.path());
    let socket = ControlSocket::bind(&path).await.unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(
        std::fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_socket()
    );
    let parent = std::fs::metadata(path.parent().unwrap()).unwrap();
    assert_eq!(parent.permissions().mode() & 0o777, 0o700);
    assert_eq!(socket.path(), path);
}

#[tokio::test]
async fn an_open_directory_of_ours_is_tightened() {
    let dir = tempfile::tempdir().unwrap();
    let path = socket_path(dir.path());
    std::fs::create_dir(path.parent().unwrap()).unwrap();
    std::fs::set_permissions(
        path.parent().unwrap(),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let _socket = ControlSocket::bind(&path).await.unwrap();
    let parent = std::fs::metadata(path.parent().unwrap()).unwrap();
    assert_eq!(parent.permissions().mode() & 0o777, 0o700);
}

#[tokio::test]
async fn a_stale_socket_file_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let path = socket_path(dir.path());
    std::fs::create_dir(path.parent().unwrap()).unwrap();
    // Bound and dropped: the file stays, nobody listens.
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    assert!(std::os::unix::net::UnixStream::connect(&path).is_err());
    let _socket = ControlSocket::bind(&path).await.unwrap();
    assert!(tokio::net::UnixStream::connect(&path).await.is_ok());
}

#[tokio::test]
async fn a_socket_in_use_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = socket_path(dir.path());
    let _first = ControlSocket::bind(&path).await.unwrap();
    let err = ControlSocket::bind(&path).await.err().unwrap();
    assert_eq!(err.kind(), ErrorKind::AddrInUse);
    assert_eq!(
        err.to_string(),
        format!(
            "app-server control socket is already in use at {}",
            path.display()
        )
    );
    // The refused second bind left the first one's file alone.
    assert!(tokio::net::UnixStream::connect(&path).await.is_ok());
}

#[tokio::test]
async fn a_path_that_is_not_a_socket_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("not-a-socket");
    std::fs::write(&path, "keep me").unwrap();
    let err = ControlSocket::bind(&path).await.err().unwrap();
    assert_eq!(err.kind(), ErrorKind::AlreadyExists);
    assert!(
        err.to_string().contains("exists and is not a socket"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep me");
}

#[tokio::test]
async fn the_file_is_removed_when_the_socket_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = socket_path(dir.path());
    let socket = ControlSocket::bind(&path).await.unwrap();
    assert!(path.exists());
    drop(socket);
    assert!(!path.exists());
}
