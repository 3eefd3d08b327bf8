//! The smallest eigenvalue of a Gram matrix `X Xᵀ` without forming it.
//!
//! The condition (3.5) margin of a simulated cohort needs `λ_min(X₂X₂ᵀ)` for the `m × p₂` padding
//! `X₂` (`p₂ > m`). Forming the `m × m` Gram matrix and its eigen-decomposition costs
//! `O(m²p₂ + m³)`; here it is found from products with the operator `v ↦ X(Xᵀv)` only, `O(m p₂)`
//! each, never forming anything `m × m` or `p₂ × p₂`.
//!
//! # Method
//! Lanczos with full reorthogonalisation (Golub & Van Loan, *Matrix Computations*, 4th ed.,
//! §10.1–10.3), written in its Arnoldi form: with an orthonormal basis `V` (`m × j`) of the Krylov
//! space of a start vector, `H = VᵀAV` is computed column by column (Gram–Schmidt twice against
//! every basis vector, "twice is enough"), so `A V = V H + f e_jᵀ` holds to rounding with `f ⊥ V`.
//! `H` is tridiagonal (to rounding), so the Ritz pair `(θ, y = V s)` of its smallest eigenvalue
//! comes from bisection and inverse iteration in `O(j)` ([`super::tridiagonal`]) after every step,
//! and has residual `‖A y − θ y‖ = ‖f‖·|s_j|`. Each product `X(Xᵀv)` is one pass over the columns
//! of `X` (natively split over the cores for large `X`): the cost is reading `X` once.
//!
//! When the basis reaches [`KRYLOV_MAX`] vectors it is thick-restarted (Wu & Simon 2000): the
//! [`RESTART_KEEP`] smallest Ritz vectors are kept, `H` becomes their diagonal of Ritz values plus
//! the couplings to the next vector `f/‖f‖` (no longer tridiagonal, so it is decomposed densely),
//! and memory stays `m × KRYLOV_MAX`. The protocol's padding converges before the first restart
//! for cohorts of a few thousand (`O(m^{1/3})` steps: the bottom of the Marchenko–Pastur spectrum
//! is separated by `O(m^{−2/3})` of its width).
//!
//! # Accuracy and the direction of the error
//! * **A Ritz value bounds `λ_min` from above**: `θ = min_{y ∈ span V} yᵀAy/yᵀy ≥ λ_min`
//!   (Courant–Fischer), so an unconverged `θ` overstates `λ_min` — and the condition (3.5) margin,
//!   the unsafe direction.
//! * **The residual bounds the error**: some eigenvalue `λ` satisfies `|λ − θ| ≤ ‖Ay − θy‖` for a
//!   unit `y` (Golub & Van Loan, Theorem 8.1.13 / Bauer–Fike for symmetric matrices). When that
//!   eigenvalue is `λ_min`, `θ − ‖r‖ ≤ λ_min ≤ θ`.
//! * **What is reported** is the guarded value `max(θ − ‖r‖, 0)` with `‖r‖` recomputed
//!   explicitly (one more product) once the cheap estimate `‖f‖·|s_j|` has met the stopping rule.
//!   The reported value is therefore never above `λ_min` and below it by at most `‖r‖`.
//! * **The stopping rule** is `‖r‖ ≤ max(RESIDUAL_RELATIVE·θ, DECISION_SHARE·|θ − t|) +
//!   RESIDUAL_FLOOR·ε_mach·θ_max` (`θ_max` the largest Ritz value, ≈ `‖A‖`), where the middle
//!   term is present only when the caller names a threshold `t` that matters (the condition (3.5)
//!   margin compares `λ_min(X₂X₂ᵀ)` with `t = λ_max(X₁X₁ᵀ)`). Without a threshold the reported
//!   value is within `RESIDUAL_RELATIVE` of `λ_min`, relative. With one, it is additionally
//!   allowed to be off by [`DECISION_SHARE`] of its distance to `t`: then `θ − ‖r‖` and `λ_min`
//!   lie on the same side of `t` (if `θ > t`, `λ_min ≥ θ − ‖r‖ > t`; if `θ ≤ t`, `λ_min ≤ θ ≤ t`),
//!   so the comparison is decided exactly, and a draw far from the threshold stops after about
//!   half the products. The last term is the rounding level of the products: a `λ_min` within a
//!   few thousand `ε_mach·‖A‖` of zero cannot be resolved by any backward-stable method (the
//!   dense one included). Because the error only ever lowers the value, a run is never said to
//!   satisfy (3.5) when it does not.
//! * **The remaining risk** is misconvergence: `θ` converging to `λ₂` while the start vector has
//!   (numerically) no component along the bottom eigenvector. The start vector is a fixed
//!   pseudo-random Gaussian vector, independent of `X`, whose component along any given unit
//!   vector is below `10⁻⁸` with probability about `10⁻⁸`; and full reorthogonalisation lets
//!   rounding reintroduce any missing direction.
//! * **Fallbacks to the dense computation**: below [`DENSE_MAX_ROWS`] rows (where `m³` is cheaper
//!   than the bookkeeping), and when the budget of [`MAX_PRODUCTS_PER_ROW`]`·m` products is spent
//!   without meeting the stopping rule — possible only for pathologically clustered spectra (an
//!   explicitly ill-conditioned `X` with a thick restart), never seen with the Gaussian padding of
//!   the protocol (tests: `tests/margin_lanczos.rs`). A matrix with fewer columns than rows has
//!   `λ_min = 0` exactly (its Gram matrix has rank below `m`).
//! * **Reproducibility**: the products are split over the cores natively, so the last bits of the
//!   margin may differ between machines; it is a diagnostic, not part of any mask.

use nalgebra::{DMatrix, DVector};

use super::parallel;
use super::product::{Op, gemm};
use super::tridiagonal::smallest_eigenpair;
use crate::key::{Key, StreamId};
use crate::random::fill_standard_normal;

/// Up to this many rows the Gram matrix is formed and decomposed densely: its cache-blocked
/// product and `m³` eigen-decomposition (at most 0.5 MB) then cost no more than the memory-bound
/// Lanczos products (measured crossover on the benchmark machine: 200–300 rows for the default
/// padding), and the result is exact to rounding.
pub const DENSE_MAX_ROWS: usize = 256;

/// Largest Krylov basis before a thick restart (memory `m × KRYLOV_MAX`).
pub const KRYLOV_MAX: usize = 512;

/// Ritz vectors kept across a thick restart.
pub const RESTART_KEEP: usize = 128;

/// Stopping rule, relative part: the residual of the smallest Ritz pair must be at most this
/// fraction of the Ritz value.
pub const RESIDUAL_RELATIVE: f64 = 1e-10;

/// Stopping rule against a threshold `t`: the residual may be this fraction of `|θ − t|`, which
/// decides the comparison with `t` and bounds the reported value's error by 0.1 % of its
/// distance to `t`.
pub const DECISION_SHARE: f64 = 1e-3;

/// Stopping rule, absolute part in units of `ε_mach·‖A‖`: the rounding level of the products
/// themselves (`X(Xᵀv)` sums `p` terms), below which no residual can be certified.
pub const RESIDUAL_FLOOR: f64 = 4096.0;

/// Products with `A` allowed per row of `X` before the dense fallback.
pub const MAX_PRODUCTS_PER_ROW: usize = 2;

/// After a thick restart `H` is decomposed densely, so convergence is tested every this many
/// steps instead of after each.
const CHECK_EVERY_AFTER_RESTART: usize = 16;

/// Products over at least this many entries of `X` are split over the cores natively.
const PARALLEL_MIN_ENTRIES: usize = 1 << 20;

/// A direction is kept when its part orthogonal to the basis is more than this fraction of it;
/// less means it lay in the span to rounding.
const ORTHOGONAL_KEEPS: f64 = 1e-8;

/// The start vector's fixed seed: any fixed Gaussian vector independent of the data will do; a
/// fixed one keeps the margin reproducible.
const START_SEED: [u8; 32] = *b"orthomask/lanczos-start-vector\0\0";

/// How the smallest eigenvalue was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GramMethod {
    /// Fewer columns than rows: the Gram matrix is singular, `λ_min = 0`.
    RankDeficient,
    /// The `m × m` Gram matrix was formed and decomposed.
    Dense,
    /// Lanczos on `v ↦ X(Xᵀv)`, converged.
    Lanczos,
}

/// The smallest eigenvalue of `X Xᵀ` with its guard (module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GramEigenvalue {
    /// The reported value `max(θ − ‖r‖, 0)`: never above `λ_min` (up to misconvergence).
    pub lower: f64,
    /// The Ritz value `θ ≥ λ_min` (the eigenvalue itself for the dense and rank paths).
    pub ritz: f64,
    /// `‖X Xᵀ y − θ y‖` of the Ritz vector (0 for the dense and rank paths).
    pub residual: f64,
    /// Products with `X Xᵀ` (each one `Xᵀv` and one `X·`).
    pub products: usize,
    /// The path taken.
    pub method: GramMethod,
}

/// `λ_min(X Xᵀ)` for an `m × p` matrix `X`, by the cheapest reliable path (module documentation).
/// `threshold`, when given, is the value the caller compares `λ_min` with; the iteration then
/// stops once that comparison is decided and the value is within [`DECISION_SHARE`] of its
/// distance to the threshold (or within [`RESIDUAL_RELATIVE`], whichever comes first).
///
/// Returns `None` for `m = 0` or non-finite entries.
pub fn smallest_gram_eigenvalue(
    x: &DMatrix<f64>,
    threshold: Option<f64>,
) -> Option<GramEigenvalue> {
    let (m, p) = x.shape();
    if m == 0 || x.iter().any(|v| !v.is_finite()) {
        return None;
    }
    if p < m {
        return Some(GramEigenvalue {
            lower: 0.0,
            ritz: 0.0,
            residual: 0.0,
            products: 0,
            method: GramMethod::RankDeficient,
        });
    }
    if m <= DENSE_MAX_ROWS {
        return Some(dense(x));
    }
    Some(lanczos_smallest_gram_eigenvalue(x, threshold).unwrap_or_else(|| dense(x)))
}

/// `λ_min(X Xᵀ − L Lᵀ)` for an `m × p` matrix `X` and an `m × l` matrix `L` whose columns are `X`
/// times orthonormal columns, `L = X Q` with `QᵀQ = I` — so that the difference is the Gram
/// matrix `X(I − QQᵀ)Xᵀ = Y Yᵀ` of `X`'s part outside `Q`'s span, positive semidefinite, and found
/// without forming that part. The collector's check of the padding uses it: with `Z = Y B_k` the
/// provider's batch and `L` the unmasked leading columns, `Z Zᵀ − L Lᵀ` is the padding block's
/// Gram matrix, and removing `B_k` from all `p` columns would cost far more than the leading `p₁`.
/// The operator is `v ↦ X(Xᵀv) − L(Lᵀv)`; everything else — the paths, the guard, the
/// `threshold` — is as in [`smallest_gram_eigenvalue`].
///
/// Returns `None` for `m = 0`, non-finite entries, or `L` with another number of rows than `X`.
pub fn smallest_gram_difference_eigenvalue(
    x: &DMatrix<f64>,
    less: &DMatrix<f64>,
    threshold: Option<f64>,
) -> Option<GramEigenvalue> {
    let (m, p) = x.shape();
    if m == 0 || less.nrows() != m || x.iter().chain(less.iter()).any(|v| !v.is_finite()) {
        return None;
    }
    if p < m + less.ncols() {
        // `Y` has `p − l < m` columns (when `L` is what the contract says): a singular Gram matrix.
        return Some(GramEigenvalue {
            lower: 0.0,
            ritz: 0.0,
            residual: 0.0,
            products: 0,
            method: GramMethod::RankDeficient,
        });
    }
    let gram = Gram {
        x,
        less: Some(less),
    };
    if m <= DENSE_MAX_ROWS {
        return Some(dense_of(&gram));
    }
    Some(lanczos(gram, threshold).unwrap_or_else(|| dense_of(&gram)))
}

/// The dense reference: the smallest eigenvalue of the formed `m × m` Gram matrix
/// (`O(m²p + m³)`).
pub fn dense_smallest_gram_eigenvalue(x: &DMatrix<f64>) -> f64 {
    (x * x.transpose())
        .symmetric_eigenvalues()
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
}

fn dense(x: &DMatrix<f64>) -> GramEigenvalue {
    dense_of(&Gram { x, less: None })
}

fn dense_of(gram: &Gram<'_>) -> GramEigenvalue {
    let mut formed = gram.x * gram.x.transpose();
    if let Some(l) = gram.less {
        formed -= l * l.transpose();
    }
    let lambda = formed
        .symmetric_eigenvalues()
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .max(0.0);
    GramEigenvalue {
        lower: lambda,
        ritz: lambda,
        residual: 0.0,
        products: 0,
        method: GramMethod::Dense,
    }
}

/// `out ← X(Xᵀv) = Σⱼ (xⱼᵀv) xⱼ`: one pass over the columns `xⱼ`, each used twice while it is in
/// cache. Natively, large `X` are split by columns over the cores and the partial sums added.
fn gram_product(x: &DMatrix<f64>, v: &[f64], out: &mut [f64]) {
    let m = x.nrows();
    let columns = x.as_slice();
    let partial = |range: std::ops::Range<usize>| {
        let mut acc = vec![0.0; m];
        add_gram_columns(&columns[range.start * m..range.end * m], m, v, &mut acc);
        acc
    };
    let parts = if x.len() >= PARALLEL_MIN_ENTRIES {
        parallel::workers()
    } else {
        1
    };
    let n = x.ncols();
    let chunk = n.div_ceil(parts).max(1);
    let sums = parallel::map(n.div_ceil(chunk), |i| {
        partial(i * chunk..n.min((i + 1) * chunk))
    });
    out.fill(0.0);
    for sum in sums {
        out.iter_mut().zip(&sum).for_each(|(o, s)| *o += s);
    }
}

/// `acc += Σⱼ (xⱼᵀv) xⱼ` over the columns of `columns` (column-major, `m` rows), four columns at
/// a time: the four dot products share each load of `v` and run as independent chains, and the
/// update of `acc` is one vectorisable pass per four columns.
fn add_gram_columns(columns: &[f64], m: usize, v: &[f64], acc: &mut [f64]) {
    let mut groups = columns.chunks_exact(4 * m);
    for group in &mut groups {
        let (c0, rest) = group.split_at(m);
        let (c1, rest) = rest.split_at(m);
        let (c2, c3) = rest.split_at(m);
        let mut t = [0.0; 4];
        for i in 0..m {
            let vi = v[i];
            t[0] += c0[i] * vi;
            t[1] += c1[i] * vi;
            t[2] += c2[i] * vi;
            t[3] += c3[i] * vi;
        }
        for i in 0..m {
            acc[i] += t[0] * c0[i] + t[1] * c1[i] + t[2] * c2[i] + t[3] * c3[i];
        }
    }
    for column in groups.remainder().chunks_exact(m) {
        let t: f64 = column.iter().zip(v).map(|(c, vi)| c * vi).sum();
        acc.iter_mut().zip(column).for_each(|(a, c)| *a += t * c);
    }
}

/// The operator `v ↦ X(Xᵀv) − L(Lᵀv)` (no `L`: the plain Gram matrix).
#[derive(Clone, Copy)]
struct Gram<'a> {
    x: &'a DMatrix<f64>,
    less: Option<&'a DMatrix<f64>>,
}

impl Gram<'_> {
    fn rows(&self) -> usize {
        self.x.nrows()
    }

    fn apply(&self, v: &DVector<f64>, out: &mut DVector<f64>) {
        gram_product(self.x, v.as_slice(), out.as_mut_slice());
        if let Some(l) = self.less {
            let mut t = DVector::zeros(l.ncols());
            t.gemv_tr(1.0, l, v, 0.0);
            out.gemv(-1.0, l, &t, 1.0);
        }
    }
}

/// The Krylov basis, the projected matrix and the operator.
struct Krylov<'a> {
    gram: Gram<'a>,
    /// `m × capacity` storage; columns `..len` hold the orthonormal basis.
    basis: DMatrix<f64>,
    len: usize,
    /// `VᵀAV` for the expanded columns.
    projected: DMatrix<f64>,
    /// Largest `|H|` entry so far: the scale `‖A‖` of the products' rounding errors.
    scale: f64,
    /// Whether a thick restart made `H` non-tridiagonal.
    restarted: bool,
    products: usize,
}

impl<'a> Krylov<'a> {
    fn new(gram: Gram<'a>, capacity: usize) -> Self {
        Self {
            gram,
            basis: DMatrix::zeros(gram.rows(), capacity),
            len: 0,
            projected: DMatrix::zeros(capacity, capacity),
            scale: 0.0,
            restarted: false,
            products: 0,
        }
    }

    fn apply(&mut self, v: &DVector<f64>) -> DVector<f64> {
        let mut out = DVector::zeros(self.gram.rows());
        self.gram.apply(v, &mut out);
        self.products += 1;
        out
    }

    /// Remove the basis components of `w` (Gram–Schmidt twice); returns the coefficients `Vᵀw`.
    fn orthogonalise(&self, w: &mut DVector<f64>) -> DVector<f64> {
        let v = self.basis.columns(0, self.len);
        let mut h = DVector::zeros(self.len);
        h.gemv_tr(1.0, &v, w, 0.0);
        w.gemv(-1.0, &v, &h, 1.0);
        let mut again = DVector::zeros(self.len);
        again.gemv_tr(1.0, &v, w, 0.0);
        w.gemv(-1.0, &v, &again, 1.0);
        h + again
    }

    fn push(&mut self, v: &DVector<f64>) {
        self.basis.set_column(self.len, v);
        self.len += 1;
    }

    /// Expand the newest basis vector: fill its column of `H` and return `f`, the part of its
    /// image outside the basis (`A V = V H + f e_lenᵀ`).
    fn expand(&mut self) -> DVector<f64> {
        let c = self.len - 1;
        let v = self.basis.column(c).into_owned();
        let mut w = self.apply(&v);
        let h = self.orthogonalise(&mut w);
        for (i, &value) in h.iter().enumerate() {
            self.projected[(i, c)] = value;
            self.projected[(c, i)] = value;
            self.scale = self.scale.max(value.abs());
        }
        w
    }

    /// The smallest Ritz value, its eigenvector `s` of `H` and (an upper bound on) the largest.
    fn smallest_ritz(&self) -> (f64, DVector<f64>, f64) {
        let k = self.len;
        if self.restarted {
            let (values, vectors) = self.ritz();
            return (values[0], vectors.column(0).into_owned(), values[k - 1]);
        }
        let a: Vec<f64> = (0..k).map(|i| self.projected[(i, i)]).collect();
        let b: Vec<f64> = (1..k).map(|i| self.projected[(i, i - 1)]).collect();
        let (_, hi) = super::tridiagonal::gershgorin(&a, &b);
        let (theta, s) = smallest_eigenpair(&a, &b);
        (theta, DVector::from_vec(s), hi)
    }

    /// Eigen-decomposition of the projected matrix, eigenvalues ascending.
    fn ritz(&self) -> (Vec<f64>, DMatrix<f64>) {
        let h = self
            .projected
            .view((0, 0), (self.len, self.len))
            .into_owned();
        let eigen = h.symmetric_eigen();
        let mut order: Vec<usize> = (0..self.len).collect();
        order.sort_by(|&a, &b| eigen.eigenvalues[a].total_cmp(&eigen.eigenvalues[b]));
        let values = order.iter().map(|&i| eigen.eigenvalues[i]).collect();
        let vectors =
            DMatrix::from_fn(self.len, self.len, |r, c| eigen.eigenvectors[(r, order[c])]);
        (values, vectors)
    }

    /// Thick restart: keep the `keep` smallest Ritz vectors as the basis, `H = diag(θ)`.
    fn restart(&mut self, keep: usize) {
        let (values, vectors) = self.ritz();
        let mut kept = DMatrix::zeros(self.gram.rows(), keep);
        gemm(
            1.0,
            &self.basis.columns(0, self.len),
            Op::Plain,
            &vectors.columns(0, keep),
            Op::Plain,
            0.0,
            &mut kept,
        );
        self.basis.columns_mut(0, keep).copy_from(&kept);
        self.projected.fill(0.0);
        for (i, &theta) in values.iter().take(keep).enumerate() {
            self.projected[(i, i)] = theta;
        }
        self.len = keep;
        self.restarted = true;
    }

    /// The next basis vector from `f`: orthonormalised against the basis once more, or — when
    /// `f` lies in the span to rounding (the Krylov space is invariant) — a fresh pseudo-random
    /// direction, so eigenvalues outside an invariant subspace are still found.
    fn next_vector(&self, f: DVector<f64>, draws: &mut u64) -> DVector<f64> {
        // `f` below this is rounding noise of products of size ‖A‖ ≈ max |H|.
        let negligible = RESIDUAL_FLOOR * f64::EPSILON * self.scale;
        let mut v = f;
        let mut fresh = false;
        loop {
            let before = v.norm();
            self.orthogonalise(&mut v);
            let norm = v.norm();
            if (fresh || before > negligible) && norm > ORTHOGONAL_KEEPS * before {
                return v / norm;
            }
            // The caller never asks for a vector beyond `m`, so a complement exists and a
            // Gaussian draw lands outside the span with probability one.
            *draws += 1;
            v = start_direction(self.gram.rows(), *draws);
            fresh = true;
        }
    }
}

/// A pseudo-random Gaussian direction from the fixed start stream's `draw`-th sub-stream.
fn start_direction(rows: usize, draw: u64) -> DVector<f64> {
    let mut v = DVector::zeros(rows);
    let stream = Key::from_bytes(START_SEED).stream(StreamId::Scratch(0));
    fill_standard_normal(&mut stream.substream(draw), v.as_mut_slice());
    v
}

/// `λ_min(X Xᵀ)` by Lanczos alone (module documentation; `threshold` as in
/// [`smallest_gram_eigenvalue`]): `None` when the stopping rule is not met within
/// `MAX_PRODUCTS_PER_ROW·m` products (or `m = 0`, or non-finite entries).
///
/// For `m ≤ KRYLOV_MAX` the basis can grow to the whole space, so the result is then exact to
/// rounding at the latest after `m` products.
pub fn lanczos_smallest_gram_eigenvalue(
    x: &DMatrix<f64>,
    threshold: Option<f64>,
) -> Option<GramEigenvalue> {
    if x.nrows() == 0 || x.iter().any(|v| !v.is_finite()) {
        return None;
    }
    lanczos(Gram { x, less: None }, threshold)
}

/// The Lanczos iteration on `gram` (`m ≥ 1` rows, finite entries).
fn lanczos(gram: Gram<'_>, threshold: Option<f64>) -> Option<GramEigenvalue> {
    let m = gram.rows();
    let capacity = m.min(KRYLOV_MAX);
    let keep = RESTART_KEEP.min(capacity - 1).max(1);
    let budget = MAX_PRODUCTS_PER_ROW * m + CHECK_EVERY_AFTER_RESTART;
    let mut krylov = Krylov::new(gram, capacity);
    let mut draws = 0u64;
    let start = start_direction(m, 0);
    let start_norm = start.norm();
    krylov.push(&(start / start_norm));
    let mut since_check = 0;
    loop {
        let f = krylov.expand();
        since_check += 1;
        let exhausted = krylov.len == m;
        let full = krylov.len == capacity;
        if !krylov.restarted || since_check >= CHECK_EVERY_AFTER_RESTART || full || exhausted {
            since_check = 0;
            let (theta, s, theta_max) = krylov.smallest_ritz();
            let decided = threshold.map_or(0.0, |t| DECISION_SHARE * (theta - t).abs());
            let tolerance = (RESIDUAL_RELATIVE * theta.abs()).max(decided)
                + RESIDUAL_FLOOR * f64::EPSILON * theta_max.abs();
            let estimate = f.norm() * s[krylov.len - 1].abs();
            if estimate <= tolerance || exhausted {
                let residual = explicit_residual(&mut krylov, &s, theta);
                if residual <= tolerance || exhausted {
                    return Some(GramEigenvalue {
                        lower: (theta - residual).max(0.0),
                        ritz: theta,
                        residual,
                        products: krylov.products,
                        method: GramMethod::Lanczos,
                    });
                }
            }
            if krylov.products >= budget {
                return None;
            }
            if full {
                krylov.restart(keep);
            }
        }
        let next = krylov.next_vector(f, &mut draws);
        krylov.push(&next);
    }
}

/// `‖A y − θ y‖` for the Ritz vector `y = V s`, computed with one more product.
fn explicit_residual(krylov: &mut Krylov<'_>, s: &DVector<f64>, theta: f64) -> f64 {
    let y = krylov.basis.columns(0, krylov.len) * s;
    let ay = krylov.apply(&y);
    (ay - y * theta).norm()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::HAND_COMPUTED;

    /// By hand: `X = diag(1, 2, 3) ⊕ 0` padded to 3 × 4 has `X Xᵀ = diag(1, 4, 9)`, λ_min = 1; a
    /// 3 × 2 matrix has a singular Gram matrix.
    #[test]
    fn by_hand() {
        let mut x = DMatrix::zeros(3, 4);
        for i in 0..3 {
            x[(i, i)] = (i + 1) as f64;
        }
        for estimate in [
            smallest_gram_eigenvalue(&x, None).unwrap(),
            lanczos_smallest_gram_eigenvalue(&x, None).unwrap(),
            lanczos_smallest_gram_eigenvalue(&x, Some(0.5)).unwrap(),
        ] {
            assert!((estimate.lower - 1.0).abs() < HAND_COMPUTED, "{estimate:?}");
            assert!(estimate.lower <= estimate.ritz);
        }
        let thin = DMatrix::from_element(3, 2, 1.0);
        assert_eq!(
            smallest_gram_eigenvalue(&thin, None).unwrap().method,
            GramMethod::RankDeficient
        );
        assert!(smallest_gram_eigenvalue(&DMatrix::zeros(0, 3), None).is_none());
        let mut nan = x.clone();
        nan[(1, 1)] = f64::NAN;
        assert!(smallest_gram_eigenvalue(&nan, None).is_none());
    }
}
