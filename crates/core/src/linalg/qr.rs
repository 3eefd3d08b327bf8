//! Thin Householder QR of a tall matrix, for the collector's orbit sampler.
//!
//! Ours, not nalgebra's, so that the masks' bits are fixed here: see [`super`] (`linalg`).
//!
//! # Formula
//! For `M` (`m × k`) and `q = min(m, k)`, reflectors `H₀ … H_{q−1}` (`Hⱼ` on rows `j …`, mapping
//! the current column `j` below the diagonal to `αⱼ e₁`, `αⱼ = −sign(·)‖·‖`) give
//!
//! `Hq−1 ⋯ H₀ M = [R; 0]`,  `M = Q R`,  `Q = H₀ ⋯ H_{q−1} [I_q; 0]` (`m × q`, orthonormal
//! columns), `R` (`q × k`) upper trapezoidal with `R[j, j] = αⱼ`.
//!
//! Cost `O(m k q)`; `Q` is kept as its reflectors, never formed. Rank-deficient `M` is fine: a
//! column already zero below the diagonal gives the identity reflector and `R[j, j] = 0`.

use super::Reflector;
use nalgebra::DMatrix;

/// `M = Q R` with `Q` held as Householder reflectors.
#[derive(Clone, Debug)]
pub struct ThinQr {
    rows: usize,
    reflectors: Vec<Reflector>,
    r: DMatrix<f64>,
}

impl ThinQr {
    /// Factor `m` (any shape; `q = min(rows, cols)` reflectors).
    pub fn new(m: &DMatrix<f64>) -> Self {
        Self::from_owned(m.clone())
    }

    /// [`new`](Self::new) factoring `work` in place: no copy of a tall matrix the caller no
    /// longer needs (the orbit sampler's `n × p₁` blocks).
    pub fn from_owned(mut work: DMatrix<f64>) -> Self {
        let (rows, cols) = work.shape();
        let q = rows.min(cols);
        let mut reflectors = Vec::with_capacity(q);
        for j in 0..q {
            let tail: Vec<f64> = work.column(j).rows(j, rows - j).iter().copied().collect();
            let (h, alpha) = Reflector::annihilating_owned(tail, j);
            for c in j + 1..cols {
                h.apply_to_vector(work.column_mut(c).as_mut_slice());
            }
            work[(j, j)] = alpha;
            work.column_mut(j).rows_mut(j + 1, rows - j - 1).fill(0.0);
            reflectors.push(h);
        }
        let r = work.rows(0, q).upper_triangle();
        Self {
            rows,
            reflectors,
            r,
        }
    }

    /// `R` (`q × k`, upper trapezoidal).
    pub fn r(&self) -> &DMatrix<f64> {
        &self.r
    }

    /// `q = min(rows, cols)`, the number of columns of the thin `Q`.
    pub fn rank_bound(&self) -> usize {
        self.reflectors.len()
    }

    /// `sign(R[j, j])` for `j < q` (`sign(0) = +1`): the fold that makes `Q·diag(signs)` of a
    /// Gaussian matrix Haar-distributed on the Stiefel manifold.
    pub fn diagonal_signs(&self) -> Vec<f64> {
        (0..self.rank_bound())
            .map(|j| super::householder::sign(self.r[(j, j)]))
            .collect()
    }

    /// `Q_full · [top; 0]`: the `rows × c` matrix whose first `q` rows are `top` (`q × c`) pushed
    /// through `H₀ ⋯ H_{q−1}`. With `top = I_q` this is the thin `Q`.
    ///
    /// # Panics
    /// When `top` does not have `q` rows (a programming error inside the crate).
    pub fn q_times(&self, top: &DMatrix<f64>) -> DMatrix<f64> {
        let q = self.rank_bound();
        assert_eq!(top.nrows(), q, "q_times: top block must have q rows");
        let mut out = DMatrix::zeros(self.rows, top.ncols());
        out.rows_mut(0, q).copy_from(top);
        for h in self.reflectors.iter().rev() {
            h.apply_to_columns(&mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::ORTHOGONALITY;

    /// By hand: M = [3; 4] → α = −5, R = [−5], Q = [−0.6; −0.8].
    #[test]
    fn qr_by_hand() {
        let qr = ThinQr::new(&DMatrix::from_column_slice(2, 1, &[3.0, 4.0]));
        assert!((qr.r()[(0, 0)] + 5.0).abs() < ORTHOGONALITY);
        assert_eq!(qr.diagonal_signs(), vec![-1.0]);
        let q = qr.q_times(&DMatrix::identity(1, 1));
        assert!((q[(0, 0)] + 0.6).abs() < ORTHOGONALITY && (q[(1, 0)] + 0.8).abs() < ORTHOGONALITY);
    }

    #[test]
    fn reconstructs_tall_wide_and_rank_deficient_matrices() {
        for (rows, cols) in [(9, 3), (4, 4), (3, 5)] {
            let mut m =
                DMatrix::from_fn(rows, cols, |i, j| ((i * 7 + j * 5) % 9) as f64 - 4.0 + 0.5);
            if cols > 2 {
                let twice = m.column(0) * 2.0;
                m.set_column(2, &twice);
            }
            let qr = ThinQr::new(&m);
            let q = qr.q_times(&DMatrix::identity(qr.rank_bound(), qr.rank_bound()));
            assert!((&q * qr.r() - &m).amax() < ORTHOGONALITY * m.amax());
            let gram = q.tr_mul(&q) - DMatrix::identity(q.ncols(), q.ncols());
            assert!(gram.amax() < ORTHOGONALITY);
            let below = (0..qr.r().nrows())
                .flat_map(|i| (0..i.min(cols)).map(move |j| (i, j)))
                .map(|(i, j)| qr.r()[(i, j)].abs())
                .fold(0.0, f64::max);
            assert!(below < ORTHOGONALITY);
        }
    }
}
