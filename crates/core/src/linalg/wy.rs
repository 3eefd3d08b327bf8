//! Blocked Householder reflectors: the compact WY representation.
//!
//! # Formula
//! Schreiber & Van Loan (1989), "A storage-efficient WY representation for products of
//! Householder transformations", SIAM J. Sci. Stat. Comput. 10(1); LAPACK's `dlarft`
//! (direction "forward", storage "columnwise"). For reflectors `Hᵢ = I − βᵢ yᵢ yᵢᵀ`,
//! `i = 0 … b−1`,
//!
//! `H₀ H₁ ⋯ H_{b−1} = I − Y T Yᵀ`,  `Y = [y₀ … y_{b−1}]`,
//!
//! with `T` upper triangular, built column by column:
//! `T[i, i] = βᵢ`, `T[0..i, i] = −βᵢ · T[0..i, 0..i] · (Y[:, 0..i]ᵀ yᵢ)`.
//! The transpose is `H_{b−1} ⋯ H₀ = I − Y Tᵀ Yᵀ`.
//!
//! Applying `b` reflectors to an `n × len` block one at a time is `4·n·len·b` flops of
//! memory-bound vector work; through `Y` and `T` it is three matrix products
//! (`W = M Y`, `W ← W T`, `M −= W Yᵀ`) of the same order, run by the cache-blocked kernels of
//! [`product`](super::product). The result equals the reflector-by-reflector product to rounding
//! (not bit for bit), which is why the masks use it only above their documented size thresholds.

use super::Reflector;
use super::product::{Op, gemm};
use nalgebra::{DMatrix, DMatrixViewMut};

/// `H₀ H₁ ⋯ H_{b−1} = I − Y T Yᵀ` acting on the coordinates `offset .. offset + len`.
#[derive(Clone, Debug)]
pub struct BlockReflector {
    offset: usize,
    y: DMatrix<f64>,
    t: DMatrix<f64>,
}

impl BlockReflector {
    /// Block the reflectors `H₀ … H_{b−1}` (applied in that order as `H₀ H₁ ⋯`), which must all
    /// end at the same coordinate and start at non-decreasing offsets, as the reflectors of a
    /// Householder QR or of Stewart's construction do.
    ///
    /// Returns `None` for an empty list or reflectors that do not share their last coordinate.
    pub fn new(reflectors: &[Reflector]) -> Option<Self> {
        let first = reflectors.first()?;
        let offset = first.offset();
        let end = offset + first.len();
        let len = first.len();
        let b = reflectors.len();
        let mut y = DMatrix::zeros(len, b);
        for (i, h) in reflectors.iter().enumerate() {
            if h.offset() < offset || h.offset() + h.len() != end {
                return None;
            }
            let start = h.offset() - offset;
            y.view_mut((start, i), (h.len(), 1)).copy_from_slice(h.v());
        }
        // S = YᵀY, then T column by column (dlarft).
        let mut s = DMatrix::zeros(b, b);
        gemm(1.0, &y, Op::Transposed, &y, Op::Plain, 0.0, &mut s);
        let mut t = DMatrix::<f64>::zeros(b, b);
        let mut z = vec![0.0; b];
        for (i, h) in reflectors.iter().enumerate() {
            // z = T[0..i, 0..i] · S[0..i, i], column by column (T is upper triangular, so column
            // c contributes to rows 0..=c): contiguous, vectorisable axpys.
            z[..i].fill(0.0);
            for c in 0..i {
                let scale = s[(c, i)];
                let column = &t.as_slice()[c * b..c * b + c + 1];
                for (zr, tr) in z.iter_mut().zip(column) {
                    *zr += tr * scale;
                }
            }
            let beta = h.beta();
            let column = &mut t.as_mut_slice()[i * b..i * b + i + 1];
            for (tr, zr) in column.iter_mut().zip(&z) {
                *tr = -beta * zr;
            }
            column[i] = beta;
        }
        Some(Self { offset, y, t })
    }

    /// First coordinate touched.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of coordinates touched (`offset .. offset + len`).
    pub fn len(&self) -> usize {
        self.y.nrows()
    }

    /// Whether it touches no coordinates.
    pub fn is_empty(&self) -> bool {
        self.y.nrows() == 0
    }

    /// `M ← M (I − Y T Yᵀ)` (or `M (I − Y Tᵀ Yᵀ)` when `transpose`) for a block `M` whose columns
    /// are exactly the coordinates `offset .. offset + len`.
    ///
    /// # Panics
    /// When `m` does not have `len` columns (a programming error inside the crate).
    pub fn apply_right(&self, mut m: DMatrixViewMut<'_, f64>, transpose: bool) {
        let b = self.t.nrows();
        let mut w = DMatrix::zeros(m.nrows(), b);
        gemm(1.0, &m, Op::Plain, &self.y, Op::Plain, 0.0, &mut w);
        let mut wt = DMatrix::zeros(m.nrows(), b);
        let op_t = if transpose { Op::Transposed } else { Op::Plain };
        gemm(1.0, &w, Op::Plain, &self.t, op_t, 0.0, &mut wt);
        gemm(-1.0, &wt, Op::Plain, &self.y, Op::Transposed, 1.0, &mut m);
    }

    /// `M ← (I − Y T Yᵀ) M` (or `(I − Y Tᵀ Yᵀ) M` when `transpose`) for a block `M` whose rows are
    /// exactly the coordinates `offset .. offset + len`.
    ///
    /// # Panics
    /// When `m` does not have `len` rows (a programming error inside the crate).
    pub fn apply_left(&self, mut m: DMatrixViewMut<'_, f64>, transpose: bool) {
        let b = self.t.nrows();
        let mut w = DMatrix::zeros(b, m.ncols());
        gemm(1.0, &self.y, Op::Transposed, &m, Op::Plain, 0.0, &mut w);
        let mut tw = DMatrix::zeros(b, m.ncols());
        let op_t = if transpose { Op::Transposed } else { Op::Plain };
        gemm(1.0, &self.t, op_t, &w, Op::Plain, 0.0, &mut tw);
        gemm(-1.0, &self.y, Op::Plain, &tw, Op::Plain, 1.0, &mut m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::ORTHOGONALITY;

    fn reflectors(dim: usize, count: usize, base: usize) -> Vec<Reflector> {
        (0..count)
            .map(|k| {
                let x: Vec<f64> = (0..dim - base - k)
                    .map(|i| ((i * 13 + k * 7) % 11) as f64 - 5.0 + 0.25)
                    .collect();
                Reflector::annihilating(&x, base + k).0
            })
            .collect()
    }

    fn test_block(rows: usize, cols: usize) -> DMatrix<f64> {
        DMatrix::from_fn(rows, cols, |i, j| ((i * 5 + j * 3) % 7) as f64 - 3.0)
    }

    /// `I − Y T Yᵀ` equals the product of the reflectors, from both sides and transposed.
    #[test]
    fn block_equals_reflector_product() {
        let (dim, base) = (12, 2);
        let hs = reflectors(dim, 5, base);
        let block = BlockReflector::new(&hs).unwrap();
        assert_eq!((block.offset(), block.len()), (base, dim - base));

        let m = test_block(4, dim);
        let mut one_by_one = m.clone();
        hs.iter().for_each(|h| h.apply_to_rows(&mut one_by_one));
        let mut blocked = m.clone();
        block.apply_right(blocked.columns_range_mut(base..), false);
        assert!((&blocked - &one_by_one).amax() < ORTHOGONALITY);
        // Transposed: H₄ ⋯ H₀ from the right undoes it.
        block.apply_right(blocked.columns_range_mut(base..), true);
        assert!((&blocked - &m).amax() < ORTHOGONALITY);

        let mt = m.transpose();
        let mut one_by_one = mt.clone();
        hs.iter()
            .rev()
            .for_each(|h| h.apply_to_columns(&mut one_by_one));
        let mut blocked = mt.clone();
        block.apply_left(blocked.rows_range_mut(base..), false);
        assert!((&blocked - &one_by_one).amax() < ORTHOGONALITY);
        block.apply_left(blocked.rows_range_mut(base..), true);
        assert!((&blocked - &mt).amax() < ORTHOGONALITY);
    }

    #[test]
    fn mismatched_reflectors_are_refused() {
        assert!(BlockReflector::new(&[]).is_none());
        let a = Reflector::annihilating(&[1.0, 2.0, 3.0], 0).0;
        let b = Reflector::annihilating(&[1.0, 2.0], 0).0;
        assert!(BlockReflector::new(&[a, b]).is_none());
    }
}
