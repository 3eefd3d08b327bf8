//! Issue 27 §3 and §4: `orthomask audit --app URL` fetches every file a served app's service
//! worker names and says "same build" for the build it was given, or names the file that differs;
//! the digest is the one coreutils compute (`sha256sum … | LC_ALL=C sort -k2 | sha256sum`).

mod common;

use common::{failure, ok, orthomask};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

/// A small build: what `scripts/build-web.sh` writes, in miniature (the service worker names
/// every file, `./` being the page).
fn write_build(dir: &Path) {
    std::fs::create_dir_all(dir.join("surveys")).unwrap();
    let files: [(&str, &[u8]); 5] = [
        (
            "sw.js",
            b"const CACHE = 'v';\nconst APP_FILES = [\n  './',\n  'index.html',\n  'app.js',\n  'app_bg.wasm',\n  'surveys/demo.json',\n];\n",
        ),
        ("index.html", b"<!DOCTYPE html><script type=module src=app.js></script>"),
        ("app.js", b"export default function init() {}\n"),
        ("app_bg.wasm", b"\0asm\x01\0\0\0 module bytes"),
        ("surveys/demo.json", b"{\"id\": \"demo\"}\n"),
    ];
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

/// Serve the files of `dir` (read at each request, so a test may alter them) on loopback with
/// HTTP/1.0, as a static host would; anything else is 404. Returns the root URL.
fn serve(dir: &Path) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let dir = dir.to_owned();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut line = String::new();
            if BufReader::new(&stream).read_line(&mut line).is_err() {
                continue;
            }
            let path = line
                .split_whitespace()
                .nth(1)
                .unwrap_or("/")
                .trim_start_matches('/');
            let answer = match std::fs::read(dir.join(path)) {
                Ok(body) if !path.contains("..") => {
                    let mut a =
                        format!("HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n", body.len())
                            .into_bytes();
                    a.extend(body);
                    a
                }
                _ => b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec(),
            };
            let _ = stream.write_all(&answer);
        }
    });
    url
}

/// The build digest as coreutils compute it in `dir`: independent of the code under test.
fn coreutils_digest(dir: &Path) -> String {
    let out = Command::new("sh")
        .arg("-c")
        .arg("sha256sum sw.js index.html app.js app_bg.wasm surveys/demo.json | LC_ALL=C sort -k2 | sha256sum")
        .current_dir(dir)
        .output()
        .expect("sha256sum runs");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}

#[test]
fn the_served_build_is_the_published_one() {
    let tmp = tempfile::tempdir().unwrap();
    let (local, served) = (tmp.path().join("dist"), tmp.path().join("served"));
    write_build(&local);
    write_build(&served);
    let url = serve(&served);
    let digest = coreutils_digest(&local);

    let same = ok(&orthomask(&[
        "audit",
        "--app",
        &url,
        "--build",
        local.to_str().unwrap(),
    ]));
    assert_eq!(same.trim(), format!("same build {digest}"));
    let same = ok(&orthomask(&["audit", "--app", &url, "--expect", &digest]));
    assert_eq!(same.trim(), format!("same build {digest}"));
    let json: serde_json::Value = serde_json::from_str(&ok(&orthomask(&[
        "audit", "--app", &url, "--expect", &digest, "--json",
    ])))
    .unwrap();
    assert_eq!(
        (json["same_build"].as_bool(), json["digest"].as_str()),
        (Some(true), Some(digest.as_str()))
    );

    // One byte of the module changed on the server: not the same build, and the file is named.
    let mut wasm = std::fs::read(served.join("app_bg.wasm")).unwrap();
    *wasm.last_mut().unwrap() ^= 1;
    std::fs::write(served.join("app_bg.wasm"), wasm).unwrap();
    let altered = orthomask(&["audit", "--app", &url, "--build", local.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&altered.stdout).into_owned();
    assert!(
        said.starts_with(&format!("not the same build: {url} serves ")),
        "{said}"
    );
    assert!(said.trim_end().ends_with("; app_bg.wasm differs"), "{said}");
    assert!(failure(&altered).contains("does not serve the expected build"));
    let altered = orthomask(&["audit", "--app", &url, "--expect", &digest]);
    assert!(failure(&altered).contains("does not serve the expected build"));
    assert!(String::from_utf8_lossy(&altered.stdout).contains(&format!("expected {digest}")));
}

#[test]
fn a_file_the_service_worker_names_but_nobody_serves_is_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let served = tmp.path().join("served");
    write_build(&served);
    std::fs::remove_file(served.join("app.js")).unwrap();
    let url = serve(&served);
    let e = failure(&orthomask(&["audit", "--app", &url, "--expect", "00"]));
    assert_eq!(e, format!("error: {url}app.js: answered 404 Not Found"));
    // An address that is not HTTP, and a build directory that lacks a file.
    let e = failure(&orthomask(&[
        "audit",
        "--app",
        "file:///etc",
        "--expect",
        "00",
    ]));
    assert!(e.contains("not an http:// or https:// address"), "{e}");
    let whole = tmp.path().join("whole");
    write_build(&whole);
    let url = serve(&whole);
    let e = failure(&orthomask(&[
        "audit",
        "--app",
        &url,
        "--build",
        served.to_str().unwrap(),
    ]));
    let missing = format!("error: {}: cannot read: ", served.join("app.js").display());
    assert!(e.starts_with(&missing), "{e}");
}

/// Issue 27 §3: `--record` appends the commit a clean build was made from to `builds.json`
/// (what `scripts/reproduce.sh COMMIT --record FILE` runs), and `--builds` names the public
/// commit of the served build, or fails when none builds it.
#[test]
fn builds_json_records_and_names_the_public_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let (local, served) = (tmp.path().join("dist"), tmp.path().join("served"));
    write_build(&local);
    write_build(&served);
    let url = serve(&served);
    let digest = coreutils_digest(&local);
    let builds = tmp.path().join("release").join("builds.json");
    let builds_arg = builds.to_str().unwrap();
    let (c1, c2) = ("1".repeat(40), "2".repeat(40));
    // An earlier public build, recorded by hand in the documented format.
    std::fs::create_dir_all(builds.parent().unwrap()).unwrap();
    let earlier = format!(
        "[\n{{\"commit\": \"{c1}\", \"digest\": \"{}\"}}\n]\n",
        "e".repeat(64)
    );
    std::fs::write(&builds, &earlier).unwrap();

    let recorded = ok(&orthomask(&[
        "audit",
        "--app",
        &url,
        "--build",
        local.to_str().unwrap(),
        "--builds",
        builds_arg,
        "--record",
        &c2,
    ]));
    assert_eq!(
        recorded.trim(),
        format!("same build {digest}, public commit {c2}")
    );
    let text = std::fs::read_to_string(&builds).unwrap();
    assert_eq!(
        text,
        format!(
            "[\n{{\"commit\": \"{c1}\", \"digest\": \"{}\"}},\n{{\"commit\": \"{c2}\", \"digest\": \"{digest}\"}}\n]\n",
            "e".repeat(64)
        )
    );
    // An auditor with only the digest finds the commit.
    let named = ok(&orthomask(&[
        "audit", "--app", &url, "--expect", &digest, "--builds", builds_arg,
    ]));
    assert_eq!(
        named.trim(),
        format!("same build {digest}, public commit {c2}")
    );

    // Recording the earlier commit with this digest would rewrite its entry: refused, file kept.
    let e = failure(&orthomask(&[
        "audit",
        "--app",
        &url,
        "--build",
        local.to_str().unwrap(),
        "--builds",
        builds_arg,
        "--record",
        &c1,
    ]));
    assert!(
        e.contains(&format!("commit {c1} is recorded with digest")),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&builds).unwrap(), text);

    // A served build no public commit builds.
    std::fs::write(&builds, &earlier).unwrap();
    let e = failure(&orthomask(&[
        "audit", "--app", &url, "--expect", &digest, "--builds", builds_arg,
    ]));
    assert_eq!(
        e,
        format!(
            "error: {digest} is not the build of any public commit in {}",
            builds.display()
        )
    );
}
