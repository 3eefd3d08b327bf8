//! # orthomask-survey
//!
//! The application layer of Orthomask: everything a survey *means*, written once, I/O-free, for
//! every front end — the `orthomask` command line, the services (`orthomask-server`), the
//! benchmark (`orthomask-bench`) and the web app. "Where is σ chosen?" has one answer
//! ([`plan`]); so has "where is the manifest made?" ([`manifest`]) and "what does a participant's
//! device send?" ([`client`]).
//!
//! It reads no files, opens no sockets, draws no OS entropy (keys and random bytes come from the
//! caller) and builds for `wasm32-unknown-unknown`; serde is allowed here, at the edge of the
//! numerical crates it calls (`orthomask-core`, `orthomask-dp`, `orthomask-stats`) and of the
//! formats it fills (`orthomask-formats`).
//!
//! Read in this order:
//!
//! * [`policy`] — every policy constant once (δ, failure target, σ headroom, DP allowance, QA
//!   constant, share scale, limits), each with why;
//! * [`error`] — what can be wrong with a definition or with an answer to it;
//! * [`definition`] — the survey definition a browser loads: every type of its JSON shape;
//! * [`coding`] — answers → numeric columns, and form text → answers;
//! * [`terms`] — model terms computed on the device (powers, products, logs, centring): their
//!   values, ranges derived from the declared ones, and the rule for unanswered inputs;
//! * [`branching`] — skip logic: which questions an earlier answer shows (`show_if`);
//! * [`languages`] — the definition's texts in several languages, and which one a browser gets;
//! * [`validation`] — a definition parsed and checked as a whole: questions, conditions,
//!   translations, masking;
//! * [`plan`] — the one plan: `p₂`, σ, device-side DP, for the CLI, the services, the bench and
//!   the classroom;
//! * [`cohort_choice`] — the cohort size a survey gets when nobody chose one (the largest the
//!   accuracy target allows);
//! * [`draft`] — the administrator's draft → a planned definition (the collector's decisions);
//! * [`demonstrations`] — the live demonstration drafts `orthomask serve all` creates;
//! * [`floors`] — what a device and an accepting service demand of a definition whoever signed
//!   it: a QA column that can reveal a change, cohort floor, noise columns, σ at the Appendix C
//!   bound, three or more right-masking services, thick shares, DP noise meeting its budget, a
//!   design the services hold (every field's floor or reason: `docs/threat-model.md`, "What a signed definition may not weaken");
//! * [`intake_bounds`] — how large an honest upload can be, so an accepting service refuses
//!   garbage before storing it;
//! * [`cohort_check`] — whether a cohort's unmasked sums and cross-products could come from
//!   honest records (the exact feasible sets of the declared ranges and codings), and how far one
//!   liar can still move a mean;
//! * [`padding_check`] — whether a provider's batch is an orthogonal mask of honest records: its
//!   padding columns must keep the law honest devices give them;
//! * [`trust`] — the collector's signatures: signed definitions, upload credentials, the
//!   deployment a device may send to;
//! * [`upload`] — the device's protocol messages: upload, receipt, upload hash;
//! * [`merkle`] — RFC 6962 trees over a cohort's receipts: roots and inclusion proofs, which
//!   the services publish and participants and auditors check;
//! * [`client`] — the participant's client: prepare the masked uploads, check receipts;
//! * [`simulate`] — simulated participants' answers for demonstrations (sent through [`client`]);
//! * [`manifest`] — the one manifest builder: plan + release → `manifest.json`;
//! * [`formula`] — a model formula over a release in R's notation, resolved to its columns and
//!   the model terms its manifest records (or refused with why a release cannot give it);
//! * [`datapackage`] — the release as a Frictionless Data Package: its Table Schema, the
//!   codebook of what the raw codes meant, and the labelled factors a release tabulates exactly;
//! * [`obfuscation`] — the manifest's strong-obfuscation statement for the masks run;
//! * [`api`] — the collector's survey-team API as types (`docs/openapi.yaml`'s components), which
//!   the services write and the web app reads;
//! * [`app_build`] — the web app's build digest: which files a collector serves as the app, and
//!   one SHA-256 over them that participants and auditors compare with a published build, and
//!   the rule for the build an upload names;
//! * [`public_builds`] — `builds.json`: which public commit builds which digest, appended only;
//! * [`fate`] — a cohort's fate as the collector says it and a participant's page reads it;
//! * [`audit`] — a manifest's promises as the audit's expectations;
//! * [`inclusion`] — a participant's saved receipt checked against the release's manifest and a
//!   service's published list or inclusion proof;
//! * [`tolerance`] — the tolerances of this crate's tests.

pub mod policy;

pub mod error;

pub mod definition;

pub mod coding;

pub mod terms;

pub mod branching;

pub mod languages;

pub mod validation;

pub mod plan;

pub mod cohort_choice;

pub mod draft;

pub mod demonstrations;

pub mod floors;

pub mod intake_bounds;

pub mod cohort_check;

pub mod padding_check;

pub mod trust;

pub mod upload;

pub mod merkle;

pub mod share_view;

pub mod client;

pub mod simulate;

pub mod manifest;

pub mod formula;

pub mod datapackage;

pub mod obfuscation;

pub mod api;

pub mod app_build;

pub mod public_builds;

pub mod fate;

pub mod audit;

pub mod inclusion;

pub mod tolerance;
