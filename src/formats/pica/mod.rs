//! 3DS PICA200 shaders in SHBIN (DVLB) files: container, decoding, disassembly, lowering to IR.

pub mod decode;
pub mod disasm;
pub mod dvlb;
pub mod error;
pub mod lower;

use super::container_fault::ContainerFault;
use super::{ShaderEntry, ShaderError, Translation};

/// One entry per DVLE, in offset-table order (`index` = DVLE index); stage from the DVLE type
/// byte (0 vertex, 1 geometry).
///
/// **Key**: `xxh3_64_with_seed(dvlb_bytes, dvle_index as u64)` over the whole DVLB as detected
/// (see [`dvlb::key`]).
pub fn entries(bytes: &[u8]) -> Result<Vec<ShaderEntry>, ShaderError> {
    let d = dvlb::parse(bytes)?;
    let container = &bytes[..d.len];
    d.dvles
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let stage = e.stage().ok_or_else(|| {
                error::container(e.offset as u64 + 6, ContainerFault::BadValue(format!("DVLE {i}: unknown shader type {}", e.shader_type)))
            })?;
            Ok(ShaderEntry { stage, index: i as u32, key: dvlb::key(container, i as u32), name: None })
        })
        .collect()
}

/// Disassembly of the whole DVLB (all DVLEs share the code blob); `index` is checked.
pub fn disasm(bytes: &[u8], index: u32) -> Result<String, ShaderError> {
    let p = dvlb::parse_program(bytes)?;
    if index as usize >= p.dvles.len() {
        return Err(error::no_such_shader(format!("DVLE index {index} out of range ({} DVLEs)", p.dvles.len())));
    }
    disasm::disassemble(&p)
}

/// Translates DVLE `index` to IR. Metadata: the DVLE's constants (see [`lower::lower`]).
pub fn translate(bytes: &[u8], index: u32) -> Result<Translation, ShaderError> {
    let p = dvlb::parse_program(bytes)?;
    let (module, meta) = lower::lower(&p, index)?;
    Ok(Translation { module, meta, spec_constants_mask: 0 })
}
