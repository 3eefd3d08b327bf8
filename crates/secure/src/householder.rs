//! Householder QR built from the core's reflectors, kept as the reflectors themselves.
//!
//! # Formula
//! Golub & Van Loan (1996), *Matrix Computations*, 3rd ed., §5.2.1 (the reference seed 001's
//! Appendix A cites): `H_{c−1} ⋯ H₁ H₀ M = R`, so `M = Q R` with `Q = H₀ H₁ ⋯ H_{c−1}` (n × n
//! orthogonal) and `R` upper triangular. `Q` is never formed: `Q·B` applies the reflectors in
//! reverse order to the columns of `B`, which is all the protocol needs (`O(n·c)` per column of
//! `B`, no `n × n` matrix).
//!
//! Without column pivoting `|r_kk|` is the length of the part of column `k` orthogonal to
//! columns `0 … k−1`, so `r_kk² / ‖m_k‖²` is the squared sine of the angle between column `k` and
//! the span of the earlier ones: the rank test of [`dependent_column`](HouseholderQr::dependent_column).

use nalgebra::DMatrix;
use orthomask_core::linalg::Reflector;

/// The Householder QR factorisation of an `n × c` matrix (`n ≥ c` for the uses here).
#[derive(Clone, Debug)]
pub(crate) struct HouseholderQr {
    rows: usize,
    reflectors: Vec<Reflector>,
    r_diagonal: Vec<f64>,
    column_norms: Vec<f64>,
}

impl HouseholderQr {
    /// Factorise `m`. Cost `O(n c²)`.
    pub(crate) fn new(m: &DMatrix<f64>) -> Self {
        let (rows, cols) = m.shape();
        let column_norms = (0..cols).map(|j| m.column(j).norm()).collect();
        let mut work = m.clone();
        let steps = cols.min(rows);
        let mut reflectors = Vec::with_capacity(steps);
        let mut r_diagonal = Vec::with_capacity(steps);
        for k in 0..steps {
            let data = work.as_mut_slice();
            let tail = data[k * rows + k..(k + 1) * rows].to_vec();
            let (h, alpha) = Reflector::annihilating(&tail, k);
            // Columns before k are already zero below row k−1, so only k.. need reflecting.
            for column in data.chunks_exact_mut(rows).skip(k) {
                h.apply_to_vector(column);
            }
            reflectors.push(h);
            r_diagonal.push(alpha);
        }
        Self {
            rows,
            reflectors,
            r_diagonal,
            column_norms,
        }
    }

    /// `B ← Q·B` for a block with `n` rows.
    pub(crate) fn apply_q(&self, block: &mut DMatrix<f64>) {
        debug_assert_eq!(block.nrows(), self.rows);
        for h in self.reflectors.iter().rev() {
            h.apply_to_columns(block);
        }
    }

    /// The first `c` columns of `Q`: an orthonormal basis of the column space when `m` has full
    /// column rank.
    pub(crate) fn thin_q(&self) -> DMatrix<f64> {
        let mut q = DMatrix::identity(self.rows, self.reflectors.len());
        self.apply_q(&mut q);
        q
    }

    /// Squared sine of each column against the span of the columns before it, `r_kk² / ‖m_k‖²`
    /// (0 for a zero column).
    pub(crate) fn squared_sines(&self) -> impl Iterator<Item = f64> + '_ {
        self.r_diagonal
            .iter()
            .zip(&self.column_norms)
            .map(
                |(r, norm)| {
                    if *norm > 0.0 { (r / norm).powi(2) } else { 0.0 }
                },
            )
    }

    /// The first column whose squared sine is at most `threshold` (linearly dependent on the
    /// columns before it, to that accuracy), with its squared sine.
    pub(crate) fn dependent_column(&self, threshold: f64) -> Option<(usize, f64)> {
        self.squared_sines()
            .enumerate()
            .find(|(_, s)| s.is_nan() || *s <= threshold)
    }

    /// Numerical rank: the number of columns not dependent on the ones before them.
    pub(crate) fn rank(&self, threshold: f64) -> usize {
        self.squared_sines().filter(|s| *s > threshold).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{COLLINEARITY, ORTHOGONALITY};

    fn block() -> DMatrix<f64> {
        DMatrix::from_fn(7, 3, |i, j| {
            ((i * 5 + j * 3) % 7) as f64 - 2.0 + 0.5 * j as f64
        })
    }

    #[test]
    fn thin_q_is_orthonormal_and_spans_the_columns() {
        let m = block();
        let qr = HouseholderQr::new(&m);
        let q = qr.thin_q();
        assert!((q.transpose() * &q - DMatrix::identity(3, 3)).amax() < ORTHOGONALITY);
        // Projection onto ran(Q) reproduces m.
        let residual = &m - &q * (q.transpose() * &m);
        assert!(residual.amax() < ORTHOGONALITY * m.amax());
        assert_eq!(qr.rank(COLLINEARITY), 3);
        assert!(qr.dependent_column(COLLINEARITY).is_none());
    }

    #[test]
    fn dependent_column_is_found() {
        let mut m = block();
        // Column 2 = column 0 − 2·column 1.
        let dependent = m.column(0) - m.column(1) * 2.0;
        m.set_column(2, &dependent);
        let qr = HouseholderQr::new(&m);
        let (column, share) = qr.dependent_column(COLLINEARITY).unwrap();
        assert_eq!(column, 2);
        assert!(share < COLLINEARITY);
        assert_eq!(qr.rank(COLLINEARITY), 2);
    }
}
