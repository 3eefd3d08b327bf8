//! Every numerical tolerance and iteration limit of `orthomask-dp`, named once.
//!
//! The first group steers the algorithms (how far a series is summed, when a root finder stops);
//! the second group says how closely the tests demand agreement with independent references.
//! Nothing else in the crate or its tests writes an epsilon of its own.

// --- Algorithms -------------------------------------------------------------------------------

/// Truncation of the Poisson-weighted mixture behind the non-central χ² CDF and survival
/// function ([`crate::ncx2`]): summation stops once a rigorous bound on the mass of all terms
/// not yet added is below this fraction of the partial sum. At `1e-15` the truncation error is
/// below the rounding error of the terms themselves (each regularized incomplete gamma value is
/// good to roughly `1e-14` relative), so it never dominates.
pub const SERIES_RELATIVE: f64 = 1e-15;

/// Hard cap on the number of mixture terms summed in one direction from the Poisson mode. The
/// bound-driven stop above needs about `mode ± 40·√mode` terms for the largest non-centralities
/// we accept, far below this cap; reaching it is reported as an error, never truncated silently.
pub const MAX_SERIES_TERMS: u64 = 1_000_000;

/// Relative width (in `x`) at which the Brent search for a non-central χ² quantile stops. The
/// survival function is itself only good to about `1e-13` relative for the degrees of freedom
/// of Table 1 (up to 2·10⁴), so asking for more than `1e-13` in `x` would only chase noise.
pub const QUANTILE_RELATIVE: f64 = 1e-13;

/// Relative width (in σ) at which the Brent search for the largest root σ₀ of `g` in eq. (13)
/// stops. Table 1 prints σ₀ to one decimal (≥ 3 significant digits), so `1e-12` leaves nine
/// digits of margin while costing only a few extra `g` evaluations.
pub const SIGMA_RELATIVE: f64 = 1e-12;

/// Iteration cap of every Brent search. Brent's method needs at most about `(log₂(width/tol))²`
/// steps in the worst case (≈ 2 000 for our tolerances) and typically under 20; the cap only
/// guards against a non-terminating loop and is reported as an error when hit.
pub const MAX_ROOT_ITERATIONS: u32 = 5_000;

/// How many times an initial bracket may be doubled while looking for a sign change before the
/// search gives up (2¹⁰⁰ covers every representable scale starting from any positive guess).
pub const MAX_BRACKET_EXPANSIONS: u32 = 100;

// --- Tests ------------------------------------------------------------------------------------

/// Relative agreement demanded between our non-central χ² probabilities (CDF or survival
/// function) and SciPy's `scipy.stats.ncx2` (Boost's algorithm), for probabilities down to
/// `1e-21`. Both sides are accurate to about `1e-13` for moderate degrees of freedom; the
/// incomplete gamma function loses about `log₁₀(a)` further digits at shape `a` (its prefactor
/// `a·ln x − x − ln Γ(a)` cancels): the worst case observed is `9e-12` at shape 10⁴ (df 19 998).
pub const REFERENCE_PROBABILITY: f64 = 1e-10;

/// Relative agreement demanded between our non-central χ² upper quantiles and SciPy's
/// `ncx2.isf`. A quantile is better conditioned than a tail probability (an error `dQ` moves `x`
/// by `dQ / pdf(x)`, tiny relative to `x`): the worst case observed is `2e-14`.
pub const REFERENCE_QUANTILE: f64 = 1e-12;

/// Relative agreement demanded between our σ₀ of eq. (13) and the same root computed with
/// SciPy (`brentq` on `ncx2.isf`, `xtol=1e-14`). Inherits the quantile accuracy, amplified by at
/// most a factor 1/2 through `σ² ∝ quantile`, plus both root finders' stopping widths
/// ([`SIGMA_RELATIVE`] here): the worst case observed is `1.1e-13`.
pub const REFERENCE_SIGMA: f64 = 1e-11;

/// Relative agreement demanded between two computations that should be the same function: our
/// series at non-centrality 0 versus `statrs`' central χ², or a closed form such as
/// `sf(x) = e^{−x/2}` for two degrees of freedom. Only rounding separates them.
pub const SAME_FUNCTION: f64 = 1e-12;

/// Relative agreement demanded between a moment of the non-central χ² (mean `k + λ`, second
/// moment `2(k + 2λ) + (k + λ)²`) and the same moment obtained by integrating our survival
/// function numerically (composite Simpson rule on a fine grid, see the test). The quadrature
/// error of the rule on these smooth integrands is below `1e-8`.
pub const QUADRATURE: f64 = 1e-7;

/// Absolute accuracy of the standard-normal quantile against published tables (SciPy's
/// `norm.isf`); `statrs`' `erfc_inv` is accurate to a few ulps of the O(1) result.
pub const NORMAL_QUANTILE: f64 = 1e-12;

/// Range scaling: `unscale(scale(x))` must return `x` to this relative accuracy (two affine maps,
/// a handful of roundings each), measured relative to the width `hi − lo` of the range.
pub const ROUND_TRIP: f64 = 1e-14;
