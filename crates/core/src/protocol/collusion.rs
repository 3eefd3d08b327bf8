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
//! collector    A X = Σᵢ A Xⁱ; keeps the first p₁ columns; QA; publishes A X₁
//! ```
//!
//! Unless all `K₁` right (or all `K₂` left) providers collude, nobody learns the shares' sum.
//! `A` is a product of Haar matrices keeping `1ₙ` fixed, hence again one (seed 000 Lemma 3.5),
//! and the release has the same `X₁ᵀX₁` and means as the raw data.
//!
//! # Shares
//! The paper leaves open which distribution the shares should have. Here only the answers — the
//! leading coordinates of the padded record, DP noise included — are split: shares `1 … K₁−1`
//! carry i.i.d. `N(0, τ²)` there and zeros elsewhere, and the last share is `x` minus their sum.
//! So the last share shows each answer plus Gaussian noise of standard deviation `τ√(K₁ − 1)`,
//! every other share is independent of `x`, and `τ` must be large compared with the answers.
//!
//! The QA constant and the padding `x₂` go whole into the last share: `x₂` is fresh noise that
//! says nothing about the answers, and the constant guards against tampering after unmasking,
//! which a right-masking service (it unmasks its own block) could do whatever it knew. Splitting
//! them too would buy no privacy and cost precision: the shares cancel in floating point, so the
//! release's absolute error is a few `ε_mach` times the shares' row norm. Splitting only the
//! answers makes that norm about `τ·√answers` instead of `τ√p` (20 times smaller for the services'
//! end-to-end survey: four answers, `p₂ = 446`) and the worst regression error on its release
//! six times smaller, well inside the 1e-9 the basic protocol meets
//! (`orthomask-stats/tests/share_mode_release.rs`).
//!
//! [`share_sigma`] chooses `τ = 100·(x_max + 4σ_dp)`: each share alone shows an answer (whose
//! magnitude is below `x_max + 4σ_dp` unless DP noise exceeds four standard deviations) at a
//! signal-to-noise ratio below 1/100.

/// How many times the answers' scale the shares' standard deviation is (module documentation).
pub const SHARE_SCALE: f64 = 100.0;

/// DP noise counts into the answers' scale at this many standard deviations (exceeded with
/// probability 6·10⁻⁵ per entry).
const DP_NOISE_SPAN: f64 = 4.0;

/// The shares' standard deviation `τ = SHARE_SCALE · (x_max + 4σ_dp)` for answers at most `x_max`
/// in absolute value, where `σ_dp` is the largest per-variable DP noise of `design` (0 without DP).
pub fn share_sigma(design: &Tm2Design, x_max: f64) -> f64 {
    let dp = design
        .dp()
        .map_or(0.0, |dp| dp.column_sigmas().into_iter().fold(0.0, f64::max));
    SHARE_SCALE * (x_max.abs() + DP_NOISE_SPAN * dp).max(f64::MIN_POSITIVE)
}

use super::qa::{QaReport, check_constant, max_row_norm};
use super::tm2::Tm2Design;
use super::{ProtocolError, require_finite};
use crate::key::{Key, StreamId};
use crate::mask::{FixedSubspaceHaar, HaarOrthogonal, Mask};
use crate::random::{BitSource, fill_standard_normal};
use nalgebra::DMatrix;

/// Split a padded record into `k` additive shares, hiding its first `answers` coordinates
/// (module docs: `N(0, τ²)` there and zeros elsewhere, then the remainder).
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
    if !(tau.is_finite() && tau > 0.0) {
        return Err(ProtocolError::InvalidParameter {
            what: format!("share scale must be finite and positive, got {tau}"),
        });
    }
    if answers > x.len() {
        return Err(ProtocolError::InvalidParameter {
            what: format!(
                "cannot hide {answers} answers in a record of {} coordinates",
                x.len()
            ),
        });
    }
    let mut shares = Vec::with_capacity(k);
    let mut last = x.to_vec();
    for _ in 0..k - 1 {
        let mut share = vec![0.0; x.len()];
        fill_standard_normal(randomness, &mut share[..answers]);
        for (s, l) in share[..answers].iter_mut().zip(&mut last) {
            *s *= tau;
            *l -= *s;
        }
        shares.push(share);
    }
    shares.push(last);
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
    let data = sum.columns(0, design.p1()).into_owned();
    let qa = match (design.qa_constant(), design.qa_column()) {
        (Some(c), Some(j)) => Some(check_constant(data.column(j).iter(), c, scale).require_pass()?),
        _ => None,
    };
    Ok((data, qa))
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
mod tests {
    use super::*;
    use crate::protocol::tm2::DeviceDp;
    use crate::tolerance::{PRESERVED_STATISTICS, ROUND_TRIP};

    #[test]
    fn shares_sum_to_the_record() {
        let x = [1.0, -2.0, 3.5, 0.0, 7.25];
        let shares = split_into_shares(
            &x,
            3,
            3,
            10.0,
            &mut Key::teaching(1).stream(StreamId::Scratch(0)).rng(),
        )
        .unwrap();
        assert_eq!(shares.len(), 3);
        for j in 0..x.len() {
            let sum: f64 = shares.iter().map(|s| s[j]).sum();
            assert!((sum - x[j]).abs() < ROUND_TRIP * 100.0);
        }
        let rng = || Key::teaching(1).stream(StreamId::Scratch(0)).rng();
        assert!(split_into_shares(&x, 3, 1, 1.0, &mut rng()).is_err());
        assert!(split_into_shares(&x, 3, 2, 0.0, &mut rng()).is_err());
        assert!(split_into_shares(&x, 3, 2, f64::NAN, &mut rng()).is_err());
        assert!(split_into_shares(&x, 6, 2, 1.0, &mut rng()).is_err());
    }

    #[test]
    fn only_the_answers_are_split() {
        // Answers 0..2 get noise; the QA constant and padding (2..5) go whole into the last share.
        let x = [1.0, -2.0, 888.0, 0.5, -0.25];
        let shares = split_into_shares(
            &x,
            2,
            3,
            50.0,
            &mut Key::teaching(2).stream(StreamId::Scratch(0)).rng(),
        )
        .unwrap();
        for share in &shares[..2] {
            assert!(share[..2].iter().all(|v| v.abs() > 0.0));
            assert_eq!(&share[2..], &[0.0; 3]);
        }
        assert_eq!(&shares[2][2..], &x[2..]);
    }

    #[test]
    fn noise_shares_have_the_declared_scale() {
        // 2000 draws of N(0, τ²): the sample standard deviation is within 5% of τ (its relative
        // standard error is 1/√(2·2000) ≈ 1.6%, so 5% is a three-sigma band).
        let tau = 250.0;
        let x = vec![1.0; 2000];
        let shares = split_into_shares(
            &x,
            2000,
            2,
            tau,
            &mut Key::teaching(3).stream(StreamId::Scratch(0)).rng(),
        )
        .unwrap();
        let sd = (shares[0].iter().map(|v| v * v).sum::<f64>() / 2000.0).sqrt();
        assert!(
            (sd / tau - 1.0).abs() < 0.05,
            "sample sd {sd} for τ = {tau}"
        );
    }

    #[test]
    fn share_scale_covers_answers_and_dp_noise() {
        let plain = Tm2Design::modified(2, 12, 30.0).unwrap();
        assert_eq!(share_sigma(&plain, 250.0), 25_000.0);
        assert_eq!(share_sigma(&plain, -3.0), 300.0);
        let ranges = [(0.0, 10.0), (0.0, 100.0)];
        // σ = 0.5 on the [−1, 1] scale is 0.5·(100 − 0)/2 = 25 in the second variable's units.
        let dp = DeviceDp::new(&ranges, 0.5, 1.0, 1e-5).unwrap();
        let with_dp = plain.with_dp(dp).unwrap();
        assert_eq!(share_sigma(&with_dp, 100.0), 100.0 * (100.0 + 4.0 * 25.0));
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
        let mut share_blocks = vec![DMatrix::zeros(n, design.p()); 2];
        for i in 0..n {
            let answers: Vec<f64> = raw.row(i).iter().copied().collect();
            let mut noise = Key::teaching(5)
                .stream(StreamId::ParticipantNoise {
                    participant: i as u64,
                })
                .rng();
            let x = design.pad(&answers, &mut noise).unwrap();
            let shares = split_into_shares(
                &x,
                design.answers(),
                2,
                share_sigma(&design, raw.amax()),
                &mut Key::teaching(6)
                    .stream(StreamId::Shares {
                        participant: i as u64,
                    })
                    .rng(),
            )
            .unwrap();
            for (block, share) in share_blocks.iter_mut().zip(&shares) {
                block.row_mut(i).copy_from_slice(share);
            }
        }
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
