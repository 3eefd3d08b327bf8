//! # orthomask-formats
//!
//! The data-transfer formats every front end shares: CSV tables ([`csv`]), the release manifest
//! ([`manifest`]), the model terms a survey declares and a manifest records ([`model_terms`]) and
//! party key files ([`keyfile`]). Parsing works on bytes and strings only —
//! reading and writing files is the front ends' job — so the web app uses the same code.
//!
//! Every parse error names the source, the line and the column, in one line.
//!
//! Formats only: what a survey definition means, how answers are coded and how a manifest is
//! built from a plan and a release are the application layer's (`orthomask-survey`).

pub mod csv;
pub mod keyfile;
pub mod manifest;
pub mod model_terms;
