//! Small dense linear-algebra kernels the masks are built from.
//!
//! Written here rather than taken from nalgebra's decompositions because the masks must be
//! bit-for-bit reproducible across targets: these kernels use a fixed operation order and only
//! IEEE-exact arithmetic (`+ − × ÷ √`), never fused multiply-adds chosen at run time.

pub mod householder;

pub use householder::Reflector;
