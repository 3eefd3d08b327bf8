//! Issue 22 §2 in the CLI: `orthomask regress` prints AIC/BIC, VIFs and the residual
//! correlations, and `--test nested|reset|chow` the F test of nested models, equal to R's on the
//! raw data and the same on a masked release.
//!
//! The data are `crates/stats/tests/data/derived_terms.csv` (x, x2 = x², a 0/1 group g, xg = x·g,
//! w left out of the model, y; written by R, see `crates/stats/tests/exact_model_tests.rs`). Every
//! reference value was printed by R 4.2.2 after `d <- read.csv("derived_terms.csv")` and
//! `full <- lm(y ~ x + x2 + g + xg, data = d)`, with the command next to it; the numbers are written
//! in the shortest form that parses to the same double as R's 17 digits.

mod common;

use common::{failure, json, ok, orthomask, write};
use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{FixedSubspaceHaar, Mask};
use orthomask_stats::tolerance::{
    REFERENCE_RELATIVE, RELEASE_REGRESSION_RELATIVE, RESIDUAL_ORTHOGONALITY, relative_difference,
};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn raw() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../stats/tests/data/derived_terms.csv")
}

/// The release `A·X`, `A` Haar on the orthogonal matrices keeping `1ₙ` fixed (the collector's
/// `A₁`), written at full precision.
fn release(dir: &Path) -> PathBuf {
    let (headers, mut values) = common::read(&raw());
    FixedSubspaceHaar::keyed(
        &DMatrix::from_element(values.nrows(), 1, 1.0),
        Key::teaching(22).stream(StreamId::CollectorLeftMask),
    )
    .unwrap()
    .left_apply(&mut values)
    .unwrap();
    let path = dir.join("release.csv");
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    write(&path, &headers, &values);
    path
}

/// `orthomask regress --json` of y on x, x2, g, xg with `extra`, on the raw data and the release.
fn regress(extra: &[&str]) -> (Value, Value) {
    let dir = tempfile::tempdir().unwrap();
    let release = release(dir.path());
    let run = |input: &Path| {
        let mut args = vec![
            "regress",
            "--input",
            input.to_str().unwrap(),
            "--y",
            "y",
            "--x",
            "x,x2,g,xg",
            "--json",
        ];
        args.extend_from_slice(extra);
        json(&args)
    };
    (run(&raw()), run(&release))
}

/// The field at `pointer` equals R's value on the raw data, and the release's equals the raw one.
fn agrees(raw: &Value, rel: &Value, pointer: &str, r: f64) {
    let a = raw.pointer(pointer).and_then(Value::as_f64).unwrap();
    let b = rel.pointer(pointer).and_then(Value::as_f64).unwrap();
    assert!(
        relative_difference(a, r) < REFERENCE_RELATIVE,
        "{pointer}: ours {a}, R {r}"
    );
    assert!(
        relative_difference(a, b) < RELEASE_REGRESSION_RELATIVE,
        "{pointer}: raw {a}, release {b}"
    );
}

fn agrees_f_test(raw: &Value, rel: &Value, r: [f64; 4]) {
    for (field, value) in ["rss_reduced", "rss_full", "f_statistic", "p_value"]
        .iter()
        .zip(r)
    {
        agrees(raw, rel, &format!("/test/{field}"), value);
    }
}

/// `a <- anova(lm(y ~ x, data = d), full)`;
/// `sprintf("%.17g", c(a$RSS, a$F[2], a[["Pr(>F)"]][2]))`.
#[test]
fn nested_test_equals_r_on_raw_and_release() {
    let (raw, rel) = regress(&["--test", "nested", "--reduced", "x"]);
    assert_eq!(raw["test"]["kind"], "nested");
    assert_eq!(raw["test"]["added"], serde_json::json!(["x2", "g", "xg"]));
    assert_eq!(
        (
            raw["test"]["df_reduced"].as_u64(),
            raw["test"]["df"].as_u64()
        ),
        (Some(28), Some(3))
    );
    agrees_f_test(
        &raw,
        &rel,
        [
            36.330582573601504,
            25.88171187298904,
            3.3643030620388337,
            0.034479271724154076,
        ],
    );
}

/// `a <- anova(lm(y ~ x + g + xg, data = d), full)`, as above.
#[test]
fn reset_test_equals_r_on_raw_and_release() {
    let (raw, rel) = regress(&["--test", "reset", "--powers", "x2"]);
    assert_eq!(raw["test"]["kind"], "reset");
    agrees_f_test(
        &raw,
        &rel,
        [
            30.89241343699927,
            25.88171187298904,
            4.8400020723122585,
            0.03726917537791197,
        ],
    );
}

/// The pooled model y ~ x + x2 against the one with g and xg:
/// `a <- anova(lm(y ~ x + x2, data = d), full)`, as above (R printed 3.9664330611004441).
#[test]
fn chow_test_equals_r_on_raw_and_release() {
    let (raw, rel) = regress(&["--test", "chow", "--group", "g", "--interactions", "xg"]);
    assert_eq!(raw["test"]["group"], "g");
    assert_eq!(raw["test"]["reduced"], serde_json::json!(["x", "x2"]));
    agrees_f_test(
        &raw,
        &rel,
        [
            34.09435808506101,
            25.88171187298904,
            3.966433061100444,
            0.031906634690129304,
        ],
    );
}

/// `logLik(full)`, `AIC(full)`, `BIC(full)` with `options(digits = 17)`; the VIFs
/// `1 / (1 - summary(lm(x ~ x2 + g + xg, data = d))$r.squared)` and likewise (car is not
/// installed); `cor(resid(full), d$w)`.
#[test]
fn criteria_vif_and_residual_correlations_equal_r_on_raw_and_release() {
    let (raw, rel) = regress(&[]);
    assert_eq!(raw["test"], Value::Null);
    assert_eq!(raw["parameters"].as_u64(), Some(6));
    agrees(&raw, &rel, "/log_likelihood", -40.35324448129395);
    agrees(&raw, &rel, "/aic", 92.7064889625879);
    agrees(&raw, &rel, "/bic", 101.11367325256083);
    for (k, (name, vif)) in [
        ("x", 21.91232586302606),
        ("x2", 23.78758422287765),
        ("g", 5.4659586936255335),
        ("xg", 8.09504403627889),
    ]
    .into_iter()
    .enumerate()
    {
        assert_eq!(raw["vif"][k]["name"], name);
        agrees(&raw, &rel, &format!("/vif/{k}/vif"), vif);
    }
    let correlations = |v: &Value| v["residual_correlations"].as_array().unwrap().clone();
    for (a, b) in correlations(&raw).iter().zip(&correlations(&rel)) {
        if a["column"] == "w" {
            assert_eq!(a["in_model"], false);
            let (x, y) = (
                a["correlation"].as_f64().unwrap(),
                b["correlation"].as_f64().unwrap(),
            );
            assert!(
                relative_difference(x, 0.615809665423218) < REFERENCE_RELATIVE,
                "{x}"
            );
            assert!(
                relative_difference(x, y) < RELEASE_REGRESSION_RELATIVE,
                "{x} {y}"
            );
        } else {
            assert_eq!(a["in_model"], true, "{a}");
            for c in [a, b] {
                assert!(
                    c["correlation"].as_f64().unwrap().abs() < RESIDUAL_ORTHOGONALITY,
                    "{c}"
                );
            }
        }
    }
}

/// The text output names what it prints, and a test that cannot be run is one line.
#[test]
fn text_output_and_refusals() {
    let input = raw();
    let input = input.to_str().unwrap();
    let base = ["regress", "--input", input, "--y", "y", "--x", "x,x2,g,xg"];
    let text = ok(&orthomask(
        &[&base[..], &["--test", "reset", "--powers", "x2"]].concat(),
    ));
    for expected in [
        "AIC = 92.706489, BIC = 101.113673",
        "variance inflation factors: x 21.9123, x2 23.7876, g 5.4660, xg 8.0950",
        "correlation of the residuals with the columns not in the model: w 0.615810",
        "RESET-style test of the powers x2: y ~ 1 + x + g + xg against y ~ 1 + x + x2 + g + xg",
        "F = 4.8400 on 1 and 25 df, p = 3.7269e-2",
    ] {
        assert!(text.contains(expected), "{expected:?} not in\n{text}");
    }
    let not_nested = failure(&orthomask(
        &[&base[..], &["--test", "nested", "--reduced", "x,w"]].concat(),
    ));
    assert!(
        not_nested.contains("the models are not nested: \"w\""),
        "{not_nested}"
    );
    let missing = failure(&orthomask(
        &[
            &base[..],
            &["--test", "chow", "--group", "w", "--interactions", "xg"],
        ]
        .concat(),
    ));
    assert!(
        missing.contains("\"w\" is not among the model's predictors"),
        "{missing}"
    );
}

/// Issue 22 §3: `--terms`, an R formula over a release and the model terms its manifest
/// declares, fits the model the columns named one by one give, and `--test reset`/`chow` find
/// the declared powers and interactions themselves. The release is `orthomask pipeline`'s with
/// its default flags; a CSV declares no terms, so the manifest gets the ones a survey declaring
/// `x2 = x²` and `xg = x·g` would have made the collector write (`Manifest::model_terms`).
#[test]
fn a_formula_over_declared_terms_fits_the_model_and_finds_the_tests_terms() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pipeline");
    ok(&common::pipeline(&raw(), &out, &[]));
    let manifest_path = out.join("manifest.json");
    let mut manifest = common::manifest_json(&out);
    manifest["model_terms"] = serde_json::json!([
        {"id": "x2", "kind": "power", "of": "x", "exponent": 2},
        {"id": "xg", "kind": "product", "of": ["x", "g"]},
    ]);
    std::fs::write(&manifest_path, manifest.to_string()).unwrap();
    let release = out.join("release.csv");
    let formula = |terms: &str, extra: &[&str]| {
        let mut args = vec![
            "regress",
            "--input",
            release.to_str().unwrap(),
            "--manifest",
            manifest_path.to_str().unwrap(),
            "--terms",
            terms,
            "--json",
        ];
        args.extend_from_slice(extra);
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let run = |args: Vec<String>| json(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let (raw_reset, _) = regress(&["--test", "reset", "--powers", "x2"]);
    let reset = run(formula("y ~ x + I(x^2) + g*x", &["--test", "reset"]));
    let names: Vec<&str> = reset["coefficients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["(Intercept)", "x", "x2", "g", "xg"]);
    assert_eq!(reset["test"]["added"], serde_json::json!(["x2"]));
    // R's anova(lm(y ~ x + g + xg), full) on the raw data, as in reset_test_equals_r_…
    agrees_f_test(
        &raw_reset,
        &reset,
        [
            30.89241343699927,
            25.88171187298904,
            4.8400020723122585,
            0.03726917537791197,
        ],
    );
    let chow = run(formula(
        "y ~ x + I(x^2) + x:g + g",
        &["--test", "chow", "--group", "g"],
    ));
    assert_eq!(chow["test"]["added"], serde_json::json!(["g", "xg"]));
    let (raw_chow, _) = regress(&["--test", "chow", "--group", "g", "--interactions", "xg"]);
    agrees_f_test(
        &raw_chow,
        &chow,
        [
            34.09435808506101,
            25.88171187298904,
            3.966433061100444,
            0.031906634690129304,
        ],
    );
    // What the release cannot give, and a test with nothing to test, are one line each.
    let fails = |v: Vec<String>| {
        failure(&orthomask(
            &v.iter().map(String::as_str).collect::<Vec<_>>(),
        ))
    };
    let cube = fails(formula("y ~ x + I(x^3)", &[]));
    assert!(
        cube.contains("`I(x^3)` is not in the release")
            && cube.contains("declared: x2 = x^2, xg = x*g"),
        "{cube}"
    );
    let no_power = fails(formula("y ~ x + g", &["--test", "reset"]));
    assert!(
        no_power.contains("has no declared power term"),
        "{no_power}"
    );
}
