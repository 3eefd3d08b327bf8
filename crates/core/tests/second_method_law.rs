//! The second TM² method's release is invariant in law, tested through `protocol/second.rs`.
//!
//! The release is `X B₁ B₂` with `Bᵢ = diag(I_kept, Bᵢ*)` and `B₁*`, `B₂*` independent Haar on
//! `G = {U ∈ O(q) : U·1 = 1}` (seed 003 §3.3; `mask/fixed.rs`). Their product is again Haar on
//! `G` (seed 000 Lemma 3.5 on the subgroup), so for any fixed `V = diag(I_kept, V*)` with
//! `V* ∈ G` the release of `X·V` has the law of the release of `X`: the collector's published
//! table reveals `X` only up to that invariance (row norms and row sums of the masked block, the
//! kept columns). Each draw runs every party — device (`A₀`, noise and QA rows), provider (`B₁`),
//! collector (unmask, QA, `B₂`) — with fresh keys.
//!
//! Two-sample KS tests at α = 0.001 on a masked entry and on a masked row sum. The test can fail:
//! a `V'` that is orthogonal but moves `1` (outside `G`) changes the row sums, and is rejected.

use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{FixedSubspaceHaar, HaarOrthogonal, Mask};
use orthomask_core::protocol::second::{
    SecondCollector, SecondDesign, SecondParticipant, SecondProvider,
};
use orthomask_core::tolerance::{ORTHOGONALITY, ks_critical_value, ks_two_sample};

const DRAWS: u64 = 1500;

/// Resolution of the row-sum feature: far above the rounding of the release (entries of order
/// 10, `ε_mach` ≈ 2e-16) and far below what a `V'` outside the group moves (order 1).
const ROW_SUM_RESOLUTION: f64 = 1e-9;

/// Five columns, the first (the response) kept; four noise rows; QA row 777.
fn design() -> SecondDesign {
    SecondDesign::new(5, vec![0], 4, 1.0, Some(777.0)).unwrap()
}

fn raw() -> DMatrix<f64> {
    DMatrix::from_fn(4, 5, |i, j| ((i * 5 + j * 3) % 7) as f64 + 0.5 * j as f64)
}

/// The release `X B₁ B₂` of draw `s`, every party with its own key.
fn release(x: &DMatrix<f64>, s: u64) -> DMatrix<f64> {
    let d = design();
    let collector = SecondCollector::new(Key::teaching(20_000 + s), d.clone()).unwrap();
    let provider = SecondProvider::new(Key::teaching(30_000 + s), d.clone());
    let a0 = collector.row_mixer().unwrap();
    let device = SecondParticipant::new(&d, &a0).unwrap();
    let mut xb1 = DMatrix::zeros(x.nrows(), x.ncols());
    for i in 0..x.nrows() {
        let record: Vec<f64> = x.row(i).iter().copied().collect();
        let mut noise = Key::teaching(40_000 + s)
            .stream(StreamId::ParticipantNoise {
                participant: i as u64,
            })
            .rng();
        let upload = device.mask_record(&record, &mut noise).unwrap();
        let (row, qa) = collector
            .unmask_record(&provider.mask_upload(&upload).unwrap())
            .unwrap();
        assert!(qa.unwrap().passed());
        xb1.row_mut(i).copy_from_slice(&row);
    }
    collector.release(&xb1).unwrap()
}

/// A masked entry and the row sum of a record's masked block. The row sum is invariant under `G`
/// up to rounding, so it is compared at [`ROW_SUM_RESOLUTION`]: a KS test on rounding noise
/// would compare two computation orders, not two laws.
fn features(x: &DMatrix<f64>, offset: u64) -> [Vec<f64>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    for s in 0..DRAWS {
        let r = release(x, offset + s);
        out[0].push(r[(1, 2)]);
        let sum = r.row(2).columns(1, 4).sum();
        out[1].push((sum / ROW_SUM_RESOLUTION).round() * ROW_SUM_RESOLUTION);
    }
    out
}

/// `diag(1, V*)` for a fixed orthogonal `V*`.
fn with_masked_block(block: &DMatrix<f64>) -> DMatrix<f64> {
    let mut v = DMatrix::identity(5, 5);
    v.view_mut((1, 1), (4, 4)).copy_from(block);
    v
}

#[test]
fn the_release_law_is_invariant_under_the_masks_group() {
    let x = raw();
    let critical = ks_critical_value(DRAWS as usize, DRAWS as usize);
    let plain = features(&x, 0);

    let in_group = FixedSubspaceHaar::ones_fixed(4, Key::teaching(5).stream(StreamId::Scratch(0)))
        .unwrap()
        .to_dense();
    assert!((in_group.row_sum().add_scalar(-1.0)).amax() < ORTHOGONALITY);
    let moved = features(&(&x * with_masked_block(&in_group)), 100_000);
    for (f, label) in [(0, "entry"), (1, "row sum")] {
        let d = ks_two_sample(&plain[f], &moved[f]);
        assert!(d < critical, "{label}: X against XV, KS {d} ≥ {critical}");
    }

    // Power: an orthogonal V' outside G (it moves 1) changes the masked row sums.
    let outside = HaarOrthogonal::keyed(4, Key::teaching(6).stream(StreamId::Scratch(0)))
        .unwrap()
        .to_dense();
    let wrong = features(&(&x * with_masked_block(&outside)), 200_000);
    let d = ks_two_sample(&plain[1], &wrong[1]);
    assert!(d > critical, "V' outside the group not detected: KS {d}");
}
