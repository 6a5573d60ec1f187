//! GX2 geometry shaders executed on the GPU: shrec's ES vertex shader feeds shrec's GS, transform
//! feedback captures every emitted vertex (`vk::xfb`), compared with the interpreter running
//! ES → GS → copy shader (`formats::gx2::interp`, ring model of `formats::gx2::ring`).

use super::check;
use super::gx2::{asm::*, bare_shader, expect, uniform_data, vs_out_ids};
use super::vk::xfb::{GeometryInvocation, GeometryJob};
use super::vk::{Gpu, Slot, UniformSpec};
use super::{Comparison, Expect};
use crate::interp::gx2::{self as interp, GsEvent, Inputs, Run, V};
use shrec::formats::gx2::shader_struct::{Gx2Shader, LoopVar, ShaderKind};
use shrec::formats::gx2::{disasm, isa, lower};
use shrec::ir::{GsOutput, Module, Semantic};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A GX2GeometryShader struct: output primitive (0 points, 1 line strip, 2 triangle strip),
/// SQ_GS_VERT_ITEMSIZE `vert_dwords`, room for `max_vertices` vertices, PARAM i → semantic i for
/// `n_params` params, register uniform mode.
pub fn geometry_shader(
    program: Vec<u8>,
    copy: Vec<u8>,
    out_prim: u32,
    vert_dwords: u32,
    max_vertices: u32,
    n_params: u32,
    loop_vars: Vec<LoopVar>,
) -> Gx2Shader {
    let mut words = vec![0u32; ShaderKind::Geometry.struct_size() / 4];
    words[0] = 32; // NUM_GPRS
    words[1] = out_prim; // byte offset 0x04
    words[0x14 / 4] = vert_dwords;
    words[0x1C / 4] = n_params.div_ceil(4);
    words[0x20 / 4..0x20 / 4 + 10].copy_from_slice(&vs_out_ids(n_params));
    words[0x4C / 4] = program.len() as u32;
    words[0x54 / 4] = copy.len() as u32;
    words[0x88 / 4] = vert_dwords * max_vertices;
    bare_shader(ShaderKind::Geometry, words, program, copy, loop_vars)
}

/// The copy program the GX2 compiler pattern produces: one ring FETCH per output (R(i+1) from
/// ring offset 16·slot), then EXP POS0 (if `pos_slot`) and PARAM i from `param_slots[i]`.
pub fn copy_program(pos_slot: Option<u32>, param_slots: &[u32]) -> Vec<u8> {
    let mut fetches = Vec::new();
    let mut cfs = Vec::new();
    let mut g = 1;
    let mut exps = Vec::new();
    if let Some(s) = pos_slot {
        fetches.push(ring_fetch(0, 0, g, [0, 1, 2, 3], 16 * s));
        exps.push((1, 60, g));
        g += 1;
    }
    for (i, &s) in param_slots.iter().enumerate() {
        fetches.push(ring_fetch(0, 0, g, [0, 1, 2, 3], 16 * s));
        exps.push((2, i as u32, g));
        g += 1;
    }
    cfs.push(C::N { op: "VTX", addr: 0, pop: 0, cf_const: 0, tex: fetches });
    let n = exps.len();
    for (k, (ty, base, gpr)) in exps.into_iter().enumerate() {
        cfs.push(C::Exp { done: k + 1 == n, ty, base, gpr, burst: 0, sel: [0, 1, 2, 3] });
    }
    let eop = cfs.len() - 1;
    assemble(&cfs, eop)
}

/// One ES + GS pair and its cases (three ES vertex inputs each; the GS's uniforms in `gs_inputs`).
#[derive(Clone, Debug)]
pub struct GsTest {
    pub name: String,
    pub es: Gx2Shader,
    pub gs: Gx2Shader,
    pub cases: Vec<([Inputs; 3], Inputs)>,
    pub reproduce: String,
}

/// The vertices transform feedback writes for `events` (first `max` emits; strips split at
/// cuts): points, line-strip segments, or triangle-strip triangles in Vulkan's order (triangle
/// i of a strip = vertices i, i + 1 + i % 2, i + 2 − i % 2).
pub fn xfb_order(events: &[GsEvent], output: GsOutput, max: usize) -> Vec<BTreeMap<(u32, u32), [V; 4]>> {
    let mut strips: Vec<Vec<&BTreeMap<(u32, u32), [V; 4]>>> = vec![vec![]];
    let mut n = 0;
    for e in events {
        match e {
            GsEvent::Vertex(v) => {
                if n < max {
                    strips.last_mut().unwrap().push(v);
                }
                n += 1;
            }
            GsEvent::Cut => strips.push(vec![]),
        }
    }
    let mut out = Vec::new();
    for s in strips {
        match output {
            GsOutput::Points => out.extend(s.iter().map(|v| (*v).clone())),
            GsOutput::LineStrip => {
                for i in 1..s.len() {
                    out.push(s[i - 1].clone());
                    out.push(s[i].clone());
                }
            }
            GsOutput::TriangleStrip => {
                for i in 2..s.len() {
                    let j = i - 2;
                    for k in [j, j + 1 + j % 2, j + 2 - j % 2] {
                        out.push(s[k].clone());
                    }
                }
            }
        }
    }
    out
}

/// The geometry shader of random GS program `index` of run `seed` (verify_gx2_gs.rs
/// `gs_fuzz_*`, `gx2::gen::Gen::gs_program`): 1-3 ESGS slots read, 1-3 GSVS slots per vertex
/// (position + params), 1-8 emits, output points / line strip / triangle strip; and the
/// generator, from which the caller draws the program's cases.
pub fn random_geometry_shader(seed: u64, index: u64) -> (Gx2Shader, crate::Rng) {
    let mut rng = crate::Rng::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x65);
    let in_slots = rng.range(1, 4) as u32;
    let vert_slots = rng.range(1, 4) as u32;
    let out_prim = rng.below(3) as u32;
    // lavapipe (Mesa 22.3) crashes (SIGSEGV in the compiled GS, also with LP_NUM_THREADS=0) when
    // a triangle-strip GS declared with maxvertexcount(2) emits its second vertex (seed 1 #67;
    // the same program as a line strip, as points or with 1, 3 or 4 vertices runs): such a GS
    // can never make a triangle, so triangle strips here get 1 or 3-8 vertices
    let emits = match rng.range(1, 9) as usize {
        2 if out_prim == 2 => 3,
        n => n,
    };
    let mut g = crate::gx2::gen::Gen::new(&mut rng, ShaderKind::Geometry, false);
    let program = g.gs_program(in_slots, vert_slots, emits);
    let loop_vars = std::mem::take(&mut g.loop_vars);
    let params: Vec<u32> = (1..vert_slots).collect();
    let copy = copy_program(Some(0), &params);
    (geometry_shader(program, copy, out_prim, 4 * vert_slots, emits as u32, vert_slots - 1, loop_vars), rng)
}

fn compile(gpu: &Gpu, s: &Gx2Shader) -> Result<(Module, Vec<u8>), String> {
    lower::lower(s).map_err(|e| format!("translate {}: {e}", s.kind.name())).and_then(|m| check::spirv(gpu, &m).map(|v| (m, v)))
}

fn listing(s: &Gx2Shader) -> String {
    let mut t = isa::decode(&s.program).map(|p| disasm::disassemble(&p)).unwrap_or_default();
    if !s.copy_program.is_empty() {
        t += "; copy program\n";
        t += &isa::decode(&s.copy_program).map(|p| disasm::disassemble(&p)).unwrap_or_default();
    }
    t
}

fn uniform_specs(m: &Module) -> Vec<UniformSpec> {
    m.const_buffers.iter().map(|cb| UniformSpec { slot: Slot { set: cb.binding.vk_set, binding: cb.binding.vk_binding }, len: cb.len }).collect()
}

/// Runs the pair through shrec and the GPU (one triangle per case) and compares the number of
/// captured vertices and every lane of every captured vertex with the interpreter.
pub fn run(gpu: &Gpu, t: &GsTest) -> Comparison {
    let mut cmp = Comparison { programs: 1, ..Default::default() };
    let text = format!("; ES\n{}; GS\n{}", listing(&t.es), listing(&t.gs));
    let fail = |cmp: &mut Comparison, what: String| {
        cmp.mismatches += 1;
        cmp.report(format!("== {}: {what}\n{text}reproduce: {}", t.name, t.reproduce));
    };
    let (es_m, es_spv) = match compile(gpu, &t.es) {
        Ok(x) => x,
        Err(e) => return (fail(&mut cmp, e), cmp).1,
    };
    let (gs_m, gs_spv) = match compile(gpu, &t.gs) {
        Ok(x) => x,
        Err(e) => return (fail(&mut cmp, e), cmp).1,
    };
    let (Ok(es_p), Ok(gs_p)) = (isa::decode(&t.es.program), isa::decode(&t.gs.program)) else {
        return (fail(&mut cmp, "decode".into()), cmp).1;
    };
    let g = gs_m.ext.geometry.clone().expect("GS module");
    let strip = g.strip.clone().expect("strip GS");
    let locations: Vec<u32> = es_m.inputs.iter().filter_map(|v| if let Semantic::Texcoord(l) = v.semantic { Some(l) } else { None }).collect();
    let mut uniforms = uniform_specs(&es_m);
    uniforms.extend(uniform_specs(&gs_m));
    let invocations = t
        .cases
        .iter()
        .map(|(vs, gi)| {
            let vertices = vs.iter().map(|v| locations.iter().map(|&l| (l, v.attribs.get(&l).copied().unwrap_or([0.0; 4]))).collect()).collect();
            let mut u = uniform_data(&es_m, &vs[0]);
            u.extend(uniform_data(&gs_m, gi));
            GeometryInvocation { vertices, uniforms: u }
        })
        .collect();
    let job = GeometryJob {
        vs_spirv: &es_spv,
        gs_spirv: &gs_spv,
        topology: ash::vk::PrimitiveTopology::TRIANGLE_LIST,
        vertices: 3,
        attribute_locations: locations.clone(),
        max_vertices: g.max_vertices,
        uniforms,
        invocations,
    };
    let got = match gpu.run_geometry(&job) {
        Ok(x) => x,
        Err(e) => return (fail(&mut cmp, format!("GPU run failed: {e}")), cmp).1,
    };
    // capture order: the Position built-in first, then by location
    let mut order: Vec<usize> = (0..gs_m.outputs.len()).collect();
    order.sort_by_key(|&i| match gs_m.outputs[i].semantic {
        Semantic::Position => (0, 0),
        Semantic::Texcoord(l) => (1, l),
        _ => (2, 0),
    });
    let mut first_bad: Option<String> = None;
    for (ci, ((vs, gi), cap)) in t.cases.iter().zip(&got).enumerate() {
        // ES for each vertex (vertex id i·3 + k, as the draw numbers them), then the GS
        let es_runs: Vec<Run> = vs.iter().map(|v| interp::run(&t.es, &es_p, v)).collect();
        let mut gin = gi.clone();
        gin.esgs = es_runs.iter().map(|r| r.ring.clone()).collect();
        let r = interp::run(&t.gs, &gs_p, &gin);
        for x in es_runs.iter().chain([&r]) {
            cmp.opcodes.extend(x.executed.iter().map(|s| s.to_string()));
        }
        if r.undetermined || es_runs.iter().any(|x| x.undetermined) {
            cmp.inconclusive += 1;
            continue;
        }
        let want = xfb_order(&r.gs, strip.output, g.max_vertices as usize);
        let mut bad = String::new();
        cmp.comparisons += 1;
        if cap.vertices.len() != want.len() {
            cmp.mismatches += 1;
            let _ = writeln!(
                bad,
                "  gpu captured {} vertices, reference {} ({} events: {:?})",
                cap.vertices.len(),
                want.len(),
                r.gs.len(),
                r.gs.iter().map(|e| matches!(e, GsEvent::Cut)).collect::<Vec<_>>()
            );
        } else {
            for (vi, (gv, wv)) in cap.vertices.iter().zip(&want).enumerate() {
                for (ci2, &oi) in order.iter().enumerate() {
                    let var = &gs_m.outputs[oi];
                    let target = match var.semantic {
                        Semantic::Position => (1, 60),
                        Semantic::Texcoord(sem) => (2, sem), // PARAM i → semantic i in these structs
                        _ => continue,
                    };
                    let w = wv.get(&target).map_or([Expect::UNKNOWN; 4], |v| v.map(expect));
                    let mut g4 = gv[ci2];
                    if var.semantic == Semantic::Position {
                        g4[1] = -g4[1]; // DXC's -fvk-invert-y
                    }
                    for lane in 0..4 {
                        if !cmp.lane(g4[lane], w[lane]) {
                            let _ = writeln!(
                                bad,
                                "  vertex {vi} {}.{}: gpu {:?} (0x{:08X}), reference {}",
                                var.name,
                                ['x', 'y', 'z', 'w'][lane],
                                g4[lane],
                                g4[lane].to_bits(),
                                w[lane]
                            );
                        }
                    }
                }
            }
        }
        if !bad.is_empty() && first_bad.is_none() {
            let mut inputs = String::new();
            for (k, v) in vs.iter().enumerate() {
                let _ = writeln!(inputs, "  vertex {k}: {:?}", v.attribs);
            }
            first_bad = Some(format!("== {} ({})\n{text}case {ci}:\n{bad}inputs:\n{inputs}reproduce: {}", t.name, gpu.device_name, t.reproduce));
        }
    }
    if let Some(b) = first_bad {
        cmp.report(b);
    }
    cmp
}
