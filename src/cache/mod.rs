//! The embeddable cache (`.cpp` / `.rs` writers) and the incremental on-disk cache.
//!
//! - [`cpp::write`]: XenosRecomp's `.cpp` (UnleashedRecomp's `shader_cache.h` ABI) plus a
//!   matching header with shrec's extras.
//! - [`rust::write`]: a dependency-free Rust module plus its compressed blobs.
//! - [`incremental::Store`]: per-shader compiled artifacts on disk, reused across runs.
//! - [`atomic`]: temp-file + fsync + rename writes used by all of the above.
//!
//! Both writers share one layout (`layout`): entries sorted by key, SPIR-V encoded per
//! [`SpirvEncoding`], the blobs of a backend concatenated in key order and compressed as one
//! zstd frame; offsets and sizes index the *decompressed* concatenation. With
//! [`CacheLayout::PerShader`] each shader's blob is its own zstd frame instead (optionally with
//! a trained dictionary per backend), the frames concatenated in key order, and every row also
//! carries its frame's offset and size in the compressed blob, so that a runtime decompresses
//! only the shaders it uses.

pub mod atomic;
pub mod cpp;
pub mod incremental;
mod layout;
pub mod rust;

use std::path::PathBuf;

use crate::formats::{Family, Stage};

pub use layout::{compare_layouts, BackendSize, CacheSizes, LayoutComparison, LayoutCost, Packed, SinglePacker};

/// One compiled shader as the build hands it to the writers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheEntry {
    /// Runtime lookup key (see docs/cache-abi.md, "Keys").
    pub key: u64,
    pub family: Family,
    pub stage: Stage,
    /// DXIL container with its hash filled, when the DXIL target was built.
    pub dxil: Option<Vec<u8>>,
    /// Raw SPIR-V (little-endian words), when the SPIR-V target was built. The writers encode it
    /// (SMOL-V or raw) themselves.
    pub spirv: Option<Vec<u8>>,
    /// XenosRecomp's specialization-constant mask (0 for families without spec constants).
    pub spec_constants_mask: u32,
    /// Family-specific metadata words (AGAL: per sampler slot `slot, word_lo, word_hi`).
    pub meta: Vec<u32>,
}

/// `ShrecEntryInfo::flags` / `Entry::flags` bit: the entry's SPIR-V declares
/// SPV_KHR_float_controls' `SignedZeroInfNanPreserve` (docs/cache-abi.md).
pub const ENTRY_SPIRV_FLOAT_CONTROLS: u32 = 1;

/// The `ENTRY_*` bits of an entry, read from its SPIR-V itself (so that they say what the module
/// needs whichever back end or option wrote it).
pub(crate) fn entry_flags(e: &CacheEntry) -> u32 {
    match &e.spirv {
        Some(s) if declares_signed_zero_inf_nan_preserve(s) => ENTRY_SPIRV_FLOAT_CONTROLS,
        _ => 0,
    }
}

/// Whether a SPIR-V module (little-endian words) has `OpExecutionMode … SignedZeroInfNanPreserve`
/// (opcode 16, mode 4461: SPIR-V specification, "Execution Mode"; SPV_KHR_float_controls).
/// A malformed module has none.
fn declares_signed_zero_inf_nan_preserve(spirv: &[u8]) -> bool {
    const OP_EXECUTION_MODE: u32 = 16;
    const SIGNED_ZERO_INF_NAN_PRESERVE: u32 = 4461;
    use crate::pack::spirv_words::{instructions, words};
    let Some(words) = words(spirv) else { return false };
    instructions(&words)
        .is_ok_and(|insts| insts.iter().any(|(_, inst)| inst[0] & 0xFFFF == OP_EXECUTION_MODE && inst.get(2) == Some(&SIGNED_ZERO_INF_NAN_PRESERVE)))
}

/// How SPIR-V is stored in the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SpirvEncoding {
    /// SMOL-V with debug info stripped, as XenosRecomp (UnleashedRecomp decodes it).
    #[default]
    Smolv,
    /// Plain SPIR-V words.
    Raw,
}

impl SpirvEncoding {
    /// Value of `g_shrecSpirvEncoding` / `SPIRV_ENCODING` in the generated files.
    pub fn abi_id(self) -> u32 {
        match self {
            SpirvEncoding::Smolv => 0,
            SpirvEncoding::Raw => 1,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SpirvEncoding::Smolv => "smol-v",
            SpirvEncoding::Raw => "raw",
        }
    }
}

/// How each backend's blobs are compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
pub enum CacheLayout {
    /// One zstd frame per backend (XenosRecomp's layout; UnleashedRecomp decompresses it whole).
    #[default]
    Single,
    /// One zstd frame per shader, frames concatenated in key order (the concatenation still
    /// decompresses, without a dictionary, to exactly the single layout's decompressed blob).
    PerShader,
}

impl CacheLayout {
    /// Value of `g_shrecCacheLayout` / `LAYOUT` in the generated files.
    pub fn abi_id(self) -> u32 {
        match self {
            CacheLayout::Single => 0,
            CacheLayout::PerShader => 1,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CacheLayout::Single => "single",
            CacheLayout::PerShader => "per-shader",
        }
    }
}

/// Default `--zstd-dict-size`: big enough for the common prologue of DXIL containers and SPIR-V
/// modules, small next to the blobs it shortens.
pub const DEFAULT_DICT_SIZE: usize = 8 * 1024;

/// The zstd level a build uses unless told otherwise. Compression has to stay small next to DXC
/// (docs/performance.md): on the benchmark's 21.5 MB of DXIL + SMOL-V, level 12 with a 16 MiB window
/// (`layout`'s streamed frames) costs 1.4 s of CPU for 5.39 MB; 18 costs 8–10 s for 4.95 MB
/// (8% smaller), 19 14 s for 4.92 MB. Release builds that want the last bytes pass
/// `--zstd-level 19` (or XenosRecomp's 22).
pub const DEFAULT_ZSTD_LEVEL: i32 = 12;

/// Options shared by the `.cpp` and `.rs` writers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    /// zstd level for both blobs ([`DEFAULT_ZSTD_LEVEL`] unless asked).
    pub zstd_level: i32,
    /// How SPIR-V is stored.
    pub spirv_encoding: SpirvEncoding,
    /// One frame per backend, or one per shader.
    pub layout: CacheLayout,
    /// [`CacheLayout::PerShader`] only: train a zstd dictionary of at most this many bytes per
    /// backend from the shaders themselves and compress every frame with it.
    pub zstd_dict: Option<usize>,
    /// Which symbols a `.cpp` cache defines (`--abi`).
    pub abi: CppAbi,
}

/// The symbol set of a `.cpp` cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CppAbi {
    /// UnleashedRecomp's eight symbols plus shrec's extras, declared by the `<stem>.h` shrec
    /// writes next to the `.cpp`.
    #[default]
    Shrec,
    /// Exactly XenosRecomp's symbols, and no header: the `.cpp` includes the project's own
    /// `<stem>.h` (UnleashedRecomp keeps `shader_cache.h` in git). Single-frame layout only.
    /// The layout of XenosRecomp's main branch (990d03b, the revision UnleashedRecomp's main
    /// branch builds): six values per entry, DXIL entry point `main`.
    XenosRecomp,
    /// As [`CppAbi::XenosRecomp`], in the layout of XenosRecomp's Metal (MSL) branch, the one
    /// UnleashedRecomp's Metal port reads: per entry hash, DXIL, SPIR-V and AIR offset/size,
    /// the mask and a `char filename[256]`; the AIR symbols; DXIL and SPIR-V entry point
    /// `shaderMain`. shrec has no Metal backend: every AIR range is 0 / 0 and the AIR blob empty.
    XenosRecompMetal,
}

impl CppAbi {
    /// The `--abi` value that selects this ABI.
    pub fn option_name(self) -> &'static str {
        match self {
            CppAbi::Shrec => "shrec",
            CppAbi::XenosRecomp => "xenosrecomp",
            CppAbi::XenosRecompMetal => "xenosrecomp-metal",
        }
    }

    /// Whether the `.cpp` defines XenosRecomp's symbols only, for the project's own header.
    pub fn is_xenosrecomp(self) -> bool {
        matches!(self, CppAbi::XenosRecomp | CppAbi::XenosRecompMetal)
    }

    /// Name of the shader function DXC compiles (and the runtime's DXIL linker links):
    /// XenosRecomp's Metal branch passes `-E shaderMain`, its main branch DXC's default `main`.
    pub fn entry_point(self) -> &'static str {
        match self {
            CppAbi::XenosRecompMetal => "shaderMain",
            CppAbi::Shrec | CppAbi::XenosRecomp => "main",
        }
    }
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            zstd_level: DEFAULT_ZSTD_LEVEL,
            spirv_encoding: SpirvEncoding::Smolv,
            layout: CacheLayout::Single,
            zstd_dict: None,
            abi: CppAbi::Shrec,
        }
    }
}

/// Why a cache file could not be written. Every variant names the file concerned; when a
/// writer fails, no output file has been replaced.
#[derive(Debug, thiserror::Error)]
pub enum CacheWriteError {
    #[error("{path}: {source}", path = .path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {reason}", path = .path.display())]
    Unsupported { path: PathBuf, reason: &'static str },
    #[error("{path}: cannot encode the SPIR-V of shader 0x{key:016X}: {reason}", path = .path.display())]
    SpirvEncoding { path: PathBuf, key: u64, reason: String },
    #[error("{path}: zstd compression of the {backend} blob failed: {source}", path = .path.display())]
    Compress { path: PathBuf, backend: &'static str, source: std::io::Error },
    #[error("{path}: shader key 0x{key:016X} appears twice with different contents", path = .path.display())]
    DuplicateKey { path: PathBuf, key: u64 },
    #[error("{path}: the {backend} blob would be {size} bytes; offsets are 32-bit (limit 4 GiB)", path = .path.display())]
    TooLarge { path: PathBuf, backend: &'static str, size: u64 },
    #[error("{path}: {reason}", path = .path.display())]
    BadPath { path: PathBuf, reason: &'static str },
}

/// Encodes one shader's SPIR-V as the cache stores it.
fn encode_spirv(spirv: &[u8], encoding: SpirvEncoding) -> Result<Vec<u8>, String> {
    match encoding {
        // Debug info stripped, as XenosRecomp does (kEncodeFlagStripDebugInfo).
        SpirvEncoding::Smolv => crate::pack::smolv::encode(spirv, true).map_err(|e| e.to_string()),
        SpirvEncoding::Raw => Ok(spirv.to_vec()),
    }
}
