//! Wii U GX2 shaders in GFD (`.gsh`) and SHARCFB containers: container parsing, the GX2 shader
//! structs, Latte microcode decoding, disassembly (latte-assembler syntax) and lowering to IR.

pub mod cf_stack;
pub mod disasm;
pub mod error;
pub mod gfd;
pub mod isa;
pub mod lower;
pub mod ring;
pub mod scratch;
pub mod shader_struct;
pub mod sharc;
pub mod stream;

use crate::formats::container_fault::ContainerFault;
use crate::formats::ContainerKind;
use crate::formats::{ShaderError, Translation};
use shader_struct::Gx2Shader;
use std::fmt::Write;

/// Fully decodes shader `index` of a GFD or SHARCFB container.
pub fn load(kind: ContainerKind, bytes: &[u8], index: u32) -> Result<Gx2Shader, ShaderError> {
    match kind {
        ContainerKind::Gfd => gfd::load(bytes, index),
        ContainerKind::Sharcfb => sharc::load(bytes, index),
        other => Err(error::Gx2Error::Container {
            offset: None,
            fault: ContainerFault::WrongContainer(format!("{} is not a GX2 container", other.name())),
        }
        .into()),
    }
    .and_then(|s| crate::formats::check_microcode(s.program.len(), None).map(|()| s))
}

/// Disassembly: the GX2 header fields as `; $FIELD = value` comments (the latte-assembler
/// convention), then the program.
pub fn disasm(kind: ContainerKind, bytes: &[u8], index: u32) -> Result<String, ShaderError> {
    let s = load(kind, bytes, index)?;
    let p = isa::decode(&s.program)?;
    let mut out = String::new();
    let mode = ["UniformRegister", "UniformBlock", "GeometryShader", "ComputeShader"].get(s.mode() as usize).copied().unwrap_or("?");
    let _ = writeln!(out, "; $MODE = \"{mode}\"");
    let _ = writeln!(out, "; $NUM_GPRS = {}", s.num_gprs());
    for (i, b) in s.uniform_blocks.iter().enumerate() {
        let _ = writeln!(out, "; $UNIFORM_BLOCKS[{i}] = \"{}\" offset {} size {}", b.name, b.offset, b.size);
    }
    for (i, v) in s.uniform_vars.iter().enumerate() {
        let _ = writeln!(out, "; $UNIFORM_VARS[{i}] = \"{}\" type {} count {} offset {} block {}", v.name, v.ty, v.count, v.offset, v.block);
    }
    for (i, v) in s.sampler_vars.iter().enumerate() {
        let _ = writeln!(out, "; $SAMPLER_VARS[{i}] = \"{}\" type {} location {}", v.name, v.ty, v.location);
    }
    for (i, v) in s.attrib_vars.iter().enumerate() {
        let _ = writeln!(out, "; $ATTRIB_VARS[{i}] = \"{}\" type {} count {} location {}", v.name, v.ty, v.count, v.location);
    }
    out.push('\n');
    out.push_str(&disasm::disassemble(&p));
    if !s.copy_program.is_empty() {
        let c = isa::decode(&s.copy_program).map_err(|e| error::Gx2Error::CopyProgram(Box::new(e)))?;
        out.push_str("\n; copy program (run as the hardware VS for every emitted vertex)\n");
        out.push_str(&disasm::disassemble(&c));
    }
    Ok(out)
}

/// Translates shader `index` of a GFD or SHARCFB container to IR.
pub fn translate(kind: ContainerKind, bytes: &[u8], index: u32) -> Result<Translation, ShaderError> {
    let s = load(kind, bytes, index)?;
    let module = lower::lower(&s)?;
    let meta = lower::meta(&s, &module);
    Ok(Translation { module, meta, spec_constants_mask: 0 })
}
