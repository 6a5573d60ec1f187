//! Resource caps: how much one shader may cost before shrec refuses it.
//!
//! shrec reads whatever a game directory holds, so a header can claim anything. Each cap turns a
//! decoding accident or a hostile file into one failed shader with an error naming the cap,
//! instead of minutes of work, gigabytes of memory or a stack overflow. All caps live here so
//! that README, errors and tests agree; each sits orders of magnitude above what real programs
//! of the four ISAs use, so no real shader meets one (`shrec-verify/tests/no_gpu/resource_caps.rs` measures the
//! bundled corpus: 172 shaders).
//!
//! | cap | value | real programs |
//! |---|---|---|
//! | microcode bytes per shader ([`MAX_MICROCODE_BYTES`]) | 1 MiB | largest corpus container: 20 KB |
//! | IR statements per shader ([`MAX_IR_STATEMENTS`]) | 2^20 | corpus maximum 1 260 |
//! | nesting of IR blocks: if/loop ([`MAX_NESTING`]) | 64 | corpus maximum 5 |
//! | HLSL bytes per shader ([`MAX_HLSL_BYTES`], `--max-hlsl-bytes`) | 16 MiB | corpus maximum 75 KB |
//! | DXC CPU time per compilation, HLSL over [`DXC_ISOLATE_HLSL_BYTES`] ([`DxcLimits`], `--dxc-time-limit`) | 60 s | corpus shaders compile in-process, in milliseconds |
//! | DXC worker address space, same shaders (`--dxc-memory-limit`) | 4 GiB | corpus shaders compile in-process |
//!
//! Containers (archives, compressed files; see `crate::scan::containers` and docs/containers.md)
//! have their own caps, so that a zip / Yaz0 / zlib bomb or a hostile directory costs one error
//! line naming the container, the member and the cap:
//!
//! | cap | value |
//! |---|---|
//! | decompressed bytes per member ([`MAX_MEMBER_BYTES`]) | 256 MiB |
//! | decompressed bytes per outermost file, all members and levels | 512 × the file's size ([`MAX_RATIO`]), at least [`RATIO_FLOOR`], at most [`MAX_ARCHIVE_BYTES`] (1 GiB) |
//! | containers nested in containers ([`MAX_CONTAINER_DEPTH`]) | 8 |
//! | LZMA dictionary of an xz block ([`MAX_LZMA_DICTIONARY_BYTES`]) | 64 MiB |
//! | members per container ([`MAX_MEMBERS`]) | 65 536 |
//! | shaders (DVLEs) per DVLB ([`MAX_SHADERS_PER_DVLB`]) | 256 |
//! | decompressed / compressed size of one member ([`MAX_RATIO`]) | 512 (members under [`RATIO_FLOOR`] exempt) |
//!
//! The instruction-count cap is the microcode cap: all four ISAs have fixed-width instruction
//! slots (Xenos 12 bytes, Latte 8, PICA 4, AGAL 24: at most 87 381, 131 072, 262 144 and
//! 43 690 slots), and AGAL's decoder applies Flash's own per-version token limits first.
//! Loop and call nesting are bounded by the ISAs themselves (Xenos: loop depth 4, checked by
//! its lowering; Latte: the CF stack; PICA: calls are inlined with a depth cap in its
//! lowering) and, after lowering, by [`MAX_NESTING`] (checked by `ir::validate`, which every
//! lowered module passes before the HLSL writer).

/// The most microcode one shader may have (the shader-size and instruction-count cap).
pub const MAX_MICROCODE_BYTES: usize = 1 << 20;

// The IR caps are checked by the IR validator, with the rest of the IR's contract.
pub use crate::ir::validate::{measure, MAX_IR_STATEMENTS, MAX_NESTING};

/// A shader whose HLSL is larger fails instead of being handed to DXC (the default of
/// `BuildOptions::max_hlsl_bytes`): a decoded program a thousand times larger than the largest
/// real one is a decoding accident, and DXC's time on it is unbounded in practice.
pub const MAX_HLSL_BYTES: usize = 16 << 20;

/// Per-compilation limits of DXC in a worker process: DXC's time and memory grow
/// steeply with some programs (a 16 KB PICA program with 2 000 nested jumps: 710 KB of HLSL, 48 s
/// and 865 MB), and a library cannot be stopped inside the process that called it. A shader whose
/// HLSL is larger than [`DXC_ISOLATE_HLSL_BYTES`] (every shader with `--isolate-dxc`) is compiled
/// in a worker process (`crate::dxc_worker`) whose CPU time per compilation and address space
/// are limited by the kernel (`RLIMIT_CPU`, `RLIMIT_AS`); past a limit that shader fails, naming
/// it, and the build goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DxcLimits {
    /// CPU seconds per compilation (`--dxc-time-limit`).
    pub cpu_seconds: u64,
    /// Address space of the worker process in MiB (`--dxc-memory-limit`).
    pub memory_mib: u64,
}

impl Default for DxcLimits {
    fn default() -> Self {
        DxcLimits { cpu_seconds: 60, memory_mib: 4096 }
    }
}

/// HLSL larger than this is compiled in a DXC worker under [`DxcLimits`] (`--dxc-isolate-above`).
/// The largest corpus shader has 75 KB; DXC takes seconds per compilation above this size
/// (180 KB: about 1.5 s, 360 KB: 5 s, 710 KB: 24 s, measured on PICA programs of nested jumps).
pub const DXC_ISOLATE_HLSL_BYTES: usize = 128 << 10;

/// HLSL larger than this is compiled to SPIR-V with DXC's `-O0` (`--spirv-unoptimized-above`):
/// SPIRV-Tools' optimizer, which every other DXC level runs with the same recipe, takes about
/// 3 ms per statement of long straight-line code (a generated 100 000-instruction GX2 shader,
/// 2.9 MB of HLSL: 81 s of CPU, past the default time limit; at `-O0` 8 s for a 3.2× larger,
/// valid module the driver optimizes when it loads it). The largest corpus shader has 42 KB.
pub const SPIRV_UNOPTIMIZED_HLSL_BYTES: usize = 1 << 20;

/// The most bytes one container member may decompress to.
pub const MAX_MEMBER_BYTES: u64 = 256 << 20;

/// The most bytes all members of one file (every nesting level together) may decompress to;
/// a smaller file gets [`MAX_RATIO`] times its size (at least [`RATIO_FLOOR`]), see
/// `scan::containers::Budget::for_file`.
pub const MAX_ARCHIVE_BYTES: u64 = 1 << 30;

/// The largest LZMA dictionary an xz block may ask for (xz's largest preset, `-9`, uses 64 MiB;
/// the dictionary is allocated before the first byte is decoded and filled as output passes
/// through it, so it adds to the member's output in memory).
pub const MAX_LZMA_DICTIONARY_BYTES: u64 = 64 << 20;

/// How deep containers may nest (`a.zip!b.szs!c.sarc!...`); a file is depth 0.
pub const MAX_CONTAINER_DEPTH: usize = 8;

/// The most members one container may list.
pub const MAX_MEMBERS: usize = 65_536;

/// The most shaders one DVLB may hold (DVLEs). Each DVLE is a whole translation and compilation,
/// so a 4 KB file listing 1 000 of them would cost minutes of DXC; real DVLBs hold
/// a few (corpus maximum 2).
pub const MAX_SHADERS_PER_DVLB: usize = 256;

/// The highest decompressed / compressed size ratio of one member. Shader archives compress a
/// few times (microcode and tables are dense); only long runs of one byte compress by hundreds:
/// deflate reaches about 1 030x on zeros, zstd and LZMA far more. Above this a member is treated
/// as a bomb.
pub const MAX_RATIO: u64 = 512;

/// Members that decompress to fewer bytes than this are not ratio-checked (a 10-byte zlib stream
/// of a 64 KiB zero buffer is harmless).
pub const RATIO_FLOOR: u64 = 1 << 20;
