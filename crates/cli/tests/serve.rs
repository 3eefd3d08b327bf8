//! `orthomask serve`: argument errors are one line; each service starts alone from the command
//! line; `serve all` starts every service with its own
//! store and key file, answers on loopback, and stops cleanly on SIGTERM (stores closed, their
//! write-ahead logs checkpointed). The services themselves are tested in `crates/server/tests`.

mod common;

use common::{failure, orthomask};
#[cfg(unix)]
use common::{services_json, terminate};
use std::io::{Read, Write};
use std::process::{Command, Stdio};

#[test]
fn bad_arguments_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let cases: [(&[&str], &str); 3] = [
        (
            &[
                "msp",
                "--listen",
                "127.0.0.1:0",
                "--collector",
                "collector.example",
            ],
            "--collector \"collector.example\" is not an http:// or https:// URL",
        ),
        (
            &["all", "--port", "0", "--right-services", "1", "--no-web"],
            "at least two right-masking services",
        ),
        (
            &[
                "right",
                "--index",
                "0",
                "--listen",
                "127.0.0.1:0",
                "--msp",
                "http://m",
                "--collector",
                "http://c",
                "--rate-per-second",
                "0",
            ],
            "--rate-per-second",
        ),
    ];
    for (args, expected) in cases {
        let (service, rest) = args.split_first().unwrap();
        let e = failure(&orthomask(
            &[&["serve", service, "--data-dir", d][..], rest].concat(),
        ));
        assert!(e.contains(expected), "serve {}: {e}", args.join(" "));
    }
}

fn get(url: &str, path: &str) -> String {
    request(url, "GET", path, "", "")
}

/// One HTTP/1.1 request on a fresh connection; `headers` are extra lines ending in `\r\n`.
fn request(url: &str, method: &str, path: &str, headers: &str, body: &str) -> String {
    let address = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n{headers}\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

/// The survey keys a service's key file holds: survey id → hex key.
fn key_file(path: &std::path::Path) -> (String, serde_json::Map<String, serde_json::Value>) {
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    (
        file["role"].as_str().unwrap().to_owned(),
        file["surveys"].as_object().unwrap().clone(),
    )
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
    let urls = services_json(dir.path(), &mut child);
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
        5,
        "collector, provider and three right-masking services (the default)"
    );
    for url in &all {
        let answer = get(url, "/api/health");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.contains("nosniff"));
    }
    let answer = get(&all[0], "/api/admin/surveys");
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    // A survey gives the collector and the provider each a key of their own, in their own files.
    let admin = std::fs::read_to_string(dir.path().join("admin-token")).unwrap();
    let draft = r#"{"id": "keys", "title": "Keys", "consent": "Test.",
        "questions": [{"id": "age", "label": "Age", "kind": "integer", "min": 18, "max": 90}],
        "cohort_size": 20, "share_mode": false, "invitations": true}"#;
    let created = request(
        &all[0],
        "POST",
        "/api/admin/surveys",
        &format!(
            "Authorization: Bearer {}\r\nContent-Type: application/json\r\n",
            admin.trim()
        ),
        draft,
    );
    assert!(created.starts_with("HTTP/1.1 201"), "{created}");
    let (collector_role, collector_keys) =
        key_file(&dir.path().join("collector").join("collector-keys.json"));
    let (msp_role, msp_keys) = key_file(&dir.path().join("msp").join("msp-keys.json"));
    assert_eq!(
        (collector_role.as_str(), msp_role.as_str()),
        ("collector", "msp")
    );
    assert!(collector_keys.contains_key("keys") && msp_keys.contains_key("keys"));
    assert_ne!(collector_keys["keys"], msp_keys["keys"]);
    // Separate stores and separate key files.
    for (service, db) in [
        ("collector", "collector.sqlite3"),
        ("msp", "msp.sqlite3"),
        ("right-0", "right.sqlite3"),
        ("right-1", "right.sqlite3"),
        ("right-2", "right.sqlite3"),
    ] {
        assert!(dir.path().join(service).join(db).exists(), "{service}");
    }
    let mut stdout = child.stdout.take().unwrap();
    let status = terminate(child);
    assert!(status.success());
    let mut out = String::new();
    stdout.read_to_string(&mut out).unwrap();
    assert!(
        out.contains("data collector listening on http://127.0.0.1:"),
        "{out}"
    );
    assert!(out.trim_end().ends_with("stopped"), "{out}");
    // Issue 12 §1: the live demonstrations, one line each (share mode's too: three right services).
    for demo in [
        "leaps-demo",
        "wellbeing-optional",
        "habits-branching",
        "shares-demo",
    ] {
        assert!(
            out.contains(&format!("demonstration {demo} created: http://127.0.0.1:")),
            "{out}"
        );
    }
    for service in ["collector", "msp", "right-0", "right-1"] {
        let wal = std::fs::read_dir(dir.path().join(service))
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().ends_with("-wal"));
        assert!(!wal, "{service}: the store was not closed cleanly");
    }
}

/// Start `orthomask serve <args>` and return it with the URL it announces on its first line.
#[cfg(unix)]
fn start(args: &[&str]) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_orthomask"))
        .arg("serve")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split(" listening on ")
        .nth(1)
        .unwrap_or_else(|| panic!("no listening line: {line:?}"))
        .trim()
        .to_owned();
    (child, url)
}

/// Each service also runs on its own, as on separate machines: `serve collector`, `serve msp` and
/// `serve right` start from the command line, answer their health checks with their role, keep
/// their stores apart, and stop cleanly on SIGTERM.
#[cfg(unix)]
#[test]
fn each_service_runs_alone_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let sub = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let (collector_dir, msp_dir, right_dir) = (sub("c"), sub("m"), sub("r"));
    let listen = ["--listen", "127.0.0.1:0"];
    let (collector, collector_url) = start(
        &[
            &["collector", "--data-dir", &collector_dir][..],
            &listen,
            &["--msp", "http://127.0.0.1:9", "--no-web"],
        ]
        .concat(),
    );
    let (msp, msp_url) = start(
        &[
            &["msp", "--data-dir", &msp_dir][..],
            &listen,
            &["--collector", &collector_url],
        ]
        .concat(),
    );
    let (right, right_url) = start(
        &[
            &["right", "--index", "0", "--data-dir", &right_dir][..],
            &listen,
            &["--msp", &msp_url, "--collector", &collector_url],
        ]
        .concat(),
    );
    for (url, role) in [
        (&collector_url, "data collector"),
        (&msp_url, "masking service provider"),
        (&right_url, "right-masking service"),
    ] {
        let answer = get(url, "/api/health");
        assert!(
            answer.starts_with("HTTP/1.1 200") && answer.contains(role),
            "{answer}"
        );
    }
    for (path, db) in [
        (&collector_dir, "collector.sqlite3"),
        (&msp_dir, "msp.sqlite3"),
        (&right_dir, "right.sqlite3"),
    ] {
        let files: Vec<String> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f.ends_with(".sqlite3"))
            .collect();
        assert_eq!(files, [db], "{path}");
    }
    for child in [right, msp, collector] {
        assert!(terminate(child).success());
    }
}
