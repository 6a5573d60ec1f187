//! The whole pipeline: scan → translate → HLSL → DXC (per target, incrementally) → cache file →
//! report. [`run`] is the library entry point (used by build scripts); [`run_observed`] also
//! reports progress and each shader's outcome as it happens ([`BuildEvents`]). The library prints
//! nothing: the `shrec` executable draws the progress and prints what the build returns.
//!
//! Submodules, one responsibility each: `pipeline` (the scanner, worker and packer threads),
//! `queue` (the job queue between scanner and workers), `shader` (one shader's build),
//! `clock` (per-stage CPU time, [`Timings`]), `output` (checking and writing the output files),
//! `stamp` (the up-to-date check of those files), `hlsl_dir` (`--hlsl-dir` support files),
//! `events` (what a build tells its caller while it runs).

mod clock;
mod events;
mod hlsl_dir;
mod output;
mod pipeline;
mod queue;
mod shader;
mod stamp;

pub use crate::limits::MAX_HLSL_BYTES;
pub use clock::Timings;
pub use events::{BuildEvents, NoEvents};
pub use output::write_fatal_report;

use crate::cache::incremental::Store;
use crate::cache::{self, CacheEntry, CacheLayout, CacheSizes, SpirvEncoding, WriteOptions};
use crate::dxc::{self, LocateOptions, Target};
use crate::formats::TranslateOptions;
use crate::report::{Report, Status};
use crate::scan;
use clock::StageClock;
use pipeline::Pipeline;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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
    /// Also compute what every layout (single frame, per-shader, per-shader with a dictionary)
    /// would take ([`BuildOutput::layouts`], `--summary`): each is compressed once more.
    pub compare_layouts: bool,
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
    /// HLSL bytes above which SPIR-V is compiled without DXC's optimizer (`-O0`;
    /// [`crate::limits::SPIRV_UNOPTIMIZED_HLSL_BYTES`] by default); the outcome says so.
    pub spirv_unoptimized_above: usize,
    /// An input without any shader is a success (`--allow-empty`); otherwise it fails with exit
    /// code 2, because an archive shrec cannot open looks exactly like it.
    pub allow_empty: bool,
    /// Failed shaders and scan errors still exit 0 (`--allow-failures`, CMake's ALLOW_FAILURES).
    pub allow_failures: bool,
    /// `.cpp` symbol set (`--abi`).
    pub abi: crate::cache::CppAbi,
    /// `--prelude`, `-D`, `--override-dir`, `--dxc-arg` (see [`crate::hooks`]).
    pub hooks: crate::hooks::Hooks,
    /// What writes the SPIR-V target (`--spirv-backend`).
    pub spirv_backend: SpirvBackend,
    /// The direct back end declares `SignedZeroInfNanPreserve` (`--spirv-float-controls`,
    /// [`crate::spirv::Options::float_controls`]); no effect on DXC's SPIR-V.
    pub spirv_float_controls: bool,
}

/// What writes a shader's SPIR-V (`--spirv-backend`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SpirvBackend {
    /// [`Direct`](SpirvBackend::Direct), or [`Dxc`](SpirvBackend::Dxc) when a hook acts on the
    /// HLSL or on DXC ([`crate::hooks::Hooks::any`]), whose effect the direct back end would
    /// leave out of the SPIR-V ([`SpirvBackend::resolve`]).
    #[default]
    Auto,
    /// DXC compiles the generated HLSL (with `--prelude`, `-D`, `--override-dir`, `--dxc-arg`).
    Dxc,
    /// [`crate::spirv`] writes it from the IR: no HLSL, no DXC. A build whose targets are all
    /// direct never loads DXC. The HLSL hooks do not apply; a shader with an `--override-dir`
    /// file, or with an IR construct the back end does not cover yet, fails its SPIR-V with
    /// `spirv.unsupported` (docs/spirv-direct.md).
    Direct,
}

impl SpirvBackend {
    pub fn name(self) -> &'static str {
        match self {
            SpirvBackend::Auto => "auto",
            SpirvBackend::Dxc => "dxc",
            SpirvBackend::Direct => "direct",
        }
    }

    /// The back end a build with these hooks uses: `Auto` becomes `Direct`, or `Dxc` when a hook
    /// acts on the HLSL or DXC (their effect must reach the SPIR-V as it reaches the DXIL).
    pub fn resolve(self, hooks: &crate::hooks::Hooks) -> SpirvBackend {
        match self {
            SpirvBackend::Auto if hooks.any() => SpirvBackend::Dxc,
            SpirvBackend::Auto => SpirvBackend::Direct,
            explicit => explicit,
        }
    }
}

impl BuildOptions {
    /// Defaults for a build script: both targets, SMOL-V, zstd 18, incremental cache under
    /// `target/`.
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
            compare_layouts: false,
            max_hlsl_bytes: MAX_HLSL_BYTES,
            isolate_dxc: None,
            dxc_worker_exe: None,
            dxc_isolate_above: crate::limits::DXC_ISOLATE_HLSL_BYTES,
            dxc_limits: crate::limits::DxcLimits::default(),
            spirv_unoptimized_above: crate::limits::SPIRV_UNOPTIMIZED_HLSL_BYTES,
            allow_empty: false,
            allow_failures: false,
            abi: crate::cache::CppAbi::Shrec,
            hooks: crate::hooks::Hooks::default(),
            spirv_backend: SpirvBackend::Auto,
            spirv_float_controls: false,
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
    /// `--spirv-float-controls` with DXC writing the SPIR-V (`--spirv-backend dxc`, or an HLSL
    /// hook under the default back end).
    #[error("--spirv-float-controls needs the direct SPIR-V back end, and this build writes SPIR-V with DXC (--spirv-backend dxc, or an HLSL hook: --prelude, -D, --override-dir, --dxc-arg); DXC has no option for these execution modes")]
    FloatControls,
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
    /// The report of a build that could not run ([`write_fatal_report`]) could not be written.
    #[error("writing the report {}: {reason}", path.display())]
    Report { path: PathBuf, reason: String },
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
    /// Every layout's sizes, when [`BuildOptions::compare_layouts`] asked for them.
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

/// Runs a build. Per-shader failures are in the report; only whole-build problems are `Err`.
pub fn run(opts: &BuildOptions) -> Result<BuildOutput, FatalError> {
    run_observed(opts, &NoEvents)
}

/// [`run`], telling `events` how the build goes while it runs: the scan's counters, each
/// shader's outcome as soon as it is known (the command line prints failures then), an
/// incremental-cache write that failed.
pub fn run_observed(opts: &BuildOptions, events: &dyn BuildEvents) -> Result<BuildOutput, FatalError> {
    let started = Instant::now();
    // from here on the back end is Dxc or Direct
    let resolved = BuildOptions { spirv_backend: opts.spirv_backend.resolve(&opts.hooks), ..opts.clone() };
    let opts = &resolved;
    let is_rust = check_options(opts)?;
    output::check_outputs(opts, is_rust)?;
    let mut targets = opts.targets.clone();
    targets.sort();
    targets.dedup();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(opts.jobs.unwrap_or(0)).build().map_err(|e| FatalError::Pool(e.to_string()))?;
    let threads = pool.current_num_threads();

    // DXC is loaded only when a target needs it: `--targets spirv --spirv-backend direct`
    // builds without any DXC.
    let needs_dxc = targets.iter().any(|&t| t == Target::Dxil || opts.spirv_backend == SpirvBackend::Dxc);
    let lib = if needs_dxc { Some(dxc::locate(&opts.dxc)?) } else { None };
    let store = match &opts.cache_dir {
        Some(dir) => Some(Store::open(dir).map_err(|e| FatalError::Cache { path: dir.clone(), reason: e.to_string() })?),
        None => None,
    };
    if let Some(dir) = &opts.hlsl_dir {
        hlsl_dir::write_hlsl_dir_support(dir, &opts.targets, opts.abi.entry_point())
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
    let write_opts = WriteOptions {
        spirv_encoding: opts.spirv_encoding,
        zstd_level: opts.zstd_level,
        layout: opts.layout,
        zstd_dict: if opts.layout == CacheLayout::PerShader { opts.zstd_dict } else { None },
        abi: opts.abi,
    };
    let pipeline = Pipeline {
        opts,
        targets: &targets,
        lib: lib.as_ref(),
        store: store.as_ref(),
        write_opts: &write_opts,
        clock: &clock,
        compilations: &compilations,
        events,
        started,
    };
    events.scan_started();
    let built = pipeline.run(&pool, &scan_pool);

    let t_write = Instant::now();
    let written = output::write_outputs(opts, is_rust, &built.entries, &write_opts, built.packer)?;
    let layouts = if opts.compare_layouts {
        let c = cache::compare_layouts(&opts.output, &built.entries, &write_opts);
        Some(c.map_err(|e| FatalError::Write { path: opts.output.clone(), reason: e.to_string() })?)
    } else {
        None
    };
    let write_time = t_write.elapsed().saturating_sub(written.pack_time);

    let outcomes = built.outcomes;
    let cache_hits = outcomes.iter().filter(|o| matches!(o.status, Status::Compiled { cached: true })).count();
    let scan_warning = scan::unopened_warning(&built.scanned);
    let links_note = scan::links_skipped_note(&built.scanned);
    let empty_input = (outcomes.is_empty() && !opts.allow_empty).then(|| {
        let unopened = scan_warning.as_deref().map(|w| format!(" ({w})")).unwrap_or_default();
        format!("no shader found in {}{unopened}; pass --allow-empty if an input without shaders is expected", opts.input.display())
    });
    let scan_warning = if empty_input.is_some() { None } else { scan_warning };
    let report = Report {
        outcomes,
        scan_errors: built.scanned.errors.into_iter().map(crate::report::ScanError::from).collect(),
        fatal: Vec::new(),
        dxc_compilations: compilations.load(Ordering::Relaxed),
        cache_hits,
        duplicates: built.duplicates,
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
        scan: built.scan_time,
        scan_ended: built.scan_ended,
        first_shader_started: built.first_shader_started,
        parse: ns(&clock.parse),
        translate: ns(&clock.translate),
        dxc_dxil: ns(&clock.dxil),
        dxc_spirv: ns(&clock.spirv),
        pack: ns(&clock.pack) + written.pack_time,
        write: write_time,
        threads,
    };
    let override_warnings = opts.hooks.override_warnings(&report.outcomes.iter().map(|o| o.key).collect());
    Ok(BuildOutput {
        report,
        entries: built.entries,
        output_written: written.output_written,
        sizes: Some(written.sizes),
        layouts,
        timings,
        packed_during_build: written.packed_during_build,
        scan_warning,
        links_note,
        override_warnings,
    })
}

/// Checks what can be checked of the options alone; returns whether the output is a Rust module
/// (`.rs`) rather than C++.
fn check_options(opts: &BuildOptions) -> Result<bool, FatalError> {
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
    if opts.spirv_float_controls && opts.spirv_backend != SpirvBackend::Direct {
        return Err(FatalError::FloatControls);
    }
    if opts.abi.is_xenosrecomp() {
        if is_rust {
            return Err(FatalError::Abi("is a .cpp symbol set; the output is a .rs module"));
        }
        if opts.layout != CacheLayout::Single {
            return Err(FatalError::Abi("has XenosRecomp's single-frame layout only (per-shader frames need shrec's header)"));
        }
    }
    Ok(is_rust)
}
