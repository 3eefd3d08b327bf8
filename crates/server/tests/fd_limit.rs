//! Issue 24: the services raise the process's soft open-file limit to its hard limit before they
//! listen, so that the listeners' connection caps (`listener::connection_cap`, unit-tested with
//! hand-computed values in `listener.rs`) follow the hard limit and not a soft default of 1 024.
//! Here the soft limit of this test process is first lowered below the hard one, as a shell's
//! `ulimit -Sn` or a service manager leaves it, and `raise_descriptor_limit` — what
//! `orthomask serve` calls at start — must bring it back up; the kernel's own account
//! (`/proc/self/limits`) must agree. (`crates/cli/tests/serve_fd_limit.rs` does the same to the
//! real `orthomask serve` and reads the cap it announces.) Nothing is timed.
//!
//! One test only: the limit belongs to the whole process, which the test harness shares among
//! the tests of a file.

#![cfg(target_os = "linux")]

use orthomask_server::listener::{DescriptorLimit, descriptor_limit, raise_descriptor_limit};

/// Set the soft open-file limit, keeping the hard one.
fn set_soft_limit(soft: u64, hard: u64) {
    let limit = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: setrlimit reads the struct it is given, nothing else.
    let set = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raw const limit) };
    assert_eq!(set, 0, "{}", std::io::Error::last_os_error());
}

/// The soft and hard "Max open files" of `/proc/self/limits`, as the kernel reports them.
fn kernel_limits() -> (String, String) {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap_or_else(|| panic!("no open-file limit in /proc/self/limits:\n{limits}"));
    let fields: Vec<&str> = line["Max open files".len()..].split_whitespace().collect();
    (fields[0].to_owned(), fields[1].to_owned())
}

#[test]
fn the_soft_limit_is_raised_to_the_hard_limit() {
    let (_, hard) = descriptor_limit().unwrap();
    // Below the hard limit, and well above the few descriptors this process holds.
    let lowered = (hard / 2).min(512);
    if lowered < 64 {
        eprintln!(
            "skipped: the hard open-file limit ({hard}) leaves no room to lower the soft one"
        );
        return;
    }
    set_soft_limit(lowered, hard);
    assert_eq!(descriptor_limit().unwrap(), (lowered, hard));
    assert_eq!(kernel_limits().0, lowered.to_string());

    let raised = raise_descriptor_limit().unwrap();
    assert_eq!(
        raised,
        DescriptorLimit {
            before: lowered,
            soft: hard,
            hard,
        }
    );
    assert_eq!(descriptor_limit().unwrap(), (hard, hard));
    let hard_text = if hard == u64::MAX {
        "unlimited".to_owned()
    } else {
        hard.to_string()
    };
    assert_eq!(kernel_limits(), (hard_text.clone(), hard_text));

    // At the hard limit already: nothing to raise, nothing changed.
    assert_eq!(
        raise_descriptor_limit().unwrap(),
        DescriptorLimit {
            before: hard,
            soft: hard,
            hard,
        }
    );
}
