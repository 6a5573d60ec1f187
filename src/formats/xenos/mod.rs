//! Xbox 360 Xenos shaders: container parsing, microcode decoding, disassembly, lowering to IR.

pub mod container;
pub mod disasm;
pub mod error;
pub mod lower;
pub mod memexport;
pub mod ucode;

use super::{ShaderEntry, ShaderError, Stage, Translation};

/// One entry per container: stage from flags bit 0 (1 vertex, 0 pixel).
///
/// **Key**: XXH3-64 (seed 0) of the container bytes `[0, virtualSize + physicalSize)`,
/// bit-identical to XenosRecomp's cache key and to what UnleashedRecomp hashes at run time
/// (see [`container::key`]).
///
/// `bytes` must start at the container; bytes after `virtualSize + physicalSize` are ignored.
pub fn entries(bytes: &[u8]) -> Result<Vec<ShaderEntry>, ShaderError> {
    let info = container::check(bytes)?;
    let stage = if info.header.is_vertex() { Stage::Vertex } else { Stage::Pixel };
    Ok(vec![ShaderEntry { stage, index: 0, key: container::key(&bytes[..info.size]), name: None }])
}

/// Disassembles a container in the style of Microsoft's listings.
pub fn disasm(bytes: &[u8]) -> Result<String, ShaderError> {
    let c = container::parse(bytes)?;
    crate::formats::check_microcode(c.microcode.len() * 4, Some(c.info.microcode_offset as u64))?;
    let p = ucode::decode(&c.microcode).map_err(|e| e.in_container(c.info.microcode_offset as u64))?;
    Ok(disasm::disassemble(&c, &p))
}

/// Translates a container to IR (see [`lower`]), generic profile.
pub fn translate(bytes: &[u8]) -> Result<Translation, ShaderError> {
    translate_with(bytes, &lower::LowerOptions::default())
}

/// Translates a container to IR with lowering options (`--profile`, see [`lower::Profile`]).
pub fn translate_with(bytes: &[u8], opts: &lower::LowerOptions) -> Result<Translation, ShaderError> {
    let c = container::parse(bytes)?;
    crate::formats::check_microcode(c.microcode.len() * 4, Some(c.info.microcode_offset as u64))?;
    let p = ucode::decode(&c.microcode).map_err(|e| e.in_container(c.info.microcode_offset as u64))?;
    let l = lower::lower_with(&c, &p, opts)?;
    Ok(Translation { module: l.module, meta: Vec::new(), spec_constants_mask: l.spec_constants_mask })
}
