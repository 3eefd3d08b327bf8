//! # orthomask-secure
//!
//! Privacy-preserving analysis of *vertically partitioned* data — the same subjects, different
//! attributes at different agencies — by the secure matrix product of Karr, Lin, Reiter & Sanil
//! (2004), *Privacy Preserving Analysis of Vertically Partitioned Data Using Secure Matrix
//! Products*, NISS Technical Report 145 (seed 001 of the project).
//!
//! Agency A (holding `X`) sends B a random orthonormal `Z` orthogonal to its columns; B returns
//! `W = (I − ZZᵀ)Y`; A computes `XᵀW = XᵀY`. Neither sees the other's data, each learns about
//! half of the linear constraints that would pin it down. From the pairwise products the agencies
//! assemble the full cross-product (covariance) matrix and fit regressions, ridge regressions and
//! diagnostics on it.
//!
//! The crate is I/O-free: no files, network or serialisation; randomness is always passed in as a
//! key stream or generator. It compiles for `wasm32-unknown-unknown`.
//!
//! Read in this order: [`tolerance`]; the protocol — [`feasibility`], [`disclosure`],
//! [`complement`], [`breach`], [`protocol`]; assembling and analysing — [`cross_products`],
//! [`assembly`], [`sweep`], [`regression`], [`ridge`]; diagnostics — [`secure_sum`],
//! [`diagnostics`], [`leverage`]; and the one-call entry point [`end_to_end`].

#![warn(missing_docs)]

pub mod tolerance;

// The two-agency protocol (seed 001 §2).

pub mod feasibility;

pub mod disclosure;

mod householder;

pub mod complement;

pub mod breach;

pub mod protocol;

// Assembling and analysing the integrated cross-products (seed 001 §3.1, §3.3).

pub mod cross_products;

pub mod assembly;

pub mod sweep;

pub mod regression;

pub mod ridge;

// Diagnostics (seed 001 §3.2).

pub mod secure_sum;

pub mod diagnostics;

pub mod leverage;

// The one-call entry point for the command-line tool.

pub mod end_to_end;
