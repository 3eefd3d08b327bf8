//! Bad input gets one clean line on standard error naming the file, line and column — never a
//! panic, never a half-written release.

mod common;

use common::{failure, orthomask, pipeline};
use std::path::Path;

/// Write `contents` to a temporary file and run `pipeline` on it; return the error line.
fn pipeline_error(contents: &[u8]) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("survey.csv");
    std::fs::write(&input, contents).unwrap();
    let out = dir.path().join("out");
    let error = failure(&pipeline(&input, &out, &[]));
    assert!(
        !out.join("release.csv").exists(),
        "a release was written despite the error"
    );
    (error, input.display().to_string())
}

#[test]
fn csv_problems_are_reported_with_file_line_and_column() {
    let cases: &[(&[u8], &str)] = &[
        (b"a,b\n1,2\n3\n", ":3: row has 1 cells but the header has 2"),
        (
            b"a,b\n1,2\n3,four\n",
            ":3:2: expected a number, found \"four\"",
        ),
        (b"a,b\n1,NaN\n", ":2:2: \"NaN\" is not a finite number"),
        (b"a,b\n1,-inf\n", ":2:2: \"-inf\" is not a finite number"),
        (b"", ":1: the file is empty"),
        (b"a,b,a\n1,2,3\n", ":1:3: duplicate column name \"a\""),
        (b"a,b\n1,\n", ":2:2: empty cell"),
        (b"a,b\n", ":2: the file has a header but no data rows"),
        (b"a,b\n\x00\x01,\xfe\n", ":2:4: invalid UTF-8"),
    ];
    for (contents, expected) in cases {
        let (error, file) = pipeline_error(contents);
        assert!(error.starts_with(&format!("error: {file}")), "{error}");
        assert!(
            error.contains(expected),
            "expected {expected:?} in {error:?}"
        );
    }
}

#[test]
fn fifty_megabytes_of_junk() {
    let mut junk = Vec::with_capacity(50 << 20);
    let mut state: u32 = 12345;
    while junk.len() < 50 << 20 {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        junk.push((state >> 24) as u8);
    }
    let (error, file) = pipeline_error(&junk);
    assert!(error.starts_with(&format!("error: {file}:")), "{error}");
    assert!(error.len() < 250);
}

#[test]
fn non_constant_qa_column_is_refused() {
    let (error, file) = pipeline_error(b"x,QA\n1,888\n2,887\n3,888\n");
    assert!(
        error.contains(&format!("{file}:3:2")) && error.contains("QA column must be constant"),
        "{error}"
    );
}

#[test]
fn missing_files_and_bad_arguments() {
    let error = failure(&pipeline(
        Path::new("/nonexistent/x.csv"),
        Path::new("/tmp/never"),
        &[],
    ));
    assert!(error.contains("cannot read /nonexistent/x.csv"), "{error}");
    let error = failure(&orthomask(&[
        "mask",
        "right",
        "--input",
        "/nonexistent/x.csv",
        "--key",
        "zz",
        "--out",
        "/tmp/never.csv",
    ]));
    assert!(error.contains("/nonexistent/x.csv"), "{error}");
    // Usage errors come from the argument parser with its own exit status (2).
    let usage = orthomask(&["pipeline"]);
    assert_eq!(usage.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&usage.stderr).contains("panicked"));
}

#[test]
fn bad_keys_and_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("x.csv");
    std::fs::write(&input, "a,b\n1,2\n3,4\n").unwrap();
    let out = dir.path().join("o.csv");
    let error = failure(&orthomask(&[
        "mask",
        "right",
        "--input",
        input.to_str().unwrap(),
        "--key",
        "xyz",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(error.contains("64 hexadecimal"), "{error}");
    let keys = dir.path().join("keys.json");
    std::fs::write(&keys, "{\"collector\": 1}").unwrap();
    // `pipeline` with each bad flag: one line naming what is wrong.
    let cases: [(&[&str], &str); 5] = [
        (
            &["--key-file", keys.to_str().unwrap()],
            "keys.json: not a key file",
        ),
        (&["--delta", "1.5"], "delta"),
        (&["--x-max", "1"], "--x-max 1 is below"),
        (&["--keep", "zz"], "no answer column named \"zz\""),
        (&["--rng", "matlab"], "--teaching-key"),
    ];
    for (flags, expected) in cases {
        let error = failure(&pipeline(&input, dir.path(), flags));
        assert!(error.contains(expected), "{}: {error}", flags.join(" "));
    }
    let error = failure(&orthomask(&[
        "attack",
        "appendix-a",
        "--input",
        input.to_str().unwrap(),
        "--binary-col",
        "a",
        "--tolerance",
        "0.9",
    ]));
    assert!(error.contains("tolerance"), "{error}");
}

/// `pipeline --survey` labels the data package only when the input's columns are the
/// definition's, in order: otherwise one line naming both, and nothing written.
#[test]
fn a_survey_whose_columns_the_input_lacks_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("coded.csv");
    let mut rows = String::from("smoker,age\n");
    for i in 0..40 {
        rows.push_str(&format!("{},{}\n", i % 2, 20 + i));
    }
    std::fs::write(&input, rows).unwrap();
    let survey = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../www/surveys/leaps-demo.json");
    let out = dir.path().join("out");
    let error = failure(&pipeline(
        &input,
        &out,
        &["--teaching-key", "1", "--survey", survey.to_str().unwrap()],
    ));
    assert!(
        error.contains("--survey") && error.contains("response"),
        "{error}"
    );
    assert!(error.contains("smoker, age"), "{error}");
    assert!(!out.join("datapackage.json").exists());
}
