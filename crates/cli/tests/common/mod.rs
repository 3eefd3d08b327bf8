//! Helpers shared by the command-line tests.
#![allow(dead_code)] // Each test binary uses a different subset.

use nalgebra::DMatrix;
use orthomask_formats::csv::{Precision, parse_table, write_table};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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
