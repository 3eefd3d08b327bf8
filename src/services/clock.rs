//! Milliseconds from `performance.now()`, in a page or a worker, and waiting. The page reads
//! no wall clock: a device's may be hours off, so credential expiry is the services' to judge.

use wasm_bindgen::JsCast;

/// Milliseconds since the page (or worker) started; 0 where there is no `performance` clock
/// (natively).
pub fn now_ms() -> f64 {
    js_sys::Reflect::get(&js_sys::global(), &"performance".into())
        .ok()
        .and_then(|p| p.dyn_into::<web_sys::Performance>().ok())
        .map_or(0.0, |p| p.now())
}

/// Wait `ms` milliseconds without blocking (a `setTimeout` promise).
pub async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let global = js_sys::global();
        if let Ok(set_timeout) = js_sys::Reflect::get(&global, &"setTimeout".into())
            && let Ok(f) = set_timeout.dyn_into::<js_sys::Function>()
        {
            let _ = f.call2(&global, &resolve, &ms.into());
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}
