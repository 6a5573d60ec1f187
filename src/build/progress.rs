//! The progress display of a build on stderr: an indicatif bar on a terminal, plain lines in CI
//! logs.

use crate::scan;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Progress on stderr, in two parts: while the scan runs, the bytes scanned of those the walk
/// found (until the walk is over, a counter of what it has found: no bar without a total), with
/// the shaders already built; once the scan is over, the shaders built of those found. On a
/// terminal an indicatif bar that one thread ([`Progress::watch`]) redraws every 100 ms, its ETA
/// computed from the rate so far and left out (`ETA …`) until there is a rate to compute it
/// from; otherwise a plain line at most every 2 seconds, and the last one (CI logs). indicatif
/// itself draws nothing when its target is not a terminal (`ProgressDrawTarget::stderr` checks
/// `Term::is_term`), and shrec does not even create the bar then. `-q` turns all of it off.
pub(super) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    /// Counters the scan updates.
    pub(super) scan: scan::ScanProgress,
    /// Set when the scan is over (the bar then shows shaders).
    scan_over: AtomicBool,
    /// Set by [`Progress::finish`]: [`Progress::watch`] returns.
    finished: AtomicBool,
    /// Shaders to build; 0 while the scan is still finding them.
    total: AtomicUsize,
    done: AtomicUsize,
    enabled: bool,
    started: Instant,
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
    pub(super) fn print(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    pub(super) fn new(enabled: bool) -> Self {
        let bar = (enabled && std::io::stderr().is_terminal()).then(|| {
            let b = indicatif::ProgressBar::new_spinner();
            b.set_style(indicatif::ProgressStyle::with_template(WALK_TEMPLATE).expect("valid template"));
            b
        });
        Progress {
            bar,
            scan: scan::ScanProgress::default(),
            scan_over: Default::default(),
            finished: Default::default(),
            total: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            enabled,
            started: Instant::now(),
            last_line: Mutex::new(Instant::now()),
        }
    }

    /// Draws until [`Progress::finish`] (run on a thread of its own): the only code that changes
    /// the bar, so that its parts never mix (a byte count over the shaders' total).
    pub(super) fn watch(&self) {
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
        while !self.finished.load(Ordering::Acquire) {
            let built = self.done.load(Ordering::Relaxed);
            if self.scan_over.load(Ordering::Acquire) {
                if let Some(b) = &self.bar {
                    let total = self.total.load(Ordering::Relaxed);
                    b.set_message(format!("{built}/{total} shaders, {}", eta_text(self.started.elapsed(), built as u64, total as u64)));
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
                    if let Some(b) = &self.bar {
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
                match &self.bar {
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
    pub(super) fn set_total(&self, total: usize) {
        self.total.store(total, Ordering::Relaxed);
        self.scan_over.store(true, Ordering::Release);
    }

    pub(super) fn tick(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if self.bar.is_some() || !self.enabled || !self.scan_over.load(Ordering::Acquire) {
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

    pub(super) fn finish(&self) {
        self.scan_over.store(true, Ordering::Release);
        self.finished.store(true, Ordering::Release);
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// Finishes the progress display when dropped, so that [`Progress::watch`] returns before the
/// thread scope waits for it, also when a thread of the build panicked.
pub(super) struct FinishProgressOnDrop<'a>(pub(super) &'a Progress);
impl Drop for FinishProgressOnDrop<'_> {
    fn drop(&mut self) {
        self.0.finish();
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
