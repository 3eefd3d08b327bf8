//! Snapping a checked cohort's exact identities, so that nothing below the check's allowances
//! reaches the release (issue 43's adversarial review, "below every allowance, through exact
//! identities").
//!
//! # The channel it closes
//! The cohort check refuses statistics off an identity of honest records by more than its
//! rounding allowance, and lets anything within it through. A party that moves one record by
//! `δ` below the allowance — a right-masking service adding `δ` to a coordinate of a share it
//! holds, the provider adding `δ·(A₂e_j)(x_jB_k)` to its batch — leaves the identity's residue
//! at `δ` times that record's answer: a count of yes answers off a whole number by `±δ/2`, a
//! yes/no column's `Σx² − Σx` at `(δ + δ²)x_j`. Anyone who reads the release reads that
//! residue, so the perturbing party reads the answer (`tests/identity_channel.rs`).
//!
//! # What is snapped
//! Every condition the check decides as an identity, without device-side DP: the equalities
//! (`Σx² = Σx` of a 0/1 column, two options never both chosen, an unanswered value at its
//! neutral value, a model term equal to its formula — and, for a linear one, times every column)
//! and the lattices decided (a whole number of steps: `Σk`, `Σk(k − 1)/2`, `Σk_j k_k`). Each is
//! linear in `θ = (s, P)`, the cohort's column sums and cross-products in unit coordinates: rows
//! `Aθ = b` with `b` the equality's 0 or the lattice value's nearest whole number. The honest
//! cohort's `θ₀` meets every row exactly, and the check has just shown `θ` within each row's
//! allowance of it — below a quarter step for every lattice row it decided
//! ([`LATTICE_RESOLUTION`](super::LATTICE_RESOLUTION)) — so the nearest whole numbers are `θ₀`'s
//! and `b = Aθ₀`. The snapped statistics are the least change that meets them,
//! `θ′ = θ + A⁺(b − Aθ)` (solved per connected group of rows, which share no variable with
//! another group): `Aθ′ = Aθ₀` exactly, so every statistic an identity fixes is the honest one,
//! whatever was perturbed; what `θ′` keeps of a perturbation lies in directions no identity
//! fixes, whose honest values nobody knows.
//!
//! # The cohort that carries them
//! The collector then replaces the cohort's `n × p₁` block `Y` by one with exactly those
//! statistics: with `Y_c` the centred block in unit coordinates, `C = Y_cᵀY_c` and `C′` the
//! snapped centred cross-products, `Y′ = 1ₙm′ᵀ + Y_c T` with
//! `T = C^{−1/2}(C^{1/2}C′C^{1/2})^{1/2}C^{−1/2}` on the directions where `C` exceeds its
//! rounding bound (the check's (C4) error; other directions are empty to rounding and stay so).
//! `TᵀCT = C′` there, and `T` is the symmetric positive map closest to the identity with that
//! property (the optimal-transport map between the two Gram matrices), so an honest cohort moves
//! by rounding only. `T` is a function of the statistics alone, so `Y ↦ Y′` commutes with every
//! orthogonal `A` with `A1ₙ = 1ₙ`: snapping `A·Y` gives `A·Y′`, the release keeps its law, and
//! its `XᵀX` and means are the snapped ones. The QA column is the constant. With device-side DP
//! no identity holds exactly (the noise is in every answer), the check decides none, and the
//! noise itself hides a `δ` far below it: the cohort is returned as it came.

use super::{
    CohortCheck, CohortMoments, CohortRefusal, ENTRY_ROUNDINGS, LATTICE_RESOLUTION, Test, Units,
    centred_with_error,
};
use nalgebra::{DMatrix, DVector, SymmetricEigen};
use orthomask_core::protocol::accuracy::UNIT_ROUNDOFF;

/// Singular values of a group's rows below this fraction of its largest are treated as zero in
/// the least-change solve: rows that repeat one identity (a 0/1 column's lattice and its
/// `Σx² = Σx`) are dependent, and their targets agree.
const DEPENDENT_ROWS: f64 = 1e-12;

/// What snapping did to a cohort.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SnapReport {
    /// Identities made exact.
    pub identities: usize,
    /// The largest change of an entry, as a fraction of its column's declared width.
    pub largest_change: f64,
    /// Directions of the cohort's columns with no spread beyond rounding, kept so.
    pub empty_directions: usize,
}

/// One identity: its coefficients on `θ` and its exact value.
struct Row {
    coefficients: Vec<(usize, f64)>,
    target: f64,
}

impl CohortCheck {
    /// Check the cohort `data` (`n × p₁` in declared units, the QA column last at `c`: what
    /// `DataCollector::unmask_cohort` and `combine_parts` return) as [`Self::check`] does, then
    /// snap its exact identities (module documentation): the block to store and release, and
    /// what changed (`None` with device-side DP, where the block is returned unchanged).
    ///
    /// # Errors
    /// [`Self::check`]'s refusals.
    pub fn snap(
        &self,
        data: &DMatrix<f64>,
        rounding_scale: f64,
    ) -> Result<(DMatrix<f64>, Option<SnapReport>), CohortRefusal> {
        let moments = CohortMoments::of_rows(data, Units::Declared);
        self.check(&moments, rounding_scale)?;
        if self.dp.is_some() || self.columns.is_empty() {
            return Ok((data.clone(), None));
        }
        let entry = ENTRY_ROUNDINGS * self.p as f64 * UNIT_ROUNDOFF * rounding_scale;
        let unit = self.unit(&moments, entry);
        let a = self.columns.len();
        let rows = self.identity_rows(&unit);
        let mut theta: Vec<f64> = unit.sums.clone();
        for j in 0..a {
            for k in j..a {
                theta.push(unit.prods[(j, k)]);
            }
        }
        for group in groups(&rows, theta.len()) {
            solve_group(&rows, &group, &mut theta);
        }
        let snapped_sums = DVector::from_column_slice(&theta[..a]);
        let mut snapped_prods = DMatrix::zeros(a, a);
        let mut at = a;
        for j in 0..a {
            for k in j..a {
                snapped_prods[(j, k)] = theta[at];
                snapped_prods[(k, j)] = theta[at];
                at += 1;
            }
        }
        let (_, err) = centred_with_error(&unit);
        let (out, largest_change, empty_directions) =
            self.carry(data, &snapped_sums, &snapped_prods, err.norm());
        Ok((
            out,
            Some(SnapReport {
                identities: rows.len(),
                largest_change,
                empty_directions,
            }),
        ))
    }

    /// How far `data`'s statistics lie from each identity the check decides on them, relative
    /// to the identity's magnitude `max(1, Σ|c·θ|)` (tests: 0 to rounding once snapped).
    #[cfg(test)]
    pub(super) fn identity_residuals(&self, data: &DMatrix<f64>, rounding_scale: f64) -> Vec<f64> {
        let moments = CohortMoments::of_rows(data, Units::Declared);
        let entry = ENTRY_ROUNDINGS * self.p as f64 * UNIT_ROUNDOFF * rounding_scale;
        let unit = self.unit(&moments, entry);
        let a = self.columns.len();
        let mut theta: Vec<f64> = unit.sums.clone();
        for j in 0..a {
            for k in j..a {
                theta.push(unit.prods[(j, k)]);
            }
        }
        self.identity_rows(&unit)
            .iter()
            .map(|row| {
                let value: f64 = row.coefficients.iter().map(|&(v, c)| c * theta[v]).sum();
                let magnitude: f64 = row
                    .coefficients
                    .iter()
                    .map(|&(v, c)| (c * theta[v]).abs())
                    .sum();
                (value - row.target) / magnitude.max(1.0)
            })
            .collect()
    }

    /// The identities the check decided on these statistics, as rows on `θ`.
    fn identity_rows(&self, unit: &super::Unit) -> Vec<Row> {
        let a = self.columns.len();
        let variable = |j: usize, k: usize| {
            let (j, k) = (j.min(k), j.max(k));
            // Index of (j, k), j ≤ k, in the upper triangle stored row by row after the sums.
            a + j * a - j * (j + 1) / 2 + k
        };
        let mut rows = Vec::new();
        for form in &self.forms {
            let target = match form.test {
                Test::Equal => 0.0,
                Test::Integral => {
                    let (value, tol, _, _) = self.evaluate(form, unit, None);
                    if tol >= LATTICE_RESOLUTION {
                        continue;
                    }
                    value.round()
                }
                _ => continue,
            };
            let mut coefficients: Vec<(usize, f64)> = form.poly.linear.clone();
            coefficients.extend(
                form.poly
                    .quadratic
                    .iter()
                    .map(|&(j, k, c)| (variable(j, k), c)),
            );
            rows.push(Row {
                coefficients,
                target: target - unit.n * form.poly.constant,
            });
        }
        rows
    }

    /// `data` carried to the snapped sums and cross-products (unit coordinates): the block, the
    /// largest change of an entry in unit coordinates, and the empty directions kept.
    fn carry(
        &self,
        data: &DMatrix<f64>,
        sums: &DVector<f64>,
        prods: &DMatrix<f64>,
        rounding: f64,
    ) -> (DMatrix<f64>, f64, usize) {
        let n = data.nrows();
        let a = self.columns.len();
        let nf = n as f64;
        let unit = DMatrix::from_fn(n, a, |i, j| {
            let c = &self.columns[j];
            (data[(i, j)] - c.lo) / c.width()
        });
        let means = unit.row_sum().transpose() / nf;
        let centred = DMatrix::from_fn(n, a, |i, j| unit[(i, j)] - means[j]);
        let gram = centred.tr_mul(&centred);
        let target = prods - sums * sums.transpose() / nf;
        let eigen = SymmetricEigen::new(gram);
        let kept: Vec<usize> = (0..a)
            .filter(|&l| eigen.eigenvalues[l] > rounding)
            .collect();
        // Every record alike (to rounding) leaves no direction: the block is its snapped means.
        let moved = if kept.is_empty() {
            DMatrix::zeros(n, a)
        } else {
            centred * optimal_map(&eigen, &kept, &target)
        };
        let mut out = data.clone();
        let mut largest: f64 = 0.0;
        for j in 0..a {
            let c = &self.columns[j];
            let mean = sums[j] / nf;
            for i in 0..n {
                let value = mean + moved[(i, j)];
                largest = largest.max((value - unit[(i, j)]).abs());
                out[(i, j)] = c.lo + c.width() * value;
            }
        }
        if let Some((qa, _)) = &self.qa {
            out.column_mut(qa.column).fill(qa.constant);
        }
        (out, largest, a - kept.len())
    }
}

/// `T = V(Λ^{−1/2}(Λ^{1/2}VᵀC′VΛ^{1/2})^{1/2}Λ^{−1/2})Vᵀ` on the eigenpairs `kept` of `C`
/// (`eigen`): the symmetric map with `TᵀCT = C′` there (module documentation).
fn optimal_map(
    eigen: &SymmetricEigen<f64, nalgebra::Dyn>,
    kept: &[usize],
    target: &DMatrix<f64>,
) -> DMatrix<f64> {
    let a = eigen.eigenvalues.len();
    let r = kept.len();
    let basis = DMatrix::from_fn(a, r, |j, l| eigen.eigenvectors[(j, kept[l])]);
    let roots: Vec<f64> = kept.iter().map(|&l| eigen.eigenvalues[l].sqrt()).collect();
    let projected = basis.transpose() * target * &basis;
    let m = DMatrix::from_fn(r, r, |i, l| roots[i] * projected[(i, l)] * roots[l]);
    let m = 0.5 * (&m + m.transpose());
    let split = SymmetricEigen::new(m);
    let root = &split.eigenvectors
        * DMatrix::from_diagonal(&split.eigenvalues.map(|v| v.max(0.0).sqrt()))
        * split.eigenvectors.transpose();
    let map_r = DMatrix::from_fn(r, r, |i, l| root[(i, l)] / (roots[i] * roots[l]));
    &basis * map_r * basis.transpose()
}

/// The rows grouped by shared variables (union–find over the variables): each group is solved
/// alone, a small dense problem, where one problem over all `p₁(p₁ + 3)/2` statistics would not
/// be.
fn groups(rows: &[Row], variables: usize) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..variables).collect();
    fn find(parent: &mut [usize], mut v: usize) -> usize {
        while parent[v] != v {
            parent[v] = parent[parent[v]];
            v = parent[v];
        }
        v
    }
    for row in rows {
        if let Some(&(first, _)) = row.coefficients.first() {
            for &(v, _) in &row.coefficients[1..] {
                let (x, y) = (find(&mut parent, first), find(&mut parent, v));
                parent[x] = y;
            }
        }
    }
    let mut by_root: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for (i, row) in rows.iter().enumerate() {
        if let Some(&(first, _)) = row.coefficients.first() {
            by_root.entry(find(&mut parent, first)).or_default().push(i);
        }
    }
    by_root.into_values().collect()
}

/// The least change of `theta` on the group's variables that meets the group's rows:
/// `Δ = A⁺(b − Aθ)`.
fn solve_group(rows: &[Row], group: &[usize], theta: &mut [f64]) {
    let mut variables: Vec<usize> = group
        .iter()
        .flat_map(|&i| rows[i].coefficients.iter().map(|&(v, _)| v))
        .collect();
    variables.sort_unstable();
    variables.dedup();
    let mut a = DMatrix::zeros(group.len(), variables.len());
    let mut residual = DVector::zeros(group.len());
    for (r, &i) in group.iter().enumerate() {
        let mut value = 0.0;
        for &(v, c) in &rows[i].coefficients {
            let at = variables.binary_search(&v).unwrap_or(0);
            a[(r, at)] += c;
            value += c * theta[v];
        }
        residual[r] = rows[i].target - value;
    }
    let svd = a.svd(true, true);
    let largest = svd.singular_values.iter().copied().fold(0.0, f64::max);
    if largest == 0.0 {
        return;
    }
    let Ok(change) = svd.solve(&residual, DEPENDENT_ROWS * largest) else {
        return;
    };
    for (at, &v) in variables.iter().enumerate() {
        theta[v] += change[at];
    }
}
