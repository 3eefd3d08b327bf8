//! The collector's unmasking error on badly scaled data (issue 11 §1): columns spread over twelve
//! orders of magnitude keep every digit the raw data have once the device scales by declared
//! ranges, and the measured error matches the expected error (E2) of `protocol::accuracy`.

use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::protocol::accuracy::{HIGH_PROBABILITY_FACTOR, UnmaskingAccuracy};
use orthomask_core::protocol::design::{appendix_c_bound, noise_columns_for};
use orthomask_core::protocol::tm2::{
    DataCollector, MaskingServiceProvider, Participant, Tm2Design,
};
use orthomask_core::random::uniform_matrix;
use orthomask_core::scaling::RangeScaler;
use orthomask_core::tolerance::ERROR_MODEL_FACTOR;

/// XᵀX must agree with the raw data's entry by entry to this, relative to `√(G_ii G_jj)`
/// (issue 11 §1 target).
const GRAM_ENTRY_RELATIVE: f64 = 1e-12;

/// Half-ranges of the five answer columns: 10⁻⁶ … 10⁶, twelve orders of magnitude.
const HALF_RANGES: [f64; 5] = [1e-6, 1e-3, 1.0, 1e3, 1e6];
const COHORT: usize = 200;

fn ranges() -> Vec<(f64, f64)> {
    // Off-centre ranges, so the centring of the scaling is exercised too.
    HALF_RANGES.iter().map(|&h| (0.5 * h, 2.5 * h)).collect()
}

/// The policy's design for scaled records: `p₂` for the cohort and σ just above Appendix C with
/// `x_max = 1` and the answers as the masked columns.
fn design(scaled: bool, x_max: f64) -> Tm2Design {
    let p2 = noise_columns_for(COHORT, 0.5, 1e-6).unwrap();
    let bound = appendix_c_bound(COHORT, HALF_RANGES.len(), p2, x_max, 0.5).unwrap();
    let design = Tm2Design::modified(HALF_RANGES.len(), p2, bound.sigma_min * 1.001).unwrap();
    if scaled {
        design
            .with_scaling(RangeScaler::new(&ranges()).unwrap())
            .unwrap()
    } else {
        design
    }
}

fn answers() -> DMatrix<f64> {
    let u = uniform_matrix(
        &mut Key::teaching(11).stream(StreamId::Scratch(1)).rng(),
        COHORT,
        HALF_RANGES.len(),
    );
    DMatrix::from_fn(COHORT, HALF_RANGES.len(), |i, j| {
        let (lo, hi) = ranges()[j];
        lo + (hi - lo) * u[(i, j)]
    })
}

struct Run {
    /// What the collector recovered, `A₂X₁` in the answers' units (QA column dropped).
    recovered: DMatrix<f64>,
    /// The same `A₂` applied to the padded records directly (no `B`): the reference.
    reference: DMatrix<f64>,
    /// The release `A₁A₂X₁`.
    release: DMatrix<f64>,
}

fn run(design: &Tm2Design, raw: &DMatrix<f64>) -> Run {
    let collector = DataCollector::new(Key::teaching(1), design.clone()).unwrap();
    let provider = MaskingServiceProvider::new(Key::teaching(2), design.clone());
    let b = collector.right_mask(0).unwrap();
    let device = Participant::new(design, &b).unwrap();
    let mut padded = DMatrix::zeros(raw.nrows(), design.p());
    let mut uploads = DMatrix::zeros(raw.nrows(), design.p());
    for i in 0..raw.nrows() {
        let answers: Vec<f64> = raw.row(i).iter().copied().collect();
        let noise = || {
            Key::teaching(3)
                .stream(StreamId::ParticipantNoise {
                    participant: i as u64,
                })
                .rng()
        };
        padded
            .row_mut(i)
            .copy_from_slice(&device.pad(&answers, &mut noise()).unwrap());
        uploads
            .row_mut(i)
            .copy_from_slice(&device.mask_record(&answers, &mut noise()).unwrap());
    }
    let unmasked = collector
        .unmask_cohort(0, &provider.mask_cohort(0, &uploads).unwrap())
        .unwrap();
    let direct = provider.mask_cohort(0, &padded).unwrap();
    let (reference, _) = design
        .unscale_unmasked(direct.columns(0, design.p1()).into_owned(), 1.0)
        .unwrap();
    let answers = design.answers();
    let release = collector
        .release(std::slice::from_ref(&unmasked))
        .unwrap()
        .data;
    Run {
        recovered: unmasked.data.columns(0, answers).into_owned(),
        reference: reference.columns(0, answers).into_owned(),
        release: release.columns(0, answers).into_owned(),
    }
}

/// Largest `|ΔG_ij| / √(G_ii G_jj)` between the two Gram matrices.
fn gram_error(release: &DMatrix<f64>, raw: &DMatrix<f64>) -> f64 {
    let (g, r) = (release.transpose() * release, raw.transpose() * raw);
    let mut worst: f64 = 0.0;
    for i in 0..g.nrows() {
        for j in 0..g.ncols() {
            worst = worst.max((g[(i, j)] - r[(i, j)]).abs() / (r[(i, i)] * r[(j, j)]).sqrt());
        }
    }
    worst
}

#[test]
fn scaled_records_keep_every_column_digits_and_xtx_to_a_part_in_a_trillion() {
    let raw = answers();
    let design = design(true, 1.0);
    let out = run(&design, &raw);
    let gram = gram_error(&out.release, &raw);
    assert!(gram < GRAM_ENTRY_RELATIVE, "XᵀX off by {gram:e}");
    let means_raw = raw.row_mean();
    let means_release = out.release.row_mean();
    for (j, h) in HALF_RANGES.iter().enumerate() {
        let off = (means_release[j] - means_raw[j]).abs() / h;
        assert!(
            off < GRAM_ENTRY_RELATIVE,
            "mean of column {j} off by {off:e} of its range"
        );
    }
}

#[test]
fn unscaled_records_lose_the_small_columns_which_is_what_scaling_fixes() {
    // The same data masked in their own units, σ following the largest declared value: the
    // smallest column's cross-products keep only about three digits (measured: 9e-4). This is
    // the failure the scaling removes; if it ever passes, the test above shows nothing.
    let raw = answers();
    let largest = ranges().iter().map(|r| r.1).fold(0.0, f64::max);
    let out = run(&design(false, largest), &raw);
    let gram = gram_error(&out.release, &raw);
    assert!(gram > 1e-5, "unscaled XᵀX off by only {gram:e}");
}

#[test]
fn measured_unmasking_error_matches_the_expected_error_e2() {
    let raw = answers();
    let design = design(true, 1.0);
    let accuracy = UnmaskingAccuracy::of(&design, 1.0);
    let out = run(&design, &raw);
    let mut sum_squares = 0.0;
    let mut largest: f64 = 0.0;
    for (j, h) in HALF_RANGES.iter().enumerate() {
        for i in 0..raw.nrows() {
            // On the device's scale: in units of the column's half-range.
            let e = (out.recovered[(i, j)] - out.reference[(i, j)]) / h;
            sum_squares += e * e;
            largest = largest.max(e.abs());
        }
    }
    let rms = (sum_squares / (raw.nrows() * HALF_RANGES.len()) as f64).sqrt();
    let expected = accuracy.expected_entry_error;
    assert!(
        rms < ERROR_MODEL_FACTOR * expected && rms > expected / ERROR_MODEL_FACTOR,
        "rms error {rms:e} against the expected {expected:e}"
    );
    assert!(
        largest < HIGH_PROBABILITY_FACTOR * ERROR_MODEL_FACTOR * expected,
        "largest error {largest:e} against the expected {expected:e}"
    );
    // In each column's own units the error is h_j·E: relative to the column, not to the largest.
    for (j, h) in HALF_RANGES.iter().enumerate() {
        assert_eq!(accuracy.in_units_of(*h), expected * h, "column {j}");
    }
}
