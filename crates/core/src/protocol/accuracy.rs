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
//! The raw fit's own rounding is (E4) with `η ≈ u`, so masking costs about `log₁₀(E/u) =
//! log₁₀(√3·R)` significant digits on top of what the raw computation keeps
//! ([`UnmaskingAccuracy::digits_lost`]). On the policy's designs `R² ≈ p_m + p₂σ² ≈ 2·m·p_m` at
//! the largest cohort `m` (Appendix C makes the noise dominate the cohort's whole spectral norm,
//! and `p₂σ²` tends to `m·p_m/(1 − δ)` as `p₂` grows): about 1.3 digits for cohorts of 12 and
//! 4 answers, 3.0 for cohorts of 1 500 and 10 answers. Unscaled, `R` grows with the largest
//! declared value and a small column loses `log₁₀(x_max/h_j)` digits more: the failure this
//! module and the scaling exist to prevent (`tests/unmasking_accuracy.rs`).
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
//! never approached in practice; the tests check (E2) as the *expected* error (the measured rms
//! error lies within [`crate::tolerance::ERROR_MODEL_FACTOR`] of it) and the largest error
//! against [`HIGH_PROBABILITY_FACTOR`]·E.

use super::tm2::Tm2Design;

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
        let b = design.record_answer_bound(declared_x_max);
        let q = design.record_qa_entry().unwrap_or(0.0);
        let dp = design.dp().map_or(0.0, |d| d.sigma());
        // DP noise adds its variance to each answer entry.
        let answers = design.answers() as f64 * (b * b + dp * dp);
        let padding = design.p2() as f64 * design.sigma() * design.sigma();
        let record_norm = (answers + q * q + padding).sqrt();
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

    /// Significant digits masking costs a coefficient on top of the raw fit (module
    /// documentation): `log₁₀(E/u)`.
    pub fn digits_lost(&self) -> f64 {
        (self.expected_entry_error / UNIT_ROUNDOFF).log10()
    }
}
