//! Numbers as the pages print them.

/// A number with `digits` significant digits, in plain notation when that is readable and in
/// exponent notation otherwise (very large or very small magnitudes).
pub fn sig(value: f64, digits: usize) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    if value == 0.0 {
        return "0".to_owned();
    }
    let magnitude = value.abs().log10().floor() as i32;
    if !(-4..=7).contains(&magnitude) {
        return format!("{value:.prec$e}", prec = digits.saturating_sub(1));
    }
    let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
    let text = format!("{value:.decimals$}");
    if text
        .trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        "0".to_owned()
    } else {
        text
    }
}

/// A p-value as regression tables print it (`< 1e-16` below machine precision).
pub fn p_value(p: f64) -> String {
    if p < 1e-16 {
        "< 1e-16".to_owned()
    } else {
        sig(p, 3)
    }
}

/// The full-precision text of a number (shortest round-trip form): what tests compare.
pub fn exact(value: f64) -> String {
    format!("{value:e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_digits_by_hand() {
        assert_eq!(sig(1234.5678, 4), "1235");
        assert_eq!(sig(0.012345, 3), "0.0123");
        assert_eq!(sig(-2.5, 3), "-2.50");
        assert_eq!(sig(1.5e-9, 2), "1.5e-9");
        assert_eq!(sig(0.0, 3), "0");
        assert_eq!(p_value(1e-20), "< 1e-16");
        assert_eq!(
            exact(0.1).parse::<f64>().unwrap().to_bits(),
            0.1f64.to_bits()
        );
    }
}
