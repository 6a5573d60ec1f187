//! The whole pipeline: scan → translate → HLSL → DXC (per target, incrementally) → cache file →
//! report. [`run`] is the library entry point (used by build scripts); [`run_cli`] adds the
//! printing the command line does.

use crate::cache::incremental::{ArtifactKey, Artifacts, Store};
use crate::cache::{self, CacheEntry, CacheLayout, CacheSizes, SpirvEncoding, WriteOptions};
use crate::dxc::{self, DxcLib, LocateOptions, Target};
use crate::formats::{self, TranslateOptions};
use crate::report::{Outcome, Phase, Report, Status};
use crate::scan::{self, FoundShader};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Everything `shrec build` can be told.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    pub input: PathBuf,
    /// `.cpp` or `.rs`.
    pub output: PathBuf,
    pub targets: Vec<Target>,
    pub dxc: LocateOptions,
    /// Incremental cache directory; `None` disables it.
    pub cache_dir: Option<PathBuf>,
    pub report_json: Option<PathBuf>,
    pub hlsl_dir: Option<PathBuf>,
    pub spirv_encoding: SpirvEncoding,
    pub zstd_level: i32,
    /// One zstd frame per backend (default) or one per shader.
    pub layout: CacheLayout,
    /// Per-shader layout: train a zstd dictionary of at most this many bytes per backend.
    pub zstd_dict: Option<usize>,
    pub jobs: Option<usize>,
    pub translate: TranslateOptions,
    /// Progress output, the summary table and the "wrote" line (`-q` turns them off: errors
    /// and warnings only).
    pub progress: bool,
    pub print_summary: bool,
    pub print_timings: bool,
    /// Resource cap: larger generated HLSL fails the shader ([`MAX_HLSL_BYTES`] by default).
    pub max_hlsl_bytes: usize,
    /// Run DXC in worker processes of this shrec executable (`--isolate-dxc`, see
    /// [`crate::dxc_worker`]); `None`: in-process.
    pub isolate_dxc: Option<PathBuf>,
    /// The executable serving `dxc-worker` for shaders whose HLSL is larger than
    /// `dxc_isolate_above` (the command line sets it to itself). `None` (a build script using
    /// the library, whose executable is not shrec): such shaders are compiled in-process,
    /// without `dxc_limits`, unless `isolate_dxc` is set.
    pub dxc_worker_exe: Option<PathBuf>,
    /// HLSL bytes above which a shader is compiled in a worker under `dxc_limits`
    /// ([`crate::limits::DXC_ISOLATE_HLSL_BYTES`] by default).
    pub dxc_isolate_above: usize,
    /// CPU time and memory of one compilation in a worker.
    pub dxc_limits: crate::limits::DxcLimits,
    /// An input without any shader is a success (`--allow-empty`); otherwise it fails with exit
    /// code 2, because an archive shrec cannot open looks exactly like it.
    pub allow_empty: bool,
    /// Failed shaders and scan errors still exit 0 (`--allow-failures`, CMake's ALLOW_FAILURES).
    pub allow_failures: bool,
    /// `.cpp` symbol set (`--abi`).
    pub abi: crate::cache::CppAbi,
    /// `--prelude`, `-D`, `--override-dir`, `--dxc-arg` (see [`crate::hooks`]).
    pub hooks: crate::hooks::Hooks,
    /// Print each failed shader's `error:` line on stderr as soon as it fails (the command
    /// line does; [`run_cli`] then does not repeat them at the end). Off for build scripts.
    pub print_errors_as_they_happen: bool,
}

impl BuildOptions {
    /// Defaults for a build script: both targets, SMOL-V, zstd 18, incremental cache under
    /// `target/`, no progress output.
    pub fn new(input: impl Into<PathBuf>, output: impl Into<PathBuf>) -> Self {
        BuildOptions {
            input: input.into(),
            output: output.into(),
            targets: vec![Target::Dxil, Target::Spirv],
            dxc: LocateOptions::default(),
            cache_dir: Some(default_cache_dir()),
            report_json: None,
            hlsl_dir: None,
            spirv_encoding: SpirvEncoding::Smolv,
            zstd_level: crate::cache::DEFAULT_ZSTD_LEVEL,
            layout: CacheLayout::Single,
            zstd_dict: None,
            jobs: None,
            translate: TranslateOptions::default(),
            progress: false,
            print_summary: false,
            print_timings: false,
            max_hlsl_bytes: MAX_HLSL_BYTES,
            isolate_dxc: None,
            dxc_worker_exe: None,
            dxc_isolate_above: crate::limits::DXC_ISOLATE_HLSL_BYTES,
            dxc_limits: crate::limits::DxcLimits::default(),
            allow_empty: false,
            allow_failures: false,
            abi: crate::cache::CppAbi::Shrec,
            hooks: crate::hooks::Hooks::default(),
            print_errors_as_they_happen: false,
        }
    }
}

/// A failure that stops the whole build (exit code 1).
#[derive(Debug, thiserror::Error)]
pub enum FatalError {
    #[error("{}: no such file or directory", .0.display())]
    NoInput(PathBuf),
    #[error("output {}: the name must end in .cpp or .rs", .0.display())]
    OutputKind(PathBuf),
    #[error("no targets selected (--targets dxil,spirv)")]
    NoTargets,
    #[error("--abi xenosrecomp: {0}")]
    Abi(&'static str),
    #[error(transparent)]
    Dxc(#[from] dxc::DxcError),
    #[error("incremental cache {}: {reason}", path.display())]
    Cache { path: PathBuf, reason: String },
    #[error("writing {}: {reason}", path.display())]
    Write { path: PathBuf, reason: String },
    #[error("creating the worker pool: {0}")]
    Pool(String),
    #[error("output {}: {reason}; nothing was built", path.display())]
    Output { path: PathBuf, reason: String },
}

/// The files a build writes for output `out` (with `--abi xenosrecomp` the header is the
/// project's, never written).
fn output_files(out: &Path, is_rust: bool, abi: crate::cache::CppAbi) -> Vec<PathBuf> {
    if is_rust {
        let (d, s) = crate::cache::rust::blob_paths(out);
        vec![out.to_path_buf(), d, s]
    } else if abi.is_xenosrecomp() {
        vec![out.to_path_buf(), crate::cache::cpp::msvc_path(out)]
    } else {
        vec![out.to_path_buf(), crate::cache::cpp::header_path(out), crate::cache::cpp::msvc_path(out)]
    }
}

/// Checks, before any work, that every output (and the report) can be
/// written and that none would replace a file shrec did not generate — `-o d/a.cpp` used to
/// overwrite a hand-written `d/a.h`.
fn check_outputs(opts: &BuildOptions, is_rust: bool) -> Result<(), FatalError> {
    let fail = |path: &Path, reason: String| Err(FatalError::Output { path: path.to_path_buf(), reason });
    let mut paths = output_files(&opts.output, is_rust, opts.abi);
    // The generated files name each other (`#include "<stem>.h"`, `include_bytes!("…")`): a name
    // that cannot be written there used to fail only when the output was written, after every
    // shader had been compiled.
    let quoted = if is_rust { "include_bytes!(\"...\")" } else { "#include \"...\"" };
    for path in &paths {
        let usable = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| !n.contains(['"', '\\', '\n', '\r']));
        if !usable {
            return fail(&opts.output, format!("the output needs a file name usable in {quoted} (UTF-8, no quote, backslash or line break)"));
        }
    }
    paths.extend(opts.report_json.iter().cloned());
    for path in &paths {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        // the writers create missing folders; do it now so a path that cannot be one fails first
        if let Err(e) = std::fs::create_dir_all(dir) {
            return fail(path, format!("cannot create its folder {}: {e}", dir.display()));
        }
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return fail(path, e.to_string()),
            Ok(m) if !m.is_file() => return fail(path, "exists and is not a regular file".into()),
            Ok(_) if opts.report_json.as_deref() == Some(path.as_path()) => {
                if !is_shrec_report(path) {
                    return fail(path, "exists and is not a report shrec wrote (refusing to overwrite it)".into());
                }
            }
            Ok(_) => {
                let mut head = [0u8; 64];
                let n = std::fs::File::open(path).and_then(|mut f| std::io::Read::read(&mut f, &mut head)).unwrap_or(0);
                let generated = head[..n].starts_with(b"// Generated by shrec") || path.extension().is_some_and(|e| e == "zst");
                if !generated {
                    return fail(path, "exists and was not generated by shrec (refusing to overwrite it)".into());
                }
            }
        }
        // the folder must take a new file now, not after every shader has been compiled
        let probe = dir.join(format!(".shrec-probe-{}", std::process::id()));
        if let Err(e) = std::fs::File::create(&probe) {
            return fail(path, format!("cannot create files in {}: {e}", dir.display()));
        }
        let _ = std::fs::remove_file(&probe);
    }
    Ok(())
}

/// The most bytes of an existing `--report` file read to tell whether shrec wrote it.
const MAX_REPORT_BYTES: u64 = 256 << 20;

/// Whether `path` is a regular file holding a JSON build report (`"command": "build"` with a
/// `schema_version`): the only file `--report` replaces. It used to replace any file, an input
/// shader included, and a FIFO it had refused was replaced by the report of that refusal.
fn is_shrec_report(path: &Path) -> bool {
    use std::io::Read;
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut text = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(MAX_REPORT_BYTES + 1).read_to_end(&mut text));
    read.is_ok()
        && text.len() as u64 <= MAX_REPORT_BYTES
        && serde_json::from_slice::<serde_json::Value>(&text)
            .is_ok_and(|v| v.get("command").and_then(|c| c.as_str()) == Some("build") && v.get("schema_version").is_some())
}

/// Whether the report of a build that could not run may be written to `path`: absent, or a
/// report shrec wrote (the check of [`check_outputs`], which may be the error being reported).
fn report_writable(path: &Path) -> bool {
    matches!(std::fs::symlink_metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound) || is_shrec_report(path)
}

/// Wall time and summed per-stage CPU time.
#[derive(Clone, Debug, Default)]
pub struct Timings {
    pub wall: Duration,
    /// Wall time of the directory scan (parallel, overlapping the compiles).
    pub scan: Duration,
    /// Since the build started: when the scan ended, and when the first shader was taken by a
    /// worker (`None` without shaders) — before the scan ends unless the first file found to
    /// hold a shader is the last one scanned.
    pub scan_ended: Duration,
    pub first_shader_started: Option<Duration>,
    /// CPU time, summed over threads: reading each container, decoding + lowering + HLSL,
    /// each DXC backend, SMOL-V + zstd (mostly on the packer thread, during the compiles).
    pub parse: Duration,
    pub translate: Duration,
    pub dxc_dxil: Duration,
    pub dxc_spirv: Duration,
    pub pack: Duration,
    /// Wall time of writing the output files (and of the digest check that may skip it).
    pub write: Duration,
    pub threads: usize,
}

impl Timings {
    /// DXC CPU time ÷ threads: the wall time a perfect build could not go below.
    pub fn dxc_floor(&self) -> Duration {
        (self.dxc_dxil + self.dxc_spirv) / self.threads.max(1) as u32
    }

    /// Wall time ÷ the DXC floor (1.0 is perfect).
    pub fn wall_over_floor(&self) -> f64 {
        self.wall.as_secs_f64() / self.dxc_floor().as_secs_f64().max(1e-9)
    }
}

/// What a build produced.
#[derive(Debug)]
pub struct BuildOutput {
    pub report: Report,
    /// What went into the cache file, sorted by key.
    pub entries: Vec<CacheEntry>,
    /// False when the output files were already up to date and left untouched.
    pub output_written: bool,
    pub sizes: Option<CacheSizes>,
    /// Every layout's sizes, when `print_summary` asked for them.
    pub layouts: Option<cache::LayoutComparison>,
    pub timings: Timings,
    /// Whether the single layout's frames were compressed while DXC ran (rather than after).
    pub packed_during_build: bool,
    /// The scan's warning when it found no shader but saw containers it cannot open (see
    /// [`scan::unopened_warning`]): a directory of unopened archives must not look like success.
    pub scan_warning: Option<String>,
    /// How many links the scan skipped (see [`scan::links_skipped_note`]), said under `--progress`.
    pub links_note: Option<String>,
    /// Files of `--override-dir` that no shader read, and why (see [`crate::hooks::Hooks::override_warnings`]).
    pub override_warnings: Vec<String>,
}

/// `target/shrec-cache` when the current directory looks like a cargo or CMake build tree,
/// else the user cache dir.
pub fn default_cache_dir() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    if cwd.join("target").is_dir() || cwd.join("Cargo.toml").is_file() {
        cwd.join("target").join("shrec-cache")
    } else {
        dxc::user_cache_dir().join("build-cache")
    }
}

/// Per-stage CPU time, summed over threads (nanoseconds).
#[derive(Default)]
struct StageClock {
    parse: AtomicU64,
    translate: AtomicU64,
    dxil: AtomicU64,
    spirv: AtomicU64,
    pack: AtomicU64,
}

fn add(t: &AtomicU64, since: ThreadClock) {
    t.fetch_add(since.elapsed_ns(), Ordering::Relaxed);
}

/// CPU time of the calling thread: what the DXC floor is made of. (Wall time inside a compile
/// would also count the time the thread waited for a core, e.g. behind the packer.)
#[derive(Clone, Copy)]
struct ThreadClock(Duration);

impl ThreadClock {
    fn now() -> Duration {
        #[cfg(unix)]
        {
            let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            // SAFETY: clock_gettime writes the timespec we pass; the clock id is a constant.
            if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
                return Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
            }
        }
        // No per-thread clock: wall time since the first call.
        static EPOCH: OnceLock<Instant> = OnceLock::new();
        EPOCH.get_or_init(Instant::now).elapsed()
    }

    fn start() -> Self {
        ThreadClock(Self::now())
    }

    fn elapsed_ns(self) -> u64 {
        Self::now().saturating_sub(self.0).as_nanos() as u64
    }
}

/// Shaders waiting to be built, fed by the scanner while workers drain it.
#[derive(Default)]
struct JobQueue {
    state: Mutex<QueueState>,
    wake: Condvar,
}

#[derive(Default)]
struct QueueState {
    /// Found, not yet taken by a worker.
    waiting: BTreeMap<u64, FoundShader>,
    /// Every distinct key found so far.
    seen: BTreeSet<u64>,
    duplicates: Vec<crate::report::Duplicate>,
    scan_done: bool,
}

impl JobQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Shaders in path order: the first occurrence of a key becomes its job, later ones count
    /// as duplicates.
    /// The jobs' archive members are registered with `members` before any worker can take them.
    fn offer(&self, shaders: &[FoundShader], members: &scan::MemberReader) {
        let mut q = self.lock();
        let mut jobs = Vec::new();
        for s in shaders {
            if q.seen.insert(s.key) {
                jobs.push(s);
            } else {
                q.duplicates.push(crate::report::Duplicate { shader: s.clone() });
            }
        }
        members.expect(&jobs);
        for s in jobs {
            q.waiting.insert(s.key, s.clone());
        }
        drop(q);
        self.wake.notify_all();
    }

    /// The scan is over: returns every distinct key, sorted.
    fn finish(&self) -> Vec<u64> {
        let mut q = self.lock();
        q.scan_done = true;
        let keys = q.seen.iter().copied().collect();
        drop(q);
        self.wake.notify_all();
        keys
    }

    /// The smallest waiting key's shader; waits while the scan may still find more; `None`
    /// when everything is taken and the scan is over.
    fn next(&self) -> Option<FoundShader> {
        let mut q = self.lock();
        loop {
            if let Some((_, s)) = q.waiting.pop_first() {
                return Some(s);
            }
            if q.scan_done {
                return None;
            }
            q = self.wake.wait(q).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn duplicates(&self) -> Vec<crate::report::Duplicate> {
        let mut d = std::mem::take(&mut self.lock().duplicates);
        // Scan threads offer files in any order: list them in a stable one.
        d.sort_by(|a, b| {
            (&a.shader.path, &a.shader.member, a.shader.offset, a.shader.index).cmp(&(
                &b.shader.path,
                &b.shader.member,
                b.shader.offset,
                b.shader.index,
            ))
        });
        d
    }
}

/// Marks the scan over when dropped (idempotent with [`JobQueue::finish`]).
struct FinishOnDrop<'a>(&'a JobQueue);

impl Drop for FinishOnDrop<'_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// Finishes the progress display when dropped, so that [`Progress::watch`] returns before the
/// thread scope waits for it, also when a thread of the build panicked.
struct FinishProgressOnDrop<'a>(&'a Progress);
impl Drop for FinishProgressOnDrop<'_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// The packer thread's progress: shaders fed so far (in key order) and entries among them.
struct PackerState {
    packer: cache::SinglePacker,
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
    fn feed_rest(&mut self, entries: &[CacheEntry]) {
        for e in &entries[self.fed.min(entries.len())..] {
            self.packer.push(e);
        }
    }
}

/// Every argument list a build uses, for the artifact key.
fn args_fingerprint(stage: crate::Stage, targets: &[Target], extra: &[String]) -> String {
    let extra = extra.iter().map(|a| format!(" {a:?}")).collect::<String>();
    targets.iter().map(|&t| format!("{}:{}:{}{extra}", t.name(), dxc::profile(stage), dxc::args(stage, t).join(" "))).collect::<Vec<_>>().join(";")
}

/// Runs a build. Per-shader failures are in the report; only whole-build problems are `Err`.
pub fn run(opts: &BuildOptions) -> Result<BuildOutput, FatalError> {
    let started = Instant::now();
    if !opts.input.exists() {
        return Err(FatalError::NoInput(opts.input.clone()));
    }
    let is_rust = match opts.output.extension().and_then(|e| e.to_str()) {
        Some("cpp") | Some("cc") | Some("cxx") => false,
        Some("rs") => true,
        _ => return Err(FatalError::OutputKind(opts.output.clone())),
    };
    if opts.targets.is_empty() {
        return Err(FatalError::NoTargets);
    }
    if opts.abi.is_xenosrecomp() {
        if is_rust {
            return Err(FatalError::Abi("is a .cpp symbol set; the output is a .rs module"));
        }
        if opts.layout != CacheLayout::Single {
            return Err(FatalError::Abi("has XenosRecomp's single-frame layout only (per-shader frames need shrec's header)"));
        }
    }
    check_outputs(opts, is_rust)?;
    let mut targets = opts.targets.clone();
    targets.sort();
    targets.dedup();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(opts.jobs.unwrap_or(0)).build().map_err(|e| FatalError::Pool(e.to_string()))?;
    let threads = pool.current_num_threads();

    let lib = dxc::locate(&opts.dxc)?;
    let store = match &opts.cache_dir {
        Some(dir) => Some(Store::open(dir).map_err(|e| FatalError::Cache { path: dir.clone(), reason: e.to_string() })?),
        None => None,
    };
    if let Some(dir) = &opts.hlsl_dir {
        write_hlsl_dir_support(dir, &opts.targets, opts.abi.entry_point())
            .map_err(|e| FatalError::Write { path: dir.clone(), reason: e.to_string() })?;
    }
    // The scan gets a pool of its own: the build pool's threads are all busy compiling.
    let scan_pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("shrec-scan-{i}"))
        .build()
        .map_err(|e| FatalError::Pool(e.to_string()))?;

    let clock = StageClock::default();
    let compilations = AtomicUsize::new(0);
    let progress = Progress::new(opts.progress);
    let write_opts = WriteOptions {
        spirv_encoding: opts.spirv_encoding,
        zstd_level: opts.zstd_level,
        layout: opts.layout,
        zstd_dict: if opts.layout == CacheLayout::PerShader { opts.zstd_dict } else { None },
        abi: opts.abi,
    };

    // Three kinds of threads overlap:
    // - the scanner hands over each file's shaders as soon as it and every file before it (path
    //   order) are scanned, so the first occurrence of each key is the one built, exactly as if
    //   the scan had ended first; compilation starts with the first shader found, not after
    //   gigabytes of game data have been read;
    // - workers, one per build thread, always take the smallest key not yet started: once the
    //   scan is done (long before DXC is, usually) they go in key order = the cache's order;
    // - a packer compresses the single layout's frames behind them, entry by entry in key order
    //   as soon as every earlier entry is done, so zstd runs while DXC does. It starts when the
    //   scan is over (the order is known) and some shader really needed DXC: a build served
    //   entirely from the incremental cache usually leaves the outputs as they are, and then
    //   nothing is compressed at all.
    let queue = JobQueue::default();
    let members = scan::MemberReader::default();
    type Built = std::sync::Arc<(Outcome, Option<CacheEntry>)>;
    let results: Mutex<HashMap<u64, Built>> = Mutex::new(HashMap::new());
    let (done_tx, done_rx) = std::sync::mpsc::channel::<u64>();
    let (order_tx, order_rx) = std::sync::mpsc::channel::<Vec<u64>>();
    let first_shader_started = OnceLock::new();
    let (scanned, scan_time, scan_ended, packer) = std::thread::scope(|scope| {
        let scanner = {
            let (queue, progress, scan_pool, members) = (&queue, &progress, &scan_pool, &members);
            scope.spawn(move || {
                // Should the scan panic, the workers must still learn that nothing more comes.
                let _finish_on_unwind = FinishOnDrop(queue);
                let t_scan = Instant::now();
                // With an incremental cache, files unchanged since the last build are not read again.
                let index = opts.cache_dir.as_ref().map(|dir| scan_index_path(dir, &opts.input));
                let offer = |shaders: &[FoundShader]| queue.offer(shaders, members);
                let scanned = scan_pool.install(|| scan::scan_dir_observed(&opts.input, index.as_deref(), &offer, &progress.scan).0);
                let order = queue.finish();
                progress.set_total(order.len());
                let _ = order_tx.send(order);
                (scanned, t_scan.elapsed(), started.elapsed())
            })
        };
        let progress_ref = &progress;
        let _finish_progress = FinishProgressOnDrop(progress_ref);
        scope.spawn(move || progress_ref.watch());
        let packer = (opts.layout == CacheLayout::Single).then(|| {
            let (results, compilations, clock, write_opts) = (&results, &compilations, &clock, &write_opts);
            scope.spawn(move || {
                let mut state = PackerState { packer: cache::SinglePacker::new(write_opts), next: 0, fed: 0 };
                let Ok(order) = order_rx.recv() else { return state };
                let mut ready = std::collections::HashSet::new();
                for key in done_rx {
                    ready.insert(key);
                    if compilations.load(Ordering::Relaxed) > 0 {
                        let t = ThreadClock::start();
                        while state.next < order.len() && ready.contains(&order[state.next]) {
                            let built = results.lock().unwrap_or_else(|e| e.into_inner())[&order[state.next]].clone();
                            state.feed(&built);
                        }
                        clock.pack.fetch_add(t.elapsed_ns(), Ordering::Relaxed);
                    }
                }
                state
            })
        });
        pool.broadcast(|_| {
            let done_tx = done_tx.clone();
            while let Some(job) = queue.next() {
                let _ = first_shader_started.set(started.elapsed());
                let built = build_one(&job, opts, &targets, &lib, store.as_ref(), &members, &clock, &compilations);
                if opts.print_errors_as_they_happen {
                    if let Some(line) = crate::report::error_line(&built.0) {
                        progress.print(&line);
                    }
                }
                results.lock().unwrap_or_else(|e| e.into_inner()).insert(job.key, std::sync::Arc::new(built));
                let _ = done_tx.send(job.key);
                progress.tick();
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
        let (o, e) = std::sync::Arc::try_unwrap(built).expect("threads are done with the results");
        outcomes.push(o);
        entries.extend(e);
    }
    outcomes.sort_by(|a, b| (&a.path, a.offset, a.index).cmp(&(&b.path, b.offset, b.index)));
    entries.sort_by_key(|e| e.key);

    let t_write = Instant::now();
    let output_files = output_files(&opts.output, is_rust, opts.abi);
    let digest = output_digest(&entries, &write_opts, is_rust);
    let stamp = opts.cache_dir.as_ref().map(|d| OutputStamp::path_for(d, &opts.output));
    let unchanged = stamp.as_ref().and_then(|p| OutputStamp::read(p)).filter(|st| st.digest == digest && st.files_unchanged());
    let output_written = unchanged.is_none();
    let mut pack_time = Duration::ZERO;
    let mut prepacked = false;
    let sizes = match unchanged {
        // Same entries, same options, and the files on disk are the ones we wrote: leave them
        // (and their modification times) alone.
        Some(st) => st.sizes,
        None => {
            let t = Instant::now();
            let packed = packer.and_then(|mut p| {
                // Whatever the packer had not reached (all of it on a build without compilations).
                p.feed_rest(&entries);
                p.packer.finish()
            });
            pack_time = t.elapsed();
            // A fresh build directory may not have the output's folder yet.
            if let Some(dir) = opts.output.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| FatalError::Write { path: dir.to_path_buf(), reason: e.to_string() })?;
            }
            prepacked = packed.as_ref().is_some_and(|p| p.made_from(&entries));
            let written = if is_rust {
                cache::rust::write_prepacked(&opts.output, &entries, &write_opts, packed)
            } else {
                cache::cpp::write_prepacked(&opts.output, &entries, &write_opts, packed)
            };
            let sizes = written.map_err(|e| FatalError::Write { path: opts.output.clone(), reason: e.to_string() })?;
            if let Some(p) = &stamp {
                OutputStamp::write(p, digest, sizes, &output_files);
            }
            sizes
        }
    };
    let layouts = if opts.print_summary {
        let c = cache::compare_layouts(&opts.output, &entries, &write_opts);
        Some(c.map_err(|e| FatalError::Write { path: opts.output.clone(), reason: e.to_string() })?)
    } else {
        None
    };
    let write_time = t_write.elapsed().saturating_sub(pack_time);

    let cache_hits = outcomes.iter().filter(|o| matches!(o.status, Status::Compiled { cached: true })).count();
    let scan_warning = scan::unopened_warning(&scanned);
    let links_note = scan::links_skipped_note(&scanned);
    let empty_input = (outcomes.is_empty() && !opts.allow_empty).then(|| {
        let unopened = scan_warning.as_deref().map(|w| format!(" ({w})")).unwrap_or_default();
        format!("no shader found in {}{unopened}; pass --allow-empty if an input without shaders is expected", opts.input.display())
    });
    let scan_warning = if empty_input.is_some() { None } else { scan_warning };
    let report = Report {
        outcomes,
        scan_errors: scanned.errors.into_iter().map(crate::report::ScanError::from).collect(),
        fatal: Vec::new(),
        dxc_compilations: compilations.load(Ordering::Relaxed),
        cache_hits,
        duplicates,
        empty_input,
        failures_allowed: opts.allow_failures,
        cache_repairs: store.as_ref().map(|s| s.take_problems().iter().map(|p| p.to_string()).collect()).unwrap_or_default(),
        wall_time: started.elapsed(),
    };
    if let Some(path) = &opts.report_json {
        let text = serde_json::to_string_pretty(&crate::report::to_json(&report)).expect("JSON of plain data");
        cache::atomic::write(path, text.as_bytes()).map_err(|e| FatalError::Write { path: path.clone(), reason: e.to_string() })?;
    }
    let ns = |a: &AtomicU64| Duration::from_nanos(a.load(Ordering::Relaxed));
    let timings = Timings {
        wall: started.elapsed(),
        scan: scan_time,
        scan_ended,
        first_shader_started: first_shader_started.get().copied(),
        parse: ns(&clock.parse),
        translate: ns(&clock.translate),
        dxc_dxil: ns(&clock.dxil),
        dxc_spirv: ns(&clock.spirv),
        pack: ns(&clock.pack) + pack_time,
        write: write_time,
        threads,
    };
    let override_warnings = opts.hooks.override_warnings(&report.outcomes.iter().map(|o| o.key).collect());
    Ok(BuildOutput {
        report,
        entries,
        output_written,
        sizes: Some(sizes),
        layouts,
        timings,
        packed_during_build: prepacked,
        scan_warning,
        links_note,
        override_warnings,
    })
}

/// The scan index of one input directory inside the incremental cache directory.
fn scan_index_path(cache_dir: &std::path::Path, input: &std::path::Path) -> PathBuf {
    let abs = std::path::absolute(input).unwrap_or_else(|_| input.to_path_buf());
    let h = xxhash_rust::xxh3::xxh3_64(abs.to_string_lossy().as_bytes());
    cache_dir.join("scan").join(format!("{h:016x}.json"))
}

/// Everything the output files depend on.
fn output_digest(entries: &[CacheEntry], opts: &WriteOptions, is_rust: bool) -> u128 {
    use xxhash_rust::xxh3::{xxh3_128, xxh3_64};
    let mut text = format!("shrec-output-1 {} {} {:?} {} {:?}\n", env!("CARGO_PKG_VERSION"), is_rust, opts.spirv_encoding, opts.zstd_level, opts.abi);
    if opts.layout != CacheLayout::Single {
        text.push_str(&format!("layout {:?} {:?}\n", opts.layout, opts.zstd_dict));
    }
    for e in entries {
        let h = |b: &Option<Vec<u8>>| b.as_deref().map_or(0, xxh3_64);
        text.push_str(&format!(
            "{:016x} {} {} {} {:?} {:016x} {:016x}\n",
            e.key,
            e.family.abi_id(),
            e.stage.abi_id(),
            e.spec_constants_mask,
            e.meta,
            h(&e.dxil),
            h(&e.spirv)
        ));
    }
    xxh3_128(text.as_bytes())
}

/// What the last build wrote to an output, kept in the incremental cache dir so that a build
/// with nothing new does not rewrite (or re-timestamp) the output files.
struct OutputStamp {
    digest: u128,
    sizes: CacheSizes,
    files: Vec<(PathBuf, u64)>,
}

impl OutputStamp {
    fn path_for(cache_dir: &std::path::Path, output: &std::path::Path) -> PathBuf {
        let abs = std::path::absolute(output).unwrap_or_else(|_| output.to_path_buf());
        let h = xxhash_rust::xxh3::xxh3_64(abs.to_string_lossy().as_bytes());
        cache_dir.join("outputs").join(format!("{h:016x}.stamp"))
    }

    fn file_hash(p: &std::path::Path) -> Option<u64> {
        std::fs::read(p).ok().map(|b| xxhash_rust::xxh3::xxh3_64(&b))
    }

    fn files_unchanged(&self) -> bool {
        self.files.iter().all(|(p, h)| Self::file_hash(p) == Some(*h))
    }

    fn read(p: &std::path::Path) -> Option<OutputStamp> {
        let text = std::fs::read_to_string(p).ok()?;
        let mut lines = text.lines();
        let digest = u128::from_str_radix(lines.next()?, 16).ok()?;
        let n: Vec<u64> = lines.next()?.split(' ').map(|x| x.parse().ok()).collect::<Option<_>>()?;
        let (&[entries, dr, dc, sr, sc], rest) = n.split_at_checked(5)? else { return None };
        let (layout, dd, sd) = match rest {
            [] => (CacheLayout::Single, 0, 0),
            [1, dd, sd] => (CacheLayout::PerShader, *dd, *sd),
            _ => return None,
        };
        let sizes = CacheSizes {
            entries: entries as usize,
            dxil: cache::BackendSize { raw: dr, compressed: dc },
            spirv: cache::BackendSize { raw: sr, compressed: sc },
            layout,
            dxil_dict: dd,
            spirv_dict: sd,
        };
        let files = lines
            .map(|l| {
                let (h, path) = l.split_once(' ')?;
                Some((PathBuf::from(path), u64::from_str_radix(h, 16).ok()?))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(OutputStamp { digest, sizes, files })
    }

    /// Best effort: without a stamp the next build just writes again.
    fn write(p: &std::path::Path, digest: u128, s: CacheSizes, files: &[PathBuf]) {
        let mut text = format!("{digest:032x}\n{} {} {} {} {}", s.entries, s.dxil.raw, s.dxil.compressed, s.spirv.raw, s.spirv.compressed);
        if s.layout != CacheLayout::Single {
            text.push_str(&format!(" {} {} {}", s.layout.abi_id(), s.dxil_dict, s.spirv_dict));
        }
        text.push('\n');
        for f in files {
            let Some(h) = Self::file_hash(f) else { return };
            let abs = std::path::absolute(f).unwrap_or_else(|_| f.clone());
            text.push_str(&format!("{h:016x} {}\n", abs.display()));
        }
        if let Some(dir) = p.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = cache::atomic::write(p, text.as_bytes());
    }
}

pub use crate::limits::MAX_HLSL_BYTES;

/// Builds one shader: from the incremental cache when its artifact key matches, else with DXC.
fn build_one(
    job: &FoundShader,
    opts: &BuildOptions,
    targets: &[Target],
    lib: &DxcLib,
    store: Option<&Store>,
    members: &scan::MemberReader,
    clock: &StageClock,
    compilations: &AtomicUsize,
) -> (Outcome, Option<CacheEntry>) {
    let outcome = |status: Status| Outcome {
        path: job.label(),
        file: job.path.clone(),
        member: job.member.clone(),
        container: job.container,
        name: job.name.clone(),
        offset: job.offset,
        family: job.family,
        stage: job.stage,
        key: job.key,
        index: job.index,
        status,
        hlsl_override: None,
        hlsl_dump_error: None,
    };
    let failed = |phase: Phase, reason: String, detail_offset: Option<u64>| (outcome(Status::Failed { phase, reason, detail_offset }), None);
    if !formats::has_translator(job.container) {
        let reason = format!("{} translation is not implemented yet (detection and keys are)", job.family);
        return (outcome(Status::Skipped { reason }), None);
    }

    let t = ThreadClock::start();
    let bytes = scan::read_container_with(job, members);
    add(&clock.parse, t);
    let bytes = match bytes {
        Ok(b) => b,
        Err(e) => return failed(Phase::Parse, e, None),
    };
    let t = ThreadClock::start();
    let translated = formats::translate(job.container, &bytes, job.index, &opts.translate);
    let overridden = match opts.hooks.override_for(job.key) {
        Ok(o) => o,
        Err(e) => {
            add(&clock.translate, t);
            return failed(Phase::Translate, format!("reading its --override-dir file: {e}"), None);
        }
    };
    // An override replaces the HLSL only: the runtime metadata (sampler words, the Xenos
    // specialization-constant mask) still come from the translation when there is one.
    // The mask an override declares (`// shrec: spec-constants-mask = …`, which generated HLSL
    // carries) wins: it describes the text that is compiled.
    let declared = match &overridden {
        Some((path, text)) => match crate::hlsl::declared_spec_constants_mask(text) {
            Ok(m) => m,
            Err(e) => {
                add(&clock.translate, t);
                return failed(Phase::Translate, format!("its --override-dir file {}: {e}", path.display()), None);
            }
        },
        None => None,
    };
    let (hlsl, meta, spec_constants_mask, override_path) = match (translated, overridden) {
        (Ok(tr), None) => {
            let text = crate::hlsl::write_with_entry_point(&tr.module, opts.abi.entry_point());
            (crate::hlsl::with_spec_constants_mask(text, tr.spec_constants_mask), tr.meta, tr.spec_constants_mask, None)
        }
        (Ok(tr), Some((path, text))) => (text, tr.meta, declared.unwrap_or(tr.spec_constants_mask), Some(path)),
        (Err(_), Some((path, text))) => (text, Vec::new(), declared.unwrap_or(0), Some(path)),
        (Err(e), None) => {
            add(&clock.translate, t);
            return failed(Phase::Translate, e.reason(), e.offset());
        }
    };
    let hlsl = opts.hooks.apply(hlsl);
    let outcome = |status: Status| Outcome { hlsl_override: override_path.clone(), ..outcome(status) };
    add(&clock.translate, t);
    if hlsl.len() > opts.max_hlsl_bytes {
        let reason = format!(
            "the generated HLSL is {} bytes, over the limit of {} bytes per shader (DXC's time on such a shader is unbounded in practice)",
            hlsl.len(),
            opts.max_hlsl_bytes
        );
        return (outcome(Status::Failed { phase: Phase::Translate, reason, detail_offset: None }), None);
    }
    // A `--hlsl-dir` file that cannot be written (full disk, ...) is an error of its own: the
    // shader is still compiled and cached (it used to fail the shader, and a full
    // disk dropped 137 of 143 shaders from the cache).
    let mut hlsl_dump_error = None;
    if let Some(dir) = &opts.hlsl_dir {
        let path = dir.join(dxc::hlsl_file_name(job.key, job.family, job.stage));
        if let Err(e) = cache::atomic::write(&path, hlsl.as_bytes()) {
            hlsl_dump_error = Some(format!("writing {}: {e}", path.display()));
        }
    }
    let outcome = |status: Status| Outcome { hlsl_dump_error: hlsl_dump_error.clone(), ..outcome(status) };
    let failed = |phase: Phase, reason: String, detail_offset: Option<u64>| (outcome(Status::Failed { phase, reason, detail_offset }), None);

    // A runtime that links another entry point (`--abi xenosrecomp-metal`: `shaderMain`) gets it
    // as DXC's last `-E`, which wins over the `main` the compiler interface passes first.
    let entry = opts.abi.entry_point();
    let dxc_args: std::borrow::Cow<[String]> = if entry == "main" {
        std::borrow::Cow::Borrowed(&opts.hooks.dxc_args)
    } else {
        std::borrow::Cow::Owned(["-E".to_string(), entry.to_string()].into_iter().chain(opts.hooks.dxc_args.iter().cloned()).collect())
    };
    let key = ArtifactKey::derive(&[
        b"shrec-artifact-1",
        env!("CARGO_PKG_VERSION").as_bytes(),
        &lib.identity.to_le_bytes(),
        hlsl.as_bytes(),
        args_fingerprint(job.stage, targets, &dxc_args).as_bytes(),
        &job.key.to_le_bytes(),
    ]);
    let entry = |a: Artifacts| CacheEntry {
        key: job.key,
        family: job.family,
        stage: job.stage,
        dxil: a.dxil,
        spirv: a.spirv,
        spec_constants_mask: a.spec_constants_mask,
        meta: a.meta,
    };
    if let Some(hit) = store.and_then(|s| s.get(&key)) {
        return (outcome(Status::Compiled { cached: true }), Some(entry(hit)));
    }

    let mut artifacts = Artifacts { dxil: None, spirv: None, meta, spec_constants_mask, hlsl_len: hlsl.len() as u32 };
    // In a worker process, under the time and memory limits: every shader with --isolate-dxc,
    // and a large one always (DXC's cost is steep in its size; in-process it cannot be stopped).
    let large = hlsl.len() > opts.dxc_isolate_above;
    // (Worker processes need Unix: elsewhere a large shader compiles in-process, unlimited.)
    let worker = opts.isolate_dxc.clone().or_else(|| if large && cfg!(unix) { opts.dxc_worker_exe.clone() } else { None });
    let mut failures: Vec<(Phase, String)> = Vec::new();
    for &target in targets {
        let t = ThreadClock::start();
        compilations.fetch_add(1, Ordering::Relaxed);
        let mask = spec_constants_mask;
        // DXC's messages name the file `--hlsl-dir` writes (and `shrec hlsl` prints), not DXC's
        // in-memory `shader.hlsl`.
        let file_name = dxc::hlsl_file_name(job.key, job.family, job.stage);
        let rejected = |diag: String| {
            let diag = diag.replace(&format!("{}:", dxc::SOURCE_NAME), &format!("{file_name}:"));
            format!("DXC ({}) rejected the generated HLSL:\n{diag}", target.name())
        };
        let compiled = match &worker {
            Some(exe) => match crate::dxc_worker::compile(exe, lib, &hlsl, job.stage, target, mask, &dxc_args, Some(opts.dxc_limits)) {
                Ok(result) => result.map_err(rejected),
                Err(crash) => Err(format!("DXC ({}): {crash}", target.name())),
            },
            None => dxc::compile_with_args(lib, &hlsl, job.stage, target, mask, &dxc_args).map_err(rejected),
        };
        add(if target == Target::Dxil { &clock.dxil } else { &clock.spirv }, t);
        match compiled {
            Ok(code) => match target {
                Target::Dxil => artifacts.dxil = Some(code),
                Target::Spirv => artifacts.spirv = Some(code),
            },
            // The other backend is still compiled: a shader DXIL cannot take may still run
            // from SPIR-V, and the other way round.
            Err(reason) => {
                let phase = if target == Target::Dxil { Phase::DxcDxil } else { Phase::DxcSpirv };
                failures.push((phase, reason));
            }
        }
    }
    if let Some((phase, reason)) = failures.first().cloned() {
        let built: Vec<&str> =
            [(artifacts.dxil.is_some(), "DXIL"), (artifacts.spirv.is_some(), "SPIR-V")].into_iter().filter_map(|(b, n)| b.then_some(n)).collect();
        let mut reason = reason;
        for (_, other) in &failures[1..] {
            reason.push('\n');
            reason.push_str(other);
        }
        if built.is_empty() {
            return failed(phase, reason, None);
        }
        // Partly built: in the cache with the backends that compiled, still a failure; not
        // stored in the incremental cache, which holds complete builds only.
        reason.push_str(&format!("\n(its {} is in the cache)", built.join(" and ")));
        return (outcome(Status::Failed { phase, reason, detail_offset: None }), Some(entry(artifacts)));
    }
    if let Some(s) = store {
        // A failed cache write costs a rebuild next time, nothing else: not a shader failure.
        if let Err(e) = s.put(&key, &artifacts) {
            eprintln!("warning: incremental cache: {e}");
        }
    }
    (outcome(Status::Compiled { cached: false }), Some(entry(artifacts)))
}

/// Progress on stderr, in two parts: while the scan runs, the bytes scanned of those the walk
/// found (until the walk is over, a counter of what it has found: no bar without a total), with
/// the shaders already built; once the scan is over, the shaders built of those found. On a
/// terminal an indicatif bar that one thread ([`Progress::watch`]) redraws every 100 ms, its ETA
/// computed from the rate so far and left out (`ETA …`) until there is a rate to compute it
/// from; otherwise a plain line at most every 2 seconds, and the last one (CI logs). indicatif
/// itself draws nothing when its target is not a terminal (`ProgressDrawTarget::stderr` checks
/// `Term::is_term`), and shrec does not even create the bar then. `-q` turns all of it off.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    /// Counters the scan updates.
    scan: scan::ScanProgress,
    /// Set when the scan is over (the bar then shows shaders).
    scan_over: std::sync::atomic::AtomicBool,
    /// Set by [`Progress::finish`]: [`Progress::watch`] returns.
    finished: std::sync::atomic::AtomicBool,
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
    fn print(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    fn new(enabled: bool) -> Self {
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
    fn watch(&self) {
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
    fn set_total(&self, total: usize) {
        self.total.store(total, Ordering::Relaxed);
        self.scan_over.store(true, Ordering::Release);
    }

    fn tick(&self) {
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

    fn finish(&self) {
        self.scan_over.store(true, Ordering::Release);
        self.finished.store(true, Ordering::Release);
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

fn fmt_ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// `shrec build` as the command line runs it: prints errors, summary, timings; returns the exit code.
pub fn run_cli(opts: &BuildOptions) -> i32 {
    let out = match run(opts) {
        Ok(o) => o,
        Err(e) => {
            let msg = crate::report::printable(&e.to_string());
            eprintln!("error: {msg}");
            // CI reads the report even when the build could not run.
            if let Some(path) = opts.report_json.as_ref().filter(|p| report_writable(p)) {
                let report = Report { fatal: vec![e.to_string()], ..Report::default() };
                let text = serde_json::to_string_pretty(&crate::report::to_json(&report)).expect("JSON of plain data");
                if let Err(w) = cache::atomic::write(path, text.as_bytes()) {
                    eprintln!("error: {}", crate::report::printable(&format!("writing the report {}: {w}", path.display())));
                }
            }
            // a fatal error is a failure CI must show too
            if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
                println!("::error::{}", crate::report::escape_annotation_data(&e.to_string()));
            }
            return 1;
        }
    };
    let r = &out.report;
    // Skipped shaders: one line per family (the JSON report lists each one).
    let mut skipped: BTreeMap<crate::Family, (usize, String)> = BTreeMap::new();
    for o in &r.outcomes {
        if let Status::Skipped { reason } = &o.status {
            skipped.entry(o.family).or_insert_with(|| (0, reason.clone())).0 += 1;
        }
    }
    for (family, (n, reason)) in skipped {
        eprintln!("warning: {n} {family} shader(s) found but not built: {reason}");
    }
    if !opts.print_errors_as_they_happen {
        for o in &r.outcomes {
            if let Some(line) = crate::report::error_line(o) {
                eprintln!("{line}");
            }
        }
    }
    if opts.progress {
        for o in r.outcomes.iter().filter(|o| o.hlsl_override.is_some()) {
            let file = o.hlsl_override.as_deref().map(|p| p.display().to_string()).unwrap_or_default();
            eprintln!("note: {}", crate::report::printable(&format!("{}+0x{:x} [0x{:016X}]: HLSL from {file}", o.path.display(), o.offset, o.key)));
        }
    }
    for line in r.outcomes.iter().filter_map(crate::report::dump_error_line) {
        eprintln!("{line}");
    }
    for e in &r.scan_errors {
        eprintln!("{}", crate::report::scan_error_line(e));
    }
    for w in &r.cache_repairs {
        eprintln!("warning: incremental cache: {w}");
    }
    if let Some(e) = &r.empty_input {
        eprintln!("error: {}", crate::report::printable(e));
    }
    if let Some(w) = &out.scan_warning {
        eprintln!("warning: {w}");
    }
    for w in &out.override_warnings {
        eprintln!("warning: {}", crate::report::printable(w));
    }
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
        for a in crate::report::github_annotations(r) {
            println!("{a}");
        }
        // The job summary: appended, as every step of the job writes to the same file.
        if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
            use std::io::Write as _;
            let written = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(&path)
                .and_then(|mut f| f.write_all(crate::report::step_summary(r).as_bytes()));
            if let Err(e) = written {
                eprintln!("warning: {}", crate::report::printable(&format!("GITHUB_STEP_SUMMARY {}: {e}", PathBuf::from(&path).display())));
            }
        }
    }
    if opts.progress {
        if let Some(n) = &out.links_note {
            eprintln!("note: {n}");
        }
        eprint!("{}", crate::report::summary_table(r));
        if out.output_written {
            eprintln!("shrec: wrote {}", opts.output.display());
        } else {
            eprintln!("shrec: {} is up to date", opts.output.display());
        }
    }
    if opts.print_summary {
        if let Some(s) = &out.sizes {
            eprint!("{s}");
        }
        if let Some(l) = &out.layouts {
            eprint!("{l}");
        }
    }
    if opts.print_timings {
        let t = &out.timings;
        eprintln!("timings ({} threads): wall {}", t.threads, fmt_ms(t.wall));
        match t.first_shader_started {
            Some(first) => eprintln!(
                "  scan       {} (wall; ended at {}, the first shader started compiling at {})",
                fmt_ms(t.scan),
                fmt_ms(t.scan_ended),
                fmt_ms(first)
            ),
            None => eprintln!("  scan       {} (wall)", fmt_ms(t.scan)),
        }
        eprintln!("  parse      {} (CPU, summed over threads)", fmt_ms(t.parse));
        eprintln!("  translate  {} (CPU, summed)", fmt_ms(t.translate));
        eprintln!("  dxc dxil   {} (CPU, summed)", fmt_ms(t.dxc_dxil));
        eprintln!("  dxc spirv  {} (CPU, summed)", fmt_ms(t.dxc_spirv));
        eprintln!("  pack       {} (CPU: SMOL-V + zstd, mostly while DXC runs)", fmt_ms(t.pack));
        eprintln!("  write      {} (wall)", fmt_ms(t.write));
        let n = r.outcomes.len() as f64;
        eprintln!("  {:.1} shaders/s", n / t.wall.as_secs_f64().max(1e-9));
        if !t.dxc_floor().is_zero() {
            eprintln!("  wall / (DXC CPU time / threads) = {:.3}", t.wall_over_floor());
        }
    }
    if let Some(line) = crate::report::closing_line(r) {
        eprintln!("{line}");
    }
    crate::report::exit_code(r)
}

/// Makes `--hlsl-dir` self-contained: the prelude every file includes, and `dxc.sh`, which runs
/// a standalone `dxc` on one of the files with the build's own arguments (from
/// [`dxc::command_line_args`], so the script cannot drift from the build): the DXIL target of a
/// file that declares a non-zero specialization-constant mask (the line
/// [`crate::hlsl::SPEC_CONSTANTS_MASK_LINE`]) is the library profile, as in the build, and the
/// entry point is the build's (`--abi xenosrecomp-metal`: `shaderMain`).
fn write_hlsl_dir_support(dir: &Path, targets: &[Target], entry_point: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    cache::atomic::write(&dir.join(crate::hlsl::PRELUDE_NAME), crate::hlsl::PRELUDE.as_bytes())?;
    let mut script = String::from(concat!(
        "#!/bin/sh\n",
        "# Written by shrec build --hlsl-dir: compiles one file of this directory with a standalone dxc\n",
        "# and the arguments shrec used. Usage: ./dxc.sh KEY.FAMILY.STAGE.hlsl [dxil|spirv]\n",
        "# A file that declares a non-zero spec-constants mask compiles to DXIL as a library (lib_6_3),\n",
        "# as in the build (the runtime links it with the definition of g_SpecConstants()).\n",
        "#\n",
        "# dxc is the DirectX Shader Compiler's command-line program, which shrec does not ship (shrec\n",
        "# loads the library): from https://github.com/microsoft/DirectXShaderCompiler/releases (the\n",
        "# linux_dxc_*.x86_64.tar.gz or dxc_*.zip archive, bin/dxc) or the Vulkan SDK (bin/dxc).\n",
        "# Set DXC=/path/to/dxc when it is not on PATH.\n",
        "set -e\n",
        "DXC=\"${DXC:-dxc}\"\n",
        "f=\"$1\"; target=\"${2:-dxil}\"\n",
    ));
    script.push_str(&format!(
        "mask=$(sed -n 's|^{}\\(0[xX][0-9A-Fa-f]*\\).*|\\1|p' \"$f\" 2>/dev/null | head -n 1)\n",
        crate::hlsl::SPEC_CONSTANTS_MASK_LINE
    ));
    script.push_str("case \"$mask\" in ''|0x0|0X0|0x00000000) lib= ;; *) lib=1 ;; esac\n");
    script.push_str("case \"$f:$target\" in\n");
    let args = |stage, target, mask| {
        let mut a = dxc::command_line_args(stage, target, mask);
        if let Some(e) = a.iter().position(|x| x == "-E") {
            a[e + 1] = entry_point.to_string();
        }
        a.join(" ")
    };
    for stage in [crate::ir::Stage::Vertex, crate::ir::Stage::Pixel, crate::ir::Stage::Geometry] {
        let names: BTreeSet<&str> = crate::ir::Family::ALL.iter().map(|&f| stage.name_in(f)).collect();
        for &target in targets {
            let patterns: Vec<String> = names.iter().map(|n| format!("*.{n}.hlsl:{}", target.name())).collect();
            let (plain, library) = (args(stage, target, 0), args(stage, target, 1));
            let out = if target == Target::Spirv { "spv" } else { "dxil" };
            let run = |a: &str| format!("exec \"$DXC\" {a} -Fo \"${{f%.hlsl}}.{out}\" \"$f\"");
            if plain == library {
                script.push_str(&format!("  {}) {} ;;\n", patterns.join("|"), run(&plain)));
            } else {
                script.push_str(&format!("  {}) if [ -n \"$lib\" ]; then {}; else {}; fi ;;\n", patterns.join("|"), run(&library), run(&plain)));
            }
        }
    }
    script.push_str("  *) echo \"usage: $0 KEY.FAMILY.STAGE.hlsl [dxil|spirv]\" >&2; exit 2 ;;\nesac\n");
    let path = dir.join("dxc.sh");
    cache::atomic::write(&path, script.as_bytes())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

#[cfg(test)]
mod progress_tests {
    use super::*;

    /// Issue 22 item 7: no ETA before there is a rate (no "ETA 0s" at the start), then the time
    /// left at the rate so far.
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
