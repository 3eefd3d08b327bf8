//! Logistic regression on seed 003 Table 2 against statsmodels, separation diagnostics, and the
//! §2.2 property: on a second-method release `X·B₁·B₂` (block-diagonal `B`s keeping the
//! response and treatment columns) the treatment effect and its standard error are the raw
//! data's.
//!
//! Reference values: statsmodels 0.15.0 `smf.logit(...).fit(disp=0)` (Newton), printed by
//! `tests/reference/statsmodels_reference.py` next to the calls quoted here.

mod common;

use common::{TABLE2, mask_rows, paper_table};
use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{DenseInvertible, HaarOrthogonal, KeepColumns, Mask};
use orthomask_core::tolerance::{PRESERVED_STATISTICS, VISIBLY_MASKED};
use orthomask_stats::association::Association;
use orthomask_stats::dataset::Dataset;
use orthomask_stats::design::Intercept;
use orthomask_stats::logistic::{LogisticError, LogisticRegression};
use orthomask_stats::tolerance::{MLE_REFERENCE_RELATIVE, relative_difference};

/// name, estimate, std error, z, p, CI low, CI high.
type Row = (&'static str, f64, f64, f64, f64, f64, f64);

/// `smf.logit('MIF ~ Group + Age + BBS + ADL', data=leaps_table2).fit(disp=0)`: params, bse,
/// tvalues, pvalues, conf_int(0.05).
const MIF_MODEL: [Row; 5] = [
    (
        "(Intercept)",
        4.393435640188172,
        3.7439754846718336,
        1.173468057730422,
        0.2406081589350526,
        -2.9446214687695154,
        11.73149274914586,
    ),
    (
        "Group",
        1.2396947119635333,
        1.274473132408441,
        0.9727115310942765,
        0.3306966926131397,
        -1.2582267268209588,
        3.7376161507480257,
    ),
    (
        "Age",
        -0.09236381611370507,
        0.05337435214375408,
        -1.7304906271263019,
        0.08354265440488952,
        -0.1969756240136213,
        0.012247991786211138,
    ),
    (
        "BBS",
        0.07341474485686875,
        0.06001419706652485,
        1.2232896288771402,
        0.22122032293004823,
        -0.04421091995460932,
        0.19104040966834682,
    ),
    (
        "ADL",
        -0.03481576927384494,
        0.037878667346643136,
        -0.9191392335752374,
        0.35802275027550723,
        -0.10905659305563886,
        0.039425054507948976,
    ),
];
/// Same fit: llf, llnull, llr, llr_pvalue (df_model = 4).
const MIF_MODEL_LIKELIHOOD: [f64; 4] = [
    -11.140812017598583,
    -13.762776274970687,
    5.2439285147442085,
    0.26317192157663083,
];

const PREDICTORS: [&str; 4] = ["Group", "Age", "BBS", "ADL"];

fn check_row(c: &orthomask_stats::inference::Coefficient, row: &Row) {
    let &(name, estimate, se, z, p, low, high) = row;
    assert_eq!(c.name(), name);
    for (what, x, y) in [
        ("estimate", c.estimate(), estimate),
        ("SE", c.std_error(), se),
        ("z", c.statistic(), z),
        ("p", c.p_value(), p),
        ("CI low", c.ci_low(), low),
        ("CI high", c.ci_high(), high),
    ] {
        assert!(
            relative_difference(x, y) < MLE_REFERENCE_RELATIVE,
            "{name} {what}: {x} vs {y}"
        );
    }
    assert_eq!(c.reference().statistic_name(), "z");
}

#[test]
fn mif_model_matches_statsmodels_logit() {
    let fit = LogisticRegression::fit(
        &paper_table(TABLE2),
        "MIF",
        &PREDICTORS,
        Intercept::Included,
    )
    .unwrap();
    for (c, row) in fit.coefficients().iter().zip(&MIF_MODEL) {
        check_row(c, row);
    }
    let [llf, llnull, llr, llr_p] = MIF_MODEL_LIKELIHOOD;
    let lr = fit.likelihood_ratio().unwrap();
    for (what, x, y) in [
        ("log-likelihood", fit.log_likelihood(), llf),
        ("null log-likelihood", fit.null_log_likelihood(), llnull),
        ("deviance", fit.deviance(), -2.0 * llf),
        ("null deviance", fit.null_deviance(), -2.0 * llnull),
        ("LR statistic", lr.statistic(), llr),
        ("LR p-value", lr.p_value(), llr_p),
    ] {
        assert!(
            relative_difference(x, y) < MLE_REFERENCE_RELATIVE,
            "{what}: {x} vs {y}"
        );
    }
    assert_eq!((lr.df(), fit.n(), fit.df_resid()), (4, 20, 15));
    assert!(fit.iterations() <= 10, "{} iterations", fit.iterations());
}

/// `smf.logit('MIF ~ Group', data=leaps_table2).fit(disp=0)`: Group estimate
/// 0.5108256237659907 = ln(5/3), se 0.9309493362512629 — Woolf's log odds-ratio SE of
/// Table 6. The logistic fit and the contingency-table analysis agree.
#[test]
fn one_binary_predictor_gives_the_table_6_odds_ratio() {
    let fit = LogisticRegression::fit(&paper_table(TABLE2), "MIF", &["Group"], Intercept::Included)
        .unwrap();
    let group = fit.coefficient("Group").unwrap();
    assert!(relative_difference(group.estimate(), 0.5108256237659907) < MLE_REFERENCE_RELATIVE);
    assert!(relative_difference(group.std_error(), 0.9309493362512629) < MLE_REFERENCE_RELATIVE);
    let table6 = nalgebra::DMatrix::from_row_slice(2, 2, &[6.0, 6.0, 3.0, 5.0]);
    let or = *Association::new(&table6).unwrap().odds_ratio().unwrap();
    assert!(relative_difference(group.estimate(), or.estimate().ln()) < MLE_REFERENCE_RELATIVE);
    assert!(relative_difference(group.std_error(), or.log_std_error()) < MLE_REFERENCE_RELATIVE);
}

/// Every Response = 0 record has Group = 1 (quasi-complete separation), and Delta < 0.1
/// exactly when Response = 0 (complete separation). statsmodels stops at its iteration limit
/// with `converged = False` and standard errors near 6e4 and 9e4; we refuse both fits and name
/// the diverging terms.
#[test]
fn separated_responses_are_refused() {
    let raw = paper_table(TABLE2);
    let err = LogisticRegression::fit(
        &raw,
        "Response",
        &["Group", "Age", "BBS"],
        Intercept::Included,
    )
    .unwrap_err();
    match &err {
        LogisticError::Separation {
            diverging, extreme, ..
        } => {
            assert!(
                diverging.contains("Group") && !diverging.contains("Age"),
                "{err}"
            );
            assert!(*extreme > 0);
        }
        other => panic!("expected separation, got {other}"),
    }
    let err =
        LogisticRegression::fit(&raw, "Response", &["Delta"], Intercept::Included).unwrap_err();
    assert!(
        matches!(err, LogisticError::Separation { ref diverging, .. } if diverging.contains("Delta")),
        "{err}"
    );
}

/// A first-method release `A·X` scrambles the 0/1 response: logistic regression must refuse it.
#[test]
fn row_masked_response_is_refused() {
    let masked = mask_rows(&paper_table(TABLE2), 536, 0);
    assert!(matches!(
        LogisticRegression::fit(&masked, "MIF", &PREDICTORS, Intercept::Included),
        Err(LogisticError::NonBinaryResponse { .. })
    ));
}

/// Seed 003 §2.2 / §3.3: `X·B₁·B₂` with `B₁` (provider, Haar orthogonal inner block) and `B₂`
/// (collector, uniform-entry invertible inner block) keeping MIF (response) and Group
/// (treatment). Group's estimate, SE, z, p and CI, the deviance and the LR test equal the raw
/// fit's; the masked covariates' coefficients do not.
#[test]
fn second_method_release_keeps_the_treatment_effect() {
    let columns = ["MIF", "Group", "Age", "BBS", "ADL"];
    let raw = paper_table(TABLE2).select(&columns).unwrap();
    let (response, treatment) = (0, 1);
    let dim = columns.len();
    let key = Key::teaching(535);
    let b1 = KeepColumns::new(
        dim,
        &[response, treatment],
        HaarOrthogonal::keyed(dim - 2, key.stream(StreamId::AttributeMask { party: 1 })).unwrap(),
    )
    .unwrap();
    let b2 = KeepColumns::new(
        dim,
        &[response, treatment],
        DenseInvertible::uniform_entries(
            dim - 2,
            &mut key.stream(StreamId::AttributeMask { party: 2 }).rng(),
        )
        .unwrap(),
    )
    .unwrap();
    let mut released = raw.values().clone();
    b1.right_apply(&mut released).unwrap();
    b2.right_apply(&mut released).unwrap();
    let released = Dataset::new(raw.names().to_vec(), released).unwrap();
    assert_eq!(released.column("MIF").unwrap(), raw.column("MIF").unwrap());
    assert_eq!(
        released.column("Group").unwrap(),
        raw.column("Group").unwrap()
    );

    let fit = |data: &Dataset| {
        LogisticRegression::fit(data, "MIF", &PREDICTORS, Intercept::Included).unwrap()
    };
    let (a, b) = (fit(&raw), fit(&released));
    let (ga, gb) = (
        a.coefficient("Group").unwrap(),
        b.coefficient("Group").unwrap(),
    );
    for (what, x, y) in [
        ("estimate", ga.estimate(), gb.estimate()),
        ("SE", ga.std_error(), gb.std_error()),
        ("z", ga.statistic(), gb.statistic()),
        ("p", ga.p_value(), gb.p_value()),
        ("CI low", ga.ci_low(), gb.ci_low()),
        ("CI high", ga.ci_high(), gb.ci_high()),
        ("deviance", a.deviance(), b.deviance()),
        ("null deviance", a.null_deviance(), b.null_deviance()),
        (
            "LR p",
            a.likelihood_ratio().unwrap().p_value(),
            b.likelihood_ratio().unwrap().p_value(),
        ),
    ] {
        assert!(
            relative_difference(x, y) < PRESERVED_STATISTICS,
            "{what}: raw {x} vs released {y}"
        );
    }
    // And both equal statsmodels' raw fit.
    check_row(ga, &MIF_MODEL[1]);
    check_row(gb, &MIF_MODEL[1]);
    // The masked covariates' own coefficients are not recoverable.
    let (age_a, age_b) = (a.coefficient("Age").unwrap(), b.coefficient("Age").unwrap());
    assert!(relative_difference(age_a.estimate(), age_b.estimate()) > VISIBLY_MASKED);
}
