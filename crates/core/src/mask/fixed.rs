//! Haar-distributed orthogonal operators that keep given columns fixed.
//!
//! # Law
//! Let `F` (`d × k`) hold the columns to keep, `S = span(F)` of dimension `r`, and
//! `F = P R` a Householder QR, `P = G₀ ⋯ G_{r−1}` orthogonal with `span(P[:, :r]) = S`. Then
//!
//! `A = P · diag(I_r, U) · Pᵀ`, `U` Haar on O(d − r),
//!
//! satisfies `A F = F` and is Haar-distributed on the subgroup `{A ∈ O(d) : A F = F}`: `A` is
//! the identity on `S` and a Haar rotation of `S^⊥`, and the law of `W U Wᵀ` for a fixed basis
//! `W` of `S^⊥` does not depend on the basis because Haar measure is invariant.
//!
//! With `F = 1_d` this is the law of `GenerateROM` in Appendix 1 of Wu, Chen, Burr & Zhang (2017)
//! (seed 003): there `A = M₁M₂ᵀ = (1/d)·11ᵀ + V₁V₂ᵀ` where `V₁`, `V₂` are independent uniformly
//! random orthonormal bases of `1^⊥`, so `V₁V₂ᵀ` is a Haar rotation of `1^⊥`. Keeping `1_d` fixed
//! is what makes column means survive a row mask; keeping more columns fixed is the partial
//! masking of seed 003 §3.1 (`A₁A₂X = [X₁, A₁A₂X₂]`).
//!
//! # Cost
//! `P` is `r` reflectors (applied one at a time, `O(d)` each per record) and `U` a
//! [`HaarOrthogonal`] stream, so blocks of records go through its blocked path above its size
//! thresholds and nothing `d × d` is formed. When only the law of `A·M` for one block `M` is
//! needed (the collector's release), [`HaarOrbit`](super::HaarOrbit) samples it in `O(d k²)`.

use super::haar::HaarOrthogonal;
use super::{Mask, MaskError, check_dim};
use crate::key::KeyedStream;
use crate::linalg::Reflector;
use crate::random::BitSource;
use nalgebra::DMatrix;

/// A column of `F` whose component outside the span of the earlier columns is below this
/// fraction of its norm adds no new fixed direction.
const RANK_RELATIVE: f64 = 1e-10;

/// `A = P · diag(I_r, U) · Pᵀ` with `U` Haar (see the module documentation).
#[derive(Clone, Debug)]
pub struct FixedSubspaceHaar {
    dim: usize,
    basis: Vec<Reflector>,
    inner: HaarOrthogonal,
}

/// Householder QR of the fixed columns, skipping columns already in the span.
pub(super) fn fixed_basis(fixed: &DMatrix<f64>) -> Result<Vec<Reflector>, MaskError> {
    if fixed.iter().any(|v| !v.is_finite()) {
        return Err(MaskError::NonFinite);
    }
    let d = fixed.nrows();
    let mut work = fixed.clone();
    let mut basis: Vec<Reflector> = Vec::new();
    for j in 0..work.ncols() {
        let r = basis.len();
        let column_norm = fixed.column(j).norm();
        let tail: Vec<f64> = work.column(j).rows(r, d - r).iter().copied().collect();
        let tail_norm = tail.iter().map(|v| v * v).sum::<f64>().sqrt();
        if column_norm == 0.0 || tail_norm <= RANK_RELATIVE * column_norm {
            continue;
        }
        let (reflector, _) = Reflector::annihilating(&tail, r);
        reflector.apply_to_columns(&mut work);
        basis.push(reflector);
    }
    if basis.len() >= d {
        return Err(MaskError::NothingToMask {
            fixed: basis.len(),
            dim: d,
        });
    }
    Ok(basis)
}

impl FixedSubspaceHaar {
    /// Haar on the stabiliser of the columns of `fixed` (`d × k`), drawn from a key stream.
    ///
    /// # Errors
    /// [`MaskError::NonFinite`] for NaN/∞ in `fixed`, [`MaskError::NothingToMask`] when the
    /// columns span all of `R^d`, [`MaskError::EmptyDimension`] when `d = 0`.
    pub fn keyed(fixed: &DMatrix<f64>, stream: KeyedStream) -> Result<Self, MaskError> {
        if fixed.nrows() == 0 {
            return Err(MaskError::EmptyDimension);
        }
        let basis = fixed_basis(fixed)?;
        let inner = HaarOrthogonal::keyed(fixed.nrows() - basis.len(), stream)?;
        Ok(Self {
            dim: fixed.nrows(),
            basis,
            inner,
        })
    }

    /// As [`keyed`](Self::keyed) but drawn from a sequential bit source.
    ///
    /// # Errors
    /// As [`keyed`](Self::keyed).
    pub fn from_source<B: BitSource + ?Sized>(
        fixed: &DMatrix<f64>,
        source: &mut B,
    ) -> Result<Self, MaskError> {
        if fixed.nrows() == 0 {
            return Err(MaskError::EmptyDimension);
        }
        let basis = fixed_basis(fixed)?;
        let inner = HaarOrthogonal::from_source(fixed.nrows() - basis.len(), source)?;
        Ok(Self {
            dim: fixed.nrows(),
            basis,
            inner,
        })
    }

    /// Haar on the orthogonal matrices with `A·1 = 1` (the law of `GenerateROM`).
    ///
    /// # Errors
    /// [`MaskError::NothingToMask`] when `d = 1` (only the identity keeps `1₁` fixed),
    /// [`MaskError::EmptyDimension`] when `d = 0`.
    pub fn ones_fixed(dim: usize, stream: KeyedStream) -> Result<Self, MaskError> {
        Self::keyed(&DMatrix::from_element(dim, 1, 1.0), stream)
    }

    /// Number of independent fixed directions `r`.
    pub fn fixed_rank(&self) -> usize {
        self.basis.len()
    }

    /// `x ← Pᵀ x` on every column (`forward = true`) or `x ← P x`.
    fn basis_left(&self, m: &mut DMatrix<f64>, transpose_p: bool) {
        if transpose_p {
            // Pᵀ = G_{r−1} ⋯ G₀: G₀ acts first.
            self.basis.iter().for_each(|g| g.apply_to_columns(m));
        } else {
            self.basis.iter().rev().for_each(|g| g.apply_to_columns(m));
        }
    }

    /// `M ← M P` (`p = true`) or `M ← M Pᵀ`.
    fn basis_right(&self, m: &mut DMatrix<f64>, p: bool) {
        if p {
            // M P = M G₀ ⋯ G_{r−1}: G₀ acts first.
            self.basis.iter().for_each(|g| g.apply_to_rows(m));
        } else {
            self.basis.iter().rev().for_each(|g| g.apply_to_rows(m));
        }
    }

    fn left(&self, m: &mut DMatrix<f64>, transpose: bool) {
        // A M = P diag(I, U) Pᵀ M;  Aᵀ M = P diag(I, Uᵀ) Pᵀ M.
        self.basis_left(m, true);
        self.inner.left_mul_at(m, self.basis.len(), transpose);
        self.basis_left(m, false);
    }

    fn right(&self, m: &mut DMatrix<f64>, transpose: bool) {
        // M A = M P diag(I, U) Pᵀ;  M Aᵀ = M P diag(I, Uᵀ) Pᵀ.
        self.basis_right(m, true);
        self.inner.right_mul_at(m, self.basis.len(), transpose);
        self.basis_right(m, false);
    }
}

impl Mask for FixedSubspaceHaar {
    fn dim(&self) -> usize {
        self.dim
    }

    fn right_apply(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the fixed-column Haar mask", self.dim, m.ncols(), "columns")?;
        self.right(m, false);
        Ok(())
    }

    fn right_apply_inverse(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the fixed-column Haar mask", self.dim, m.ncols(), "columns")?;
        self.right(m, true);
        Ok(())
    }

    fn left_apply(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the fixed-column Haar mask", self.dim, m.nrows(), "rows")?;
        self.left(m, false);
        Ok(())
    }

    fn left_apply_inverse(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the fixed-column Haar mask", self.dim, m.nrows(), "rows")?;
        self.left(m, true);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{Key, StreamId};
    use crate::mask::generate_rom;
    use crate::mask::test_support::{
        check_blocked_matches_scalar, check_consistent, check_orthogonal, test_block,
    };
    use crate::random::MatlabTwister;
    use crate::tolerance::ORTHOGONALITY;

    fn ones_fixed(dim: usize, seed: u64) -> FixedSubspaceHaar {
        FixedSubspaceHaar::ones_fixed(dim, Key::teaching(seed).stream(StreamId::Scratch(1)))
            .unwrap()
    }

    #[test]
    fn keeps_ones_fixed_and_is_orthogonal() {
        for dim in [2, 3, 20, 57] {
            let a = ones_fixed(dim, 5);
            check_consistent(&a);
            check_orthogonal(&a);
            let mut ones = DMatrix::from_element(dim, 1, 1.0);
            a.left_apply(&mut ones).unwrap();
            assert!(ones.iter().all(|v| (v - 1.0).abs() < ORTHOGONALITY));
        }
    }

    #[test]
    fn keeps_arbitrary_columns_fixed() {
        let d = 15;
        let mut fixed = test_block(d, 3);
        fixed.column_mut(0).fill(1.0);
        let a = FixedSubspaceHaar::keyed(&fixed, Key::teaching(8).stream(StreamId::Scratch(2)))
            .unwrap();
        assert_eq!(a.fixed_rank(), 3);
        check_orthogonal(&a);
        let mut moved = fixed.clone();
        a.left_apply(&mut moved).unwrap();
        assert!((moved - &fixed).amax() < ORTHOGONALITY * fixed.amax() * d as f64);
        // Something else does move.
        let mut other = test_block(d, 1).map(|v| v * v);
        let before = other.clone();
        a.left_apply(&mut other).unwrap();
        assert!((other - before).amax() > 0.1);
    }

    /// The `1ₙ`-fixed and kept-column variants take the blocked path for blocks of records and
    /// agree with their scalar dense form.
    #[test]
    fn blocked_path_matches_scalar_dense_form() {
        check_blocked_matches_scalar(&ones_fixed(150, 6));
        let d = 140;
        let mut fixed = test_block(d, 3);
        fixed.column_mut(0).fill(1.0);
        let a = FixedSubspaceHaar::keyed(&fixed, Key::teaching(8).stream(StreamId::Scratch(5)))
            .unwrap();
        check_blocked_matches_scalar(&a);
        let mut moved = fixed.clone().transpose();
        a.right_apply(&mut moved).unwrap();
        assert!((moved.transpose() - &fixed).amax() < ORTHOGONALITY * fixed.amax() * d as f64);
    }

    #[test]
    fn dependent_fixed_columns_count_once() {
        let d = 10;
        let mut fixed = DMatrix::from_element(d, 2, 1.0);
        fixed.column_mut(1).scale_mut(3.0);
        let a = FixedSubspaceHaar::keyed(&fixed, Key::teaching(9).stream(StreamId::Scratch(3)))
            .unwrap();
        assert_eq!(a.fixed_rank(), 1);
        check_consistent(&a);
    }

    #[test]
    fn refuses_when_nothing_is_left_to_mask() {
        let stream = Key::teaching(1).stream(StreamId::Scratch(4));
        assert!(matches!(
            FixedSubspaceHaar::ones_fixed(1, stream.clone()),
            Err(MaskError::NothingToMask { .. })
        ));
        assert!(matches!(
            FixedSubspaceHaar::keyed(&DMatrix::identity(4, 4), stream.clone()),
            Err(MaskError::NothingToMask { .. })
        ));
        let mut nan = DMatrix::from_element(4, 1, 1.0);
        nan[(2, 0)] = f64::NAN;
        assert_eq!(
            FixedSubspaceHaar::keyed(&nan, stream).unwrap_err(),
            MaskError::NonFinite
        );
    }

    /// Law: the restriction to `1^⊥` is Haar on O(n−1), so `tr A = 1 + tr U` has mean 1 and
    /// variance 1 (Diaconis & Shahshahani), and `a₁₁ = 1/n + u` where `E[a₁₁] = 1/n`. The same
    /// moments are checked for the literal Appendix 1 `GenerateROM` algorithm, which must share
    /// the law. 2000 draws: standard errors ≈ 0.022 (trace mean) and 0.032 (trace variance);
    /// bounds are five standard errors.
    #[test]
    fn ones_fixed_law_matches_generate_rom() {
        let n = 12;
        let draws = 2000;
        let stats = |matrices: &mut dyn FnMut(u64) -> DMatrix<f64>| {
            let (mut tr, mut trsq, mut a11) = (0.0, 0.0, 0.0);
            for s in 0..draws {
                let a = matrices(s);
                let t = a.trace();
                tr += t;
                trsq += t * t;
                a11 += a[(0, 0)];
            }
            let d = draws as f64;
            (tr / d, trsq / d - (tr / d).powi(2), a11 / d)
        };
        let (keyed_mean, keyed_var, keyed_a11) =
            stats(&mut |s| ones_fixed(n, 50_000 + s).to_dense());
        let (rom_mean, rom_var, rom_a11) = stats(&mut |s| {
            generate_rom(
                n,
                &mut MatlabTwister::new(s as u32 + 1),
                &mut MatlabTwister::new(s as u32 + 3),
            )
        });
        for (mean, var, a11) in [
            (keyed_mean, keyed_var, keyed_a11),
            (rom_mean, rom_var, rom_a11),
        ] {
            assert!((mean - 1.0).abs() < 0.11, "E[tr A] = {mean}");
            assert!((var - 1.0).abs() < 0.16, "Var[tr A] = {var}");
            // a₁₁ − 1/n = u₁₁-like entry of a Haar rotation of 1^⊥, sd ≈ 1/√n: se ≈ 0.0065.
            assert!((a11 - 1.0 / n as f64).abs() < 0.033, "E[a11] = {a11}");
        }
    }

    #[test]
    fn stored_source_variant_matches_its_own_law() {
        let a = FixedSubspaceHaar::from_source(
            &DMatrix::from_element(7, 1, 1.0),
            &mut MatlabTwister::new(536),
        )
        .unwrap();
        check_consistent(&a);
        check_orthogonal(&a);
    }
}
