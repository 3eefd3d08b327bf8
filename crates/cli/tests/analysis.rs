//! The analysis commands: identical results on raw data and on releases, the papers' tables, and
//! the JSON field names the issue fixes.

mod common;

use common::{failure, json, manifest_json, ok, orthomask, pipeline, read, table2, write};
use orthomask_core::tolerance::{CLEARLY_CHANGED, HAND_COMPUTED, PRESERVED_STATISTICS};
use orthomask_dp::tolerance::{SAME_FUNCTION, WITHIN_REQUESTED_EPSILON};
use orthomask_stats::tolerance::{
    SAME_SPAN_DEVIANCE, SAME_SPAN_LOGIT, SAME_TABLE_STATISTICS, relative_difference as relative,
};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn paper(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/paper")
        .join(name)
}

fn release_of(dir: &Path, extra: &[&str]) -> PathBuf {
    let out = dir.join("out");
    let mut args = vec!["--teaching-key", "11"];
    args.extend_from_slice(extra);
    ok(&pipeline(&table2(), &out, &args));
    out
}

/// Regression on a release equals regression on the raw data: coefficients, SEs, t, p, CIs, σ,
/// R², F — with the JSON field names.
#[test]
fn regress_is_identical_on_raw_and_released_data() {
    let dir = tempfile::tempdir().unwrap();
    let out = release_of(dir.path(), &[]);
    let regress = |input: &Path, intercept: bool| {
        let mut args = vec![
            "regress",
            "--input",
            input.to_str().unwrap(),
            "--y",
            "ADL",
            "--x",
            "Age,BBS,IH",
            "--json",
        ];
        if !intercept {
            args.push("--no-intercept");
        }
        json(&args)
    };
    for intercept in [true, false] {
        let raw = regress(&table2(), intercept);
        let rel = regress(&out.join("release.csv"), intercept);
        for field in [
            "r_squared",
            "adj_r_squared",
            "f_statistic",
            "f_p_value",
            "sigma",
        ] {
            let (a, b) = (raw[field].as_f64().unwrap(), rel[field].as_f64().unwrap());
            assert!(
                relative(a, b) < PRESERVED_STATISTICS * 100.0,
                "{field}: {a} vs {b}"
            );
        }
        assert_eq!(raw["df_resid"], rel["df_resid"]);
        assert_eq!(raw["n"], 20);
        let (rc, mc) = (
            raw["coefficients"].as_array().unwrap(),
            rel["coefficients"].as_array().unwrap(),
        );
        assert_eq!(rc.len(), if intercept { 4 } else { 3 });
        for (a, b) in rc.iter().zip(mc) {
            assert_eq!(a["name"], b["name"]);
            for field in ["estimate", "std_error", "t", "p", "ci_low", "ci_high"] {
                let (x, y) = (a[field].as_f64().unwrap(), b[field].as_f64().unwrap());
                assert!(
                    relative(x, y) < PRESERVED_STATISTICS * 1000.0,
                    "{} {field}: {x} vs {y}",
                    a["name"]
                );
            }
        }
    }
}

/// Seed 003: the published masked Table 5 gives Table 6 (Group × MIF: 6, 6 / 3, 5).
#[test]
fn contingency_on_table_5_gives_table_6() {
    let t5 = paper("leaps_table5_released.csv");
    let v = json(&[
        "contingency",
        "--input",
        t5.to_str().unwrap(),
        "--row",
        "Group",
        "--col",
        "MIF",
        "--json",
    ]);
    assert_eq!(v["table"], serde_json::json!([[6, 6], [3, 5]]));
    assert_eq!(v["n"], 20);
    let raw = json(&[
        "contingency",
        "--input",
        table2().to_str().unwrap(),
        "--row",
        "Group",
        "--col",
        "MIF",
        "--json",
    ]);
    assert_eq!(raw["table"], v["table"]);
    for field in ["chi_square", "p_value"] {
        assert!(
            relative(raw[field].as_f64().unwrap(), v[field].as_f64().unwrap())
                < SAME_TABLE_STATISTICS,
            "{field}"
        );
    }
    for ratio in ["odds_ratio", "relative_risk"] {
        assert!(
            relative(
                raw[ratio]["estimate"].as_f64().unwrap(),
                v[ratio]["estimate"].as_f64().unwrap()
            ) < SAME_TABLE_STATISTICS
        );
    }
}

/// Seed 003 §2.2: on a second-method release XB₁B₂ (response MIF and treatment Group kept), the
/// treatment coefficient and its SE equal those from the raw data when the model contains all the
/// masked covariates (then `span[1, t, Z·C] = span[1, t, Z]`).
#[test]
fn logit_treatment_effect_survives_the_second_method() {
    let dir = tempfile::tempdir().unwrap();
    let (headers, raw) = read(&table2());
    let pick: Vec<usize> = ["MIF", "Group", "Age", "BBS", "ADL"]
        .iter()
        .map(|n| headers.iter().position(|h| h == n).unwrap())
        .collect();
    let subset = dir.path().join("subset.csv");
    write(
        &subset,
        &["MIF", "Group", "Age", "BBS", "ADL"],
        &raw.select_columns(&pick),
    );
    let out = dir.path().join("out");
    ok(&pipeline(
        &subset,
        &out,
        &[
            "--teaching-key",
            "11",
            "--method",
            "second",
            "--keep",
            "MIF,Group",
        ],
    ));
    let fit = |input: &Path| {
        json(&[
            "logit",
            "--input",
            input.to_str().unwrap(),
            "--y",
            "MIF",
            "--x",
            "Group,Age,BBS,ADL",
            "--json",
        ])
    };
    let raw_fit = fit(&subset);
    let rel_fit = fit(&out.join("release.csv"));
    let coefficient = |v: &Value, name: &str| {
        v["coefficients"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap()
            .clone()
    };
    let (a, b) = (
        coefficient(&raw_fit, "Group"),
        coefficient(&rel_fit, "Group"),
    );
    for field in ["estimate", "std_error", "z", "p"] {
        assert!(
            relative(a[field].as_f64().unwrap(), b[field].as_f64().unwrap()) < SAME_SPAN_LOGIT,
            "{field}: {} vs {}",
            a[field],
            b[field]
        );
    }
    assert!(
        relative(
            raw_fit["deviance"].as_f64().unwrap(),
            rel_fit["deviance"].as_f64().unwrap()
        ) < SAME_SPAN_DEVIANCE
    );
    let age = |v: &Value| coefficient(v, "Age")["estimate"].as_f64().unwrap();
    assert!(
        relative(age(&raw_fit), age(&rel_fit)) > CLEARLY_CHANGED,
        "covariates are masked"
    );
}

/// Seed 004 Table 1, first row: ε = 0.1, δ = 0.01, p = 1, n = 100 → 23.3, 25.4, 6.9, ratio 4.
#[test]
fn dp_sigma_reproduces_a_row_of_table_1() {
    let v = json(&[
        "dp-sigma",
        "--epsilon",
        "0.1",
        "--delta",
        "0.01",
        "--n",
        "100",
        "--p",
        "1",
        "--json",
    ]);
    let round1 = |x: &Value| (x.as_f64().unwrap() * 10.0).round() / 10.0;
    assert_eq!(round1(&v["setting_a_necessary"]), 23.3);
    assert_eq!(round1(&v["setting_a_sufficient"]), 25.4);
    assert_eq!(round1(&v["setting_b_sufficient"]), 6.9);
    assert_eq!(v["ratio"].as_f64().unwrap().round(), 4.0);
    // Corollary 3.3 by hand: √ln(100) = 2.1460, so 21.460 (necessary) and 36.482 (sufficient).
    let root = (100f64).ln().sqrt();
    assert!(
        relative(
            v["setting_a_explicit_necessary"].as_f64().unwrap(),
            root / 0.1
        ) < HAND_COMPUTED
    );
    assert!(
        relative(
            v["setting_a_explicit_sufficient"].as_f64().unwrap(),
            17.0 * root
        ) < HAND_COMPUTED
    );
    assert!(
        failure(&orthomask(&[
            "dp-sigma",
            "--epsilon",
            "2",
            "--delta",
            "0.01",
            "--n",
            "100",
            "--p",
            "1"
        ]))
        .contains("ε")
    );
}

#[test]
fn secure_product_equals_the_direct_product() {
    let dir = tempfile::tempdir().unwrap();
    let (_, raw) = read(&table2());
    let a = raw.columns(0, 3).into_owned();
    let b = raw.columns(3, 5).into_owned();
    let (pa, pb) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
    write(&pa, &["Response", "Group", "Delta"], &a);
    write(&pb, &["Age", "BBS", "IH", "MIF", "ADL"], &b);
    let v = json(&[
        "secure-product",
        "--a",
        pa.to_str().unwrap(),
        "--b",
        pb.to_str().unwrap(),
        "--json",
    ]);
    let direct = a.tr_mul(&b);
    let xty = v["xty"].as_array().unwrap();
    for i in 0..3 {
        for j in 0..5 {
            let got = xty[i][j].as_f64().unwrap();
            assert!(
                relative(got, direct[(i, j)]) < PRESERVED_STATISTICS,
                "({i}, {j}): {got} vs {}",
                direct[(i, j)]
            );
        }
    }
    assert_eq!(v["g"], 8);
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("indicator"))
    );
}

#[test]
fn describe_gives_the_same_moments_on_raw_and_released_data() {
    let dir = tempfile::tempdir().unwrap();
    let out = release_of(dir.path(), &[]);
    let raw = json(&["describe", "--input", table2().to_str().unwrap(), "--json"]);
    let rel = json(&[
        "describe",
        "--input",
        out.join("release.csv").to_str().unwrap(),
        "--json",
    ]);
    for j in 0..9 {
        let (a, b) = (
            raw["means"][j].as_f64().unwrap(),
            rel["means"][j].as_f64().unwrap(),
        );
        assert!(relative(a, b) < PRESERVED_STATISTICS, "mean {j}");
        for k in 0..9 {
            let (a, b) = (
                raw["covariance"][j][k].as_f64().unwrap(),
                rel["covariance"][j][k].as_f64().unwrap(),
            );
            assert!(
                (a - b).abs() < PRESERVED_STATISTICS * 1e4,
                "cov {j} {k}: {a} vs {b}"
            );
        }
    }
    assert_eq!(
        raw["correlation"],
        Value::Null,
        "QA is constant, so no correlation matrix"
    );
}

#[test]
fn audit_passes_a_release_and_fails_a_tampered_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = release_of(dir.path(), &[]);
    let release = out.join("release.csv");
    let manifest = out.join("manifest.json");
    let v = json(&[
        "audit",
        "--input",
        release.to_str().unwrap(),
        "--manifest",
        manifest.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(v["overall"], "warn", "LEAPS has small cells: {v}");
    assert!(
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["status"] != "fail")
    );
    assert!(
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "small_cell:IH×MIF")
    );
    // Tamper with one value.
    let (headers, mut data) = read(&release);
    data[(4, 3)] += 1.0;
    let names: Vec<&str> = headers.iter().map(String::as_str).collect();
    write(&release, &names, &data);
    let error = failure(&orthomask(&[
        "audit",
        "--input",
        release.to_str().unwrap(),
        "--manifest",
        manifest.to_str().unwrap(),
        "--strict",
    ]));
    assert!(
        error.contains("audit of") && error.contains("failed"),
        "{error}"
    );
    // The printed two-decimal Table 5 still passes its own consistency checks.
    let t5 = json(&[
        "audit",
        "--input",
        paper("leaps_table5_released.csv").to_str().unwrap(),
        "--json",
    ]);
    assert!(
        t5["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["status"] != "fail"),
        "{t5}"
    );
}

/// Device-side DP on the 20 LEAPS records: the manifest records the noise of every column, and a
/// bias-corrected regression honestly refuses (the noise needed for ε = 0.5 dwarfs 20 records'
/// variation, so the corrected moment matrix is not positive definite) with a one-line reason.
#[test]
fn dp_release_records_its_noise_and_small_samples_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = release_of(
        dir.path(),
        &[
            "--dp-epsilon",
            "0.5",
            "--dp-delta",
            "0.01",
            "--range",
            "Response=0:1",
            "--range",
            "Group=0:1",
            "--range",
            "Delta=-1:2",
            "--range",
            "Age=38:90",
            "--range",
            "BBS=0:56",
            "--range",
            "IH=0:1",
            "--range",
            "MIF=0:1",
            "--range",
            "ADL=0:100",
        ],
    );
    let m = manifest_json(&out);
    assert!(m["dp"]["sigma"].as_f64().unwrap() > 0.0);
    assert_eq!(m["dp"]["smallest_cohort"], 20);
    let columns = m["dp"]["columns"].as_array().unwrap();
    assert_eq!(columns.len(), 8);
    // Age is declared 38–90: its noise is σ·(90 − 38)/2.
    let age = columns.iter().find(|c| c["name"] == "Age").unwrap();
    assert!(
        relative(
            age["sigma"].as_f64().unwrap(),
            m["dp"]["sigma"].as_f64().unwrap() * 26.0
        ) < HAND_COMPUTED
    );
    let error = failure(&orthomask(&[
        "regress",
        "--input",
        out.join("release.csv").to_str().unwrap(),
        "--y",
        "ADL",
        "--x",
        "Age,BBS",
        "--manifest",
        out.join("manifest.json").to_str().unwrap(),
    ]));
    assert!(error.contains("not positive definite"), "{error}");
}

/// With modest known noise the bias-corrected slope is closer to the truth than the naive one.
/// Data: x = 0…9 repeated, y = 3 + 2x + N(0, 1), then N(0, 1.5²) noise added to x (fixed draws).
#[test]
fn bias_corrected_regression_undoes_attenuation() {
    let dir = tempfile::tempdir().unwrap();
    let n = 4000;
    let mut state: u64 = 99;
    let mut normal = move || {
        // Box–Muller on a SplitMix64 stream: fine for a test fixture.
        let mut uniform = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (((z ^ (z >> 31)) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let (u, v) = (uniform(), uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    };
    let data = nalgebra::DMatrix::from_fn(n, 2, |i, j| if j == 0 { (i % 10) as f64 } else { 0.0 });
    let mut data = data;
    for i in 0..n {
        let x = data[(i, 0)];
        data[(i, 1)] = 3.0 + 2.0 * x + normal();
        data[(i, 0)] = x + 1.5 * normal();
    }
    let input = dir.path().join("noisy.csv");
    write(&input, &["x", "y"], &data);
    let v = json(&[
        "regress",
        "--input",
        input.to_str().unwrap(),
        "--y",
        "y",
        "--x",
        "x",
        "--noise-sd",
        "x=1.5",
        "--json",
    ]);
    let slope = v["coefficients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "x")
        .unwrap()
        .clone();
    let (corrected, naive) = (
        slope["estimate"].as_f64().unwrap(),
        slope["naive_estimate"].as_f64().unwrap(),
    );
    // Naive slope ≈ 2·8.25/(8.25 + 2.25) ≈ 1.57; corrected ≈ 2.
    assert!((corrected - 2.0).abs() < 0.1, "corrected {corrected}");
    assert!((naive - 1.57).abs() < 0.1, "naive {naive}");
}

/// Uneven cohorts with device-side DP on declared ranges (41 records in cohorts of at most 15:
/// sizes 14, 14, 13). DP is calibrated for the smallest cohort (`n_s − 1 = 12` records, the same
/// number `dp-sigma --n 12` prints), the declared ranges set each column's noise, ε and δ are
/// recorded as given, and σ meets the Appendix C bound of the largest cohort (γ = p₂/14).
#[test]
fn dp_with_uneven_cohorts_uses_the_smallest_for_dp_and_the_largest_for_sigma() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("uneven.csv");
    let rows: String = (0..41)
        .map(|i| format!("{},{}\n", (i * 7) % 11, ((i * 13) % 17) as f64 / 1.7 - 5.0))
        .collect();
    std::fs::write(&input, format!("a,b\n{rows}")).unwrap();
    let out = dir.path().join("out");
    ok(&pipeline(
        &input,
        &out,
        &[
            "--teaching-key",
            "3",
            "--cohort-size",
            "15",
            "--dp-epsilon",
            "0.5",
            "--dp-delta",
            "0.01",
            "--range",
            "a=0:10",
            "--range",
            "b=-5:5",
        ],
    ));
    let m = manifest_json(&out);
    assert_eq!(m["cohorts"]["sizes"], serde_json::json!([14, 14, 13]));
    let dp = &m["dp"];
    assert_eq!(dp["epsilon"], 0.5);
    assert_eq!(dp["delta"], 0.01);
    assert_eq!(dp["smallest_cohort"], 13);
    let calibrated = json(&[
        "dp-sigma",
        "--epsilon",
        "0.5",
        "--delta",
        "0.01",
        "--n",
        "12",
        "--p",
        "2",
        "--json",
    ]);
    let sigma = dp["sigma"].as_f64().unwrap();
    // σ is calibrated for the mechanism run (record replaced, sums and masked complement
    // composed); the manifest records what it guarantees and seed 004's σ for n_s − 1 rows —
    // `dp-sigma`'s setting B — that it grows from.
    let g = &dp["guarantee"];
    assert_eq!(g["neighbours"], "replace-one-record");
    assert!(
        relative(
            g["paper_sigma"].as_f64().unwrap(),
            calibrated["setting_b_sufficient"].as_f64().unwrap()
        ) < SAME_FUNCTION
    );
    let growth = g["growth_factor"].as_f64().unwrap();
    assert!(relative(sigma, g["paper_sigma"].as_f64().unwrap() * growth) < HAND_COMPUTED);

    assert!(
        g["delta"].as_f64().unwrap() <= 0.01
            && g["epsilon"].as_f64().unwrap() <= 0.5 + WITHIN_REQUESTED_EPSILON
    );
    for (column, width) in dp["columns"].as_array().unwrap().iter().zip([10.0, 10.0]) {
        assert!(relative(column["sigma"].as_f64().unwrap(), sigma * width / 2.0) < HAND_COMPUTED);
    }
    let p2 = m["p2"].as_f64().unwrap();
    let appendix_c = &m["appendix_c"];
    assert!(relative(appendix_c["gamma"].as_f64().unwrap(), p2 / 14.0) < HAND_COMPUTED);
    assert!(m["sigma"].as_f64().unwrap() >= appendix_c["sigma_min"].as_f64().unwrap());
    // Issue 21 §2: with DP, a range left undeclared is refused — one read off the data would leak
    // its extremes, and no guarantee would hold.
    // A DP run refused in one line that names `expected`, with nothing written in `out`.
    let refused = |out: &str, extra: &[&str], expected: &str| {
        let out_dir = dir.path().join(out);
        let mut args = vec![
            "--teaching-key",
            "3",
            "--dp-epsilon",
            "0.5",
            "--dp-delta",
            "0.01",
        ];
        args.extend_from_slice(extra);
        let error = failure(&pipeline(&input, &out_dir, &args));
        assert!(
            error.contains(expected) && !error.trim().contains('\n'),
            "{out}: {error}"
        );
        assert!(!out_dir.join("manifest.json").exists());
    };
    refused(
        "out2",
        &["--cohort-size", "15", "--range", "a=0:10"],
        "declare b with --range COL=LO:HI",
    );
    // Issue 21 §1: a kept column passes both masks and would be released row by row with noise
    // calibrated for the masked columns only: refused in one line, nothing written.
    refused(
        "out3",
        &["--keep", "a", "--range", "a=0:10", "--range", "b=-5:5"],
        "drop --keep or DP",
    );
}
