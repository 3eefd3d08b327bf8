//! Share mode as the services run it (issue 20 §1): **rotated partial unmasking with cancelling
//! masks**, a variant of seed 000 §3.5 that keeps the collector together with any one
//! right-masking service from learning the records.
//!
//! # Why §3.5 as written breaks
//! Right-masking service `i` holds its raw shares `Xⁱ` (`n × p`, full row rank since `p ≥ n`)
//! and, removing `Bᵢ` from `A Xⁱ Bᵢ`, sees `A Xⁱ`; so it computes `A = (A Xⁱ)(Xⁱ)⁺`. The
//! collector holds `A X₁`. Together they read every record: `X₁ = Aᵀ(A X₁)`. (Seed 000 claims
//! resistance only to collusion among the service providers; this coalition is not covered.)
//! Even without the answers' columns, the padding of every share is `x₂/K` — the same in all
//! shares — so any party that sees one share's padding and `A X₂` learns `A`.
//!
//! # The variant (`K` services, `q = p₁` leading columns: answers and the QA column)
//! 1. Service `i` masks its cohort's shares and hands `Xⁱ Bᵢ` to the provider, as before. It
//!    hands service `u(i)` — the **next** service on the ring, `u(i) = i + 1 mod K`, when
//!    `K ≥ 3`; itself when `K = 2` (below) — only the **partial unmasking key**
//!    `Wᵢ = Bᵢᵀ[:, :q]` ([`UnmaskingKey`]), never `Bᵢ`, and (for `K ≥ 3`) a fresh seed `sᵢ`.
//! 2. The provider sends `A Xⁱ Bᵢ` to service `u(i)`.
//! 3. Service `j = u(i)` computes `Yᵢ = (A Xⁱ Bᵢ) Wᵢ = A Xⁱ_q` — the leading `q` columns only —
//!    and sends the collector its **part** `Pⱼ = ⌊2^F Yᵢ⌉ + R(sᵢ) − R(sⱼ)` in the integers modulo
//!    `2¹²⁸` ([`FixedMatrix`], `F = `[`FRACTION_BITS`]), with `R(s)` the uniform pseudo-random
//!    matrix of seed `s` ([`ring_mask`]).
//! 4. The collector sums the parts modulo `2¹²⁸`: the masks telescope around the ring,
//!    `Σⱼ (R(s_{j−1}) − R(sⱼ)) = 0`, so `Σⱼ Pⱼ = Σᵢ ⌊2^F Yᵢ⌉`, which decodes to `A X_q` with an
//!    absolute error of at most `K·2^{−F−1}` per entry — exactly, as far as `f64` can tell
//!    (`|Yᵢ| < 2⁶²` is checked; at `F = 64` the grid is `5·10⁻²⁰`, far below the rounding of the
//!    unmasking itself). `A X_q` is what the collector of the basic protocol recovers
//!    (`A₂,k X₁,k`); it checks QA, unscales and releases `A_c A X₁` as before.
//!
//! # What each coalition of up to two learns (derivation)
//! Views: service `j` holds `Xʲ` (all `p` columns, raw at upload), `Bⱼ`, `sⱼ`, and from its ring
//! predecessor `W_{j−1}`, `s_{j−1}` and `Y_{j−1} = A X^{j−1}_q`; the provider holds `A` and every
//! `Xⁱ Bᵢ`; the collector holds `A X_q` (its keys, the release). Shares are
//! `Xⁱ = X/K + Nᵢ` on the answers (`Nᵢ = Gᵢ − Ḡ`, `Gᵢ` i.i.d. `N(0, τ²)`, so
//! `Var Nᵢ = τ²(1 − 1/K)`, `Cov(Nᵢ, Nⱼ) = −τ²/K`), and `X/K` on the QA column and the padding.
//!
//! **`K ≥ 3`.**
//! * Collector alone: `A X_q` — the orbit of `X₁` (and of the constant QA column), the basic
//!   collector's view; no record. Each part alone is uniform modulo `2¹²⁸` (one unknown seed), so
//!   the collector does not even see the parts apart.
//! * Provider alone: `A` and `Xⁱ Bᵢ` with unknown Haar `Bᵢ`: the row Gram matrices `XⁱXⁱᵀ` of
//!   shares dominated by noise `τ`; no record.
//! * Service `j` alone: its share (the view `ShareView::one_service`) and `Y_{j−1}`, a left-
//!   rotated copy of another share's leading columns, which reveals only that share's Gram
//!   matrix and sums: `A` is unknown because `X^{j−1}` is (held by `j − 1`). No record.
//! * Provider + collector: `X_q = Aᵀ(A X_q)`: **every record** (as in the basic protocol:
//!   `A` is the provider's).
//! * Provider + service `j`: removes `Bⱼ` from `Xʲ Bⱼ` (nothing new) and `W_{j−1}` from
//!   `X^{j−1} B_{j−1}`: two shares' answers, the view of two of `K` services
//!   (`ShareView::coalition(K, 2, τ)`: `2a/K + N(0, 2τ²(K − 2)/K)`); no record for `K ≥ 3`.
//! * Collector + service `j`: knows `A X_q`, `A X^{j−1}_q` and `Xʲ`. The other parts carry
//!   `R(s_{j+1})`, which neither holds, so neither `A Xʲ_q` nor any other `A Xⁱ_q` is seen
//!   apart. With `A` Haar on `Stab(1ₙ)` and independent, the likelihood of what they see depends
//!   on `X₁` only through the orbit invariants of `[X_q, X^{j−1}_q]` jointly with `Xʲ`; given `Nⱼ`,
//!   `N_{j−1} = −Nⱼ/(K − 1) + W` with `W` i.i.d. Gaussian of variance `τ²(K − 2)/(K − 1)`, so
//!   the one non-invariant term, `X_qᵀ X^{j−1}_q`, shows `X_qᵀ Xʲ_q/(K − 1)` (projections of each
//!   answer column on the service's own share columns) under Gaussian noise of standard
//!   deviation `τ√((K − 2)/(K − 1))·‖x_c‖`. That is a noisy view of a few projections per
//!   column, not a record: `A` stays unknown, and the attack that breaks `K = 2` (below) leaves
//!   an error of the share noise's size (`coalitions` test).
//! * Two services `j, j + 1`: two shares (statistical, as above) and `A` on the span of
//!   `Xʲ_q` (from `Yⱼ`); without the collector's `A X_q` no record.
//! * The smallest coalitions that read records: provider + collector; all `K` services; the
//!   collector with services `j` and `j + 1` (they learn `A` on `span(Xʲ_q)`, hence the exact
//!   projections `X_qᵀ Xʲ_q`, which read discrete answers as in `K = 2`).
//!
//! **`K = 2`.** Each share is the other's complement (`X¹ = X − X⁰`), so rotation would let one
//! service alone learn `A(X_q − X^j_q)` next to `Xʲ`: the projections `X_qᵀ Xʲ_q` (a yes/no
//! answer column read by subset sum). So with two services each unmasks its own share (`u(i) = i`),
//! with the partial key, and no masks (the collector could subtract the one part it lacks). Then
//! the collector with either service sees `A X_q` and `A Xⁱ_q` beside `Xⁱ_q`: `A` on
//! `span(Xⁱ_q)`, and the exact projections `⟨x_c, s⟩` of every answer column on the service's
//! `q` share columns — enough to read discrete answers of a cohort by subset sum, and to
//! narrow continuous ones — **a break**. (Before this variant the same coalition read `A`
//! outright.) Share mode with two services resists each service alone, and the provider with one
//! service, not the collector with one service; three services are the default.

use super::qa::QaReport;
use super::tm2::Tm2Design;
use super::{ProtocolError, require_finite};
use crate::key::{Key, StreamId};
use crate::mask::Mask;
use crate::random::BitSource;
use nalgebra::DMatrix;

/// Fraction bits of the fixed-point parts: a value `y` travels as `⌊2⁶⁴ y⌉` in `i128`.
pub const FRACTION_BITS: u32 = 64;

/// Largest magnitude a part's value may have: `2⁶²`, leaving two bits of headroom in `i128`
/// for the `K` parts' sum before it is reduced (far above what a share reaches:
/// `τ·√n` with `τ ≈ 10²`).
pub const PART_MAGNITUDE_LIMIT: f64 = 4_611_686_018_427_387_904.0;

/// Which service removes share `share`'s right mask among `k` (module documentation): the next
/// on the ring for `k ≥ 3`, the share's own service for `k = 2`.
pub fn unmasker_of(share: u32, k: usize) -> u32 {
    if k >= 3 {
        ((share as usize + 1) % k) as u32
    } else {
        share
    }
}

/// Whose share service `unmasker` unmasks: the inverse of [`unmasker_of`].
pub fn share_unmasked_by(unmasker: u32, k: usize) -> u32 {
    if k >= 3 {
        ((unmasker as usize + k - 1) % k) as u32
    } else {
        unmasker
    }
}

/// Whether the parts carry cancelling masks: only with three or more services (module
/// documentation).
pub fn masks_parts(k: usize) -> bool {
    k >= 3
}

/// A partial unmasking key `W = Bᵀ[:, :q]` (`p × q`): it removes `B` from the leading `q` columns
/// and from nothing else, so whoever holds it learns `A Xⁱ_q` and not `A Xⁱ`.
#[derive(Clone, Debug, PartialEq)]
pub struct UnmaskingKey {
    w: DMatrix<f64>,
}

impl UnmaskingKey {
    /// The partial key of `b` for the leading `q` columns.
    ///
    /// # Errors
    /// Mask errors for `q` above the mask's dimension.
    pub fn of<M: Mask + ?Sized>(b: &M, q: usize) -> Result<Self, ProtocolError> {
        Ok(Self {
            w: b.inverse_leading_columns(q)?,
        })
    }

    /// A key received from another service (`p × q`, finite).
    ///
    /// # Errors
    /// [`ProtocolError::NonFinite`].
    pub fn from_matrix(w: DMatrix<f64>) -> Result<Self, ProtocolError> {
        require_finite(&w)?;
        Ok(Self { w })
    }

    /// The key as a matrix (to hand on).
    pub fn matrix(&self) -> &DMatrix<f64> {
        &self.w
    }

    /// `(A Xⁱ Bᵢ) W = A Xⁱ_q`.
    ///
    /// # Errors
    /// [`ProtocolError::Shape`] when the block is not `p` wide; non-finite values.
    pub fn unmask_leading(
        &self,
        left_masked: &DMatrix<f64>,
    ) -> Result<DMatrix<f64>, ProtocolError> {
        require_finite(left_masked)?;
        if left_masked.ncols() != self.w.nrows() {
            return Err(ProtocolError::Shape {
                what: "width of the left-masked block",
                expected: self.w.nrows(),
                found: left_masked.ncols(),
            });
        }
        Ok(left_masked * &self.w)
    }
}

/// A matrix in fixed point modulo `2¹²⁸`: entry `e` stands for `e / 2^F`
/// ([`FRACTION_BITS`]); sums wrap, as the cancelling masks need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedMatrix {
    rows: usize,
    cols: usize,
    /// Row by row.
    data: Vec<i128>,
}

impl FixedMatrix {
    /// `⌊2^F m⌉`, entry by entry.
    ///
    /// # Errors
    /// [`ProtocolError::NonFinite`]; [`ProtocolError::InvalidParameter`] for an entry of
    /// magnitude [`PART_MAGNITUDE_LIMIT`] or more.
    pub fn encode(m: &DMatrix<f64>) -> Result<Self, ProtocolError> {
        require_finite(m)?;
        let scale = 2f64.powi(FRACTION_BITS as i32);
        let mut data = Vec::with_capacity(m.len());
        for i in 0..m.nrows() {
            for j in 0..m.ncols() {
                let v = m[(i, j)];
                if v.abs() >= PART_MAGNITUDE_LIMIT {
                    return Err(ProtocolError::InvalidParameter {
                        what: format!(
                            "part entry ({i}, {j}) = {v:e} is too large for the fixed-point sum"
                        ),
                    });
                }
                // Exact: |v·2⁶⁴| < 2¹²⁶ fits i128, and the cast rounds toward zero after round().
                data.push((v * scale).round() as i128);
            }
        }
        Ok(Self {
            rows: m.nrows(),
            cols: m.ncols(),
            data,
        })
    }

    /// `e / 2^F`, entry by entry (the nearest `f64`).
    pub fn decode(&self) -> DMatrix<f64> {
        let scale = 2f64.powi(-(FRACTION_BITS as i32));
        DMatrix::from_row_slice(
            self.rows,
            self.cols,
            &self
                .data
                .iter()
                .map(|&e| e as f64 * scale)
                .collect::<Vec<_>>(),
        )
    }

    /// Rows.
    pub fn nrows(&self) -> usize {
        self.rows
    }

    /// Columns.
    pub fn ncols(&self) -> usize {
        self.cols
    }

    /// The entries, row by row, as 16-byte little-endian two's complement (the wire form).
    pub fn to_le_bytes(&self) -> Vec<u8> {
        self.data.iter().flat_map(|e| e.to_le_bytes()).collect()
    }

    /// Read [`to_le_bytes`](Self::to_le_bytes) of a `rows × cols` matrix.
    ///
    /// # Errors
    /// [`ProtocolError::Shape`] when the length is not `16·rows·cols`.
    pub fn from_le_bytes(rows: usize, cols: usize, bytes: &[u8]) -> Result<Self, ProtocolError> {
        let expected = rows.checked_mul(cols).and_then(|n| n.checked_mul(16));
        if expected != Some(bytes.len()) {
            return Err(ProtocolError::Shape {
                what: "bytes of a fixed-point part",
                expected: expected.unwrap_or(usize::MAX),
                found: bytes.len(),
            });
        }
        let data = bytes
            .chunks_exact(16)
            .map(|c| {
                let mut b = [0u8; 16];
                b.copy_from_slice(c);
                i128::from_le_bytes(b)
            })
            .collect();
        Ok(Self { rows, cols, data })
    }

    /// `self + other` modulo `2¹²⁸`.
    ///
    /// # Errors
    /// [`ProtocolError::Shape`] when the shapes differ.
    pub fn wrapping_add(&mut self, other: &Self) -> Result<(), ProtocolError> {
        if (self.rows, self.cols) != (other.rows, other.cols) {
            return Err(ProtocolError::Shape {
                what: "rows of a part",
                expected: self.rows,
                found: other.rows,
            });
        }
        for (a, b) in self.data.iter_mut().zip(&other.data) {
            *a = a.wrapping_add(*b);
        }
        Ok(())
    }

    fn add_mask(&mut self, seed: &Key, sign: i128) {
        let mut bits = seed.stream(StreamId::CancellingMask).rng();
        for e in &mut self.data {
            let r = (u128::from(bits.next_bits()) << 64 | u128::from(bits.next_bits())) as i128;
            *e = e.wrapping_add(r.wrapping_mul(sign));
        }
    }
}

/// Service `index`'s own ring seed `s_index` for cohort `cohort`, from its survey key (so it
/// needs no storage and is the same after a restart).
pub fn ring_seed(survey_key: &Key, cohort: u32) -> Key {
    survey_key.derive(StreamId::CancellingSeed { cohort })
}

/// Service `j`'s part (module documentation, step 3): `⌊2^F Y⌉ + R(s_{j−1}) − R(sⱼ)` modulo
/// `2¹²⁸`, with `received` = `s_{j−1}` and `own` = `sⱼ` — both `None` when the parts carry no
/// masks (`K = 2`). `R(s)` draws 128 uniform bits per entry from the stream
/// [`StreamId::CancellingMask`] of `s`, row by row, so every service expands a seed alike.
///
/// # Errors
/// As [`FixedMatrix::encode`].
pub fn masked_part(
    y: &DMatrix<f64>,
    received: Option<&Key>,
    own: Option<&Key>,
) -> Result<FixedMatrix, ProtocolError> {
    let mut part = FixedMatrix::encode(y)?;
    if let Some(s) = received {
        part.add_mask(s, 1);
    }
    if let Some(s) = own {
        part.add_mask(s, -1);
    }
    Ok(part)
}

/// The collector's step 4: sum the `K` parts modulo `2¹²⁸`, decode `A X_q`, unscale and check QA
/// (`Tm2Design::unscale_unmasked`, whose rounding scale is `error_scale`: the sum of the largest
/// row norms the unmasking services saw).
///
/// # Errors
/// [`ProtocolError::Shape`] for no parts, parts of different shapes or not `p₁` wide;
/// [`ProtocolError::QaFailed`].
pub fn combine_parts(
    design: &Tm2Design,
    parts: &[FixedMatrix],
    error_scale: f64,
) -> Result<(DMatrix<f64>, Option<QaReport>), ProtocolError> {
    let (first, rest) = parts.split_first().ok_or(ProtocolError::Shape {
        what: "share parts",
        expected: 2,
        found: 0,
    })?;
    let mut sum = first.clone();
    for part in rest {
        sum.wrapping_add(part)?;
    }
    design.unscale_unmasked(sum.decode(), error_scale)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::Key;
    use crate::mask::{FixedSubspaceHaar, HaarOrthogonal};
    use crate::protocol::collusion::share_sigma;
    use crate::tolerance::{PRESERVED_STATISTICS, ROUND_TRIP};

    #[test]
    fn the_ring_turns_for_three_or_more_and_stands_still_for_two() {
        assert_eq!(
            (0..3).map(|i| unmasker_of(i, 3)).collect::<Vec<_>>(),
            [1, 2, 0]
        );
        assert_eq!(
            (0..2).map(|i| unmasker_of(i, 2)).collect::<Vec<_>>(),
            [0, 1]
        );
        for k in 2..6 {
            for i in 0..k as u32 {
                assert_eq!(share_unmasked_by(unmasker_of(i, k), k), i);
            }
        }
        assert!(!masks_parts(2) && masks_parts(3));
    }

    /// By hand: 1.5 is 1.5·2⁶⁴ exactly; −2⁻⁶⁴ is −1; decoding gives them back.
    #[test]
    fn fixed_point_by_hand() {
        let m = DMatrix::from_row_slice(1, 3, &[1.5, -(2f64.powi(-64)), 0.0]);
        let f = FixedMatrix::encode(&m).unwrap();
        assert_eq!(f.data, [3 << 63, -1, 0]);
        assert_eq!(f.decode(), m);
        let back = FixedMatrix::from_le_bytes(1, 3, &f.to_le_bytes()).unwrap();
        assert_eq!(back, f);
        assert!(FixedMatrix::from_le_bytes(1, 2, &f.to_le_bytes()).is_err());
        assert!(FixedMatrix::encode(&DMatrix::from_element(1, 1, 1e19)).is_err());
        assert!(FixedMatrix::encode(&DMatrix::from_element(1, 1, f64::NAN)).is_err());
    }

    /// The masks telescope: the sum of three masked parts is the sum of the unmasked ones to the
    /// last bit, and each masked part differs from its unmasked value everywhere.
    #[test]
    fn cancelling_masks_sum_to_zero_around_the_ring() {
        let y: Vec<DMatrix<f64>> = (0..3)
            .map(|i| DMatrix::from_fn(4, 3, |r, c| (i * 12 + r * 3 + c) as f64 * 0.37 - 5.0))
            .collect();
        let seeds: Vec<Key> = (0..3).map(|i| Key::teaching(900 + i)).collect();
        let mut sum: Option<FixedMatrix> = None;
        let mut plain: Option<FixedMatrix> = None;
        for j in 0..3 {
            let received = &seeds[(j + 2) % 3];
            let part = masked_part(&y[j], Some(received), Some(&seeds[j])).unwrap();
            let unmasked = FixedMatrix::encode(&y[j]).unwrap();
            assert!(part.data.iter().zip(&unmasked.data).all(|(a, b)| a != b));
            match &mut sum {
                Some(s) => s.wrapping_add(&part).unwrap(),
                None => sum = Some(part),
            }
            match &mut plain {
                Some(s) => s.wrapping_add(&unmasked).unwrap(),
                None => plain = Some(unmasked),
            }
        }
        assert_eq!(sum, plain);
        let total = &y[0] + &y[1] + &y[2];
        assert!((sum.unwrap().decode() - total).amax() < ROUND_TRIP);
    }

    /// The partial key removes `B` from the leading columns only: `(M B) W = M[:, :q]`.
    #[test]
    fn a_partial_key_unmasks_the_leading_columns() {
        let p = 9;
        let b = HaarOrthogonal::keyed(p, Key::teaching(31).stream(StreamId::Scratch(1))).unwrap();
        let m = DMatrix::from_fn(5, p, |i, j| (i as f64 - 2.0) * 0.7 + j as f64 * 0.11);
        let mut masked = m.clone();
        b.right_apply(&mut masked).unwrap();
        let key = UnmaskingKey::of(&b, 4).unwrap();
        assert_eq!(key.matrix().shape(), (p, 4));
        let leading = key.unmask_leading(&masked).unwrap();
        assert!((leading - m.columns(0, 4)).amax() < ROUND_TRIP * 10.0);
    }

    /// The whole variant with three services on a cohort: the collector's sum is `A X_q`, so its
    /// Gram matrix and means are the raw data's.
    #[test]
    fn three_services_give_the_collector_a_x_q() {
        let n = 12;
        let design = Tm2Design::modified(2, 20, 30.0).unwrap();
        let (p, q) = (design.p(), design.p1());
        let raw = crate::mask::test_support::test_block(n, 2);
        let k = 3;
        let tau = share_sigma(&design, raw.amax());
        let blocks =
            crate::protocol::collusion::test_support::padded_share_blocks(&design, &raw, k, tau);
        let bs: Vec<HaarOrthogonal> = (0..k)
            .map(|i| {
                HaarOrthogonal::keyed(p, Key::teaching(40 + i as u64).stream(StreamId::Scratch(0)))
                    .unwrap()
            })
            .collect();
        let a = FixedSubspaceHaar::ones_fixed(n, Key::teaching(50).stream(StreamId::Scratch(0)))
            .unwrap();
        let seeds: Vec<Key> = (0..k)
            .map(|i| ring_seed(&Key::teaching(60 + i as u64), 0))
            .collect();
        let mut parts = vec![None; k];
        for i in 0..k {
            let mut m = blocks[i].clone();
            bs[i].right_apply(&mut m).unwrap();
            a.left_apply(&mut m).unwrap();
            let j = unmasker_of(i as u32, k) as usize;
            let y = UnmaskingKey::of(&bs[i], q)
                .unwrap()
                .unmask_leading(&m)
                .unwrap();
            parts[j] = Some(masked_part(&y, Some(&seeds[i]), Some(&seeds[j])).unwrap());
        }
        let parts: Vec<FixedMatrix> = parts.into_iter().map(Option::unwrap).collect();
        let (released, qa) = combine_parts(&design, &parts, 1e4).unwrap();
        assert!(qa.unwrap().passed());
        let expected = raw.clone().insert_column(2, design.qa_constant().unwrap());
        let gram = expected.tr_mul(&expected);
        assert!((released.tr_mul(&released) - &gram).amax() / gram.amax() < PRESERVED_STATISTICS);
        // The release is masked: not the raw rows.
        assert!((released.column(0) - raw.column(0)).amax() > 0.1);
    }
}
