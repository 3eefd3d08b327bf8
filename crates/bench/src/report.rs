//! The printed table: every figure beside the peer's, with the ratio and the target.

use crate::workloads::Measurement;
use anyhow::Result;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// A target of issue "Masking at scale" for one workload.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// Orthomask's wall time below this many seconds.
    TimeBelow(f64),
    /// Orthomask's peak heap beyond the input below this many bytes.
    HeapBelow(f64),
    /// Orthomask's peak resident set below this many bytes.
    RssBelow(f64),
    /// At least this many times faster than the numpy peer of the same workload.
    SpeedupAtLeast(f64),
    /// At least this many times faster than the numpy peer of the monolithic pipeline.
    SpeedupVsMonolithicPeerAtLeast(f64),
}

/// Which line of a workload's block a target belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Measure {
    Time,
    Heap,
    Rss,
}

impl Target {
    fn measure(&self) -> Measure {
        match self {
            Self::HeapBelow(_) => Measure::Heap,
            Self::RssBelow(_) => Measure::Rss,
            Self::TimeBelow(_)
            | Self::SpeedupAtLeast(_)
            | Self::SpeedupVsMonolithicPeerAtLeast(_) => Measure::Time,
        }
    }
}

/// Which peer figure a workload is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    /// The peer ran the same workload.
    OwnPeer,
    /// The peer's monolithic pipeline on the same data (the peer has no cohorts).
    MonolithicPeer,
    /// No peer figure (the peer cannot run it: its `n × n` matrices would not fit).
    Nothing,
}

/// One workload's results.
#[derive(Clone, Debug)]
pub struct Row {
    /// What was run.
    pub label: String,
    /// Orthomask's measurement.
    pub ours: Measurement,
    /// The numpy peer's, when it ran this workload.
    pub peer: Option<Measurement>,
    /// What this row is compared with.
    pub compare: Compare,
    /// Whether this row's peer is the monolithic reference of the [`Compare::MonolithicPeer`]
    /// rows.
    pub reference: bool,
    /// The targets for this workload.
    pub targets: Vec<Target>,
    /// A footnote on how the workload was run, if any.
    pub note: Option<String>,
}

/// Where the peer's options come from (the parent's command line).
pub trait PeerOptions {
    /// `--peer-threads`, if given.
    fn peer_threads(&self) -> Option<usize>;
}

/// The machine and software the numbers were measured on.
#[derive(Clone, Debug)]
pub struct Environment {
    cpu: String,
    cores: usize,
    load_at_start: String,
    numpy: Option<String>,
    peer_threads: Option<usize>,
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into())
}

impl Environment {
    /// Look at the machine (Linux `/proc`) and ask the peer's Python for its numpy version.
    ///
    /// # Errors
    /// When the given Python cannot import numpy.
    pub fn detect(python: Option<&Path>, options: &impl PeerOptions) -> Result<Self> {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|info| {
                info.lines()
                    .find_map(|l| l.strip_prefix("model name"))
                    .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
            })
            .unwrap_or_else(|| "unknown CPU".into());
        let numpy = match python {
            Some(python) => {
                let out = Command::new(python)
                    .args([
                        "-c",
                        "import numpy, sys; print(numpy.__version__, sys.version.split()[0])",
                    ])
                    .output()?;
                if !out.status.success() {
                    anyhow::bail!(
                        "{} cannot import numpy: {}",
                        python.display(),
                        String::from_utf8_lossy(&out.stderr).trim()
                    );
                }
                let text = String::from_utf8_lossy(&out.stdout);
                let mut parts = text.split_whitespace();
                Some(format!(
                    "numpy {} on Python {}",
                    parts.next().unwrap_or("?"),
                    parts.next().unwrap_or("?")
                ))
            }
            None => None,
        };
        Ok(Self {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
            load_at_start: load_average(),
            numpy,
            peer_threads: options.peer_threads(),
        })
    }

    /// One line for the log.
    pub fn describe(&self) -> String {
        format!(
            "{} × {} cores, load average {}; peer: {}",
            self.cores,
            self.cpu,
            self.load_at_start,
            self.numpy.as_deref().unwrap_or("not run")
        )
    }
}

/// `1.23 ms`, `456 ms`, `12.3 s`.
pub fn seconds(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.0} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.3} s", s)
    } else {
        format!("{:.2} s", s)
    }
}

/// `0.17 MB`, `1.25 GB` (decimal units).
pub fn bytes(b: f64) -> String {
    if !b.is_finite() {
        // Not measured (a whole process timed from outside).
        "—".into()
    } else if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else {
        format!("{:.2} MB", b / 1e6)
    }
}

/// `peer / ours` as `12.3×`.
pub fn ratio(peer: f64, ours: f64) -> String {
    if !(ours > 0.0 && peer.is_finite()) {
        return "—".into();
    }
    let r = peer / ours;
    if r >= 100.0 {
        format!("{r:.0}×")
    } else {
        format!("{r:.1}×")
    }
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "**missed**" }
}

/// The peer measurement the monolithic-pipeline targets compare against.
fn monolithic_peer(rows: &[Row]) -> Option<&Measurement> {
    rows.iter()
        .find(|r| r.reference)
        .and_then(|r| r.peer.as_ref())
}

fn target_text(target: &Target, row: &Row, rows: &[Row]) -> String {
    match target {
        Target::TimeBelow(limit) => format!(
            "< {}: {}",
            seconds(*limit),
            verdict(row.ours.seconds < *limit)
        ),
        Target::HeapBelow(limit) => format!(
            "< {} beyond input: {}",
            bytes(*limit),
            verdict(row.ours.heap_bytes < *limit)
        ),
        Target::RssBelow(limit) => format!(
            "< {}: {}",
            bytes(*limit),
            verdict(row.ours.rss_bytes < *limit)
        ),
        Target::SpeedupAtLeast(x) => match &row.peer {
            Some(peer) => format!(
                "≥ {x}× numpy: {}",
                verdict(peer.seconds / row.ours.seconds >= *x)
            ),
            None => format!("≥ {x}× numpy: peer not run"),
        },
        Target::SpeedupVsMonolithicPeerAtLeast(x) => match monolithic_peer(rows) {
            Some(peer) => format!(
                "≥ {x}× numpy: {}",
                verdict(peer.seconds / row.ours.seconds >= *x)
            ),
            None => format!("≥ {x}× numpy: peer not run"),
        },
    }
}

/// The Markdown table.
pub fn table(rows: &[Row], environment: &Environment) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Machine: {} × {} ({} cores available), load average {} at start, {} at end. Peer: {}{}.",
        environment.cores,
        environment.cpu,
        environment.cores,
        environment.load_at_start,
        load_average(),
        environment.numpy.as_deref().unwrap_or("not run"),
        environment.peer_threads.map_or(
            " (each round the faster of numpy's default BLAS threading and one BLAS thread)"
                .to_string(),
            |t| format!(" with {t} BLAS thread(s)")
        ),
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| workload | measure | Orthomask | numpy peer | numpy ÷ Orthomask | target |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    let mono_peer = monolithic_peer(rows);
    for row in rows {
        // Cohort rows compare with the monolithic peer (the peer has no cohorts).
        let (peer, peer_note) = match row.compare {
            Compare::OwnPeer => (row.peer.as_ref(), ""),
            Compare::MonolithicPeer => (mono_peer, " (monolithic)"),
            Compare::Nothing => (None, ""),
        };
        let targets_for = |measure: Measure| {
            row.targets
                .iter()
                .filter(|t| t.measure() == measure)
                .map(|t| target_text(t, row, rows))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let cell = |f: &dyn Fn(&Measurement) -> String| {
            peer.map_or("—".to_string(), |p| format!("{}{peer_note}", f(p)))
        };
        let ratio_of = |f: &dyn Fn(&Measurement) -> f64| {
            peer.map_or("—".to_string(), |p| ratio(f(p), f(&row.ours)))
        };
        let _ = writeln!(
            out,
            "| {} | time | {} | {} | {} | {} |",
            row.label,
            seconds(row.ours.seconds),
            cell(&|m| seconds(m.seconds)),
            ratio_of(&|m| m.seconds),
            targets_for(Measure::Time)
        );
        let _ = writeln!(
            out,
            "| | peak heap beyond input | {} | {} | {} | {} |",
            bytes(row.ours.heap_bytes),
            cell(&|m| bytes(m.heap_bytes)),
            ratio_of(&|m| m.heap_bytes),
            targets_for(Measure::Heap)
        );
        let _ = writeln!(
            out,
            "| | peak RSS of the process | {} | {} | {} | {} |",
            bytes(row.ours.rss_bytes),
            cell(&|m| bytes(m.rss_bytes)),
            ratio_of(&|m| m.rss_bytes),
            targets_for(Measure::Rss)
        );
        let _ = writeln!(
            out,
            "| | accuracy (rel. error of {}) | {:.1e} | {} | | |",
            if row.label.contains("record") {
                "‖xB‖"
            } else {
                "XᵀX"
            },
            row.ours.check,
            row.peer
                .as_ref()
                .map_or("—".to_string(), |p| format!("{:.1e}", p.check)),
        );
    }
    let _ = writeln!(out);
    for row in rows {
        if let Some(note) = &row.note {
            let _ = writeln!(out, "* {}: {note}", row.label);
        }
    }
    let _ = writeln!(
        out,
        "* Time: wall time, the median of the repetitions inside one process, fastest of the \
         rounds (each workload in its own process; rounds alternate the two sides). Peak heap: Orthomask's counting global allocator, numpy's tracemalloc (array \
         buffers; LAPACK work space not included). Peak RSS: VmHWM / ru_maxrss of the workload's \
         process (includes the interpreter and libraries; the rows \"6.\": ru_maxrss from wait4 \
         of the whole process). The numpy ÷ Orthomask ratio of the cohort \
         rows is taken against the peer's monolithic pipeline on the same data (the peer has no \
         cohorts)."
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(seconds: f64, heap: f64) -> Measurement {
        Measurement {
            seconds,
            heap_bytes: heap,
            rss_bytes: 3.0 * heap,
            check: 1e-15,
        }
    }

    #[test]
    fn units_and_ratios_by_hand() {
        assert_eq!(seconds(0.0123), "0.012 s");
        assert_eq!(seconds(12.345), "12.35 s");
        assert_eq!(seconds(2e-5), "20 µs");
        assert_eq!(bytes(1.5e6), "1.50 MB");
        assert_eq!(bytes(2.5e9), "2.50 GB");
        assert_eq!(ratio(10.0, 4.0), "2.5×");
        assert_eq!(ratio(500.0, 2.0), "250×");
        assert_eq!(ratio(1.0, 0.0), "—");
    }

    #[test]
    fn targets_are_judged_against_the_right_peer() {
        let rows = vec![
            Row {
                label: "2. monolithic".into(),
                ours: m(1.0, 1e6),
                peer: Some(m(3.0, 1e8)),
                compare: Compare::OwnPeer,
                reference: true,
                targets: vec![Target::SpeedupAtLeast(2.0)],
                note: Some("teaching mode".into()),
            },
            Row {
                label: "2. cohorts".into(),
                ours: m(0.1, 1e6),
                peer: None,
                compare: Compare::MonolithicPeer,
                reference: false,
                targets: vec![Target::SpeedupVsMonolithicPeerAtLeast(50.0)],
                note: None,
            },
            Row {
                label: "4. scale".into(),
                ours: m(20.0, 1e8),
                peer: None,
                compare: Compare::Nothing,
                reference: false,
                targets: vec![Target::TimeBelow(60.0)],
                note: None,
            },
        ];
        assert!(target_text(&rows[0].targets[0], &rows[0], &rows).ends_with("met"));
        // 3.0 / 0.1 = 30 < 50.
        assert!(target_text(&rows[1].targets[0], &rows[1], &rows).ends_with("**missed**"));
        let environment = Environment {
            cpu: "test CPU".into(),
            cores: 2,
            load_at_start: "0 0 0".into(),
            numpy: Some("numpy 2".into()),
            peer_threads: None,
        };
        let text = table(&rows, &environment);
        assert!(text.contains("| 2. cohorts | time | 0.100 s | 3.00 s (monolithic) | 30.0× |"));
        assert!(text.contains("| 4. scale | time | 20.00 s | — | — | < 60.00 s: met |"));
        assert!(text.contains("* 2. monolithic: teaching mode"));
        assert!(
            text.contains("| 2. monolithic | time | 1.00 s | 3.00 s | 3.0× | ≥ 2× numpy: met |")
        );
    }
}
