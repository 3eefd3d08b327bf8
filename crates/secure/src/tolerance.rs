//! Every numerical tolerance of the secure crate, named once.
//!
//! Two kinds live here: one *run-time* threshold that decides what the code does
//! ([`COLLINEARITY`]), and the *test* tolerances that say how exact each promise of the crate is.
//! The thresholds of the breach checks are part of the protocol's meaning, not of its numerics,
//! and live with the checks in [`breach`](crate::breach).
//!
//! Where the workspace core already names a promise, it is reused rather than restated.

pub use orthomask_core::tolerance::{ORTHOGONALITY, PRESERVED_STATISTICS};

/// Run time: a column counts as linearly dependent on the columns before it when the share of its
/// sum of squares left after projecting on them, `r_kk² / ‖x_k‖²` (a squared sine, i.e. one minus
/// the uncentred R² of `x_k` on the earlier columns), is at most this.
///
/// The same number is used by the sweep operator on centred cross-products, where the share is
/// `1 − R²` and its reciprocal is the variance inflation factor: 1e-10 refuses a variance
/// inflation factor above 10¹⁰, beyond which a coefficient computed from cross-products in double
/// precision (relative error about `VIF · ε ≈ 10¹⁰ · 2.2·10⁻¹⁶`) keeps fewer than six digits.
pub const COLLINEARITY: f64 = 1e-10;

/// Test: a securely computed `XᵀY` must match the direct product entry-wise to this accuracy
/// relative to `‖X_j‖·‖Y_k‖` (the core's promise for released cross-products, 1e-10 relative).
/// The protocol adds `O(n ε)` rounding from two Householder sweeps and one projection.
pub const SECURE_PRODUCT: f64 = PRESERVED_STATISTICS;

/// Test: cases solved by hand on small integers (answers are short rationals), compared after a
/// handful of floating-point operations.
pub const HAND_COMPUTED: f64 = 1e-12;

/// Test: coefficients, standard errors, σ² and R² of a regression computed from the securely
/// assembled cross-product matrix must match a QR least-squares fit on the pooled data to this
/// accuracy relative to `max(1, |value|)`. Normal equations square the condition number of the
/// design (`κ² ε`); on the well-conditioned test designs (κ ≲ 10) that is far below 1e-8, and the
/// slack covers the cancellation in `yᵀy − βᵀXᵀy`.
pub const REGRESSION_AGREEMENT: f64 = 1e-8;

/// Test: one share's rounding in the fixed-point secure sum is at most half a unit in the last
/// place, `2⁻⁴¹` (see [`FRACTION_BITS`](crate::secure_sum::FRACTION_BITS)); a sum of `K` shares
/// is within `K` times this of the exact sum.
pub const SECURE_SUM_PER_SHARE: f64 = 1.0 / 2_199_023_255_552.0; // 2⁻⁴¹

/// Test: a quantity equal to 1 by hand (the share of a unit column or of a dependent pair's
/// combination), found from a handful of roundings on numbers of magnitude at most 1: ε_mach ≈
/// 2.2e-16, so 1e-15 is about four ulps.
pub const ULPS_BELOW_ONE: f64 = 1e-15;

/// Test: a deviation from orthonormality worked by hand (`‖1.001·z‖² − 1 = 0.002001` for a unit
/// column `z` of a generated basis), absolute. The basis is orthonormal only to
/// [`ORTHOGONALITY`] and the difference cancels the leading 1, so agreement is to about 1e-12;
/// 1e-9 keeps a wide margin and still tells 0.002001 from 0.002.
pub const DEVIATION_BY_HAND: f64 = 1e-9;

/// Test: the combination `(α, β)` the dependent-rows check reports for a pair of rows of a
/// generated offer, against its value by hand (`(1, ±1)/√2`). It is the eigenvector of the
/// pair's 2×2 Gram matrix for its smaller eigenvalue, which the closed form finds through a
/// cancelling square root; rounding of the offer (orthonormal to [`ORTHOGONALITY`]) amplified by
/// that cancellation stays well below 1e-9.
pub const DEPENDENCE_COMBINATION: f64 = 1e-9;

/// Test: tilting a column of Z by 1e-3 towards a sender's column leaves a share of that column
/// in Z of about the tilt, far above the check's slack ([`crate::breach::SENDER_ORTHOGONALITY_SLACK`],
/// 1e-10); the finding must report at least a tenth of the tilt.
pub const TILT_SHARE: f64 = 1e-4;

/// Test: p-value below which a coefficient the simulated model makes real counts as detected.
/// In the test (slope 1.5 on a regressor of standard deviation 0.5, noise 0.7, 50 records) its t
/// statistic is about 7.6, a p-value near 1e-9, while a coefficient without effect falls below
/// 1e-6 only with that probability.
pub const DETECTED_P_VALUE: f64 = 1e-6;

/// Test: a regression computed by `orthomask secure-regress` (coefficients, σ, R², residual
/// correlations, the sum of the leverages) against the same analysis computed directly on the
/// joined data, relative (or absolute on values of order 1 whose exact value is 0 or the rank).
/// They differ only by the rounding of the secure product's orthogonal transformations, about
/// 1e-13 relative on the well-conditioned test data; 1e-9 catches any formula error.
pub const SECURE_FIT_MATCHES_DIRECT: f64 = 1e-9;

/// Test: exact leverages (the hat diagonal) an agency holding every predictor computes, against
/// the squared row norms of a Householder `Q` of the joined design, absolute. Both are squared
/// row norms of an orthonormal basis of the same column space (entries at most 1), each a few
/// hundred roundings for the 80 × 3 test design; 1e-12 leaves a wide margin.
pub const LOCAL_LEVERAGE: f64 = 1e-12;
