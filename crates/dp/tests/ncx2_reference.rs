//! The non-central χ² distribution against independent references: SciPy (`scipy.stats.ncx2`,
//! which wraps Boost's algorithm), `statrs`' central χ², and the exact moments `k + λ` and
//! `2(k + 2λ)`.

use orthomask_dp::NonCentralChiSquared;
use orthomask_dp::tolerance::{
    QUADRATURE, REFERENCE_PROBABILITY, REFERENCE_QUANTILE, SAME_FUNCTION,
};
use statrs::distribution::{ChiSquared, ContinuousCDF};

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

/// `a` agrees with the reference `b` to relative accuracy `tol` (two exact zeros agree).
fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs()
}

/// `(df, nc, x, sf, cdf)` from SciPy 1.17.1:
/// `scipy.stats.ncx2.sf(x, df, nc)` and `scipy.stats.ncx2.cdf(x, df, nc)`.
const PROBABILITIES: [(f64, f64, f64, f64, f64); 9] = [
    (
        2.0,
        1.0,
        3.0,
        0.379_356_346_780_456_43,
        0.620_643_653_219_543_7,
    ),
    // Table 1 scale: n = 100, p = 1, σ ≈ 6.9.
    (
        198.0,
        0.021,
        250.0,
        0.007_227_900_205_867_093,
        0.992_772_099_794_132_8,
    ),
    // Table 1 scale: n = 10 000, p = 1, σ ≈ 6.4.
    (
        19_998.0,
        0.0245,
        20_460.0,
        0.010_844_646_861_261_44,
        0.989_155_353_138_738_5,
    ),
    (
        5.0,
        50.0,
        80.0,
        0.052_431_882_444_475_4,
        0.947_568_117_555_525_1,
    ),
    (
        3.5,
        0.5,
        1.0,
        0.889_814_530_862_700_8,
        0.110_185_469_137_299_3,
    ),
    (
        10.0,
        500.0,
        700.0,
        4.576_756_106_814_387e-5,
        0.999_954_232_438_932_4,
    ),
    // Far upper tail: relative accuracy of a probability of 1e-21.
    (40.0, 2.0, 200.0, 1.359_771_502_821_904_7e-21, 1.0),
    // Far lower tail of a large non-centrality.
    (
        10.0,
        500.0,
        380.0,
        0.998_973_838_874_764_2,
        0.001_026_161_125_235_695,
    ),
    (
        1.0,
        0.3,
        0.05,
        0.847_330_670_453_843,
        0.152_669_329_546_156_95,
    ),
];

#[test]
fn survival_function_and_cdf_match_scipy() {
    for (df, nc, x, sf, cdf) in PROBABILITIES {
        let d = NonCentralChiSquared::new(df, nc).unwrap();
        let (got_sf, got_cdf) = (d.sf(x).unwrap(), d.cdf(x).unwrap());
        assert!(
            rel(got_sf, sf) < REFERENCE_PROBABILITY,
            "sf({x}; {df}, {nc}) = {got_sf}, SciPy {sf}"
        );
        assert!(
            rel(got_cdf, cdf) < REFERENCE_PROBABILITY,
            "cdf({x}; {df}, {nc}) = {got_cdf}, SciPy {cdf}"
        );
    }
}

/// `(δ, df, nc, quantile)` from SciPy 1.17.1: `scipy.stats.ncx2.isf(δ, df, nc)`.
const QUANTILES: [(f64, f64, f64, f64); 7] = [
    // g of eq. (13) at Table 1's first row: n = 100, p = 1, σ = 6.8891, nc = 1/6.8891**2.
    (
        0.01,
        198.0,
        0.021_070_508_770_049_23,
        247.238_082_087_250_63,
    ),
    (0.001, 19_998.0, 0.02, 20_621.740_169_975_943),
    // Block of 4990 rows, p = 20, σ = 121: nc = 20/121.0**2.
    (
        0.001,
        9_960.0,
        0.001_366_026_910_730_141_5,
        10_401.857_078_329_918,
    ),
    (1e-6, 4.0, 10.0, 67.248_805_807_829_97),
    (0.5, 10.0, 5.0, 14.165_927_836_310_887),
    (0.05, 30.0, 200.0, 279.849_633_189_315_9),
    // nc = 1e-300 in SciPy; the central value is 2 ln 100.
    (0.01, 2.0, 0.0, 9.210_340_371_976_184),
];

#[test]
fn upper_quantile_matches_scipy() {
    for (delta, df, nc, want) in QUANTILES {
        let got = NonCentralChiSquared::new(df, nc)
            .unwrap()
            .upper_quantile(delta)
            .unwrap();
        assert!(
            rel(got, want) < REFERENCE_QUANTILE,
            "isf({delta}; {df}, {nc}) = {got}, SciPy {want}"
        );
    }
}

/// Non-centrality 0 is the central χ² of `statrs`: same survival function, and our upper
/// δ-quantile is `statrs`' quantile at `1 − δ`.
#[test]
fn central_case_is_statrs_chi_squared() {
    for df in [1.0, 2.0, 7.0, 198.0, 19_998.0] {
        let ours = NonCentralChiSquared::new(df, 0.0).unwrap();
        let theirs = ChiSquared::new(df).unwrap();
        for t in [0.05, 0.5, 1.0, 1.5, 3.0] {
            let x = t * df;
            let (sf, cdf) = (ours.sf(x).unwrap(), ours.cdf(x).unwrap());
            assert!(
                close(sf, theirs.sf(x), SAME_FUNCTION),
                "df {df}, x {x}: sf {sf}"
            );
            assert!(
                close(cdf, theirs.cdf(x), SAME_FUNCTION),
                "df {df}, x {x}: cdf {cdf}"
            );
        }
        for delta in [0.01, 0.001] {
            let q = ours.upper_quantile(delta).unwrap();
            // Invert through the statrs survival function rather than its own inverse, whose
            // accuracy is not documented.
            assert!(
                rel(theirs.sf(q), delta) < REFERENCE_PROBABILITY,
                "df {df}, δ {delta}"
            );
        }
    }
}

/// `E X = ∫₀^∞ sf(x) dx = k + λ` and `E X² = ∫₀^∞ 2x·sf(x) dx = 2(k + 2λ) + (k + λ)²`,
/// integrated with the composite Simpson rule on `[0, mean + 40 sd]` (the tail beyond is
/// below 1e-30).
#[test]
fn moments_from_the_survival_function_are_k_plus_lambda() {
    for (df, nc) in [(7.0, 3.0), (4.0, 20.0), (12.0, 0.25)] {
        let d = NonCentralChiSquared::new(df, nc).unwrap();
        let upper = d.mean() + 40.0 * d.variance().sqrt();
        let intervals = 4_000;
        let h = upper / f64::from(intervals);
        let (mut m1, mut m2) = (0.0, 0.0);
        for i in 0..=intervals {
            let x = h * f64::from(i);
            let weight = match i {
                0 => 1.0,
                _ if i == intervals => 1.0,
                _ if i % 2 == 1 => 4.0,
                _ => 2.0,
            };
            let s = d.sf(x).unwrap();
            m1 += weight * s;
            m2 += weight * 2.0 * x * s;
        }
        m1 *= h / 3.0;
        m2 *= h / 3.0;
        assert!(rel(d.mean(), df + nc) < SAME_FUNCTION);
        assert!(rel(m1, df + nc) < QUADRATURE, "mean {m1} vs {}", df + nc);
        let second = 2.0 * (df + 2.0 * nc) + (df + nc).powi(2);
        assert!(rel(m2, second) < QUADRATURE, "E X² {m2} vs {second}");
    }
}

/// The quantile increases with the non-centrality (the family is stochastically increasing);
/// σ₀ of eq. (13) being the *largest* root of `g` rests on this.
#[test]
fn quantile_increases_with_non_centrality() {
    for df in [2.0, 198.0] {
        let mut previous = 0.0;
        for k in 0..30 {
            let nc = if k == 0 { 0.0 } else { 1e-4 * 2f64.powi(k) };
            let q = NonCentralChiSquared::new(df, nc)
                .unwrap()
                .upper_quantile(0.01)
                .unwrap();
            assert!(q > previous, "df {df}, nc {nc}: {q} ≤ {previous}");
            previous = q;
        }
    }
}

/// Lemma A.3 of seed 004: `γ_{δ; 2(n−p), ν=√p} ≤ 2(2n − p) + 3 ln(1/δ)`, with `ν² = p` the
/// non-centrality in our convention.
#[test]
fn lemma_a3_bound_holds() {
    for (n, p) in [(2u32, 1u32), (10, 3), (100, 20), (10_000, 5)] {
        for delta in [0.2, 0.01, 1e-6] {
            let (n, p) = (f64::from(n), f64::from(p));
            let q = NonCentralChiSquared::new(2.0 * (n - p), p)
                .unwrap()
                .upper_quantile(delta)
                .unwrap();
            assert!(
                q <= 2.0 * (2.0 * n - p) - 3.0 * delta.ln(),
                "n {n} p {p} δ {delta}"
            );
        }
    }
}

/// `cdf + sf = 1` across the support, including both far tails.
#[test]
fn tails_add_up_to_one() {
    let d = NonCentralChiSquared::new(9.0, 14.0).unwrap();
    for x in [1e-3, 0.5, 5.0, 23.0, 60.0, 150.0] {
        let total = d.cdf(x).unwrap() + d.sf(x).unwrap();
        assert!((total - 1.0).abs() < SAME_FUNCTION, "x {x}: {total}");
    }
}
