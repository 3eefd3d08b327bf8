//! Masks as operators.
//!
//! A mask is a square linear map known through its action, never required to be stored: a
//! participant's device applies the right mask `B` to one row, the masking service provider
//! applies `A₂` to a block of rows, the collector applies `B⁻¹` restricted to the columns it
//! keeps. Every mask type implements [`Mask`]; the dense matrix is available through
//! [`Mask::to_dense`] for small sizes and the classroom.
//!
//! | type | law | used for |
//! |---|---|---|
//! | [`HaarOrthogonal`] | Haar on O(d) (Stewart 1980) | right mask `B` of the modified TM² |
//! | [`FixedSubspaceHaar`] | Haar on the stabiliser of given columns | `A₁`, `A₂` keeping `1ₙ` (and kept columns) fixed |
//! | [`DenseInvertible`] | e.g. i.i.d. U(0, 1) entries | `B₁` of the first TM² method, `A₀` of the second |
//! | [`KeepColumns`] | `diag(I, M*)` up to a permutation | partial masking, block-diagonal `B₁`, `B₂` |
//! | [`HaarOrbit`] | the law of `A·M`, `A` as in [`FixedSubspaceHaar`] | the collector's `A₁` at scale |
//!
//! Sizes: below [`BLOCKED_MIN_DIM`] (and for blocks of fewer than [`BLOCKED_MIN_VECTORS`]
//! records, in particular one record) Haar masks are applied reflector by reflector with
//! bit-exact kernels; above, through blocked matrix products. The collector's release switches to
//! [`HaarOrbit`] from [`ORBIT_MIN_ROWS`] participants.

mod fixed;
mod haar;
mod invertible;
mod keep;
mod orbit;
mod rom;

pub use fixed::FixedSubspaceHaar;
pub use haar::{BLOCKED_MIN_DIM, BLOCKED_MIN_VECTORS, HaarOrthogonal, PANEL};
pub use invertible::DenseInvertible;
pub use keep::KeepColumns;
pub use orbit::{HaarOrbit, ORBIT_MIN_ROWS};
pub use rom::generate_rom;

use nalgebra::DMatrix;

/// Errors of mask construction and application.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MaskError {
    /// A block's shape does not fit the operator.
    #[error("{operator} is {expected}×{expected} but the data have {found} {axis}")]
    DimensionMismatch {
        /// Which operator complained.
        operator: &'static str,
        /// The operator's dimension.
        expected: usize,
        /// The offending extent of the data.
        found: usize,
        /// "columns" (right application) or "rows" (left application).
        axis: &'static str,
    },
    /// A mask of dimension zero was requested.
    #[error("a mask needs dimension at least 1")]
    EmptyDimension,
    /// A matrix meant to be invertible is singular or too ill-conditioned to invert reliably.
    #[error(
        "the mask matrix is singular or ill-conditioned (1-norm condition number {condition:.3e}); draw another key"
    )]
    Singular {
        /// Estimated 1-norm condition number (∞ when exactly singular).
        condition: f64,
    },
    /// A matrix contains NaN or an infinity.
    #[error("the mask matrix contains a non-finite entry")]
    NonFinite,
    /// The columns to keep fixed span the whole space, so the mask would be the identity.
    #[error("the {fixed} fixed directions span all {dim} dimensions; nothing would be masked")]
    NothingToMask {
        /// Rank of the fixed columns.
        fixed: usize,
        /// Dimension of the operator.
        dim: usize,
    },
    /// Kept-column indices are out of range or repeated.
    #[error("kept column {index} is out of range or repeated for a {dim}-column mask")]
    BadKeptColumn {
        /// The offending index (0-based).
        index: usize,
        /// Dimension of the operator.
        dim: usize,
    },
}

/// Check that `found` equals the operator dimension.
pub(crate) fn check_dim(
    operator: &'static str,
    expected: usize,
    found: usize,
    axis: &'static str,
) -> Result<(), MaskError> {
    if expected == found {
        Ok(())
    } else {
        Err(MaskError::DimensionMismatch {
            operator,
            expected,
            found,
            axis,
        })
    }
}

/// A square, invertible linear operator `Op` of dimension `d`, applied from either side.
///
/// Rows of a data block are records (participants), so a right mask acts on each row
/// independently and a left mask mixes records.
pub trait Mask {
    /// The dimension `d`.
    fn dim(&self) -> usize;

    /// `M ← M·Op` (`M` has `d` columns).
    ///
    /// # Errors
    /// [`MaskError::DimensionMismatch`] when `M` does not have `d` columns.
    fn right_apply(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError>;

    /// `M ← M·Op⁻¹` (`M` has `d` columns).
    ///
    /// # Errors
    /// [`MaskError::DimensionMismatch`] when `M` does not have `d` columns.
    fn right_apply_inverse(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError>;

    /// `M ← Op·M` (`M` has `d` rows).
    ///
    /// # Errors
    /// [`MaskError::DimensionMismatch`] when `M` does not have `d` rows.
    fn left_apply(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError>;

    /// `M ← Op⁻¹·M` (`M` has `d` rows).
    ///
    /// # Errors
    /// [`MaskError::DimensionMismatch`] when `M` does not have `d` rows.
    fn left_apply_inverse(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError>;

    /// One record masked: `x·Op`.
    ///
    /// # Errors
    /// [`MaskError::DimensionMismatch`] when `x` does not have `d` entries.
    fn mask_row(&self, x: &[f64]) -> Result<Vec<f64>, MaskError> {
        let mut m = DMatrix::from_row_slice(1, x.len(), x);
        self.right_apply(&mut m)?;
        Ok(m.as_slice().to_vec())
    }

    /// The first `k` columns of `Op⁻¹` (a `d × k` matrix): all a collector needs to recover the
    /// first `k` columns of `X` from `X·Op`, without forming `Op⁻¹` whole.
    ///
    /// # Formula
    /// `Op⁻¹[:, :k] = Op⁻¹ · [I_k; 0]`.
    ///
    /// # Errors
    /// [`MaskError::DimensionMismatch`] when `k > d`.
    fn inverse_leading_columns(&self, k: usize) -> Result<DMatrix<f64>, MaskError> {
        let d = self.dim();
        if k > d {
            return Err(MaskError::DimensionMismatch {
                operator: "inverse_leading_columns",
                expected: d,
                found: k,
                axis: "columns requested",
            });
        }
        let mut leading = DMatrix::identity(d, k);
        self.left_apply_inverse(&mut leading)?;
        Ok(leading)
    }

    /// `(M·Op⁻¹)[:, :k]`: unmask a block and keep only its first `k` columns.
    ///
    /// # Errors
    /// [`MaskError::DimensionMismatch`] when `M` does not have `d` columns or `k > d`.
    fn unmask_leading(&self, m: &DMatrix<f64>, k: usize) -> Result<DMatrix<f64>, MaskError> {
        check_dim("unmask_leading", self.dim(), m.ncols(), "columns")?;
        Ok(m * self.inverse_leading_columns(k)?)
    }

    /// The operator as a dense `d × d` matrix (`Op·I`). Meant for small sizes and teaching.
    fn to_dense(&self) -> DMatrix<f64> {
        let mut m = DMatrix::identity(self.dim(), self.dim());
        // The identity always has `d` rows, so this cannot fail.
        let _ = self.left_apply(&mut m);
        m
    }
}

/// A boxed mask is a mask (so `Box<dyn Mask + Send + Sync>` can be passed where masks go).
impl<M: Mask + ?Sized> Mask for Box<M> {
    fn dim(&self) -> usize {
        (**self).dim()
    }
    fn right_apply(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        (**self).right_apply(m)
    }
    fn right_apply_inverse(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        (**self).right_apply_inverse(m)
    }
    fn left_apply(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        (**self).left_apply(m)
    }
    fn left_apply_inverse(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        (**self).left_apply_inverse(m)
    }
    fn mask_row(&self, x: &[f64]) -> Result<Vec<f64>, MaskError> {
        (**self).mask_row(x)
    }
    fn inverse_leading_columns(&self, k: usize) -> Result<DMatrix<f64>, MaskError> {
        (**self).inverse_leading_columns(k)
    }
    fn unmask_leading(&self, m: &DMatrix<f64>, k: usize) -> Result<DMatrix<f64>, MaskError> {
        (**self).unmask_leading(m, k)
    }
    fn to_dense(&self) -> DMatrix<f64> {
        (**self).to_dense()
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Invariants every mask must satisfy, shared by the tests of each mask type.
    use super::*;
    use crate::tolerance::{ORTHOGONALITY, ROUND_TRIP};

    pub fn test_block(rows: usize, cols: usize) -> DMatrix<f64> {
        DMatrix::from_fn(rows, cols, |i, j| {
            ((i * 7 + j * 13) % 11) as f64 - 4.5 + 0.1 * j as f64
        })
    }

    /// Left/right, direct/inverse applications agree with the dense matrix, and round trips
    /// return the input.
    pub fn check_consistent(mask: &dyn Mask) {
        let d = mask.dim();
        let dense = mask.to_dense();
        let scale = dense.amax().max(1.0);
        let rows = test_block(5, d);
        let mut right = rows.clone();
        mask.right_apply(&mut right).unwrap();
        assert!((&right - &rows * &dense).amax() < ROUND_TRIP * scale * rows.amax() * d as f64);
        mask.right_apply_inverse(&mut right).unwrap();
        assert!((&right - &rows).amax() < ROUND_TRIP * scale * rows.amax() * d as f64);

        let cols = test_block(d, 4);
        let mut left = cols.clone();
        mask.left_apply(&mut left).unwrap();
        assert!((&left - &dense * &cols).amax() < ROUND_TRIP * scale * cols.amax() * d as f64);
        mask.left_apply_inverse(&mut left).unwrap();
        assert!((&left - &cols).amax() < ROUND_TRIP * scale * cols.amax() * d as f64);

        let k = d.min(3);
        let unmasked = mask.unmask_leading(&(&rows * &dense), k).unwrap();
        assert!(
            (unmasked - rows.columns(0, k)).amax() < ROUND_TRIP * scale * rows.amax() * d as f64
        );

        let row = mask.mask_row(rows.row(0).clone_owned().as_slice()).unwrap();
        let expected = rows.row(0) * &dense;
        for (a, b) in row.iter().zip(expected.iter()) {
            assert!((a - b).abs() < ROUND_TRIP * scale * rows.amax() * d as f64);
        }

        assert!(matches!(
            mask.right_apply(&mut DMatrix::zeros(2, d + 1)),
            Err(MaskError::DimensionMismatch { .. })
        ));
        assert!(matches!(
            mask.left_apply(&mut DMatrix::zeros(d + 1, 2)),
            Err(MaskError::DimensionMismatch { .. })
        ));
    }

    /// The dense matrix built one column at a time: `d × 1` blocks never take the blocked path,
    /// so this is the scalar, bit-exact form of the operator.
    pub fn dense_by_columns(mask: &dyn Mask) -> DMatrix<f64> {
        let d = mask.dim();
        let mut dense = DMatrix::zeros(d, d);
        for j in 0..d {
            let mut e = DMatrix::zeros(d, 1);
            e[(j, 0)] = 1.0;
            mask.left_apply(&mut e).unwrap();
            dense.set_column(j, &e.column(0));
        }
        dense
    }

    /// The blocked path (blocks of many records, `d ≥ BLOCKED_MIN_DIM`) agrees with the scalar
    /// dense form to [`BLOCKED_AGREES_WITH_SCALAR`](crate::tolerance::BLOCKED_AGREES_WITH_SCALAR):
    /// right and left products, their inverses, `to_dense`, the collector's leading columns of
    /// the inverse, and row-by-row masking.
    pub fn check_blocked_matches_scalar(mask: &dyn Mask) {
        use crate::mask::{BLOCKED_MIN_DIM, BLOCKED_MIN_VECTORS};
        use crate::tolerance::BLOCKED_AGREES_WITH_SCALAR;
        let d = mask.dim();
        assert!(
            d >= BLOCKED_MIN_DIM,
            "dimension {d} would not take the blocked path"
        );
        let dense = dense_by_columns(mask);
        // A thin block (one band, panels generated ahead) and a thick one (a band per core).
        for records in [3 * BLOCKED_MIN_VECTORS + 5, 70] {
            let x = test_block(records, d);
            let bound = BLOCKED_AGREES_WITH_SCALAR * x.amax();

            let mut right = x.clone();
            mask.right_apply(&mut right).unwrap();
            let expected = &x * &dense;
            assert!(
                (&right - &expected).amax() < bound,
                "X·Q, {records} records"
            );
            for i in [0, records - 1] {
                let row = mask.mask_row(x.row(i).clone_owned().as_slice()).unwrap();
                for (a, b) in row.iter().zip(right.row(i).iter()) {
                    assert!((a - b).abs() < bound, "row {i}");
                }
            }
            mask.right_apply_inverse(&mut right).unwrap();
            assert!((&right - &x).amax() < bound, "X·Q·Q⁻¹");

            let y = x.transpose();
            let mut left = y.clone();
            mask.left_apply(&mut left).unwrap();
            assert!(
                (&left - &dense * &y).amax() < bound,
                "Q·Y, {records} records"
            );
            mask.left_apply_inverse(&mut left).unwrap();
            assert!((&left - &y).amax() < bound, "Q⁻¹·Q·Y");
        }

        assert!(
            (mask.to_dense() - &dense).amax() < BLOCKED_AGREES_WITH_SCALAR,
            "to_dense"
        );
        let k = BLOCKED_MIN_VECTORS + 2;
        let leading = mask.inverse_leading_columns(k).unwrap();
        let inverse = dense.transpose();
        assert!(
            (leading - inverse.columns(0, k)).amax() < BLOCKED_AGREES_WITH_SCALAR,
            "leading columns of the inverse"
        );
    }

    /// `QᵀQ = I`.
    pub fn check_orthogonal(mask: &dyn Mask) {
        let q = mask.to_dense();
        let deviation = (q.transpose() * &q - DMatrix::identity(q.nrows(), q.nrows())).amax();
        assert!(deviation < ORTHOGONALITY, "max |QᵀQ − I| = {deviation}");
    }
}
