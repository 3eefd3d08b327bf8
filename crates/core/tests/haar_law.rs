//! The exact law of one entry of a Haar orthogonal matrix, tested with Kolmogorov–Smirnov.
//!
//! For `Q` Haar on O(n) the first column is uniform on the sphere `Sⁿ⁻¹`, so `(q₁₁ + 1)/2` has the
//! Beta((n−1)/2, (n−1)/2) law (and `√n·q₁₁ → N(0, 1)`).
//!
//! For `A` Haar on the orthogonal matrices keeping `1ₙ` fixed, `A = (1/n)11ᵀ + W U Wᵀ` with `U`
//! Haar on O(n−1) and `W` an orthonormal basis of `1^⊥`. With `w = e₁ − (1/n)1` (the part of `e₁`
//! in `1^⊥`, `‖w‖² = 1 − 1/n`): `a₁₁ = 1/n + wᵀ(WUWᵀ)w = 1/n + ‖w‖²·t`, where `t` is the first
//! coordinate of a uniform unit vector of the (n−1)-dimensional `1^⊥`. Hence
//! `((a₁₁ − 1/n)/(1 − 1/n) + 1)/2 ~ Beta((n−2)/2, (n−2)/2)`.

use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{FixedSubspaceHaar, HaarOrthogonal, Mask};
use statrs::distribution::{Beta, ContinuousCDF};

/// Kolmogorov–Smirnov distance between a sample and a CDF.
fn ks(mut sample: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
    sample.sort_by(f64::total_cmp);
    let n = sample.len() as f64;
    sample
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let c = cdf(x);
            (c - i as f64 / n).abs().max(((i + 1) as f64 / n - c).abs())
        })
        .fold(0.0, f64::max)
}

/// Critical value of the one-sample KS test at α = 0.001: 1.95/√m.
fn critical(m: usize) -> f64 {
    1.95 / (m as f64).sqrt()
}

#[test]
fn first_entry_of_a_haar_matrix_has_the_beta_law() {
    let (n, draws) = (12, 3000);
    let key = Key::teaching(2024);
    let sample: Vec<f64> = (0..draws)
        .map(|s| {
            HaarOrthogonal::keyed(n, key.stream(StreamId::Scratch(s)))
                .unwrap()
                .to_dense()[(0, 0)]
        })
        .collect();
    let half = (n as f64 - 1.0) / 2.0;
    let beta = Beta::new(half, half).unwrap();
    let d = ks(sample, |q| beta.cdf((q + 1.0) / 2.0));
    assert!(d < critical(draws as usize), "KS distance {d}");
}

#[test]
fn first_entry_of_a_ones_fixed_haar_matrix_has_the_beta_law() {
    let (n, draws) = (12, 3000);
    let key = Key::teaching(2025);
    let nf = n as f64;
    let sample: Vec<f64> = (0..draws)
        .map(|s| {
            FixedSubspaceHaar::ones_fixed(n, key.stream(StreamId::Scratch(s)))
                .unwrap()
                .to_dense()[(0, 0)]
        })
        .collect();
    let half = (nf - 2.0) / 2.0;
    let beta = Beta::new(half, half).unwrap();
    let d = ks(sample, |a| {
        beta.cdf(((a - 1.0 / nf) / (1.0 - 1.0 / nf) + 1.0) / 2.0)
    });
    assert!(d < critical(draws as usize), "KS distance {d}");
}

/// The test has power: the unfolded QR (no sign correction) fails it badly.
#[test]
fn the_law_test_rejects_a_uniform_entry_distribution() {
    let n = 12;
    let half = (n as f64 - 1.0) / 2.0;
    let beta = Beta::new(half, half).unwrap();
    // Entries spread uniformly on [−1, 1] are far from the Beta law.
    let sample: Vec<f64> = (0..3000)
        .map(|i| -1.0 + 2.0 * (i as f64 + 0.5) / 3000.0)
        .collect();
    assert!(ks(sample, |q| beta.cdf((q + 1.0) / 2.0)) > critical(3000));
}
