//! `orthomask-bench`: Orthomask at scale against a numpy peer, printed as one table.
//!
//! ```text
//! orthomask-bench --python PATH [--data DIR] [--reps N] [--rounds N] [--quick] [--peer-threads N]
//!                 [--only PREFIX]
//! ```
//!
//! Run through `scripts/bench.sh`, which builds in release mode and creates the Python venv with
//! numpy. Every workload runs in its own child process — the Rust side as
//! `orthomask-bench --child …`, the peer as `python peer.py …` — on the same input files, so each
//! process's peak resident set belongs to one workload. A child reports the median over `--reps`
//! repetitions (the large workloads run once); the whole plan runs `--rounds` times, alternating
//! the two sides, and each side keeps its fastest round — on a shared machine other processes
//! only ever add time, and they hit both sides alike. The command-line rows run `orthomask` and
//! the peer as whole processes timed from spawn to exit; the rows "6." also take each process's
//! exact peak resident set from `wait4` (through `orthomask-bench --measure`, see [`measure`]).
//! Performance claims live here, not in tests.

mod alloc;
mod cli_pipeline;
mod measure;
mod report;
mod stream_pipeline;
mod workloads;

use anyhow::{Context, Result, bail};
use report::{Compare, Row, Target};
use std::path::{Path, PathBuf};
use std::process::Command;
use workloads::{Measurement, Workload};

#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;

/// Orthomask at scale against a numpy peer, printed as one table (through `scripts/bench.sh`).
#[derive(Debug, clap::Parser)]
#[command(name = "orthomask-bench")]
struct Options {
    /// Python with numpy for the peer (scripts/bench.sh creates a venv); without it only the
    /// Rust side runs.
    #[arg(long)]
    python: Option<PathBuf>,
    /// Where the shared inputs are written.
    #[arg(long, default_value_os_t = std::env::temp_dir().join("orthomask-bench"))]
    data: PathBuf,
    /// Repetitions of the small workloads inside one process, median reported.
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Rounds over all workloads, interleaving both sides; each keeps its fastest round.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..))]
    rounds: u16,
    /// Skip the peer's p = 10 000 record (a 10 000 × 10 000 QR takes minutes; it runs in the
    /// first round only).
    #[arg(long)]
    quick: bool,
    /// Set OPENBLAS_NUM_THREADS / OMP_NUM_THREADS for the peer (default: numpy's own choice).
    #[arg(long)]
    peer_threads: Option<usize>,
    /// Run only the rows whose label starts with this (e.g. `5.`).
    #[arg(long)]
    only: Option<String>,
    /// The record counts of the rows "6." (for trying them at a small scale; the issue's are
    /// 10 000, 100 000 and 1 000 000, and its targets apply to the 1 000 000 row only).
    #[arg(long, hide = true, value_delimiter = ',', default_values_t = STREAM_N)]
    stream_n: Vec<usize>,
}

/// The record counts of the rows "6." (issue 23 §4).
const STREAM_N: [usize; 3] = [10_000, 100_000, 1_000_000];

/// Answer columns of the rows "6." (`p₁ = 21` with the QA column).
const STREAM_ANSWERS: usize = 20;

/// Write every input the workloads read.
fn write_inputs(dir: &Path, plan: &[Planned]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for planned in plan {
        if matches!(planned.workload, Workload::Stream { .. }) {
            // Up to 10⁶ × 20: written row by row, once.
            stream_pipeline::ensure_input(dir, &planned.workload)?;
            continue;
        }
        let (rows, cols) = planned.workload.input_shape();
        let name = planned.workload.input_name();
        let input = workloads::survey(rows, cols);
        workloads::write_matrix(dir, &name, &input)?;
        if matches!(planned.workload, Workload::Cli { .. }) {
            cli_pipeline::write_csv(&cli_pipeline::csv_path(dir, &planned.workload), &input)?;
        }
    }
    Ok(())
}

/// One line of the plan: a workload, how often to repeat it, whether the peer runs it.
struct Planned {
    label: String,
    workload: Workload,
    /// Repetitions on the Rust side (the median is reported).
    reps: usize,
    /// Repetitions of the peer; 0 when the peer does not run this workload.
    peer_reps: usize,
    /// Whether the peer runs in every round (false: only the first).
    peer_every_round: bool,
    /// What the row is compared with, and whether it is the monolithic reference.
    compare: Compare,
    reference: bool,
    targets: Vec<Target>,
    note: Option<String>,
}

/// `10 000`: thousands separated by a space, as in the issue.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

fn plan(options: &Options) -> Result<Vec<Planned>> {
    let answers_10 = 9; // p₁ = 10 with the QA column
    let answers_20 = 19; // p₁ = 20
    let mut plan = Vec::new();
    for p in [1_000, 10_000] {
        plan.push(Planned {
            label: format!("1. one record, participant's role, p = {}", grouped(p)),
            workload: Workload::Record {
                p,
                answers: answers_10,
            },
            reps: if p == 10_000 {
                options.reps
            } else {
                5 * options.reps
            },
            // A 10 000 × 10 000 QR takes minutes: once, and not at all with --quick.
            peer_reps: match (p, options.quick) {
                (10_000, true) => 0,
                (10_000, false) => 1,
                _ => options.reps,
            },
            peer_every_round: p < 10_000,
            compare: Compare::OwnPeer,
            reference: false,
            targets: if p == 10_000 {
                vec![Target::TimeBelow(0.3), Target::HeapBelow(5.0e6)]
            } else {
                Vec::new()
            },
            note: (p == 10_000).then(|| {
                "time includes deriving B from the device key (its 10 000 signs); the peer builds \
                 B by a 10 000 × 10 000 QR"
                    .to_string()
            }),
        });
    }
    let (n, p2) = (2_000, 2_000);
    // γ = p₂/n = 1 has no Appendix C bound; σ is the one the plan gives the same p₂ for cohorts
    // of 250.
    let sigma_mono = workloads::plan_for(250, answers_10, Some(p2), None)?.sigma;
    plan.push(Planned {
        label: "2. pipeline n = 2 000, p₁ = 10, p₂ = 2 000, monolithic".into(),
        workload: Workload::Pipeline {
            n,
            answers: answers_10,
            p2,
            cohort: None,
            sigma: sigma_mono,
            teaching: true,
        },
        reps: options.reps,
        peer_reps: 1,
        peer_every_round: true,
        compare: Compare::OwnPeer,
        reference: true,
        targets: vec![Target::SpeedupAtLeast(2.0)],
        note: Some(
            "p₂ = n gives γ = p₂/n = 1, which the strict design check refuses (Appendix C needs \
             p₂ > n), so this row runs in teaching mode (warnings), with the σ of the cohort rows"
                .into(),
        ),
    });
    plan.push(Planned {
        label: "2. same data, cohorts of m = 250, same p₂ = 2 000".into(),
        workload: Workload::Pipeline {
            n,
            answers: answers_10,
            p2,
            cohort: Some(250),
            sigma: sigma_mono,
            teaching: false,
        },
        reps: options.reps,
        peer_reps: 0,
        peer_every_round: false,
        compare: Compare::MonolithicPeer,
        reference: false,
        targets: vec![Target::SpeedupVsMonolithicPeerAtLeast(50.0)],
        note: None,
    });
    // The monolithic row's rule p₂ = n (γ = 1) applied per cohort: p₂ = m.
    plan.push(Planned {
        label: "2. same data, cohorts of m = 250, p₂ = m = 250 (the monolithic row's p₂ = n rule)"
            .into(),
        workload: Workload::Pipeline {
            n,
            answers: answers_10,
            p2: 250,
            cohort: Some(250),
            sigma: sigma_mono,
            teaching: true,
        },
        reps: options.reps,
        peer_reps: 0,
        peer_every_round: false,
        compare: Compare::MonolithicPeer,
        reference: false,
        targets: vec![Target::SpeedupVsMonolithicPeerAtLeast(50.0)],
        note: Some(
            "γ = p₂/m = 1 per cohort, as γ = p₂/n = 1 in the monolithic row it is compared with; \
             teaching mode for the same reason"
                .into(),
        ),
    });
    let cohort_plan = workloads::plan_for(250, answers_10, None, None)?;
    let p2_cohort = cohort_plan.p2;
    plan.push(Planned {
        label: format!(
            "2. same data, cohorts of m = 250, p₂ = {} (default for m = 250)",
            grouped(p2_cohort)
        ),
        workload: Workload::Pipeline {
            n,
            answers: answers_10,
            p2: p2_cohort,
            cohort: Some(250),
            sigma: cohort_plan.sigma,
            teaching: false,
        },
        reps: options.reps,
        peer_reps: 0,
        peer_every_round: false,
        compare: Compare::MonolithicPeer,
        reference: false,
        targets: vec![Target::SpeedupVsMonolithicPeerAtLeast(50.0)],
        note: None,
    });
    // Issue 9: the command-line pipeline as a user runs it, with one cohort (`--cohort-size all`:
    // by default the plan now chooses cohorts, the rows "6.") and with cohorts of 250, against
    // the numpy monolithic pipeline of the same n (its p₂ and σ as orthomask chooses them for one
    // cohort), both timed as whole processes.
    for (cohort, target) in [(None, 2.0), (Some(250), 10.0)] {
        let n = 1_500;
        plan.push(Planned {
            label: match cohort {
                None => format!(
                    "5. `orthomask pipeline --cohort-size all` (one cohort, otherwise default \
                     flags), n = {}, 10 answers, whole process",
                    grouped(n)
                ),
                Some(m) => format!(
                    "5. `orthomask pipeline --cohort-size {m}`, same data, vs the peer's monolithic pipeline"
                ),
            },
            workload: Workload::Cli {
                n,
                answers: 10,
                cohort,
            },
            reps: 1,
            peer_reps: 1,
            peer_every_round: true,
            compare: Compare::OwnPeer,
            reference: false,
            targets: vec![Target::SpeedupAtLeast(target)],
            note: (cohort.is_none()).then(|| {
                "whole processes timed from spawn to exit: orthomask reads the CSV, draws fresh \
                 keys, chooses p₂ and σ for one cohort of n, computes the condition (3.7) margin \
                 and writes release.csv and manifest.json; the peer (python + numpy import \
                 included) reads the same numbers from a binary file, with the p₂ and σ orthomask \
                 chose"
                    .to_string()
            }),
        });
    }
    let scale_plan = workloads::plan_for(500, answers_20, None, None)?;
    let p2_scale = scale_plan.p2;
    plan.push(Planned {
        label: format!(
            "4. scale n = 100 000, p₁ = 20, cohorts of m = 500, p₂ = {} (default)",
            grouped(p2_scale)
        ),
        workload: Workload::Pipeline {
            n: 100_000,
            answers: answers_20,
            p2: p2_scale,
            cohort: Some(500),
            sigma: scale_plan.sigma,
            teaching: false,
        },
        reps: 1,
        peer_reps: 0,
        peer_every_round: false,
        compare: Compare::Nothing,
        reference: false,
        targets: vec![Target::TimeBelow(60.0), Target::RssBelow(2.0e9)],
        note: Some(
            "no peer: its n × n masks alone would take 80 GB; the run streams cohorts \
             (run_tm2_streaming), so nothing n × p is kept"
                .into(),
        ),
    });
    // Issue 23 §4: the command line with its default flags at scale — the plan chooses the
    // cohort size and the command streams the CSV cohort by cohort — against the peer's
    // streaming cohort pipeline with the design orthomask chose, both whole processes.
    for (k, &n) in options.stream_n.iter().enumerate() {
        plan.push(Planned {
            label: format!(
                "6. `orthomask pipeline` (default flags: the plan's cohorts, streamed), n = {}, \
                 {STREAM_ANSWERS} answers, whole process",
                grouped(n)
            ),
            workload: Workload::Stream {
                n,
                answers: STREAM_ANSWERS,
            },
            reps: 1,
            peer_reps: 1,
            peer_every_round: true,
            compare: Compare::OwnPeer,
            reference: false,
            targets: if n == 1_000_000 {
                vec![
                    Target::TimeBelow(300.0),
                    Target::RssBelow(2.0e9),
                    Target::SpeedupAtLeast(1.0),
                ]
            } else {
                Vec::new()
            },
            note: (k == 0).then(|| {
                "whole processes timed from spawn to exit, each with its exact peak RSS \
                 (ru_maxrss from wait4); orthomask runs with no flag but --input and --out-dir: \
                 the plan chooses the cohort size, p₂ and σ, the command streams the CSV cohort \
                 by cohort and writes release.csv and manifest.json; the peer (python + numpy \
                 import included) runs the same cohort pipeline with the p₂, σ and cohort sizes \
                 orthomask chose (read from its manifest), streaming too: it reads each cohort \
                 from a binary file of the same numbers, scales the answers to [−1, 1] when \
                 orthomask did (by their observed ranges, one more pass), masks the cohort \
                 densely (B by the QR of a p × p Gaussian matrix, A₂ by one of m × m), keeps the \
                 n × p₁ unmasked rows and draws A₁M by orbit sampling as orthomask's collector \
                 does; it writes nothing. Without --peer-threads the peer runs the first row \
                 \"6.\" of each round with numpy's default BLAS threading and with one thread, \
                 and the other rows \"6.\" of the round with the faster of the two. The time per \
                 record of the rows \"6.\" shows how the cost grows with n: constant per record \
                 is linear in n"
                    .to_string()
            }),
        });
    }
    Ok(plan)
}

/// The footnote of a row "6.": the design orthomask chose and the time per record of each side
/// (constant across n: the cost is linear in n).
fn stream_note(
    planned: &Planned,
    data: &Path,
    ours: &Measurement,
    peer: Option<&Measurement>,
) -> String {
    let (n, _) = planned.workload.input_shape();
    let per_record = |m: &Measurement| format!("{:.1} µs", m.seconds / n as f64 * 1e6);
    let design = stream_pipeline::read_design(data, &planned.workload).map_or_else(
        |e| format!("orthomask's design unreadable ({e:#})"),
        |d| format!("orthomask chose {}", d.describe()),
    );
    let mut note = format!(
        "{design}; time per record {} (numpy {})",
        per_record(ours),
        peer.map_or_else(|| "not run".to_string(), per_record)
    );
    if let Some(base) = &planned.note {
        note = format!("{base}. This row: {note}");
    }
    note
}

/// Run one workload in a child process and read its `RESULT` line.
fn run_child(mut command: Command, what: &str) -> Result<Measurement> {
    let output = command
        .output()
        .with_context(|| format!("starting the {what} child"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!(
            "the {what} child failed ({}): {}{}",
            output.status,
            stdout.trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Measurement::from_output(&stdout).with_context(|| format!("reading the {what} child"))
}

fn rust_child(planned: &Planned, data: &Path) -> Result<Measurement> {
    match planned.workload {
        Workload::Cli { .. } => {
            return cli_pipeline::run_ours(&planned.workload, data, planned.reps);
        }
        Workload::Stream { .. } => return stream_pipeline::run_ours(&planned.workload, data),
        Workload::Record { .. } | Workload::Pipeline { .. } => {}
    }
    let mut command = Command::new(std::env::current_exe()?);
    command
        .arg("--child")
        .arg(format!("--data={}", data.display()))
        .arg(format!("--reps={}", planned.reps))
        .args(planned.workload.to_args());
    run_child(command, "Rust")
}

/// Run the peer on one workload. Without `--peer-threads`, workloads the peer runs every round are
/// run twice — with numpy's default BLAS threading and with one BLAS thread — and the faster
/// counts: OpenBLAS's threads spin and stall when other processes share the cores, and the peer
/// should not lose to that. (The one-off 10 000 × 10 000 QR runs with the default only.)
///
/// The rows "6." run the peer with both settings only for the first of them in a round (the
/// smallest n), and the others of the round with the faster one (`stream_threading`: `None` until
/// then; `Some(None)` numpy's default, `Some(Some(1))` one thread): the slow setting's cost is
/// per cohort, the same at every n, and one run of the 10⁶ row is long enough.
fn peer_child(
    planned: &Planned,
    data: &Path,
    options: &Options,
    stream_threading: &mut Option<Option<usize>>,
) -> Result<Option<Measurement>> {
    let Some(python) = &options.python else {
        return Ok(None);
    };
    if planned.peer_reps == 0 {
        return Ok(None);
    }
    let whole_process = matches!(planned.workload, Workload::Cli { .. });
    let streaming = matches!(planned.workload, Workload::Stream { .. });
    let args = match planned.workload {
        Workload::Cli { .. } => cli_pipeline::peer_args(&planned.workload)?,
        // The design orthomask chose in this round (its run comes first).
        Workload::Stream { .. } => stream_pipeline::peer_args(&planned.workload, data)?,
        Workload::Record { .. } | Workload::Pipeline { .. } => planned.workload.to_args(),
    };
    let run = |threads: Option<usize>| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/peer.py");
        let mut command = Command::new(python);
        command
            .arg(script)
            .args(&args)
            .arg(format!("--data={}", data.display()))
            .arg(format!("--reps={}", planned.peer_reps));
        if let Some(threads) = threads {
            for var in ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"] {
                command.env(var, threads.to_string());
            }
        }
        if streaming {
            // Timed and measured from outside, as orthomask is.
            return stream_pipeline::run_peer(&command);
        }
        // The command-line rows time the whole process, as a user experiences a script.
        let start = std::time::Instant::now();
        let measured = run_child(command, "numpy")?;
        Ok::<_, anyhow::Error>(if whole_process {
            Measurement {
                seconds: start.elapsed().as_secs_f64(),
                heap_bytes: f64::NAN,
                ..measured
            }
        } else {
            measured
        })
    };
    if options.peer_threads.is_some() || !planned.peer_every_round {
        return Ok(Some(run(options.peer_threads)?));
    }
    if streaming && let Some(threads) = *stream_threading {
        return Ok(Some(run(threads)?));
    }
    let default = run(None)?;
    let one = run(Some(1))?;
    if streaming {
        let faster = (one.seconds < default.seconds).then_some(1);
        eprintln!(
            "  the peer was faster with {} ({} against {}); the other rows \"6.\" of this round \
             use it",
            faster.map_or("numpy's default BLAS threading", |_| "one BLAS thread"),
            report::seconds(default.seconds.min(one.seconds)),
            report::seconds(default.seconds.max(one.seconds)),
        );
        *stream_threading = Some(faster);
    }
    Ok(Some(default.best_of(&one)))
}

/// `--child DATA REPS WORKLOAD…`: run one workload here and print its `RESULT` line.
fn child(args: &[String]) -> Result<()> {
    let data = args
        .iter()
        .find_map(|a| a.strip_prefix("--data="))
        .context("--child needs --data=")?;
    let reps = args
        .iter()
        .find_map(|a| a.strip_prefix("--reps="))
        .map_or(Ok(1), str::parse)?;
    let rest: Vec<String> = args
        .iter()
        .filter(|a| !a.starts_with("--data=") && !a.starts_with("--reps="))
        .cloned()
        .collect();
    let workload = Workload::from_args(&rest)?;
    let measurement = workloads::run_rust(&workload, Path::new(data), reps)?;
    println!("{}", measurement.to_line());
    Ok(())
}

fn main() -> Result<()> {
    // `--child` is the protocol between this process and its children (the same workload
    // words the Python peer reads), and `--measure` the launcher that measures a whole process
    // (see `measure`); neither is an option for people: they are read before clap.
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == "--measure") {
        return measure::launcher(&args[1..]);
    }
    if args.first().is_some_and(|a| a == "--child") {
        let args: Vec<String> = args
            .into_iter()
            .map(|a| {
                a.into_string()
                    .map_err(|a| anyhow::anyhow!("not UTF-8: {a:?}"))
            })
            .collect::<Result<_>>()?;
        return child(&args[1..]);
    }
    let options = <Options as clap::Parser>::parse();
    let mut plan = plan(&options)?;
    if let Some(prefix) = &options.only {
        plan.retain(|p| p.label.starts_with(prefix.as_str()));
        if plan.is_empty() {
            bail!("no workload's label starts with {prefix:?}");
        }
    }
    write_inputs(&options.data, &plan)?;
    let environment = report::Environment::detect(options.python.as_deref(), &options)?;
    eprintln!("{}", environment.describe());
    // Rounds interleave the two sides, so that load from other processes on the machine hits
    // both alike; each side keeps its fastest round (interference only ever adds time) and its
    // largest memory figures.
    let mut results: Vec<(Option<Measurement>, Option<Measurement>)> =
        vec![(None, None); plan.len()];
    for round in 0..options.rounds {
        let mut stream_threading = None;
        for (planned, (ours, peer)) in plan.iter().zip(results.iter_mut()) {
            eprintln!("round {}/{}: {}", round + 1, options.rounds, planned.label);
            let measured = rust_child(planned, &options.data)?;
            *ours = Some(
                ours.take()
                    .map_or(measured.clone(), |m| m.best_of(&measured)),
            );
            // The peer's 10 000 × 10 000 QR takes minutes: one round only.
            let peer_runs = round == 0 || planned.peer_every_round;
            if peer_runs
                && let Some(measured) =
                    peer_child(planned, &options.data, &options, &mut stream_threading)?
            {
                *peer = Some(
                    peer.take()
                        .map_or(measured.clone(), |m| m.best_of(&measured)),
                );
            }
        }
    }
    let mut rows = Vec::new();
    for (planned, (ours, peer)) in plan.iter().zip(results) {
        let ours = ours.context("every workload ran at least once")?;
        let note = if matches!(planned.workload, Workload::Stream { .. }) {
            Some(stream_note(planned, &options.data, &ours, peer.as_ref()))
        } else {
            planned.note.clone()
        };
        rows.push(Row {
            label: planned.label.clone(),
            ours,
            peer,
            compare: planned.compare,
            reference: planned.reference,
            targets: planned.targets.clone(),
            note,
        });
    }
    println!("{}", report::table(&rows, &environment));
    Ok(())
}

impl report::PeerOptions for Options {
    fn peer_threads(&self) -> Option<usize> {
        self.peer_threads
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_by_hand() {
        assert_eq!(grouped(7), "7");
        assert_eq!(grouped(1_000), "1 000");
        assert_eq!(grouped(100_000), "100 000");
        assert_eq!(grouped(1_234_567), "1 234 567");
    }

    #[test]
    fn workloads_round_trip_through_child_arguments() {
        let options = <Options as clap::Parser>::parse_from(["orthomask-bench", "--quick"]);
        for planned in plan(&options).unwrap() {
            let args = planned.workload.to_args();
            assert_eq!(Workload::from_args(&args).unwrap(), planned.workload);
        }
    }

    /// The rows "6.": 10⁴, 10⁵ and 10⁶ records × 20 answers with the default flags, the
    /// issue's targets on the 10⁶ row only; `--stream-n` (hidden) tries them smaller; row 5's
    /// monolithic comparison no longer claims the default flags.
    #[test]
    fn the_streaming_rows_and_their_targets() {
        let parse = |args: &[&str]| {
            <Options as clap::Parser>::try_parse_from(
                std::iter::once("orthomask-bench").chain(args.iter().copied()),
            )
            .unwrap()
        };
        let rows = |options: &Options| -> Vec<Planned> {
            plan(options)
                .unwrap()
                .into_iter()
                .filter(|p| p.label.starts_with("6."))
                .collect()
        };
        let issue = rows(&parse(&[]));
        assert_eq!(
            issue.iter().map(|p| p.workload.clone()).collect::<Vec<_>>(),
            STREAM_N.map(|n| Workload::Stream { n, answers: 20 })
        );
        assert!(issue[0].label.contains("n = 10 000, 20 answers"));
        assert!(issue[..2].iter().all(|p| p.targets.is_empty()));
        assert_eq!(
            issue[2].targets,
            [
                Target::TimeBelow(300.0),
                Target::RssBelow(2.0e9),
                Target::SpeedupAtLeast(1.0)
            ]
        );
        assert!(
            issue
                .iter()
                .all(|p| p.peer_reps == 1 && p.compare == Compare::OwnPeer)
        );
        let small = rows(&parse(&["--stream-n", "2000,5000"]));
        assert_eq!(
            small
                .iter()
                .map(|p| p.workload.input_shape())
                .collect::<Vec<_>>(),
            [(2_000, 20), (5_000, 20)]
        );
        assert!(small.iter().all(|p| p.targets.is_empty()));
        let row_5 = plan(&parse(&[])).unwrap();
        assert!(
            row_5
                .iter()
                .filter(|p| p.label.starts_with("5."))
                .all(|p| !p.label.contains("(default flags)"))
        );
    }

    /// The options are clap's: defaults, values, and one-line refusals.
    #[test]
    fn options_are_read_by_clap() {
        let parse = |args: &[&str]| {
            <Options as clap::Parser>::try_parse_from(
                std::iter::once("orthomask-bench").chain(args.iter().copied()),
            )
        };
        let defaults = parse(&[]).unwrap();
        assert_eq!(
            (defaults.reps, defaults.rounds, defaults.quick),
            (3, 3, false)
        );
        let given = parse(&["--rounds", "2", "--peer-threads", "1", "--only", "5."]).unwrap();
        assert_eq!(
            (given.rounds, given.peer_threads, given.only.as_deref()),
            (2, Some(1), Some("5."))
        );
        for bad in [&["--rounds", "0"][..], &["--reps", "x"], &["--frobnicate"]] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("error: "), "{bad:?}: {e}");
        }
    }
}
