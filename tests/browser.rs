//! Components and services in headless Chromium (wasm-bindgen-test): HTTP errors and retries,
//! query strings, random tokens, the job runner (inline and a worker that cannot start), and
//! components rendered into the page — plots must leave non-blank pixels, the number field keeps
//! typing through re-renders, the file picker loads from an address.
#![cfg(target_arch = "wasm32")]

use std::cell::RefCell;
use std::rc::Rc;

use orthomask_survey::app_build::FileDigest;
use orthomask_survey::upload::Upload;
use orthomask_web::components::file_picker::{FilePicker, FilePickerProps};
use orthomask_web::components::number_control::{NumberControl, NumberControlProps};
use orthomask_web::components::plot_canvas::{PlotCanvas, PlotCanvasProps, canvas_variance};
use orthomask_web::components::progress::{JobProgress, JobProgressProps};
use orthomask_web::components::tables::{MatrixTable, MatrixTableProps};
use orthomask_web::context::JobStatus;
use orthomask_web::model::analysis::ScatterPanel;
use orthomask_web::model::audit::NamedText;
use orthomask_web::model::classroom::MatrixView;
use orthomask_web::model::dp::DpParams;
use orthomask_web::model::jobs::{Job, Output};
use orthomask_web::plots::Plot;
use orthomask_web::services::app_build::browser_sha256;
use orthomask_web::services::clock::sleep;
use orthomask_web::services::http::{RetryPolicy, SendError, get_text, send_upload};
use orthomask_web::services::jobs::{JobRunner, Progress};
use orthomask_web::services::{query, random};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use yew::Callback;

wasm_bindgen_test_configure!(run_in_browser);

fn mount() -> web_sys::Element {
    let document = web_sys::window().unwrap().document().unwrap();
    let div = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&div).unwrap();
    div
}

/// Wait until `cell` holds a value (at most ~10 s).
async fn wait_for<T: Clone>(cell: &Rc<RefCell<Option<T>>>) -> T {
    for _ in 0..1000 {
        if let Some(v) = cell.borrow().clone() {
            return v;
        }
        sleep(10).await;
    }
    panic!("timed out");
}

#[wasm_bindgen_test]
fn query_strings_decode_like_the_url_standard() {
    let pairs = query::parse("?data=https%3A%2F%2Fx.org%2Fr.csv&y=ADL&x=BBS,%20Age&empty=");
    assert_eq!(
        query::get(&pairs, "data").as_deref(),
        Some("https://x.org/r.csv")
    );
    assert_eq!(
        query::list(&pairs, "x"),
        vec!["BBS".to_owned(), "Age".to_owned()]
    );
    assert_eq!(query::get(&pairs, "empty"), None);
    assert_eq!(query::get(&pairs, "missing"), None);
}

#[wasm_bindgen_test]
fn tokens_come_from_the_browser_and_differ() {
    let (a, b) = (random::token().unwrap(), random::token().unwrap());
    assert_eq!(a.len(), 32);
    assert_ne!(a, b);
    assert_ne!(
        random::key().unwrap().to_hex(),
        random::key().unwrap().to_hex()
    );
}

/// The browser's SHA-256 (Web Crypto), which the page's build digest takes where it has one
/// (issue 25), is the one `FileDigest::of` computes in WebAssembly: the standard's vectors for
/// "abc" and the empty message (FIPS 180-2, appendix B.1; the empty digest as NIST's examples
/// give it), and a megabyte of varied bytes, the size of the participant's module.
#[wasm_bindgen_test]
async fn the_browsers_sha256_is_the_build_digests() {
    let buffer = |bytes: &[u8]| js_sys::Uint8Array::from(bytes).buffer();
    assert_eq!(
        browser_sha256(&buffer(b"abc")).await.as_deref(),
        Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    );
    assert_eq!(
        browser_sha256(&buffer(b"")).await.as_deref(),
        Some("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    );
    let module: Vec<u8> = (0..1_048_583_u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    assert_eq!(
        browser_sha256(&buffer(&module)).await,
        Some(FileDigest::of("module.wasm", &module).sha256)
    );
}

#[wasm_bindgen_test]
async fn a_missing_file_is_one_line_naming_the_address() {
    let e = get_text("/no/such/file.csv").await.unwrap_err();
    assert!(e.starts_with("/no/such/file.csv: HTTP 404"), "{e}");
    assert!(!e.contains('\n'));
}

#[wasm_bindgen_test]
async fn an_unreachable_service_is_retried_then_reported_with_nothing_lost() {
    let upload = Upload {
        survey: "s".into(),
        cohort: 0,
        token: random::token().unwrap(),
        values: vec![1.0, 2.0],
        credential: None,
        definition: String::new(),
        build: String::new(),
    };
    let attempts = Rc::new(RefCell::new(Vec::new()));
    let seen = attempts.clone();
    let e = send_upload(
        "http://127.0.0.1:9/api/surveys/s/uploads",
        &upload,
        RetryPolicy {
            attempts: 3,
            first_delay_ms: 5,
        },
        &move |n| seen.borrow_mut().push(n),
    )
    .await
    .unwrap_err();
    assert_eq!(*attempts.borrow(), vec![1, 2, 3]);
    // No attempt reached a service: the form may keep the masked upload for later (offline).
    assert!(matches!(e, SendError::Unreachable(_)), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("did not go through after 3 attempts"), "{e}");
    assert!(e.contains("nothing was lost"), "{e}");
}

#[wasm_bindgen_test]
async fn the_inline_runner_reports_progress_and_a_result() {
    let runner = JobRunner::inline();
    assert!(!runner.has_worker());
    let done = Rc::new(RefCell::new(None));
    let progress = Rc::new(RefCell::new(Vec::<Progress>::new()));
    let (d, p) = (done.clone(), progress.clone());
    runner.submit(
        Job::Dp(DpParams::default()),
        Callback::from(move |x: Progress| p.borrow_mut().push(x)),
        Callback::from(move |r: Result<Output, String>| *d.borrow_mut() = Some(r)),
    );
    let result = wait_for(&done).await.unwrap();
    assert!(matches!(result, Output::Dp(ref r) if r.table.len() == 3));
    assert!(!progress.borrow().is_empty());
}

#[wasm_bindgen_test]
async fn a_worker_that_cannot_start_fails_jobs_with_one_line() {
    // The test harness serves no worker.js: the worker's load error must reach every job.
    let runner = JobRunner::start();
    assert!(runner.has_worker());
    let done = Rc::new(RefCell::new(None));
    let d = done.clone();
    runner.submit(
        Job::Dp(DpParams::default()),
        Callback::noop(),
        Callback::from(move |r: Result<Output, String>| *d.borrow_mut() = Some(r)),
    );
    let e = wait_for(&done).await.unwrap_err();
    assert!(e.contains("background worker"), "{e}");
}

#[wasm_bindgen_test]
async fn a_plot_component_draws_non_blank_pixels_with_a_text_alternative() {
    let root = mount();
    let panel = ScatterPanel {
        title: "Masked release".into(),
        x_name: "BBS".into(),
        y_name: "ADL".into(),
        points: vec![(10.0, 40.0), (20.0, 55.0), (30.0, 61.0), (45.0, 80.0)],
        total_points: 4,
        intercept: 30.0,
        slope: 1.1,
    };
    let props = PlotCanvasProps {
        plot: Rc::new(Plot::Scatter(panel)),
        width: 400,
        height: 300,
        name: "t".into(),
    };
    yew::Renderer::<PlotCanvas>::with_root_and_props(root.clone(), props).render();
    sleep(100).await;
    let canvas = root
        .query_selector("canvas")
        .unwrap()
        .unwrap()
        .dyn_into::<web_sys::HtmlCanvasElement>()
        .unwrap();
    assert!(canvas_variance(&canvas).unwrap() > 100.0);
    assert_eq!(canvas.get_attribute("role").as_deref(), Some("img"));
    assert!(
        canvas
            .get_attribute("aria-label")
            .unwrap()
            .contains("ADL = 30.0000 + 1.10000 × BBS")
    );
}

#[wasm_bindgen_test]
async fn a_plot_without_data_shows_an_error_line_not_a_panic() {
    let root = mount();
    let props = PlotCanvasProps {
        plot: Rc::new(Plot::NormalQq(vec![])),
        width: 200,
        height: 150,
        name: "e".into(),
    };
    yew::Renderer::<PlotCanvas>::with_root_and_props(root.clone(), props).render();
    sleep(100).await;
    let alert = root.query_selector("[role=alert]").unwrap().unwrap();
    assert_eq!(
        alert.text_content().unwrap(),
        "nothing to plot: no finite x values"
    );
}

#[wasm_bindgen_test]
async fn matrix_tables_and_progress_render_accessibly() {
    let root = mount();
    let view = MatrixView {
        title: "XB".into(),
        seen_by: "the provider".into(),
        rows: 20,
        cols: 512,
        headers: vec!["a".into(), "b".into()],
        table: vec![vec![1.5, -2.25]],
        heat: vec![],
    };
    yew::Renderer::<MatrixTable>::with_root_and_props(
        root.clone(),
        MatrixTableProps { view, digits: 3 },
    )
    .render();
    let bar = mount();
    let status = JobStatus::Running(Progress {
        fraction: 0.4,
        stage: "running the protocol".into(),
    });
    yew::Renderer::<JobProgress>::with_root_and_props(
        bar.clone(),
        JobProgressProps {
            status,
            label: "Classroom".into(),
        },
    )
    .render();
    sleep(50).await;
    let caption = root
        .query_selector("caption")
        .unwrap()
        .unwrap()
        .text_content()
        .unwrap();
    assert!(
        caption.starts_with("XB — 20 × 512 (first 1 rows, 2 columns)"),
        "{caption}"
    );
    assert!(caption.contains("Seen by: the provider"));
    assert_eq!(root.query_selector_all("td").unwrap().length(), 2);
    let status = bar.query_selector("[role=status]").unwrap().unwrap();
    assert!(
        status
            .text_content()
            .unwrap()
            .contains("Classroom: running the protocol (40%)")
    );
    assert!(bar.query_selector("progress").unwrap().is_some());
}

/// The number field keeps what is being typed through a re-render with the old value (a worker's
/// progress message re-renders the page while someone types), and commits it on `change`.
#[wasm_bindgen_test]
async fn a_number_field_keeps_typing_through_re_renders_and_commits_on_change() {
    let root = mount();
    let committed = Rc::new(RefCell::new(None::<String>));
    let props = |committed: &Rc<RefCell<Option<String>>>| {
        let committed = committed.clone();
        NumberControlProps {
            id: "n-field".into(),
            label: "Participants n".into(),
            value: "10".into(),
            min: "0".into(),
            step: "1".into(),
            on_commit: Callback::from(move |v: String| *committed.borrow_mut() = Some(v)),
        }
    };
    let mut app =
        yew::Renderer::<NumberControl>::with_root_and_props(root.clone(), props(&committed))
            .render();
    sleep(20).await;
    let input: web_sys::HtmlInputElement = root
        .query_selector("input")
        .unwrap()
        .unwrap()
        .dyn_into()
        .unwrap();
    assert_eq!(input.value(), "10");
    input.set_value("12");
    input
        .dispatch_event(&web_sys::InputEvent::new("input").unwrap())
        .unwrap();
    sleep(20).await;
    app.update(props(&committed));
    sleep(20).await;
    assert_eq!(input.value(), "12", "a re-render erased the typing");
    assert_eq!(*committed.borrow(), None);
    input
        .dispatch_event(&web_sys::Event::new("change").unwrap())
        .unwrap();
    assert_eq!(wait_for(&committed).await, "12");
}

/// The file picker loads from a typed address, and a missing one is one line naming it.
#[wasm_bindgen_test]
async fn the_file_picker_loads_from_an_address_and_reports_a_missing_one() {
    let root = mount();
    let loaded = Rc::new(RefCell::new(None::<(String, String)>));
    let failed = Rc::new(RefCell::new(None::<String>));
    let (l, f) = (loaded.clone(), failed.clone());
    yew::Renderer::<FilePicker>::with_root_and_props(
        root.clone(),
        FilePickerProps {
            label: "Released data (CSV)".into(),
            id: "t".into(),
            accept: ".csv".into(),
            on_load: Callback::from(move |t: NamedText| *l.borrow_mut() = Some((t.name, t.text))),
            on_error: Callback::from(move |e: String| *f.borrow_mut() = Some(e)),
            loaded: None,
        },
    )
    .render();
    sleep(20).await;
    let input: web_sys::HtmlInputElement = root
        .query_selector("#t-url")
        .unwrap()
        .unwrap()
        .dyn_into()
        .unwrap();
    let submit = |address: &str| {
        input.set_value(address);
        input
            .dispatch_event(&web_sys::InputEvent::new("input").unwrap())
            .unwrap();
        let button: web_sys::HtmlElement = root
            .query_selector("form.url-form button")
            .unwrap()
            .unwrap()
            .dyn_into()
            .unwrap();
        button.click();
    };
    // The field is `type="url"`: the browser itself refuses to submit a relative address.
    let origin = web_sys::window().unwrap().location().origin().unwrap();
    submit(&format!("{origin}/no-such-file-here.csv"));
    let error = wait_for(&failed).await;
    assert!(
        error.contains("no-such-file-here.csv") && !error.contains('\n'),
        "{error}"
    );
    sleep(20).await;
    submit("data:text/csv,a%2Cb%0A1%2C2%0A");
    let (name, text) = wait_for(&loaded).await;
    assert!(name.starts_with("data:text/csv"), "{name}");
    assert_eq!(text, "a,b\n1,2\n");
}

/// The offline outbox in the browser's IndexedDB: a masked submission is kept under its token,
/// read back identical, and forgotten (issue 13 §1).
#[wasm_bindgen_test]
async fn the_outbox_keeps_reads_back_and_forgets_a_waiting_submission() {
    use orthomask_survey::client::Destination;
    use orthomask_survey::trust::{CollectorSigningKey, UploadCredential};
    use orthomask_web::model::outbox::WaitingSubmission;
    use orthomask_web::services::outbox;

    let token = random::token().unwrap();
    let signer = CollectorSigningKey::from_secret([1; 32]);
    let waiting = WaitingSubmission {
        token: token.clone(),
        survey: "s".into(),
        cohort: 2,
        destinations: vec![Destination {
            url: "http://127.0.0.1:9/api/surveys/s/uploads".into(),
            upload: Upload {
                survey: "s".into(),
                cohort: 2,
                token: token.clone(),
                values: vec![0.25, -1.5],
                credential: Some(UploadCredential::issue(&signer, "s", 2, [3; 16], u64::MAX)),
                definition: String::new(),
                build: String::new(),
            },
        }],
    };
    outbox::keep(&waiting).await.unwrap();
    let kept = outbox::all().await.unwrap();
    let (_, read) = kept
        .iter()
        .find(|(key, _)| *key == token)
        .expect("kept under its token");
    assert_eq!(read.as_ref().unwrap(), &waiting);
    outbox::remove(&token).await.unwrap();
    assert!(
        outbox::all()
            .await
            .unwrap()
            .iter()
            .all(|(key, _)| *key != token)
    );
}
