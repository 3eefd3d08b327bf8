//! Linear regression and descriptive statistics on seed 003 Table 2 (raw LEAPS records) and on
//! a `1ₙ`-fixed masked release of it, against statsmodels/pandas reference values.
//!
//! Reference values: statsmodels 0.15.0, pandas 3.1.1; every number is printed by
//! `tests/reference/statsmodels_reference.py` next to the call quoted here.

mod common;

use common::{TABLE2, mask_rows, matrix_relative, paper_table};
use orthomask_core::tolerance::{PRESERVED_STATISTICS, VISIBLY_MASKED};
use orthomask_stats::descriptive::{DescriptiveError, Moments};
use orthomask_stats::design::Intercept;
use orthomask_stats::linear::LinearRegression;
use orthomask_stats::tolerance::{REFERENCE_RELATIVE, relative_difference};

/// One coefficient row: name, estimate, std error, t, p, CI low, CI high.
type Row = (&'static str, f64, f64, f64, f64, f64, f64);

/// `smf.ols('Delta ~ Group + Age + BBS + ADL', data=leaps_table2).fit()`: params, bse,
/// tvalues, pvalues, conf_int(0.05).
const WITH_INTERCEPT: [Row; 5] = [
    (
        "(Intercept)",
        0.09323998253476715,
        0.2861298016595178,
        0.3258660300115076,
        0.7490274019945526,
        -0.5166312531835209,
        0.7031112182530552,
    ),
    (
        "Group",
        -0.016902593827900714,
        0.10567422419161959,
        -0.15995001578862938,
        0.8750544628799333,
        -0.24214187095851017,
        0.20833668330270874,
    ),
    (
        "Age",
        -0.0035420080634641507,
        0.0036631921000121292,
        -0.966918459846106,
        0.3489170821715909,
        -0.011349917200333164,
        0.004265901073404864,
    ),
    (
        "BBS",
        0.00628782437213822,
        0.005351633890679792,
        1.174935449730383,
        0.25833535204239005,
        -0.005118913252153518,
        0.017694561996429957,
    ),
    (
        "ADL",
        0.0030150185351331886,
        0.0029237740703039294,
        1.0312077686699554,
        0.31878479977007407,
        -0.003216858378335578,
        0.009246895448601956,
    ),
];
/// Same fit: rsquared, rsquared_adj, fvalue, f_pvalue, sqrt(scale), ssr, ess, centered_tss.
const WITH_INTERCEPT_SUMMARY: [f64; 8] = [
    0.2540161225098816,
    0.05508708851251676,
    1.2769182929488632,
    0.32257820747464233,
    0.20806175302549978,
    0.649345396080661,
    0.22110960391933898,
    0.870455,
];

/// `smf.ols('Delta ~ 0 + Age + BBS', data=leaps_table2).fit()` (statsmodels reports the
/// uncentred R² and F when there is no constant, as R does).
const THROUGH_ORIGIN: [Row; 2] = [
    (
        "Age",
        -0.001805958732793669,
        0.0023680332374402626,
        -0.762640787401206,
        0.4555564736126238,
        -0.006781011953355256,
        0.0031690944877679184,
    ),
    (
        "BBS",
        0.010574054101110782,
        0.004157735305846142,
        2.54322445352467,
        0.02038642082546598,
        0.0018389763595703084,
        0.019309131842651255,
    ),
];
/// Same fit: rsquared, rsquared_adj, fvalue, f_pvalue, sqrt(scale), ssr, ess, uncentered_tss.
const THROUGH_ORIGIN_SUMMARY: [f64; 8] = [
    0.6842154507439995,
    0.6491282786044439,
    19.500444436576515,
    3.122611054339561e-05,
    0.202816286963863,
    0.7404200326405445,
    1.604279967359456,
    2.3447000000000005,
];

fn check(fit: &LinearRegression, rows: &[Row], summary: &[f64; 8], label: &str) {
    let close = |a: f64, b: f64, what: &str| {
        assert!(
            relative_difference(a, b) < REFERENCE_RELATIVE,
            "{label}: {what} {a} vs {b}"
        );
    };
    assert_eq!(fit.coefficients().len(), rows.len());
    for (c, &(name, estimate, se, t, p, low, high)) in fit.coefficients().iter().zip(rows) {
        assert_eq!(c.name(), name);
        close(c.estimate(), estimate, name);
        close(c.std_error(), se, name);
        close(c.statistic(), t, name);
        close(c.p_value(), p, name);
        close(c.ci_low(), low, name);
        close(c.ci_high(), high, name);
    }
    close(fit.r_squared(), summary[0], "R²");
    close(fit.adj_r_squared(), summary[1], "adjusted R²");
    close(fit.f_statistic().unwrap(), summary[2], "F");
    close(fit.f_p_value().unwrap(), summary[3], "p(F)");
    close(fit.sigma(), summary[4], "σ̂");
    close(
        fit.anova().residual().sum_of_squares(),
        summary[5],
        "SS_res",
    );
    close(
        fit.anova().regression().sum_of_squares(),
        summary[6],
        "SS_reg",
    );
    close(fit.anova().total().sum_of_squares(), summary[7], "SS_total");
}

#[test]
fn ols_with_intercept_matches_statsmodels_on_raw_and_masked_table_2() {
    let raw = paper_table(TABLE2);
    let masked = mask_rows(&raw, 536, 0);
    for (data, label) in [(&raw, "raw"), (&masked, "masked")] {
        let fit = LinearRegression::fit(
            data,
            "Delta",
            &["Group", "Age", "BBS", "ADL"],
            Intercept::Included,
        )
        .unwrap();
        check(&fit, &WITH_INTERCEPT, &WITH_INTERCEPT_SUMMARY, label);
        assert_eq!((fit.n(), fit.df_resid()), (20, 15));
    }
}

#[test]
fn ols_through_the_origin_matches_statsmodels_on_raw_and_masked_table_2() {
    let raw = paper_table(TABLE2);
    let masked = mask_rows(&raw, 537, 0);
    for (data, label) in [(&raw, "raw"), (&masked, "masked")] {
        let fit =
            LinearRegression::fit(data, "Delta", &["Age", "BBS"], Intercept::Excluded).unwrap();
        check(&fit, &THROUGH_ORIGIN, &THROUGH_ORIGIN_SUMMARY, label);
        assert!(!fit.anova().centered());
    }
}

/// Residuals are the raw residuals rotated, `A·e`: same length, different entries.
#[test]
fn masked_residuals_are_rotated_not_equal() {
    let raw = paper_table(TABLE2);
    let masked = mask_rows(&raw, 536, 0);
    let predictors = ["Group", "Age", "BBS", "ADL"];
    let a = LinearRegression::fit(&raw, "Delta", &predictors, Intercept::Included).unwrap();
    let b = LinearRegression::fit(&masked, "Delta", &predictors, Intercept::Included).unwrap();
    assert!(relative_difference(a.residuals().norm(), b.residuals().norm()) < PRESERVED_STATISTICS);
    assert!((a.residuals() - b.residuals()).amax() > VISIBLY_MASKED * a.residuals().amax());
}

/// `leaps_table2[["Delta", "Age", "BBS", "ADL"]].mean() / .cov() / .corr()` (pandas 3.1.1,
/// `cov` with ddof = 1).
const MEANS: [f64; 4] = [0.27149999999999996, 63.9, 35.75, 63.0];
#[rustfmt::skip]
const COVARIANCE: [[f64; 4]; 4] = [
    [0.04581342105263157, -0.4435263157894738, 0.8114473684210525, 1.496578947368421],
    [-0.4435263157894738, 209.67368421052626, 50.3421052631579, 1.3684210526315852],
    [0.8114473684210525, 50.3421052631579, 116.93421052631578, 75.26315789473684],
    [1.496578947368421, 1.3684210526315852, 75.26315789473684, 326.7105263157895],
];
#[rustfmt::skip]
const CORRELATION: [[f64; 4]; 4] = [
    [1.0, -0.1431037676806523, 0.3505848950183782, 0.38683138825227703],
    [-0.1431037676806523, 1.0, 0.3215056550916326, 0.0052283688705264545],
    [0.3505848950183782, 0.3215056550916326, 1.0, 0.3850614828436736],
    [0.38683138825227703, 0.0052283688705264545, 0.3850614828436736, 1.0],
];

#[test]
fn moments_match_pandas_and_survive_masking() {
    let raw = paper_table(TABLE2);
    let masked = mask_rows(&raw, 538, 0);
    let columns = ["Delta", "Age", "BBS", "ADL"];
    let reference_cov = nalgebra::DMatrix::from_fn(4, 4, |i, j| COVARIANCE[i][j]);
    let reference_cor = nalgebra::DMatrix::from_fn(4, 4, |i, j| CORRELATION[i][j]);
    let mut results = Vec::new();
    for data in [&raw, &masked] {
        let m = Moments::new(&data.select(&columns).unwrap()).unwrap();
        for (mean, expected) in m.means().iter().zip(MEANS) {
            assert!(
                relative_difference(*mean, expected) < REFERENCE_RELATIVE,
                "{mean} vs {expected}"
            );
        }
        assert!(matrix_relative(m.covariance(), &reference_cov) < REFERENCE_RELATIVE);
        assert!(matrix_relative(&m.correlation().unwrap(), &reference_cor) < REFERENCE_RELATIVE);
        results.push(m);
    }
    // Raw and masked agree to the masking core's promise.
    let (a, b) = (&results[0], &results[1]);
    assert!(matrix_relative(b.covariance(), a.covariance()) < PRESERVED_STATISTICS);
    assert!((b.means() - a.means()).amax() / a.means().amax() < PRESERVED_STATISTICS);
    assert!(
        matrix_relative(&b.correlation().unwrap(), &a.correlation().unwrap())
            < PRESERVED_STATISTICS
    );
}

/// The quality-assurance column (constant 888) stays constant under a `1ₙ`-fixed mask up to
/// rounding; its correlations are refused on raw and masked data alike.
#[test]
fn constant_column_has_no_correlation_raw_or_masked() {
    let raw = paper_table(TABLE2);
    let masked = mask_rows(&raw, 538, 0);
    for data in [&raw, &masked] {
        let m = Moments::new(data).unwrap();
        assert!(matches!(
            m.correlation(),
            Err(DescriptiveError::ZeroVariance { ref column, .. }) if column == "QA"
        ));
        assert!(relative_difference(m.means()[8], 888.0) < PRESERVED_STATISTICS);
    }
}
