//! Haar-distributed orthogonal operators as streams of Householder reflectors.
//!
//! # Construction
//! Stewart (1980), "The efficient generation of random orthogonal matrices with an application to
//! condition estimators", SIAM J. Numer. Anal. 17(3):403–409; equivalently Mezzadri (2007), "How
//! to generate random matrices from the classical compact groups", Notices AMS 54(5).
//!
//! For `k = 0 … d−2` draw `g_k ~ N(0, I_{d−k})` and let `H_k` be the Householder reflector on
//! coordinates `k …` that maps `g_k` to `−sign(g_{k,0})‖g_k‖e₁`. With
//! `D = diag(−sign(g_{0,0}), …, −sign(g_{d−2,0}), sign(z))`, `z ~ N(0, 1)`,
//!
//! `Q = H₀ H₁ ⋯ H_{d−2} D`
//!
//! is exactly Haar-distributed on O(d). It is the Householder QR of a Gaussian matrix with the
//! signs of `diag(R)` folded into `Q` — the fold without which a QR of a Gaussian matrix is *not*
//! Haar (its first column would always point into the half-space `q₁₁ < 0`). Drawing a fresh
//! Gaussian vector for each reflector is legitimate because, given the first `k` columns, the
//! trailing part of column `k+1` of the partly reduced Gaussian matrix is again `N(0, I)`.
//! nalgebra's `RandomOrthogonal` (a product of `d−1` Givens rotations) is not Haar and is not used.
//!
//! # Cost
//! A keyed operator stores only its key stream and the `d` signs (`O(d)` memory). Reflector `k`
//! is regenerated from its own sub-stream whenever it is needed, so one record costs `O(d²)` time
//! and `O(d)` memory, and the dense `d × d` matrix is never formed unless asked for.
//!
//! # Two application paths, chosen by size
//! * **Scalar** (single records, small blocks, every `d < BLOCKED_MIN_DIM`): reflector by
//!   reflector with the bit-exact kernels of [`crate::linalg::householder`]. This path gives the
//!   same bits natively and in wasm32 (`tests/cross_platform.rs`). For `d ≥ 256` natively the
//!   reflectors are *generated* ahead on the other cores (`linalg::parallel::pipeline`) while the
//!   calling thread applies them in order — the numbers are unchanged, only the wall time.
//! * **Blocked** (a block of at least [`BLOCKED_MIN_VECTORS`] records and `d ≥`
//!   [`BLOCKED_MIN_DIM`]): panels of [`PANEL`] consecutive reflectors are generated, combined
//!   into `I − Y T Yᵀ` ([`BlockReflector`]) and applied by matrix products — split over the cores
//!   by rows (right products) or columns (left products) for thick blocks, with the next panels
//!   generated on another core while this one applies for thin blocks. Agrees with the scalar path
//!   to [`BLOCKED_AGREES_WITH_SCALAR`](crate::tolerance::BLOCKED_AGREES_WITH_SCALAR) (tested),
//!   not bit for bit.
//!
//! Neither path allocates anything `d × d`: the blocked path holds one panel (`d × 64`) and
//! `rows × 64` work space.
//!
//! # Where a participant's time goes
//! Masking one record is `d²/2` normals plus `2d²` flops of reflector application. Profiled on
//! the benchmark machine: a normal costs about 18 cycles, of which ChaCha12 is 11 (per 64-bit
//! draw) and the ziggurat 7; applying a reflector to the record is about 4 cycles per entry (a
//! dependent sum, kept in its exact order for bit-reproducibility). Generation therefore
//! dominates, and it is what the second core takes over.

use super::{Mask, MaskError, check_dim};
use crate::key::KeyedStream;
use crate::linalg::householder::sign;
use crate::linalg::{BlockReflector, Reflector, parallel};
use crate::random::{BitSource, fill_standard_normal, standard_normal};
use nalgebra::{DMatrix, DMatrixViewMut};

/// Operators of at least this dimension apply blocks of records through the blocked (compact WY)
/// path; below it everything is scalar and bit-exact.
pub const BLOCKED_MIN_DIM: usize = 64;

/// A block needs at least this many records — rows for `M·Q`, columns for `Q·M` — to take the
/// blocked path; fewer (in particular one record on a participant's device) stay scalar.
pub const BLOCKED_MIN_VECTORS: usize = 8;

/// Reflectors per compact-WY panel (the inner dimension of the panel products; LAPACK's usual
/// block size).
pub const PANEL: usize = 64;

/// From this dimension on, the scalar path generates reflectors on the other cores natively.
const PIPELINE_MIN_DIM: usize = 256;

/// From this dimension on, the `d` sub-stream starts that give the signs `D` are spread over the
/// cores (each costs about 0.3 µs; starting a thread about 1 ms).
const PARALLEL_SIGNS_MIN_DIM: usize = 8192;

/// Reflector values per unit of work in the pipelined scalar path, and units allowed in flight:
/// at most `4 × 2¹⁶` doubles = 2 MiB of look-ahead, whatever `d`.
const PIPELINE_CHUNK_VALUES: usize = 1 << 16;
const PIPELINE_WINDOW: usize = 4;

/// Bands (threads) for a blocked product over `vectors` records: one per core once every band gets
/// at least 32 records (thinner bands make the products inefficient), else one.
fn bands_for(vectors: usize) -> usize {
    if vectors >= 64 {
        parallel::workers()
    } else {
        1
    }
}

#[derive(Clone, Debug)]
enum ReflectorSource {
    /// Regenerate reflector `k` from sub-stream `k` of the key stream.
    Keyed(KeyedStream),
    /// Gaussian vectors drawn once from a sequential source (e.g. MATLAB's twister).
    Stored(Vec<Vec<f64>>),
}

/// Which side of the block the operator multiplies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    /// `M·Q`: records are rows.
    Right,
    /// `Q·M`: records are columns.
    Left,
}

/// The order in which a product visits the reflectors `H₀ … H_{d−2}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    /// `H₀` first.
    Forward,
    /// `H_{d−2}` first.
    Backward,
}

/// A Haar-distributed orthogonal `d × d` operator.
#[derive(Clone, Debug)]
pub struct HaarOrthogonal {
    dim: usize,
    source: ReflectorSource,
    /// The diagonal `D`, as ±1.
    signs: Vec<f64>,
}

impl HaarOrthogonal {
    /// The operator drawn from a key stream; reflectors are regenerated on demand.
    ///
    /// # Errors
    /// [`MaskError::EmptyDimension`] when `dim == 0`.
    pub fn keyed(dim: usize, stream: KeyedStream) -> Result<Self, MaskError> {
        if dim == 0 {
            return Err(MaskError::EmptyDimension);
        }
        // Only the first normal of each sub-stream is needed for the signs: O(d) setup.
        let sign_of = |k: usize| {
            let first = standard_normal(&mut stream.substream(k as u64));
            if k + 1 < dim {
                -sign(first)
            } else {
                sign(first)
            }
        };
        let signs = if dim >= PARALLEL_SIGNS_MIN_DIM {
            parallel::map(dim, sign_of)
        } else {
            (0..dim).map(sign_of).collect()
        };
        Ok(Self {
            dim,
            source: ReflectorSource::Keyed(stream),
            signs,
        })
    }

    /// The operator drawn from a sequential bit source; its reflectors are stored (`O(d²)`).
    ///
    /// # Errors
    /// [`MaskError::EmptyDimension`] when `dim == 0`.
    pub fn from_source<B: BitSource + ?Sized>(
        dim: usize,
        source: &mut B,
    ) -> Result<Self, MaskError> {
        if dim == 0 {
            return Err(MaskError::EmptyDimension);
        }
        let mut vectors = Vec::with_capacity(dim.saturating_sub(1));
        let mut signs = Vec::with_capacity(dim);
        for k in 0..dim - 1 {
            let mut g = vec![0.0; dim - k];
            fill_standard_normal(source, &mut g);
            signs.push(-sign(g[0]));
            vectors.push(g);
        }
        signs.push(sign(standard_normal(source)));
        Ok(Self {
            dim,
            source: ReflectorSource::Stored(vectors),
            signs,
        })
    }

    /// The signs `D` (for tests that undo the sign fold).
    #[cfg(test)]
    pub(crate) fn signs(&self) -> &[f64] {
        &self.signs
    }

    /// Reflector `k`, acting on coordinates `offset + k …`, generated afresh.
    fn reflector(&self, k: usize, offset: usize) -> Reflector {
        match &self.source {
            ReflectorSource::Keyed(stream) => {
                let mut g = vec![0.0; self.dim - k];
                fill_standard_normal(&mut stream.substream(k as u64), &mut g);
                Reflector::annihilating_owned(g, offset + k).0
            }
            ReflectorSource::Stored(vectors) => Reflector::annihilating(&vectors[k], offset + k).0,
        }
    }

    fn reflector_count(&self) -> usize {
        self.dim - 1
    }

    /// Whether a block of `vectors` records takes the blocked path.
    fn takes_blocked_path(&self, vectors: usize) -> bool {
        self.dim >= BLOCKED_MIN_DIM && vectors >= BLOCKED_MIN_VECTORS
    }

    /// `f(H_k)` for every reflector in `order`, exactly as a plain loop would, but with the
    /// reflectors generated ahead on the other cores for large keyed operators.
    fn for_each_reflector(&self, offset: usize, order: Order, mut f: impl FnMut(&Reflector)) {
        let count = self.reflector_count();
        let at = |i: usize| match order {
            Order::Forward => i,
            Order::Backward => count - 1 - i,
        };
        let pipelined = matches!(self.source, ReflectorSource::Keyed(_))
            && self.dim >= PIPELINE_MIN_DIM
            && parallel::workers() > 1;
        if !pipelined {
            for i in 0..count {
                f(&self.reflector(at(i), offset));
            }
            return;
        }
        let per_chunk = (PIPELINE_CHUNK_VALUES / self.dim).max(1);
        parallel::pipeline(
            count.div_ceil(per_chunk),
            PIPELINE_WINDOW,
            |chunk| {
                let end = ((chunk + 1) * per_chunk).min(count);
                (chunk * per_chunk..end)
                    .map(|i| self.reflector(at(i), offset))
                    .collect::<Vec<_>>()
            },
            |chunk| chunk.iter().for_each(&mut f),
        );
    }

    /// The panels of [`PANEL`] consecutive reflectors, as `(first reflector, count)`, in `order`.
    fn panels(&self, order: Order) -> Vec<(usize, usize)> {
        let count = self.reflector_count();
        let mut panels: Vec<(usize, usize)> = (0..count)
            .step_by(PANEL)
            .map(|start| (start, PANEL.min(count - start)))
            .collect();
        if order == Order::Backward {
            panels.reverse();
        }
        panels
    }

    /// `H_start ⋯ H_{start+len−1}` as one block reflector.
    fn panel(&self, (start, len): (usize, usize), offset: usize) -> BlockReflector {
        let reflectors: Vec<Reflector> = (start..start + len)
            .map(|k| self.reflector(k, offset))
            .collect();
        // Consecutive Stewart reflectors all end at coordinate `offset + d`.
        BlockReflector::new(&reflectors).expect("Stewart reflectors share their last coordinate")
    }

    /// Apply the panels in `order` to a block whose rows (`left`) or columns (`right`) are the
    /// coordinates `offset .. offset + d`, each panel through `apply(panel, part of the block it
    /// touches)`.
    ///
    /// Threads are started once per product, never per panel (starting a thread costs from tens
    /// of microseconds to a millisecond on the loaded benchmark machine). Thin blocks (one band): a helper thread generates
    /// the next panels while this one applies ([`parallel::pipeline`]). Thick blocks: one band of
    /// records per core, and each band generates the panels it applies — generation is repeated
    /// per band, which costs `d²/2` normals per core against `2·records·d²/cores` flops of products.
    fn blocked(
        &self,
        target: DMatrixViewMut<'_, f64>,
        offset: usize,
        order: Order,
        side: Side,
        transpose: bool,
    ) {
        let panels = self.panels(order);
        let apply = |block: &BlockReflector, mut part: DMatrixViewMut<'_, f64>| {
            // Panel coordinates relative to the block's first coordinate `offset`.
            let start = block.offset() - offset;
            match side {
                Side::Right => block.apply_right(part.columns_range_mut(start..), transpose),
                Side::Left => block.apply_left(part.rows_range_mut(start..), transpose),
            }
        };
        let vectors = match side {
            Side::Right => target.nrows(),
            Side::Left => target.ncols(),
        };
        let bands = bands_for(vectors);
        if bands == 1 {
            let mut target = target;
            parallel::pipeline(
                panels.len(),
                2,
                |i| self.panel(panels[i], offset),
                |block| apply(&block, target.view_range_mut(.., ..)),
            );
            return;
        }
        let band = |mut part: DMatrixViewMut<'_, f64>| {
            for &panel in &panels {
                apply(&self.panel(panel, offset), part.view_range_mut(.., ..));
            }
        };
        match side {
            Side::Right => parallel::for_row_bands(target, bands, &band),
            Side::Left => parallel::for_column_bands(target, bands, &band),
        }
    }

    /// `M[:, off..off+d] ← M[:, off..off+d] · Q` (or `· Qᵀ`).
    pub(crate) fn right_mul_at(&self, m: &mut DMatrix<f64>, offset: usize, transpose: bool) {
        let scale_columns = |m: &mut DMatrix<f64>| {
            for (i, s) in self.signs.iter().enumerate() {
                if *s < 0.0 {
                    m.column_mut(offset + i).neg_mut();
                }
            }
        };
        // M Q = M H₀ ⋯ H_{d−2} D;  M Qᵀ = M D H_{d−2} ⋯ H₀.
        let order = if transpose {
            scale_columns(m);
            Order::Backward
        } else {
            Order::Forward
        };
        if self.takes_blocked_path(m.nrows()) {
            let target = m.columns_range_mut(offset..offset + self.dim);
            self.blocked(target, offset, order, Side::Right, transpose);
        } else {
            self.for_each_reflector(offset, order, |h| h.apply_to_rows(m));
        }
        if !transpose {
            scale_columns(m);
        }
    }

    /// `M[off..off+d, :] ← Q · M[off..off+d, :]` (or `Qᵀ ·`).
    pub(crate) fn left_mul_at(&self, m: &mut DMatrix<f64>, offset: usize, transpose: bool) {
        let scale_rows = |m: &mut DMatrix<f64>| {
            for (i, s) in self.signs.iter().enumerate() {
                if *s < 0.0 {
                    m.row_mut(offset + i).neg_mut();
                }
            }
        };
        // Q M = H₀ ⋯ H_{d−2} D M;  Qᵀ M = D H_{d−2} ⋯ H₀ M.
        let order = if transpose {
            Order::Forward
        } else {
            scale_rows(m);
            Order::Backward
        };
        if self.takes_blocked_path(m.ncols()) {
            let target = m.rows_range_mut(offset..offset + self.dim);
            self.blocked(target, offset, order, Side::Left, transpose);
        } else {
            self.for_each_reflector(offset, order, |h| h.apply_to_columns(m));
        }
        if transpose {
            scale_rows(m);
        }
    }
}

impl Mask for HaarOrthogonal {
    fn dim(&self) -> usize {
        self.dim
    }

    fn right_apply(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the Haar mask", self.dim, m.ncols(), "columns")?;
        self.right_mul_at(m, 0, false);
        Ok(())
    }

    fn right_apply_inverse(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the Haar mask", self.dim, m.ncols(), "columns")?;
        self.right_mul_at(m, 0, true);
        Ok(())
    }

    fn left_apply(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the Haar mask", self.dim, m.nrows(), "rows")?;
        self.left_mul_at(m, 0, false);
        Ok(())
    }

    fn left_apply_inverse(&self, m: &mut DMatrix<f64>) -> Result<(), MaskError> {
        check_dim("the Haar mask", self.dim, m.nrows(), "rows")?;
        self.left_mul_at(m, 0, true);
        Ok(())
    }

    /// `(Q⁻¹)[:, :k] = (Qᵀ)[:, :k] = (Q[:k, :])ᵀ`: the first `k` rows of `Q`, computed as
    /// `[I_k 0]·Q` in `O(k d²)` without forming `Q`.
    fn inverse_leading_columns(&self, k: usize) -> Result<DMatrix<f64>, MaskError> {
        if k > self.dim {
            return Err(MaskError::DimensionMismatch {
                operator: "the Haar mask",
                expected: self.dim,
                found: k,
                axis: "columns requested",
            });
        }
        let mut rows = DMatrix::identity(k, self.dim);
        self.right_mul_at(&mut rows, 0, false);
        Ok(rows.transpose())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{Key, StreamId};
    use crate::linalg::parallel;
    use crate::mask::test_support::{
        check_blocked_matches_scalar, check_consistent, check_orthogonal, dense_by_columns,
    };
    use crate::random::MatlabTwister;
    use crate::tolerance::ORTHOGONALITY;

    fn keyed(dim: usize, seed: u64) -> HaarOrthogonal {
        HaarOrthogonal::keyed(
            dim,
            Key::teaching(seed).stream(StreamId::Scratch(dim as u64)),
        )
        .unwrap()
    }

    #[test]
    fn keyed_operator_is_consistent_and_orthogonal() {
        for dim in [1, 2, 3, 9, 40] {
            let q = keyed(dim, 1);
            check_consistent(&q);
            check_orthogonal(&q);
        }
    }

    #[test]
    fn stored_operator_is_consistent_and_orthogonal() {
        let q = HaarOrthogonal::from_source(12, &mut MatlabTwister::new(535)).unwrap();
        check_consistent(&q);
        check_orthogonal(&q);
    }

    #[test]
    fn same_key_same_matrix() {
        assert_eq!(keyed(25, 3).to_dense(), keyed(25, 3).to_dense());
        assert_ne!(keyed(25, 3).to_dense(), keyed(25, 4).to_dense());
    }

    /// Stream and dense forms agree for the same key: the blocked path (matrix products over
    /// panels of reflectors) against the scalar dense matrix, at the threshold, between panel
    /// multiples, and above the size where scalar generation is pipelined.
    #[test]
    fn blocked_path_matches_scalar_dense_form() {
        for dim in [BLOCKED_MIN_DIM, PANEL + 37, 2 * PANEL + 1, 300] {
            let q = keyed(dim, 21);
            check_blocked_matches_scalar(&q);
            let dense = dense_by_columns(&q);
            let deviation = (dense.tr_mul(&dense) - DMatrix::identity(dim, dim)).amax();
            assert!(deviation < ORTHOGONALITY, "d = {dim}: {deviation}");
        }
        let stored = HaarOrthogonal::from_source(130, &mut MatlabTwister::new(7)).unwrap();
        check_blocked_matches_scalar(&stored);
    }

    /// Generating reflectors on other cores changes nothing: a record masked with the pipelined
    /// generator has the same bits as one masked on a single thread (inside a parallel region
    /// everything runs serially).
    #[test]
    fn pipelined_generation_is_bit_identical() {
        let q = keyed(700, 4);
        let x: Vec<f64> = (0..700).map(|i| (i % 13) as f64 - 6.0).collect();
        let pipelined = q.mask_row(&x).unwrap();
        let serial = parallel::map(2, |_| q.mask_row(&x).unwrap());
        for s in serial {
            assert!(
                s.iter()
                    .zip(&pipelined)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
            );
        }
        // And the signs computed in parallel are those of the serial definition.
        let d = PARALLEL_SIGNS_MIN_DIM;
        let serial_signs = parallel::map(2, |_| keyed(d, 4).signs().to_vec());
        assert_eq!(serial_signs[0], keyed(d, 4).signs());
    }

    #[test]
    fn zero_dimension_is_refused() {
        let stream = Key::teaching(1).stream(StreamId::Scratch(0));
        assert_eq!(
            HaarOrthogonal::keyed(0, stream).unwrap_err(),
            MaskError::EmptyDimension
        );
    }

    /// Sample statistics over many independent draws of dimension `n`.
    struct Moments {
        q11_mean: f64,
        q11_scaled_var: f64,
        trace_mean: f64,
        trace_var: f64,
    }

    fn moments(n: usize, draws: u64, undo_sign_fold: bool) -> Moments {
        let (mut q11, mut q11sq, mut tr, mut trsq) = (0.0, 0.0, 0.0, 0.0);
        for seed in 0..draws {
            let q = keyed(n, 10_000 + seed);
            let mut dense = q.to_dense();
            if undo_sign_fold {
                for (j, s) in q.signs().iter().enumerate() {
                    dense.column_mut(j).scale_mut(*s);
                }
            }
            q11 += dense[(0, 0)];
            q11sq += n as f64 * dense[(0, 0)].powi(2);
            let t = dense.trace();
            tr += t;
            trsq += t * t;
        }
        let d = draws as f64;
        Moments {
            q11_mean: q11 / d,
            q11_scaled_var: q11sq / d,
            trace_mean: tr / d,
            trace_var: trsq / d - (tr / d).powi(2),
        }
    }

    /// Haar on O(n): `E[q₁₁] = 0`, `E[n q₁₁²] = 1` exactly, and (Diaconis & Shahshahani 1994)
    /// `E[tr Q] = 0`, `E[(tr Q)²] = 1` for n ≥ 2. With 3000 draws the standard errors are about
    /// 0.018 / √n for q₁₁, 0.026 for n·q₁₁², 0.018 for the trace mean and 0.026 for its variance;
    /// bounds are five standard errors.
    #[test]
    fn haar_moments_hold() {
        let n = 16;
        let m = moments(n, 3000, false);
        assert!(
            m.q11_mean.abs() < 5.0 * 0.018 / (n as f64).sqrt(),
            "E[q11] {}",
            m.q11_mean
        );
        assert!(
            (m.q11_scaled_var - 1.0).abs() < 0.13,
            "E[n q11²] {}",
            m.q11_scaled_var
        );
        assert!(m.trace_mean.abs() < 0.09, "E[tr] {}", m.trace_mean);
        assert!((m.trace_var - 1.0).abs() < 0.13, "Var[tr] {}", m.trace_var);
    }

    /// The same test rejects a QR of a Gaussian matrix without the sign fold: its first column
    /// always lies in `q₁₁ < 0`, which is the trap the issue warns about.
    #[test]
    fn haar_moment_test_rejects_unfolded_qr() {
        let n = 16;
        let m = moments(n, 300, true);
        assert!(
            m.q11_mean < -0.1,
            "E[q11] without the sign fold is {}",
            m.q11_mean
        );
    }
}
