//! The XPath subset of XLSForm's `relevant` and `constraint` cells that a draft can hold:
//!
//! ```text
//! expr    := and ("or" and)*
//! and     := atom ("and" atom)*
//! atom    := "(" expr ")" | "selected(" operand "," operand ")" | operand op operand
//! operand := ${name} | . | number | 'text' | "text"
//! op      := = | != | < | <= | > | >=
//! ```
//!
//! Anything else — `not()`, arithmetic, other functions, `count-selected`, regular expressions —
//! is refused with what was met. What a parsed expression means (bounds, a `show_if`) is
//! [`crate::conditions`]'.

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    /// The operator seen from the other side (`3 < x` is `x > 3`).
    pub fn flipped(self) -> Self {
        match self {
            Self::Lt => Self::Gt,
            Self::Le => Self::Ge,
            Self::Gt => Self::Lt,
            Self::Ge => Self::Le,
            other => other,
        }
    }
}

/// One side of a comparison.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Operand {
    /// `${name}`.
    Ref(String),
    /// `.`, the answer being constrained.
    Dot,
    /// A number as written, and its value.
    Number(f64),
    /// A quoted text.
    Text(String),
}

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Expr {
    Or(Vec<Expr>),
    And(Vec<Expr>),
    Compare(Operand, Op, Operand),
    Selected(Operand, Operand),
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Operand(Operand),
    Word(String),
    Op(Op),
    Open,
    Close,
    Comma,
}

fn tokens(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            _ if c.is_whitespace() => i += 1,
            '(' => {
                out.push(Token::Open);
                i += 1;
            }
            ')' => {
                out.push(Token::Close);
                i += 1;
            }
            ',' => {
                out.push(Token::Comma);
                i += 1;
            }
            '=' => {
                out.push(Token::Op(Op::Eq));
                i += 1;
            }
            '!' if chars.get(i + 1) == Some(&'=') => {
                out.push(Token::Op(Op::Ne));
                i += 2;
            }
            '<' | '>' => {
                let or_equal = chars.get(i + 1) == Some(&'=');
                out.push(Token::Op(match (c, or_equal) {
                    ('<', false) => Op::Lt,
                    ('<', true) => Op::Le,
                    ('>', false) => Op::Gt,
                    _ => Op::Ge,
                }));
                i += 1 + usize::from(or_equal);
            }
            '$' if chars.get(i + 1) == Some(&'{') => {
                let end = chars[i..]
                    .iter()
                    .position(|&c| c == '}')
                    .ok_or("a ${ is never closed")?;
                let name: String = chars[i + 2..i + end].iter().collect();
                out.push(Token::Operand(Operand::Ref(name.trim().to_owned())));
                i += end + 1;
            }
            '\'' | '"' => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|&q| q == c)
                    .ok_or("a quoted text is never closed")?;
                out.push(Token::Operand(Operand::Text(
                    chars[i + 1..i + 1 + end].iter().collect(),
                )));
                i += end + 2;
            }
            '.' if !chars.get(i + 1).is_some_and(char::is_ascii_digit) => {
                out.push(Token::Operand(Operand::Dot));
                i += 1;
            }
            _ if c.is_ascii_digit() || c == '.' || c == '-' => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|c| !(c.is_ascii_digit() || *c == '.'))
                    .map_or(chars.len(), |k| i + 1 + k);
                let text: String = chars[i..end].iter().collect();
                let value = text
                    .parse::<f64>()
                    .map_err(|_| format!("{text:?} is not a number"))?;
                out.push(Token::Operand(Operand::Number(value)));
                i = end;
            }
            _ if c.is_alphabetic() => {
                let end = chars[i..]
                    .iter()
                    .position(|c| !(c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ':'))
                    .map_or(chars.len(), |k| i + k);
                out.push(Token::Word(chars[i..end].iter().collect()));
                i = end;
            }
            _ => {
                return Err(format!(
                    "{c:?} is not part of the conditions a draft can hold"
                ));
            }
        }
    }
    Ok(out)
}

/// Parse `text` as the subset above.
pub(crate) fn parse(text: &str) -> Result<Expr, String> {
    let tokens = tokens(text)?;
    let mut parser = Parser { tokens, at: 0 };
    let expr = parser.or()?;
    match parser.tokens.get(parser.at) {
        None => Ok(expr),
        Some(t) => Err(format!(
            "unexpected {} after a complete condition",
            describe(t)
        )),
    }
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

fn describe(t: &Token) -> String {
    match t {
        Token::Operand(Operand::Ref(n)) => format!("${{{n}}}"),
        Token::Operand(Operand::Dot) => "\".\"".into(),
        Token::Operand(Operand::Number(x)) => format!("{x}"),
        Token::Operand(Operand::Text(t)) => format!("{t:?}"),
        Token::Word(w) => format!("{w:?}"),
        Token::Op(_) => "a comparison".into(),
        Token::Open => "\"(\"".into(),
        Token::Close => "\")\"".into(),
        Token::Comma => "\",\"".into(),
    }
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Token::Word(x)) if x == w)
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut parts = vec![self.and()?];
        while self.word("or") {
            self.at += 1;
            parts.push(self.and()?);
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            Expr::Or(parts)
        })
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut parts = vec![self.atom()?];
        while self.word("and") {
            self.at += 1;
            parts.push(self.atom()?);
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            Expr::And(parts)
        })
    }

    fn expect(&mut self, wanted: Token) -> Result<(), String> {
        match self.next() {
            Some(t) if t == wanted => Ok(()),
            Some(t) => Err(format!(
                "expected {} but found {}",
                describe(&wanted),
                describe(&t)
            )),
            None => Err(format!("expected {} at the end", describe(&wanted))),
        }
    }

    fn operand(&mut self) -> Result<Operand, String> {
        match self.next() {
            Some(Token::Operand(o)) => Ok(o),
            Some(t) => Err(format!(
                "expected a ${{name}}, \".\" or a value, found {}",
                describe(&t)
            )),
            None => Err("the condition ends too early".into()),
        }
    }

    fn atom(&mut self) -> Result<Expr, String> {
        match self.peek().cloned() {
            Some(Token::Open) => {
                self.at += 1;
                let inner = self.or()?;
                self.expect(Token::Close)?;
                Ok(inner)
            }
            Some(Token::Word(w)) if w == "selected" => {
                self.at += 1;
                self.expect(Token::Open)?;
                let question = self.operand()?;
                self.expect(Token::Comma)?;
                let value = self.operand()?;
                self.expect(Token::Close)?;
                Ok(Expr::Selected(question, value))
            }
            Some(Token::Word(w)) => Err(format!(
                "{w}() and other functions cannot be expressed (only selected(), comparisons, and, or)"
            )),
            _ => {
                let left = self.operand()?;
                let op = match self.next() {
                    Some(Token::Op(op)) => op,
                    Some(t) => {
                        return Err(format!("expected a comparison, found {}", describe(&t)));
                    }
                    None => return Err("a value alone is not a condition".into()),
                };
                let right = self.operand()?;
                Ok(Expr::Compare(left, op, right))
            }
        }
    }
}

/// A number as an XPath literal: Rust's shortest text that reads back to the same `f64`, never
/// in exponent form (XPath 1.0 has none).
pub(crate) fn number(x: f64) -> String {
    format!("{x}")
}

#[cfg(feature = "export")]
/// A text as an XPath literal (single quotes, or double when it holds one).
pub(crate) fn text(t: &str) -> String {
    if t.contains('\'') {
        format!("\"{t}\"")
    } else {
        format!("'{t}'")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subset_parses_as_written() {
        assert_eq!(
            parse(". >= 18 and . <= 99").unwrap(),
            Expr::And(vec![
                Expr::Compare(Operand::Dot, Op::Ge, Operand::Number(18.0)),
                Expr::Compare(Operand::Dot, Op::Le, Operand::Number(99.0)),
            ])
        );
        assert_eq!(
            parse("selected(${fruit}, 'apple') or ${age}!=-2.5").unwrap(),
            Expr::Or(vec![
                Expr::Selected(Operand::Ref("fruit".into()), Operand::Text("apple".into())),
                Expr::Compare(Operand::Ref("age".into()), Op::Ne, Operand::Number(-2.5)),
            ])
        );
        assert_eq!(
            parse("(${a} = \"it's\")").unwrap(),
            Expr::Compare(
                Operand::Ref("a".into()),
                Op::Eq,
                Operand::Text("it's".into())
            )
        );
    }

    #[test]
    fn anything_else_is_refused_with_what_was_met() {
        for (text, said) in [
            ("not(${a} = 'x')", "not()"),
            ("${a} + 1 > 2", "'+'"),
            ("${a} = ", "ends too early"),
            ("${a} = 'x", "never closed"),
            ("${a} = 1 ${b}", "unexpected"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(said), "{text}: {e}");
        }
    }
}
