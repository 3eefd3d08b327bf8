//! The Orthomask services: the masking service provider, the data collector and the
//! right-masking services of share mode, as HTTP services (axum) with durable SQLite stores.
//!
//! ```text
//! participant ──x·B_k──▶ provider (msp.rs) ──A₂,k X_k B_k──▶ collector (collector.rs)
//!      ▲                  stores x·B_k, applies A₂,k           removes B_k, QA, A₁, release
//!      └──────────── survey definition with the cohort's device key ◀──┘
//!
//! share mode (seed 000 §3.5): share i ──▶ right service i (right.rs) ──Xⁱ Bᵢ──▶ provider
//!     ──A Xⁱ Bᵢ──▶ right service i ──A Xⁱ──▶ collector: Σᵢ A Xⁱ = A X
//! ```
//!
//! All masking mathematics is `orthomask_core`'s and every survey decision (the plan, the
//! definition, the manifest, the participant's client) is `orthomask_survey`'s; this crate moves
//! bytes, stores them and enforces who may see what. Read in this order: the foundations
//! (errors, time, the store, key files, the parties' identities), what crosses HTTP and how it
//! is guarded (peer requests signed and checked, `peer_auth`), the intake
//! shared by the accepting services, each role, then the web app and the runner.

pub mod error;
pub mod log;
pub mod time;

pub mod checkpointer;
pub mod compute;
pub mod store;

pub mod keys;
pub mod peers;

pub mod json_numbers;
pub mod wire;

pub mod http;
pub mod peer_auth;
pub mod ratelimit;

pub mod outbox;
pub mod states;

pub mod intake;
pub mod intake_http;

pub mod msp;
pub mod right;

pub mod collector;

pub mod web;

pub mod address_share;
pub mod listener;
pub mod process_cpu;
pub mod run;

pub use collector::CollectorConfig;
pub use error::{ApiError, ServerError};
pub use http::Limits;
pub use msp::MspConfig;
pub use right::RightConfig;
pub use run::{AllConfig, AllRunning, Running, ServePlan, serve_blocking, start_all};
