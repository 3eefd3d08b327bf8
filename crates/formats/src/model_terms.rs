//! Model terms as a survey declares them (issue 22): a column computed on the participant's
//! device from the coded answers — a power, a product of two answer columns, a logarithm or a
//! centred copy. The survey definition declares them and the release manifest records them, so
//! one type serves both: an analyst holding a release reads from its manifest which columns are
//! `x²` or `x·g` (what a RESET-style or a Chow test needs, and what a model formula names).
//!
//! The declaration only: what a term's value and range are, and which declarations are valid,
//! is the application layer's (`orthomask_survey::terms`).

use serde::{Deserialize, Serialize};

/// A model term: a column the device computes from the coded answers before padding, masked like
/// any other (issue 22 §1). What each kind computes, its range and its value for an unanswered
/// input are `orthomask_survey::terms`'.
///
/// Read strictly (unknown fields refused, as the JSON Schema's `$defs/term` does), through
/// `TermJson`: a flattened `kind` could not deny them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "TermJson")]
pub struct Term {
    /// The term's column name: 1–64 characters from `a–z A–Z 0–9 _`, unlike every answer column.
    pub id: String,
    /// What it computes.
    #[serde(flatten)]
    pub kind: TermKind,
}

/// What a term computes from the answer columns it names (each input is the name of a column of
/// the questions' coding: a question's own column, a categorical indicator `id=option` or an
/// `id_answered` indicator).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TermKind {
    /// `x^exponent` of a numeric answer (`exponent` 2 or 3).
    Power {
        /// The input column.
        of: String,
        /// 2 or 3.
        exponent: u8,
    },
    /// `x·z` of two different answer columns (an interaction; with an indicator `g=level`, the
    /// slope of `x` in that group).
    Product {
        /// The two input columns.
        of: [String; 2],
    },
    /// `ln x` of a numeric answer whose declared range lies above 0.
    Log {
        /// The input column.
        of: String,
    },
    /// `ln(1 + x)` of a numeric answer whose declared range lies above −1.
    Log1p {
        /// The input column.
        of: String,
    },
    /// `x − at`: the answer centred at a declared constant.
    Centre {
        /// The input column.
        of: String,
        /// The constant subtracted.
        at: f64,
    },
}

/// The JSON shape of a term, read strictly: one object per kind with its own fields and the id.
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum TermJson {
    Power {
        id: String,
        of: String,
        exponent: u8,
    },
    Product {
        id: String,
        of: [String; 2],
    },
    Log {
        id: String,
        of: String,
    },
    Log1p {
        id: String,
        of: String,
    },
    Centre {
        id: String,
        of: String,
        at: f64,
    },
}

impl From<TermJson> for Term {
    fn from(json: TermJson) -> Self {
        let (id, kind) = match json {
            TermJson::Power { id, of, exponent } => (id, TermKind::Power { of, exponent }),
            TermJson::Product { id, of } => (id, TermKind::Product { of }),
            TermJson::Log { id, of } => (id, TermKind::Log { of }),
            TermJson::Log1p { id, of } => (id, TermKind::Log1p { of }),
            TermJson::Centre { id, of, at } => (id, TermKind::Centre { of, at }),
        };
        Self { id, kind }
    }
}

impl TermKind {
    /// The input columns this term names (one, or two for a product).
    pub fn inputs(&self) -> &[String] {
        match self {
            Self::Power { of, .. }
            | Self::Log { of }
            | Self::Log1p { of }
            | Self::Centre { of, .. } => std::slice::from_ref(of),
            Self::Product { of } => of,
        }
    }

    /// The term as a formula of its inputs, for listings: `age^2`, `income*smoker`,
    /// `log(age)`, `log1p(hours)`, `age - 40`.
    pub fn formula(&self) -> String {
        match self {
            Self::Power { of, exponent } => format!("{of}^{exponent}"),
            Self::Product { of: [a, b] } => format!("{a}*{b}"),
            Self::Log { of } => format!("log({of})"),
            Self::Log1p { of } => format!("log1p({of})"),
            Self::Centre { of, at } => format!("{of} - {at}"),
        }
    }
}
