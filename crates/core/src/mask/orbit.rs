//! The collector's `A₁·M` in `O(n·p₁²)`: sampling the orbit instead of the operator.
//!
//! The collector applies its left mask `A₁` exactly once, to the stacked `n × p₁` matrix
//! `M = [A₂,₁X₁,₁; …; A₂,K X₁,K]`, and nobody ever inverts it. What the release needs is therefore
//! not the operator `A₁` but one draw from the law of `A₁M`. Streaming `A₁` costs `n²/2` normals
//! and `O(n²p₁)` flops (at `n = 100 000` that is 5·10⁹ normals); the law of `A₁M` can be sampled
//! in `O(n p₁²)` instead.
//!
//! # The argument
//! **Plain Haar.** Let `A` be Haar on O(n), `M` (`n × k`) fixed, `q = min(n, k)`, and `M = Q R`
//! a thin QR (`Q` `n × q` with orthonormal columns, `R` `q × k`; rank deficiency allowed). Then
//! `A M = (A Q) R`. For every fixed orthogonal `V`, `V (A Q) = (V A) Q` has the law of `A Q`
//! (left invariance of Haar measure), so `A Q` is uniformly distributed on the Stiefel manifold
//! `V_q(ℝⁿ)` — the unique `O(n)`-invariant law there. The sign-fixed thin Q of an `n × q` matrix
//! `Z` with i.i.d. N(0, 1) entries, `G = Q_Z · diag(sign R_Z[j, j])`, has that same law: `V Z`
//! has the law of `Z` and `V Z = (V Q_Z) R_Z` is the QR of `V Z` with the same positive-diagonal
//! normalisation, so `G` is invariant too (Mezzadri 2007, §5; the fold is what makes it
//! invariant). Hence `A M` has exactly the law of `G R`.
//!
//! **Keeping columns fixed** (`1ₙ` for means, the kept columns of partial masking). Let
//! `A = P · diag(I_r, U) · Pᵀ` be Haar on the stabiliser of `F` as in
//! [`FixedSubspaceHaar`](super::FixedSubspaceHaar): `P = [P_S, W]` orthogonal with `P_S` a basis of
//! `S = span F` (dimension `r`), `U` Haar on O(n − r). Then
//!
//! `A M = P_S P_Sᵀ M + W (U N)`,  `N = Wᵀ M` (`(n − r) × k`),
//!
//! and by the plain case `U N` has the law of `G R_N` with `N = Q_N R_N` and `G` the sign-fixed
//! thin Q of a fresh `(n − r) × q` Gaussian matrix. So `A M` has exactly the law of
//! `P · [P_Sᵀ M; G R_N]`. Both sides are functions of `M` and of independent randomness, so the
//! joint law of the whole release is the same — the collector's release is drawn from the same
//! distribution as with the operator path, only much faster.
//!
//! **What is preserved exactly.** `(G R_N)ᵀ(G R_N) = R_Nᵀ R_N = NᵀN`, so the release has `MᵀM`
//! (hence `XᵀX`) to rounding; `1ₙ ∈ S` gives `1ₙᵀ A M = 1ₙᵀ M` (column means); kept columns lie
//! in `S` and pass through to rounding.
//!
//! # Cost
//! `r` reflectors for `P`, two thin QRs of `(n − r) × k` and one `Q·[R; 0]`: `O(n k²)` flops,
//! `O(n k)` memory. Nothing `n × n` is formed.
//!
//! # When it is used
//! [`DataCollector::release`](crate::protocol::tm2::DataCollector::release) samples the orbit for
//! keyed (ChaCha) designs with at least [`ORBIT_MIN_ROWS`] participants, and applies the keyed
//! operator below that (small surveys and the classroom keep the operator, whose matrix can be
//! shown). The release's law is the same either way; the realised numbers for a given key differ.

use super::fixed::fixed_basis;
use super::{MaskError, check_dim};
use crate::linalg::{Reflector, ThinQr};
use crate::random::{BitSource, fill_standard_normal};
use nalgebra::DMatrix;

/// From this many rows on, the collector samples `A₁M` by [`HaarOrbit`] instead of applying a
/// keyed `A₁` (`n²/2` normals and `O(n²p₁)` flops).
pub const ORBIT_MIN_ROWS: usize = 512;

/// A sampler of `A·M` for `A` Haar on the stabiliser `{A ∈ O(n) : A F = F}` of given columns
/// `F`, without forming or streaming `A` (see the module documentation for the argument).
#[derive(Clone, Debug)]
pub struct HaarOrbit {
    dim: usize,
    /// `P = G₀ ⋯ G_{r−1}`, the Householder QR of `F`.
    basis: Vec<Reflector>,
}

impl HaarOrbit {
    /// The sampler for the stabiliser of the columns of `fixed` (`n × k`; `k = 0` gives plain Haar
    /// on O(n)).
    ///
    /// # Errors
    /// [`MaskError::EmptyDimension`] when `n = 0`, [`MaskError::NonFinite`] for NaN/∞ in `fixed`,
    /// [`MaskError::NothingToMask`] when the columns span all of `ℝⁿ`.
    pub fn new(fixed: &DMatrix<f64>) -> Result<Self, MaskError> {
        if fixed.nrows() == 0 {
            return Err(MaskError::EmptyDimension);
        }
        Ok(Self {
            dim: fixed.nrows(),
            basis: fixed_basis(fixed)?,
        })
    }

    /// The sampler for Haar on the orthogonal matrices with `A·1 = 1`.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn ones_fixed(dim: usize) -> Result<Self, MaskError> {
        Self::new(&DMatrix::from_element(dim, 1, 1.0))
    }

    /// The dimension `n`.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of independent fixed directions `r`.
    pub fn fixed_rank(&self) -> usize {
        self.basis.len()
    }

    /// One draw from the law of `A·M`, reading `(n − r)·min(n − r, k)` normals from `source`.
    ///
    /// # Formula
    /// `A M ~ P · [P_Sᵀ M; G R_N]` with `[P_Sᵀ M; N] = Pᵀ M`, `N = Q_N R_N`, and `G` the
    /// sign-folded thin Q of a fresh Gaussian `(n − r) × q` matrix (module documentation).
    ///
    /// # Errors
    /// [`MaskError::DimensionMismatch`] when `m` does not have `n` rows.
    pub fn sample<B: BitSource + ?Sized>(
        &self,
        m: &DMatrix<f64>,
        source: &mut B,
    ) -> Result<DMatrix<f64>, MaskError> {
        self.sample_owned(m.clone(), source)
    }

    /// [`sample`](Self::sample) drawn over `m` itself, for a caller that no longer needs it (the
    /// collector's stacked cohorts). Each factor is dropped as soon as its part is taken, so at
    /// most three `n × k` matrices are alive at once (`M`; `N` and its reflectors while it is
    /// factored; the Gaussian's reflectors and `G R_N`): the release of a survey of any size
    /// costs a small multiple of the release itself (issue 23 §2).
    ///
    /// # Errors
    /// As [`sample`](Self::sample).
    pub fn sample_owned<B: BitSource + ?Sized>(
        &self,
        mut work: DMatrix<f64>,
        source: &mut B,
    ) -> Result<DMatrix<f64>, MaskError> {
        check_dim("the orbit sampler", self.dim, work.nrows(), "rows")?;
        let r = self.basis.len();
        let free = self.dim - r;
        // Pᵀ M = G_{r−1} ⋯ G₀ M.
        self.basis
            .iter()
            .for_each(|g| g.apply_to_columns(&mut work));
        // Only R_N is needed of N's factorisation.
        let mut top = ThinQr::from_owned(work.rows(r, free).into_owned())
            .r()
            .clone();
        let q = top.nrows();
        // Z: (n − r) × q Gaussian, filled column by column, factored in place.
        let qr_z = {
            let mut z = DMatrix::zeros(free, q);
            fill_standard_normal(source, z.as_mut_slice());
            ThinQr::from_owned(z)
        };
        for (j, s) in qr_z.diagonal_signs().iter().enumerate() {
            if *s < 0.0 {
                top.row_mut(j).neg_mut();
            }
        }
        // G R_N = Q_Z diag(s) R_N = Q_Z,full · [diag(s) R_N; 0].
        let g_r = qr_z.q_times(&top);
        drop(qr_z);
        work.rows_mut(r, free).copy_from(&g_r);
        drop(g_r);
        // P · [P_Sᵀ M; G R_N] = G₀ ⋯ G_{r−1} · (…).
        self.basis
            .iter()
            .rev()
            .for_each(|g| g.apply_to_columns(&mut work));
        Ok(work)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{Key, StreamId};
    use crate::mask::test_support::test_block;
    use crate::mask::{FixedSubspaceHaar, Mask};
    use crate::tolerance::{PRESERVED_STATISTICS, ks_critical_value, ks_two_sample};

    fn data(n: usize) -> DMatrix<f64> {
        // Columns with clearly non-zero means, so that keeping 1ₙ fixed matters.
        test_block(n, 3).map(|v| v + 3.0)
    }

    fn orbit_draw(sampler: &HaarOrbit, m: &DMatrix<f64>, seed: u64) -> DMatrix<f64> {
        let mut rng = Key::teaching(seed).stream(StreamId::Scratch(7)).rng();
        sampler.sample(m, &mut rng).unwrap()
    }

    fn operator_draw(fixed: &DMatrix<f64>, m: &DMatrix<f64>, seed: u64) -> DMatrix<f64> {
        let a = FixedSubspaceHaar::keyed(fixed, Key::teaching(seed).stream(StreamId::Scratch(8)))
            .unwrap();
        let mut out = m.clone();
        a.left_apply(&mut out).unwrap();
        out
    }

    /// Statistics of one draw: a fixed entry and the norm of a fixed row.
    fn features(draw: &DMatrix<f64>) -> (f64, f64) {
        (draw[(2, 1)], draw.row(5).norm())
    }

    fn sample_features(draws: u64, f: impl Fn(u64) -> DMatrix<f64>) -> (Vec<f64>, Vec<f64>) {
        (0..draws).map(|s| features(&f(s))).unzip()
    }

    /// The orbit sampler has the law of the operator ("dense") sampler: two-sample KS tests on a
    /// fixed entry and on a row norm, for `1ₙ` fixed and for `1ₙ` plus a kept column fixed, at
    /// α = 0.001 each (fixed seeds, so the outcome is reproducible). The same test rejects a
    /// sampler that forgets to keep `1ₙ` fixed, so it has the power to fail.
    #[test]
    fn orbit_law_matches_operator_law() {
        let n = 40;
        let draws = 1500;
        let m = data(n);
        let critical = ks_critical_value(draws as usize, draws as usize);
        let mut kept = DMatrix::from_element(n, 2, 1.0);
        kept.set_column(1, &m.column(0));
        for fixed in [DMatrix::from_element(n, 1, 1.0), kept] {
            let orbit = HaarOrbit::new(&fixed).unwrap();
            let (entry_o, norm_o) = sample_features(draws, |s| orbit_draw(&orbit, &m, s));
            let (entry_d, norm_d) =
                sample_features(draws, |s| operator_draw(&fixed, &m, 100_000 + s));
            let d_entry = ks_two_sample(&entry_o, &entry_d);
            let d_norm = ks_two_sample(&norm_o, &norm_d);
            assert!(d_entry < critical, "entry: KS {d_entry} ≥ {critical}");
            assert!(d_norm < critical, "row norm: KS {d_norm} ≥ {critical}");
        }
        // Power: plain Haar (nothing fixed) moves the column means, and the test sees it.
        let plain = HaarOrbit::new(&DMatrix::zeros(n, 0)).unwrap();
        let ones = DMatrix::from_element(n, 1, 1.0);
        let (entry_p, _) = sample_features(draws, |s| orbit_draw(&plain, &m, s));
        let (entry_d, _) = sample_features(draws, |s| operator_draw(&ones, &m, 200_000 + s));
        let d_wrong = ks_two_sample(&entry_p, &entry_d);
        assert!(d_wrong > critical, "wrong law not detected: KS {d_wrong}");
    }

    #[test]
    fn preserves_cross_products_means_and_kept_columns() {
        let n = 700;
        let m = data(n);
        let mut fixed = DMatrix::from_element(n, 2, 1.0);
        fixed.set_column(1, &m.column(2));
        let out = orbit_draw(&HaarOrbit::new(&fixed).unwrap(), &m, 5);
        let gram = m.tr_mul(&m);
        assert!((out.tr_mul(&out) - &gram).amax() / gram.amax() < PRESERVED_STATISTICS);
        let mean_error = (out.row_sum() - m.row_sum()).amax() / m.row_sum().amax();
        assert!(mean_error < PRESERVED_STATISTICS);
        assert!((out.column(2) - m.column(2)).amax() < PRESERVED_STATISTICS * m.amax());
        // The other columns really move.
        assert!((out.column(0) - m.column(0)).amax() > 0.1);
    }

    #[test]
    fn handles_wide_blocks_and_rejects_bad_shapes() {
        // k > n − r: the orbit is all of O(n − r).
        let m = test_block(5, 7);
        let out = orbit_draw(&HaarOrbit::ones_fixed(5).unwrap(), &m, 3);
        let gram = m.tr_mul(&m);
        assert!((out.tr_mul(&out) - &gram).amax() / gram.amax() < PRESERVED_STATISTICS);
        let mut rng = Key::teaching(1).stream(StreamId::Scratch(0)).rng();
        assert!(matches!(
            HaarOrbit::ones_fixed(6).unwrap().sample(&m, &mut rng),
            Err(MaskError::DimensionMismatch { .. })
        ));
        assert!(matches!(
            HaarOrbit::ones_fixed(1),
            Err(MaskError::NothingToMask { .. })
        ));
        assert_eq!(
            HaarOrbit::new(&DMatrix::zeros(0, 1)).unwrap_err(),
            MaskError::EmptyDimension
        );
    }
}
