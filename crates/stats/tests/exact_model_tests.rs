//! Issue 22 §2: the model tests a release can give exactly — nested F, RESET on declared powers,
//! Chow on declared group interactions, residual correlations, R², AIC/BIC, VIF — equal R's on the
//! raw data, and the same tests on a masked release equal them.
//!
//! The data, `tests/data/derived_terms.csv`, are 30 records of `x`, `x2 = x²`, a 0/1 group `g`,
//! `xg = x·g`, a column `w` left out of the model and a response `y`, written by R 4.2.2:
//!
//! ```r
//! set.seed(2022); n <- 30
//! x <- round(runif(n, 1, 10), 1); g <- rep(c(0, 1), length.out = n)
//! w <- round(rnorm(n, 5, 2), 2)
//! y <- round(2 + 0.5*x + 0.08*x^2 + 1.2*g - 0.3*x*g + 0.4*w + rnorm(n, 0, 0.8), 3)
//! write.csv(data.frame(x = x, x2 = x^2, g = g, xg = x*g, w = w, y = y),
//!           "derived_terms.csv", row.names = FALSE, quote = FALSE)
//! ```
//!
//! Every reference value below was printed by R 4.2.2 (`sprintf("%.17g", …)` or
//! `options(digits = 17)`) after `d <- read.csv("crates/stats/tests/data/derived_terms.csv")` and
//! `full <- lm(y ~ x + x2 + g + xg, data = d)`; the command is next to each number, which is
//! written in the shortest form that parses to the same double as R's 17 digits.
//!
//! The release is `A·X` with `A` Haar-distributed on the orthogonal matrices keeping `1ₙ` fixed,
//! as the collector's `A₁`.

use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{FixedSubspaceHaar, Mask};
use orthomask_stats::dataset::Dataset;
use orthomask_stats::design::Intercept;
use orthomask_stats::linear::LinearRegression;
use orthomask_stats::model_tests::{
    ChowTest, InformationCriteria, NestedFTest, ResetTest, ResidualCorrelation, VarianceInflation,
};
use orthomask_stats::tolerance::{
    REFERENCE_RELATIVE, RELEASE_REGRESSION_RELATIVE, RESIDUAL_ORTHOGONALITY, relative_difference,
};

const CSV: &str = include_str!("data/derived_terms.csv");
const FULL: [&str; 4] = ["x", "x2", "g", "xg"];

fn raw() -> Dataset {
    let mut lines = CSV.lines();
    let names: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_owned)
        .collect();
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let values = DMatrix::from_fn(rows.len(), names.len(), |i, j| rows[i][j]);
    Dataset::new(names, values).unwrap()
}

fn release(raw: &Dataset) -> Dataset {
    let mut values = raw.values().clone();
    FixedSubspaceHaar::keyed(
        &DMatrix::from_element(values.nrows(), 1, 1.0),
        Key::teaching(22).stream(StreamId::CollectorLeftMask),
    )
    .unwrap()
    .left_apply(&mut values)
    .unwrap();
    // The release really differs from the raw data row by row.
    assert!((&values - raw.values()).amax() > 1.0);
    Dataset::new(raw.names().to_vec(), values).unwrap()
}

/// `value` equals R's `r` on the raw data, and `on_release` equals `value`.
fn agrees(what: &str, value: f64, on_release: f64, r: f64) {
    assert!(
        relative_difference(value, r) < REFERENCE_RELATIVE,
        "{what}: ours {value}, R {r}"
    );
    assert!(
        relative_difference(on_release, value) < RELEASE_REGRESSION_RELATIVE,
        "{what}: release {on_release}, raw {value}"
    );
}

fn both<T>(f: impl Fn(&Dataset) -> T) -> (T, T) {
    let raw = raw();
    (f(&raw), f(&release(&raw)))
}

fn check_f(what: &str, (raw, rel): (NestedFTest, NestedFTest), r: [f64; 4]) {
    agrees(
        &format!("{what} RSS0"),
        raw.rss_reduced(),
        rel.rss_reduced(),
        r[0],
    );
    agrees(
        &format!("{what} RSS1"),
        raw.rss_full(),
        rel.rss_full(),
        r[1],
    );
    agrees(
        &format!("{what} F"),
        raw.f_statistic(),
        rel.f_statistic(),
        r[2],
    );
    agrees(&format!("{what} p"), raw.p_value(), rel.p_value(), r[3]);
    assert_eq!(
        (raw.df_reduced(), raw.df_full()),
        (rel.df_reduced(), rel.df_full())
    );
}

/// `a <- anova(lm(y ~ x, data = d), full)`;
/// `sprintf("%.17g", c(a$RSS, a$F[2], a[["Pr(>F)"]][2]))`, residual df 28 and 25.
#[test]
fn nested_f_test_equals_r_anova() {
    let t = both(|d| NestedFTest::new(d, "y", &["x"], &FULL, Intercept::Included).unwrap());
    assert_eq!((t.0.df_reduced(), t.0.df_full(), t.0.df()), (28, 25, 3));
    assert_eq!(t.0.added_terms(), ["x2", "g", "xg"]);
    check_f(
        "y ~ x vs full",
        t,
        [
            36.330582573601504,
            25.88171187298904,
            3.3643030620388337,
            0.034479271724154076,
        ],
    );
}

/// Without intercept: `a <- anova(lm(y ~ 0 + x, data = d), lm(y ~ 0 + x + w, data = d))`, as
/// above; residual df 29 and 28.
#[test]
fn nested_f_test_without_intercept_equals_r_anova() {
    let t = both(|d| NestedFTest::new(d, "y", &["x"], &["x", "w"], Intercept::Excluded).unwrap());
    assert_eq!((t.0.df_reduced(), t.0.df_full()), (29, 28));
    check_f(
        "y ~ 0 + x vs y ~ 0 + x + w",
        t,
        [
            122.25222750393522,
            22.919758142995946,
            121.34984692045018,
            1.0905102906136163e-11,
        ],
    );
}

/// RESET on the declared power x2: `a <- anova(lm(y ~ x + g + xg, data = d), full)`.
#[test]
fn reset_on_declared_powers_equals_r_anova() {
    let t = both(|d| ResetTest::new(d, "y", &FULL, &["x2"], Intercept::Included).unwrap());
    assert_eq!(t.0.powers(), ["x2"]);
    check_f(
        "RESET",
        (t.0.f_test().clone(), t.1.f_test().clone()),
        [
            30.89241343699927,
            25.88171187298904,
            4.8400020723122585,
            0.03726917537791197,
        ],
    );
}

/// Chow on the group g with the interaction xg:
/// `a <- anova(lm(y ~ x, data = d), lm(y ~ x + g + xg, data = d))`.
#[test]
fn chow_test_equals_r_anova() {
    let t = both(|d| {
        ChowTest::new(d, "y", &["x", "g", "xg"], "g", &["xg"], Intercept::Included).unwrap()
    });
    assert_eq!(t.0.group(), "g");
    assert_eq!(t.0.f_test().added_terms(), ["g", "xg"]);
    check_f(
        "Chow",
        (t.0.f_test().clone(), t.1.f_test().clone()),
        [
            36.330582573601504,
            30.89241343699927,
            2.288464736496033,
            0.12148794718052426,
        ],
    );
}

/// Dropping each predictor: `a <- drop1(full, test = "F")`; `sprintf("%.17g", a$F)` and
/// `sprintf("%.17g", a[["Pr(>F)"]])`.
#[test]
fn dropping_each_predictor_equals_r_drop1() {
    let (raw, rel) = both(|d| NestedFTest::drop_each(d, "y", &FULL, Intercept::Included).unwrap());
    let r_f = [
        2.647579669075412,
        4.840002072312266,
        2.106796513525199,
        5.615683504537341,
    ];
    let r_p = [
        0.116247591822543,
        0.03726917537791185,
        0.15908026827880892,
        0.025830380130443493,
    ];
    assert_eq!(raw.len(), 4);
    for (k, term) in FULL.iter().enumerate() {
        assert_eq!(raw[k].added_terms(), [*term]);
        agrees(term, raw[k].f_statistic(), rel[k].f_statistic(), r_f[k]);
        agrees(term, raw[k].p_value(), rel[k].p_value(), r_p[k]);
    }
}

/// `summary(full)$r.squared`, `$adj.r.squared`, `logLik(full)` (df = 6), `AIC(full)`,
/// `BIC(full)` with `options(digits = 17)`; and without intercept
/// `AIC(lm(y ~ 0 + x + w, data = d))`, `BIC(…)`.
#[test]
fn r_squared_aic_bic_equal_r() {
    let (raw, rel) = both(|d| {
        InformationCriteria::of(&LinearRegression::fit(d, "y", &FULL, Intercept::Included).unwrap())
    });
    assert_eq!((raw.parameters(), rel.parameters()), (6, 6));
    agrees("R²", raw.r_squared(), rel.r_squared(), 0.9035372587892638);
    agrees(
        "adjusted R²",
        raw.adj_r_squared(),
        rel.adj_r_squared(),
        0.8881032201955461,
    );
    agrees(
        "logLik",
        raw.log_likelihood(),
        rel.log_likelihood(),
        -40.35324448129395,
    );
    agrees("AIC", raw.aic(), rel.aic(), 92.7064889625879);
    agrees("BIC", raw.bic(), rel.bic(), 101.11367325256083);
    let (raw, rel) = both(|d| {
        InformationCriteria::of(
            &LinearRegression::fit(d, "y", &["x", "w"], Intercept::Excluded).unwrap(),
        )
    });
    agrees("AIC, no intercept", raw.aic(), rel.aic(), 83.06037072938238);
    agrees("BIC, no intercept", raw.bic(), rel.bic(), 87.26396287436884);
}

/// car is not installed with this R, so its definition for one-column terms, `1/(1 − R²ⱼ)`:
/// `for (v in c("x", "x2", "g", "xg")) print(1 / (1 - summary(lm(reformulate(setdiff(c("x",
/// "x2", "g", "xg"), v), v), data = d))$r.squared))` with 17 digits.
#[test]
fn variance_inflation_factors_equal_r() {
    let (raw, rel) =
        both(|d| VarianceInflation::for_predictors(d, &FULL, Intercept::Included).unwrap());
    let r = [
        21.91232586302606,
        23.78758422287765,
        5.4659586936255335,
        8.09504403627889,
    ];
    for k in 0..4 {
        assert_eq!(raw[k].term(), FULL[k]);
        agrees(FULL[k], raw[k].vif(), rel[k].vif(), r[k]);
        agrees(
            FULL[k],
            raw[k].r_squared(),
            rel[k].r_squared(),
            1.0 - 1.0 / r[k],
        );
    }
}

/// Seed 001 §3.2: `sapply(d[c("x", "x2", "g", "xg", "w")], function(col) cor(resid(full), col))`
/// gives 6.1580966542321802e-01 for w (not in the model) and about 1e-17 for the regressors.
#[test]
fn residual_correlations_equal_r() {
    let (raw, rel) = both(|d| {
        ResidualCorrelation::of(
            d,
            &LinearRegression::fit(d, "y", &FULL, Intercept::Included).unwrap(),
        )
    });
    let names: Vec<&str> = raw.iter().map(ResidualCorrelation::column).collect();
    assert_eq!(names, ["x", "x2", "g", "xg", "w"]);
    for (a, b) in raw.iter().zip(&rel) {
        assert_eq!(a.in_model(), a.column() != "w");
        let (a_r, b_r) = (a.correlation().unwrap(), b.correlation().unwrap());
        if a.in_model() {
            assert!(a_r.abs() < RESIDUAL_ORTHOGONALITY, "{}: {a_r}", a.column());
            assert!(b_r.abs() < RESIDUAL_ORTHOGONALITY, "{}: {b_r}", b.column());
        } else {
            agrees(a.column(), a_r, b_r, 0.615809665423218);
        }
    }
}
