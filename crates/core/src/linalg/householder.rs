//! Householder reflectors `H = I − β v vᵀ`.
//!
//! Ours, not nalgebra's, so that the masks' bits are fixed here: see [`super`] (`linalg`).
//!
//! A reflector acts on the coordinates `offset .. offset + v.len()` of a vector (or on those rows
//! or columns of a matrix) and leaves the others alone. `H` is symmetric and orthogonal, so it is
//! its own inverse and its own transpose.

use nalgebra::DMatrix;

/// `H = I − β v vᵀ` embedded at `offset`.
#[derive(Clone, Debug, PartialEq)]
pub struct Reflector {
    offset: usize,
    v: Vec<f64>,
    beta: f64,
}

/// Sign convention used everywhere: `sign(0) = +1`, so a zero leading entry still gives a
/// well-defined reflector and sign.
pub fn sign(x: f64) -> f64 {
    if x.is_sign_negative() && x != 0.0 {
        -1.0
    } else {
        1.0
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl Reflector {
    /// The reflector that maps `x` to `α e₁` with `α = −sign(x₀)‖x‖` (the sign LAPACK uses, so that
    /// `v₀ = x₀ − α` never cancels). Returns the reflector and `α`.
    ///
    /// # Formula
    /// `v = x − α e₁`, `β = 2 / vᵀv = 1 / (‖x‖ (‖x‖ + |x₀|))`. A zero `x` gives the identity
    /// (`β = 0`) and `α = 0`.
    pub fn annihilating(x: &[f64], offset: usize) -> (Self, f64) {
        Self::annihilating_owned(x.to_vec(), offset)
    }

    /// As [`annihilating`](Self::annihilating), turning the buffer `x` into `v` in place (no
    /// copy). The arithmetic is identical, so both give the same bits.
    pub fn annihilating_owned(x: Vec<f64>, offset: usize) -> (Self, f64) {
        let norm = dot(&x, &x).sqrt();
        let mut v = x;
        if norm == 0.0 || v.is_empty() {
            return (
                Self {
                    offset,
                    v,
                    beta: 0.0,
                },
                0.0,
            );
        }
        let x0 = v[0];
        let alpha = -sign(x0) * norm;
        v[0] -= alpha;
        let beta = 1.0 / (norm * (norm + x0.abs()));
        (Self { offset, v, beta }, alpha)
    }

    /// First coordinate the reflector acts on.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of coordinates it acts on.
    pub fn len(&self) -> usize {
        self.v.len()
    }

    /// Whether it acts on no coordinates at all.
    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    /// The Householder vector `v` (on coordinates `offset ..`).
    pub fn v(&self) -> &[f64] {
        &self.v
    }

    /// The scale `β = 2 / vᵀv` (0 for the identity).
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// Give the vector's storage back (to reuse it for the next reflector).
    pub fn into_vector(self) -> Vec<f64> {
        self.v
    }

    /// `x ← H x` for a full-length vector `x`.
    pub fn apply_to_vector(&self, x: &mut [f64]) {
        let tail = &mut x[self.offset..self.offset + self.v.len()];
        let s = self.beta * dot(tail, &self.v);
        for (t, vi) in tail.iter_mut().zip(&self.v) {
            *t -= s * vi;
        }
    }

    /// `M ← H M`: reflect every column of `m` (rows `offset ..` are touched).
    pub fn apply_to_columns(&self, m: &mut DMatrix<f64>) {
        let rows = m.nrows();
        for column in m.as_mut_slice().chunks_exact_mut(rows) {
            self.apply_to_vector(column);
        }
    }

    /// `M ← M H`: reflect every row of `m` (columns `offset ..` are touched).
    ///
    /// Works column by column on nalgebra's column-major storage: `w = M[:, J] v`, then
    /// `M[:, J] −= β w vᵀ`, both as contiguous column sweeps.
    pub fn apply_to_rows(&self, m: &mut DMatrix<f64>) {
        let rows = m.nrows();
        if rows == 1 {
            // A single record (the participant's device): the same arithmetic on a plain slice.
            self.apply_to_row_vector(m.as_mut_slice());
            return;
        }
        let mut w = vec![0.0; rows];
        let data = m.as_mut_slice();
        for (j, vj) in self.v.iter().enumerate() {
            let column = &data[(self.offset + j) * rows..(self.offset + j + 1) * rows];
            for (wi, c) in w.iter_mut().zip(column) {
                *wi += c * vj;
            }
        }
        for (j, vj) in self.v.iter().enumerate() {
            let scale = self.beta * vj;
            let column = &mut data[(self.offset + j) * rows..(self.offset + j + 1) * rows];
            for (c, wi) in column.iter_mut().zip(&w) {
                *c -= scale * wi;
            }
        }
    }
}

impl Reflector {
    /// `x ← x H` for one full-length row `x`, with exactly the operation order of
    /// [`apply_to_rows`](Self::apply_to_rows) on a one-row matrix: `w = Σⱼ xⱼ vⱼ` accumulated
    /// from `0.0` in index order, then `xⱼ −= (β vⱼ) w`. (Not `apply_to_vector`, which rounds
    /// `(β w) vⱼ` instead: the two differ in the last bit, and masked records must stay
    /// bit-identical to the ones recorded by `tests/cross_platform.rs`.)
    pub fn apply_to_row_vector(&self, x: &mut [f64]) {
        let tail = &mut x[self.offset..self.offset + self.v.len()];
        let mut w = 0.0;
        for (c, vj) in tail.iter().zip(&self.v) {
            w += c * vj;
        }
        for (c, vj) in tail.iter_mut().zip(&self.v) {
            *c -= self.beta * vj * w;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::ORTHOGONALITY;

    #[test]
    fn annihilates_by_hand() {
        // x = (3, 4): ‖x‖ = 5, α = −5, v = (8, 4), β = 1/(5·8) = 1/40; H x = (−5, 0).
        let (h, alpha) = Reflector::annihilating(&[3.0, 4.0], 0);
        assert_eq!(alpha, -5.0);
        let mut x = [3.0, 4.0];
        h.apply_to_vector(&mut x);
        assert!((x[0] + 5.0).abs() < ORTHOGONALITY && x[1].abs() < ORTHOGONALITY);
    }

    #[test]
    fn is_an_involution_and_respects_offset() {
        let (h, _) = Reflector::annihilating(&[0.3, -1.2, 2.0], 1);
        let original = [7.0, 1.0, 2.0, 3.0];
        let mut x = original;
        h.apply_to_vector(&mut x);
        assert_eq!(x[0], 7.0);
        h.apply_to_vector(&mut x);
        for (a, b) in x.iter().zip(original) {
            assert!((a - b).abs() < ORTHOGONALITY);
        }
    }

    #[test]
    fn row_and_column_application_agree_with_dense_matrix() {
        let (h, _) = Reflector::annihilating(&[1.0, 2.0, -2.0], 1);
        let mut dense = DMatrix::identity(4, 4);
        h.apply_to_columns(&mut dense);
        let m = DMatrix::from_fn(3, 4, |i, j| (i * 4 + j) as f64 - 3.5);
        let mut by_rows = m.clone();
        h.apply_to_rows(&mut by_rows);
        assert!((by_rows - &m * &dense).amax() < ORTHOGONALITY);
        let mt = m.transpose();
        let mut by_columns = mt.clone();
        h.apply_to_columns(&mut by_columns);
        assert!((by_columns - &dense * &mt).amax() < ORTHOGONALITY);
    }

    #[test]
    fn zero_vector_gives_identity() {
        let (h, alpha) = Reflector::annihilating(&[0.0, 0.0], 0);
        assert_eq!(alpha, 0.0);
        let mut x = [1.0, 2.0];
        h.apply_to_vector(&mut x);
        assert_eq!(x, [1.0, 2.0]);
    }
}
