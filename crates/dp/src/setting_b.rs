//! Setting (B) of seed 004: Gaussian noise, then a Haar-random orthogonal mask,
//! `Y = A(X + C)` with `C ~ NI_{n×p}(0, σ²)` (eq. (4)) — what TM² releases when every
//! participant adds noise before masking.
//!
//! Theorem 3.4 gives the sufficient noise level σ₀ of eq. (13); Corollary 3.5 an explicit but
//! looser one, eq. (14); §4 extends both to block-diagonal masks. Setting (C), `Y = AX + C`
//! (eq. (15)), has the same density (Lemma A.4), so the same σ applies to it.
//!
//! # Neighbours
//! As in setting (A), the guarantee is for neighbours differing in one row by `‖Δ‖ ≤ 1`
//! (Definition 2.1) with entries `|x_ij| ≤ 1` (eq. (6)); the proof of Lemma 5.3 uses both.

use crate::ncx2::{NcChiSquaredError, NonCentralChiSquared};
use crate::params::{
    ParameterError, block_rows, check_delta, check_epsilon, check_epsilon_below_one, check_rows,
    check_smallest_block,
};
use crate::root::{RootFailure, brent};
use crate::tolerance::{MAX_BRACKET_EXPANSIONS, SIGMA_RELATIVE};

/// Numerical failures of setting (B).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingBError {
    /// σ passed to `g` is not finite and positive.
    #[error("σ = {sigma} must be finite and > 0")]
    InvalidSigma {
        /// The rejected value.
        sigma: f64,
    },
    /// A privacy parameter is outside the region where the result holds.
    #[error(transparent)]
    Parameter(#[from] ParameterError),
    /// The non-central χ² quantile failed.
    #[error("non-central χ² quantile of eq. (13) failed: {0}")]
    Quantile(#[from] NcChiSquaredError),
    /// No bracket or no convergence for the largest root of `g`.
    #[error(
        "could not locate the largest root of g in eq. (13) for ε = {epsilon}, δ = {delta}, \
         n = {n}, p = {p}"
    )]
    RootNotFound {
        /// Privacy budget.
        epsilon: f64,
        /// Failure probability.
        delta: f64,
        /// Rows (or smallest block) used.
        n: u64,
        /// Variables.
        p: u64,
    },
}

/// Setting (B) for a privacy budget `(ε, δ)`, `n` masked rows and `p` variables, optionally
/// with a block-diagonal mask whose smallest block has `n_s` rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseThenMask {
    epsilon: f64,
    delta: f64,
    n: u64,
    p: u64,
    smallest_block: Option<u64>,
}

impl NoiseThenMask {
    /// A full `n×n` Haar-random orthogonal mask.
    ///
    /// # Errors
    /// Theorem 3.4 needs a finite `ε > 0` ([`ParameterError::EpsilonNotPositive`]),
    /// `0 < δ < 1` ([`ParameterError::DeltaOutOfRange`]), `p ≥ 1`
    /// ([`ParameterError::NoVariables`]) and `n > p` ([`ParameterError::TooFewRows`]). It does
    /// not need `ε < 1`; Corollary 3.5 does (checked by
    /// [`explicit_sufficient_sigma`](Self::explicit_sufficient_sigma)).
    pub fn new(epsilon: f64, delta: f64, n: u64, p: u64) -> Result<Self, ParameterError> {
        check_epsilon(epsilon)?;
        check_delta(delta)?;
        check_rows(n, p)?;
        Ok(Self {
            epsilon,
            delta,
            n,
            p,
            smallest_block: None,
        })
    }

    /// A block-diagonal mask `diag(A₁, …, A_k)` of independent Haar-random orthogonal blocks,
    /// the smallest of which has `n_s` rows. Seed 004 §4: the mechanism "still achieves
    /// (ε, δ)-DP when n is replaced by n_s in condition (13)", provided `n_s > p`.
    ///
    /// # Errors
    /// As [`new`](Self::new), plus [`ParameterError::BlockTooSmall`] unless `n_s > p` and
    /// [`ParameterError::BlockLargerThanData`] unless `n_s ≤ n`.
    pub fn with_smallest_block(
        epsilon: f64,
        delta: f64,
        n: u64,
        p: u64,
        smallest_block: u64,
    ) -> Result<Self, ParameterError> {
        let mut b = Self::new(epsilon, delta, n, p)?;
        check_smallest_block(n, smallest_block, p)?;
        b.smallest_block = Some(smallest_block);
        Ok(b)
    }

    /// A block-diagonal mask with blocks of the given sizes (`n = Σ nᵢ`, `n_s = min nᵢ`).
    ///
    /// # Errors
    /// [`ParameterError::NoBlocks`] for an empty list, otherwise as
    /// [`with_smallest_block`](Self::with_smallest_block).
    pub fn block_diagonal(
        epsilon: f64,
        delta: f64,
        block_sizes: &[u64],
        p: u64,
    ) -> Result<Self, ParameterError> {
        let (n, smallest) = block_rows(block_sizes)?;
        Self::with_smallest_block(epsilon, delta, n, p, smallest)
    }

    /// Privacy budget ε.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// Failure probability δ.
    pub fn delta(&self) -> f64 {
        self.delta
    }

    /// Number of masked rows `n`.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Number of variables `p`.
    pub fn p(&self) -> u64 {
        self.p
    }

    /// Smallest block `n_s` of a block-diagonal mask, `None` for a full mask.
    pub fn smallest_block(&self) -> Option<u64> {
        self.smallest_block
    }

    /// The row count that enters (13) and (14): `n_s` for a block-diagonal mask, else `n`.
    pub fn effective_n(&self) -> u64 {
        self.smallest_block.unwrap_or(self.n)
    }

    /// Degrees of freedom `2(n − p)` of the χ² in (13) (with `n_s` for block masks).
    pub fn degrees_of_freedom(&self) -> f64 {
        2.0 * (self.effective_n() - self.p) as f64
    }

    /// The function whose largest root is σ₀.
    ///
    /// # Formula
    /// Seed 004, Theorem 3.4, eq. (13):
    /// `g(σ) = (2√p + 1)/(2(n − p)) · γ_{δ; 2(n−p), p/σ²} + √p − σ²ε`,
    /// where `γ_{δ; df, λ}` is the upper δ-quantile of the non-central χ² with `df` degrees of
    /// freedom and non-centrality `λ = p/σ²` in the convention `λ = Σ μᵢ²` (mean `df + λ`,
    /// SciPy's `nc`; see [`crate::ncx2`]). That is the `Ñ ≤ ‖X₁‖²/σ² ≤ p/σ²` of the proof of
    /// Lemma 5.3; Table 1 is reproduced with it (and, to its printed precision, would be with
    /// any convention in which the non-centrality shrinks like 1/σ², see the crate docs).
    ///
    /// # Errors
    /// [`SettingBError::InvalidSigma`] unless σ is finite and positive; quantile failures.
    pub fn g(&self, sigma: f64) -> Result<f64, SettingBError> {
        if !(sigma.is_finite() && sigma > 0.0) {
            return Err(SettingBError::InvalidSigma { sigma });
        }
        let p = self.p as f64;
        let nc = p / (sigma * sigma);
        let quantile =
            NonCentralChiSquared::new(self.degrees_of_freedom(), nc)?.upper_quantile(self.delta)?;
        Ok(self.slope() * quantile + p.sqrt() - sigma * sigma * self.epsilon)
    }

    /// The sufficient noise level σ₀ of Theorem 3.4: (ε, δ)-DP holds for every `σ ≥ σ₀`.
    ///
    /// # Formula
    /// σ₀ is the largest root of `g` of eq. (13) (see [`g`](Self::g)); with a block-diagonal
    /// mask `n` is replaced by `n_s` (§4). Conditions: `ε > 0`, `0 < δ < 1`, `n > p ≥ 1`.
    ///
    /// # Algorithm
    /// Write `c = (2√p + 1)/(2(n − p))` and `γ₀ = γ_{δ; 2(n−p), 0}` (central χ²).
    /// 1. Lower end: `σ_lo = √((c·γ₀ + √p)/ε)` solves `g = 0` with the non-centrality dropped.
    ///    Since the quantile increases with the non-centrality, `g(σ_lo) = c·(γ_{δ;·,p/σ_lo²} −
    ///    γ₀) ≥ 0`; should rounding make it negative, `σ_lo` is halved until `g(σ_lo) ≥ 0`
    ///    (`g → +∞` as `σ → 0`).
    /// 2. Upper end: `σ_hi = 2σ_lo`, doubled until `g(σ_hi) ≤ 0` (`g → −∞` as `σ → ∞`).
    /// 3. Brent's method on `[σ_lo, σ_hi]` to relative width [`SIGMA_RELATIVE`].
    ///
    /// The root found is the largest: both terms of `g` that depend on σ strictly decrease in
    /// σ (the quantile because `p/σ²` decreases, `−σ²ε` trivially), so `g(σ) < g(σ_hi) ≤ 0`
    /// for every `σ > σ_hi`, and `g` has exactly one root.
    ///
    /// # Errors
    /// [`SettingBError::RootNotFound`] if no bracket or no convergence (not expected);
    /// quantile failures.
    pub fn sufficient_sigma(&self) -> Result<f64, SettingBError> {
        let not_found = || SettingBError::RootNotFound {
            epsilon: self.epsilon,
            delta: self.delta,
            n: self.effective_n(),
            p: self.p,
        };
        let central = NonCentralChiSquared::new(self.degrees_of_freedom(), 0.0)?
            .upper_quantile(self.delta)?;
        let sqrt_p = (self.p as f64).sqrt();
        let mut lo = ((self.slope() * central + sqrt_p) / self.epsilon).sqrt();
        let mut hi = 2.0 * lo;
        let mut expansions = 0;
        while self.g(lo)? < 0.0 {
            hi = lo;
            lo *= 0.5;
            expansions += 1;
            if expansions > MAX_BRACKET_EXPANSIONS {
                return Err(not_found());
            }
        }
        while self.g(hi)? > 0.0 {
            lo = hi;
            hi *= 2.0;
            expansions += 1;
            if expansions > MAX_BRACKET_EXPANSIONS {
                return Err(not_found());
            }
        }
        brent(|s| self.g(s), lo, hi, SIGMA_RELATIVE, 0.0).map_err(|failure| match failure {
            RootFailure::Function(e) => e,
            RootFailure::NotBracketed | RootFailure::NoConvergence => not_found(),
        })
    }

    /// The explicit sufficient noise level of Corollary 3.5.
    ///
    /// # Formula
    /// Seed 004, eq. (14): `σ ≥ √((2n − p + ln(1/δ)) / (2(n − p))) · 3·p^{1/4} / √ε`, i.e.
    /// `σ²ε ≥ 9√p·(2n − p + ln(1/δ)) / (2(n − p))` (proof in A.4), valid for `ε < 1`, with `n_s`
    /// in place of `n` for block masks. It is always at least σ₀ of (13); for large `n` it
    /// tends to `3·p^{1/4}/√ε`.
    ///
    /// Hand check: n = 2, p = 1, δ = e⁻¹, ε = 0.25: `√((4 − 1 + 1)/2) · 3 / 0.5 = 6√2`.
    ///
    /// # Errors
    /// [`ParameterError::EpsilonNotBelowOne`] when `ε ≥ 1`.
    pub fn explicit_sufficient_sigma(&self) -> Result<f64, ParameterError> {
        check_epsilon_below_one(self.epsilon, "Corollary 3.5")?;
        let n = self.effective_n() as f64;
        let p = self.p as f64;
        let ratio = (2.0 * n - p - self.delta.ln()) / (2.0 * (n - p));
        Ok(ratio.sqrt() * 3.0 * p.sqrt().sqrt() / self.epsilon.sqrt())
    }

    /// `(2√p + 1)/(2(n − p))`, the coefficient of the quantile in (13).
    fn slope(&self) -> f64 {
        (2.0 * (self.p as f64).sqrt() + 1.0) / self.degrees_of_freedom()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{REFERENCE_SIGMA, SAME_FUNCTION};

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    /// n = 2, p = 1, δ = e⁻¹, ε = 0.25: (14) = √((4 − 1 + 1)/(2·1)) · 3·1 / √0.25 = 6√2.
    #[test]
    fn explicit_bound_by_hand() {
        let b = NoiseThenMask::new(0.25, (-1f64).exp(), 2, 1).unwrap();
        let got = b.explicit_sufficient_sigma().unwrap();
        assert!(rel(got, 6.0 * 2f64.sqrt()) < SAME_FUNCTION);
    }

    /// σ₀ solves g = 0 and g changes sign there: g > 0 just below, g < 0 just above.
    #[test]
    fn sigma_zero_is_a_sign_change_of_g() {
        let b = NoiseThenMask::new(0.1, 0.01, 100, 5).unwrap();
        let s = b.sufficient_sigma().unwrap();
        assert!(b.g(s * (1.0 - 1e-6)).unwrap() > 0.0);
        assert!(b.g(s * (1.0 + 1e-6)).unwrap() < 0.0);
    }

    /// g is strictly decreasing on a wide grid, so its only root is the largest one.
    #[test]
    fn g_is_decreasing() {
        let b = NoiseThenMask::new(0.01, 0.001, 60, 20).unwrap();
        let mut previous = f64::INFINITY;
        for i in 0..40 {
            let sigma = 0.05 * 1.3f64.powi(i);
            let value = b.g(sigma).unwrap();
            assert!(value < previous, "g not decreasing at σ = {sigma}");
            previous = value;
        }
    }

    /// Corollary 3.5 relaxes Theorem 3.4, so (14) ≥ (13), including for block masks.
    #[test]
    fn explicit_bound_is_looser_than_sigma_zero() {
        for (eps, delta, n, p) in [
            (0.9, 0.04, 3, 2),
            (0.1, 0.01, 100, 20),
            (1e-3, 1e-6, 500, 1),
        ] {
            let b = NoiseThenMask::new(eps, delta, n, p).unwrap();
            assert!(b.explicit_sufficient_sigma().unwrap() >= b.sufficient_sigma().unwrap());
        }
    }

    /// Reference σ₀ from SciPy 1.17.1, outside the range of Table 1 (ε > 1 is allowed by
    /// Theorem 3.4; n = 2 is the smallest design):
    /// `brentq(lambda s: (2*sqrt(p)+1)/(2*(n-p))*ncx2.isf(d, 2*(n-p), p/s**2) + sqrt(p) - s*s*e,
    /// 1.0, 1e5, xtol=1e-14, rtol=1e-15)`.
    #[test]
    fn sigma_zero_matches_scipy_outside_table_1() {
        let cases = [
            ((0.5, 1e-6, 50, 3), 4.475_030_874_336_931),
            ((2.0, 0.2, 2, 1), 1.812_553_128_363_177_7),
        ];
        for ((eps, delta, n, p), want) in cases {
            let got = NoiseThenMask::new(eps, delta, n, p)
                .unwrap()
                .sufficient_sigma()
                .unwrap();
            assert!(rel(got, want) < REFERENCE_SIGMA, "{got} vs {want}");
        }
    }

    /// §4: block masks use n_s in place of n, so a mask of blocks 30, 25, 40 for p = 5 is
    /// calibrated exactly like a full 25-row mask, and needs more noise than a full 95-row one.
    #[test]
    fn block_diagonal_uses_the_smallest_block() {
        let blocks = NoiseThenMask::block_diagonal(0.1, 0.01, &[30, 25, 40], 5).unwrap();
        assert_eq!((blocks.n(), blocks.effective_n()), (95, 25));
        let small = NoiseThenMask::new(0.1, 0.01, 25, 5).unwrap();
        let full = NoiseThenMask::new(0.1, 0.01, 95, 5).unwrap();
        let sb = blocks.sufficient_sigma().unwrap();
        assert!(rel(sb, small.sufficient_sigma().unwrap()) < SAME_FUNCTION);
        assert!(sb > full.sufficient_sigma().unwrap());
        assert!(matches!(
            NoiseThenMask::block_diagonal(0.1, 0.01, &[30, 5, 40], 5),
            Err(ParameterError::BlockTooSmall { smallest: 5, p: 5 })
        ));
    }

    #[test]
    fn conditions_are_enforced() {
        assert!(matches!(
            NoiseThenMask::new(0.1, 0.01, 5, 5),
            Err(ParameterError::TooFewRows { n: 5, p: 5 })
        ));
        assert!(matches!(
            NoiseThenMask::new(0.1, 1.0, 50, 5),
            Err(ParameterError::DeltaOutOfRange { .. })
        ));
        let b = NoiseThenMask::new(1.5, 0.01, 50, 5).unwrap();
        assert!(b.sufficient_sigma().is_ok());
        assert!(matches!(
            b.explicit_sufficient_sigma(),
            Err(ParameterError::EpsilonNotBelowOne { .. })
        ));
        assert!(matches!(b.g(0.0), Err(SettingBError::InvalidSigma { .. })));
    }
}
