//! Fisher's exact test against R's documentation and SciPy, and its place next to χ² in
//! [`Association`].

use nalgebra::DMatrix;
use orthomask_stats::association::Association;
use orthomask_stats::contingency::ContingencyTable;
use orthomask_stats::fisher::FisherExact;
use orthomask_stats::tolerance::{
    FISHER_INTERVAL_SYMMETRY, HAND_SOLVED_TABLE, R_FOUR_DECIMALS, R_UNIROOT_RELATIVE,
    REFERENCE_RELATIVE, relative_difference,
};

/// R's `?fisher.test` example, Fisher's tea-tasting experiment,
/// `fisher.test(matrix(c(3, 1, 1, 3), 2))`: "p-value = 0.4857", "odds ratio 6.408309".
#[test]
fn tea_tasting_matches_r() {
    let f = FisherExact::new([[3, 1], [1, 3]]).unwrap();
    assert!(
        (f.p_value() - 0.4857).abs() < R_FOUR_DECIMALS,
        "{}",
        f.p_value()
    );
    assert!(relative_difference(f.odds_ratio(), 6.408309) < R_UNIROOT_RELATIVE);
}

/// `(table, p, conditional odds ratio, CI low, CI high)` from SciPy 1.17.1:
/// `scipy.stats.fisher_exact(t).pvalue` (R's rule, relative tolerance 1e-7) and
/// `scipy.stats.contingency.odds_ratio(t, kind='conditional')` with
/// `.confidence_interval(0.95)` (R's `fisher.test` estimate and interval, solved to full
/// precision; the tea-tasting values agree with mpmath at 40 digits: 6.408319658199674,
/// [0.2117355954465786, 626.2435305888140]). ∞ is written `f64::INFINITY`.
/// `(table, p-value, odds ratio, CI low, CI high)`.
type Reference = ([[u64; 2]; 2], f64, f64, f64, f64);

const SCIPY: [Reference; 7] = [
    (
        [[3, 1], [1, 3]],
        0.485_714_285_714_285_65,
        6.408_319_658_199_662,
        0.211_735_595_446_579_66,
        626.243_530_588_814_1,
    ),
    (
        [[4, 0], [3, 5]],
        0.080_808_080_808_080_8,
        f64::INFINITY,
        0.572_697_104_685_251_3,
        f64::INFINITY,
    ),
    (
        [[12, 5], [3, 9]],
        0.025_327_687_033_676_14,
        6.654_383_368_205_62,
        1.076_118_451_801_241_7,
        55.705_602_370_796_38,
    ),
    (
        [[1, 9], [11, 3]],
        0.002_759_456_185_220_083_6,
        0.037_209_084_832_381_056,
        0.000_636_002_948_874_169_3,
        0.425_866_475_696_373_4,
    ),
    (
        [[2, 3], [3, 2]],
        1.0,
        0.483_103_763_188_108_05,
        0.019_312_435_173_834_18,
        9.428_996_432_611_411,
    ),
    (
        [[50, 40], [30, 60]],
        0.004_236_449_105_386_435,
        2.486_876_866_913_822_6,
        1.309_482_021_123_916_4,
        4.788_313_487_914_952_5,
    ),
    (
        [[7, 2], [1, 1]],
        0.490_909_090_909_090_9,
        3.055_050_463_303_890_4,
        0.029_803_498_846_594_55,
        313.162_336_455_016_43,
    ),
];

fn agrees(got: f64, want: f64) -> bool {
    if want.is_infinite() {
        got.is_infinite() && got > 0.0
    } else {
        relative_difference(got, want) < REFERENCE_RELATIVE
    }
}

#[test]
fn p_value_odds_ratio_and_interval_match_scipy() {
    for (table, p, or, low, high) in SCIPY {
        let f = FisherExact::new(table).unwrap();
        assert!(
            agrees(f.p_value(), p),
            "{table:?} p: {} vs {p}",
            f.p_value()
        );
        assert!(
            agrees(f.odds_ratio(), or),
            "{table:?} OR: {} vs {or}",
            f.odds_ratio()
        );
        assert!(
            agrees(f.ci_low(), low),
            "{table:?} low: {} vs {low}",
            f.ci_low()
        );
        assert!(
            agrees(f.ci_high(), high),
            "{table:?} high: {} vs {high}",
            f.ci_high()
        );
    }
}

/// The conditional MLE is a root of `E_ψ[X] = a`; for the 2×2 table `[[1, 1], [1, 1]]` the law
/// of X on {0, 1, 2} is ∝ (1, 4ψ, ψ²), and by symmetry `E_1[X] = 1 = a`, so ψ̂ = 1 exactly,
/// and the interval is symmetric on the log scale (ψ_L·ψ_U = 1). p = 1.
#[test]
fn symmetric_table_by_hand() {
    let f = FisherExact::new([[1, 1], [1, 1]]).unwrap();
    assert!(relative_difference(f.odds_ratio(), 1.0) < HAND_SOLVED_TABLE);
    assert!(relative_difference(f.ci_low() * f.ci_high(), 1.0) < FISHER_INTERVAL_SYMMETRY);
    assert!(relative_difference(f.p_value(), 1.0) < HAND_SOLVED_TABLE);
}

/// In [`Association`]: present for 2×2 integer tables, flagged when an expected count is
/// below 5; absent for real-valued cross-products and larger tables.
#[test]
fn association_reports_fisher_next_to_chi_square() {
    let tea = Association::new(&DMatrix::from_row_slice(2, 2, &[3.0, 1.0, 1.0, 3.0])).unwrap();
    assert!(tea.small_expected_counts());
    assert!((tea.smallest_expected() - 2.0).abs() < HAND_SOLVED_TABLE);
    let f = tea.fisher().unwrap();
    assert!((f.p_value() - 34.0 / 70.0).abs() < HAND_SOLVED_TABLE);
    let real = Association::new(&DMatrix::from_row_slice(2, 2, &[3.5, 1.0, 1.0, 3.0])).unwrap();
    assert!(real.fisher().is_none());
    let wide = Association::new(&DMatrix::from_row_slice(
        2,
        3,
        &[3.0, 1.0, 2.0, 1.0, 3.0, 2.0],
    ))
    .unwrap();
    assert!(wide.fisher().is_none());
    let big = Association::new(&DMatrix::from_row_slice(2, 2, &[50.0, 40.0, 30.0, 60.0])).unwrap();
    assert!(!big.small_expected_counts());
    assert!(big.fisher().is_some());
    // From binary columns, through the rounded contingency table.
    let z1 = [1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0];
    let z2 = [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0];
    let t = ContingencyTable::from_binary_columns("milk first", &z1, "guess milk", &z2).unwrap();
    let a = t.association().unwrap();
    assert!((a.fisher().unwrap().p_value() - 34.0 / 70.0).abs() < HAND_SOLVED_TABLE);
}
