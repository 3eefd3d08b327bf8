//! JSON has one number type: `3` and `3.0` are the same number, and a JSON Schema `integer`
//! (docs/openapi.yaml) admits both. serde's integer types refuse `3.0`, so request bodies pass
//! through [`integral_floats_as_integers`] before they are deserialised (`http::ApiJson`).

use serde_json::{Number, Value};

/// Rewrite every number with a zero fractional part that fits `i64` or `u64` as that integer;
/// `true` when anything changed.
///
/// Exact: such a float converts to the integer and back without change, so a field typed `f64`
/// reads the same value either way. `-0.0` stays a float (as an integer it would lose its sign,
/// and an upload's hash covers each value's IEEE 754 bits).
pub fn integral_floats_as_integers(value: &mut Value) -> bool {
    match value {
        Value::Number(n) => match n.as_f64().filter(|_| n.is_f64()).and_then(as_integer) {
            Some(i) => {
                *n = i;
                true
            }
            None => false,
        },
        // Every element is visited (no short-circuit).
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, v| integral_floats_as_integers(v) | changed),
        Value::Object(map) => map
            .values_mut()
            .fold(false, |changed, v| integral_floats_as_integers(v) | changed),
        Value::Null | Value::Bool(_) | Value::String(_) => false,
    }
}

/// `f` as an integer number when it is one exactly.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]
fn as_integer(f: f64) -> Option<Number> {
    if !f.is_finite() || f.fract() != 0.0 || (f == 0.0 && f.is_sign_negative()) {
        return None;
    }
    // 2⁶³ and 2⁶⁴ are exact in f64; `as` saturates, so check the range first.
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        let i = f as i64;
        (i as f64 == f).then(|| Number::from(i))
    } else if (0.0..18_446_744_073_709_551_616.0).contains(&f) {
        let u = f as u64;
        (u as f64 == f).then(|| Number::from(u))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integral_floats_become_integers_and_nothing_else_changes() {
        let mut v = json!({"count": 412.0, "n": [2.0, -3.0, 0.5, -0.0, 1e300], "s": "7.0"});
        assert!(integral_floats_as_integers(&mut v));
        assert_eq!(v["count"], json!(412));
        assert!(v["count"].is_u64() || v["count"].is_i64());
        assert_eq!(v["n"][0], json!(2));
        assert_eq!(v["n"][1], json!(-3));
        assert!(v["n"][2].is_f64());
        assert!(
            v["n"][3].as_f64().unwrap().is_sign_negative(),
            "-0.0 keeps its sign"
        );
        assert!(v["n"][4].is_f64(), "beyond u64: left as it is");
        assert_eq!(v["s"], json!("7.0"));
    }
}
