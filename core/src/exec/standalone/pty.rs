//! The pseudo-terminal of a `command/exec` with `tty: true` (docs/architecture.md §8.2): a
//! master/slave pair opened with rustix (`posix_openpt`, `grantpt`, `unlockpt`, `ptsname`),
//! the slave as the child's stdin, stdout and stderr and its controlling terminal (the child
//! starts a new session), the master read and written by the daemon through tokio's
//! [`AsyncFd`] and resized with `TIOCSWINSZ` (`tcsetwinsize`).
//!
//! Why not `portable-pty`: it spawns the child itself, so the sandbox's pre-exec hook
//! (Landlock, seccomp, the protected mounts) could not be installed on it; with our own pair
//! the PTY command is started by the same `tokio::process::Command` as every other command.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::{Mode, OFlags};
use rustix::pty::OpenptFlags;
use rustix::termios::Winsize;
use tokio::io::unix::AsyncFd;

use super::TerminalSize;

/// An open pair: the master (ours, non-blocking) and the slave (the child's).
pub(super) struct Pair {
    pub master: OwnedFd,
    pub slave: OwnedFd,
}

/// Opens a PTY pair of `size`.
pub(super) fn open(size: TerminalSize) -> io::Result<Pair> {
    let master =
        rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
    rustix::pty::grantpt(&master)?;
    rustix::pty::unlockpt(&master)?;
    let name = rustix::pty::ptsname(&master, Vec::new())?;
    let slave = rustix::fs::open(
        name.as_c_str(),
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    resize(&master, size)?;
    let flags = rustix::fs::fcntl_getfl(&master)?;
    rustix::fs::fcntl_setfl(&master, flags | OFlags::NONBLOCK)?;
    Ok(Pair { master, slave })
}

/// Sets the terminal's size (the child gets `SIGWINCH`).
pub(super) fn resize(master: impl AsFd, size: TerminalSize) -> io::Result<()> {
    rustix::termios::tcsetwinsize(
        master,
        Winsize {
            ws_row: size.rows,
            ws_col: size.cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )?;
    Ok(())
}

/// The terminal's size now.
pub(super) fn size(master: impl AsFd) -> io::Result<TerminalSize> {
    let winsize = rustix::termios::tcgetwinsize(master)?;
    Ok(TerminalSize {
        rows: winsize.ws_row,
        cols: winsize.ws_col,
    })
}

/// Reads what the terminal printed; `Ok(0)` once every slave is closed (Linux answers `EIO`).
pub(super) async fn read(master: &AsyncFd<OwnedFd>, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        let mut guard = master.readable().await?;
        match guard.try_io(|fd| rustix::io::read(fd.get_ref(), &mut *buf).map_err(io::Error::from))
        {
            Ok(Ok(n)) => return Ok(n),
            Ok(Err(error)) if error.raw_os_error() == Some(libc::EIO) => return Ok(0),
            Ok(Err(error)) => return Err(error),
            Err(_would_block) => continue,
        }
    }
}

/// Writes all of `bytes` to the terminal (the child's input).
pub(super) async fn write_all(master: &AsyncFd<OwnedFd>, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        let mut guard = master.writable().await?;
        match guard.try_io(|fd| rustix::io::write(fd.get_ref(), bytes).map_err(io::Error::from)) {
            Ok(Ok(0)) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(Ok(n)) => bytes = &bytes[n..],
            Ok(Err(error)) => return Err(error),
            Err(_would_block) => continue,
        }
    }
    Ok(())
}

/// Makes the slave (already the child's stdin) the controlling terminal of a new session.
#[allow(unsafe_code)]
pub(super) fn install_session(command: &mut tokio::process::Command) {
    // SAFETY: the closure runs in the child after `fork`; it only makes two system calls with
    // integer arguments (`setsid(2)`, `ioctl(0, TIOCSCTTY, 0)`), allocates nothing and takes no
    // locks; failures are raw OS errors (`last_os_error` does not allocate).
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            if libc::ioctl(0, libc::TIOCSCTTY, 0) == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// The master, registered with tokio's reactor for [`read`] and [`write_all`].
#[allow(unsafe_code)]
pub(super) fn register(master: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: `register` requires that the fd stays open while registered and is not
    // registered twice: the `AsyncFd` owns it (an `OwnedFd` closes only when dropped, after
    // the `AsyncFd` deregisters it), and it was opened just now by `open`.
    unsafe { AsyncFd::register(master) }.map_err(io::Error::from)
}
