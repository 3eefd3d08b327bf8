//! Milliseconds from `performance.now()`, in a page or a worker, and waiting. The page reads
//! no wall clock: a device's may be hours off, so credential expiry is the services' to judge.
//!
//! Waiting is `gloo-timers`' timeout future. [`now_ms`] stays our own: no gloo crate reads
//! `performance.now()`, and it must work in the worker too (`src/worker.rs` times its jobs with
//! it), where there is no `window` for `gloo-utils` or `web_sys::window()` to find.

use wasm_bindgen::JsCast;

/// Milliseconds since the page (or worker) started; 0 where there is no `performance` clock
/// (natively).
pub fn now_ms() -> f64 {
    js_sys::Reflect::get(&js_sys::global(), &"performance".into())
        .ok()
        .and_then(|p| p.dyn_into::<web_sys::Performance>().ok())
        .map_or(0.0, |p| p.now())
}

/// Note `name` on the page's timeline (`performance.mark`, User Timing): the steps of opening a
/// participant's link, which the page-load benchmark (`e2e-services/page-load-bench.mjs`) prints
/// to show where a visit's time goes. Nothing reads them back; no clock, no-op natively.
pub fn mark(name: &str) {
    // Unchecked: `performance` is a `Performance` wherever it exists, and the type check would
    // cost more than the mark.
    let performance = js_sys::Reflect::get(&js_sys::global(), &"performance".into())
        .ok()
        .filter(|p| !p.is_undefined())
        .map(JsCast::unchecked_into::<web_sys::Performance>);
    if let Some(performance) = performance {
        let _ = performance.mark(name);
    }
}

/// Wait `ms` milliseconds without blocking (`setTimeout`, cleared if the wait is dropped); a
/// negative wait is none.
pub async fn sleep(ms: i32) {
    gloo_timers::future::TimeoutFuture::new(u32::try_from(ms).unwrap_or(0)).await;
}
