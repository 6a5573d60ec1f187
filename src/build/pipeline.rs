//! The build's threads: the scanner feeding the job queue, one worker per build thread taking
//! jobs from it, and the packer compressing the single layout's frames behind them.

use super::clock::{StageClock, ThreadClock};
use super::events::BuildEvents;
use super::queue::{FinishOnDrop, JobQueue};
use super::shader::build_one;
use super::BuildOptions;
use crate::cache::incremental::Store;
use crate::cache::{self, CacheEntry, CacheLayout, WriteOptions};
use crate::dxc::{self, DxcLib, Target};
use crate::report::{Duplicate, Outcome};
use crate::scan::{self, FoundShader};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Everything settled before the first shader is built, shared by the pipeline's threads.
pub(super) struct Pipeline<'a> {
    pub(super) opts: &'a BuildOptions,
    /// Sorted, without duplicates.
    pub(super) targets: &'a [Target],
    /// `None` when no target needs DXC (`--targets spirv --spirv-backend direct`).
    pub(super) lib: Option<&'a DxcLib>,
    pub(super) store: Option<&'a Store>,
    pub(super) write_opts: &'a WriteOptions,
    pub(super) clock: &'a StageClock,
    /// DXC compilations run (cache hits run none).
    pub(super) compilations: &'a AtomicUsize,
    pub(super) events: &'a dyn BuildEvents,
    /// When the build started (what the scan's end and the first shader are timed from).
    pub(super) started: Instant,
}

/// What the pipeline's threads produced.
pub(super) struct Pipelined {
    /// In path order.
    pub(super) outcomes: Vec<Outcome>,
    /// Sorted by key.
    pub(super) entries: Vec<CacheEntry>,
    pub(super) duplicates: Vec<Duplicate>,
    pub(super) scanned: scan::ScanResult,
    /// Wall time of the scan, and when it ended (since the build started).
    pub(super) scan_time: Duration,
    pub(super) scan_ended: Duration,
    pub(super) first_shader_started: Option<Duration>,
    /// The single layout's packer, with what it compressed while DXC ran.
    pub(super) packer: Option<PackerState>,
}

/// One shader's result as the workers hand it to the packer.
type Built = Arc<(Outcome, Option<CacheEntry>)>;

impl Pipeline<'_> {
    /// Scans and builds every shader on `pool` (the scan on `scan_pool`).
    ///
    /// Three kinds of threads overlap:
    /// - the scanner hands over each file's shaders as soon as it and every file before it (path
    ///   order) are scanned, so the first occurrence of each key is the one built, exactly as if
    ///   the scan had ended first; compilation starts with the first shader found, not after
    ///   gigabytes of game data have been read;
    /// - workers, one per build thread, always take the smallest key not yet started: once the
    ///   scan is done (long before DXC is, usually) they go in key order = the cache's order;
    /// - a packer compresses the single layout's frames behind them, entry by entry in key order
    ///   as soon as every earlier entry is done, so zstd runs while DXC does. It starts when the
    ///   scan is over (the order is known) and some shader really needed DXC: a build served
    ///   entirely from the incremental cache usually leaves the outputs as they are, and then
    ///   nothing is compressed at all.
    pub(super) fn run(&self, pool: &rayon::ThreadPool, scan_pool: &rayon::ThreadPool) -> Pipelined {
        let opts = self.opts;
        let queue = JobQueue::default();
        let members = scan::MemberReader::default();
        let results: Mutex<HashMap<u64, Built>> = Mutex::new(HashMap::new());
        let (done_tx, done_rx) = mpsc::channel::<u64>();
        let (order_tx, order_rx) = mpsc::channel::<Vec<u64>>();
        let first_shader_started = OnceLock::new();
        let (scanned, scan_time, scan_ended, packer) = std::thread::scope(|scope| {
            let scanner = {
                let (queue, events, members, started) = (&queue, self.events, &members, self.started);
                scope.spawn(move || {
                    // Should the scan panic, the workers must still learn that nothing more comes.
                    let _finish_on_unwind = FinishOnDrop(queue);
                    let t_scan = Instant::now();
                    // With an incremental cache, files unchanged since the last build are not read again.
                    let index = opts.cache_dir.as_ref().map(|dir| scan_index_path(dir, &opts.input));
                    let offer = |shaders: &[FoundShader]| queue.offer(shaders, members);
                    let own_counters = scan::ScanProgress::default();
                    let counters = events.scan_counters().unwrap_or(&own_counters);
                    let scanned = scan_pool.install(|| scan::scan_dir_observed(&opts.input, index.as_deref(), &offer, counters).0);
                    let order = queue.finish();
                    events.scan_finished(order.len());
                    let _ = order_tx.send(order);
                    (scanned, t_scan.elapsed(), started.elapsed())
                })
            };
            let packer = (opts.layout == CacheLayout::Single).then(|| {
                let results = &results;
                scope.spawn(move || self.pack_behind(order_rx, done_rx, results))
            });
            pool.broadcast(|_| {
                let done_tx = done_tx.clone();
                while let Some(job) = queue.next() {
                    let _ = first_shader_started.set(self.started.elapsed());
                    let built = build_one(&job, self, &members);
                    self.events.shader_finished(&built.0);
                    results.lock().unwrap_or_else(|e| e.into_inner()).insert(job.key, Arc::new(built));
                    let _ = done_tx.send(job.key);
                }
                // Release this thread's DXC compiler objects now, while the library is loaded and
                // the thread is known to be alive. Left to the thread-local destructors, they ran when
                // the pool's threads wound down, racing the library's own global destructors at
                // process exit: 2-7 % of successful builds ended in SIGSEGV, `-j 500` nearly always.
                dxc::release_thread_compilers();
            });
            drop(done_tx);
            let (scanned, scan_time, scan_ended) = scanner.join().expect("the scanner thread does not panic");
            (scanned, scan_time, scan_ended, packer.map(|p| p.join().expect("the packer thread does not panic")))
        });
        let duplicates = queue.duplicates();

        let mut outcomes = Vec::new();
        let mut entries = Vec::new();
        for built in results.into_inner().unwrap_or_else(|e| e.into_inner()).into_values() {
            let (o, e) = Arc::try_unwrap(built).expect("threads are done with the results");
            outcomes.push(o);
            entries.extend(e);
        }
        outcomes.sort_by(|a, b| (&a.path, a.offset, a.index).cmp(&(&b.path, b.offset, b.index)));
        entries.sort_by_key(|e| e.key);
        Pipelined { outcomes, entries, duplicates, scanned, scan_time, scan_ended, first_shader_started: first_shader_started.get().copied(), packer }
    }

    /// The packer thread: once the scan has sent the key order, feeds every shader whose
    /// predecessors (in that order) are all done, as workers report them on `done`.
    fn pack_behind(&self, order: mpsc::Receiver<Vec<u64>>, done: mpsc::Receiver<u64>, results: &Mutex<HashMap<u64, Built>>) -> PackerState {
        let mut state = PackerState { packer: cache::SinglePacker::new(self.write_opts), next: 0, fed: 0 };
        let Ok(order) = order.recv() else { return state };
        let mut ready = HashSet::new();
        for key in done {
            ready.insert(key);
            if self.compilations.load(Ordering::Relaxed) > 0 {
                let t = ThreadClock::start();
                while state.next < order.len() && ready.contains(&order[state.next]) {
                    let built = results.lock().unwrap_or_else(|e| e.into_inner())[&order[state.next]].clone();
                    state.feed(&built);
                }
                self.clock.pack.fetch_add(t.elapsed_ns(), Ordering::Relaxed);
            }
        }
        state
    }
}

/// The packer thread's progress: shaders fed so far (in key order) and entries among them.
pub(super) struct PackerState {
    pub(super) packer: cache::SinglePacker,
    next: usize,
    fed: usize,
}

impl PackerState {
    /// Feeds the next shader in key order (an entry unless it failed).
    fn feed(&mut self, built: &(Outcome, Option<CacheEntry>)) {
        if let (_, Some(e)) = built {
            self.packer.push(e);
            self.fed += 1;
        }
        self.next += 1;
    }

    /// `entries`: the final, key-sorted entries, whose first `fed` are the ones already fed.
    pub(super) fn feed_rest(&mut self, entries: &[CacheEntry]) {
        for e in &entries[self.fed.min(entries.len())..] {
            self.packer.push(e);
        }
    }
}

/// The scan index of one input directory inside the incremental cache directory.
fn scan_index_path(cache_dir: &Path, input: &Path) -> PathBuf {
    let abs = std::path::absolute(input).unwrap_or_else(|_| input.to_path_buf());
    let h = xxhash_rust::xxh3::xxh3_64(abs.to_string_lossy().as_bytes());
    cache_dir.join("scan").join(format!("{h:016x}.json"))
}
