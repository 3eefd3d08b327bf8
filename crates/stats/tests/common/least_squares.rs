//! A least-squares reference in double-double arithmetic (about 32 significant digits) and the
//! badly scaled designs it is checked on (`badly_scaled.rs`, `masked_exactness.rs`).
//!
//! The reference solves the normal equations of the column-scaled design exactly enough: the
//! columns are scaled by powers of two (exact), `Z̃ᵀZ̃` and `Z̃ᵀy` are accumulated in
//! double-double from exact products (`mul_add`), and Gaussian elimination with partial pivoting
//! runs in double-double. Its error is about `κ(Z̃)²·10⁻³²·p`, at most `10⁻¹⁵` for the designs
//! here (`κ(Z̃) ≤ 2·10⁸`), so it is the exact least-squares solution of the given doubles to
//! double precision.

use nalgebra::DMatrix;
use orthomask_stats::dataset::Dataset;

/// A double-double number `hi + lo`, `|lo| ≤ ulp(hi)/2`.
#[derive(Clone, Copy, Debug)]
pub struct Dd {
    hi: f64,
    lo: f64,
}

impl Dd {
    const ZERO: Dd = Dd { hi: 0.0, lo: 0.0 };

    fn from(x: f64) -> Self {
        Dd { hi: x, lo: 0.0 }
    }

    /// Knuth's TwoSum, then renormalise.
    fn add(self, other: Dd) -> Dd {
        let s = self.hi + other.hi;
        let v = s - self.hi;
        let e = (self.hi - (s - v)) + (other.hi - v) + self.lo + other.lo;
        let hi = s + e;
        Dd {
            hi,
            lo: e - (hi - s),
        }
    }

    fn neg(self) -> Dd {
        Dd {
            hi: -self.hi,
            lo: -self.lo,
        }
    }

    fn sub(self, other: Dd) -> Dd {
        self.add(other.neg())
    }

    /// TwoProd with a fused multiply-add for the exact error of `hi·hi`.
    fn mul(self, other: Dd) -> Dd {
        let p = self.hi * other.hi;
        let e = self.hi.mul_add(other.hi, -p) + self.hi * other.lo + self.lo * other.hi;
        let hi = p + e;
        Dd {
            hi,
            lo: e - (hi - p),
        }
    }

    /// Long division: three quotient digits.
    fn div(self, other: Dd) -> Dd {
        let q1 = self.hi / other.hi;
        let r = self.sub(other.mul(Dd::from(q1)));
        let q2 = r.hi / other.hi;
        let r = r.sub(other.mul(Dd::from(q2)));
        let q3 = r.hi / other.hi;
        Dd::from(q1).add(Dd::from(q2)).add(Dd::from(q3))
    }

    fn abs(self) -> f64 {
        self.hi.abs()
    }
}

/// Reference least squares of `y` on the columns of `z`: `(β, diag((ZᵀZ)⁻¹), RSS)`.
pub fn reference(z: &DMatrix<f64>, y: &[f64]) -> (Vec<f64>, Vec<f64>, f64) {
    let (n, p) = z.shape();
    // Exact power-of-two column scaling.
    let scale: Vec<f64> = z
        .column_iter()
        .map(|c| 2f64.powi(-(c.norm().log2().round() as i32)))
        .collect();
    let zs = |i: usize, j: usize| z[(i, j)] * scale[j];
    let mut gram = vec![vec![Dd::ZERO; p]; p];
    let mut rhs = vec![Dd::ZERO; p];
    for (i, &yi) in y.iter().enumerate().take(n) {
        for j in 0..p {
            for (k, entry) in gram[j].iter_mut().enumerate() {
                *entry = entry.add(Dd::from(zs(i, j)).mul(Dd::from(zs(i, k))));
            }
            rhs[j] = rhs[j].add(Dd::from(zs(i, j)).mul(Dd::from(yi)));
        }
    }
    // Gauss–Jordan with partial pivoting on [G | b | I]: the solution and the inverse.
    let mut a: Vec<Vec<Dd>> = (0..p)
        .map(|j| {
            let mut row = gram[j].clone();
            row.push(rhs[j]);
            row.extend((0..p).map(|k| Dd::from(if j == k { 1.0 } else { 0.0 })));
            row
        })
        .collect();
    for col in 0..p {
        let pivot = (col..p)
            .max_by(|&r, &s| a[r][col].abs().total_cmp(&a[s][col].abs()))
            .unwrap();
        a.swap(col, pivot);
        let head = a[col][col];
        for entry in a[col].iter_mut() {
            *entry = entry.div(head);
        }
        for row in 0..p {
            if row != col {
                let factor = a[row][col];
                for k in 0..a[row].len() {
                    let delta = factor.mul(a[col][k]);
                    a[row][k] = a[row][k].sub(delta);
                }
            }
        }
    }
    let beta_scaled: Vec<Dd> = (0..p).map(|j| a[j][p]).collect();
    let beta: Vec<f64> = (0..p).map(|j| beta_scaled[j].hi * scale[j]).collect();
    let inverse_diagonal: Vec<f64> = (0..p)
        .map(|j| a[j][p + 1 + j].hi * scale[j] * scale[j])
        .collect();
    let mut rss = Dd::ZERO;
    for (i, &yi) in y.iter().enumerate().take(n) {
        let mut r = Dd::from(yi);
        for (j, b) in beta_scaled.iter().enumerate() {
            r = r.sub(Dd::from(zs(i, j)).mul(*b));
        }
        rss = rss.add(r.mul(r));
    }
    (beta, inverse_diagonal, rss.hi)
}

/// `κ₂(Z̃)` of the unit-scaled design, from its singular values (each good to about
/// `ε·σ_max` absolutely, so `σ_min ≈ 10⁻⁸` keeps about 8 digits: ample for a condition number).
pub fn scaled_condition(z: &DMatrix<f64>) -> f64 {
    let mut scaled = z.clone();
    for mut c in scaled.column_iter_mut() {
        let norm = c.norm();
        c /= norm;
    }
    let singular = scaled.svd(false, false).singular_values;
    singular.max() / singular.min()
}

pub fn dataset(names: &[&str], columns: Vec<Vec<f64>>) -> Dataset {
    Dataset::from_columns(names.iter().map(|n| (*n).to_owned()).zip(columns).collect()).unwrap()
}

/// A deterministic spread of points in `[0, 1)` (golden-ratio sequence) and a bounded
/// "noise" of zero mean.
pub fn spread(i: usize) -> f64 {
    (i as f64 * 0.618_033_988_749_894_9).fract()
}

pub fn wiggle(i: usize) -> f64 {
    (i as f64 * 1.7).sin()
}

/// The degree-`d` polynomial design `1, x, …, x^d` for `x ∈ [10⁶, 10⁶ + width]`, and a smooth
/// response with a small bounded wiggle.
pub fn polynomial(n: usize, degree: usize, width: f64) -> (Vec<Vec<f64>>, Vec<f64>) {
    let x: Vec<f64> = (0..n).map(|i| 1e6 + width * spread(i)).collect();
    let powers: Vec<Vec<f64>> = (1..=degree)
        .map(|k| x.iter().map(|v| v.powi(k as i32)).collect())
        .collect();
    let y: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let t = (v - 1e6) / width;
            1.0 + 2.0 * t - 3.0 * t * t + t.powi(3) + 0.5 * t.powi(5) + 1e-6 * wiggle(i)
        })
        .collect();
    (powers, y)
}
