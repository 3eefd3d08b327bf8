//! The law of the symmetric zero-sum shares of the collusion-resistant extension (issue 11.4).
//!
//! `split_into_shares` gives share `i` of a record `x` as `x/K₁ + (Gᵢ − Ḡ)` on the answers,
//! `Gᵢ ~ N(0, τ²)` i.i.d. (`protocol/collusion.rs`). Shown here:
//! * the shares sum to the record within [`SHARES_SUM`]`·(|x| + τ)`;
//! * what one service sees has the law `ShareView::one_service` states: its share minus `x/K₁`
//!   is `N(0, τ²(1 − 1/K₁))` per coordinate (KS against the normal CDF, α = 0.001), and a
//!   coalition of `m` sees `N(0, τ² m(K₁ − m)/K₁)` on `(m/K₁)·x` (`ShareView::coalition`);
//! * the shares are exchangeable: every share's noise has the same law (two-sample KS) and every
//!   pair has the correlation `−1/(K₁ − 1)` of centred i.i.d. draws.
//!
//! The tests can fail: the asymmetric split the extension used before — `K₁ − 1` pure-noise
//! shares and a last share carrying `x` plus `N(0, (K₁ − 1)τ²)` — is rejected by the law test
//! (its last share's noise is too wide for the stated view) and by the exchangeability test.

mod common;

use common::Z_TWO_SIDED_0_001;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::protocol::collusion::{ShareView, split_into_shares};
use orthomask_core::random::{BitSource, fill_standard_normal};
use orthomask_core::tolerance::{
    SHARES_SUM, ULPS_BELOW_ONE, ks_critical_value, ks_one_sample,
    ks_one_sample_critical_value as ks_one_sample_critical, ks_two_sample,
};
use statrs::distribution::{ContinuousCDF, Normal};

/// Answer coordinates per record (each an independent draw of the share noise).
const ANSWERS: usize = 3000;

const TAU: f64 = 40.0;

/// A padded record: `ANSWERS` answers of varied size, then a QA constant and two padding values.
fn record() -> Vec<f64> {
    let mut x: Vec<f64> = (0..ANSWERS)
        .map(|j| ((j * 37) % 101) as f64 - 50.0)
        .collect();
    x.extend([888.0, 1234.5, -987.25]);
    x
}

fn rng(seed: u64) -> impl BitSource {
    Key::teaching(seed)
        .stream(StreamId::Shares { participant: seed })
        .rng()
}

/// The share noise `shareᵢ − x/K₁` on the answers, one vector per share.
fn noise(shares: &[Vec<f64>], x: &[f64]) -> Vec<Vec<f64>> {
    let k = shares.len() as f64;
    shares
        .iter()
        .map(|s| (0..ANSWERS).map(|j| s[j] - x[j] / k).collect())
        .collect()
}

/// The split the extension used before, with its signal spread as `x/K₁` over every share so
/// that only its noise law differs (a deliberately wrong law for these tests): shares
/// `1 … K₁ − 1` carry `N(0, τ²)` on the answers, the last one minus their sum,
/// `N(0, (K₁ − 1)τ²)`. The shares still sum to `x`.
fn asymmetric_split(x: &[f64], k: usize, tau: f64, bits: &mut impl BitSource) -> Vec<Vec<f64>> {
    let kf = k as f64;
    let mut shares: Vec<Vec<f64>> = vec![x.iter().map(|v| v / kf).collect(); k];
    for i in 0..k - 1 {
        let mut draws = vec![0.0; ANSWERS];
        fill_standard_normal(bits, &mut draws);
        for (j, g) in draws.iter().enumerate() {
            shares[i][j] += tau * g;
            shares[k - 1][j] -= tau * g;
        }
    }
    shares
}

fn ks_normal(values: &[f64], sd: f64) -> f64 {
    let normal = Normal::new(0.0, sd).unwrap();
    ks_one_sample(values, |v| normal.cdf(v))
}

#[test]
fn shares_sum_to_the_record() {
    let x = record();
    for k in [2, 3, 5] {
        let shares = split_into_shares(&x, ANSWERS, k, TAU, &mut rng(k as u64)).unwrap();
        assert_eq!(shares.len(), k);
        for (j, xj) in x.iter().enumerate() {
            let sum: f64 = shares.iter().map(|s| s[j]).sum();
            assert!(
                (sum - xj).abs() <= SHARES_SUM * (xj.abs() + TAU),
                "K₁ = {k}, coordinate {j}: {sum} vs {xj}"
            );
        }
    }
}

#[test]
fn what_one_service_sees_has_the_stated_law() {
    let x = record();
    let critical = ks_one_sample_critical(ANSWERS);
    for k in [2, 3, 4] {
        let view = ShareView::one_service(k, TAU).unwrap();
        assert!((view.signal_scale - 1.0 / k as f64).abs() < ULPS_BELOW_ONE);
        let shares = split_into_shares(&x, ANSWERS, k, TAU, &mut rng(10 + k as u64)).unwrap();
        for (i, share_noise) in noise(&shares, &x).iter().enumerate() {
            let d = ks_normal(share_noise, view.noise_sd);
            assert!(d < critical, "K₁ = {k}, share {i}: KS {d} ≥ {critical}");
        }
        // A coalition of the first m services sees (m/K₁)x plus N(0, τ² m(K₁ − m)/K₁).
        for m in 1..k {
            let coalition = ShareView::coalition(k, m, TAU).unwrap();
            let pooled: Vec<f64> = (0..ANSWERS)
                .map(|j| {
                    let sum: f64 = shares[..m].iter().map(|s| s[j]).sum();
                    sum - coalition.signal_scale * x[j]
                })
                .collect();
            let d = ks_normal(&pooled, coalition.noise_sd);
            assert!(d < critical, "K₁ = {k}, coalition of {m}: KS {d}");
        }
    }
    // Power: the asymmetric split's last share has noise sd τ√(K₁ − 1).
    let k = 3;
    let wrong = asymmetric_split(&x, k, TAU, &mut rng(99));
    let view = ShareView::one_service(k, TAU).unwrap();
    let d = ks_normal(&noise(&wrong, &x)[k - 1], view.noise_sd);
    assert!(
        d > critical,
        "the asymmetric split passed as the stated view: KS {d}"
    );
}

/// Exchangeability: the first and last shares' noises have the same law, and every pair of
/// shares is correlated `−1/(K₁ − 1)` (the sample correlation of `n` pairs has standard error
/// about `(1 − ρ²)/√n`).
#[test]
fn shares_are_exchangeable() {
    let x = record();
    let k = 4;
    let expected = -1.0 / (k as f64 - 1.0);
    let standard_error = (1.0 - expected * expected) / (ANSWERS as f64).sqrt();
    let critical = ks_critical_value(ANSWERS, ANSWERS);
    let check = |shares: &[Vec<f64>]| -> Result<(), String> {
        let noises = noise(shares, &x);
        let d = ks_two_sample(&noises[0], &noises[k - 1]);
        if d >= critical {
            return Err(format!("first and last share differ in law: KS {d}"));
        }
        for a in 0..k {
            for b in a + 1..k {
                let r = correlation(&noises[a], &noises[b]);
                if (r - expected).abs() > Z_TWO_SIDED_0_001 * standard_error {
                    return Err(format!(
                        "shares {a}, {b}: correlation {r}, expected {expected}"
                    ));
                }
            }
        }
        Ok(())
    };
    let shares = split_into_shares(&x, ANSWERS, k, TAU, &mut rng(20)).unwrap();
    check(&shares).unwrap();
    assert!(check(&asymmetric_split(&x, k, TAU, &mut rng(21))).is_err());
}

fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}
