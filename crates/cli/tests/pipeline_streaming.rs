//! Issue 23: `orthomask pipeline` on surveys of any size — cohorts chosen by the plan by default,
//! a monolithic run only when asked and only when it fits, the same release on one thread or
//! two, a progress bar on a terminal only, and Ctrl-C that leaves nothing half-written. The
//! checks are of structure; how fast and how lean the pipeline runs is measured by
//! `scripts/bench.sh --only 6.`, never asserted here.

mod common;

use common::{failure, manifest_json as manifest, ok, pipeline, read, survey_data, write};
use orthomask_core::tolerance::PRESERVED_STATISTICS;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

/// Relative change of `XᵀX` between the raw answers (QA column of 888 appended) and a release.
fn gram_error(raw: &nalgebra::DMatrix<f64>, release: &nalgebra::DMatrix<f64>) -> f64 {
    let raw = raw.clone().insert_column(raw.ncols(), 888.0);
    let gram = raw.tr_mul(&raw);
    (release.tr_mul(release) - &gram).amax() / gram.amax()
}

fn answer_names(count: usize) -> Vec<String> {
    (0..count).map(|j| format!("q{j}")).collect()
}

/// Write `n × answers` survey data as `raw.csv` in `dir`.
fn raw_csv(dir: &Path, n: usize, answers: usize, seed: u64) -> nalgebra::DMatrix<f64> {
    let data = survey_data(n, answers, seed);
    let names = answer_names(answers);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    write(&dir.join("raw.csv"), &names, &data);
    data
}

/// §1: with default flags the plan chooses cohorts, the CLI says so, the manifest records them,
/// the release keeps the policy's accuracy target and `XᵀX`; `--cohort-size all` is the papers'
/// single cohort.
#[test]
fn default_flags_choose_cohorts_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let raw = raw_csv(dir.path(), 600, 10, 5);
    let input = dir.path().join("raw.csv");
    let out = dir.path().join("run");
    let stdout = ok(&pipeline(&input, &out, &["--teaching-key", "40"]));
    let m = manifest(&out);
    let size = m["cohorts"]["size"].as_u64().expect("a cohort size") as usize;
    assert!(
        stdout.contains(&format!("cohorts of at most {size} records")),
        "{stdout}"
    );
    assert!(stdout.contains("the plan's choice"), "{stdout}");
    assert!((11..600).contains(&size), "{size}");
    let sizes: Vec<u64> = m["cohorts"]["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(sizes.iter().sum::<u64>(), 600);
    assert!(
        sizes
            .iter()
            .all(|&s| s as usize <= size && s as usize + 1 >= size)
    );
    // The rule's promise: within the policy's two digits (orthomask_survey::policy).
    assert!(
        m["unmasking_error"]["expected_digits_lost"]
            .as_f64()
            .unwrap()
            <= 2.0
    );
    let (_, release) = read(&out.join("release.csv"));
    assert!(gram_error(&raw, &release) < PRESERVED_STATISTICS);

    let all = dir.path().join("all");
    let stdout = ok(&pipeline(
        &input,
        &all,
        &[
            "--teaching-key",
            "40",
            "--cohort-size",
            "all",
            "--no-margin",
        ],
    ));
    assert!(!stdout.contains("the plan's choice"));
    let m = manifest(&all);
    assert_eq!(
        (m["cohorts"]["size"].clone(), m["cohorts"]["sizes"].clone()),
        (Value::Null, serde_json::json!([600]))
    );

    // clap's own usage error: the reason, then where to read more.
    let bad = pipeline(&input, &all, &["--cohort-size", "most"]);
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success());
    assert!(
        stderr.lines().next().unwrap().contains(
            "invalid value 'most' for '--cohort-size <COHORT_SIZE>': expected a positive number of participants or `all`"
        ),
        "{stderr}"
    );
}

/// §1: a monolithic run that cannot fit in memory is refused before any work, in one line that
/// names the way out, and writes nothing (200 000 records: p > n makes it terabytes).
#[test]
fn a_monolithic_run_that_cannot_fit_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("x\n");
    for i in 0..200_000 {
        text.push_str(&format!("{}\n", i % 5));
    }
    std::fs::write(dir.path().join("big.csv"), text).unwrap();
    let out = dir.path().join("run");
    let line = failure(&pipeline(
        &dir.path().join("big.csv"),
        &out,
        &["--cohort-size", "all", "--teaching-key", "1"],
    ));
    assert!(
        line.contains("one cohort of 200000 records") && line.contains("would need about"),
        "{line}"
    );
    assert!(line.contains("--cohort-size"), "{line}");
    assert!(!out.exists(), "nothing is written");
}

/// §2: cohorts run in parallel write the bits a one-thread run writes for the same keys.
#[test]
fn one_thread_and_two_write_the_same_release() {
    let dir = tempfile::tempdir().unwrap();
    raw_csv(dir.path(), 700, 4, 9);
    let input = dir.path().join("raw.csv");
    let run = |threads: &str| {
        let out = dir.path().join(format!("run-{threads}"));
        ok(&pipeline(
            &input,
            &out,
            &[
                "--teaching-key",
                "12",
                "--threads",
                threads,
                "--write-exchanges",
            ],
        ));
        out
    };
    let (one, two) = (run("1"), run("2"));
    assert!(manifest(&one)["cohorts"]["sizes"].as_array().unwrap().len() > 2);
    for file in ["release.csv", "upload.csv", "msp_to_collector.csv"] {
        assert_eq!(
            std::fs::read(one.join(file)).unwrap(),
            std::fs::read(two.join(file)).unwrap(),
            "{file} differs"
        );
    }
}

/// §3: the progress bar is drawn on a terminal (a pseudo-terminal from util-linux's `script`),
/// never into a pipe, and not with `--quiet`.
#[test]
fn the_progress_bar_is_for_terminals_only() {
    let dir = tempfile::tempdir().unwrap();
    raw_csv(dir.path(), 400, 4, 3);
    let input = dir.path().join("raw.csv");
    let command = |out: &str, quiet: bool| {
        format!(
            "{} pipeline --input {} --out-dir {} --teaching-key 3{}",
            env!("CARGO_BIN_EXE_orthomask"),
            input.display(),
            dir.path().join(out).display(),
            if quiet { " --quiet" } else { "" }
        )
    };
    let piped = pipeline(&input, &dir.path().join("piped"), &["--teaching-key", "3"]);
    ok(&piped);
    assert!(!String::from_utf8_lossy(&piped.stderr).contains("masking cohort"));
    let on_terminal = |out: &str, quiet: bool| {
        let output = Command::new("script")
            .args(["-qefc", &command(out, quiet), "/dev/null"])
            .output()
            .expect("util-linux's script runs");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let shown = on_terminal("tty", false);
    assert!(shown.contains("masking cohort"), "{shown}");
    assert!(shown.contains("records"), "{shown}");
    let quiet = on_terminal("quiet", true);
    assert!(!quiet.contains("masking cohort"), "{quiet}");
    assert!(
        !quiet.contains("wrote"),
        "--quiet prints no summary: {quiet}"
    );
    assert!(dir.path().join("quiet/release.csv").exists());
}

/// §3: Ctrl-C stops the run between cohorts: exit status 130, one line, and the output
/// directory exactly as it was — the old release untouched, no temporary file left. The signal
/// is sent as soon as the second pass starts (the scaling warning is its first output), long
/// before 50 000 records are masked.
#[cfg(unix)]
#[test]
fn ctrl_c_leaves_the_output_directory_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    raw_csv(dir.path(), 50_000, 20, 4);
    let out = dir.path().join("run");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("release.csv"), "old\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_orthomask"))
        .args(["pipeline", "--input"])
        .arg(dir.path().join("raw.csv"))
        .arg("--out-dir")
        .arg(&out)
        .arg("--write-exchanges")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    assert!(first.contains("taken from the data"), "{first}");
    // SAFETY: sending SIGINT to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let mut rest = String::new();
    for line in stderr.lines() {
        rest.push_str(&line.unwrap());
        rest.push('\n');
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    assert_eq!(rest.lines().count(), 1, "{rest}");
    assert!(rest.starts_with("interrupted"), "{rest}");
    let left: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["release.csv"]);
    assert_eq!(
        std::fs::read_to_string(out.join("release.csv")).unwrap(),
        "old\n"
    );
}
