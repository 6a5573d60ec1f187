//! Synthetic Latte programs for the translation paths the corpus never reaches: loops (DX10 and
//! integer-constant ones with AL), branches and the execution-mask stack, predicates, KILL,
//! relative addressing, integer ALU ops, LOD/gradient sampling, uniform-block VTX_FETCH and
//! CALL/RETURN. Each program is assembled by shrec-verify's GX2 assembler (bit layouts:
//! docs/isa/gx2.md §5-§7), wrapped in a GX2 VS/PS struct inside a GFD written here, then:
//! decoded, disassembled, translated, compiled by DXC to DXIL and SPIR-V, checked by spirv-val,
//! and a cheap semantic property of the HLSL is asserted. Every opcode the README lists as
//! rejected is checked to be rejected with its mnemonic.

use crate::common;

use shrec::detect::ContainerKind;
use shrec::dxc::{self, Target};
use shrec::formats::gx2::error::{Gx2Error, Opcode};
use shrec::formats::gx2::isa;
use shrec::formats::gx2::shader_struct::{Gx2Shader, LoopVar, SamplerVar, ShaderKind, UniformBlock};
use shrec::formats::opcodes::Status;
use shrec::formats::ShaderError;
use shrec::formats::{self, TranslateOptions};
use shrec_verify::gx2::asm::*;
use shrec_verify::gx2::gfd;

// ---------------------------------------------------------------------------------------------
// Encoder: shrec-verify's GX2 assembler (bit layouts: docs/isa/gx2.md §5-§7), and shorthands
// ---------------------------------------------------------------------------------------------

const ZERO: S = S { sel: 248, chan: 0, neg: false, rel: false, abs: false };
const ONE: S = S { sel: 249, ..ZERO };
/// The integer 1 (ALU_SRC_1_INT).
const ONE_INT: S = S { sel: 250, ..ZERO };
const PV: S = S { sel: isa::SEL_PV, ..ZERO };
const PS: S = S { sel: isa::SEL_PS, ..ZERO };

fn g(insts: Vec<A>) -> G {
    G(insts, vec![])
}
fn gl(insts: Vec<A>, lits: &[u32]) -> G {
    G(insts, lits.to_vec())
}
fn cf_addr(op: &'static str, addr: u32) -> C {
    C::N { op, addr, pop: 0, cf_const: 0, tex: vec![] }
}
fn loop_start(op: &'static str, cf_const: u32) -> C {
    C::N { op, addr: 0, pop: 0, cf_const, tex: vec![] }
}
fn texc(fetches: Vec<T>) -> C {
    C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: fetches }
}
/// ALU clause with kcache bank 0 = (block, mode, addr)
fn alu_kc(op: &'static str, kc0: (u32, u32, u32), groups: Vec<G>) -> C {
    C::Alu { op, kc: [kc0, (0, 0, 0)], groups }
}
fn exp_done(ty: u32, base: u32, gpr: u32) -> C {
    C::Exp { done: true, ty, base, gpr, burst: 0, sel: [0, 1, 2, 3] }
}

// ---------------------------------------------------------------------------------------------
// GX2 structs (the GFD writer is shrec_verify::gx2::gfd)
// ---------------------------------------------------------------------------------------------

fn shader(kind: ShaderKind, program: Vec<u8>) -> Gx2Shader {
    let mut words = vec![0u32; kind.struct_size() / 4];
    match kind {
        ShaderKind::Vertex => {
            words[0] = 16; // NUM_GPRS
            words[0x08 / 4] = 0; // one param export
            words[0x0C / 4] = 1;
            words[0x10 / 4] = 0xFFFF_FF00; // PARAM0 → semantic 0
            words[0x40 / 4] = 1; // one vertex semantic
            words[0x44 / 4] = 0; // slot 0 ← attrib location 0 → R1
            for k in 1..32 {
                words[0x44 / 4 + k] = 0xFF;
            }
        }
        _ => {
            words[0] = 16;
            words[1] = 2; // byte offset 0x04: one colour export
            words[0x08 / 4] = 1; // NUM_INTERP 1
            words[0x10 / 4] = 1; // one SPI_PS_INPUT_CNTL
            words[0x14 / 4] = 0; // R0 = semantic 0
            words[0x94 / 4] = 0xF;
            words[0x98 / 4] = 1;
        }
    }
    let attrib_vars = if kind == ShaderKind::Vertex {
        vec![shrec::formats::gx2::shader_struct::AttribVar { name: "aPos".into(), ty: 11, count: 0, location: 0 }]
    } else {
        vec![]
    };
    Gx2Shader { attrib_vars, ..shrec_verify::gx2::bare_shader(kind, words, program, vec![], vec![]) }
}

fn set_mode_block(s: &mut Gx2Shader, blocks: &[(u32, &str, u32)]) {
    let f = s.kind.var_fields();
    s.words[f.mode / 4] = 1;
    s.uniform_blocks = blocks.iter().map(|&(loc, n, size)| UniformBlock { name: n.into(), offset: loc, size }).collect();
}

// ---------------------------------------------------------------------------------------------
// Check pipeline
// ---------------------------------------------------------------------------------------------

struct Out {
    disasm: String,
    hlsl: String,
}

/// GFD → decode → disasm → translate → DXC (DXIL + SPIR-V) → spirv-val.
fn check(lib: &dxc::DxcLib, name: &str, s: &Gx2Shader) -> Out {
    let bytes = gfd(s);
    let opts = TranslateOptions::default();
    let entries = formats::entries(ContainerKind::Gfd, &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(entries.len(), 1);
    let back = shrec::formats::gx2::gfd::load(&bytes, 0).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(back.program, s.program, "{name}: program round trip");
    assert_eq!(back.loop_vars, s.loop_vars, "{name}");
    let disasm = formats::disasm(ContainerKind::Gfd, &bytes, 0, &opts).unwrap_or_else(|e| panic!("{name}: disasm: {e}"));
    let tr = formats::translate(ContainerKind::Gfd, &bytes, 0, &opts).unwrap_or_else(|e| panic!("{name}: translate: {e}\n{disasm}"));
    // What the build compiles (after the IR passes) and the lowering as written (no passes):
    // both must compile and validate. The text checks below read the second, since they are
    // about what the front end emits (the passes may fold or drop an instruction whose result
    // the test program never exports).
    let optimized = shrec::hlsl::write(&tr.module);
    let hlsl = shrec::hlsl::write_as_is(&tr.module);
    for (which, text) in [("optimized", &optimized), ("as lowered", &hlsl)] {
        for target in [Target::Dxil, Target::Spirv] {
            let out =
                dxc::compile(lib, text, entries[0].stage, target).unwrap_or_else(|e| panic!("{name} {which} {target:?}: {e}\n{disasm}\n{text}"));
            if target == Target::Spirv {
                common::spirv_val(&out, &format!("gx2syn_{name}")).unwrap_or_else(|e| panic!("{name} {which}: spirv-val: {e}\n{text}"));
            }
        }
    }
    if std::env::var_os("SHREC_DUMP").is_some() {
        eprintln!("==== {name}\n{disasm}\n{hlsl}");
    }
    Out { disasm, hlsl }
}

fn lib() -> dxc::DxcLib {
    dxc::locate(&Default::default()).expect("DXC")
}

fn has_all(text: &str, names: &[&str]) {
    for n in names {
        assert!(text.contains(n), "missing {n} in\n{text}");
    }
}

fn count(text: &str, pat: &str) -> usize {
    text.matches(pat).count()
}

/// VS tail: POS0 ← R1, PARAM0 ← `param`.
fn vs_tail(param: u32) -> Vec<C> {
    vec![exp_done(1, 60, 1), exp_done(2, 0, param)]
}

fn vs(mut cfs: Vec<C>, param: u32) -> Gx2Shader {
    cfs.insert(0, cf("CALL_FS"));
    cfs.extend(vs_tail(param));
    let n = cfs.len();
    shader(ShaderKind::Vertex, assemble(&cfs, n - 1))
}

fn ps(mut cfs: Vec<C>, out: u32) -> Gx2Shader {
    cfs.push(exp_done(0, 0, out));
    let n = cfs.len();
    shader(ShaderKind::Pixel, assemble(&cfs, n - 1))
}

const F1: u32 = 0x3F80_0000; // 1.0f
const F10: u32 = 0x4120_0000; // 10.0f

// ---------------------------------------------------------------------------------------------
// Programs
// ---------------------------------------------------------------------------------------------

#[test]
fn loop_dx10_with_alu_break_loop_break_and_continue() {
    let lib = lib();
    // i = 0; acc = 0; loop { if !(c0.x > i) break; i++; if ((i & 1) == 0) continue; acc += 1; if (acc > 10) break; }
    let p = vs(
        vec![
            alu("ALU", vec![g(vec![a("MOV", (2, 0), &[ZERO]), a("MOV", (3, 1), &[ZERO]), a("MOV", (3, 0), &[ZERO])])]),
            cf("LOOP_START_DX10"),
            alu(
                "ALU_BREAK",
                vec![
                    g(vec![a("PRED_SETGT_INT", (4, 0), &[c(0, 0), r(2, 0)]).exec().upd_pred().nowrite()]),
                    g(vec![a("ADD_INT", (2, 0), &[r(2, 0), ONE_INT])]),
                ],
            ),
            alu(
                "ALU_PUSH_BEFORE",
                vec![g(vec![a("AND_INT", (4, 1), &[r(2, 0), ONE_INT])]), g(vec![a("PRED_SETE_INT", (4, 2), &[r(4, 1), ZERO]).exec().nowrite()])],
            ),
            cf("LOOP_CONTINUE"),
            cf_pop("POP", 1),
            alu("ALU", vec![g(vec![a("ADD", (3, 0), &[r(3, 0), ONE])])]),
            alu("ALU_PUSH_BEFORE", vec![gl(vec![a("PRED_SETGT", (4, 3), &[r(3, 0), lit(0)]).exec().nowrite()], &[F10])]),
            cf("LOOP_BREAK"),
            cf_pop("POP", 1),
            cf("LOOP_END"),
        ],
        3,
    );
    let o = check(&lib, "loop_dx10", &p);
    has_all(&o.disasm, &["LOOP_START_DX10", "ALU_BREAK", "LOOP_CONTINUE", "LOOP_BREAK", "LOOP_END", "PRED_SETGT_INT", "PRED_SETE_INT", "POP"]);
    assert_eq!(count(&o.hlsl, "[loop] while (true)"), 1, "{}", o.hlsl);
    assert!(count(&o.hlsl, "break;") >= 3, "loop-top check, ALU_BREAK, LOOP_BREAK\n{}", o.hlsl);
    assert_eq!(count(&o.hlsl, "continue;"), 1, "{}", o.hlsl);
}

#[test]
fn loop_start_with_loop_constant_al_relative_kcache_and_gprs() {
    let lib = lib();
    // LOOP_START i0 (count 4, init 2, inc 3): acc += CB1[AL + 0].x; R(8 + AL).x = acc; R5.x = R(8 + AL).y
    // nested LOOP_START_NO_AL i1 (count 2) holding a TEX clause (VTX_FETCH from block 1)
    let mut p = vs(
        vec![
            alu("ALU", vec![g(vec![a("MOV", (3, 0), &[ZERO]), a("MOV", (3, 1), &[ZERO])])]),
            loop_start("LOOP_START", 0),
            alu_kc(
                "ALU",
                (1, 3, 0),
                vec![
                    g(vec![a("ADD", (3, 0), &[r(3, 0), kc(0, 0)]).index(4)]),
                    g(vec![a("MOV", (8, 0), &[r(3, 0)]).index(4).dst_rel(), a("MOV", (5, 1), &[r(8, 1).rel()]).index(4)]),
                ],
            ),
            loop_start("LOOP_START_NO_AL", 1),
            texc(vec![vfetch(1, 1, 6, 16)]),
            alu("ALU", vec![g(vec![a("ADD", (3, 1), &[r(3, 1), r(6, 0)])])]),
            cf("LOOP_END"),
            cf("LOOP_END"),
        ],
        3,
    );
    set_mode_block(&mut p, &[(1, "Data", 256)]);
    p.loop_vars = vec![LoopVar { offset: 0, value: 4 | 2 << 12 | 3 << 24 }, LoopVar { offset: 1, value: 2 }];
    let o = check(&lib, "loop_al", &p);
    has_all(&o.disasm, &["LOOP_START ", "LOOP_START_NO_AL", "LOOP_END", "VTX_FETCH"]);
    assert_eq!(count(&o.hlsl, "[loop] while (true)"), 2, "{}", o.hlsl);
    assert!(o.hlsl.contains("CB1["), "{}", o.hlsl);
    let prog = isa::decode(&p.program).unwrap();
    assert!(matches!(prog.cfs[2].0.cf, isa::Cf::Normal { op: isa::CfOp::LOOP_START, cf_const: 0, .. }));
    loop_counter_checks(&o.hlsl);
}

/// Each bounded loop's counter is written only by its own increment and reset, and AL is set
/// from the counter before it is incremented (the first iteration sees AL = init).
fn loop_counter_checks(hlsl: &str) {
    let lines: Vec<&str> = hlsl.lines().map(|x| x.trim()).collect();
    let mut counters = Vec::new();
    for (i, x) in lines.iter().enumerate() {
        // `[branch] if ((R[k].xxxx).x >= …) { break; }` bound checks
        let x = x.trim_start_matches("[branch] ");
        if x.starts_with("if (") && x.contains(">=") && lines.get(i + 1).is_some_and(|n| n.contains("break;") || n.starts_with('{')) {
            // `if (R168.x >= …` or, since registers are read whole, `if ((((float4)R168).xxxx).x >= …`
            let reg = x[4..].trim_start_matches('(').trim_start_matches("float4)").split(".x").next().unwrap().trim_end_matches(')').to_string();
            if !reg.starts_with('R') {
                continue;
            }
            counters.push(reg);
        }
    }
    assert!(!counters.is_empty(), "no bounded loop found\n{hlsl}");
    for k in &counters {
        // writes of the counter's x lane: `R168.x = …`, or a whole-vector write whose select mask
        // takes x (`R168 = select(bool4(true, …`) or that has no mask
        let whole = format!("{k} = ");
        let x_mask = format!("{k} = select(bool4(true,");
        let writes = lines
            .iter()
            .filter(|x| {
                (x.starts_with(&format!("{k}.x")) && x.contains(" = "))
                    || (x.starts_with(&whole) && (!x.contains("select(bool4(") || x.starts_with(&x_mask)))
            })
            .count();
        assert_eq!(writes, 2, "counter {k}: one reset + one increment expected\n{hlsl}");
    }
    let distinct: std::collections::BTreeSet<_> = counters.iter().collect();
    assert_eq!(distinct.len(), counters.len(), "nested loops share a counter: {counters:?}\n{hlsl}");
    // AL (R133.z; R[133].z when temps are an indexable array) = init + n * inc uses the count of
    // completed iterations
    // (one-lane writes are whole-vector selects since registers are read whole)
    let al = lines
        .iter()
        .position(|x| x.starts_with("R[133].z =") || x.starts_with("R133.z =") || x.starts_with("R133 = select(bool4(false, false, true, false)"))
        .expect("AL assignment");
    let k = &counters[0];
    let inc = lines
        .iter()
        .position(|x| {
            // `R168.x = (R168.x + 1.0f);` (component write) or a whole-vector select
            (x.starts_with(&format!("{k}.x = (")) || x.starts_with(&format!("{k} = select(bool4(true, false, false, false)")))
                && (x.contains("+ 1.0f)") || x.contains("+ ((float4)1.0f)"))
        })
        .expect("increment");
    assert!(al < inc, "AL must be set before the counter increments\n{hlsl}");
}

#[test]
fn branches_push_else_pop_and_predicates() {
    let lib = lib();
    let p = ps(
        vec![
            alu("ALU", vec![g(vec![a("MOV", (1, 0), &[ZERO]), a("MOV", (1, 1), &[ZERO]), a("MOV", (1, 2), &[ZERO]), a("MOV", (1, 3), &[ZERO])])]),
            // if (R0.x > 0.5) { if (R0.y != 0) { R1.x = 1 } else { R1.x = 2 } }
            alu("ALU_PUSH_BEFORE", vec![gl(vec![a("PRED_SETGT", (2, 0), &[r(0, 0), lit(0)]).exec().upd_pred().nowrite()], &[0x3F00_0000])]),
            alu("ALU_PUSH_BEFORE", vec![g(vec![a("PRED_SETNE_INT", (2, 1), &[r(0, 1), ZERO]).exec().nowrite()])]),
            alu("ALU_ELSE_AFTER", vec![g(vec![a("MOV", (1, 0), &[ONE])])]),
            alu("ALU_POP2_AFTER", vec![gl(vec![a("MOV", (1, 0), &[lit(0)])], &[0x4000_0000])]),
            // predicated writes
            alu(
                "ALU",
                vec![
                    gl(vec![a("PRED_SETGE", (2, 2), &[r(0, 2), lit(0)]).upd_pred().nowrite()], &[0x3E80_0000]),
                    g(vec![a("MOV", (1, 1), &[ONE]).pred_sel(3), a("MOV", (1, 2), &[ONE]).pred_sel(2)]),
                    g(vec![
                        a("PRED_SETE", (3, 0), &[r(0, 0), ONE]),
                        a("PRED_SETGE_INT", (3, 1), &[r(0, 1), ONE]),
                        a("PRED_SETGT_UINT", (3, 2), &[r(0, 2), ONE]),
                        a("PRED_SETNE", (3, 3), &[r(0, 3), ONE]),
                        a("PRED_SETGE_UINT", (3, 0), &[r(0, 0), ONE]),
                    ]),
                    g(vec![
                        a("PRED_SETE_INT", (3, 0), &[r(0, 0), ONE]),
                        a("PRED_SETGT_INT", (3, 1), &[r(0, 1), ONE]),
                        a("PRED_SET_CLR", (3, 2), &[]),
                    ]),
                ],
            ),
            // PUSH; ALU (exec); ELSE; ALU_POP_AFTER; then PUSH_ELSE … POP, each jump pointed
            // where a compiler points it (PUSH past the block, ELSE POP_CNT(1) past the pop
            // it stands for, PUSH_ELSE at the POP)
            cf_addr("PUSH", 10),
            alu("ALU", vec![g(vec![a("PRED_SETE_INT", (2, 3), &[r(0, 3), ZERO]).exec().nowrite()])]),
            C::N { op: "ELSE", addr: 10, pop: 1, cf_const: 0, tex: vec![] },
            alu("ALU_POP_AFTER", vec![g(vec![a("ADD", (1, 3), &[r(1, 3), ONE])])]),
            cf_addr("PUSH_ELSE", 12),
            alu("ALU", vec![g(vec![a("ADD", (1, 3), &[r(1, 3), ONE])])]),
            cf_pop("POP", 1),
        ],
        1,
    );
    let o = check(&lib, "branches", &p);
    has_all(
        &o.disasm,
        &[
            "ALU_PUSH_BEFORE",
            "ALU_ELSE_AFTER",
            "ALU_POP2_AFTER",
            "ALU_POP_AFTER",
            "PUSH",
            "ELSE",
            "PUSH_ELSE",
            "POP",
            "PRED_SETGE_UINT",
            "PRED_SET_CLR",
        ],
    );
    // PRED_SEL_ONE / _ZERO: writes guarded by the predicate flag, once each polarity
    assert!(
        o.hlsl.contains("R[133].y != 0") || o.hlsl.contains("R133.y") || o.hlsl.contains("((float4)R133).yyyy") || o.hlsl.contains(".y != 0"),
        "{}",
        o.hlsl
    );
}

#[test]
fn kills_in_a_pixel_shader() {
    let lib = lib();
    let p = ps(
        vec![
            alu(
                "ALU",
                vec![
                    gl(
                        vec![
                            a("KILLGT", (2, 0), &[r(0, 0), lit(0)]),
                            a("KILLE", (2, 1), &[r(0, 1), lit(0)]),
                            a("KILLGE", (2, 2), &[r(0, 2), lit(0)]),
                            a("KILLNE", (2, 3), &[r(0, 3), lit(0)]),
                        ],
                        &[F1],
                    ),
                    g(vec![
                        a("KILLE_INT", (2, 0), &[r(0, 0), ONE]),
                        a("KILLGT_INT", (2, 1), &[r(0, 1), ONE]),
                        a("KILLGE_INT", (2, 2), &[r(0, 2), ONE]),
                        a("KILLNE_INT", (2, 3), &[r(0, 3), ONE]),
                        a("KILLGT_UINT", (2, 0), &[r(0, 0), ONE]),
                    ]),
                    g(vec![a("KILLGE_UINT", (2, 0), &[r(0, 0), ONE])]),
                ],
            ),
            // if (R0.x > 0.5) KILL
            alu("ALU_PUSH_BEFORE", vec![gl(vec![a("PRED_SETGT", (2, 0), &[r(0, 0), lit(0)]).exec().nowrite()], &[0x3F00_0000])]),
            cf("KILL"),
            cf_pop("POP", 1),
        ],
        0,
    );
    let o = check(&lib, "kill", &p);
    has_all(&o.disasm, &["KILLGT", "KILLE_INT", "KILLGE_UINT", "KILL"]);
    assert_eq!(count(&o.hlsl, "discard"), 11, "10 ALU kills + CF KILL\n{}", o.hlsl);
    // the CF KILL discards under the branch's mask (the active flag), inside no ALU clause
    let lines: Vec<&str> = o.hlsl.lines().map(str::trim).collect();
    let last = lines.iter().rposition(|x| x.contains("discard")).unwrap();
    assert!(lines[last].contains("R[133].x != 0") || lines[last].contains("133"), "{}", lines[last]);
}

#[test]
fn mova_and_relative_gpr_and_constant_reads() {
    let lib = lib();
    let p = vs(
        vec![alu(
            "ALU",
            vec![
                g(vec![a("FLT_TO_INT", (4, 0), &[r(1, 0)])]),
                g(vec![
                    a("MOVA_INT", (4, 1), &[r(4, 0)]).nowrite(),
                    a("MOVA_FLOOR", (4, 2), &[r(1, 1)]).nowrite(),
                    a("MOVA", (4, 3), &[r(1, 2)]).nowrite(),
                ]),
                g(vec![
                    a("MOV", (2, 0), &[c(4, 0).rel()]).index(1),
                    a("MOV", (2, 1), &[r(5, 1).rel()]).index(2),
                    a("MOV", (6, 2), &[ONE]).index(3).dst_rel(),
                    a("ADD", (2, 3), &[c(8, 3).rel(), PV.ch(0)]).index(1),
                ]),
            ],
        )],
        2,
    );
    let o = check(&lib, "mova_rel", &p);
    has_all(&o.disasm, &["MOVA_INT", "MOVA_FLOOR", "MOVA"]);
    // relative GPR operands are selects over the reachable GPRs keyed by AR (temp 132)
    assert!(o.hlsl.contains("C[") && (o.hlsl.contains("R[132]") || o.hlsl.contains("R132")) || o.hlsl.contains("AR"), "{}", o.hlsl);
}

#[test]
fn integer_alu_ops() {
    let lib = lib();
    let p = vs(
        vec![alu(
            "ALU",
            vec![
                g(vec![a("FLT_TO_INT", (2, 0), &[r(1, 0)])]),
                gl(
                    vec![
                        a("ADD_INT", (2, 1), &[r(2, 0), lit(0)]),
                        a("AND_INT", (2, 2), &[r(2, 0), lit(1)]),
                        a("LSHL_INT", (2, 3), &[r(2, 0), ONE_INT]),
                        a("LSHR_INT", (3, 0), &[r(2, 0), ONE_INT]),
                        a("MULLO_INT", (3, 1), &[r(2, 0), lit(0)]),
                    ],
                    &[7, 0xFF],
                ),
                g(vec![
                    a("ASHR_INT", (3, 2), &[r(2, 1), ONE_INT]),
                    a("SETE_INT", (3, 3), &[r(2, 1), r(2, 2)]),
                    a("OR_INT", (4, 0), &[r(2, 1), r(2, 2)]),
                    a("XOR_INT", (4, 1), &[r(2, 1), r(2, 2)]),
                    a("INT_TO_FLT", (4, 2), &[r(2, 3)]),
                ]),
                g(vec![
                    a("SUB_INT", (4, 3), &[r(2, 1), ONE_INT]),
                    a("MAX_INT", (5, 0), &[r(2, 1), r(3, 0)]),
                    a("MIN_UINT", (5, 1), &[r(2, 1), r(3, 0)]),
                    a("NOT_INT", (5, 2), &[r(2, 1)]),
                    a("MULHI_UINT", (5, 3), &[r(2, 1), r(3, 0)]),
                ]),
                gl(
                    vec![
                        a("BFE_UINT", (6, 0), &[r(2, 1), ONE_INT, lit(0)]),
                        a("BFE_INT", (6, 1), &[r(2, 1), ONE_INT, lit(0)]),
                        a("BFI_INT", (6, 2), &[r(2, 1), r(2, 2), r(3, 0)]),
                        a("CNDE_INT", (6, 3), &[r(3, 3), r(2, 1), r(2, 2)]),
                        a("UINT_TO_FLT", (7, 0), &[r(6, 0)]),
                    ],
                    &[4],
                ),
                g(vec![
                    a("SETGT_UINT", (7, 1), &[r(6, 0), r(6, 1)]),
                    a("SETGE_INT", (7, 2), &[r(6, 0), r(6, 1)]),
                    a("CNDGT_INT", (7, 3), &[r(6, 0), r(6, 1), r(6, 2)]),
                    a("MIN_INT", (8, 0), &[r(6, 0), r(6, 1)]),
                    a("FLT_TO_UINT", (8, 1), &[r(4, 2)]),
                ]),
                g(vec![a("MULHI_INT", (8, 2), &[r(6, 0), r(6, 1)])]),
                g(vec![a("MULLO_UINT", (8, 3), &[r(6, 0), r(6, 1)])]),
            ],
        )],
        3,
    );
    let o = check(&lib, "int_ops", &p);
    has_all(&o.disasm, &["ADD_INT", "MULLO_INT", "BFE_UINT", "BFI_INT", "CNDE_INT", "FLT_TO_INT", "INT_TO_FLT", "ASHR_INT"]);
    assert!(o.hlsl.contains("asuint") || o.hlsl.contains("asint"), "{}", o.hlsl);
    assert!(o.hlsl.contains("<<") && o.hlsl.contains(">>"), "{}", o.hlsl);
}

#[test]
fn texture_lod_bias_and_gradient_sampling() {
    let lib = lib();
    let mut p = ps(
        vec![texc(vec![
            tex("GET_GRADIENTS_H", 0, 0, 0, 2, [0, 1, 2, 3]),
            tex("GET_GRADIENTS_V", 0, 0, 0, 3, [0, 1, 2, 3]),
            tex("SET_GRADIENTS_H", 0, 0, 2, 0, [0, 1, 2, 3]),
            tex("SET_GRADIENTS_V", 0, 0, 3, 0, [0, 1, 2, 3]),
            tex("SAMPLE_G", 0, 0, 0, 4, [0, 1, 2, 3]),
            tex("SAMPLE_L", 1, 2, 0, 5, [0, 1, 2, 3]),
            tex("SAMPLE_LB", 0, 0, 0, 6, [0, 1, 2, 3]),
            tex("SAMPLE_LZ", 0, 0, 0, 7, [0, 1, 2, 3]),
        ])],
        4,
    );
    p.sampler_vars = vec![SamplerVar { name: "s0".into(), ty: 1, location: 0 }, SamplerVar { name: "s1".into(), ty: 1, location: 1 }];
    let o = check(&lib, "tex_lod_grad", &p);
    has_all(&o.disasm, &["SAMPLE_G", "SAMPLE_L", "SAMPLE_LB", "SAMPLE_LZ", "SET_GRADIENTS_H", "GET_GRADIENTS_V"]);
    has_all(&o.hlsl, &["SampleGrad", "SampleLevel", "SampleBias", "ddx", "ddy"]);
    // a vertex shader may sample with an explicit LOD
    let mut v = vs(vec![texc(vec![tex("SAMPLE_L", 0, 0, 1, 2, [0, 1, 2, 3]), tex("SAMPLE_LZ", 0, 0, 1, 3, [0, 1, 2, 3])])], 2);
    v.sampler_vars = vec![SamplerVar { name: "s0".into(), ty: 1, location: 0 }];
    let o = check(&lib, "tex_vs_lod", &v);
    assert!(o.hlsl.contains("SampleLevel"), "{}", o.hlsl);
}

#[test]
fn cube_and_cube_map_sampling() {
    // the compilers' sequence: CUBE on R0.zzxy / R0.yxzz, RECIP_IEEE of the major axis,
    // MULADD by it + 1.5, SAMPLE with src_sel yxwy on a cube sampler (GX2SamplerVar type 4)
    let lib = lib();
    let cube: Vec<A> =
        [(2, 1), (2, 0), (0, 2), (1, 2)].into_iter().enumerate().map(|(k, (s0, s1))| a("CUBE", (1, k as u8), &[r(0, s0), r(0, s1)])).collect();
    let fetch = |name| texc(vec![tex(name, 0, 0, 1, 2, [1, 0, 3, 1])]);
    let program = |name| {
        vec![
            alu(
                "ALU",
                vec![
                    g(cube.clone()),
                    g(vec![a("RECIP_IEEE", (1, 2), &[r(1, 2)])]),
                    gl(vec![a("MULADD", (1, 0), &[r(1, 0), PS, lit(0)]), a("MULADD", (1, 1), &[r(1, 1), PS, lit(0)])], &[0x3FC0_0000]),
                ],
            ),
            fetch(name),
        ]
    };
    let mut p = ps(program("SAMPLE"), 2);
    p.sampler_vars = vec![SamplerVar { name: "env".into(), ty: 4, location: 0 }];
    let o = check(&lib, "cube", &p);
    has_all(&o.disasm, &["x: CUBE R1.x, R0.z, R0.y", "w: CUBE R1.w, R0.y, R0.z", "SAMPLE R2, R1.yxwy, t0, s0"]);
    has_all(&o.hlsl, &["TextureCube<float4>", ".Sample("]);
    // face-coordinate gradients are not translated (SAMPLE_G, SAMPLE_G_LB); SAMPLE_G_L and
    // SAMPLE_G_LZ do not take their level from the gradients and sample the cube
    for name in ["SAMPLE_G", "SAMPLE_G_LB"] {
        let mut p = ps(program(name), 2);
        p.sampler_vars = vec![SamplerVar { name: "env".into(), ty: 4, location: 0 }];
        let (op, what) = unsupported(formats::translate(ContainerKind::Gfd, &gfd(&p), 0, &TranslateOptions::default()).unwrap_err());
        assert!(op.name() == name && what.contains(&format!("{name} on a cube texture")), "{op}: {what}");
    }
    for name in ["SAMPLE_G_L", "SAMPLE_G_LZ"] {
        let mut p = ps(program(name), 2);
        p.sampler_vars = vec![SamplerVar { name: "env".into(), ty: 4, location: 0 }];
        let o = check(&lib, "cube", &p);
        has_all(&o.hlsl, &["TextureCube<float4>", ".SampleLevel("]);
    }
}

#[test]
fn vtx_fetch_from_a_uniform_block() {
    let lib = lib();
    let mut p = vs(
        vec![
            alu("ALU", vec![g(vec![a("FLT_TO_INT", (2, 0), &[r(1, 0)])])]),
            texc(vec![vfetch(2, 2, 3, 0), vfetch(2, 2, 4, 48)]),
            alu("ALU", vec![g(vec![a("ADD", (3, 0), &[r(3, 0), r(4, 0)])])]),
        ],
        3,
    );
    set_mode_block(&mut p, &[(2, "MdlMtx", 64 * 16)]);
    let o = check(&lib, "vtx_fetch", &p);
    has_all(&o.disasm, &["VTX_FETCH"]);
    assert!(o.hlsl.contains("CB2["), "{}", o.hlsl);
    assert!(o.hlsl.contains("+ (3)]"), "offset 48 bytes = element 3\n{}", o.hlsl);
}

#[test]
fn call_and_return() {
    let lib = lib();
    // 0 CALL_FS, 1 CALL 4, 2 EXP_DONE POS, 3 EXP_DONE PARAM (EOP), 4 ALU (subroutine), 5 RETURN
    let cfs = vec![
        cf("CALL_FS"),
        cf_addr("CALL", 4),
        exp_done(1, 60, 1),
        exp_done(2, 0, 2),
        alu("ALU", vec![g(vec![a("ADD", (2, 0), &[r(1, 0), ONE]), a("MOV", (2, 1), &[ONE])])]),
        cf("RETURN"),
    ];
    let p = shader(ShaderKind::Vertex, assemble(&cfs, 3));
    let o = check(&lib, "call_return", &p);
    has_all(&o.disasm, &["CALL ADDR(4)", "END_OF_PROGRAM\n; subroutines", "05 RETURN"]);
    let prog = isa::decode(&p.program).unwrap();
    assert_eq!((prog.main_len, prog.cfs.len()), (4, 6), "main program + the subroutine after END_OF_PROGRAM");
    assert!(o.hlsl.contains("1.0") || o.hlsl.contains("1.f"), "{}", o.hlsl);
}

// ---------------------------------------------------------------------------------------------
// Rejections: every opcode the README lists as not translated is rejected naming its mnemonic
// ---------------------------------------------------------------------------------------------

/// The translation refuses the opcode `name` with a typed error naming it: `Rejected` when the
/// opcode table marks it rejected, `Unsupported` (a translated opcode out of its limits) else.
fn rejects(s: &Gx2Shader, name: &str) -> Gx2Error {
    let bytes = gfd(s);
    let opts = TranslateOptions::default();
    formats::disasm(ContainerKind::Gfd, &bytes, 0, &opts).unwrap_or_else(|e| panic!("{name}: disasm: {e}"));
    let err = match formats::translate(ContainerKind::Gfd, &bytes, 0, &opts) {
        Ok(_) => panic!("{name} was translated, but the opcode table lists it as rejected"),
        Err(ShaderError::Gx2(e)) => e,
        Err(e) => panic!("{name}: not a GX2 error: {e:?}"),
    };
    match &err {
        Gx2Error::Rejected { op, reason, .. } => {
            assert_eq!(op.name(), name, "{err}");
            assert_eq!(op.status(), Status::Rejected(reason), "{err}");
        }
        Gx2Error::Unsupported { op, .. } => {
            assert_eq!(op.name(), name, "{err}");
            assert!(!op.status().is_rejected(), "{name} is rejected by the table: {err}");
        }
        other => panic!("{name}: {other:?}"),
    }
    err
}

/// A program the translation refuses for a reason that is not one opcode (geometry shader
/// registers, the copy program, ring layouts): the error's text names `what`.
fn rejects_naming(s: &Gx2Shader, what: &str) {
    let bytes = gfd(s);
    let opts = TranslateOptions::default();
    formats::disasm(ContainerKind::Gfd, &bytes, 0, &opts).unwrap_or_else(|e| panic!("{what}: disasm: {e}"));
    match formats::translate(ContainerKind::Gfd, &bytes, 0, &opts) {
        Ok(_) => panic!("{what}: translated"),
        Err(e @ ShaderError::Gx2(_)) => assert!(e.to_string().contains(what), "{what}: {e}"),
        Err(e) => panic!("{what}: not a GX2 error: {e:?}"),
    }
}

/// The `Unsupported` error of a translated opcode used out of its limits: the opcode and the
/// text naming the case.
fn unsupported(e: ShaderError) -> (Opcode, String) {
    match e {
        ShaderError::Gx2(Gx2Error::Unsupported { op, what, .. }) => (op, what),
        other => panic!("not Unsupported: {other:?}"),
    }
}

/// One ALU group using `name` (in all four vector slots for a reduction op).
fn alu_with(name: &'static str) -> Gx2Shader {
    let fl = isa::AluOp::from_name(name).unwrap().flags();
    let srcs = [r(0, 0), r(0, 1), r(0, 2)];
    let insts = if fl & isa::flags::REDUC != 0 { (0..4).map(|k| a(name, (1, k), &srcs)).collect() } else { vec![a(name, (1, 0), &srcs)] };
    ps(vec![alu("ALU", vec![g(insts)])], 1)
}

/// The opcode table and the lowering agree (1): every ALU opcode the table rejects is refused
/// with `Gx2Error::Rejected` naming it and the table's reason.
#[test]
fn rejected_alu_opcodes_are_named() {
    let rejected: Vec<isa::AluOp> = isa::AluOp::ALL.iter().copied().filter(|o| o.status().is_rejected()).collect();
    for &op in &rejected {
        assert!(matches!(rejects(&alu_with(op.name()), op.name()), Gx2Error::Rejected { op: Opcode::Alu(o), .. } if o == op));
    }
    let translated = isa::AluOp::ALL.len() - rejected.len();
    assert_eq!((translated, rejected.len()), (108, 42), "docs/opcodes/gx2.md: 108 ALU opcodes translated, 42 rejected");
}

/// The opcode table and the lowering agree (2): every other ALU opcode, alone in a pixel shader,
/// translates (PRED_SET*/KILL* included; MOVA* need a vector slot, which alu_with gives).
#[test]
fn every_other_alu_opcode_translates() {
    for op in isa::AluOp::ALL.iter().copied().filter(|o| !o.status().is_rejected()) {
        shrec::formats::gx2::lower::lower(&alu_with(op.name())).unwrap_or_else(|e| panic!("{op}: {e}"));
    }
}

#[test]
fn rejected_tex_opcodes_are_named() {
    let mut n = 0;
    // TEX_INST is 5 bits: the table's entries 32-37 (SET_TEXTURE_OFFSETS, GATHER4*,
    // GET_BUFFER_RESINFO) cannot occur in a Latte TEX word
    assert!(isa::TexOp::ALL.iter().filter(|o| o.code() >= 32).all(|o| o.status().is_rejected()));
    for op in isa::TexOp::ALL.iter().copied().filter(|o| o.code() < 32 && o.status().is_rejected()) {
        let mut p = ps(vec![texc(vec![tex(op.name(), 0, 0, 0, 1, [0, 1, 2, 3])])], 1);
        p.sampler_vars = vec![SamplerVar { name: "s0".into(), ty: 1, location: 0 }];
        assert!(matches!(rejects(&p, op.name()), Gx2Error::Rejected { op: Opcode::Tex(o), .. } if o == op));
        n += 1;
    }
    // 17 until SAMPLE_G_L / _LB / _LZ were translated, 14 until the six SAMPLE_C_L / _LB / _G*
    // forms were (shader model 6.7 / 6.8 compares), 8 until GET_COMP_TEX_LOD and
    // SET_CUBEMAP_INDEX were, 6 until MEM's scratch reads were (verify_gx2 `scratch_refusals`
    // names what MEM still refuses)
    assert_eq!(n, 5);
    // VTX_FETCH of a non-uniform buffer; SAMPLE with unnormalized coordinates, texel offsets, relative GPRs
    let mut p = ps(vec![texc(vec![tex("VTX_FETCH", 5, 0, 0, 1, [0, 1, 2, 3])])], 1);
    rejects(&p, "VTX_FETCH");
    let mut t = tex("SAMPLE", 0, 0, 0, 1, [0, 1, 2, 3]);
    t.0[1] &= !(1 << 28);
    p = ps(vec![texc(vec![t])], 1);
    let (op, what) = unsupported(formats::translate(ContainerKind::Gfd, &gfd(&p), 0, &TranslateOptions::default()).unwrap_err());
    assert!(op.name() == "SAMPLE" && what.contains("SAMPLE with unnormalized"), "{op}: {what}");
    // texel offsets (half-texel units): whole texels translate to the HLSL offset operand; a
    // half texel, or a z offset on a 2D resource, is rejected
    let mut t = tex("SAMPLE", 0, 0, 0, 1, [0, 1, 2, 3]);
    t.0[2] |= 2 | (0x1C << 5);
    p = ps(vec![texc(vec![t])], 1);
    let hlsl = shrec::hlsl::write(&formats::translate(ContainerKind::Gfd, &gfd(&p), 0, &TranslateOptions::default()).unwrap().module);
    assert!(hlsl.contains("int2(1, -2)"), "offset (2, -4) half texels = int2(1, -2)\n{hlsl}");
    let mut t = tex("SAMPLE", 0, 0, 0, 1, [0, 1, 2, 3]);
    t.0[2] |= 1;
    p = ps(vec![texc(vec![t])], 1);
    let (op, what) = unsupported(formats::translate(ContainerKind::Gfd, &gfd(&p), 0, &TranslateOptions::default()).unwrap_err());
    assert!(op.name() == "SAMPLE" && what.contains("SAMPLE with a half-texel offset (0.5 texels)"), "{op}: {what}");
    let mut t = tex("SAMPLE", 0, 0, 0, 1, [0, 1, 2, 3]);
    t.0[2] |= 2 << 10;
    p = ps(vec![texc(vec![t])], 1);
    let (op, what) = unsupported(formats::translate(ContainerKind::Gfd, &gfd(&p), 0, &TranslateOptions::default()).unwrap_err());
    assert!(op.name() == "SAMPLE" && what.contains("SAMPLE with a texel offset on lane 2 of a 2-lane resource"), "{op}: {what}");
    let mut t = tex("SAMPLE", 0, 0, 0, 1, [0, 1, 2, 3]);
    t.0[0] |= 1 << 23;
    p = ps(vec![texc(vec![t])], 1);
    let (op, what) = unsupported(formats::translate(ContainerKind::Gfd, &gfd(&p), 0, &TranslateOptions::default()).unwrap_err());
    assert!(op.name() == "SAMPLE" && what.contains("SAMPLE with relative GPR"), "{op}: {what}");
}

/// Sampler declarations: shadow and 2D-array types become comparison samplers and
/// `Texture2DArray`s; the types shrec does not translate, a SAMPLE on a shadow sampler, a
/// SAMPLE_C on a plain one, a SAMPLE_C reading lane y of its result and an array fetch with a
/// normalized slice are refused naming the case.
#[test]
fn sampler_types_and_their_fetches() {
    let shader = |name: &str, ty: u32, dst_sel_y: u32, slice_normalized: bool| {
        let mut t = tex(name, 0, 0, 0, 1, [0, 1, 2, 3]);
        // DST_SEL x, `dst_sel_y`, masked, masked
        t.0[1] = (t.0[1] & !(0x1FF << 12)) | dst_sel_y << 12 | 7 << 15 | 7 << 18;
        if !slice_normalized {
            t.0[1] &= !(1 << 30);
        }
        let mut p = ps(vec![texc(vec![t])], 1);
        p.sampler_vars = vec![SamplerVar { name: "s0".into(), ty, location: 0 }];
        p
    };
    let translate = |p: &Gx2Shader| formats::translate(ContainerKind::Gfd, &gfd(p), 0, &TranslateOptions::default());
    for (name, ty, dst_sel_y, want) in [
        ("SAMPLE_C", 6, 4, "Texture2D<float4> t0_s0 : register(t0, space1);"),
        ("SAMPLE_C_LZ", 12, 7, "Texture2DArray<float4> t0_s0"),
        ("SAMPLE_C", 8, 0, "TextureCube<float4> t0_s0"),
        ("SAMPLE", 10, 1, "Texture2DArray<float4> t0_s0"),
        ("FETCH4", 10, 1, ".GatherRed("),
        ("GET_COMP_TEX_LOD", 1, 1, ".CalculateLevelOfDetail("),
        ("GET_COMP_TEX_LOD", 10, 0, ".CalculateLevelOfDetailUnclamped("),
    ] {
        let hlsl = shrec::hlsl::write(&translate(&shader(name, ty, dst_sel_y, false)).unwrap_or_else(|e| panic!("{name} type {ty}: {e}")).module);
        assert!(hlsl.contains(want), "{name} type {ty}: {want}\n{hlsl}");
        assert_eq!(hlsl.contains("SamplerComparisonState"), name.starts_with("SAMPLE_C"), "{name} type {ty}\n{hlsl}");
    }
    for (name, ty, dst_sel_y, normalized, why) in [
        ("SAMPLE", 2, 1, false, "a rectangle"),
        ("SAMPLE", 13, 1, false, "with no SET_CUBEMAP_INDEX for it earlier"),
        ("GET_COMP_TEX_LOD", 1, 2, false, "reading lane z or w"),
        ("GET_COMP_TEX_LOD", 4, 1, false, "on a cube texture"),
        ("SAMPLE", 20, 1, false, "an integer-format sampler"),
        ("SAMPLE", 6, 1, false, "SAMPLE on a shadow sampler"),
        ("SAMPLE_C", 1, 4, false, "SAMPLE_C on a sampler not declared shadow"),
        ("SAMPLE_C", 6, 1, false, "SAMPLE_C reading lane y, z or w"),
        ("SAMPLE", 10, 1, true, "normalized slice coordinate"),
        ("FETCH4", 3, 1, false, "2D and 2D-array only"),
    ] {
        let (op, what) = unsupported(translate(&shader(name, ty, dst_sel_y, normalized)).unwrap_err());
        assert!(op.name() == name && what.contains(why), "{name} type {ty}: {op}: {what}");
    }
    // a cube array (types 13, 14) samples with the index its resource's SET_CUBEMAP_INDEX set
    for (ty, name) in [(13, "SAMPLE"), (14, "SAMPLE_C_LZ")] {
        // DST_SEL x, then masked (a compare defines lane x only)
        let mut sample = tex(name, 0, 0, 0, 1, [0, 1, 2, 3]);
        sample.0[1] |= 0x1FF << 12;
        let mut p = ps(vec![texc(vec![tex("SET_CUBEMAP_INDEX", 0, 0, 2, 0, [3, 0, 0, 0]), sample])], 1);
        p.sampler_vars = vec![SamplerVar { name: "s0".into(), ty, location: 0 }];
        let hlsl = shrec::hlsl::write(&translate(&p).unwrap_or_else(|e| panic!("{name} type {ty}: {e}")).module);
        assert!(hlsl.contains("TextureCubeArray<float4> t0_s0") && hlsl.contains("R2.w"), "{name} type {ty}\n{hlsl}");
        // DXIL and SPIR-V (spirv-val) of the cube-array sample
        check(&lib(), &format!("cube_array_{ty}"), &p);
    }
    // GET_COMP_TEX_LOD on a 2D array compiles for both targets
    check(&lib(), "comp_tex_lod_2d_array", &shader("GET_COMP_TEX_LOD", 10, 1, false));
}

/// LD and GET_TEXTURE_INFO: 1D/2D and 3D resources translate (DXIL and SPIR-V, spirv-val) to
/// `Load` / `shrec_tex_info` on the integer bit patterns of the source lanes (LD: xy[z] and the
/// level in w; GET_TEXTURE_INFO: the level in x), in pixel and vertex shaders; LD with texel
/// offsets (Mesa r600: they do not work with LD) and both on cube textures (not documented) are
/// refused naming the case.
#[test]
fn ld_and_get_texture_info() {
    let lib = lib();
    let shader = |name: &str, ty: u32, offset: u32, vertex: bool| {
        let mut t = tex(name, 0, 0, 0, 1, [2, 1, 0, 3]);
        t.0[2] |= offset;
        let mut p = if vertex { vs(vec![texc(vec![t])], 1) } else { ps(vec![texc(vec![t])], 1) };
        p.sampler_vars = vec![SamplerVar { name: "s0".into(), ty, location: 0 }];
        p
    };
    for (ty, load) in [(0, ".Load(int3(asint(("), (1, ".Load(int3(asint(("), (3, ".Load(int4(asint((")] {
        for vertex in [false, true] {
            let o = check(&lib, &format!("ld_{ty}_{vertex}"), &shader("LD", ty, 0, vertex));
            assert!(o.hlsl.contains(load) && o.hlsl.contains(").x)))"), "LD type {ty}\n{}", o.hlsl);
            let o = check(&lib, &format!("get_texture_info_{ty}_{vertex}"), &shader("GET_TEXTURE_INFO", ty, 0, vertex));
            assert!(o.hlsl.contains("shrec_tex_info(t0_s0, asuint(("), "GET_TEXTURE_INFO type {ty}\n{}", o.hlsl);
        }
    }
    for (name, ty, offset, want) in [
        ("LD", 1, 2, "LD with texel offsets"),
        ("LD", 3, 2 << 10, "LD with texel offsets"),
        ("LD", 4, 0, "LD on a cube texture"),
        ("GET_TEXTURE_INFO", 4, 0, "GET_TEXTURE_INFO on a cube texture"),
        ("GET_TEXTURE_INFO", 9, 0, "GET_TEXTURE_INFO on a 1D array texture"),
        ("GET_TEXTURE_INFO", 11, 0, "GET_TEXTURE_INFO on a 1D array texture"),
    ] {
        let (op, what) =
            unsupported(formats::translate(ContainerKind::Gfd, &gfd(&shader(name, ty, offset, false)), 0, &TranslateOptions::default()).unwrap_err());
        assert!(op.name() == name && what.contains(want), "{name} type {ty}: {op}: {what}");
    }
}

#[test]
fn rejected_cf_and_vtx_clauses_are_named() {
    // vertex fetch clauses, with each VTX instruction (FETCH, SEMANTIC, BUFINFO) in them
    for (op, vtx) in [("VTX", 0u32), ("VTX_TC", 1), ("VTX_ACK", 0xE), ("VTX_TC_ACK", 0)] {
        let c = C::N { op, addr: 0, pop: 0, cf_const: 0, tex: vec![T([vtx, 1, 0])] };
        let p = vs(vec![c], 2);
        let d = formats::disasm(ContainerKind::Gfd, &gfd(&p), 0, &TranslateOptions::default()).unwrap();
        assert!(d.contains(isa::VtxOp::from_code(vtx).unwrap().name()), "{d}");
        rejects(&p, op);
    }
    for op in ["EMIT_VERTEX", "EMIT_CUT_VERTEX", "CUT_VERTEX"] {
        rejects(&vs(vec![cf(op)], 2), op);
    }
    // CF KILL outside a pixel shader
    rejects(&vs(vec![cf("KILL")], 2), "KILL");
}

#[test]
fn rejected_alu_cf_and_export_ops_are_named() {
    rejects(&ps(vec![alu("ALU_EXT", vec![g(vec![a("MOV", (1, 0), &[ONE])])])], 1), "ALU_EXT");
    for (op, name) in [
        (0x20, "MEM_STREAM0"),
        (0x21, "MEM_STREAM1"),
        (0x22, "MEM_STREAM2"),
        (0x23, "MEM_STREAM3"),
        (0x24, "MEM_SCRATCH"),
        (0x25, "MEM_REDUCTION"),
        (0x3A, "MEM_EXPORT"),
    ] {
        rejects(&vs(vec![C::Mem { op }], 2), name);
    }
    // a VS with MEM_RING is an ES; this one also exports
    rejects_naming(&vs(vec![C::Mem { op: 0x26 }], 2), "MEM_RING");
}

// ---------------------------------------------------------------------------------------------
// Geometry shaders (ring model, docs/gx2.md "GX2 geometry shaders")
// ---------------------------------------------------------------------------------------------

mod geometry {
    use super::*;
    use shrec_verify::gx2_gs::{copy_program, geometry_shader};

    fn ring(ty: u32, base: u32, gpr: u32) -> C {
        C::Ring { ty, base, gpr, index_gpr: 9, burst: 0, mask: 0xF }
    }

    /// GS: fetch three vertices' slot 0 and 1, write two strips (WRITE and WRITE_IND), cut.
    fn gs_program(out_prim: u32) -> Gx2Shader {
        let mut f = Vec::new();
        for (k, (g, ch)) in [(0, 0), (0, 1), (0, 3)].into_iter().enumerate() {
            f.push(ring_fetch(g, ch, 2 + k as u32, [0, 1, 2, 3], 0));
            f.push(ring_fetch(g, ch, 5 + k as u32, [0, 1, 2, 7], 16));
        }
        let p = vec![
            C::N { op: "VTX", addr: 0, pop: 0, cf_const: 0, tex: f },
            alu("ALU", vec![g(vec![a("MOV", (9, 0), &[ZERO])])]),
            ring(0, 0, 2),
            ring(0, 4, 5),
            cf("EMIT_VERTEX"),
            ring(0, 8, 3),
            ring(0, 12, 6),
            cf("EMIT_CUT_VERTEX"),
            ring(1, 16, 4),
            ring(1, 20, 7),
            cf("EMIT_VERTEX"),
            cf("CUT_VERTEX"),
        ];
        geometry_shader(assemble(&p, p.len() - 1), copy_program(Some(0), &[1]), out_prim, 8, 4, 1, vec![])
    }

    fn es_program() -> Gx2Shader {
        let p = vec![cf("CALL_FS"), C::Ring { ty: 0, base: 0, gpr: 1, index_gpr: 0, burst: 1, mask: 0xF }];
        shrec_verify::gx2::vertex_shader(assemble(&p, p.len() - 1), 2, 0, false, vec![])
    }

    #[test]
    fn geometry_shader_and_es_translate() {
        let lib = lib();
        for (out_prim, stream) in [(2, "TriangleStream"), (1, "LineStream"), (0, "PointStream")] {
            let gs = gs_program(out_prim);
            let o = check(&lib, &format!("gs{out_prim}"), &gs);
            has_all(&o.disasm, &["EMIT_VERTEX", "EMIT_CUT_VERTEX", "CUT_VERTEX", "MEM_RING", "FETCH", "b159", "; copy program", "EXP_DONE"]);
            has_all(&o.hlsl, &[stream, "Append", "RestartStrip", "shrec_local", "SV_PrimitiveID", "[maxvertexcount(4)]"]);
            assert_eq!(count(&o.hlsl, "RestartStrip"), 2, "{}", o.hlsl);
            assert_eq!(count(&o.hlsl, ".Append("), 3, "one Append per EMIT: {}", o.hlsl);
            // the key covers the GS program and the copy program
            let e = formats::entries(ContainerKind::Gfd, &gfd(&gs)).unwrap();
            let sh = shrec::formats::gx2::shader_struct::key_geometry(&gs.program, &gs.copy_program);
            assert_eq!(e[0].key, sh);
            assert_ne!(e[0].key, shrec::formats::gx2::shader_struct::key(&gs.program));
            let back = shrec::formats::gx2::gfd::load(&gfd(&gs), 0).unwrap();
            assert_eq!(back.copy_program, gs.copy_program);
        }
        let o = check(&lib, "es", &es_program());
        has_all(&o.disasm, &["MEM_RING", "BURSTCNT(1)"]);
        has_all(&o.hlsl, &["ring0", "ring1", "TEXCOORD0", "TEXCOORD1"]);
    }

    #[test]
    fn geometry_rejections_are_named() {
        let base = gs_program(2);
        // output primitive type 3
        let mut s = base.clone();
        s.words[1] = 3;
        rejects_naming(&s, "VGT_GS_OUT_PRIM_TYPE");
        // a copy program with an ALU clause
        let mut s = base.clone();
        let c = vec![
            alu("ALU", vec![G(vec![a("MOV", (1, 0), &[special(249)])], vec![])]),
            C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] },
        ];
        s.copy_program = assemble(&c, 1);
        rejects_naming(&s, "ALU (a copy program only fetches the ring and exports)");
        // no copy program
        let mut s = base.clone();
        s.copy_program.clear();
        rejects_naming(&s, "no copy program");
        // MEM_RING with ELEM_SIZE 0 and a ring FETCH from another buffer
        let p = vec![C::Ring { ty: 0, base: 0, gpr: 1, index_gpr: 0, burst: 0, mask: 0xF }, cf("EMIT_VERTEX")];
        let mut w = assemble(&p, 1);
        w[3] &= 0x3F; // ELEM_SIZE 0 (word 0 bits 30-31)
        let mut s = base.clone();
        s.program = w;
        rejects_naming(&s, "MEM_RING with ELEM_SIZE 0");
        let mut t = ring_fetch(0, 0, 2, [0, 1, 2, 3], 0);
        t.0[0] = t.0[0] & !(0xFF << 8) | 3 << 8;
        let p = vec![C::N { op: "VTX", addr: 0, pop: 0, cf_const: 0, tex: vec![t] }, cf("EMIT_VERTEX")];
        let mut s = base.clone();
        s.program = assemble(&p, 1);
        rejects_naming(&s, "FETCH from buffer 3");
        // EXP in a GS (its exports go through the ring)
        let p = vec![C::Exp { done: true, ty: 2, base: 0, gpr: 1, burst: 0, sel: [0, 1, 2, 3] }];
        let mut s = base.clone();
        s.program = assemble(&p, 0);
        rejects_naming(&s, "EXP to target type 2");
        // an ES that also exports
        let p = vec![cf("CALL_FS"), ring(0, 0, 1), C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] }];
        rejects_naming(&shrec_verify::gx2::vertex_shader(assemble(&p, 2), 1, 0, false, vec![]), "MEM_RING (as ES) and EXP");
    }
}

#[test]
fn param_export_with_semantic_ff_is_dropped() {
    // SPI_VS_OUT_ID semantic 0xFF marks a parameter no pixel shader reads (libgui's FXAA vertex
    // shader exports PARAM0 with semantic 0xFF): decaf's compileVertexShader writes no output for
    // it. Declaring it gave a TEXCOORD255 output (location 255, past any Vulkan location limit;
    // lavapipe crashed running it).
    let lib = lib();
    let cfs = vec![cf("CALL_FS"), exp_done(1, 60, 1), C::Exp { done: false, ty: 2, base: 0, gpr: 1, burst: 0, sel: [0, 1, 2, 3] }, exp_done(2, 1, 1)];
    let n = cfs.len();
    let mut p = shader(ShaderKind::Vertex, assemble(&cfs, n - 1));
    p.words[0x08 / 4] = 1 << 1; // two PARAM exports
    p.words[0x10 / 4] = 0xFFFF_FF07; // PARAM0 → semantic 7, PARAM1 → 0xFF
    let o = check(&lib, "param_semantic_ff", &p);
    has_all(&o.hlsl, &["TEXCOORD7"]);
    assert!(!o.hlsl.contains("TEXCOORD255") && !o.hlsl.contains("location(255)"), "{}", o.hlsl);
}

/// The depth compares at an explicit LOD, with a bias or with gradients compile for DXIL with
/// their shader model (SampleCmpLevel: 6.7; SampleCmpBias / SampleCmpGrad: 6.8) and for SPIR-V
/// through DXC's placeholder and `dxc::dref::rewrite` (spirv-val on both the optimized and the
/// as-lowered text, in `check`); the text declares the model. The forms the sources do not
/// place are refused by name: a LOD-lane form on a 2D array or cube (z holds the slice or face),
/// a gradient form on a cube, SAMPLE_C_LB outside a pixel shader.
#[test]
fn compare_levels_compile_with_their_shader_model() {
    let lib = lib();
    let shadow = |ty: u32, p: &mut Gx2Shader| p.sampler_vars = vec![SamplerVar { name: "s0".into(), ty, location: 0 }];
    let grads = || vec![tex("SET_GRADIENTS_H", 0, 0, 0, 0, [0, 1, 2, 4]), tex("SET_GRADIENTS_V", 0, 0, 0, 0, [1, 0, 2, 4])];
    let cases: [(&str, u32, &str, &str); 9] = [
        ("SAMPLE_C_L", 6, "SampleCmpLevel", "6_7"),
        ("SAMPLE_C_G_L", 6, "SampleCmpLevel", "6_7"),
        ("SAMPLE_C_LB", 6, "SampleCmpBias", "6_8"),
        ("SAMPLE_C_G", 6, "SampleCmpGrad", "6_8"),
        ("SAMPLE_C_G", 12, "SampleCmpGrad", "6_8"),
        ("SAMPLE_C_G_LB", 6, "SampleCmpGrad", "6_8"),
        ("SAMPLE_C_G_LZ", 6, "SampleCmpLevelZero", ""),
        ("SAMPLE_C_G_LZ", 12, "SampleCmpLevelZero", ""),
        ("SAMPLE_C_G_LZ", 8, "SampleCmpLevelZero", ""),
    ];
    for (name, ty, method, model) in cases {
        for offset in [false, true] {
            if offset && ty == 8 {
                continue; // no offsets on cubes
            }
            let mut fetch = tex(name, 0, 0, 0, 1, [0, 1, 2, 3]);
            fetch.0[1] &= !(0xFFF << 9); // DST_SEL x, 0, 1, x: lane x only is defined
            fetch.0[1] |= (4 << 12) | (5 << 15);
            if ty == 12 {
                fetch.0[1] &= !(1 << 30); // the slice lane is unnormalized
            }
            if offset {
                fetch.0[2] |= 2 | (0x1C << 5); // (1, -2) texels
            }
            let mut fetches = grads();
            fetches.push(fetch);
            let mut p = ps(vec![texc(fetches)], 1);
            shadow(ty, &mut p);
            let o = check(&lib, &format!("{name}_type{ty}_offset{offset}"), &p);
            has_all(&o.hlsl, &[method]);
            if model.is_empty() {
                assert!(!o.hlsl.contains(shrec::hlsl::SHADER_MODEL_LINE), "{name}: shader model 6.0\n{}", o.hlsl);
            } else {
                assert_eq!(shrec::hlsl::declared_shader_model(&o.hlsl).map(|m| m.suffix()), Ok(model), "{name}\n{}", o.hlsl);
            }
            if offset {
                has_all(&o.hlsl, &["int2(1, -2)"]);
            }
        }
    }
    // SAMPLE_C with LOD_BIAS in a pixel shader: SampleCmpBias
    let mut fetch = tex("SAMPLE_C", 0, 0, 0, 1, [0, 1, 2, 3]);
    fetch.0[1] &= !(0xFFF << 9);
    fetch.0[1] |= 8 << 21; // LOD_BIAS 1.0
    let mut p = ps(vec![texc(vec![fetch])], 1);
    shadow(6, &mut p);
    has_all(&check(&lib, "SAMPLE_C_lod_bias", &p).hlsl, &["SampleCmpBias", "1.0"]);
    // the stage profile follows the declared model
    use shrec::ir::{ShaderModel, Stage};
    assert_eq!(dxc::target_profile_for_model(Stage::Pixel, Target::Dxil, 0, ShaderModel::Sm6_8), "ps_6_8");
    assert_eq!(dxc::target_profile_for_model(Stage::Vertex, Target::Spirv, 0, ShaderModel::Sm6_7), "vs_6_7");
    assert_eq!(dxc::target_profile_for_model(Stage::Vertex, Target::Dxil, 1, ShaderModel::Sm6_8), "lib_6_8");
    assert_eq!(dxc::target_profile_for_model(Stage::Pixel, Target::Dxil, 0, ShaderModel::Sm6_0), "ps_6_0");
    // refused by name
    for (name, ty, why) in [("SAMPLE_C_L", 12, "slice or face"), ("SAMPLE_C_LB", 8, "slice or face"), ("SAMPLE_C_G", 8, "gradients")] {
        let mut fetch = tex(name, 0, 0, 0, 1, [0, 1, 2, 3]);
        fetch.0[1] &= !(0xFFF << 9);
        fetch.0[1] &= !(1 << 30);
        let mut p = ps(vec![texc(vec![fetch])], 1);
        shadow(ty, &mut p);
        let (op, what) = unsupported(formats::translate(ContainerKind::Gfd, &gfd(&p), 0, &TranslateOptions::default()).unwrap_err());
        assert!(op.name() == name && what.contains(why), "{name} on type {ty}: {op}: {what}");
    }
    let mut fetch = tex("SAMPLE_C_LB", 0, 0, 0, 1, [0, 1, 2, 3]);
    fetch.0[1] &= !(0xFFF << 9);
    let mut p = vs(vec![texc(vec![fetch])], 1);
    shadow(6, &mut p);
    let (_, what) = unsupported(formats::translate(ContainerKind::Gfd, &gfd(&p), 0, &TranslateOptions::default()).unwrap_err());
    assert!(what.contains("outside a pixel shader"), "{what}");
}
