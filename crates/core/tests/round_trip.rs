//! Mask → unmask is the identity to 1e-12 relative, for every mask law, both sides, and sizes
//! on both sides of any blocking threshold.

use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{DenseInvertible, FixedSubspaceHaar, HaarOrthogonal, KeepColumns, Mask};
use orthomask_core::random::fill_standard_normal;
use orthomask_core::tolerance::{CLEARLY_CHANGED, ROUND_TRIP};

fn block(rows: usize, cols: usize, seed: u64) -> DMatrix<f64> {
    let mut values = vec![0.0; rows * cols];
    fill_standard_normal(
        &mut Key::teaching(seed).stream(StreamId::Scratch(seed)).rng(),
        &mut values,
    );
    DMatrix::from_vec(rows, cols, values).map(|v| 100.0 * v + 3.0)
}

fn relative(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).amax() / b.amax()
}

fn check(mask: &dyn Mask, label: &str) {
    let d = mask.dim();
    let rows = block(7, d, d as u64);
    let mut there = rows.clone();
    mask.right_apply(&mut there).unwrap();
    assert!(
        relative(&there, &rows) > CLEARLY_CHANGED,
        "{label}: the mask did nothing"
    );
    mask.right_apply_inverse(&mut there).unwrap();
    assert!(
        relative(&there, &rows) < ROUND_TRIP,
        "{label} right: {}",
        relative(&there, &rows)
    );
    let cols = block(d, 5, d as u64 + 1);
    let mut there = cols.clone();
    mask.left_apply(&mut there).unwrap();
    mask.left_apply_inverse(&mut there).unwrap();
    assert!(
        relative(&there, &cols) < ROUND_TRIP,
        "{label} left: {}",
        relative(&there, &cols)
    );
    let k = d.min(4);
    let mut masked = rows.clone();
    mask.right_apply(&mut masked).unwrap();
    let leading = mask.unmask_leading(&masked, k).unwrap();
    assert!(
        relative(&leading, &rows.columns(0, k).into_owned()) < ROUND_TRIP,
        "{label} leading"
    );
}

#[test]
fn every_mask_round_trips_to_one_part_in_a_trillion() {
    let key = Key::teaching(42);
    for d in [2, 9, 64, 300] {
        check(
            &HaarOrthogonal::keyed(d, key.stream(StreamId::RightMask { cohort: d as u32 }))
                .unwrap(),
            &format!("Haar {d}"),
        );
        check(
            &FixedSubspaceHaar::ones_fixed(
                d,
                key.stream(StreamId::ProviderLeftMask { cohort: d as u32 }),
            )
            .unwrap(),
            &format!("ones-fixed {d}"),
        );
        // (With d = 2 the inner block is 1×1, ±1, and may be the identity.)
        if d > 2 {
            check(
                &KeepColumns::new(
                    d,
                    &[0],
                    HaarOrthogonal::keyed(d - 1, key.stream(StreamId::Scratch(d as u64))).unwrap(),
                )
                .unwrap(),
                &format!("keep {d}"),
            );
        }
    }
    for d in [3, 9, 30] {
        check(
            &DenseInvertible::uniform_entries(d, &mut key.stream(StreamId::RowMixer).rng())
                .unwrap(),
            &format!("uniform {d}"),
        );
    }
}
