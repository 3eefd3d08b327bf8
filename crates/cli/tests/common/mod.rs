//! Helpers shared by the command-line tests.
#![allow(dead_code)] // Each test binary uses a different subset.

use nalgebra::DMatrix;
use orthomask_formats::csv::{Precision, parse_table, write_table};
use orthomask_formats::manifest::Manifest;
use serde_json::Value;
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

/// Run the built `orthomask` binary.
pub fn orthomask(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_orthomask"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// `orthomask pipeline --input INPUT --out-dir OUT EXTRA…`.
pub fn pipeline(input: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "pipeline",
        "--input",
        input.to_str().expect("a UTF-8 path"),
        "--out-dir",
        out.to_str().expect("a UTF-8 path"),
    ];
    args.extend_from_slice(extra);
    orthomask(&args)
}

/// The JSON a successful command printed on standard output. No NaN or Infinity can sneak into
/// it: serde_json would refuse to parse them.
pub fn json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(&orthomask(args))).expect("valid JSON on stdout")
}

/// The `manifest.json` a run wrote in `out`, as JSON.
pub fn manifest_json(out: &Path) -> Value {
    let path = out.join("manifest.json");
    serde_json::from_str(&std::fs::read_to_string(&path).expect("a manifest")).expect("JSON")
}

/// The `manifest.json` a run wrote in `out`, parsed as the library reads it.
pub fn manifest(out: &Path) -> Manifest {
    let path = out.join("manifest.json");
    Manifest::parse(
        &std::fs::read_to_string(&path).expect("a manifest"),
        &path.display().to_string(),
    )
    .expect("a valid manifest")
}

/// Stdout as text, asserting success.
pub fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "command failed: {}\n{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The single error line of a failed command.
pub fn failure(output: &Output) -> String {
    assert!(!output.status.success(), "command unexpectedly succeeded");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.starts_with("warning: "))
        .collect();
    assert_eq!(errors.len(), 1, "expected one error line, got: {stderr:?}");
    assert!(errors[0].starts_with("error: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    errors[0].to_owned()
}

/// Read a CSV file written by the tool.
pub fn read(path: &Path) -> (Vec<String>, DMatrix<f64>) {
    let table = parse_table(
        &std::fs::read(path).expect("file exists"),
        &path.display().to_string(),
    )
    .expect("valid CSV");
    (table.headers().to_vec(), table.data().clone())
}

/// Write a CSV file for the tool.
pub fn write(path: &Path, headers: &[&str], data: &DMatrix<f64>) {
    let headers: Vec<String> = headers.iter().map(|h| (*h).to_owned()).collect();
    std::fs::write(path, write_table(&headers, data, Precision::RoundTrip))
        .expect("temp dir is writable");
}

/// The paper's Table 2.
pub fn table2() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/paper/leaps_table2.csv")
}

/// Deterministic pseudo-random data (SplitMix64), with a binary column first.
pub fn survey_data(n: usize, p: usize, seed: u64) -> DMatrix<f64> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    DMatrix::from_fn(n, p, |_, j| {
        if j == 0 {
            f64::from(next() < 0.4)
        } else {
            (next() * 100.0).round() / 4.0 - 5.0
        }
    })
}

/// How long a wait for an event may last: a guard that turns a hang into a failure, never a
/// timing check (no test asserts a duration).
pub const HANG_GUARD: Duration = Duration::from_secs(60);

/// Between two looks of [`poll`].
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// Ask `check` until it answers `Ok(value)`, for at most `within`: the value, or the last
/// `Err(seen)` — what was seen instead — once `within` has passed.
pub fn poll<T, S>(within: Duration, mut check: impl FnMut() -> Result<T, S>) -> Result<T, S> {
    let deadline = Instant::now() + within;
    loop {
        match check() {
            Ok(value) => return Ok(value),
            Err(seen) if Instant::now() >= deadline => return Err(seen),
            Err(_) => std::thread::sleep(POLL_INTERVAL),
        }
    }
}

/// [`poll`], failing the test with `what` it waited for and the last thing seen when the wait
/// outlasts `within` (only an upper bound that turns a hang into a failure).
pub fn wait_until<T, S: Display>(
    what: &str,
    within: Duration,
    check: impl FnMut() -> Result<T, S>,
) -> T {
    poll(within, check).unwrap_or_else(|seen| {
        panic!(
            "waited {} s for {what}; last seen: {seen}",
            within.as_secs()
        )
    })
}

/// The services' URLs (`collector`, `msp`, `rights`) once `orthomask serve all`, run as
/// `child` with `--data-dir dir`, has written `services.json`; fails if the child ends first.
pub fn services_json(dir: &Path, child: &mut Child) -> Value {
    let services = dir.join("services.json");
    wait_until("the services to start (services.json)", HANG_GUARD, || {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("serve all ended at start: {status}");
        }
        let text = std::fs::read_to_string(&services).map_err(|e| e.to_string())?;
        serde_json::from_str(&text).map_err(|e| format!("{text:?}: {e}"))
    })
}

/// SIGTERM to `child`, then its exit status (killed, and the test failed, if it has not ended
/// within [`HANG_GUARD`]).
#[cfg(unix)]
pub fn terminate(mut child: Child) -> std::process::ExitStatus {
    // SAFETY: `kill` with a child's own pid and SIGTERM only sends a signal.
    unsafe {
        libc::kill(
            libc::pid_t::try_from(child.id()).expect("a pid"),
            libc::SIGTERM,
        );
    }
    let ended = poll(HANG_GUARD, || child.try_wait().unwrap().ok_or(()));
    ended.unwrap_or_else(|()| {
        let _ = child.kill();
        panic!(
            "the child did not stop within {} s of SIGTERM",
            HANG_GUARD.as_secs()
        );
    })
}
