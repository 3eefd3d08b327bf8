//! Least squares on badly scaled and ill-conditioned designs against references computed here
//! in double-double arithmetic (about 32 significant digits).
//!
//! The reference solves the normal equations of the column-scaled design exactly enough: the
//! columns are scaled by powers of two (exact), `Z̃ᵀZ̃` and `Z̃ᵀy` are accumulated in
//! double-double from exact products (`mul_add`), and Gaussian elimination with partial pivoting
//! runs in double-double. Its error is about `κ(Z̃)²·10⁻³²·p`, at most `10⁻¹⁵` for the designs
//! here (`κ(Z̃) ≤ 2·10⁸`), so it is the exact least-squares solution of the given doubles to
//! double precision. The fit under test (column-equilibrated, column-pivoted Householder QR) is
//! then expected to be as accurate as the conditioning of the *scaled* design allows.

mod common;

use common::least_squares::{dataset, polynomial, reference, scaled_condition, spread, wiggle};
use nalgebra::DMatrix;
use orthomask_stats::design::Intercept;
use orthomask_stats::linear::LinearRegression;
use orthomask_stats::tolerance::{
    CONDITIONING_FACTOR, DROPPED_REMAINING_SHARE, SCALED_WELL_CONDITIONED, relative_difference,
};

/// Columns spread over 12 orders of magnitude (`x₁ ~ 10⁻⁶`, `x₂ ~ 1`, `x₃ ~ 10⁶`) in a
/// well-conditioned design: every coefficient and standard error agrees with the
/// double-double reference to [`SCALED_WELL_CONDITIONED`].
#[test]
fn twelve_orders_of_magnitude_cost_nothing() {
    let n = 50;
    let x1: Vec<f64> = (0..n).map(|i| 1e-6 * spread(i)).collect();
    let x2: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).cos()).collect();
    let x3: Vec<f64> = (0..n).map(|i| 1e6 * spread(3 * i + 1)).collect();
    let y: Vec<f64> = (0..n)
        .map(|i| 3.0 + 2e6 * x1[i] - 0.5 * x2[i] + 4e-6 * x3[i] + 0.1 * wiggle(i))
        .collect();
    let data = dataset(
        &["x1", "x2", "x3", "y"],
        vec![x1.clone(), x2.clone(), x3.clone(), y.clone()],
    );
    let fit = LinearRegression::fit(&data, "y", &["x1", "x2", "x3"], Intercept::Included).unwrap();
    let z = DMatrix::from_fn(n, 4, |i, j| match j {
        0 => 1.0,
        1 => x1[i],
        2 => x2[i],
        _ => x3[i],
    });
    assert!(scaled_condition(&z) < 10.0, "{}", scaled_condition(&z));
    let (beta, inverse_diagonal, rss) = reference(&z, &y);
    let sigma2 = rss / (n - 4) as f64;
    assert!(fit.aliased().is_empty());
    for (j, c) in fit.coefficients().iter().enumerate() {
        let se = (sigma2 * inverse_diagonal[j]).sqrt();
        assert!(
            relative_difference(c.estimate(), beta[j]) < SCALED_WELL_CONDITIONED,
            "{}: {} vs {}",
            c.name(),
            c.estimate(),
            beta[j]
        );
        assert!(
            relative_difference(c.std_error(), se) < SCALED_WELL_CONDITIONED,
            "{} SE: {} vs {se}",
            c.name(),
            c.std_error()
        );
    }
    assert!(
        relative_difference(fit.anova().residual().sum_of_squares(), rss) < SCALED_WELL_CONDITIONED
    );
}

/// Degree 5 on `[10⁶, 1.2·10⁶]`: the raw columns span 30 orders of magnitude and the scaled
/// design has condition number about 1.5·10⁸. The fit keeps every column and agrees with the
/// double-double reference to `CONDITIONING_FACTOR·κ·ε` normwise in the scaled coefficients
/// `β̃_j = β_j‖z_j‖` (the invariant measure: backward-stable QR loses about `log₁₀ κ` digits,
/// and the small residual keeps the `κ²` term of least-squares perturbation theory negligible).
#[test]
fn degree_five_polynomial_with_condition_number_1e8() {
    let n = 60;
    let (powers, y) = polynomial(n, 5, 2e5);
    let names = ["x1", "x2", "x3", "x4", "x5", "y"];
    let mut columns = powers.clone();
    columns.push(y.clone());
    let data = dataset(&names, columns);
    let fit = LinearRegression::fit(&data, "y", &names[..5], Intercept::Included).unwrap();
    let z = DMatrix::from_fn(n, 6, |i, j| if j == 0 { 1.0 } else { powers[j - 1][i] });
    let kappa = scaled_condition(&z);
    assert!(kappa > 5e7 && kappa < 2e9, "κ = {kappa:e}");
    assert!(fit.aliased().is_empty(), "{:?}", fit.aliased());
    let (beta, ..) = reference(&z, &y);
    let norms: Vec<f64> = z.column_iter().map(|c| c.norm()).collect();
    let (mut error, mut size) = (0.0f64, 0.0f64);
    for (j, c) in fit.coefficients().iter().enumerate() {
        error += ((c.estimate() - beta[j]) * norms[j]).powi(2);
        size += (beta[j] * norms[j]).powi(2);
    }
    let relative = (error / size).sqrt();
    let bound = CONDITIONING_FACTOR * kappa * f64::EPSILON;
    assert!(relative < bound, "relative error {relative:e} ≥ {bound:e}");
}

/// Degree 5 on `[10⁶, 1.05·10⁶]`: condition number about 10¹¹, beyond what double precision can
/// resolve to six digits. One power is dropped and named, and the fit of the others agrees with
/// the double-double reference on the kept columns.
#[test]
fn nearly_rank_deficient_polynomial_drops_a_column() {
    let n = 60;
    let (powers, y) = polynomial(n, 5, 5e4);
    let names = ["x1", "x2", "x3", "x4", "x5", "y"];
    let mut columns = powers.clone();
    columns.push(y.clone());
    let data = dataset(&names, columns);
    let fit = LinearRegression::fit(&data, "y", &names[..5], Intercept::Included).unwrap();
    let [dropped] = fit.aliased() else {
        panic!("one dropped column expected: {:?}", fit.aliased())
    };
    assert!(dropped.remaining_share() < DROPPED_REMAINING_SHARE);
    assert!(!dropped.collinear_with().is_empty());
    let message = dropped.to_string();
    assert!(
        message.starts_with(&format!("{} dropped: collinear with ", dropped.name())),
        "{message}"
    );
    let kept: Vec<usize> = std::iter::once(0)
        .chain((1..=5).filter(|&k| names[k - 1] != dropped.name()))
        .collect();
    let z = DMatrix::from_fn(n, kept.len(), |i, j| {
        if kept[j] == 0 {
            1.0
        } else {
            powers[kept[j] - 1][i]
        }
    });
    let kappa = scaled_condition(&z);
    let (beta, ..) = reference(&z, &y);
    let norms: Vec<f64> = z.column_iter().map(|c| c.norm()).collect();
    let (mut error, mut size) = (0.0f64, 0.0f64);
    for (j, c) in fit.coefficients().iter().enumerate() {
        error += ((c.estimate() - beta[j]) * norms[j]).powi(2);
        size += (beta[j] * norms[j]).powi(2);
    }
    let relative = (error / size).sqrt();
    assert!(
        relative < CONDITIONING_FACTOR * kappa * f64::EPSILON,
        "{relative:e}, κ = {kappa:e}"
    );
}
