//! The release manifest: what a release claims about itself, for analysts and auditors.
//!
//! It records the design (method, `n`, `p₁`, `p₂`, σ and its Appendix C bound, cohorts), the
//! quality-assurance result, the column means and cross-products `XᵀX` of the release (equal to
//! the raw data's), the printed precision, and warnings. It never contains a key or a raw value.

use serde::{Deserialize, Serialize};

/// The manifest written next to `release.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Version of the tool that wrote it.
    pub orthomask_version: String,
    /// The protocol that produced the release.
    pub method: Method,
    /// Participants.
    pub n: usize,
    /// Data columns including the QA column.
    pub p1: usize,
    /// Noise columns.
    pub p2: usize,
    /// Released column names, in order.
    pub columns: Vec<String>,
    /// Noise standard deviation σ (0 without padding).
    pub sigma: f64,
    /// Largest absolute value of a masked answer the Appendix C bound assumes, on the padded
    /// record's scale: 1 (plus the DP allowance) when the devices scale by declared ranges
    /// (`unmasking_error.scaled_by_declared_ranges`), the answers' own largest value otherwise.
    pub x_max: Option<f64>,
    /// Where `x_max` came from: declared, or read off the data (simulation only).
    pub x_max_source: Option<XMaxSource>,
    /// The Appendix C bound, when it applies.
    pub appendix_c: Option<AppendixC>,
    /// Smallest condition (3.5)/(3.7) margin `λ_min(X₂X₂ᵀ)/λ_max(X₁X₁ᵀ)` over cohorts (simulation
    /// only; > 1 means the condition held).
    pub condition_3_7_margin: Option<f64>,
    /// Cohort structure.
    pub cohorts: Cohorts,
    /// Law of the right mask.
    pub right_mask: RightMask,
    /// Generator of the masks.
    pub generator: Generator,
    /// Columns kept unmasked (partial masking, second method).
    pub kept_columns: Vec<String>,
    /// Columns holding 0/1 answers in the raw data (auditors check their counts).
    #[serde(default)]
    pub binary_columns: Vec<String>,
    /// The quality-assurance check.
    pub qa: Option<Qa>,
    /// Column means of the release (equal to the raw means).
    pub column_means: Vec<ColumnMean>,
    /// `XᵀX` of the release, in column order (equal to the raw cross-products for row masks).
    pub cross_products: Vec<Vec<f64>>,
    /// Decimals the release was rounded to (`null`: round-trip precision).
    pub decimals: Option<u8>,
    /// Differential-privacy noise added on the devices, when used.
    pub dp: Option<DpNoise>,
    /// Whether guessable teaching keys were used.
    pub teaching_keys: bool,
    /// Warnings (unsafe designs run in teaching mode, combined releases, …).
    pub warnings: Vec<String>,
    /// For every released cohort and every service that accepted its uploads, the receipt list
    /// that service published and the collector checked the hand-over against (issue 10 §5): a
    /// participant checks a saved receipt against the release itself. Empty (and not written)
    /// for releases without services (`orthomask pipeline`) and in manifests older than it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub receipt_roots: Vec<ReceiptRoot>,
    /// The expected rounding error of the released values (issue 11 §1; absent in manifests
    /// older than it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmasking_error: Option<UnmaskingError>,
    /// Share mode: what one right-masking service alone learns about a participant's answers
    /// (issue 11 §4; absent outside share mode and in manifests older than it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_view: Option<ShareViewRecord>,
    /// What the collection guarantees against each party, and what it reveals (issue 21 §3;
    /// absent for the unpadded methods, which have no such theorem, and in older manifests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub obfuscation: Option<Obfuscation>,
    /// The model terms the survey declared (issue 22 §1): which released columns the devices
    /// computed as `x²`, `x·z`, `log x`, … of which answer columns. An analyst's formula over
    /// the release names them, and the RESET-style and Chow tests find the powers and the group
    /// interactions here. Empty (and not written) without declared terms.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model_terms: Vec<crate::model_terms::Term>,
    /// The web app builds that produced the released cohorts' uploads, with how many each
    /// (issue 27 §2; `orthomask_survey::app_build::release_builds`): auditors compare the digests
    /// with the public builds (`builds.json`). Empty (and not written) without services and in
    /// manifests older than it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub builds: Vec<BuildCount>,
}

/// How many uploads named one web app build digest (issue 27 §2). The digest is empty for
/// uploads that named none (clients other than the web app, in a deployment that serves none).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildCount {
    /// The build digest (`orthomask_survey::app_build`), lowercase hexadecimal, or empty.
    pub digest: String,
    /// Uploads that named it.
    pub uploads: usize,
}

/// The strong-obfuscation guarantee of the collection for the masks actually run
/// (`orthomask_survey::obfuscation`): each party's posterior is its prior restricted to the
/// answers' orbit under the orthogonal matrices that fix the columns the masks keep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Obfuscation {
    /// The guarantee in one sentence, with where it is derived.
    pub statement: String,
    /// The columns every mask keeps fixed, `F` (the column sums' `1ₙ` first).
    pub fixed: Vec<String>,
    /// What the release and the collection reveal beyond the orbit: the column sums, the kept
    /// columns row by row, their cross-products with the masked answers, `X₁ᵀX₁`.
    pub reveals: Vec<String>,
    /// A lower bound on the probability (over the devices' noise) that the guarantee holds:
    /// `1 −` the Appendix C failure probability of condition (3.5) on the masked answers.
    pub holds_with_probability: f64,
}

/// One right-masking service's view of a participant's answers in share mode
/// (`orthomask_survey::share_view`): a Gaussian mechanism on the answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShareViewRecord {
    /// Right-masking services `K₁`.
    pub services: usize,
    /// Largest answer over the share noise one service sees (below 1: the answer is buried).
    pub signal_to_noise: f64,
    /// ε of one service's view at `delta`, for one participant's answers replaced by any others.
    pub epsilon: f64,
    /// δ of that figure.
    pub delta: f64,
}

/// How many digits the masking costs: the expected rounding error of a released value, from the
/// design alone (`orthomask_core::protocol::accuracy`, (E1)–(E2)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnmaskingError {
    /// Whether the devices scaled every answer by its declared range before padding.
    pub scaled_by_declared_ranges: bool,
    /// Norm of the padded record on the devices' scale, `R` of (E1).
    pub record_norm: f64,
    /// Expected (rms) error of a released entry on the devices' scale, `E = √3·u·R` of (E2) ((E5)
    /// in share mode): in units of each answer's half-range when scaled, in the answers' units
    /// otherwise.
    pub expected_entry_error: f64,
    /// Significant digits masking is expected to cost a regression coefficient on top of the
    /// raw fit, `log₁₀(E/u)`: an rms figure under the rounding model `model` names, not a bound
    /// (`digits_lost` in manifests before issue 21, which meant the same number).
    #[serde(alias = "digits_lost")]
    pub expected_digits_lost: f64,
    /// The model the expectation is taken under (absent in older manifests).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// The expected error of each released column in its own units.
    pub columns: Vec<ColumnUnmaskingError>,
}

/// One released column's expected rounding error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnUnmaskingError {
    /// Column name.
    pub name: String,
    /// Expected (rms) error of a released value, in the column's units.
    pub expected_error: f64,
}

/// One accepting service's published receipt list of one released cohort, as the collector
/// checked it: `count` upload hashes whose RFC 6962 root is `merkle_root`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiptRoot {
    /// Cohort index.
    pub cohort: u32,
    /// The service's upload URL, exactly as the survey definition names it — the `service` of
    /// the participant's saved receipt.
    pub service: String,
    /// Uploads in the service's published list.
    pub count: usize,
    /// RFC 6962 Merkle root (hex) over the sorted upload hashes.
    pub merkle_root: String,
    /// The app builds the uploads named, by digest, as the service published them (issue 27;
    /// absent in manifests older than it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub builds: Vec<BuildCount>,
}

/// The protocol that produced a release (`"modified"`, `"first"`, `"second"`, `"collusion"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// The modified TM² of seed 000: Gaussian padding, Haar right mask.
    Modified,
    /// The first TM² method of seed 003 §3.1.
    First,
    /// The second TM² method of seed 003 §3.3.
    Second,
    /// The collusion-resistant extension of seed 000 §3.5 (share mode).
    Collusion,
}

impl Method {
    /// The name as the manifest writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Modified => "modified",
            Self::First => "first",
            Self::Second => "second",
            Self::Collusion => "collusion",
        }
    }
}

/// The law of the right mask (`"haar"`, `"uniform-entries"`, `"block-diagonal-haar"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RightMask {
    /// Haar-distributed orthogonal.
    Haar,
    /// I.i.d. U(0, 1) entries (invertible; seed 003 eq. (1)).
    UniformEntries,
    /// The second method's block-diagonal Haar `B₁`, `B₂`.
    BlockDiagonalHaar,
}

impl From<orthomask_core::protocol::tm2::RightMaskKind> for RightMask {
    fn from(kind: orthomask_core::protocol::tm2::RightMaskKind) -> Self {
        match kind {
            orthomask_core::protocol::tm2::RightMaskKind::Haar => Self::Haar,
            orthomask_core::protocol::tm2::RightMaskKind::UniformEntries => Self::UniformEntries,
        }
    }
}

/// The generator of the masks (`"chacha"`, `"matlab"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Generator {
    /// Keyed ChaCha12 streams.
    Chacha,
    /// MT19937 seeded like MATLAB's `rng(key)` (teaching keys only).
    Matlab,
}

impl From<orthomask_core::protocol::tm2::Generator> for Generator {
    fn from(generator: orthomask_core::protocol::tm2::Generator) -> Self {
        match generator {
            orthomask_core::protocol::tm2::Generator::ChaCha => Self::Chacha,
            orthomask_core::protocol::tm2::Generator::Matlab => Self::Matlab,
        }
    }
}

/// Where the `x_max` of the bound came from (`"declared"`, `"data"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum XMaxSource {
    /// Declared by the survey (question ranges, `--x-max`).
    Declared,
    /// Read off the data: a simulation only, since it leaks the data's extremes.
    Data,
}

/// The Appendix C bound as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AppendixC {
    /// Minimum σ.
    pub sigma_min: f64,
    /// Upper bound on the probability that condition (3.5) fails.
    pub failure_probability: f64,
    /// `γ = p₂ / m` of the largest cohort, where the bound binds.
    pub gamma: f64,
    /// δ.
    pub delta: f64,
}

/// Cohort structure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cohorts {
    /// Requested cohort size (`null`: one cohort of all participants).
    pub size: Option<usize>,
    /// Actual sizes.
    pub sizes: Vec<usize>,
}

/// The QA result as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Qa {
    /// The constant `c`.
    pub constant: f64,
    /// Whether every cohort passed.
    pub passed: bool,
    /// Worst deviation seen.
    pub max_deviation: f64,
    /// Tolerance of the worst check.
    pub tolerance: f64,
}

/// One column mean.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnMean {
    /// Column name.
    pub name: String,
    /// Mean.
    pub mean: f64,
}

/// Device-side DP noise.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DpNoise {
    /// ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// σ of the added noise, on the [−1, 1] scale.
    pub sigma: f64,
    /// The smallest cohort `n_s` σ was calibrated for (seed 004 §4).
    pub smallest_cohort: usize,
    /// Declared range and noise standard deviation of each answer column in its own units
    /// (`σ·(hi − lo)/2`): what a bias-corrected regression subtracts.
    pub columns: Vec<DpColumn>,
    /// What σ guarantees for the mechanism run (absent in plans and manifests made before the
    /// guarantee was derived for it, whose σ was seed 004's for neighbours at distance 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guarantee: Option<DpGuarantee>,
}

/// The (ε, δ) device-side DP noise guarantees for the mechanism the devices and masks run
/// (`orthomask_dp::device`): the noisy column sums and the masked complement, composed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DpGuarantee {
    /// Who the neighbours are (`replace-one-record`: one participant's record replaced by any
    /// other valid record).
    pub neighbours: String,
    /// Whose view the guarantee covers (issue 21 §2: the collector and the public, not the
    /// provider). Absent in manifests written before it was stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covers: Option<String>,
    /// The largest cohort size the guarantee was checked at (every size from the smallest DP
    /// cohort to this one). Absent in manifests written before sizes were checked one by one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest_cohort: Option<usize>,
    /// ε guaranteed.
    pub epsilon: f64,
    /// δ guaranteed at that ε (at most the budget's δ).
    pub delta: f64,
    /// ε₁ spent on the column sums the masks reveal.
    pub epsilon_sums: f64,
    /// δ₁ of the column sums.
    pub delta_sums: f64,
    /// ε₂ spent on the masked complement.
    pub epsilon_complement: f64,
    /// δ₂ of the masked complement.
    pub delta_complement: f64,
    /// Seed 004's σ (eq. (13), `n_s − 1` rows, neighbours at distance 1) for comparison.
    pub paper_sigma: f64,
    /// σ over `paper_sigma`: the extra noise the mechanism actually run needs.
    pub growth_factor: f64,
}

/// One column's DP noise.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DpColumn {
    /// Column name.
    pub name: String,
    /// Declared lower end.
    pub lo: f64,
    /// Declared upper end.
    pub hi: f64,
    /// Noise standard deviation in the column's units.
    pub sigma: f64,
}

/// Errors reading a manifest.
#[derive(Debug, thiserror::Error)]
#[error("{source_name}: not a valid manifest: {reason}")]
pub struct ManifestError {
    /// File name.
    pub source_name: String,
    /// The JSON parser's message (with line and column).
    pub reason: String,
}

impl Manifest {
    /// Parse a manifest.
    ///
    /// # Errors
    /// [`ManifestError`] with the parser's line and column.
    pub fn parse(text: &str, source_name: &str) -> Result<Self, ManifestError> {
        serde_json::from_str(text).map_err(|e| ManifestError {
            source_name: source_name.to_owned(),
            reason: e.to_string(),
        })
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        // All fields are plain data; serialisation cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        Manifest {
            orthomask_version: "0".into(),
            method: Method::Modified,
            n: 3,
            p1: 2,
            p2: 4,
            columns: vec!["a".into(), "QA".into()],
            sigma: 1.5,
            x_max: Some(888.0),
            x_max_source: Some(XMaxSource::Data),
            appendix_c: Some(AppendixC {
                sigma_min: 1.0,
                failure_probability: 0.1,
                gamma: 1.3,
                delta: 0.5,
            }),
            condition_3_7_margin: Some(2.0),
            cohorts: Cohorts {
                size: None,
                sizes: vec![3],
            },
            right_mask: RightMask::Haar,
            generator: Generator::Chacha,
            kept_columns: vec![],
            binary_columns: vec!["a".into()],
            qa: Some(Qa {
                constant: 888.0,
                passed: true,
                max_deviation: 0.0,
                tolerance: 1e-6,
            }),
            column_means: vec![ColumnMean {
                name: "a".into(),
                mean: 1.0,
            }],
            cross_products: vec![vec![1.0]],
            decimals: None,
            dp: None,
            teaching_keys: true,
            warnings: vec![],
            receipt_roots: vec![ReceiptRoot {
                cohort: 0,
                service: "http://m/api/surveys/s/uploads".into(),
                count: 3,
                merkle_root: "ab".repeat(32),
                builds: vec![BuildCount {
                    digest: "cd".repeat(32),
                    uploads: 3,
                }],
            }],
            unmasking_error: None,
            share_view: None,
            obfuscation: None,
            model_terms: Vec::new(),
            builds: vec![BuildCount {
                digest: "cd".repeat(32),
                uploads: 3,
            }],
        }
    }

    #[test]
    fn round_trip() {
        let m = sample();
        assert_eq!(Manifest::parse(&m.to_json(), "m.json").unwrap(), m);
    }

    /// Manifests written before issue 10 §5 have no `receipt_roots`; they still parse, and a
    /// release without services does not write the field.
    #[test]
    fn receipt_roots_are_optional() {
        let mut m = sample();
        m.receipt_roots.clear();
        let text = m.to_json();
        assert!(!text.contains("receipt_roots"));
        assert_eq!(Manifest::parse(&text, "m.json").unwrap(), m);
    }

    #[test]
    fn parse_errors_name_the_file() {
        let e = Manifest::parse("{\"n\": 3}", "m.json")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("m.json: not a valid manifest"), "{e}");
    }

    /// The typed fields keep the JSON strings manifests have always had.
    #[test]
    fn enumerations_keep_their_json_names() {
        let json = serde_json::to_value(sample()).unwrap();
        assert_eq!(json["method"], "modified");
        assert_eq!(json["right_mask"], "haar");
        assert_eq!(json["generator"], "chacha");
        assert_eq!(json["x_max_source"], "data");
        for (value, text) in [
            (RightMask::UniformEntries, "uniform-entries"),
            (RightMask::BlockDiagonalHaar, "block-diagonal-haar"),
        ] {
            assert_eq!(serde_json::to_value(value).unwrap(), text);
        }
        for method in [
            Method::Modified,
            Method::First,
            Method::Second,
            Method::Collusion,
        ] {
            assert_eq!(serde_json::to_value(method).unwrap(), method.as_str());
        }
        let bad = sample().to_json().replace("\"chacha\"", "\"xorshift\"");
        assert!(Manifest::parse(&bad, "m.json").is_err());
    }
}
