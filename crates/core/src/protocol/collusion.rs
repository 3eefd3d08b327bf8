//! The collusion-resistant extension of Ding, Miao & Wu (2020) (seed 000 §3.5), after Wu et al.
//! (2017a).
//!
//! In the basic protocol every device holds `B`, so one participant (or the collector) sharing it
//! with the provider breaks the masking. Here no device holds a right mask:
//!
//! ```text
//! participant  x = (x₁, c, x₂) = x¹ + … + x^{K₁}         share i → right provider i
//! right i      Xⁱ Bᵢ                                       → left providers
//! left chain   A_{K₂} ⋯ A₁ Xⁱ Bᵢ = A Xⁱ Bᵢ                 → back to right provider i
//! right i      A Xⁱ = (A Xⁱ Bᵢ) Bᵢᵀ                         → collector
//! collector    A X = Σᵢ A Xⁱ; keeps the first p₁ columns; QA; publishes A_c A X₁
//! ```
//!
//! Unless all `K₁` right (or all `K₂` left) providers collude, nobody learns the shares' sum.
//! `A` is a product of Haar matrices keeping `1ₙ` fixed, hence again one (seed 000 Lemma 3.5),
//! and the release has the same `X₁ᵀX₁` and means as the raw data.
//!
//! The collector's own left mask `A_c` (its `A₁` of the basic protocol, keeping `1ₙ` fixed,
//! applied by [`DataCollector::release`]) comes last, exactly as in the basic protocol and in the
//! services; `A_c A` is again Haar on the stabiliser of `1ₙ`. Without it the release would
//! be `A X₁` with `A` known to the left providers: with a single left provider (the default) that
//! provider would read every record off the release as `X₁ = Aᵀ·release`.
//!
//! [`DataCollector::release`]: super::tm2::DataCollector::release
//!
//! # Shares: symmetric and zero-sum
//! The paper leaves open which distribution the shares should have. A device splits its padded
//! record `x = (a, c, x₂)` (answers `a` — DP noise included —, the QA constant `c`, the padding
//! `x₂`) into `K₁` shares
//!
//! `xⁱ = x/K₁ + (Gᵢ − Ḡ, 0, 0)`,  `Gᵢ ~ N(0, τ² I)` i.i.d. on the answer coordinates,
//! `Ḡ = (1/K₁) Σᵢ Gᵢ`,
//!
//! so `Σᵢ xⁱ = x` exactly in real arithmetic, and the shares are exchangeable: permuting the
//! `Gᵢ` permutes the shares, so every right-masking service holds a share with the same law and
//! none is worse off than another.
//!
//! ## What one service sees ([`ShareView`])
//! Per answer coordinate, service `i` sees `a/K₁ + (Gᵢ − Ḡ)` with
//! `Var(Gᵢ − Ḡ) = τ²(1 − 2/K₁ + 1/K₁) = τ²(1 − 1/K₁)`, independent across coordinates: a Gaussian
//! view of the answers with signal `1/K₁` and noise standard deviation `τ√(1 − 1/K₁)`, i.e.
//! (multiplying by `K₁`) the answers plus `N(0, τ²K₁(K₁ − 1))`. A coalition of `m < K₁` services
//! sums its shares and sees `(m/K₁)·a` plus noise of variance `τ² m(K₁ − m)/K₁` (the sum of `m`
//! centred draws), which is the same view as the other `K₁ − m` services' together; all `K₁`
//! together see `a`. The right-masking services hold their own `Bᵢ`, so this is exactly what each
//! of them learns about the answers; the (ε, δ) figure of this Gaussian view is the dp crate's
//! Gaussian mechanism applied to [`ShareView::equivalent_noise_sd`].
//!
//! ## The QA constant and the padding: split evenly, without noise
//! `c` and `x₂` go to every share as `c/K₁` and `x₂/K₁`. Neither is a secret of the participant:
//! `c` is public and `x₂` is fresh noise the collector discards. Splitting them evenly (rather than
//! putting them whole into one share, as before) is what keeps the shares exchangeable as whole
//! vectors. Noising them would buy no privacy and cost precision, because the shares cancel in
//! floating point: a service's unmasking error is a few `ε_mach` times its shares' row norm, so
//! the release's absolute error is about `ε_mach · Σᵢ ‖xⁱ‖`. With the answers alone carrying the
//! share noise, `Σᵢ ‖xⁱ‖ ≈ K₁·√(τ²(1 − 1/K₁)·answers + ‖(c, x₂)‖²/K₁²)`, which for `K₁ = 2` is
//! `√2·τ√answers` plus a term no larger than `‖(c, x₂)‖`; the old asymmetric split had
//! `(K₁ − 1)τ√answers + √((K₁ − 1)τ²·answers + ‖(c, x₂)‖²)`, i.e. `2τ√answers` for `K₁ = 2`.
//! The regression target of 1e-9 relative on a share-mode release is checked in
//! `orthomask-stats/tests/share_mode_release.rs`. The QA check still works: the collector's
//! `Σᵢ (A Xⁱ)[:, c]` is `A(c·1ₙ) = c·1ₙ`, and `K₁` copies of `c/K₁` sum to `c` within
//! `K₁·ε_mach·|c|`, far inside [`QA_RELATIVE`](crate::tolerance::QA_RELATIVE).
//!
//! [`share_sigma`] chooses `τ = 100·(x_max + 4σ_dp)`: one service alone sees an answer (whose
//! magnitude is below `x_max + 4σ_dp` unless DP noise exceeds four standard deviations) at a
//! signal-to-noise ratio below `1/(100·√(K₁(K₁ − 1)))` ([`ShareView::signal_to_noise`]).

use super::qa::{QaReport, max_row_norm};
use super::tm2::{DeviceDp, Tm2Design};
use super::{ProtocolError, require_finite};
use crate::key::{Key, StreamId};
use crate::mask::{FixedSubspaceHaar, HaarOrthogonal, Mask};
use crate::random::{BitSource, fill_standard_normal};
use nalgebra::DMatrix;

/// How many times the answers' scale the shares' standard deviation is (module documentation).
pub const SHARE_SCALE: f64 = 100.0;

/// DP noise counts into the answers' scale at this many standard deviations (exceeded with
/// probability 6·10⁻⁵ per entry).
const DP_NOISE_SPAN: f64 = 4.0;

/// The shares' standard deviation `τ = SHARE_SCALE · (x_max + 4σ_dp)` on the padded record's
/// scale: `x_max` is the largest absolute answer as the record carries it
/// ([`Tm2Design::record_answer_bound`]: 1 when the device scales by declared ranges) and `σ_dp`
/// the device-side DP noise on that scale (0 without DP).
pub fn share_sigma(design: &Tm2Design, declared_x_max: f64) -> f64 {
    let dp = design.dp().map_or(0.0, DeviceDp::sigma);
    SHARE_SCALE
        * (design.record_answer_bound(declared_x_max) + DP_NOISE_SPAN * dp).max(f64::MIN_POSITIVE)
}

/// What a coalition of right-masking services learns about one answer from its shares (module
/// documentation, "What one service sees"): `signal_scale · a + N(0, noise_sd²)`, independently
/// for every answer coordinate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShareView {
    /// The factor on the answer: `m/K₁` for a coalition of `m` of `K₁` services.
    pub signal_scale: f64,
    /// Standard deviation of the share noise in the view: `τ·√(m(K₁ − m)/K₁)`.
    pub noise_sd: f64,
}

impl ShareView {
    /// The view of one of `k` services with share noise `τ`: `signal_scale = 1/k`,
    /// `noise_sd = τ√(1 − 1/k)`.
    ///
    /// # Errors
    /// As [`coalition`](Self::coalition).
    pub fn one_service(k: usize, tau: f64) -> Result<Self, ProtocolError> {
        Self::coalition(k, 1, tau)
    }

    /// The view of `m` of `k` services pooling their shares: `signal_scale = m/k`,
    /// `noise_sd = τ√(m(k − m)/k)`.
    ///
    /// # Errors
    /// [`ProtocolError::InvalidParameter`] unless `k ≥ 2`, `1 ≤ m < k` (all `k` together see the
    /// answers) and `τ` is finite and positive.
    pub fn coalition(k: usize, m: usize, tau: f64) -> Result<Self, ProtocolError> {
        if k < 2 || m == 0 || m >= k {
            return Err(ProtocolError::InvalidParameter {
                what: format!(
                    "a share view needs 1 <= m < k services with k >= 2; got m = {m}, k = {k}"
                ),
            });
        }
        check_tau(tau)?;
        let (k, m) = (k as f64, m as f64);
        Ok(Self {
            signal_scale: m / k,
            noise_sd: tau * (m * (k - m) / k).sqrt(),
        })
    }

    /// Standard deviation of Gaussian noise on the answer itself that gives the same view:
    /// `noise_sd / signal_scale` (the view divided by `signal_scale` is `a + N(0, that²)`). For
    /// one of `k` services it is `τ√(k(k − 1))`. This is what a Gaussian-mechanism privacy figure
    /// takes, with the answer's sensitivity in the answer's units.
    pub fn equivalent_noise_sd(&self) -> f64 {
        self.noise_sd / self.signal_scale
    }

    /// Signal-to-noise ratio for answers at most `answer_bound` in absolute value:
    /// `signal_scale · answer_bound / noise_sd`.
    pub fn signal_to_noise(&self, answer_bound: f64) -> f64 {
        self.signal_scale * answer_bound.abs() / self.noise_sd
    }
}

fn check_tau(tau: f64) -> Result<(), ProtocolError> {
    if tau.is_finite() && tau > 0.0 {
        Ok(())
    } else {
        Err(ProtocolError::InvalidParameter {
            what: format!("share scale must be finite and positive, got {tau}"),
        })
    }
}

/// Split a padded record into `k` symmetric zero-sum shares, hiding its first `answers`
/// coordinates (module documentation): `xⁱ = x/k + (Gᵢ − Ḡ)` there with `Gᵢ ~ N(0, τ²)`, and
/// `x/k` on the other coordinates. Share `i` reads its draws `Gᵢ` as the `i`-th run of `answers`
/// normals from `randomness`.
///
/// # Errors
/// [`ProtocolError::InvalidParameter`] for `k < 2`, a non-positive τ, or more answers than
/// coordinates.
pub fn split_into_shares<B: BitSource + ?Sized>(
    x: &[f64],
    answers: usize,
    k: usize,
    tau: f64,
    randomness: &mut B,
) -> Result<Vec<Vec<f64>>, ProtocolError> {
    if k < 2 {
        return Err(ProtocolError::InvalidParameter {
            what: format!("need at least 2 shares, got {k}"),
        });
    }
    check_tau(tau)?;
    if answers > x.len() {
        return Err(ProtocolError::InvalidParameter {
            what: format!(
                "cannot hide {answers} answers in a record of {} coordinates",
                x.len()
            ),
        });
    }
    let kf = k as f64;
    let mut draws = vec![0.0; k * answers];
    fill_standard_normal(randomness, &mut draws);
    let mut shares: Vec<Vec<f64>> = vec![x.iter().map(|v| v / kf).collect(); k];
    for j in 0..answers {
        let mean = (0..k).map(|i| draws[i * answers + j]).sum::<f64>() / kf;
        for (i, share) in shares.iter_mut().enumerate() {
            share[j] += tau * (draws[i * answers + j] - mean);
        }
    }
    Ok(shares)
}

/// A right-masking provider: holds its own `Bᵢ` and sees one share per participant.
pub struct RightProvider {
    mask: HaarOrthogonal,
}

impl RightProvider {
    /// Provider `index` with its own key; `p` is the padded record length.
    ///
    /// # Errors
    /// Mask errors for `p = 0`.
    pub fn new(key: &Key, index: u32, p: usize) -> Result<Self, ProtocolError> {
        Ok(Self {
            mask: HaarOrthogonal::keyed(p, key.stream(StreamId::AttributeMask { party: index }))?,
        })
    }

    /// `Xⁱ Bᵢ` for the stacked shares it received.
    ///
    /// # Errors
    /// Shape errors and non-finite values.
    pub fn mask_shares(&self, shares: &DMatrix<f64>) -> Result<DMatrix<f64>, ProtocolError> {
        require_finite(shares)?;
        let mut out = shares.clone();
        self.mask.right_apply(&mut out)?;
        Ok(out)
    }

    /// The partial key `Wᵢ = Bᵢᵀ[:, :q]` that removes `Bᵢ` from the leading `q` columns only
    /// (`super::share_handover`: what the services hand the service that unmasks this share).
    ///
    /// # Errors
    /// Mask errors for `q` above `p`.
    pub fn unmasking_key(
        &self,
        q: usize,
    ) -> Result<super::share_handover::UnmaskingKey, ProtocolError> {
        super::share_handover::UnmaskingKey::of(&self.mask, q)
    }

    /// `A Xⁱ` from `A Xⁱ Bᵢ`.
    ///
    /// # Errors
    /// Shape errors and non-finite values.
    pub fn unmask(&self, left_masked: &DMatrix<f64>) -> Result<DMatrix<f64>, ProtocolError> {
        require_finite(left_masked)?;
        let mut out = left_masked.clone();
        self.mask.right_apply_inverse(&mut out)?;
        Ok(out)
    }
}

/// A left-masking provider: applies its own `A_j` (keeps `1ₙ` fixed) to every share block.
pub struct LeftProvider {
    key: Key,
    index: u32,
}

impl LeftProvider {
    /// Provider `index` with its own key.
    pub fn new(key: Key, index: u32) -> Self {
        Self { key, index }
    }

    /// `A_j · M`. The same `A_j` is applied to every share block, which is what makes the sum work.
    ///
    /// # Errors
    /// Shape errors and non-finite values.
    pub fn mask(&self, block: &DMatrix<f64>) -> Result<DMatrix<f64>, ProtocolError> {
        require_finite(block)?;
        let a = FixedSubspaceHaar::ones_fixed(
            block.nrows(),
            self.key
                .stream(StreamId::ExtraLeftMask { party: self.index }),
        )?;
        let mut out = block.clone();
        a.left_apply(&mut out)?;
        Ok(out)
    }
}

/// The collector of the extension: sums the providers' `A Xⁱ`, keeps `X₁`'s columns, checks QA.
///
/// # Errors
/// [`ProtocolError::Shape`] when blocks differ in shape or none is given; [`ProtocolError::QaFailed`].
pub fn combine_shares(
    design: &Tm2Design,
    blocks: &[DMatrix<f64>],
) -> Result<(DMatrix<f64>, Option<QaReport>), ProtocolError> {
    let first = blocks.first().ok_or(ProtocolError::Shape {
        what: "share blocks",
        expected: 2,
        found: 0,
    })?;
    let mut sum = DMatrix::zeros(first.nrows(), first.ncols());
    let mut scale: f64 = 0.0;
    for b in blocks {
        if b.shape() != first.shape() {
            return Err(ProtocolError::Shape {
                what: "share block rows",
                expected: first.nrows(),
                found: b.nrows(),
            });
        }
        require_finite(b)?;
        scale = scale.max(max_row_norm(b));
        sum += b;
    }
    if sum.ncols() != design.p() {
        return Err(ProtocolError::Shape {
            what: "share block width",
            expected: design.p(),
            found: sum.ncols(),
        });
    }
    design.unscale_unmasked(sum.columns(0, design.p1()).into_owned(), scale)
}

/// Check that a design and provider counts suit the extension.
///
/// # Errors
/// [`ProtocolError::InvalidParameter`] for fewer than two right or one left provider, or partial
/// masking (kept columns are not defined for shares).
pub fn check_extension(design: &Tm2Design, right: usize, left: usize) -> Result<(), ProtocolError> {
    if right < 2 || left < 1 {
        return Err(ProtocolError::InvalidParameter {
            what: format!(
                "the extension needs K1 >= 2 right and K2 >= 1 left providers (got {right}, {left})"
            ),
        });
    }
    if !design.kept().is_empty() {
        return Err(ProtocolError::InvalidParameter {
            what: "partial masking is not defined for additive shares".into(),
        });
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod test_support {
    //! The devices' side of share mode for tests: every record of `raw` padded and split.
    use super::*;
    use crate::protocol::tm2::Tm2Design;
    use nalgebra::DMatrix;

    /// Pad each row of `raw` (device noise from teaching key 5) and split it into `k` shares of
    /// noise τ (teaching key 6): one `n × p` block of shares per service.
    pub(crate) fn padded_share_blocks(
        design: &Tm2Design,
        raw: &DMatrix<f64>,
        k: usize,
        tau: f64,
    ) -> Vec<DMatrix<f64>> {
        let mut blocks = vec![DMatrix::zeros(raw.nrows(), design.p()); k];
        for i in 0..raw.nrows() {
            let answers: Vec<f64> = raw.row(i).iter().copied().collect();
            let participant = i as u64;
            let mut noise = Key::teaching(5)
                .stream(StreamId::ParticipantNoise { participant })
                .rng();
            let x = design.pad(&answers, &mut noise).unwrap();
            let mut rng = Key::teaching(6)
                .stream(StreamId::Shares { participant })
                .rng();
            let shares = split_into_shares(&x, design.answers(), k, tau, &mut rng).unwrap();
            for (block, share) in blocks.iter_mut().zip(&shares) {
                block.row_mut(i).copy_from_slice(share);
            }
        }
        blocks
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tm2::DeviceDp;
    use crate::tolerance::{PRESERVED_STATISTICS, ROUND_TRIP, SHARE_NOISED, SHARES_SUM};

    #[test]
    fn shares_sum_to_the_record() {
        let x = [1.0, -2.0, 3.5, 0.0, 7.25];
        let tau = 10.0;
        let shares = split_into_shares(
            &x,
            3,
            3,
            tau,
            &mut Key::teaching(1).stream(StreamId::Scratch(0)).rng(),
        )
        .unwrap();
        assert_eq!(shares.len(), 3);
        for (j, xj) in x.iter().enumerate() {
            let sum: f64 = shares.iter().map(|s| s[j]).sum();
            assert!((sum - xj).abs() < SHARES_SUM * (xj.abs() + tau));
        }
        let rng = || Key::teaching(1).stream(StreamId::Scratch(0)).rng();
        assert!(split_into_shares(&x, 3, 1, 1.0, &mut rng()).is_err());
        assert!(split_into_shares(&x, 3, 2, 0.0, &mut rng()).is_err());
        assert!(split_into_shares(&x, 3, 2, f64::NAN, &mut rng()).is_err());
        assert!(split_into_shares(&x, 6, 2, 1.0, &mut rng()).is_err());
    }

    /// Answers 0..2 get share noise; the QA constant and the padding (2..5) are split evenly,
    /// `x/K₁` in every share, without noise.
    #[test]
    fn only_the_answers_carry_share_noise() {
        let x = [1.0, -2.0, 888.0, 0.5, -0.25];
        let shares = split_into_shares(
            &x,
            2,
            3,
            50.0,
            &mut Key::teaching(2).stream(StreamId::Scratch(0)).rng(),
        )
        .unwrap();
        for share in &shares {
            for j in 0..2 {
                assert!(
                    (share[j] - x[j] / 3.0).abs() > SHARE_NOISED,
                    "answer {j} not noised"
                );
            }
            for j in 2..5 {
                assert!((share[j] - x[j] / 3.0).abs() <= ROUND_TRIP * x[j].abs());
            }
        }
    }

    /// By hand: one of `K₁ = 2` services with τ = 10 sees `a/2 + N(0, 50)`: noise sd `√50`,
    /// equivalent to `a + N(0, 200)`; two of four see `a/2` with variance `100·2·2/4 = 100`.
    /// The services' design (τ = 25 000 for answers up to 250, `K₁ = 2`) gives one service a
    /// signal-to-noise ratio of `0.5·250/(25 000·√0.5) = 1/(100√2)`.
    #[test]
    fn share_view_by_hand() {
        let one = ShareView::one_service(2, 10.0).unwrap();
        assert!((one.signal_scale - 0.5).abs() < ROUND_TRIP);
        assert!((one.noise_sd - 50f64.sqrt()).abs() < ROUND_TRIP * 10.0);
        assert!((one.equivalent_noise_sd() - 200f64.sqrt()).abs() < ROUND_TRIP * 10.0);
        let pair = ShareView::coalition(4, 2, 10.0).unwrap();
        assert!((pair.signal_scale - 0.5).abs() < ROUND_TRIP);
        assert!((pair.noise_sd - 10.0).abs() < ROUND_TRIP * 10.0);
        let services = ShareView::one_service(2, 25_000.0).unwrap();
        let expected = 1.0 / (100.0 * 2f64.sqrt());
        assert!((services.signal_to_noise(250.0) - expected).abs() < ROUND_TRIP * expected);
        assert!(ShareView::coalition(3, 3, 1.0).is_err());
        assert!(ShareView::coalition(3, 0, 1.0).is_err());
        assert!(ShareView::one_service(1, 1.0).is_err());
        assert!(ShareView::one_service(2, -1.0).is_err());
    }

    #[test]
    fn share_scale_covers_answers_and_dp_noise() {
        let plain = Tm2Design::modified(2, 12, 30.0).unwrap();
        assert_eq!(share_sigma(&plain, 250.0), 25_000.0);
        assert_eq!(share_sigma(&plain, -3.0), 300.0);
        let ranges = [(0.0, 10.0), (0.0, 100.0)];
        // DP scales the record to [−1, 1], where the DP noise is σ = 0.5: τ = 100·(1 + 4·0.5),
        // whatever the declared x_max in the answers' units.
        let dp = DeviceDp::new(&ranges, 0.5, 1.0, 1e-5).unwrap();
        let with_dp = plain.with_dp(dp).unwrap();
        assert_eq!(share_sigma(&with_dp, 100.0), 100.0 * (1.0 + 4.0 * 0.5));
    }

    #[test]
    fn extension_preserves_statistics_with_two_by_two_providers() {
        let n = 10;
        let design = Tm2Design::modified(2, 12, 30.0).unwrap();
        check_extension(&design, 2, 2).unwrap();
        let raw = crate::mask::test_support::test_block(n, 2);
        let rights: Vec<RightProvider> = (0..2)
            .map(|i| RightProvider::new(&Key::teaching(100 + i), i as u32, design.p()).unwrap())
            .collect();
        let lefts: Vec<LeftProvider> = (0..2)
            .map(|j| LeftProvider::new(Key::teaching(200 + j), j as u32))
            .collect();
        // Devices pad and split.
        let share_blocks =
            test_support::padded_share_blocks(&design, &raw, 2, share_sigma(&design, raw.amax()));
        let mut back = Vec::new();
        for (right, shares) in rights.iter().zip(&share_blocks) {
            let mut m = right.mask_shares(shares).unwrap();
            for left in &lefts {
                m = left.mask(&m).unwrap();
            }
            back.push(right.unmask(&m).unwrap());
        }
        let (released, qa) = combine_shares(&design, &back).unwrap();
        assert!(qa.unwrap().passed());
        let expected = raw.clone().insert_column(2, design.qa_constant().unwrap());
        let gram = expected.tr_mul(&expected);
        assert!((released.tr_mul(&released) - &gram).amax() / gram.amax() < PRESERVED_STATISTICS);
        assert!((released.column(0) - raw.column(0)).amax() > 0.1);
    }

    #[test]
    fn extension_needs_enough_providers() {
        let design = Tm2Design::modified(2, 12, 30.0).unwrap();
        assert!(check_extension(&design, 1, 2).is_err());
        assert!(check_extension(&design, 2, 0).is_err());
    }
}
