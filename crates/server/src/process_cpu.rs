//! The CPU time a process has used, all its threads together (Linux's `/proc/<pid>/stat`).
//!
//! The load benchmark (`benches/load.rs`) reads it for the services and for itself before and
//! after a burst: on one machine the load client's CPU is taken from the services, so a burst's
//! wall time alone cannot say whether the services or the machine set it. CPU time gives a
//! lower bound: a burst that needs `C` seconds of the services' CPU cannot be answered in less
//! than `C / k` seconds on `k` such cores, whatever else runs beside them.

use std::time::Duration;

/// Why a process's CPU time could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CpuTimeError {
    /// `/proc/<pid>/stat` could not be read (no such process, or no `/proc`).
    #[error("the CPU time of process {pid} could not be read from /proc/{pid}/stat: {source}")]
    Read {
        /// The process.
        pid: u32,
        /// The system's word.
        source: std::io::Error,
    },
    /// The file was read but its `utime` and `stime` fields were not where `proc(5)` puts them.
    #[error("/proc/{pid}/stat has no utime and stime fields (fields 14 and 15) to read: {line:?}")]
    Malformed {
        /// The process.
        pid: u32,
        /// The line as read, cut to 120 characters.
        line: String,
    },
}

/// The CPU time process `pid` has used so far, in user and system mode, over all its threads.
///
/// # Errors
/// [`CpuTimeError`] naming the process.
pub fn cpu_time(pid: u32) -> Result<Duration, CpuTimeError> {
    let path = format!("/proc/{pid}/stat");
    let line =
        std::fs::read_to_string(&path).map_err(|source| CpuTimeError::Read { pid, source })?;
    let ticks = cpu_ticks(&line).ok_or_else(|| CpuTimeError::Malformed {
        pid,
        line: line.trim_end().chars().take(120).collect(),
    })?;
    let per_second = clock_ticks_per_second();
    Ok(Duration::from_secs(ticks / per_second)
        + Duration::from_nanos((ticks % per_second) * 1_000_000_000 / per_second))
}

/// `utime + stime`, in clock ticks, from one line of `/proc/<pid>/stat` (`proc(5)`: fields 14
/// and 15, counted from 1).
///
/// The second field is the command name in parentheses, and a name may itself hold spaces and
/// `)` (a thread can name itself anything), so fields are counted from the *last* `)`: after it
/// come field 3 (the state), and utime and stime are the 12th and 13th fields from there.
fn cpu_ticks(line: &str) -> Option<u64> {
    let (_, after_name) = line.rsplit_once(')')?;
    let mut fields = after_name.split_ascii_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    user.checked_add(system)
}

/// `sysconf(_SC_CLK_TCK)`: the unit of `/proc`'s CPU times (100 on every Linux in use).
fn clock_ticks_per_second() -> u64 {
    #[cfg(unix)]
    {
        // SAFETY: sysconf reads a system constant; it takes and returns plain integers.
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        if let Ok(ticks @ 1..) = u64::try_from(ticks) {
            return ticks;
        }
    }
    100
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line as `proc(5)` lays it out, with a command name that holds spaces and `)`, utime 250
    /// and stime 75 (fields 14 and 15), and children's times 9 999 after them (not ours).
    const LINE: &str = "4242 (a b) (c)) S 1 4242 4242 0 -1 4194560 1130 0 0 0 250 75 9999 9999 \
                        20 0 7 0 1000 123456789 2000 18446744073709551615\n";

    #[test]
    fn the_times_are_read_after_the_last_parenthesis_whatever_the_name_holds() {
        assert_eq!(cpu_ticks(LINE), Some(325));
    }

    #[test]
    fn a_line_without_the_fields_is_refused_not_misread() {
        // utime without stime; stime not a number; no command name to count from.
        assert_eq!(cpu_ticks("1 (x) S 1 1 1 0 -1 0 0 0 0 0 250"), None);
        assert_eq!(cpu_ticks("1 (x) S 1 1 1 0 -1 0 0 0 0 0 250 seventy"), None);
        assert_eq!(
            cpu_ticks("no parenthesis at all 1 2 3 4 5 6 7 8 9 10 11 12 13"),
            None
        );
    }

    #[test]
    fn the_clock_tick_is_a_positive_rate() {
        assert!(clock_ticks_per_second() > 0);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_s_cpu_time_grows_while_it_works() {
        let before = cpu_time(std::process::id()).expect("our own /proc/self/stat");
        // Work until the kernel has counted at least one more tick: no time is asserted, only
        // that work shows up (the loop ends as soon as it does).
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        for round in 0.. {
            for _ in 0..1_000_000 {
                state = std::hint::black_box(state.rotate_left(5) ^ state.wrapping_mul(31));
            }
            let now = cpu_time(std::process::id()).expect("our own /proc/self/stat");
            assert!(now >= before, "CPU time went back: {before:?} then {now:?}");
            if now > before {
                break;
            }
            assert!(
                round < 100_000,
                "no CPU time counted after {round} rounds of work"
            );
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_process_that_does_not_exist_is_named_in_the_error() {
        // Above any pid_max Linux allows (2²²).
        let e = cpu_time(u32::MAX).expect_err("no such process");
        assert!(
            e.to_string()
                .starts_with("the CPU time of process 4294967295 could not be read"),
            "{e}"
        );
    }
}
