//! Reproducible randomness.
//!
//! Everything that must come out bit-for-bit the same natively and in `wasm32` is drawn through
//! [`UnitUniform`]: a source of `f64` values in `[0, 1)`. Two sources exist:
//!
//! * any [`rand_core::Rng`], in particular the ChaCha20 streams handed out by
//!   [`Key::stream`](crate::key::Key::stream), read as 53-bit doubles from `next_u64`;
//! * [`MatlabTwister`], MT19937 seeded like MATLAB's `rng(seed)`, so that the published matrices
//!   of the papers can be regenerated exactly.
//!
//! Gaussian variates come from [`normal`], a ziggurat that uses only correctly rounded IEEE
//! operations and the pure-Rust `libm`, never the platform's `exp`/`ln` (those differ in the last
//! bit between glibc and the wasm32 runtime, which would break the "same key, same matrix"
//! promise).

pub mod chacha;
pub mod matlab;
pub mod normal;

pub use matlab::MatlabTwister;
pub use normal::{BitSource, PortableStandardNormal, fill_standard_normal, standard_normal};

/// 2⁻⁵³: the spacing of 53-bit doubles in `[0, 1)`.
const TWO_POW_MINUS_53: f64 = 1.0 / 9_007_199_254_740_992.0;

/// A source of uniform doubles on `[0, 1)` with 53 random bits each.
pub trait UnitUniform {
    /// Next uniform double in `[0, 1)`.
    fn next_unit(&mut self) -> f64;
}

impl<R: rand_core::Rng + ?Sized> UnitUniform for R {
    /// `(next_u64 >> 11) · 2⁻⁵³`: the 53 high bits of one 64-bit draw.
    fn next_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * TWO_POW_MINUS_53
    }
}

/// Fill a column-major `rows × cols` buffer with uniform `[0, 1)` values, the order in which
/// MATLAB's `rand(rows, cols)` fills its result.
pub fn uniform_matrix<U: UnitUniform + ?Sized>(
    source: &mut U,
    rows: usize,
    cols: usize,
) -> nalgebra::DMatrix<f64> {
    // `from_fn` visits entries in column-major order, exactly MATLAB's fill order.
    nalgebra::DMatrix::from_fn(rows, cols, |_, _| source.next_unit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    #[test]
    fn unit_uniform_from_rng_stays_in_half_open_interval() {
        let mut rng = ChaCha20Rng::from_seed([7; 32]);
        for _ in 0..10_000 {
            let u = rng.next_unit();
            assert!((0.0..1.0).contains(&u));
        }
    }

    #[test]
    fn uniform_matrix_fills_column_major() {
        let mut a = ChaCha20Rng::from_seed([3; 32]);
        let mut b = ChaCha20Rng::from_seed([3; 32]);
        let m = uniform_matrix(&mut a, 2, 3);
        let sequence: Vec<f64> = (0..6).map(|_| b.next_unit()).collect();
        assert_eq!(m.as_slice(), sequence.as_slice());
    }
}
