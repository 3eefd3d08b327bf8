//! Pure logic behind the views: no browser API, no I/O, testable natively.
//!
//! Each module turns the workspace crates' results into the data-transfer types the views show
//! (serde lives here, at the edge, never in the core).
//!
//! * [`format`] — numbers as the pages print them;
//! * [`participate`] — from form inputs to answers, validation messages and masked uploads;
//! * [`analysis`] — regression, contingency tables, logistic regression, diagnostics, exports;
//! * [`audit`] — the audit checks of `orthomask_stats::audit` on a release and its manifest;
//! * [`classroom`] — the LEAPS walk-through: every party's view, the attack, collusion, Table 6;
//! * [`dp`] — σ under settings A and B against ε (seed 004 Table 1);
//! * [`bench`] — the benchmarked operations, shared by the browser and the native bench;
//! * [`jobs`] — the job protocol between the page and the Web Worker.

pub mod format;

pub mod participate;

pub mod analysis;
pub mod audit;

pub mod classroom;
pub mod dp;

pub mod bench;
pub mod jobs;
