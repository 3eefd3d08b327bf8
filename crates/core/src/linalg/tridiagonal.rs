//! The smallest eigenpair of a symmetric tridiagonal matrix, for the Lanczos iteration.
//!
//! # Method
//! * **Eigenvalue** by bisection on Sturm counts (Golub & Van Loan, *Matrix Computations*, 4th
//!   ed., §8.4.1): the number of negative pivots of the `LDLᵀ` factorisation of `T − xI`,
//!   `d₀ = a₀ − x`, `dᵢ = aᵢ − x − bᵢ₋₁²/dᵢ₋₁`, is the number of eigenvalues below `x`. Starting
//!   from the Gershgorin interval, bisection halves the bracket of the smallest eigenvalue until it
//!   is a few ulps wide: the result is accurate to `O(ε_mach·‖T‖)` (Demmel, *Applied Numerical
//!   Linear Algebra*, §5.3.4).
//! * **Eigenvector** by inverse iteration (Golub & Van Loan §8.2.2) with a tridiagonal LU with
//!   partial pivoting (LAPACK's `dgttrf`/`dgttrs` scheme); two steps from a fixed start suffice
//!   because the shift is the eigenvalue to working accuracy.
//!
//! Cost `O(k)` per Sturm count and per solve: the Lanczos iteration can test convergence after
//! every step for a negligible fraction of one product with its operator.

/// Bisection stops when the bracket is this many `ε_mach` of its larger end wide.
const BRACKET_ULPS: f64 = 4.0;

/// Inverse-iteration steps.
const INVERSE_STEPS: usize = 2;

/// Gershgorin bounds `(lo, hi)` on the eigenvalues of the tridiagonal matrix with diagonal `a`
/// and off-diagonal `b` (`b.len() = a.len() − 1`).
pub fn gershgorin(a: &[f64], b: &[f64]) -> (f64, f64) {
    let radius = |i: usize| {
        let left = if i > 0 { b[i - 1].abs() } else { 0.0 };
        let right = if i < b.len() { b[i].abs() } else { 0.0 };
        left + right
    };
    a.iter()
        .enumerate()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (i, &ai)| {
            (lo.min(ai - radius(i)), hi.max(ai + radius(i)))
        })
}

/// Number of eigenvalues strictly below `x` (Sturm count; a zero pivot is perturbed to a tiny
/// negative number, the usual convention, which counts an eigenvalue at `x` as below).
fn count_below(a: &[f64], b: &[f64], x: f64, tiny: f64) -> usize {
    let mut count = 0;
    let mut d = 1.0;
    for (i, &ai) in a.iter().enumerate() {
        let coupling = if i > 0 { b[i - 1] * b[i - 1] / d } else { 0.0 };
        d = ai - x - coupling;
        if d == 0.0 {
            d = -tiny;
        }
        if d < 0.0 {
            count += 1;
        }
    }
    count
}

/// The smallest eigenvalue and a unit eigenvector of the symmetric tridiagonal matrix with
/// diagonal `a` and off-diagonal `b`.
///
/// # Panics
/// When `a` is empty or `b.len() + 1 != a.len()` (a programming error inside the crate).
pub fn smallest_eigenpair(a: &[f64], b: &[f64]) -> (f64, Vec<f64>) {
    assert!(
        !a.is_empty() && b.len() + 1 == a.len(),
        "tridiagonal: {} diagonal and {} off-diagonal entries",
        a.len(),
        b.len()
    );
    let (mut lo, mut hi) = gershgorin(a, b);
    let norm = lo.abs().max(hi.abs()).max(f64::MIN_POSITIVE);
    let tiny = f64::EPSILON * norm;
    // Invariant: no eigenvalue below lo, at least one below or at hi.
    hi += tiny;
    lo -= tiny;
    while hi - lo > BRACKET_ULPS * f64::EPSILON * lo.abs().max(hi.abs()) + f64::MIN_POSITIVE {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if count_below(a, b, mid, tiny) >= 1 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let value = 0.5 * (lo + hi);
    (value, inverse_iteration(a, b, value, tiny))
}

/// A unit vector `s` with `(T − θI)s ≈ 0`, by inverse iteration from a fixed start.
fn inverse_iteration(a: &[f64], b: &[f64], theta: f64, tiny: f64) -> Vec<f64> {
    let k = a.len();
    let factors = PivotedLu::new(a, b, theta, tiny);
    // A start with no special structure (all ones can be orthogonal to an eigenvector of a
    // symmetric pattern).
    let mut s: Vec<f64> = (0..k)
        .map(|i| 1.0 + 0.5 * ((i * 7919) % 13) as f64 / 13.0)
        .collect();
    for _ in 0..INVERSE_STEPS {
        factors.solve(&mut s);
        let norm = s.iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm.is_finite() && norm > 0.0 {
            s.iter_mut().for_each(|v| *v /= norm);
        } else {
            // The solve overflowed: the shift is an eigenvalue to full precision and the
            // previous iterate already is the eigenvector.
            break;
        }
    }
    s
}

/// `T − θI = P L U` for a tridiagonal `T`, with row interchanges (LAPACK `dgttrf`).
struct PivotedLu {
    /// Diagonal of `U`.
    d: Vec<f64>,
    /// First superdiagonal of `U`.
    du: Vec<f64>,
    /// Second superdiagonal of `U` (from interchanges).
    du2: Vec<f64>,
    /// Multipliers of `L`.
    dl: Vec<f64>,
    /// Whether rows `i` and `i + 1` were interchanged.
    swapped: Vec<bool>,
}

impl PivotedLu {
    fn new(a: &[f64], b: &[f64], theta: f64, tiny: f64) -> Self {
        let k = a.len();
        let mut d: Vec<f64> = a.iter().map(|ai| ai - theta).collect();
        let mut du = b.to_vec();
        let mut dl = b.to_vec();
        let mut du2 = vec![0.0; k.saturating_sub(2)];
        let mut swapped = vec![false; k.saturating_sub(1)];
        for i in 0..k.saturating_sub(1) {
            if d[i].abs() >= dl[i].abs() {
                if d[i] == 0.0 {
                    d[i] = tiny;
                }
                let fact = dl[i] / d[i];
                dl[i] = fact;
                d[i + 1] -= fact * du[i];
            } else {
                let fact = d[i] / dl[i];
                d[i] = dl[i];
                dl[i] = fact;
                let temp = du[i];
                du[i] = d[i + 1];
                d[i + 1] = temp - fact * d[i + 1];
                if i + 2 < k {
                    du2[i] = du[i + 1];
                    du[i + 1] *= -fact;
                }
                swapped[i] = true;
            }
        }
        if d[k - 1] == 0.0 {
            d[k - 1] = tiny;
        }
        Self {
            d,
            du,
            du2,
            dl,
            swapped,
        }
    }

    /// `x ← (T − θI)⁻¹ x`.
    fn solve(&self, x: &mut [f64]) {
        let k = x.len();
        for i in 0..k.saturating_sub(1) {
            if self.swapped[i] {
                let temp = x[i];
                x[i] = x[i + 1];
                x[i + 1] = temp - self.dl[i] * x[i];
            } else {
                x[i + 1] -= self.dl[i] * x[i];
            }
        }
        for i in (0..k).rev() {
            let mut v = x[i];
            if i + 1 < k {
                v -= self.du[i] * x[i + 1];
            }
            if i + 2 < k {
                v -= self.du2[i] * x[i + 2];
            }
            x[i] = v / self.d[i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{EIGENVECTOR_OVERLAP, ULPS_BELOW_TEN};
    use nalgebra::DMatrix;

    fn dense(a: &[f64], b: &[f64]) -> DMatrix<f64> {
        DMatrix::from_fn(a.len(), a.len(), |i, j| {
            if i == j {
                a[i]
            } else if i + 1 == j {
                b[i]
            } else if j + 1 == i {
                b[j]
            } else {
                0.0
            }
        })
    }

    /// By hand: the `k × k` matrix `tridiag(−1, 2, −1)` has eigenvalues
    /// `2 − 2cos(jπ/(k + 1))`, the smallest `2 − 2cos(π/(k + 1))`, with eigenvector
    /// `sin(iπ/(k + 1))`.
    #[test]
    fn second_difference_matrix_by_hand() {
        for k in [1, 2, 5, 40, 300] {
            let a = vec![2.0; k];
            let b = vec![-1.0; k - 1];
            let (value, vector) = smallest_eigenpair(&a, &b);
            let angle = std::f64::consts::PI / (k + 1) as f64;
            let expected = 2.0 - 2.0 * angle.cos();
            assert!(
                (value - expected).abs() < ULPS_BELOW_TEN,
                "k = {k}: {value} vs {expected}"
            );
            let exact: Vec<f64> = (1..=k).map(|i| (i as f64 * angle).sin()).collect();
            let norm = exact.iter().map(|v| v * v).sum::<f64>().sqrt();
            let overlap: f64 = exact.iter().zip(&vector).map(|(e, v)| e * v).sum::<f64>() / norm;
            assert!(
                (overlap.abs() - 1.0).abs() < EIGENVECTOR_OVERLAP,
                "k = {k}: overlap {overlap}"
            );
        }
    }

    /// Against a dense eigen-decomposition, including a matrix with eigenvalues spread over
    /// twelve orders of magnitude, and with the residual `‖T s − θ s‖` at rounding level.
    #[test]
    fn matches_dense_eigenvalues() {
        let k = 60;
        let cases = [
            (
                (0..k)
                    .map(|i| ((i * 37) % 11) as f64 - 3.0)
                    .collect::<Vec<_>>(),
                (0..k - 1)
                    .map(|i| ((i * 13) % 7) as f64 * 0.5 + 0.1)
                    .collect::<Vec<_>>(),
            ),
            (
                (0..k)
                    .map(|i| 10f64.powf(-12.0 + 12.0 * i as f64 / k as f64))
                    .collect(),
                (0..k - 1).map(|i| 1e-13 * (i % 3) as f64).collect(),
            ),
        ];
        for (a, b) in cases {
            let t = dense(&a, &b);
            let norm = t.abs().max();
            let smallest = t.symmetric_eigenvalues().min();
            let (value, vector) = smallest_eigenpair(&a, &b);
            assert!((value - smallest).abs() < 1e2 * f64::EPSILON * norm);
            let s = nalgebra::DVector::from_vec(vector);
            let residual = (&t * &s - &s * value).norm();
            assert!(residual < 1e2 * f64::EPSILON * norm, "residual {residual}");
        }
    }
}
