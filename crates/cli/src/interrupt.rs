//! Ctrl-C during long work (issue 23 §3): the first SIGINT asks the work to stop at the next
//! safe point — between cohorts — so it can return an error and leave nothing half-written
//! (files are written under temporary names and renamed at the end); a second one ends the
//! process at once, as the user clearly means it.

use std::sync::atomic::{AtomicBool, Ordering};

/// Exit status of a run stopped by Ctrl-C (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// The work was stopped by Ctrl-C (the error a command returns; `main` exits with
/// [`EXIT_INTERRUPTED`]).
#[derive(Debug, thiserror::Error)]
#[error("interrupted (Ctrl-C): stopped before writing anything; the output directory is unchanged")]
pub struct Interrupted;

/// Whether Ctrl-C has been pressed since [`catch`].
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// [`Interrupted`] when Ctrl-C has been pressed.
///
/// # Errors
/// [`Interrupted`].
pub fn check() -> Result<(), Interrupted> {
    if requested() {
        Err(Interrupted)
    } else {
        Ok(())
    }
}

#[cfg(unix)]
extern "C" fn on_sigint(_: libc::c_int) {
    // Only async-signal-safe operations here: an atomic swap, and `_exit` on the second press.
    if REQUESTED.swap(true, Ordering::SeqCst) {
        // SAFETY: `_exit` is async-signal-safe and ends the process without running anything.
        unsafe { libc::_exit(i32::from(EXIT_INTERRUPTED)) }
    }
}

/// From now on Ctrl-C asks for a stop instead of killing the process (module documentation).
pub fn catch() {
    #[cfg(unix)]
    // SAFETY: the handler only touches an atomic and calls `_exit`, both async-signal-safe.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}
