//! Secure summation of per-agency vectors: the protocol seed 001 §3.2 names (Benaloh 1987) for
//! assembling the fitted values `D₀β̂₀ = Σ_a D_{0,a}β̂_{0,a}` without revealing any agency's part.
//!
//! # Protocol (the ring form used by Karr et al. for secure regression)
//! Values are encoded as fixed-point integers in the ring `ℤ/2¹²⁸` (two's complement, `2⁴⁰` units
//! per 1). The *initiator* — the agency that is to learn the sum, here the holder of the response
//! — draws a mask `R` uniformly from the ring and sends `R + v₁`; each other agency in turn adds
//! its encoded share and passes the running total on; the last sends it back and the initiator
//! subtracts `R`. Every message an agency other than the initiator sees is uniform on the ring
//! whatever the data (one-time pad), so it learns nothing; the initiator learns only the sum.
//! As for every ring protocol, the two neighbours of an agency can together recover its share if
//! they collude; the agencies are assumed semi-honest and non-colluding, as in the paper.
//!
//! # Range and accuracy
//! Each share must satisfy `|v| ≤ 2⁸⁰` ([`MAX_MAGNITUDE`]) and at most [`MAX_AGENCIES`] agencies
//! take part, so the total never wraps around the ring; each share is rounded to the nearest
//! multiple of `2⁻⁴⁰` (error ≤ `2⁻⁴¹` per share).

use nalgebra::DVector;
use rand_core::Rng;

/// Fraction bits of the fixed-point encoding: values are multiples of `2⁻⁴⁰ ≈ 9.1·10⁻¹³`.
pub const FRACTION_BITS: u32 = 40;

/// Largest share magnitude accepted, `2⁸⁰ ≈ 1.2·10²⁴`.
pub const MAX_MAGNITUDE: f64 = 1_208_925_819_614_629_174_706_176.0;

/// Most agencies in one summation: `127 · 2⁸⁰ · 2⁴⁰ < 2¹²⁷`, so the sum stays inside the signed
/// range of the ring.
pub const MAX_AGENCIES: usize = 127;

const SCALE: f64 = (1u64 << FRACTION_BITS) as f64;

/// Errors of secure summation.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SecureSumError {
    /// Nobody contributed.
    #[error("secure summation needs at least one contribution")]
    NoContributions,
    /// Too many agencies for the ring's range.
    #[error(
        "{agencies} agencies exceed the {MAX_AGENCIES} the fixed-point ring can sum without overflow"
    )]
    TooManyAgencies {
        /// Number of agencies.
        agencies: usize,
    },
    /// A share or message has the wrong length.
    #[error("agency {agency} contributed {found} values but the sum has {expected}")]
    LengthMismatch {
        /// The agency (position in the ring, 0 = initiator).
        agency: usize,
        /// Expected length.
        expected: usize,
        /// Its length.
        found: usize,
    },
    /// A share is NaN, infinite or too large to encode.
    #[error(
        "agency {agency}'s value {value} at position {index} cannot be encoded (must be finite with |v| ≤ 2⁸⁰)"
    )]
    Unencodable {
        /// The agency.
        agency: usize,
        /// Position in the vector.
        index: usize,
        /// The value.
        value: f64,
    },
}

fn encode(agency: usize, index: usize, value: f64) -> Result<u128, SecureSumError> {
    if !(value.is_finite() && value.abs() <= MAX_MAGNITUDE) {
        return Err(SecureSumError::Unencodable {
            agency,
            index,
            value,
        });
    }
    // |value · 2⁴⁰| ≤ 2¹²⁰ fits in i128; the cast to u128 is the two's-complement ring element.
    Ok((value * SCALE).round() as i128 as u128)
}

fn decode(element: u128) -> f64 {
    element as i128 as f64 / SCALE
}

/// The running total passed from agency to agency: uniformly distributed on the ring to everyone
/// but the initiator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingMessage {
    values: Vec<u128>,
    /// Position in the ring of the agency that sent it (0 = initiator).
    sender: usize,
}

impl RingMessage {
    /// The ring elements, as they travel.
    pub fn values(&self) -> &[u128] {
        &self.values
    }
}

/// The initiator of a summation: it alone keeps the mask.
#[derive(Debug)]
pub struct Initiator {
    mask: Vec<u128>,
}

impl Initiator {
    /// Draw the mask from `rng`, add the initiator's own share and produce the first message.
    ///
    /// # Errors
    /// [`SecureSumError::Unencodable`].
    pub fn start<R: Rng + ?Sized>(
        share: &DVector<f64>,
        rng: &mut R,
    ) -> Result<(Self, RingMessage), SecureSumError> {
        let mask: Vec<u128> = (0..share.len())
            .map(|_| (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64()))
            .collect();
        let mut values = Vec::with_capacity(share.len());
        for (index, (&m, &v)) in mask.iter().zip(share.iter()).enumerate() {
            values.push(m.wrapping_add(encode(0, index, v)?));
        }
        Ok((Self { mask }, RingMessage { values, sender: 0 }))
    }

    /// Remove the mask from the message that came back round the ring: the sum of all shares.
    ///
    /// # Errors
    /// [`SecureSumError::LengthMismatch`] when the message has the wrong length.
    pub fn finish(self, message: &RingMessage) -> Result<DVector<f64>, SecureSumError> {
        if message.values.len() != self.mask.len() {
            return Err(SecureSumError::LengthMismatch {
                agency: message.sender,
                expected: self.mask.len(),
                found: message.values.len(),
            });
        }
        Ok(DVector::from_iterator(
            self.mask.len(),
            message
                .values
                .iter()
                .zip(&self.mask)
                .map(|(&v, &m)| decode(v.wrapping_sub(m))),
        ))
    }
}

/// What agency number `position` (≥ 1) in the ring does: add its encoded share to the message.
///
/// # Errors
/// [`SecureSumError::LengthMismatch`], [`SecureSumError::Unencodable`].
pub fn add_share(
    message: &RingMessage,
    position: usize,
    share: &DVector<f64>,
) -> Result<RingMessage, SecureSumError> {
    if share.len() != message.values.len() {
        return Err(SecureSumError::LengthMismatch {
            agency: position,
            expected: message.values.len(),
            found: share.len(),
        });
    }
    let mut values = Vec::with_capacity(share.len());
    for (index, (&t, &v)) in message.values.iter().zip(share.iter()).enumerate() {
        values.push(t.wrapping_add(encode(position, index, v)?));
    }
    Ok(RingMessage {
        values,
        sender: position,
    })
}

/// Run the whole ring: `shares[0]` belongs to the initiator (who learns the sum), the others are
/// added in order.
///
/// # Errors
/// [`SecureSumError::NoContributions`], [`SecureSumError::TooManyAgencies`] and the errors of the
/// steps.
pub fn secure_sum<R: Rng + ?Sized>(
    shares: &[DVector<f64>],
    initiator_rng: &mut R,
) -> Result<DVector<f64>, SecureSumError> {
    let (first, rest) = shares
        .split_first()
        .ok_or(SecureSumError::NoContributions)?;
    if shares.len() > MAX_AGENCIES {
        return Err(SecureSumError::TooManyAgencies {
            agencies: shares.len(),
        });
    }
    let (initiator, mut message) = Initiator::start(first, initiator_rng)?;
    for (i, share) in rest.iter().enumerate() {
        message = add_share(&message, i + 1, share)?;
    }
    initiator.finish(&message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::SECURE_SUM_PER_SHARE;
    use orthomask_core::key::{Key, StreamId};

    fn shares() -> Vec<DVector<f64>> {
        vec![
            DVector::from_row_slice(&[1.5, -2.25, 1e6, 0.1]),
            DVector::from_row_slice(&[-0.5, 10.0, -3e5, 0.2]),
            DVector::from_row_slice(&[3.0, -7.75, 1.0 / 3.0, 0.3]),
        ]
    }

    #[test]
    fn sum_is_exact_to_the_fixed_point_resolution() {
        let mut rng = Key::teaching(1).stream(StreamId::Scratch(5)).rng();
        let total = secure_sum(&shares(), &mut rng).unwrap();
        let direct = shares().iter().fold(DVector::zeros(4), |acc, s| acc + s);
        assert!((total - direct).amax() <= 3.0 * SECURE_SUM_PER_SHARE);
    }

    /// Different masks give different messages on the ring but the same sum: what travels does
    /// not determine the shares.
    #[test]
    fn messages_depend_on_the_mask_not_only_on_the_data() {
        let s = shares();
        let mut rng_a = Key::teaching(1).stream(StreamId::Scratch(6)).rng();
        let mut rng_b = Key::teaching(2).stream(StreamId::Scratch(6)).rng();
        let (ia, ma) = Initiator::start(&s[0], &mut rng_a).unwrap();
        let (ib, mb) = Initiator::start(&s[0], &mut rng_b).unwrap();
        assert!(ma.values().iter().zip(mb.values()).all(|(a, b)| a != b));
        let (ma, mb) = (
            add_share(&ma, 1, &s[1]).unwrap(),
            add_share(&mb, 1, &s[1]).unwrap(),
        );
        let (ma, mb) = (
            add_share(&ma, 2, &s[2]).unwrap(),
            add_share(&mb, 2, &s[2]).unwrap(),
        );
        let (ta, tb) = (ia.finish(&ma).unwrap(), ib.finish(&mb).unwrap());
        assert!((ta - tb).amax() <= SECURE_SUM_PER_SHARE);
    }

    #[test]
    fn bad_shares_are_refused() {
        let mut rng = Key::teaching(1).stream(StreamId::Scratch(7)).rng();
        assert_eq!(
            secure_sum(&[], &mut rng).unwrap_err(),
            SecureSumError::NoContributions
        );
        let mut s = shares();
        s[2] = DVector::from_row_slice(&[1.0]);
        assert_eq!(
            secure_sum(&s, &mut rng).unwrap_err(),
            SecureSumError::LengthMismatch {
                agency: 2,
                expected: 4,
                found: 1
            }
        );
        let mut s = shares();
        s[1][3] = f64::NAN;
        assert!(matches!(
            secure_sum(&s, &mut rng),
            Err(SecureSumError::Unencodable {
                agency: 1,
                index: 3,
                ..
            })
        ));
        let mut s = shares();
        s[0][0] = 1e30;
        assert!(matches!(
            secure_sum(&s, &mut rng),
            Err(SecureSumError::Unencodable {
                agency: 0,
                index: 0,
                ..
            })
        ));
    }
}
