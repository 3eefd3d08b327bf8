//! The non-central χ² distribution: CDF, survival function and upper quantile.
//!
//! # Why our own
//! Theorem 3.4 of seed 004 needs the upper δ-quantile `γ_{δ; df, λ}` of the non-central law for
//! the small δ of a privacy budget, so the survival function must keep its relative accuracy far
//! into the tail. `statrs` 0.19, the statistics crate we use, has only the central χ²
//! (`ChiSquared`). Of the Rust crates that have the non-central one, `cdflib` 0.4 (CDFLIB's
//! `cumchn`) stops its series once a term falls below 10⁻⁵ of the sum, returns the survival
//! function as `0.5 + (0.5 − CDF)` and finds quantiles on the CDF, so a small tail is the
//! difference of two numbers near 1; `r2rs-nmath` (R's `nmath`) is GPL-3.0-or-later, which this
//! crate's MIT/Apache-2.0 licence cannot take. Here both tails are summed directly, each to
//! [`SERIES_RELATIVE`] of itself.
//!
//! # Parametrisation
//! `X ~ χ²_k(λ)` is `Σᵢ Zᵢ²` for independent `Zᵢ ~ N(μᵢ, 1)`, `i = 1…k`, with non-centrality
//! `λ = Σᵢ μᵢ²`. Then `E X = k + λ` and `Var X = 2(k + 2λ)`. This is the convention of SciPy
//! (`scipy.stats.ncx2(df, nc)`), R (`pchisq(q, df, ncp)`), Boost and Johnson–Kotz–Balakrishnan,
//! and it is the one the proof of seed 004's Lemma 5.3 derives: the non-centrality `Ñ` there is
//! "the expectation of the sum of squares", bounded by `‖X₁‖²/σ² ≤ p/σ²`. (Seed 004's
//! Lemmas A.2 and A.3 instead write a parameter `ν` with mean `n + ν²`, i.e. `λ = ν²`.)
//!
//! # Formula
//! The Poisson mixture of central χ² laws (`J ~ Poisson(λ/2)`, `X | J ~ χ²_{k+2J}`):
//!
//! ```text
//! P[X ≤ x] = Σ_{j≥0} w_j · P(k/2 + j, x/2),    P[X > x] = Σ_{j≥0} w_j · Q(k/2 + j, x/2),
//! w_j = e^{−λ/2} (λ/2)^j / j!
//! ```
//!
//! with `P`, `Q` the regularized lower and upper incomplete gamma functions (`statrs`). Both
//! tails are summed directly, so a small survival probability keeps its relative accuracy.
//!
//! # Algorithm and error control
//! As in Ding (1992, *Applied Statistics* 41, algorithm AS 275) the sum starts at the Poisson
//! mode `j₀ = ⌊λ/2⌋`, where the weights are largest, and runs outwards in both directions. The
//! weights follow by the recurrences `w_{j+1} = w_j·(λ/2)/(j+1)` and `w_{j−1} = w_j·j/(λ/2)`.
//! Each direction stops once a rigorous bound on everything not yet added falls below
//! [`SERIES_RELATIVE`] times the partial sum: above the mode the remaining Poisson mass is
//! `Σ_{i>j} w_i ≤ w_j·r/(1−r)` with `r = (λ/2)/(j+1) < 1`, below it `Σ_{i<j} w_i ≤ w_j·r/(1−r)`
//! with `r = j/(λ/2) < 1`; each is multiplied by the largest incomplete-gamma factor the
//! remaining terms can have (1, or the current one where that factor is monotone in the right
//! direction: `Q(a, y)` increases and `P(a, y)` decreases in `a`).
//!
//! Quantiles are found by Brent's method on the survival function inside the bracket given by
//! the tail bounds of Lemma A.2 of seed 004 (Birgé 2001, Lemma 8.1), which is guaranteed to
//! contain the quantile.

use statrs::function::gamma::{checked_gamma_lr, checked_gamma_ur, ln_gamma};

use crate::root::{RootFailure, brent};
use crate::tolerance::{
    MAX_BRACKET_EXPANSIONS, MAX_SERIES_TERMS, QUANTILE_RELATIVE, SERIES_RELATIVE,
};

/// Errors of the non-central χ² distribution.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NcChiSquaredError {
    /// Degrees of freedom not finite and positive.
    #[error("degrees of freedom {df} must be finite and > 0")]
    InvalidDegreesOfFreedom {
        /// The rejected value.
        df: f64,
    },
    /// Non-centrality not finite and non-negative.
    #[error("non-centrality λ = {nc} must be finite and ≥ 0 (λ = Σ μᵢ², the SciPy/R convention)")]
    InvalidNonCentrality {
        /// The rejected value.
        nc: f64,
    },
    /// A tail probability outside `(0, 1)`.
    #[error("tail probability {probability} must lie strictly between 0 and 1")]
    InvalidProbability {
        /// The rejected value.
        probability: f64,
    },
    /// The point at which to evaluate the distribution is NaN.
    #[error("cannot evaluate the non-central χ² distribution at NaN")]
    NotANumber,
    /// `statrs`' incomplete gamma function refused its arguments.
    #[error("incomplete gamma function failed at shape {shape}, argument {x}")]
    IncompleteGamma {
        /// Shape `k/2 + j` of the failing term.
        shape: f64,
        /// Argument `x/2`.
        x: f64,
    },
    /// The mixture series needed more than [`MAX_SERIES_TERMS`] terms.
    #[error(
        "the Poisson mixture for χ²_{df}(λ = {nc}) at x = {x} did not converge within the term \
         limit; the non-centrality is too large for this algorithm"
    )]
    SeriesDidNotConverge {
        /// Degrees of freedom.
        df: f64,
        /// Non-centrality.
        nc: f64,
        /// Evaluation point.
        x: f64,
    },
    /// The quantile search could not bracket or converge.
    #[error("could not find the upper {delta}-quantile of χ²_{df}(λ = {nc})")]
    QuantileDidNotConverge {
        /// Degrees of freedom.
        df: f64,
        /// Non-centrality.
        nc: f64,
        /// Upper tail probability.
        delta: f64,
    },
}

/// Which tail the mixture sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tail {
    /// `P[X ≤ x]`, terms `P(k/2 + j, x/2)`, decreasing in `j`.
    Lower,
    /// `P[X > x]`, terms `Q(k/2 + j, x/2)`, increasing in `j`.
    Upper,
}

/// The non-central χ² distribution `χ²_k(λ)` with `k = df > 0` degrees of freedom and
/// non-centrality `λ = nc ≥ 0` (convention: `λ = Σ μᵢ²`, mean `k + λ`; see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NonCentralChiSquared {
    df: f64,
    nc: f64,
}

impl NonCentralChiSquared {
    /// Validate and build `χ²_df(nc)`.
    ///
    /// # Errors
    /// [`NcChiSquaredError::InvalidDegreesOfFreedom`] unless `df` is finite and `> 0`;
    /// [`NcChiSquaredError::InvalidNonCentrality`] unless `nc` is finite and `≥ 0`.
    pub fn new(df: f64, nc: f64) -> Result<Self, NcChiSquaredError> {
        if !(df.is_finite() && df > 0.0) {
            return Err(NcChiSquaredError::InvalidDegreesOfFreedom { df });
        }
        if !(nc.is_finite() && nc >= 0.0) {
            return Err(NcChiSquaredError::InvalidNonCentrality { nc });
        }
        Ok(Self { df, nc })
    }

    /// Degrees of freedom `k`.
    pub fn df(&self) -> f64 {
        self.df
    }

    /// Non-centrality `λ = Σ μᵢ²`.
    pub fn nc(&self) -> f64 {
        self.nc
    }

    /// Mean `k + λ`.
    pub fn mean(&self) -> f64 {
        self.df + self.nc
    }

    /// Variance `2(k + 2λ)`.
    pub fn variance(&self) -> f64 {
        2.0 * (self.df + 2.0 * self.nc)
    }

    /// Cumulative distribution function `P[X ≤ x]` (0 for `x ≤ 0`, 1 for `x = +∞`).
    ///
    /// # Errors
    /// [`NcChiSquaredError::NotANumber`] for NaN `x`; series or incomplete-gamma failures (not
    /// expected for `λ ≲ 10⁸`; the number of terms grows like `√λ`, and at `λ = 10⁶` one
    /// evaluation takes tens of milliseconds and is still good to `1e-9` relative).
    pub fn cdf(&self, x: f64) -> Result<f64, NcChiSquaredError> {
        self.mixture(x, Tail::Lower)
    }

    /// Survival function `P[X > x]` (1 for `x ≤ 0`, 0 for `x = +∞`), summed directly so that
    /// small upper-tail probabilities keep their relative accuracy.
    ///
    /// # Errors
    /// As for [`cdf`](Self::cdf).
    pub fn sf(&self, x: f64) -> Result<f64, NcChiSquaredError> {
        self.mixture(x, Tail::Upper)
    }

    /// Upper `δ`-quantile `γ_{δ; k, λ}`: the `x` with `P[X > x] = δ`.
    ///
    /// # Formula
    /// Solved by Brent's method on `sf(x) − δ` inside the bracket `[L, U]` from Lemma A.2 of
    /// seed 004 (with `ν² = λ`):
    /// `U = (k + λ) + 2√((k + 2λ)·t) + 2t` with `t = ln(1/δ)` has `P[X ≥ U] ≤ δ`, and
    /// `L = max(0, (k + λ) − 2√((k + 2λ)·s))` with `s = −ln(1 − δ)` has `P[X ≤ L] ≤ 1 − δ`.
    /// The search stops at relative width [`QUANTILE_RELATIVE`].
    ///
    /// # Errors
    /// [`NcChiSquaredError::InvalidProbability`] unless `0 < δ < 1`;
    /// [`NcChiSquaredError::QuantileDidNotConverge`] if the search fails; errors of
    /// [`sf`](Self::sf).
    pub fn upper_quantile(&self, delta: f64) -> Result<f64, NcChiSquaredError> {
        if !(delta > 0.0 && delta < 1.0) {
            return Err(NcChiSquaredError::InvalidProbability { probability: delta });
        }
        let fail = || NcChiSquaredError::QuantileDidNotConverge {
            df: self.df,
            nc: self.nc,
            delta,
        };
        let mean = self.mean();
        let spread = self.df + 2.0 * self.nc;
        let t = -delta.ln();
        let mut hi = mean + 2.0 * (spread * t).sqrt() + 2.0 * t;
        let s = -(-delta).ln_1p();
        let mut lo = (mean - 2.0 * (spread * s).sqrt()).max(0.0);
        // The bracket is guaranteed mathematically; these guards only absorb rounding.
        let mut expansions = 0;
        while self.sf(hi)? > delta {
            hi *= 2.0;
            expansions += 1;
            if expansions > MAX_BRACKET_EXPANSIONS {
                return Err(fail());
            }
        }
        if self.sf(lo)? < delta {
            lo = 0.0;
        }
        brent(
            |x| self.sf(x).map(|q| q - delta),
            lo,
            hi,
            QUANTILE_RELATIVE,
            f64::MIN_POSITIVE,
        )
        .map_err(|failure| match failure {
            RootFailure::Function(e) => e,
            RootFailure::NotBracketed | RootFailure::NoConvergence => fail(),
        })
    }

    /// Sum the Poisson mixture for one tail (see the module docs for the error control).
    fn mixture(&self, x: f64, tail: Tail) -> Result<f64, NcChiSquaredError> {
        if x.is_nan() {
            return Err(NcChiSquaredError::NotANumber);
        }
        let (below, above) = match tail {
            Tail::Lower => (0.0, 1.0),
            Tail::Upper => (1.0, 0.0),
        };
        if x <= 0.0 {
            return Ok(below);
        }
        if x.is_infinite() {
            return Ok(above);
        }
        let a = 0.5 * self.df;
        let y = 0.5 * x;
        let term = |shape: f64| -> Result<f64, NcChiSquaredError> {
            match tail {
                Tail::Lower => checked_gamma_lr(shape, y),
                Tail::Upper => checked_gamma_ur(shape, y),
            }
            .map_err(|_| NcChiSquaredError::IncompleteGamma { shape, x: y })
        };
        let mu = 0.5 * self.nc;
        if mu < f64::MIN_POSITIVE {
            // Central case: only the j = 0 term has weight.
            return term(a);
        }
        let diverged = || NcChiSquaredError::SeriesDidNotConverge {
            df: self.df,
            nc: self.nc,
            x,
        };

        let mode = mu.floor();
        let w_mode = (-mu + mode * mu.ln() - ln_gamma(mode + 1.0)).exp();

        // Upwards from the mode (inclusive).
        let mut sum = 0.0;
        let mut j = mode;
        let mut w = w_mode;
        let mut terms = 0u64;
        loop {
            let g = term(a + j)?;
            sum += w * g;
            let r = mu / (j + 1.0);
            let factor = match tail {
                Tail::Upper => 1.0,
                Tail::Lower => g,
            };
            let rest = w * r / (1.0 - r) * factor;
            if rest <= SERIES_RELATIVE * sum {
                break;
            }
            j += 1.0;
            w *= mu / j;
            terms += 1;
            if terms > MAX_SERIES_TERMS {
                return Err(diverged());
            }
        }

        // Downwards from the mode (exclusive).
        let mut j = mode;
        let mut w = w_mode;
        let mut terms = 0u64;
        while j >= 1.0 {
            w *= j / mu;
            j -= 1.0;
            let g = term(a + j)?;
            sum += w * g;
            if j < 1.0 {
                break;
            }
            let r = j / mu;
            let factor = match tail {
                Tail::Upper => g,
                Tail::Lower => 1.0,
            };
            let rest = w * r / (1.0 - r) * factor;
            if rest <= SERIES_RELATIVE * sum {
                break;
            }
            terms += 1;
            if terms > MAX_SERIES_TERMS {
                return Err(diverged());
            }
        }
        Ok(sum.clamp(0.0, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::SAME_FUNCTION;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    /// Two degrees of freedom, λ = 0: `P[X > x] = e^{−x/2}`, so the upper δ-quantile is
    /// `2 ln(1/δ)`; for δ = 0.01 that is `2 ln 100 = 9.210340371976184`.
    #[test]
    fn two_degrees_of_freedom_are_exponential() {
        let d = NonCentralChiSquared::new(2.0, 0.0).unwrap();
        for x in [0.1, 1.0, 3.0, 10.0, 40.0] {
            assert!(rel(d.sf(x).unwrap(), (-x / 2.0).exp()) < SAME_FUNCTION);
            assert!(rel(d.cdf(x).unwrap(), -(-x / 2.0).exp_m1()) < SAME_FUNCTION);
        }
        let q = d.upper_quantile(0.01).unwrap();
        assert!(rel(q, 2.0 * 100f64.ln()) < SAME_FUNCTION);
    }

    /// Two degrees of freedom with λ: the mixture terms are `Q(1 + j, y) = e^{−y} Σ_{i≤j} yⁱ/i!`,
    /// which we sum by hand here to 200 terms as an independent check of the series driver.
    #[test]
    fn two_degrees_of_freedom_match_a_hand_summed_mixture() {
        for (nc, x) in [(1.0, 3.0), (7.5, 12.0), (30.0, 20.0)] {
            let mu: f64 = nc / 2.0;
            let y: f64 = x / 2.0;
            let mut w = (-mu).exp();
            let mut inner = (-y).exp(); // e^{−y} Σ_{i≤j} yⁱ/i!
            let mut yi = (-y).exp();
            let mut sf = 0.0;
            for j in 0..200 {
                if j > 0 {
                    w *= mu / f64::from(j);
                    yi *= y / f64::from(j);
                    inner += yi;
                }
                sf += w * inner;
            }
            let d = NonCentralChiSquared::new(2.0, nc).unwrap();
            assert!(rel(d.sf(x).unwrap(), sf) < SAME_FUNCTION, "nc {nc} x {x}");
            assert!(
                rel(d.cdf(x).unwrap(), 1.0 - sf) < SAME_FUNCTION,
                "nc {nc} x {x}"
            );
        }
    }

    #[test]
    fn edges_of_the_support() {
        let d = NonCentralChiSquared::new(5.0, 3.0).unwrap();
        assert!(d.cdf(0.0).unwrap().abs() < f64::MIN_POSITIVE);
        assert!((d.sf(-1.0).unwrap() - 1.0).abs() < f64::MIN_POSITIVE);
        assert!((d.cdf(f64::INFINITY).unwrap() - 1.0).abs() < f64::MIN_POSITIVE);
        assert_eq!(d.cdf(f64::NAN), Err(NcChiSquaredError::NotANumber));
    }

    #[test]
    fn constructor_and_quantile_reject_bad_parameters() {
        assert!(NonCentralChiSquared::new(0.0, 1.0).is_err());
        assert!(NonCentralChiSquared::new(f64::INFINITY, 1.0).is_err());
        assert!(NonCentralChiSquared::new(3.0, -0.1).is_err());
        assert!(NonCentralChiSquared::new(3.0, f64::NAN).is_err());
        let d = NonCentralChiSquared::new(3.0, 1.0).unwrap();
        for bad in [0.0, 1.0, -0.5, f64::NAN] {
            assert!(matches!(
                d.upper_quantile(bad),
                Err(NcChiSquaredError::InvalidProbability { .. })
            ));
        }
    }
}
