//! Agency A's `Z`: a random orthonormal frame inside the orthogonal complement of its columns
//! (seed 001 §2.1 step 1 and Appendix A).
//!
//! # Construction
//! Appendix A: take the QR decomposition `X = Q R` with `Q = [Q₁ : Q₂]` (n × n orthogonal, `Q₁`
//! the first `p` columns); then `ran(X)^⟂ = ran(Q₂)` and any `g = ⌊(n − p)/2⌋` columns of `Q₂`
//! are a valid `Z`. The paper allows choosing them "randomly or informatively" and suggests
//! permuting the columns of `X` before the QR so that B cannot tell a QR was used.
//!
//! We make the random choice *and* rotate it: with `U` Haar-distributed on `O(n − p)` (drawn from
//! the caller's key stream by [`HaarOrthogonal`]),
//!
//! `Z = Q₂ · U[:, :g] = Q · [0_{p×g} ; U[:, :g]]`.
//!
//! `Q₂U` is a Haar-random orthonormal basis of `ran(X)^⟂` whatever basis `Q₂` the QR produced, so
//! `Z` is uniformly distributed on the `g`-frames of `ran(X)^⟂`: its law depends on `X` only
//! through `ran(X)`, and neither the use of a QR nor the order of `X`'s columns can be read from
//! it. This makes the paper's column permutation unnecessary. `Q` is applied as its `p`
//! Householder reflectors and `U[:, :g]` as `n − p − 1` reflectors regenerated from the stream, so
//! no `n × n` matrix is formed.
//!
//! # Conditions
//! `XᵀZ = [R; 0]ᵀ QᵀQ [0; U_g] = 0` and `ZᵀZ = U_gᵀU_g = I_g` exactly; in floating point both hold
//! to `O(n ε)`. `X` must have full column rank (the paper: "if not, the agencies remove any
//! linearly dependent columns").
//!
//! # Cost
//! `O((n − p)² g + n p g)` time, `O(n g)` memory for `Z` itself — which is what §2.1 sends.

use crate::householder::HouseholderQr;
use crate::tolerance::COLLINEARITY;
use nalgebra::DMatrix;
use orthomask_core::key::KeyedStream;
use orthomask_core::mask::{HaarOrthogonal, Mask, MaskError};

/// Errors of building the complement or drawing `Z`.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ComplementError {
    /// The data contain NaN or an infinity.
    #[error(
        "the data contain a missing or non-finite value; impute or drop it before the protocol"
    )]
    NonFinite,
    /// The data have no columns, or no rows left over for a complement.
    #[error(
        "a {rows}×{cols} matrix has no orthogonal complement to draw Z from; need rows > columns ≥ 1"
    )]
    NoComplement {
        /// Rows (subjects).
        rows: usize,
        /// Columns (attributes).
        cols: usize,
    },
    /// A column is (numerically) a linear combination of the columns before it.
    #[error(
        "column {column} is a linear combination of the columns before it (only {share:.2e} of \
         its sum of squares is new); remove it before the protocol (seed 001 §2.1 assumes full \
         column rank)"
    )]
    DependentColumn {
        /// 0-based column index.
        column: usize,
        /// Its squared sine against the earlier columns.
        share: f64,
    },
    /// More columns of `Z` were asked for than the complement has.
    #[error(
        "Z with {requested} columns does not fit in an orthogonal complement of dimension {available}"
    )]
    TooManyColumns {
        /// Requested `g`.
        requested: usize,
        /// `n − p`.
        available: usize,
    },
    /// The Haar rotation could not be generated.
    #[error("drawing the random rotation failed: {0}")]
    Mask(#[from] MaskError),
}

/// The orthogonal complement of an agency's columns, held as the QR of its data.
#[derive(Clone, Debug)]
pub struct OrthogonalComplement {
    qr: HouseholderQr,
    rows: usize,
    cols: usize,
}

impl OrthogonalComplement {
    /// Factor `x` (n × p) and check it has full column rank.
    ///
    /// # Errors
    /// [`ComplementError::NonFinite`], [`ComplementError::NoComplement`] when `p = 0` or `n ≤ p`,
    /// [`ComplementError::DependentColumn`] when a column's squared sine against the earlier ones
    /// is at most [`COLLINEARITY`].
    pub fn of(x: &DMatrix<f64>) -> Result<Self, ComplementError> {
        let (rows, cols) = x.shape();
        if cols == 0 || rows <= cols {
            return Err(ComplementError::NoComplement { rows, cols });
        }
        if x.iter().any(|v| !v.is_finite()) {
            return Err(ComplementError::NonFinite);
        }
        let qr = HouseholderQr::new(x);
        if let Some((column, share)) = qr.dependent_column(COLLINEARITY) {
            return Err(ComplementError::DependentColumn { column, share });
        }
        Ok(Self { qr, rows, cols })
    }

    /// `n − p`, the dimension of `ran(X)^⟂`.
    pub fn dimension(&self) -> usize {
        self.rows - self.cols
    }

    /// Draw `Z` (n × g) as described in the [module documentation](self), reading the Haar
    /// rotation from `stream`: the same stream gives the same `Z` on every platform.
    ///
    /// # Errors
    /// [`ComplementError::TooManyColumns`] when `g > n − p`.
    pub fn random_frame(
        &self,
        columns: usize,
        stream: &KeyedStream,
    ) -> Result<DMatrix<f64>, ComplementError> {
        let available = self.dimension();
        if columns > available {
            return Err(ComplementError::TooManyColumns {
                requested: columns,
                available,
            });
        }
        let rotation = HaarOrthogonal::keyed(available, stream.clone())?;
        let mut chosen = DMatrix::identity(available, columns);
        rotation.left_apply(&mut chosen)?;
        let mut z = DMatrix::zeros(self.rows, columns);
        z.view_mut((self.cols, 0), (available, columns))
            .copy_from(&chosen);
        self.qr.apply_q(&mut z);
        Ok(z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::ORTHOGONALITY;
    use orthomask_core::key::{Key, StreamId};

    fn data(n: usize, p: usize) -> DMatrix<f64> {
        DMatrix::from_fn(n, p, |i, j| {
            ((i * 7 + j * 11) % 13) as f64 - 6.0 + (i as f64).sqrt() * j as f64
        })
    }

    #[test]
    fn frame_is_orthonormal_and_orthogonal_to_x() {
        let x = data(30, 3);
        let complement = OrthogonalComplement::of(&x).unwrap();
        assert_eq!(complement.dimension(), 27);
        let z = complement
            .random_frame(13, &Key::teaching(1).stream(StreamId::Scratch(0)))
            .unwrap();
        assert_eq!(z.shape(), (30, 13));
        assert!((z.transpose() * &z - DMatrix::identity(13, 13)).amax() < ORTHOGONALITY);
        assert!((x.transpose() * &z).amax() < ORTHOGONALITY * x.amax() * 30.0);
    }

    #[test]
    fn same_stream_same_frame_other_stream_other_frame() {
        let complement = OrthogonalComplement::of(&data(20, 2)).unwrap();
        let key = Key::teaching(2);
        let a = complement
            .random_frame(9, &key.stream(StreamId::Scratch(1)))
            .unwrap();
        let again = complement
            .random_frame(9, &key.stream(StreamId::Scratch(1)))
            .unwrap();
        let other = complement
            .random_frame(9, &key.stream(StreamId::Scratch(2)))
            .unwrap();
        // Bit-for-bit the same matrix (reproducibility), not merely close.
        let bits = |m: &DMatrix<f64>| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a), bits(&again));
        assert!((a - other).amax() > 0.1);
    }

    #[test]
    fn refuses_what_has_no_valid_frame() {
        let mut x = data(10, 3);
        let dependent = x.column(0) * 3.0;
        x.set_column(1, &dependent);
        assert!(matches!(
            OrthogonalComplement::of(&x),
            Err(ComplementError::DependentColumn { column: 1, .. })
        ));
        assert_eq!(
            OrthogonalComplement::of(&data(3, 3)).unwrap_err(),
            ComplementError::NoComplement { rows: 3, cols: 3 }
        );
        let mut nan = data(10, 2);
        nan[(4, 1)] = f64::NAN;
        assert_eq!(
            OrthogonalComplement::of(&nan).unwrap_err(),
            ComplementError::NonFinite
        );
        let complement = OrthogonalComplement::of(&data(10, 2)).unwrap();
        assert_eq!(
            complement
                .random_frame(9, &Key::teaching(1).stream(StreamId::Scratch(0)))
                .unwrap_err(),
            ComplementError::TooManyColumns {
                requested: 9,
                available: 8
            }
        );
    }
}
