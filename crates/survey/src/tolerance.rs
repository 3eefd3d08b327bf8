//! The tolerances of this crate's tests, named once (the masking tolerances themselves are
//! `orthomask_core::tolerance`'s).

/// Numbers worked out by hand from small integers and simple fractions (codings, declared
/// maxima, midpoints): only the last bit of an `f64` may differ.
pub const HAND_COMPUTED: f64 = 1e-12;

/// Absolute accuracy with which a device's upload, unmasked with its `B_k`, gives back the padded
/// record. The record carries the QA constant 888 and padding of σ ≈ 10³ over `p` ≈ 500
/// coordinates, so its norm is about 2·10⁴; a Householder stream is backward stable to a few
/// `p·ε_mach` relative, about 10⁻¹¹ here, and 10⁻⁹ leaves two orders to spare.
pub const RECORD_ROUND_TRIP: f64 = 1e-9;

/// A masked value "shows" an answer when it lies this close to it; every uploaded value must lie
/// farther from every raw answer (the masks move values by amounts of the noise scale, 10²–10³).
pub const SHOWS_ANSWER: f64 = 1e-6;

/// Absolute agreement of a number of magnitude at most 1 with a value it equals up to a few
/// roundings: a δ split into two parts summing back to it, or the standard normal CDF against
/// Abramowitz and Stegun's Table 26.1 printed to 15 decimals. ε_mach ≈ 2.2e-16, so 1e-15 is
/// about four ulps of 1.
pub const ULPS_BELOW_ONE: f64 = 1e-15;

/// Absolute accuracy of a privacy parameter the dp crate solved for, checked against its target:
/// the guaranteed ε of a calibrated σ against the requested ε (of order 1), or the exact δ at a
/// one-service ε against [`ONE_SERVICE_DELTA`](crate::share_view::ONE_SERVICE_DELTA). The dp
/// crate's root searches stop at 1e-9 relative (its `GUARANTEE_RELATIVE`,
/// `GAUSSIAN_INVERSE_RELATIVE` at 1e-12), so the ε is within about 1e-9 and δ, of order 1e-6,
/// far closer.
pub const DP_SOLVED: f64 = 1e-9;

/// Expected digits lost (a log₁₀ of order 1 to 3) against the figure computed by hand (in Python
/// from (E1), (E2) and (E5), or from the closed form in the test's doc comment) and printed to 17
/// significant digits. Both sides evaluate the same
/// formulas in doubles, in different orders and with sums over hundreds of columns, so they agree
/// to about 1e-13; 1e-9 leaves a wide margin and still catches any term left out.
pub const DIGITS_BY_HAND: f64 = 1e-9;

/// A figure quoted to three decimals (Python's or SciPy's 6.653 for a calibrated σ, 2.142 or
/// 1.314 digits lost) matches within one unit of its last quoted place: half a unit of rounding
/// of the quote, and the rest for the quote's own computation.
pub const THREE_DECIMALS: f64 = 1e-3;

/// Relative agreement of the σ the plan calibrates with the σ* ≈ 8.560139 worked in the dp
/// crate's `tests/device_mechanism.rs` and checked there against SciPy (whose split search on a
/// grid differs from ours at the flat optimum): seven quoted digits, of which the test trusts
/// five.
pub const QUOTED_SIGMA_RELATIVE: f64 = 1e-5;

/// Absolute agreement of an exact Gaussian-mechanism δ with SciPy's 7.651536e-3, printed to
/// seven significant digits (half a unit in the last place is 5e-10): 1e-8 allows for the
/// quote's rounding and for SciPy's `norm.cdf` against our `erfc`, and is still about 1e-6 of δ.
pub const QUOTED_DELTA: f64 = 1e-8;

/// A stored number "is" a raw answer when it lies this close to it, relative: a copy survives a
/// scaling round trip or a decimal print to within a few ulps, while a masked value lies at the
/// noise scale away (the scanner's control plants an answer off by 1e-3, which must not count).
pub const EQUALS_ANSWER_RELATIVE: f64 = 1e-9;

/// The σ a plan chooses lies above Appendix C's σ_min (worked by hand in the test) by less than
/// this relative amount: the policy adds only a small headroom (`policy::SIGMA_HEADROOM`, 1e-9) to
/// a closed-form minimum, so 1e-6 holds with a wide margin and still fails on a σ chosen well
/// above the minimum.
pub const PLAN_SIGMA_ABOVE_MINIMUM: f64 = 1e-6;

/// Relative agreement of a regression coefficient fitted on a release with R's `lm` on the raw
/// answers (issue 22's bound): the release is the raw data to about 1e-14 of each column's range
/// (range scaling, `orthomask_core::protocol::accuracy`), a quadratic in age over [18, 90] has a
/// scaled design of condition about 10³, and R prints 17 digits, so 1e-9 leaves a wide margin and
/// still fails on a term computed wrongly on the device or a coefficient off in its tenth digit.
pub const RELEASE_FIT_AGAINST_R: f64 = 1e-9;

/// How far (relative to a column's range, or its square for a sum of squares) the cohort check's
/// tests place a statistic beyond an exact boundary — a liar just outside or inside the ceiling,
/// a point just outside the feasible set of `(Σx, Σx²)`. The check's own rounding allowance for
/// those cohorts is at most about 10⁻⁷ of a range (`cohort_check::ENTRY_ROUNDINGS·p·u·scale`
/// with `p` ≈ 500 and a scale of 2·10⁴, times `n` ≤ 20), so 10⁻⁶ lies beyond it, and far below
/// anything a mean or a regression would show.
pub const BEYOND_ROUNDING: f64 = 1e-6;

/// How far (relatively) above or below `policy::QA_REVEALS` a change of the masks' action on
/// `1ₙ` is put to show on which side of the QA check it falls at the floor (`crate::floors`,
/// (Q1)–(Q2)). The floor is a few floating-point operations from the bound (relative error about
/// 10⁻¹⁵), and the check compares `|c(1 + ρ) − c|` with its tolerance, whose roundings are of
/// `ε_mach·c` against a change of `10⁻²·c`: about 10⁻¹⁴ relative. 10⁻⁶ leaves eight orders and
/// is still far inside any change that matters.
pub const QA_FLOOR_MARGIN: f64 = 1e-6;

/// How far snapping an honest cohort's identities (`CohortCheck::snap`) may move an entry, as a
/// fraction of its column's declared width: the honest statistics meet every identity to the
/// unmasking's rounding (about `p·ε_mach·scale`, 10⁻¹³ of a width for the protocol's cohorts), and
/// the least change that makes them exact is of that order; 10⁻⁹ still catches a snap that moved
/// a cohort by anything an analyst could see in twelve digits.
pub const SNAP_MOVES: f64 = 1e-9;

/// How far a snapped cohort's statistics may lie from an identity's exact value, relative to the
/// statistic's magnitude (a count, a sum of whole steps, a cross-product of lattice columns): the
/// rounding of computing the snapped block and its sums again, a few hundred ulps; the
/// perturbation the channel carries is δ = 10⁻⁹ of a width in the tests, far above.
pub const SNAPPED_EXACT: f64 = 1e-12;
