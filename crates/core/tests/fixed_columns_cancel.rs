//! Issue 21 §3: under left masks that keep `F = [1ₙ, X_keep]` fixed, the QA column and the kept
//! columns cancel from Appendix B's condition, so condition (3.5) is needed on the masked answers
//! `X_m` alone (`orthomask_core::protocol::design`, "Masks that keep columns fixed").
//!
//! Appendix B of seed 000 needs `M(P) = X₁X₁ᵀ + X₂X₂ᵀ − P X₁X₁ᵀPᵀ ≻ 0` for every `P` an attacker
//! cannot rule out. The cohort here has `X₁ = [X_m, q·1ₙ, x_keep]` with the QA constant
//! `q = 888`, so `λ_max(X₁X₁ᵀ) ≥ 888²·n` and condition (3.5) on the whole `X₁` fails in every
//! draw; the noise is the Appendix C level for the one masked answer column only. The test
//! performs what the derivation claims, with the product's own stabiliser masks
//! (`FixedSubspaceHaar` of `F`):
//!
//! * the `F` terms cancel: `X₁X₁ᵀ − P X₁X₁ᵀPᵀ = X_mX_mᵀ − P X_mX_mᵀPᵀ` to rounding;
//! * the reduced condition `λ_min(X₂X₂ᵀ) > λ_max(X_mX_mᵀ)` fails no more often than the
//!   Appendix C bound `b` for `p_m = 1` allows (one-sided binomial bound at α = 0.001);
//! * whenever it holds, `M(P)` is positive definite (Weyl's inequality, as in Appendix B);
//! * power: for `P` Haar on all of `O(n)`, which moves `F`, `M(P)` is indefinite in (almost)
//!   every draw — so the cancellation, not the noise, is what carries the guarantee, and a mask
//!   that stopped fixing `F` would fail this test.

mod common;

use common::allowed_failures;
use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{FixedSubspaceHaar, HaarOrthogonal, Mask};
use orthomask_core::protocol::design::{appendix_c_bound, condition_3_5_margin};
use orthomask_core::random::normal::fill_standard_normal;

const TRIALS: u64 = 2000;
const N: usize = 8;
const P2: usize = 40;
const DELTA: f64 = 0.9;
const QA_CONSTANT: f64 = 888.0;

/// Rounding allowed on `X₁X₁ᵀ − P X₁X₁ᵀPᵀ`, relative to `‖X₁‖_F²` (a few hundred ulps of an
/// 8 × 8 product of entries of size 888).
const CANCELLATION_RELATIVE: f64 = 1e-13;

/// Share of draws in which a mask that moves `F` must break Appendix B's condition.
const MOVING_MASK_BREAKS_AT_LEAST: f64 = 0.99;

/// The masked answers: one worst-case column (`‖X_m‖_F² = n·x_max²` with `x_max = 1`) that is
/// not in the span of `F`.
fn masked_answers() -> DMatrix<f64> {
    DMatrix::from_fn(N, 1, |i, _| if i % 2 == 0 { 1.0 } else { -1.0 })
}

/// A kept column (say, ages) the masks pass through.
fn kept_column() -> DMatrix<f64> {
    DMatrix::from_fn(N, 1, |i, _| 18.0 + 7.0 * i as f64 - (i * i) as f64)
}

/// `X₁ = [X_m, q·1ₙ, x_keep]`.
fn whole_x1() -> DMatrix<f64> {
    let mut x1 = DMatrix::zeros(N, 3);
    x1.set_column(0, &masked_answers().column(0));
    x1.set_column(1, &DMatrix::from_element(N, 1, QA_CONSTANT).column(0));
    x1.set_column(2, &kept_column().column(0));
    x1
}

/// The columns the left masks keep fixed: `1ₙ` (the QA column is a multiple of it) and `x_keep`.
fn fixed_columns() -> DMatrix<f64> {
    let mut f = DMatrix::from_element(N, 2, 1.0);
    f.set_column(1, &kept_column().column(0));
    f
}

fn dense(mask: &dyn Mask) -> DMatrix<f64> {
    let mut m = DMatrix::identity(N, N);
    mask.left_apply(&mut m).unwrap();
    m
}

fn smallest_eigenvalue(m: &DMatrix<f64>) -> f64 {
    m.clone()
        .symmetric_eigenvalues()
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
}

/// `M(P) = X₁X₁ᵀ + X₂X₂ᵀ − P X₁X₁ᵀPᵀ`.
fn appendix_b_matrix(x1: &DMatrix<f64>, x2: &DMatrix<f64>, p: &DMatrix<f64>) -> DMatrix<f64> {
    let g1 = x1 * x1.transpose();
    &g1 + x2 * x2.transpose() - p * &g1 * p.transpose()
}

#[test]
fn the_qa_and_kept_columns_cancel_under_masks_that_fix_them() {
    let bound = appendix_c_bound(N, 1, P2, 1.0, DELTA).unwrap();
    let b = bound.failure_probability;
    assert!(
        (0.01..0.5).contains(&b),
        "bound {b} gives the check no power"
    );
    let sigma = bound.sigma_min * (1.0 + 1e-9);
    let (x_m, x1, f) = (masked_answers(), whole_x1(), fixed_columns());
    let scale = x1.norm_squared();
    let key = Key::teaching(21);

    let (mut reduced_failures, mut moving_breaks) = (0_u64, 0_u64);
    for trial in 0..TRIALS {
        let mut x2 = DMatrix::zeros(N, P2);
        let mut noise = key
            .stream(StreamId::ParticipantNoise { participant: trial })
            .rng();
        fill_standard_normal(&mut noise, x2.as_mut_slice());
        x2 *= sigma;

        assert!(
            condition_3_5_margin(&x1, &x2).unwrap() < 1.0,
            "trial {trial}: condition (3.5) on the whole X₁ held, so nothing is tested"
        );

        let fixing =
            dense(&FixedSubspaceHaar::keyed(&f, key.stream(StreamId::Scratch(trial))).unwrap());
        let whole = &x1 * x1.transpose() - &fixing * &x1 * x1.transpose() * fixing.transpose();
        let masked = &x_m * x_m.transpose() - &fixing * &x_m * x_m.transpose() * fixing.transpose();
        assert!(
            (&whole - &masked).norm() <= CANCELLATION_RELATIVE * scale,
            "trial {trial}: the F terms did not cancel ({:e})",
            (&whole - &masked).norm()
        );

        if condition_3_5_margin(&x_m, &x2).unwrap() > 1.0 {
            let lowest = smallest_eigenvalue(&appendix_b_matrix(&x1, &x2, &fixing));
            assert!(
                lowest > 0.0,
                "trial {trial}: reduced condition held but M(P) has eigenvalue {lowest}"
            );
        } else {
            reduced_failures += 1;
        }

        let moving = dense(
            &HaarOrthogonal::keyed(N, key.stream(StreamId::Scratch(TRIALS + trial))).unwrap(),
        );
        if smallest_eigenvalue(&appendix_b_matrix(&x1, &x2, &moving)) < 0.0 {
            moving_breaks += 1;
        }
    }
    assert!(
        (reduced_failures as f64) <= allowed_failures(TRIALS, b),
        "{reduced_failures} failures of the reduced condition in {TRIALS}, bound {b}"
    );
    assert!(
        moving_breaks as f64 >= MOVING_MASK_BREAKS_AT_LEAST * TRIALS as f64,
        "a mask that moves F broke Appendix B's condition in only {moving_breaks} of {TRIALS} draws"
    );
}
