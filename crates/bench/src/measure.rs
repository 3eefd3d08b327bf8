//! Whole processes measured from outside: wall time from spawn to exit, and the exact peak
//! resident set the kernel reports when the process is reaped with `wait4`.
//!
//! # Why a launcher
//! Linux keeps a process's peak RSS (`ru_maxrss`) in its signal structure, and `exec` folds the
//! high-water mark of the address space it replaces into it. A child started by `fork` or `vfork`
//! and `exec` (what `std::process::Command` does) replaces its parent's address space (a copy,
//! or the very same one with `vfork`), so its `ru_maxrss` is at least the parent's resident set at
//! the spawn: on this machine a `/bin/true` spawned by a 400 MB process reports 400 MB, by
//! `posix_spawn` and by `fork` alike. The benchmark's parent holds little, but not nothing, so it
//! does not spawn a measured process itself: it starts a copy of itself,
//! `orthomask-bench --measure`, whose address space is fresh and a few megabytes, and that
//! launcher spawns the process (standard output discarded or passed on, standard error passed
//! on), reaps it with `wait4` and prints one `MEASURED` line. The launcher's few megabytes are a
//! floor of the figure, not an addition to it (a peak is a maximum).

use anyhow::{Context, Result, bail};
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Instant;

/// A process that ran to its end, as measured by its launcher.
#[derive(Clone, Debug)]
pub struct Exited {
    /// Wall time from spawn to exit, seconds.
    pub seconds: f64,
    /// Peak resident set (`ru_maxrss` from `wait4`), bytes.
    pub rss_bytes: f64,
    /// How it ended: `0` for success, the exit code, or minus the signal that ended it.
    pub code: i32,
    /// Its standard output (empty when discarded).
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

impl Exited {
    /// Whether it exited with status 0.
    pub fn success(&self) -> bool {
        self.code == 0
    }
}

/// `ru_maxrss` in bytes: Linux reports kibibytes.
pub fn maxrss_bytes(ru_maxrss: libc::c_long) -> f64 {
    ru_maxrss as f64 * 1024.0
}

/// The one number that says how a process ended (see [`Exited::code`]).
fn code_of(status: ExitStatus) -> i32 {
    status
        .code()
        .unwrap_or_else(|| -status.signal().unwrap_or(1))
}

/// Reap child `pid` with `wait4`: its exit status and resource usage.
fn reap(pid: libc::pid_t) -> std::io::Result<(ExitStatus, libc::rusage)> {
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is a plain C struct of integers, for which all-zero bytes are a value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is a child of this process that nothing else reaps, and both pointers
        // are to live locals of the types `wait4` writes.
        let reaped = unsafe { libc::wait4(pid, &raw mut status, 0, &raw mut usage) };
        if reaped == pid {
            return Ok((ExitStatus::from_raw(status), usage));
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// What the launcher measures: spawn `program args` (standard input closed, standard output
/// discarded or inherited, standard error inherited), reap it with `wait4`.
///
/// Returns wall seconds, peak RSS in bytes and the exit code (see [`Exited::code`]).
///
/// # Errors
/// When the program cannot be started or reaped.
pub fn spawn_and_reap(
    program: &OsString,
    args: &[OsString],
    stdout_null: bool,
) -> Result<(f64, f64, i32)> {
    let mut command = Command::new(program);
    command.args(args).stdin(Stdio::null());
    if stdout_null {
        command.stdout(Stdio::null());
    }
    let start = Instant::now();
    let child = command
        .spawn()
        .with_context(|| format!("starting {}", program.to_string_lossy()))?;
    let pid = libc::pid_t::try_from(child.id()).context("a process id beyond pid_t")?;
    // Reaped here, not by `Child::wait` (which discards the resource usage); dropping `child`
    // afterwards neither waits nor kills.
    let (status, usage) = reap(pid).context("wait4")?;
    let seconds = start.elapsed().as_secs_f64();
    drop(child);
    Ok((seconds, maxrss_bytes(usage.ru_maxrss), code_of(status)))
}

/// The launcher's line.
fn measured_line(seconds: f64, rss_bytes: f64, code: i32) -> String {
    format!("MEASURED seconds={seconds:e} rss_bytes={rss_bytes:e} code={code}")
}

/// Read the launcher's line (the last `MEASURED` line of its output).
///
/// # Errors
/// When there is none or it is malformed.
pub fn parse_measured(stdout: &str) -> Result<(f64, f64, i32)> {
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with("MEASURED "))
        .context("the launcher printed no MEASURED line")?;
    let field = |name: &str| {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
            .with_context(|| format!("MEASURED line lacks {name}"))
    };
    Ok((
        field("seconds")?.parse().context("MEASURED seconds")?,
        field("rss_bytes")?.parse().context("MEASURED rss_bytes")?,
        field("code")?.parse().context("MEASURED code")?,
    ))
}

/// `orthomask-bench --measure [--stdout-null] -- PROGRAM ARG…`: run one process, print its
/// `MEASURED` line last on standard output, and exit with 0 (the process's own outcome is in
/// the line).
///
/// # Errors
/// A malformed command line, or a program that cannot be started.
pub fn launcher(args: &[OsString]) -> Result<()> {
    let split = args
        .iter()
        .position(|a| a == "--")
        .context("--measure needs `-- PROGRAM ARG…`")?;
    let (options, rest) = (&args[..split], &args[split + 1..]);
    let stdout_null = options.iter().any(|a| a == "--stdout-null");
    if let Some(other) = options.iter().find(|a| *a != "--stdout-null") {
        bail!("--measure: unknown option {}", other.to_string_lossy());
    }
    let (program, program_args) = rest.split_first().context("--measure: no program")?;
    let (seconds, rss, code) = spawn_and_reap(program, program_args, stdout_null)?;
    println!("{}", measured_line(seconds, rss, code));
    Ok(())
}

/// Read a pipe to its end on a thread (so that a chatty child never blocks on a full pipe).
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Run `command` (its program, arguments and environment; nothing else of it is used) as a
/// whole process through the launcher, and return what was measured with its output.
///
/// # Errors
/// When the launcher cannot be started or reports nothing. A process that fails is returned
/// (see [`Exited::success`]).
pub fn run(command: &Command, stdout_null: bool) -> Result<Exited> {
    let mut launcher = Command::new(std::env::current_exe()?);
    launcher.arg("--measure");
    if stdout_null {
        launcher.arg("--stdout-null");
    }
    launcher
        .arg("--")
        .arg(command.get_program())
        .args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => launcher.env(key, value),
            None => launcher.env_remove(key),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        launcher.current_dir(dir);
    }
    let mut child = launcher
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting the measuring launcher")?;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = child.wait().context("waiting for the launcher")?;
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    if !status.success() {
        bail!(
            "the measuring launcher failed ({status}): {}",
            stderr.trim()
        );
    }
    let (seconds, rss_bytes, code) = parse_measured(&stdout)?;
    // The launcher's line is the last line of the shared output; the process's own is before.
    let own = stdout
        .rfind("MEASURED ")
        .map_or(stdout.as_str(), |at| &stdout[..at]);
    Ok(Exited {
        seconds,
        rss_bytes,
        code,
        stdout: own.to_string(),
        stderr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_lines_round_trip() {
        let line = measured_line(1.5, 2.0e9, -9);
        assert_eq!(
            parse_measured(&format!("RESULT x=1\n{line}\n")).unwrap(),
            (1.5, 2.0e9, -9)
        );
        assert!(parse_measured("RESULT x=1\n").is_err());
        assert!(parse_measured("MEASURED seconds=1 rss_bytes=2\n").is_err());
        assert!(parse_measured("MEASURED seconds=x rss_bytes=2 code=0\n").is_err());
    }

    #[test]
    fn maxrss_is_kibibytes() {
        assert_eq!(maxrss_bytes(1), 1024.0);
        assert_eq!(maxrss_bytes(2_000_000), 2_048_000_000.0);
    }

    /// `wait4` sees a child's own peak: `dd` with a 64 MiB block touches 64 MiB (this test
    /// process, the parent here, is far smaller), `true` next to nothing; exit codes and
    /// signals come back as [`Exited::code`] says.
    #[test]
    fn wait4_reports_the_childs_peak_and_outcome() {
        let (_, dd_rss, code) = spawn_and_reap(
            &"dd".into(),
            &[
                "if=/dev/zero",
                "of=/dev/null",
                "bs=64M",
                "count=1",
                "status=none",
            ]
            .map(OsString::from),
            true,
        )
        .unwrap();
        assert_eq!(code, 0);
        assert!(dd_rss >= 64.0 * 1024.0 * 1024.0, "{dd_rss}");
        let (seconds, true_rss, code) = spawn_and_reap(&"true".into(), &[], true).unwrap();
        assert_eq!(code, 0);
        assert!(true_rss > 0.0 && true_rss < dd_rss, "{true_rss}");
        assert!(seconds > 0.0 && seconds < 10.0);
        let (_, _, code) =
            spawn_and_reap(&"sh".into(), &["-c", "exit 3"].map(OsString::from), true).unwrap();
        assert_eq!(code, 3);
        let (_, _, code) = spawn_and_reap(
            &"sh".into(),
            &["-c", "kill -9 $$"].map(OsString::from),
            true,
        )
        .unwrap();
        assert_eq!(code, -9);
        assert!(spawn_and_reap(&"/nonexistent/program".into(), &[], true).is_err());
    }
}
