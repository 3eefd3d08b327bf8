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
