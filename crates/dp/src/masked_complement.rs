//! Setting (B) of seed 004 — noise, then a Haar-random orthogonal mask — for a changed row of
//! any size: Theorem 3.4 and Lemma 5.3 redone with general bounds on the changed row.
//!
//! Seed 004 proves Theorem 3.4 for neighbours that differ in one row `X₁ → X₁′` with
//! `‖X₁‖ ≤ √p` (from `|x_ij| ≤ 1`, eq. (6)) and `‖X₁′ − X₁‖ ≤ 1` (Definition 2.1). The mechanism
//! TM² runs reduces (see [`crate::device`]) to setting (B) on `n′` rows whose changed row has norm
//! up to some `a` and changes by up to some `d`, with `a`, `d` larger than `√p`, `1`. This module
//! states the condition for such `(a, d)` and proves it by following §5.3 step by step.
//!
//! # Setting
//! `Y = V(X̃ + C)`, `X̃` an `n′ × p` matrix, `C` i.i.d. `N(0, σ²)`, `V` Haar on `O(n′)`. Neighbours
//! `X̃`, `X̃′` differ only in row 1 (after a fixed rotation, which `V` absorbs) with
//!
//! ```text
//! (M0)   ‖X₁‖ ≤ a,   ‖X₁′‖ ≤ a,   ‖X₁′ − X₁‖ ≤ d,   n′ > p.
//! ```
//!
//! # The proof of §5.3, step by step, for (M0)
//! * Eqs. (21)–(22), the choice of `Q̄`, `B = (AQ̄)ᵀ`, (23), (24): use only that the two data sets
//!   share rows 2…n′, whose span has dimension at most `p`. Unchanged.
//! * Lemma 5.1 and eq. (25). **Correction.** Given `B₊`, `B₁` is uniform on the unit sphere of
//!   the `q = n′ − p` dimensional space `⟂ B₊`, so by Lemma 5.1 the inner integral of (24) is
//!   `∫ e^{tu}(1 − u²)^{(q−3)/2} du / c̄_q`, which is `G_{q−1}(t)/c̄_q` in the notation (26)
//!   (`G_m` has exponent `(m − 2)/2`), not `G_q(t)` as (25) prints. With `G_{q−1}`, Lemma 5.2 as
//!   proved gives only `exp(|t₁² − t₂²|/(2(q − 1)))` in (27), i.e. `2(n′ − p − 1)` in (28).
//!   The printed `2(n′ − p)` is nevertheless right, by a sharper bound on the log-derivative:
//!   `G_m(t) ∝ t^{−ν} I_ν(t)` with `ν = (m − 1)/2` (DLMF 10.32.2), so
//!   `G_m′/G_m = I_{ν+1}(t)/I_ν(t)`, and the recurrence `I_ν − I_{ν+2} = (2(ν + 1)/t)·I_{ν+1}`
//!   (DLMF 10.29.1) gives `I_ν/I_{ν+1} = 2(ν + 1)/t + I_{ν+2}/I_{ν+1} > (m + 1)/t` for `t > 0`.
//!   Hence
//!
//!   ```text
//!   (M1)   G_{q−1}′(t) / G_{q−1}(t) < t/q,   so   G_{q−1}(t₂)/G_{q−1}(t₁) ≤ e^{|t₂² − t₁²|/(2q)},
//!   ```
//!
//!   which is (27) with the index the proof needs (for `q = 1` the inner "integral" is
//!   `cosh t`, `ν = −1/2`, and (M1) reads `tanh t < t`). The set `W` of (28) and eqs. (29)–(30)
//!   then hold as printed, with `n − p` read as `n′ − p`. `tests/lemma_5_2.rs` checks (M1) by
//!   quadrature.
//! * Eqs. (32)–(35): `T = Σᵢ Zᵢᵀ M Zᵢ` with `M = X₁′ᵀX₁′ − X₁ᵀX₁`, `|T| ≤ λ_max(M)·σ²·T̃`.
//!   Unchanged. The bound on `λ_max` (the spectral norm of `M`): the paper's chain ends with
//!   `λ_max² ≤ (2‖X₁‖‖Δ‖ + ‖Δ‖²)²`, i.e. `2ad + d²` under (M0). A second bound follows from
//!   `−X₁ᵀX₁ ⪯ M ⪯ X₁′ᵀX₁′` (Weyl): the eigenvalues of `M` lie in `[−‖X₁‖², ‖X₁′‖²]`. So
//!
//!   ```text
//!   (M2)   λ_max(M) ≤ L := min(a², 2ad + d²).
//!   ```
//!
//!   `a²` is attained by `X₁ ⟂ X₁′`, both of norm `a` (then `d = √2·a`).
//! * Non-centrality: `T̃ ~ χ²_{2(n′−p)}(Ñ)` with `Ñ = ‖X₁‖²/σ²` (the mean of `Z₁` is `X₁ᵀ`, which
//!   lies in the span of `M`'s eigenvectors), so
//!
//!   ```text
//!   (M3)   Ñ ≤ a²/σ².
//!   ```
//! * Last step of Lemma 5.3: `|‖X₁‖² − ‖X₁′‖²| ≤ (‖X₁‖ + ‖X₁′‖)·‖X₁ − X₁′‖ ≤ 2ad`, and also
//!   `≤ a²` since both squared norms lie in `[0, a²]`:
//!
//!   ```text
//!   (M4)   |‖X₁‖² − ‖X₁′‖²| ≤ 2H,   H := min(ad, a²/2).
//!   ```
//!
//! Putting (M1)–(M4) into (36)–(37): `W` has probability at least `1 − δ` under `P_X` when
//!
//! ```text
//! (M5)   L/(2(n′ − p)) · γ_{δ; 2(n′−p), a²/σ²} + H ≤ σ²ε,
//! ```
//!
//! `γ_{δ; k, λ}` the upper δ-quantile of the non-central χ² (convention `λ = Σμᵢ²`, see
//! [`crate::ncx2`]). Then the release is (ε, δ)-DP. With `a = √p`, `d = 1`, `n′ = n` and the
//! paper's bounds `L = 2√p + 1`, `H = √p` ([`LemmaBounds::AsPrinted`]), (M5) is eq. (13)
//! exactly. Since the quantile is the inverse survival function, (M5) is equivalent to
//!
//! ```text
//! (M6)   δ ≥ δ_B(ε) := P[χ²_{2(n′−p)}(a²/σ²) > 2(n′ − p)(σ²ε − H)/L]   (δ_B = 1 if σ²ε ≤ H),
//! ```
//!
//! which gives, for a fixed σ, the δ guaranteed at every ε (decreasing in ε and in σ: the
//! threshold grows and the non-centrality shrinks with σ).

use crate::ncx2::NonCentralChiSquared;
use crate::params::{ParameterError, check_delta, check_epsilon, check_rows};
use crate::root::{RootFailure, brent};
use crate::setting_b::SettingBError;
use crate::tolerance::{MAX_BRACKET_EXPANSIONS, SIGMA_RELATIVE};

/// Which bounds on `λ_max(M)` and on `|‖X₁‖² − ‖X₁′‖²|` enter (M5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LemmaBounds {
    /// `L = min(a², 2ad + d²)`, `H = min(ad, a²/2)`: (M2) and (M4), what the calibration uses.
    Sharpened,
    /// `L = 2ad + d²`, `H = ad`: the bounds of Lemma 5.3's proof as printed (with `a = √p`,
    /// `d = 1` they give eq. (13)).
    AsPrinted,
}

/// The changed row of the neighbouring pair: norm at most `a`, change at most `d` (M0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangedRow {
    norm: f64,
    change: f64,
}

impl ChangedRow {
    /// A changed row with `‖X₁‖, ‖X₁′‖ ≤ a` and `‖X₁′ − X₁‖ ≤ d`.
    ///
    /// # Errors
    /// [`ParameterError::InvalidRowBound`] unless `a > 0`, `0 < d ≤ 2a` (two vectors in the ball
    /// of radius `a` are at most `2a` apart), both finite.
    pub fn new(norm: f64, change: f64) -> Result<Self, ParameterError> {
        if !(norm.is_finite() && norm > 0.0 && change.is_finite() && change > 0.0)
            || change > 2.0 * norm
        {
            return Err(ParameterError::InvalidRowBound { norm, change });
        }
        Ok(Self { norm, change })
    }

    /// Seed 004's own setting: `a = √p` (entries in `[−1, 1]`, eq. (6)), `d = 1`
    /// (Definition 2.1).
    ///
    /// # Errors
    /// [`ParameterError::NoVariables`] for `p = 0`.
    pub fn paper(p: u64) -> Result<Self, ParameterError> {
        if p == 0 {
            return Err(ParameterError::NoVariables);
        }
        Self::new((p as f64).sqrt(), 1.0)
    }

    /// `a`, the bound on the norm of the changed row.
    pub fn norm(&self) -> f64 {
        self.norm
    }

    /// `d`, the bound on the change.
    pub fn change(&self) -> f64 {
        self.change
    }

    /// `(L, H)` of (M5): the bound on `λ_max(M)` and half the bound on `|‖X₁‖² − ‖X₁′‖²|`.
    ///
    /// Hand check: `a = d = 2` gives `Sharpened` `(min(4, 12), min(4, 2)) = (4, 2)` and
    /// `AsPrinted` `(12, 4)`.
    pub fn bounds(&self, which: LemmaBounds) -> (f64, f64) {
        let (a, d) = (self.norm, self.change);
        let (lambda, half_gap) = (2.0 * a * d + d * d, a * d);
        match which {
            LemmaBounds::AsPrinted => (lambda, half_gap),
            LemmaBounds::Sharpened => (lambda.min(a * a), half_gap.min(0.5 * a * a)),
        }
    }
}

/// Setting (B) on `n′` rows and `p` columns for a changed row bounded as in (M0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaskedComplement {
    rows: u64,
    p: u64,
    row: ChangedRow,
    bounds: LemmaBounds,
}

impl MaskedComplement {
    /// `n′ = rows` masked rows of `p` columns.
    ///
    /// # Errors
    /// [`ParameterError::NoVariables`] or [`ParameterError::TooFewRows`] unless `n′ > p ≥ 1`.
    pub fn new(
        rows: u64,
        p: u64,
        row: ChangedRow,
        bounds: LemmaBounds,
    ) -> Result<Self, ParameterError> {
        check_rows(rows, p)?;
        Ok(Self {
            rows,
            p,
            row,
            bounds,
        })
    }

    /// Number of masked rows `n′`.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Number of columns `p`.
    pub fn p(&self) -> u64 {
        self.p
    }

    /// The bounds on the changed row.
    pub fn changed_row(&self) -> ChangedRow {
        self.row
    }

    /// Degrees of freedom `2(n′ − p)` of the χ² in (M5).
    pub fn degrees_of_freedom(&self) -> f64 {
        2.0 * (self.rows - self.p) as f64
    }

    /// `a²/σ²`, the bound (M3) on the non-centrality.
    fn non_centrality(&self, sigma: f64) -> f64 {
        let a = self.row.norm();
        a * a / (sigma * sigma)
    }

    /// Left side minus right side of (M5): (ε, δ)-DP holds when this is `≤ 0`.
    ///
    /// # Formula
    /// `L/(2(n′ − p))·γ_{δ; 2(n′−p), a²/σ²} + H − σ²ε` with `(L, H)` from
    /// [`ChangedRow::bounds`]. Strictly decreasing in σ.
    ///
    /// # Errors
    /// [`SettingBError::InvalidSigma`] unless σ is finite and positive; parameter errors of
    /// `ε`, `δ`; quantile failures.
    pub fn condition(&self, sigma: f64, epsilon: f64, delta: f64) -> Result<f64, SettingBError> {
        check_sigma(sigma)?;
        check_epsilon(epsilon)?;
        check_delta(delta)?;
        let (lambda, half_gap) = self.row.bounds(self.bounds);
        let k = self.degrees_of_freedom();
        let quantile =
            NonCentralChiSquared::new(k, self.non_centrality(sigma))?.upper_quantile(delta)?;
        Ok(lambda / k * quantile + half_gap - sigma * sigma * epsilon)
    }

    /// The smallest δ that (M5) guarantees at `(σ, ε)`: eq. (M6).
    ///
    /// # Errors
    /// [`SettingBError::InvalidSigma`] unless σ is finite and positive;
    /// [`SettingBError::Parameter`] unless ε is finite and `≥ 0`; survival-function failures.
    pub fn delta_at(&self, sigma: f64, epsilon: f64) -> Result<f64, SettingBError> {
        check_sigma(sigma)?;
        if !(epsilon.is_finite() && epsilon >= 0.0) {
            return Err(SettingBError::Parameter(
                ParameterError::EpsilonNotPositive { epsilon },
            ));
        }
        let (lambda, half_gap) = self.row.bounds(self.bounds);
        let slack = sigma * sigma * epsilon - half_gap;
        if slack <= 0.0 {
            return Ok(1.0);
        }
        let k = self.degrees_of_freedom();
        Ok(NonCentralChiSquared::new(k, self.non_centrality(sigma))?.sf(k * slack / lambda)?)
    }

    /// The smallest σ satisfying (M5) at `(ε, δ)`.
    ///
    /// # Algorithm
    /// As [`NoiseThenMask::sufficient_sigma`](crate::setting_b::NoiseThenMask::sufficient_sigma):
    /// start from the root with the non-centrality dropped, `√((L·γ₀/(2(n′ − p)) + H)/ε)` with
    /// `γ₀` the central quantile (where the condition is `≥ 0`), double until it is `≤ 0`, then
    /// Brent to relative width [`SIGMA_RELATIVE`]. The condition is strictly decreasing in σ, so
    /// its root is unique.
    ///
    /// # Errors
    /// Parameter errors of `ε > 0`, `0 < δ < 1`; [`SettingBError::RootNotFound`] if no bracket
    /// or no convergence (not expected); quantile failures.
    pub fn sufficient_sigma(&self, epsilon: f64, delta: f64) -> Result<f64, SettingBError> {
        check_epsilon(epsilon)?;
        check_delta(delta)?;
        let not_found = || SettingBError::RootNotFound {
            epsilon,
            delta,
            n: self.rows,
            p: self.p,
        };
        let (lambda, half_gap) = self.row.bounds(self.bounds);
        let k = self.degrees_of_freedom();
        let central = NonCentralChiSquared::new(k, 0.0)?.upper_quantile(delta)?;
        let mut lo = ((lambda / k * central + half_gap) / epsilon).sqrt();
        let mut hi = 2.0 * lo;
        let mut expansions = 0;
        while self.condition(lo, epsilon, delta)? < 0.0 {
            hi = lo;
            lo *= 0.5;
            expansions += 1;
            if expansions > MAX_BRACKET_EXPANSIONS {
                return Err(not_found());
            }
        }
        while self.condition(hi, epsilon, delta)? > 0.0 {
            lo = hi;
            hi *= 2.0;
            expansions += 1;
            if expansions > MAX_BRACKET_EXPANSIONS {
                return Err(not_found());
            }
        }
        brent(
            |s| self.condition(s, epsilon, delta),
            lo,
            hi,
            SIGMA_RELATIVE,
            0.0,
        )
        .map_err(|failure| match failure {
            RootFailure::Function(e) => e,
            RootFailure::NotBracketed | RootFailure::NoConvergence => not_found(),
        })
    }
}

fn check_sigma(sigma: f64) -> Result<(), SettingBError> {
    if sigma.is_finite() && sigma > 0.0 {
        Ok(())
    } else {
        Err(SettingBError::InvalidSigma { sigma })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setting_b::NoiseThenMask;
    use crate::tolerance::{CONDITION_AT_INVERSE, SAME_FUNCTION};

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    /// With `a = √p`, `d = 1`, `n′ = n` and the printed bounds, (M5) is eq. (13): the two
    /// conditions agree at every σ, and so do their roots.
    #[test]
    fn reduces_to_equation_13_in_the_papers_setting() {
        for (eps, delta, n, p) in [
            (0.1, 0.01, 100, 5),
            (0.01, 1e-3, 60, 20),
            (0.5, 1e-6, 50, 1),
        ] {
            let paper = NoiseThenMask::new(eps, delta, n, p).unwrap();
            let general =
                MaskedComplement::new(n, p, ChangedRow::paper(p).unwrap(), LemmaBounds::AsPrinted)
                    .unwrap();
            for sigma in [0.5, 3.0, 40.0] {
                let (g1, g2) = (
                    paper.g(sigma).unwrap(),
                    general.condition(sigma, eps, delta).unwrap(),
                );
                assert!(
                    (g1 - g2).abs() <= SAME_FUNCTION * g1.abs().max(1.0),
                    "{g1} {g2}"
                );
            }
            let (s1, s2) = (
                paper.sufficient_sigma().unwrap(),
                general.sufficient_sigma(eps, delta).unwrap(),
            );
            assert!(rel(s2, s1) < SAME_FUNCTION, "{s1} vs {s2}");
        }
    }

    /// By hand: `a = d = 2`: sharpened `(L, H) = (4, 2)`, printed `(12, 4)`; `a = √5, d = 1`:
    /// sharpened `(min(5, 2√5 + 1), min(√5, 5/2)) = (5, √5)` — the paper's `L = 2√5 + 1 = 5.47`
    /// is improved by (M2) for p ≤ 5, equal to it from p = 6 on.
    #[test]
    fn bounds_by_hand() {
        let r = ChangedRow::new(2.0, 2.0).unwrap();
        assert_eq!(r.bounds(LemmaBounds::Sharpened), (4.0, 2.0));
        assert_eq!(r.bounds(LemmaBounds::AsPrinted), (12.0, 4.0));
        let (l, h) = ChangedRow::paper(5).unwrap().bounds(LemmaBounds::Sharpened);
        assert!(rel(l, 5.0) < SAME_FUNCTION && rel(h, 5f64.sqrt()) < SAME_FUNCTION);
        let (l, _) = ChangedRow::paper(6).unwrap().bounds(LemmaBounds::Sharpened);
        assert!(rel(l, 2.0 * 6f64.sqrt() + 1.0) < SAME_FUNCTION);
        assert!(ChangedRow::new(1.0, 2.5).is_err());
        assert!(ChangedRow::new(0.0, 0.5).is_err());
    }

    /// (M2) and (M4) on a grid of pairs `X₁ = a·(cos α, sin α)`, `X₁′ = r·(cos β, sin β)` inside
    /// the constraints (M0): the spectral norm of `M = X₁′ᵀX₁′ − X₁ᵀX₁` (computed from its 2×2
    /// eigenvalues: trace `‖X₁′‖² − ‖X₁‖²`, determinant `−(‖X₁‖²‖X₁′‖² − (X₁·X₁′)²)`) and the
    /// norm gap never exceed `L` and `2H`.
    #[test]
    fn sharpened_bounds_hold_on_a_grid() {
        let (a, d) = (1.5, 1.0);
        let row = ChangedRow::new(a, d).unwrap();
        let (l, h) = row.bounds(LemmaBounds::Sharpened);
        let mut worst_lambda: f64 = 0.0;
        for i in 0..=40 {
            for j in 0..=40 {
                for k in 0..=10 {
                    let (alpha, beta) = (0.157 * f64::from(i), 0.157 * f64::from(j));
                    let (na, nb) = (a * f64::from(k) / 10.0, a);
                    let x = [na * alpha.cos(), na * alpha.sin()];
                    let y = [nb * beta.cos(), nb * beta.sin()];
                    let diff = ((x[0] - y[0]).powi(2) + (x[1] - y[1]).powi(2)).sqrt();
                    if diff > d {
                        continue;
                    }
                    let (xx, yy, xy) = (na * na, nb * nb, x[0] * y[0] + x[1] * y[1]);
                    let trace = yy - xx;
                    let det = -(xx * yy - xy * xy);
                    let root = (0.25 * trace * trace - det).max(0.0).sqrt();
                    let lambda = (0.5 * trace).abs() + root;
                    worst_lambda = worst_lambda.max(lambda);
                    assert!(lambda <= l * (1.0 + SAME_FUNCTION), "{lambda} > {l}");
                    assert!((yy - xx).abs() <= 2.0 * h * (1.0 + SAME_FUNCTION));
                }
            }
        }
        assert!(worst_lambda > 0.5 * l, "the grid reaches the bound's scale");
    }

    /// (M6) inverts (M5): the δ guaranteed at (σ, ε) makes the condition hold with equality.
    #[test]
    fn delta_at_inverts_the_condition() {
        let c = MaskedComplement::new(
            99,
            5,
            ChangedRow::new(4.4, 4.4).unwrap(),
            LemmaBounds::Sharpened,
        )
        .unwrap();
        for (sigma, eps) in [(6.0, 1.0), (12.0, 0.3)] {
            let delta = c.delta_at(sigma, eps).unwrap();
            assert!(delta > 0.0 && delta < 1.0, "{delta}");
            let g = c.condition(sigma, eps, delta).unwrap();
            assert!(g.abs() < CONDITION_AT_INVERSE * sigma * sigma * eps, "{g}");
        }
        // σ²ε below H: nothing is guaranteed.
        assert!((c.delta_at(1.0, 1.0).unwrap() - 1.0).abs() < f64::MIN_POSITIVE);
    }

    /// The condition and (M6) decrease in σ; the sufficient σ is a sign change.
    #[test]
    fn monotone_in_sigma_with_a_unique_root() {
        let c = MaskedComplement::new(
            49,
            3,
            ChangedRow::new(3.4, 3.4).unwrap(),
            LemmaBounds::Sharpened,
        )
        .unwrap();
        let s = c.sufficient_sigma(0.5, 1e-5).unwrap();
        assert!(c.condition(s * (1.0 - 1e-6), 0.5, 1e-5).unwrap() > 0.0);
        assert!(c.condition(s * (1.0 + 1e-6), 0.5, 1e-5).unwrap() < 0.0);
        let mut previous = (f64::INFINITY, f64::INFINITY);
        for i in 0..30 {
            let sigma = 1.0 + 0.5 * f64::from(i);
            let now = (
                c.condition(sigma, 0.5, 1e-5).unwrap(),
                c.delta_at(sigma, 0.5).unwrap(),
            );
            assert!(now.0 < previous.0 && now.1 <= previous.1, "σ = {sigma}");
            previous = now;
        }
    }
}
