//! `orthomask secure-regress`: regression over columns held by different agencies (seed 001 §3)
//! gives what the same analysis gives on the joined data, computed here directly.

mod common;

use common::{failure, json, orthomask, survey_data, write};
use nalgebra::{DMatrix, DVector};
use orthomask_secure::tolerance::{LOCAL_LEVERAGE, SECURE_FIT_MATCHES_DIRECT};
use orthomask_stats::tolerance::relative_difference as relative;
use std::path::{Path, PathBuf};

/// 80 subjects: agency A holds `flag, x1`, B holds `x2, y`, C holds `x3`; y depends on all.
fn agencies(dir: &Path) -> (PathBuf, PathBuf, PathBuf, PathBuf) {
    let base = survey_data(80, 4, 17);
    let y = DVector::from_fn(80, |i, _| {
        2.0 + 1.5 * base[(i, 0)] - 0.4 * base[(i, 1)]
            + 0.25 * base[(i, 2)]
            + 0.1 * base[(i, 3)]
            + ((i * 37) % 11) as f64 / 5.0
    });
    let mut joined = base.insert_column(4, 0.0);
    joined.set_column(4, &y);
    let paths: Vec<PathBuf> = ["a.csv", "b.csv", "c.csv", "all.csv"]
        .iter()
        .map(|f| dir.join(f))
        .collect();
    write(
        &paths[0],
        &["flag", "x1"],
        &joined.columns(0, 2).into_owned(),
    );
    write(&paths[1], &["x2", "y"], &joined.select_columns(&[2, 4]));
    write(&paths[2], &["x3"], &joined.columns(3, 1).into_owned());
    write(&paths[3], &["flag", "x1", "x2", "x3", "y"], &joined);
    let mut it = paths.into_iter();
    (
        it.next().unwrap(),
        it.next().unwrap(),
        it.next().unwrap(),
        it.next().unwrap(),
    )
}

#[test]
fn three_agencies_get_the_joined_regression_ridge_and_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c, all) = agencies(dir.path());
    let (a, b, c, all) = (
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        c.to_str().unwrap(),
        all.to_str().unwrap(),
    );
    let secure = json(&[
        "secure-regress",
        "--agency",
        a,
        "--agency",
        b,
        "--agency",
        c,
        "--y",
        "y",
        "--x",
        "flag,x1,x2,x3",
        "--ridge",
        "3",
        "--teaching-key",
        "5",
        "--json",
    ]);
    let direct = json(&[
        "regress",
        "--input",
        all,
        "--y",
        "y",
        "--x",
        "flag,x1,x2,x3",
        "--json",
    ]);
    let (sc, dc) = (
        secure["coefficients"].as_array().unwrap(),
        direct["coefficients"].as_array().unwrap(),
    );
    assert_eq!(sc.len(), 5);
    for (s, d) in sc.iter().zip(dc) {
        assert_eq!(s["name"], d["name"]);
        for field in ["estimate", "std_error", "t", "p"] {
            let (x, y) = (s[field].as_f64().unwrap(), d[field].as_f64().unwrap());
            assert!(
                relative(x, y) < SECURE_FIT_MATCHES_DIRECT,
                "{} {field}: {x} vs {y}",
                s["name"]
            );
        }
    }
    for field in ["sigma", "r_squared", "adj_r_squared"] {
        let (x, y) = (
            secure[field].as_f64().unwrap(),
            direct[field].as_f64().unwrap(),
        );
        assert!(
            relative(x, y) < SECURE_FIT_MATCHES_DIRECT,
            "{field}: {x} vs {y}"
        );
    }
    assert_eq!(secure["pairs"].as_array().unwrap().len(), 3);
    // Residuals are orthogonal to every predictor of the model.
    for r in secure["residual_correlations"].as_array().unwrap() {
        assert_eq!(r["in_model"], true);
        assert!(
            r["correlation"].as_f64().unwrap().abs() < SECURE_FIT_MATCHES_DIRECT,
            "{r}"
        );
    }
    // Predictors are spread over three agencies: no exact leverages.
    assert!(secure["leverage"].is_null());

    // Ridge (seed 001 eq. (5) on centred data): β = (X_cᵀX_c + λI)⁻¹ X_cᵀy_c, β₀ = ȳ − x̄ᵀβ.
    let (_, data) = common::read(Path::new(all));
    let x = data.columns(0, 4).into_owned();
    let y = data.column(4).into_owned();
    let x_mean = x.row_mean();
    let y_mean = y.mean();
    let xc = DMatrix::from_fn(80, 4, |i, j| x[(i, j)] - x_mean[j]);
    let yc = y.add_scalar(-y_mean);
    let beta = (xc.tr_mul(&xc) + DMatrix::identity(4, 4) * 3.0)
        .lu()
        .solve(&xc.tr_mul(&yc))
        .unwrap();
    let ridge = secure["ridge"]["coefficients"].as_array().unwrap();
    let intercept = y_mean - x_mean.transpose().dot(&beta);
    assert!(
        relative(ridge[0]["estimate"].as_f64().unwrap(), intercept) < SECURE_FIT_MATCHES_DIRECT
    );
    for k in 0..4 {
        let got = ridge[k + 1]["estimate"].as_f64().unwrap();
        assert!(
            relative(got, beta[k]) < SECURE_FIT_MATCHES_DIRECT,
            "ridge {k}: {got} vs {}",
            beta[k]
        );
    }
}

/// When one agency holds every predictor, it computes the exact leverages locally; they equal
/// the hat-matrix diagonal of the joined design (`H = Q Qᵀ`, trace = number of terms). The
/// residual correlation with an attribute outside the model equals the direct one.
#[test]
fn leverages_and_outside_correlations_match_the_joined_data() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c, all) = agencies(dir.path());
    let secure = json(&[
        "secure-regress",
        "--agency",
        a.to_str().unwrap(),
        "--agency",
        b.to_str().unwrap(),
        "--agency",
        c.to_str().unwrap(),
        "--y",
        "y",
        "--x",
        "flag,x1",
        "--teaching-key",
        "6",
        "--json",
    ]);
    let (_, data) = common::read(&all);
    let design = DMatrix::from_fn(80, 3, |i, j| if j == 0 { 1.0 } else { data[(i, j - 1)] });
    let q = design.clone().qr().q();
    let leverage = &secure["leverage"];
    assert_eq!(leverage["agency"], 0);
    let h: Vec<f64> = serde_json::from_value(leverage["hat_diagonal"].clone()).unwrap();
    assert_eq!(h.len(), 80);
    for (i, &hi) in h.iter().enumerate() {
        let direct = q.row(i).norm_squared();
        assert!(
            (hi - direct).abs() < LOCAL_LEVERAGE,
            "subject {i}: {hi} vs {direct}"
        );
    }
    assert!((h.iter().sum::<f64>() - 3.0).abs() < SECURE_FIT_MATCHES_DIRECT);

    // Residuals of y ~ flag + x1, correlated with x3 (outside the model), directly.
    let coefficients: Vec<f64> = secure["coefficients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["estimate"].as_f64().unwrap())
        .collect();
    let residuals = data.column(4) - &design * DVector::from_vec(coefficients);
    let x3 = data.column(3).into_owned();
    let (rm, xm) = (residuals.mean(), x3.mean());
    let cov: f64 = residuals
        .iter()
        .zip(x3.iter())
        .map(|(r, x)| (r - rm) * (x - xm))
        .sum();
    let direct = cov
        / (residuals.iter().map(|r| (r - rm).powi(2)).sum::<f64>()
            * x3.iter().map(|x| (x - xm).powi(2)).sum::<f64>())
        .sqrt();
    let outside = secure["residual_correlations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "x3")
        .unwrap();
    assert_eq!(outside["in_model"], false);
    assert!(relative(outside["correlation"].as_f64().unwrap(), direct) < SECURE_FIT_MATCHES_DIRECT);
}

#[test]
fn bad_requests_get_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, _, _) = agencies(dir.path());
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let short = dir.path().join("short.csv");
    write(&short, &["z"], &DMatrix::from_element(5, 1, 1.0));
    let short = short.to_str().unwrap();
    // The agencies' files, the response and the predictors of each bad request.
    let cases: [(&[&str], &str, &str, &str); 4] = [
        (&[a], "y", "x1", "at least two agencies"),
        (&[a, b], "y", "x9", "no agency holds a column \"x9\""),
        (&[a, a], "x1", "flag", "held by both"),
        (&[a, short], "x1", "flag", "same subjects"),
    ];
    for (agencies, y, x, expected) in cases {
        let mut args = vec!["secure-regress"];
        for agency in agencies {
            args.extend(["--agency", agency]);
        }
        args.extend(["--y", y, "--x", x]);
        let e = failure(&orthomask(&args));
        assert!(e.contains(expected), "{expected}: {e}");
    }
}
