//! Contingency tables from masked columns: seed 003 Table 5 (published release) gives Table 6,
//! and the χ² test, odds ratio and relative risk equal those of the raw Table 2.
//!
//! Reference values: scipy 1.17.1 and statsmodels 0.15.0, printed by
//! `tests/reference/statsmodels_reference.py` next to the calls quoted here.

mod common;

use common::{TABLE2, TABLE5, mask_rows, paper_table};
use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{HaarOrthogonal, Mask};
use orthomask_core::tolerance::PRESERVED_STATISTICS;
use orthomask_stats::association::Association;
use orthomask_stats::contingency::{ContingencyTable, CountRounding, Factor};
use orthomask_stats::dataset::Dataset;
use orthomask_stats::tolerance::{MAX_COUNT_ROUNDING, REFERENCE_RELATIVE, relative_difference};

fn group_by_mif(data: &Dataset) -> ContingencyTable {
    let group = data.column("Group").unwrap();
    let mif = data.column("MIF").unwrap();
    ContingencyTable::from_binary_columns("Group", group.as_slice(), "MIF", mif.as_slice()).unwrap()
}

/// Table 6 of seed 003: Group (LTP = 1 first) × MIF (Yes = 1 first):
/// [[6, 6], [3, 5]], row totals 12, 8, column totals 9, 11, n = 20. By hand from the printed
/// (two-decimal) Table 5: V₁ᵀV₂ = 6.0055, V₁ᵀV₁ = 11.979, V₂ᵀV₂ = 9.0336, so the cells are
/// 6.0055, 11.979 − 6.0055 = 5.9735, 9.0336 − 6.0055 = 3.0281 and 20 − 15.0071 = 4.9929; the
/// largest rounding residual is 0.0281, in the (HEP, Yes) cell.
#[test]
fn published_table_5_gives_table_6() {
    let t = group_by_mif(&paper_table(TABLE5));
    assert_eq!(t.rows(), vec![vec![6.0, 6.0], vec![3.0, 5.0]]);
    assert_eq!(t.row_totals().as_slice(), [12.0, 8.0]);
    assert_eq!(t.column_totals().as_slice(), [9.0, 11.0]);
    assert_eq!(t.n(), 20);
    assert_eq!(
        (t.row_levels(), t.column_levels()),
        (
            &["1".to_owned(), "0".to_owned()][..],
            &["1".to_owned(), "0".to_owned()][..]
        )
    );
    let residual = t.rounding_residual().unwrap();
    assert!(
        relative_difference(residual, 0.0281) < REFERENCE_RELATIVE,
        "residual {residual}"
    );
    assert!(residual < MAX_COUNT_ROUNDING);
}

/// The raw Table 2 gives the same table with no rounding at all.
#[test]
fn raw_table_2_gives_table_6_exactly() {
    let t = group_by_mif(&paper_table(TABLE2));
    assert_eq!(t.rows(), vec![vec![6.0, 6.0], vec![3.0, 5.0]]);
    assert_eq!(t.rounding_residual(), Some(0.0));
}

/// Table 6 = [[6, 6], [3, 5]]:
/// `scipy.stats.chi2_contingency(table6, correction=False)`: chi2 = 0.3030303030303028,
/// p = 0.5819889000572429, dof = 1; `correction=True` (R's `chisq.test` default):
/// chi2 = 0.008417508417508383, p = 0.9268990697886138.
/// `Table2x2(table6)`: oddsratio = 1.6666666666666667, oddsratio_confint(0.05) =
/// (0.268796270053642, 10.33413810847685), log_oddsratio_se = 0.9309493362512627;
/// riskratio = 1.3333333333333333, riskratio_confint(0.05) =
/// (0.46263380409616167, 3.8427321177945175), log_riskratio_se = 0.5400617248673217.
fn check_table_6_analysis(a: &Association, label: &str) {
    let close = |x: f64, y: f64, what: &str| {
        assert!(
            relative_difference(x, y) < REFERENCE_RELATIVE,
            "{label}: {what} {x} vs {y}"
        );
    };
    close(a.chi_square(), 0.3030303030303028, "χ²");
    close(a.p_value(), 0.5819889000572429, "p");
    assert_eq!(a.pearson().df(), 1);
    let yates = a.yates().unwrap();
    close(yates.statistic(), 0.008417508417508383, "Yates χ²");
    close(yates.p_value(), 0.9268990697886138, "Yates p");
    let or = a.odds_ratio().unwrap();
    close(or.estimate(), 1.6666666666666667, "OR");
    close(or.ci_low(), 0.268796270053642, "OR low");
    close(or.ci_high(), 10.33413810847685, "OR high");
    close(or.log_std_error(), 0.9309493362512627, "SE log OR");
    let rr = a.relative_risk().unwrap();
    close(rr.estimate(), 1.3333333333333333, "RR");
    close(rr.ci_low(), 0.46263380409616167, "RR low");
    close(rr.ci_high(), 3.8427321177945175, "RR high");
    close(rr.log_std_error(), 0.5400617248673217, "SE log RR");
    assert!(!or.zero_cell_shift() && !rr.zero_cell_shift());
}

#[test]
fn masked_and_raw_tables_give_the_reference_association() {
    let released = group_by_mif(&paper_table(TABLE5)).association().unwrap();
    let raw = group_by_mif(&paper_table(TABLE2)).association().unwrap();
    check_table_6_analysis(&released, "Table 5");
    check_table_6_analysis(&raw, "Table 2");
    assert_eq!(released, raw);
}

/// Group (LTP first) × Age band (< 55, 55–69, ≥ 70 as reference) from indicator columns
/// (Remark 1): [[3, 5, 4], [3, 3, 2]]. Reference:
/// `scipy.stats.chi2_contingency(rc, correction=False)`: chi2 = 0.3819444444444445,
/// p = 0.8261555365973694, dof = 2.
#[test]
fn r_by_c_table_from_masked_dummies() {
    let raw = paper_table(TABLE2);
    let age = raw.column("Age").unwrap();
    let young: Vec<f64> = age.iter().map(|&a| f64::from(u8::from(a < 55.0))).collect();
    let middle: Vec<f64> = age
        .iter()
        .map(|&a| f64::from(u8::from((55.0..70.0).contains(&a))))
        .collect();
    let columns = vec![
        (
            "Group".to_owned(),
            raw.column("Group").unwrap().as_slice().to_vec(),
        ),
        ("young".to_owned(), young),
        ("middle".to_owned(), middle),
    ];
    let dummies = Dataset::from_columns(columns).unwrap();

    // Any orthogonal mask preserves the cross-products; `A·1ₙ = 1ₙ` is not needed.
    let haar = HaarOrthogonal::keyed(20, Key::teaching(11).stream(StreamId::Scratch(3))).unwrap();
    let mut scrambled = dummies.values().clone();
    haar.left_apply(&mut scrambled).unwrap();
    let scrambled = Dataset::new(dummies.names().to_vec(), scrambled).unwrap();

    let expected = DMatrix::from_row_slice(2, 3, &[3.0, 5.0, 4.0, 3.0, 3.0, 2.0]);
    for data in [&dummies, &mask_rows(&dummies, 540, 0), &scrambled] {
        let group = Factor::binary("Group", data.column("Group").unwrap().as_slice()).unwrap();
        let bands = Factor::with_reference(
            "Age band",
            vec!["<55".into(), "55-69".into()],
            data.select(&["young", "middle"]).unwrap().values().clone(),
            ">=70",
        )
        .unwrap();
        let t = ContingencyTable::new(&group, &bands, CountRounding::ToIntegers).unwrap();
        assert_eq!(t.counts(), &expected);
        // Cross-products are preserved relative to their scale, the counts' total n.
        let scale = t.n() as f64;
        assert!(t.rounding_residual().unwrap() < PRESERVED_STATISTICS * scale);
        assert_eq!(t.column_levels(), ["<55", "55-69", ">=70"]);
        let a = t.association().unwrap();
        assert!(relative_difference(a.chi_square(), 0.3819444444444445) < REFERENCE_RELATIVE);
        assert!(relative_difference(a.p_value(), 0.8261555365973694) < REFERENCE_RELATIVE);
        assert_eq!(a.pearson().df(), 2);
        assert!(a.odds_ratio().is_none());

        // Unrounded, the cross-products themselves are within rounding error of the counts.
        let real = ContingencyTable::new(&group, &bands, CountRounding::Keep).unwrap();
        assert!((real.counts() - &expected).amax() < PRESERVED_STATISTICS * scale);
        assert_eq!(real.rounding_residual(), None);
    }
}
