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

/// An Ed25519 public key (RFC 8032 §7.1, test 1): a valid point for the cases whose error is
/// elsewhere.
const VALID_KEY: &str = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";

#[test]
fn bad_arguments_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let cases: [(&[&str], &str); 8] = [
        (
            &[
                "msp",
                "--listen",
                "127.0.0.1:0",
                "--collector",
                "collector.example",
                "--collector-key",
                VALID_KEY,
            ],
            "--collector \"collector.example\" is not an http:// or https:// URL",
        ),
        (
            &["all", "--port", "0", "--right-services", "2", "--no-web"],
            "at least 3 right-masking services",
        ),
        (
            &[
                "msp",
                "--listen",
                "127.0.0.1:0",
                "--collector",
                "http://c",
                "--collector-key",
                "not-a-key",
            ],
            "an identity key is 64 hex digits",
        ),
        (
            &[
                "msp",
                "--listen",
                "127.0.0.1:0",
                "--collector",
                "http://c",
                "--collector-key",
                VALID_KEY,
                "--right",
                "http://r0",
                "--right",
                "http://r1",
                "--right",
                "http://r2",
            ],
            "3 right-masking services are named but 0 of their identity keys are pinned",
        ),
        (
            &[
                "collector",
                "--listen",
                "127.0.0.1:0",
                "--msp",
                "http://m",
                "--msp-key",
                VALID_KEY,
                "--right",
                "http://r0",
                "--right",
                "http://r1",
                "--right-key",
                VALID_KEY,
                "--right-key",
                VALID_KEY,
                "--no-web",
            ],
            "2 right-masking services are named (--right), but share mode needs at least 3",
        ),
        (&["identity", "--party", "right-01"], "is not a party"),
        (
            &[
                "msp",
                "--listen",
                "http://127.0.0.1:9",
                "--collector",
                "http://c",
                "--collector-key",
                VALID_KEY,
            ],
            "takes host:port",
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
                "--msp-key",
                VALID_KEY,
                "--collector",
                "http://c",
                "--collector-key",
                VALID_KEY,
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

/// A party's identity key, as its operator prints it to hand to its peers' operators
/// (`orthomask serve identity`): made once in the data directory, the same every time after.
fn identity(data_dir: &str, party: &str) -> String {
    let args = [
        "serve",
        "identity",
        "--data-dir",
        data_dir,
        "--party",
        party,
    ];
    let first = common::ok(&orthomask(&args));
    assert_eq!(first.trim().len(), 64, "{first}");
    assert_eq!(common::ok(&orthomask(&args)), first, "the same key again");
    first.trim().to_owned()
}

/// A loopback port free now (for a service that its peer must know before it starts).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Each service also runs on its own, as on separate machines, by separate operators: each
/// prints its identity key (`serve identity`), the others pin it, and `serve collector`,
/// `serve msp` and `serve right` start from the command line, answer their health checks with
/// their role, keep their stores apart, and stop cleanly on SIGTERM. A survey created at the
/// collector is registered at the provider, which believes it only because the collector signed
/// it with the key the provider's operator pinned.
#[cfg(unix)]
#[test]
fn each_service_runs_alone_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let sub = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let (collector_dir, msp_dir, right_dir) = (sub("c"), sub("m"), sub("r"));
    let collector_key = identity(&collector_dir, "collector");
    let msp_key = identity(&msp_dir, "provider");
    let right_key = identity(&right_dir, "right-0");
    // The other two right-masking services of the ring, never started: their operators' keys.
    let right_1 = identity(&sub("r1"), "right-1");
    let right_2 = identity(&sub("r2"), "right-2");
    let listen = ["--listen", "127.0.0.1:0"];
    let collector_address = format!("127.0.0.1:{}", free_port());
    let collector_url = format!("http://{collector_address}");
    let (msp, msp_url) = start(
        &[
            &["msp", "--data-dir", &msp_dir][..],
            &listen,
            &[
                "--collector",
                &collector_url,
                "--collector-key",
                &collector_key,
            ],
        ]
        .concat(),
    );
    let (collector, announced) = start(&[
        "collector",
        "--data-dir",
        &collector_dir,
        "--listen",
        &collector_address,
        "--msp",
        &msp_url,
        "--msp-key",
        &msp_key,
        "--no-web",
    ]);
    assert_eq!(announced, collector_url);
    let (right, right_url) = start(
        &[
            &["right", "--index", "0", "--data-dir", &right_dir][..],
            &listen,
            &[
                "--msp",
                &msp_url,
                "--msp-key",
                &msp_key,
                "--collector",
                &collector_url,
                "--collector-key",
                &collector_key,
                "--right",
                "http://127.0.0.1:9",
                "--right",
                "http://127.0.0.1:10",
                "--right",
                "http://127.0.0.1:11",
                "--right-key",
                &right_key,
                "--right-key",
                &right_1,
                "--right-key",
                &right_2,
            ],
        ]
        .concat(),
    );
    let admin_token = std::fs::read_to_string(dir.path().join("c").join("admin-token")).unwrap();
    let draft = r#"{"id": "apart", "title": "Apart", "consent": "Masked on this device.",
        "questions": [{"id": "smoker", "label": "Do you smoke?", "kind": "yes_no"},
                      {"id": "age", "label": "Age", "kind": "integer", "min": 18, "max": 90}],
        "cohort_size": 10, "share_mode": false, "invitations": true}"#;
    let auth = format!(
        "Authorization: Bearer {}\r\nContent-Type: application/json\r\n",
        admin_token.trim()
    );
    let created = request(&collector_url, "POST", "/api/admin/surveys", &auth, draft);
    assert!(created.starts_with("HTTP/1.1 201"), "{created}");
    // The provider's directory now holds its survey keys: asking it for the collector's key is
    // refused, rather than making a second key there.
    let e = failure(&orthomask(&[
        "serve",
        "identity",
        "--data-dir",
        &msp_dir,
        "--party",
        "collector",
    ]));
    assert!(
        e.contains("is the data directory of the masking service provider"),
        "{e}"
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
