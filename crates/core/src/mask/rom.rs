//! `GenerateROM` of Appendix 1 in Wu, Chen, Burr & Zhang (2017) (seed 003), literally.
//!
//! ```text
//! Z₁ = [1_n, randn(n, n−1)];  M₁ = GramSchmidt(Z₁)
//! Z₂ = [1_n, randn(n, n−1)];  M₂ = GramSchmidt(Z₂)
//! M  = M₁ M₂ᵀ                  (orthogonal, M·1_n = 1_n)
//! ```
//!
//! Kept for the classroom and as an independent sampler against which the law of
//! [`FixedSubspaceHaar::ones_fixed`](super::FixedSubspaceHaar::ones_fixed) is tested. The paper's
//! program reseeds MATLAB (`rng(seed)`, `rng(seed + 2)`) between the two matrices; here the two
//! Gaussian sources are passed in. Classical Gram–Schmidt loses orthogonality for large `n`, so
//! production code uses the Householder construction instead.

use crate::random::{BitSource, standard_normal};
use nalgebra::DMatrix;

/// Classical Gram–Schmidt orthonormalisation of the columns of `z`, as in the paper's program.
fn gram_schmidt(z: &DMatrix<f64>) -> DMatrix<f64> {
    let n = z.ncols();
    let mut y: Vec<nalgebra::DVector<f64>> = Vec::with_capacity(n);
    let mut m = DMatrix::zeros(z.nrows(), n);
    for i in 0..n {
        let v = z.column(i).clone_owned();
        let mut u = v.clone();
        for yj in &y {
            u -= yj * (yj.dot(&v) / yj.dot(yj));
        }
        m.set_column(i, &(&u / u.norm()));
        y.push(u);
    }
    m
}

fn ones_then_gaussian<B: BitSource + ?Sized>(n: usize, source: &mut B) -> DMatrix<f64> {
    // `[ones(n, 1) randn(n, n−1)]`, Gaussian part filled column by column like MATLAB.
    let mut m = DMatrix::from_element(n, n, 1.0);
    for j in 1..n {
        for i in 0..n {
            m[(i, j)] = standard_normal(source);
        }
    }
    m
}

/// An `n × n` orthogonal matrix with `M·1 = 1`, by the paper's Appendix 1 algorithm.
pub fn generate_rom<B: BitSource + ?Sized>(
    n: usize,
    first: &mut B,
    second: &mut B,
) -> DMatrix<f64> {
    let m1 = gram_schmidt(&ones_then_gaussian(n, first));
    let m2 = gram_schmidt(&ones_then_gaussian(n, second));
    m1 * m2.transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::MatlabTwister;
    use crate::tolerance::ORTHOGONALITY;

    #[test]
    fn is_orthogonal_and_keeps_ones() {
        let n = 20;
        let m = generate_rom(
            n,
            &mut MatlabTwister::new(536),
            &mut MatlabTwister::new(538),
        );
        let deviation = (m.transpose() * &m - DMatrix::identity(n, n)).amax();
        assert!(deviation < ORTHOGONALITY * n as f64, "{deviation}");
        let ones = &m * DMatrix::from_element(n, 1, 1.0);
        assert!(
            ones.iter()
                .all(|v| (v - 1.0).abs() < ORTHOGONALITY * n as f64)
        );
    }
}
