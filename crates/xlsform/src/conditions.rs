//! What the XPath subset of [`crate::xpath`] means in a draft, both ways:
//!
//! * a `constraint` on `.` is an integer or decimal question's declared range: comparisons with
//!   numbers joined by `and`, both bounds given (`. >= 18 and . <= 99`). On an integer, `> a`
//!   is `>= a + 1`; on a decimal a strict bound is refused (a range includes its ends).
//! * a `relevant` is a `show_if` on **one** earlier question: `${q} = v` is `equals`; `=`s joined
//!   by `or` (or one `selected(${q}, v)` of a select_one) are `one_of`; comparisons joined by
//!   `and`, or one comparison, are a `range`, the missing end taken from the question's declared
//!   range; `${q} != v` on a yes/no or categorical question is the other answers.
//!   `selected(${m}, 'c')` on a select_multiple is its column `m_c` equal to yes. Values are
//!   choice *names*: a categorical question's becomes the option's text, a Likert choice's its
//!   point (`<`, `>` on a Likert question only when its names are the points 1, 2, …).
//!
//! Export writes exactly these forms, so reading back what was written gives the same
//! condition (the crate's round-trip tests).

use crate::xpath::{self, Expr, Op, Operand};
#[cfg(feature = "export")]
use orthomask_survey::definition::QuestionKind;
use orthomask_survey::definition::{Condition, ConditionValue, ShowIf};
use std::collections::HashMap;

/// What an earlier XLSForm name stands for when a later `relevant` names it.
#[derive(Clone, Debug)]
pub(crate) enum Known {
    /// A question of the draft, with what a condition needs of its kind.
    Question { id: String, kind: KnownKind },
    /// A select_multiple: its choice names and the yes/no question each became.
    Multiple { choices: Vec<(String, String)> },
}

/// A question's kind as conditions see it: select choices by name.
#[derive(Clone, Debug)]
pub(crate) enum KnownKind {
    YesNo,
    Integer {
        min: i64,
        max: i64,
    },
    Number {
        min: f64,
        max: f64,
    },
    Likert {
        names: Vec<String>,
    },
    Categorical {
        names: Vec<String>,
        options: Vec<String>,
    },
}

/// An integer's or a decimal's declared range from its `constraint`.
pub(crate) fn bounds(expression: &str, whole: bool) -> Result<(f64, f64), String> {
    let atoms = match xpath::parse(expression)? {
        Expr::And(parts) => parts,
        Expr::Or(_) => return Err("\"or\" gives no single range".into()),
        one => vec![one],
    };
    let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
    for atom in atoms {
        let (op, x) = match atom {
            Expr::Compare(Operand::Dot, op, Operand::Number(x)) => (op, x),
            Expr::Compare(Operand::Number(x), op, Operand::Dot) => (op.flipped(), x),
            _ => return Err("each part must compare \".\" with a number".into()),
        };
        let (from, to) = bound(op, x, whole, "\".\"")?;
        lo = lo.max(from);
        hi = hi.min(to);
    }
    if lo == f64::NEG_INFINITY {
        return Err("it gives no lower bound (. >= a)".into());
    }
    if hi == f64::INFINITY {
        return Err("it gives no upper bound (. <= b)".into());
    }
    Ok((lo, hi))
}

/// The interval one comparison `subject op x` allows.
fn bound(op: Op, x: f64, whole: bool, subject: &str) -> Result<(f64, f64), String> {
    let strict = || {
        if whole {
            Ok(())
        } else {
            Err(format!(
                "a strict < or > on {subject}, a decimal, leaves out its end, which a declared \
                 range includes: use <= or >="
            ))
        }
    };
    Ok(match op {
        Op::Eq => (x, x),
        Op::Ge if whole => (x.ceil(), f64::INFINITY),
        Op::Ge => (x, f64::INFINITY),
        Op::Le if whole => (f64::NEG_INFINITY, x.floor()),
        Op::Le => (f64::NEG_INFINITY, x),
        Op::Gt => {
            strict()?;
            (x.floor() + 1.0, f64::INFINITY)
        }
        Op::Lt => {
            strict()?;
            (f64::NEG_INFINITY, x.ceil() - 1.0)
        }
        Op::Ne => return Err(format!("!= on {subject} cannot be part of a range")),
    })
}

/// One comparison, normalised to `${name} op value`.
struct Atom {
    name: String,
    op: Op,
    value: Operand,
    selected: bool,
}

fn atoms(expr: Expr) -> Result<(Mode, Vec<Atom>), String> {
    let (mode, parts) = match expr {
        Expr::Or(parts) => (Mode::Or, parts),
        Expr::And(parts) => (Mode::And, parts),
        one => (Mode::One, vec![one]),
    };
    let mut out = Vec::new();
    for part in parts {
        out.push(match part {
            Expr::Compare(Operand::Ref(name), op, value)
                if !matches!(value, Operand::Ref(_) | Operand::Dot) =>
            {
                Atom {
                    name,
                    op,
                    value,
                    selected: false,
                }
            }
            Expr::Compare(value, op, Operand::Ref(name))
                if !matches!(value, Operand::Ref(_) | Operand::Dot) =>
            {
                Atom {
                    name,
                    op: op.flipped(),
                    value,
                    selected: false,
                }
            }
            Expr::Compare(..) => {
                return Err("each comparison must set one ${question} against a value".into());
            }
            Expr::Selected(Operand::Ref(name), value)
                if !matches!(value, Operand::Ref(_) | Operand::Dot) =>
            {
                Atom {
                    name,
                    op: Op::Eq,
                    value,
                    selected: true,
                }
            }
            Expr::Selected(..) => return Err("write selected(${question}, 'choice')".into()),
            Expr::Or(_) | Expr::And(_) => {
                return Err(
                    "\"and\" and \"or\" together cannot be expressed: a condition is one value, \
                     several values (or) or a range (and)"
                        .into(),
                );
            }
        });
    }
    Ok((mode, out))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    One,
    Or,
    And,
}

/// A `relevant` as a `show_if`, given what the earlier names stand for.
pub(crate) fn show_if(expression: &str, known: &HashMap<String, Known>) -> Result<ShowIf, String> {
    let (mode, atoms) = atoms(xpath::parse(expression)?)?;
    let name = atoms[0].name.clone();
    if let Some(other) = atoms.iter().find(|a| a.name != name) {
        return Err(format!(
            "it uses ${{{name}}} and ${{{}}}; a question can depend on one earlier answer",
            other.name
        ));
    }
    let Some(target) = known.get(&name) else {
        return Err(format!("${{{name}}} is not an earlier question"));
    };
    let (id, kind) = match target {
        Known::Multiple { choices } => {
            let [atom] = atoms.as_slice() else {
                return Err(format!(
                    "each choice of the select_multiple ${{{name}}} is its own yes/no question; \
                     a condition can use one of them"
                ));
            };
            if !atom.selected {
                return Err(format!(
                    "write selected(${{{name}}}, 'choice') for a select_multiple"
                ));
            }
            let choice = literal_text(&atom.value);
            let Some((_, id)) = choices.iter().find(|(c, _)| *c == choice) else {
                return Err(format!("{choice:?} is not a choice of ${{{name}}}"));
            };
            return Ok(ShowIf {
                question: id.clone(),
                condition: Condition::Equals(ConditionValue::Text("yes".into())),
            });
        }
        Known::Question { id, kind } => (id, kind),
    };
    let condition = if atoms.iter().all(|a| a.op == Op::Eq) && mode != Mode::And {
        let mut values: Vec<ConditionValue> = Vec::new();
        for atom in &atoms {
            let v = value(kind, &name, &atom.value)?;
            if !values.contains(&v) {
                values.push(v);
            }
        }
        if mode == Mode::One && !atoms[0].selected {
            Condition::Equals(values.remove(0))
        } else {
            Condition::OneOf(values)
        }
    } else if mode == Mode::One && atoms[0].op == Op::Ne {
        let not = value(kind, &name, &atoms[0].value)?;
        let all: Vec<ConditionValue> = match kind {
            KnownKind::YesNo => ["yes", "no"]
                .map(|t| ConditionValue::Text(t.into()))
                .to_vec(),
            KnownKind::Categorical { options, .. } => options
                .iter()
                .map(|o| ConditionValue::Text(o.clone()))
                .collect(),
            _ => {
                return Err(format!(
                    "!= on ${{{name}}}, a number, leaves two ranges; a condition is one"
                ));
            }
        };
        let mut rest: Vec<ConditionValue> = all.into_iter().filter(|v| *v != not).collect();
        if rest.len() == 1 {
            Condition::Equals(rest.remove(0))
        } else {
            Condition::OneOf(rest)
        }
    } else if mode == Mode::Or {
        return Err("only = can be joined with or (one of several values)".into());
    } else {
        let (declared_lo, declared_hi, whole) = match kind {
            KnownKind::Integer { min, max } => (*min as f64, *max as f64, true),
            KnownKind::Number { min, max } => (*min, *max, false),
            KnownKind::Likert { names } if points_are_names(names) => {
                (1.0, names.len() as f64, true)
            }
            KnownKind::Likert { .. } => {
                return Err(format!(
                    "${{{name}}} is a Likert scale whose choice names are not its points 1, 2, …: \
                     compare it with = only"
                ));
            }
            KnownKind::YesNo | KnownKind::Categorical { .. } => {
                return Err(format!(
                    "${{{name}}} is not a number: compare it with = or !="
                ));
            }
        };
        let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
        for atom in &atoms {
            let x = number_of(&atom.value, &name)?;
            let (from, to) = bound(atom.op, x, whole, &format!("${{{name}}}"))?;
            lo = lo.max(from);
            hi = hi.min(to);
        }
        Condition::Range {
            min: if lo == f64::NEG_INFINITY {
                declared_lo
            } else {
                lo
            },
            max: if hi == f64::INFINITY { declared_hi } else { hi },
        }
    };
    Ok(ShowIf {
        question: id.clone(),
        condition,
    })
}

/// Whether a Likert list's choice names are its points `1, 2, …` in order.
fn points_are_names(names: &[String]) -> bool {
    names
        .iter()
        .enumerate()
        .all(|(i, n)| *n == (i + 1).to_string())
}

fn literal_text(value: &Operand) -> String {
    match value {
        Operand::Text(t) => t.clone(),
        Operand::Number(x) => xpath::number(*x),
        Operand::Ref(n) => n.clone(),
        Operand::Dot => ".".into(),
    }
}

fn number_of(value: &Operand, name: &str) -> Result<f64, String> {
    match value {
        Operand::Number(x) => Ok(*x),
        Operand::Text(t) => t
            .trim()
            .parse()
            .map_err(|_| format!("${{{name}}} takes numbers, not {t:?}")),
        _ => Err("compare with a value".into()),
    }
}

/// A literal compared with a question of `kind` as the condition's value.
fn value(kind: &KnownKind, name: &str, literal: &Operand) -> Result<ConditionValue, String> {
    let choice = |names: &[String]| {
        let text = literal_text(literal);
        names.iter().position(|n| *n == text).ok_or_else(|| {
            format!(
                "{text:?} is not a choice name of ${{{name}}} ({})",
                names.join(", ")
            )
        })
    };
    Ok(match kind {
        KnownKind::YesNo => {
            let text = literal_text(literal);
            if text != "yes" && text != "no" {
                return Err(format!(
                    "${{{name}}} is yes/no: compare it with 'yes' or 'no'"
                ));
            }
            ConditionValue::Text(text)
        }
        KnownKind::Categorical { names, options } => {
            ConditionValue::Text(options[choice(names)?].clone())
        }
        KnownKind::Likert { names } => ConditionValue::Number((choice(names)? + 1) as f64),
        KnownKind::Integer { .. } | KnownKind::Number { .. } => {
            ConditionValue::Number(number_of(literal, name)?)
        }
    })
}

#[cfg(feature = "export")]
/// The `constraint` of a declared range.
pub(crate) fn constraint(min: f64, max: f64) -> String {
    format!(
        ". >= {} and . <= {}",
        xpath::number(min),
        xpath::number(max)
    )
}

#[cfg(feature = "export")]
/// The `relevant` of a `show_if` on a question of kind `target` — the forms [`show_if`] reads
/// back to the same condition. Categorical and Likert choices are named by their position
/// `1, 2, …` (how export names them).
pub(crate) fn relevant(show_if: &ShowIf, target: &QuestionKind) -> String {
    let q = format!("${{{}}}", show_if.question);
    let literal = |v: &ConditionValue| match (target, v) {
        (QuestionKind::Categorical { options }, ConditionValue::Text(t)) => {
            let at = options.iter().position(|o| o == t).map_or(0, |k| k + 1);
            xpath::text(&at.to_string())
        }
        (QuestionKind::Likert { .. }, ConditionValue::Number(x)) => xpath::text(&xpath::number(*x)),
        (_, ConditionValue::Text(t)) => xpath::text(t),
        (_, ConditionValue::Number(x)) => xpath::number(*x),
    };
    let select = matches!(
        target,
        QuestionKind::YesNo | QuestionKind::Categorical { .. } | QuestionKind::Likert { .. }
    );
    match &show_if.condition {
        Condition::Equals(v) => format!("{q} = {}", literal(v)),
        // One value in a list: selected() on a select, a repeated `=` on a number — both read
        // back as a one_of, where a lone `=` reads back as equals.
        Condition::OneOf(vs) if vs.len() == 1 && select => {
            format!("selected({q}, {})", literal(&vs[0]))
        }
        Condition::OneOf(vs) if vs.len() == 1 => {
            format!("{q} = {0} or {q} = {0}", literal(&vs[0]))
        }
        Condition::OneOf(vs) => vs
            .iter()
            .map(|v| format!("{q} = {}", literal(v)))
            .collect::<Vec<_>>()
            .join(" or "),
        Condition::Range { min, max } => format!(
            "{q} >= {} and {q} <= {}",
            xpath::number(*min),
            xpath::number(*max)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-read cases of ODK's documentation forms.
    #[test]
    fn constraints_give_declared_ranges() {
        assert_eq!(bounds(". >= 18 and . <= 99", true), Ok((18.0, 99.0)));
        assert_eq!(bounds("(. > 17) and (. < 100)", true), Ok((18.0, 99.0)));
        assert_eq!(bounds("0 <= . and . <= 2.5", false), Ok((0.0, 2.5)));
        assert!(
            bounds(". > 0 and . <= 1", false)
                .unwrap_err()
                .contains("strict")
        );
        assert!(bounds(". >= 0", true).unwrap_err().contains("upper"));
        assert!(bounds("regex(., '[0-9]+')", true).is_err());
    }
}
