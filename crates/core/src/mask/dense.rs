//! A stored orthogonal matrix as a mask (small sizes, the classroom, `GenerateROM`).

use super::{Mask, MaskError, check_dim};
use crate::tolerance::ORTHOGONALITY;
use nalgebra::DMatrix;

/// An explicitly stored orthogonal `d × d` matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct DenseOrthogonal {
    matrix: DMatrix<f64>,
}

impl DenseOrthogonal {
    /// Wrap `matrix` after checking it is square, finite and orthogonal to
    /// [`ORTHOGONALITY`](crate::tolerance::ORTHOGONALITY) times its dimension.
    ///
    /// # Errors
    /// [`MaskError::DimensionMismatch`], [`MaskError::NonFinite`] or [`MaskError::NotOrthogonal`].
    pub fn new(matrix: DMatrix<f64>) -> Result<Self, MaskError> {
        check_dim(
            "an orthogonal matrix",
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
        let d = matrix.nrows();
        let deviation = (matrix.transpose() * &matrix - DMatrix::identity(d, d)).amax();
        if deviation > ORTHOGONALITY * d as f64 {
            return Err(MaskError::NotOrthogonal { deviation });
        }
        Ok(Self { matrix })
    }

    /// The stored matrix.
    pub fn matrix(&self) -> &DMatrix<f64> {
        &self.matrix
    }
}

impl Mask for DenseOrthogonal {
    fn dim(&self) -> usize {
        self.matrix.nrows()
    }

    fn right_apply(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the orthogonal mask", self.dim(), m.ncols(), "columns")?;
        *m = &*m * &self.matrix;
        Ok(())
    }

    fn right_apply_inverse(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the orthogonal mask", self.dim(), m.ncols(), "columns")?;
        *m = &*m * self.matrix.transpose();
        Ok(())
    }

    fn left_apply(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the orthogonal mask", self.dim(), m.nrows(), "rows")?;
        *m = &self.matrix * &*m;
        Ok(())
    }

    fn left_apply_inverse(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the orthogonal mask", self.dim(), m.nrows(), "rows")?;
        *m = self.matrix.tr_mul(m);
        Ok(())
    }

    fn to_dense(&self) -> DMatrix<f64> {
        self.matrix.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mask::test_support::check_consistent;

    #[test]
    fn rotation_by_hand() {
        // A 90° rotation: (1, 0)·Q = (0, 1).
        let q =
            DenseOrthogonal::new(DMatrix::from_row_slice(2, 2, &[0.0, 1.0, -1.0, 0.0])).unwrap();
        assert_eq!(q.mask_row(&[1.0, 0.0]).unwrap(), vec![0.0, 1.0]);
        check_consistent(&q);
    }

    #[test]
    fn rejects_non_orthogonal_and_non_square() {
        assert!(matches!(
            DenseOrthogonal::new(DMatrix::from_row_slice(2, 2, &[1.0, 1.0, 0.0, 1.0])),
            Err(MaskError::NotOrthogonal { .. })
        ));
        assert!(matches!(
            DenseOrthogonal::new(DMatrix::zeros(2, 3)),
            Err(MaskError::DimensionMismatch { .. })
        ));
        assert_eq!(
            DenseOrthogonal::new(DMatrix::from_element(1, 1, f64::NAN)).unwrap_err(),
            MaskError::NonFinite
        );
    }
}
