//! The HLSL text of [`ResourceAbi::XenosRecomp`](crate::ir::ResourceAbi): the writer's back-end
//! option for Xenos modules (the front end states facts in `XenosRecompAbi`; the text is
//! written here).
//!
//! * SPIR-V: float constants, descriptor indices and shared constants are read with
//!   `vk::RawBufferLoad` from the buffer device addresses of `g_PushConstants`
//!   (XenosRecomp's shader_common.h); DXIL: `VertexShaderConstants` (b0, space4) /
//!   `PixelShaderConstants` (b1, space4) with register `c<n>` at packoffset `c<n>`, and
//!   `SharedConstants` (b2, space4) with `NAME_Texture{2D,3D,Cube}DescriptorIndex` at packoffset
//!   c<4·dim + slot/4>.<slot%4>, `NAME_SamplerDescriptorIndex` at c<12 + slot/4>.<slot%4> and
//!   `DEFINE_SHARED_CONSTANTS()`.
//! * A read of float constant i at a fixed index is the local `shrec_c<i>`, loaded once at the
//!   top of the body (`SHREC_XENOS_CONSTANT(i)`, see [`hoisted`]; 0 at or past the stage's
//!   register count, as XenosRecomp); a read of the shared state at a
//!   fixed index is the expression of that entry (`XenosRecompAbi` documents them). Only a
//!   dynamic index goes through a function with branches (`shrec_xenos_c`,
//!   `shrec_xenos_state`), defined only when the body uses it: an accessor object with an
//!   `operator[]` cost DXC ≈ 1.9 ms per pixel shader to inline and fold (docs/performance.md).

use crate::ir::{Module, Stage, XenosRecompAbi};

/// What a read of an entry that is always 0 is written as.
const ZERO: &str = "((float4)0.0)";

/// Accessors the body used, so that only those are defined.
#[derive(Clone, Debug, Default)]
pub(super) struct Used {
    /// Float constants read at fixed indices (loaded once, see [`hoisted`]).
    pub constants: std::collections::BTreeSet<u32>,
    pub dynamic_constant: bool,
    pub dynamic_state: bool,
    pub loop_constant: bool,
}

/// `#define` lines written before the prelude.
pub(super) fn defines(x: &XenosRecompAbi) -> Vec<&'static str> {
    let mut d = vec!["#define SHREC_XENOS 1"];
    if x.unleashed {
        // what XenosRecomp passes to DXC in this mode (its shader_common.h then defines the
        // UnleashedRecomp spec-constant bits)
        d.push("#define UNLEASHED_RECOMP 1");
    }
    if x.memexport_formats.is_some() {
        d.push("#define SHREC_XENOS_MEMEXPORT 1");
    }
    d
}

/// Lines written before `main`: the entry-point attribute DXIL's library target needs.
pub(super) fn entry_attributes(stage: Stage) -> [String; 3] {
    ["#ifndef __spirv__".into(), format!("[shader(\"{}\")]", if stage == Stage::Vertex { "vertex" } else { "pixel" }), "#endif".into()]
}

fn stage_name(m: &Module) -> (&'static str, u32) {
    if m.stage == Stage::Vertex {
        ("Vertex", 0)
    } else {
        ("Pixel", 1)
    }
}

fn constant_count(m: &Module) -> u32 {
    m.const_buffers.get(XenosRecompAbi::FLOAT_CONSTANTS as usize).map_or(0, |b| b.len)
}

/// Float constant `index` read at a fixed index: the local [`hoisted`] loads.
pub(super) fn constant(m: &Module, index: u32, used: &mut Used) -> String {
    if index < constant_count(m) {
        used.constants.insert(index);
        format!("shrec_c{index}")
    } else {
        ZERO.into()
    }
}

/// Shared-state entry `index` read at a fixed index.
pub(super) fn state(x: &XenosRecompAbi, index: u32, used: &mut Used) -> String {
    type Abi = XenosRecompAbi;
    const UNLEASHED_BITS: u32 = Abi::SPEC_BICUBIC_GI_FILTER | Abi::SPEC_ALPHA_TO_COVERAGE | Abi::SPEC_REVERSE_Z;
    let bit = |name: &str| format!("((g_SpecConstants() & {name}) != 0 ? 1.0 : 0.0)");
    match index {
        Abi::STATE_SHARED => "float4(asfloat(g_Booleans), asfloat(g_SwappedTexcoords), g_HalfPixelOffset)".into(),
        Abi::STATE_ALPHA => "float4(g_AlphaThreshold, 0.0, 0.0, 0.0)".into(),
        Abi::STATE_SPEC if x.spec_constants_mask != 0 => {
            format!("float4({}, {}, 0.0, 0.0)", bit("SPEC_CONSTANT_ALPHA_TEST"), bit("SPEC_CONSTANT_R11G11B10_NORMAL"))
        }
        Abi::STATE_SPEC_UNLEASHED if x.spec_constants_mask & UNLEASHED_BITS != 0 => format!(
            "float4({}, {}, {}, 0.0)",
            bit("SPEC_CONSTANT_BICUBIC_GI_FILTER"),
            bit("SPEC_CONSTANT_ALPHA_TO_COVERAGE"),
            bit("SPEC_CONSTANT_REVERSE_Z")
        ),
        i if x.shared_extension && (Abi::STATE_BOOLS..Abi::STATE_BOOLS + 8).contains(&i) => {
            format!("float4(asfloat(SHREC_XENOS_BOOLS({})), 0.0, 0.0, 0.0)", i - Abi::STATE_BOOLS)
        }
        i if x.shared_extension && (Abi::STATE_LOOPS..Abi::STATE_LEN).contains(&i) => {
            used.loop_constant = true;
            format!("shrec_xenos_loop_constant(SHREC_XENOS_LOOP({}))", i - Abi::STATE_LOOPS)
        }
        _ => ZERO.into(),
    }
}

/// The declarations written after `#include "shader_common.h"`.
pub(super) fn declarations(m: &Module, x: &XenosRecompAbi, used: &Used) -> String {
    const LANES: [char; 4] = ['x', 'y', 'z', 'w'];
    const DIMS: [&str; 3] = ["2D", "3D", "Cube"];
    let (stage_name, reg) = stage_name(m);
    let count = constant_count(m);
    let (bools_at, loops_at) = XenosRecompAbi::extension_words(m.stage);
    let mut d = String::new();
    d.push_str("#ifdef __spirv__\n");
    d.push_str(&format!(
        "#define SHREC_XENOS_CONSTANT(INDEX) vk::RawBufferLoad<float4>(g_PushConstants.{stage_name}ShaderConstants + (INDEX) * 16, 0x10)\n"
    ));
    for (slot, name) in &x.samplers {
        for (j, dim) in DIMS.iter().enumerate() {
            d.push_str(&format!(
                "#define {name}_Texture{dim}DescriptorIndex vk::RawBufferLoad<uint>(g_PushConstants.SharedConstants + {})\n",
                j as u32 * 64 + slot * 4
            ));
        }
        d.push_str(&format!(
            "#define {name}_SamplerDescriptorIndex vk::RawBufferLoad<uint>(g_PushConstants.SharedConstants + {})\n",
            3 * 64 + slot * 4
        ));
    }
    // shrec's extension of SharedConstants (XenosRecomp has no run-time integer constants and
    // only 16 booleans per stage), declared only by shaders that read it.
    if x.shared_extension {
        d.push_str(&format!("#define SHREC_XENOS_BOOLS(W) vk::RawBufferLoad<uint>(g_PushConstants.SharedConstants + {bools_at} + (W) * 4)\n"));
        d.push_str(&format!("#define SHREC_XENOS_LOOP(I) vk::RawBufferLoad<uint>(g_PushConstants.SharedConstants + {loops_at} + (I) * 4)\n"));
    }
    d.push_str("#else\n");
    d.push_str(&format!("cbuffer {stage_name}ShaderConstants : register(b{reg}, space4)\n{{\n"));
    d.push_str(&format!("    float4 shrec_{stage_name}ShaderConstants[{count}] : packoffset(c0);\n}};\n"));
    d.push_str(&format!("#define SHREC_XENOS_CONSTANT(INDEX) shrec_{stage_name}ShaderConstants[INDEX]\n"));
    d.push_str("cbuffer SharedConstants : register(b2, space4)\n{\n");
    for (slot, name) in &x.samplers {
        for (j, dim) in DIMS.iter().enumerate() {
            d.push_str(&format!(
                "    uint {name}_Texture{dim}DescriptorIndex : packoffset(c{}.{});\n",
                j as u32 * 4 + slot / 4,
                LANES[*slot as usize % 4]
            ));
        }
        d.push_str(&format!("    uint {name}_SamplerDescriptorIndex : packoffset(c{}.{});\n", 12 + slot / 4, LANES[*slot as usize % 4]));
    }
    d.push_str("    DEFINE_SHARED_CONSTANTS();\n");
    if x.shared_extension {
        d.push_str("    uint4 shrec_XenosBooleans[4] : packoffset(c18);\n    uint4 shrec_XenosLoops[16] : packoffset(c22);\n");
    }
    d.push_str("};\n");
    if x.shared_extension {
        let (bw, lw) = (bools_at / 4 - 72, loops_at / 4 - 88);
        d.push_str(&format!("#define SHREC_XENOS_BOOLS(W) shrec_XenosBooleans[({bw} + (W)) >> 2][({bw} + (W)) & 3]\n"));
        d.push_str(&format!("#define SHREC_XENOS_LOOP(I) shrec_XenosLoops[({lw} + (I)) >> 2][({lw} + (I)) & 3]\n"));
    }
    d.push_str("#endif\n");
    // Dynamic state reads: not produced by the Xenos lowering today (every state read has a
    // fixed index); written complete so that the ABI reads the same at any index.
    let mut state_fn = String::new();
    let mut loop_constant = used.loop_constant;
    if used.dynamic_state {
        let mut u = Used::default();
        state_fn.push_str("float4 shrec_xenos_state(int index)\n{\n");
        for i in 0..XenosRecompAbi::STATE_LEN {
            let e = state(x, i, &mut u);
            if e != ZERO {
                state_fn.push_str(&format!("    if (index == {i})\n        return {e};\n"));
            }
        }
        state_fn.push_str("    return (float4)0.0;\n}\n");
        loop_constant |= u.loop_constant;
    }
    if loop_constant {
        d.push_str("float4 shrec_xenos_loop_constant(uint v)\n{\n");
        d.push_str("    return float4(float(v & 0xFF), float((v >> 8) & 0xFF), float(int(v << 8) >> 24), 0.0);\n}\n");
    }
    if used.dynamic_constant {
        d.push_str("float4 shrec_xenos_c(int index)\n{\n");
        d.push_str(&format!("    if ((uint)index >= {count}u)\n        return (float4)0.0;\n    return SHREC_XENOS_CONSTANT((uint)index);\n}}\n"));
    }
    d.push_str(&state_fn);
    if let Some(formats) = &x.memexport_formats {
        d.push_str(&memexport_format(formats));
    }
    d
}

/// The first lines of `shrec_body`: the two descriptor indices of each texture of the module
/// (`shrec_ti<i>`, `shrec_si<i>`) and each float constant the body reads at a fixed index
/// (`shrec_c<i>`), loaded once. They are the runtime's buffers, which no shader invocation
/// writes, so one load gives every later read's value; DXC does not merge repeated
/// `vk::RawBufferLoad`s itself (each fetch reloaded both indices, each constant read its
/// float4). Only the indices are locals, not the texture and sampler objects: a local resource
/// variable costs DXC's legalization more time than it saves.
pub(super) fn hoisted(m: &Module, used: &Used) -> String {
    let mut d = String::new();
    for (i, t) in m.textures.iter().enumerate() {
        let (_, ti) = split_heap(&t.tex_var);
        let (_, si) = split_heap(&t.smp_var);
        d.push_str(&format!("    uint shrec_ti{i} = {ti};\n    uint shrec_si{i} = {si};\n"));
    }
    for c in &used.constants {
        d.push_str(&format!(
            "    float4 shrec_c{c} = SHREC_XENOS_CONSTANT({c});
"
        ));
    }
    d
}

/// `shrec_xenos_memexport_format` (declared in shader_common.h) from the format table.
fn memexport_format(formats: &[crate::ir::MemExportFormat]) -> String {
    let mut d = String::from("bool shrec_xenos_memexport_format(uint id, out uint4 widths, out uint size_log2, out uint kind)\n{\n");
    d.push_str("    widths = uint4(0u, 0u, 0u, 0u);\n    size_log2 = 0u;\n    kind = 0u;\n    switch (id)\n    {\n");
    for f in formats {
        let w = f.widths;
        d.push_str(&format!(
            "    case {}u: // {}\n        widths = uint4({}u, {}u, {}u, {}u);\n        size_log2 = {}u;\n        kind = {}u;\n        return true;\n",
            f.id, f.name, w[0], w[1], w[2], w[3], f.size_log2, f.kind
        ));
    }
    d.push_str("    default:\n        return false;\n    }\n}\n");
    d
}

/// The heap and the index of a XenosRecomp-ABI texture or sampler path `heap[index]` (what the
/// Xenos front end names them, e.g. `g_Texture2DDescriptorHeap[s0_Texture2DDescriptorIndex]`).
pub(super) fn split_heap(path: &str) -> (&str, &str) {
    match path.split_once('[') {
        Some((heap, rest)) => (heap, rest.strip_suffix(']').unwrap_or(rest)),
        None => (path, ""),
    }
}
