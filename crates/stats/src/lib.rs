//! # orthomask-stats
//!
//! Statistics that give the same answer on raw survey data `X` and on its masked releases:
//! `A·X` with `A` orthogonal and `A·1ₙ = 1ₙ` (first TM² method of Wu, Chen, Burr & Zhang 2017,
//! seed 003), `X·B₁·B₂` with block-diagonal `B`s keeping the response and treatment columns
//! (second TM² method), and `A·(X + C)` with Gaussian noise of known variance (seed 004,
//! setting B), for which a bias correction is needed.
//!
//! Like `orthomask-core` it never reads files, talks to the network or touches a browser API,
//! and it compiles for `wasm32-unknown-unknown`; the CLI and the web app turn its result types
//! into JSON and pictures.
//!
//! Read in this order: [`tolerance`], [`dataset`], [`design`], [`inference`], [`descriptive`],
//! [`pivoted_qr`], [`linear`], [`model_tests`], [`contingency`], [`association`], [`fisher`],
//! [`logistic`], [`bias_corrected`], [`audit`].

#![warn(missing_docs)]

pub mod tolerance;

pub mod dataset;
pub mod design;
pub mod inference;

pub mod descriptive;
pub mod linear;
pub mod model_tests;
pub mod pivoted_qr;

pub mod association;
pub mod contingency;
pub mod fisher;

pub mod bias_corrected;
pub mod logistic;

pub mod audit;
