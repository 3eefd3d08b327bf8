//! An upload's values read from their JSON text with the standard library's float parser.
//!
//! Why: an upload is a thousand or so numbers printed with up to 17 significant digits, and
//! serde_json's correctly rounded parser (`float_roundtrip`, which the services need: an upload's
//! hash covers each value's IEEE 754 bits) takes its slow path on every one of them — about a
//! sixth of the provider's CPU in a burst of uploads (issue 24). `str::parse::<f64>` is
//! correctly rounded too (round to nearest, ties to even, as IEEE 754 and serde_json's
//! `float_roundtrip` round), and several times faster on such numbers. A build without
//! `float_roundtrip` (this crate alone) rounds uploads' values correctly all the same.
//!
//! The array's text comes from serde_json's `RawValue`, which has checked that it is valid
//! JSON; what is left to check is that it is an array of numbers and that each is finite (a
//! number too large for a double is refused, as serde_json refuses it).

use serde::Deserialize;
use serde::de::{Deserializer, Error};

/// Deserialize a JSON array of numbers (`[1, -2.5e-3, …]`) as `f64`s.
pub(super) fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<f64>, D::Error> {
    let raw = Box::<serde_json::value::RawValue>::deserialize(deserializer)?;
    parse_number_array(raw.get()).map_err(D::Error::custom)
}

/// The numbers of `text`, a valid JSON value that must be an array of numbers.
fn parse_number_array(text: &str) -> Result<Vec<f64>, String> {
    let inner = text
        .trim()
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or_else(|| "invalid type: expected an array of numbers".to_owned())?;
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    // Valid JSON, so a comma outside a string separates elements, and an element that begins
    // with a digit or a minus sign is a number, whole: the first element that does not is
    // refused before any comma inside a string could be misread.
    inner
        .split(',')
        .enumerate()
        .map(|(i, element)| {
            let element = element.trim();
            if !element.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
                return Err(format!(
                    "invalid type: value {i} is {}, expected a number",
                    describe(element)
                ));
            }
            match element.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                _ => Err(format!(
                    "value {i} ({element}) is out of range for a 64-bit float"
                )),
            }
        })
        .collect()
}

/// What a JSON element that is not a number is, for the one-line error.
fn describe(element: &str) -> &'static str {
    match element.chars().next() {
        Some('"') => "a string",
        Some('[') => "an array",
        Some('{') => "an object",
        Some('t' | 'f') => "a boolean",
        Some('n') => "null",
        _ => "not a number",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference bits from IEEE 754 binary64 itself (not from any parser): the doubles nearest
    /// to these decimal texts.
    #[test]
    fn numbers_round_to_the_nearest_double() {
        let cases: &[(&str, u64)] = &[
            ("0.1", 0x3FB9_9999_9999_999A),
            ("0.30000000000000004", 0x3FD3_3333_3333_3334),
            // 2⁵³ + 1 lies halfway between two doubles: ties to even, 2⁵³.
            ("9007199254740993", 0x4340_0000_0000_0000),
            ("1.7976931348623157e308", 0x7FEF_FFFF_FFFF_FFFF),
            ("2.2250738585072014E-308", 0x0010_0000_0000_0000),
            ("5e-324", 0x0000_0000_0000_0001),
            ("-0.0", 0x8000_0000_0000_0000),
            ("-0", 0x8000_0000_0000_0000),
            ("3", 0x4008_0000_0000_0000),
            ("-2.5e+1", 0xC039_0000_0000_0000),
        ];
        let text = format!(
            "[{}]",
            cases.iter().map(|c| c.0).collect::<Vec<_>>().join(" ,\n\t")
        );
        let values = parse_number_array(&text).unwrap();
        let bits: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
        let expected: Vec<u64> = cases.iter().map(|c| c.1).collect();
        assert_eq!(bits, expected);
    }

    #[test]
    fn an_empty_array_has_no_values() {
        assert_eq!(parse_number_array("[]"), Ok(Vec::new()));
        assert_eq!(parse_number_array(" [ \n ] "), Ok(Vec::new()));
    }

    #[test]
    fn anything_but_numbers_is_refused_in_one_line_naming_the_value() {
        let refused = |text: &str| parse_number_array(text).unwrap_err();
        assert_eq!(
            refused(r#"[1, "2"]"#),
            "invalid type: value 1 is a string, expected a number"
        );
        // A comma inside a string is not read as a separator: the string is refused first.
        assert_eq!(
            refused(r#"["1,2", 3]"#),
            "invalid type: value 0 is a string, expected a number"
        );
        assert_eq!(
            refused("[[1, 2]]"),
            "invalid type: value 0 is an array, expected a number"
        );
        assert_eq!(
            refused(r#"[{"a": 1}]"#),
            "invalid type: value 0 is an object, expected a number"
        );
        assert_eq!(
            refused("[null]"),
            "invalid type: value 0 is null, expected a number"
        );
        assert_eq!(
            refused("[1, true]"),
            "invalid type: value 1 is a boolean, expected a number"
        );
        assert_eq!(refused("7"), "invalid type: expected an array of numbers");
        assert_eq!(
            refused(r#"{"values": [1]}"#),
            "invalid type: expected an array of numbers"
        );
        assert_eq!(
            refused("[1e400]"),
            "value 0 (1e400) is out of range for a 64-bit float"
        );
        assert_eq!(
            refused("[0, -1e309]"),
            "value 1 (-1e309) is out of range for a 64-bit float"
        );
    }
}
