//! Every numerical tolerance of Orthomask, named once.
//!
//! Tests across the workspace import these instead of writing ad-hoc epsilons, so a reader can
//! see in one place how exact each promise is and why.

/// Orthogonality of generated masks, `‖QᵀQ − I‖_max`, and exactness of reflector algebra on
/// O(1) data. Householder products are backward stable: the error is a small multiple of
/// `n·ε_mach` (ε ≈ 2.2e-16) for the sizes we test (n ≤ 500).
pub const ORTHOGONALITY: f64 = 1e-12;

/// Mask followed by unmask must return the input to this relative accuracy (`‖X̂ − X‖_max / ‖X‖_max`).
pub const ROUND_TRIP: f64 = 1e-12;

/// Released cross-products `XᵀX` and column means must match the raw data to this relative
/// accuracy (issue "Masking core": 1e-10 relative).
pub const PRESERVED_STATISTICS: f64 = 1e-10;

/// Two implementations of the same operator (keyed stream vs. dense materialisation) must agree
/// entry-wise to this absolute accuracy on orthogonal matrices (entries bounded by 1).
pub const SAME_OPERATOR: f64 = 1e-12;

/// A released entry of a non-constant column "differs from the raw one" when it moves by more
/// than this, relative to the column's scale.
pub const VISIBLY_MASKED: f64 = 1e-9;

/// Relative slack of the collector's quality-assurance check on the constant column after
/// unmasking; the error grows with the noise scale, so callers multiply by the row scale.
pub const QA_RELATIVE: f64 = 1e-9;

/// Additive shares sum back to the record within this factor of `|x| + τ` (τ the share noise's
/// standard deviation). Each share is `x/K₁ + τ(Gᵢ − Ḡ)` with `|Gᵢ − Ḡ|` a few units, and the
/// `K₁` shares' sum adds `K₁` roundings of that size: about `K₁·10·ε_mach ≈ 1e-14` for the
/// `K₁ ≤ 5` we test, so the bound leaves a factor of a hundred.
pub const SHARES_SUM: f64 = 1e-12;

/// A reconstruction of raw data from a release counts as failed when it is at least this far
/// from the raw columns, relative to the norm of their centred part. A Haar rotation of `1ₙ^⊥`
/// moves a block by `√2` times that norm on average; a successful attack (e.g. `Aᵀ·A X₁` with
/// the right `A`) comes within rounding of the data (far below [`VISIBLY_MASKED`]).
pub const NOT_RECOVERED: f64 = 0.5;

/// Values within this distance of 0 or 1 count as binary in the Appendix A attack when the
/// masked data carry full precision.
pub const BINARY_FULL_PRECISION: f64 = 1e-6;

/// A number printed to `decimals` places matches an exact value when they differ by at most half
/// a unit in the last printed place (plus a hair for binary representation of the printed value).
pub fn printed_precision(decimals: i32) -> f64 {
    0.5 * 10f64.powi(-decimals) * (1.0 + 1e-9)
}

/// The blocked (compact WY, matrix-multiply) application of a Haar mask and the scalar
/// reflector-by-reflector application agree to this accuracy relative to the largest entry of the
/// data (issue "Masking at scale": stream and dense forms agree to 1e-12). Both are backward
/// stable; the observed differences are a few `ε_mach` (≈ 2e-15 relative for `d` in the hundreds),
/// so the bound leaves a factor of several hundred.
pub const BLOCKED_AGREES_WITH_SCALAR: f64 = 1e-12;

/// Kolmogorov's `c(α)` for a significance level α = 0.001: `c(α) = √(−ln(α/2) / 2) ≈ 1.9495`
/// (the asymptotic two-sample critical coefficient; e.g. Knuth, TAOCP vol. 2, §3.3.1).
pub const KS_COEFFICIENT_ALPHA_0_001: f64 = 1.9495;

/// Two-sample Kolmogorov–Smirnov critical value at α = 0.001 for samples of sizes `n` and `m`:
/// `D_crit = c(α) · √((n + m) / (n m))`. A statistic above it rejects "same law" with probability
/// at most 0.001 when the laws are equal.
pub fn ks_critical_value(n: usize, m: usize) -> f64 {
    let (n, m) = (n as f64, m as f64);
    KS_COEFFICIENT_ALPHA_0_001 * ((n + m) / (n * m)).sqrt()
}

/// One-sample Kolmogorov–Smirnov critical value at α = 0.001 for a sample of `n`:
/// `c(α)/√n` (asymptotic), the counterpart of [`ks_critical_value`].
pub fn ks_one_sample_critical_value(n: usize) -> f64 {
    KS_COEFFICIENT_ALPHA_0_001 / (n as f64).sqrt()
}

/// The one-sample Kolmogorov–Smirnov statistic `sup_x |F_n(x) − F(x)|` of a sample against a
/// CDF, to compare with [`ks_one_sample_critical_value`]. With the critical values it is the
/// workspace's one law test, so the law tests of every crate share it.
pub fn ks_one_sample(sample: &[f64], cdf: impl Fn(f64) -> f64) -> f64 {
    let mut sample = sample.to_vec();
    sample.sort_by(f64::total_cmp);
    let n = sample.len() as f64;
    sample
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let c = cdf(x);
            (c - i as f64 / n).abs().max(((i + 1) as f64 / n - c).abs())
        })
        .fold(0.0, f64::max)
}

/// The two-sample Kolmogorov–Smirnov statistic `sup_x |F_a(x) − F_b(x)|` of the empirical CDFs,
/// to compare with [`ks_critical_value`].
pub fn ks_two_sample(a: &[f64], b: &[f64]) -> f64 {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (mut i, mut j, mut d) = (0, 0, 0.0_f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / na - j as f64 / nb).abs());
    }
    d
}

/// How many unmasking roundings a recovered entry may be from zero and still be rounding, when a
/// whole answer column is that close to zero (`Tm2Design::unscale_unmasked`, (E9) there: the
/// rounding is the smaller of the worst case and the QA column's measured one). The worst case of
/// `protocol::accuracy` is about `p·u·R` per operator and three operators touch the record
/// (`x̃B`, `A₂`, `Bᵀ`), so `3` covers it; a second factor of 4 covers the share path's sum of
/// `K ≤ 4` parts and the decoding of its fixed point, and the spread between the largest
/// roundings of two constant columns of one cohort (the QA column's and the answer column's).
pub const ZERO_COLUMN_ROUNDINGS: f64 = 12.0;

/// The measured rms rounding error of released entries lies within this factor of the expected
/// error (E2) of `protocol::accuracy`, both ways (measured against a double-double reference:
/// 0.62–1.0 of (E2) for records of norm 12 to 85). A model off by √2 in its constant still
/// passes; one off by the cohort's √m (the old approximation of `R`) or missing the padding fails.
pub const ERROR_MODEL_FACTOR: f64 = 2.0;

/// Test: agreement with a small case worked by hand (answer in the test's doc comment, e.g. the
/// Appendix C bound for n = 4, σ_min = 4, or a margin of 9/2): a handful of roundings on numbers of
/// order 1 to 20, a few ulps each; 1e-12 leaves some thousands of ulps and still catches any
/// wrong formula.
pub const HAND_COMPUTED: f64 = 1e-12;

/// Test: absolute agreement of a number of magnitude at most 1 with a value it should equal up to
/// one or two roundings (`1/k` against a stored scale), or with a reference printed to 15
/// decimals (MATLAB's `format long`): ε_mach ≈ 2.2e-16, so 1e-15 is about four ulps of 1.
pub const ULPS_BELOW_ONE: f64 = 1e-15;

/// Test: absolute agreement of a number of magnitude at most 4 with its closed form, e.g. the
/// eigenvalues `2 − 2cos(πj/(k+1))` of the second-difference matrix found by bisection: an ulp of
/// 4 is 8.9e-16, so 1e-14 allows about ten.
pub const ULPS_BELOW_TEN: f64 = 1e-14;

/// Test: `|⟨v, v_exact⟩| / ‖v_exact‖` of a computed unit eigenvector lies within this of 1. An
/// eigenvector is sensitive to rounding by `ε_mach / gap`; for the second-difference matrix of
/// order 300 the gap is about `3π²/301² ≈ 3e-4`, so errors up to about 1e-12 are expected and
/// 1e-10 leaves a factor of a hundred.
pub const EIGENVECTOR_OVERLAP: f64 = 1e-10;

/// Test: the Appendix C failure bound evaluated at a δ or `p₂` solved from a target (closed form
/// through `exp`, `ln` and square roots) meets the target to this relative accuracy. The
/// inversion amplifies rounding by the exponent `t²/2` (at most a few tens for targets ≥ 1e-9),
/// so the error stays near 1e-14 and 1e-9 only fails on a wrong formula.
pub const INVERTED_BOUND: f64 = 1e-9;

/// Test: a bound that must hold, `margin ≤ dense` (the Lanczos lower bound on the smallest Gram
/// eigenvalue against the dense one), is allowed this relative excess for the rounding of the two
/// computations, which are each accurate to a few hundred ulps of the largest eigenvalue.
pub const BOUND_ROUNDING: f64 = 1e-12;

/// Test: a share of an answer "is noised" when it lies farther than this from its noise-free part
/// `x/K₁`. The share noise has standard deviation τ (tens in the tests), so a noised share is
/// that far with probability below 1e-7 per entry (1e-6/τ of a normal density near 0).
pub const SHARE_NOISED: f64 = 1e-6;

/// Test: an operation counts as having visibly changed O(1) data (a mask applied, a scaling
/// undone in the wrong order) when the result moves by more than this, relative (or absolutely
/// on data of scale 1). A rotation moves such data by O(1); rounding moves it by 1e-15.
pub const CLEARLY_CHANGED: f64 = 1e-3;

/// Test: cross-products of records masked in their own units (σ following the largest declared
/// value) lose more than this, relative, on the smallest column (measured: 9e-4, about three
/// digits); the declared-range scaling keeps them at [`PRESERVED_STATISTICS`]. Below it the
/// test that scaling helps would show nothing.
pub const UNSCALED_GRAM_LOSS: f64 = 1e-5;

/// Test: issue 11 §1's target for a release of records scaled by their declared ranges, relative
/// ("a part in a trillion"): each entry of `XᵀX` against the raw data's, relative to
/// `√(G_ii G_jj)`; each column mean, relative to the column's half-range; and the expected
/// unmasking error of an entry (`protocol::accuracy`), in units of its half-range. The scaling
/// puts every column at O(1) whatever its units (the tests span twelve orders of magnitude), so
/// only the rounding of the masks remains.
pub const SCALED_RELEASE_ERROR: f64 = 1e-12;

/// Test: a coalition reads the records when its estimate of every record is within this of the
/// truth, absolute, on data of scale at most a hundred (the device's `[−1, 1]` scale, the paper's
/// Table 2): the last digits of double arithmetic, nothing of the data. The counterpart of
/// [`NOT_RECOVERED`].
pub const RECOVERED: f64 = 1e-8;

/// Test: no record is read when even the estimated row closest to any record is this far from
/// it, relative to the records' spread: a view that holds the records only up to a rotation (the
/// orbit of seed 000) puts no row near a record but by a coincidence of probability about this to
/// the power of the answer columns.
pub const NOTHING_READ: f64 = 1e-3;

/// Test: a candidate of an attack (the 0/1 answer vector of the subset-sum attack, issue 20 §1)
/// fits what the coalition knows (a column sum, inner products with known vectors) when it
/// matches within this, absolute on the sum and relative to `1 + |value|` on inner products. The
/// known quantities carry only the rounding of the protocol (about 1e-12); a wrong candidate
/// changes a sum of ±1 entries by at least 2 and its inner products by O(1).
pub const ATTACK_CONSTRAINT_FIT: f64 = 1e-6;

/// Test: the column sum of a cohort the collector stores left-masked, `A₂X₁`, against the raw
/// column's sum, relative. Left masks fix `1ₙ`, so the sums are equal up to rounding of the
/// products and of the summation: the promise of [`PRESERVED_STATISTICS`] for column means, with
/// a factor of ten for summing stored values of the noise scale.
pub const LEFT_MASKED_SUM: f64 = 1e-9;

/// Test: `XᵀX` of a small matrix (entries up to 888) rotated on the left by the rotation
/// `(0.6, 0.8)` against the unrotated one, relative to its largest entry: each entry takes a few
/// roundings of relative size 1.1e-16, so 1e-14 allows some tens of ulps.
pub const ROTATED_GRAM: f64 = 1e-14;

/// Test: a change of one entry by 1 in that small matrix moves `XᵀX[0][0]` by `2·3 + 1 = 7`
/// against its largest entry `3·888²`, about 3e-6 relative: a Gram error above this counts as a
/// change, far above the rounding of [`ROTATED_GRAM`].
pub const GRAM_CHANGED: f64 = 1e-6;

/// Test: slack added to half a unit in the fourth decimal when an entry of magnitude at most 1
/// (the paper's `B₁`, printed to four decimals) is compared with its printed value: the computed
/// entry and the binary value of the printed decimal differ by a few ulps of 1.
pub const PRINTED_HAIR_BELOW_ONE: f64 = 1e-12;

/// Test: slack added to half a unit in the second decimal when an entry of magnitude below a
/// thousand (the paper's Table 3, `XB₁`, printed to two decimals) is compared with its printed
/// value: products of a row with `B₁` carry some ulps of 1000 (1.1e-13 each), and 1e-9 leaves a
/// wide margin while staying far below the printed unit.
pub const PRINTED_HAIR_HUNDREDS: f64 = 1e-9;
