//! The orbit sampler (`mask/orbit.rs`) draws `A·M` with the law of the operator it replaces, in
//! the cases its argument has to cover beyond the plain one: a block at least as wide as the free
//! dimension (`k ≥ n − r`, where the orbit is all of `O(n − r)·M`), a rank-deficient block, and
//! the collector's release itself (`DataCollector::release` from `ORBIT_MIN_ROWS` participants).
//!
//! Each case compares, by two-sample Kolmogorov–Smirnov tests at α = 0.001 on a fixed entry and
//! a row norm, draws of the sampler with draws of the operator `FixedSubspaceHaar` applied to the
//! same block, with independent fixed keys. Each case also shows the test can fail: the same
//! sampler with nothing kept fixed (plain Haar on O(n), which moves the column means) is
//! rejected.

use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{FixedSubspaceHaar, HaarOrbit, Mask, ORBIT_MIN_ROWS};
use orthomask_core::protocol::tm2::{DataCollector, Tm2Design, UnmaskedCohort};
use orthomask_core::tolerance::{ks_critical_value, ks_two_sample};

/// Columns with clearly non-zero means, so keeping `1ₙ` fixed matters.
fn block(n: usize, k: usize) -> DMatrix<f64> {
    DMatrix::from_fn(n, k, |i, j| ((i * 7 + j * 13) % 11) as f64 - 2.0 + j as f64)
}

/// A fixed entry and the norm of a fixed row of one draw.
fn features(draw: &DMatrix<f64>) -> [f64; 2] {
    [draw[(2, 1)], draw.row(draw.nrows() - 2).norm()]
}

fn sample(draws: u64, f: impl Fn(u64) -> DMatrix<f64>) -> [Vec<f64>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    for s in 0..draws {
        let [a, b] = features(&f(s));
        out[0].push(a);
        out[1].push(b);
    }
    out
}

fn orbit_draw(fixed: &DMatrix<f64>, m: &DMatrix<f64>, s: u64) -> DMatrix<f64> {
    let mut rng = Key::teaching(700).stream(StreamId::Scratch(s)).rng();
    HaarOrbit::new(fixed).unwrap().sample(m, &mut rng).unwrap()
}

fn operator_draw(fixed: &DMatrix<f64>, m: &DMatrix<f64>, s: u64) -> DMatrix<f64> {
    let a =
        FixedSubspaceHaar::keyed(fixed, Key::teaching(701).stream(StreamId::Scratch(s))).unwrap();
    let mut out = m.clone();
    a.left_apply(&mut out).unwrap();
    out
}

/// Both features agree in law (`same`) or at least one is told apart (`!same`).
fn assert_laws(label: &str, a: &[Vec<f64>; 2], b: &[Vec<f64>; 2], same: bool) {
    let critical = ks_critical_value(a[0].len(), b[0].len());
    let distances = [ks_two_sample(&a[0], &b[0]), ks_two_sample(&a[1], &b[1])];
    if same {
        assert!(
            distances.iter().all(|&d| d < critical),
            "{label}: KS {distances:?} against {critical}"
        );
    } else {
        assert!(
            distances.iter().any(|&d| d > critical),
            "{label}: wrong law not detected, KS {distances:?} against {critical}"
        );
    }
}

fn ones(n: usize) -> DMatrix<f64> {
    DMatrix::from_element(n, 1, 1.0)
}

/// `n = 6`, `1ₙ` fixed (`r = 1`) and `k = 7 ≥ n − r` columns: the thin QR of the free block is
/// square and `R` has more columns than rows.
#[test]
fn wide_blocks_have_the_operator_law() {
    let (n, draws) = (6, 2000);
    let m = block(n, 7);
    let orbit = sample(draws, |s| orbit_draw(&ones(n), &m, s));
    let operator = sample(draws, |s| operator_draw(&ones(n), &m, s));
    assert_laws("wide block", &orbit, &operator, true);
    let plain = sample(draws, |s| orbit_draw(&DMatrix::zeros(n, 0), &m, s));
    assert_laws("wide block, nothing fixed", &plain, &operator, false);
}

/// A rank-deficient block (column 3 = column 0 + 2·column 1) with `1ₙ` and one kept column fixed.
#[test]
fn rank_deficient_blocks_have_the_operator_law() {
    let (n, draws) = (30, 2000);
    let mut m = block(n, 4);
    let dependent = m.column(0) + m.column(1) * 2.0;
    m.set_column(3, &dependent);
    let mut fixed = DMatrix::from_element(n, 2, 1.0);
    fixed.set_column(1, &m.column(2));
    let orbit = sample(draws, |s| orbit_draw(&fixed, &m, s));
    let operator = sample(draws, |s| operator_draw(&fixed, &m, s));
    assert_laws("rank-deficient block", &orbit, &operator, true);
    let plain = sample(draws, |s| orbit_draw(&DMatrix::zeros(n, 0), &m, s));
    assert_laws(
        "rank-deficient block, nothing fixed",
        &plain,
        &operator,
        false,
    );
}

/// The collector's release at `n = ORBIT_MIN_ROWS` (the orbit path) against the keyed operator
/// `A₁` keeping `1ₙ` fixed applied to the same stacked cohorts.
#[test]
fn the_collectors_release_has_the_operator_law_on_the_orbit_path() {
    let (n, draws) = (ORBIT_MIN_ROWS, 800);
    let design = Tm2Design::modified(2, 5, 1.0).unwrap();
    let m = block(n, design.p1());
    let release = |s: u64| {
        let collector = DataCollector::new(Key::teaching(10_000 + s), design.clone()).unwrap();
        let cohorts = [UnmaskedCohort {
            cohort: 0,
            data: m.clone(),
            qa: None,
        }];
        collector.release(&cohorts).unwrap().data
    };
    let released = sample(draws, release);
    let operator = sample(draws, |s| operator_draw(&ones(n), &m, s));
    assert_laws("release at ORBIT_MIN_ROWS", &released, &operator, true);
    let plain = sample(draws, |s| orbit_draw(&DMatrix::zeros(n, 0), &m, s));
    assert_laws("release, nothing fixed", &plain, &operator, false);
}
