//! Shader families: container parsing, decoding, disassembly, lowering to IR and reference
//! interpreters. One folder per family; this module holds what they share.

pub mod agal;
pub mod container_fault;
pub mod cube;
pub mod error;
pub mod gx2;
pub mod opcodes;
pub mod pica;
pub mod xenos;

pub use crate::ir::{Family, Stage};

use serde::{Deserialize, Serialize};

/// The five container kinds shrec recognises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContainerKind {
    /// Xbox 360 shader container (`0x102A11xx`).
    Xenos,
    /// Wii U GFD file (`Gfx2`) holding GX2 shaders.
    Gfd,
    /// Wii U AGL shader archive (`SHARCFB`).
    Sharcfb,
    /// 3DS shader binary (`DVLB`).
    Dvlb,
    /// Flash Stage3D AGAL bytecode.
    Agal,
}

impl ContainerKind {
    pub fn family(self) -> Family {
        match self {
            ContainerKind::Xenos => Family::Xenos,
            ContainerKind::Gfd | ContainerKind::Sharcfb => Family::Gx2,
            ContainerKind::Dvlb => Family::Pica,
            ContainerKind::Agal => Family::Agal,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            ContainerKind::Xenos => "xenos",
            ContainerKind::Gfd => "gfd",
            ContainerKind::Sharcfb => "sharcfb",
            ContainerKind::Dvlb => "dvlb",
            ContainerKind::Agal => "agal",
        }
    }
}

/// One shader inside a container (a container may hold several: GFD, SHARCFB, DVLB).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShaderEntry {
    pub stage: Stage,
    /// Position of the shader inside its container (0 for single-shader containers).
    pub index: u32,
    /// Cache key: what the game's runtime computes to find this shader (see docs/cache-abi.md, "Keys").
    pub key: u64,
    /// A name from the container when it has one (SHARCFB program name, ...).
    pub name: Option<String>,
}

pub use error::ShaderError;

/// The families with a generated opcode table, with their rows (`docs/opcodes/<family>.md`). Kept
/// here, in the parent of the families, so that `opcodes` (the row type and the renderer) uses
/// no family: each family's decoder uses `opcodes`, never the other way round.
pub fn opcode_tables() -> Vec<(&'static str, Vec<opcodes::Row>)> {
    vec![
        ("gx2", gx2::isa::opcode_rows()),
        ("pica", pica::decode::opcode_rows()),
        ("agal", agal::decode::opcode_rows()),
        ("xenos", xenos::ucode::opcode_rows()),
    ]
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
    /// Xenos: the XenosRecomp build to reproduce (`--profile`; generic by default).
    pub xenos_profile: xenos::lower::Profile,
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
        ContainerKind::Xenos => xenos::translate_with(bytes, &xenos::lower::LowerOptions { profile: opts.xenos_profile }),
        ContainerKind::Dvlb => pica::translate(bytes, index),
        ContainerKind::Gfd | ContainerKind::Sharcfb => gx2::translate(kind, bytes, index),
    }?;
    // The contract between front ends and back ends: the writer may index what this checks.
    crate::ir::validate(&t.module)?;
    Ok(t)
}

/// Disassembles what can be of shader `index` of a container, with the error when the shader is
/// invalid: AGAL lists every token up to the first bad one; the other families list a program
/// only when all of it decodes.
pub fn disasm_prefix(kind: ContainerKind, bytes: &[u8], index: u32, opts: &TranslateOptions) -> (Option<String>, Option<ShaderError>) {
    match kind {
        ContainerKind::Agal => agal::disasm_prefix(bytes, opts),
        _ => match disasm(kind, bytes, index, opts) {
            Ok(text) => (Some(text), None),
            Err(e) => (None, Some(e)),
        },
    }
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

/// Refuses a shader whose microcode (starting at container `offset`) is larger than
/// [`crate::limits::MAX_MICROCODE_BYTES`]. Call it before decoding.
pub fn check_microcode(bytes: usize, offset: Option<u64>) -> Result<(), ShaderError> {
    let cap = crate::limits::MAX_MICROCODE_BYTES;
    if bytes > cap {
        return Err(ShaderError::MicrocodeCap { offset, bytes, limit: cap });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_microcode;
    use crate::limits::MAX_MICROCODE_BYTES;

    #[test]
    fn microcode_cap_names_the_limit_and_offset() {
        assert!(check_microcode(MAX_MICROCODE_BYTES, None).is_ok());
        let e = check_microcode(MAX_MICROCODE_BYTES + 1, Some(0x40)).unwrap_err();
        assert_eq!(e.offset(), Some(0x40));
        assert!(
            matches!(e, crate::formats::ShaderError::MicrocodeCap { bytes, limit: MAX_MICROCODE_BYTES, .. } if bytes == MAX_MICROCODE_BYTES + 1),
            "{e:?}"
        );
    }
}
