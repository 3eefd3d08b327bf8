//! Issue 24: `orthomask serve` raises its soft open-file limit to the hard limit at start and
//! gives its listeners the places that limit allows. The services are started with a soft limit
//! lowered below the hard one (as `ulimit -Sn` or a service manager leaves it); the kernel's
//! account of the running process (`/proc/<pid>/limits`) must show the soft limit raised, and
//! the line the operator reads must state the limit and the places
//! (`orthomask_server::listener::place_split` of the raised limit and the listeners: each its
//! own and the pool they share). Nothing is timed: the test waits for the line, with a generous
//! deadline.

#![cfg(target_os = "linux")]

use orthomask_server::listener::{descriptor_limit, place_split};
use std::io::BufRead;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

/// The soft and hard "Max open files" of `/proc/<pid>/limits`.
fn kernel_limits(pid: u32) -> (String, String) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap_or_else(|| panic!("no open-file limit in /proc/{pid}/limits:\n{limits}"));
    let fields: Vec<&str> = line["Max open files".len()..].split_whitespace().collect();
    (fields[0].to_owned(), fields[1].to_owned())
}

/// Start `orthomask serve <args>` with its soft open-file limit at `soft`; the child and the line
/// it announces about open files (read from its standard output, after the addresses).
fn serve_with_soft_limit(args: &[&str], soft: u64) -> (std::process::Child, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_orthomask"));
    command
        .arg("serve")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // SAFETY: between fork and exec only setrlimit runs, which is async-signal-safe; it lowers
    // the soft limit of the child alone and keeps the hard one.
    unsafe {
        command.pre_exec(move || {
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            if libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            limit.rlim_cur = soft;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raw const limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if line.starts_with("open files") {
                let _ = sender.send(line);
            }
        }
    });
    let line = receiver
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("orthomask serve never announced its open-file limit");
    (child, line)
}

fn stop(mut child: std::process::Child) {
    // SAFETY: sending SIGTERM to a child this test started.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    assert!(child.wait().unwrap().success());
}

#[test]
fn serve_raises_its_soft_limit_and_caps_connections_by_it() {
    let (_, hard) = descriptor_limit().unwrap();
    let lowered = (hard / 2).min(512);
    if lowered < 64 || hard == u64::MAX {
        eprintln!("skipped: the hard open-file limit ({hard}) leaves no soft limit to raise to");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();

    // `serve all` with three right-masking services: five listeners share the limit.
    let (all, line) = serve_with_soft_limit(
        &[
            "all",
            "--data-dir",
            data,
            "--port",
            "0",
            "--right-services",
            "3",
            "--no-web",
            "--no-demonstrations",
        ],
        lowered,
    );
    assert_eq!(
        kernel_limits(all.id()),
        (hard.to_string(), hard.to_string())
    );
    let split = place_split(hard, 5);
    assert!(
        line.starts_with(&format!(
            "open files: {hard} (raised from {lowered} to the hard limit); up to {} \
             connections at once per service: {} of its own and {} shared (5 listening",
            split.most(),
            split.own,
            split.shared
        )),
        "{line}"
    );
    stop(all);

    // A service alone has the limit to itself.
    let (msp, line) = serve_with_soft_limit(
        &[
            "msp",
            "--data-dir",
            &format!("{data}/msp-alone"),
            "--listen",
            "127.0.0.1:0",
            "--collector",
            "http://127.0.0.1:9",
            "--collector-key",
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        ],
        lowered,
    );
    assert_eq!(
        kernel_limits(msp.id()),
        (hard.to_string(), hard.to_string())
    );
    let alone = place_split(hard, 1);
    assert_eq!(alone.shared, 0, "a service alone shares nothing");
    assert!(
        line.contains(&format!(
            "; up to {} connections at once per service (1 listening",
            alone.own
        )),
        "{line}"
    );
    stop(msp);
}
