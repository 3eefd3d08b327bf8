//! Small dense linear-algebra kernels the masks are built from.
//!
//! Two kinds live here, and the masks choose between them by size:
//!
//! * **Bit-exact kernels** ([`householder`], [`qr`]): a fixed operation order and only IEEE-exact
//!   arithmetic (`+ − × ÷ √`), never fused multiply-adds chosen at run time. Written here rather
//!   than taken from nalgebra's decompositions because masks must be bit-for-bit reproducible
//!   across targets: a key file gives the same matrix natively and in the browser.
//! * **Blocked kernels** ([`wy`], [`product`]): reflectors grouped into `I − Y T Yᵀ` and applied
//!   through cache-blocked matrix products, so that masking a block of many records runs at
//!   matrix-multiply speed. They are accurate to rounding, not bit-exact, and `parallel` spreads
//!   them over the cores natively (never on `wasm32`).
//!
//! And one iterative method, [`lanczos`] (with its [`tridiagonal`] eigen-solver): the smallest
//! eigenvalue of a Gram matrix `X Xᵀ` from products with `X` and `Xᵀ` only, for the simulation's
//! condition (3.5) margin.

pub mod householder;
pub mod lanczos;
pub(crate) mod parallel;
pub mod product;
pub mod qr;
pub mod tridiagonal;
pub mod wy;

pub use householder::Reflector;
pub use qr::ThinQr;
pub use wy::BlockReflector;
