//! Identical means identical on badly scaled data (issue 11 §1): a regression on the release of
//! the modified TM² — the devices scaling every answer by its declared range, σ chosen by the
//! policy for that scale — agrees with the same regression on the raw data
//!
//! * to 9 significant digits in every coefficient on a well-conditioned design whose columns
//!   span twelve orders of magnitude, and
//! * on a degree-5 polynomial design (condition number ≈ 1.5·10⁸ after column scaling) within
//!   two significant digits of what the raw fit itself keeps against a double-double reference.
//!
//! The masking runs as the products run it: each record padded and right-masked on its own
//! (`Participant`), the provider's `A₂`, the collector's unmasking and `A₁`.

mod common;

use common::least_squares::{dataset, polynomial, reference, scaled_condition, spread, wiggle};
use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::protocol::accuracy::UnmaskingAccuracy;
use orthomask_core::protocol::design::{appendix_c_bound, noise_columns_for};
use orthomask_core::protocol::tm2::{
    DataCollector, MaskingServiceProvider, Participant, Tm2Design,
};
use orthomask_core::scaling::RangeScaler;
use orthomask_stats::design::Intercept;
use orthomask_stats::linear::LinearRegression;
use orthomask_stats::tolerance::{
    DIGITS_MASKING_MAY_COST, RELEASE_REGRESSION_RELATIVE, relative_difference,
};

/// Release `A₁A₂X` of `raw` (`n × p`, every column an answer with its declared range) under the
/// policy's design for one cohort of `n`: `p₂` for the cohort and σ just above Appendix C with
/// `x_max = 1` (scaled answers) and the answers as the masked columns.
fn design(raw: &DMatrix<f64>, ranges: &[(f64, f64)]) -> Tm2Design {
    let (n, p) = raw.shape();
    let p2 = noise_columns_for(n, 0.5, 1e-6).unwrap();
    let sigma = appendix_c_bound(n, p, p2, 1.0, 0.5).unwrap().sigma_min * (1.0 + 1e-9);
    Tm2Design::modified(p, p2, sigma)
        .unwrap()
        .with_scaling(RangeScaler::new(ranges).unwrap())
        .unwrap()
}

fn release(raw: &DMatrix<f64>, ranges: &[(f64, f64)]) -> DMatrix<f64> {
    let (n, p) = raw.shape();
    let design = design(raw, ranges);
    let collector = DataCollector::new(Key::teaching(41), design.clone()).unwrap();
    let provider = MaskingServiceProvider::new(Key::teaching(42), design.clone());
    let b = collector.right_mask(0).unwrap();
    let device = Participant::new(&design, &b).unwrap();
    let mut uploads = DMatrix::zeros(n, design.p());
    for i in 0..n {
        let answers: Vec<f64> = raw.row(i).iter().copied().collect();
        let mut noise = Key::teaching(43)
            .stream(StreamId::ParticipantNoise {
                participant: i as u64,
            })
            .rng();
        let row = device.mask_record(&answers, &mut noise).unwrap();
        uploads.row_mut(i).copy_from_slice(&row);
    }
    let unmasked = collector
        .unmask_cohort(0, &provider.mask_cohort(0, &uploads).unwrap())
        .unwrap();
    collector
        .release(&[unmasked])
        .unwrap()
        .data
        .columns(0, p)
        .into_owned()
}

/// Each column's observed range, widened by a hair so that no value sits outside it.
fn ranges_of(raw: &DMatrix<f64>) -> Vec<(f64, f64)> {
    raw.column_iter()
        .map(|c| {
            let pad = 1e-9 * (c.max() - c.min());
            (c.min() - pad, c.max() + pad)
        })
        .collect()
}

fn columns(m: &DMatrix<f64>) -> Vec<Vec<f64>> {
    m.column_iter()
        .map(|c| c.iter().copied().collect())
        .collect()
}

#[test]
fn twelve_orders_of_magnitude_keep_nine_digits_through_the_masks() {
    let n = 200;
    let raw = DMatrix::from_fn(n, 4, |i, j| match j {
        0 => 1e-6 * spread(i),
        1 => (i as f64 * 0.37).cos(),
        2 => 1e6 * spread(3 * i + 1),
        _ => {
            3.0 + 2e6 * 1e-6 * spread(i) - 0.5 * (i as f64 * 0.37).cos()
                + 4e-6 * 1e6 * spread(3 * i + 1)
                + 0.1 * wiggle(i)
        }
    });
    let released = release(&raw, &ranges_of(&raw));
    let names = ["x1", "x2", "x3", "y"];
    let fit = |m: &DMatrix<f64>| {
        LinearRegression::fit(
            &dataset(&names, columns(m)),
            "y",
            &names[..3],
            Intercept::Included,
        )
        .unwrap()
    };
    let (on_raw, on_release) = (fit(&raw), fit(&released));
    for (a, b) in on_raw.coefficients().iter().zip(on_release.coefficients()) {
        let d = relative_difference(a.estimate(), b.estimate());
        assert!(d < RELEASE_REGRESSION_RELATIVE, "{}: {d:e}", a.name());
        let d = relative_difference(a.std_error(), b.std_error());
        assert!(d < RELEASE_REGRESSION_RELATIVE, "{} s.e.: {d:e}", a.name());
    }
}

/// Normwise relative error of `estimates` against `beta` in the scaled coefficients
/// `β̃_j = β_j‖z_j‖` (invariant under column scaling, what least-squares error bounds control).
fn scaled_error(estimates: &[f64], beta: &[f64], z: &DMatrix<f64>) -> f64 {
    let (mut error, mut size) = (0.0f64, 0.0f64);
    for ((e, b), c) in estimates.iter().zip(beta).zip(z.column_iter()) {
        error += ((e - b) * c.norm()).powi(2);
        size += (b * c.norm()).powi(2);
    }
    (error / size).sqrt()
}

/// Errors of the raw fit and of the fit on the release of a degree-`degree` polynomial design of
/// `n` records, against the double-double reference, with the scaled condition number and the
/// digits the model (E2)–(E4) of `protocol::accuracy` says masking costs.
fn polynomial_errors(n: usize, degree: usize, width: f64) -> (f64, f64, f64, f64) {
    let (powers, y) = polynomial(n, degree, width);
    let raw = DMatrix::from_fn(
        n,
        degree + 1,
        |i, j| if j < degree { powers[j][i] } else { y[i] },
    );
    let ranges = ranges_of(&raw);
    let released = release(&raw, &ranges);
    let names: Vec<String> = (1..=degree)
        .map(|k| format!("x{k}"))
        .chain(std::iter::once("y".to_owned()))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let estimates = |m: &DMatrix<f64>| -> Vec<f64> {
        let fit = LinearRegression::fit(
            &dataset(&names, columns(m)),
            "y",
            &names[..degree],
            Intercept::Included,
        )
        .unwrap();
        assert!(fit.aliased().is_empty(), "{:?}", fit.aliased());
        fit.coefficients().iter().map(|c| c.estimate()).collect()
    };
    let z = DMatrix::from_fn(
        n,
        degree + 1,
        |i, j| if j == 0 { 1.0 } else { raw[(i, j - 1)] },
    );
    let kappa = scaled_condition(&z);
    let (beta, ..) = reference(&z, &y);
    let raw_error = scaled_error(&estimates(&raw), &beta, &z);
    // The release is another data set with the same XᵀX: its own exact fit is the raw data's,
    // so its error against the raw reference is what masking adds to the raw computation's.
    let release_error = scaled_error(&estimates(&released), &beta, &z);
    let digits = UnmaskingAccuracy::of(&design(&raw, &ranges), 1.0).expected_digits_lost();
    (raw_error, release_error, kappa, digits)
}

/// Issue 11 §1's target on degrees 2 to 5 (the degree-5 design has κ ≈ 1.5·10⁸ after column
/// scaling), for a cohort of 60: the fit on the release keeps all but at most two of the digits
/// the raw fit keeps (the raw fit's error floored at `κ·ε`, what a backward-stable solver
/// promises, so that a lucky raw fit does not set the bar).
#[test]
fn ill_conditioned_polynomials_lose_at_most_two_digits_to_masking() {
    for degree in 2..=5 {
        let (raw_error, release_error, kappa, _) = polynomial_errors(60, degree, 2e5);
        assert!(kappa < 2e9, "degree {degree}: κ = {kappa:e}");
        let raw_keeps = raw_error.max(kappa * f64::EPSILON);
        assert!(
            release_error < DIGITS_MASKING_MAY_COST * raw_keeps,
            "degree {degree}: release {release_error:e} against raw {raw_error:e} (κ = {kappa:e})"
        );
    }
    let (_, _, kappa, _) = polynomial_errors(60, 5, 2e5);
    assert!(
        kappa > 5e7,
        "the degree-5 design must be ill-conditioned: κ = {kappa:e}"
    );
}

/// For larger cohorts the noise that hides them is larger, and so is the cost (module
/// documentation of `protocol::accuracy`): at 500 records and degree 5 the model predicts about
/// 2.4 digits. The measured cost stays within one digit above the prediction.
#[test]
fn larger_cohorts_lose_the_digits_the_error_model_predicts() {
    let (raw_error, release_error, kappa, digits) = polynomial_errors(500, 5, 2e5);
    let raw_keeps = raw_error.max(kappa * f64::EPSILON);
    assert!(digits > 2.0 && digits < 3.0, "predicted {digits}");
    assert!(
        release_error < 10f64.powf(digits + 1.0) * raw_keeps,
        "release {release_error:e} against raw {raw_error:e}, predicted {digits:.2} digits"
    );
}
