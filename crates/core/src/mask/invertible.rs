//! General invertible masks: `B₁` of the first TM² method and `A₀` of the second (seed 003 §3.1,
//! §3.3), e.g. with i.i.d. U(0, 1) entries as in eq. (1) and eq. (2) of seed 003.
//!
//! Seed 000 §2 explains why the default protocol does not use them: there is no uniform
//! distribution on invertible matrices, so the posterior of the data given the masked data leaks
//! beyond the support restriction. They remain for reproducing the papers and for `A₀`.

use super::{Mask, MaskError, check_dim};
use crate::random::{UnitUniform, uniform_matrix};
use nalgebra::DMatrix;

/// Above this 1-norm condition number an "invertible" mask loses more than about four of the
/// sixteen significant digits on the way back, which the 1e-10 preservation promise cannot afford.
const MAX_CONDITION: f64 = 1e12;

/// A stored invertible `d × d` matrix with its inverse.
#[derive(Clone, Debug, PartialEq)]
pub struct DenseInvertible {
    matrix: DMatrix<f64>,
    inverse: DMatrix<f64>,
}

fn one_norm(m: &DMatrix<f64>) -> f64 {
    m.column_iter()
        .map(|c| c.iter().map(|v| v.abs()).sum::<f64>())
        .fold(0.0, f64::max)
}

impl DenseInvertible {
    /// Wrap `matrix` after checking it is square, finite and well-conditioned.
    ///
    /// # Errors
    /// [`MaskError::DimensionMismatch`], [`MaskError::NonFinite`], [`MaskError::Singular`].
    pub fn new(matrix: DMatrix<f64>) -> Result<Self, MaskError> {
        check_dim(
            "an invertible matrix",
            matrix.nrows(),
            matrix.ncols(),
            "columns",
        )?;
        if matrix.nrows() == 0 {
            return Err(MaskError::EmptyDimension);
        }
        if matrix.iter().any(|v| !v.is_finite()) {
            return Err(MaskError::NonFinite);
        }
        let inverse = matrix.clone().try_inverse().ok_or(MaskError::Singular {
            condition: f64::INFINITY,
        })?;
        let condition = one_norm(&matrix) * one_norm(&inverse);
        if !condition.is_finite() || condition > MAX_CONDITION {
            return Err(MaskError::Singular { condition });
        }
        Ok(Self { matrix, inverse })
    }

    /// A `d × d` matrix of i.i.d. U(0, 1) entries filled column by column, as MATLAB's
    /// `rand(d, d)`. With [`MatlabTwister::new(535)`](crate::random::MatlabTwister) and `d = 9`
    /// this is `B₁` of eq. (1) in seed 003; with `d = 8` it is `A₀` of eq. (2).
    ///
    /// # Errors
    /// [`MaskError::Singular`] in the (probability-zero) event of a singular draw.
    pub fn uniform_entries<U: UnitUniform + ?Sized>(
        dim: usize,
        source: &mut U,
    ) -> Result<Self, MaskError> {
        Self::new(uniform_matrix(source, dim, dim))
    }

    /// The stored matrix.
    pub fn matrix(&self) -> &DMatrix<f64> {
        &self.matrix
    }
}

impl Mask for DenseInvertible {
    fn dim(&self) -> usize {
        self.matrix.nrows()
    }

    fn right_apply(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the invertible mask", self.dim(), m.ncols(), "columns")?;
        *m = &*m * &self.matrix;
        Ok(())
    }

    fn right_apply_inverse(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the invertible mask", self.dim(), m.ncols(), "columns")?;
        *m = &*m * &self.inverse;
        Ok(())
    }

    fn left_apply(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the invertible mask", self.dim(), m.nrows(), "rows")?;
        *m = &self.matrix * &*m;
        Ok(())
    }

    fn left_apply_inverse(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the invertible mask", self.dim(), m.nrows(), "rows")?;
        *m = &self.inverse * &*m;
        Ok(())
    }

    fn inverse_leading_columns(&self, k: usize) -> Result<DMatrix<f64>, MaskError> {
        if k > self.dim() {
            return Err(MaskError::DimensionMismatch {
                operator: "the invertible mask",
                expected: self.dim(),
                found: k,
                axis: "columns requested",
            });
        }
        Ok(self.inverse.columns(0, k).into_owned())
    }

    fn to_dense(&self) -> DMatrix<f64> {
        self.matrix.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mask::test_support::check_consistent;
    use crate::random::MatlabTwister;

    #[test]
    fn uniform_mask_round_trips() {
        let b = DenseInvertible::uniform_entries(9, &mut MatlabTwister::new(535)).unwrap();
        check_consistent(&b);
        assert!(b.matrix().iter().all(|v| (0.0..1.0).contains(v)));
    }

    #[test]
    fn singular_matrix_is_refused() {
        let singular = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 4.0]);
        assert!(matches!(
            DenseInvertible::new(singular),
            Err(MaskError::Singular { .. })
        ));
        let nearly = DMatrix::from_row_slice(2, 2, &[1.0, 1.0, 1.0, 1.0 + 1e-15]);
        assert!(matches!(
            DenseInvertible::new(nearly),
            Err(MaskError::Singular { .. })
        ));
    }
}
