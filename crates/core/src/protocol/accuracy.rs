//! How many digits the collector's unmasking keeps: the expected rounding error of the released
//! entries, from the design alone (before any data exist), for the manifest and the survey team.
//!
//! # The error of one released entry (rounding model of Higham & Mary 2019, SIAM J. Sci.
//! Comput. 41(5): errors of a length-k computation behave like a sum of k independent roundings)
//! Let `u = 2⁻⁵³` and `x̃ = (x̃₁, x̃₂)` the padded record on the device's scale
//! ([`Tm2Design::pad`]), of norm
//!
//! ```text
//! (E1)   R² = ‖x̃₁‖² + p₂σ²  ≤  answers·b² + q² + p₂σ²,
//! ```
//!
//! `b` the largest answer the record carries ([`Tm2Design::record_answer_bound`]: 1 when scaled),
//! `q` the QA entry (±1 when scaled, `c` otherwise). Three orthogonal operators touch the whole
//! padded record before the collector keeps its `p₁` data columns: `x̃B` on the device, `A₂`
//! at the provider (on columns of length `n`, whose mean squared norm is `n R²/p ≤ R²` as
//! `p ≥ n`), and `Bᵀ` at the collector. Each is a product of Householder reflectors; applying one
//! to a vector `v` of length `k` in floating point gives `Q(v + Δ)` with `‖Δ‖ ≈ √k·u‖v‖`
//! under the model, spread evenly over the `k` coordinates, so each step adds about `u‖v‖` to an
//! entry, independently. The three together give an rms error per recovered entry of
//!
//! ```text
//! (E2)   E = √3 · u · R        (on the device's scale: in units of each answer's half-range).
//! ```
//!
//! `A₁` acts on the `p₁` data columns only (norms `√n` on that scale) and adds `u` per entry,
//! negligible next to (E2). In a column's own units the error is `h_j·E` (`h_j` its half-range):
//! scaling on the device is what makes it relative to each column instead of to the largest
//! declared value (seed 000 §3.4: "σ should not exceed raw data values by the orders of
//! magnitude allowed by the machine precision").
//!
//! # What it costs the statistics
//! Write the released block as `X₁ + Δ` with `Δ` the rounding errors, `|Δ_ij| ≈ h_j·E` (rms).
//! With `x_j` the `j`-th column and Cauchy–Schwarz,
//!
//! ```text
//! (E3)   |Δ(X₁ᵀX₁)_ij| ≤ ‖x_i‖‖Δ_j‖ + ‖Δ_i‖‖x_j‖ + ‖Δ_i‖‖Δ_j‖ ≈ √n·E·(h_j‖x_i‖ + h_i‖x_j‖),
//! ```
//!
//! so relative to `√(G_ii G_jj) = ‖x_i‖‖x_j‖` a cross-product moves by about
//! `E·(h_i/rms(x_i) + h_j/rms(x_j))`: `2E` for answers that fill their ranges, whatever their
//! magnitudes. For a least-squares fit on the release, with `κ` the condition number of the
//! column-equilibrated design, `η = ‖Δ‖_F/‖X₁‖_F ≈ E·h/rms(x)` its normwise relative
//! perturbation and `r` the residual (Golub & Van Loan 2013, Theorem 5.3.1),
//!
//! ```text
//! (E4)   ‖Δβ̃‖/‖β̃‖ ≲ κ·η·(2 + κ·‖r‖/(‖X₁‖‖β̃‖))      (β̃_j = β_j‖x_j‖, scaled coefficients).
//! ```
//!
//! The raw fit's own rounding is (E4) with `η ≈ u`, so masking is *expected* to cost about
//! `log₁₀(E/u) = log₁₀(√3·R)` significant digits on top of what the raw computation keeps
//! ([`UnmaskingAccuracy::expected_digits_lost`]). It is an expectation under the rounding model
//! above (rms errors of independent roundings), not a bound: the rigorous worst case is about `p`
//! times larger and never approached (`tests/unmasking_accuracy.rs` measures the rms error
//! against a double-double reference).
//!
//! # How the loss grows with the cohort: (E6)–(E8)
//! With σ at the Appendix C bound of the largest cohort `m` (`σ = (1 + h)σ_min`, `h` the
//! policy's headroom, `x` the bound's `x_max`, `p_m` the masked answers, `γ = p₂/m`), the
//! padding's share of (E1) is exactly
//!
//! ```text
//! (E6)   p₂σ² = (1 + h)²·x²·m·p_m·γ / ((√γ − 1)²(1 − δ)),
//! ```
//!
//! i.e. `2·m·p_m·γ/(√γ − 1)²` at δ = ½ and `x = 1` — not `2·m·p_m`: with the policy's noise
//! columns `(√γ − 1)√m = t/(1 − √½)` is fixed (`t = √(2 ln(1/τ))`, τ the failure target), so
//! `γ/(√γ − 1)²` grows like `m`, and the expected loss like `log₁₀ m` (the factor is 1.42 at
//! `m = 12`, 9.97 at 1 500, 43 at 10⁴: 1.3, 3.0 and 3.7 digits with 4, 10 and 10 answers).
//!
//! More noise columns lose fewer digits. With δ lowered to the smallest value that still meets
//! τ at `p₂` (`design::smallest_delta_for`: `1 − √(1 − δ) = t/(√p₂ − √m)`), (E6) becomes, with
//! `w = √p₂` and `k = √m + t`,
//!
//! ```text
//! (E7)   p₂σ² = (1 + h)²·x²·m·p_m·(w / (w − k))²,
//! ```
//!
//! decreasing in `p₂` towards its floor
//!
//! ```text
//! (E8)   p₂σ² > (1 + h)²·x²·m·p_m :
//! ```
//!
//! condition (3.5) asks each record's noise to outweigh the whole cohort's answers, so no
//! number of noise columns brings the expected loss below `½·log₁₀(3(A + m·p_m·x²))`, `A` the
//! record's own part of (E1). Solving (E7) for a target `D` digits (`3R² ≤ 10^{2D}`) gives the
//! fewest columns [`DigitsTarget::noise_columns`]: `w ≥ r·k/(r − 1)` with
//! `r = √((10^{2D}/3 − A)/((1 + h)²x²m·p_m))`, and none when `r ≤ 1` — (E8) binds. Unscaled,
//! `R` grows with the largest declared value and a small column loses `log₁₀(x_max/h_j)` digits
//! more: the failure the scaling exists to prevent.
//!
//! # Share mode (seed 000 §3.5)
//! A device splits `x̃` into `K` shares `x̃ⁱ = x̃/K + (Gᵢ − Ḡ)` on the answer coordinates
//! (`collusion::split_into_shares`), and each share goes through its own `Bᵢ`, the provider's
//! `A` and `Bᵢᵀ` before the collector adds the `K` parts. Each part carries (E2) for its own
//! norm, independently, so the sum carries `√3·u·√(Σᵢ‖x̃ⁱ‖²)` with
//!
//! ```text
//! (E5)   Σᵢ‖x̃ⁱ‖² ≈ R²/K + answers·τ²(K − 1)        (E[Σᵢ(Gᵢ − Ḡ)²] = (K − 1)τ² per answer),
//! ```
//!
//! larger than (E1) by the share noise τ that hides the answers from each service
//! ([`UnmaskingAccuracy::of_shares`]).
//!
//! # Not a worst case
//! A rigorous worst-case bound (Higham 2002, Lemma 19.3) multiplies (E2) by about `p` and is
//! never approached in practice; the tests check (E2) as the *expected* error: the rms error
//! measured against a double-double reference lies within
//! [`crate::tolerance::ERROR_MODEL_FACTOR`] of it, and the largest error below
//! [`HIGH_PROBABILITY_FACTOR`]·E.

use super::tm2::Tm2Design;

/// What the expected error and digits are, for the manifest: the model of the module
/// documentation in one line.
pub const ROUNDING_MODEL: &str = "rms error under the model of independent roundings (Higham & \
     Mary 2019): three orthogonal operators on the padded record of norm R give E = √3·u·R per \
     released entry; an expectation, not a bound";

/// The unit roundoff of `f64`, `u = 2⁻⁵³`.
pub const UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;

/// Orthogonal operators between the device's record and the collector's recovered data columns
/// (`B`, `A₂`, `Bᵀ`): the `3` of (E2).
const OPERATORS_ON_THE_PADDED_RECORD: f64 = 3.0;

/// The largest entry error of a cohort stays below this many times (E2): a Gaussian model error
/// exceeds 6 standard deviations with probability 2·10⁻⁹ per entry.
pub const HIGH_PROBABILITY_FACTOR: f64 = 6.0;

/// The expected rounding error of the released entries for one design (module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnmaskingAccuracy {
    /// `R` of (E1) (in share mode the `√(Σᵢ‖x̃ⁱ‖²)` of (E5)): the norm the rounding errors scale
    /// with, on the device's scale.
    pub record_norm: f64,
    /// `E` of (E2): rms error of a released entry on the device's scale (in units of the
    /// answer's half-range when the device scales; in the answer's units otherwise).
    pub expected_entry_error: f64,
    /// Whether the device scales by declared ranges (what `E`'s unit is).
    pub scaled: bool,
}

impl UnmaskingAccuracy {
    /// (E1)–(E2) for `design`, with `declared_x_max` the largest absolute answer in the answers'
    /// own units (used only when the device does not scale).
    pub fn of(design: &Tm2Design, declared_x_max: f64) -> Self {
        let padding = design.p2() as f64 * design.sigma() * design.sigma();
        let record_norm = (record_data_norm_squared(design, declared_x_max) + padding).sqrt();
        Self {
            record_norm,
            expected_entry_error: OPERATORS_ON_THE_PADDED_RECORD.sqrt()
                * UNIT_ROUNDOFF
                * record_norm,
            scaled: design.scaler().is_some(),
        }
    }

    /// (E5): the same in share mode, with `services` shares of noise `share_sigma` on the answer
    /// coordinates.
    pub fn of_shares(
        design: &Tm2Design,
        declared_x_max: f64,
        services: usize,
        share_sigma: f64,
    ) -> Self {
        let single = Self::of(design, declared_x_max);
        let k = services.max(1) as f64;
        let shares = design.answers() as f64 * share_sigma * share_sigma * (k - 1.0);
        let record_norm = (single.record_norm * single.record_norm / k + shares).sqrt();
        Self {
            record_norm,
            expected_entry_error: OPERATORS_ON_THE_PADDED_RECORD.sqrt()
                * UNIT_ROUNDOFF
                * record_norm,
            scaled: single.scaled,
        }
    }

    /// `E` in the units of an answer of half-range `half_width` (`h_j·E` when scaled; `E` itself
    /// otherwise, already in the answers' units).
    pub fn in_units_of(&self, half_width: f64) -> f64 {
        if self.scaled {
            self.expected_entry_error * half_width
        } else {
            self.expected_entry_error
        }
    }

    /// The significant digits masking is expected to cost a coefficient on top of the raw fit,
    /// `log₁₀(E/u)`: an rms figure under the rounding model of the module documentation, not a
    /// bound.
    pub fn expected_digits_lost(&self) -> f64 {
        (self.expected_entry_error / UNIT_ROUNDOFF).log10()
    }
}

/// `A` of (E7)–(E8): the record's own part of (E1), `answers·(b² + σ_DP²) + q²` — everything but
/// the padding, which does not depend on `p₂`.
pub fn record_data_norm_squared(design: &Tm2Design, declared_x_max: f64) -> f64 {
    let b = design.record_answer_bound(declared_x_max);
    let q = design.record_qa_entry().unwrap_or(0.0);
    let dp = design.dp().map_or(0.0, |d| d.sigma());
    // DP noise adds its variance to each answer entry.
    design.answers() as f64 * (b * b + dp * dp) + q * q
}

/// A design's target for the expected digits lost, and what (E7)–(E8) need to know about it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DigitsTarget {
    /// The largest cohort `m`, where the Appendix C bound binds.
    pub cohort: usize,
    /// Masked answer columns `p_m`.
    pub masked_columns: usize,
    /// The bound's `x_max` on the padded record's scale.
    pub x_max: f64,
    /// `A` of (E7): [`record_data_norm_squared`].
    pub data_norm_squared: f64,
    /// σ's relative headroom `h` over σ_min.
    pub headroom: f64,
    /// The Appendix C failure target τ.
    pub failure_target: f64,
    /// The expected digits `D` the release may lose.
    pub digits: f64,
}

impl DigitsTarget {
    /// (E7)–(E8) solved: the fewest noise columns whose σ at the Appendix C bound, with δ the
    /// smallest meeting the failure target (`design::smallest_delta_for`), keeps the expected
    /// loss at most `digits`; `None` when (E8) puts the target out of reach.
    pub fn noise_columns(&self) -> Option<usize> {
        let m = self.cohort as f64;
        let scale = (1.0 + self.headroom).powi(2) * self.x_max * self.x_max;
        let floor = scale * m * self.masked_columns as f64;
        let room = 10f64.powf(2.0 * self.digits) / 3.0 - self.data_norm_squared;
        // Written so that a NaN anywhere also gives None.
        let reachable = room > floor && self.failure_target > 0.0 && self.failure_target < 1.0;
        if !reachable {
            return None;
        }
        let r = (room / floor).sqrt();
        let k = m.sqrt() + (2.0 * (1.0 / self.failure_target).ln()).sqrt();
        let w = r * k / (r - 1.0);
        // `w²` is finite and positive here; the ceiling keeps (E7) at or below the target.
        Some((w * w).ceil() as usize)
    }

    /// (E8): the fewest expected digits any number of noise columns can reach,
    /// `½·log₁₀(3(A + (1 + h)²x²m·p_m))`.
    pub fn floor_digits(&self) -> f64 {
        let scale = (1.0 + self.headroom).powi(2) * self.x_max * self.x_max;
        let floor = scale * self.cohort as f64 * self.masked_columns as f64;
        0.5 * (3.0 * (self.data_norm_squared + floor)).log10()
    }
}
