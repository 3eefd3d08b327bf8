//! The attack the breach check used to miss (seed 001 §2.3, "other bogus Z could yield similar
//! disclosures"): agency A sends a `Z` with two equal rows. It is orthonormal, orthogonal to A's
//! data, has the prescribed number of columns, and every column of `I − ZZᵀ` looks honest — yet
//! `e_j − e_k ∈ ran(Z)^⟂`, so the reply `W = (I − ZZᵀ)Y` hands A the difference `y_j − y_k` of
//! B's values exactly. We build the `Z`, show the leak, and show that B now refuses it.

use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::random::fill_standard_normal;
use orthomask_secure::breach::{
    Finding, check_column_count, check_dependent_rows, check_orthogonal_to_sender,
    check_orthonormal, check_unit_columns, inspect_offer,
};
use orthomask_secure::complement::OrthogonalComplement;
use orthomask_secure::feasibility::complement_columns;
use orthomask_secure::protocol::{AgencyB, ComplementOffer, ProtocolError};
use orthomask_secure::tolerance::{DEPENDENCE_COMBINATION, HAND_COMPUTED};

fn gaussian(rows: usize, cols: usize, seed: u64) -> DMatrix<f64> {
    let mut rng = Key::teaching(seed).stream(StreamId::Scratch(7)).rng();
    let mut buf = vec![0.0; rows * cols];
    fill_standard_normal(&mut rng, &mut buf);
    DMatrix::from_vec(rows, cols, buf)
}

const N: usize = 80;
const P: usize = 3;
const J: usize = 11;
const K: usize = 52;

/// A's bogus `Z`: a random orthonormal frame of the complement of `[X, v]` (instead of `X`
/// alone), so that `Zᵀv = 0`. With `v = e_J − e_K` that makes rows `J` and `K` of `Z` equal.
fn bogus_z(x: &DMatrix<f64>, v: &DMatrix<f64>) -> DMatrix<f64> {
    let mut augmented = x.clone().insert_column(P, 0.0);
    augmented.set_column(P, &v.column(0));
    OrthogonalComplement::of(&augmented)
        .unwrap()
        .random_frame(
            complement_columns(N, P),
            &Key::teaching(5).stream(StreamId::Scratch(1)),
        )
        .unwrap()
}

fn difference(scale_k: f64) -> DMatrix<f64> {
    DMatrix::from_fn(N, 1, |i, _| {
        if i == J {
            1.0
        } else if i == K {
            scale_k
        } else {
            0.0
        }
    })
}

#[test]
fn equal_rows_leak_a_difference_and_are_refused() {
    let x = gaussian(N, P, 1);
    let y = gaussian(N, 2, 2);
    let z = bogus_z(&x, &difference(-1.0));

    // Rows J and K are equal, and Z passes every check that existed before.
    assert!((z.row(J) - z.row(K)).amax() < HAND_COMPUTED);
    assert!(check_column_count(&z, P).is_none());
    assert!(check_orthonormal(&z).is_none());
    assert!(check_orthogonal_to_sender(&z, &x).unwrap().is_none());
    assert!(check_unit_columns(&z).is_empty());

    // The leak: W = (I − ZZᵀ)Y, and (e_J − e_K)ᵀW = y_J − y_K for every column of Y.
    let w = &y - &z * (z.transpose() * &y);
    for c in 0..y.ncols() {
        let learned = w[(J, c)] - w[(K, c)];
        let truth = y[(J, c)] - y[(K, c)];
        assert!(
            (learned - truth).abs() < HAND_COMPUTED,
            "{learned} vs {truth}"
        );
    }

    // The refusal: the new check names the pair and the combination (1, −1)/√2.
    let findings = check_dependent_rows(&z);
    assert_eq!(findings.len(), 1, "{findings:?}");
    match findings[0] {
        Finding::DependentRows {
            subjects,
            combination: (alpha, beta),
            share,
            ..
        } => {
            assert_eq!(subjects, (J, K));
            assert!((share - 1.0).abs() < HAND_COMPUTED);
            let half = std::f64::consts::FRAC_1_SQRT_2;
            assert!(
                (alpha - half).abs() < DEPENDENCE_COMBINATION
                    && (beta + half).abs() < DEPENDENCE_COMBINATION
            );
        }
        ref other => panic!("unexpected {other:?}"),
    }
    let reason = findings[0].to_string();
    assert!(
        reason.contains("rows 11 and 52") && !reason.contains('\n'),
        "{reason}"
    );

    // And B, answering through the protocol, refuses to send W.
    let b = AgencyB::new(y).unwrap();
    match b.respond(&ComplementOffer::new(z, P)) {
        Err(ProtocolError::Refused { findings }) => assert!(findings.iter().any(|f| matches!(
            f,
            Finding::DependentRows {
                subjects: (J, K),
                ..
            }
        ))),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Any dependency of two rows leaks a combination: built with `Zᵀ(e_J + e_K) = 0` (so
/// `z_J = −z_K`, opposite rows), `Z` lets A read the sum `y_J + y_K` exactly; the check reports
/// the combination `(1, 1)/√2`. (A lopsided pair, `Zᵀ(e_J + 3e_K) = 0`, also shrinks row `K`,
/// which the single-subject check then refuses on its own.)
#[test]
fn opposite_rows_leak_a_sum_and_are_refused() {
    let x = gaussian(N, P, 3);
    let y = gaussian(N, 1, 4);
    let z = bogus_z(&x, &difference(1.0));
    let w = &y - &z * (z.transpose() * &y);
    let learned = w[(J, 0)] + w[(K, 0)];
    assert!((learned - (y[(J, 0)] + y[(K, 0)])).abs() < HAND_COMPUTED);
    assert!(check_unit_columns(&z).is_empty());
    let half = std::f64::consts::FRAC_1_SQRT_2;
    match inspect_offer(&z, P).as_slice() {
        [
            Finding::DependentRows {
                subjects: (J, K),
                combination: (alpha, beta),
                ..
            },
        ] => {
            assert!(
                (alpha - half).abs() < DEPENDENCE_COMBINATION
                    && (beta - half).abs() < DEPENDENCE_COMBINATION
            );
        }
        other => panic!("unexpected {other:?}"),
    }
    let lopsided = bogus_z(&x, &difference(3.0));
    assert!(
        inspect_offer(&lopsided, P)
            .iter()
            .any(|f| matches!(f, Finding::NearUnitColumn { subject: K, .. }))
    );
}

/// An honest `Z` for the same data draws no pair finding: the leak came from the bogus
/// construction, not from the data.
#[test]
fn the_honest_z_for_the_same_data_passes() {
    let x = gaussian(N, P, 1);
    let z = OrthogonalComplement::of(&x)
        .unwrap()
        .random_frame(
            complement_columns(N, P),
            &Key::teaching(5).stream(StreamId::Scratch(1)),
        )
        .unwrap();
    assert!(inspect_offer(&z, P).is_empty());
}
