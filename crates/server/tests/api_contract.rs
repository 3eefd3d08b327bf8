//! The HTTP contract at its edges: validation, exactly-once uploads, authentication, CORS, rate
//! limits, the web app's Content-Security-Policy, invitations and withheld cohorts. Every refusal
//! is a status code with one line of JSON.

mod common;

use common::*;
use orthomask_server::Limits;
use orthomask_server::peers::Party;
use reqwest::Method;
use serde_json::json;

/// The invitation behind `link` is used up: taking a place with it is refused, saying so.
async fn assert_used_up(http: &reqwest::Client, link: &str) {
    let (status, body) = take_place(http, link).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("already been used"), "{body}");
}

/// The `Access-Control-Allow-Origin` a service answers to a preflight from `origin` for a
/// `POST` to `url` (with `Content-Type` among the request's headers when `content_type`).
async fn allowed_origin(
    http: &reqwest::Client,
    url: &str,
    origin: &str,
    content_type: bool,
) -> Option<String> {
    let mut preflight = http
        .request(Method::OPTIONS, url)
        .header("origin", origin)
        .header("access-control-request-method", "POST");
    if content_type {
        preflight = preflight.header("access-control-request-headers", "content-type");
    }
    let r = preflight.send().await.unwrap();
    r.headers()
        .get("access-control-allow-origin")
        .map(|v| v.to_str().unwrap().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_are_validated_and_stored_exactly_once() {
    let (_dir, all, http) = started(0).await;
    let created = create_survey(&http, &all, &draft("v", 12, false, true)).await;
    let invited = links(&http, &all, &created, 3).await;
    let (def, uploads) = prepare(&http, &invited[0], 1, &answers(1)).await;
    let (url, upload) = uploads[0].clone();
    // A second participant of cohort 0 who has not sent yet.
    let (_, waiting) = prepare(&http, &invited[1], 3, &answers(3)).await;

    // Shape and content errors.
    let mut short = upload.clone();
    short.values.pop();
    let mut bad_token = upload.clone();
    bad_token.token = "short".into();
    let mut wrong_cohort = upload.clone();
    wrong_cohort.cohort = 7;
    let unknown = url.replace("/v/", "/nope/");
    for (what, to, sent, status, naming) in [
        ("a short vector", &url, &short, 400, "expects 464"),
        ("a short token", &url, &bad_token, 400, "token"),
        // The credential names cohort 0: another cohort is refused before anything is stored.
        (
            "another cohort",
            &url,
            &wrong_cohort,
            403,
            "cohort 0, not 7",
        ),
        // A survey not registered is answered as a credential that does not verify on a real
        // one: an upload cannot tell whether a survey exists (issue 43 §6).
        (
            "an unknown survey",
            &unknown,
            &upload,
            403,
            "not signed by this survey's collector",
        ),
    ] {
        refused(what, &post_upload(&http, to, sent).await, status, naming);
    }
    let mut extra = serde_json::to_value(&upload).unwrap();
    extra["name"] = json!("Alice");
    let huge = format!(
        "{{\"survey\":\"v\",\"cohort\":0,\"token\":\"tttttttttttttttttt\",\"values\":[{}0]}}",
        "1.0,".repeat(700_000)
    );
    for (what, text, status, naming) in [
        ("an unknown field", extra.to_string(), 422, "unknown field"),
        ("not JSON", "{not json".to_owned(), 400, ""),
        // The service answers 413 before reading the rest and closes the connection
        // (`post_text` does not reuse it).
        ("a body too big", huge, 413, ""),
    ] {
        refused(what, &post_text(&http, &url, text).await, status, naming);
    }
    let no_type = http.post(&url).body("{}").send().await.unwrap();
    assert_eq!(no_type.status().as_u16(), 415);
    // JSON cannot carry NaN; an overflowing literal is refused too.
    let overflow =
        serde_json::to_string(&upload)
            .unwrap()
            .replacen("\"values\":[", "\"values\":[1e999,", 1);
    let (status, body) = post_text(&http, &url, overflow).await;
    assert!((400..500).contains(&status), "{status} {body}");

    // Exactly once per token.
    let (status, first) = post_upload(&http, &url, &upload).await;
    assert_eq!(status, 201, "{first}");
    assert_eq!(first["upload_hash"], upload.hash());
    let (status, again) = post_upload(&http, &url, &upload).await;
    assert_eq!(status, 200);
    assert_eq!(again, first, "a retry gets the same receipt");
    let mut changed = upload.clone();
    changed.values[0] += 1.0;
    let answer = post_upload(&http, &url, &changed).await;
    refused("a changed upload", &answer, 409, "idempotency token");

    // Closed cohorts refuse uploads; a retry of an acknowledged upload still gets its receipt.
    let (status, _) = admin_post(&http, &all, "/api/admin/surveys/v/cohorts/0/close").await;
    assert_eq!(status, 200);
    let (_, late) = prepare(&http, &invited[2], 2, &answers(2)).await;
    assert_eq!(
        late[0].1.cohort, 1,
        "the next participant joins the next cohort"
    );
    let answer = post_upload(&http, &url, &waiting[0].1).await;
    refused("an upload to a closed cohort", &answer, 409, "closed");
    let (status, again) = post_upload(&http, &url, &upload).await;
    assert_eq!((status, &again), (200, &first));
    assert_eq!(def.masking.cohort, 0);
    all.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_and_peer_endpoints_need_their_tokens() {
    let (dir, all, http) = started(0).await;
    let surveys = format!("{}/api/admin/surveys", all.collector.url());
    let body = draft("t", 12, false, true);
    // A peer's signature is not the admin token, and the admin token is no peer's signature.
    let collector = identity_of(dir.path(), Party::Collector);
    let registration = json!({"survey": "x", "answers": 1, "qa_constant": 888.0, "p2": 30,
        "sigma": 10.0, "cohort_size": 10, "min_cohort_size": 3, "share_services": 0});
    let peer_url = format!("{}/api/peer/surveys/x", all.msp.url());
    let result = format!(
        "{}/api/peer/surveys/x/cohorts/0/result",
        all.collector.url()
    );
    let wrong = "x-wrong-token-0000";
    // The admin API: no token, a wrong one, a request the collector's own identity signs.
    for (token, naming) in [(None, "admin token"), (Some(wrong), "")] {
        let answer = send(&http, Method::POST, &surveys, Some(&body), token).await;
        refused(
            &format!("a draft with token {token:?}"),
            &answer,
            401,
            naming,
        );
    }
    let answer = send_signed(
        &http,
        &collector,
        Party::Collector,
        Method::POST,
        &surveys,
        Some(&body),
    )
    .await;
    refused("a draft signed as a peer", &answer, 401, "admin token");
    let answer = send(&http, Method::GET, &surveys, None, Some(wrong)).await;
    refused("the surveys with a wrong token", &answer, 401, "");
    // The peer API: no signature, the admin token.
    for token in [None, Some(all.admin_token.as_str())] {
        let answer = send(&http, Method::PUT, &peer_url, Some(&registration), token).await;
        refused(
            &format!("a registration with token {token:?}"),
            &answer,
            401,
            "signed by a pinned peer",
        );
    }
    let answer = send(&http, Method::PUT, &result, Some(&json!({})), None).await;
    refused(
        "a cohort result without a signature",
        &answer,
        401,
        "signed",
    );

    // Bad drafts: one line naming the field; duplicates: 409.
    let mut bad = draft("t", 4, false, true);
    let answer = admin(&http, &all, Method::POST, "/api/admin/surveys", Some(&bad)).await;
    refused("cohorts of 4", &answer, 400, "p1 < n");
    bad["cohort_size"] = json!(12);
    bad["questions"][0]["kind"] = json!("essay");
    let answer = admin(&http, &all, Method::POST, "/api/admin/surveys", Some(&bad)).await;
    refused("an unknown question kind", &answer, 422, "");
    create_survey(&http, &all, &body).await;
    let answer = admin(&http, &all, Method::POST, "/api/admin/surveys", Some(&body)).await;
    refused("a survey id taken", &answer, 409, "");
    // Unknown paths and methods: JSON too.
    let answer = send(
        &http,
        Method::GET,
        &format!("{}/api/nothing", all.msp.url()),
        None,
        None,
    )
    .await;
    refused("an unknown path", &answer, 404, "");
    let answer = send(
        &http,
        Method::DELETE,
        &format!("{}/api/surveys/t/uploads", all.msp.url()),
        None,
        None,
    )
    .await;
    refused("an unknown method", &answer, 405, "");
    all.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_admits_only_the_configured_origin() {
    let (_dir, all, http) = started(0).await;
    let upload_url = format!("{}/api/surveys/any/uploads", all.msp.url());
    for (origin, allowed) in [
        (all.collector.url().to_owned(), true),
        ("http://evil.example".to_owned(), false),
    ] {
        let header = allowed_origin(&http, &upload_url, &origin, true).await;
        assert_eq!(
            header.as_deref() == Some(origin.as_str()),
            allowed,
            "{origin}: {header:?}"
        );
        if !allowed {
            assert!(header.is_none());
        }
    }
    // The admin API answers no cross-origin request at all.
    let admin_url = format!("{}/api/admin/surveys", all.collector.url());
    let header = allowed_origin(&http, &admin_url, all.msp.url(), false).await;
    assert!(header.is_none(), "{header:?}");
    all.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_over_their_rate_get_429_with_retry_after() {
    let (_dir, all, http) = started_with_limits(Limits {
        rate_per_second: 0.5,
        rate_burst: 3,
        ..Limits::default()
    })
    .await;
    let url = format!("{}/api/health", all.msp.url());
    for _ in 0..3 {
        let (status, _) = send(&http, Method::GET, &url, None, None).await;
        assert_eq!(status, 200);
    }
    let r = http.get(&url).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 429);
    // At 0.5 requests per second the next token is at most 2 s away.
    let wait: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=2).contains(&wait), "Retry-After {wait}");
    one_line_error(&serde_json::from_str(&r.text().await.unwrap()).unwrap());
    // Another service keeps its own buckets.
    let (status, _) = send(
        &http,
        Method::GET,
        &format!("{}/api/health", all.collector.url()),
        None,
        None,
    )
    .await;
    assert_eq!(status, 200);
    all.stop().await;
}

/// Issue 10 §7, the attack: behind a trusted proxy a client sends `X-Forwarded-For` lines of its
/// own, a new address each time, to get a fresh rate-limit bucket per request. The proxy appends
/// the address it saw (here as a header line of its own); the services count that one, so the
/// client is limited all the same, while another real client keeps its own bucket.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_forwarded_addresses_do_not_escape_the_rate_limit() {
    let (_dir, all, http) = started_with_limits(Limits {
        rate_per_second: 0.001,
        rate_burst: 3,
        trust_forwarded: true,
        ..Limits::default()
    })
    .await;
    let url = format!("{}/api/health", all.msp.url());
    let request = |forged: String, seen_by_proxy: &'static str| {
        http.get(&url)
            .header("x-forwarded-for", forged)
            .header("x-forwarded-for", seen_by_proxy)
            .send()
    };
    for i in 0..3 {
        let r = request(format!("10.0.0.{i}"), "203.0.113.7").await.unwrap();
        assert_eq!(r.status().as_u16(), 200);
    }
    let r = request("10.0.0.99".into(), "203.0.113.7").await.unwrap();
    assert_eq!(
        r.status().as_u16(),
        429,
        "a forged first entry escaped the limit"
    );
    let r = request("10.0.0.99".into(), "203.0.113.8").await.unwrap();
    assert_eq!(
        r.status().as_u16(),
        200,
        "another real client has its own bucket"
    );
    all.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_app_is_served_with_a_strict_content_security_policy() {
    let dir = tempfile::tempdir().unwrap();
    let dist = dir.path().join("dist");
    std::fs::create_dir(&dist).unwrap();
    let bootstrap = "\nimport init, * as bindings from './orthomask-web.js';\nconst wasm = await init({ module_or_path: './orthomask-web_bg.wasm' });\n";
    std::fs::write(
        dist.join("index.html"),
        format!("<!DOCTYPE html><html><head><script type=\"module\">{bootstrap}</script></head><body></body></html>"),
    )
    .unwrap();
    std::fs::write(dist.join("orthomask-web.js"), "export default 1;").unwrap();
    std::fs::write(
        dist.join("orthomask-web-0123456789abcdef_bg.wasm"),
        b"\0asm\x01\0\0\0",
    )
    .unwrap();
    let all = start(&dir.path().join("data"), 3, Some(&dist)).await;
    let http = client();
    let collector = all.collector.url();
    let get = |path: &str| http.get(format!("{collector}{path}")).send();
    let r = get("/").await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let csp = r.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    use base64::Engine as _;
    use sha2::Digest as _;
    let hash = base64::engine::general_purpose::STANDARD
        .encode(sha2::Sha256::digest(bootstrap.as_bytes()));
    assert!(
        csp.contains(&format!(
            "script-src 'self' 'wasm-unsafe-eval' 'sha256-{hash}'"
        )),
        "{csp}"
    );
    assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"));
    // 'unsafe-inline' only for style attributes (the plots' text measurement), never for code.
    let without_attributes = csp.replace("style-src-attr 'unsafe-inline';", "");
    assert!(
        !without_attributes.contains("unsafe-inline")
            && !csp.contains("https:")
            && !csp.contains('*'),
        "{csp}"
    );
    for service in std::iter::once(&all.msp).chain(&all.rights) {
        assert!(
            csp.contains(service.url()),
            "connect-src lists {}",
            service.url()
        );
    }
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    let wasm = get("/orthomask-web-0123456789abcdef_bg.wasm")
        .await
        .unwrap();
    assert_eq!(wasm.headers()["content-type"], "application/wasm");
    for path in ["/../Cargo.toml", "/.hidden", "/missing.js", "/%2e%2e/x"] {
        let r = get(path).await.unwrap();
        assert_eq!(r.status().as_u16(), 404, "{path}");
    }
    let answer = send(
        &http,
        Method::GET,
        &format!("{collector}/api/nothing"),
        None,
        None,
    )
    .await;
    refused("an unknown path", &answer, 404, "");
    all.stop().await;
}

/// Issue 25: the app's files are served as a CDN would — the Brotli or gzip file the build wrote
/// beside each one to a browser that accepts it (`Vary: accept-encoding`), an `ETag` that a
/// revalidation answers with 304 and no body, Range, `immutable` for content-hashed names and
/// `no-cache` for the rest, the Content-Security-Policy on every file, and a JSON 404 for a file
/// the app does not have. The encodings here are made with independent bytes (a marker per
/// encoding), so the test sees which file was chosen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_app_is_served_compressed_revalidated_and_cached() {
    let dir = tempfile::tempdir().unwrap();
    let dist = dir.path().join("dist");
    std::fs::create_dir(&dist).unwrap();
    let html = "<!DOCTYPE html><html><head><script type=\"module\">import('./a.js');</script></head></html>";
    std::fs::write(dist.join("index.html"), html).unwrap();
    let module = "orthomask-participant-0123456789abcdef_bg.wasm";
    std::fs::write(dist.join(module), b"\0asm\x01\0\0\0plain").unwrap();
    std::fs::write(dist.join(format!("{module}.br")), b"brotli-bytes").unwrap();
    std::fs::write(dist.join(format!("{module}.gz")), b"gzip-bytes").unwrap();
    std::fs::write(dist.join("sw.js"), "const APP_FILES = ['./'];").unwrap();
    let all = start(&dir.path().join("data"), 3, Some(&dist)).await;
    let http = client();
    let collector = all.collector.url();
    let get = |path: &str, headers: &[(&str, &str)]| {
        let mut request = http.get(format!("{collector}{path}"));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send()
    };

    // The encoding the browser accepts, Brotli first; the file itself to one that accepts none.
    for (accepts, encoding, body) in [
        ("gzip, deflate, br, zstd", Some("br"), &b"brotli-bytes"[..]),
        ("gzip", Some("gzip"), &b"gzip-bytes"[..]),
        ("identity", None, &b"\0asm\x01\0\0\0plain"[..]),
    ] {
        let r = get(&format!("/{module}"), &[("accept-encoding", accepts)])
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200, "{accepts}");
        assert_eq!(
            r.headers()
                .get("content-encoding")
                .map(|v| v.to_str().unwrap()),
            encoding,
            "{accepts}"
        );
        assert_eq!(r.headers()["content-type"], "application/wasm");
        assert_eq!(r.headers()["vary"], "accept-encoding");
        assert_eq!(
            r.headers()["cache-control"],
            "public, max-age=31536000, immutable"
        );
        assert!(r.headers().contains_key("content-security-policy"));
        assert_eq!(&r.bytes().await.unwrap()[..], body, "{accepts}");
    }

    // index.html: no-cache, and revalidated by its ETag with a 304 and no body. It alone asks
    // the browser to open a connection for the module at once (issue 25).
    let first = get("/", &[]).await.unwrap();
    assert_eq!(first.headers()["cache-control"], "no-cache");
    assert_eq!(first.headers()["link"], "</>; rel=preconnect");
    let other = get(&format!("/{module}"), &[]).await.unwrap();
    assert!(!other.headers().contains_key("link"));
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    assert_eq!(first.text().await.unwrap(), html);
    let again = get("/", &[("if-none-match", &etag)]).await.unwrap();
    assert_eq!(again.status().as_u16(), 304);
    assert_eq!(again.headers()["etag"].to_str().unwrap(), etag);
    assert!(again.bytes().await.unwrap().is_empty());
    let stale = get("/", &[("if-none-match", "\"another-version\"")])
        .await
        .unwrap();
    assert_eq!(stale.status().as_u16(), 200);
    assert_eq!(
        get("/sw.js", &[]).await.unwrap().headers()["cache-control"],
        "no-cache"
    );

    // Range, on the file itself.
    let range = get(
        &format!("/{module}"),
        &[("range", "bytes=1-3"), ("accept-encoding", "identity")],
    )
    .await
    .unwrap();
    assert_eq!(range.status().as_u16(), 206);
    assert_eq!(&range.bytes().await.unwrap()[..], b"asm");

    // A new index.html gets its own policy (the policy is kept per version of the file).
    let policy = |r: &reqwest::Response| {
        r.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .to_owned()
    };
    let before = policy(&get("/", &[]).await.unwrap());
    std::fs::write(
        dist.join("index.html"),
        "<!DOCTYPE html><html><head><script type=\"module\">import('./b.js');</script></head></html>",
    )
    .unwrap();
    let after = policy(&get("/", &[]).await.unwrap());
    assert_ne!(before, after, "the policy follows index.html");
    // Without an index.html the app is "not built", and a file still comes with the strictest
    // policy (no inline code allowed).
    std::fs::remove_file(dist.join("index.html")).unwrap();
    let unbuilt = get("/", &[]).await.unwrap();
    assert_eq!(unbuilt.status().as_u16(), 404);
    assert!(unbuilt.text().await.unwrap().contains("not built"));
    let strict = policy(&get(&format!("/{module}"), &[]).await.unwrap());
    assert!(
        strict.starts_with("default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; "),
        "{strict}"
    );

    // Not a file of the app: a JSON 404, never a directory listing or another file.
    for path in ["/missing.wasm", "/surveys", "/surveys/", "/index.html/x"] {
        let r = get(path, &[]).await.unwrap();
        assert_eq!(r.status().as_u16(), 404, "{path}");
        let body: serde_json::Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
        assert!(body["error"].is_string(), "{path}: {body}");
    }
    // Only GET and HEAD read files.
    let post = http
        .post(format!("{collector}/index.html"))
        .send()
        .await
        .unwrap();
    assert_eq!(post.status().as_u16(), 405);
    all.stop().await;
}

/// Issue 27 §2: the deployment names the build digest of the app the collector serves — the
/// digest coreutils give for the files its service worker names — and no build when the app
/// directory holds none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deployment_names_the_build_the_collector_serves() {
    let dir = tempfile::tempdir().unwrap();
    let dist = dir.path().join("dist");
    std::fs::create_dir(&dist).unwrap();
    std::fs::write(
        dist.join("sw.js"),
        "const APP_FILES = [\n  './',\n  'index.html',\n  'app.js',\n];\n",
    )
    .unwrap();
    std::fs::write(dist.join("index.html"), "<!DOCTYPE html><title>t</title>").unwrap();
    std::fs::write(dist.join("app.js"), "export default 1;\n").unwrap();
    let coreutils = std::process::Command::new("sh")
        .arg("-c")
        .arg("sha256sum sw.js index.html app.js | LC_ALL=C sort -k2 | sha256sum")
        .current_dir(&dist)
        .output()
        .expect("sha256sum runs");
    let expected = String::from_utf8(coreutils.stdout).unwrap()[..64].to_owned();
    let all = start(&dir.path().join("data"), 0, Some(&dist)).await;
    let http = client();
    let deployment = |url: String| {
        let http = http.clone();
        async move {
            let r = http
                .get(format!("{url}/api/deployment"))
                .send()
                .await
                .unwrap();
            serde_json::from_slice::<serde_json::Value>(&r.bytes().await.unwrap()).unwrap()
        }
    };
    let published = deployment(all.collector.url().to_owned()).await;
    assert_eq!(published["build"], expected, "{published}");
    all.stop().await;
    // Without a built app (no service worker), no build is named.
    let bare = tempfile::tempdir().unwrap();
    let all = start(bare.path(), 0, None).await;
    let published = deployment(all.collector.url().to_owned()).await;
    assert!(published.get("build").is_none(), "{published}");
    all.stop().await;
}

/// Issue 10 §2 and §4: a basic-protocol survey is never open to anyone; an invitation opens one
/// cohort place, and a reload of it (a lost answer, a closed tab) gets the same cohort, key and
/// credential nonce back — never a second place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invitations_gate_the_definition_and_survive_a_reload() {
    let (dir, all, http) = started(3).await;
    // The attack of §2: an open basic survey would hand B_k's key to the provider itself.
    let open_basic = draft("open-basic", 12, false, false);
    let answer = admin(
        &http,
        &all,
        Method::POST,
        "/api/admin/surveys",
        Some(&open_basic),
    )
    .await;
    let e = refused("an open basic survey", &answer, 400, "invitations");
    assert!(e.contains("share mode"), "{e}");

    let created = create_survey(&http, &all, &draft("invited", 12, false, true)).await;
    assert!(created["participant_url"].is_null());
    let definition_url = created["definition_url"].as_str().unwrap();
    // Without an invitation, a survey by invitation is answered as one that does not exist
    // (issue 43 §6).
    let (status, body) = take_place(&http, definition_url).await;
    assert_eq!(status, 404, "{body}");
    let (status, unknown) = take_place(
        &http,
        &definition_url.replace("/invited/", "/no-such-survey/"),
    )
    .await;
    assert_eq!(status, 404, "{unknown}");
    assert_eq!(
        body.replace("invited", "S"),
        unknown.replace("no-such-survey", "S")
    );
    let (status, list) = admin(
        &http,
        &all,
        Method::POST,
        "/api/admin/surveys/invited/invitations",
        Some(&json!({"count": 2})),
    )
    .await;
    assert_eq!(status, 201, "{list}");
    let first = &invitation_link(&list, 0);
    let second = &invitation_link(&list, 1);
    let participant_url = list["invitations"][0]["participant_url"].as_str().unwrap();
    assert!(
        participant_url.ends_with(&format!(
            "/#/participate?survey=invited&invite={}",
            list["invitations"][0]["token"].as_str().unwrap()
        )),
        "{participant_url}"
    );
    let (opened, credential) = load(&http, first).await;
    let (reopened, again) = load(&http, first).await;
    assert_eq!(
        opened, reopened,
        "a reload gets the same definition and key"
    );
    assert_eq!(
        credential.nonce, again.nonce,
        "and the same one-upload nonce"
    );
    let (status, _) = take_place(
        &http,
        &format!("{definition_url}?invite=0123456789abcdef0123456789abcdef"),
    )
    .await;
    assert_eq!(status, 404, "an invitation that is not one: as no survey");
    let (_, other) = load(&http, second).await;
    assert_ne!(other.nonce, credential.nonce);
    // The first participant sends; the second never does. The team closes cohort 0 with that
    // one upload, below the floor: it is withheld, so no invitation of it is used up (issue 43
    // §3) — the first participant's device is told its cohort was regrouped and takes a place in
    // a new cohort, as the no-show does, each with a new nonce.
    let (_, uploads) = prepare(&http, first, 1, &answers(1)).await;
    let (status, body) = post_upload(&http, &uploads[0].0, &uploads[0].1).await;
    assert_eq!(status, 201, "{body}");
    let (status, _) = admin_post(&http, &all, "/api/admin/surveys/invited/cohorts/0/close").await;
    assert_eq!(status, 200);
    wait_for_view(&http, &all, "invited", |v| {
        v["cohorts"][0]["status"] == "withheld"
    })
    .await;
    let sent_nonce = uploads[0].1.credential.as_ref().unwrap().nonce.clone();
    let (status, fate) =
        cohort_fate(&http, all.collector.url(), "invited", 0, Some(&sent_nonce)).await;
    assert_eq!(status, 200, "{fate}");
    assert_eq!(
        (&fate["fate"], &fate["answer_again"]),
        (&json!("regrouped"), &json!(true)),
        "{fate}"
    );
    let (regrouped, fresh) = load(&http, first).await;
    assert_eq!(
        regrouped.masking.cohort, 1,
        "the sender answers again in the next cohort"
    );
    assert_ne!(fresh.nonce, sent_nonce);
    let (moved, again) = load(&http, second).await;
    assert_eq!(moved.masking.cohort, 1, "the no-show joins the next cohort");
    assert_ne!(again.nonce, other.nonce);
    // Tokens are stored only as hashes.
    let db = std::fs::read(dir.path().join("collector/collector.sqlite3")).unwrap();
    let wal = std::fs::read(dir.path().join("collector/collector.sqlite3-wal")).unwrap_or_default();
    let token = list["invitations"][1]["token"].as_str().unwrap();
    for bytes in [&db, &wal] {
        assert!(!bytes.windows(token.len()).any(|w| w == token.as_bytes()));
    }
    // A survey without invitations (share mode) has none to hand out.
    create_survey(&http, &all, &draft("open", 12, true, false)).await;
    let (status, _) = admin(
        &http,
        &all,
        Method::POST,
        "/api/admin/surveys/open/invitations",
        Some(&json!({"count": 1})),
    )
    .await;
    assert_eq!(status, 409);
    all.stop().await;
}

/// A cohort too small to mask safely (n ≤ p₁, or below the minimum) is withheld by the provider
/// and never reaches the collector as data; with nothing else, nothing is released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cohorts_too_small_to_mask_are_withheld_not_released() {
    let (_dir, all, http) = started(0).await;
    let created = create_survey(&http, &all, &draft("small", 12, false, true)).await;
    let invited = links(&http, &all, &created, 3).await;
    for (i, link) in (0..).zip(&invited) {
        participate(&http, link, i).await;
    }
    let (status, _) = admin_post(&http, &all, "/api/admin/surveys/small/close").await;
    assert_eq!(status, 200);
    let view = wait_for_view(&http, &all, "small", |v| v["status"] == "failed").await;
    assert!(
        view["error"]
            .as_str()
            .unwrap()
            .contains("no cohort had enough participants")
    );
    assert_eq!(view["cohorts"][0]["status"], "withheld");
    assert!(
        view["cohorts"][0]["note"]
            .as_str()
            .unwrap()
            .contains("3 records, fewer than the 6")
    );
    let (status, _) = get_text(
        &http,
        &format!("{}/api/surveys/small/release.csv", all.collector.url()),
    )
    .await;
    assert_eq!(status, 404);
    // The administrator's view includes the provider's.
    let admin = admin_view(&http, &all, "small").await;
    assert_eq!(
        admin["services"][0]["status"]["cohorts"][0]["status"],
        "withheld"
    );
    all.stop().await;
}

/// Share mode with invitations: the parts do not say which credentials they hold, so once a
/// cohort is combined every invitation that joined it is used up — nobody can answer twice —
/// and an invitation never opened still gets a place in the next cohort.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn share_mode_invitations_are_used_up_when_their_cohort_is_combined() {
    let (_dir, all, http) = started(3).await;
    let created = create_survey(&http, &all, &draft("invited-shares", 12, true, true)).await;
    let invited = links(&http, &all, &created, 13).await;
    for (i, link) in (0..12u64).zip(&invited) {
        participate(&http, link, i).await;
    }
    wait_for_view(&http, &all, "invited-shares", |v| {
        v["cohorts"][0]["status"] == "received"
    })
    .await;
    assert_used_up(&http, &invited[0]).await;
    let (def, _) = load(&http, &invited[12]).await;
    assert_eq!(def.masking.cohort, 1);
    all.stop().await;
}
