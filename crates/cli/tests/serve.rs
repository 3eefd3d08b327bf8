//! `orthomask serve`: argument errors are one line; `serve all` starts every service with its own
//! store and key file, answers on loopback, and stops cleanly on SIGTERM (stores closed, their
//! write-ahead logs checkpointed). The services themselves are tested in `crates/server/tests`.

mod common;

use common::{failure, orthomask};
use std::io::{Read, Write};
use std::process::{Command, Stdio};

#[test]
fn bad_arguments_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let e = failure(&orthomask(&[
        "serve",
        "msp",
        "--data-dir",
        d,
        "--listen",
        "127.0.0.1:0",
        "--collector",
        "collector.example",
    ]));
    assert!(
        e.contains("--collector \"collector.example\" is not an http:// or https:// URL"),
        "{e}"
    );
    let e = failure(&orthomask(&[
        "serve",
        "all",
        "--data-dir",
        d,
        "--port",
        "0",
        "--right-services",
        "1",
        "--no-web",
    ]));
    assert!(e.contains("at least two right-masking services"), "{e}");
    let e = failure(&orthomask(&[
        "serve",
        "right",
        "--index",
        "0",
        "--data-dir",
        d,
        "--listen",
        "127.0.0.1:0",
        "--msp",
        "http://m",
        "--collector",
        "http://c",
        "--rate-per-second",
        "0",
    ]));
    assert!(e.contains("--rate-per-second"), "{e}");
}

fn get(url: &str, path: &str) -> String {
    let address = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[cfg(unix)]
#[test]
fn serve_all_runs_every_service_apart_and_stops_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_orthomask"))
        .args([
            "serve",
            "all",
            "--data-dir",
            dir.path().to_str().unwrap(),
            "--port",
            "0",
            "--no-web",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let services = dir.path().join("services.json");
    for _ in 0..200 {
        if services.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let urls: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&services).unwrap()).unwrap();
    let mut all = vec![
        urls["collector"].as_str().unwrap().to_owned(),
        urls["msp"].as_str().unwrap().to_owned(),
    ];
    all.extend(
        urls["rights"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u.as_str().unwrap().to_owned()),
    );
    assert_eq!(
        all.len(),
        4,
        "collector, provider and two right-masking services"
    );
    for url in &all {
        let answer = get(url, "/api/health");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.contains("nosniff"));
    }
    let answer = get(&all[0], "/api/admin/surveys");
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    // Separate stores and separate key files.
    for (service, db) in [
        ("collector", "collector.sqlite3"),
        ("msp", "msp.sqlite3"),
        ("right-0", "right.sqlite3"),
        ("right-1", "right.sqlite3"),
    ] {
        assert!(dir.path().join(service).join(db).exists(), "{service}");
    }
    // SAFETY: sending SIGTERM to the child this test started.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let status = child.wait().unwrap();
    assert!(status.success());
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(
        out.contains("data collector listening on http://127.0.0.1:"),
        "{out}"
    );
    assert!(out.trim_end().ends_with("stopped"), "{out}");
    for service in ["collector", "msp", "right-0", "right-1"] {
        let wal = std::fs::read_dir(dir.path().join(service))
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().ends_with("-wal"));
        assert!(!wal, "{service}: the store was not closed cleanly");
    }
}
