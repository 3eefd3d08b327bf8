//! Noise-bias correction on simulated seed 004 setting-B releases `A·(X + C)`.
//!
//! Model: `y = 1 + 2x + e`, `x ~ N(3, 2²)`, `e ~ N(0, 1)`; every record adds `N(0, 1)` noise to
//! both x and y (σ = 1), and the release is masked by a `1ₙ`-fixed Haar `A`. Naive least squares
//! attenuates the slope to `2·4/(4 + 1) = 1.6`; the correction must bring it back to 2.
//! Randomness: teaching keys and the masking core's portable normal sampler, so every run
//! draws the same numbers on every platform.

use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{FixedSubspaceHaar, Mask};
use orthomask_core::random::standard_normal;
use orthomask_core::tolerance::PRESERVED_STATISTICS;
use orthomask_stats::bias_corrected::{BiasCorrectedRegression, BiasCorrectionError};
use orthomask_stats::dataset::Dataset;
use orthomask_stats::design::Intercept;
use orthomask_stats::tolerance::{MONTE_CARLO_BIAS, MONTE_CARLO_VARIANCE, relative_difference};

const N: usize = 500;
const REPLICATES: u64 = 40;
const NOISE_SD: f64 = 1.0;
const SLOPE: f64 = 2.0;
const INTERCEPT: f64 = 1.0;
/// `SLOPE · var(x) / (var(x) + σ²)`.
const ATTENUATED_SLOPE: f64 = SLOPE * 4.0 / (4.0 + NOISE_SD * NOISE_SD);

/// Noisy data `X + C` (columns x, y) of replicate `r`, and the same masked, `A·(X + C)`.
fn replicate(r: u64) -> (Dataset, Dataset) {
    let mut rng = Key::teaching(4).stream(StreamId::Scratch(r)).rng();
    let mut noisy = DMatrix::zeros(N, 2);
    for i in 0..N {
        let x = 3.0 + 2.0 * standard_normal(&mut rng);
        let y = INTERCEPT + SLOPE * x + standard_normal(&mut rng);
        noisy[(i, 0)] = x + NOISE_SD * standard_normal(&mut rng);
        noisy[(i, 1)] = y + NOISE_SD * standard_normal(&mut rng);
    }
    let names = vec!["x".to_owned(), "y".to_owned()];
    let a =
        FixedSubspaceHaar::ones_fixed(N, Key::teaching(5).stream(StreamId::Scratch(r))).unwrap();
    let mut released = noisy.clone();
    a.left_apply(&mut released).unwrap();
    (
        Dataset::new(names.clone(), noisy).unwrap(),
        Dataset::new(names, released).unwrap(),
    )
}

fn corrected(data: &Dataset) -> Result<BiasCorrectedRegression, BiasCorrectionError> {
    BiasCorrectedRegression::fit(
        data,
        "y",
        &["x"],
        Intercept::Included,
        &[("x", NOISE_SD), ("y", NOISE_SD)],
    )
}

#[test]
fn correction_removes_the_attenuation_bias() {
    let (mut slope, mut naive, mut intercept, mut variance) = (0.0, 0.0, 0.0, 0.0);
    for r in 0..REPLICATES {
        let (_, released) = replicate(r);
        let fit = corrected(&released).unwrap();
        slope += fit.estimate("x").unwrap();
        intercept += fit.estimate("(Intercept)").unwrap();
        naive += fit.naive_estimates()[1];
        variance += fit.residual_variance();
    }
    let count = REPLICATES as f64;
    let (slope, naive, intercept, variance) = (
        slope / count,
        naive / count,
        intercept / count,
        variance / count,
    );
    assert!(
        (naive - ATTENUATED_SLOPE).abs() < MONTE_CARLO_BIAS,
        "naive slope {naive}"
    );
    assert!(
        (slope - SLOPE).abs() < MONTE_CARLO_BIAS,
        "corrected slope {slope}"
    );
    // The intercept's bias is the slope's times x̄ = 3.
    assert!(
        (intercept - INTERCEPT).abs() < 3.0 * MONTE_CARLO_BIAS,
        "intercept {intercept}"
    );
    assert!(
        (variance - 1.0).abs() < MONTE_CARLO_VARIANCE,
        "residual variance {variance}"
    );
}

/// The mask drops out of the moment matrix: `A·(X + C)` and `X + C` give the same fit.
#[test]
fn masking_does_not_change_the_corrected_fit() {
    let (noisy, released) = replicate(0);
    let (a, b) = (corrected(&noisy).unwrap(), corrected(&released).unwrap());
    for (x, y) in a.estimates().iter().zip(b.estimates().iter()) {
        assert!(
            relative_difference(*x, *y) < PRESERVED_STATISTICS,
            "{x} vs {y}"
        );
    }
    assert!(
        relative_difference(a.residual_variance(), b.residual_variance()) < PRESERVED_STATISTICS
    );
}

/// Declaring more noise than the data show (σ_x = 2.5: 6.25 > var(x + c) ≈ 5) leaves a
/// corrected moment matrix that is not positive definite at x.
#[test]
fn overstated_noise_is_refused() {
    let (_, released) = replicate(1);
    let err =
        BiasCorrectedRegression::fit(&released, "y", &["x"], Intercept::Included, &[("x", 2.5)])
            .unwrap_err();
    assert!(
        matches!(err, BiasCorrectionError::NotPositiveDefinite { ref column, .. } if column == "x"),
        "{err}"
    );
    assert!(err.to_string().contains("x σ=2.5"));
}
