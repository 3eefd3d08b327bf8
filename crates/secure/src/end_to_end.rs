//! One call for the whole two-agency secure product: what
//! `orthomask secure-product --a A.csv --b B.csv --json` runs (the command-line tool reads the
//! files and serialises the report; this crate does neither).
//!
//! Steps, each by the agency that would do it in a real deployment:
//!
//! 1. A and B each screen their own columns for rare values
//!    ([`check_rare_values`]), kept as warnings;
//! 2. the [`protocol`](crate::protocol) runs: A draws and self-checks `Z`, B checks and answers,
//!    A computes `XᵀY` and shares it;
//! 3. as §3.1 has them do, A shares its column sums and centred `XᵀX`, B the same for `Y`;
//!    from the assembled cross-products each side checks whether its columns are predictable from
//!    the other's ([`check_cross_prediction`](crate::breach::check_cross_prediction)).
//!
//! The report carries `XᵀY`, the dimensions (with `g`), the constraint counts each side learned
//! (the paper's and the exact ones) and the warnings. A refusal or infeasibility is an error that
//! still carries the warnings of step 1, since they usually explain it (a column non-zero for a
//! single subject makes B refuse `Z`).

use crate::assembly::screen;
use crate::breach::{AgencyFinding, BreachError, check_rare_values};
use crate::cross_products::{CrossProducts, centre};
use crate::disclosure::ConstraintCount;
use crate::feasibility::Dimensions;
use crate::protocol::{AgencyA, AgencyB, ProtocolError, run};
use nalgebra::{DMatrix, DVector};
use orthomask_core::key::KeyedStream;

/// Errors of the end-to-end secure product.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EndToEndError {
    /// The protocol could not run or was refused.
    #[error("{source}")]
    Protocol {
        /// Why.
        #[source]
        source: ProtocolError,
        /// The screening warnings of step 1, which often explain a refusal.
        warnings: Vec<AgencyFinding>,
    },
    /// The post-protocol screening failed.
    #[error(transparent)]
    Screening(#[from] BreachError),
}

/// The result of [`secure_product`].
#[derive(Clone, Debug, PartialEq)]
pub struct SecureProductReport {
    product: DMatrix<f64>,
    dimensions: Dimensions,
    a_learned: ConstraintCount,
    b_learned: ConstraintCount,
    warnings: Vec<AgencyFinding>,
}

impl SecureProductReport {
    /// `XᵀY` (p × q), as both agencies hold it at the end.
    pub fn product(&self) -> &DMatrix<f64> {
        &self.product
    }

    /// `n`, `p`, `q` and `g = ⌊(n − p)/2⌋`.
    pub fn dimensions(&self) -> &Dimensions {
        &self.dimensions
    }

    /// Linear constraints A learned about B's `Y`.
    pub fn a_learned(&self) -> &ConstraintCount {
        &self.a_learned
    }

    /// Linear constraints B learned about A's `X`.
    pub fn b_learned(&self) -> &ConstraintCount {
        &self.b_learned
    }

    /// Warnings about what the data disclose through the product; `agency` 0 is A, 1 is B, and
    /// columns are local to that agency.
    pub fn warnings(&self) -> &[AgencyFinding] {
        &self.warnings
    }
}

/// Run the secure product of `a` (agency A's `X`, n × p, generates `Z` from `stream`) and `b`
/// (agency B's `Y`, n × q) with every check, as described in the [module documentation](self).
///
/// The roles are taken as given: A is the first matrix. (The paper labels the agencies so that A
/// has fewer columns; [`choose_generator`](crate::feasibility::choose_generator) explains why the
/// other labelling usually protects better. The caller decides.)
///
/// # Example
/// ```
/// use nalgebra::DMatrix;
/// use orthomask_core::key::{Key, StreamId};
/// use orthomask_secure::end_to_end::secure_product;
///
/// let x = DMatrix::from_fn(50, 2, |i, j| ((7 * i + 3 * j) % 11) as f64 + j as f64);
/// let y = DMatrix::from_fn(50, 1, |i, _| (i as f64).sqrt());
/// let stream = Key::teaching(1).stream(StreamId::Scratch(0)); // a teaching key: demo only
/// let report = secure_product(&x, &y, &stream).unwrap();
/// assert!((report.product() - x.transpose() * &y).amax() < 1e-8);
/// assert_eq!(report.dimensions().complement_columns(), 24); // g = ⌊(50 − 2)/2⌋
/// assert_eq!(report.a_learned().independent(), 26); // (n − g)·q
/// ```
///
/// # Errors
/// [`EndToEndError::Protocol`] with the step-1 warnings when the dimensions are infeasible, a
/// matrix is rank deficient or not finite, or a check refuses `Z`;
/// [`EndToEndError::Screening`] if the cross-products cannot be screened.
pub fn secure_product(
    a: &DMatrix<f64>,
    b: &DMatrix<f64>,
    stream: &KeyedStream,
) -> Result<SecureProductReport, EndToEndError> {
    let early: Vec<AgencyFinding> = [a, b]
        .iter()
        .enumerate()
        .flat_map(|(agency, data)| {
            check_rare_values(data)
                .into_iter()
                .map(move |finding| AgencyFinding { agency, finding })
        })
        .collect();
    let outcome = AgencyA::new(a.clone())
        .and_then(|sender| Ok((sender, AgencyB::new(b.clone())?)))
        .and_then(|(sender, receiver)| run(sender, receiver, stream));
    let (a_outcome, b_outcome) = match outcome {
        Ok(outcomes) => outcomes,
        Err(source) => {
            return Err(EndToEndError::Protocol {
                source,
                warnings: early,
            });
        }
    };

    // §3.1: each agency shares its column sums and its own block of centred cross-products;
    // the cross block follows from the shared product, C_xy = XᵀY − s_x s_yᵀ/n.
    let (n, p, q) = (a.nrows(), a.ncols(), b.ncols());
    let (a_sums, a_centred) = centre(a);
    let (b_sums, b_centred) = centre(b);
    let product = a_outcome.product();
    let mut centred = DMatrix::zeros(p + q, p + q);
    centred
        .view_mut((0, 0), (p, p))
        .copy_from(&(a_centred.transpose() * &a_centred));
    centred
        .view_mut((p, p), (q, q))
        .copy_from(&(b_centred.transpose() * &b_centred));
    let cross = product - &a_sums * b_sums.transpose() / n as f64;
    centred.view_mut((0, p), (p, q)).copy_from(&cross);
    centred
        .view_mut((p, 0), (q, p))
        .copy_from(&cross.transpose());
    let mut sums = DVector::zeros(p + q);
    sums.rows_mut(0, p).copy_from(&a_sums);
    sums.rows_mut(p, q).copy_from(&b_sums);
    let cross_products = CrossProducts::from_parts(n, sums, centred, [p, q].into_iter());
    let warnings = screen(&[a.clone(), b.clone()], &cross_products)?;

    Ok(SecureProductReport {
        product: product.clone(),
        dimensions: *a_outcome.dimensions(),
        a_learned: *a_outcome.learned(),
        b_learned: *b_outcome.learned(),
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::breach::Finding;
    use crate::feasibility::FeasibilityError;
    use crate::tolerance::SECURE_PRODUCT;
    use orthomask_core::key::{Key, StreamId};
    use orthomask_core::random::fill_standard_normal;

    fn gaussian(rows: usize, cols: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = Key::teaching(seed).stream(StreamId::Scratch(6000)).rng();
        let mut buf = vec![0.0; rows * cols];
        fill_standard_normal(&mut rng, &mut buf);
        DMatrix::from_fn(rows, cols, |i, j| 50.0 + 10.0 * buf[i + rows * j])
    }

    fn stream() -> KeyedStream {
        Key::teaching(11).stream(StreamId::Scratch(0))
    }

    #[test]
    fn clean_data_give_the_product_and_the_counts() {
        let (x, y) = (gaussian(60, 2, 1), gaussian(60, 3, 2));
        let report = secure_product(&x, &y, &stream()).unwrap();
        let direct = x.transpose() * &y;
        let scale = x.amax() * y.amax() * 60.0;
        assert!((report.product() - direct).amax() <= SECURE_PRODUCT * scale);
        let d = report.dimensions();
        assert_eq!(
            (
                d.subjects(),
                d.sender_columns(),
                d.receiver_columns(),
                d.complement_columns()
            ),
            (60, 2, 3, 29)
        );
        // Paper: A 29 + 6 = 35, B 60 − 29 + 6 = 37; exact: A 31·3 = 93, B (29 + 3)·2 = 64.
        assert_eq!(
            (report.a_learned().paper(), report.a_learned().independent()),
            (35, 93)
        );
        assert_eq!(
            (report.b_learned().paper(), report.b_learned().independent()),
            (37, 64)
        );
        assert!(report.warnings().is_empty());
    }

    /// §2.3: a column non-zero for one subject. A warns about it; B refuses Z because Z must
    /// vanish on that subject, making column i of I − ZZᵀ the unit vector e_i.
    #[test]
    fn single_subject_indicator_is_warned_and_refused() {
        let mut x = gaussian(60, 2, 3);
        x.set_column(
            1,
            &DMatrix::from_fn(60, 1, |i, _| f64::from(u8::from(i == 17))).column(0),
        );
        let err = secure_product(&x, &gaussian(60, 2, 4), &stream()).unwrap_err();
        match err {
            EndToEndError::Protocol {
                source: ProtocolError::Refused { findings },
                warnings,
            } => {
                assert!(
                    findings
                        .iter()
                        .any(|f| matches!(f, Finding::NearUnitColumn { subject: 17, .. }))
                );
                assert_eq!(
                    warnings,
                    vec![AgencyFinding {
                        agency: 0,
                        finding: Finding::RareIndicator {
                            column: 1,
                            rare_value: 1,
                            count: 1,
                            threshold: 5
                        }
                    }]
                );
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn rare_indicator_and_predictable_column_are_warned() {
        let mut x = gaussian(60, 2, 5);
        x.set_column(
            1,
            &DMatrix::from_fn(60, 1, |i, _| f64::from(u8::from(i % 20 == 3))).column(0),
        );
        let mut y = gaussian(60, 2, 6);
        let predictable = x.column(0) * 3.0 + y.column(0) * 0.01;
        y.set_column(0, &predictable);
        let report = secure_product(&x, &y, &stream()).unwrap();
        let warnings = report.warnings();
        assert!(warnings.contains(&AgencyFinding {
            agency: 0,
            finding: Finding::RareIndicator {
                column: 1,
                rare_value: 1,
                count: 3,
                threshold: 5
            }
        }));
        assert!(
            warnings.iter().any(|w| w.agency == 1
                && matches!(w.finding, Finding::CrossPredictable { column: 0, .. }))
        );
        // x₀ is predicted from y₀ just as well: the disclosure goes both ways.
        assert!(
            warnings.iter().any(|w| w.agency == 0
                && matches!(w.finding, Finding::CrossPredictable { column: 0, .. }))
        );
    }

    #[test]
    fn infeasible_dimensions_give_a_clear_error() {
        let err = secure_product(&gaussian(10, 1, 7), &gaussian(10, 6, 8), &stream()).unwrap_err();
        assert_eq!(
            err,
            EndToEndError::Protocol {
                source: ProtocolError::Feasibility(FeasibilityError::ReceiverWouldRecoverSender {
                    subjects: 10,
                    complement_columns: 4,
                    receiver_columns: 6
                }),
                warnings: vec![]
            }
        );
        assert!(err.to_string().contains("could solve for it"));
        let err = secure_product(&gaussian(10, 1, 7), &gaussian(11, 1, 8), &stream()).unwrap_err();
        assert!(err.to_string().contains("align"), "{err}");
    }
}
