//! Progress of long work on standard error (issue 23 §3): records and cohorts done, the rate and
//! the time left, drawn by `indicatif` only when standard error is a terminal and the user did
//! not ask for `--quiet` — never into a log file or a pipe, where it would be noise.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A progress bar over the records of a run masked cohort by cohort.
pub struct Progress {
    bar: Option<ProgressBar>,
    cohorts: usize,
    done: usize,
}

impl Progress {
    /// Progress over `records` records in `cohorts` cohorts; drawn when standard error is a
    /// terminal, `quiet` is false and there is more than one cohort to count.
    pub fn cohorts(records: usize, cohorts: usize, quiet: bool) -> Self {
        let shown = !quiet && cohorts > 1 && std::io::stderr().is_terminal();
        let bar = shown.then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(records as u64), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(
                "{msg} [{bar:30}] {human_pos}/{human_len} records, {per_sec}, {eta} left",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_message(format!("masking cohort 0/{cohorts}"));
            bar
        });
        Self {
            bar,
            cohorts,
            done: 0,
        }
    }

    /// One more cohort of `records` records is done.
    pub fn cohort_done(&mut self, records: usize) {
        self.done += 1;
        if let Some(bar) = &self.bar {
            bar.inc(records as u64);
            bar.set_message(format!("masking cohort {}/{}", self.done, self.cohorts));
        }
    }

    /// Remove the bar (the summary follows on standard output).
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
