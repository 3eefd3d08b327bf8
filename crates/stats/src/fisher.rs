//! Fisher's exact test for a 2×2 table, with the conditional maximum-likelihood odds ratio and
//! its exact confidence interval — what R's `fisher.test` reports.
//!
//! For small tables (an expected count below 5) the χ² approximation of
//! [`association`](crate::association) is poor; conditioning on both margins makes the table's
//! first cell hypergeometric and the test exact.
//!
//! # Formula
//! Table `[[a, b], [c, d]]`, first row total `k = a + b`, first column total `m = a + c`, second
//! column total `n = b + d`. Given the margins, `X = a` has the (Fisher) non-central
//! hypergeometric law on `lo = max(0, k − n) … hi = min(k, m)`:
//!
//! ```text
//! (F1)   P_ψ(X = x) = C(m, x)·C(n, k − x)·ψˣ / Σ_s C(m, s)·C(n, k − s)·ψˢ,
//! ```
//!
//! `ψ` the odds ratio; under independence `ψ = 1` and (F1) is the hypergeometric law
//! (`statrs`' `Hypergeometric` with population `m + n`, `m` successes, `k` draws).
//!
//! * Two-sided p-value (R's `fisher.test`): the probability, under `ψ = 1`, of the tables no
//!   more likely than the observed one, `Σ_{s : P₁(s) ≤ P₁(a)·(1 + 10⁻⁷)} P₁(s)`; the relative
//!   tolerance [`FISHER_RELATIVE_TIES`] keeps tables that are equally likely in exact arithmetic
//!   from being split by rounding.
//! * Conditional maximum-likelihood estimate of ψ: the root of `E_ψ[X] = a` (the likelihood
//!   (F1) is an exponential family in `ln ψ` with sufficient statistic `X`); 0 when `a = lo`,
//!   `+∞` when `a = hi`.
//! * 95% interval (R's two-sided `conf.int`): `ψ_L` with `P_ψ(X ≥ a) = 0.025` (0 when
//!   `a = lo`), `ψ_U` with `P_ψ(X ≤ a) = 0.025` (`+∞` when `a = hi`).
//!
//! The roots are found in `u = ln ψ`, where `E_ψ[X]` and the tail probabilities are monotone,
//! by safeguarded Newton (the derivative of `E` is `Var_ψ X`) and by bisection, to
//! [`FISHER_ROOT_RELATIVE`]. R's `uniroot` stops at `10⁻⁴` in `ψ` or `1/ψ` on `(0, 1)`, so R prints
//! these estimates to only about 4–6 digits (6.408309 for the tea-tasting table, whose exact
//! estimate is 6.4083197).

use statrs::distribution::{Discrete, Hypergeometric};

use crate::inference::CONFIDENCE_LEVEL;
use crate::tolerance::{FISHER_RELATIVE_TIES, FISHER_ROOT_RELATIVE};

/// Why Fisher's exact test cannot be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FisherError {
    /// A margin is zero, so the table is fixed by its margins and there is nothing to test.
    #[error(
        "the 2×2 table {table:?} has an empty row or column; Fisher's exact test needs every margin positive"
    )]
    EmptyMargin {
        /// The table.
        table: [[u64; 2]; 2],
    },
    /// The counts overflow (total above 2⁶⁴ − 1).
    #[error("the counts of the 2×2 table {table:?} add up to more than 2⁶⁴ − 1")]
    Overflow {
        /// The table.
        table: [[u64; 2]; 2],
    },
}

/// Fisher's exact test of a 2×2 table (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct FisherExact {
    table: [[u64; 2]; 2],
    p_value: f64,
    odds_ratio: f64,
    ci_low: f64,
    ci_high: f64,
}

/// The support `lo..=hi` of `X`, as `ln P₁(X = lo + i)` for `i = 0…hi − lo`.
struct Conditional {
    log_weights: Vec<f64>,
}

impl Conditional {
    /// `P_ψ(X = s)` for every `s` of the support, at `u = ln ψ`.
    fn probabilities(&self, u: f64) -> Vec<f64> {
        let exponents: Vec<f64> = self
            .log_weights
            .iter()
            .enumerate()
            .map(|(i, w)| w + u * i as f64)
            .collect();
        let top = exponents.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let weights: Vec<f64> = exponents.iter().map(|e| (e - top).exp()).collect();
        let total: f64 = weights.iter().sum();
        weights.iter().map(|w| w / total).collect()
    }

    /// `(E_ψ[X − lo], Var_ψ X)` at `u = ln ψ`.
    fn moments(&self, u: f64) -> (f64, f64) {
        let p = self.probabilities(u);
        let mean: f64 = p.iter().enumerate().map(|(i, q)| i as f64 * q).sum();
        let variance: f64 = p
            .iter()
            .enumerate()
            .map(|(i, q)| (i as f64 - mean).powi(2) * q)
            .sum();
        (mean, variance)
    }

    /// `P_ψ(X ≥ lo + i)` (upper) or `P_ψ(X ≤ lo + i)` (lower) at `u = ln ψ`.
    fn tail(&self, u: f64, i: usize, upper: bool) -> f64 {
        let p = self.probabilities(u);
        if upper {
            p[i..].iter().sum()
        } else {
            p[..=i].iter().sum()
        }
    }
}

/// A bracket `[lo, hi]` in `u` with `f(lo) < 0 < f(hi)` for an increasing `f`, widened from
/// `[−1, 1]` by doubling (f tends to ∓ its limits as u → ∓∞ in every use here).
fn bracket(f: &impl Fn(f64) -> f64) -> (f64, f64) {
    let (mut lo, mut hi) = (-1.0, 1.0);
    while f(lo) >= 0.0 && lo > -1e6 {
        lo *= 2.0;
    }
    while f(hi) <= 0.0 && hi < 1e6 {
        hi *= 2.0;
    }
    (lo, hi)
}

/// Root of an increasing `f` in `u` by bisection to [`FISHER_ROOT_RELATIVE`].
fn bisect(f: impl Fn(f64) -> f64) -> f64 {
    let (mut lo, mut hi) = bracket(&f);
    while hi - lo > FISHER_ROOT_RELATIVE * hi.abs().max(lo.abs()).max(1.0) {
        let mid = 0.5 * (lo + hi);
        if f(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

impl FisherExact {
    /// Test the table `[[a, b], [c, d]]` (rows: first row first).
    ///
    /// # Errors
    /// [`FisherError::EmptyMargin`] when a row or column total is 0; [`FisherError::Overflow`]
    /// when the counts do not add up in a `u64`.
    pub fn new(table: [[u64; 2]; 2]) -> Result<Self, FisherError> {
        let [[a, b], [c, d]] = table;
        let sum = |x: u64, y: u64| x.checked_add(y).ok_or(FisherError::Overflow { table });
        let (k, m, n) = (sum(a, b)?, sum(a, c)?, sum(b, d)?);
        let total = sum(m, n)?;
        if k == 0 || m == 0 || n == 0 || sum(c, d)? == 0 {
            return Err(FisherError::EmptyMargin { table });
        }
        let null = Hypergeometric::new(total, m, k).map_err(|_| FisherError::Overflow { table })?;
        let lo = k.saturating_sub(n);
        let hi = k.min(m);
        let log_weights: Vec<f64> = (lo..=hi).map(|s| null.ln_pmf(s)).collect();
        let conditional = Conditional { log_weights };
        let observed = (a - lo) as usize;
        let last = (hi - lo) as usize;

        // Two-sided p-value under ψ = 1 (u = 0), R's rule with relative tolerance for ties.
        let null_probabilities = conditional.probabilities(0.0);
        let cutoff = null_probabilities[observed] * (1.0 + FISHER_RELATIVE_TIES);
        let p_value = null_probabilities
            .iter()
            .filter(|&&q| q <= cutoff)
            .sum::<f64>()
            .min(1.0);

        // Conditional MLE: E_ψ[X − lo] = a − lo, by safeguarded Newton in u = ln ψ.
        let target = observed as f64;
        let odds_ratio = if observed == 0 {
            0.0
        } else if observed == last {
            f64::INFINITY
        } else {
            let f = |u: f64| conditional.moments(u).0 - target;
            let (mut lo_u, mut hi_u) = bracket(&f);
            let mut u = 0.0_f64.clamp(lo_u, hi_u);
            loop {
                let (mean, variance) = conditional.moments(u);
                let value = mean - target;
                if value < 0.0 {
                    lo_u = u;
                } else {
                    hi_u = u;
                }
                let newton = u - value / variance;
                let next = if newton > lo_u && newton < hi_u && variance > 0.0 {
                    newton
                } else {
                    0.5 * (lo_u + hi_u)
                };
                let step = (next - u).abs();
                u = next;
                if step <= FISHER_ROOT_RELATIVE * u.abs().max(1.0)
                    || hi_u - lo_u <= FISHER_ROOT_RELATIVE * u.abs().max(1.0)
                {
                    break;
                }
            }
            u.exp()
        };

        // Exact interval: each tail at (1 − level)/2.
        let alpha = 0.5 * (1.0 - CONFIDENCE_LEVEL);
        let ci_low = if observed == 0 {
            0.0
        } else {
            bisect(|u| conditional.tail(u, observed, true) - alpha).exp()
        };
        let ci_high = if observed == last {
            f64::INFINITY
        } else {
            bisect(|u| alpha - conditional.tail(u, observed, false)).exp()
        };
        Ok(Self {
            table,
            p_value,
            odds_ratio,
            ci_low,
            ci_high,
        })
    }

    /// The table tested.
    pub fn table(&self) -> [[u64; 2]; 2] {
        self.table
    }

    /// Two-sided p-value (R's `fisher.test`).
    pub fn p_value(&self) -> f64 {
        self.p_value
    }

    /// Conditional maximum-likelihood estimate of the odds ratio (0 or `+∞` at the ends of the
    /// support).
    pub fn odds_ratio(&self) -> f64 {
        self.odds_ratio
    }

    /// Lower end of the exact 95% interval for the odds ratio (0 when the first cell is as small
    /// as the margins allow).
    pub fn ci_low(&self) -> f64 {
        self.ci_low
    }

    /// Upper end of the exact 95% interval (`+∞` when the first cell is as large as the margins
    /// allow).
    pub fn ci_high(&self) -> f64 {
        self.ci_high
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{HAND_SOLVED_RELATIVE, relative_difference};

    /// By hand, the tea-tasting table `[[3, 1], [1, 3]]`: margins 4, 4, 4, total 8; under
    /// ψ = 1, `P(X = x) = C(4, x)C(4, 4 − x)/C(8, 4)` = (1, 16, 36, 16, 1)/70. Tables no more
    /// likely than x = 3 (16/70): x = 0, 1, 3, 4, so p = 34/70 = 0.4857142857.
    #[test]
    fn tea_tasting_p_value_by_hand() {
        let f = FisherExact::new([[3, 1], [1, 3]]).unwrap();
        assert!(relative_difference(f.p_value(), 34.0 / 70.0) < HAND_SOLVED_RELATIVE);
    }

    /// By hand: `[[2, 0], [0, 2]]` has support 0…2 with probabilities (1, 4, 1)/6: the observed
    /// x = 2 is the upper end, so the estimate is +∞, the upper limit too, and p = 2/6.
    #[test]
    fn end_of_support_gives_infinite_estimate() {
        let f = FisherExact::new([[2, 0], [0, 2]]).unwrap();
        assert!(relative_difference(f.p_value(), 1.0 / 3.0) < HAND_SOLVED_RELATIVE);
        assert!(f.odds_ratio().is_infinite() && f.ci_high().is_infinite());
        assert!(f.ci_low() > 0.0 && f.ci_low().is_finite());
        let g = FisherExact::new([[0, 2], [2, 0]]).unwrap();
        assert!(g.odds_ratio().abs() < f64::MIN_POSITIVE && g.ci_low().abs() < f64::MIN_POSITIVE);
    }

    #[test]
    fn empty_margins_are_refused() {
        assert!(matches!(
            FisherExact::new([[0, 0], [3, 4]]),
            Err(FisherError::EmptyMargin { .. })
        ));
        assert!(matches!(
            FisherExact::new([[1, 0], [3, 0]]),
            Err(FisherError::EmptyMargin { .. })
        ));
        assert!(matches!(
            FisherExact::new([[u64::MAX, 1], [1, 1]]),
            Err(FisherError::Overflow { .. })
        ));
    }
}
