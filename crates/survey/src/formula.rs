//! A model formula over a release (issue 22 §3): R's formula notation, restricted to what a
//! masked release can fit.
//!
//! # Why restricted
//! A release is `A·X` for a secret orthogonal `A` that keeps `1ₙ` fixed: only linear combinations
//! of its columns can be formed, and `(A·x)² ≠ A·(x²)`. So `lm(y ~ age + I(age^2) + income*smoker)`
//! is exact on a release only where `age²` and `income·smoker` are columns the devices computed
//! (`crate::terms`), which the manifest records (`Manifest::model_terms`). This module reads the
//! formula an analyst would write in R and names, for each of its terms, the released column
//! that holds it — or says in one line that the release has no such column and why none can be
//! made from it.
//!
//! # The notation
//! `response ~ term + term + …`, as R reads it:
//! * a column, bare (`age`) or backquoted (`` `smoker=yes` ``: indicator names hold `=`);
//! * `a*b` — `a + b + a:b`; `a:b` — the declared product of `a` and `b` (either order);
//! * `I(a^2)`, `I(a^3)` — a declared power; `log(a)`, `log1p(a)` — a declared logarithm;
//!   `I(a - c)` — `a` centred at the declared constant `c`;
//! * a declared term by its own name (`age_sq`);
//! * `- 1` or `+ 0` — no intercept (`+ 1` keeps it).
//!
//! Anything else (`poly()`, `exp()`, `a^2` outside `I()` — R's crossing, not a power) is refused
//! with its reason. Terms come out in R's order — every single column first, in the order
//! written, then the interactions — so the coefficients line up with `summary(lm(…))`'s.
//!
//! The declared powers and products among the model's terms are what the RESET-style and the
//! Chow tests need (`orthomask_stats::model_tests`): a CSV does not say which column is `x²`,
//! the manifest does.

use orthomask_formats::model_terms::{Term, TermKind};

/// A formula resolved against a release's columns and its declared model terms.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelFormula {
    /// The response column.
    pub response: String,
    /// The predictors, as released column names, in R's order.
    pub predictors: Vec<String>,
    /// Whether the model has an intercept.
    pub intercept: bool,
    /// The predictors that are declared powers (`x²`, `x³`).
    pub powers: Vec<String>,
    /// The predictors that are declared products, with their two inputs.
    pub products: Vec<(String, [String; 2])>,
}

impl ModelFormula {
    /// The predictors that are products of `group` with another column: the interactions a Chow
    /// test on `group` adds to the pooled model.
    pub fn interactions_with(&self, group: &str) -> Vec<String> {
        self.products
            .iter()
            .filter(|(_, inputs)| inputs.iter().any(|i| i == group))
            .map(|(name, _)| name.clone())
            .collect()
    }
}

/// Why a formula cannot be fitted on a release (one line each).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FormulaError {
    /// No `~`, or nothing on one side of it.
    #[error("formula {0:?}: write it as `y ~ x + z` (a response, `~`, then the terms)")]
    Shape(String),
    /// Unbalanced parentheses or backquotes, or an empty term.
    #[error("formula {formula:?}: {what}")]
    Syntax {
        /// The formula.
        formula: String,
        /// What is wrong.
        what: String,
    },
    /// A name that is no column of the release.
    #[error("`{0}` is not a column of the release")]
    UnknownColumn(String),
    /// A derived term the survey did not declare.
    #[error(
        "`{term}` is not in the release: a masked release keeps only linear combinations of its columns, so a power, product or logarithm exists only where the survey declared it as a model term (computed on the devices){declared}"
    )]
    NotDeclared {
        /// The term as written.
        term: String,
        /// The declared terms, listed (`; declared: age_sq = age^2, …`), or empty.
        declared: String,
    },
    /// A form of term the release cannot give, with the reason.
    #[error("`{term}`: {why}")]
    Unsupported {
        /// The term as written.
        term: String,
        /// Why.
        why: &'static str,
    },
}

/// Resolve `formula` against the release's `columns` and its declared `terms`.
pub fn resolve(
    formula: &str,
    columns: &[String],
    terms: &[Term],
) -> Result<ModelFormula, FormulaError> {
    let (lhs, rhs) = formula
        .split_once('~')
        .filter(|(l, r)| !l.trim().is_empty() && !r.trim().is_empty())
        .ok_or_else(|| FormulaError::Shape(formula.to_owned()))?;
    let syntax = |what: &str| FormulaError::Syntax {
        formula: formula.to_owned(),
        what: what.to_owned(),
    };
    let resolver = Resolver { columns, terms };
    let response = resolver.column(&name(lhs.trim()).map_err(&syntax)?)?;
    let mut intercept = true;
    // (order, column): R puts every single column before the interactions.
    let mut resolved: Vec<(u8, String)> = Vec::new();
    for (sign, piece) in split_top_level(rhs).map_err(&syntax)? {
        if piece.is_empty() {
            return Err(syntax("an empty term (two operators in a row?)"));
        }
        match (sign, piece) {
            (Sign::Minus, "1") | (Sign::Plus, "0") => intercept = false,
            (Sign::Plus, "1") => intercept = true,
            (Sign::Minus, _) => {
                return Err(FormulaError::Unsupported {
                    term: format!("- {piece}"),
                    why: "only `- 1` (no intercept) may be subtracted; leave the term out instead",
                });
            }
            (Sign::Plus, _) => resolved.extend(resolver.term(piece, &syntax)?),
        }
    }
    resolved.sort_by_key(|(order, _)| *order);
    let mut predictors: Vec<String> = Vec::new();
    for (_, column) in resolved {
        if column == response {
            return Err(FormulaError::Unsupported {
                term: column,
                why: "is the response; it cannot also be a predictor",
            });
        }
        if !predictors.contains(&column) {
            predictors.push(column);
        }
    }
    let declared = |name: &str| terms.iter().find(|t| t.id == name);
    let powers = predictors
        .iter()
        .filter(|p| matches!(declared(p).map(|t| &t.kind), Some(TermKind::Power { .. })))
        .cloned()
        .collect();
    let products = predictors
        .iter()
        .filter_map(|p| match declared(p).map(|t| &t.kind) {
            Some(TermKind::Product { of }) => Some((p.clone(), of.clone())),
            _ => None,
        })
        .collect();
    Ok(ModelFormula {
        response,
        predictors,
        intercept,
        powers,
        products,
    })
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Sign {
    Plus,
    Minus,
}

/// The right-hand side cut at `+` and `-` outside parentheses and backquotes, each piece trimmed
/// and signed.
fn split_top_level(rhs: &str) -> Result<Vec<(Sign, &str)>, &'static str> {
    let mut pieces = Vec::new();
    let (mut depth, mut quoted, mut start, mut sign) = (0usize, false, 0usize, Sign::Plus);
    for (i, c) in rhs.char_indices() {
        match c {
            '`' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth = depth.checked_sub(1).ok_or("a `)` without its `(`")?,
            '+' | '-' if !quoted && depth == 0 => {
                let piece = rhs[start..i].trim();
                // A leading sign (`- 1 + x`) opens the first piece instead of closing one.
                if !(pieces.is_empty() && piece.is_empty() && start == 0) {
                    pieces.push((sign, piece));
                }
                sign = if c == '+' { Sign::Plus } else { Sign::Minus };
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    if quoted {
        return Err("a backquote without its closing one");
    }
    if depth > 0 {
        return Err("a `(` without its `)`");
    }
    pieces.push((sign, rhs[start..].trim()));
    Ok(pieces)
}

/// A column name as written: backquoted (anything but a backquote inside) or bare (letters,
/// digits, `_`, `.`, `=`).
fn name(text: &str) -> Result<String, &'static str> {
    let text = text.trim();
    if let Some(inner) = text.strip_prefix('`') {
        let inner = inner
            .strip_suffix('`')
            .filter(|s| !s.is_empty() && !s.contains('`'))
            .ok_or("a backquoted name must be one name between two backquotes")?;
        return Ok(inner.to_owned());
    }
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '='))
    {
        Ok(text.to_owned())
    } else {
        Err("expected a column name (backquote names holding other characters)")
    }
}

/// The text inside `call(…)`, when `piece` is exactly that call.
fn call<'a>(piece: &'a str, function: &str) -> Option<&'a str> {
    piece
        .strip_prefix(function)?
        .trim_start()
        .strip_prefix('(')?
        .strip_suffix(')')
}

/// Splits `text` at the first `op` outside backquotes.
fn split_once_unquoted(text: &str, op: char) -> Option<(&str, &str)> {
    let mut quoted = false;
    for (i, c) in text.char_indices() {
        match c {
            '`' => quoted = !quoted,
            c if c == op && !quoted => return Some((&text[..i], &text[i + c.len_utf8()..])),
            _ => {}
        }
    }
    None
}

struct Resolver<'a> {
    columns: &'a [String],
    terms: &'a [Term],
}

impl Resolver<'_> {
    fn column(&self, name: &str) -> Result<String, FormulaError> {
        if self.columns.iter().any(|c| c == name) {
            Ok(name.to_owned())
        } else {
            Err(FormulaError::UnknownColumn(name.to_owned()))
        }
    }

    /// The released column of the declared term `wanted` matches, or why there is none.
    fn declared(
        &self,
        written: &str,
        wanted: impl Fn(&TermKind) -> bool,
    ) -> Result<String, FormulaError> {
        match self.terms.iter().find(|t| wanted(&t.kind)) {
            Some(term) => self.column(&term.id),
            None => Err(FormulaError::NotDeclared {
                term: written.to_owned(),
                declared: if self.terms.is_empty() {
                    "; this release declares none".to_owned()
                } else {
                    let list: Vec<String> = self
                        .terms
                        .iter()
                        .map(|t| format!("{} = {}", t.id, t.kind.formula()))
                        .collect();
                    format!("; declared: {}", list.join(", "))
                },
            }),
        }
    }

    /// The columns one term stands for, each with its R order (1: a single column, 2: an
    /// interaction).
    fn term(
        &self,
        piece: &str,
        syntax: &dyn Fn(&str) -> FormulaError,
    ) -> Result<Vec<(u8, String)>, FormulaError> {
        if let Some((a, b)) = split_once_unquoted(piece, '*') {
            let (a, b) = (name(a).map_err(syntax)?, name(b).map_err(syntax)?);
            return Ok(vec![
                (1, self.column(&a)?),
                (1, self.column(&b)?),
                (2, self.product(piece, &a, &b)?),
            ]);
        }
        if let Some((a, b)) = split_once_unquoted(piece, ':') {
            let (a, b) = (name(a).map_err(syntax)?, name(b).map_err(syntax)?);
            return Ok(vec![(2, self.product(piece, &a, &b)?)]);
        }
        if let Some(inner) = call(piece, "I") {
            return self.inhibited(piece, inner, syntax).map(|c| vec![(1, c)]);
        }
        for (function, log1p) in [("log1p", true), ("log", false)] {
            if let Some(inner) = call(piece, function) {
                let of = name(inner).map_err(syntax)?;
                self.column(&of)?;
                let column = self.declared(piece, |k| match k {
                    TermKind::Log1p { of: o } => log1p && *o == of,
                    TermKind::Log { of: o } => !log1p && *o == of,
                    _ => false,
                })?;
                return Ok(vec![(1, column)]);
            }
        }
        if piece.contains('(') {
            return Err(FormulaError::Unsupported {
                term: piece.to_owned(),
                why: "a release offers I(x^2), I(x^3), I(x - c), log(x), log1p(x) and x:z of declared terms only (R's poly() is orthogonal polynomials: write x + I(x^2))",
            });
        }
        if piece.contains('^') {
            return Err(FormulaError::Unsupported {
                term: piece.to_owned(),
                why: "outside I(), R reads ^ as crossing, not a power: write I(x^2)",
            });
        }
        Ok(vec![(1, self.column(&name(piece).map_err(syntax)?)?)])
    }

    /// `I(x^k)` or `I(x - c)`.
    fn inhibited(
        &self,
        piece: &str,
        inner: &str,
        syntax: &dyn Fn(&str) -> FormulaError,
    ) -> Result<String, FormulaError> {
        if let Some((of, exponent)) = split_once_unquoted(inner, '^') {
            let of = name(of).map_err(syntax)?;
            self.column(&of)?;
            let exponent: u8 = exponent
                .trim()
                .parse()
                .map_err(|_| syntax("I(x^k) needs a whole exponent k"))?;
            return self.declared(piece, |k| {
                matches!(k, TermKind::Power { of: o, exponent: e } if *o == of && *e == exponent)
            });
        }
        if let Some((of, at)) = split_once_unquoted(inner, '-') {
            let of = name(of).map_err(syntax)?;
            self.column(&of)?;
            let at: f64 = at
                .trim()
                .parse()
                .map_err(|_| syntax("I(x - c) needs a number c"))?;
            return self.declared(
                piece,
                |k| matches!(k, TermKind::Centre { of: o, at: a } if *o == of && *a == at),
            );
        }
        Err(FormulaError::Unsupported {
            term: piece.to_owned(),
            why: "inside I() a release offers x^2, x^3 and x - c of declared terms only",
        })
    }

    /// The declared product of `a` and `b`, in either order.
    fn product(&self, written: &str, a: &str, b: &str) -> Result<String, FormulaError> {
        self.column(a)?;
        self.column(b)?;
        self.declared(written, |k| match k {
            TermKind::Product { of: [x, z] } => (x == a && z == b) || (x == b && z == a),
            _ => false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns() -> Vec<String> {
        [
            "y",
            "age",
            "income",
            "smoker",
            "region=north",
            "age_sq",
            "income_x_smoker",
            "log_income",
            "age_c40",
            "QA",
        ]
        .map(String::from)
        .to_vec()
    }

    fn terms() -> Vec<Term> {
        serde_json::from_str(
            r#"[{"id":"age_sq","kind":"power","of":"age","exponent":2},
                {"id":"income_x_smoker","kind":"product","of":["income","smoker"]},
                {"id":"log_income","kind":"log","of":"income"},
                {"id":"age_c40","kind":"centre","of":"age","at":40}]"#,
        )
        .unwrap()
    }

    fn fit(formula: &str) -> Result<ModelFormula, FormulaError> {
        resolve(formula, &columns(), &terms())
    }

    /// R's `lm(y ~ age + I(age^2) + income*smoker)` has the terms age, I(age^2), income,
    /// smoker, income:smoker in that order (`attr(terms(f), "term.labels")` in R 4.2).
    #[test]
    fn the_issue_formula_names_the_declared_columns_in_r_order() {
        let f = fit("y ~ age + I(age^2) + income*smoker").unwrap();
        assert_eq!(f.response, "y");
        assert_eq!(
            f.predictors,
            ["age", "age_sq", "income", "smoker", "income_x_smoker"]
        );
        assert!(f.intercept);
        assert_eq!(f.powers, ["age_sq"]);
        assert_eq!(f.interactions_with("smoker"), ["income_x_smoker"]);
        assert_eq!(f.interactions_with("age"), Vec::<String>::new());
        // An interaction written first still comes after the single columns, as in R.
        let f = fit("y ~ smoker:income + age").unwrap();
        assert_eq!(f.predictors, ["age", "income_x_smoker"]);
    }

    #[test]
    fn every_declared_form_and_the_intercept_switches() {
        let f = fit("y ~ log(income) + I(age - 40) + `region=north` - 1").unwrap();
        assert_eq!(f.predictors, ["log_income", "age_c40", "region=north"]);
        assert!(!f.intercept);
        assert!(!fit("y ~ 0 + age").unwrap().intercept);
        assert!(fit("y ~ age + 1").unwrap().intercept);
        // A declared term by its own name, and a repeated term, once.
        let f = fit("y ~ age_sq + age + age").unwrap();
        assert_eq!(f.predictors, ["age_sq", "age"]);
        assert_eq!(f.powers, ["age_sq"]);
    }

    #[test]
    fn what_a_release_cannot_give_is_refused_in_one_line() {
        let cases: [(&str, &str); 11] = [
            ("y age", "write it as `y ~ x + z`"),
            ("y ~ ", "write it as `y ~ x + z`"),
            ("y ~ weight", "`weight` is not a column of the release"),
            (
                "y ~ I(age^3)",
                "`I(age^3)` is not in the release: a masked release keeps only linear combinations of its columns, so a power, product or logarithm exists only where the survey declared it as a model term (computed on the devices); declared: age_sq = age^2, income_x_smoker = income*smoker, log_income = log(income), age_c40 = age - 40",
            ),
            ("y ~ age:smoker", "`age:smoker` is not in the release"),
            ("y ~ log1p(income)", "`log1p(income)` is not in the release"),
            ("y ~ I(age - 41)", "`I(age - 41)` is not in the release"),
            ("y ~ poly(age, 2)", "R's poly() is orthogonal polynomials"),
            ("y ~ age^2", "R reads ^ as crossing"),
            ("y ~ (age", "a `(` without its `)`"),
            (
                "y ~ age - income",
                "only `- 1` (no intercept) may be subtracted",
            ),
        ];
        for (formula, expected) in cases {
            let message = fit(formula).unwrap_err().to_string();
            assert!(message.contains(expected), "{formula}: {message}");
            assert!(!message.contains('\n'), "{formula}: {message}");
        }
        let none = resolve("y ~ I(age^2)", &columns(), &[]).unwrap_err();
        assert!(
            none.to_string().ends_with("; this release declares none"),
            "{none}"
        );
        let response = fit("y ~ y + age").unwrap_err();
        assert!(
            response.to_string().contains("is the response"),
            "{response}"
        );
        // A declared term whose column the release lacks is named as missing.
        let fewer: Vec<String> = columns().into_iter().filter(|c| c != "age_sq").collect();
        let missing = resolve("y ~ I(age^2)", &fewer, &terms()).unwrap_err();
        assert_eq!(missing, FormulaError::UnknownColumn("age_sq".into()));
    }
}
