//! The binary `scripts/build-web.sh` builds: one WebAssembly module that runs the app in a page and the
//! computations in a Web Worker (see `orthomask_web::start`).

fn main() {
    orthomask_web::start();
}
