//! Issue 30 §2, performed as the faults: `orthomask serve all` whose standard output and error
//! cannot be written — both on `/dev/full` (every write fails with "no space"), or both pipes
//! closed by the reader (every write fails with a broken pipe) — starts, serves, counts the lines
//! it dropped in its health answer, and stops cleanly. Before, the first `println!` to
//! `/dev/full` ended the process ("failed printing to stdout"), and a write to a closed pipe
//! killed it with SIGPIPE.

#![cfg(unix)]

mod common;

use common::{services_json, terminate};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// `serve all` on free loopback ports in `dir`, with its output on `stdout` and `stderr`.
fn serve_all(dir: &Path, stdout: Stdio, stderr: Stdio) -> Child {
    Command::new(env!("CARGO_BIN_EXE_orthomask"))
        .args(["serve", "all", "--data-dir"])
        .arg(dir)
        .args(["--port", "0", "--no-web", "--right-services", "0"])
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// The collector's URL once the services have written services.json.
fn collector_url(dir: &Path, child: &mut Child) -> String {
    services_json(dir, child)["collector"]
        .as_str()
        .expect("the collector's URL")
        .to_owned()
}

/// One HTTP/1.1 request on a fresh connection: the status line and the body.
fn request(url: &str, method: &str, path: &str, token: &str, body: &str) -> (String, String) {
    let address = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\
         Authorization: Bearer {token}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (
        head.lines().next().unwrap_or("").to_owned(),
        body.to_owned(),
    )
}

/// The services answer and work: health (with the dropped lines' count, returned) and a survey
/// created by the survey team.
fn serves(dir: &Path, url: &str) -> u64 {
    let (status, body) = request(url, "GET", "/api/health", "", "");
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    let health: serde_json::Value = serde_json::from_str(&body).unwrap();
    let admin = std::fs::read_to_string(dir.join("admin-token")).unwrap();
    let draft = serde_json::json!({
        "id": "logs", "title": "Logs", "consent": "ok", "cohort_size": 10,
        "questions": [{"id": "a", "label": "A?", "kind": "yes_no"}], "demonstration": true,
    });
    let (created, body) = request(
        url,
        "POST",
        "/api/admin/surveys",
        admin.trim(),
        &draft.to_string(),
    );
    assert_eq!(created, "HTTP/1.1 201 Created", "{body}");
    health["log_lines_dropped"].as_u64().unwrap()
}

#[test]
fn output_on_a_full_device_is_dropped_and_counted_and_the_services_serve() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: this system has no /dev/full");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let child = serve_all(
        dir.path(),
        Stdio::from(full.try_clone().unwrap()),
        Stdio::from(full),
    );
    let mut child = child;
    let url = collector_url(dir.path(), &mut child);
    // The start-up lines (the secrets created, the addresses) could not be written.
    let dropped = serves(dir.path(), &url);
    assert!(dropped >= 1, "dropped lines counted: {dropped}");
    let status = terminate(child);
    assert!(status.success(), "{status}");
}

#[test]
fn output_to_closed_pipes_is_dropped_and_the_services_serve_and_stop_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = serve_all(dir.path(), Stdio::piped(), Stdio::piped());
    // The reader goes away: every later write to either pipe fails with a broken pipe.
    drop(child.stdout.take());
    drop(child.stderr.take());
    let url = collector_url(dir.path(), &mut child);
    serves(dir.path(), &url);
    // "stopped" is written to the closed pipe on the way out: counted, not a SIGPIPE.
    let status = terminate(child);
    assert!(status.success(), "{status}");
}
