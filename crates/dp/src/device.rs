//! Device-side differential privacy for the mechanism TM² actually runs: each device adds
//! Gaussian noise to its scaled answers, and the collector sees them under masks that keep `1ₙ`
//! fixed, cohort by cohort.
//!
//! Seed 004's Theorem 3.4 is about masks Haar on all of `O(n)` and neighbours at distance
//! `‖Δ‖ ≤ 1`. Our masks keep `1ₙ` fixed, which releases the noisy column sums, and our
//! neighbours differ by a whole record. This module derives the guarantee for that mechanism,
//! calibrates σ for it, and reports what a given σ guarantees.
//!
//! # The mechanism (one cohort of `n = n_s` records)
//! Each device scales its `p` answers to `[−1, 1]` by the declared ranges (seed 004 eq. (6),
//! [`crate::scaling`]), adds `C_i ~ N(0, σ²I_p)` and pads and masks its record. The collector sees
//! `Y = A(X + C)` with `A` Haar on the stabiliser `G₁ = {A ∈ O(n) : A·1ₙ = 1ₙ}`; cohorts have
//! independent masks and noise (`diag(A_k)`). Everything published is computed from the
//! collector's view, so a guarantee for it covers the release (post-processing). The padding
//! columns `A·X₂` are independent of the data and of `A` (for a fixed `A`, `A·X₂` has the law of
//! `X₂`), and the QA column `A·q1ₙ = q1ₙ` is constant, so neither adds to the view.
//!
//! # Neighbours: one record replaced (D1)
//! `X` and `X′` are neighbours when one participant's record is replaced by any other valid
//! record (every answer inside its declared range): `X′ = X + e_i Δ_i` with both rows in
//! `[−1, 1]^p` after scaling, so `‖Δ_i‖ ≤ 2√p`. This is [`NEIGHBOUR_RELATION`]. (Seed 004's
//! Definition 2.1 bounds `‖Δ‖ ≤ 1`; its own setting stays available through
//! [`crate::Calibration`] and [`crate::setting_b`], which reproduce its Table 1.)
//!
//! # Step 1: two independent mechanisms (D2)–(D4)
//! Let `W = [1ₙ/√n, U]` be orthogonal (`U`: `n × (n − 1)`, e.g. Helmert's). For `A ∈ G₁`,
//! `Aᵀ1ₙ = A⁻¹1ₙ = 1ₙ` too, so the first row and column of `WᵀAW` are `e₁`:
//!
//! ```text
//! (D2)   WᵀAW = diag(1, V),   V = UᵀAU ∈ O(n − 1).
//! ```
//!
//! `A ↦ V` is a group isomorphism `G₁ → O(n − 1)` (inverse `V ↦ W·diag(1, V)·Wᵀ`), so `A` Haar on
//! `G₁` means `V` Haar on `O(n − 1)`. Since `W` is a fixed bijection, releasing `Y` is releasing
//!
//! ```text
//! (D3)   WᵀY = ( s ; V(UᵀX + UᵀC) ),   s = 1ₙᵀ(X + C)/√n.
//! ```
//!
//! `WᵀC` has i.i.d. `N(0, σ²)` entries (each column of `C` is `N(0, σ²Iₙ)` and `W` is orthogonal),
//! so `c₀ = 1ₙᵀC/√n ~ N(0, σ²I_p)` and `C̃ = UᵀC` are independent, and both are independent of
//! `V`. Given `X` the view is therefore the pair of independently randomised mechanisms
//!
//! ```text
//! (D4)   M_sum(X) = 1ₙᵀX/√n + c₀            (a Gaussian mechanism on the column sums),
//!        M_comp(X) = V(UᵀX + C̃)              (seed 004 setting (B) on n′ = n − 1 rows).
//! ```
//!
//! # Step 2: the sum part (D5)
//! `M_sum(X′) − M_sum(X)` has mean `Δ_iᵀ/√n`: a Gaussian mechanism with sensitivity
//! `Δ_sum = 2√p/√n` and noise σ, whose exact profile `δ_G(ε₁)` is (G1) of
//! [`crate::gaussian_mechanism`] (Balle & Wang 2018).
//!
//! # Step 3: the complement part (D6)–(D8)
//! `UᵀX′ = UᵀX + u·Δ_iᵀ` with `u = Uᵀe_i`, `‖u‖² = e_iᵀ(Iₙ − 1ₙ1ₙᵀ/n)e_i = 1 − 1/n`. Take a fixed
//! orthogonal `R` (depending on `i` only) with `Ru = ‖u‖e₁`. `M_comp(R·X̃)` has the law of
//! `M_comp(X̃)` (`VR` is Haar and `RᵀC̃` has the law of `C̃`), so the pair `(UᵀX, UᵀX′)` is exactly
//! as distinguishable as `(RUᵀX, RUᵀX′)`, which differ in row 1 only:
//!
//! ```text
//! (D6)   row 1 of RUᵀX = uᵀUᵀX/‖u‖ = e_iᵀ(Iₙ − 1ₙ1ₙᵀ/n)X/‖u‖ = (x_i − x̄)/‖u‖,
//! (D7)   |x_ij − x̄_j| = |(1 − 1/n)x_ij − (1/n)Σ_{k≠i} x_kj| ≤ 2(1 − 1/n)
//!          ⇒ ‖row 1‖ ≤ a := 2√p·√(1 − 1/n)   (the same for X′),
//! (D8)   row 1 of RUᵀ(X′ − X) = ‖u‖Δ_iᵀ  ⇒  its norm is at most d := √(1 − 1/n)·2√p = a.
//! ```
//!
//! So `M_comp` is setting (B) on `n′ = n − 1` rows with a changed row bounded by `(a, d)`, and
//! [`crate::masked_complement`] gives its guarantee `δ_B(ε₂)` ((M6) there: Lemma 5.3 redone for
//! general `(a, d)`, with the sharpened bounds (M2), (M4) and the correction (M1) to Lemmas
//! 5.1–5.2). With `a = d`: `L = a²`, `H = a²/2` (`L`, `H` the bounds of (M2), (M4)).
//!
//! # Step 4: composition (D9)
//! Basic composition (Dwork & Roth 2014, Theorem 3.16; it needs only independent randomness):
//! `M_sum` (ε₁, δ₁)-DP and `M_comp` (ε₂, δ₂)-DP make the pair (ε₁ + ε₂, δ₁ + δ₂)-DP. For a given σ
//! the best split of a total ε gives
//!
//! ```text
//! (D9)   δ(σ, ε) = min_{0 ≤ ε₁ ≤ ε} [ δ_G(ε₁; 2√p/√n, σ) + δ_B(ε − ε₁; σ) ].
//! ```
//!
//! Any split is a valid guarantee; the search (a grid of [`SPLIT_GRID_INTERVALS`] intervals,
//! then golden-section search around the best grid point to [`SPLIT_RELATIVE`]) only makes it
//! tight. `δ(σ, ε)` decreases in σ and in ε (each term does, for every split).
//!
//! # Step 5: calibration and guarantee (D10)
//! * Calibration: `σ*(ε, δ) = min{σ : δ(σ, ε) ≤ δ}`, by bisection between a lower bound (each
//!   part alone must meet (ε, δ): `max(σ_G(ε, δ), σ_B(ε, δ))`) and a doubling upper bound, until
//!   the bracket is narrower than [`CALIBRATION_RELATIVE`] of σ; the returned σ is the upper end,
//!   at which `δ(σ, ε) ≤ δ` was verified.
//! * Guarantee for a σ in use: `ε*(σ, δ) = min{ε : δ(σ, ε) ≤ δ}` (bisection likewise), or
//!   `δ(σ, ε)` directly.
//!
//! # Cohorts (D11)
//! With `A = diag(A₁, …, A_k)`, independent blocks and independent noise, a record of cohort `k`
//! changes only block `k`'s view; the others are independent of it. So the release is as private
//! as the least private cohort, and σ must meet (ε, δ) at **every** cohort size the survey can
//! release, `n_s ≤ n ≤ m`. We do not claim that `δ(σ, ε)` decreases with `n`: the sum part does
//! (its sensitivity `2√p/√n` falls and (G1) increases with the sensitivity), but the complement's
//! changed row `a = 2√p·√(1 − 1/n)` grows with `n` while its degrees of freedom grow, and no
//! argument here orders the two. Instead (D11′) is checked size by size
//! ([`CohortMechanism::calibrate_for_sizes`]): σ is calibrated at `n_s`, its split `(ε₁, ε₂)` is
//! kept, and `δ_G(ε₁; 2√p/√n, σ) + δ_B,n(ε₂; σ) ≤ δ` is verified for each `n` up to `m` (a
//! fixed split is a valid guarantee at every `n`, by (D9)); where some `n` fails, σ is raised
//! until every `n` passes (each term decreases in σ, so the check is monotone in σ).
//!
//! # Against today's calibration
//! Until now σ was seed 004's σ₀ (eq. (13)) for `n_s − 1` rows, i.e. `a = √p`, `d = 1`, and the
//! sums were checked separately at the full (ε, δ) — so only about `(2ε, 2δ)` followed, and for
//! neighbours at distance 1, not `2√p`. For large `n_s` the χ² quantile approaches its degrees of
//! freedom and the sum part's cost vanishes, so both conditions approach `σ²ε = L + H`, giving
//! the growth factor
//!
//! ```text
//! (D12)  σ*/σ₀ → √((L + H)/(3√p + 1)) = √(6p(1 − 1/n)/(3√p + 1)),
//! ```
//!
//! which grows without bound, like `√(2√p)`. Its values for large `n`
//! (`1 − 1/n → 1`):
//!
//! ```text
//!   p       1      2      3      5      10     20     25     50     100    200
//!   limit   1.225  1.513  1.704  1.973  2.392  2.885  3.062  3.675  4.399  5.257
//! ```
//!
//! (above 3 from p = 24). At finite `n_s` the sum part still costs budget, so the factor is
//! larger: e.g. 1.73 at p = 1, n_s = 5; 1.94 at p = 3, n_s = 149; 3.58 at p = 25, n_s = 100
//! (ε = 0.5, δ = 10⁻⁵). The manifest states the factor of the σ actually used
//! ([`DeviceCalibration::growth_factor`]); the table is tested in `tests/device_mechanism.rs`.

use crate::gaussian_mechanism::{
    GaussianMechanismError, gaussian_mechanism_delta, gaussian_mechanism_sigma,
};
use crate::masked_complement::{ChangedRow, LemmaBounds, MaskedComplement};
use crate::params::{ParameterError, check_delta, check_epsilon};
use crate::setting_b::{NoiseThenMask, SettingBError};
use crate::tolerance::{
    CALIBRATION_RELATIVE, GUARANTEE_RELATIVE, MAX_BRACKET_EXPANSIONS, SPLIT_GRID_INTERVALS,
    SPLIT_RELATIVE,
};

/// The neighbouring relation every device-side guarantee is stated for, as a short name for
/// manifests and reports (`dp.neighbours`).
pub const NEIGHBOUR_RELATION: &str = "replace-one-record";

/// [`NEIGHBOUR_RELATION`] in words, for the survey team and the participant.
pub const NEIGHBOUR_RELATION_DESCRIPTION: &str = "one participant's record replaced by any other \
     valid record (every answer anywhere in its declared range), so the scaled record moves by \
     up to 2√p";

/// Why a device-side guarantee or calibration could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeviceDpError {
    /// An input is outside the region where the derivation holds.
    #[error(transparent)]
    Parameter(#[from] ParameterError),
    /// The Gaussian mechanism of the column sums failed.
    #[error("noisy column sums: {0}")]
    Sum(#[from] GaussianMechanismError),
    /// The masked complement (setting (B)) failed.
    #[error("masked complement of 1ₙ: {0}")]
    Complement(#[from] SettingBError),
    /// σ is not finite and positive.
    #[error("σ = {sigma} must be finite and > 0")]
    InvalidSigma {
        /// The rejected value.
        sigma: f64,
    },
    /// A bisection could not bracket its target (not expected).
    #[error("could not bracket {what} for p = {p}, n_s = {cohort}")]
    NotBracketed {
        /// What was searched for.
        what: &'static str,
        /// Answer columns.
        p: u64,
        /// Cohort size.
        cohort: u64,
    },
}

/// How a total (ε, δ) is shared between the noisy column sums and the masked complement (D9).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetSplit {
    /// ε₁ spent on the column sums.
    pub epsilon_sum: f64,
    /// δ₁ = δ_G(ε₁), (G1).
    pub delta_sum: f64,
    /// ε₂ spent on the masked complement.
    pub epsilon_complement: f64,
    /// δ₂ = δ_B(ε₂), (M6).
    pub delta_complement: f64,
}

impl BudgetSplit {
    /// Total ε = ε₁ + ε₂.
    pub fn epsilon(&self) -> f64 {
        self.epsilon_sum + self.epsilon_complement
    }

    /// Total δ = δ₁ + δ₂ (above 1 means no guarantee at this ε).
    pub fn delta(&self) -> f64 {
        self.delta_sum + self.delta_complement
    }
}

/// A calibrated σ for the device-side mechanism, with the split that meets the target and
/// today's σ for comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeviceCalibration {
    epsilon: f64,
    delta: f64,
    sigma: f64,
    split: BudgetSplit,
    paper_sigma: f64,
}

impl DeviceCalibration {
    /// Target ε.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// Target δ.
    pub fn delta(&self) -> f64 {
        self.delta
    }

    /// σ*(ε, δ) of (D10): the noise standard deviation per scaled answer.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The split at σ* (its totals meet the target).
    pub fn split(&self) -> BudgetSplit {
        self.split
    }

    /// Today's calibration: seed 004's σ₀ of eq. (13) for `n_s − 1` rows (neighbours at
    /// distance 1, masks Haar on all of `O(n_s − 1)`).
    pub fn paper_sigma(&self) -> f64 {
        self.paper_sigma
    }

    /// `σ*/σ₀`: how much more noise the actual mechanism needs than today's calibration (D12).
    pub fn growth_factor(&self) -> f64 {
        self.sigma / self.paper_sigma
    }
}

/// The device-side mechanism for `p` answer columns and a smallest cohort of `n_s` records.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CohortMechanism {
    p: u64,
    cohort: u64,
}

impl CohortMechanism {
    /// The mechanism for `p` scaled answers per record and cohorts of at least `n_s` records.
    ///
    /// # Errors
    /// [`ParameterError::NoVariables`] for `p = 0`; [`ParameterError::CohortTooSmall`] unless
    /// `n_s − 1 > p` (the complement of `1ₙ` must have more rows than columns).
    pub fn new(p: u64, smallest_cohort: u64) -> Result<Self, ParameterError> {
        if p == 0 {
            return Err(ParameterError::NoVariables);
        }
        if smallest_cohort < p.saturating_add(2) {
            return Err(ParameterError::CohortTooSmall {
                cohort: smallest_cohort,
                p,
            });
        }
        Ok(Self {
            p,
            cohort: smallest_cohort,
        })
    }

    /// Answer columns `p`.
    pub fn p(&self) -> u64 {
        self.p
    }

    /// Cohort size `n_s`.
    pub fn cohort(&self) -> u64 {
        self.cohort
    }

    /// `Δ_sum = 2√p/√n_s`, the sensitivity of the noisy column sums (D5).
    pub fn sum_sensitivity(&self) -> f64 {
        2.0 * (self.p as f64).sqrt() / (self.cohort as f64).sqrt()
    }

    /// The changed row of the rotated complement: `a = d = 2√p·√(1 − 1/n_s)` ((D7), (D8)).
    pub fn changed_row(&self) -> ChangedRow {
        let n = self.cohort as f64;
        let a = 2.0 * (self.p as f64).sqrt() * (1.0 - 1.0 / n).sqrt();
        ChangedRow::new(a, a).expect("a = d > 0 is a valid row bound")
    }

    /// The masked complement: setting (B) on `n_s − 1` rows with [`Self::changed_row`] and the
    /// sharpened bounds of Lemma 5.3.
    pub fn complement(&self) -> MaskedComplement {
        MaskedComplement::new(
            self.cohort - 1,
            self.p,
            self.changed_row(),
            LemmaBounds::Sharpened,
        )
        .expect("n_s − 1 > p ≥ 1 was checked in new")
    }

    /// The best split (D9) of a total `ε` at noise σ; its [`BudgetSplit::delta`] is the δ the
    /// mechanism guarantees at that ε.
    ///
    /// # Errors
    /// [`DeviceDpError::InvalidSigma`] unless σ is finite and positive;
    /// [`DeviceDpError::Parameter`] unless ε is finite and positive; numerical failures of the
    /// parts (not expected).
    pub fn split_at(&self, sigma: f64, epsilon: f64) -> Result<BudgetSplit, DeviceDpError> {
        if !(sigma.is_finite() && sigma > 0.0) {
            return Err(DeviceDpError::InvalidSigma { sigma });
        }
        check_epsilon(epsilon)?;
        let complement = self.complement();
        let sensitivity = self.sum_sensitivity();
        let evaluate = |epsilon_sum: f64| -> Result<BudgetSplit, DeviceDpError> {
            let epsilon_sum = epsilon_sum.clamp(0.0, epsilon);
            let epsilon_complement = epsilon - epsilon_sum;
            Ok(BudgetSplit {
                epsilon_sum,
                delta_sum: gaussian_mechanism_delta(sensitivity, sigma, epsilon_sum)?,
                epsilon_complement,
                delta_complement: complement.delta_at(sigma, epsilon_complement)?,
            })
        };
        // Grid over ε₁ ∈ [0, ε].
        let step = epsilon / SPLIT_GRID_INTERVALS as f64;
        let mut best = evaluate(0.0)?;
        let mut best_index = 0;
        for i in 1..=SPLIT_GRID_INTERVALS {
            let candidate = evaluate(step * i as f64)?;
            if candidate.delta() < best.delta() {
                best = candidate;
                best_index = i;
            }
        }
        // Golden-section search on the two grid intervals around the best point.
        let mut lo = step * best_index.saturating_sub(1) as f64;
        let mut hi = (step * (best_index + 1) as f64).min(epsilon);
        let ratio = 0.5 * (5f64.sqrt() - 1.0);
        let mut x1 = hi - ratio * (hi - lo);
        let mut x2 = lo + ratio * (hi - lo);
        let mut f1 = evaluate(x1)?;
        let mut f2 = evaluate(x2)?;
        while hi - lo > SPLIT_RELATIVE * epsilon {
            if f1.delta() <= f2.delta() {
                hi = x2;
                x2 = x1;
                f2 = f1;
                x1 = hi - ratio * (hi - lo);
                f1 = evaluate(x1)?;
            } else {
                lo = x1;
                x1 = x2;
                f1 = f2;
                x2 = lo + ratio * (hi - lo);
                f2 = evaluate(x2)?;
            }
        }
        for candidate in [f1, f2] {
            if candidate.delta() < best.delta() {
                best = candidate;
            }
        }
        Ok(best)
    }

    /// `δ(σ, ε)` of (D9): the δ guaranteed at total budget ε with noise σ.
    ///
    /// # Errors
    /// As [`split_at`](Self::split_at).
    pub fn delta_at(&self, sigma: f64, epsilon: f64) -> Result<f64, DeviceDpError> {
        Ok(self.split_at(sigma, epsilon)?.delta())
    }

    /// `ε*(σ, δ)` of (D10): the smallest total ε guaranteed with noise σ at failure probability
    /// δ, with its split. Found by bisection on ε to relative width [`GUARANTEE_RELATIVE`]; the
    /// returned split meets δ.
    ///
    /// # Errors
    /// [`DeviceDpError::Parameter`] unless `0 < δ < 1`; [`DeviceDpError::InvalidSigma`];
    /// [`DeviceDpError::NotBracketed`] (not expected: `δ(σ, ε) → 0` as `ε → ∞`).
    pub fn epsilon_at(&self, sigma: f64, delta: f64) -> Result<BudgetSplit, DeviceDpError> {
        check_delta(delta)?;
        let not_bracketed = || DeviceDpError::NotBracketed {
            what: "the guaranteed ε",
            p: self.p,
            cohort: self.cohort,
        };
        let mut hi = 1.0;
        let mut best = self.split_at(sigma, hi)?;
        let mut expansions = 0;
        while best.delta() > delta {
            hi *= 2.0;
            best = self.split_at(sigma, hi)?;
            expansions += 1;
            if expansions > MAX_BRACKET_EXPANSIONS {
                return Err(not_bracketed());
            }
        }
        let mut lo = 0.0;
        while hi - lo > GUARANTEE_RELATIVE * hi {
            let mid = 0.5 * (lo + hi);
            let split = self.split_at(sigma, mid)?;
            if split.delta() <= delta {
                hi = mid;
                best = split;
            } else {
                lo = mid;
            }
        }
        Ok(best)
    }

    /// δ at total ε for a cohort of exactly `n ≥ n_s` records with the split (ε₁, ε₂) of
    /// `split` kept (a valid guarantee at every `n`, (D9)).
    ///
    /// # Errors
    /// As [`split_at`](Self::split_at).
    pub fn delta_with_split(
        &self,
        n: u64,
        sigma: f64,
        split: &BudgetSplit,
    ) -> Result<f64, DeviceDpError> {
        let sized = Self::new(self.p, n)?;
        Ok(
            gaussian_mechanism_delta(sized.sum_sensitivity(), sigma, split.epsilon_sum)?
                + sized
                    .complement()
                    .delta_at(sigma, split.epsilon_complement)?,
        )
    }

    /// The largest δ over every cohort size from `n_s` to `largest` at noise σ with the split of
    /// `split` kept: what (D11′) guarantees for a survey whose cohorts range over those sizes.
    ///
    /// # Errors
    /// As [`delta_with_split`](Self::delta_with_split).
    pub fn worst_delta(
        &self,
        largest: u64,
        sigma: f64,
        split: &BudgetSplit,
    ) -> Result<f64, DeviceDpError> {
        let mut worst: f64 = 0.0;
        for n in self.cohort..=largest.max(self.cohort) {
            worst = worst.max(self.delta_with_split(n, sigma, split)?);
        }
        Ok(worst)
    }

    /// (D11′): σ*(ε, δ) for every cohort size from `n_s` to `largest`, each size checked (module
    /// documentation). The returned calibration's split meets (ε, δ) at every such size.
    ///
    /// # Errors
    /// As [`calibrate`](Self::calibrate); [`DeviceDpError::Parameter`] when `largest < n_s`.
    pub fn calibrate_for_sizes(
        &self,
        largest: u64,
        epsilon: f64,
        delta: f64,
    ) -> Result<DeviceCalibration, DeviceDpError> {
        if largest < self.cohort {
            return Err(DeviceDpError::Parameter(ParameterError::CohortTooSmall {
                cohort: largest,
                p: self.p,
            }));
        }
        let at_smallest = self.calibrate(epsilon, delta)?;
        let split = at_smallest.split;
        let worst = |sigma: f64| self.worst_delta(largest, sigma, &split);
        if worst(at_smallest.sigma)? <= delta {
            return Ok(at_smallest);
        }
        let not_bracketed = || DeviceDpError::NotBracketed {
            what: "σ for every cohort size",
            p: self.p,
            cohort: self.cohort,
        };
        let (mut lo, mut hi) = (at_smallest.sigma, at_smallest.sigma);
        let mut expansions = 0;
        while worst(hi)? > delta {
            lo = hi;
            hi *= 2.0;
            expansions += 1;
            if expansions > MAX_BRACKET_EXPANSIONS {
                return Err(not_bracketed());
            }
        }
        while hi - lo > CALIBRATION_RELATIVE * hi {
            let mid = 0.5 * (lo + hi);
            if worst(mid)? <= delta {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Ok(DeviceCalibration {
            sigma: hi,
            split: BudgetSplit {
                delta_sum: gaussian_mechanism_delta(self.sum_sensitivity(), hi, split.epsilon_sum)?,
                delta_complement: self.complement().delta_at(hi, split.epsilon_complement)?,
                ..split
            },
            ..at_smallest
        })
    }

    /// Today's σ: seed 004's σ₀ (eq. (13)) for `n_s − 1` rows and `p` columns.
    ///
    /// # Errors
    /// Parameter errors of `ε > 0`, `0 < δ < 1`; root-search failures.
    pub fn paper_sigma(&self, epsilon: f64, delta: f64) -> Result<f64, DeviceDpError> {
        Ok(NoiseThenMask::new(epsilon, delta, self.cohort - 1, self.p)?.sufficient_sigma()?)
    }

    /// σ*(ε, δ) of (D10): the smallest σ whose best split meets (ε, δ), to relative accuracy
    /// [`CALIBRATION_RELATIVE`] (the returned σ meets the target; `σ·(1 − CALIBRATION_RELATIVE)`
    /// does not).
    ///
    /// # Errors
    /// [`DeviceDpError::Parameter`] unless ε is finite and positive and `0 < δ < 1`; numerical
    /// failures (not expected).
    pub fn calibrate(&self, epsilon: f64, delta: f64) -> Result<DeviceCalibration, DeviceDpError> {
        check_epsilon(epsilon)?;
        check_delta(delta)?;
        let not_bracketed = || DeviceDpError::NotBracketed {
            what: "σ",
            p: self.p,
            cohort: self.cohort,
        };
        // Each part alone must meet (ε, δ): a lower bound on σ* (D10).
        let sum_alone = gaussian_mechanism_sigma(self.sum_sensitivity(), epsilon, delta)?;
        let complement_alone = self.complement().sufficient_sigma(epsilon, delta)?;
        let mut lo = sum_alone.max(complement_alone);
        let mut split = self.split_at(lo, epsilon)?;
        let mut hi = lo;
        if split.delta() > delta {
            let mut expansions = 0;
            loop {
                hi *= 2.0;
                split = self.split_at(hi, epsilon)?;
                if split.delta() <= delta {
                    break;
                }
                lo = hi;
                expansions += 1;
                if expansions > MAX_BRACKET_EXPANSIONS {
                    return Err(not_bracketed());
                }
            }
            while hi - lo > CALIBRATION_RELATIVE * hi {
                let mid = 0.5 * (lo + hi);
                let at_mid = self.split_at(mid, epsilon)?;
                if at_mid.delta() <= delta {
                    hi = mid;
                    split = at_mid;
                } else {
                    lo = mid;
                }
            }
        }
        Ok(DeviceCalibration {
            epsilon,
            delta,
            sigma: hi,
            split,
            paper_sigma: self.paper_sigma(epsilon, delta)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{ULPS_BELOW_ONE, ULPS_BELOW_TEN};

    #[test]
    fn cohorts_too_small_for_the_complement_are_refused() {
        assert_eq!(
            CohortMechanism::new(5, 6),
            Err(ParameterError::CohortTooSmall { cohort: 6, p: 5 })
        );
        assert!(CohortMechanism::new(5, 7).is_ok());
        assert_eq!(CohortMechanism::new(0, 7), Err(ParameterError::NoVariables));
        let m = CohortMechanism::new(5, 7).unwrap();
        assert!(matches!(
            m.split_at(0.0, 1.0),
            Err(DeviceDpError::InvalidSigma { .. })
        ));
        assert!(matches!(
            m.calibrate(0.5, 1.5),
            Err(DeviceDpError::Parameter(
                ParameterError::DeltaOutOfRange { .. }
            ))
        ));
    }

    /// By hand: p = 4, n_s = 100: `Δ_sum = 2·2/10 = 0.4`, `a = d = 4·√0.99 = 3.97995`.
    #[test]
    fn sensitivities_by_hand() {
        let m = CohortMechanism::new(4, 100).unwrap();
        assert!((m.sum_sensitivity() - 0.4).abs() < ULPS_BELOW_ONE);
        let row = m.changed_row();
        assert!((row.norm() - 4.0 * 0.99f64.sqrt()).abs() < ULPS_BELOW_TEN);
        assert!((row.change() - row.norm()).abs() < f64::MIN_POSITIVE);
        assert_eq!(m.complement().rows(), 99);
    }
}
