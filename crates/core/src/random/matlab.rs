//! MT19937 exactly as MATLAB's default generator (`rng(seed)`, "twister").
//!
//! MATLAB seeds with Matsumoto–Nishimura's `init_genrand(seed)` and turns two 32-bit outputs into
//! one double with `genrand_res53`: `(a·2²⁶ + b) / 2⁵³` with `a = y₁ >> 5`, `b = y₂ >> 6`.
//! `rand(r, c)` fills its result column by column. With this generator `rand(9, 9)` after
//! `rng(535)` is the matrix `B₁` of eq. (1) in Wu, Chen, Burr & Zhang (2017) (seed 003).
//!
//! Only uniforms are MATLAB-compatible: MATLAB's `randn` uses an undocumented ziggurat variant, so
//! Gaussian draws from this source (see [`crate::random::normal`]) do not match MATLAB's.

use super::UnitUniform;

const N: usize = 624;
const M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

/// MT19937 with MATLAB's seeding and 53-bit double conversion.
#[derive(Clone)]
pub struct MatlabTwister {
    state: Box<[u32; N]>,
    index: usize,
}

impl std::fmt::Debug for MatlabTwister {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MatlabTwister")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl MatlabTwister {
    /// The generator MATLAB has after `rng(seed)`.
    ///
    /// MATLAB maps `rng(0)` (and `rng default`) to the reference seed 5489.
    pub fn new(seed: u32) -> Self {
        let seed = if seed == 0 { 5489 } else { seed };
        let mut state = Box::new([0u32; N]);
        state[0] = seed;
        for i in 1..N {
            let prev = state[i - 1];
            // `i < 624` always fits in u32.
            state[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        Self { state, index: N }
    }

    fn regenerate(&mut self) {
        let mt = &mut self.state;
        for i in 0..N {
            let y = (mt[i] & UPPER_MASK) | (mt[(i + 1) % N] & LOWER_MASK);
            let mag = if y & 1 == 1 { MATRIX_A } else { 0 };
            mt[i] = mt[(i + M) % N] ^ (y >> 1) ^ mag;
        }
        self.index = 0;
    }

    /// Next tempered 32-bit output (`genrand_int32`).
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            self.regenerate();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    /// MATLAB's `rand`: one double in `(0, 1)` from two 32-bit outputs (`genrand_res53`).
    pub fn rand(&mut self) -> f64 {
        let a = f64::from(self.next_u32() >> 5);
        let b = f64::from(self.next_u32() >> 6);
        (a * 67_108_864.0 + b) / 9_007_199_254_740_992.0
    }
}

impl super::BitSource for MatlabTwister {
    /// Two consecutive 32-bit outputs, first one high.
    fn next_bits(&mut self) -> u64 {
        (u64::from(self.next_u32()) << 32) | u64::from(self.next_u32())
    }
}

impl UnitUniform for MatlabTwister {
    fn next_unit(&mut self) -> f64 {
        self.rand()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::ULPS_BELOW_ONE;

    /// Reference outputs of `mt19937ar.c` (Matsumoto & Nishimura, 2002) for `init_genrand(5489)`,
    /// the first values of the C++ `std::mt19937` default engine; the 10 000th output is the
    /// C++ standard's conformance value 4123659995 ([rand.predef]).
    #[test]
    fn matches_reference_mt19937_outputs() {
        let mut mt = MatlabTwister::new(5489);
        assert_eq!(mt.next_u32(), 3_499_211_612);
        assert_eq!(mt.next_u32(), 581_869_302);
        assert_eq!(mt.next_u32(), 3_890_346_734);
        let mut mt = MatlabTwister::new(5489);
        let mut last = 0;
        for _ in 0..10_000 {
            last = mt.next_u32();
        }
        assert_eq!(last, 4_123_659_995);
    }

    #[test]
    fn seed_zero_is_matlab_default_seed() {
        let mut zero = MatlabTwister::new(0);
        let mut default = MatlabTwister::new(5489);
        assert_eq!(zero.next_u32(), default.next_u32());
    }

    /// MATLAB R2013a+: `rng(0); rand` prints 0.814723686393179 (the first entry of the classic
    /// `rand(3)` example in MATLAB's documentation).
    #[test]
    fn first_rand_after_rng_default_matches_matlab_documentation() {
        let mut mt = MatlabTwister::new(0);
        let u = mt.rand();
        assert!(
            (u - 0.814_723_686_393_179).abs() < ULPS_BELOW_ONE,
            "got {u}"
        );
    }
}
