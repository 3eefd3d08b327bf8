//! Haar-distributed orthogonal operators as streams of Householder reflectors.
//!
//! # Construction
//! Stewart (1980), "The efficient generation of random orthogonal matrices with an application to
//! condition estimators", SIAM J. Numer. Anal. 17(3):403–409; equivalently Mezzadri (2007), "How
//! to generate random matrices from the classical compact groups", Notices AMS 54(5).
//!
//! For `k = 0 … d−2` draw `g_k ~ N(0, I_{d−k})` and let `H_k` be the Householder reflector on
//! coordinates `k …` that maps `g_k` to `−sign(g_{k,0})‖g_k‖e₁`. With
//! `D = diag(−sign(g_{0,0}), …, −sign(g_{d−2,0}), sign(z))`, `z ~ N(0, 1)`,
//!
//! `Q = H₀ H₁ ⋯ H_{d−2} D`
//!
//! is exactly Haar-distributed on O(d). It is the Householder QR of a Gaussian matrix with the
//! signs of `diag(R)` folded into `Q` — the fold without which a QR of a Gaussian matrix is *not*
//! Haar (its first column would always point into the half-space `q₁₁ < 0`). Drawing a fresh
//! Gaussian vector for each reflector is legitimate because, given the first `k` columns, the
//! trailing part of column `k+1` of the partly reduced Gaussian matrix is again `N(0, I)`.
//! nalgebra's `RandomOrthogonal` (a product of `d−1` Givens rotations) is not Haar and is not used.
//!
//! # Cost
//! A keyed operator stores only its key stream and the `d` signs (`O(d)` memory). Reflector `k`
//! is regenerated from its own sub-stream whenever it is needed, so one record costs `O(d²)` time
//! and `O(d)` memory, and the dense `d × d` matrix is never formed unless asked for.

use super::{Mask, MaskError, check_dim};
use crate::key::KeyedStream;
use crate::linalg::Reflector;
use crate::linalg::householder::sign;
use crate::random::{BitSource, fill_standard_normal, standard_normal};
use nalgebra::DMatrix;

#[derive(Clone, Debug)]
enum ReflectorSource {
    /// Regenerate reflector `k` from sub-stream `k` of the key stream.
    Keyed(KeyedStream),
    /// Gaussian vectors drawn once from a sequential source (e.g. MATLAB's twister).
    Stored(Vec<Vec<f64>>),
}

/// A Haar-distributed orthogonal `d × d` operator.
#[derive(Clone, Debug)]
pub struct HaarOrthogonal {
    dim: usize,
    source: ReflectorSource,
    /// The diagonal `D`, as ±1.
    signs: Vec<f64>,
}

impl HaarOrthogonal {
    /// The operator drawn from a key stream; reflectors are regenerated on demand.
    ///
    /// # Errors
    /// [`MaskError::EmptyDimension`] when `dim == 0`.
    pub fn keyed(dim: usize, stream: KeyedStream) -> Result<Self, MaskError> {
        if dim == 0 {
            return Err(MaskError::EmptyDimension);
        }
        // Only the first normal of each sub-stream is needed for the signs: O(d) setup.
        let signs = (0..dim)
            .map(|k| {
                let first = standard_normal(&mut stream.substream(k as u64));
                if k + 1 < dim {
                    -sign(first)
                } else {
                    sign(first)
                }
            })
            .collect();
        Ok(Self {
            dim,
            source: ReflectorSource::Keyed(stream),
            signs,
        })
    }

    /// The operator drawn from a sequential bit source; its reflectors are stored (`O(d²)`).
    ///
    /// # Errors
    /// [`MaskError::EmptyDimension`] when `dim == 0`.
    pub fn from_source<B: BitSource + ?Sized>(
        dim: usize,
        source: &mut B,
    ) -> Result<Self, MaskError> {
        if dim == 0 {
            return Err(MaskError::EmptyDimension);
        }
        let mut vectors = Vec::with_capacity(dim.saturating_sub(1));
        let mut signs = Vec::with_capacity(dim);
        for k in 0..dim - 1 {
            let mut g = vec![0.0; dim - k];
            fill_standard_normal(source, &mut g);
            signs.push(-sign(g[0]));
            vectors.push(g);
        }
        signs.push(sign(standard_normal(source)));
        Ok(Self {
            dim,
            source: ReflectorSource::Stored(vectors),
            signs,
        })
    }

    /// The signs `D` (for tests that undo the sign fold).
    #[cfg(test)]
    pub(crate) fn signs(&self) -> &[f64] {
        &self.signs
    }

    /// Reflector `k`, acting on coordinates `offset + k …`.
    fn reflector(&self, k: usize, offset: usize, buffer: &mut Vec<f64>) -> Reflector {
        match &self.source {
            ReflectorSource::Keyed(stream) => {
                buffer.resize(self.dim - k, 0.0);
                fill_standard_normal(&mut stream.substream(k as u64), buffer);
                Reflector::annihilating(buffer, offset + k).0
            }
            ReflectorSource::Stored(vectors) => Reflector::annihilating(&vectors[k], offset + k).0,
        }
    }

    fn reflector_count(&self) -> usize {
        self.dim - 1
    }

    /// `M[:, off..off+d] ← M[:, off..off+d] · Q` (or `· Qᵀ`).
    pub(crate) fn right_mul_at(&self, m: &mut DMatrix<f64>, offset: usize, transpose: bool) {
        let mut buffer = Vec::new();
        let scale_columns = |m: &mut DMatrix<f64>| {
            for (i, s) in self.signs.iter().enumerate() {
                if *s < 0.0 {
                    m.column_mut(offset + i).neg_mut();
                }
            }
        };
        if transpose {
            // M Qᵀ = M D H_{d−2} ⋯ H₀
            scale_columns(m);
            for k in (0..self.reflector_count()).rev() {
                self.reflector(k, offset, &mut buffer).apply_to_rows(m);
            }
        } else {
            // M Q = M H₀ ⋯ H_{d−2} D
            for k in 0..self.reflector_count() {
                self.reflector(k, offset, &mut buffer).apply_to_rows(m);
            }
            scale_columns(m);
        }
    }

    /// `M[off..off+d, :] ← Q · M[off..off+d, :]` (or `Qᵀ ·`).
    pub(crate) fn left_mul_at(&self, m: &mut DMatrix<f64>, offset: usize, transpose: bool) {
        let mut buffer = Vec::new();
        let scale_rows = |m: &mut DMatrix<f64>| {
            for (i, s) in self.signs.iter().enumerate() {
                if *s < 0.0 {
                    m.row_mut(offset + i).neg_mut();
                }
            }
        };
        if transpose {
            // Qᵀ M = D H_{d−2} ⋯ H₀ M
            for k in 0..self.reflector_count() {
                self.reflector(k, offset, &mut buffer).apply_to_columns(m);
            }
            scale_rows(m);
        } else {
            // Q M = H₀ ⋯ H_{d−2} D M
            scale_rows(m);
            for k in (0..self.reflector_count()).rev() {
                self.reflector(k, offset, &mut buffer).apply_to_columns(m);
            }
        }
    }
}

impl Mask for HaarOrthogonal {
    fn dim(&self) -> usize {
        self.dim
    }

    fn right_apply(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the Haar mask", self.dim, m.ncols(), "columns")?;
        self.right_mul_at(m, 0, false);
        Ok(())
    }

    fn right_apply_inverse(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the Haar mask", self.dim, m.ncols(), "columns")?;
        self.right_mul_at(m, 0, true);
        Ok(())
    }

    fn left_apply(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the Haar mask", self.dim, m.nrows(), "rows")?;
        self.left_mul_at(m, 0, false);
        Ok(())
    }

    fn left_apply_inverse(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the Haar mask", self.dim, m.nrows(), "rows")?;
        self.left_mul_at(m, 0, true);
        Ok(())
    }

    /// `(Q⁻¹)[:, :k] = (Qᵀ)[:, :k] = (Q[:k, :])ᵀ`: the first `k` rows of `Q`, computed as
    /// `[I_k 0]·Q` in `O(k d²)` without forming `Q`.
    fn inverse_leading_columns(&self, k: usize) -> Result<DMatrix<f64>, MaskError> {
        if k > self.dim {
            return Err(MaskError::DimensionMismatch {
                operator: "the Haar mask",
                expected: self.dim,
                found: k,
                axis: "columns requested",
            });
        }
        let mut rows = DMatrix::identity(k, self.dim);
        self.right_mul_at(&mut rows, 0, false);
        Ok(rows.transpose())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{Key, StreamId};
    use crate::mask::test_support::{check_consistent, check_orthogonal};
    use crate::random::MatlabTwister;

    fn keyed(dim: usize, seed: u64) -> HaarOrthogonal {
        HaarOrthogonal::keyed(
            dim,
            Key::teaching(seed).stream(StreamId::Scratch(dim as u64)),
        )
        .unwrap()
    }

    #[test]
    fn keyed_operator_is_consistent_and_orthogonal() {
        for dim in [1, 2, 3, 9, 40] {
            let q = keyed(dim, 1);
            check_consistent(&q);
            check_orthogonal(&q);
        }
    }

    #[test]
    fn stored_operator_is_consistent_and_orthogonal() {
        let q = HaarOrthogonal::from_source(12, &mut MatlabTwister::new(535)).unwrap();
        check_consistent(&q);
        check_orthogonal(&q);
    }

    #[test]
    fn same_key_same_matrix() {
        assert_eq!(keyed(25, 3).to_dense(), keyed(25, 3).to_dense());
        assert_ne!(keyed(25, 3).to_dense(), keyed(25, 4).to_dense());
    }

    #[test]
    fn zero_dimension_is_refused() {
        let stream = Key::teaching(1).stream(StreamId::Scratch(0));
        assert_eq!(
            HaarOrthogonal::keyed(0, stream).unwrap_err(),
            MaskError::EmptyDimension
        );
    }

    /// Sample statistics over many independent draws of dimension `n`.
    struct Moments {
        q11_mean: f64,
        q11_scaled_var: f64,
        trace_mean: f64,
        trace_var: f64,
    }

    fn moments(n: usize, draws: u64, undo_sign_fold: bool) -> Moments {
        let (mut q11, mut q11sq, mut tr, mut trsq) = (0.0, 0.0, 0.0, 0.0);
        for seed in 0..draws {
            let q = keyed(n, 10_000 + seed);
            let mut dense = q.to_dense();
            if undo_sign_fold {
                for (j, s) in q.signs().iter().enumerate() {
                    dense.column_mut(j).scale_mut(*s);
                }
            }
            q11 += dense[(0, 0)];
            q11sq += n as f64 * dense[(0, 0)].powi(2);
            let t = dense.trace();
            tr += t;
            trsq += t * t;
        }
        let d = draws as f64;
        Moments {
            q11_mean: q11 / d,
            q11_scaled_var: q11sq / d,
            trace_mean: tr / d,
            trace_var: trsq / d - (tr / d).powi(2),
        }
    }

    /// Haar on O(n): `E[q₁₁] = 0`, `E[n q₁₁²] = 1` exactly, and (Diaconis & Shahshahani 1994)
    /// `E[tr Q] = 0`, `E[(tr Q)²] = 1` for n ≥ 2. With 3000 draws the standard errors are about
    /// 0.018 / √n for q₁₁, 0.026 for n·q₁₁², 0.018 for the trace mean and 0.026 for its variance;
    /// bounds are five standard errors.
    #[test]
    fn haar_moments_hold() {
        let n = 16;
        let m = moments(n, 3000, false);
        assert!(
            m.q11_mean.abs() < 5.0 * 0.018 / (n as f64).sqrt(),
            "E[q11] {}",
            m.q11_mean
        );
        assert!(
            (m.q11_scaled_var - 1.0).abs() < 0.13,
            "E[n q11²] {}",
            m.q11_scaled_var
        );
        assert!(m.trace_mean.abs() < 0.09, "E[tr] {}", m.trace_mean);
        assert!((m.trace_var - 1.0).abs() < 0.13, "Var[tr] {}", m.trace_var);
    }

    /// The same test rejects a QR of a Gaussian matrix without the sign fold: its first column
    /// always lies in `q₁₁ < 0`, which is the trap the issue warns about.
    #[test]
    fn haar_moment_test_rejects_unfolded_qr() {
        let n = 16;
        let m = moments(n, 300, true);
        assert!(
            m.q11_mean < -0.1,
            "E[q11] without the sign fold is {}",
            m.q11_mean
        );
    }
}
