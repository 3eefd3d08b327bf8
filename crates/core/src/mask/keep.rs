//! Block-diagonal masks that keep some coordinates untouched: `diag(I, M*)` up to a permutation.
//!
//! Partial masking in seed 003 §3.1 uses `B₁ = diag(I_{p₁}, B₁*)` so that non-sensitive columns
//! reach the provider unchanged; the second method (§3.3) uses block-diagonal `B₁`, `B₂` that keep
//! the response and treatment columns, which is what makes the treatment effect of a logistic
//! regression on `XB₁B₂` equal to the raw one (§2.2). Here the kept coordinates may sit anywhere:
//! the operator is `Πᵀ · diag(I, M*) · Π` for the permutation `Π` that moves them to the front.

use super::{Mask, MaskError, check_dim};
use nalgebra::DMatrix;

/// Identity on `kept` coordinates, `inner` on the others (in their original order).
#[derive(Clone, Debug)]
pub struct KeepColumns<M> {
    dim: usize,
    moved: Vec<usize>,
    inner: M,
}

impl<M: Mask> KeepColumns<M> {
    /// Keep the coordinates `kept` (0-based) and apply `inner` to the rest.
    ///
    /// # Errors
    /// [`MaskError::BadKeptColumn`] for out-of-range or repeated indices;
    /// [`MaskError::DimensionMismatch`] when `inner` does not have `dim − kept.len()` dimensions.
    pub fn new(dim: usize, kept: &[usize], inner: M) -> Result<Self, MaskError> {
        let mut is_kept = vec![false; dim];
        for &index in kept {
            if index >= dim || is_kept[index] {
                return Err(MaskError::BadKeptColumn { index, dim });
            }
            is_kept[index] = true;
        }
        let moved: Vec<usize> = (0..dim).filter(|&i| !is_kept[i]).collect();
        check_dim(
            "the inner block",
            inner.dim(),
            moved.len(),
            "masked coordinates",
        )?;
        Ok(Self { dim, moved, inner })
    }

    /// The inner operator `M*`.
    pub fn inner(&self) -> &M {
        &self.inner
    }

    fn on_columns(
        &self,
        m: &mut DMatrix<f64>,
        f: impl Fn(&M, &mut DMatrix<f64>) -> Result<(), MaskError>,
    ) -> Result<(), MaskError> {
        let mut block = m.select_columns(&self.moved);
        f(&self.inner, &mut block)?;
        for (j, &c) in self.moved.iter().enumerate() {
            m.set_column(c, &block.column(j));
        }
        Ok(())
    }

    fn on_rows(
        &self,
        m: &mut DMatrix<f64>,
        f: impl Fn(&M, &mut DMatrix<f64>) -> Result<(), MaskError>,
    ) -> Result<(), MaskError> {
        let mut block = m.select_rows(&self.moved);
        f(&self.inner, &mut block)?;
        for (i, &r) in self.moved.iter().enumerate() {
            m.set_row(r, &block.row(i));
        }
        Ok(())
    }
}

impl<M: Mask> Mask for KeepColumns<M> {
    fn dim(&self) -> usize {
        self.dim
    }

    fn right_apply(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the block-diagonal mask", self.dim, m.ncols(), "columns")?;
        self.on_columns(m, M::right_apply)
    }

    fn right_apply_inverse(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the block-diagonal mask", self.dim, m.ncols(), "columns")?;
        self.on_columns(m, M::right_apply_inverse)
    }

    fn left_apply(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the block-diagonal mask", self.dim, m.nrows(), "rows")?;
        self.on_rows(m, M::left_apply)
    }

    fn left_apply_inverse(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the block-diagonal mask", self.dim, m.nrows(), "rows")?;
        self.on_rows(m, M::left_apply_inverse)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{Key, StreamId};
    use crate::mask::HaarOrthogonal;
    use crate::mask::test_support::{check_consistent, check_orthogonal, test_block};

    #[test]
    fn kept_columns_pass_through_unchanged() {
        let inner =
            HaarOrthogonal::keyed(4, Key::teaching(3).stream(StreamId::Scratch(9))).unwrap();
        let b = KeepColumns::new(6, &[0, 3], inner).unwrap();
        check_consistent(&b);
        check_orthogonal(&b);
        let x = test_block(4, 6);
        let mut xb = x.clone();
        b.right_apply(&mut xb).unwrap();
        assert_eq!(xb.column(0), x.column(0));
        assert_eq!(xb.column(3), x.column(3));
        assert!((xb.column(1) - x.column(1)).amax() > 0.01);
    }

    #[test]
    fn bad_indices_are_refused() {
        let inner =
            || HaarOrthogonal::keyed(2, Key::teaching(3).stream(StreamId::Scratch(9))).unwrap();
        assert_eq!(
            KeepColumns::new(3, &[5], inner()).unwrap_err(),
            MaskError::BadKeptColumn { index: 5, dim: 3 }
        );
        assert_eq!(
            KeepColumns::new(4, &[1, 1], inner()).unwrap_err(),
            MaskError::BadKeptColumn { index: 1, dim: 4 }
        );
        assert!(matches!(
            KeepColumns::new(5, &[0], inner()),
            Err(MaskError::DimensionMismatch { .. })
        ));
    }
}
