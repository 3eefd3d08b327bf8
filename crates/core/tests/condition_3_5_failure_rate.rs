//! Condition (3.5) fails at the Appendix C noise level no more often than the design reports.
//!
//! `protocol::design::appendix_c_bound` gives `σ_min` and an upper bound `b` on
//! `Pr[λ_min(X₂X₂ᵀ) ≤ λ_max(X₁X₁ᵀ)]` for every `X₁` with entries at most `x_max`. The worst case
//! of its first step, `λ_max(X₁X₁ᵀ) ≤ n p₁ x_max²`, is attained by `X₁ = x_max·1ₙ1ᵀ`, so the
//! simulation uses exactly that (answers and QA constant all equal to `x_max`) and pads with the
//! protocol's own `Tm2Design::pad` at `σ = σ_min`. Over `TRIALS` independent cohorts the number
//! of failures must not exceed the one-sided binomial bound `N b + z_{0.001} √(N b (1 − b))`.
//!
//! Shapes are small (`n ≤ 10`) and δ large so that `b` is not tiny (0.01–0.5) and the check has
//! power: with σ a tenth of `σ_min` (a bound off by a factor of ten) failures are frequent and the
//! same check rejects. (The bound is conservative — Davidson–Szarek's tail is loose at these
//! sizes — so a σ only a few times too small can still pass.)

mod common;

use common::allowed_failures;
use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::protocol::design::{appendix_c_bound, condition_3_5_margin};
use orthomask_core::protocol::tm2::Tm2Design;

const TRIALS: u64 = 2000;

/// Failures of condition (3.5) among `TRIALS` cohorts of `n` worst-case records.
fn failures(n: usize, answers: usize, p2: usize, x_max: f64, sigma: f64, seed: u64) -> u64 {
    let design = Tm2Design::modified(answers, p2, sigma)
        .unwrap()
        .with_qa(Some(x_max))
        .unwrap();
    let (p1, p) = (design.p1(), design.p());
    let record = vec![x_max; answers];
    let mut count = 0;
    for trial in 0..TRIALS {
        let mut padded = DMatrix::zeros(n, p);
        for i in 0..n {
            let mut noise = Key::teaching(seed)
                .stream(StreamId::ParticipantNoise {
                    participant: trial * n as u64 + i as u64,
                })
                .rng();
            let x = design.pad(&record, &mut noise).unwrap();
            padded.row_mut(i).copy_from_slice(&x);
        }
        let x1 = padded.columns(0, p1).into_owned();
        let x2 = padded.columns(p1, p2).into_owned();
        if condition_3_5_margin(&x1, &x2).unwrap() <= 1.0 {
            count += 1;
        }
    }
    count
}

#[test]
fn condition_3_5_fails_no_more_often_than_the_reported_bound() {
    // (n, answers, p₂, δ): p₁ = answers + 1 (the QA column).
    for (n, answers, p2, delta) in [(10, 1, 40, 0.9), (6, 2, 30, 0.8), (4, 1, 30, 0.95)] {
        let x_max = 5.0;
        let bound = appendix_c_bound(n, answers + 1, p2, x_max, delta).unwrap();
        let b = bound.failure_probability;
        assert!(
            (0.01..0.5).contains(&b),
            "shape n = {n}, p2 = {p2}: bound {b} gives the check no power"
        );
        let at_bound = failures(
            n,
            answers,
            p2,
            x_max,
            bound.sigma_min * (1.0 + 1e-9),
            n as u64,
        );
        assert!(
            (at_bound as f64) <= allowed_failures(TRIALS, b),
            "n = {n}, p2 = {p2}, δ = {delta}: {at_bound} failures in {TRIALS}, bound {b}"
        );
        // Power: a tenth of σ_min fails far more often than the bound allows.
        let too_low = failures(
            n,
            answers,
            p2,
            x_max,
            bound.sigma_min / 10.0,
            1000 + n as u64,
        );
        assert!(
            (too_low as f64) > allowed_failures(TRIALS, b),
            "n = {n}, p2 = {p2}: a wrong σ failed only {too_low} times in {TRIALS} (bound {b})"
        );
    }
}
