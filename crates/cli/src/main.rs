//! `orthomask`: the command-line front end of the Orthomask core.
//!
//! Every command reads CSV with a header row, writes CSV and (with `--json`) a JSON summary on
//! standard output. Failures print one line on standard error — naming the file, line and column
//! for bad input — and exit non-zero; the tool never panics on user data.

mod closed_pipe;
mod commands;
mod interrupt;
mod io;
mod keys;
mod memory;
mod progress;
mod survey_file;

use clap::{Parser, Subcommand};
use std::io::Write as _;
use std::process::ExitCode;

/// Privacy-preserving survey data collection by triple matrix-masking (TM²).
#[derive(Parser)]
#[command(name = "orthomask", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Apply a mask to a CSV file.
    #[command(subcommand)]
    Mask(commands::mask::MaskCommand),
    /// Run a whole TM² protocol on raw data, every party simulated, and write what each saw.
    Pipeline(commands::pipeline::PipelineArgs),
    /// Demonstrate attacks on unsafe designs.
    #[command(subcommand)]
    Attack(commands::attack::AttackCommand),
    /// Create a key file with fresh 256-bit keys for the collector, the provider and participants.
    Keygen(commands::keygen::KeygenArgs),
    /// Linear regression with full inference (or bias-corrected, for releases with DP noise).
    Regress(commands::regress::RegressArgs),
    /// Logistic regression (Newton/IRLS) with standard errors, deviance and likelihood-ratio test.
    Logit(commands::logit::LogitArgs),
    /// Contingency table of indicator columns with chi², odds ratio and relative risk.
    Contingency(commands::contingency::ContingencyArgs),
    /// Means, standard deviations, covariance and correlation matrices.
    Describe(commands::describe::DescribeArgs),
    /// Noise sigma for (epsilon, delta)-differential privacy with and without masking (seed 004).
    DpSigma(commands::dp_sigma::DpSigmaArgs),
    /// Secure matrix product XᵀY between two agencies (Karr et al. 2004).
    SecureProduct(commands::secure_product::SecureProductArgs),
    /// Linear and ridge regression over columns held by different agencies (seed 001 §3).
    SecureRegress(commands::secure_regress::SecureRegressArgs),
    /// Audit a release against its manifest: QA, means, XᵀX, binary counts, small cells.
    Audit(commands::audit::AuditArgs),
    /// Run the services: masking service provider, data collector, right-masking services.
    #[command(subcommand)]
    Serve(commands::serve::ServeCommand),
    /// Read a survey definition: check it, or code a CSV of answers into its numeric columns.
    #[command(subcommand)]
    Survey(commands::survey::SurveyCommand),
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Mask(command) => commands::mask::run(command),
        Command::Pipeline(args) => commands::pipeline::run(args),
        Command::Attack(command) => commands::attack::run(command),
        Command::Keygen(args) => commands::keygen::run(args),
        Command::Regress(args) => commands::regress::run(args),
        Command::Logit(args) => commands::logit::run(args),
        Command::Contingency(args) => commands::contingency::run(args),
        Command::Describe(args) => commands::describe::run(args),
        Command::DpSigma(args) => commands::dp_sigma::run(args),
        Command::SecureProduct(args) => commands::secure_product::run(args),
        Command::SecureRegress(args) => commands::secure_regress::run(args),
        Command::Audit(args) => commands::audit::run(args),
        Command::Serve(command) => commands::serve::run(command),
        Command::Survey(command) => commands::survey::run(command),
    }
}

/// Exit status for an internal error (BSD `EX_SOFTWARE`).
const EXIT_INTERNAL: u8 = 70;

fn main() -> ExitCode {
    // `orthomask … | head` ends quietly (`serve` chooses otherwise).
    closed_pipe::on_closed_pipe(closed_pipe::OnClosedPipe::End);
    // The services and the pipeline run large kernels again and again: keep freed memory for
    // reuse instead of faulting it back in every time (see the function's measurements).
    orthomask_core::runtime::keep_freed_memory();
    // A panic would be a bug, but even then the user gets one line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        // Not eprintln!, which panics when standard error cannot be written.
        let _ = writeln!(
            std::io::stderr(),
            "error: internal error (please report): {}",
            message.replace('\n', " ")
        );
    }));
    let cli = Cli::parse();
    match std::panic::catch_unwind(|| run(cli)) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(error)) if error.chain().any(|e| e.is::<interrupt::Interrupted>()) => {
            let _ = writeln!(std::io::stderr(), "{}", interrupt::Interrupted);
            ExitCode::from(interrupt::EXIT_INTERRUPTED)
        }
        Ok(Err(error)) => {
            // `{:#}` joins the context chain on one line: "reading X.csv: X.csv:3:2: …".
            let _ = writeln!(
                std::io::stderr(),
                "error: {}",
                format!("{error:#}").replace('\n', " ")
            );
            ExitCode::FAILURE
        }
        Err(_) => ExitCode::from(EXIT_INTERNAL),
    }
}
