//! Refusing work that cannot fit in memory before it starts (issue 23 §1): a monolithic run of a
//! large survey would otherwise grow until the operating system kills it, hours in.

use anyhow::{Result, bail};

/// The memory the operating system says is available to a new allocation (`MemAvailable` of
/// `/proc/meminfo`, in bytes); `None` where it does not say.
fn available_bytes() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// Refuse, in one line, work expected to need `needed` bytes when less is available.
/// `what` names the work ("one cohort of 20 190 records …"). Where the system does not say what
/// is available, nothing is refused.
///
/// # Errors
/// The one line, with a way out.
pub fn refuse_what_cannot_fit(needed: f64, what: &str) -> Result<()> {
    match available_bytes() {
        Some(available) if needed > available => bail!(
            "{what} would need about {} of memory and {} are available: choose a smaller \
             --cohort-size (or leave the plan's default)",
            gigabytes(needed),
            gigabytes(available)
        ),
        _ => Ok(()),
    }
}

fn gigabytes(bytes: f64) -> String {
    format!("{:.1} GB", bytes / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_fits_passes_and_what_cannot_is_refused_in_one_line() {
        assert!(refuse_what_cannot_fit(1.0, "one byte").is_ok());
        if available_bytes().is_some() {
            let error = refuse_what_cannot_fit(1e18, "one cohort of 10⁹ records")
                .unwrap_err()
                .to_string();
            assert!(
                error.starts_with("one cohort of 10⁹ records would need about 1000000000.0 GB")
            );
            assert!(!error.contains('\n'));
        }
    }
}
