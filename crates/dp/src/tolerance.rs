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

/// Relative width (in ε or in σ/Δ) at which Brent's method stops when inverting the Gaussian
/// mechanism's privacy profile ([`crate::gaussian_mechanism`]). The profile is accurate to
/// about `1e-13` relative where its two terms cancel most (see its module docs), so asking for
/// `1e-12` in the argument chases no noise.
pub const GAUSSIAN_INVERSE_RELATIVE: f64 = 1e-12;

/// Number of equal intervals of the grid over ε₁ ∈ [0, ε] on which the best split of the budget
/// between the column sums and the masked complement is first sought ([`crate::device`], (D9)).
/// The sum of the two profiles is smooth with one minimum in every case the tests scan; 64
/// intervals place the search within 1/64 of ε of it before the golden-section refinement.
pub const SPLIT_GRID_INTERVALS: usize = 64;

/// Width, relative to ε, at which the golden-section refinement of the best split stops. The
/// total δ is flat at its minimum (an error `h` in ε₁ changes it by `O(h²)`), so `1e-9` leaves
/// the minimum exact to far below any δ a survey would state; any split is a valid guarantee,
/// so this affects only tightness, never validity.
pub const SPLIT_RELATIVE: f64 = 1e-9;

/// Relative width at which the bisection for the calibrated σ of the device-side mechanism
/// stops ([`crate::device`], (D10)). The returned σ is the upper end of the bracket, where the
/// target was verified; σ is reported to at most 6 significant digits, so `1e-9` is ample.
pub const CALIBRATION_RELATIVE: f64 = 1e-9;

/// Relative width at which the bisection for the guaranteed ε at a given σ stops (the returned
/// ε is the upper end of the bracket, where the target δ was verified).
pub const GUARANTEE_RELATIVE: f64 = 1e-9;

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

/// Relative agreement demanded when a Gaussian-mechanism inverse is fed back into the profile
/// (ε → δ → ε, σ → δ → σ). Brent stops at [`GAUSSIAN_INVERSE_RELATIVE`] in the argument; the
/// profile's slope in ε and σ is O(1) relative at the δ tested, so `1e-9` leaves a wide margin.
pub const GAUSSIAN_INVERSE_CHECK: f64 = 1e-9;

/// Relative agreement demanded between our Gaussian-mechanism profile and mpmath at 50 digits
/// (`tests/gaussian_mechanism_reference.rs`): `erfc` is good to a few ulps, and the cancellation
/// between the two terms of (G1) costs at most a factor `|x|σ/Δ ≤ 10³` in the cases tested.
pub const REFERENCE_GAUSSIAN: f64 = 1e-11;

/// Relative agreement demanded between the calibrated σ of the device-side mechanism and an
/// independent SciPy implementation (`tests/reference/device_mechanism_reference.py`: a
/// 2 001-point grid plus bounded Brent for the split, `brentq` on σ with `xtol = 1e-13`).
/// Ours stops bisecting at [`CALIBRATION_RELATIVE`]; the split optimisers of the two agree far
/// better than that (the optimum is flat), so `1e-8` covers both stopping rules.
pub const REFERENCE_DEVICE_SIGMA: f64 = 1e-8;

/// Largest relative distance tolerated between the growth factor σ*/σ₀ at `n_s = 10⁵` and its
/// limit (D12) `√(6p(1 − 1/n)/(3√p + 1))`. The finite-n corrections are the χ² quantile's excess
/// over its degrees of freedom, about `γ̄_δ·√(2/k) ≈ 0.01` relative at `k = 2·10⁵` and partly
/// common to both σ, and the ε the column sums take, about `2√p/(√n σ)·γ̄ ≈ 0.005`; the observed
/// distance is 0.4 % for p = 5.
pub const ASYMPTOTIC_FACTOR: f64 = 0.01;
