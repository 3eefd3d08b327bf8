//! `orthomask regress` on exact fits, collinear and badly scaled designs, and
//! `orthomask contingency` on small tables: reported as R reports them, with integer counts and
//! Fisher's exact test, and JSON without NaN.

mod common;

use common::{json, ok, orthomask, write};
use nalgebra::DMatrix;
use orthomask_core::tolerance::HAND_COMPUTED;
use orthomask_stats::dataset::Dataset;
use orthomask_stats::design::Intercept;
use orthomask_stats::linear::{EXACT_FIT_WARNING, LinearRegression};
use orthomask_stats::tolerance::{
    HAND_SOLVED_TABLE, INTEGER_COUNT_RESIDUAL, REFERENCE_RELATIVE, relative_difference,
};
use std::path::Path;

fn csv(dir: &Path, name: &str, headers: &[&str], rows: &[&[f64]]) -> String {
    let data = DMatrix::from_fn(rows.len(), headers.len(), |i, j| rows[i][j]);
    let path = dir.join(name);
    write(&path, headers, &data);
    path.to_str().unwrap().to_owned()
}

/// line = 1 + 2x exactly: the fit is reported (coefficients 1 and 2) with R's warning, in the
/// JSON and on standard error, instead of being refused.
#[test]
fn exact_fit_is_reported_with_rs_warning() {
    let dir = tempfile::tempdir().unwrap();
    let input = csv(
        dir.path(),
        "line.csv",
        &["x", "line"],
        &[
            &[1.0, 3.0],
            &[2.0, 5.0],
            &[3.0, 7.0],
            &[4.0, 9.0],
            &[5.0, 11.0],
        ],
    );
    let v = json(&[
        "regress", "--input", &input, "--y", "line", "--x", "x", "--json",
    ]);
    assert_eq!(v["exact_fit"], true);
    assert_eq!(v["warnings"][0], EXACT_FIT_WARNING);
    let estimates: Vec<f64> = v["coefficients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["estimate"].as_f64().unwrap())
        .collect();
    assert!(
        (estimates[0] - 1.0).abs() < HAND_COMPUTED && (estimates[1] - 2.0).abs() < HAND_COMPUTED
    );
    assert!(v["sigma"].as_f64().unwrap() < HAND_COMPUTED);
    // Text mode: R's warning on standard error, the table on standard output.
    let out = orthomask(&["regress", "--input", &input, "--y", "line", "--x", "x"]);
    let stdout = ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("warning: {EXACT_FIT_WARNING}")),
        "{stderr}"
    );
    assert!(stdout.contains("(Intercept)"), "{stdout}");
}

/// twice = 2x is dropped and named (R's NA coefficient), the rest is fitted.
#[test]
fn collinear_term_is_dropped_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let input = csv(
        dir.path(),
        "collinear.csv",
        &["x", "twice", "y"],
        &[
            &[1.0, 2.0, 2.0],
            &[2.0, 4.0, 3.0],
            &[3.0, 6.0, 2.0],
            &[4.0, 8.0, 5.0],
            &[5.0, 10.0, 4.5],
        ],
    );
    let v = json(&[
        "regress", "--input", &input, "--y", "y", "--x", "x,twice", "--json",
    ]);
    assert_eq!(v["coefficients"].as_array().unwrap().len(), 2);
    assert_eq!(v["aliased"][0]["name"], "twice");
    assert_eq!(v["aliased"][0]["collinear_with"], serde_json::json!(["x"]));
    assert!(
        v["aliased"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("twice dropped: collinear with x")
    );
    assert_eq!(v["exact_fit"], false);
    assert_eq!(v["df_resid"], 3);
    let text = ok(&orthomask(&[
        "regress", "--input", &input, "--y", "y", "--x", "x,twice",
    ]));
    assert!(
        text.contains("(1 not defined because of singularities)"),
        "{text}"
    );
    assert!(text.contains("twice dropped: collinear with x"), "{text}");
}

/// Columns spread over 12 orders of magnitude go through the CSV (round-trip precision) and the
/// command unchanged: the CLI's coefficients are the library's.
#[test]
fn badly_scaled_columns_survive_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let n = 40;
    let rows: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            let t = i as f64;
            let (x1, x2, x3) = (
                1e-6 * (t * 0.618).fract(),
                (t * 0.37).cos(),
                1e6 * (t * 0.271).fract(),
            );
            vec![
                x1,
                x2,
                x3,
                3.0 + 2e6 * x1 - 0.5 * x2 + 4e-6 * x3 + 0.1 * (t * 1.7).sin(),
            ]
        })
        .collect();
    let refs: Vec<&[f64]> = rows.iter().map(Vec::as_slice).collect();
    let input = csv(dir.path(), "scaled.csv", &["x1", "x2", "x3", "y"], &refs);
    let v = json(&[
        "regress", "--input", &input, "--y", "y", "--x", "x1,x2,x3", "--json",
    ]);
    let data = Dataset::from_columns(
        ["x1", "x2", "x3", "y"]
            .iter()
            .enumerate()
            .map(|(j, name)| ((*name).to_owned(), rows.iter().map(|r| r[j]).collect()))
            .collect(),
    )
    .unwrap();
    let fit = LinearRegression::fit(&data, "y", &["x1", "x2", "x3"], Intercept::Included).unwrap();
    for (c, row) in fit
        .coefficients()
        .iter()
        .zip(v["coefficients"].as_array().unwrap())
    {
        for (field, value) in [("estimate", c.estimate()), ("std_error", c.std_error())] {
            let cli = row[field].as_f64().unwrap();
            assert!(
                relative_difference(cli, value) < REFERENCE_RELATIVE,
                "{} {field}",
                c.name()
            );
        }
    }
}

/// Fisher's tea-tasting table (R's `?fisher.test`): counts as integers, Fisher's exact test next
/// to χ² (p = 0.4857, conditional odds ratio 6.4083197 — SciPy 1.17.1
/// `odds_ratio(t, kind='conditional')`, R prints 6.408309 from a coarser root search), and the
/// small-expected-count warning.
#[test]
fn tea_tasting_gives_fisher_next_to_chi_square() {
    let dir = tempfile::tempdir().unwrap();
    let rows: [&[f64]; 8] = [
        &[1.0, 1.0],
        &[1.0, 1.0],
        &[1.0, 1.0],
        &[1.0, 0.0],
        &[0.0, 1.0],
        &[0.0, 0.0],
        &[0.0, 0.0],
        &[0.0, 0.0],
    ];
    let input = csv(
        dir.path(),
        "tea.csv",
        &["milk_first", "guessed_milk"],
        &rows,
    );
    let args = [
        "contingency",
        "--input",
        &input,
        "--row",
        "milk_first",
        "--col",
        "guessed_milk",
    ];
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let v = json(&with_json);
    assert_eq!(v["table"], serde_json::json!([[3, 1], [1, 3]]));
    assert_eq!(v["row_totals"], serde_json::json!([4, 4]));
    let fisher = &v["fisher"];
    assert!(
        relative_difference(fisher["p_value"].as_f64().unwrap(), 34.0 / 70.0) < HAND_SOLVED_TABLE
    );
    assert!(
        relative_difference(
            fisher["odds_ratio"].as_f64().unwrap(),
            6.408_319_658_199_662
        ) < REFERENCE_RELATIVE
    );
    assert!(
        relative_difference(fisher["ci_high"].as_f64().unwrap(), 626.243_530_588_814_1)
            < REFERENCE_RELATIVE
    );
    assert!((v["smallest_expected"].as_f64().unwrap() - 2.0).abs() < HAND_SOLVED_TABLE);
    assert!(v["warnings"][0].as_str().unwrap().contains("Fisher"));
    let out = orthomask(&args);
    let text = ok(&out);
    assert!(
        text.contains("Fisher's exact test: p = 4.8571e-1"),
        "{text}"
    );
    let first_row = text.lines().nth(1).unwrap();
    assert_eq!(
        first_row.split_whitespace().collect::<Vec<_>>(),
        ["1", "3", "1", "4"],
        "{text}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("below 5"));
}

/// An infinite conditional odds ratio (the first cell as large as the margins allow) is `null`
/// in the JSON, never a non-number.
#[test]
fn infinite_odds_ratio_is_null() {
    let dir = tempfile::tempdir().unwrap();
    let rows: [&[f64]; 6] = [
        &[1.0, 1.0],
        &[1.0, 1.0],
        &[0.0, 1.0],
        &[0.0, 0.0],
        &[0.0, 0.0],
        &[0.0, 0.0],
    ];
    let input = csv(dir.path(), "sep.csv", &["a", "b"], &rows);
    let v = json(&[
        "contingency",
        "--input",
        &input,
        "--row",
        "a",
        "--col",
        "b",
        "--json",
    ]);
    assert_eq!(v["table"], serde_json::json!([[2, 0], [1, 3]]));
    assert!(v["fisher"]["odds_ratio"].is_null() && v["fisher"]["ci_high"].is_null());
    assert!(v["fisher"]["ci_low"].as_f64().unwrap() > 0.0);
}

/// A zero cell that the cross-products put a hair below zero prints as 0, not -0: with
/// z₁ = (1, 0, 0, 1, 0) and z₂ = (1 + e, 1 + e, 1 + e, 1 + e, 0), e = 10⁻¹⁴, the cell
/// (z₁ = 1, z₂ = 0) is `z₁ᵀz₁ − z₁ᵀz₂ = 2 − 2(1 + e) = −2e`.
#[test]
fn counts_never_print_as_negative_zero() {
    let dir = tempfile::tempdir().unwrap();
    let z = 1.0 + 1e-14;
    let rows: [&[f64]; 5] = [&[1.0, z], &[0.0, z], &[0.0, z], &[1.0, z], &[0.0, 0.0]];
    let input = csv(dir.path(), "hair.csv", &["a", "b"], &rows);
    let args = ["contingency", "--input", &input, "--row", "a", "--col", "b"];
    let text = ok(&orthomask(&args));
    assert!(!text.contains("-0"), "{text}");
    let first_row = text.lines().nth(1).unwrap();
    assert_eq!(
        first_row.split_whitespace().collect::<Vec<_>>(),
        ["1", "2", "0", "2"],
        "{text}"
    );
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let v = json(&with_json);
    assert_eq!(v["table"], serde_json::json!([[2, 0], [2, 1]]));
    assert!(v["rounding_residual"].as_f64().unwrap() < INTEGER_COUNT_RESIDUAL);
}
