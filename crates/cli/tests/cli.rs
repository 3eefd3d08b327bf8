//! End-to-end behaviour of the `orthomask` binary on real files.

mod common;

use common::{failure, manifest, ok, orthomask, pipeline, read, survey_data, table2, write};
use orthomask_core::tolerance::{
    HAND_COMPUTED, ORTHOGONALITY, PRESERVED_STATISTICS, VISIBLY_MASKED, printed_precision,
};
use orthomask_dp::tolerance::SCIPY_GAUSSIAN_EPSILON;
use orthomask_formats::manifest::Manifest;
use std::path::Path;

fn relative_gram_error(raw: &nalgebra::DMatrix<f64>, released: &nalgebra::DMatrix<f64>) -> f64 {
    let gram = raw.tr_mul(raw);
    (released.tr_mul(released) - &gram).amax() / gram.amax()
}

fn relative_mean_error(raw: &nalgebra::DMatrix<f64>, released: &nalgebra::DMatrix<f64>) -> f64 {
    let scale = raw.amax();
    (raw.row_sum() - released.row_sum()).amax() / raw.nrows() as f64 / scale
}

/// Table 3 of seed 003 = Table 2 · B₁ with B₁ = rand(9, 9) after rng(535), to every printed decimal.
#[test]
fn mask_right_reproduces_table_3() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("xb.csv");
    let output = orthomask(&[
        "mask",
        "right",
        "--input",
        table2().to_str().unwrap(),
        "--key",
        "535",
        "--rng",
        "matlab",
        "--kind",
        "uniform-entries",
        "--out",
        out.to_str().unwrap(),
    ]);
    ok(&output);
    assert!(String::from_utf8_lossy(&output.stderr).contains("teaching key"));
    let (headers, xb) = read(&out);
    let (expected_headers, expected) =
        read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/paper/leaps_table3_xb1.csv"));
    assert_eq!(headers, expected_headers);
    for i in 0..20 {
        for j in 0..9 {
            assert!(
                (xb[(i, j)] - expected[(i, j)]).abs() <= printed_precision(2),
                "row {} col {}",
                i + 1,
                j + 1
            );
        }
    }
}

#[test]
fn mask_right_round_trips_with_hex_keys_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("x.csv");
    write(&input, &["a", "b", "c"], &survey_data(6, 3, 1));
    let out = dir.path().join("xb.csv");
    let key = "0f".repeat(32);
    let stdout = ok(&orthomask(&[
        "mask",
        "right",
        "--input",
        input.to_str().unwrap(),
        "--key",
        &key,
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]));
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["rows"], 6);
    assert_eq!(summary["teaching_key"], false);
    // An orthogonal mask keeps every row's length.
    let (_, raw) = read(&input);
    let (_, xb) = read(&out);
    for i in 0..6 {
        assert!(
            (raw.row(i).norm() - xb.row(i).norm()).abs()
                < ORTHOGONALITY * raw.row(i).norm().max(1.0)
        );
    }
}

/// The default protocol on random data of several shapes: the release has the raw XᵀX and means
/// to 1e-10 relative, and every released entry of a non-constant column differs from the raw one.
#[test]
fn pipeline_modified_preserves_statistics_on_several_shapes() {
    for (n, p, cohort) in [(25, 3, None), (60, 5, Some(20)), (41, 1, Some(15))] {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("raw.csv");
        let names: Vec<String> = (0..p).map(|j| format!("v{j}")).collect();
        let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let raw = survey_data(n, p, n as u64);
        write(&input, &name_refs, &raw);
        let out = dir.path().join("out");
        let mut args = vec!["--json"];
        let cohort_text = cohort.map(|m: usize| m.to_string());
        if let Some(m) = &cohort_text {
            // Cohort runs also write the exchanged matrices; the default writes only the release.
            args.extend(["--cohort-size", m.as_str(), "--write-exchanges"]);
        }
        let manifest: Manifest = serde_json::from_str(&ok(&pipeline(&input, &out, &args))).unwrap();
        let (headers, release) = read(&out.join("release.csv"));
        let mut expected_headers = names.clone();
        expected_headers.push("QA".into());
        assert_eq!(headers, expected_headers);
        let raw_qa = raw.clone().insert_column(p, 888.0);
        assert!(relative_gram_error(&raw_qa, &release) < PRESERVED_STATISTICS);
        assert!(relative_mean_error(&raw_qa, &release) < PRESERVED_STATISTICS);
        for j in 0..p {
            for i in 0..n {
                assert!(
                    (release[(i, j)] - raw[(i, j)]).abs() > VISIBLY_MASKED * raw.amax(),
                    "entry ({i}, {j}) unchanged"
                );
            }
        }
        assert_eq!(manifest.n, n);
        assert!(manifest.qa.as_ref().unwrap().passed);
        assert!(manifest.condition_3_7_margin.unwrap() > 1.0);
        assert!(manifest.appendix_c.as_ref().unwrap().failure_probability <= 1e-6);
        assert_eq!(manifest.cohorts.sizes.iter().sum::<usize>(), n);
        if cohort.is_some() {
            let (_, uploads) = read(&out.join("upload.csv"));
            assert_eq!(uploads.ncols(), p + 1 + manifest.p2);
            assert!(out.join("msp_to_collector.csv").exists());
        } else {
            let mut written: Vec<String> = std::fs::read_dir(&out)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            written.sort();
            assert_eq!(
                written,
                ["datapackage.json", "manifest.json", "release.csv"]
            );
            // The package names every released column, in order (issue 29 §2; what else it
            // says is checked by scripts/check_datapackage.py with frictionless, pandas and R).
            let package = orthomask_survey::datapackage::DataPackage::parse(
                &std::fs::read_to_string(out.join("datapackage.json")).unwrap(),
                "datapackage.json",
            )
            .unwrap();
            let fields: Vec<&str> = package.resources[0]
                .schema
                .as_ref()
                .unwrap()
                .fields
                .iter()
                .map(|f| f.name.as_str())
                .collect();
            assert_eq!(fields, manifest.columns);
        }
    }
}

#[test]
fn pipeline_refuses_unsafe_designs_and_teaching_mode_runs_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let first = ["--method", "first", "--teaching-key", "535"];
    let error = failure(&pipeline(&table2(), &out, &first));
    assert!(
        error.contains("p = 9") && error.contains("Appendix A"),
        "{error}"
    );
    // Scaled to [−1, 1], Table 2's answers need σ ≳ 0.7 for cohorts of 20 (x_max = 1).
    let low_sigma = ["--sigma", "0.1"];
    assert!(failure(&pipeline(&table2(), &out, &low_sigma)).contains("below the Appendix C bound"));
    let mut teaching = first.to_vec();
    teaching.extend(["--unsafe-teaching", "--rng", "matlab", "--write-exchanges"]);
    let output = pipeline(&table2(), &out, &teaching);
    ok(&output);
    assert!(String::from_utf8_lossy(&output.stderr).contains("unsafe design"));
    // The upload is Table 3 (the MATLAB generator reproduces B₁ from key 535).
    let (_, uploads) = read(&out.join("upload.csv"));
    let (_, table3) =
        read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/paper/leaps_table3_xb1.csv"));
    assert!((uploads - table3).amax() <= printed_precision(2));
    let manifest = manifest(&out);
    assert!(
        manifest
            .warnings
            .iter()
            .any(|w| w.contains("unsafe design"))
    );
}

/// `keygen` writes a key file its owner alone can read, refuses to replace one, and replaces
/// it with `--force` (new keys, still private).
#[test]
fn keygen_writes_a_private_file_and_replaces_it_only_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("keys").join("party.json");
    let path = keys.to_str().unwrap();
    ok(&orthomask(&["keygen", "--out", path]));
    let first = std::fs::read_to_string(&keys).unwrap();
    let refused = failure(&orthomask(&["keygen", "--out", path]));
    assert!(
        refused.contains("already exists; pass --force"),
        "{refused}"
    );
    assert_eq!(std::fs::read_to_string(&keys).unwrap(), first);
    ok(&orthomask(&["keygen", "--out", path, "--force"]));
    assert_ne!(std::fs::read_to_string(&keys).unwrap(), first);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&keys).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{mode:o}");
    }
    let names: Vec<_> = std::fs::read_dir(keys.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["party.json"], "no temporary file is left");
}

#[test]
fn pipeline_is_reproducible_from_a_key_file() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("keys.json");
    ok(&orthomask(&["keygen", "--out", keys.to_str().unwrap()]));
    assert!(
        failure(&orthomask(&["keygen", "--out", keys.to_str().unwrap()]))
            .contains("already exists")
    );
    let run = |name: &str| {
        let out = dir.path().join(name);
        ok(&pipeline(
            &table2(),
            &out,
            &["--key-file", keys.to_str().unwrap()],
        ));
        std::fs::read_to_string(out.join("release.csv")).unwrap()
    };
    assert_eq!(run("a"), run("b"));
}

#[test]
fn pipeline_second_method_keeps_response_and_treatment() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let output = pipeline(
        &table2(),
        &out,
        &[
            "--method",
            "second",
            "--keep",
            "Response,Group",
            "--teaching-key",
            "535",
            "--combined",
            "--write-exchanges",
        ],
    );
    ok(&output);
    assert!(String::from_utf8_lossy(&output.stderr).contains("disclosure warning"));
    let (headers, release) = read(&out.join("release.csv"));
    let (_, raw) = read(&table2());
    assert_eq!(headers[..2], ["Response", "Group"]);
    assert_eq!(release.columns(0, 2), raw.columns(0, 2));
    assert!((release.column(3) - raw.column(3)).amax() > 1.0);
    let (_, orthogonal) = read(&out.join("release_orthogonal.csv"));
    let raw8 = raw.columns(0, 8).into_owned();
    assert!(relative_gram_error(&raw8, &orthogonal) < PRESERVED_STATISTICS);
    let (upload_headers, uploads) = read(&out.join("upload.csv"));
    assert_eq!(
        upload_headers[..4],
        ["participant", "row", "Response", "Group"]
    );
    assert_eq!(uploads.nrows(), 20 * 8);
    assert!(failure(&pipeline(&table2(), &out, &["--method", "second"])).contains("--keep"));
}

#[test]
fn pipeline_collusion_resistant_extension() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    ok(&pipeline(
        &table2(),
        &out,
        &[
            "--method",
            "collusion",
            "--right-providers",
            "3",
            "--left-providers",
            "2",
            "--teaching-key",
            "7",
            "--write-exchanges",
        ],
    ));
    let (_, raw) = read(&table2());
    let (_, release) = read(&out.join("release.csv"));
    assert!(relative_gram_error(&raw, &release) < PRESERVED_STATISTICS);
    let (headers, shares) = read(&out.join("upload.csv"));
    assert_eq!(headers[..2], ["provider", "participant"]);
    assert_eq!(shares.nrows(), 3 * 20);
    // The manifest states what one of the 3 services sees (issue 11 §4): the devices scaled the
    // 8 answers to [−1, 1] and τ = 100, so one share is the answers/3 plus N(0, τ²·2/3): a
    // Gaussian mechanism of sensitivity ‖(2, …, 2)‖/3 = 2√8/3 and σ = 100·√(2/3). Its ε at
    // δ = 10⁻⁶ from SciPy (brentq on the exact profile Φ(Δ/2σ − εσ/Δ) − e^ε·Φ(−Δ/2σ − εσ/Δ),
    // norm.cdf) is 0.08279476185903287; the signal-to-noise ratio (1/3)/σ = 0.004082482904638631.
    let manifest = manifest(&out);
    let view = manifest.share_view.clone().unwrap();
    assert_eq!((view.services, manifest.p1), (3, 9));
    assert!(
        (view.epsilon - 0.082_794_761_859_032_87).abs() < SCIPY_GAUSSIAN_EPSILON * view.epsilon
    );
    assert!((view.signal_to_noise - 0.004_082_482_904_638_631).abs() < HAND_COMPUTED);
    assert_eq!(view.delta, 1e-6);
}

#[test]
fn partial_masking_keeps_named_columns() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    ok(&pipeline(
        &table2(),
        &out,
        &[
            "--method",
            "first",
            "--keep",
            "Group",
            "--noise-cols",
            "30",
            "--teaching-key",
            "3",
        ],
    ));
    let (_, raw) = read(&table2());
    let (_, release) = read(&out.join("release.csv"));
    assert!((release.column(1) - raw.column(1)).amax() < VISIBLY_MASKED);
    assert!((release.column(5) - raw.column(5)).amax() > 0.01);
}

/// Issue 21 §3: the manifest's obfuscation statement names what the masks leave visible, and
/// the release shows exactly that: the kept column row by row, and the column sums.
#[test]
fn the_obfuscation_statement_names_what_the_release_shows() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    ok(&pipeline(
        &table2(),
        &out,
        &["--keep", "Group", "--teaching-key", "5"],
    ));
    let manifest = manifest(&out);
    let o = manifest
        .obfuscation
        .expect("the modified method states its guarantee");
    assert!(o.statement.contains("Stab(F)·X₁"), "{}", o.statement);
    assert!(o.fixed.iter().any(|f| f == "Group"), "{:?}", o.fixed);
    assert!(o.fixed.iter().any(|f| f.starts_with("QA")), "{:?}", o.fixed);
    let reveals = o.reveals.join(" | ");
    assert!(reveals.contains("(Group) row by row"), "{reveals}");
    assert!(reveals.contains("X_keepᵀX_m"), "{reveals}");
    let (headers, release) = read(&out.join("release.csv"));
    let (raw_headers, raw) = read(&table2());
    for (j, name) in raw_headers.iter().enumerate() {
        let k = headers.iter().position(|h| h == name).unwrap();
        let (released, original) = (release.column(k), raw.column(j));
        let scale = original.amax();
        let sums_differ = (released.sum() - original.sum()).abs() / (raw.nrows() as f64 * scale);
        assert!(
            sums_differ < PRESERVED_STATISTICS,
            "{name}: sums differ by {sums_differ:e}"
        );
        let rows_differ = (released - original).amax() / scale;
        // The masks fix the kept column and the QA column (a multiple of 1ₙ).
        if name == "Group" || name == "QA" {
            assert!(
                rows_differ < PRESERVED_STATISTICS,
                "{name} moved by {rows_differ:e}"
            );
        } else {
            assert!(rows_differ > VISIBLY_MASKED, "{name} was not masked");
        }
    }
}

#[test]
fn decimals_round_the_release_and_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    ok(&pipeline(&table2(), &out, &["--decimals", "2"]));
    let text = std::fs::read_to_string(out.join("release.csv")).unwrap();
    let second_line = text.lines().nth(1).unwrap();
    assert!(
        second_line
            .split(',')
            .all(|cell| cell.split('.').nth(1).is_some_and(|d| d.len() == 2)),
        "{second_line}"
    );
    let manifest = manifest(&out);
    assert_eq!(manifest.decimals, Some(2));
}

#[test]
fn appendix_a_attack_recovers_on_unsafe_and_nothing_on_safe() {
    let dir = tempfile::tempdir().unwrap();
    // A design with one binary column and continuous answers, masked with p < n.
    let raw = survey_data(30, 4, 9);
    let input = dir.path().join("raw.csv");
    write(&input, &["smoker", "a", "b", "c"], &raw);
    let unsafe_out = dir.path().join("unsafe");
    ok(&pipeline(
        &input,
        &unsafe_out,
        &[
            "--method",
            "first",
            "--no-qa",
            "--unsafe-teaching",
            "--teaching-key",
            "11",
            "--write-exchanges",
        ],
    ));
    let attack = |dir: &Path| -> serde_json::Value {
        let stdout = ok(&orthomask(&[
            "attack",
            "appendix-a",
            "--input",
            dir.join("upload.csv").to_str().unwrap(),
            "--binary-col",
            "smoker",
            "--truth",
            input.to_str().unwrap(),
            "--json",
        ]));
        serde_json::from_str(&stdout).unwrap()
    };
    let unsafe_result = attack(&unsafe_out);
    assert_eq!(unsafe_result["truth_recovered"], true, "{unsafe_result}");
    let safe_out = dir.path().join("safe");
    ok(&pipeline(
        &input,
        &safe_out,
        &["--teaching-key", "11", "--write-exchanges"],
    ));
    let safe_result = attack(&safe_out);
    assert_eq!(safe_result["all_binary_vectors_consistent"], true);
    assert_eq!(safe_result["recovered"], serde_json::Value::Null);
}
