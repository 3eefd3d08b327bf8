//! The sweep operator on a symmetric cross-product matrix (Beaton 1964; the algorithm seed 001
//! §3.1 names for regression from a shared covariance matrix).
//!
//! # Formula
//! Sweeping pivot `k` of a symmetric matrix `A` with `d = A_kk`:
//!
//! `A_kk ← −1/d`, `A_ik ← A_ik/d`, `A_kj ← A_kj/d`, `A_ij ← A_ij − A_ik A_kj / d` (i, j ≠ k).
//!
//! After sweeping the pivots `S` of `[[A_SS, A_Sy], [A_yS, A_yy]]` (Goodnight 1979, "A tutorial on
//! the SWEEP operator", Am. Stat. 33(3)): the `S, S` block is `−A_SS⁻¹`, the `S, y` block is
//! `A_SS⁻¹A_Sy` (regression coefficients) and the `y, y` block is `A_yy − A_yS A_SS⁻¹ A_Sy`
//! (residual cross-products).
//!
//! # Conditions
//! Just before pivot `k` is swept, `A_kk / A_kk(original)` is the share of column `k`'s (centred
//! or raw) sum of squares not explained by the pivots already swept, `1 − R²_k`. A pivot whose
//! share is at most [`COLLINEARITY`] is *aliased* and is not
//! swept: the caller decides whether that is an error (a regression) or a column to skip (a
//! screening check).

use crate::tolerance::COLLINEARITY;
use nalgebra::DMatrix;

/// Errors of the sweep operator.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SweepError {
    /// The matrix is not square.
    #[error("the sweep operator needs a square matrix; got {rows}×{cols}")]
    NotSquare {
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
    },
    /// The matrix contains NaN or an infinity.
    #[error("the cross-product matrix contains a non-finite value")]
    NonFinite,
    /// The pivot is out of range or already swept.
    #[error("pivot {pivot} is out of range or already swept")]
    BadPivot {
        /// The pivot.
        pivot: usize,
    },
    /// The pivot is (numerically) a linear combination of the pivots already swept.
    #[error(
        "pivot {pivot} is a linear combination of the pivots already swept: only {share:.2e} of \
         its sum of squares is left (variance inflation factor above 1/{share:.2e})"
    )]
    Aliased {
        /// The pivot.
        pivot: usize,
        /// `1 − R²` of the pivot on the pivots already swept (0 or negative for a column with no
        /// variation).
        share: f64,
    },
}

/// A symmetric matrix being swept.
#[derive(Clone, Debug)]
pub struct Sweep {
    matrix: DMatrix<f64>,
    original_diagonal: Vec<f64>,
    swept: Vec<bool>,
}

impl Sweep {
    /// Start from a square, finite matrix (symmetry is the caller's promise).
    ///
    /// # Errors
    /// [`SweepError::NotSquare`] or [`SweepError::NonFinite`].
    pub fn new(matrix: DMatrix<f64>) -> Result<Self, SweepError> {
        let (rows, cols) = matrix.shape();
        if rows != cols {
            return Err(SweepError::NotSquare { rows, cols });
        }
        if matrix.iter().any(|v| !v.is_finite()) {
            return Err(SweepError::NonFinite);
        }
        let original_diagonal = matrix.diagonal().iter().copied().collect();
        Ok(Self {
            matrix,
            original_diagonal,
            swept: vec![false; rows],
        })
    }

    /// Sweep pivot `k` (see the [module documentation](self)).
    ///
    /// # Errors
    /// [`SweepError::BadPivot`], or [`SweepError::Aliased`] (the matrix is left unchanged).
    pub fn sweep(&mut self, k: usize) -> Result<(), SweepError> {
        if k >= self.swept.len() || self.swept[k] {
            return Err(SweepError::BadPivot { pivot: k });
        }
        let d = self.matrix[(k, k)];
        let original = self.original_diagonal[k];
        let share = if original > 0.0 { d / original } else { 0.0 };
        if share.is_nan() || share <= COLLINEARITY {
            return Err(SweepError::Aliased { pivot: k, share });
        }
        let size = self.matrix.nrows();
        let pivot_row: Vec<f64> = (0..size).map(|j| self.matrix[(k, j)]).collect();
        for i in 0..size {
            if i == k {
                continue;
            }
            let factor = self.matrix[(i, k)] / d;
            for (j, &akj) in pivot_row.iter().enumerate() {
                if j != k {
                    self.matrix[(i, j)] -= factor * akj;
                }
            }
        }
        for j in 0..size {
            if j != k {
                self.matrix[(k, j)] /= d;
                self.matrix[(j, k)] /= d;
            }
        }
        self.matrix[(k, k)] = -1.0 / d;
        self.swept[k] = true;
        Ok(())
    }

    /// The swept matrix.
    pub fn matrix(&self) -> &DMatrix<f64> {
        &self.matrix
    }

    /// Whether pivot `k` has been swept.
    pub fn is_swept(&self, k: usize) -> bool {
        self.swept.get(k).copied().unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::HAND_COMPUTED;

    /// Centred cross-products of x = (1, 2, 3), y = (1, 3, 2): [[2, 1], [1, 2]].
    /// Sweeping x: −1/2, β = 1/2, residual = 2 − 1·1/2 = 3/2.
    #[test]
    fn one_pivot_by_hand() {
        let mut s = Sweep::new(DMatrix::from_row_slice(2, 2, &[2.0, 1.0, 1.0, 2.0])).unwrap();
        s.sweep(0).unwrap();
        let m = s.matrix();
        assert!((m[(0, 0)] + 0.5).abs() < HAND_COMPUTED);
        assert!((m[(0, 1)] - 0.5).abs() < HAND_COMPUTED);
        assert!((m[(1, 1)] - 1.5).abs() < HAND_COMPUTED);
        assert!(s.is_swept(0) && !s.is_swept(1));
        assert_eq!(s.sweep(0), Err(SweepError::BadPivot { pivot: 0 }));
    }

    #[test]
    fn sweeping_all_pivots_gives_minus_the_inverse() {
        let a = DMatrix::from_row_slice(3, 3, &[4.0, 1.0, 0.5, 1.0, 3.0, -1.0, 0.5, -1.0, 2.0]);
        let mut s = Sweep::new(a.clone()).unwrap();
        for k in 0..3 {
            s.sweep(k).unwrap();
        }
        let product = -(s.matrix() * &a);
        assert!((product - DMatrix::identity(3, 3)).amax() < HAND_COMPUTED);
    }

    #[test]
    fn aliased_pivot_is_refused() {
        // Column 1 = 2 × column 0: [[1, 2], [2, 4]].
        let mut s = Sweep::new(DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 4.0])).unwrap();
        s.sweep(0).unwrap();
        assert!(matches!(
            s.sweep(1),
            Err(SweepError::Aliased { pivot: 1, .. })
        ));
        assert_eq!(
            Sweep::new(DMatrix::zeros(2, 3)).unwrap_err(),
            SweepError::NotSquare { rows: 2, cols: 3 }
        );
    }
}
