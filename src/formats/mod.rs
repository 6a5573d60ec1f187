//! Shader families: container parsing, decoding, disassembly, lowering to IR and reference
//! interpreters. One folder per family; this module holds what they share.

pub mod agal;
pub mod cube;
pub mod gx2;
pub mod pica;
pub mod xenos;

use serde::Serialize;

/// The four console/runtime families shrec reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    Xenos,
    Gx2,
    Pica,
    Agal,
}

impl Family {
    pub const ALL: [Family; 4] = [Family::Xenos, Family::Gx2, Family::Pica, Family::Agal];

    pub fn name(self) -> &'static str {
        match self {
            Family::Xenos => "xenos",
            Family::Gx2 => "gx2",
            Family::Pica => "pica",
            Family::Agal => "agal",
        }
    }

    /// Numeric id stored in cache entries (stable ABI: never renumber).
    pub fn abi_id(self) -> u32 {
        match self {
            Family::Xenos => 0,
            Family::Gx2 => 1,
            Family::Pica => 2,
            Family::Agal => 3,
        }
    }
}

impl std::fmt::Display for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Pipeline stage of one shader. Pixel and fragment are the same stage; the family decides
/// which word is printed (AGAL says "fragment", the consoles say "pixel").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    Vertex,
    Pixel,
    Geometry,
}

impl Stage {
    /// The word the family's own documentation uses for this stage.
    pub fn name_in(self, family: Family) -> &'static str {
        match (self, family) {
            (Stage::Vertex, _) => "vertex",
            (Stage::Pixel, Family::Agal) => "fragment",
            (Stage::Pixel, _) => "pixel",
            (Stage::Geometry, _) => "geometry",
        }
    }

    /// Numeric id stored in cache entries (stable ABI: never renumber).
    pub fn abi_id(self) -> u32 {
        match self {
            Stage::Vertex => 0,
            Stage::Pixel => 1,
            Stage::Geometry => 2,
        }
    }

    /// DXC target profile prefix ("vs", "ps", "gs").
    pub fn profile_prefix(self) -> &'static str {
        match self {
            Stage::Vertex => "vs",
            Stage::Pixel => "ps",
            Stage::Geometry => "gs",
        }
    }
}

use crate::detect::ContainerKind;

/// One shader inside a container (a container may hold several: GFD, SHARCFB, DVLB).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShaderEntry {
    pub stage: Stage,
    /// Position of the shader inside its container (0 for single-shader containers).
    pub index: u32,
    /// Cache key: what the game's runtime computes to find this shader (see README, "Keys").
    pub key: u64,
    /// A name from the container when it has one (SHARCFB program name, ...).
    pub name: Option<String>,
}

/// Why one shader could not be parsed or translated. `offset` is relative to the start of the
/// container; the report adds the file path and the container's offset in the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct ShaderError {
    pub offset: Option<u64>,
    pub reason: String,
}

impl ShaderError {
    pub fn new(reason: impl Into<String>) -> Self {
        ShaderError { offset: None, reason: reason.into() }
    }
    pub fn at(offset: u64, reason: impl Into<String>) -> Self {
        ShaderError { offset: Some(offset), reason: reason.into() }
    }
}

/// Lists the shaders of a container found by [`crate::detect`]. `bytes` is exactly the
/// container (`Candidate::offset .. offset + len`).
pub fn entries(kind: ContainerKind, bytes: &[u8]) -> Result<Vec<ShaderEntry>, ShaderError> {
    match kind {
        ContainerKind::Xenos => xenos::entries(bytes),
        ContainerKind::Gfd => gx2::gfd::entries(bytes),
        ContainerKind::Sharcfb => gx2::sharc::entries(bytes),
        ContainerKind::Dvlb => pica::entries(bytes),
        ContainerKind::Agal => agal::entries(bytes),
    }
}

/// Options that affect translation (and so are part of the incremental-cache key).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TranslateOptions {
    /// Accept AGAL version 4 ("enhanced" profile, vertex texture fetch `tld`).
    pub agal4: bool,
    /// AGAL `ifg` as strict `>` instead of `>=`.
    pub agal_ifg_strict: bool,
}

/// A translated shader: the IR plus what the cache entry carries besides the code.
#[derive(Clone, Debug)]
pub struct Translation {
    pub module: crate::ir::Module,
    /// Family-specific metadata words (see `cache::CacheEntry::meta`).
    pub meta: Vec<u32>,
    pub spec_constants_mask: u32,
}

/// Whether this version of shrec translates shaders of this container kind (detection, keys
/// and disassembly may exist without it).
pub fn has_translator(kind: ContainerKind) -> bool {
    // Exhaustive on purpose: a new container kind must say whether it translates. Shaders of a
    // kind without a translator are reported as skipped, not failed.
    match kind {
        ContainerKind::Agal | ContainerKind::Xenos | ContainerKind::Dvlb | ContainerKind::Gfd | ContainerKind::Sharcfb => true,
    }
}

/// Translates shader `index` of a container.
pub fn translate(kind: ContainerKind, bytes: &[u8], index: u32, opts: &TranslateOptions) -> Result<Translation, ShaderError> {
    let t = match kind {
        ContainerKind::Agal => agal::translate(bytes, opts),
        ContainerKind::Xenos => xenos::translate(bytes),
        ContainerKind::Dvlb => pica::translate(bytes, index),
        ContainerKind::Gfd | ContainerKind::Sharcfb => gx2::translate(kind, bytes, index),
    }?;
    crate::limits::check_module(&t.module)?;
    Ok(t)
}

/// Disassembles shader `index` of a container.
pub fn disasm(kind: ContainerKind, bytes: &[u8], index: u32, opts: &TranslateOptions) -> Result<String, ShaderError> {
    match kind {
        ContainerKind::Agal => agal::disasm(bytes, opts),
        ContainerKind::Xenos => xenos::disasm(bytes),
        ContainerKind::Dvlb => pica::disasm(bytes, index),
        ContainerKind::Gfd | ContainerKind::Sharcfb => gx2::disasm(kind, bytes, index),
    }
}
