//! Wall-clock time as RFC 3339 UTC text and as Unix milliseconds, without a date library.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch (0 if the clock is before 1970).
pub fn unix_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Whole seconds since the Unix epoch (0 if the clock is before 1970): the clock upload
/// credentials expire by.
pub fn unix_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The current time as RFC 3339 UTC with milliseconds, e.g. `2026-11-21T21:47:59.123Z`.
pub fn now_rfc3339() -> String {
    rfc3339(unix_millis())
}

/// RFC 3339 UTC text for Unix milliseconds.
///
/// # Formula
/// Days since the epoch become a civil date by Howard Hinnant's `civil_from_days` (eras of
/// 400 years, March-based years so the leap day ends the year).
pub fn rfc3339(millis: i64) -> String {
    let seconds = millis.div_euclid(1000);
    let ms = millis.rem_euclid(1000);
    let days = seconds.div_euclid(86_400);
    let rem = seconds.rem_euclid(86_400);
    let (h, m, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{ms:03}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: the epoch; 2000-02-29 is day 11016 (30 years of 365 days, 7 leap days, 59 days);
    /// one millisecond before 2001 is the last instant of 2000; the last value is checked against
    /// Python's `datetime.utcfromtimestamp(1795000000.123)`.
    #[test]
    fn known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(11_016 * 86_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(978_307_200_000 - 1), "2000-12-31T23:59:59.999Z");
        assert_eq!(rfc3339(1_795_000_000_123), "2026-11-18T11:06:40.123Z");
    }
}
