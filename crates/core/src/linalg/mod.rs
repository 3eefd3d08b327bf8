//! Small dense linear-algebra kernels the masks are built from.
//!
//! # Why our own, not nalgebra's decompositions
//! A key file must give the same masks natively, in the browser and in every later release:
//! `tests/cross_platform.rs` pins their bits. The masks are Householder reflectors drawn one at a
//! time from the key's stream (Stewart 1980) and applied to records on a range of coordinates
//! without forming any `p × p` matrix, and the orbit sampler needs `Q·[top; 0]` for a `top` other
//! than the identity. nalgebra 0.35's `QR` forms `Q` whole (`q()`) or applies `Qᵀ` (`q_tr_mul`),
//! and its reflectors are its own arithmetic — unit vectors normalised twice, dot products over
//! eight accumulators — which is no part of its API and may change in any release, and every mask
//! with it. Here the order of every operation is ours and written down. The tall QR is ours for
//! speed as well: its module gives the measurement.
//!
//! Two kinds live here, and the masks choose between them by size:
//!
//! * **Bit-exact kernels** ([`householder`], [`qr`]): a fixed operation order and only IEEE-exact
//!   arithmetic (`+ − × ÷ √`), never fused multiply-adds chosen at run time.
//! * **Blocked kernels** ([`wy`], [`product`]): reflectors grouped into `I − Y T Yᵀ` and applied
//!   through cache-blocked matrix products, so that masking a block of many records runs at
//!   matrix-multiply speed. They are accurate to rounding, not bit-exact, and `parallel` spreads
//!   them over the cores natively (never on `wasm32`).
//! * **Tall QR** ([`tall_qr`]): the `R` factor of a tall matrix for least squares, in
//!   cache-sized chunks spread over the cores; bit-identical on any number of threads.
//!
//! And one iterative method, [`lanczos`] (with its [`tridiagonal`] eigen-solver): the smallest
//! eigenvalue of a Gram matrix `X Xᵀ` from products with `X` and `Xᵀ` only, for the simulation's
//! condition (3.5) margin.

pub mod householder;
pub mod lanczos;
pub(crate) mod parallel;
pub mod product;
pub mod qr;
pub mod tall_qr;
pub mod tridiagonal;
pub mod wy;

pub use householder::Reflector;
pub use qr::ThinQr;
pub use tall_qr::tall_r;
pub use wy::BlockReflector;
