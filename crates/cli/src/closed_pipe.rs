//! What a write to a closed pipe does to the process (SIGPIPE's disposition).

/// The two answers the tool gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnClosedPipe {
    /// End the process quietly, as `orthomask … | head` should: the default action, which Rust
    /// replaces with "ignore" (a closed pipe would otherwise surface as a failed `println!`).
    End,
    /// Fail the write and carry on: the services, whose log drops and counts such lines.
    FailTheWrite,
}

/// Set what a write to a closed pipe does, for the whole process. Call it before any thread
/// but the main one exists.
pub fn on_closed_pipe(answer: OnClosedPipe) {
    #[cfg(unix)]
    // SAFETY: called before the process starts other threads (first thing in `main`, and in
    // `serve` before the runtime); `signal` only changes the disposition of one signal.
    unsafe {
        libc::signal(
            libc::SIGPIPE,
            match answer {
                OnClosedPipe::End => libc::SIG_DFL,
                OnClosedPipe::FailTheWrite => libc::SIG_IGN,
            },
        );
    }
    #[cfg(not(unix))]
    let _ = answer;
}
