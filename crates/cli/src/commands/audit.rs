//! `orthomask audit`: check a release (and its manifest) for consistency and disclosure risks,
//! check a participant's saved receipts against the release's manifest
//! (`orthomask_survey::inclusion`, issue 10 §5), or check that the web app a collector serves is
//! a published build (`--app`, [`super::app_audit`]).

use super::app_audit::{Expected, Verdict, audit_app};
use crate::io::{print_json, read_bytes, read_text};
use anyhow::{Result, bail};
use clap::Args;
use orthomask_formats::csv::{parse_table, printed_decimals};
use orthomask_formats::manifest::Manifest;
use orthomask_stats::audit::{ReleaseUnderAudit, Status, audit};
use orthomask_survey::audit::expectations;
use orthomask_survey::inclusion::{Evidence, check_receipts, parse_receipt_file};
use orthomask_survey::public_builds;
use serde_json::json;
use std::path::{Path, PathBuf};

/// Arguments of `audit`.
#[derive(Args)]
pub struct AuditArgs {
    /// The released CSV.
    #[arg(
        long,
        required_unless_present_any = ["receipt", "app"],
        conflicts_with_all = ["receipt", "app"]
    )]
    input: Option<PathBuf>,
    /// Its manifest.json.
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// A participant's saved receipt file ({"orthomask_receipt": [...]}): check that each
    /// receipt is in the release --manifest describes, with --evidence.
    #[arg(long, requires_all = ["manifest", "evidence"])]
    receipt: Option<PathBuf>,
    /// A service's published receipt list of the receipt's cohort (`…/cohorts/{k}/receipts`) or
    /// an inclusion proof (`…/receipts/{hash}`); told apart by their fields. Repeat for receipts
    /// of several services.
    #[arg(long, requires = "receipt")]
    evidence: Vec<PathBuf>,
    /// The address of a served web app (a collector's root, `https://…/`): fetch every file its
    /// service worker names and compare the build with --expect or --build. Exits with status 1
    /// when it is not the same build.
    #[arg(long, conflicts_with_all = ["receipt", "manifest"])]
    app: Option<String>,
    /// The published build digest the served app must have (with --app).
    #[arg(long, requires = "app", conflicts_with = "build", required_unless_present_any = ["build", "input", "receipt"])]
    expect: Option<String>,
    /// A build directory on this machine the served app must equal, file by file (with --app).
    #[arg(long, requires = "app")]
    build: Option<PathBuf>,
    /// The public builds kept beside a release (`builds.json`: commit → digest,
    /// `orthomask_survey::public_builds`): with --app, name the public commit whose build is
    /// served, and fail when none is.
    #[arg(long, requires = "app")]
    builds: Option<PathBuf>,
    /// With --app, --build and --builds: the commit the build directory was built from (in a
    /// clean clone, `scripts/reproduce.sh`); when the served app is the same build, append
    /// COMMIT → its digest to --builds (created when absent).
    #[arg(long, requires_all = ["builds", "build"])]
    record: Option<String>,
    /// Exit with status 1 when any check fails.
    #[arg(long)]
    strict: bool,
    /// Print JSON on standard output.
    #[arg(long)]
    json: bool,
}

/// Run `audit`.
pub fn run(args: AuditArgs) -> Result<()> {
    if let Some(receipt) = &args.receipt {
        return receipts(&args, receipt);
    }
    if let Some(url) = &args.app {
        return app(&args, url);
    }
    let Some(input) = &args.input else {
        bail!("give --input (a release) or --receipt (a participant's receipt file)");
    };
    let bytes = read_bytes(input)?;
    let table = parse_table(&bytes, &input.display().to_string())?;
    let expected = match &args.manifest {
        Some(path) => {
            let name = path.display().to_string();
            Some(expectations(
                &Manifest::parse(&read_text(path)?, &name)?,
                &name,
            )?)
        }
        None => None,
    };
    let release = ReleaseUnderAudit {
        names: table.headers(),
        data: table.data(),
        decimals: printed_decimals(&bytes),
    };
    let report = audit(&release, expected.as_ref());
    if args.json {
        print_json(&json!({
            "input": input.display().to_string(),
            "overall": report.overall().as_str(),
            "checks": report.checks.iter().map(|c| json!({
                "id": c.id,
                "status": c.status.as_str(),
                "detail": c.detail,
                "numbers": c.numbers.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
            })).collect::<Vec<_>>(),
        }))?;
    } else {
        for c in &report.checks {
            println!("{:4}  {}", c.status.as_str(), c.detail);
        }
        println!("overall: {}", report.overall().as_str());
    }
    if args.strict && report.overall() == Status::Fail {
        bail!("audit of {} failed", input.display());
    }
    Ok(())
}

/// `--receipt`: one line (or JSON entry) per receipt; fails when any receipt is not shown to be
/// in the release.
fn app(args: &AuditArgs, url: &str) -> Result<()> {
    let expected = match (&args.expect, &args.build) {
        (Some(digest), None) => Expected::Digest(digest),
        (None, Some(dir)) => Expected::Build(dir),
        _ => bail!("--app needs --expect DIGEST or --build DIR"),
    };
    let verdict = audit_app(url, expected)?;
    let public = match (&verdict, &args.builds) {
        (Verdict::Same { digest }, Some(path)) => Some(public_commits(args, path, digest)?),
        _ => None,
    };
    if args.json {
        print_json(&match &verdict {
            Verdict::Same { digest } => {
                json!({"app": url, "same_build": true, "digest": digest, "public_commits": public})
            }
            Verdict::Different {
                served,
                expected,
                first,
            } => json!({"app": url, "same_build": false, "served": served,
                         "expected": expected, "first_difference": first}),
        })?;
    } else {
        match &verdict {
            Verdict::Same { digest } => match &public {
                Some(commits) => {
                    println!("same build {digest}, public commit {}", commits.join(", "))
                }
                None => println!("same build {digest}"),
            },
            Verdict::Different {
                served,
                expected,
                first,
            } => println!(
                "not the same build: {url} serves {served}, expected {expected}{}",
                first.as_ref().map(|f| format!("; {f}")).unwrap_or_default()
            ),
        }
    }
    if matches!(verdict, Verdict::Different { .. }) {
        bail!("{url} does not serve the expected build");
    }
    Ok(())
}

/// The public commits `builds.json` at `path` names for `digest`, after recording `--record`'s
/// commit for it when asked (issue 27 §3).
///
/// # Errors
/// One line: the file is not a list of public builds, the commit is recorded with another
/// digest, or no public commit builds `digest`.
fn public_commits(args: &AuditArgs, path: &Path, digest: &str) -> Result<Vec<String>> {
    let name = path.display().to_string();
    let old = if crate::io::exists(path) {
        Some(read_text(path)?)
    } else {
        None
    };
    let text = match &args.record {
        Some(commit) => {
            let text = public_builds::append(old.as_deref(), &name, commit, digest)?;
            crate::io::write_file(path, &text)?;
            text
        }
        None => old.ok_or_else(|| anyhow::anyhow!("{name}: cannot read: no such file"))?,
    };
    let list = public_builds::parse(&text, &name)?;
    let commits: Vec<String> = public_builds::commits_of(&list, digest)
        .into_iter()
        .map(str::to_owned)
        .collect();
    if commits.is_empty() {
        bail!("{digest} is not the build of any public commit in {name}");
    }
    Ok(commits)
}

fn receipts(args: &AuditArgs, receipt_path: &Path) -> Result<()> {
    let Some(manifest_path) = &args.manifest else {
        bail!("--receipt needs --manifest (the release's manifest.json)");
    };
    let name = manifest_path.display().to_string();
    let manifest = Manifest::parse(&read_text(manifest_path)?, &name)?;
    let saved = parse_receipt_file(
        &read_text(receipt_path)?,
        &receipt_path.display().to_string(),
    )?;
    let evidence = args
        .evidence
        .iter()
        .map(|path| {
            Ok(Evidence::parse(
                &read_text(path)?,
                &path.display().to_string(),
            )?)
        })
        .collect::<Result<Vec<_>>>()?;
    if evidence.is_empty() {
        bail!("--receipt needs --evidence (a published receipt list or an inclusion proof)");
    }
    let mut failed = 0;
    let mut entries = Vec::new();
    for (r, verdict) in saved
        .iter()
        .zip(check_receipts(&manifest, &saved, &evidence))
    {
        let (status, detail) = match verdict {
            Ok(ok) => (
                "pass",
                format!(
                    "upload {} is in released cohort {} of {}: among its {} uploads under root {}",
                    r.upload_hash,
                    ok.root.cohort,
                    ok.root.service,
                    ok.root.count,
                    ok.root.merkle_root
                ),
            ),
            Err(why) => {
                failed += 1;
                ("fail", why.to_string())
            }
        };
        if !args.json {
            println!("{status:4}  {detail}");
        }
        entries.push(json!({
            "service": r.service,
            "survey": r.survey,
            "cohort": r.cohort,
            "upload_hash": r.upload_hash,
            "status": status,
            "detail": detail,
        }));
    }
    let overall = if failed == 0 { "pass" } else { "fail" };
    if args.json {
        print_json(&json!({
            "receipt": receipt_path.display().to_string(),
            "manifest": name,
            "overall": overall,
            "receipts": entries,
        }))?;
    } else {
        println!("overall: {overall}");
    }
    if failed > 0 {
        bail!(
            "{failed} of {} receipts are not shown to be in the release",
            saved.len()
        );
    }
    Ok(())
}
