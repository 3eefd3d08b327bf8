//! More than two agencies: assembling the full cross-product matrix (seed 001 §2 "readily
//! extendible to multi-agency cases", §3.1).
//!
//! With agencies `A₁ … A_K` holding disjoint column blocks `D_1 … D_K` of the same `n` subjects:
//!
//! * each agency computes its column sums `1ᵀD_a`, centres its columns (`D_a − 1d̄_aᵀ`) and
//!   computes its diagonal block of the centred cross-products locally, and shares sums and
//!   block (§3.1: "each agency computes and shares the block-diagonal elements");
//! * every pair `a < b` runs the two-agency [`protocol`](crate::protocol) once on its *centred*
//!   columns to obtain the cross block of the centred cross-products (`K(K−1)/2` runs), which
//!   both members of the pair learn and share. Centring costs nothing in disclosure (the means
//!   are shared anyway) and avoids cancellation (see [`cross_products`](crate::cross_products)).
//!
//! In each pair the agency that generates `Z` is chosen by
//! [`choose_generator`]: the role that leaves the
//! worse-protected of the two the most free directions. Each run's `Z` comes from the
//! generator's own key stream, supplied by the caller as `stream_for(generator, partner)`.
//!
//! # Conditions
//! * every agency holds at least one column, none of them constant (the constant is added by the
//!   assembly), all for the same subjects;
//! * `n ≥ 1 + Σ p_a`: the integrated data with the constant (§3.1 includes the intercept as
//!   `D₁ = 1`) can have full column rank — the multi-agency form of `n ≥ p₁ + p₂`;
//! * each pair satisfies the two-agency conditions of [`feasibility`](crate::feasibility) for
//!   its chosen roles. Under the previous condition one role always does: both roles failing
//!   would need `⌊(n − p_a)/2⌋ + p_b ≥ n` and `⌊(n − p_b)/2⌋ + p_a ≥ n`, whose sum forces
//!   `p_a + p_b ≥ 2n`.
//!
//! A pair's run discloses to its two members what the two-agency accounting says; agencies
//! outside the pair learn only the shared block. Across pairs, an agency that sends `Z` to several
//! partners sends independent `Z`s (independent streams), so no partner's knowledge combines with
//! another's through a common `Z`, but colluding partners could pool their constraints — the
//! paper does not consider collusion, and neither does this module.

use crate::breach::{
    AgencyFinding, BreachError, Finding, check_cross_prediction, check_rare_values,
};
use crate::cross_products::{CrossProducts, CrossProductsError, centre, check_blocks};
use crate::disclosure::ConstraintCount;
use crate::feasibility::{Dimensions, Generator, choose_generator};
use crate::protocol::{AgencyA, AgencyB, ProtocolError, run};
use nalgebra::{DMatrix, DVector};
use orthomask_core::key::KeyedStream;

/// Errors of the multi-agency assembly.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum AssemblyError {
    /// The blocks are missing, misaligned or not finite.
    #[error(transparent)]
    CrossProducts(#[from] CrossProductsError),
    /// An agency holds no columns.
    #[error("agency {agency} holds no columns; leave it out of the assembly")]
    NoColumns {
        /// The agency.
        agency: usize,
    },
    /// A column is constant: it duplicates the intercept the assembly adds itself.
    #[error(
        "column {column} of agency {agency} is constant; the assembly adds the intercept itself \
         (seed 001 §3.1), so drop the column"
    )]
    ConstantColumn {
        /// The agency.
        agency: usize,
        /// The column, local to the agency.
        column: usize,
    },
    /// Too few subjects for the integrated data to have full rank.
    #[error(
        "{subjects} subjects are too few for {columns} attributes and the constant: the integrated \
         data need n ≥ 1 + Σ p_a = {needed} (seed 001 §2.1, §3.1)"
    )]
    TooFewSubjects {
        /// `n`.
        subjects: usize,
        /// `Σ p_a`.
        columns: usize,
        /// `1 + Σ p_a`.
        needed: usize,
    },
    /// The secure product of one pair failed.
    #[error("secure product between agencies {first} and {second}: {source}")]
    Pair {
        /// Lower-numbered agency of the pair.
        first: usize,
        /// Higher-numbered agency.
        second: usize,
        /// What went wrong.
        #[source]
        source: ProtocolError,
    },
    /// A screening check could not be run.
    #[error(transparent)]
    Breach(#[from] BreachError),
}

/// The record of one pairwise run.
#[derive(Clone, Debug, PartialEq)]
pub struct PairRun {
    generator: usize,
    responder: usize,
    dimensions: Dimensions,
    generator_learned: ConstraintCount,
    responder_learned: ConstraintCount,
}

impl PairRun {
    /// The agency that generated `Z` (the sender A of that run).
    pub fn generator(&self) -> usize {
        self.generator
    }

    /// The agency that returned `W` (the receiver B of that run).
    pub fn responder(&self) -> usize {
        self.responder
    }

    /// The run's dimensions (`p` = generator's columns, `q` = responder's).
    pub fn dimensions(&self) -> &Dimensions {
        &self.dimensions
    }

    /// Constraints the generator learned about the responder's block.
    pub fn generator_learned(&self) -> &ConstraintCount {
        &self.generator_learned
    }

    /// Constraints the responder learned about the generator's block.
    pub fn responder_learned(&self) -> &ConstraintCount {
        &self.responder_learned
    }
}

/// The assembled cross-products, the pairwise runs and the screening warnings.
#[derive(Clone, Debug, PartialEq)]
pub struct Assembly {
    cross_products: CrossProducts,
    pairs: Vec<PairRun>,
    warnings: Vec<AgencyFinding>,
}

impl Assembly {
    /// The integrated cross-product matrix.
    pub fn cross_products(&self) -> &CrossProducts {
        &self.cross_products
    }

    /// One record per pair of agencies, in the order `(0,1), (0,2), …, (1,2), …`.
    pub fn pairs(&self) -> &[PairRun] {
        &self.pairs
    }

    /// Warnings: each agency's rare values ([`check_rare_values`]) and each agency's columns that
    /// the other agencies' columns predict closely ([`check_cross_prediction`]); the column in
    /// each finding is local to the agency named.
    pub fn warnings(&self) -> &[AgencyFinding] {
        &self.warnings
    }

    /// Move the cross-products out.
    pub fn into_cross_products(self) -> CrossProducts {
        self.cross_products
    }
}

/// Assemble `[1 D]ᵀ[1 D]` securely from the agencies' blocks (see the
/// [module documentation](self)). `stream_for(generator, partner)` returns the key stream from
/// which `generator` draws its `Z` for `partner`; use independent streams per pair.
///
/// # Errors
/// [`AssemblyError::CrossProducts`] for missing, misaligned or non-finite blocks,
/// [`AssemblyError::NoColumns`], [`AssemblyError::TooFewSubjects`], [`AssemblyError::Pair`] when a
/// pair is infeasible, rank deficient or its protocol run fails.
pub fn assemble<F>(blocks: &[DMatrix<f64>], mut stream_for: F) -> Result<Assembly, AssemblyError>
where
    F: FnMut(usize, usize) -> KeyedStream,
{
    let subjects = check_blocks(blocks)?;
    if let Some(agency) = blocks.iter().position(|b| b.ncols() == 0) {
        return Err(AssemblyError::NoColumns { agency });
    }
    let columns: usize = blocks.iter().map(|b| b.ncols()).sum();
    if subjects < columns + 1 {
        return Err(AssemblyError::TooFewSubjects {
            subjects,
            columns,
            needed: columns + 1,
        });
    }
    if let Some((agency, column)) = blocks
        .iter()
        .enumerate()
        .find_map(|(agency, block)| constant_column(block).map(|column| (agency, column)))
    {
        return Err(AssemblyError::ConstantColumn { agency, column });
    }
    let offsets: Vec<usize> = blocks
        .iter()
        .scan(0, |at, b| {
            let start = *at;
            *at += b.ncols();
            Some(start)
        })
        .collect();

    // Local to each agency: column sums, centred columns, and its own block of C.
    let (sums, centred_blocks): (Vec<_>, Vec<_>) = blocks.iter().map(centre).unzip();
    let mut all_sums = DVector::zeros(columns);
    let mut centred = DMatrix::zeros(columns, columns);
    for ((block, block_sums), &at) in centred_blocks.iter().zip(&sums).zip(&offsets) {
        let width = block.ncols();
        all_sums.rows_mut(at, width).copy_from(block_sums);
        centred
            .view_mut((at, at), (width, width))
            .copy_from(&(block.transpose() * block));
    }

    let mut pairs = Vec::new();
    for first in 0..blocks.len() {
        for second in first + 1..blocks.len() {
            let pair_error = |source| AssemblyError::Pair {
                first,
                second,
                source,
            };
            let (who, _) =
                choose_generator(subjects, blocks[first].ncols(), blocks[second].ncols())
                    .map_err(|e| pair_error(ProtocolError::Feasibility(e)))?;
            let (generator, responder) = match who {
                Generator::First => (first, second),
                Generator::Second => (second, first),
            };
            let sender = AgencyA::new(centred_blocks[generator].clone()).map_err(pair_error)?;
            let receiver = AgencyB::new(centred_blocks[responder].clone()).map_err(pair_error)?;
            let (a, b) =
                run(sender, receiver, &stream_for(generator, responder)).map_err(pair_error)?;
            let product = a.product();
            let (g_at, r_at) = (offsets[generator], offsets[responder]);
            centred
                .view_mut((g_at, r_at), product.shape())
                .copy_from(product);
            centred
                .view_mut((r_at, g_at), (product.ncols(), product.nrows()))
                .copy_from(&product.transpose());
            pairs.push(PairRun {
                generator,
                responder,
                dimensions: *a.dimensions(),
                generator_learned: *a.learned(),
                responder_learned: *b.learned(),
            });
        }
    }
    let cross_products = CrossProducts::from_parts(
        subjects,
        all_sums,
        centred,
        blocks.iter().map(|b| b.ncols()),
    );
    let warnings = screen(blocks, &cross_products)?;
    Ok(Assembly {
        cross_products,
        pairs,
        warnings,
    })
}

/// The first column of `block` whose values are all equal (to the last bit: after centring it is
/// exactly zero only then, and the rank checks of the protocol catch near-constant ones).
fn constant_column(block: &DMatrix<f64>) -> Option<usize> {
    block.column_iter().position(|column| {
        let first = column[0];
        column.iter().all(|v| v.to_bits() == first.to_bits())
    })
}

/// Rare values of each block and cross-predictability of each agency's columns from all the
/// others' columns, attributed to the agency whose column it is.
pub(crate) fn screen(
    blocks: &[DMatrix<f64>],
    cross_products: &CrossProducts,
) -> Result<Vec<AgencyFinding>, BreachError> {
    let mut warnings = Vec::new();
    for (agency, block) in blocks.iter().enumerate() {
        warnings.extend(
            check_rare_values(block)
                .into_iter()
                .map(|finding| AgencyFinding { agency, finding }),
        );
    }
    if blocks.len() < 2 {
        return Ok(warnings);
    }
    for agency in 0..blocks.len() {
        let own = cross_products.columns_of(agency);
        let others: Vec<usize> = (0..cross_products.columns())
            .filter(|j| !own.contains(j))
            .collect();
        for mut finding in check_cross_prediction(cross_products, &own, &others)? {
            if let Finding::CrossPredictable { column, .. } = &mut finding {
                *column = cross_products.local_index(*column)?;
            }
            warnings.push(AgencyFinding { agency, finding });
        }
    }
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::SECURE_PRODUCT;
    use orthomask_core::key::{Key, StreamId};
    use orthomask_core::random::fill_standard_normal;

    fn gaussian(rows: usize, cols: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = Key::teaching(seed).stream(StreamId::Scratch(2000)).rng();
        let mut buf = vec![0.0; rows * cols];
        fill_standard_normal(&mut rng, &mut buf);
        DMatrix::from_fn(rows, cols, |i, j| {
            3.0 - j as f64 + (0.5 + j as f64) * buf[i + rows * j]
        })
    }

    fn streams(a: usize, b: usize) -> KeyedStream {
        Key::teaching(40 + a as u64).stream(StreamId::Scratch(b as u64))
    }

    /// Three agencies: the secure assembly equals the direct cross-products entry-wise, relative
    /// to the product of column norms (the constant has norm √n).
    #[test]
    fn three_agencies_match_direct_cross_products() {
        let blocks = vec![gaussian(60, 2, 1), gaussian(60, 5, 2), gaussian(60, 1, 3)];
        let assembly = assemble(&blocks, streams).unwrap();
        let direct = CrossProducts::direct(&blocks).unwrap();
        let secure = assembly.cross_products();
        let all: Vec<usize> = (0..8).collect();
        let (c_secure, c_direct) = (secure.centred(&all).unwrap(), direct.centred(&all).unwrap());
        for i in 0..8 {
            for j in 0..8 {
                let scale = (c_direct[(i, i)] * c_direct[(j, j)]).sqrt();
                let error = (c_secure[(i, j)] - c_direct[(i, j)]).abs();
                assert!(
                    error <= SECURE_PRODUCT * scale,
                    "centred ({i}, {j}): {error:e}"
                );
            }
        }
        assert!((secure.sums() - direct.sums()).amax() <= SECURE_PRODUCT * direct.sums().amax());
        // The augmented matrix rebuilt from sums and centred blocks is [1 D]ᵀ[1 D].
        let mut ones_and_data = DMatrix::from_element(60, 9, 1.0);
        let mut at = 1;
        for block in &blocks {
            ones_and_data
                .view_mut((0, at), block.shape())
                .copy_from(block);
            at += block.ncols();
        }
        let raw = ones_and_data.transpose() * &ones_and_data;
        let augmented = secure.augmented();
        for i in 0..9 {
            for j in 0..9 {
                let scale = (raw[(i, i)] * raw[(j, j)]).sqrt();
                let error = (augmented[(i, j)] - raw[(i, j)]).abs();
                assert!(
                    error <= SECURE_PRODUCT * scale,
                    "augmented ({i}, {j}): {error:e}"
                );
            }
        }
        assert_eq!(assembly.pairs().len(), 3);
        // Pair (0, 1) has 2 and 5 columns. Agency 0 sending: g = 29, weakest freedom
        // min(29, 60 − 29 − 5) = 26; agency 1 sending: g = 27, min(27, 60 − 27 − 2) = 27. So the
        // agency with more columns sends Z; it learns (60 − 27)·2 = 66 constraints and gives
        // away (27 + 2)·5 = 145.
        let pair = &assembly.pairs()[0];
        assert_eq!((pair.generator(), pair.responder()), (1, 0));
        assert_eq!(pair.dimensions().complement_columns(), 27);
        assert_eq!(pair.generator_learned().independent(), 66);
        assert_eq!(pair.responder_learned().independent(), 145);
        assert!(assembly.warnings().is_empty());
    }

    #[test]
    fn infeasible_assemblies_are_refused() {
        let blocks = vec![gaussian(5, 2, 1), gaussian(5, 3, 2)];
        assert_eq!(
            assemble(&blocks, streams).unwrap_err(),
            AssemblyError::TooFewSubjects {
                subjects: 5,
                columns: 5,
                needed: 6
            }
        );
        let blocks = vec![gaussian(8, 1, 1), gaussian(8, 0, 2)];
        assert_eq!(
            assemble(&blocks, streams).unwrap_err(),
            AssemblyError::NoColumns { agency: 1 }
        );
        let mut constant = gaussian(20, 2, 3);
        constant.column_mut(1).fill(1.0);
        assert_eq!(
            assemble(&[gaussian(20, 1, 4), constant], streams).unwrap_err(),
            AssemblyError::ConstantColumn {
                agency: 1,
                column: 1
            }
        );
        // Under n ≥ 1 + Σp some role of every pair is feasible (module documentation), so a
        // pair fails only on its data: here a rank-deficient block.
        let mut dependent = gaussian(30, 2, 4);
        let copy = dependent.column(0) * 2.0;
        dependent.set_column(1, &copy);
        let err = assemble(&[gaussian(30, 2, 5), dependent], streams).unwrap_err();
        assert!(
            matches!(
                err,
                AssemblyError::Pair {
                    first: 0,
                    second: 1,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn warnings_are_attributed_to_the_agency() {
        let a = gaussian(50, 2, 6);
        let mut b = gaussian(50, 2, 7);
        // b₀ ≈ a₀ + a₁ (cross-predictable), b₁ an indicator with 3 ones.
        let predicted = a.column(0) + a.column(1) + b.column(0) * 0.01;
        b.set_column(0, &predicted);
        b.set_column(
            1,
            &DMatrix::from_fn(50, 1, |i, _| f64::from(u8::from(i < 3))).column(0),
        );
        let assembly = assemble(&[a, b], streams).unwrap();
        let warnings = assembly.warnings();
        assert!(warnings.contains(&AgencyFinding {
            agency: 1,
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
    }
}
