//! The law of the Haar masks, not only their orthogonality.
//!
//! For `Q` Haar on O(n) every column is uniform on the sphere `Sⁿ⁻¹`, so each entry `q` has
//! `(q + 1)/2 ~ Beta((n−1)/2, (n−1)/2)`; `det Q = ±1` with probability ½ each; the law is
//! invariant under `Q ↦ VQ` and `Q ↦ QV` for a fixed orthogonal `V`; and `E tr Q = 0`,
//! `E tr Q² = 1`, `E tr Q³ = 0` for every `n` (Diaconis & Shahshahani 1994, "On the eigenvalues
//! of random matrices", J. Appl. Probab. 31A; directly: `Q` and `−Q` have the same law, so odd
//! moments vanish, and `E[q_ij q_kl] = δ_ik δ_jl / n` gives `E tr Q² = Σᵢ E q_ii² = 1`).
//!
//! For `A` Haar on the orthogonal matrices keeping `1ₙ` fixed, `A = (1/n)11ᵀ + W U Wᵀ` with `U`
//! Haar on O(n−1) and `W` an orthonormal basis of `1^⊥`. With `w = e₁ − (1/n)1` (`‖w‖² = 1 − 1/n`):
//! `a₁₁ = 1/n + ‖w‖²·t`, `t` the first coordinate of a uniform unit vector of the
//! (n−1)-dimensional `1^⊥`, so `((a₁₁ − 1/n)/(1 − 1/n) + 1)/2 ~ Beta((n−2)/2, (n−2)/2)`.
//!
//! Each test is a test at level α = 0.001 with fixed keys, and each shows it can fail: it rejects
//! the law of the same construction without its sign fold `D` (`Q = H₀ ⋯ H_{n−2} D`, see
//! `mask/haar.rs`) — without the last sign only, where `q₁₁` cannot see the difference.

mod common;

use common::{Z_TWO_SIDED_0_001, mean_and_standard_error};
use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::linalg::householder::sign;
use orthomask_core::mask::{FixedSubspaceHaar, HaarOrthogonal, Mask};
use orthomask_core::random::standard_normal;
use orthomask_core::tolerance::{
    ks_critical_value, ks_one_sample, ks_one_sample_critical_value as ks_one_sample_critical,
    ks_two_sample,
};
use statrs::distribution::{Beta, ContinuousCDF};

/// A statistic of one draw.
type Feature = fn(&DMatrix<f64>) -> f64;

/// Draws per sample.
const DRAWS: u64 = 3000;

/// Which law to draw: the product's, or deliberately wrong variants of it.
#[derive(Clone, Copy, PartialEq)]
enum Law {
    /// `Q = H₀ ⋯ H_{n−2} D`: Haar.
    Haar,
    /// Without the last sign of `D` (the last column's `sign(z)`).
    NoFinalSign,
    /// Without `D` at all: the plain Householder QR of a Gaussian matrix.
    Unfolded,
}

/// Draw `s` of an `n × n` mask from key 2024's scratch stream `s`, under `law`.
fn draw(n: usize, s: u64, law: Law) -> DMatrix<f64> {
    let stream = Key::teaching(2024).stream(StreamId::Scratch(s));
    let q = HaarOrthogonal::keyed(n, stream.clone()).unwrap().to_dense();
    // The signs of D, regenerated as `HaarOrthogonal` draws them: the first normal of each
    // reflector's sub-stream (−sign for the reflectors, +sign of a fresh normal for the last).
    let d = |k: usize| {
        let first = standard_normal(&mut stream.substream(k as u64));
        if k + 1 < n { -sign(first) } else { sign(first) }
    };
    match law {
        Law::Haar => q,
        Law::NoFinalSign => {
            let mut q = q;
            let last = d(n - 1);
            q.column_mut(n - 1).scale_mut(last);
            q
        }
        Law::Unfolded => {
            let mut q = q;
            for k in 0..n {
                let dk = d(k);
                q.column_mut(k).scale_mut(dk);
            }
            q
        }
    }
}

fn sample(n: usize, law: Law, offset: u64, f: impl Fn(&DMatrix<f64>) -> f64) -> Vec<f64> {
    (0..DRAWS).map(|s| f(&draw(n, offset + s, law))).collect()
}

/// KS distance of entries `q` of an `n`-dimensional unit vector against the Beta law of `q`.
fn ks_against_sphere_entry(entries: &[f64], n: usize) -> f64 {
    let half = (n as f64 - 1.0) / 2.0;
    let beta = Beta::new(half, half).unwrap();
    ks_one_sample(entries, |q| beta.cdf(((q + 1.0) / 2.0).clamp(0.0, 1.0)))
}

#[test]
fn first_entry_of_a_haar_matrix_has_the_beta_law() {
    let n = 12;
    let entries = sample(n, Law::Haar, 0, |q| q[(0, 0)]);
    let d = ks_against_sphere_entry(&entries, n);
    assert!(d < ks_one_sample_critical(entries.len()), "KS distance {d}");
    // Power: the unfolded QR has q₁₁ ≤ 0 always.
    let unfolded = sample(n, Law::Unfolded, 0, |q| q[(0, 0)]);
    assert!(ks_against_sphere_entry(&unfolded, n) > ks_one_sample_critical(unfolded.len()));
}

/// The last column (the one `q₁₁` never sees) is uniform on the sphere too: KS on its first and
/// last entries. Dropping only the final sign leaves `q₁₁`'s law intact but is rejected here.
#[test]
fn last_column_of_a_haar_matrix_is_uniform_on_the_sphere() {
    let n = 12;
    let critical = ks_one_sample_critical(DRAWS as usize);
    for (i, label) in [(n - 1, "last entry"), (0, "first entry")] {
        let entries = sample(n, Law::Haar, 10_000, |q| q[(i, n - 1)]);
        let d = ks_against_sphere_entry(&entries, n);
        assert!(
            d < critical,
            "{label} of the last column: KS {d} ≥ {critical}"
        );
    }
    let wrong = sample(n, Law::NoFinalSign, 10_000, |q| q[(n - 1, n - 1)]);
    let d = ks_against_sphere_entry(&wrong, n);
    assert!(d > critical, "missing final sign not detected: KS {d}");
    // …while q₁₁ cannot tell (the same draws, first column untouched).
    let first = sample(n, Law::NoFinalSign, 10_000, |q| q[(0, 0)]);
    assert!(ks_against_sphere_entry(&first, n) < critical);
}

/// `Pr[det Q = 1] = ½`: the count of positive determinants is within the two-sided binomial
/// bound `N/2 ± z_{0.0005}·√N/2`. The unfolded QR has `det = (−1)^{n−1}` always.
#[test]
fn determinant_signs_are_balanced() {
    let n = 7;
    let positives = |law: Law| {
        sample(n, law, 20_000, |q| q.clone().determinant())
            .iter()
            .filter(|&&det| det > 0.0)
            .count() as f64
    };
    let half = DRAWS as f64 / 2.0;
    let bound = Z_TWO_SIDED_0_001 * (DRAWS as f64).sqrt() / 2.0;
    let haar = positives(Law::Haar);
    assert!((haar - half).abs() <= bound, "{haar} positive determinants");
    let unfolded = positives(Law::Unfolded);
    assert!(
        (unfolded - half).abs() > bound,
        "{unfolded} positive determinants"
    );
}

/// `Q`, `VQ` and `QV` have the same law for a fixed orthogonal `V` (two-sample KS on the entry
/// `(0, 0)` and on the trace, independent draws on each side). The unfolded QR is not
/// left-invariant: its `q₁₁ ≤ 0` while `(VQ)₁₁` takes both signs.
#[test]
fn the_haar_law_is_left_and_right_invariant() {
    let n = 9;
    let v = HaarOrthogonal::keyed(n, Key::teaching(99).stream(StreamId::Scratch(0)))
        .unwrap()
        .to_dense();
    let critical = ks_critical_value(DRAWS as usize, DRAWS as usize);
    let features: [(&str, Feature); 2] =
        [("entry (0, 0)", |q| q[(0, 0)]), ("trace", |q| q.trace())];
    for (label, f) in features {
        let plain = sample(n, Law::Haar, 30_000, f);
        let left = sample(n, Law::Haar, 40_000, |q| f(&(&v * q)));
        let right = sample(n, Law::Haar, 50_000, |q| f(&(q * &v)));
        for (side, other) in [("VQ", &left), ("QV", &right)] {
            let d = ks_two_sample(&plain, other);
            assert!(
                d < critical,
                "{label}: Q against {side}: KS {d} ≥ {critical}"
            );
        }
    }
    let unfolded = sample(n, Law::Unfolded, 30_000, |q| q[(0, 0)]);
    let moved = sample(n, Law::Unfolded, 40_000, |q| (&v * q)[(0, 0)]);
    assert!(ks_two_sample(&unfolded, &moved) > critical);
}

/// `E tr Q = 0`, `E tr Q² = 1`, `E tr Q³ = 0`: each sample mean within `z_{0.0005}` of its
/// standard error. The unfolded QR's diagonal leans negative and fails `E tr Q = 0`.
#[test]
fn trace_moments_are_those_of_haar() {
    let n = 8;
    let traces = |law: Law, j: u32| {
        sample(n, law, 60_000, |q| {
            let mut power = q.clone();
            for _ in 1..j {
                power = &power * q;
            }
            power.trace()
        })
    };
    for (j, expected) in [(1, 0.0), (2, 1.0), (3, 0.0)] {
        let (mean, se) = mean_and_standard_error(&traces(Law::Haar, j));
        assert!(
            (mean - expected).abs() <= Z_TWO_SIDED_0_001 * se,
            "E tr Q^{j} = {mean} ± {se}, expected {expected}"
        );
    }
    let (mean, se) = mean_and_standard_error(&traces(Law::Unfolded, 1));
    assert!(
        mean.abs() > Z_TWO_SIDED_0_001 * se,
        "unfolded E tr Q = {mean} ± {se}"
    );
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
    let d = ks_one_sample(&sample, |a| {
        beta.cdf((((a - 1.0 / nf) / (1.0 - 1.0 / nf) + 1.0) / 2.0).clamp(0.0, 1.0))
    });
    assert!(
        d < ks_one_sample_critical(draws as usize),
        "KS distance {d}"
    );
}
