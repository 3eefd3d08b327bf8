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

/// Test: agreement with a bound worked by hand (answer in the test's doc comment, e.g. 1.7·2/0.5
/// = 6.8 for Corollary 3.3 at δ = e⁻⁴): a handful of roundings on numbers below 10.
pub const HAND_COMPUTED: f64 = 1e-12;

/// Test: absolute agreement of a number of magnitude at most 1 with its value by hand when one or
/// two roundings separate them (a sensitivity `Δ/n` such as 0.4): ε_mach ≈ 2.2e-16, so 1e-15 is
/// about four ulps of 1.
pub const ULPS_BELOW_ONE: f64 = 1e-15;

/// Test: absolute agreement of a number of magnitude below 10 with its value by hand through a
/// square root and a few products (a changed row's norm `4·√0.99`): an ulp of 4 is 8.9e-16, so
/// 1e-14 allows about ten.
pub const ULPS_BELOW_TEN: f64 = 1e-14;

/// Test: the masked complement's condition (M5), evaluated at the δ that (M6) returns for (σ, ε),
/// vanishes to this accuracy relative to its scale `σ²ε`. (M6) is a closed-form inverse, so only
/// rounding of the exponentials and normal tails (about 1e-13 relative) separates the two.
pub const CONDITION_AT_INVERSE: f64 = 1e-9;

/// Test: Brent's method on a step function (no root, a sign change at 0.3) asked for an absolute
/// width of 1e-12 must end within this of the step: ten times the requested width.
pub const STEP_LOCATED: f64 = 1e-11;

/// Test: the budget split of the example worked in `tests/device_mechanism.rs` (ε = 0.1,
/// δ = 0.01, one answer, cohorts of 101: SciPy's optimum δ₁ ≈ 0.00907, δ₂ ≈ 0.00093) is met to
/// this absolute accuracy. The total δ is flat at its minimum, so our split search may stop at a
/// slightly different ε₁ and move some δ between the parts; 2e-4 is 2 % of δ, loose enough for
/// that and tight enough to tell which part takes most of δ.
pub const WORKED_SPLIT: f64 = 2e-4;

/// Test: the δ of a calibrated σ, recomputed with its own split re-assembled by the test (the
/// complement's ε as `ε − ε_sum`), exceeds the target by at most this relative amount. The crate
/// verified the target at that σ; the re-assembly only adds rounding of the profile (about 1e-13
/// relative), so 1e-8 is far above it and far below a real excess.
pub const RECOMPUTED_TARGET: f64 = 1e-8;

/// Test: at the lower end of the calibration's final bracket, `σ·(1 − 2·`[`CALIBRATION_RELATIVE`]`)`,
/// the best δ the crate finds is above the target less this relative slack. The split is
/// refined only to [`SPLIT_RELATIVE`] and δ there differs from the target by about
/// `2·CALIBRATION_RELATIVE` times its (O(10)) elasticity in σ, so 1e-6 leaves room for both.
pub const BRACKET_END_SLACK: f64 = 1e-6;

/// Test: Lemma 5.2's bound `t/q` is tight as `t → 0`: at `t = 1e-3` the ratio
/// `(ln F_q)′(t)·q/t` is within this of 1. Its series is `1 − t²/(q(q + 2)) + O(t⁴)`, about
/// `1 − 1.3e-7` for q = 2, so 1e-5 holds with a factor of eighty and still fails on a bound off by
/// a constant factor.
pub const SMALL_T_TIGHTNESS: f64 = 1e-5;

/// Test: ε of a Gaussian mechanism ([`crate::gaussian_mechanism::gaussian_mechanism_epsilon`])
/// against SciPy's `brentq` on the exact profile `Φ(Δ/2σ − εσ/Δ) − e^ε·Φ(−Δ/2σ − εσ/Δ)`, quoted to
/// 16 digits, relative. Ours stops at [`GAUSSIAN_INVERSE_RELATIVE`] (1e-12), `brentq` at its
/// default `xtol = 2e-12`, so the two agree near 1e-12; 1e-9 leaves a wide margin and still fails
/// on a wrong sensitivity or δ.
pub const SCIPY_GAUSSIAN_EPSILON: f64 = 1e-9;

/// Test: a guaranteed ε recorded for a release (an O(1) number, e.g. 0.5) is at most the
/// requested ε plus this absolute slack: the calibration verified the target, and recording it
/// adds a few roundings at most (ulps of 0.5 are 1.1e-16); any real overshoot of the budget is a
/// calibration bug and far larger.
pub const WITHIN_REQUESTED_EPSILON: f64 = 1e-12;

/// Test: the δ a manifest states for its σ and ε against δ recomputed by the test with
/// `CohortMechanism::delta_at` at the same σ and ε, relative. Both come from the crate's search
/// for the best split of the budget, which stops at [`SPLIT_RELATIVE`] (1e-9); δ is flat at that
/// optimum, so the two agree to better than that.
pub const RECOMPUTED_DELTA: f64 = 1e-9;
