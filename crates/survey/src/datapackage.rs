//! The release as a Frictionless Data Package (issue 29 §2): `datapackage.json` beside
//! `release.csv` and `manifest.json`, with a Table Schema for the release and the manifest as a
//! second resource. Built here once, from the manifest and — where there is one — the survey
//! definition; the data collector serves it (`GET /api/surveys/{id}/datapackage.json`) and
//! `orthomask pipeline` writes it with what a CSV tells (no definition: names, roles, the
//! declared `--range`s, the columns observed 0/1).
//!
//! # What a masked column's values are, and what its labels may be used for
//! A release is `A·X₁` with `A` a random orthogonal matrix keeping `1ₙ` fixed (seed 000; the
//! first method of seed 003 likewise masks rows). A column that held the codes 0/1 or the Likert
//! points 1…k holds real numbers on the release: `−0.37`, `2.91`. So
//!
//! * a field's **value labels describe the raw data**, not the release: they are the codebook
//!   (`orthomask:codebook`, a custom property), never Table Schema's `categories`, which asserts
//!   that the file's values are those codes — frictionless would then reject the release, and R's
//!   `factor()` or a pandas `Categorical` over masked numbers would be nonsense (every row its own
//!   level, or all missing). Likewise a declared range describes the raw answers
//!   (`orthomask:declared_range`), never `constraints`: masked values leave it. Even a column kept
//!   unmasked is not exactly its codes on the release: it goes through the devices' scaling and
//!   back, so an age of 18 is released as 17.999999999999574 (found by `frictionless validate`
//!   on an `orthomask pipeline --keep age` release). So no field of a release carries
//!   `categories` or `constraints`; `orthomask:role` says which columns are masked;
//! * what **is** exact on a release is what `A` keeps: column sums and `XᵀX`. For 0/1 indicator
//!   columns `z`, `w` these are counts, `1ₙᵀz = zᵀz` and `zᵀw` (seed 003 §2.1, Table 1), so a
//!   contingency table computed from the released indicator columns equals the raw one — and it is
//!   *there* that the labels belong, as the table's row and column names. Each labelled factor is
//!   listed with one indicator per level, written as an affine combination of released columns
//!   (`orthomask:factors`: `constant·1ₙ + Σ coefficient·column`). Because `A` is linear and
//!   `A·1ₙ = 1ₙ`, the same combination of the *released* columns is `A` times the raw indicator,
//!   so its cross-products with any other are the raw counts. This lets the reference option of a
//!   categorical question, which has no column of its own, be a level
//!   (`1 − Σ other options`), and keeps a skipped or hidden answer apart from it: with an
//!   `id_answered` column the reference is `answered − Σ other options` and "no answer" is
//!   `1 − answered` (coding puts a skipped categorical in the reference's zeros, `crate::coding`);
//! * a **Likert item** is one score column (points 1…k). Its mean and its cross-products with
//!   other columns are exact, so it belongs in regressions; but a table of its points needs
//!   `Σ xʳ` for `r` up to `k − 1` (a Vandermonde system), which the release gives only for
//!   `r ≤ 2` (enough for the marginal counts of a 3-point item, not of a longer one) — and crossed
//!   with another question only for `r ≤ 1` (more only with declared power terms,
//!   `crate::terms`). So a Likert item gets a codebook
//!   (point 1 the low label, point k the high label, the points between their numbers) and no
//!   factor; a survey that wants a table of "Never/Sometimes/Often" asks a categorical question;
//! * with **device-side DP noise** the released indicators carry noise, so their cross-products
//!   are counts plus noise, not counts; and the **second method** releases `X·B₁B₂`, a right
//!   mask mixing the columns, whose cross-products are not the raw ones. No factor is listed for
//!   either (the package says why), though the codebook still says what the raw codes meant.
//!
//! A release printed with few decimals (`--decimals`) gives the counts only to within its
//! rounding; the tables round them and report the largest residual (`orthomask_stats::contingency`).
//!
//! The QA column is `c·1ₙ` in the raw data, hence `A·c·1ₙ = c·1ₙ` on the release (to rounding).
//! The noise columns padded on the devices are never released (the collector publishes
//! `A₁A₂X₁`); the package says how many there were and their σ.

use crate::coding::{ColumnSource, ColumnSpec};
use crate::definition::{QuestionKind, SurveyDefinition};
use crate::plan::DeclaredRange;
use orthomask_formats::manifest::{Manifest, Method};
use serde::{Deserialize, Serialize};

/// The release's file name, as the package names it.
pub const RELEASE_PATH: &str = "release.csv";

/// The manifest's file name, as the package names it.
pub const MANIFEST_PATH: &str = "manifest.json";

/// The package's own file name.
pub const PACKAGE_PATH: &str = "datapackage.json";

/// Label of the level of records that gave no answer (skipped, or not shown).
pub const NO_ANSWER: &str = "(no answer)";

/// A Frictionless Data Package (v1 descriptor) with Orthomask's custom properties.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataPackage {
    /// `"data-package"`.
    pub profile: String,
    /// Lower-case name (`[-a-z0-9._/]+`): the survey id with `_` written `-`, or `release`.
    pub name: String,
    /// The survey's title, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the package holds and how to read it.
    pub description: String,
    /// The release, then the manifest.
    pub resources: Vec<Resource>,
}

/// One resource: the release (tabular, with its schema) or the manifest (JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    /// `release` or `manifest`.
    pub name: String,
    /// File name beside the descriptor.
    pub path: String,
    /// `tabular-data-resource` or `data-resource`.
    pub profile: String,
    /// `csv` or `json`.
    pub format: String,
    /// `text/csv` or `application/json`.
    pub mediatype: String,
    /// `utf-8`.
    pub encoding: String,
    /// What it is.
    pub description: String,
    /// The release's Table Schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<TableSchema>,
    /// Labelled factors whose tables the release gives exactly (module documentation).
    #[serde(
        rename = "orthomask:factors",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub factors: Vec<Factor>,
}

/// A Table Schema.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableSchema {
    /// One per column of `release.csv`, in order.
    pub fields: Vec<Field>,
    /// No value is missing: a masked matrix is complete (skips are coded, `crate::coding`).
    #[serde(rename = "missingValues")]
    pub missing_values: Vec<String>,
}

/// What a released column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Masked by row masks `A` keeping `1ₙ` fixed: exact means and cross-products, values that
    /// are not the raw answers.
    Masked,
    /// Right-masked (the second method's `X·B₁B₂`): values mix the answer columns.
    RightMasked,
    /// Kept unmasked: the raw values, to the rounding of the devices' scaling and back.
    Kept,
    /// The QA column `c·1ₙ`, the same after masking.
    Qa,
}

/// One field of the release's schema.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Field {
    /// The column's name in `release.csv`.
    pub name: String,
    /// Always `number`: masked values are reals whatever the question.
    #[serde(rename = "type")]
    pub kind: String,
    /// The question (or model term) as the survey team wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the column codes and what its released values are.
    pub description: String,
    /// Masked, right-masked, kept or QA.
    #[serde(rename = "orthomask:role")]
    pub role: Role,
    /// The question this column codes, or the term it computes.
    #[serde(
        rename = "orthomask:source",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub source: Option<String>,
    /// The range of the raw answers (declared by the survey, or derived for a term).
    #[serde(
        rename = "orthomask:declared_range",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub declared_range: Option<RawRange>,
    /// What the raw codes meant (never the released values of a masked column).
    #[serde(
        rename = "orthomask:codebook",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub codebook: Vec<Category>,
}

/// A code and its label.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Category {
    /// The code in the raw data.
    pub value: i64,
    /// What it meant.
    pub label: String,
}

/// A raw column's range and where it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RawRange {
    /// Smallest raw value.
    pub minimum: f64,
    /// Largest raw value.
    pub maximum: f64,
    /// `declared` (by the survey or `--range`) or `derived` (a model term's, from its inputs').
    pub source: String,
}

/// A labelled factor: its levels partition the records, each with its indicator on the release.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Factor {
    /// The question id (or the column name, without a definition).
    pub name: String,
    /// The question as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The levels in the questionnaire's order, "no answer" last.
    pub levels: Vec<Level>,
}

/// One level of a factor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Level {
    /// Its label.
    pub label: String,
    /// Its raw indicator as `constant·1ₙ + Σ coefficient·column` of released columns.
    pub indicator: Indicator,
}

/// An affine combination of released columns: the masked image of a 0/1 indicator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Indicator {
    /// Multiple of `1ₙ`.
    pub constant: f64,
    /// Columns and their coefficients.
    pub terms: Vec<IndicatorTerm>,
}

/// One column of an [`Indicator`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndicatorTerm {
    /// Released column name.
    pub column: String,
    /// Its coefficient.
    pub coefficient: f64,
}

impl Indicator {
    fn column(name: &str) -> Self {
        Self {
            constant: 0.0,
            terms: vec![IndicatorTerm {
                column: name.to_owned(),
                coefficient: 1.0,
            }],
        }
    }

    /// "None of these columns": `1ₙ − Σ columns`, or `base − Σ columns` among the records
    /// `base` (an `answered` column) marks.
    fn rest(base: Option<&str>, columns: &[String]) -> Self {
        let mut terms: Vec<IndicatorTerm> = base
            .map(|b| IndicatorTerm {
                column: b.to_owned(),
                coefficient: 1.0,
            })
            .into_iter()
            .collect();
        terms.extend(columns.iter().map(|c| IndicatorTerm {
            column: c.clone(),
            coefficient: -1.0,
        }));
        Self {
            constant: if base.is_some() { 0.0 } else { 1.0 },
            terms,
        }
    }

    /// Its value on each record of a table, given a column by name (`None`: not in the table).
    pub fn evaluate<'a>(
        &self,
        rows: usize,
        column: impl Fn(&str) -> Option<&'a [f64]>,
    ) -> Option<Vec<f64>> {
        let mut out = vec![self.constant; rows];
        for t in &self.terms {
            let values = column(&t.column)?;
            for (o, v) in out.iter_mut().zip(values) {
                *o += t.coefficient * v;
            }
        }
        Some(out)
    }
}

impl DataPackage {
    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        // Plain data; serialisation cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// Parse a package.
    ///
    /// # Errors
    /// [`PackageError`] with the parser's line and column.
    pub fn parse(text: &str, source_name: &str) -> Result<Self, PackageError> {
        serde_json::from_str(text).map_err(|e| PackageError {
            source_name: source_name.to_owned(),
            reason: e.to_string(),
        })
    }

    /// The release's labelled factors read from a package's text, and nothing else of it: what
    /// the analyst view needs, without the schema's deserialiser in the web app's WebAssembly.
    ///
    /// # Errors
    /// [`PackageError`] with the parser's line and column.
    pub fn parse_factors(text: &str, source_name: &str) -> Result<Vec<Factor>, PackageError> {
        /// The part of a resource [`parse_factors`](DataPackage::parse_factors) reads.
        #[derive(Deserialize)]
        struct FactorsOnly {
            path: String,
            #[serde(rename = "orthomask:factors", default)]
            factors: Vec<Factor>,
        }
        #[derive(Deserialize)]
        struct ResourcesOnly {
            resources: Vec<FactorsOnly>,
        }
        let package: ResourcesOnly = serde_json::from_str(text).map_err(|e| PackageError {
            source_name: source_name.to_owned(),
            reason: e.to_string(),
        })?;
        Ok(package
            .resources
            .into_iter()
            .find(|r| r.path == RELEASE_PATH)
            .map(|r| r.factors)
            .unwrap_or_default())
    }

    /// The release's labelled factors (none when no resource lists any).
    pub fn factors(&self) -> &[Factor] {
        self.resources
            .iter()
            .find(|r| r.path == RELEASE_PATH)
            .map_or(&[], |r| r.factors.as_slice())
    }
}

/// Errors reading a data package.
#[derive(Debug, thiserror::Error)]
#[error("{source_name}: not a data package: {reason}")]
pub struct PackageError {
    /// File name or URL.
    pub source_name: String,
    /// The JSON parser's message (with line and column).
    pub reason: String,
}

/// What the package is built from.
#[derive(Clone, Copy, Debug)]
pub struct Sources<'a> {
    /// The release's manifest.
    pub manifest: &'a Manifest,
    /// The survey definition (the collector's template), when there is one.
    pub definition: Option<&'a SurveyDefinition>,
    /// Ranges declared without a definition (`orthomask pipeline --range`).
    pub declared_ranges: &'a [DeclaredRange],
}

/// The data package of a release.
pub fn build(sources: &Sources<'_>) -> DataPackage {
    let manifest = sources.manifest;
    let columns: Vec<ColumnSpec> = sources
        .definition
        .map(SurveyDefinition::columns)
        .unwrap_or_default();
    let exact_counts = counts_are_exact(manifest);
    let fields: Vec<Field> = manifest
        .columns
        .iter()
        .enumerate()
        .map(|(j, name)| {
            let is_last = j + 1 == manifest.columns.len();
            let spec = columns.iter().find(|c| &c.name == name);
            field(sources, name, spec, is_last)
        })
        .collect();
    let factors = match (exact_counts, sources.definition) {
        (Err(_), _) => Vec::new(),
        (Ok(()), Some(definition)) => definition_factors(definition, &manifest.columns),
        (Ok(()), None) => manifest
            .binary_columns
            .iter()
            .filter(|c| manifest.columns.contains(c))
            .map(|c| binary_factor(c, None, None, "1", "0"))
            .collect(),
    };
    let definition = sources.definition;
    let release_description = format!(
        "The masked release: {n} records of {p1} columns. {values} {counts}",
        n = manifest.n,
        p1 = manifest.columns.len(),
        values = values_sentence(manifest.method),
        counts = match exact_counts {
            Ok(()) =>
                "Tables of the factors in orthomask:factors, computed from their indicators' \
                       cross-products, are the raw counts; their labels name the rows and columns."
                    .to_owned(),
            Err(why) => format!("No factor is listed: {why}."),
        },
    );
    DataPackage {
        profile: "data-package".to_owned(),
        name: definition
            .map(|d| d.id.replace('_', "-"))
            .unwrap_or_else(|| "release".to_owned()),
        title: definition.map(|d| d.title.clone()),
        description: format!(
            "A release made by Orthomask ({method} protocol, n = {n}; {p2} noise columns of σ = \
             {sigma} were padded on the devices and are not released). Value labels \
             (orthomask:codebook) say what the raw codes meant; a masked column holds real \
             numbers, not codes, so never turn it into a factor: tabulate through \
             orthomask:factors instead.",
            method = manifest.method.as_str(),
            n = manifest.n,
            p2 = manifest.p2,
            sigma = manifest.sigma,
        ),
        resources: vec![
            Resource {
                name: "release".to_owned(),
                path: RELEASE_PATH.to_owned(),
                profile: "tabular-data-resource".to_owned(),
                format: "csv".to_owned(),
                mediatype: "text/csv".to_owned(),
                encoding: "utf-8".to_owned(),
                description: release_description,
                schema: Some(TableSchema {
                    fields,
                    missing_values: Vec::new(),
                }),
                factors,
            },
            Resource {
                name: "manifest".to_owned(),
                path: MANIFEST_PATH.to_owned(),
                profile: "data-resource".to_owned(),
                format: "json".to_owned(),
                mediatype: "application/json".to_owned(),
                encoding: "utf-8".to_owned(),
                description: "What the release claims about itself: design, σ and its Appendix C \
                              bound, cohorts, QA, column means and XᵀX, warnings."
                    .to_owned(),
                schema: None,
                factors: Vec::new(),
            },
        ],
    }
}

/// Whether cross-products of released indicators are the raw counts, or why not.
fn counts_are_exact(manifest: &Manifest) -> Result<(), &'static str> {
    if manifest.method == Method::Second {
        return Err(
            "the second method releases X·B₁B₂, whose columns mix the answers, so cross-products \
             of its columns are not the raw ones",
        );
    }
    if manifest.dp.is_some() {
        return Err(
            "the devices added differential-privacy noise to every answer, so cross-products of \
             indicators are counts plus noise",
        );
    }
    Ok(())
}

/// What a released value of a masked column is, by protocol.
fn values_sentence(method: Method) -> &'static str {
    match method {
        Method::Second => {
            "Masked columns hold X·B₁B₂ (seed 003 §3.3), kept columns the raw values."
        }
        _ => {
            "Masked columns hold A·X with A orthogonal and A·1ₙ = 1ₙ: real numbers, not the raw \
             answers or codes, with exactly the raw means and cross-products XᵀX."
        }
    }
}

/// The schema field of released column `name` (`spec`: its definition column, if any).
fn field(sources: &Sources<'_>, name: &str, spec: Option<&ColumnSpec>, is_last: bool) -> Field {
    let manifest = sources.manifest;
    let kept = manifest.kept_columns.iter().any(|k| k == name);
    let qa = name == "QA" && is_last && manifest.method != Method::Second && spec.is_none();
    let role = if qa {
        Role::Qa
    } else if kept {
        Role::Kept
    } else if manifest.method == Method::Second {
        Role::RightMasked
    } else {
        Role::Masked
    };
    let meaning = sources
        .definition
        .zip(spec)
        .map(|(d, s)| column_meaning(d, s))
        .unwrap_or_else(|| Meaning {
            title: None,
            source: None,
            text: String::new(),
            codebook: if manifest.binary_columns.iter().any(|b| b == name) {
                vec![
                    Category {
                        value: 1,
                        label: "1".to_owned(),
                    },
                    Category {
                        value: 0,
                        label: "0".to_owned(),
                    },
                ]
            } else {
                Vec::new()
            },
        });
    let range = spec
        .map(|s| RawRange {
            minimum: s.range.0,
            maximum: s.range.1,
            source: match s.source {
                ColumnSource::Question(_) => "declared",
                ColumnSource::Term(_) => "derived",
            }
            .to_owned(),
        })
        .or_else(|| {
            sources
                .declared_ranges
                .iter()
                .find(|r| r.name == name)
                .map(|r| RawRange {
                    minimum: r.lo,
                    maximum: r.hi,
                    source: "declared".to_owned(),
                })
        });
    let values = match role {
        Role::Qa => {
            // The QA check's constant, or the column's mean (exact on a release), which is it.
            let c = manifest.qa.as_ref().map(|q| q.constant).or_else(|| {
                manifest
                    .column_means
                    .iter()
                    .find(|m| m.name == name)
                    .map(|m| m.mean)
            });
            match c {
                Some(c) => format!(
                    "The QA column: the constant {c} in every raw record, hence on the release \
                     too (to rounding)."
                ),
                None => "The QA column: a constant in every raw record, hence on the release \
                         too (to rounding)."
                    .to_owned(),
            }
        }
        Role::Kept => "Kept unmasked: the released values are the raw ones, to the rounding of \
                       the devices' scaling and back (the manifest's unmasking_error)."
            .to_owned(),
        Role::Masked => "Masked: released values are real numbers with the raw mean and \
                         cross-products, not the raw values; the codebook and range describe \
                         the raw data."
            .to_owned(),
        Role::RightMasked => "Right-masked (X·B₁B₂): released values mix the answer columns; \
                              the codebook and range describe the raw data."
            .to_owned(),
    };
    let description = [meaning.text, values]
        .into_iter()
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    Field {
        name: name.to_owned(),
        kind: "number".to_owned(),
        title: meaning.title,
        description,
        role,
        source: meaning.source,
        declared_range: range,
        codebook: meaning.codebook,
    }
}

/// What a definition column means in words, and its codebook.
struct Meaning {
    title: Option<String>,
    source: Option<String>,
    text: String,
    codebook: Vec<Category>,
}

fn category(value: i64, label: impl Into<String>) -> Category {
    Category {
        value,
        label: label.into(),
    }
}

fn column_meaning(definition: &SurveyDefinition, spec: &ColumnSpec) -> Meaning {
    let question = match spec.source {
        ColumnSource::Term(t) => {
            let term = &definition.terms[t];
            return Meaning {
                title: Some(term.kind.formula()),
                source: Some(term.id.clone()),
                text: format!(
                    "Model term {} = {}, computed on the device (0 when an input is unanswered).",
                    term.id,
                    term.kind.formula()
                ),
                codebook: Vec::new(),
            };
        }
        ColumnSource::Question(i) => &definition.questions[i],
    };
    let help = question.help.clone().unwrap_or_default();
    let source = Some(question.id.clone());
    if spec.name == question.answered_column() {
        return Meaning {
            title: Some(format!("{} (answered)", question.label)),
            source,
            text: format!(
                "1 when {} was answered, 0 when skipped or not shown.",
                question.id
            ),
            codebook: vec![category(1, "answered"), category(0, NO_ANSWER)],
        };
    }
    let (title, text, codebook) = match &question.kind {
        QuestionKind::YesNo => (
            question.label.clone(),
            "1 = yes, 0 = no.".to_owned(),
            vec![category(1, "yes"), category(0, "no")],
        ),
        QuestionKind::Integer { .. } | QuestionKind::Number { .. } => {
            (question.label.clone(), String::new(), Vec::new())
        }
        QuestionKind::Likert { points, .. } => (
            question.label.clone(),
            format!("A point 1…{points} of a Likert scale, one score column."),
            likert_labels(&question.kind),
        ),
        QuestionKind::Categorical { options } => {
            let option = spec
                .name
                .strip_prefix(&format!("{}=", question.id))
                .unwrap_or(&spec.name);
            (
                format!("{}: {option}", question.label),
                format!(
                    "1 when the answer was {option:?}, else 0 (reference option {:?}).",
                    options.first().map(String::as_str).unwrap_or_default()
                ),
                vec![category(1, option), category(0, format!("not {option}"))],
            )
        }
    };
    let text = [help, text]
        .into_iter()
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    Meaning {
        title: Some(title),
        source,
        text,
        codebook,
    }
}

/// A Likert item's point labels: the low label for 1, the high label for the last point, the
/// points between by their numbers (a definition labels only the ends).
fn likert_labels(kind: &QuestionKind) -> Vec<Category> {
    let QuestionKind::Likert {
        points,
        low_label,
        high_label,
    } = kind
    else {
        return Vec::new();
    };
    (1..=i64::from(*points))
        .map(|p| {
            let label = if p == 1 {
                low_label.clone()
            } else if p == i64::from(*points) {
                high_label.clone()
            } else {
                p.to_string()
            };
            category(p, label)
        })
        .collect()
}

/// The labelled factors of a definition's yes/no and categorical questions, and the
/// answered-or-not factor of the others that may go unanswered, where all their columns are
/// released.
fn definition_factors(definition: &SurveyDefinition, released: &[String]) -> Vec<Factor> {
    let mut out = Vec::new();
    for q in &definition.questions {
        let answered = q.may_be_unanswered().then(|| q.answered_column());
        let title = Some(q.label.clone());
        let factor = match &q.kind {
            QuestionKind::YesNo => binary_factor(&q.id, title, answered.as_deref(), "yes", "no"),
            QuestionKind::Categorical { options } => {
                let columns: Vec<String> = options
                    .iter()
                    .skip(1)
                    .map(|o| format!("{}={o}", q.id))
                    .collect();
                let mut levels = vec![Level {
                    label: options.first().cloned().unwrap_or_default(),
                    indicator: Indicator::rest(answered.as_deref(), &columns),
                }];
                levels.extend(options.iter().skip(1).zip(&columns).map(|(o, c)| Level {
                    label: o.clone(),
                    indicator: Indicator::column(c),
                }));
                levels.extend(no_answer(answered.as_deref()));
                Factor {
                    name: q.id.clone(),
                    title,
                    levels,
                }
            }
            _ => match &answered {
                Some(a) => Factor {
                    name: a.clone(),
                    title: Some(format!("{} (answered)", q.label)),
                    levels: std::iter::once(Level {
                        label: "answered".to_owned(),
                        indicator: Indicator::column(a),
                    })
                    .chain(no_answer(Some(a)))
                    .collect(),
                },
                None => continue,
            },
        };
        let all_released = factor.levels.iter().all(|l| {
            l.indicator
                .terms
                .iter()
                .all(|t| released.contains(&t.column))
        });
        if all_released {
            out.push(factor);
        }
    }
    out
}

/// A 0/1 column as a factor: `yes` = the column, `no` = the rest (of the answered records when
/// `answered` is given), then "no answer".
fn binary_factor(
    column: &str,
    title: Option<String>,
    answered: Option<&str>,
    yes: &str,
    no: &str,
) -> Factor {
    let mut levels = vec![
        Level {
            label: yes.to_owned(),
            indicator: Indicator::column(column),
        },
        Level {
            label: no.to_owned(),
            indicator: Indicator::rest(answered, &[column.to_owned()]),
        },
    ];
    levels.extend(no_answer(answered));
    Factor {
        name: column.to_owned(),
        title,
        levels,
    }
}

/// The "no answer" level `1 − answered`, when the question may go unanswered.
fn no_answer(answered: Option<&str>) -> Option<Level> {
    answered.map(|a| Level {
        label: NO_ANSWER.to_owned(),
        indicator: Indicator {
            constant: 1.0,
            terms: vec![IndicatorTerm {
                column: a.to_owned(),
                coefficient: -1.0,
            }],
        },
    })
}

#[cfg(test)]
mod tests;
