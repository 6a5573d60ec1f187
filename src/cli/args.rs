//! The command line's arguments (clap): the subcommands and their options.

use clap::builder::TypedValueParser as _;
use clap::{Args, Parser, Subcommand, ValueEnum};
use shrec::dxc::Target;
use shrec::formats::{self, TranslateOptions};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "shrec",
    version,
    about = "Batch shader recompiler: Xbox 360 Xenos, Wii U GX2, 3DS PICA200 and Flash AGAL shader binaries to HLSL, DXIL and SPIR-V, embedded in a hash-keyed C++ or Rust cache."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
pub(crate) struct PickArgs {
    /// File holding the shader; a member of an archive as reports name it: `game.szs!shaders/a.gsh`.
    pub(crate) file: PathBuf,
    /// Byte offset of the container in FILE (default: the first container found).
    #[arg(long, value_parser = parse_u64)]
    pub(crate) offset: Option<u64>,
    /// Shader index inside the container (GFD, SHARCFB and DVLB hold several).
    #[arg(long, default_value_t = 0)]
    pub(crate) index: u32,
}

#[derive(Args)]
pub(crate) struct TranslateArgs {
    /// Accept AGAL version 4 ("enhanced" profile: vertex texture fetch with tld).
    #[arg(long)]
    pub(crate) agal4: bool,
    /// Translate AGAL `ifg` as strict `>` (Ruffle's reading) instead of `>=` (Adobe's docs).
    #[arg(long)]
    pub(crate) agal_ifg_strict: bool,
    /// Xenos: reproduce XenosRecomp as built by default (`generic`) or with `UNLEASHED_RECOMP`
    /// (`unleashed`: UnleashedRecomp's renderer; docs/profiles.md).
    #[arg(long, value_enum, default_value = "generic")]
    pub(crate) profile: ProfileArg,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ProfileArg {
    Generic,
    Unleashed,
}

impl TranslateArgs {
    pub(crate) fn options(&self) -> TranslateOptions {
        let xenos_profile = match self.profile {
            ProfileArg::Generic => formats::xenos::lower::Profile::Generic,
            ProfileArg::Unleashed => formats::xenos::lower::Profile::Unleashed,
        };
        TranslateOptions { agal4: self.agal4, agal_ifg_strict: self.agal_ifg_strict, xenos_profile }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum SpirvEncodingArg {
    Smolv,
    Raw,
}

/// What writes the SPIR-V target.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum SpirvBackendArg {
    /// DXC compiles the generated HLSL.
    Dxc,
    /// shrec writes SPIR-V from its IR, without DXC (AGAL fully covered so far;
    /// docs/spirv-direct.md).
    Direct,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum LayoutArg {
    /// One zstd frame per backend (XenosRecomp's layout).
    Single,
    /// One zstd frame per shader: a runtime decompresses only what it uses.
    PerShader,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum AbiArg {
    Shrec,
    Xenosrecomp,
    #[value(name = "xenosrecomp-metal")]
    XenosrecompMetal,
}

#[derive(Args)]
pub(crate) struct BuildArgs {
    /// Game directory (or single file) to scan.
    pub(crate) dir: PathBuf,
    /// Output file: `.cpp` (XenosRecomp/UnleashedRecomp ABI, plus a header) or `.rs` (Rust module).
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// Comma-separated DXC targets.
    #[arg(long, value_delimiter = ',', default_value = "dxil,spirv", value_parser = parse_target)]
    pub(crate) targets: Vec<Target>,
    /// Path to the DXC library: libdxcompiler.so on Linux, dxcompiler.dll on Windows,
    /// libdxcompiler.dylib on macOS (else $SHREC_DXC, else a copy shrec provisions from PyPI;
    /// also from the DirectXShaderCompiler releases or the Vulkan SDK).
    #[arg(long)]
    pub(crate) dxc: Option<PathBuf>,
    /// Never download DXC.
    #[arg(long)]
    pub(crate) offline: bool,
    /// Incremental cache directory (default: target/shrec-cache under the current directory
    /// when it has a Cargo.toml or target/, else the user cache dir).
    #[arg(long)]
    pub(crate) cache_dir: Option<PathBuf>,
    /// Do not read or write the incremental cache.
    #[arg(long)]
    pub(crate) no_cache: bool,
    /// Write a JSON report of every shader's outcome.
    #[arg(long)]
    pub(crate) report: Option<PathBuf>,
    /// Write each shader's HLSL into this directory (named by key).
    #[arg(long)]
    pub(crate) hlsl_dir: Option<PathBuf>,
    /// How SPIR-V is stored in the cache.
    #[arg(long, value_enum, default_value = "smolv")]
    pub(crate) spirv_encoding: SpirvEncodingArg,
    /// What writes the SPIR-V target: shrec directly from its IR (then `--targets spirv` builds
    /// without any DXC; docs/spirv-direct.md), or DXC from the HLSL. Default: direct, or dxc
    /// when --prelude, -D, --override-dir or --dxc-arg is given.
    #[arg(long, value_enum)]
    pub(crate) spirv_backend: Option<SpirvBackendArg>,
    /// With the direct back end: declare SPV_KHR_float_controls' SignedZeroInfNanPreserve,
    /// so that the driver keeps NaN, infinities and the sign of zero (docs/spirv-direct.md).
    #[arg(long)]
    pub(crate) spirv_float_controls: bool,
    /// Run DXC in worker processes: a DXC crash then fails one shader, not the build.
    #[arg(long)]
    pub(crate) isolate_dxc: bool,
    /// Shaders whose HLSL is larger than this many bytes are compiled in a DXC worker process
    /// under --dxc-time-limit and --dxc-memory-limit (all shaders are with --isolate-dxc).
    #[arg(long, value_name = "BYTES", default_value_t = shrec::limits::DXC_ISOLATE_HLSL_BYTES)]
    pub(crate) dxc_isolate_above: usize,
    /// CPU seconds DXC may spend on one compilation in a worker process (1 to 86400); past it the
    /// shader fails.
    #[arg(long, value_name = "SECS", default_value_t = shrec::limits::DxcLimits::default().cpu_seconds, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub(crate) dxc_time_limit: u64,
    /// Address space of a DXC worker process in MiB (256 to 1048576); a compilation that needs
    /// more fails.
    #[arg(long, value_name = "MIB", default_value_t = shrec::limits::DxcLimits::default().memory_mib, value_parser = clap::value_parser!(u64).range(256..=1 << 20))]
    pub(crate) dxc_memory_limit: u64,
    /// Shaders whose HLSL is larger than this many bytes compile to SPIR-V without DXC's
    /// optimizer (-O0): it takes minutes on very long shaders; the driver optimizes the module
    /// when it loads it. The report marks them (spirv_unoptimized).
    #[arg(long, value_name = "BYTES", default_value_t = shrec::limits::SPIRV_UNOPTIMIZED_HLSL_BYTES)]
    pub(crate) spirv_unoptimized_above: usize,
    /// Resource cap: a shader whose generated HLSL is larger fails instead of going to DXC.
    #[arg(long, default_value_t = shrec::build::MAX_HLSL_BYTES)]
    pub(crate) max_hlsl_bytes: usize,
    /// zstd level of the cache blobs (19: 9% smaller for 10× the CPU; XenosRecomp uses 22).
    #[arg(long, default_value_t = shrec::cache::DEFAULT_ZSTD_LEVEL, value_parser = clap::value_parser!(i32).range(1..=22))]
    pub(crate) zstd_level: i32,
    /// Compressed blob layout: one zstd frame per backend, or one per shader (the tables then
    /// carry each shader's frame offset and size).
    #[arg(long, value_enum, default_value = "single")]
    pub(crate) layout: LayoutArg,
    /// With --layout per-shader: train a zstd dictionary per backend from the shaders and
    /// compress every frame with it (embedded in the cache).
    #[arg(long)]
    pub(crate) zstd_dict: bool,
    /// Maximum dictionary size in bytes for --zstd-dict (and for the --summary comparison),
    /// 256 B to 16 MiB (zstd trains dictionaries of kilobytes; a huge value only burns memory).
    #[arg(long, default_value_t = shrec::cache::DEFAULT_DICT_SIZE, value_parser = clap::value_parser!(u64).range(256..=16 << 20).map(|v| v as usize))]
    pub(crate) zstd_dict_size: usize,
    /// Worker threads (default: all cores), 1 to 1024.
    #[arg(short, long, value_parser = clap::value_parser!(u64).range(1..=1024).map(|v| v as usize))]
    pub(crate) jobs: Option<usize>,
    /// Print the cache sizes per backend, and what every layout (single frame, per-shader,
    /// per-shader with a dictionary) would take.
    #[arg(long)]
    pub(crate) summary: bool,
    /// Print time spent per stage.
    #[arg(long)]
    pub(crate) timings: bool,
    /// No progress output.
    #[arg(short, long)]
    pub(crate) quiet: bool,
    /// Succeed when the input holds no shader (otherwise that is an error, exit code 2: an
    /// archive shrec cannot open looks exactly like it).
    #[arg(long)]
    pub(crate) allow_empty: bool,
    /// Symbols of a `.cpp` cache: `shrec` (UnleashedRecomp's eight plus shrec's extras, with
    /// shrec's `<stem>.h`), `xenosrecomp` (exactly XenosRecomp's main-branch symbols, no header
    /// written: the project's own `shader_cache.h` declares them) or `xenosrecomp-metal`
    /// (XenosRecomp's Metal-branch layout: AIR ranges, filename, entry point `shaderMain`).
    #[arg(long, value_enum, default_value = "shrec")]
    pub(crate) abi: AbiArg,
    /// Exit 0 when shaders failed or files could not be scanned (they are still reported; the
    /// cache holds every shader that built). Fatal errors still exit 1.
    #[arg(long)]
    pub(crate) allow_failures: bool,
    /// HLSL file pasted after `#include "shader_common.h"` in every shader.
    #[arg(long, value_name = "FILE")]
    pub(crate) prelude: Option<PathBuf>,
    /// `#define NAME VALUE` before the prelude in every shader (VALUE defaults to 1); repeatable.
    #[arg(short = 'D', long = "define", value_name = "NAME[=VALUE]")]
    pub(crate) defines: Vec<String>,
    /// Directory of `<KEY>.hlsl` files compiled instead of the translation of the shader with
    /// that key (16 upper-case hex digits); the report names each override used.
    #[arg(long, value_name = "DIR")]
    pub(crate) override_dir: Option<PathBuf>,
    /// Argument appended to shrec's DXC arguments; repeatable (`--dxc-arg=-O3`).
    #[arg(long = "dxc-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub(crate) dxc_args: Vec<String>,
    #[command(flatten)]
    pub(crate) translate: TranslateArgs,
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
