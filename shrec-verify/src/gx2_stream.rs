//! GX2 stream-out (MEM_STREAM0-3, docs/gx2.md "GX2 stream-out"): a vertex shader runs through
//! shrec as the build compiles it (its SPIR-V carries the transform-feedback decorations the
//! translation placed), once per invocation with each stream-out buffer bound at that
//! invocation's record ([`crate::vk::xfb::StreamOutJob`]: buffers pre-filled with a sentinel,
//! strides from the GX2VertexShader struct, not from the translation). Every dword of every
//! record is compared with the reference interpreter's model of the buffers
//! ([`crate::interp::gx2::Run::streams`]): a dword it writes must hold that value, bit for bit;
//! a dword it does not write must still hold the sentinel.

use crate::gx2::asm::{self, C};
use crate::gx2::{compile, expect, fail, vertex_invocations, Compiled, TestProgram};
use crate::interp::gx2 as interp;
use crate::vk::xfb::{StreamOutJob, STREAM_SENTINEL};
use crate::vk::{Gpu, Slot, UniformSpec};
use crate::{Comparison, Expect, Rng};
use shrec::formats::gx2::shader_struct::Gx2Shader;
use shrec::formats::gx2::stream;
use shrec::ir::Semantic;
use std::fmt::Write;

/// `s` with hasStreamOut set and the stream-out strides `strides` (bytes).
pub fn with_strides(mut s: Gx2Shader, strides: [u32; 4]) -> Gx2Shader {
    s.words[stream::HAS_STREAM_OUT / 4] = 1;
    for (b, st) in strides.into_iter().enumerate() {
        s.words[stream::STRIDES / 4 + b] = st;
    }
    s
}

/// A MEM_STREAM`buffer` write of R`gpr` lanes `mask` at dword `base` (WRITE, ELEM_SIZE 0, no
/// burst, ARRAY_SIZE 0xFFF).
pub fn write(buffer: u32, base: u32, gpr: u32, mask: u32) -> C {
    C::Stream { buffer, ty: stream::TYPE_WRITE, base, gpr, elem_size: 0, array_size: 0xFFF, mask, burst: 0 }
}

/// A random stream-out program (seed, index): CALL_FS, an ALU clause filling R2-R4 from the
/// attributes (float and integer results: MUL, ADD, MOV, XOR_INT, FLT_TO_INT), then writes of
/// random GPRs / lanes to random buffers at increasing, non-overlapping offsets (random gaps,
/// WRITE or WRITE_ACK, ARRAY_SIZE 0xFFF or exactly the top lane), an ALU clause changing R2
/// and one more write of R2 (the value at the export is what counts), then EXP_DONE POS.
pub fn random_program(seed: u64, index: u64) -> TestProgram {
    use asm::*;
    let mut rng = Rng::new(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let alu1 = alu(
        "ALU",
        vec![G(
            vec![
                a("MUL", (2, 0), &[r(1, 0), r(1, 1)]),
                a("ADD", (2, 1), &[r(1, 1), r(1, 2)]),
                a("MOV", (3, 2), &[r(1, 3)]),
                a("XOR_INT", (3, 3), &[r(1, 0), r(1, 1)]),
                a("FLT_TO_INT", (4, 0), &[r(1, 2)]),
            ],
            vec![],
        )],
    );
    let alu2 =
        alu("ALU", vec![G(vec![a("ADD", (2, 0), &[r(2, 0), r(1, 1)]), a("MUL", (2, 1), &[r(2, 1), r(1, 0)]), a("MOV", (2, 3), &[r(1, 2)])], vec![])]);
    let mut cfs = vec![cf("CALL_FS"), alu1];
    let mut next = [0u32; 4];
    let mut pending = Vec::new();
    for _ in 0..rng.range(2, 6) {
        let buffer = rng.below(4) as u32;
        let mask = rng.range(1, 15) as u32;
        let low = mask.trailing_zeros();
        let top = 31 - mask.leading_zeros();
        // ARRAY_BASE may sit below the record start by the lanes the mask skips (Mesa's
        // `dst_offset - start_component`)
        let first = next[buffer as usize] + rng.below(3) as u32;
        let base = first.saturating_sub(low);
        next[buffer as usize] = base + top + 1;
        let ty = if rng.chance(30) { stream::TYPE_WRITE_ACK } else { stream::TYPE_WRITE };
        let array_size = if rng.chance(30) { top } else { 0xFFF };
        let gpr = rng.range(1, 4) as u32;
        pending.push(C::Stream { buffer, ty, base, gpr, elem_size: 0, array_size, mask, burst: 0 });
    }
    cfs.extend(pending);
    // R2 after a change, at fresh dwords of buffer 0
    cfs.push(alu2);
    cfs.push(write(0, next[0], 2, 0xF));
    next[0] += 4;
    cfs.push(C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] });
    let strides: [u32; 4] = std::array::from_fn(|b| if next[b] == 0 && b != 0 { 0 } else { 4 * (next[b] + rng.below(3) as u32) });
    let name = format!("stream-out #{index}");
    let mut t =
        crate::gx2::gen::fixed(&name, shrec::formats::gx2::shader_struct::ShaderKind::Vertex, &cfs, cfs.len() - 1, vec![], false, seed ^ index);
    t.shader = with_strides(t.shader, strides);
    t.reproduce = format!("stream_out: random_program({seed}, {index})");
    t
}

fn uniform_specs(module: &shrec::ir::Module) -> Vec<UniformSpec> {
    module.const_buffers.iter().map(|cb| UniformSpec { slot: Slot { set: cb.binding.vk_set, binding: cb.binding.vk_binding }, len: cb.len }).collect()
}

/// Runs one stream-out program on the GPU and compares every dword of every bound record.
pub fn run(gpu: &Gpu, t: &TestProgram) -> Comparison {
    let mut cmp = Comparison { programs: 1, ..Default::default() };
    let Some(Compiled { prog, listing, module, spirv }) = compile(gpu, t, &mut cmp) else { return cmp };
    // the records as the game binds them: the struct's strides
    let strides: [u32; 4] = std::array::from_fn(|b| stream::stride(&t.shader, b as u32).unwrap_or(0));
    let invocations = vertex_invocations(&module, &t.cases);
    let attribute_locations = module
        .inputs
        .iter()
        .filter_map(|v| match v.semantic {
            Semantic::Texcoord(l) => Some(l),
            _ => None,
        })
        .collect();
    let job = StreamOutJob { spirv: &spirv, attribute_locations, uniforms: uniform_specs(&module), invocations, strides };
    let got = match gpu.run_stream_out(&job) {
        Ok(g) => g,
        Err(e) => {
            fail(&mut cmp, t, format!("GPU run failed: {e}\n{listing}"));
            return cmp;
        }
    };
    let mut first: Option<String> = None;
    for (i, case) in t.cases.iter().enumerate() {
        let r = interp::run(&t.shader, &prog, case);
        cmp.opcodes.extend(r.executed.iter().map(|s| s.to_string()));
        let mut lanes = String::new();
        for (&(b, d), _) in r.streams.iter().filter(|(&(b, _), _)| strides[b as usize] == 0) {
            cmp.comparisons += 1;
            cmp.mismatches += 1;
            let _ = writeln!(lanes, "  buffer {b} dword {d}: written by the program, but the struct gives the buffer no stride");
        }
        for b in 0..4 {
            let words = strides[b] as usize / 4;
            for d in 0..words {
                let want = if r.undetermined {
                    Expect::UNKNOWN
                } else {
                    r.streams.get(&(b as u32, d as u32)).map_or(Expect::exact(f32::from_bits(STREAM_SENTINEL)), |v| expect(*v))
                };
                let g = got[b][i * words + d];
                if !cmp.lane(f32::from_bits(g), want) {
                    let _ = writeln!(lanes, "  buffer {b} dword {d}: gpu {g:#010x}, reference {want} (sentinel {STREAM_SENTINEL:#010x})");
                }
            }
        }
        if !lanes.is_empty() && first.is_none() {
            first = Some(format!("case {i}:\n{lanes}"));
        }
    }
    if let Some(f) = first {
        cmp.report(format!("== {} ({})\n{listing}{f}reproduce: {}", t.name, gpu.device_name, t.reproduce));
    }
    cmp
}
