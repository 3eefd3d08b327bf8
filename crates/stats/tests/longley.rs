//! NIST StRD linear regression benchmark "Longley" (higher difficulty), raw and masked.
//!
//! Source of data and certified values: NIST Statistical Reference Datasets, Linear Least
//! Squares Regression, `Longley.dat` (Longley, J. W. 1967, "An Appraisal of Least Squares
//! Programs for the Electronic Computer from the Viewpoint of the User", JASA 62, 819–841),
//! https://www.itl.nist.gov/div898/strd/lls/data/Longley.shtml. Model
//! `y = B0 + B1·x1 + … + B6·x6 + e`. The certified values below are copied from that file; they
//! were also re-derived here in exact rational arithmetic (Python `fractions`, normal equations
//! solved exactly) and agree in every printed digit.

use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{FixedSubspaceHaar, Mask};
use orthomask_stats::dataset::Dataset;
use orthomask_stats::design::Intercept;
use orthomask_stats::linear::LinearRegression;
use orthomask_stats::tolerance::{
    CERTIFIED_RELATIVE, ILL_CONDITIONED_MASKED, log_relative_error, relative_difference,
};

/// Columns y (total derived employment), x1 (GNP implicit price deflator), x2 (GNP),
/// x3 (unemployed), x4 (armed forces), x5 (population ≥ 14), x6 (year); `Longley.dat`
/// lines 61–76.
#[rustfmt::skip]
const LONGLEY: [[f64; 7]; 16] = [
    [60323.0,  83.0, 234289.0, 2356.0, 1590.0, 107608.0, 1947.0],
    [61122.0,  88.5, 259426.0, 2325.0, 1456.0, 108632.0, 1948.0],
    [60171.0,  88.2, 258054.0, 3682.0, 1616.0, 109773.0, 1949.0],
    [61187.0,  89.5, 284599.0, 3351.0, 1650.0, 110929.0, 1950.0],
    [63221.0,  96.2, 328975.0, 2099.0, 3099.0, 112075.0, 1951.0],
    [63639.0,  98.1, 346999.0, 1932.0, 3594.0, 113270.0, 1952.0],
    [64989.0,  99.0, 365385.0, 1870.0, 3547.0, 115094.0, 1953.0],
    [63761.0, 100.0, 363112.0, 3578.0, 3350.0, 116219.0, 1954.0],
    [66019.0, 101.2, 397469.0, 2904.0, 3048.0, 117388.0, 1955.0],
    [67857.0, 104.6, 419180.0, 2822.0, 2857.0, 118734.0, 1956.0],
    [68169.0, 108.4, 442769.0, 2936.0, 2798.0, 120445.0, 1957.0],
    [66513.0, 110.8, 444546.0, 4681.0, 2637.0, 121950.0, 1958.0],
    [68655.0, 112.6, 482704.0, 3813.0, 2552.0, 123366.0, 1959.0],
    [69564.0, 114.2, 502601.0, 3931.0, 2514.0, 125368.0, 1960.0],
    [69331.0, 115.7, 518173.0, 4806.0, 2572.0, 127852.0, 1961.0],
    [70551.0, 116.9, 554894.0, 4007.0, 2827.0, 130081.0, 1962.0],
];

const NAMES: [&str; 7] = ["y", "x1", "x2", "x3", "x4", "x5", "x6"];
const PREDICTORS: [&str; 6] = ["x1", "x2", "x3", "x4", "x5", "x6"];

/// NIST certified parameter estimates B0 … B6 (`Longley.dat`, "Certified Values").
const CERTIFIED_ESTIMATES: [f64; 7] = [
    -3482258.63459582,
    15.0618722713733,
    -0.358191792925910E-01,
    -2.02022980381683,
    -1.03322686717359,
    -0.511041056535807E-01,
    1829.15146461355,
];

/// NIST certified standard deviations of the estimates (`Longley.dat`, "Certified Values").
const CERTIFIED_STD_ERRORS: [f64; 7] = [
    890420.383607373,
    84.9149257747669,
    0.334910077722432E-01,
    0.488399681651699,
    0.214274163161675,
    0.226073200069370,
    455.478499142212,
];

/// NIST certified residual standard deviation.
const CERTIFIED_RESIDUAL_SD: f64 = 304.854073561965;
/// NIST certified R-squared.
const CERTIFIED_R_SQUARED: f64 = 0.995479004577296;
/// NIST certified ANOVA: regression SS (6 df), residual SS (9 df), F statistic.
const CERTIFIED_REGRESSION_SS: f64 = 184172401.944494;
const CERTIFIED_RESIDUAL_SS: f64 = 836424.055505915;
const CERTIFIED_F: f64 = 330.285339234588;

fn raw() -> DMatrix<f64> {
    DMatrix::from_fn(16, 7, |i, j| LONGLEY[i][j])
}

fn dataset(values: DMatrix<f64>) -> Dataset {
    Dataset::new(NAMES.iter().map(|&s| s.to_owned()).collect(), values).unwrap()
}

/// The release `A·X` with `A` Haar-distributed among orthogonal matrices keeping `1₁₆` fixed.
fn masked() -> DMatrix<f64> {
    let a =
        FixedSubspaceHaar::ones_fixed(16, Key::teaching(7).stream(StreamId::Scratch(1))).unwrap();
    let mut x = raw();
    a.left_apply(&mut x).unwrap();
    x
}

fn assert_certified(fit: &LinearRegression, label: &str) {
    for (j, c) in fit.coefficients().iter().enumerate() {
        let lre = log_relative_error(c.estimate(), CERTIFIED_ESTIMATES[j]);
        assert!(
            relative_difference(c.estimate(), CERTIFIED_ESTIMATES[j]) < CERTIFIED_RELATIVE,
            "{label}: B{j} = {} vs certified {} (LRE {lre:.1})",
            c.estimate(),
            CERTIFIED_ESTIMATES[j]
        );
        assert!(
            relative_difference(c.std_error(), CERTIFIED_STD_ERRORS[j]) < CERTIFIED_RELATIVE,
            "{label}: SE(B{j}) = {} vs certified {}",
            c.std_error(),
            CERTIFIED_STD_ERRORS[j]
        );
    }
    let checks = [
        ("residual SD", fit.sigma(), CERTIFIED_RESIDUAL_SD),
        ("R²", fit.r_squared(), CERTIFIED_R_SQUARED),
        (
            "regression SS",
            fit.anova().regression().sum_of_squares(),
            CERTIFIED_REGRESSION_SS,
        ),
        (
            "residual SS",
            fit.anova().residual().sum_of_squares(),
            CERTIFIED_RESIDUAL_SS,
        ),
        ("F", fit.f_statistic().unwrap(), CERTIFIED_F),
    ];
    for (what, computed, certified) in checks {
        assert!(
            relative_difference(computed, certified) < CERTIFIED_RELATIVE,
            "{label}: {what} = {computed} vs certified {certified}"
        );
    }
    assert_eq!(
        (fit.anova().regression().df(), fit.df_resid(), fit.n()),
        (6, 9, 16)
    );
}

fn fit(values: DMatrix<f64>) -> LinearRegression {
    LinearRegression::fit(&dataset(values), "y", &PREDICTORS, Intercept::Included).unwrap()
}

#[test]
fn raw_longley_matches_nist_certified_values() {
    assert_certified(&fit(raw()), "raw");
}

#[test]
fn masked_longley_matches_nist_certified_values() {
    let released = masked();
    // The release really is scrambled: no raw record survives.
    let raw = raw();
    assert!(
        (0..16).all(|i| (0..16).all(|k| (released.row(i) - raw.row(k)).amax() > 1.0)),
        "a masked row equals a raw row"
    );
    assert_certified(&fit(released), "masked");
}

#[test]
fn raw_and_masked_longley_fits_agree() {
    let (raw_fit, masked_fit) = (fit(raw()), fit(masked()));
    for (a, b) in raw_fit.coefficients().iter().zip(masked_fit.coefficients()) {
        assert_eq!(a.name(), b.name());
        for (x, y) in [
            (a.estimate(), b.estimate()),
            (a.std_error(), b.std_error()),
            (a.statistic(), b.statistic()),
            (a.ci_low(), b.ci_low()),
            (a.ci_high(), b.ci_high()),
        ] {
            assert!(
                relative_difference(x, y) < ILL_CONDITIONED_MASKED,
                "{}: {x} vs {y}",
                a.name()
            );
        }
    }
    for (x, y) in [
        (raw_fit.sigma(), masked_fit.sigma()),
        (raw_fit.r_squared(), masked_fit.r_squared()),
        (raw_fit.adj_r_squared(), masked_fit.adj_r_squared()),
        (
            raw_fit.f_statistic().unwrap(),
            masked_fit.f_statistic().unwrap(),
        ),
        (
            raw_fit.f_p_value().unwrap(),
            masked_fit.f_p_value().unwrap(),
        ),
    ] {
        assert!(
            relative_difference(x, y) < ILL_CONDITIONED_MASKED,
            "{x} vs {y}"
        );
    }
}
