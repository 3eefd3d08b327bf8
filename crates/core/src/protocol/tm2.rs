//! The modified TM² (Ding, Miao & Wu 2020, seed 000 §2) and the first TM² method (Wu, Chen, Burr
//! & Zhang 2017, seed 003 §3.1), which share their parties.
//!
//! ```text
//! participant i      x = (x₁, [c], x₂)          x₂ ~ N(0, σ²)^{p₂}      sends  x·B_k
//! provider (MSP)     A₂,k · (X_k B_k)           A₂,k 1 = 1              sends  A₂,k X_k B_k
//! collector          A₂,k X_k = (A₂,k X_k B_k)·(B_k⁻¹)[:, :p₁]   QA: column c must read c·1
//! collector          A₁ · [A₂,1 X₁,1; …; A₂,K X₁,K]             A₁ 1 = 1    publishes A₁A₂X₁
//! ```
//!
//! With one cohort this is exactly the papers' protocol. The modified method uses a Haar right
//! mask and Gaussian padding with `p₂ > n` (seed 000); the first method uses an invertible `B₁`
//! with i.i.d. U(0, 1) entries and no padding (seed 003; its Remark 3 suggests padding, which is
//! allowed here too). Partial masking (seed 003 §3.1) keeps chosen data columns unmasked: `B₁ =
//! diag(I, B₁*)` up to a permutation, and both left masks keep those columns (and `1ₙ`) fixed, so
//! the release is `[X_keep, A₁A₂X_rest]`.
//!
//! Each party type holds only its own key and the public survey design: the participant holds
//! `B` (as every participant's device must in the basic protocol), the provider holds the key of
//! `A₂`, the collector the key of `B` and `A₁`.

use super::qa::{QaReport, check_constant, max_row_norm};
use super::{ProtocolError, require_finite};
use crate::key::{Key, KeyOrigin, StreamId};
use crate::mask::{
    DenseInvertible, FixedSubspaceHaar, HaarOrbit, HaarOrthogonal, KeepColumns, Mask,
    ORBIT_MIN_ROWS,
};
use crate::random::{BitSource, MatlabTwister, fill_standard_normal};
use crate::scaling::RangeScaler;
use crate::tolerance::ZERO_COLUMN_ROUNDINGS;
use nalgebra::DMatrix;

/// A mask behind a pointer, shareable across threads.
pub type BoxedMask = Box<dyn Mask + Send + Sync>;

/// The law of the right mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RightMaskKind {
    /// Haar-distributed orthogonal (the modified TM², seed 000).
    Haar,
    /// I.i.d. U(0, 1) entries, invertible (the first method, seed 003 eq. (1)).
    UniformEntries,
}

/// Which generator turns keys into matrices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generator {
    /// Keyed ChaCha streams (production).
    ChaCha,
    /// MT19937 seeded like MATLAB's `rng(number)` from a teaching key's number, to reproduce the
    /// papers: `B` from `rng(number)`, the provider's `A₂` from `rng(its number)`, the collector's
    /// `A₁` from `rng(number + 2)` (keys 535, 536, 537 in seed 003 §3.2). Uniform entries match
    /// MATLAB exactly; Gaussian draws do not (MATLAB's `randn` is undocumented). One cohort only.
    Matlab,
}

/// Device-side differential privacy (seed 004, setting B): each answer is checked against its
/// declared range `[lo, hi]`, and `N(0, (σ·(hi − lo)/2)²)` is added before padding and masking —
/// `N(0, σ²)` on the `[−1, 1]` scale of eq. (6), expressed in the variable's own units. Because
/// the left masks keep `1ₙ` fixed, the release is then `A(X + C)` in the original units, an affine
/// post-processing of setting (B)'s `A(S + C)`, so it inherits its (ε, δ) guarantee.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceDp {
    scaler: RangeScaler,
    sigma: f64,
    epsilon: f64,
    delta: f64,
}

impl DeviceDp {
    /// DP noise of standard deviation `sigma` on the `[−1, 1]` scale, for the declared ranges,
    /// recorded with the `(epsilon, delta)` it was calibrated for.
    ///
    /// # Errors
    /// [`ProtocolError::Scaling`] for degenerate ranges, [`ProtocolError::InvalidParameter`] for a
    /// non-positive σ, ε or δ.
    pub fn new(
        ranges: &[(f64, f64)],
        sigma: f64,
        epsilon: f64,
        delta: f64,
    ) -> Result<Self, ProtocolError> {
        let scaler = RangeScaler::new(ranges)?;
        for (name, v) in [("sigma", sigma), ("epsilon", epsilon), ("delta", delta)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(ProtocolError::InvalidParameter {
                    what: format!("DP {name} must be finite and positive, got {v}"),
                });
            }
        }
        Ok(Self {
            scaler,
            sigma,
            epsilon,
            delta,
        })
    }

    /// σ on the `[−1, 1]` scale.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// ε.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// δ.
    pub fn delta(&self) -> f64 {
        self.delta
    }

    /// Standard deviation of the added noise in each variable's own units, `σ(hi − lo)/2`.
    pub fn column_sigmas(&self) -> Vec<f64> {
        self.scaler
            .ranges()
            .iter()
            .map(|r| self.sigma * r.half_width())
            .collect()
    }

    /// The scaler of the declared ranges (seed 004 eq. (6)).
    pub fn scaler(&self) -> &RangeScaler {
        &self.scaler
    }

    /// Declared ranges.
    pub fn ranges(&self) -> Vec<(f64, f64)> {
        self.scaler
            .ranges()
            .iter()
            .map(|r| (r.lo(), r.hi()))
            .collect()
    }
}

/// The public design of a survey: what every party knows.
#[derive(Clone, Debug, PartialEq)]
pub struct Tm2Design {
    answers: usize,
    scaler: Option<RangeScaler>,
    dp: Option<DeviceDp>,
    qa_constant: Option<f64>,
    noise_columns: usize,
    sigma: f64,
    kept: Vec<usize>,
    right_mask: RightMaskKind,
    generator: Generator,
}

/// The QA constant of seed 003 §3.2.
pub const DEFAULT_QA_CONSTANT: f64 = 888.0;

impl Tm2Design {
    /// The modified TM²: Haar right mask, `noise_columns` Gaussian columns of standard deviation
    /// `sigma`, QA column 888, ChaCha keys.
    ///
    /// # Errors
    /// [`ProtocolError::InvalidParameter`] for zero answers, non-finite or non-positive σ with
    /// noise columns.
    pub fn modified(
        answers: usize,
        noise_columns: usize,
        sigma: f64,
    ) -> Result<Self, ProtocolError> {
        Self {
            answers,
            scaler: None,
            dp: None,
            qa_constant: Some(DEFAULT_QA_CONSTANT),
            noise_columns,
            sigma,
            kept: Vec::new(),
            right_mask: RightMaskKind::Haar,
            generator: Generator::ChaCha,
        }
        .validated()
    }

    /// The first method of seed 003: invertible uniform-entries `B₁`, no padding, QA column 888.
    ///
    /// # Errors
    /// [`ProtocolError::InvalidParameter`] for zero answers.
    pub fn first_method(answers: usize) -> Result<Self, ProtocolError> {
        Self {
            answers,
            scaler: None,
            dp: None,
            qa_constant: Some(DEFAULT_QA_CONSTANT),
            noise_columns: 0,
            sigma: 0.0,
            kept: Vec::new(),
            right_mask: RightMaskKind::UniformEntries,
            generator: Generator::ChaCha,
        }
        .validated()
    }

    /// Replace the QA constant (`None`: no QA column).
    ///
    /// # Errors
    /// [`ProtocolError::InvalidParameter`] for a non-finite constant.
    pub fn with_qa(mut self, constant: Option<f64>) -> Result<Self, ProtocolError> {
        self.qa_constant = constant;
        self.validated()
    }

    /// Pad with `noise_columns` N(0, σ²) columns.
    ///
    /// # Errors
    /// [`ProtocolError::InvalidParameter`] for a non-finite or non-positive σ with noise columns.
    pub fn with_noise(mut self, noise_columns: usize, sigma: f64) -> Result<Self, ProtocolError> {
        self.noise_columns = noise_columns;
        self.sigma = sigma;
        self.validated()
    }

    /// Keep the answers with these 0-based indices unmasked (partial masking).
    ///
    /// # Errors
    /// [`ProtocolError::InvalidParameter`] for out-of-range or repeated indices.
    pub fn with_kept(mut self, kept: Vec<usize>) -> Result<Self, ProtocolError> {
        self.kept = kept;
        self.validated()
    }

    /// Add device-side DP noise (one declared range per answer column).
    ///
    /// # Errors
    /// [`ProtocolError::InvalidParameter`] when the number of ranges differs from the answers.
    /// DP noise is added on the `[−1, 1]` scale, so it implies range scaling by the same ranges
    /// (set here when the design has none yet).
    ///
    /// # Errors
    /// [`ProtocolError::InvalidParameter`] when the number of ranges differs from the answers or
    /// the design already scales by other ranges.
    pub fn with_dp(mut self, dp: DeviceDp) -> Result<Self, ProtocolError> {
        match &self.scaler {
            Some(scaler) if scaler != &dp.scaler => {
                return Err(ProtocolError::InvalidParameter {
                    what: "DP ranges differ from the ranges the design scales by".into(),
                });
            }
            Some(_) => {}
            None => self = self.with_scaling(dp.scaler.clone())?,
        }
        self.dp = Some(dp);
        Ok(self)
    }

    /// Scale every answer on the device by its declared range before padding (see
    /// [`unscale_unmasked`](Self::unscale_unmasked) for why the release is unchanged and why the
    /// collector gains digits).
    ///
    /// # Errors
    /// [`ProtocolError::InvalidParameter`] when the number of ranges differs from the answers.
    pub fn with_scaling(mut self, scaler: RangeScaler) -> Result<Self, ProtocolError> {
        if scaler.len() != self.answers {
            return Err(ProtocolError::InvalidParameter {
                what: format!(
                    "range scaling needs one declared range per answer: {} ranges for {} answers",
                    scaler.len(),
                    self.answers
                ),
            });
        }
        self.scaler = Some(scaler);
        Ok(self)
    }

    /// The declared ranges the devices scale by, if any.
    pub fn scaler(&self) -> Option<&RangeScaler> {
        self.scaler.as_ref()
    }

    /// The largest absolute answer as the padded record carries it: 1 when the device scales by
    /// declared ranges (every scaled answer lies in `[−1, 1]`), the declared `x_max` otherwise.
    pub fn record_answer_bound(&self, declared_x_max: f64) -> f64 {
        if self.scaler.is_some() {
            1.0
        } else {
            declared_x_max.abs()
        }
    }

    /// The unit of the QA column in the padded record: `|c|` when the record is scaled (so the
    /// column reads ±1 like the scaled answers instead of dominating the record's norm), 1
    /// otherwise.
    fn qa_unit(&self) -> f64 {
        match (self.qa_constant, &self.scaler) {
            (Some(c), Some(_)) if c != 0.0 => c.abs(),
            _ => 1.0,
        }
    }

    /// The QA entry as the padded record carries it: `c/|c|` when scaled, `c` otherwise.
    pub fn record_qa_entry(&self) -> Option<f64> {
        self.qa_constant.map(|c| c / self.qa_unit())
    }

    /// Map the `p₁` data columns the collector recovered (`A₂X̃₁`, on the device's scale) back to
    /// the answers' units, and run the QA check there; the QA column returned is then exactly the
    /// constant. `error_scale` is the largest row norm of
    /// what was unmasked (the scale of its rounding errors, on the device's scale).
    ///
    /// # Why the release is unchanged (seed 000 §2; [`crate::scaling`])
    /// The device sends `x̃ = ((x₁ − c)H⁻¹, q/|q|, x₂)` with `H = diag(h_j)` the half-widths and
    /// `c` the centres of the declared ranges. Every left mask keeps `1ₙ` fixed, so for a cohort
    /// `A(X̃₁H + 1ₙcᵀ) = (AX̃₁)H + 1ₙcᵀ`: unscaling what the collector recovers gives exactly
    /// `A·X₁`, and `XᵀX`, the means and the QA column are those of the unscaled protocol.
    ///
    /// # Why the collector gains digits
    /// Removing `B` costs about `u·‖x̃‖` per entry (`u` the unit roundoff; the bound is
    /// [`crate::protocol::accuracy`]). Unscaled, `‖x‖` follows the largest declared answer, so a
    /// column small next to it loses digits; scaled, every answer column carries the same relative
    /// error `u·‖x̃‖/1` of its own range.
    ///
    /// # Errors
    /// [`ProtocolError::Shape`] for a block not `p₁` wide; [`ProtocolError::Scaling`] for a
    /// non-finite value; [`ProtocolError::QaFailed`].
    pub fn unscale_unmasked(
        &self,
        mut leading: DMatrix<f64>,
        error_scale: f64,
    ) -> Result<(DMatrix<f64>, Option<QaReport>), ProtocolError> {
        if leading.ncols() != self.p1() {
            return Err(ProtocolError::Shape {
                what: "width of the unmasked data",
                expected: self.p1(),
                found: leading.ncols(),
            });
        }
        if let Some(scaler) = &self.scaler {
            let answers = scaler.unscale_columns(&leading.columns(0, self.answers).into_owned())?;
            leading.columns_mut(0, self.answers).copy_from(&answers);
            if let Some(j) = self.qa_column() {
                let unit = self.qa_unit();
                leading.column_mut(j).iter_mut().for_each(|v| *v *= unit);
            }
        }
        let qa = match (self.qa_constant, self.qa_column()) {
            (Some(c), Some(j)) => {
                let report =
                    check_constant(leading.column(j).iter(), c, error_scale * self.qa_unit())
                        .require_pass()?;
                // Once it passed, the QA column is exactly `c`: it carries no answer, and what it
                // held within the check's allowance is no honest party's rounding alone. A party
                // that altered one record by `δ` below the allowance (a provider adding `δ` times
                // another upload to it; a right-masking service adding `δ` to its share's QA
                // entry) would otherwise read that record back from the release: the QA column's
                // sum and its cross-products with the answers would be `c·s_j + δ·c·x_tj`
                // (issue 43, found by the adversarial review). The QA check itself is unchanged.
                leading.column_mut(j).fill(c);
                Some(report)
            }
            _ => None,
        };
        if let Some(scaler) = &self.scaler {
            // The QA column's own rounding, on the device's scale (its entry there is ±1).
            let qa_rounding = qa
                .as_ref()
                .map_or(f64::INFINITY, |r| r.max_deviation / self.qa_unit());
            self.zero_rounding_columns(&mut leading, scaler, error_scale, qa_rounding);
        }
        Ok((leading, qa))
    }

    /// Set to exact zeros every answer column the cohort answered with zeros, which the unmasking
    /// returns as rounding noise.
    ///
    /// # Why (E9)
    /// A column that is zero for every participant of a cohort (nobody smokes; a product term of
    /// it) is a constant `−c_j/h_j` on the device's scale, and `A` keeps `1ₙ`, so the collector
    /// recovers `(−c_j/h_j)·1ₙ + δ`, `δ` the unmasking's rounding, and unscaling gives `h_j·δ`
    /// plus the rounding of the unscaling itself: noise of about 10⁻¹³ where the raw data hold
    /// exact zeros. `XᵀX` and the means do not see the difference, but a least-squares fit does:
    /// the raw fit drops an all-zero column as aliased, while a column of noise, scaled to unit
    /// length by the pivoted QR, looks independent of every other and is kept, with a
    /// meaningless coefficient (`orthomask_stats::linear`). So a column whose every entry is
    /// within
    ///
    /// ```text
    /// (E9)   τ_j = ZERO_COLUMN_ROUNDINGS · (h_j·min(p·u·error_scale, δ_QA) + u·(|c_j| + h_j))
    /// ```
    ///
    /// of zero is set to zero: `p·u·error_scale` is the worst case of (E2) in
    /// [`crate::protocol::accuracy`] (`u` the unit roundoff, `error_scale` the largest row norm
    /// unmasked), in the column's units through its half-range `h_j`, and `u·(|c_j| + h_j)` the
    /// unscaling's own rounding ([`crate::tolerance::ZERO_COLUMN_ROUNDINGS`] says why 12 such
    /// bounds). `δ_QA` is the largest deviation of the cohort's own QA column on the device's
    /// scale: that column is a constant of size 1 there, as an all-zero answer column is
    /// (`|c_j/h_j| ≤ 1` since zero is in the declared range), so the two carry the same rounding,
    /// measured. It keeps the bound honest where `error_scale` is not this computation's own (the
    /// share path sums the scales the right-masking services report): a reported scale far too
    /// large cannot make a column zero that the QA column shows is not rounding.
    /// A column with any answer away from zero has, after the orthogonal `A`, an entry
    /// of at least `‖x_j‖/√n`, far above `τ_j` for any answer a survey can declare in its range;
    /// one below it carries no digit the release could keep anyway. `A₁` then keeps the zeros
    /// exact (a reflector applied to a zero vector gives zeros), so the release's column is
    /// zeros, as the raw data's.
    fn zero_rounding_columns(
        &self,
        leading: &mut DMatrix<f64>,
        scaler: &RangeScaler,
        error_scale: f64,
        qa_rounding: f64,
    ) {
        let u = f64::EPSILON / 2.0;
        let worst = (self.p() as f64 * u * error_scale.abs()).min(qa_rounding);
        for (j, range) in scaler.ranges().iter().enumerate().take(self.answers) {
            let (h, c) = (range.half_width(), (range.lo() + range.hi()) / 2.0);
            let tau = ZERO_COLUMN_ROUNDINGS * (worst * h + u * (c.abs() + h));
            let mut column = leading.column_mut(j);
            if column.iter().all(|v| v.abs() <= tau) {
                column.fill(0.0);
            }
        }
    }

    /// Device-side DP settings, if any.
    pub fn dp(&self) -> Option<&DeviceDp> {
        self.dp.as_ref()
    }

    /// Choose the law of the right mask.
    pub fn with_right_mask(mut self, kind: RightMaskKind) -> Self {
        self.right_mask = kind;
        self
    }

    /// Choose the generator.
    pub fn with_generator(mut self, generator: Generator) -> Self {
        self.generator = generator;
        self
    }

    fn validated(self) -> Result<Self, ProtocolError> {
        let invalid = |what: String| Err(ProtocolError::InvalidParameter { what });
        if self.answers == 0 {
            return invalid("a survey needs at least one answer column".into());
        }
        if let Some(c) = self.qa_constant
            && !c.is_finite()
        {
            return invalid(format!("the QA constant must be finite, got {c}"));
        }
        if self.noise_columns > 0 && !(self.sigma.is_finite() && self.sigma > 0.0) {
            return invalid(format!(
                "noise columns need a finite positive sigma, got {}",
                self.sigma
            ));
        }
        let mut seen = vec![false; self.answers];
        for &k in &self.kept {
            if k >= self.answers || seen[k] {
                return invalid(format!(
                    "kept column {k} is out of range or repeated ({} answer columns)",
                    self.answers
                ));
            }
            seen[k] = true;
        }
        if self.kept.len() == self.answers {
            return invalid("every column is kept unmasked; nothing would be protected".into());
        }
        Ok(self)
    }

    /// Answer columns per record.
    pub fn answers(&self) -> usize {
        self.answers
    }

    /// `p₁`: answers plus the QA column.
    pub fn p1(&self) -> usize {
        self.answers + usize::from(self.qa_constant.is_some())
    }

    /// `p₂`: noise columns.
    pub fn p2(&self) -> usize {
        self.noise_columns
    }

    /// `p = p₁ + p₂`: columns of the right mask.
    pub fn p(&self) -> usize {
        self.p1() + self.noise_columns
    }

    /// Noise standard deviation σ.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The QA constant, if any.
    pub fn qa_constant(&self) -> Option<f64> {
        self.qa_constant
    }

    /// Index of the QA column within `p₁` (the last data column).
    pub fn qa_column(&self) -> Option<usize> {
        self.qa_constant.map(|_| self.answers)
    }

    /// Kept (unmasked) answer columns.
    pub fn kept(&self) -> &[usize] {
        &self.kept
    }

    /// The answer columns the left masks move: only these enter condition (3.5)
    /// ([`crate::protocol::design`], "Masks that keep columns fixed").
    pub fn masked_columns(&self) -> usize {
        self.answers - self.kept.len()
    }

    /// The law of the right mask.
    pub fn right_mask_kind(&self) -> RightMaskKind {
        self.right_mask
    }

    /// The generator.
    pub fn generator(&self) -> Generator {
        self.generator
    }

    /// The padded record a device builds from its answers: `x = (answers [+ DP noise], c, x₂)`
    /// with `x₂ ~ N(0, σ²)^{p₂}` drawn from `noise` (DP noise first, then the padding).
    ///
    /// # Errors
    /// [`ProtocolError::RecordLength`] or [`ProtocolError::NonFinite`] for a malformed record;
    /// [`ProtocolError::Scaling`] for an answer outside its declared DP range.
    pub fn pad<B: BitSource + ?Sized>(
        &self,
        answers: &[f64],
        noise: &mut B,
    ) -> Result<Vec<f64>, ProtocolError> {
        if answers.len() != self.answers {
            return Err(ProtocolError::RecordLength {
                record: 0,
                expected: self.answers,
                found: answers.len(),
            });
        }
        if let Some((column, &value)) = answers.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(ProtocolError::NonFinite {
                record: 0,
                column,
                value,
            });
        }
        let mut x = Vec::with_capacity(self.p());
        match &self.scaler {
            // Range check first: the DP guarantee and the noise level assume every scaled answer
            // lies in [−1, 1].
            Some(scaler) => x.extend(scaler.scale_row(answers)?),
            None => x.extend_from_slice(answers),
        }
        if let Some(dp) = &self.dp {
            // On the [−1, 1] scale (with_dp made the design scale by the DP ranges).
            let mut noise_draws = vec![0.0; answers.len()];
            fill_standard_normal(noise, &mut noise_draws);
            for (xi, z) in x.iter_mut().zip(&noise_draws) {
                *xi += dp.sigma * z;
            }
        }
        x.extend(self.record_qa_entry());
        let start = x.len();
        x.resize(self.p(), 0.0);
        fill_standard_normal(noise, &mut x[start..]);
        for z in &mut x[start..] {
            *z *= self.sigma;
        }
        Ok(x)
    }
}

/// The MATLAB seed behind a teaching key, or an error for a real key.
fn matlab_seed(key: &Key, offset: u32, cohort: u32) -> Result<u32, ProtocolError> {
    if cohort != 0 {
        return Err(ProtocolError::InvalidParameter {
            what: "MATLAB-compatible generation reproduces the papers' single cohort; use ChaCha keys \
                   for cohorts"
                .into(),
        });
    }
    match key.origin() {
        KeyOrigin::Teaching(number) => u32::try_from(number)
            .ok()
            .and_then(|n| n.checked_add(offset))
            .ok_or(ProtocolError::InvalidParameter {
                what: format!("MATLAB seeds are 32-bit; teaching key {number} is too large"),
            }),
        _ => Err(ProtocolError::InvalidParameter {
            what: "MATLAB-compatible generation needs a numeric teaching key like 535".into(),
        }),
    }
}

/// The key a device of cohort `k` receives to build `B_k`: a subkey of the collector's key
/// ([`Key::derive`]), so the device learns `B_k` and nothing else. In MATLAB mode (teaching only)
/// it is the teaching key itself, since the papers' `B₁` is `rand` after `rng(535)`.
pub fn device_key(design: &Tm2Design, collector_key: &Key, cohort: u32) -> Key {
    match design.generator {
        Generator::ChaCha => collector_key.derive(StreamId::RightMaskKey { cohort }),
        Generator::Matlab => collector_key.clone(),
    }
}

/// The right mask `B_k` of cohort `k`, built from the device key of [`device_key`] — the same
/// function runs on the collector's server and on every participant's device.
///
/// # Errors
/// Mask construction errors (a singular uniform draw), MATLAB seeding errors.
pub fn right_mask_from_device_key(
    design: &Tm2Design,
    key: &Key,
    cohort: u32,
) -> Result<BoxedMask, ProtocolError> {
    let inner_dim = design.p() - design.kept.len();
    let stream = key.stream(StreamId::RightMask { cohort });
    let inner: BoxedMask = match (design.right_mask, design.generator) {
        (RightMaskKind::Haar, Generator::ChaCha) => {
            Box::new(HaarOrthogonal::keyed(inner_dim, stream)?)
        }
        (RightMaskKind::Haar, Generator::Matlab) => Box::new(HaarOrthogonal::from_source(
            inner_dim,
            &mut MatlabTwister::new(matlab_seed(key, 0, cohort)?),
        )?),
        (RightMaskKind::UniformEntries, Generator::ChaCha) => Box::new(
            DenseInvertible::uniform_entries(inner_dim, &mut stream.rng())?,
        ),
        (RightMaskKind::UniformEntries, Generator::Matlab) => {
            Box::new(DenseInvertible::uniform_entries(
                inner_dim,
                &mut MatlabTwister::new(matlab_seed(key, 0, cohort)?),
            )?)
        }
    };
    if design.kept.is_empty() {
        Ok(inner)
    } else {
        Ok(Box::new(KeepColumns::new(design.p(), &design.kept, inner)?))
    }
}

/// `[1ₙ, columns]`: what a left mask must keep fixed.
fn fixed_columns(block: &DMatrix<f64>, kept: &[usize]) -> DMatrix<f64> {
    let mut fixed = DMatrix::from_element(block.nrows(), 1 + kept.len(), 1.0);
    for (j, &k) in kept.iter().enumerate() {
        fixed.set_column(j + 1, &block.column(k));
    }
    fixed
}

/// A left mask keeping `fixed` fixed, from `key`'s stream `id` (or MATLAB `rng(number + offset)`).
fn build_left_mask(
    generator: Generator,
    key: &Key,
    id: StreamId,
    matlab_offset: u32,
    cohort: u32,
    fixed: &DMatrix<f64>,
) -> Result<FixedSubspaceHaar, ProtocolError> {
    Ok(match generator {
        Generator::ChaCha => FixedSubspaceHaar::keyed(fixed, key.stream(id))?,
        Generator::Matlab => FixedSubspaceHaar::from_source(
            fixed,
            &mut MatlabTwister::new(matlab_seed(key, matlab_offset, cohort)?),
        )?,
    })
}

/// A participant's device: knows the design and the right mask, and its own answers.
pub struct Participant<'a> {
    design: &'a Tm2Design,
    right_mask: &'a dyn Mask,
}

impl<'a> Participant<'a> {
    /// A device holding the survey's right mask.
    ///
    /// # Errors
    /// [`ProtocolError::Shape`] when the mask does not have `p` dimensions.
    pub fn new(design: &'a Tm2Design, right_mask: &'a dyn Mask) -> Result<Self, ProtocolError> {
        if right_mask.dim() != design.p() {
            return Err(ProtocolError::Shape {
                what: "right mask dimension",
                expected: design.p(),
                found: right_mask.dim(),
            });
        }
        Ok(Self { design, right_mask })
    }

    /// `x = (answers, c, x₂)`: the padded record (see [`Tm2Design::pad`]). It never leaves the device.
    ///
    /// # Errors
    /// As [`Tm2Design::pad`].
    pub fn pad<B: BitSource + ?Sized>(
        &self,
        answers: &[f64],
        noise: &mut B,
    ) -> Result<Vec<f64>, ProtocolError> {
        self.design.pad(answers, noise)
    }

    /// `x·B`: the only thing that leaves the device.
    ///
    /// # Errors
    /// As [`pad`](Self::pad).
    pub fn mask_record<B: BitSource + ?Sized>(
        &self,
        answers: &[f64],
        noise: &mut B,
    ) -> Result<Vec<f64>, ProtocolError> {
        let x = self.pad(answers, noise)?;
        Ok(self.right_mask.mask_row(&x)?)
    }
}

/// The masking service provider: holds the key of `A₂` and sees only masked uploads.
pub struct MaskingServiceProvider {
    key: Key,
    design: Tm2Design,
}

impl MaskingServiceProvider {
    /// A provider with its own key, serving surveys of `design`.
    pub fn new(key: Key, design: Tm2Design) -> Self {
        Self { key, design }
    }

    /// `A₂,k · (X_k B_k)` for one closed cohort. `A₂,k` keeps `1ₙ` fixed and, with partial masking,
    /// the kept columns, which reach the provider unmasked.
    ///
    /// # Errors
    /// [`ProtocolError::Shape`] for uploads of the wrong width, [`ProtocolError::NonFinite`] for
    /// NaN/∞, mask errors for an empty cohort.
    pub fn mask_cohort(
        &self,
        cohort: u32,
        uploads: &DMatrix<f64>,
    ) -> Result<DMatrix<f64>, ProtocolError> {
        if uploads.ncols() != self.design.p() {
            return Err(ProtocolError::Shape {
                what: "upload width",
                expected: self.design.p(),
                found: uploads.ncols(),
            });
        }
        require_finite(uploads)?;
        let fixed = fixed_columns(uploads, &self.design.kept);
        let a2 = build_left_mask(
            self.design.generator,
            &self.key,
            StreamId::ProviderLeftMask { cohort },
            0,
            cohort,
            &fixed,
        )?;
        let mut masked = uploads.clone();
        a2.left_apply(&mut masked)?;
        Ok(masked)
    }
}

/// One cohort after the collector removed `B_k`: `A₂,k X₁,k`.
#[derive(Clone, Debug, PartialEq)]
pub struct UnmaskedCohort {
    /// Cohort index.
    pub cohort: u32,
    /// `A₂,k X₁,k` (`n_k × p₁`).
    pub data: DMatrix<f64>,
    /// The QA check of this cohort (when the design has a QA column).
    pub qa: Option<QaReport>,
}

/// What the collector publishes.
#[derive(Clone, Debug, PartialEq)]
pub struct Release {
    /// `A₁A₂X₁` (`n × p₁`, QA column last when present).
    pub data: DMatrix<f64>,
    /// The QA checks of all cohorts.
    pub qa: Vec<QaReport>,
}

/// The data collector: holds the keys of `B` and `A₁`.
pub struct DataCollector {
    key: Key,
    design: Tm2Design,
}

impl DataCollector {
    /// A collector with its own key.
    ///
    /// # Errors
    /// [`ProtocolError::InvalidParameter`] when MATLAB generation is asked for without a
    /// teaching key.
    pub fn new(key: Key, design: Tm2Design) -> Result<Self, ProtocolError> {
        if design.generator == Generator::Matlab {
            matlab_seed(&key, 2, 0)?;
        }
        Ok(Self { key, design })
    }

    /// The public design.
    pub fn design(&self) -> &Tm2Design {
        &self.design
    }

    /// The right mask `B_k` distributed to the devices of cohort `k`.
    ///
    /// # Errors
    /// Mask construction errors (e.g. a singular uniform draw) and MATLAB seeding errors.
    pub fn right_mask(&self, cohort: u32) -> Result<BoxedMask, ProtocolError> {
        right_mask_from_device_key(&self.design, &self.device_key(cohort), cohort)
    }

    /// The key published to the devices of cohort `k` (see [`device_key`]).
    pub fn device_key(&self, cohort: u32) -> Key {
        device_key(&self.design, &self.key, cohort)
    }

    /// Remove `B_k` from `A₂,k X_k B_k`, keep the `p₁` data columns and run the QA check.
    ///
    /// # Errors
    /// [`ProtocolError::Shape`], [`ProtocolError::NonFinite`], or [`ProtocolError::QaFailed`]
    /// when the constant column does not come back as `c·1` (nothing may be released then).
    pub fn unmask_cohort(
        &self,
        cohort: u32,
        doubly_masked: &DMatrix<f64>,
    ) -> Result<UnmaskedCohort, ProtocolError> {
        let leading = self.unmask_leading(cohort, doubly_masked)?;
        self.unscale_cohort(cohort, leading, doubly_masked)
    }

    /// The first half of [`Self::unmask_cohort`]: `B_k` removed from `A₂,k X_k B_k` and the `p₁`
    /// data columns kept, on the device's scale (`n × p₁`), before any check. A caller that checks
    /// more than QA (the services' collector checks the padding's law from this and the batch)
    /// calls this, then [`Self::unscale_cohort`].
    ///
    /// # Errors
    /// [`ProtocolError::Shape`], [`ProtocolError::NonFinite`], mask errors.
    pub fn unmask_leading(
        &self,
        cohort: u32,
        doubly_masked: &DMatrix<f64>,
    ) -> Result<DMatrix<f64>, ProtocolError> {
        if doubly_masked.ncols() != self.design.p() {
            return Err(ProtocolError::Shape {
                what: "width of the provider's batch",
                expected: self.design.p(),
                found: doubly_masked.ncols(),
            });
        }
        require_finite(doubly_masked)?;
        let b = self.right_mask(cohort)?;
        Ok(b.unmask_leading(doubly_masked, self.design.p1())?)
    }

    /// The second half of [`Self::unmask_cohort`]: the `leading` columns [`Self::unmask_leading`]
    /// recovered from `doubly_masked`, in the answers' units, QA checked.
    ///
    /// # Errors
    /// As [`Tm2Design::unscale_unmasked`] ([`ProtocolError::QaFailed`] among them).
    pub fn unscale_cohort(
        &self,
        cohort: u32,
        leading: DMatrix<f64>,
        doubly_masked: &DMatrix<f64>,
    ) -> Result<UnmaskedCohort, ProtocolError> {
        let (data, qa) = self
            .design
            .unscale_unmasked(leading, max_row_norm(doubly_masked))?;
        Ok(UnmaskedCohort { cohort, data, qa })
    }

    /// Stack the cohorts and publish `A₁ · [A₂,1X₁,1; …]`, `A₁` keeping `1ₙ` and the kept columns
    /// fixed.
    ///
    /// With ChaCha keys and at least [`ORBIT_MIN_ROWS`] participants the release is drawn by
    /// [`HaarOrbit`] in `O(n p₁²)` (from the collector's `A₁` stream) instead of applying a keyed
    /// `A₁` (`n²/2` normals, `O(n² p₁)` flops). The release's law is unchanged — see the argument
    /// in [`crate::mask::HaarOrbit`] — and `XᵀX`, the column means and the kept columns are
    /// preserved exactly as before; only the realised numbers for a given key differ between the
    /// two paths. Below the threshold, and in MATLAB mode, the keyed operator is applied.
    ///
    /// # Errors
    /// [`ProtocolError::Shape`] when no cohort is given or widths differ; mask errors.
    pub fn release(&self, cohorts: &[UnmaskedCohort]) -> Result<Release, ProtocolError> {
        let p1 = self.design.p1();
        let n: usize = cohorts.iter().map(|c| c.data.nrows()).sum();
        if n == 0 {
            return Err(ProtocolError::Shape {
                what: "participants in the release",
                expected: 1,
                found: 0,
            });
        }
        let mut stacked = DMatrix::zeros(n, p1);
        let mut row = 0;
        for c in cohorts {
            if c.data.ncols() != p1 {
                return Err(ProtocolError::Shape {
                    what: "cohort width",
                    expected: p1,
                    found: c.data.ncols(),
                });
            }
            stacked.rows_mut(row, c.data.nrows()).copy_from(&c.data);
            row += c.data.nrows();
        }
        self.release_stacked(
            stacked,
            cohorts.iter().filter_map(|c| c.qa.clone()).collect(),
        )
    }

    /// [`release`](Self::release) of cohorts already stacked in order (`n × p₁`, the caller's
    /// matrix, masked in place: a survey streamed cohort by cohort keeps one `n × p₁` matrix,
    /// not its cohorts and a copy) with their QA checks.
    ///
    /// # Errors
    /// [`ProtocolError::Shape`] for no rows or another width; mask errors.
    pub fn release_stacked(
        &self,
        mut stacked: DMatrix<f64>,
        qa: Vec<QaReport>,
    ) -> Result<Release, ProtocolError> {
        let n = stacked.nrows();
        if n == 0 || stacked.ncols() != self.design.p1() {
            return Err(ProtocolError::Shape {
                what: "released cohorts (rows × p₁)",
                expected: n.max(1) * self.design.p1(),
                found: stacked.len(),
            });
        }
        let fixed = fixed_columns(&stacked, &self.design.kept);
        let data = if self.design.generator == Generator::ChaCha && n >= ORBIT_MIN_ROWS {
            HaarOrbit::new(&fixed)?.sample_owned(
                stacked,
                &mut self.key.stream(StreamId::CollectorLeftMask).rng(),
            )?
        } else {
            let a1 = build_left_mask(
                self.design.generator,
                &self.key,
                StreamId::CollectorLeftMask,
                2,
                0,
                &fixed,
            )?;
            a1.left_apply(&mut stacked)?;
            stacked
        };
        Ok(Release { data, qa })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mask::test_support::test_block;
    use crate::scaling::ScalingError;
    use crate::tolerance::{PRESERVED_STATISTICS, ROUND_TRIP, VISIBLY_MASKED};

    fn keys() -> (Key, Key) {
        (Key::teaching(535), Key::teaching(536))
    }

    fn run(design: &Tm2Design, raw: &DMatrix<f64>) -> (DMatrix<f64>, DMatrix<f64>, Release) {
        let (ck, mk) = keys();
        let collector = DataCollector::new(ck, design.clone()).unwrap();
        let provider = MaskingServiceProvider::new(mk, design.clone());
        let b = collector.right_mask(0).unwrap();
        let device = Participant::new(design, &b).unwrap();
        let mut uploads = DMatrix::zeros(raw.nrows(), design.p());
        for i in 0..raw.nrows() {
            let answers: Vec<f64> = raw.row(i).iter().copied().collect();
            let mut noise = Key::teaching(9)
                .stream(StreamId::ParticipantNoise {
                    participant: i as u64,
                })
                .rng();
            let row = device.mask_record(&answers, &mut noise).unwrap();
            uploads.row_mut(i).copy_from_slice(&row);
        }
        let doubly = provider.mask_cohort(0, &uploads).unwrap();
        let unmasked = collector.unmask_cohort(0, &doubly).unwrap();
        let release = collector.release(&[unmasked]).unwrap();
        (uploads, doubly, release)
    }

    fn with_qa(raw: &DMatrix<f64>) -> DMatrix<f64> {
        raw.clone().insert_column(raw.ncols(), DEFAULT_QA_CONSTANT)
    }

    fn assert_statistics_preserved(raw: &DMatrix<f64>, released: &DMatrix<f64>) {
        let gram = raw.tr_mul(raw);
        let rel = (released.tr_mul(released) - &gram).amax() / gram.amax();
        assert!(rel < PRESERVED_STATISTICS, "XᵀX relative error {rel}");
        let n = raw.nrows() as f64;
        let means = raw.row_sum() / n;
        let rel_means = (released.row_sum() / n - &means).amax() / means.amax().max(1.0);
        assert!(
            rel_means < PRESERVED_STATISTICS,
            "mean relative error {rel_means}"
        );
    }

    #[test]
    fn modified_protocol_preserves_statistics_and_hides_entries() {
        let raw = test_block(12, 3);
        let design = Tm2Design::modified(3, 30, 40.0).unwrap();
        let (uploads, _, release) = run(&design, &raw);
        let expected = with_qa(&raw);
        assert_statistics_preserved(&expected, &release.data);
        assert!(release.qa[0].passed());
        // No released entry of a data column equals the raw one.
        for j in 0..3 {
            for i in 0..12 {
                assert!((release.data[(i, j)] - raw[(i, j)]).abs() > VISIBLY_MASKED);
            }
        }
        // Uploads are p wide and look nothing like the answers.
        assert_eq!(uploads.ncols(), 34);
    }

    #[test]
    fn first_method_with_partial_masking_releases_kept_columns_unchanged() {
        let raw = test_block(15, 4);
        let design = Tm2Design::first_method(4)
            .unwrap()
            .with_kept(vec![1])
            .unwrap()
            .with_noise(20, 30.0)
            .unwrap();
        let (uploads, _, release) = run(&design, &raw);
        // The kept column reaches the provider and the public unchanged.
        assert!((uploads.column(1) - raw.column(1)).amax() < ROUND_TRIP * raw.amax());
        assert!((release.data.column(1) - raw.column(1)).amax() < ROUND_TRIP * raw.amax() * 15.0);
        assert!((release.data.column(0) - raw.column(0)).amax() > 0.1);
        assert_statistics_preserved(&with_qa(&raw), &release.data);
    }

    /// From `ORBIT_MIN_ROWS` participants the release is the orbit sample drawn from the
    /// collector's `A₁` stream; below, the keyed operator `A₁` applied to the stack.
    #[test]
    fn release_samples_the_orbit_above_the_threshold() {
        let design = Tm2Design::modified(2, 5, 1.0).unwrap();
        let key = Key::teaching(77);
        let collector = DataCollector::new(key.clone(), design).unwrap();
        for (n, orbit) in [(ORBIT_MIN_ROWS, true), (ORBIT_MIN_ROWS - 1, false)] {
            let data = test_block(n, 3);
            let cohorts = [UnmaskedCohort {
                cohort: 0,
                data: data.clone(),
                qa: None,
            }];
            let released = collector.release(&cohorts).unwrap().data;
            let ones = DMatrix::from_element(n, 1, 1.0);
            let stream = key.stream(StreamId::CollectorLeftMask);
            let expected = if orbit {
                HaarOrbit::new(&ones)
                    .unwrap()
                    .sample(&data, &mut stream.rng())
                    .unwrap()
            } else {
                let mut applied = data.clone();
                FixedSubspaceHaar::keyed(&ones, stream)
                    .unwrap()
                    .left_apply(&mut applied)
                    .unwrap();
                applied
            };
            assert!(
                (released - expected).amax() < ROUND_TRIP * data.amax(),
                "n = {n}"
            );
        }
    }

    #[test]
    fn tampering_fails_the_qa_check() {
        let raw = test_block(10, 2);
        let design = Tm2Design::modified(2, 25, 40.0).unwrap();
        let (ck, mk) = keys();
        let collector = DataCollector::new(ck, design.clone()).unwrap();
        let provider = MaskingServiceProvider::new(mk, design.clone());
        let b = collector.right_mask(0).unwrap();
        let device = Participant::new(&design, &b).unwrap();
        let mut uploads = DMatrix::zeros(10, design.p());
        for i in 0..10 {
            let answers: Vec<f64> = raw.row(i).iter().copied().collect();
            let row = device
                .mask_record(
                    &answers,
                    &mut Key::teaching(3).stream(StreamId::Scratch(i as u64)).rng(),
                )
                .unwrap();
            uploads.row_mut(i).copy_from_slice(&row);
        }
        let mut doubly = provider.mask_cohort(0, &uploads).unwrap();
        doubly[(4, 7)] += 1.0;
        assert!(matches!(
            collector.unmask_cohort(0, &doubly),
            Err(ProtocolError::QaFailed { .. })
        ));
    }

    /// Issue 43's adversarial review: a provider that adds `δ` times one upload to another, `δ`
    /// below the QA check's allowance, passes the check — and without the QA column set to `c`
    /// after it, the released QA sum and QA × answer cross-products would carry `δ·c·x_t`, from
    /// which anyone reads record `t`. The QA column the collector keeps is exactly `c`, so the
    /// read gives nothing.
    #[test]
    fn a_record_altered_below_the_qa_allowance_cannot_be_read_back_from_the_qa_column() {
        let raw = test_block(10, 2);
        let design = Tm2Design::modified(2, 25, 40.0).unwrap();
        let (ck, mk) = keys();
        let collector = DataCollector::new(ck, design.clone()).unwrap();
        let provider = MaskingServiceProvider::new(mk, design.clone());
        let b = collector.right_mask(0).unwrap();
        let device = Participant::new(&design, &b).unwrap();
        let mut uploads = DMatrix::zeros(10, design.p());
        for i in 0..10 {
            let answers: Vec<f64> = raw.row(i).iter().copied().collect();
            let row = device
                .mask_record(
                    &answers,
                    &mut Key::teaching(3).stream(StreamId::Scratch(i as u64)).rng(),
                )
                .unwrap();
            uploads.row_mut(i).copy_from_slice(&row);
        }
        // Record 3 += δ · record 7, as the provider can do to the masked uploads it stores.
        let delta = 1e-11;
        let seven = uploads.row(7).into_owned();
        let altered = uploads.row(3) + seven * delta;
        uploads.row_mut(3).copy_from(&altered);
        let doubly = provider.mask_cohort(0, &uploads).unwrap();
        let unmasked = collector.unmask_cohort(0, &doubly).unwrap();
        assert!(
            unmasked.qa.as_ref().unwrap().passed(),
            "below the allowance"
        );
        let qa = design.qa_column().unwrap();
        let c = DEFAULT_QA_CONSTANT;
        assert!(unmasked.data.column(qa).iter().all(|&v| v == c));
        // The attack's read: d = Σ QA − n c, and (Σ QA·x_j − c Σ x_j)/d would be record 7's
        // answers (scaled by c's own) — now d is exactly 0 and there is nothing to divide.
        let released = collector.release(&[unmasked]).unwrap().data;
        // The signal the attack reads is `δ·c` times record 7's entries; what is left must be a
        // hundredth of it at most (the release's own rounding, about 10⁻¹³ of `c·n`).
        let signal = delta * c;
        let d = released.column(qa).sum() - 10.0 * c;
        assert!(d.abs() < signal / 100.0, "the QA sum still carries δ: {d}");
        for j in 0..2 {
            let cross = released.column(qa).dot(&released.column(j)) - c * released.column(j).sum();
            assert!(
                cross.abs() < signal * raw.amax() / 100.0,
                "column {j}: the QA column still carries the altered record: {cross}"
            );
        }
    }

    #[test]
    fn malformed_records_are_refused() {
        let design = Tm2Design::modified(2, 5, 1.0).unwrap();
        let b = DataCollector::new(Key::teaching(1), design.clone())
            .unwrap()
            .right_mask(0)
            .unwrap();
        let device = Participant::new(&design, &b).unwrap();
        let mut rng = Key::teaching(2).stream(StreamId::Scratch(0)).rng();
        assert!(matches!(
            device.mask_record(&[1.0], &mut rng),
            Err(ProtocolError::RecordLength { .. })
        ));
        assert!(matches!(
            device.mask_record(&[1.0, f64::NAN], &mut rng),
            Err(ProtocolError::NonFinite { column: 1, .. })
        ));
    }

    #[test]
    fn device_dp_adds_noise_of_the_declared_scale_and_checks_ranges() {
        let dp = DeviceDp::new(&[(0.0, 10.0), (-1.0, 1.0)], 0.5, 0.1, 1e-3).unwrap();
        assert_eq!(dp.column_sigmas(), vec![2.5, 0.5]);
        let design = Tm2Design::modified(2, 8, 100.0)
            .unwrap()
            .with_dp(dp)
            .unwrap();
        let b = DataCollector::new(Key::teaching(1), design.clone())
            .unwrap()
            .right_mask(0)
            .unwrap();
        let device = Participant::new(&design, &b).unwrap();
        let mut sum = [0.0; 2];
        let mut sum_sq = [0.0; 2];
        let draws = 4000;
        for i in 0..draws {
            let x = device
                .pad(
                    &[5.0, 0.0],
                    &mut Key::teaching(2).stream(StreamId::Scratch(i)).rng(),
                )
                .unwrap();
            // The record carries the scaled answers (5 in [0, 10] and 0 in [−1, 1] both map to 0)
            // plus N(0, σ²) on that scale.
            for j in 0..2 {
                sum[j] += x[j];
                sum_sq[j] += x[j].powi(2);
            }
        }
        for (j, sd) in [0.5, 0.5].iter().enumerate() {
            let var = sum_sq[j] / draws as f64 - (sum[j] / draws as f64).powi(2);
            // The sample variance of 4000 normals is within 10% of σ² with overwhelming probability
            // (its relative standard error is √(2/4000) ≈ 2.2%).
            assert!(
                (var / (sd * sd) - 1.0).abs() < 0.1,
                "column {j}: variance {var}"
            );
        }
        let out_of_range = device.pad(
            &[11.0, 0.0],
            &mut Key::teaching(2).stream(StreamId::Scratch(0)).rng(),
        );
        assert!(matches!(
            out_of_range,
            Err(ProtocolError::Scaling(ScalingError::OutOfRange {
                column: 0,
                ..
            }))
        ));
        assert!(
            Tm2Design::modified(3, 8, 1.0)
                .unwrap()
                .with_dp(DeviceDp::new(&[(0.0, 1.0)], 1.0, 1.0, 0.1).unwrap())
                .is_err()
        );
    }

    #[test]
    fn invalid_designs_are_refused() {
        assert!(Tm2Design::modified(0, 5, 1.0).is_err());
        assert!(Tm2Design::modified(2, 5, 0.0).is_err());
        assert!(
            Tm2Design::modified(2, 5, 1.0)
                .unwrap()
                .with_kept(vec![2])
                .is_err()
        );
        assert!(
            Tm2Design::modified(2, 5, 1.0)
                .unwrap()
                .with_kept(vec![0, 1])
                .is_err()
        );
        let matlab = Tm2Design::first_method(3)
            .unwrap()
            .with_generator(Generator::Matlab);
        assert!(DataCollector::new(Key::from_entropy([7; 32]), matlab).is_err());
    }
}
