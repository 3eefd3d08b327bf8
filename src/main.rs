//! The whole app's WebAssembly module, which `scripts/build-web.sh` builds beside the
//! participant's (`src/participant.rs`): every view in a page, and the computations in a Web
//! Worker (see `orthomask_web::start`).

fn main() {
    orthomask_web::start();
}
