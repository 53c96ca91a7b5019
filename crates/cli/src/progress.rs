//! A study's live view on a terminal: two bars that the lab's events move.
//!
//! - the study: runs done of those planned, the time since it began, and the time left, from
//!   the estimate at first and, once runs have ended, from their measured pace (the lab's
//!   `left`), counting down between runs;
//! - the current cell: its step (wipe, mkfs, mount, fill, age, setup, warm-up, run, umount,
//!   fsck) with its elapsed time and, while a worker runs, the time left of its planned time and
//!   the MiB/s and ops/s of its last second, as the worker reports them.
//!
//! The lines a study prints without a terminal (unsupported cells, slow or failed steps, each
//! run's figure) are printed above the bars, so the history stays on the screen.

use fslab_lab::runner::Event;
use fslab_lab::worker::Live;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The study's time left as last estimated, and when: it counts down from there.
#[derive(Debug, Clone, Copy)]
struct Eta {
    left: Duration,
    at: Instant,
}

impl Eta {
    fn now(self) -> Duration {
        self.left.saturating_sub(self.at.elapsed())
    }
}

pub struct StudyView {
    multi: MultiProgress,
    study: ProgressBar,
    cell: ProgressBar,
    eta: Arc<Mutex<Option<Eta>>>,
    /// The current cell's step.
    stage: String,
}

impl StudyView {
    /// The view of study `name`, drawn on stderr.
    pub fn new(name: &str) -> StudyView {
        StudyView::with_target(name, ProgressDrawTarget::stderr())
    }

    fn with_target(name: &str, target: ProgressDrawTarget) -> StudyView {
        let multi = MultiProgress::with_draw_target(target);
        let eta: Arc<Mutex<Option<Eta>>> = Arc::new(Mutex::new(None));
        let shared = eta.clone();
        let study_style = ProgressStyle::with_template(
            "{prefix:.bold} [{bar:30}] {pos}/{len} runs, {elapsed_precise} elapsed, {left}",
        )
        .expect("template")
        .progress_chars("=> ")
        .with_key("left", move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
            let text = match *shared.lock().expect("not poisoned") {
                Some(eta) => format!("about {} left", crate::study::human(eta.now())),
                None => String::new(),
            };
            let _ = w.write_str(&text);
        });
        // Drawn from the study's beginning (after the preflight), when they are added to `multi`.
        let study = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden())
            .with_style(study_style)
            .with_prefix(format!("study `{name}`"));
        let cell = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden())
            .with_style(spinner_style())
            .with_prefix("the first cell")
            .with_message("starting");
        StudyView {
            multi,
            study,
            cell,
            eta,
            stage: String::new(),
        }
    }

    /// Moves the bars for `e`; `line` is what the study prints for it without a terminal.
    pub fn event(&mut self, e: &Event, line: &str) {
        if !line.is_empty() {
            self.multi.suspend(|| eprint!("{line}"));
        }
        match e {
            Event::Begin {
                runs_left, estimate, ..
            } => {
                self.study.set_length(*runs_left);
                self.set_eta(*estimate);
                self.multi.add(self.study.clone());
                self.multi.add(self.cell.clone());
                self.study.enable_steady_tick(Duration::from_millis(500));
                self.cell.enable_steady_tick(Duration::from_millis(250));
            }
            Event::Stage { cell, stage } => {
                self.stage = stage.clone();
                self.cell.set_style(spinner_style());
                self.cell.set_length(0);
                self.cell.set_position(0);
                self.cell.reset_elapsed();
                self.cell.set_prefix(cell.clone());
                self.cell.set_message(stage.clone());
            }
            Event::Live { live, .. } => self.live(live),
            Event::Run { done, total, left, .. } => {
                self.study.set_length(*total);
                self.study.set_position(*done);
                // Until a run has ended, the first estimate counts down as it is.
                if *done > 0 {
                    self.set_eta(*left);
                }
            }
            Event::Unsupported { .. } | Event::Step { .. } => {}
        }
    }

    fn set_eta(&self, left: Duration) {
        *self.eta.lock().expect("not poisoned") = Some(Eta {
            left,
            at: Instant::now(),
        });
        self.study.tick();
    }

    /// A second of the worker's progress: the cell's bar over its planned time, and its rates.
    fn live(&mut self, live: &Live) {
        if let Some(laid) = live.laid_out {
            self.cell.set_message(format!("{}: {}", self.stage, laid.text()));
            return;
        }
        let rates = format!(
            "{:.1} MiB/s, {:.0} ops/s",
            live.bytes_per_sec / 1048576.0,
            live.ops_per_sec
        );
        let ramp = if live.in_ramp { " (ramp)" } else { "" };
        let msg = match live.planned {
            Some(planned) if !planned.is_zero() => {
                if self.cell.length() != Some(planned.as_secs().max(1)) {
                    self.cell.set_style(bar_style());
                    self.cell.set_length(planned.as_secs().max(1));
                }
                self.cell.set_position(live.elapsed.as_secs());
                format!(
                    "{}{ramp} {}s of {}s, {}s left, {rates}",
                    self.stage,
                    live.elapsed.as_secs(),
                    planned.as_secs(),
                    planned.saturating_sub(live.elapsed).as_secs()
                )
            }
            _ => format!("{}{ramp} {}s, {rates}", self.stage, live.elapsed.as_secs()),
        };
        self.cell.set_message(msg);
    }

    /// Clears the bars, leaving the lines printed above them.
    pub fn finish(&self) {
        self.cell.finish_and_clear();
        self.study.finish_and_clear();
        let _ = self.multi.clear();
    }
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("  {spinner} {prefix}: {msg} ({elapsed})").expect("template")
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template("  {spinner} {prefix}: [{bar:20}] {msg}")
        .expect("template")
        .progress_chars("=> ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use fslab_store::RunStatus;

    fn run(done: u64, total: u64, left: u64) -> Event {
        Event::Run {
            cell: "ext4 fileserver".into(),
            repeat: 0,
            warmup: false,
            status: RunStatus::Ok,
            headline: None,
            error: None,
            done,
            total,
            left: Duration::from_secs(left),
        }
    }

    #[test]
    fn the_bars_follow_the_study_and_its_cell() {
        let mut view = StudyView::with_target("quick", ProgressDrawTarget::hidden());
        view.event(
            &Event::Begin {
                cells: 2,
                runs_left: 6,
                estimate: Duration::from_secs(600),
            },
            "",
        );
        assert_eq!(view.study.length(), Some(6));
        assert_eq!(view.study.prefix(), "study `quick`");
        let first = view.eta.lock().unwrap().unwrap().now();
        assert!(
            first <= Duration::from_secs(600) && first > Duration::from_secs(590),
            "{first:?}"
        );
        view.event(
            &Event::Stage {
                cell: "ext4 fileserver".into(),
                stage: "mkfs".into(),
            },
            "",
        );
        assert_eq!(view.cell.prefix(), "ext4 fileserver");
        assert_eq!(view.cell.message(), "mkfs");
        view.event(
            &Event::Stage {
                cell: "ext4 fileserver".into(),
                stage: "run".into(),
            },
            "",
        );
        view.event(
            &Event::Live {
                cell: "ext4 fileserver".into(),
                live: Live {
                    phase: "run".into(),
                    elapsed: Duration::from_secs(3),
                    planned: Some(Duration::from_secs(4)),
                    in_ramp: false,
                    bytes_per_sec: 5.0 * 1048576.0,
                    ops_per_sec: 1280.0,
                    laid_out: None,
                },
            },
            "",
        );
        assert_eq!((view.cell.position(), view.cell.length()), (3, Some(4)));
        assert_eq!(view.cell.message(), "run 3s of 4s, 1s left, 5.0 MiB/s, 1280 ops/s");
        // A worker laying out its files says how far it has got.
        view.event(
            &Event::Live {
                cell: "ext4 fileserver".into(),
                live: Live {
                    phase: "layout".into(),
                    elapsed: Duration::from_secs(1),
                    planned: None,
                    in_ramp: false,
                    bytes_per_sec: 0.0,
                    ops_per_sec: 0.0,
                    laid_out: Some(fslab_lab::worker::LaidOut {
                        files: 500,
                        planned_files: 2000,
                        bytes: 0,
                        planned_bytes: 0,
                    }),
                },
            },
            "",
        );
        assert_eq!(view.cell.message(), "run: laying out files: 500 of 2000");
        // A run ended: the time left is now the measured pace's, not the first estimate's.
        view.event(&run(1, 5, 40), "");
        assert_eq!((view.study.position(), view.study.length()), (1, Some(5)));
        let paced = view.eta.lock().unwrap().unwrap().now();
        assert!(
            paced <= Duration::from_secs(40) && paced > Duration::from_secs(30),
            "{paced:?}"
        );
        view.finish();
    }
}
