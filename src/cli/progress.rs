//! The progress display of a build on stderr: an indicatif bar on a terminal, plain lines in CI
//! logs. It is the [`BuildEvents`] the command line gives the build: the build's threads report
//! to it, and it prints each failed shader as soon as it fails.

use shrec::build::BuildEvents;
use shrec::report::Outcome;
use shrec::scan;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Progress on stderr, in two parts: while the scan runs, the bytes scanned of those the walk
/// found (until the walk is over, a counter of what it has found: no bar without a total), with
/// the shaders already built; once the scan is over, the shaders built of those found. On a
/// terminal an indicatif bar that one thread ([`Progress::watch`]) redraws every 100 ms, its ETA
/// computed from the rate so far and left out (`ETA …`) until there is a rate to compute it
/// from; otherwise a plain line at most every 2 seconds, and the last one (CI logs). indicatif
/// itself draws nothing when its target is not a terminal (`ProgressDrawTarget::stderr` checks
/// `Term::is_term`), and shrec does not even create the bar then. `-q` turns all of it off.
pub(crate) struct Progress {
    /// Created when the scan starts (its clock is the `[elapsed]` the bar shows).
    bar: OnceLock<indicatif::ProgressBar>,
    /// Counters the scan updates.
    pub(crate) scan: scan::ScanProgress,
    /// Set when the scan is over (the bar then shows shaders).
    scan_over: AtomicBool,
    /// Set by [`Progress::finish`]: [`Progress::watch`] returns.
    finished: AtomicBool,
    /// Shaders to build; 0 while the scan is still finding them.
    total: AtomicUsize,
    done: AtomicUsize,
    enabled: bool,
    /// When the scan started ([`BuildEvents::scan_started`]); unset before: nothing is drawn
    /// while DXC is located or provisioned.
    started: OnceLock<Instant>,
    last_line: Mutex<Instant>,
}

const WALK_TEMPLATE: &str = "{spinner} [{elapsed_precise}] finding files: {msg}";
const SCAN_TEMPLATE: &str = "{spinner} [{elapsed_precise}] scanning {bar:30} {msg}";
const BUILD_TEMPLATE: &str = "{spinner} [{elapsed_precise}] building {bar:30} {msg}";

/// `ETA 12s` from the rate so far (`done` of `total` in `elapsed`), `ETA …` while there is no
/// rate yet (nothing done, or less than a second gone: a first burst says nothing).
fn eta_text(elapsed: Duration, done: u64, total: u64) -> String {
    if done == 0 || elapsed < Duration::from_secs(1) {
        return "ETA …".into();
    }
    let left = elapsed.as_secs_f64() * total.saturating_sub(done) as f64 / done as f64;
    format!("ETA {:#}", indicatif::HumanDuration(Duration::from_secs_f64(left.min(1e7))))
}

/// The progress text while the scan runs: during the walk what it found so far, then the bytes
/// scanned of the total with an ETA, and the shaders built meanwhile.
fn scan_line(p: &scan::ScanProgress, since_walk: Duration, built: usize) -> String {
    let found = p.bytes_found.load(Ordering::Relaxed);
    let files = p.files_found.load(Ordering::Relaxed);
    if !p.walk_done.load(Ordering::Acquire) {
        return format!("{files} files, {} so far; {built} shaders built", indicatif::HumanBytes(found));
    }
    let scanned = p.bytes_scanned.load(Ordering::Relaxed).min(found);
    format!(
        "{} of {} ({} of {files} files), {}; {built} shaders built",
        indicatif::HumanBytes(scanned),
        indicatif::HumanBytes(found),
        p.files_scanned.load(Ordering::Relaxed),
        eta_text(since_walk, scanned, found)
    )
}

impl Progress {
    /// A line on stderr, above the bar when there is one (the bar is redrawn under it).
    pub(crate) fn print(&self, line: &str) {
        match self.bar.get() {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    pub(crate) fn new(enabled: bool) -> Self {
        Progress {
            bar: OnceLock::new(),
            scan: scan::ScanProgress::default(),
            scan_over: Default::default(),
            finished: Default::default(),
            total: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            enabled,
            started: OnceLock::new(),
            last_line: Mutex::new(Instant::now()),
        }
    }

    /// The scan starts: the display's clocks start, and on a terminal its bar.
    fn begin(&self) {
        *self.last_line.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
        if self.enabled && std::io::stderr().is_terminal() {
            let b = indicatif::ProgressBar::new_spinner();
            b.set_style(indicatif::ProgressStyle::with_template(WALK_TEMPLATE).expect("valid template"));
            let _ = self.bar.set(b);
        }
        let _ = self.started.set(Instant::now());
    }

    /// Draws until [`Progress::finish`] (run on a thread of its own): the only code that changes
    /// the bar, so that its parts never mix (a byte count over the shaders' total).
    pub(crate) fn watch(&self) {
        if !self.enabled {
            return;
        }
        #[derive(PartialEq)]
        enum Part {
            Walk,
            Scan(Instant),
            Build,
        }
        let mut part = Part::Walk;
        let started = loop {
            if self.finished.load(Ordering::Acquire) {
                return;
            }
            if let Some(&t) = self.started.get() {
                break t;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        while !self.finished.load(Ordering::Acquire) {
            let built = self.done.load(Ordering::Relaxed);
            if self.scan_over.load(Ordering::Acquire) {
                if let Some(b) = self.bar.get() {
                    let total = self.total.load(Ordering::Relaxed);
                    b.set_message(format!("{built}/{total} shaders, {}", eta_text(started.elapsed(), built as u64, total as u64)));
                    if part != Part::Build {
                        part = Part::Build;
                        b.set_length(total as u64);
                        b.set_style(indicatif::ProgressStyle::with_template(BUILD_TEMPLATE).expect("valid template"));
                    }
                    b.set_position(built as u64);
                }
                // plain lines of this part: `tick`
            } else {
                if part == Part::Walk && self.scan.walk_done.load(Ordering::Acquire) {
                    part = Part::Scan(Instant::now());
                    if let Some(b) = self.bar.get() {
                        b.set_length(self.scan.bytes_found.load(Ordering::Relaxed));
                        b.set_message(scan_line(&self.scan, Duration::ZERO, built));
                        b.set_style(indicatif::ProgressStyle::with_template(SCAN_TEMPLATE).expect("valid template"));
                    }
                }
                let since_walk = match part {
                    Part::Scan(t) => t.elapsed(),
                    _ => Duration::ZERO,
                };
                let line = scan_line(&self.scan, since_walk, built);
                match self.bar.get() {
                    Some(b) => {
                        b.set_position(self.scan.bytes_scanned.load(Ordering::Relaxed).min(self.scan.bytes_found.load(Ordering::Relaxed)));
                        b.set_message(line);
                        b.tick();
                    }
                    None => {
                        let mut last = self.last_line.lock().unwrap_or_else(|p| p.into_inner());
                        if last.elapsed() >= Duration::from_secs(2) {
                            *last = Instant::now();
                            eprintln!("shrec: {line}");
                        }
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The scan is over: `total` shaders are to be built.
    fn set_total(&self, total: usize) {
        self.total.store(total, Ordering::Relaxed);
        self.scan_over.store(true, Ordering::Release);
    }

    /// One more shader built: a plain line at most every 2 seconds once the scan is over.
    fn tick(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if self.bar.get().is_some() || !self.enabled || !self.scan_over.load(Ordering::Acquire) {
            // the bar and the scan's lines are `watch`'s
            return;
        }
        // Plain output for CI logs: at most one line every 2 seconds, and the last one.
        let total = self.total.load(Ordering::Relaxed);
        let mut last = self.last_line.lock().unwrap_or_else(|p| p.into_inner());
        if done == total || last.elapsed() >= Duration::from_secs(2) {
            *last = Instant::now();
            eprintln!("shrec: {done}/{total} shaders");
        }
    }

    /// The build is over: [`Progress::watch`] returns and the bar is cleared.
    pub(crate) fn finish(&self) {
        self.scan_over.store(true, Ordering::Release);
        self.finished.store(true, Ordering::Release);
        if let Some(b) = self.bar.get() {
            b.finish_and_clear();
        }
    }
}

/// Finishes the progress display when dropped, so that [`Progress::watch`] returns before the
/// thread scope waits for it, also when a thread of the build panicked.
pub(crate) struct FinishProgressOnDrop<'a>(pub(crate) &'a Progress);

impl Drop for FinishProgressOnDrop<'_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}

impl BuildEvents for Progress {
    fn scan_counters(&self) -> Option<&scan::ScanProgress> {
        Some(&self.scan)
    }

    fn scan_started(&self) {
        self.begin();
    }

    fn scan_finished(&self, shaders: usize) {
        self.set_total(shaders);
    }

    /// A failure is printed as it happens (above the bar), not only in the summary at the end.
    fn shader_finished(&self, outcome: &Outcome) {
        if let Some(line) = shrec::report::error_line(outcome) {
            self.print(&line);
        }
        self.tick();
    }

    fn cache_write_failed(&self, error: &str) {
        self.print(&format!("warning: incremental cache: {error}"));
    }
}

#[cfg(test)]
mod progress_tests {
    use super::*;

    /// No ETA before there is a rate (an "ETA 0s" at the start would say the build is done),
    /// then the time left at the rate so far.
    #[test]
    fn eta_waits_for_a_rate() {
        assert_eq!(eta_text(Duration::from_secs(5), 0, 100), "ETA …");
        assert_eq!(eta_text(Duration::from_millis(500), 50, 100), "ETA …");
        assert_eq!(eta_text(Duration::from_secs(10), 25, 100), "ETA 30s");
        assert_eq!(eta_text(Duration::from_secs(10), 100, 100), "ETA 0s");
    }

    /// While the walk runs there is no total, only what it found; then bytes of the total.
    #[test]
    fn scan_line_has_a_total_only_after_the_walk() {
        let p = scan::ScanProgress::default();
        p.files_found.store(3, Ordering::Relaxed);
        p.bytes_found.store(3 << 20, Ordering::Relaxed);
        assert_eq!(scan_line(&p, Duration::ZERO, 0), "3 files, 3.00 MiB so far; 0 shaders built");
        p.walk_done.store(true, Ordering::Relaxed);
        p.files_scanned.store(1, Ordering::Relaxed);
        p.bytes_scanned.store(1 << 20, Ordering::Relaxed);
        assert_eq!(scan_line(&p, Duration::from_secs(2), 7), "1.00 MiB of 3.00 MiB (1 of 3 files), ETA 4s; 7 shaders built");
        // a file that grew since the walk does not take the count past the total
        p.bytes_scanned.store(4 << 20, Ordering::Relaxed);
        assert!(scan_line(&p, Duration::from_secs(2), 7).starts_with("3.00 MiB of 3.00 MiB"));
    }
}
