//! The builder's model-term control (issue 22 §1): the fields of one term as typed, the term they
//! make, and a name for it. Which columns a term may take, and whether a declared term is valid
//! for the questions, are the survey crate's (`terms::term_inputs`, `terms::validate_terms`,
//! which the draft runs): this form only turns text into a [`Term`], so a term the survey cannot
//! hold still reaches the draft, whose validation names it.

use orthomask_survey::definition::{Term, TermKind};
use orthomask_survey::terms::TermInput;

use super::builder::FormError;

/// The kinds of term, as the control offers them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TermFormKind {
    /// `x²` or `x³`.
    #[default]
    Power,
    /// `x·z`.
    Product,
    /// `ln x`.
    Log,
    /// `ln(1 + x)`.
    Log1p,
    /// `x − c`.
    Centre,
}

impl TermFormKind {
    /// Every kind, in the order the control lists them.
    pub const ALL: [Self; 5] = [
        Self::Power,
        Self::Product,
        Self::Log,
        Self::Log1p,
        Self::Centre,
    ];

    /// The `<select>` value.
    pub fn value(self) -> &'static str {
        match self {
            Self::Power => "power",
            Self::Product => "product",
            Self::Log => "log",
            Self::Log1p => "log1p",
            Self::Centre => "centre",
        }
    }

    /// The kind a `<select>` value names.
    pub fn from_value(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.value() == value)
    }

    /// What the control shows.
    pub fn label(self) -> &'static str {
        match self {
            Self::Power => "power (x², x³)",
            Self::Product => "product (x·z: an interaction)",
            Self::Log => "log x",
            Self::Log1p => "log(1 + x)",
            Self::Centre => "centred (x − c)",
        }
    }

    /// Whether the kind needs a numeric answer (powers and logs; a product or a centred copy
    /// may take a 0/1 column).
    pub fn needs_numeric(self) -> bool {
        matches!(self, Self::Power | Self::Log | Self::Log1p)
    }
}

/// One term's fields, as typed.
#[derive(Clone, Debug, PartialEq)]
pub struct TermForm {
    /// The kind.
    pub kind: TermFormKind,
    /// The input column.
    pub of: String,
    /// The second input of a product.
    pub with: String,
    /// A power's exponent.
    pub exponent: String,
    /// A centred copy's constant.
    pub at: String,
    /// The term's column name (empty: [`TermForm::suggested_id`]).
    pub id: String,
}

impl Default for TermForm {
    fn default() -> Self {
        Self {
            kind: TermFormKind::Power,
            of: String::new(),
            with: String::new(),
            exponent: "2".into(),
            at: "0".into(),
            id: String::new(),
        }
    }
}

/// A column name made of `text`: `=` (an indicator's) and other characters a term id may not
/// hold become `_`.
fn id_part(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

impl TermForm {
    /// The columns the control offers as the first input: the numeric answers for powers and
    /// logs, every answer column otherwise.
    pub fn offered<'a>(&self, inputs: &'a [TermInput]) -> Vec<&'a str> {
        inputs
            .iter()
            .filter(|i| i.numeric || !self.kind.needs_numeric())
            .map(|i| i.name.as_str())
            .collect()
    }

    /// A name for the term from its inputs: `age_sq`, `age_cube`, `income_x_smoker`,
    /// `log_income`, `log1p_hours`, `age_c40`.
    pub fn suggested_id(&self) -> String {
        let of = id_part(self.of.trim());
        match self.kind {
            TermFormKind::Power if self.exponent.trim() == "3" => format!("{of}_cube"),
            TermFormKind::Power => format!("{of}_sq"),
            TermFormKind::Product => format!("{of}_x_{}", id_part(self.with.trim())),
            TermFormKind::Log => format!("log_{of}"),
            TermFormKind::Log1p => format!("log1p_{of}"),
            TermFormKind::Centre => format!("{of}_c{}", id_part(self.at.trim())),
        }
    }

    /// The term the fields make.
    ///
    /// # Errors
    /// One line naming the field: no input chosen, an exponent that is not a whole number, a
    /// constant that is not a finite number.
    pub fn term(&self) -> Result<Term, FormError> {
        let error = |field: &str, reason: String| FormError {
            field: format!("New term: {field}"),
            reason,
        };
        let of = self.of.trim().to_owned();
        if of.is_empty() {
            return Err(error("input", "choose the answer column".into()));
        }
        let kind = match self.kind {
            TermFormKind::Power => {
                TermKind::Power {
                    of,
                    exponent: self.exponent.trim().parse().map_err(|_| {
                        error("exponent", format!("{:?} is not 2 or 3", self.exponent))
                    })?,
                }
            }
            TermFormKind::Product => {
                let with = self.with.trim().to_owned();
                if with.is_empty() {
                    return Err(error("times", "choose the second answer column".into()));
                }
                TermKind::Product { of: [of, with] }
            }
            TermFormKind::Log => TermKind::Log { of },
            TermFormKind::Log1p => TermKind::Log1p { of },
            TermFormKind::Centre => TermKind::Centre {
                of,
                at: self
                    .at
                    .trim()
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite())
                    .ok_or_else(|| error("centre at", format!("{:?} is not a number", self.at)))?,
            },
        };
        let id = match self.id.trim() {
            "" => self.suggested_id(),
            typed => typed.to_owned(),
        };
        Ok(Term { id, kind })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orthomask_survey::definition::Question;
    use orthomask_survey::terms::term_inputs;

    fn questions() -> Vec<Question> {
        serde_json::from_value(serde_json::json!([
            {"id": "age", "label": "Age", "kind": "integer", "min": 18, "max": 90},
            {"id": "smoker", "label": "Smoker?", "kind": "yes_no"},
            {"id": "region", "label": "Region", "kind": "categorical", "options": ["north", "south", "east"]},
        ]))
        .unwrap()
    }

    /// The control offers what the survey's own rule allows: every answer column for a product
    /// (the categorical's indicators after its reference level), only numeric answers for a
    /// power — and the terms it makes pass the draft's validation.
    #[test]
    fn the_control_offers_the_survey_rule_and_makes_valid_terms() {
        let inputs = term_inputs(&questions());
        let product = TermForm {
            kind: TermFormKind::Product,
            ..TermForm::default()
        };
        assert_eq!(
            product.offered(&inputs),
            ["age", "smoker", "region=south", "region=east"]
        );
        assert_eq!(TermForm::default().offered(&inputs), ["age"]);
        let made = [
            TermForm {
                of: "age".into(),
                ..TermForm::default()
            },
            TermForm {
                kind: TermFormKind::Product,
                of: "age".into(),
                with: "region=south".into(),
                ..TermForm::default()
            },
            TermForm {
                kind: TermFormKind::Centre,
                of: "age".into(),
                at: "40".into(),
                ..TermForm::default()
            },
            TermForm {
                kind: TermFormKind::Log,
                of: "age".into(),
                id: "ln_age".into(),
                ..TermForm::default()
            },
        ]
        .map(|f| f.term().unwrap());
        let ids: Vec<&str> = made.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["age_sq", "age_x_region_south", "age_c40", "ln_age"]);
        orthomask_survey::terms::validate_terms(&questions(), &made).unwrap();
    }

    #[test]
    fn bad_fields_are_one_line_naming_the_field() {
        let cases = [
            (
                TermForm::default(),
                "New term: input: choose the answer column",
            ),
            (
                TermForm {
                    of: "age".into(),
                    exponent: "two".into(),
                    ..TermForm::default()
                },
                "New term: exponent: \"two\" is not 2 or 3",
            ),
            (
                TermForm {
                    kind: TermFormKind::Product,
                    of: "age".into(),
                    ..TermForm::default()
                },
                "New term: times: choose the second answer column",
            ),
            (
                TermForm {
                    kind: TermFormKind::Centre,
                    of: "age".into(),
                    at: "NaN".into(),
                    ..TermForm::default()
                },
                "New term: centre at: \"NaN\" is not a number",
            ),
        ];
        for (form, expected) in cases {
            assert_eq!(form.term().unwrap_err().to_string(), expected);
        }
        // The kinds round-trip through the <select> values.
        for kind in TermFormKind::ALL {
            assert_eq!(TermFormKind::from_value(kind.value()), Some(kind));
        }
    }
}
