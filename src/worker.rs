//! The worker side of the job protocol: receive a [`Request`], run it with
//! [`run_job`], post progress and the result back. Only ever runs inside a Web Worker.

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;

use crate::model::jobs::{Reply, Request, decode, encode, run_job};
use crate::services::clock::now_ms;

fn post(scope: &web_sys::DedicatedWorkerGlobalScope, reply: &Reply) {
    let _ = scope.post_message(&encode(reply).into());
}

/// Install the message handler and tell the page the worker is ready.
pub fn serve() {
    let Ok(scope) = js_sys::global().dyn_into::<web_sys::DedicatedWorkerGlobalScope>() else {
        return;
    };
    let handler_scope = scope.clone();
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
            let Some(text) = event.data().as_string() else {
                return;
            };
            match decode::<Request>(&text) {
                Ok(Request { id, job }) => {
                    let mut last = -1.0;
                    let output = run_job(
                        &job,
                        &mut |fraction, stage| {
                            if fraction > last {
                                last = fraction;
                                post(
                                    &handler_scope,
                                    &Reply::Progress {
                                        id,
                                        fraction,
                                        stage: stage.to_owned(),
                                    },
                                );
                            }
                        },
                        &now_ms,
                    );
                    post(&handler_scope, &Reply::Done { id, output });
                }
                Err(e) => post(
                    &handler_scope,
                    &Reply::Done {
                        id: 0,
                        output: Err(e),
                    },
                ),
            }
        });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    on_message.forget();
    post(&scope, &Reply::Ready);
}
