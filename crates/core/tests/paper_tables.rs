//! The published numbers of Wu, Chen, Burr & Zhang (2017) (seed 003), regenerated exactly.

use nalgebra::DMatrix;
use orthomask_core::mask::{DenseInvertible, Mask};
use orthomask_core::random::MatlabTwister;

/// Parse one of the paper tables in `data/paper/` (header row, comma-separated numbers).
fn table(text: &str) -> DMatrix<f64> {
    let rows: Vec<Vec<f64>> = text
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').map(|c| c.trim().parse().unwrap()).collect())
        .collect();
    DMatrix::from_fn(rows.len(), rows[0].len(), |i, j| rows[i][j])
}

/// Round half away from zero to `decimals` places, as the paper's tables are printed.
fn round(x: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (x * scale).round() / scale
}

const TABLE2: &str = include_str!("../../../data/paper/leaps_table2.csv");
const TABLE3: &str = include_str!("../../../data/paper/leaps_table3_xb1.csv");
const B1_EQ1: &str = include_str!("../../../data/paper/b1_eq1.csv");

/// Eq. (1): `rng(535); B1 = rand(9, 9)` printed to four decimals.
#[test]
fn matlab_rand_from_key_535_is_b1_of_equation_1() {
    let b1 = DenseInvertible::uniform_entries(9, &mut MatlabTwister::new(535)).unwrap();
    let printed = table(B1_EQ1);
    for i in 0..9 {
        for j in 0..9 {
            assert_eq!(
                round(b1.matrix()[(i, j)], 4),
                printed[(i, j)],
                "entry ({}, {})",
                i + 1,
                j + 1
            );
        }
    }
}

/// Eq. (2): the same stream read as an 8×8 matrix is `A₀` of the second method.
#[test]
fn matlab_rand_from_key_535_is_a0_of_equation_2() {
    let a0 = DenseInvertible::uniform_entries(8, &mut MatlabTwister::new(535)).unwrap();
    // First row and last column of eq. (2).
    let first_row = [
        0.3622, 0.8146, 0.6877, 0.5300, 0.6252, 0.1891, 0.6139, 0.3486,
    ];
    let last_column = [
        0.3486, 0.8303, 0.0578, 0.6275, 0.8318, 0.8877, 0.8043, 0.9711,
    ];
    for j in 0..8 {
        assert_eq!(round(a0.matrix()[(0, j)], 4), first_row[j]);
        assert_eq!(round(a0.matrix()[(j, 7)], 4), last_column[j]);
    }
}

/// Table 3 = Table 2 · B₁, to every printed decimal.
#[test]
fn table_3_is_table_2_times_b1() {
    let x = table(TABLE2);
    let expected = table(TABLE3);
    let b1 = DenseInvertible::uniform_entries(9, &mut MatlabTwister::new(535)).unwrap();
    let mut xb = x.clone();
    b1.right_apply(&mut xb).unwrap();
    for i in 0..20 {
        for j in 0..9 {
            assert_eq!(
                round(xb[(i, j)], 2),
                expected[(i, j)],
                "row {}, column {}",
                i + 1,
                j + 1
            );
        }
    }
}

/// The provider's view of the paper's first-method example (Table 3 at full precision) has
/// p = 9 < n = 20, and the Appendix A attack of seed 000 finds every binary column of Table 2
/// (Response, Group, IH, MIF) among a handful of candidates.
#[test]
fn appendix_a_attack_on_the_papers_first_method_view() {
    use orthomask_core::attack::{Consistent, appendix_a_attack};
    use orthomask_core::tolerance::BINARY_FULL_PRECISION;
    let x = table(TABLE2);
    let b1 = DenseInvertible::uniform_entries(9, &mut MatlabTwister::new(535)).unwrap();
    let mut xb = x.clone();
    b1.right_apply(&mut xb).unwrap();
    let outcome = appendix_a_attack(&xb, BINARY_FULL_PRECISION, 1_000_000).unwrap();
    assert_eq!(outcome.constraints, 11);
    let Consistent::Listed(candidates) = &outcome.consistent else {
        panic!("expected a finite list")
    };
    for column in [0, 1, 5, 6] {
        let truth: Vec<u8> = x.column(column).iter().map(|&v| v as u8).collect();
        assert!(
            outcome.is_candidate(&truth),
            "binary column {column} not found"
        );
    }
    // The candidates are few compared with the 2²⁰ vectors a safe design leaves open.
    assert!(candidates.len() < 64, "{} candidates", candidates.len());
}
