//! The two-agency secure matrix product of seed 001 §2.1, with one type per party and state, and
//! the messages between them as explicit values.
//!
//! ```text
//!  Agency A (holds X, n×p)                         Agency B (holds Y, n×q)
//!  AgencyA::new(X)                                 AgencyB::new(Y)
//!  .offer(q, stream) ──── ComplementOffer {Z, p} ──▶ .respond(&offer)     checks Z (§2.3)
//!                                                      W = (I − ZZᵀ)Y
//!  AwaitingReply ◀──────── ProjectedReply {W} ────── AwaitingProduct
//!  .finish(&reply): XᵀW = XᵀY
//!  Outcome ────────────── SharedProduct {XᵀY} ─────▶ .receive(&product) → Outcome
//! ```
//!
//! Each state holds only what that agency may know: A never holds `Y`, B never holds `X`; the
//! messages are the only values that cross. Each [`Outcome`] reports the linear constraints its
//! holder learned about the other's data ([`disclosure`](crate::disclosure)).
//!
//! # Deviation: B projects with its own basis of `ran(Z)`
//! §2.1 step 2 computes `W = (I − ZZᵀ)Y` with the received `Z`. B first checks `Z` (and refuses a
//! bad one, see [`breach`](crate::breach)), then computes `W = (I − QQᵀ)Y` with `Q` an orthonormal
//! basis of `ran(Z)` from its own Householder QR of `Z`. In exact arithmetic, for an orthonormal
//! `Z`, the two are equal (`QQᵀ = ZZᵀ`) and so is the product (`XᵀQ = 0` because `ran Q = ran Z`).
//! In floating point, a `Z` scaled by `1 + δ` with `δ` below the orthonormality threshold would
//! make `I − ZZᵀ` act as `−2δ` on `ran(Z)` and leak `ZᵀY` to A at relative precision `ε/δ`;
//! re-orthonormalising removes that channel.
//!
//! # Semi-honesty
//! As in the paper, both agencies are assumed to follow the protocol; the checks catch a sender
//! that does not (§2.3) but A cannot verify that `W` was computed from B's real `Y`.

use crate::breach::{
    BreachError, Finding, Severity, check_orthogonal_to_sender, check_orthonormal, inspect_offer,
};
use crate::complement::{ComplementError, OrthogonalComplement};
use crate::disclosure::{ConstraintCount, Disclosure};
use crate::feasibility::{Dimensions, FeasibilityError};
use crate::householder::HouseholderQr;
use crate::tolerance::COLLINEARITY;
use nalgebra::DMatrix;
use orthomask_core::key::KeyedStream;

/// Errors of the two-agency protocol.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ProtocolError {
    /// The dimensions do not allow a safe product.
    #[error(transparent)]
    Feasibility(#[from] FeasibilityError),
    /// Agency A's data cannot give a `Z`, or drawing it failed.
    #[error("agency A: {0}")]
    Sender(#[from] ComplementError),
    /// Agency B's data contain NaN or an infinity.
    #[error("agency B's data contain a missing or non-finite value; impute or drop it first")]
    ReceiverNonFinite,
    /// A column of agency B's data depends linearly on the ones before it.
    #[error(
        "agency B: column {column} is a linear combination of the columns before it (only \
         {share:.2e} of its sum of squares is new); remove it (seed 001 §2.1 assumes full rank)"
    )]
    ReceiverDependentColumn {
        /// 0-based column.
        column: usize,
        /// Squared sine against the earlier columns.
        share: f64,
    },
    /// B refused `Z`.
    #[error("agency B refused Z: {}", list(.findings))]
    Refused {
        /// Every check that fired.
        findings: Vec<Finding>,
    },
    /// A's own check of `Z` failed, so A did not send it.
    #[error("agency A's Z failed its own check and was not sent: {}", list(.findings))]
    SelfCheckFailed {
        /// Every check that fired.
        findings: Vec<Finding>,
    },
    /// A message has the wrong shape.
    #[error("{message} is {found:?} but should be {expected:?} (rows, columns)")]
    MessageShape {
        /// Which message.
        message: &'static str,
        /// Expected shape.
        expected: (usize, usize),
        /// Received shape.
        found: (usize, usize),
    },
    /// A message contains NaN or an infinity.
    #[error("{message} contains a non-finite value")]
    MessageNonFinite {
        /// Which message.
        message: &'static str,
    },
    /// A check could not be run.
    #[error(transparent)]
    Breach(#[from] BreachError),
}

fn list(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Message 1, A → B: the matrix `Z` and the number `p` of A's columns.
#[derive(Clone, Debug, PartialEq)]
pub struct ComplementOffer {
    z: DMatrix<f64>,
    announced_columns: usize,
}

impl ComplementOffer {
    /// An offer as it arrives (from [`AgencyA::offer`], or from another implementation).
    pub fn new(z: DMatrix<f64>, announced_columns: usize) -> Self {
        Self {
            z,
            announced_columns,
        }
    }

    /// `Z` (n × g).
    pub fn z(&self) -> &DMatrix<f64> {
        &self.z
    }

    /// `p` as announced by A; B needs it to check that `g = ⌊(n − p)/2⌋`.
    pub fn announced_columns(&self) -> usize {
        self.announced_columns
    }
}

/// Message 2, B → A: `W = (I − ZZᵀ)Y` (n × q).
#[derive(Clone, Debug, PartialEq)]
pub struct ProjectedReply {
    w: DMatrix<f64>,
}

impl ProjectedReply {
    /// A reply as it arrives.
    pub fn new(w: DMatrix<f64>) -> Self {
        Self { w }
    }

    /// `W`.
    pub fn w(&self) -> &DMatrix<f64> {
        &self.w
    }
}

/// Message 3, A → B: the product `XᵀY` (p × q), shared as §2.1 intends.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedProduct {
    product: DMatrix<f64>,
}

impl SharedProduct {
    /// A product as it arrives.
    pub fn new(product: DMatrix<f64>) -> Self {
        Self { product }
    }

    /// `XᵀY`.
    pub fn product(&self) -> &DMatrix<f64> {
        &self.product
    }
}

/// What an agency holds at the end: the product and what it learned about the other's data.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    product: DMatrix<f64>,
    dimensions: Dimensions,
    learned: ConstraintCount,
}

impl Outcome {
    /// `XᵀY` (p × q).
    pub fn product(&self) -> &DMatrix<f64> {
        &self.product
    }

    /// The checked dimensions.
    pub fn dimensions(&self) -> &Dimensions {
        &self.dimensions
    }

    /// Linear constraints this agency learned about the other agency's data.
    pub fn learned(&self) -> &ConstraintCount {
        &self.learned
    }
}

/// Agency A before the protocol: its data `X` and their QR.
#[derive(Clone, Debug)]
pub struct AgencyA {
    x: DMatrix<f64>,
    complement: OrthogonalComplement,
}

impl AgencyA {
    /// Take `X` (n × p) and factor it (seed 001 Appendix A).
    ///
    /// # Errors
    /// [`ProtocolError::Sender`] when `X` is not finite, has no complement or is rank deficient.
    pub fn new(x: DMatrix<f64>) -> Result<Self, ProtocolError> {
        let complement = OrthogonalComplement::of(&x)?;
        Ok(Self { x, complement })
    }

    /// `n`.
    pub fn subjects(&self) -> usize {
        self.x.nrows()
    }

    /// `p`.
    pub fn columns(&self) -> usize {
        self.x.ncols()
    }

    /// Step 1: check the dimensions against B's announced `q`, draw `Z` (n × g) from `stream`,
    /// check it (orthonormal, orthogonal to `X`) and offer it.
    ///
    /// # Errors
    /// [`ProtocolError::Feasibility`] for infeasible dimensions, [`ProtocolError::Sender`] when
    /// the draw fails, [`ProtocolError::SelfCheckFailed`] when the drawn `Z` fails A's checks.
    pub fn offer(
        self,
        receiver_columns: usize,
        stream: &KeyedStream,
    ) -> Result<(AwaitingReply, ComplementOffer), ProtocolError> {
        let dimensions = Dimensions::new(self.subjects(), self.columns(), receiver_columns)?;
        let z = self
            .complement
            .random_frame(dimensions.complement_columns(), stream)?;
        let findings: Vec<Finding> = check_orthonormal(&z)
            .into_iter()
            .chain(check_orthogonal_to_sender(&z, &self.x)?)
            .collect();
        if !findings.is_empty() {
            return Err(ProtocolError::SelfCheckFailed { findings });
        }
        let offer = ComplementOffer::new(z.clone(), self.columns());
        Ok((
            AwaitingReply {
                x: self.x,
                z,
                dimensions,
            },
            offer,
        ))
    }
}

/// Agency A after step 1: it knows `X` and the `Z` it sent.
#[derive(Clone, Debug)]
pub struct AwaitingReply {
    x: DMatrix<f64>,
    z: DMatrix<f64>,
    dimensions: Dimensions,
}

impl AwaitingReply {
    /// The checked dimensions.
    pub fn dimensions(&self) -> &Dimensions {
        &self.dimensions
    }

    /// The `Z` A sent.
    pub fn z(&self) -> &DMatrix<f64> {
        &self.z
    }

    /// Step 3: `XᵀW = Xᵀ(I − ZZᵀ)Y = XᵀY` because `XᵀZ = 0`. Returns A's outcome and the product
    /// to share with B.
    ///
    /// # Errors
    /// [`ProtocolError::MessageShape`] when `W` is not n × q, [`ProtocolError::MessageNonFinite`].
    pub fn finish(self, reply: &ProjectedReply) -> Result<(Outcome, SharedProduct), ProtocolError> {
        let d = &self.dimensions;
        let expected = (d.subjects(), d.receiver_columns());
        if reply.w.shape() != expected {
            return Err(ProtocolError::MessageShape {
                message: "the reply W",
                expected,
                found: reply.w.shape(),
            });
        }
        if reply.w.iter().any(|v| !v.is_finite()) {
            return Err(ProtocolError::MessageNonFinite {
                message: "the reply W",
            });
        }
        let product = self.x.transpose() * &reply.w;
        let learned = *Disclosure::generic(d).sender_learned();
        let outcome = Outcome {
            product: product.clone(),
            dimensions: self.dimensions,
            learned,
        };
        Ok((outcome, SharedProduct::new(product)))
    }
}

/// Agency B before the protocol: its data `Y`.
#[derive(Clone, Debug)]
pub struct AgencyB {
    y: DMatrix<f64>,
}

impl AgencyB {
    /// Take `Y` (n × q), checking it is finite and of full column rank.
    ///
    /// # Errors
    /// [`ProtocolError::ReceiverNonFinite`], [`ProtocolError::ReceiverDependentColumn`].
    pub fn new(y: DMatrix<f64>) -> Result<Self, ProtocolError> {
        if y.iter().any(|v| !v.is_finite()) {
            return Err(ProtocolError::ReceiverNonFinite);
        }
        if let Some((column, share)) = HouseholderQr::new(&y).dependent_column(COLLINEARITY) {
            return Err(ProtocolError::ReceiverDependentColumn { column, share });
        }
        Ok(Self { y })
    }

    /// `n`.
    pub fn subjects(&self) -> usize {
        self.y.nrows()
    }

    /// `q`.
    pub fn columns(&self) -> usize {
        self.y.ncols()
    }

    /// Step 2: check the offer (dimensions, then every check of
    /// [`inspect_offer`]) and reply with `W = (I − QQᵀ)Y`, `Q` an
    /// orthonormal basis of `ran(Z)` (see the [module documentation](self)).
    ///
    /// # Errors
    /// [`ProtocolError::Feasibility`] when `Z`'s rows differ from B's subjects or the dimensions
    /// are infeasible; [`ProtocolError::Refused`] when any check fires.
    pub fn respond(
        self,
        offer: &ComplementOffer,
    ) -> Result<(AwaitingProduct, ProjectedReply), ProtocolError> {
        let dimensions =
            Dimensions::of_shapes((offer.z.nrows(), offer.announced_columns), self.y.shape())?;
        let findings = inspect_offer(&offer.z, offer.announced_columns);
        if findings.iter().any(|f| f.severity() == Severity::Reject) {
            return Err(ProtocolError::Refused { findings });
        }
        let basis = HouseholderQr::new(&offer.z).thin_q();
        let w = &self.y - &basis * (basis.transpose() * &self.y);
        let reply_rank = HouseholderQr::new(&w).rank(COLLINEARITY);
        let state = AwaitingProduct {
            dimensions,
            reply_rank,
            announced_columns: offer.announced_columns,
        };
        Ok((state, ProjectedReply::new(w)))
    }
}

/// Agency B after step 2: it knows `Y`, `Z` and `W` (only the rank of `W` is kept for the
/// accounting).
#[derive(Clone, Debug)]
pub struct AwaitingProduct {
    dimensions: Dimensions,
    reply_rank: usize,
    announced_columns: usize,
}

impl AwaitingProduct {
    /// The checked dimensions.
    pub fn dimensions(&self) -> &Dimensions {
        &self.dimensions
    }

    /// The numerical rank of the `W` B sent.
    pub fn reply_rank(&self) -> usize {
        self.reply_rank
    }

    /// Receive the shared product.
    ///
    /// # Errors
    /// [`ProtocolError::MessageShape`] unless it is p × q, [`ProtocolError::MessageNonFinite`].
    pub fn receive(self, product: &SharedProduct) -> Result<Outcome, ProtocolError> {
        let expected = (self.announced_columns, self.dimensions.receiver_columns());
        if product.product.shape() != expected {
            return Err(ProtocolError::MessageShape {
                message: "the shared product XᵀY",
                expected,
                found: product.product.shape(),
            });
        }
        if product.product.iter().any(|v| !v.is_finite()) {
            return Err(ProtocolError::MessageNonFinite {
                message: "the shared product XᵀY",
            });
        }
        let learned =
            *Disclosure::with_reply_rank(&self.dimensions, self.reply_rank).receiver_learned();
        Ok(Outcome {
            product: product.product.clone(),
            dimensions: self.dimensions,
            learned,
        })
    }
}

/// Run all three steps between two agencies in one call (both sides simulated in one process).
///
/// # Errors
/// Any [`ProtocolError`] of the steps.
pub fn run(
    a: AgencyA,
    b: AgencyB,
    stream: &KeyedStream,
) -> Result<(Outcome, Outcome), ProtocolError> {
    let (awaiting_reply, offer) = a.offer(b.columns(), stream)?;
    let (awaiting_product, reply) = b.respond(&offer)?;
    let (a_outcome, shared) = awaiting_reply.finish(&reply)?;
    let b_outcome = awaiting_product.receive(&shared)?;
    Ok((a_outcome, b_outcome))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::SECURE_PRODUCT;
    use orthomask_core::key::{Key, StreamId};
    use orthomask_core::random::fill_standard_normal;

    fn gaussian(rows: usize, cols: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = Key::teaching(seed)
            .stream(StreamId::Scratch(1000 + cols as u64))
            .rng();
        let mut buf = vec![0.0; rows * cols];
        fill_standard_normal(&mut rng, &mut buf);
        // Shift and scale so means and scales differ between columns, as in real data.
        DMatrix::from_fn(rows, cols, |i, j| {
            10.0 * j as f64 + (1.0 + j as f64) * buf[i + rows * j]
        })
    }

    fn bits(m: &DMatrix<f64>) -> Vec<u64> {
        m.iter().map(|v| v.to_bits()).collect()
    }

    fn assert_matches_direct(x: &DMatrix<f64>, y: &DMatrix<f64>, product: &DMatrix<f64>) {
        let direct = x.transpose() * y;
        for j in 0..x.ncols() {
            for k in 0..y.ncols() {
                let scale = x.column(j).norm() * y.column(k).norm();
                let error = (product[(j, k)] - direct[(j, k)]).abs();
                assert!(
                    error <= SECURE_PRODUCT * scale,
                    "entry ({j}, {k}): error {error:e}"
                );
            }
        }
    }

    /// The secure product equals XᵀY for several shapes (fixed keys), and both agencies end with
    /// the same matrix.
    #[test]
    fn secure_product_equals_direct_product() {
        for (n, p, q, seed) in [
            (40, 2, 3, 1),
            (41, 3, 7, 2),
            (57, 5, 1, 3),
            (64, 1, 1, 4),
            (90, 4, 4, 5),
        ] {
            let x = gaussian(n, p, seed);
            let y = gaussian(n, q, seed + 100);
            let stream = Key::teaching(seed).stream(StreamId::Scratch(7));
            let (a, b) = run(
                AgencyA::new(x.clone()).unwrap(),
                AgencyB::new(y.clone()).unwrap(),
                &stream,
            )
            .unwrap();
            assert_matches_direct(&x, &y, a.product());
            // Both agencies hold the very same numbers: B received A's product.
            assert_eq!(bits(a.product()), bits(b.product()));
            let g = (n - p) / 2;
            assert_eq!(a.dimensions().complement_columns(), g);
            // A: (n − g)·q constraints on Y; B: (g + q)·p on X (W has full rank q here).
            assert_eq!(a.learned().independent(), (n - g) * q);
            assert_eq!(b.learned().independent(), (g + q) * p);
            assert_eq!(a.learned().paper(), g + p * q);
            assert_eq!(b.learned().paper(), n - g + p * q);
        }
    }

    #[test]
    fn messages_have_the_prescribed_shapes() {
        let (x, y) = (gaussian(40, 2, 9), gaussian(40, 3, 10));
        let stream = Key::teaching(9).stream(StreamId::Scratch(0));
        let (waiting, offer) = AgencyA::new(x).unwrap().offer(3, &stream).unwrap();
        assert_eq!(
            (offer.z().shape(), offer.announced_columns()),
            ((40, 19), 2)
        );
        assert_eq!(bits(waiting.z()), bits(offer.z()));
        let (state, reply) = AgencyB::new(y).unwrap().respond(&offer).unwrap();
        assert_eq!(reply.w().shape(), (40, 3));
        assert_eq!(state.reply_rank(), 3);
        // W ⟂ Z: B removed exactly the part of Y in ran(Z).
        assert!(
            (offer.z().transpose() * reply.w()).amax() < SECURE_PRODUCT * reply.w().amax() * 40.0
        );
        let bad = SharedProduct::new(DMatrix::zeros(3, 3));
        assert_eq!(
            state.receive(&bad).unwrap_err(),
            ProtocolError::MessageShape {
                message: "the shared product XᵀY",
                expected: (2, 3),
                found: (3, 3)
            }
        );
    }

    #[test]
    fn receiver_refuses_a_bad_offer() {
        let (x, y) = (gaussian(40, 2, 11), gaussian(40, 3, 12));
        let stream = Key::teaching(11).stream(StreamId::Scratch(0));
        let (_, offer) = AgencyA::new(x).unwrap().offer(3, &stream).unwrap();
        let mut z = offer.z().clone();
        z.column_mut(0).scale_mut(2.0);
        let err = AgencyB::new(y.clone())
            .unwrap()
            .respond(&ComplementOffer::new(z, 2))
            .unwrap_err();
        assert!(matches!(err, ProtocolError::Refused { ref findings }
            if matches!(findings[0], Finding::NotOrthonormal { .. })));
        // A Z with fewer columns than g = ⌊(40 − 2)/2⌋ = 19 would leave B fewer free directions.
        let narrow = offer.z().columns(0, 15).into_owned();
        let err = AgencyB::new(y)
            .unwrap()
            .respond(&ComplementOffer::new(narrow, 2))
            .unwrap_err();
        assert!(matches!(err, ProtocolError::Refused { ref findings }
            if findings.contains(&Finding::WrongColumnCount { found: 15, prescribed: 19, announced_sender_columns: 2 })));
    }

    #[test]
    fn infeasible_or_invalid_inputs_give_clear_errors() {
        let stream = Key::teaching(1).stream(StreamId::Scratch(0));
        // n = 10, p = 1, q = 6: B would learn 4 + 6 = 10 constraints per column of X.
        let err = AgencyA::new(gaussian(10, 1, 1))
            .unwrap()
            .offer(6, &stream)
            .unwrap_err();
        assert_eq!(
            err,
            ProtocolError::Feasibility(FeasibilityError::ReceiverWouldRecoverSender {
                subjects: 10,
                complement_columns: 4,
                receiver_columns: 6
            })
        );
        let mut y = gaussian(20, 3, 2);
        let copy = y.column(0) * 2.0;
        y.set_column(2, &copy);
        assert!(matches!(
            AgencyB::new(y),
            Err(ProtocolError::ReceiverDependentColumn { column: 2, .. })
        ));
        let (_, offer) = AgencyA::new(gaussian(20, 2, 3))
            .unwrap()
            .offer(2, &stream)
            .unwrap();
        let err = AgencyB::new(gaussian(21, 2, 4))
            .unwrap()
            .respond(&offer)
            .unwrap_err();
        assert_eq!(
            err,
            ProtocolError::Feasibility(FeasibilityError::RowMismatch {
                sender_rows: 20,
                receiver_rows: 21
            })
        );
        assert!(err.to_string().contains("align"));
    }
}
