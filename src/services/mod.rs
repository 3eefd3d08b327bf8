//! All I/O of the app, as `async fn … -> Result<T, String>` or small handles: components never
//! call `fetch`, read files or talk to the worker themselves. Errors become one line of text
//! here, at the boundary.
//!
//! * [`http`] — GET text, POST JSON for a place, POST an upload with retry, backoff and receipt
//!   verification;
//! * [`early`] — the requests `index.html` starts before the module arrives (issue 25);
//! * [`app_build`] — the page's own files, read for its build digest (issue 27);
//! * [`participation`] — the survey a participant link names, fetched from this origin and checked;
//!   masking and sending, for the form and for simulated participants;
//! * [`fate`] — watching the participant's cohort after the receipt (spoilt: answer again);
//! * [`simulate`] — simulated participants joining a live demonstration;
//! * [`files`] — read a picked or dropped file;
//! * [`download`] — save text as a file;
//! * [`jobs`] — the Web Worker (with an inline fallback) and its progress;
//! * [`random`] — tokens and keys from the browser's random source;
//! * [`clock`] — `performance.now()` in the page and in the worker;
//! * [`query`] — the query string of a hash route;
//! * [`admin`] — the collector's admin API with the team's bearer token, kept for the tab only.

pub mod admin;
pub mod app_build;
pub mod browser;
pub mod clock;
pub mod download;
pub mod early;
pub mod fate;
pub mod files;
pub mod http;
pub mod jobs;
pub mod outbox;
pub mod participation;
pub mod query;
pub mod random;
pub mod simulate;
