//! Model terms computed on the device (issue 22 §1): powers, products, logarithms and centred
//! copies of the coded answers, appended to the record as columns before padding and masked like
//! any other.
//!
//! # Why on the device
//! A release is `A·X` for a secret `A`: only linear combinations of released columns can be
//! formed from it. `(A·x)²` is not `A·(x²)`, and the third and fourth moments a quadratic or a
//! subgroup regression needs are not in `XᵀX`. So `lm(y ~ x + I(x^2) + x:g)` is exact on a
//! release only when `x²` and `x·g` were columns of `X` — computed where the answers are, on the
//! participant's device. The terms are declared in the definition (`terms`), so the collector
//! signs them, every device computes the same columns and the plan counts them: each term is one
//! more data column, so `p₁` grows by one per term and the cohort floor with it
//! ([`crate::draft`]).
//!
//! The values, the derived ranges and the rule for unanswered inputs are written here side by
//! side, so that the range a device scales by is the range of the value it computes; the coding
//! ([`crate::coding`]) calls `term_columns` and `code_terms`, the validation
//! ([`crate::validation`]) calls [`validate_terms`].
//!
//! # Inputs
//! A term names one or two columns of the questions' coding: a question's own column (yes/no,
//! integer, number, Likert), a categorical indicator `id=option` or an `id_answered` indicator. The product of an answer with
//! every indicator of a categorical question gives the answer's slope in each group, so a pooled
//! fit and the fit with those terms are nested models (a Chow test) and each group's fit is exact
//! on the release. Powers and logarithms need a **numeric** answer (integer, number, Likert): of a
//! 0/1 column they would equal the column itself or a constant multiple of it. A term does not
//! name another term (its value would depend on the order of declaration; `x³` is a power, not a
//! product of `x` and `x²`).
//!
//! # Values and ranges (interval arithmetic over the declared ranges)
//! With an input declared on `[lo, hi]` (a second one on `[lo₂, hi₂]`):
//!
//! | kind | value | derived range |
//! |---|---|---|
//! | `power`, 2 | `x²` | `[0, max(lo², hi²)]` when `lo ≤ 0 ≤ hi`, else `[min(lo², hi²), max(lo², hi²)]` |
//! | `power`, 3 | `x³` | `[lo³, hi³]` (`x³` is increasing) |
//! | `product` | `x·z` | `[min, max]` of the four corners `lo·lo₂, lo·hi₂, hi·lo₂, hi·hi₂` (`x·z` is bilinear, so its extremes over a rectangle lie at corners) |
//! | `log` | `ln x` | `[ln lo, ln hi]`; needs `lo > 0` |
//! | `log1p` | `ln(1 + x)` | `[ln(1 + lo), ln(1 + hi)]`; needs `lo > −1` |
//! | `centre` | `x − at` | `[lo − at, hi − at]` |
//!
//! Each end is computed by the same floating-point operation as the value at that end (and the
//! operations are monotone under rounding on the pieces where they are monotone), so every value
//! a device computes lies inside its range exactly, as range scaling demands
//! (`orthomask_core::scaling` refuses a value outside). Range scaling and device-side DP use these
//! ranges like a question's declared one ([`crate::plan`]); a product's range is the box's,
//! which can be wider than the values the product reaches when both inputs come from one
//! question (two indicators of one categorical are never both 1) — wider is safe, never narrower.
//!
//! # Unanswered inputs
//! A term is **0** when any of its inputs belongs to a question left unanswered (skipped, or
//! hidden by `show_if`): its value is `f(x)·a_x` with `a_x` the input's `x_answered` column.
//! Every such question already carries `x_answered` ([`crate::coding`]), and its value column
//! holds the neutral midpoint `m`. Why 0 rather than `f(m)`:
//!
//! * With 0, the term is exactly the complete-case column `f(x)·a_x`. In
//!   `y ~ x + x² + x_answered` (the `x²` term 0-coded), unanswered rows contribute only the level
//!   `β₀ + β₁m`, and `x_answered`'s coefficient frees it, so the coefficients of `x` and `x²` are
//!   exactly those of the fit to the answered rows; `x·a_x = x − m + m·a_x` is in the model's span
//!   already. Any constant for unanswered rows would give this for powers, logs and centring;
//! * for a product `x·z` the constant is not absorbed: `f(m) = m·z` would give unanswered rows a
//!   slope in `z` that no participant reported. With 0, the interaction lives on answered rows
//!   only, as a skipped yes/no or indicator is already 0 (the reference). For the answered rows'
//!   own fit of `y ~ x*z`, declare `z·x_answered` too (a product like any other).
//!
//! Since 0 is then a value the term takes, the range of a term over an input that may be
//! unanswered is widened to contain 0 (`[min(lo, 0), max(hi, 0)]` of the derived range).

use crate::coding::{Answer, ColumnSource, ColumnSpec};
use crate::definition::{Question, QuestionKind, Term, TermKind, valid_question_id};
use crate::error::{SurveyError, invalid};
use std::collections::HashSet;

/// What a term computes: its value and the range of its values, the arithmetic of the module
/// documentation. (The term's shape — its inputs and its formula — is the declaration's,
/// `orthomask_formats::model_terms`, which the manifest records too.)
pub trait TermMath {
    /// The term's value at answered inputs `x` (one per `inputs()`, in order).
    fn value(&self, x: &[f64]) -> f64;
    /// The range of [`value`](Self::value) over inputs on the declared `ranges` (interval
    /// arithmetic, module documentation), before widening for unanswered inputs. Not finite, or
    /// reversed, when the inputs do not allow the term (a log reaching 0): [`validate_terms`]
    /// refuses those first.
    fn range(&self, ranges: &[(f64, f64)]) -> (f64, f64);
}

impl TermMath for TermKind {
    fn value(&self, x: &[f64]) -> f64 {
        let first = x.first().copied().unwrap_or(f64::NAN);
        match self {
            Self::Power { exponent, .. } => first.powi(i32::from(*exponent)),
            Self::Product { .. } => first * x.get(1).copied().unwrap_or(f64::NAN),
            Self::Log { .. } => first.ln(),
            Self::Log1p { .. } => first.ln_1p(),
            Self::Centre { at, .. } => first - at,
        }
    }

    fn range(&self, ranges: &[(f64, f64)]) -> (f64, f64) {
        let (lo, hi) = ranges.first().copied().unwrap_or((f64::NAN, f64::NAN));
        match self {
            Self::Power { exponent: 2, .. } => {
                let (a, b) = (self.value(&[lo]), self.value(&[hi]));
                let low = if lo <= 0.0 && 0.0 <= hi {
                    0.0
                } else {
                    a.min(b)
                };
                (low, a.max(b))
            }
            // Odd powers are increasing (3 is the only other exponent validation allows).
            Self::Power { .. } | Self::Log { .. } | Self::Log1p { .. } | Self::Centre { .. } => {
                (self.value(&[lo]), self.value(&[hi]))
            }
            Self::Product { .. } => {
                let (lo2, hi2) = ranges.get(1).copied().unwrap_or((f64::NAN, f64::NAN));
                let corners = [lo * lo2, lo * hi2, hi * lo2, hi * hi2];
                (
                    corners.iter().copied().fold(f64::INFINITY, f64::min),
                    corners.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                )
            }
        }
    }
}

/// The terms' columns, in declaration order, after the answers' (`answer_columns`, the
/// questions' coding). Total even on a definition not yet validated: a term naming no answer
/// column gets the range `[NaN, NaN]`, which range scaling refuses.
pub(crate) fn term_columns(
    answer_columns: &[ColumnSpec],
    questions: &[Question],
    terms: &[Term],
) -> Vec<ColumnSpec> {
    terms
        .iter()
        .enumerate()
        .map(|(t, term)| {
            let named: Vec<Option<&ColumnSpec>> = term
                .kind
                .inputs()
                .iter()
                .map(|name| answer_columns.iter().find(|c| c.name == *name))
                .collect();
            let range = if named.iter().all(Option::is_some) {
                let ranges: Vec<(f64, f64)> = named.iter().flatten().map(|c| c.range).collect();
                let (lo, hi) = term.kind.range(&ranges);
                let may_be_unanswered = named.iter().flatten().any(|c| match c.source {
                    ColumnSource::Question(q) => questions[q].may_be_unanswered(),
                    ColumnSource::Term(_) => false,
                });
                if may_be_unanswered {
                    (lo.min(0.0), hi.max(0.0))
                } else {
                    (lo, hi)
                }
            } else {
                (f64::NAN, f64::NAN)
            };
            ColumnSpec {
                name: term.id.clone(),
                source: ColumnSource::Term(t),
                range,
            }
        })
        .collect()
}

/// Append the terms' values to `record`, which holds the answers' coded columns
/// (`answer_columns`) of one participant whose answers are `answers`: `f(x)`, or 0 when an
/// input's question is unanswered (module documentation). Terms of a validated definition only
/// name answer columns; a name that is none gives NaN, which range scaling refuses.
pub(crate) fn code_terms(
    answer_columns: &[ColumnSpec],
    terms: &[Term],
    answers: &[Answer],
    record: &mut Vec<f64>,
) {
    for term in terms {
        let mut x = Vec::with_capacity(2);
        let mut answered = true;
        for name in term.kind.inputs() {
            match answer_columns.iter().position(|c| c.name == *name) {
                Some(j) => {
                    x.push(record[j]);
                    if let ColumnSource::Question(q) = answer_columns[j].source {
                        answered &= !matches!(answers.get(q), Some(Answer::Skipped) | None);
                    }
                }
                None => x.push(f64::NAN),
            }
        }
        record.push(if answered { term.kind.value(&x) } else { 0.0 });
    }
}

/// Whether a question's own column carries a number (integer, number, Likert), not a 0/1 code.
fn numeric(kind: &QuestionKind) -> bool {
    matches!(
        kind,
        QuestionKind::Integer { .. } | QuestionKind::Number { .. } | QuestionKind::Likert { .. }
    )
}

/// A column a term may name, and whether powers and logarithms may take it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TermInput {
    /// The column's name (a question's id, an indicator `id=option`, `id_answered`).
    pub name: String,
    /// A numeric answer's own column: powers and logs may take it (the others are 0/1).
    pub numeric: bool,
}

/// The columns the questions offer terms as inputs, in order (what the team's builder lists;
/// [`validate_terms`] holds a term to the same list).
pub fn term_inputs(questions: &[Question]) -> Vec<TermInput> {
    let mut columns = Vec::new();
    for (i, q) in questions.iter().enumerate() {
        q.push_columns(i, &mut columns);
    }
    columns
        .into_iter()
        .filter_map(|c| match c.source {
            ColumnSource::Question(q) => Some(TermInput {
                numeric: numeric_input(&questions[q], &c.name),
                name: c.name,
            }),
            _ => None,
        })
        .collect()
}

/// Whether `column` of `question` is a numeric answer (its own column of an integer, number or
/// Likert question), which powers and logarithms need: of a 0/1 column they would equal the
/// column itself or a constant multiple of it.
fn numeric_input(question: &Question, column: &str) -> bool {
    numeric(&question.kind) && column == question.id
}

/// Check the terms against the questions (already checked themselves): ids, inputs, kinds and
/// derived ranges.
///
/// # Errors
/// [`SurveyError::Invalid`] naming `terms[i].field` of the first offending term, one line: an id
/// that is not a column name or is taken (by a question, an answer column, the QA column or
/// another term), an input that is no answer column, a power or log of a non-numeric answer, an
/// exponent other than 2 or 3, a product of a column with itself, a log (log1p) of an answer
/// whose declared range reaches 0 (−1), a centre that is not finite, a derived range that is not
/// finite.
pub fn validate_terms(questions: &[Question], terms: &[Term]) -> Result<(), SurveyError> {
    if terms.is_empty() {
        return Ok(());
    }
    let mut answer_columns = Vec::new();
    for (i, q) in questions.iter().enumerate() {
        q.push_columns(i, &mut answer_columns);
    }
    let mut taken: HashSet<&str> = answer_columns.iter().map(|c| c.name.as_str()).collect();
    taken.extend(questions.iter().map(|q| q.id.as_str()));
    taken.insert("QA");
    let mut ids = HashSet::new();
    for (i, term) in terms.iter().enumerate() {
        let at = |f: &str| format!("terms[{i}].{f}");
        if !valid_question_id(&term.id) {
            return Err(invalid(
                at("id"),
                "use 1-64 characters from a-z, A-Z, 0-9 and _",
            ));
        }
        if !ids.insert(term.id.as_str()) {
            return Err(invalid(
                at("id"),
                format!("duplicate term id {:?}", term.id),
            ));
        }
        if taken.contains(term.id.as_str()) {
            return Err(invalid(
                at("id"),
                format!("{:?} is already a question or column name", term.id),
            ));
        }
        let mut ranges = Vec::new();
        for name in term.kind.inputs() {
            let Some(column) = answer_columns.iter().find(|c| c.name == *name) else {
                let hint = match questions.iter().find(|q| q.id == *name).map(|q| &q.kind) {
                    Some(QuestionKind::Categorical { options }) => format!(
                        "{name:?} is categorical: name one of its indicators ({})",
                        options
                            .iter()
                            .skip(1)
                            .map(|o| format!("{name}={o}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    _ => format!(
                        "no answer column {name:?} (name a question or an indicator id=option)"
                    ),
                };
                return Err(invalid(at("of"), hint));
            };
            let ColumnSource::Question(q) = column.source else {
                return Err(invalid(
                    at("of"),
                    format!("{name:?} is not an answer column"),
                ));
            };
            let question = &questions[q];
            let needs_number = !matches!(
                term.kind,
                TermKind::Product { .. } | TermKind::Centre { .. }
            );
            if needs_number && !numeric_input(question, &column.name) {
                return Err(invalid(
                    at("of"),
                    format!("{name:?} is a 0/1 column: powers and logs need a numeric answer"),
                ));
            }
            ranges.push(column.range);
        }
        match &term.kind {
            TermKind::Power { exponent, .. } if !matches!(exponent, 2 | 3) => {
                return Err(invalid(
                    at("exponent"),
                    format!("must be 2 or 3, got {exponent}"),
                ));
            }
            TermKind::Product { of: [a, b] } if a == b => {
                return Err(invalid(
                    at("of"),
                    format!("the product of {a:?} with itself is a power: use kind power"),
                ));
            }
            TermKind::Log { of } if ranges[0].0 <= 0.0 => {
                return Err(invalid(
                    at("of"),
                    format!(
                        "log needs an answer above 0, but {of:?} is declared from {}: use log1p \
                         or a centre",
                        ranges[0].0
                    ),
                ));
            }
            TermKind::Log1p { of } if ranges[0].0 <= -1.0 => {
                return Err(invalid(
                    at("of"),
                    format!(
                        "log1p needs an answer above -1, but {of:?} is declared from {}",
                        ranges[0].0
                    ),
                ));
            }
            TermKind::Centre { at: c, .. } if !c.is_finite() => {
                return Err(invalid(at("at"), "must be finite"));
            }
            _ => {}
        }
        let (lo, hi) = term.kind.range(&ranges);
        if !(lo.is_finite() && hi.is_finite() && hi - lo > 0.0 && (hi - lo).is_finite()) {
            return Err(invalid(
                at("kind"),
                format!("the derived range [{lo}, {hi}] is not a finite interval"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coding::Answer;
    use crate::definition::SurveyDefinition;
    use crate::tolerance::HAND_COMPUTED;

    const SAMPLE: &str = include_str!("../../../www/surveys/leaps-demo.json");

    fn question(id: &str, optional: bool, kind: QuestionKind) -> Question {
        Question {
            id: id.into(),
            label: format!("{id}?"),
            help: None,
            optional,
            show_if: None,
            kind,
        }
    }

    fn term(id: &str, kind: TermKind) -> Term {
        Term {
            id: id.into(),
            kind,
        }
    }

    fn of(name: &str) -> String {
        name.into()
    }

    /// age (integer 18–90), income (number 0–10), smoker (yes/no), hours (number 0–24,
    /// optional), weight (number 40–150, optional), region (north, south, east).
    fn survey(terms: Vec<Term>) -> SurveyDefinition {
        let mut s = SurveyDefinition::parse(SAMPLE, "x").unwrap();
        s.questions = vec![
            question("age", false, QuestionKind::Integer { min: 18, max: 90 }),
            question(
                "income",
                false,
                QuestionKind::Number {
                    min: 0.0,
                    max: 10.0,
                },
            ),
            question("smoker", false, QuestionKind::YesNo),
            question(
                "hours",
                true,
                QuestionKind::Number {
                    min: 0.0,
                    max: 24.0,
                },
            ),
            question(
                "weight",
                true,
                QuestionKind::Number {
                    min: 40.0,
                    max: 150.0,
                },
            ),
            question(
                "region",
                false,
                QuestionKind::Categorical {
                    options: vec!["north".into(), "south".into(), "east".into()],
                },
            ),
        ];
        s.terms = terms;
        s
    }

    fn every_kind() -> Vec<Term> {
        vec![
            term(
                "age_sq",
                TermKind::Power {
                    of: of("age"),
                    exponent: 2,
                },
            ),
            term(
                "age_cu",
                TermKind::Power {
                    of: of("age"),
                    exponent: 3,
                },
            ),
            term(
                "income_x_smoker",
                TermKind::Product {
                    of: [of("income"), of("smoker")],
                },
            ),
            term("log1p_hours", TermKind::Log1p { of: of("hours") }),
            term("log_age", TermKind::Log { of: of("age") }),
            term(
                "age_c",
                TermKind::Centre {
                    of: of("age"),
                    at: 40.0,
                },
            ),
            term(
                "weight_sq",
                TermKind::Power {
                    of: of("weight"),
                    exponent: 2,
                },
            ),
            term(
                "income_south",
                TermKind::Product {
                    of: [of("income"), of("region=south")],
                },
            ),
        ]
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= HAND_COMPUTED * b.abs().max(1.0)
    }

    /// By hand: age 30 → age² 900, age³ 27000, ln 30, 30 − 40 = −10; income 2.5 × smoker yes →
    /// 2.5; log1p(0 hours) = 0; weight skipped → weight² 0 (not 95²); income 2.5 × south → 2.5.
    #[test]
    fn derived_values_by_hand() {
        let s = survey(every_kind());
        s.validate().unwrap();
        let answers = [
            Answer::Integer(30),
            Answer::Number(2.5),
            Answer::YesNo(true),
            Answer::Number(0.0),
            Answer::Skipped,
            Answer::Category(1),
        ];
        let record = s.encode(&answers).unwrap();
        let names: Vec<String> = s.columns().into_iter().map(|c| c.name).collect();
        assert_eq!(record.len(), names.len());
        // age, income, smoker, hours, hours_answered, weight (midpoint 95), weight_answered,
        // region=south, region=east; then the terms in declaration order.
        let expected = [
            30.0,
            2.5,
            1.0,
            0.0,
            1.0,
            95.0,
            0.0,
            1.0,
            0.0, // answers
            900.0,
            27000.0,
            2.5,
            0.0,
            30f64.ln(),
            -10.0,
            0.0,
            2.5, // terms
        ];
        assert_eq!(
            names[9..],
            [
                "age_sq",
                "age_cu",
                "income_x_smoker",
                "log1p_hours",
                "log_age",
                "age_c",
                "weight_sq",
                "income_south"
            ]
        );
        assert_eq!(record.len(), expected.len());
        for ((name, got), want) in names.iter().zip(&record).zip(expected) {
            assert!(close(*got, want), "{name}: {got} against {want}");
        }
        // Answered weight 100 → 10000; skipped hours → log1p term 0; north → income_south 0.
        let answers = [
            Answer::Integer(90),
            Answer::Number(4.0),
            Answer::YesNo(false),
            Answer::Skipped,
            Answer::Number(100.0),
            Answer::Category(0),
        ];
        let record = s.encode(&answers).unwrap();
        let terms = &record[9..];
        let expected = [8100.0, 729000.0, 0.0, 0.0, 90f64.ln(), 50.0, 10000.0, 0.0];
        for (got, want) in terms.iter().zip(expected) {
            assert!(close(*got, want), "{got} against {want}");
        }
        // Every value lies in its column's range: the device's scaler takes the record.
        let mut scaled = s.clone();
        scaled.masking.scaling = crate::definition::RecordScaling::DeclaredRanges;
        let design = scaled.design().unwrap();
        design.scaler().unwrap().check_row(&record).unwrap();
    }

    /// Ranges by hand: age² over [18, 90] is [324, 8100]; age³ [5832, 729000]; income·smoker
    /// over [0, 10]×[0, 1] is [0, 10]; log1p over [0, 24] is [0, ln 25]; ln over [18, 90] is
    /// [ln 18, ln 90]; age − 40 is [−22, 50]; weight² over [40, 150] is [1600, 22500], widened to
    /// [0, 22500] because weight may be skipped (its term is then 0); x² over [−2, 3] is [0, 9];
    /// a product over [−2, 3]×[−1, 4] has corners 2, −8, −3, 12, so [−8, 12].
    #[test]
    fn derived_ranges_by_hand() {
        let s = survey(every_kind());
        let ranges: Vec<(f64, f64)> = s.columns()[9..].iter().map(|c| c.range).collect();
        let by_hand = [
            (324.0, 8100.0),
            (5832.0, 729000.0),
            (0.0, 10.0),
            (0.0, 25f64.ln()),
            (18f64.ln(), 90f64.ln()),
            (-22.0, 50.0),
            (0.0, 22500.0),
            (0.0, 10.0),
        ];
        for ((lo, hi), (a, b)) in ranges.iter().zip(by_hand) {
            assert!(
                close(*lo, a) && close(*hi, b),
                "[{lo}, {hi}] against [{a}, {b}]"
            );
        }
        let square = TermKind::Power {
            of: of("x"),
            exponent: 2,
        }
        .range(&[(-2.0, 3.0)]);
        assert!(close(square.0, 0.0) && close(square.1, 9.0), "{square:?}");
        let product = TermKind::Product {
            of: [of("x"), of("z")],
        }
        .range(&[(-2.0, 3.0), (-1.0, 4.0)]);
        assert!(
            close(product.0, -8.0) && close(product.1, 12.0),
            "{product:?}"
        );
        // The record's x_max follows the terms' ranges (unscaled): age³ reaches 729000.
        assert!(close(s.answers_max(), 729000.0));
    }

    /// Each refusal is one line naming `terms[i].field`.
    #[test]
    fn invalid_terms_are_refused_naming_the_field() {
        let cases: [(Vec<Term>, &str); 12] = [
            (
                vec![term("x", TermKind::Log { of: of("nosuch") })],
                "terms[0].of: no answer column \"nosuch\"",
            ),
            (
                vec![term(
                    "x",
                    TermKind::Product {
                        of: [of("income"), of("region")],
                    },
                )],
                "terms[0].of: \"region\" is categorical: name one of its indicators (region=south, region=east)",
            ),
            (
                vec![term(
                    "x",
                    TermKind::Power {
                        of: of("smoker"),
                        exponent: 2,
                    },
                )],
                "terms[0].of: \"smoker\" is a 0/1 column",
            ),
            (
                vec![term(
                    "x",
                    TermKind::Log {
                        of: of("region=east"),
                    },
                )],
                "terms[0].of: \"region=east\" is a 0/1 column",
            ),
            (
                vec![term("x", TermKind::Log { of: of("income") })],
                "terms[0].of: log needs an answer above 0, but \"income\" is declared from 0",
            ),
            (
                vec![term(
                    "x",
                    TermKind::Power {
                        of: of("age"),
                        exponent: 4,
                    },
                )],
                "terms[0].exponent: must be 2 or 3, got 4",
            ),
            (
                vec![term(
                    "x",
                    TermKind::Product {
                        of: [of("age"), of("age")],
                    },
                )],
                "terms[0].of: the product of \"age\" with itself is a power",
            ),
            (
                vec![term(
                    "x",
                    TermKind::Centre {
                        of: of("age"),
                        at: f64::NAN,
                    },
                )],
                "terms[0].at: must be finite",
            ),
            (
                vec![
                    term("a", TermKind::Log { of: of("age") }),
                    term("a", TermKind::Log1p { of: of("age") }),
                ],
                "terms[1].id: duplicate term id \"a\"",
            ),
            (
                vec![term("hours_answered", TermKind::Log { of: of("age") })],
                "terms[0].id: \"hours_answered\" is already a question or column name",
            ),
            (
                vec![term("QA", TermKind::Log { of: of("age") })],
                "terms[0].id: \"QA\" is already",
            ),
            (
                vec![term(
                    "age-sq",
                    TermKind::Power {
                        of: of("age"),
                        exponent: 2,
                    },
                )],
                "terms[0].id: use 1-64 characters",
            ),
        ];
        for (terms, start) in cases {
            let e = survey(terms).validate().unwrap_err().to_string();
            assert!(e.starts_with(&format!("survey definition: {start}")), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
        // log1p reaching −1, and a cube whose range overflows.
        let mut s = survey(vec![term("x", TermKind::Log1p { of: of("income") })]);
        s.questions[1].kind = QuestionKind::Number {
            min: -1.0,
            max: 1.0,
        };
        let e = s.validate().unwrap_err().to_string();
        assert!(
            e.starts_with("survey definition: terms[0].of: log1p needs an answer above -1"),
            "{e}"
        );
        let mut s = survey(vec![term(
            "x",
            TermKind::Power {
                of: of("income"),
                exponent: 3,
            },
        )]);
        s.questions[1].kind = QuestionKind::Number {
            min: 0.0,
            max: 1e200,
        };
        let e = s.validate().unwrap_err().to_string();
        assert!(
            e.starts_with("survey definition: terms[0].kind: the derived range [0, inf]"),
            "{e}"
        );
    }

    /// The JSON shape: each kind with its own fields, strictly; none written when there are no
    /// terms, so definitions made before terms keep their text and template digest.
    #[test]
    fn terms_read_strictly_and_round_trip() {
        let s = survey(every_kind());
        let json = s.to_json();
        assert!(
            json.contains(r#""kind": "log1p""#) && json.contains(r#""of": ["#),
            "{json}"
        );
        assert_eq!(SurveyDefinition::parse(&json, "again").unwrap(), s);
        let formulas: Vec<String> = s.terms.iter().map(|t| t.kind.formula()).collect();
        assert_eq!(
            formulas,
            [
                "age^2",
                "age^3",
                "income*smoker",
                "log1p(hours)",
                "log(age)",
                "age - 40",
                "weight^2",
                "income*region=south"
            ]
        );
        let plain = SurveyDefinition::parse(SAMPLE, "x").unwrap();
        assert!(!plain.to_json().contains("terms"));
        let read = |t: &str| serde_json::from_str::<Term>(t).map_err(|e| e.to_string());
        assert_eq!(
            read(r#"{"id": "c", "kind": "centre", "of": "age", "at": 40}"#).unwrap(),
            term(
                "c",
                TermKind::Centre {
                    of: of("age"),
                    at: 40.0
                }
            )
        );
        for (bad, why) in [
            (
                r#"{"id": "p", "kind": "power", "of": "age", "exponent": 2, "at": 1}"#,
                "unknown field `at`",
            ),
            (
                r#"{"id": "p", "kind": "product", "of": ["a", "b", "c"]}"#,
                "invalid length 3",
            ),
            (
                r#"{"id": "p", "kind": "square", "of": "age"}"#,
                "unknown variant `square`",
            ),
            (r#"{"kind": "log", "of": "age"}"#, "missing field `id`"),
        ] {
            let e = read(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
