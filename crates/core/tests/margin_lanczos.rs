//! The cheap condition (3.5) margin agrees with a dense eigen-decomposition.
//!
//! `λ_min(X₂X₂ᵀ)` by Lanczos on `v ↦ X₂(X₂ᵀv)` (`linalg::lanczos`) against the eigenvalues of the
//! formed `m × m` Gram matrix, on the shapes the protocol produces (Gaussian padding, `m` from 5 to
//! 400, `γ = p₂/m` from 1.05 to 3, where `γ → 1` makes `X₂X₂ᵀ` ill-conditioned: condition number
//! `((√γ + 1)/(√γ − 1))² ≈ 6 700` at γ = 1.05) and on an explicitly ill-conditioned `X₂`
//! (singular values spread over six orders of magnitude, Gram condition number 10¹²).
//!
//! Every estimate must (a) be a lower value: `lower ≤ λ_dense` up to the dense method's own
//! rounding, (b) agree with the dense value to [`AGREES`] relative plus the rounding floor — or,
//! when stopped against a threshold, to `DECISION_SHARE` of the distance to it — and (c) keep
//! `lower ≤ ritz` (the guard). The checks can fail: the Ritz value of a truncated run overstates
//! `λ_min` and is rejected by (a) (`the_check_rejects_an_unconverged_ritz_value`).

use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::linalg::lanczos::{
    DECISION_SHARE, DENSE_MAX_ROWS, GramMethod, RESIDUAL_RELATIVE, dense_smallest_gram_eigenvalue,
    lanczos_smallest_gram_eigenvalue, smallest_gram_difference_eigenvalue,
    smallest_gram_eigenvalue,
};
use orthomask_core::protocol::design::condition_3_5_margin;
use orthomask_core::random::fill_standard_normal;
use orthomask_core::tolerance::BOUND_ROUNDING;

/// Relative agreement with the dense value: the stopping rule's `RESIDUAL_RELATIVE` bounds the
/// Lanczos error; the factor 10 leaves room for the dense method's own relative error on
/// well-conditioned matrices.
const AGREES: f64 = 10.0 * RESIDUAL_RELATIVE;

/// Absolute rounding floor in units of `ε_mach·λ_max(X₂X₂ᵀ)·m`: neither method resolves an
/// eigenvalue below the rounding level of the matrix (a few `ε_mach·‖A‖` times a modest power of
/// the dimension for a backward-stable dense solver).
const FLOOR: f64 = 1e4;

fn gaussian(rows: usize, cols: usize, seed: u64) -> DMatrix<f64> {
    let mut values = vec![0.0; rows * cols];
    fill_standard_normal(
        &mut Key::teaching(seed).stream(StreamId::Scratch(seed)).rng(),
        &mut values,
    );
    DMatrix::from_vec(rows, cols, values)
}

/// `U diag(s) Wᵀ` with Haar-like `U`, `W` from QR of Gaussian matrices and singular values
/// geometric from 1 down to `smallest`.
fn ill_conditioned(rows: usize, cols: usize, smallest: f64, seed: u64) -> DMatrix<f64> {
    let u = gaussian(rows, rows, seed).qr().q();
    let w = gaussian(cols, rows, seed + 1).qr().q();
    let s = DMatrix::from_fn(rows, rows, |i, j| {
        if i == j {
            smallest.powf(i as f64 / (rows - 1) as f64)
        } else {
            0.0
        }
    });
    u * s * w.transpose()
}

fn largest_gram_eigenvalue(x: &DMatrix<f64>) -> f64 {
    x.tr_mul(x)
        .symmetric_eigenvalues()
        .iter()
        .copied()
        .fold(0.0, f64::max)
}

/// (a)–(c) of the module documentation for one estimate, stopped against `threshold` if given.
fn check(label: &str, x: &DMatrix<f64>, lower: f64, ritz: f64, threshold: Option<f64>) {
    let exact = dense_smallest_gram_eigenvalue(x);
    let floor = FLOOR * f64::EPSILON * largest_gram_eigenvalue(x) * x.nrows() as f64;
    let decided = threshold.map_or(0.0, |t| DECISION_SHARE * (exact - t).abs());
    let slack = (AGREES * exact.abs()).max(1.01 * decided) + floor;
    assert!(
        lower <= ritz,
        "{label}: guard {lower} above Ritz value {ritz}"
    );
    assert!(
        lower <= exact + floor,
        "{label}: reported {lower} above λ_min = {exact}"
    );
    assert!(
        (lower - exact).abs() <= slack,
        "{label}: reported {lower}, dense {exact}, allowed {slack}"
    );
    if let Some(t) = threshold {
        assert_eq!(
            lower > t,
            exact > t,
            "{label}: comparison with {t} not decided"
        );
    }
}

#[test]
fn lanczos_agrees_with_the_dense_eigenvalue_on_protocol_shapes() {
    for (m, gamma) in [
        (5, 3.0),
        (12, 1.05),
        (40, 2.0),
        (64, 1.05),
        (100, 1.5),
        (150, 3.0),
        (250, 1.2),
        (400, 1.05),
        (400, 2.0),
    ] {
        let p2 = (gamma * m as f64).ceil() as usize;
        let x2 = gaussian(m, p2, (m * 10 + p2) as u64).map(|v| 500.0 * v);
        let label = format!("m = {m}, p2 = {p2}");
        let Some(estimate) = lanczos_smallest_gram_eigenvalue(&x2, None) else {
            panic!("{label}: Lanczos did not converge")
        };
        check(&label, &x2, estimate.lower, estimate.ritz, None);
        // Thresholds far below, just below and just above λ_min: the comparison is decided.
        let exact = dense_smallest_gram_eigenvalue(&x2);
        for t in [0.05 * exact, 0.999 * exact, 1.001 * exact] {
            let Some(against) = lanczos_smallest_gram_eigenvalue(&x2, Some(t)) else {
                panic!("{label}: Lanczos against {t} did not converge")
            };
            check(&label, &x2, against.lower, against.ritz, Some(t));
        }
        let chosen = smallest_gram_eigenvalue(&x2, None).unwrap();
        let expected = if m <= DENSE_MAX_ROWS {
            GramMethod::Dense
        } else {
            GramMethod::Lanczos
        };
        assert_eq!(chosen.method, expected, "{label}");
        check(
            &format!("{label} (dispatch)"),
            &x2,
            chosen.lower,
            chosen.ritz,
            None,
        );
    }
}

#[test]
fn lanczos_agrees_with_the_dense_eigenvalue_on_an_ill_conditioned_matrix() {
    for (m, p2) in [(60, 90), (300, 330)] {
        let x2 = ill_conditioned(m, p2, 1e-6, m as u64);
        let label = format!("ill-conditioned m = {m}, p2 = {p2}");
        let estimate = smallest_gram_eigenvalue(&x2, None).unwrap();
        check(&label, &x2, estimate.lower, estimate.ritz, None);
        // Lanczos alone either converges to a checked value or declines (the dispatcher then
        // falls back to the dense path); it never returns an unchecked value.
        if let Some(lanczos) = lanczos_smallest_gram_eigenvalue(&x2, None) {
            check(&label, &x2, lanczos.lower, lanczos.ritz, None);
        }
    }
}

/// The margin through `condition_3_5_margin` equals the dense ratio to `DECISION_SHARE` of its
/// distance to 1, from below, on the Lanczos path (above the dense threshold); for margins on
/// both sides of 1 the verdict is the dense one.
#[test]
fn margin_matches_the_dense_ratio() {
    let (m, p1, p2) = (300, 4, 420);
    assert!(m > DENSE_MAX_ROWS);
    let x1 = DMatrix::from_fn(m, p1, |i, j| ((i * 7 + j * 3) % 11) as f64 - 5.0);
    let noise = gaussian(m, p2, 77);
    let lambda_1 = largest_gram_eigenvalue(&x1);
    let unit = dense_smallest_gram_eigenvalue(&noise);
    // σ for margins 30, 1.002 and 0.998.
    for target in [30.0, 1.002, 0.998] {
        let x2 = &noise * (target * lambda_1 / unit).sqrt();
        let margin = condition_3_5_margin(&x1, &x2).unwrap();
        let dense = dense_smallest_gram_eigenvalue(&x2) / lambda_1;
        let allowed = 1.01 * DECISION_SHARE * (dense - 1.0).abs() + AGREES * dense;
        assert!(
            margin <= dense * (1.0 + BOUND_ROUNDING) && dense - margin <= allowed,
            "margin {margin}, dense {dense}, allowed {allowed}"
        );
        assert_eq!(margin > 1.0, dense > 1.0, "verdict for margin {dense}");
    }
}

/// Power of the checks: a Ritz value after a few products (the Krylov space of a handful of
/// vectors) lies far above `λ_min` and check (a) rejects it.
#[test]
fn the_check_rejects_an_unconverged_ritz_value() {
    let x2 = gaussian(200, 300, 5);
    let exact = dense_smallest_gram_eigenvalue(&x2);
    // The Rayleigh quotient of one fixed vector is a (very) unconverged Ritz value.
    let v = DMatrix::from_fn(200, 1, |i, _| ((i * 17) % 7) as f64 - 3.0);
    let xv = x2.transpose() * &v;
    let rayleigh = xv.norm_squared() / v.norm_squared();
    let floor = FLOOR * f64::EPSILON * largest_gram_eigenvalue(&x2) * 200.0;
    assert!(rayleigh > exact + floor + AGREES * exact);
}

/// The collector's padding check: `λ_min(Z Zᵀ − L Lᵀ)` with `Z = [L₀, Y] W` (`W` orthogonal, the
/// right mask) and `L = Z W[:, :l]` the leading columns recovered, is `λ_min(Y Yᵀ)` of the padding
/// `Y` — computed without unmasking it, on the dense path and on the Lanczos path, and decided
/// against thresholds on both sides.
#[test]
fn the_gram_difference_is_the_padding_blocks_gram() {
    for (m, l, p2) in [(12, 3, 460), (40, 5, 90), (300, 4, 700)] {
        let leading = gaussian(m, l, (m + l) as u64);
        let padding = gaussian(m, p2, (m * 3 + p2) as u64).map(|v| 0.2 * v);
        let w = gaussian(l + p2, l + p2, 91).qr().q();
        let mut record = DMatrix::zeros(m, l + p2);
        record.columns_mut(0, l).copy_from(&leading);
        record.columns_mut(l, p2).copy_from(&padding);
        let z = &record * &w;
        let recovered = &z * w.transpose().columns(0, l);
        let label = format!("m = {m}, l = {l}, p2 = {p2}");
        let estimate = smallest_gram_difference_eigenvalue(&z, &recovered, None).unwrap();
        let expected = if m <= DENSE_MAX_ROWS {
            GramMethod::Dense
        } else {
            GramMethod::Lanczos
        };
        assert_eq!(estimate.method, expected, "{label}");
        check(&label, &padding, estimate.lower, estimate.ritz, None);
        let exact = dense_smallest_gram_eigenvalue(&padding);
        for t in [0.5 * exact, 1.01 * exact] {
            let against = smallest_gram_difference_eigenvalue(&z, &recovered, Some(t)).unwrap();
            check(&label, &padding, against.lower, against.ritz, Some(t));
        }
    }
    // Fewer padding columns than rows: singular by shape; mismatched rows or NaN: no answer.
    let z = gaussian(10, 12, 3);
    let l = z.columns(0, 3).into_owned();
    assert_eq!(
        smallest_gram_difference_eigenvalue(&z, &l, None)
            .unwrap()
            .method,
        GramMethod::RankDeficient
    );
    assert!(smallest_gram_difference_eigenvalue(&z, &gaussian(9, 3, 4), None).is_none());
    let mut nan = l.clone();
    nan[(0, 0)] = f64::NAN;
    assert!(smallest_gram_difference_eigenvalue(&z, &nan, None).is_none());
}
