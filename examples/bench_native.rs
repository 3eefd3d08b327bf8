//! The native side of the browser benchmark: the same operations as `#/bench`
//! (`orthomask_web::model::bench`), timed with `Instant`, printed as JSON for
//! `scripts/bench-web.sh`.
//!
//! `cargo run --release -p orthomask-web --example bench_native`
//!
//! Like the services and `orthomask`, it keeps freed memory for reuse
//! (`orthomask_core::runtime::keep_freed_memory`): each case runs repeatedly in one process, as in
//! the browser, whose WebAssembly memory is never handed back between runs.

use std::time::Instant;

use orthomask_core::runtime::keep_freed_memory;
use orthomask_web::model::bench::{BenchCase, time_case};

fn main() {
    keep_freed_memory();
    let start = Instant::now();
    let now = move || start.elapsed().as_secs_f64() * 1000.0;
    let mut results = Vec::new();
    for case in BenchCase::ALL {
        match time_case(case, &now) {
            Ok(r) => results.push(r),
            Err(e) => {
                eprintln!("error: {}: {e}", case.label());
                std::process::exit(1);
            }
        }
    }
    match serde_json::to_string(&results) {
        Ok(json) => println!("{json}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
