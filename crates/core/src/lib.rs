//! # orthomask-core
//!
//! The I/O-free numerical heart of Orthomask: keys, reproducible randomness, random orthogonal
//! masks as operators, the triple matrix-masking (TM²) protocols with one type per party, the
//! safety checks that refuse unsafe designs, and the Appendix A attack that shows why they are
//! refused.
//!
//! It never reads files, talks to the network or touches a browser API; the command-line tool,
//! the web app and the services are adapters around it. It compiles for `wasm32-unknown-unknown`
//! and produces the same masks there as natively for the same key.
//!
//! Read in this order: [`tolerance`], [`hex`], [`key`], [`random`], [`linalg`], [`mask`], [`scaling`],
//! [`protocol`], [`attack`]; [`runtime`] says how the kernels use a native machine (threads,
//! freed memory).

pub mod tolerance;

pub mod hex;
pub mod key;
pub mod random;

pub mod linalg;
pub mod mask;

pub mod scaling;

pub mod protocol;

pub mod attack;

pub mod runtime;
