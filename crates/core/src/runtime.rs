//! How the core's kernels use a native machine: how many threads, and what happens to freed
//! memory. Nothing here changes a result; on `wasm32` both are no-ops.
//!
//! * [`with_max_threads`] caps the threads the kernels start, per call and per thread (a scoped
//!   setting, no global state): `orthomask-server` runs each blocking task under a cap of one.
//! * [`keep_freed_memory`] is for a native *process* that runs large kernels again and again (the
//!   services, `orthomask pipeline`, the benchmarks): called once at the start of `main`.

pub use crate::linalg::parallel::{with_max_threads, workers};

/// Freed memory kept by the allocator for reuse instead of being handed back to the OS (bytes).
pub const KEPT_FREED_MEMORY: usize = 256 << 20;

/// Blocks up to this size come from the reusable heap instead of their own mapping (bytes; 32 MiB
/// is glibc's largest allowed value).
pub const HEAP_BLOCK_LIMIT: usize = 32 << 20;

/// Make the C allocator keep freed memory for reuse, as WebAssembly's linear memory does.
///
/// # Why
/// A regression on a 100 000 × 20 release allocates about 50 MB of temporaries (design matrix,
/// columns, factors) and frees them at the end. glibc serves every block over 128 KiB by `mmap`
/// and unmaps it on `free` (and trims the heap's top above 128 KiB), so the next call faults every
/// page in again — about 11 000 page faults per regression, each zeroing a page and charging it to
/// the cgroup (about 3 µs apiece on the development machine). Measured with `perf stat` on
/// `examples/bench_native.rs`: the regression took 66–70 ms natively, 45 % of it in the kernel's
/// page-fault and `munmap` paths, against 33 ms in the browser, whose WebAssembly memory only
/// grows. With freed memory kept, the same run makes 15× fewer page faults and spends its time
/// computing.
///
/// # What it does
/// On Linux with glibc: `mallopt(M_MMAP_THRESHOLD, HEAP_BLOCK_LIMIT)` and
/// `mallopt(M_TRIM_THRESHOLD, KEPT_FREED_MEMORY)` — blocks up to 32 MiB come from the heap, and
/// up to 256 MiB of freed heap stays mapped for the next call. The process's resident size
/// therefore stays near its peak (at most 256 MiB above what it uses). Elsewhere (other C
/// libraries, `wasm32`) it does nothing and returns `false`.
///
/// Call it once, first thing in a binary's `main`, before other threads exist; libraries and
/// tests never call it (it changes the whole process).
pub fn keep_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let as_c = |bytes: usize| libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
        // SAFETY: `mallopt` only changes two tuning parameters of glibc's allocator; it is
        // documented as safe to call at any time and takes plain integers.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, as_c(HEAP_BLOCK_LIMIT)) == 1
                && libc::mallopt(libc::M_TRIM_THRESHOLD, as_c(KEPT_FREED_MEMORY)) == 1
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroUsize;

    /// The cap holds inside the closure, only lowers, and is gone afterwards — also after a panic.
    #[test]
    fn the_thread_cap_is_scoped() {
        let one = NonZeroUsize::MIN;
        let uncapped = workers();
        assert_eq!(with_max_threads(one, workers), 1);
        let nested = with_max_threads(one, || {
            with_max_threads(NonZeroUsize::new(8).unwrap_or(NonZeroUsize::MIN), workers)
        });
        assert_eq!(nested, 1, "an inner call cannot raise the cap");
        assert_eq!(workers(), uncapped);
        let caught = std::panic::catch_unwind(|| with_max_threads(one, || panic!("inside")));
        assert!(caught.is_err());
        assert_eq!(workers(), uncapped, "the cap is restored after a panic");
        // Another thread never sees this thread's cap.
        let elsewhere = with_max_threads(one, || {
            std::thread::spawn(workers).join().unwrap_or_default()
        });
        assert_eq!(elsewhere, uncapped);
    }
}
