//! Every numerical tolerance of orthomask-stats, named once.
//!
//! The first group steers the algorithms (rank decisions, convergence, rounding of counts); the
//! second states how exactly the tests expect results to match their references. Tests also use
//! `orthomask_core::tolerance` where a promise of the masking core is what they check (for
//! example `PRESERVED_STATISTICS` for "same result on raw and masked data").

// ---------------------------------------------------------------------------------------------
// Algorithm tolerances
// ---------------------------------------------------------------------------------------------

/// A design column is linearly dependent on the columns before it when the part of it that
/// those columns do not explain, `|R_jj|` of a Householder QR, is at most this fraction of its
/// norm `‖z_j‖`.
///
/// Why 1e-7: it is the default `tol` of R's `lm`/`qr` (LINPACK `dqrdc2`), which applies the same
/// test. The NIST Longley design, the hardest standard case, has smallest ratio 8.6e-5 (the
/// Year column) and passes; an exact copy of a column gives a ratio of about 1e-16.
pub const RANK_RELATIVE: f64 = 1e-7;

/// The least-squares fit ([`crate::pivoted_qr`]) stops choosing columns when the largest norm
/// any remaining (unit-scaled) column has outside the span of the chosen ones is at most this;
/// those columns are dropped as collinear, as R reports aliased coefficients as `NA`.
///
/// Why 1e-10: a kept column with remaining norm `t` means an equilibrated condition number
/// `κ ≥ 1/t`, and coefficients good to about `κ·u`. At 1e-10 every design with `κ` up to about
/// 1e10 is fitted (at least about 6 significant digits), which includes the degree-5 polynomial
/// designs of condition number 1e8 the project promises to fit; beyond it a coefficient would
/// carry fewer digits than a survey answer, and the column is reported as collinear instead.
/// (R's `lm` uses 1e-7 on an unpivoted, unscaled test of each column against the ones before it,
/// and would alias such polynomial terms.)
pub const PIVOTED_RANK_RELATIVE: f64 = 1e-10;

/// A dropped column is reported as collinear with the kept terms whose coefficient in its
/// expansion `z̃_j ≈ Σ c_k z̃_k` (unit-scaled columns) is at least this fraction of the largest
/// coefficient. Exact dependencies give coefficients of order 1 on the terms involved and of
/// order `κ·u` on the others; 1e-6 separates the two for every `κ` below 1e10.
pub const ALIAS_NAMING_SHARE: f64 = 1e-6;

/// A least-squares fit is exact, and its t and F statistics meaningless, when
/// `σ̂² < ε·(mean(ŷ)² + var(ŷ))`: the residuals are then rounding noise of the fitted values.
///
/// Why 1e-30: it is R's `summary.lm` "essentially perfect fit" rule (σ̂ below 1e-15 of the
/// fitted values' scale, i.e. a few ulps); any genuine residual variation is far above it.
pub const EXACT_FIT_VARIANCE: f64 = 1e-30;

/// Newton/IRLS for logistic regression has converged when the deviance changes by less than
/// this relative amount, `|D_k − D_{k−1}| / (|D_k| + 0.1) < ε`.
///
/// Why: the form is R's `glm.control` criterion; R uses 1e-8, we take 1e-10 because Newton
/// converges quadratically and one more iteration costs nothing at survey sizes.
pub const LOGIT_DEVIANCE_CHANGE: f64 = 1e-10;

/// … and, in the same iteration, every coefficient moved by at most this much relative to its
/// size, `|β_j^{(k)} − β_j^{(k−1)}| ≤ ε·max(|β_j^{(k)}|, 1)`.
///
/// Why: the deviance alone also "converges" under separation (it tends to its infimum while
/// the coefficients run off to infinity, each Newton step adding about one unit of log-odds).
/// Requiring the coefficients to settle turns separation into non-convergence, which is then
/// diagnosed. 1e-8 is statsmodels' Newton `tol`; quadratic convergence passes it easily.
pub const LOGIT_COEFFICIENT_CHANGE: f64 = 1e-8;

/// A fitted probability within this distance of 0 or 1 is "numerically 0 or 1". When IRLS does
/// not converge and some fitted probability is that extreme, the data are separated.
///
/// Why 1e-8: a log-odds beyond ±18.4, which no estimable logistic model produces on survey
/// data. Under separation the linear predictor of the separated records grows by roughly a
/// constant each Newton step, so they pass this bound long before the 50-step limit (the two
/// separated LEAPS models are diagnosed after 32–33 steps, when their weights underflow the
/// rank test).
pub const SEPARATION_PROBABILITY: f64 = 1e-8;

/// Fisher's exact test counts a table as "no more likely than the observed one" when its
/// probability is at most the observed one times `1 + ε`.
///
/// Why 1e-7: it is R's `fisher.test` (`relErr <- 1 + 10^(-7)`), so that tables equally likely in
/// exact arithmetic (symmetric margins) are not split by rounding of the log-factorials (each
/// probability is good to about 1e-14 relative).
pub const FISHER_RELATIVE_TIES: f64 = 1e-7;

/// Root searches for the conditional odds ratio and its exact interval (in `ln ψ`) stop at this
/// relative width. The tail sums and means they solve are good to about 1e-14; 1e-13 in `ln ψ`
/// leaves the estimates exact to about 13 digits, far beyond R's `uniroot` (1e-4).
pub const FISHER_ROOT_RELATIVE: f64 = 1e-13;

/// Largest accepted `|count − round(count)|` when counts from indicator cross-products are
/// declared integer (and largest accepted shortfall of a "complete" set of level indicators).
///
/// Why 0.25: with full-precision masked data the residual is about 1e-12; with the published
/// two-decimal Table 5 of seed 003 it is 0.0281 (Group × MIF). A residual near 0.5 would make the
/// rounding a coin toss, so anything beyond half of that is refused as "not indicator columns".
pub const MAX_COUNT_ROUNDING: f64 = 0.25;

// ---------------------------------------------------------------------------------------------
// Test tolerances
// ---------------------------------------------------------------------------------------------

/// Agreement with the exact answer of a small, well-conditioned case solved by hand (answer in
/// the test's doc comment): a handful of rounding errors on O(1) numbers, a few ulps each;
/// 1e-13 relative allows some hundreds of ulps and still catches any wrong formula.
pub const HAND_SOLVED_RELATIVE: f64 = 1e-13;

/// Agreement with NIST StRD certified values: 7 significant digits (log relative error ≥ 7),
/// the requirement the project set for the ill-conditioned Longley problem (condition number
/// of the design about 5e9, so about 6 of the 16 digits are lost to conditioning alone).
pub const CERTIFIED_RELATIVE: f64 = 1e-7;

/// Agreement with statsmodels/scipy values printed to 16 significant digits on well-conditioned
/// problems. Differences come from the algorithms (our QR vs. statsmodels' pseudo-inverse,
/// statrs' incomplete beta vs. cephes), which agree to about 1e-13; 1e-9 leaves room without
/// letting a wrong formula (an n vs. n−1, a one-sided p-value) through.
pub const REFERENCE_RELATIVE: f64 = 1e-9;

/// Agreement of a least-squares fit with a double-double reference on a well-conditioned design
/// (scaled condition number below 10) whose columns span 12 orders of magnitude: the
/// equilibrated QR loses nothing to the units, so only a few hundred rounding errors remain.
pub const SCALED_WELL_CONDITIONED: f64 = 1e-12;

/// On ill-conditioned designs a backward-stable least-squares solver is accurate to about
/// `κ·ε` in the scaled coefficients (when the residual is small); tests allow this factor on
/// top, for the dimension-dependent constants of the error bound (`p = 6`, `n = 60`).
pub const CONDITIONING_FACTOR: f64 = 100.0;

/// Agreement with an odds ratio printed by R's `fisher.test`, which finds the conditional
/// maximum-likelihood estimate with `uniroot` at its default tolerance
/// (`.Machine$double.eps^0.25 ≈ 1.2e-4` on a parameter in `(0, 1)`): R's 6.408309 for the
/// tea-tasting table is 1.6e-6 from the exact root 6.4083197 (mpmath), so 1e-5 relative.
pub const R_UNIROOT_RELATIVE: f64 = 1e-5;

/// Agreement of a fit on raw data with the same fit on a masked release of an ill-conditioned
/// problem (Longley, `κ ≈ 5e9`): masking perturbs the data by rounding errors of relative size
/// about 1e-16, which the conditioning can amplify up to `κ·ε ≈ 1e-6`; in practice the worst
/// coefficient moves by about 1e-11, so 1e-9 holds with a wide margin.
pub const ILL_CONDITIONED_MASKED: f64 = 1e-9;

/// Agreement of maximum-likelihood fits (logistic regression) with statsmodels, whose Newton
/// iteration stops when parameters change by less than 1e-8; after quadratic convergence the
/// remaining error is far below that, so 1e-7 relative catches any formula error.
pub const MLE_REFERENCE_RELATIVE: f64 = 1e-7;

/// Monte Carlo check of an estimator's bias: |mean over replicates − target| for a slope.
///
/// Why 0.05: the bias-correction simulation averages 40 replicates of n = 500 whose slope has
/// standard error about 0.055 each, so the mean has standard error about 0.009; 0.05 is more
/// than 5 of those (a false alarm has probability below 1e-6), while the attenuation it must
/// detect is 0.4.
pub const MONTE_CARLO_BIAS: f64 = 0.05;

/// Monte Carlo check of a variance estimate's bias, absolute, for a true variance of 1.
///
/// Why 0.25: in the same simulation the corrected residual variance subtracts the noise from a
/// residual variance of about 6, so one replicate's estimate has standard error about 0.4 and
/// the mean of 40 about 0.06; 0.25 is 4 of those, while forgetting the response-noise
/// correction would be off by 1.
pub const MONTE_CARLO_VARIANCE: f64 = 0.25;

/// Agreement with the exact answer of a small contingency table worked by hand (expected count
/// 2 of the tea-tasting table, Fisher's p = 34/70, ψ̂ = 1 of a symmetric table). The Fisher
/// probabilities are sums of hypergeometric terms built from log-factorials, each good to about
/// 1e-14 relative, so this is looser than [`HAND_SOLVED_RELATIVE`]; a wrong tail or margin is off
/// by far more.
pub const HAND_SOLVED_TABLE: f64 = 1e-12;

/// Fisher's exact interval of a symmetric table is symmetric on the log scale, `ψ_L·ψ_U = 1`,
/// to this relative accuracy. Each end is a root searched to [`FISHER_ROOT_RELATIVE`] in `ln ψ`
/// on tail sums good to about 1e-14, where the tails are flat in ψ (ψ_U is in the hundreds), so
/// the ends carry fewer digits than ψ̂; 1e-9 leaves a wide margin.
pub const FISHER_INTERVAL_SYMMETRY: f64 = 1e-9;

/// Agreement with a p-value R prints to four decimals (`fisher.test`'s "p-value = 0.4857"): half a
/// unit in the last printed place.
pub const R_FOUR_DECIMALS: f64 = 0.5e-4;

/// Rounding residual `max |count − round(count)|` of a table built from indicator columns that
/// are off by 1e-14: a handful of such errors per count, so far below 1e-12, while a real
/// fractional count leaves a residual of order 0.1.
pub const INTEGER_COUNT_RESIDUAL: f64 = 1e-12;

/// `|R_jj| / ‖z_j‖` of an exact copy (or exact multiple) of earlier columns: rounding only, about
/// 1e-16 (see [`RANK_RELATIVE`]), so 1e-15 catches a column that is merely nearly dependent.
pub const EXACT_DEPENDENCY_SHARE: f64 = 1e-15;

/// A column the pivoted least-squares fit drops as collinear has a remaining share at most this.
/// It is the value of [`PIVOTED_RANK_RELATIVE`], written out again so that the test states the
/// promise independently of the algorithm's constant: a change of the threshold shows up here.
pub const DROPPED_REMAINING_SHARE: f64 = 1e-10;

/// Residuals, σ̂ and standard errors of an exact fit (a line through integer points with values
/// up to 10): rounding noise of a few ulps of 10 (an ulp of 8 is 1.8e-15), so below 1e-14.
pub const EXACT_FIT_RESIDUAL: f64 = 1e-14;

/// The p-value of a coefficient of an exact fit, when it is a number at all (R reports `NaN` or
/// `< 2e-16`): its t statistic is a coefficient over a rounding-noise standard error (t ≳ 1e13),
/// so any p-value is far below this.
pub const EXACT_FIT_P_VALUE: f64 = 1e-10;

/// The share-mode σ of a design whose answers are bounded by 250 is 25 000 (the policy's
/// multiple of the largest declared value, worked by hand), to this relative accuracy: one or two
/// multiplications, so rounding is at 1e-16 and 1e-9 catches any wrong factor.
pub const SHARE_SIGMA_BY_HAND: f64 = 1e-9;

/// χ², its p-value, the odds ratio and the relative risk of a 2×2 table read from a release,
/// against the same table read from the raw data. The cells come from cross-products of indicator
/// columns and are rounded to integers (the tests check that both tables are equal), so the
/// statistics are computed from the same counts and differ by a few roundings at most; 1e-12
/// relative leaves thousands of ulps.
pub const SAME_TABLE_STATISTICS: f64 = 1e-12;

/// The coefficient, standard error, z and p of a logistic fit against the same fit on a design
/// spanning the same space (raw covariates against a second-method release, seed 003 §2.2). The
/// fitted values are equal in exact arithmetic; each Newton iteration stops when the coefficients
/// move by less than [`LOGIT_COEFFICIENT_CHANGE`] (1e-8 relative), so the two agree to about that
/// and 1e-7 relative leaves a factor of ten.
pub const SAME_SPAN_LOGIT: f64 = 1e-7;

/// The deviance of the same two fits (see [`SAME_SPAN_LOGIT`]): the iterations stop when it
/// changes by less than [`LOGIT_DEVIANCE_CHANGE`] (1e-10 relative), and after quadratic
/// convergence it is flat in the coefficients, so 1e-9 relative leaves a factor of ten.
pub const SAME_SPAN_DEVIANCE: f64 = 1e-9;

/// A regression (coefficients, standard errors, R², σ, a fitted line) on a release against the
/// same regression on the raw records, relative: the services' end-to-end acceptance tolerance
/// (issue "Services"), and issue 11 §1's nine significant digits on a well-conditioned design.
/// Masking preserves `XᵀX` to `orthomask_core::tolerance::PRESERVED_STATISTICS` (1e-10) and a
/// well-conditioned design amplifies that by less than ten.
pub const RELEASE_REGRESSION_RELATIVE: f64 = 1e-9;

/// Issue 11 §1: masking costs at most two significant digits against the raw fit on an
/// ill-conditioned design; the release's coefficient error is at most this factor times the raw
/// fit's (floored at `κ·ε`, what a backward-stable solver promises).
pub const DIGITS_MASKING_MAY_COST: f64 = 100.0;

/// Agreement with the roots R's `fisher.test` prints (the conditional odds ratio and its
/// interval): `uniroot` at its default tolerance (`.Machine$double.eps^0.25 ≈ 1.2e-4`) leaves
/// them up to about 2e-4 relative from the exact roots (2.1e-5 for the 1.62446 of seed 003
/// Table 6). Looser than [`R_UNIROOT_RELATIVE`], which holds for the tea-tasting table only.
pub const R_UNIROOT_WORST: f64 = 2e-4;

/// The correlation of a least-squares fit's residuals with one of its own regressors, which is
/// zero in exact arithmetic (`Zᵀe = 0`), on raw data or a release: the residuals carry rounding
/// errors of about `κ·u·‖y‖`, so the correlation is of order `κ·u·‖y‖/‖e‖` (about 1e-17 to 1e-14
/// on the issue 22 test data, whose VIFs are about 20), and 1e-12 leaves a wide margin while any
/// real correlation (a column left out of the model, a wrong residual) is far above it.
pub const RESIDUAL_ORTHOGONALITY: f64 = 1e-12;

/// `|a − b| / max(|a|, |b|)`, and 0 when both are 0: the relative difference the test
/// tolerances above are stated in.
pub fn relative_difference(a: f64, b: f64) -> f64 {
    let scale = a.abs().max(b.abs());
    if scale == 0.0 {
        0.0
    } else {
        (a - b).abs() / scale
    }
}

/// Number of agreeing significant digits, NIST's log relative error
/// `LRE = −log₁₀(|computed − certified| / |certified|)`, capped at 15 (exact agreement).
pub fn log_relative_error(computed: f64, certified: f64) -> f64 {
    let error = if certified == 0.0 {
        computed.abs()
    } else {
        (computed - certified).abs() / certified.abs()
    };
    if error == 0.0 {
        15.0
    } else {
        (-error.log10()).min(15.0)
    }
}

// ---------------------------------------------------------------------------------------------
// Audit tolerances
// ---------------------------------------------------------------------------------------------

/// Relative slack of audit comparisons on full-precision (round-trip) files: the manifest and the
/// file hold the same doubles, so only summation order differs (a few ulps per term on sums of at
/// most millions of terms).
pub const AUDIT_FULL_PRECISION_RELATIVE: f64 = 1e-9;

/// A 2×2 cell below this count is a disclosure risk worth a warning (the usual threshold rule for
/// tabular data that seed 003 §2.1 refers to: cells "smaller than a threshold").
pub const SMALL_CELL: f64 = 5.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_difference_is_symmetric_and_scaled() {
        let exact = |value: f64, expected: f64| (value - expected).abs() < HAND_SOLVED_RELATIVE;
        assert!(exact(relative_difference(0.0, 0.0), 0.0));
        assert!(exact(relative_difference(2.0, 1.0), 0.5));
        assert!(exact(relative_difference(1.0, 2.0), 0.5));
        assert!(exact(relative_difference(-1.0, 1.0), 2.0));
    }

    #[test]
    fn log_relative_error_counts_digits() {
        let close =
            |value: f64, expected: f64| relative_difference(value, expected) < HAND_SOLVED_RELATIVE;
        assert!(close(log_relative_error(1.0, 1.0), 15.0));
        assert!(close(log_relative_error(1.001, 1.0), 3.0));
        assert!(close(log_relative_error(1e-4, 0.0), 4.0));
    }
}
