//! Masks keeping columns fixed are Haar on the complement, not merely `A·F = F`.
//!
//! `FixedSubspaceHaar` with fixed columns `F` (`n × k`, span `S` of dimension `r`) claims the law
//! `A = P·diag(I_r, U)·Pᵀ` with `U` Haar on O(n − r) (`mask/fixed.rs`). For any orthonormal basis
//! `W` of `S^⊥` chosen independently of the mask, `B = WᵀAW` must then be Haar on O(n − r): its
//! entries have the Beta law of a uniform unit vector's coordinate in `n − r` dimensions,
//! `E tr B = 0` and `E tr B² = 1`. Tested with `F = [1ₙ, f]` (the means and one kept column,
//! partial masking), α = 0.001, fixed keys.
//!
//! The tests can fail: a mask that keeps only `1ₙ` fixed (a perfectly orthogonal mask with
//! `A·1ₙ = 1ₙ`, but the wrong law for partial masking) compresses to a `B` that is not Haar on
//! `S^⊥`, and the KS test on `B₁₁` rejects it.

mod common;

use common::{Z_TWO_SIDED_0_001, mean_and_standard_error};
use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{FixedSubspaceHaar, Mask};
use orthomask_core::tolerance::{
    ORTHOGONALITY, ks_one_sample, ks_one_sample_critical_value as ks_one_sample_critical,
};
use statrs::distribution::{Beta, ContinuousCDF};

const DRAWS: u64 = 4000;

/// `n = 6` rows, `F = [1, f]`: the complement has dimension 4, where a uniform unit vector's
/// coordinate has `(t + 1)/2 ~ Beta(3/2, 3/2)`.
const N: usize = 6;

fn fixed() -> DMatrix<f64> {
    DMatrix::from_fn(N, 2, |i, j| if j == 0 { 1.0 } else { (i * i) as f64 })
}

/// An orthonormal basis of `span(F)^⊥`, from nalgebra's QR of `[F, I]` (independent of the mask
/// code): its columns 2…n−1.
fn complement_basis(f: &DMatrix<f64>) -> DMatrix<f64> {
    let mut augmented = DMatrix::zeros(N, 2 + N);
    augmented.columns_mut(0, 2).copy_from(f);
    augmented
        .columns_mut(2, N)
        .copy_from(&DMatrix::identity(N, N));
    let q = augmented.qr().q();
    q.columns(2, N - 2).into_owned()
}

fn compressed(mask: &dyn Mask, w: &DMatrix<f64>) -> DMatrix<f64> {
    w.transpose() * mask.to_dense() * w
}

fn ks_beta(entries: &[f64], dim: usize) -> f64 {
    let half = (dim as f64 - 1.0) / 2.0;
    let beta = Beta::new(half, half).unwrap();
    ks_one_sample(entries, |t| beta.cdf(((t + 1.0) / 2.0).clamp(0.0, 1.0)))
}

#[test]
fn a_mask_keeping_columns_fixed_is_haar_on_their_complement() {
    let f = fixed();
    let w = complement_basis(&f);
    let d = N - 2;
    let key = Key::teaching(4242);
    let draws: Vec<DMatrix<f64>> = (0..DRAWS)
        .map(|s| {
            let a = FixedSubspaceHaar::keyed(&f, key.stream(StreamId::Scratch(s))).unwrap();
            assert_eq!(a.fixed_rank(), 2);
            compressed(&a, &w)
        })
        .collect();
    // B is orthogonal (A maps S^⊥ onto itself) — the premise of the law test.
    let b = &draws[0];
    assert!((b.transpose() * b - DMatrix::identity(d, d)).amax() < ORTHOGONALITY * 10.0);
    let critical = ks_one_sample_critical(DRAWS as usize);
    for (i, j) in [(0, 0), (d - 1, d - 1), (0, d - 1)] {
        let entries: Vec<f64> = draws.iter().map(|b| b[(i, j)]).collect();
        let distance = ks_beta(&entries, d);
        assert!(
            distance < critical,
            "B[{i}, {j}]: KS {distance} ≥ {critical}"
        );
    }
    for (power, expected) in [(1, 0.0), (2, 1.0)] {
        let traces: Vec<f64> = draws
            .iter()
            .map(|b| {
                if power == 1 {
                    b.trace()
                } else {
                    (b * b).trace()
                }
            })
            .collect();
        let (mean, se) = mean_and_standard_error(&traces);
        assert!(
            (mean - expected).abs() <= Z_TWO_SIDED_0_001 * se,
            "E tr B^{power} = {mean} ± {se}"
        );
    }
}

/// Power: keeping only `1ₙ` fixed gives `B₁₁ = wᵀUw` for `U` Haar on the 5-dimensional `1^⊥`:
/// the Beta(2, 2) law, not Beta(3/2, 3/2).
#[test]
fn the_law_test_rejects_a_mask_that_keeps_too_little_fixed() {
    let w = complement_basis(&fixed());
    let key = Key::teaching(4243);
    let entries: Vec<f64> = (0..DRAWS)
        .map(|s| {
            let a = FixedSubspaceHaar::ones_fixed(N, key.stream(StreamId::Scratch(s))).unwrap();
            compressed(&a, &w)[(0, 0)]
        })
        .collect();
    let distance = ks_beta(&entries, N - 2);
    assert!(
        distance > ks_one_sample_critical(DRAWS as usize),
        "wrong law not detected: KS {distance}"
    );
}
