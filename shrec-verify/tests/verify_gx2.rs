//! Verification by execution of the GX2 (Latte) path (see `shrec::verify`): every translated
//! OP2/OP3 ALU op, TEX op and CF form, the corpus VS/PS and a fixed-seed differential fuzzing
//! sample, run as GX2 struct → decode → lower → HLSL → DXC SPIR-V → lavapipe (vertex stage or
//! 2×2 pixel quads) and compared lane by lane with the reference interpreter
//! (`shrec_verify::interp::gx2`).
//!
//! Commands:
//! - `cargo test --release --test verify_gx2`
//! - `SHREC_FUZZ_PROGRAMS=10000 SHREC_FUZZ_PROGRESS=1 cargo test --release --test verify_gx2 -- --ignored long_fuzz --nocapture --test-threads=1`
//!   (one GPU thread; `SHREC_FUZZ_THREADS=n` for more)
//! - `SHREC_REDUCE="fuzz S I"` (or `"shaped S I"`, or `"single_op OP vertex|pixel SEED"`) `cargo test --release --test verify_gx2 -- --ignored reduce --nocapture`: shrink a mismatching program, print it with the interpreter trace
//! - `SHREC_FUZZ_SEED=S SHREC_FUZZ_ONLY=I cargo test --release --test verify_gx2 -- --ignored fuzz_one --nocapture`

use shrec_testkit as common;

use shrec::detect::ContainerKind;
use shrec::formats::gx2::isa;
use shrec::formats::gx2::shader_struct::{LoopVar, SamplerVar, ShaderKind};
use shrec_verify::gx2::{self, asm::*, gen, TestProgram};
use shrec_verify::mutation::{set_mutation, Mutation};
use shrec_verify::{vk, Comparison};

/// CF forms (normal, ALU and export) the random programs must reach.
const CF_FORMS: &[&str] = &[
    "CALL_FS",
    "ALU",
    "ALU_PUSH_BEFORE",
    "ALU_POP_AFTER",
    "ALU_POP2_AFTER",
    "ALU_ELSE_AFTER",
    "ALU_BREAK",
    "ALU_CONTINUE",
    "PUSH",
    "PUSH_ELSE",
    "ELSE",
    "POP",
    "POP_JUMP",
    "POP_PUSH",
    "POP_PUSH_ELSE",
    "LOOP_START",
    "LOOP_START_DX10",
    "LOOP_START_NO_AL",
    "LOOP_END",
    "LOOP_BREAK",
    "LOOP_CONTINUE",
    "CALL",
    "RETURN",
    "KILL",
    "TEX",
    "EXP_DONE",
];

fn finish(what: &str, c: &Comparison, ops: &[&str], min_comparisons: u64) {
    for r in &c.reports {
        println!("{r}");
    }
    common::log_uncaptured(&format!(
        "verify gx2: {} comparisons, {} mismatches, {} opcodes executed ({what}: {} programs, {} inconclusive; worst toleranced lane {:.1} ulp, {:.1}% of its bound)",
        c.comparisons,
        c.mismatches,
        c.opcodes.len(),
        c.programs,
        c.inconclusive,
        c.worst_ulps,
        c.worst_fraction * 100.0
    ));
    assert_eq!(c.mismatches, 0, "{what}: mismatches (reports above)");
    assert!(c.comparisons >= min_comparisons, "{what}: only {} comparisons", c.comparisons);
    let missing: Vec<&&str> = ops.iter().filter(|o| !c.opcodes.contains(**o)).collect();
    assert!(missing.is_empty(), "{what}: never executed: {missing:?}");
}

fn gpu() -> Option<&'static vk::Gpu> {
    gx2::gpu_or_skip()
}

/// Every ALU op the generator places, KILL* apart (pixel shaders only), in table order.
fn all_alu_ops() -> Vec<&'static str> {
    use gen::Class;
    isa::AluOp::ALL.iter().filter(|o| !matches!(gen::class(**o), Class::Kill | Class::NotGenerated)).map(|o| o.name()).collect()
}

/// Every translated ALU op (OP2 and OP3), in VS and PS programs that force it into their groups.
#[test]
fn per_alu_op() {
    let Some(gpu) = gpu() else { return };
    let mut total = Comparison::default();
    let ops = all_alu_ops();
    for &op in &ops {
        for (k, kind) in [ShaderKind::Vertex, ShaderKind::Pixel].into_iter().enumerate() {
            for seed in 0..2 {
                total.merge(gx2::run(gpu, &gen::single_op(op, kind, 2 * seed + k as u64)));
            }
        }
    }
    for &op in gen::KILL.iter() {
        for seed in 0..3 {
            total.merge(gx2::run(gpu, &gen::single_op(op, ShaderKind::Pixel, seed)));
        }
    }
    let mut want = ops.clone();
    want.extend(gen::KILL.iter());
    want.push("NOP");
    // the generator's classes leave out only NOP and the ops the table marks Rejected
    let translated: Vec<&str> = isa::AluOp::ALL.iter().filter(|o| !o.status().is_rejected()).map(|o| o.name()).collect();
    let untested: Vec<&&str> = translated.iter().filter(|o| !want.contains(o)).collect();
    assert!(untested.is_empty(), "translated ALU ops no test generates: {untested:?}");
    finish("per_alu_op", &total, &want, 20_000);
}

fn mov(d: (u32, u8), s: S) -> A {
    a("MOV", d, &[s])
}

/// Hand-written control flow with known outcomes: nested branches, ELSE, every loop kind with
/// AL, break / continue, CALL / RETURN, and CF KILL — each compared with the interpreter.
#[test]
fn control_flow_forms() {
    let Some(gpu) = gpu() else { return };
    let mut total = Comparison::default();
    let exp = |gpr: u32| C::Exp { done: true, ty: 2, base: 0, gpr, burst: 0, sel: [0, 1, 2, 3] };
    let pos = C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] };
    let cond = |name: &'static str, x: S, y: S| {
        let mut p = a(name, (9, 0), &[x, y]);
        p.exec = true;
        p.pred = true;
        p.write = false;
        G(vec![p], vec![])
    };
    let zero2 = G(vec![mov((2, 0), special(248)), mov((2, 1), special(248)), mov((2, 2), special(248)), mov((2, 3), special(248))], vec![]);
    let add = |d: (u32, u8), s: S| G(vec![a("ADD", d, &[r(d.0, d.1), s])], vec![]);
    // if (v0.x > v0.y) { R2.x += 1 } else { R2.y += 1 }; nested push inside
    let prog1 = vec![
        cf("CALL_FS"),
        alu("ALU", vec![zero2.clone()]),
        alu("ALU_PUSH_BEFORE", vec![cond("PRED_SETGT", r(1, 0), r(1, 1))]),
        alu("ALU", vec![add((2, 0), special(249))]),
        alu("ALU_PUSH_BEFORE", vec![cond("PRED_SETGT", r(1, 2), special(248))]),
        alu("ALU_ELSE_AFTER", vec![add((2, 2), special(249))]),
        alu("ALU_POP_AFTER", vec![add((2, 3), special(249))]),
        // as compilers emit it: POP_CNT(1), jumping past the POP it stands for
        C::N { op: "ELSE", addr: 10, pop: 1, cf_const: 0, tex: vec![] },
        alu("ALU", vec![add((2, 1), special(249))]),
        cf_pop("POP", 1),
        pos.clone(),
        exp(2),
    ];
    total.merge(gx2::run(gpu, &gen::fixed("branches", ShaderKind::Vertex, &prog1, prog1.len() - 1, vec![], false, 1)));
    // bounded loops: LOOP_START with AL (count 3, init -1, inc 2) reading R[4 + AL] relative,
    // nested LOOP_START_NO_AL (count 2), and a DX10 loop with ALU_BREAK / LOOP_CONTINUE
    let lv = |count: u32, init: i32, inc: i32| count | (init as u32 & 0xFFF) << 12 | (inc as u32 & 0xFF) << 24;
    let mut rel = mov((3, 0), r(4, 1).rel());
    rel.index_mode = 4;
    let prog2 = vec![
        cf("CALL_FS"),
        alu(
            "ALU",
            vec![
                zero2.clone(),
                G(vec![mov((3, 0), special(248)), mov((3, 1), r(1, 0))], vec![]),
                G(vec![mov((5, 1), r(1, 1))], vec![]),
                G(vec![mov((7, 1), r(1, 2))], vec![]),
            ],
        ),
        C::N { op: "LOOP_START", addr: 0, pop: 0, cf_const: 0, tex: vec![] },
        alu("ALU", vec![G(vec![rel], vec![]), add((2, 0), r(3, 0))]),
        C::N { op: "LOOP_START_NO_AL", addr: 0, pop: 0, cf_const: 1, tex: vec![] },
        alu("ALU", vec![add((2, 1), special(249))]),
        cf("LOOP_END"),
        cf("LOOP_END"),
        alu("ALU", vec![G(vec![mov((7, 0), special(248))], vec![])]),
        C::N { op: "LOOP_START_DX10", addr: 0, pop: 0, cf_const: 0, tex: vec![] },
        alu("ALU_BREAK", vec![add((7, 0), special(249)), cond("PRED_SETGT", lit(0), r(7, 0))].into_iter().collect::<Vec<_>>()),
        alu("ALU_PUSH_BEFORE", vec![cond("PRED_SETE", r(7, 0), special(249))]),
        cf("LOOP_CONTINUE"),
        cf_pop("POP", 1),
        alu("ALU", vec![add((2, 2), special(249))]),
        alu("ALU_CONTINUE", vec![cond("PRED_SETNE", r(7, 0), lit(0))]),
        alu("ALU", vec![add((2, 3), special(249))]),
        cf("LOOP_END"),
        pos.clone(),
        exp(2),
    ];
    let mut prog2 = prog2;
    // literals for the two groups that read lit(0): 4.0 (loop limit) and 3.0 (continue test)
    if let C::Alu { groups, .. } = &mut prog2[10] {
        groups[1].1 = vec![4.0f32.to_bits(), 0];
    }
    if let C::Alu { groups, .. } = &mut prog2[15] {
        groups[0].1 = vec![3.0f32.to_bits(), 0];
    }
    let lvs = vec![LoopVar { offset: 0, value: lv(3, -1, 2) }, LoopVar { offset: 1, value: lv(2, 0, 0) }];
    total.merge(gx2::run(gpu, &gen::fixed("loops", ShaderKind::Vertex, &prog2, prog2.len() - 1, lvs, false, 2)));
    // LOOP_BREAK under a condition and CALL / RETURN of a subroutine after END_OF_PROGRAM
    let prog3 = vec![
        cf("CALL_FS"),
        alu("ALU", vec![zero2.clone()]),
        C::N { op: "LOOP_START_DX10", addr: 0, pop: 0, cf_const: 0, tex: vec![] },
        alu("ALU", vec![add((2, 0), special(249))]),
        C::N { op: "PUSH", addr: 8, pop: 0, cf_const: 0, tex: vec![] },
        alu("ALU", vec![cond("PRED_SETGE", r(2, 0), lit(0))]),
        cf("LOOP_BREAK"),
        cf_pop("POP", 1),
        C::N { op: "CALL", addr: 12, pop: 0, cf_const: 0, tex: vec![] },
        cf("LOOP_END"),
        pos.clone(),
        exp(2),
        alu("ALU", vec![add((2, 1), r(1, 3))]),
        cf("RETURN"),
    ];
    let mut prog3 = prog3;
    if let C::Alu { groups, .. } = &mut prog3[5] {
        groups[0].1 = vec![3.0f32.to_bits(), 0];
    }
    total.merge(gx2::run(gpu, &gen::fixed("break and call", ShaderKind::Vertex, &prog3, 11, vec![], false, 3)));
    // pixel: CF KILL under a condition, PUSH_ELSE / POP_PUSH_ELSE, export to two targets
    let pix = C::Exp { done: true, ty: 0, base: 0, gpr: 2, burst: 1, sel: [0, 1, 2, 3] };
    let prog4 = vec![
        alu("ALU", vec![zero2.clone(), G(vec![mov((3, 0), r(0, 0)), mov((3, 1), r(1, 1)), mov((3, 2), special(249)), mov((3, 3), r(0, 3))], vec![])]),
        alu("ALU_PUSH_BEFORE", vec![cond("PRED_SETGT", r(0, 0), r(0, 1))]),
        cf("KILL"),
        cf_pop("POP", 1),
        C::N { op: "PUSH", addr: 12, pop: 0, cf_const: 0, tex: vec![] },
        alu("ALU", vec![cond("PRED_SETGE", r(1, 0), special(248))]),
        C::N { op: "PUSH_ELSE", addr: 8, pop: 0, cf_const: 0, tex: vec![] },
        alu("ALU", vec![add((2, 0), special(249))]),
        cf_pop("POP_PUSH_ELSE", 1),
        alu("ALU", vec![add((2, 1), special(249))]),
        C::N { op: "POP_JUMP", addr: 11, pop: 1, cf_const: 0, tex: vec![] },
        cf_pop("POP", 1),
        pix,
    ];
    total.merge(gx2::run(gpu, &gen::fixed("pixel kill and push forms", ShaderKind::Pixel, &prog4, prog4.len() - 1, vec![], false, 4)));
    // POP_PUSH between two ifs at the same level, `if (a) {..} if (b) {..}`: it closes the first
    // if (pop 1: every lane active at the if is active again) and saves that state for the
    // second, whose condition is a PRED_SET with the exec-mask update in a plain ALU clause (the
    // R700 ISA CF table: POP_PUSH pops POP_COUNT, then pushes; ALU: "PRED_SET* with exec mask
    // update puts active pixels in to the inactive-branch state"). The JUMPs skip each then-part
    // when no lane is active: the first lands on the POP_PUSH, the second past the closing POP
    // with POP_CNT(1). Once with conditions on constants (every lane agrees: the wave takes the
    // jumps) and once on attributes (lanes disagree).
    for (k, uniform) in [true, false].into_iter().enumerate() {
        let (xa, ya, xb, yb) = if uniform { (c(4, 0), c(5, 1), c(6, 2), c(7, 3)) } else { (r(1, 0), r(1, 1), r(1, 2), r(1, 3)) };
        let prog5 = vec![
            cf("CALL_FS"),                                                   // 0
            alu("ALU", vec![zero2.clone()]),                                 // 1
            alu("ALU_PUSH_BEFORE", vec![cond("PRED_SETGT", xa, ya)]),        // 2: if (a)
            C::N { op: "JUMP", addr: 5, pop: 0, cf_const: 0, tex: vec![] },  // 3: no lane active → the POP_PUSH
            alu("ALU", vec![add((2, 0), special(249))]),                     // 4: then a
            cf_pop("POP_PUSH", 1),                                           // 5: close if (a), save for if (b)
            alu("ALU", vec![cond("PRED_SETGE", xb, yb)]),                    // 6: if (b)
            C::N { op: "JUMP", addr: 10, pop: 1, cf_const: 0, tex: vec![] }, // 7: past the POP, pop 1
            alu("ALU", vec![add((2, 1), special(249))]),                     // 8: then b
            cf_pop("POP", 1),                                                // 9
            alu("ALU", vec![add((2, 2), special(249))]),                     // 10: after both ifs (every lane)
            pos.clone(),                                                     // 11
            exp(2),                                                          // 12
        ];
        let name = if uniform { "POP_PUSH between two ifs, uniform" } else { "POP_PUSH between two ifs, divergent" };
        total.merge(gx2::run(gpu, &gen::fixed(name, ShaderKind::Vertex, &prog5, prog5.len() - 1, vec![], false, 5 + k as u64)));
    }
    finish(
        "control_flow_forms",
        &total,
        CF_FORMS.iter().copied().filter(|f| !["ALU_POP2_AFTER", "TEX"].contains(f)).collect::<Vec<_>>().as_slice(),
        200,
    );
}

/// if / else exactly as Mesa r600, LLVM R600 and Nintendo's compiler emit it (issue 19): the
/// JUMP over the then-part, `ELSE POP_CNT(1)` aimed past the POP it stands for, the no-else
/// `JUMP … POP_CNT(1)`, an else-if chain closed by one `POP POP_CNT(2)` and one closed by
/// `ALU_POP2_AFTER` (its ELSE popping 1, the inner JUMP 2), nested in a loop with `if (c) break`
/// — each once with conditions on constants only (every lane agrees: on the GPU whole waves
/// take the jumps, the interpreter's uniform-wave run follows them) and once on per-vertex
/// attributes (lanes disagree). Until the stack table, the translator rejected every one of
/// these programs ("pops 1 stack entries but only 0 are pushed").
#[test]
fn compiler_if_else_shapes() {
    let Some(gpu) = gpu() else { return };
    let mut total = Comparison::default();
    let pos = C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] };
    let out = C::Exp { done: true, ty: 2, base: 0, gpr: 2, burst: 0, sel: [0, 1, 2, 3] };
    let jump = |op: &'static str, addr: u32, pop: u32| C::N { op, addr, pop, cf_const: 0, tex: vec![] };
    let add = |ch: u8, v: u32| G(vec![a("ADD", (2, ch), &[r(2, ch), lit(0)])], vec![(v as f32).to_bits(), 0]);
    for uniform in [true, false] {
        // uniform: constants only (c4.x > c5.y: what every lane of a draw agrees on); divergent:
        // per-vertex attributes
        let cond = |name: &'static str, k: u32| {
            let (x, y) = if uniform { (c(4 + k, 0), c(5 + k, 1)) } else { (r(1, (k % 4) as u8), r(2 - k % 2, ((k + 1) % 4) as u8)) };
            let mut p = a(name, (9, 0), &[x, y]);
            p.exec = true;
            p.pred = true;
            p.write = false;
            alu("ALU_PUSH_BEFORE", vec![G(vec![p], vec![])])
        };
        let init = alu("ALU", vec![G((0..4u8).map(|k| a("MOV", (2, k), &[special(248)])).collect(), vec![])]);
        let tag = if uniform { "uniform" } else { "divergent" };
        // 0 CALL_FS, 1 init, then the shape, then pos + param export
        let shapes: Vec<(&str, Vec<C>)> = vec![
            (
                "if/else",
                vec![
                    cond("PRED_SETGT", 0),                 // 2
                    jump("JUMP", 5, 0),                    // 3: no lane active → to the ELSE
                    alu("ALU", vec![add(0, 1)]),           // 4: then
                    jump("ELSE", 7, 1),                    // 5: no lane left → past the POP, pop 1
                    alu("ALU_POP_AFTER", vec![add(1, 2)]), // 6: else, then pop
                ],
            ),
            (
                "if without else",
                vec![
                    cond("PRED_SETGE", 1),       // 2
                    jump("JUMP", 6, 1),          // 3: past the POP, pop 1
                    alu("ALU", vec![add(0, 3)]), // 4
                    cf_pop("POP", 1),            // 5
                    alu("ALU", vec![add(3, 1)]), // 6: after the if
                ],
            ),
            (
                "else-if chain closed by POP POP_CNT(2)",
                vec![
                    cond("PRED_SETGT", 0),       // 2: if (c0)
                    jump("JUMP", 5, 0),          // 3
                    alu("ALU", vec![add(0, 1)]), // 4
                    jump("ELSE", 12, 1),         // 5: else → past POP2, pop 1
                    cond("PRED_SETGT", 1),       // 6: if (c1)
                    jump("JUMP", 9, 0),          // 7
                    alu("ALU", vec![add(1, 1)]), // 8
                    jump("ELSE", 12, 2),         // 9: else → past POP2, pop 2
                    alu("ALU", vec![add(2, 1)]), // 10
                    cf_pop("POP", 2),            // 11
                    alu("ALU", vec![add(3, 5)]), // 12
                ],
            ),
            (
                "else-if without final else closed by ALU_POP2_AFTER",
                vec![
                    cond("PRED_SETE", 0),                   // 2
                    jump("JUMP", 5, 0),                     // 3
                    alu("ALU", vec![add(0, 7)]),            // 4
                    jump("ELSE", 9, 1),                     // 5
                    cond("PRED_SETGE", 2),                  // 6
                    jump("JUMP", 9, 2),                     // 7: no else: past the close, pop 2
                    alu("ALU_POP2_AFTER", vec![add(1, 7)]), // 8
                    alu("ALU", vec![add(2, 9)]),            // 9
                ],
            ),
            (
                "nested ifs in a loop with if (c) break",
                vec![
                    C::N { op: "LOOP_START_DX10", addr: 17, pop: 0, cf_const: 0, tex: vec![] }, // 2
                    alu("ALU", vec![add(3, 1)]),                                                // 3: R2.w counts iterations
                    {
                        // 4: if (R2.w >= 3) break;
                        let mut p = a("PRED_SETGE", (9, 0), &[r(2, 3), lit(0)]);
                        p.exec = true;
                        p.pred = true;
                        p.write = false;
                        alu("ALU_PUSH_BEFORE", vec![G(vec![p], vec![3.0f32.to_bits(), 0])])
                    },
                    jump("JUMP", 8, 1),                                                    // 5
                    C::N { op: "LOOP_BREAK", addr: 16, pop: 0, cf_const: 0, tex: vec![] }, // 6
                    cf_pop("POP", 1),                                                      // 7
                    cond("PRED_SETGT", 0),                                                 // 8: if (c0)
                    jump("JUMP", 15, 1),                                                   // 9: no else → past the close
                    cond("PRED_SETGE", 1),                                                 // 10:   if (c1)
                    jump("JUMP", 13, 0),                                                   // 11
                    alu("ALU", vec![add(0, 1)]),                                           // 12
                    jump("ELSE", 15, 2),                                                   // 13
                    alu("ALU_POP2_AFTER", vec![add(1, 1)]),                                // 14
                    alu("ALU", vec![add(2, 1)]),                                           // 15
                    C::N { op: "LOOP_END", addr: 3, pop: 0, cf_const: 0, tex: vec![] },    // 16
                ],
            ),
        ];
        for (name, shape) in shapes {
            let mut prog = vec![cf("CALL_FS"), init.clone()];
            prog.extend(shape);
            prog.push(pos.clone());
            prog.push(out.clone());
            let t = gen::fixed(&format!("{name} ({tag})"), ShaderKind::Vertex, &prog, prog.len() - 1, vec![], false, 7);
            let lowered = shrec::formats::gx2::lower::lower(&t.shader);
            assert!(lowered.is_ok(), "{name} ({tag}): {:?}", lowered.err());
            total.merge(gx2::run(gpu, &t));
        }
    }
    let taken = shrec_verify::interp::gx2::JUMP_TAKEN;
    finish("compiler_if_else_shapes", &total, &["JUMP", "ELSE", "POP", "ALU_POP_AFTER", "ALU_POP2_AFTER", "LOOP_BREAK", taken], 200);
}

/// The compiler-shaped generator (if / else / else-if chains, loops with break / continue,
/// nesting up to `SHAPED_MAX_NEST`, uniform and divergent conditions): 200 fixed-seed programs.
#[test]
fn compiler_shaped_fixed_seed() {
    let Some(gpu) = gpu() else { return };
    let (c, deepest, ladders) = shaped(gpu, fuzz_seed(), 0..200);
    assert!(deepest >= 6, "no program nested 6 deep (deepest {deepest})");
    assert!(ladders >= 20, "only {ladders} else-if ladders");
    let taken = shrec_verify::interp::gx2::JUMP_TAKEN;
    finish(
        &format!("compiler_shaped_fixed_seed, deepest nesting {deepest}, {ladders} else-if ladders"),
        &c,
        &[
            "JUMP",
            "ELSE",
            "POP",
            "ALU_PUSH_BEFORE",
            "ALU_POP_AFTER",
            "ALU_POP2_AFTER",
            "LOOP_BREAK",
            "LOOP_CONTINUE",
            "ALU_BREAK",
            "ALU_CONTINUE",
            "LOOP_END",
            "SAMPLE_G_L",
            "SAMPLE_G_LB",
            "SAMPLE_G_LZ",
            "SAMPLE_C_LZ",
            "FETCH4",
            "SET_CUBEMAP_INDEX",
            "GET_COMP_TEX_LOD",
            "MEM_SCRATCH",
            "WAIT_ACK",
            "MEM",
            taken,
        ],
        5_000,
    );
}

/// Long mode of [`compiler_shaped_fixed_seed`]: `SHREC_FUZZ_PROGRAMS` programs (default 10 000)
/// from `SHREC_FUZZ_FROM` (default 0).
#[test]
#[ignore]
fn long_shaped() {
    let Some(gpu) = gpu() else { return };
    let programs = shrec_verify::long_run_programs(10_000);
    let from = programs.start;
    let started = std::time::Instant::now();
    let (c, deepest, ladders) = shaped(gpu, fuzz_seed(), programs);
    println!(
        "long_shaped seed {} from #{from}: {} in {:.0} s, deepest nesting {deepest}, {ladders} else-if ladders",
        fuzz_seed(),
        c.summary("gx2"),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(c.mismatches, 0);
}

/// Runs the compiler-shaped programs `range` of `seed`: the comparison, the deepest nesting and
/// the number of else-if ladders.
fn shaped(gpu: &'static vk::Gpu, seed: u64, range: std::ops::Range<u64>) -> (Comparison, u32, u32) {
    let mut c = Comparison::default();
    let mut deepest = 0;
    let mut ladders = 0;
    for i in range {
        let (t, stats) = gen::shaped_program_and_stats(seed, i);
        deepest = deepest.max(stats.depth);
        ladders += stats.ladders;
        let mut one = gx2::run(gpu, &t);
        for rep in std::mem::take(&mut one.reports) {
            println!("{rep}");
        }
        c.merge(one);
        if c.programs % 500 == 0 && std::env::var_os("SHREC_FUZZ_PROGRESS").is_some() {
            eprintln!("progress (up to program {i}): {}", c.summary("gx2"));
        }
    }
    (c, deepest, ladders)
}

/// FLT_TO_INT / FLT_TO_UINT of NaN (0) and out-of-range values (saturated), read back through
/// INT_TO_FLT / UINT_TO_FLT so a wrong integer shows as a different float. Long-mode find (seed 1,
/// program 2409): the prelude's NaN test was `x != x`, an ordered compare in DXC's SPIR-V, so a
/// NaN reached the clamp and came out as INT_MIN on lavapipe.
#[test]
fn float_to_int_special_values() {
    let Some(gpu) = gpu() else { return };
    let one = |name: &'static str, d: (u32, u8), s: S, literal: Option<u32>| G(vec![a(name, d, &[s])], literal.map_or(vec![], |l| vec![l, 0]));
    let pos = C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] };
    let mut total = Comparison::default();
    for (k, (x, y)) in [
        (0xFFFF_FFFFu32, 0x7FC0_0000u32),
        (0x7FC0_0000, 0xFFFF_FFFF),
        (3.0e9f32.to_bits(), (-1.0f32).to_bits()),
        ((-3.0e9f32).to_bits(), 5.0e9f32.to_bits()),
    ]
    .into_iter()
    .enumerate()
    {
        let prog = vec![
            cf("CALL_FS"),
            alu(
                "ALU",
                vec![
                    one("FLT_TO_INT", (2, 0), lit(0), Some(x)),
                    one("FLT_TO_UINT", (2, 1), lit(0), Some(y)),
                    one("INT_TO_FLT", (3, 0), r(2, 0), None),
                    one("UINT_TO_FLT", (3, 1), r(2, 1), None),
                    G(vec![mov((3, 2), special(248)), mov((3, 3), special(249))], vec![]),
                ],
            ),
            pos.clone(),
            C::Exp { done: true, ty: 2, base: 0, gpr: 3, burst: 0, sel: [0, 1, 2, 3] },
        ];
        total.merge(gx2::run(gpu, &gen::fixed("float to int", ShaderKind::Vertex, &prog, prog.len() - 1, vec![], false, 10 + k as u64)));
    }
    finish("float_to_int_special_values", &total, &["FLT_TO_INT", "FLT_TO_UINT", "INT_TO_FLT", "UINT_TO_FLT"], 16);
}

/// TEX ops (SAMPLE, _L, _LB, _LZ, _G with SET_GRADIENTS_H/V, GET_GRADIENTS_H/V) and VTX_FETCH
/// from a uniform block.
#[test]
fn tex_ops() {
    let Some(gpu) = gpu() else { return };
    let mut total = Comparison::default();
    let pix = C::Exp { done: true, ty: 0, base: 0, gpr: 2, burst: 1, sel: [0, 1, 2, 3] };
    let centre = |k: u32| (k as f32 + 0.5) / 4.0;
    for (i, name) in ["SAMPLE", "SAMPLE_L", "SAMPLE_LB", "SAMPLE_LZ", "SAMPLE_G"].into_iter().enumerate() {
        let setup = alu(
            "ALU",
            vec![G(
                vec![mov((5, 0), lit(0)), mov((5, 1), lit(1)), mov((5, 2), special(248)), mov((5, 3), special(248))],
                vec![centre(i as u32 % 4).to_bits(), centre(3 - i as u32 % 4).to_bits()],
            )],
        );
        let mut fetches = vec![];
        if name == "SAMPLE_G" {
            fetches.push(tex("SET_GRADIENTS_H", 0, 0, 5, 0, [0, 1, 4, 4]));
            fetches.push(tex("SET_GRADIENTS_V", 0, 0, 5, 0, [1, 0, 4, 4]));
        }
        fetches.push(tex(name, 0, 0, 5, 2, [0, 1, 4, 4]));
        // gradients of the varying R0 (fine differences across the quad)
        fetches.push(tex("GET_GRADIENTS_H", 0, 0, 0, 3, [0, 1, 2, 3]));
        fetches.push(tex("GET_GRADIENTS_V", 0, 0, 1, 4, [0, 1, 2, 3]));
        let merge = alu(
            "ALU",
            vec![G(
                vec![a("ADD", (3, 0), &[r(3, 0), r(4, 1)]), a("ADD", (3, 1), &[r(3, 1), r(4, 0)]), mov((3, 2), r(4, 2)), mov((3, 3), r(4, 3))],
                vec![],
            )],
        );
        let prog = vec![setup, C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: fetches }, merge, pix.clone()];
        total.merge(gx2::run(gpu, &gen::fixed(&format!("tex {name}"), ShaderKind::Pixel, &prog, prog.len() - 1, vec![], false, 10 + i as u64)));
    }
    // vertex: SAMPLE_L / SAMPLE_LZ and VTX_FETCH with index from CB[1] (ints)
    let pos = C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] };
    let exp = C::Exp { done: true, ty: 2, base: 0, gpr: 2, burst: 1, sel: [0, 1, 2, 3] };
    let mut setup = alu(
        "ALU",
        vec![G(
            vec![mov((5, 0), lit(0)), mov((5, 1), lit(1)), mov((5, 2), kc(1, 2)), mov((5, 3), special(248))],
            vec![centre(1).to_bits(), centre(2).to_bits()],
        )],
    );
    if let C::Alu { kc, .. } = &mut setup {
        kc[0] = (gx2::BLOCK_LOC, 1, 0);
    }
    let mut vf = vfetch(gx2::BLOCK_LOC, 5, 3, 32);
    vf.0[0] |= 2 << 24; // SRC_SEL_X = z
    let fetches = vec![tex("SAMPLE_L", 0, 0, 5, 2, [0, 1, 4, 4]), tex("SAMPLE_LZ", 0, 0, 5, 4, [1, 0, 4, 4]), vf];
    let prog = vec![cf("CALL_FS"), setup, C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: fetches }, pos, exp];
    total.merge(gx2::run(gpu, &gen::fixed("vertex tex + VTX_FETCH", ShaderKind::Vertex, &prog, prog.len() - 1, vec![], true, 20)));
    let ops = [
        "SAMPLE",
        "SAMPLE_L",
        "SAMPLE_LB",
        "SAMPLE_LZ",
        "SAMPLE_G",
        "SET_GRADIENTS_H",
        "SET_GRADIENTS_V",
        "GET_GRADIENTS_H",
        "GET_GRADIENTS_V",
        "VTX_FETCH",
    ];
    finish("tex_ops", &total, &ops, 300);
}

/// SAMPLE, _L, _LB, _LZ and _G with texel offsets (TEX word OFFSET_X/Y, half-texel units, so
/// even values = whole texels): positive and negative offsets from a texel centre of the 4×4
/// texture, up to the -8 / +7 ends, the sum clamped to the edge (clamp-to-edge sampler, nearest
/// filtering). Two fetches per program with different offsets, exported as R2 and R3.
#[test]
fn tex_sample_offsets() {
    let Some(gpu) = gpu() else { return };
    let mut total = Comparison::default();
    let pix = C::Exp { done: true, ty: 0, base: 0, gpr: 2, burst: 1, sel: [0, 1, 2, 3] };
    let centre = |k: u32| (k as f32 + 0.5) / 4.0;
    // (texel x, texel y, first offset, second offset) in whole texels
    let cases: [(u32, u32, [i32; 2], [i32; 2]); 5] =
        [(1, 2, [1, -1], [-1, 1]), (0, 3, [2, -3], [3, 0]), (2, 1, [-2, 1], [0, 2]), (3, 0, [-3, 3], [-1, -2]), (1, 1, [7, -8], [-8, 7])];
    let mut k = 0;
    for name in ["SAMPLE", "SAMPLE_L", "SAMPLE_LB", "SAMPLE_LZ", "SAMPLE_G"] {
        for &(x, y, o1, o2) in &cases {
            let setup = alu(
                "ALU",
                vec![G(
                    vec![mov((5, 0), lit(0)), mov((5, 1), lit(1)), mov((5, 2), special(248)), mov((5, 3), special(248))],
                    vec![centre(x).to_bits(), centre(y).to_bits()],
                )],
            );
            let mut fetches = vec![];
            if name == "SAMPLE_G" {
                fetches.push(tex("SET_GRADIENTS_H", 0, 0, 5, 0, [4, 4, 4, 4]));
                fetches.push(tex("SET_GRADIENTS_V", 0, 0, 5, 0, [4, 4, 4, 4]));
            }
            let half = |o: [i32; 2]| [o[0] * 2, o[1] * 2, 0];
            fetches.push(with_offset(tex(name, 0, 0, 5, 2, [0, 1, 4, 4]), half(o1)));
            fetches.push(with_offset(tex(name, 0, 0, 5, 3, [0, 1, 4, 4]), half(o2)));
            let prog = vec![setup, C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: fetches }, pix.clone()];
            let title = format!("tex {name} offsets {o1:?} {o2:?} at texel ({x}, {y})");
            total.merge(gx2::run(gpu, &gen::fixed(&title, ShaderKind::Pixel, &prog, prog.len() - 1, vec![], false, 40 + k)));
            k += 1;
        }
    }
    finish("tex_sample_offsets", &total, &["SAMPLE", "SAMPLE_L", "SAMPLE_LB", "SAMPLE_LZ", "SAMPLE_G"], 100);
}

/// A texture of `levels` mip levels, level 0 `w`×`h` (×`w` slices for a volume), every texel
/// distinct: (x, y, z + 16·level, running index / 8), so a wrong texel, axis or level shows.
fn pyramid(shape: shrec_verify::TextureShape, w: u32, h: u32, levels: u32) -> shrec_verify::interp::gx2::Texture {
    let mut t = shrec_verify::interp::gx2::Texture::new(0, w, h, shape, vec![]);
    let mut n = 0;
    for k in 0..levels {
        let (lw, lh, ld) = t.level_size(k);
        let mut texels = vec![];
        for z in 0..ld {
            for y in 0..lh {
                for x in 0..lw {
                    texels.push([x as f32, y as f32, (z + 16 * k) as f32, n as f32 / 8.0]);
                    n += 1;
                }
            }
        }
        if k == 0 {
            t.texels = texels;
        } else {
            t.mips.push(texels);
        }
    }
    t
}

/// `t` with DST_SEL_X..W (TEX word 1 bits 9-20) set to `sel`.
fn with_dst_sel(mut t: T, sel: [u32; 4]) -> T {
    t.0[1] &= !(0xFFF << 9);
    for (k, s) in sel.into_iter().enumerate() {
        t.0[1] |= s << (9 + 3 * k);
    }
    t
}

/// `R dst.lane = FLT_TO_INT(|R src.lane| × scale) & mask` in three groups (FLT_TO_INT takes
/// the t slot), through R7.
fn int_of(dst: (u32, u8), src: (u32, u8), scale: f32, mask: u32) -> Vec<G> {
    vec![
        G(vec![a("MUL", (7, dst.1), &[r(src.0, src.1).abs(), lit(0)])], vec![scale.to_bits()]),
        G(vec![a("FLT_TO_INT", (7, dst.1), &[r(7, dst.1)])], vec![]),
        G(vec![a("AND_INT", dst, &[r(7, dst.1), lit(0)])], vec![mask]),
    ]
}

/// LD on 2D (8×4, 4 levels) and 3D (8³, 4 levels) textures, vertex shaders and pixel quads.
/// The integer coordinates vary per lane: x0 = trunc(|in.x|·4) & (w − 1), y0 likewise, the
/// level = trunc(|in.z|·2) & 3 (FLT_TO_INT, AND_INT), and the fetch reads (x0, y0[, z0]) >> level
/// (LSHR_INT) at that level (R2, src.w = the level) and (x0, y0[, z0]) at level 0 given by the
/// constant select 0 (R3), so every fetch is inside its level. Offsets on LD are refused (see
/// `rejected_tex_opcodes_are_named` in gx2_synthetic).
#[test]
fn tex_load() {
    let Some(gpu) = gpu() else { return };
    let mut total = Comparison::default();
    let mut k = 0;
    for (shape, var_type, h) in [(shrec_verify::TextureShape::Flat, 1, 4), (shrec_verify::TextureShape::Volume, 3, 8)] {
        let texture = pyramid(shape, 8, h, 4);
        for kind in [ShaderKind::Pixel, ShaderKind::Vertex] {
            let src = if kind == ShaderKind::Pixel { 0 } else { 1 };
            // R6 = (x0, y0, z0, level); R5 = R6.xyz >> level, R5.w = level
            let mut groups = vec![];
            groups.extend(int_of((6, 0), (src, 0), 4.0, 7));
            groups.extend(int_of((6, 1), (src, 1), 4.0, h - 1));
            groups.extend(int_of((6, 2), (src, 3), 4.0, 7));
            groups.extend(int_of((6, 3), (src, 2), 2.0, 3));
            groups.push(G(
                vec![
                    a("LSHR_INT", (5, 0), &[r(6, 0), r(6, 3)]),
                    a("LSHR_INT", (5, 1), &[r(6, 1), r(6, 3)]),
                    a("LSHR_INT", (5, 2), &[r(6, 2), r(6, 3)]),
                    mov((5, 3), r(6, 3)),
                ],
                vec![],
            ));
            let (sel_level, sel_base) = if var_type == 3 { ([0, 1, 2, 3], [0, 1, 2, 4]) } else { ([0, 1, 4, 3], [0, 1, 4, 4]) };
            let fetches = vec![tex("LD", 0, 0, 5, 2, sel_level), tex("LD", 0, 0, 6, 3, sel_base)];
            let prog = fetch_program(kind, Some(alu("ALU", groups)), C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: fetches }, 1);
            for seed in 0..3 {
                total.merge(run_textured(gpu, format!("LD {shape:?} {kind:?} seed {seed}"), kind, &prog, 70 + k, var_type, &texture));
                k += 1;
            }
        }
    }
    finish("tex_load", &total, &["LD", "FLT_TO_INT", "AND_INT", "LSHR_INT"], 500);
}

/// GET_TEXTURE_INFO on 2D textures of several sizes and level counts (8×4 with 4 levels, 5×3
/// with 3, 16×2 with 5, 1×1 with 1) and 3D ones (4³ with 3, 6³ with 3), vertex shaders and pixel
/// quads, for every level and the one past the last (whose sizes are undetermined; the level
/// count is compared): R2 = the info of that level (an integer made by ADD_INT from a literal,
/// read through SRC_SEL z), exported as integer bit patterns; R3 = the info of level 0
/// (constant select 0) read with DST_SEL wzyx and turned into floats (INT_TO_FLT). The level is
/// the same in every lane of a program: lavapipe's size query (Mesa 22.3 gallivm
/// `lp_build_size_query_soa`, "FIXME: this needs to honor per-element lod") takes the first
/// lane's level for the whole SIMD vector, so a level varying per lane is not executed here.
#[test]
fn tex_info() {
    let Some(gpu) = gpu() else { return };
    let mut total = Comparison::default();
    let flat = shrec_verify::TextureShape::Flat;
    let volume = shrec_verify::TextureShape::Volume;
    let textures = [(flat, 1, 8, 4, 4), (flat, 1, 5, 3, 3), (flat, 1, 16, 2, 5), (flat, 1, 1, 1, 1), (volume, 3, 4, 4, 3), (volume, 3, 6, 6, 3)];
    let mut k = 0;
    for (shape, var_type, w, h, levels) in textures {
        let texture = pyramid(shape, w, h, levels);
        for level in 0..=levels {
            for kind in [ShaderKind::Pixel, ShaderKind::Vertex] {
                let groups = vec![G(vec![a("ADD_INT", (5, 2), &[lit(0), special(248)])], vec![level])];
                let fetches = vec![
                    tex("GET_TEXTURE_INFO", 0, 0, 5, 2, [2, 0, 1, 3]),
                    with_dst_sel(tex("GET_TEXTURE_INFO", 0, 0, 5, 3, [4, 4, 4, 4]), [3, 2, 1, 0]),
                ];
                let to_float = (0..4u8).map(|c| G(vec![a("INT_TO_FLT", (3, c), &[r(3, c)])], vec![])).collect();
                let mut prog = fetch_program(kind, Some(alu("ALU", groups)), C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: fetches }, 1);
                let at = prog.len() - if kind == ShaderKind::Vertex { 2 } else { 1 };
                prog.insert(at, alu("ALU", to_float));
                let what = format!("GET_TEXTURE_INFO {shape:?} {w}x{h} {levels} levels, level {level}, {kind:?}");
                total.merge(run_textured(gpu, what, kind, &prog, 90 + k, var_type, &texture));
                k += 1;
            }
        }
    }
    finish("tex_info", &total, &["GET_TEXTURE_INFO", "ADD_INT", "INT_TO_FLT"], 500);
}

/// The CUBE group of the compilers' pattern: R`dst` = CUBE of `src(k)` = R.zzxy / R.yxzz lanes.
fn cube_group(dst: u32, src: impl Fn(u8) -> S) -> G {
    G([(2, 1), (2, 0), (0, 2), (1, 2)].into_iter().enumerate().map(|(k, (s0, s1))| a("CUBE", (dst, k as u8), &[src(s0), src(s1)])).collect(), vec![])
}

/// CUBE on hand-picked directions from the constant file: magnitude ties (z over y over x),
/// zeros of both signs (the sign test is `>= 0`, the tc / sc lanes are sign flips whose bits an
/// integer op then reads), infinities; plain, negated, absolute and negated-absolute operands.
#[test]
fn cube_op() {
    let Some(gpu) = gpu() else { return };
    let inf = f32::INFINITY;
    let dirs: [[f32; 3]; 24] = [
        [1.0, 1.0, 1.0],
        [1.0, 1.0, 0.0],
        [-1.0, 1.0, 0.0],
        [1.0, -1.0, 0.0],
        [2.0, 0.0, -2.0],
        [0.0, 0.0, 0.0],
        [-0.0, -0.0, -0.0],
        [0.0, -0.0, 0.0],
        [-0.0, 0.0, -0.0],
        [3.0, 1.0, 2.0],
        [-3.0, 1.0, 2.0],
        [0.5, -2.0, 1.0],
        [0.25, 0.5, -0.75],
        [-1.0, -1.0, -1.0],
        [1.0, -1.0, 1.0],
        [-2.0, 2.0, 1.0],
        [-2.0, -2.0, 1.0],
        [5.0, -5.0, -5.0],
        [inf, 1.0, 1.0],
        [-inf, inf, 0.0],
        [1.5, -0.0, 0.0],
        [-1.5, 0.0, -0.0],
        [0.0, -3.0, -0.0],
        [0.0, 3.0, -0.0],
    ];
    let mods: [fn(S) -> S; 4] = [|s| s, |s| s.neg(), |s| s.abs(), |s| s.abs().neg()];
    let mut total = Comparison::default();
    for (m, modify) in mods.into_iter().enumerate() {
        for (chunk, ds) in dirs.chunks(8).enumerate() {
            // R2 = CUBE(c3), R3 = its sign bits (all-ones / 0 from SETGT_UINT against 0x7FFFFFFF)
            let signs = G((0..4u8).map(|k| a("SETGT_UINT", (3, k), &[r(2, k), lit(0)])).collect(), vec![0x7FFF_FFFF]);
            let prog = vec![
                cf("CALL_FS"),
                alu("ALU", vec![cube_group(2, |ch| modify(c(3, ch))), signs]),
                C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] },
                C::Exp { done: true, ty: 2, base: 0, gpr: 2, burst: 1, sel: [0, 1, 2, 3] },
            ];
            let mut t = gen::fixed(
                &format!("CUBE modifiers {m} directions {chunk}"),
                ShaderKind::Vertex,
                &prog,
                prog.len() - 1,
                vec![],
                false,
                30 + chunk as u64,
            );
            for (case, d) in t.cases.iter_mut().zip(ds) {
                case.regfile[3] = [d[0].to_bits(), d[1].to_bits(), d[2].to_bits(), 7.0f32.to_bits()];
            }
            total.merge(gx2::run(gpu, &t));
        }
    }
    finish("cube_op", &total, &["CUBE", "SETGT_UINT"], 500);
}

/// A program around one TEX clause `fetch` writing R2 (after the ALU clause `setup`): PS exports
/// R2.. (burst `burst`) to PIX0..; VS runs CALL_FS first, exports R1 (the first attribute) as
/// the position and R2.. as PARAM0...
fn fetch_program(kind: ShaderKind, setup: Option<C>, fetch: C, burst: u32) -> Vec<C> {
    let params = C::Exp { done: true, ty: if kind == ShaderKind::Pixel { 0 } else { 2 }, base: 0, gpr: 2, burst, sel: [0, 1, 2, 3] };
    let mut prog = Vec::new();
    if kind == ShaderKind::Vertex {
        prog.push(cf("CALL_FS"));
    }
    prog.extend(setup);
    prog.push(fetch);
    if kind == ShaderKind::Vertex {
        prog.push(C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] });
    }
    prog.push(params);
    prog
}

/// Runs `prog` (random cases from `seed`) with `texture` on resource 0, declared by a
/// GX2SamplerVar of type `var_type` (3 = 3D, 4 = cube).
fn run_textured(
    gpu: &vk::Gpu,
    what: String,
    kind: ShaderKind,
    prog: &[C],
    seed: u64,
    var_type: u32,
    texture: &shrec_verify::interp::gx2::Texture,
) -> Comparison {
    let mut t = gen::fixed(&what, kind, prog, prog.len() - 1, vec![], false, seed);
    t.shader.sampler_vars = vec![SamplerVar { name: "tex".into(), ty: var_type, location: 0 }];
    for c in &mut t.cases {
        c.textures = vec![texture.clone()];
    }
    gx2::run(gpu, &t)
}

/// A cube texture (GX2SamplerVar type 4) sampled as the compilers do it: CUBE, RECIP_IEEE of
/// |2·major axis|, MULADD by it + 1.5, SAMPLE with src_sel yxwy (s, t, face) — in pixel quads
/// (SAMPLE) and vertex shaders (SAMPLE_LZ), directions from the random varyings / attributes.
/// Every texel of the 4×4×6 map is distinct, so a wrong face, flip or transpose shows.
#[test]
fn cube_sample() {
    let Some(gpu) = gpu() else { return };
    let texels: Vec<[f32; 4]> = (0..6 * 16).map(|k| [(k / 16) as f32, (k % 4) as f32, (k / 4 % 4) as f32, k as f32 * 0.125]).collect();
    let map = shrec_verify::interp::gx2::Texture::new(0, 4, 4, shrec_verify::TextureShape::Cube, texels);
    let mut total = Comparison::default();
    for (kind, dir, name) in [(ShaderKind::Pixel, 0, "SAMPLE"), (ShaderKind::Vertex, 1, "SAMPLE_LZ")] {
        let coords = vec![
            cube_group(3, |ch| r(dir, ch)),
            G(vec![a("RECIP_IEEE", (3, 2), &[r(3, 2).abs()])], vec![]),
            G(vec![a("MULADD", (3, 0), &[r(3, 0), ps(), lit(0)]), a("MULADD", (3, 1), &[r(3, 1), ps(), lit(0)])], vec![1.5f32.to_bits()]),
        ];
        let fetch = C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: vec![tex(name, 0, 0, 3, 2, [1, 0, 3, 1])] };
        let prog = fetch_program(kind, Some(alu("ALU", coords)), fetch, 1);
        for seed in 0..6 {
            total.merge(run_textured(gpu, format!("cube map {name} seed {seed}"), kind, &prog, 40 + seed, 4, &map));
        }
    }
    finish("cube_sample", &total, &["CUBE", "RECIP_IEEE", "MULADD", "SAMPLE", "SAMPLE_LZ"], 600);
}

/// Cube arrays (GX2SamplerType 13, and 14 for depth compare) of three 4×4 cubes, every texel
/// distinct (face, column, row, cube + id): the face coordinates as the compilers make them
/// (see `cube_sample`) and the cube index set by SET_CUBEMAP_INDEX from R4.x = 4·in.w − 1 —
/// negative, fractional and past the last cube included (rounded to the nearest cube, then
/// clamped; ties are not compared) — then SAMPLE in pixel quads and SAMPLE_LZ in vertex
/// shaders, and SAMPLE_C_LZ with the reference FRACT(in.w) in src.w on the shadow kind. Fails
/// on a main without cube arrays (types 13 / 14 rejected: "a cube-array sampler").
#[test]
fn cube_array_sample() {
    let Some(gpu) = gpu() else { return };
    let texels: Vec<[f32; 4]> =
        (0..3 * 6 * 16).map(|k| [(k / 16 % 6) as f32, (k % 4) as f32, (k / 4 % 4) as f32, (k / 96) as f32 + k as f32 / 1024.0]).collect();
    let mut colour = shrec_verify::interp::gx2::Texture::new(0, 4, 4, shrec_verify::TextureShape::CubeArray, texels);
    colour.layers = 3;
    let mut depth = colour.clone();
    for (k, t) in depth.texels.iter_mut().enumerate() {
        *t = [((k * 37) % 17) as f32 / 16.0, 0.0, 0.0, 0.0];
    }
    let mut total = Comparison::default();
    for (kind, src, name, ty, texture) in [
        (ShaderKind::Pixel, 0, "SAMPLE", 13, &colour),
        (ShaderKind::Vertex, 1, "SAMPLE_LZ", 13, &colour),
        (ShaderKind::Pixel, 0, "SAMPLE_C_LZ", 14, &depth),
        (ShaderKind::Vertex, 1, "SAMPLE_C_LZ", 14, &depth),
    ] {
        let coords = vec![
            cube_group(3, |ch| r(src, ch)),
            G(vec![a("RECIP_IEEE", (3, 2), &[r(3, 2).abs()])], vec![]),
            G(
                vec![a("MULADD", (3, 0), &[r(3, 0), ps(), lit(0)]), a("MULADD", (3, 1), &[r(3, 1), ps(), lit(0)]), a("FRACT", (3, 2), &[r(src, 3)])],
                vec![1.5f32.to_bits()],
            ),
            G(vec![a("MULADD", (4, 0), &[r(src, 3), lit(0), lit(1)])], vec![4.0f32.to_bits(), (-1.0f32).to_bits()]),
        ];
        let dst_sel = if ty == 14 { [0, 4, 5, 0] } else { [0, 1, 2, 3] };
        let fetches = vec![tex("SET_CUBEMAP_INDEX", 0, 0, 4, 0, [0, 0, 0, 0]), tex_unit(name, 3, [1, 0, 3, 2], dst_sel, false, [0, 0, 0])];
        let prog = fetch_program(kind, Some(alu("ALU", coords)), C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: fetches }, 0);
        for seed in 0..6 {
            total.merge(run_textured(gpu, format!("cube array type {ty} {name} {kind:?} seed {seed}"), kind, &prog, 150 + seed, ty, texture));
        }
    }
    finish("cube_array_sample", &total, &["SET_CUBEMAP_INDEX", "SAMPLE", "SAMPLE_LZ", "SAMPLE_C_LZ", "CUBE"], 600);
}

/// GET_COMP_TEX_LOD in pixel quads on 2D (GX2SamplerType 1), 2D-array (10) and 3D (3) textures
/// of 8 texels and four levels: one coordinate lane is scale · in.lane (scale 1/16 … 16), the
/// others constants, so the quad's derivatives (the varyings' slopes 0, ±1/4, ±1/2, 1) have one
/// non-zero lane and the LOD is an integer from −3 to 7: lane x (the computed LOD) and lane y
/// (clamped to levels 0-3) are compared — an order swapped, a clamp dropped or a slice taken as
/// a texel lane shows. Fails on a main where GET_COMP_TEX_LOD is rejected.
#[test]
fn comp_tex_lod() {
    let Some(gpu) = gpu() else { return };
    use shrec_verify::TextureShape as Shape;
    let textures =
        [(1, pyramid(Shape::Flat, 8, 8, 4), 2), (10, layered_pyramid(Shape::FlatArray, 8, 4, 3), 2), (3, pyramid(Shape::Volume, 8, 8, 4), 3)];
    let scales = [1.0f32 / 16.0, 0.25, 1.0, 4.0, 16.0];
    let mut total = Comparison::default();
    for (ty, texture, lanes) in &textures {
        for lane in 0..*lanes {
            for scale in scales {
                // R3 = (0.375, 0.625, 1, 0) with lane `lane` = scale · in.lane
                let mut slots = vec![];
                for ch in 0..4u8 {
                    slots.push(if ch == lane { a("MUL", (3, ch), &[r(0, ch), lit(3)]) } else { a("MOV", (3, ch), &[lit(ch)]) });
                }
                let consts = vec![0.375f32.to_bits(), 0.625f32.to_bits(), 1.0f32.to_bits(), scale.to_bits()];
                let fetch = tex_unit("GET_COMP_TEX_LOD", 3, [0, 1, 2, 3], [0, 1, 4, 5], *ty == 10, [0, 0, 0]);
                let prog = fetch_program(ShaderKind::Pixel, Some(alu("ALU", vec![G(slots, consts)])), tex_clause(fetch), 0);
                for seed in 0..3 {
                    let what = format!("GET_COMP_TEX_LOD type {ty} lane {lane} scale {scale} seed {seed}");
                    total.merge(run_textured(gpu, what, ShaderKind::Pixel, &prog, 170 + seed, *ty, texture));
                }
            }
        }
    }
    finish("comp_tex_lod", &total, &["GET_COMP_TEX_LOD", "MUL"], 300);
}

/// A 3D texture (GX2SamplerVar type 3) of 5³ distinct texels sampled at (x, y, z) of the
/// random varyings / attributes (SAMPLE in pixel quads, SAMPLE_LZ in vertex shaders; source
/// swizzles xyz and zxy), so a wrong slice, axis or flip shows; 5 is not a power of two, so the
/// random dyadic coordinates never sit on a texel boundary.
#[test]
fn volume_sample() {
    let Some(gpu) = gpu() else { return };
    let texels: Vec<[f32; 4]> = (0..125).map(|k| [(k % 5) as f32, (k / 5 % 5) as f32, (k / 25) as f32, k as f32 * 0.125]).collect();
    let volume = shrec_verify::interp::gx2::Texture::new(0, 5, 5, shrec_verify::TextureShape::Volume, texels);
    let mut total = Comparison::default();
    for (kind, src, name) in [(ShaderKind::Pixel, 0, "SAMPLE"), (ShaderKind::Vertex, 1, "SAMPLE_LZ")] {
        for sel in [[0, 1, 2, 0], [2, 0, 1, 0]] {
            let fetch = C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: vec![tex(name, 0, 0, src, 2, sel)] };
            let prog = fetch_program(kind, None, fetch, 0);
            for seed in 0..4 {
                total.merge(run_textured(gpu, format!("volume {name} {sel:?} seed {seed}"), kind, &prog, 60 + seed, 3, &volume));
            }
        }
    }
    finish("volume_sample", &total, &["SAMPLE", "SAMPLE_LZ"], 600);
}

/// A TEX word for the texture-unit tests: `tex(name, 0, 0, src, 2, sel)` with destination
/// select `dst_sel` (0-3 lanes, 4 = 0.0, 5 = 1.0, 7 = masked), COORD_TYPE_Z cleared when
/// `slice_unnormalized` (a 2D array's slice lane, as Mesa r600 marks it) and OFFSET_X/Y/Z in
/// half texels.
fn tex_unit(name: &str, src: u32, sel: [u32; 4], dst_sel: [u32; 4], slice_unnormalized: bool, half_texels: [i32; 3]) -> T {
    let mut t = with_offset(tex(name, 0, 0, src, 2, sel), half_texels);
    t.0[1] &= !(0xFFF << 9);
    for (k, d) in dst_sel.into_iter().enumerate() {
        t.0[1] |= d << (9 + 3 * k);
    }
    if slice_unnormalized {
        t.0[1] &= !(1 << 30);
    }
    t
}

fn tex_clause(fetch: T) -> C {
    C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: vec![fetch] }
}

/// A 2D array (GX2SamplerType 10) of three 5×5 slices, every texel distinct (x, y, slice, id),
/// and a 1D array (type 9) of three 5-texel slices bound one texel high, sampled at (x, y)
/// with the slice from src.z — random values of the varyings / attributes, negative,
/// fractional and past the last slice included (floor, then clamp) — by SAMPLE in pixel quads
/// and SAMPLE_LZ / SAMPLE_L in vertex shaders, with and without a texel offset (x only on the
/// 1D array). Fails on a main without array textures (type 10 rejected: "array/shadow"; type 9:
/// "a 1D array sampler").
#[test]
fn array_sample() {
    let Some(gpu) = gpu() else { return };
    let texels: Vec<[f32; 4]> = (0..75).map(|k| [(k % 5) as f32, (k / 5 % 5) as f32, (k / 25) as f32, k as f32 * 0.125]).collect();
    let line: Vec<[f32; 4]> = (0..15).map(|k| [(k % 5) as f32, 0.0, (k / 5) as f32, k as f32 * 0.125]).collect();
    let arrays =
        [(10, shrec_verify::interp::gx2::Texture::array(0, 5, 5, 3, texels)), (9, shrec_verify::interp::gx2::Texture::array(0, 5, 1, 3, line))];
    let mut total = Comparison::default();
    for (kind, src, name) in [(ShaderKind::Pixel, 0, "SAMPLE"), (ShaderKind::Vertex, 1, "SAMPLE_LZ"), (ShaderKind::Vertex, 1, "SAMPLE_L")] {
        for (ty, array) in &arrays {
            let offsets = if *ty == 9 { [2, 0, 0] } else { [2, -4, 0] };
            for (sel, offset) in [([0, 1, 2, 3], [0, 0, 0]), ([2, 0, 1, 3], offsets)] {
                // SAMPLE_L's LOD (src.w) is irrelevant on a one-level texture
                let fetch = tex_unit(name, src, sel, [0, 1, 2, 3], true, offset);
                let prog = fetch_program(kind, None, tex_clause(fetch), 0);
                for seed in 0..4 {
                    let what = format!("array type {ty} {name} {sel:?} {offset:?} seed {seed}");
                    total.merge(run_textured(gpu, what, kind, &prog, 80 + seed, *ty, array));
                }
            }
        }
    }
    finish("array_sample", &total, &["SAMPLE", "SAMPLE_LZ", "SAMPLE_L"], 600);
}

/// LD and GET_TEXTURE_INFO on a 2D array (GX2SamplerType 10) of three 8×4 slices: LD at
/// integer (x0, y0, slice) = trunc(|in.xyz| · (4, 4, 2)) masked to (7, 3, 3) — slice 3 is past
/// the last and undetermined — at level 0 (src.w = the constant 0), and GET_TEXTURE_INFO of
/// level 0, whose z is the slice count (decaf: OpImageQuerySizeLod of the array; Mesa r600
/// `emit_tex_txs`), in pixel quads and vertex shaders. Fails on a main without array textures.
#[test]
fn array_load_and_info() {
    let Some(gpu) = gpu() else { return };
    let texels: Vec<[f32; 4]> = (0..96).map(|k| [(k % 8) as f32, (k / 8 % 4) as f32, (k / 32) as f32, k as f32 * 0.125]).collect();
    let array = shrec_verify::interp::gx2::Texture::array(0, 8, 4, 3, texels);
    let mut total = Comparison::default();
    for kind in [ShaderKind::Pixel, ShaderKind::Vertex] {
        let src = if kind == ShaderKind::Pixel { 0 } else { 1 };
        let mut groups = vec![];
        groups.extend(int_of((6, 0), (src, 0), 4.0, 7));
        groups.extend(int_of((6, 1), (src, 1), 4.0, 3));
        groups.extend(int_of((6, 2), (src, 2), 2.0, 3));
        let fetches = vec![
            tex_unit("LD", 6, [0, 1, 2, 4], [0, 1, 2, 3], true, [0, 0, 0]),
            with_dst_sel(tex("GET_TEXTURE_INFO", 0, 0, 6, 3, [4, 4, 4, 4]), [0, 1, 2, 3]),
        ];
        let prog = fetch_program(kind, Some(alu("ALU", groups)), C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: fetches }, 1);
        for seed in 0..6 {
            total.merge(run_textured(gpu, format!("2D array LD / GET_TEXTURE_INFO {kind:?} seed {seed}"), kind, &prog, 130 + seed, 10, &array));
        }
    }
    finish("array_load_and_info", &total, &["LD", "GET_TEXTURE_INFO"], 300);
}

/// Depth-compare sampling on the three shadow shapes shrec translates: 2D shadow (GX2SamplerType
/// 6), 2D-array shadow (12) and cube shadow (8), by SAMPLE_C in pixel quads and SAMPLE_C_LZ in
/// vertex shaders and pixel quads. The reference is src.w = FRACT of a random lane (in [0, 1));
/// depths are multiples of 1/16 in [0, 1], so ties (reference == depth, which passes
/// LESS_OR_EQUAL) occur. Result lane x is read into x and w, y/z take the 0 / 1 selects. The
/// harness binds a D32_SFLOAT image and a `LESS_OR_EQUAL` comparison sampler (the consumer's
/// sampler state). Fails on a main without shadow samplers (SAMPLE_C rejected).
#[test]
fn shadow_compare() {
    let Some(gpu) = gpu() else { return };
    let depth = |k: usize| [((k * 37) % 17) as f32 / 16.0, 0.0, 0.0, 0.0];
    let flat = shrec_verify::interp::gx2::Texture::new(0, 5, 5, shrec_verify::TextureShape::Flat, (0..25).map(depth).collect());
    let array = shrec_verify::interp::gx2::Texture::array(0, 5, 5, 3, (0..75).map(depth).collect());
    let line = shrec_verify::interp::gx2::Texture::array(0, 5, 1, 3, (0..15).map(depth).collect());
    let cube = shrec_verify::interp::gx2::Texture::new(0, 4, 4, shrec_verify::TextureShape::Cube, (0..96).map(depth).collect());
    let dst_sel = [0, 4, 5, 0];
    let mut total = Comparison::default();
    for (kind, src, name) in [(ShaderKind::Pixel, 0, "SAMPLE_C"), (ShaderKind::Pixel, 0, "SAMPLE_C_LZ"), (ShaderKind::Vertex, 1, "SAMPLE_C_LZ")] {
        // 2D and 2D array: R3 = (x, y, z, fract(w)) of the input
        let setup = G(
            vec![a("MOV", (3, 0), &[r(src, 0)]), a("MOV", (3, 1), &[r(src, 1)]), a("MOV", (3, 2), &[r(src, 2)]), a("FRACT", (3, 3), &[r(src, 3)])],
            vec![],
        );
        for (ty, texture, slice) in [(6, &flat, false), (12, &array, true), (11, &line, true)] {
            let fetch = tex_unit(name, 3, [0, 1, 2, 3], dst_sel, slice, [0, 0, 0]);
            let prog = fetch_program(kind, Some(alu("ALU", vec![setup.clone()])), tex_clause(fetch), 0);
            for seed in 0..4 {
                total.merge(run_textured(gpu, format!("shadow type {ty} {name} seed {seed}"), kind, &prog, 100 + seed, ty, texture));
            }
        }
        // cube: face coordinates as the compilers make them (see cube_sample), the reference
        // in R3.z once the major axis has been consumed
        let coords = vec![
            cube_group(3, |ch| r(src, ch)),
            G(vec![a("RECIP_IEEE", (3, 2), &[r(3, 2).abs()])], vec![]),
            G(
                vec![a("MULADD", (3, 0), &[r(3, 0), ps(), lit(0)]), a("MULADD", (3, 1), &[r(3, 1), ps(), lit(0)]), a("FRACT", (3, 2), &[r(src, 3)])],
                vec![1.5f32.to_bits()],
            ),
        ];
        let fetch = tex_unit(name, 3, [1, 0, 3, 2], dst_sel, false, [0, 0, 0]);
        let prog = fetch_program(kind, Some(alu("ALU", coords)), tex_clause(fetch), 0);
        for seed in 0..4 {
            total.merge(run_textured(gpu, format!("shadow cube {name} seed {seed}"), kind, &prog, 110 + seed, 8, &cube));
        }
    }
    finish("shadow_compare", &total, &["SAMPLE_C", "SAMPLE_C_LZ", "FRACT", "CUBE"], 600);
}

/// FETCH4 (gather) on a 2D texture (GX2SamplerType 1) and a 2D array (10) of 5×5 distinct
/// texels: the four texels of the bilinear footprint in the R700 order, in pixel quads and
/// vertex shaders, with and without a texel offset; the red components are distinct so any
/// lane permutation shows. Fails on a main where FETCH4 is rejected.
#[test]
fn fetch4_gather() {
    let Some(gpu) = gpu() else { return };
    let texels: Vec<[f32; 4]> = (0..75).map(|k| [k as f32, (k % 5) as f32, (k / 5 % 5) as f32, 1.0]).collect();
    let flat = shrec_verify::interp::gx2::Texture::new(0, 5, 5, shrec_verify::TextureShape::Flat, texels[..25].to_vec());
    let array = shrec_verify::interp::gx2::Texture::array(0, 5, 5, 3, texels);
    let mut total = Comparison::default();
    for (kind, src) in [(ShaderKind::Pixel, 0), (ShaderKind::Vertex, 1)] {
        for (ty, texture, slice) in [(1, &flat, false), (10, &array, true)] {
            for offset in [[0, 0, 0], [-2, 4, 0]] {
                let fetch = tex_unit("FETCH4", src, [0, 1, 2, 3], [0, 1, 2, 3], slice, offset);
                let prog = fetch_program(kind, None, tex_clause(fetch), 0);
                for seed in 0..4 {
                    total.merge(run_textured(gpu, format!("FETCH4 type {ty} {offset:?} seed {seed}"), kind, &prog, 120 + seed, ty, texture));
                }
            }
        }
    }
    finish("fetch4_gather", &total, &["FETCH4"], 600);
}

/// A square texture of `levels` mip levels (level 0 `size`×`size`) with `layers` slices or
/// faces per level, every texel distinct: (x, y, layer + 16·level, running index / 8), so a
/// wrong texel, slice, face or level shows. A volume comes from `pyramid`.
fn layered_pyramid(shape: shrec_verify::TextureShape, size: u32, levels: u32, layers: u32) -> shrec_verify::interp::gx2::Texture {
    let mut t = shrec_verify::interp::gx2::Texture::new(0, size, size, shape, vec![]);
    t.layers = if shape == shrec_verify::TextureShape::FlatArray { layers } else { 1 };
    let mut n = 0;
    for k in 0..levels {
        let side = (size >> k).max(1);
        let mut texels = vec![];
        for layer in 0..layers {
            for y in 0..side {
                for x in 0..side {
                    texels.push([x as f32, y as f32, (layer + 16 * k) as f32, n as f32 / 8.0]);
                    n += 1;
                }
            }
        }
        if k == 0 {
            t.texels = texels;
        } else {
            t.mips.push(texels);
        }
    }
    t
}

/// The gradient forms at an explicit LOD on textures of four mip levels — SAMPLE_G_L (LOD
/// src.w), SAMPLE_G_LZ (LOD 0) and SAMPLE_G_LB (the LOD of the SET_GRADIENTS_H/V gradients
/// biased by src.w) — on 2D (GX2SamplerType 1), 2D array (10), 3D (3) and, for _L and _LZ, cube
/// (4) resources, in pixel quads and vertex shaders. src.w = 4·FRACT(in.w) − 2 for _LB (from
/// −2) and 4·FRACT(in.w) for _L: every level and both clamps are reached. The gradients are
/// axis-aligned powers of two in texels (H = 2 texels along x, V = 1 or 4 along y), so the
/// gradient LOD is exact (1 or 2) whichever ρ form the host uses. Every texel names its level,
/// so a wrong LOD lane, a dropped bias or a bias taken as an LOD shows. Fails on a main where the
/// three ops are rejected ("not translated").
#[test]
fn gradient_forms() {
    let Some(gpu) = gpu() else { return };
    use shrec_verify::TextureShape as S_;
    let flat = layered_pyramid(S_::Flat, 8, 4, 1);
    let array = layered_pyramid(S_::FlatArray, 8, 4, 3);
    let volume = pyramid(S_::Volume, 8, 8, 4);
    let cube = layered_pyramid(S_::Cube, 8, 4, 6);
    let mut total = Comparison::default();
    let mut k = 0;
    for (kind, src) in [(ShaderKind::Pixel, 0), (ShaderKind::Vertex, 1)] {
        for name in ["SAMPLE_G_L", "SAMPLE_G_LZ", "SAMPLE_G_LB"] {
            // src.w: the LOD for _L (0..4), the bias for _LB (−2..2)
            let (scale, shift) = if name == "SAMPLE_G_LB" { (4.0f32, -2.0f32) } else { (4.0, 0.0) };
            let lod_setup = |lane: u8| {
                vec![
                    G(vec![a("FRACT", (3, lane), &[r(src, 3)])], vec![]),
                    G(vec![a("MULADD", (3, lane), &[r(3, lane), lit(0), lit(1)])], vec![scale.to_bits(), shift.to_bits()]),
                ]
            };
            // gradients: H = (2/8, 0, 0), V = (0, 1/8 or 4/8, 0) in normalized units of an 8-texel level 0
            let grads = |v: f32| {
                [
                    G(vec![mov((5, 0), lit(0)), mov((5, 1), special(248)), mov((5, 2), special(248))], vec![0.25f32.to_bits()]),
                    G(vec![mov((6, 0), special(248)), mov((6, 1), lit(0)), mov((6, 2), special(248))], vec![v.to_bits()]),
                ]
            };
            for (v, ty, texture) in [(0.125f32, 1, &flat), (0.5, 10, &array), (0.125, 3, &volume)] {
                let mut groups = vec![G(vec![mov((3, 0), r(src, 0)), mov((3, 1), r(src, 1)), mov((3, 2), r(src, 2))], vec![])];
                groups.extend(grads(v));
                groups.extend(lod_setup(3));
                for offset in [[0, 0, 0], [2, -4, 0]] {
                    let fetches = vec![
                        tex("SET_GRADIENTS_H", 0, 0, 5, 0, [0, 1, 2, 4]),
                        tex("SET_GRADIENTS_V", 0, 0, 6, 0, [0, 1, 2, 4]),
                        tex_unit(name, 3, [0, 1, 2, 3], [0, 1, 2, 3], ty == 10, offset),
                    ];
                    let prog =
                        fetch_program(kind, Some(alu("ALU", groups.clone())), C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: fetches }, 0);
                    for seed in 0..3 {
                        let what = format!("{name} {kind:?} type {ty} offset {offset:?} seed {seed}");
                        total.merge(run_textured(gpu, what, kind, &prog, 140 + k, ty, texture));
                        k += 1;
                    }
                }
            }
            if name == "SAMPLE_G_LB" {
                continue; // refused on cubes: the space of a cube's gradients is not documented
            }
            // cube: face coordinates as the compilers make them (see cube_sample), the LOD in R3.z
            let mut coords = vec![
                cube_group(3, |ch| r(src, ch)),
                G(vec![a("RECIP_IEEE", (3, 2), &[r(3, 2).abs()])], vec![]),
                G(vec![a("MULADD", (3, 0), &[r(3, 0), ps(), lit(0)]), a("MULADD", (3, 1), &[r(3, 1), ps(), lit(0)])], vec![1.5f32.to_bits()]),
            ];
            coords.extend(lod_setup(2));
            let fetch = tex_unit(name, 3, [1, 0, 3, 2], [0, 1, 2, 3], false, [0, 0, 0]);
            let prog = fetch_program(kind, Some(alu("ALU", coords)), tex_clause(fetch), 0);
            for seed in 0..4 {
                total.merge(run_textured(gpu, format!("{name} {kind:?} cube seed {seed}"), kind, &prog, 140 + k, 4, &cube));
                k += 1;
            }
        }
    }
    finish("gradient_forms", &total, &["SAMPLE_G_L", "SAMPLE_G_LZ", "SAMPLE_G_LB", "SET_GRADIENTS_H", "SET_GRADIENTS_V"], 600);
}

fn fuzz_seed() -> u64 {
    shrec_verify::env_u64("SHREC_FUZZ_SEED", 1)
}

fn fuzz(seed: u64, range: std::ops::Range<u64>, threads: u64) -> Comparison {
    let len = range.end - range.start;
    let handles: Vec<_> = (0..threads)
        .map(|t| range.start + len * t / threads..range.start + len * (t + 1) / threads)
        .map(|r| {
            std::thread::spawn(move || {
                let gpu = gx2::gpu_or_skip().expect("checked by the caller");
                let mut c = Comparison::default();
                for i in r {
                    let mut one = gx2::run(gpu, &gen::program(seed, i));
                    // reports at once (a long run may be stopped before its end)
                    for rep in std::mem::take(&mut one.reports) {
                        println!("{rep}");
                    }
                    c.merge(one);
                    if c.programs % 250 == 0 && std::env::var_os("SHREC_FUZZ_PROGRESS").is_some() {
                        eprintln!("progress (one thread, up to program {i}): {}", c.summary("gx2"));
                    }
                }
                c
            })
        })
        .collect();
    let mut total = Comparison::default();
    for h in handles {
        total.merge(h.join().expect("fuzz thread"));
    }
    total
}

/// Programs of the shape that found a bug (fixed): `CNDE_INT R5.y, …, 1 CLAMP` exports the
/// integer 1 (a denormal's bits), which lavapipe's clamp flushes to 0 (interpreter: a denormal
/// through CLAMP or OMOD is not determined). The program that found it was seed 1 #1725; since
/// the generator's op lists come from the opcode table (their order changed), the same shape is
/// drawn at these indices of seed 1 (`CNDE_INT R5.z, R6.x, 1, PV49.y CLAMP`, `… R0.w, 1, R0.y
/// CLAMP`, `… KC0[6].z, 1, KC0[9].y CLAMP`, `CNDE_INT R7.y, -R7.x, R7.z, 1 CLAMP`, `CNDE_INT R1.y,
/// 1, R3.w, -R2.z CLAMP`; #2, #39, #71 select other integers through CLAMP).
#[test]
fn fuzz_regressions() {
    let Some(gpu) = gpu() else { return };
    let mut c = Comparison::default();
    for index in [92, 235, 313, 624, 781, 2, 39, 71] {
        c.merge(gx2::run(gpu, &gen::program(1, index)));
    }
    finish("fuzz_regressions", &c, &["CNDE_INT"], 20);
}

/// A compiler-shaped program that found an interpreter gap (fixed): `CNDE R1.y, -R4.y, PV.x,
/// -PV.x` selects −0, `MAX_DX10 R1.w, |PV.y|, -R7.w` reads it through ABS, and `PRED_SETGE_INT`
/// compares the result's bits with a negative float's. lavapipe drops the `abs` of a value it
/// proves not negative, −0 included (Mesa's `fabs(a(is_not_negative)) → a`), so the GPU compared
/// 0x80000000 where the hardware compares +0: the interpreter now leaves the sign of |zero| not
/// determined. Seed 1 #7428 of `long_shaped` (4 lanes before).
#[test]
fn shaped_regressions() {
    let Some(gpu) = gpu() else { return };
    let c = gx2::run(gpu, &gen::shaped_program(1, 7428));
    finish("shaped_regressions", &c, &["PRED_SETGE_INT", "MAX_DX10", "CNDE"], 60);
}

/// 300 fixed-seed random programs (VS and PS, register and block mode). About 45 lanes per
/// program are compared (13 919 at seed 1 since the jumps are aimed as compilers aim them and
/// ALU_BREAK / ALU_CONTINUE stay out of if-blocks (an ALU_CONTINUE sits directly in loop bodies instead); 14 963 before, when every jump pointed at
/// CF 0; the rest are not determined by the interpreter).
#[test]
fn fuzz_fixed_seed() {
    if gpu().is_none() {
        return;
    }
    let c = fuzz(fuzz_seed(), 0..300, 1);
    finish("fuzz_fixed_seed", &c, CF_FORMS, 13_500);
}

#[test]
#[ignore]
fn long_fuzz() {
    if gpu().is_none() {
        return;
    }
    let programs = shrec_verify::long_run_programs(10_000);
    let from = programs.start;
    let seed = fuzz_seed();
    // one GPU thread unless asked: lavapipe (Mesa 22.3) may crash or hang driven by two threads
    let threads = shrec_verify::env_u64("SHREC_FUZZ_THREADS", 1);
    let t0 = std::time::Instant::now();
    let c = fuzz(seed, programs, threads);
    println!(
        "long_fuzz seed {seed} from #{from}: {} programs, {} comparisons, {} mismatches, {} inconclusive, {:.0} s",
        c.programs,
        c.comparisons,
        c.mismatches,
        c.inconclusive,
        t0.elapsed().as_secs_f64()
    );
    finish("long_fuzz", &c, &[], 0);
}

#[test]
#[ignore]
fn fuzz_one() {
    let Some(gpu) = gpu() else { return };
    let index: u64 = std::env::var("SHREC_FUZZ_ONLY").expect("set SHREC_FUZZ_ONLY").parse().expect("a number");
    let p = if std::env::var_os("SHREC_FUZZ_SHAPED").is_some() { gen::shaped_program(fuzz_seed(), index) } else { gen::program(fuzz_seed(), index) };
    if let Ok(prog) = shrec::formats::gx2::isa::decode(&p.shader.program) {
        println!("{}", shrec::formats::gx2::disasm::disassemble(&prog));
    }
    if let Ok(m) = shrec::formats::gx2::lower::lower(&p.shader) {
        println!("{}", shrec::hlsl::write(&m));
    }
    if let Ok(prog) = shrec::formats::gx2::isa::decode(&p.shader.program) {
        for (i, case) in p.cases.iter().enumerate().take(4) {
            let r = shrec_verify::interp::gx2::run(&p.shader, &prog, case);
            println!("case {i}: undetermined {} {} killed {}", r.undetermined, r.why, r.killed);
        }
    }
    let c = gx2::run(gpu, &p);
    for r in &c.reports {
        println!("{r}");
    }
    println!("{}", c.summary("gx2"));
    assert_eq!(c.mismatches, 0);
}

/// The harness can fail: Latte MUL lowered as an IEEE multiply (0 × inf = NaN) is caught.
/// The operands are uniforms (c4 = (inf, 0, …)), not literals: a product of literals or with
/// a literal 0 is folded at compile time, by DXC (IEEE: NaN) or, since the registers are
/// `precise`, by the driver (lavapipe's `a × 0 → 0` assumes no NaN / inf), so it would not
/// show what the translated multiply computes.
#[test]
fn harness_detects_mutation() {
    let Some(gpu) = gpu() else { return };
    let prog = vec![
        cf("CALL_FS"),
        alu(
            "ALU",
            vec![G(
                vec![a("MUL", (2, 0), &[c(4, 0), c(4, 1)]), a("MUL", (2, 1), &[r(1, 0), c(4, 0)]), mov((2, 2), r(1, 1)), mov((2, 3), r(1, 2))],
                vec![],
            )],
        ),
        C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] },
        C::Exp { done: true, ty: 2, base: 0, gpr: 2, burst: 0, sel: [0, 1, 2, 3] },
    ];
    let mut p: TestProgram = gen::fixed("mutated MUL", ShaderKind::Vertex, &prog, prog.len() - 1, vec![], false, 5);
    for case in &mut p.cases {
        case.regfile[4] = [f32::INFINITY.to_bits(), 0, 0, 0];
    }
    set_mutation(Mutation::Gx2MulAsIeee);
    let mutated = gx2::run(gpu, &p);
    set_mutation(Mutation::None);
    let clean = gx2::run(gpu, &p);
    println!("mutated: {}\nclean: {}", mutated.summary("gx2"), clean.summary("gx2"));
    assert!(mutated.mismatches > 0, "the harness missed Latte MUL lowered as IEEE mul");
    assert_eq!(clean.mismatches, 0);
}

/// FRACT of ±inf and NaN is NaN (`x - floor(x)`; D3D10's `frc` table, which this DX10 part
/// implements with FRACT). HLSL `frac` alone leaves those lanes to the driver, and lavapipe
/// folded a fraction of a NaN used by `trunc` to 0 (Xenos compiler-shaped #9127, in
/// verify_xenos.rs `fuzz_regressions`); the prelude's `shrec_frac` computes them as `x - x`.
/// Here lavapipe gives NaN with `frac` alone too: this checks the rule, #9127 the fold.
#[test]
fn fract_of_infinities_and_nan() {
    let Some(gpu) = gpu() else { return };
    let fract = |k: u8| a("FRACT", (2, k), &[c(4, k)]);
    let prog = vec![
        cf("CALL_FS"),
        alu("ALU", vec![G(vec![fract(0), fract(1), fract(2), fract(3)], vec![])]),
        C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] },
        C::Exp { done: true, ty: 2, base: 0, gpr: 2, burst: 0, sel: [0, 1, 2, 3] },
    ];
    let mut p: TestProgram = gen::fixed("FRACT of inf, -inf, NaN, 2.75", ShaderKind::Vertex, &prog, prog.len() - 1, vec![], false, 7);
    for case in &mut p.cases {
        case.regfile[4] = [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 2.75].map(f32::to_bits);
    }
    let total = gx2::run(gpu, &p);
    finish("fract_of_infinities_and_nan", &total, &["FRACT"], 16);
}

/// Every VS and PS of the corpus (`tests/corpus/gx2`, .gsh), random inputs and uniforms.
#[test]
fn corpus_shaders() {
    let Some(gpu) = gpu() else { return };
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("tests/corpus/gx2");
    let mut files = common::files_with_extension(&dir, "gsh");
    files.sort();
    let mut total = Comparison::default();
    let mut shaders = 0;
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        for index in 0..16 {
            let Ok(s) = shrec::formats::gx2::load(ContainerKind::Gfd, &bytes, index) else { break };
            if s.kind == ShaderKind::Geometry {
                continue;
            }
            shaders += 1;
            let (cases, quads) = gen::corpus_cases(&s, 100 + index as u64);
            let name = format!("{} shader {index}", f.strip_prefix(&dir).unwrap().display());
            let t = TestProgram {
                name,
                shader: s,
                cases,
                quads,
                reproduce: "cargo test --release --test verify_gx2 -- corpus_shaders --nocapture".into(),
            };
            total.merge(gx2::run(gpu, &t));
        }
    }
    println!("corpus_shaders: {} files, {shaders} shaders", files.len());
    assert!(shaders >= 10, "only {shaders} corpus shaders");
    finish("corpus_shaders", &total, &[], 500);
}

/// Triage aid: shrinks a mismatching program (`SHREC_REDUCE="single_op OP vertex|pixel SEED"` or
/// `"fuzz SEED INDEX"`, or `"shaped SEED INDEX"` for the compiler-shaped generator) by replacing ALU instructions with `ADD dst, 0, 0` (literal operands are
/// kept so every group keeps its literal slots) and plain ALU / TEX clauses with CF NOPs, keeping
/// each change after which the GPU and the interpreter still disagree on some lane. Prints the
/// smallest program, its HLSL and the mismatch. Not a check: it asserts nothing about the code.
#[test]
#[ignore]
fn reduce() {
    let Some(gpu) = gpu() else { return };
    let spec = std::env::var("SHREC_REDUCE").expect("set SHREC_REDUCE");
    let w: Vec<&str> = spec.split_whitespace().collect();
    let mut t = match w.as_slice() {
        ["single_op", op, kind, seed] => {
            let op: &'static str =
                gen::FLOAT2.iter().chain(all_alu_ops().iter()).chain(gen::KILL.iter()).find(|o| *o == op).copied().expect("an ALU op");
            let kind = if *kind == "pixel" { ShaderKind::Pixel } else { ShaderKind::Vertex };
            gen::single_op(op, kind, seed.parse().unwrap())
        }
        ["fuzz", seed, index] => gen::program(seed.parse().unwrap(), index.parse().unwrap()),
        ["shaped", seed, index] => gen::shaped_program(seed.parse().unwrap(), index.parse().unwrap()),
        _ => panic!("bad SHREC_REDUCE {spec}"),
    };
    // the mismatch's identity: its case and lanes (values may change as the program shrinks)
    let signature = |t: &TestProgram| -> Option<Vec<String>> {
        let reports = gx2::run(gpu, t).reports;
        let r = reports.iter().find(|r| r.contains("mismatching lanes"))?;
        let body = r.split("mismatching lanes:").collect::<Vec<_>>();
        let case = body[0].lines().last().unwrap_or("").to_string();
        let lanes = body[1].split("outputs").next().unwrap_or("").lines().map(|l| {
            if l.contains("written") {
                l.to_string()
            } else {
                l.split(": gpu").next().unwrap_or("").to_string()
            }
        });
        Some(std::iter::once(case).chain(lanes).collect())
    };
    let want = signature(&t).unwrap_or_else(|| panic!("{spec}: no mismatch to reduce"));
    let any = std::env::var_os("SHREC_REDUCE_ANY").is_some();
    let fails = |t: &TestProgram| signature(t).is_some_and(|s| any || s == want);
    // every instruction must keep its slot (a replacement that moves out of t changes PS)
    let layout = |p: &[u8]| -> Option<Vec<Vec<usize>>> {
        let prog = shrec::formats::gx2::isa::decode(p).ok()?;
        Some(
            prog.cfs
                .iter()
                .flat_map(|(_, c)| match c {
                    shrec::formats::gx2::isa::Clause::Alu(gs) => gs.iter().map(|g| g.insts.iter().map(|i| i.slot).collect()).collect(),
                    _ => vec![],
                })
                .collect(),
        )
    };
    let word = |p: &[u8], i: usize| u32::from_le_bytes(p[i * 4..i * 4 + 4].try_into().unwrap());
    let put = |p: &mut Vec<u8>, i: usize, v: u32| p[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
    // candidate edits: (word index, new word0, new word1)
    let edits = |p: &[u8]| -> Vec<(usize, u32, u32)> {
        let prog = shrec::formats::gx2::isa::decode(p).expect("decodes");
        let mut out = vec![];
        for (cf, _) in &prog.cfs {
            let nop = [0, cf.raw[1] & (1 << 21 | 1 << 31)];
            match cf.cf {
                shrec::formats::gx2::isa::Cf::Alu { op, addr, count, .. } => {
                    if op == shrec::formats::gx2::isa::AluCfOp::ALU {
                        out.push((cf.pc as usize * 2, nop[0], nop[1]));
                    }
                    let mut i = addr as usize;
                    while i < (addr + count) as usize {
                        let mut lit = 0;
                        loop {
                            let (w0, w1) = (word(p, i * 2), word(p, i * 2 + 1));
                            let op3 = w1 >> 15 & 7 != 0;
                            let nsrc = if op3 {
                                3
                            } else {
                                shrec::formats::gx2::isa::AluOp::from_code(false, w1 >> 7 & 0x7FF).map_or(2, |x| x.srcs()) as usize
                            };
                            let fld = [w0 & 0x1FFF, w0 >> 13 & 0x1FFF, w1 & 0x1FFF];
                            let keep = |k: usize| if k < nsrc && fld[k] & 0x1FF == 253 { fld[k] & (0x1FF | 3 << 10) } else { 248 };
                            for k in 0..nsrc {
                                if fld[k] & 0x1FF == 253 {
                                    lit = lit.max((fld[k] >> 10 & 3) as usize + 1);
                                }
                            }
                            let last = w0 & 1 << 31;
                            let dst = w1 & (0x7F << 21 | 3 << 29);
                            let n0 = keep(0) | keep(1) << 13 | last;
                            let n1 = if op3 { keep(2) | 0x18 << 13 | dst } else { 1 << 4 & w1 | dst };
                            if (n0, n1) != (w0, w1) {
                                out.push((i * 2, n0, n1));
                            }
                            i += 1;
                            if last != 0 {
                                break;
                            }
                        }
                        i += lit.div_ceil(2);
                    }
                }
                shrec::formats::gx2::isa::Cf::Normal { op: shrec::formats::gx2::isa::CfOp::TEX, .. } => {
                    out.push((cf.pc as usize * 2, nop[0], nop[1]))
                }
                _ => {}
            }
        }
        out
    };
    let mut chunk = edits(&t.shader.program).len().max(1);
    loop {
        let list = edits(&t.shader.program);
        let mut changed = false;
        let mut k = 0;
        while k < list.len() {
            let mut c = t.clone();
            for &(i, a, b) in &list[k..(k + chunk).min(list.len())] {
                put(&mut c.shader.program, i, a);
                put(&mut c.shader.program, i + 1, b);
            }
            if layout(&c.shader.program) == layout(&t.shader.program) && fails(&c) {
                t = c;
                changed = true;
            }
            k += chunk;
        }
        eprintln!("chunk {chunk}: {} edits left", edits(&t.shader.program).len());
        if chunk == 1 && !changed {
            break;
        }
        chunk = (chunk / 2).max(1);
        if changed && chunk == 1 {
            continue;
        }
    }
    let m = shrec::formats::gx2::lower::lower(&t.shader).expect("lowers");
    println!("{}", shrec::hlsl::write(&m));
    for r in gx2::run(gpu, &t).reports {
        println!("{r}");
    }
    // the interpreter's trace of the mismatching case
    let ci: usize = want[0].trim().trim_start_matches("case ").trim_end_matches(':').parse().expect("a case number");
    let prog = shrec::formats::gx2::isa::decode(&t.shader.program).unwrap();
    std::env::set_var("SHREC_GX2_TRACE", "1");
    if t.shader.kind == ShaderKind::Vertex {
        shrec_verify::interp::gx2::run(&t.shader, &prog, &t.cases[ci]);
    } else {
        let inp: [shrec_verify::interp::gx2::Inputs; 4] = std::array::from_fn(|p| t.cases[4 * ci + p].clone());
        for (p, r) in shrec_verify::interp::gx2::run_quad(&t.shader, &prog, &inp).iter().enumerate() {
            eprintln!("trace: pixel {p} (runs interleave above): killed {} undetermined {} {}", r.killed, r.undetermined, r.why);
        }
    }
}

/// GX2 rows "MOVA* change AR only after the group" and "MOVA_FLOOR = floor" (docs/semantics-audit.md,
/// "Tests of the one-source rules"): AR is observable only through relative reads, which
/// `per_alu_op` does not make.
///
/// ```text
/// group 0: MOVA_FLOOR AR.x, 3.0
/// group 1: MOVA_FLOOR AR.x, v  |  MOV R2.y, c[8 + AR.x].x    (the old AR: c11)
/// group 2: MOV R2.x, 0  |  MOV R2.z, c[8 + AR.x].y  |  MOV R2.w, 0   (floor(v))
/// ```
///
/// v ∈ {−1.5, −0.25, 0.75, 2.5, −3.75}: floor and truncation differ for the negative ones.
#[test]
fn mova_floor_and_ar_after_the_group() {
    let Some(gpu) = gpu() else { return };
    let mut total = Comparison::default();
    let pos = C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] };
    let out = C::Exp { done: true, ty: 2, base: 0, gpr: 2, burst: 0, sel: [0, 1, 2, 3] };
    for (k, v) in [-1.5f32, -0.25, 0.75, 2.5, -3.75].into_iter().enumerate() {
        let mova = || {
            let mut m = a("MOVA_FLOOR", (0, 0), &[lit(0)]);
            m.write = false;
            m
        };
        let prog = vec![
            cf("CALL_FS"),
            alu(
                "ALU",
                vec![
                    G(vec![mova()], vec![3.0f32.to_bits(), 0]),
                    G(vec![mova(), mov((2, 1), c(8, 0).rel())], vec![v.to_bits(), 0]),
                    G(vec![mov((2, 0), special(248)), mov((2, 2), c(8, 1).rel()), mov((2, 3), special(248))], vec![]),
                ],
            ),
            pos.clone(),
            out.clone(),
        ];
        let p = gen::fixed(&format!("MOVA_FLOOR {v}"), ShaderKind::Vertex, &prog, prog.len() - 1, vec![], false, 60 + k as u64);
        total.merge(gx2::run(gpu, &p));
    }
    finish("mova_floor_and_ar_after_the_group", &total, &["MOVA_FLOOR", "MOV"], 100);
}

/// GX2 row "DOT4 is non-IEEE like MUL": a DOT4 whose x products are 0 × inf, −0 × inf and
/// 0 × NaN (literals) — 0 with the non-IEEE multiply, NaN with the IEEE one — beside DOT4_IEEE on
/// the same operands (NaN). `per_alu_op` draws no inf / NaN operands, so it cannot tell them
/// apart (mutation check in docs/semantics-audit.md).
#[test]
fn dot4_multiplies_zero_times_anything_to_zero() {
    let Some(gpu) = gpu() else { return };
    let mut total = Comparison::default();
    let pos = C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] };
    let out = C::Exp { done: true, ty: 2, base: 0, gpr: 2, burst: 0, sel: [0, 1, 2, 3] };
    for (k, (zero, other)) in [(0.0f32, f32::INFINITY), (-0.0, f32::NEG_INFINITY), (0.0, f32::NAN)].into_iter().enumerate() {
        let dot = |name: &'static str, dst: u32| -> Vec<A> {
            (0..4u8)
                .map(|l| {
                    let (x, y) = if l == 0 { (lit(0), lit(1)) } else { (r(1, l), c(4, l)) };
                    let mut d = a(name, (dst, l), &[x, y]);
                    d.write = l == 0;
                    d
                })
                .collect()
        };
        let prog = vec![
            cf("CALL_FS"),
            alu(
                "ALU",
                vec![
                    G(dot("DOT4", 2), vec![zero.to_bits(), other.to_bits()]),
                    G(dot("DOT4_IEEE", 3), vec![zero.to_bits(), other.to_bits()]),
                    G(vec![mov((2, 1), r(3, 0)), mov((2, 2), r(1, 2)), mov((2, 3), r(1, 3))], vec![]),
                ],
            ),
            pos.clone(),
            out.clone(),
        ];
        let p = gen::fixed(&format!("DOT4 {zero:?} x {other:?}"), ShaderKind::Vertex, &prog, prog.len() - 1, vec![], false, 70 + k as u64);
        total.merge(gx2::run(gpu, &p));
    }
    finish("dot4_multiplies_zero_times_anything_to_zero", &total, &["DOT4", "DOT4_IEEE"], 50);
}

/// MUL_IEEE of −2, +inf, NaN and −inf by a literal +0 and by a literal −0: IEEE gives ∓0 and
/// NaN. Without float controls the NaN lanes are "not determined" (a driver may fold `x · 0` to
/// 0). With `SHREC_VERIFY_FLOAT_CONTROLS=1` (direct back end, `SignedZeroInfNanPreserve`) the
/// −0 program is compared on every lane; the +0 one stays undetermined, because lavapipe folds a
/// product with the constant +0 even then (`check::plus_zero_products_fold`: compared, its NaN
/// lanes mismatch 24 times, the GPU giving +0).
#[test]
fn ieee_multiply_by_a_literal_zero() {
    let Some(gpu) = gpu() else { return };
    let mut total = Comparison::default();
    let pos = C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] };
    let out = C::Exp { done: true, ty: 2, base: 0, gpr: 2, burst: 0, sel: [0, 1, 2, 3] };
    for (k, zero) in [0.0f32, -0.0].into_iter().enumerate() {
        let mul = |l: u8| a("MUL_IEEE", (2, l), &[c(4, l), lit(0)]);
        let prog = vec![cf("CALL_FS"), alu("ALU", vec![G(vec![mul(0), mul(1), mul(2), mul(3)], vec![zero.to_bits()])]), pos.clone(), out.clone()];
        let mut p = gen::fixed(&format!("MUL_IEEE by literal {zero:?}"), ShaderKind::Vertex, &prog, prog.len() - 1, vec![], false, 80 + k as u64);
        for case in &mut p.cases {
            case.regfile[4] = [-2.0, f32::INFINITY, f32::NAN, f32::NEG_INFINITY].map(f32::to_bits);
        }
        let c = gx2::run(gpu, &p);
        println!("MUL_IEEE by a literal {zero:?}: {} comparisons, {} inconclusive, {} mismatches", c.comparisons, c.inconclusive, c.mismatches);
        if zero.is_sign_negative() && shrec_verify::check::float_controls() {
            assert_eq!(c.inconclusive, 0, "with float controls every lane of x · (−0) is compared");
        }
        total.merge(c);
    }
    finish("ieee_multiply_by_a_literal_zero", &total, &["MUL_IEEE"], 8);
}

/// GX2 row "Bounded loops: … INIT and INC signed" (docs/semantics-audit.md, "Tests of the
/// one-source rules"): a LOOP_START over loop constant (COUNT 3, INIT 5, INC −2) adding
/// `c[8 + AL]` to R2.x each iteration (AL = 5, 3, 1); read unsigned, INC would be 254.
/// `control_flow_forms` has INC 2 only, and the fuzzed loops' INC −1 is never seen through an
/// AL-relative read there.
#[test]
fn loop_constant_inc_is_signed() {
    let Some(gpu) = gpu() else { return };
    let pos = C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] };
    let out = C::Exp { done: true, ty: 2, base: 0, gpr: 2, burst: 0, sel: [0, 1, 2, 3] };
    let lv = |count: u32, init: i32, inc: i32| count | (init as u32 & 0xFFF) << 12 | (inc as u32 & 0xFF) << 24;
    let mut acc = a("ADD", (2, 0), &[r(2, 0), c(8, 0).rel()]);
    acc.index_mode = 4;
    let prog = vec![
        cf("CALL_FS"),
        alu("ALU", vec![G((0..4).map(|l| mov((2, l), special(248))).collect(), vec![])]),
        C::N { op: "LOOP_START", addr: 0, pop: 0, cf_const: 0, tex: vec![] },
        alu("ALU", vec![G(vec![acc], vec![])]),
        cf("LOOP_END"),
        pos,
        out,
    ];
    let p = gen::fixed("LOOP_START INC -2", ShaderKind::Vertex, &prog, prog.len() - 1, vec![LoopVar { offset: 0, value: lv(3, 5, -2) }], false, 80);
    let total = gx2::run(gpu, &p);
    finish("loop_constant_inc_is_signed", &total, &["LOOP_START", "ADD"], 20);
}

/// Issue 19, found by the compiler-shaped long run (seed 1, programs #6063 and #8142, reduced
/// with `SHREC_REDUCE="shaped 1 N"`): the host must evaluate each ALU operation as written
/// (docs/semantics-audit.md, "Host evaluation"). `ADD R3.x, c4.x, -c4.x` with c4.x = inf is NaN,
/// so `CNDGE` selects its third operand; lavapipe folded `x + -x` to 0 and selected the second.
/// `MUL_IEEE/2 R3.y, c4.y, -c4.z` (OMOD ÷2) with 3e38 × 2 overflows to −inf before the halving;
/// lavapipe reassociated it to `c4.y × (c4.z × −0.5)` = −3e38. Both pass once the registers are
/// `precise` (SPIR-V `NoContraction`); both fail without it.
#[test]
fn host_evaluates_each_operation_as_written() {
    let Some(gpu) = gpu() else { return };
    let pos = C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] };
    let out = C::Exp { done: true, ty: 2, base: 0, gpr: 2, burst: 0, sel: [0, 1, 2, 3] };
    let mut halved = a("MUL_IEEE", (3, 1), &[c(4, 1), c(4, 2).neg()]);
    halved.omod = 3; // ÷2
    let prog = vec![
        cf("CALL_FS"),
        alu(
            "ALU",
            vec![
                G(vec![a("ADD", (3, 0), &[c(4, 0), c(4, 0).neg()]), halved], vec![]),
                G(vec![a("CNDGE", (2, 0), &[r(3, 0), c(5, 0), c(5, 1)]), mov((2, 1), r(3, 1)), mov((2, 2), r(1, 2)), mov((2, 3), r(1, 3))], vec![]),
            ],
        ),
        pos,
        out,
    ];
    let mut p = gen::fixed("x - x and (a * b) / 2 as written", ShaderKind::Vertex, &prog, prog.len() - 1, vec![], false, 90);
    for case in &mut p.cases {
        case.regfile[4] = [f32::INFINITY.to_bits(), 3.0e38f32.to_bits(), 2.0f32.to_bits(), 0];
        case.regfile[5] = [1.0f32.to_bits(), 2.0f32.to_bits(), 0, 0];
    }
    let total = gx2::run(gpu, &p);
    for r in &total.reports {
        println!("{r}");
    }
    finish("host_evaluates_each_operation_as_written", &total, &["ADD", "MUL_IEEE", "CNDGE"], 16);
}

/// Selector values of the else-if ladder's cases: 1..=6 take branch 1..=6, 0 and 7 take none.
const LADDER_SELECTORS: [u32; 8] = [1, 2, 3, 4, 5, 6, 0, 7];

/// `if (s == 1) .. else if (s == 2) .. … else if (s == 6) ..` as Nintendo's compiler emits it
/// in 11 retail shaders: five nested `ALU_PUSH_BEFORE; JUMP; ALU; ELSE` levels, the innermost
/// if `JUMP ADDR(25) POP_CNT(4)` over `ALU_POP2_AFTER; POP POP_CNT(2)`, the pops of four levels
/// split over two instructions. Every then-part adds its level to R2.x; the else-parts of
/// levels 2 and 1 end with a clause of their own (R2.y += 10, R2.z += 100), closing them with
/// ALU_POP_AFTER. Each ELSE aims past the first instruction that closes its level and pops
/// what that fall-through path pops. `selector(k)` is the operand compared with `k`; `last`
/// replaces CF 24 (the POP) for the rejection test.
fn else_if_ladder(selector: S, last: C) -> Vec<C> {
    let jump = |op: &'static str, addr: u32, pop: u32| C::N { op, addr, pop, cf_const: 0, tex: vec![] };
    let add = |ch: u8, v: f32| G(vec![a("ADD", (2, ch), &[r(2, ch), lit(0)])], vec![v.to_bits(), 0]);
    let cond = |k: u32| {
        let mut p = a("PRED_SETE", (9, 0), &[selector, lit(0)]);
        p.exec = true;
        p.pred = true;
        p.write = false;
        let mut groups = vec![G(vec![p], vec![(k as f32).to_bits(), 0])];
        if k == 1 {
            // R2 = 0 before the first test, while every lane is active
            groups.insert(0, G((0..4u8).map(|ch| mov((2, ch), special(248))).collect(), vec![]));
        }
        alu("ALU_PUSH_BEFORE", groups)
    };
    // (target, pop count) of the ELSE of levels 1..=5 (at depth 1..=5)
    let else_of = [(27, 1), (26, 1), (25, 1), (25, 2), (24, 1)];
    let mut prog = vec![cf("CALL_FS")]; // 0
    for (level, (target, pop)) in (1..=5u32).zip(else_of) {
        let at = prog.len() as u32; // 4 level - 3
        prog.push(cond(level));
        prog.push(jump("JUMP", at + 3, 0)); // no lane active: to the ELSE
        prog.push(alu("ALU", vec![add(0, level as f32)]));
        prog.push(jump("ELSE", target, pop));
    }
    prog.push(cond(6)); // 21
    prog.push(jump("JUMP", 25, 4)); // 22: no lane active: past both closes, popping 4
    prog.push(alu("ALU_POP2_AFTER", vec![add(0, 6.0)])); // 23: then, pop 6 → 4
    prog.push(last); // 24: POP POP_CNT(2), 4 → 2
    prog.push(alu("ALU_POP_AFTER", vec![add(1, 10.0)])); // 25: rest of level 2's else, 2 → 1
    prog.push(alu("ALU_POP_AFTER", vec![add(2, 100.0)])); // 26: rest of level 1's else, 1 → 0
    prog.push(C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] }); // 27
    prog.push(C::Exp { done: true, ty: 2, base: 0, gpr: 2, burst: 0, sel: [0, 1, 2, 3] }); // 28
    prog
}

/// The ladder's program with each case's selector in R1.x (attribute 0, lanes disagree) or in
/// c4.x (a constant, every lane of a draw agrees).
fn ladder_program(name: &str, uniform: bool, last: C) -> gx2::TestProgram {
    let selector = if uniform { c(4, 0) } else { r(1, 0) };
    let prog = else_if_ladder(selector, last);
    let mut t = gen::fixed(name, ShaderKind::Vertex, &prog, prog.len() - 1, vec![], false, 41);
    for (case, s) in t.cases.iter_mut().zip(LADDER_SELECTORS) {
        case.attribs.get_mut(&0).expect("attribute 0")[0] = s as f32;
        case.regfile[4][0] = (s as f32).to_bits();
    }
    t
}

/// The else-if ladder (see [`else_if_ladder`]) runs exactly: today's translator is checked
/// against the interpreter on lavapipe for lanes that take each of the six branches and none,
/// with uniform and divergent selectors, and the interpreter's results against the values the
/// source-level `if / else if` gives. Before the jump check allowed the innermost jump's pops
/// to be split over ALU_POP2_AFTER and POP, the translator rejected it: "the jump at CF 22 to
/// CF 25 (taken when no lane is active) is not exact per lane: the code it skips pops to depth
/// 4 where the taken jump leaves 2 (CF 23)".
#[test]
fn else_if_ladder_five_deep() {
    let mut total = Comparison::default();
    for uniform in [true, false] {
        let tag = if uniform { "uniform" } else { "divergent" };
        let t = ladder_program(&format!("else-if ladder ({tag})"), uniform, cf_pop("POP", 2));
        let lowered = shrec::formats::gx2::lower::lower(&t.shader);
        assert!(lowered.is_ok(), "ladder ({tag}): {}", lowered.err().map(|e| e.to_string()).unwrap_or_default());
        // the interpreter against the source-level meaning: R2 = (branch taken, 10 unless
        // branch 1 or 2 was taken, 100 unless branch 1 was taken)
        let prog = isa::decode(&t.shader.program).expect("decodes");
        for (case, s) in t.cases.iter().zip(LADDER_SELECTORS) {
            let run = shrec_verify::interp::gx2::run(&t.shader, &prog, case);
            assert!(!run.undetermined, "selector {s} ({tag}): {}", run.why);
            let got = run.exports[&(2, 0)].map(|v| v.val());
            let branch = if (1..=6).contains(&s) { s as f32 } else { 0.0 };
            let want = [branch, if s == 1 || s == 2 { 0.0 } else { 10.0 }, if s == 1 { 0.0 } else { 100.0 }];
            assert_eq!(got[..3], want, "selector {s} ({tag})");
        }
        let Some(gpu) = gpu() else { return };
        total.merge(gx2::run(gpu, &t));
    }
    let taken = shrec_verify::interp::gx2::JUMP_TAKEN;
    finish("else_if_ladder_five_deep", &total, &["JUMP", "ELSE", "POP", "ALU_POP_AFTER", "ALU_POP2_AFTER", taken], 64);
}

/// What the jump check still refuses: the same ladder with CF 24 an ALU clause that pops 2
/// (R2.w += 1000) instead of the POP. A lane that reaches CF 22 inactive but was active when
/// level 5 began (it took branch 5, or none) falls through, CF 23's pop wakes it (the entry of
/// level 5) and it runs CF 24's clause — which the taken jump skips. The translator rejects the
/// program naming both CFs; the interpreter finds the result wave-dependent for exactly those
/// lanes. For branch 5 only the run taking CF 22's jump alone shows it: taking both ELSE 5 (to
/// CF 24) and CF 22's jump, or neither, runs the clause either way.
#[test]
fn else_if_ladder_with_work_between_the_pops_is_rejected() {
    let last = alu("ALU_POP2_AFTER", vec![G(vec![a("ADD", (2, 3), &[r(2, 3), lit(0)])], vec![1000.0f32.to_bits(), 0])]);
    for uniform in [true, false] {
        let t = ladder_program("else-if ladder with a clause between its pops", uniform, last.clone());
        let err = shrec::formats::gx2::lower::lower(&t.shader).map(|_| ()).expect_err("a clause between the pops is not exact per lane").to_string();
        assert!(
            err.contains("the jump at CF 22 to CF 25 (taken when no lane is active) is not exact per lane")
                && err.contains("runs ALU_POP2_AFTER after a pop restored an entry saved before the jump")
                && err.contains("(CF 24)"),
            "{err}"
        );
        let prog = isa::decode(&t.shader.program).expect("decodes");
        for (case, s) in t.cases.iter().zip(LADDER_SELECTORS) {
            let run = shrec_verify::interp::gx2::run(&t.shader, &prog, case);
            let active_at_level_5_inactive_at_22 = s == 5 || !(1..=6).contains(&s);
            assert_eq!(run.undetermined, active_at_level_5_inactive_at_22, "selector {s}: {}", run.why);
            if run.undetermined {
                assert!(run.why.contains("other lanes of the wave"), "selector {s}: {}", run.why);
            }
        }
    }
}

/// Every jump of a program the translator accepts is exact per lane, so the interpreter's runs
/// in a uniform wave (every jump reached by an inactive lane taken, with its pops), a divergent
/// one (none taken) and the waves taking one of them must agree on every lane of the
/// compiler-shaped (else-if ladders included) and random fixed-seed programs. A lane where they
/// differ would be left out of the GPU comparison as inconclusive; here it fails. CPU only.
#[test]
fn accepted_programs_never_depend_on_the_wave() {
    use shrec_verify::interp::gx2 as interp;
    let (mut lanes, mut why) = (0u32, std::collections::BTreeMap::<String, u32>::new());
    let shaped = (0..200).map(|i| gen::shaped_program_and_stats(fuzz_seed(), i).0);
    let random = (0..300).map(|i| gen::program(fuzz_seed(), i));
    for t in shaped.chain(random) {
        if shrec::formats::gx2::lower::lower(&t.shader).is_err() {
            continue;
        }
        let prog = isa::decode(&t.shader.program).expect("decodes");
        let runs: Vec<interp::Run> = if t.shader.kind == ShaderKind::Vertex {
            t.cases.iter().map(|c| interp::run(&t.shader, &prog, c)).collect()
        } else {
            t.cases.chunks(4).flat_map(|q| interp::run_quad(&t.shader, &prog, &std::array::from_fn(|p| q[p].clone()))).collect()
        };
        for r in runs {
            lanes += 1;
            if r.undetermined {
                *why.entry(r.why.clone()).or_default() += 1;
            }
            assert!(!r.why.contains("other lanes of the wave"), "{} ({}): {}", t.name, t.reproduce, r.why);
        }
    }
    common::log_uncaptured(&format!("accepted_programs_never_depend_on_the_wave: {lanes} invocations; undetermined by reason: {why:?}"));
    assert!(lanes >= 1000, "only {lanes} invocations");
}

/// `layered_pyramid` with every texel's first component replaced by a depth in [0, 1] drawn
/// from its running index, so neighbouring texels, slices, faces and levels hold different
/// depths and a wrong level or texel changes a comparison's outcome for some references.
fn depth_pyramid(shape: shrec_verify::TextureShape, size: u32, levels: u32, layers: u32) -> shrec_verify::interp::gx2::Texture {
    let mut t = layered_pyramid(shape, size, levels, layers);
    let depth = |x: &mut [f32; 4]| {
        let n = (x[3] * 8.0) as u32;
        *x = [((n * 37) % 61) as f32 / 60.0, 0.0, 0.0, 0.0];
    };
    t.texels.iter_mut().for_each(depth);
    t.mips.iter_mut().flatten().for_each(depth);
    t
}

/// Depth compare at an explicit LOD, with a bias or with gradients, on shadow textures of four
/// mip levels (8×8 level 0): SAMPLE_C_L and SAMPLE_C_G_L (LOD src.w = 4·FRACT(in.w): every level
/// and the upper clamp), SAMPLE_C_G_LB (the SET_GRADIENTS LOD 1 or 2 biased by src.w =
/// 4·FRACT(in.w) − 2) and SAMPLE_C_LB (one-level texture: the bias selects nothing) with the
/// reference in src.z on 2D shadow samplers (GX2SamplerType 6); SAMPLE_C_G (gradient LOD, with
/// and without LOD_BIAS = 1) and SAMPLE_C_G_LZ with the reference in src.w on 2D and 2D-array
/// shadow samplers (6, 12), SAMPLE_C_G_LZ on a cube shadow sampler (8); SAMPLE_C with LOD_BIAS in
/// pixel quads. Vertex shaders run every form but _LB. Point sampling at whole levels: every
/// result is exactly 0 or 1. Fails on a main where the six forms are rejected.
#[test]
fn compare_levels() {
    let Some(gpu) = gpu() else { return };
    use shrec_verify::TextureShape as S_;
    let flat = depth_pyramid(S_::Flat, 8, 4, 1);
    let array = depth_pyramid(S_::FlatArray, 8, 4, 3);
    let cube = depth_pyramid(S_::Cube, 8, 4, 6);
    let one_level = depth_pyramid(S_::Flat, 8, 1, 1);
    let lod_bias_one = |mut t: T| {
        t.0[1] |= 8 << 21; // LOD_BIAS s3.3 = 1.0
        t
    };
    let dst_sel = [0, 4, 5, 0];
    let mut total = Comparison::default();
    let mut k = 0;
    for (kind, src) in [(ShaderKind::Pixel, 0), (ShaderKind::Vertex, 1)] {
        // R3.w = 4·FRACT(in.w) + shift
        let w_lane = |shift: f32| {
            vec![
                G(vec![a("FRACT", (3, 3), &[r(src, 3)])], vec![]),
                G(vec![a("MULADD", (3, 3), &[r(3, 3), lit(0), lit(1)])], vec![4.0f32.to_bits(), shift.to_bits()]),
            ]
        };
        // gradients in normalized units of the 8-texel level 0: H = 2 texels along x, V = 1 or
        // 4 texels along y (gradient LOD 1 or 2, exact whichever ρ form the host uses)
        let grads = |v: f32| {
            [
                G(vec![mov((5, 0), lit(0)), mov((5, 1), special(248)), mov((5, 2), special(248))], vec![0.25f32.to_bits()]),
                G(vec![mov((6, 0), special(248)), mov((6, 1), lit(0)), mov((6, 2), special(248))], vec![v.to_bits()]),
            ]
        };
        let set_grads = || vec![tex("SET_GRADIENTS_H", 0, 0, 5, 0, [0, 1, 2, 4]), tex("SET_GRADIENTS_V", 0, 0, 6, 0, [0, 1, 2, 4])];
        // the reference in src.z (R3.z = FRACT(in.z)), the LOD or bias in src.w
        for (name, shift) in [("SAMPLE_C_L", 0.0f32), ("SAMPLE_C_G_L", 0.0), ("SAMPLE_C_G_LB", -2.0), ("SAMPLE_C_LB", -2.0)] {
            if name == "SAMPLE_C_LB" && kind != ShaderKind::Pixel {
                continue; // no implicit LOD to bias outside pixel shaders: refused
            }
            let texture = if name == "SAMPLE_C_LB" { &one_level } else { &flat };
            for v in [0.125f32, 0.5] {
                let mut groups = vec![G(vec![mov((3, 0), r(src, 0)), mov((3, 1), r(src, 1)), a("FRACT", (3, 2), &[r(src, 2)])], vec![])];
                groups.extend(grads(v));
                groups.extend(w_lane(shift));
                for offset in [[0, 0, 0], [2, -4, 0]] {
                    let mut fetches = set_grads();
                    fetches.push(tex_unit(name, 3, [0, 1, 2, 3], dst_sel, false, offset));
                    let prog =
                        fetch_program(kind, Some(alu("ALU", groups.clone())), C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: fetches }, 0);
                    for seed in 0..3 {
                        total.merge(run_textured(
                            gpu,
                            format!("{name} {kind:?} V {v} offset {offset:?} seed {seed}"),
                            kind,
                            &prog,
                            170 + k,
                            6,
                            texture,
                        ));
                        k += 1;
                    }
                }
            }
        }
        // the reference in src.w (R3.w = FRACT(in.w)); 2D and 2D array (slice from in.z)
        for (name, bias) in [("SAMPLE_C_G", false), ("SAMPLE_C_G", true), ("SAMPLE_C_G_LZ", false), ("SAMPLE_C", true)] {
            if name == "SAMPLE_C" && kind != ShaderKind::Pixel {
                continue; // LOD_BIAS on an implicit LOD: pixel shaders only
            }
            for (ty, texture, slice) in [(6, &flat, false), (12, &array, true)] {
                // SAMPLE_C's implicit LOD is determined on one-level textures only
                let texture = if name == "SAMPLE_C" {
                    if slice {
                        continue;
                    } else {
                        &one_level
                    }
                } else {
                    texture
                };
                let mut groups =
                    vec![G(vec![mov((3, 0), r(src, 0)), mov((3, 1), r(src, 1)), mov((3, 2), r(src, 2)), a("FRACT", (3, 3), &[r(src, 3)])], vec![])];
                groups.extend(grads(0.5));
                let mut fetches = set_grads();
                let fetch = tex_unit(name, 3, [0, 1, 2, 3], dst_sel, slice, [0, 0, 0]);
                fetches.push(if bias { lod_bias_one(fetch) } else { fetch });
                let prog = fetch_program(kind, Some(alu("ALU", groups)), C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: fetches }, 0);
                for seed in 0..4 {
                    total.merge(run_textured(gpu, format!("{name} bias {bias} {kind:?} type {ty} seed {seed}"), kind, &prog, 170 + k, ty, texture));
                    k += 1;
                }
            }
        }
        // SAMPLE_C_G_LZ on a cube: face coordinates as the compilers make them (see cube_sample),
        // the reference in R3.w
        let coords = vec![
            cube_group(3, |ch| r(src, ch)),
            G(vec![a("RECIP_IEEE", (3, 2), &[r(3, 2).abs()])], vec![]),
            G(vec![a("MULADD", (3, 0), &[r(3, 0), ps(), lit(0)]), a("MULADD", (3, 1), &[r(3, 1), ps(), lit(0)])], vec![1.5f32.to_bits()]),
            G(vec![a("FRACT", (3, 2), &[r(src, 3)])], vec![]),
        ];
        let fetch = tex_unit("SAMPLE_C_G_LZ", 3, [1, 0, 3, 2], dst_sel, false, [0, 0, 0]);
        let prog = fetch_program(kind, Some(alu("ALU", coords)), tex_clause(fetch), 0);
        for seed in 0..4 {
            total.merge(run_textured(gpu, format!("SAMPLE_C_G_LZ {kind:?} cube seed {seed}"), kind, &prog, 170 + k, 8, &cube));
            k += 1;
        }
    }
    let ops = ["SAMPLE_C_L", "SAMPLE_C_LB", "SAMPLE_C_G", "SAMPLE_C_G_L", "SAMPLE_C_G_LB", "SAMPLE_C_G_LZ", "SAMPLE_C", "SET_GRADIENTS_H"];
    finish("compare_levels", &total, &ops, 1000);
}

/// A program that spills to scratch memory and reads it back as Mesa r600 writes it (docs/gx2.md
/// "GX2 scratch memory"): R4 = src × 1.5, R5 = src + 2, R6 = src.wzyx; MEM_SCRATCH WRITE_ACK of
/// R4 to element 0, of R5.xz to element 2, a WRITE (no ACK) of R4 to element 5, of R5 to 6, of
/// R4 to element 3; R4 and R5 cleared; R6.w over element 0's w; R6 over element 3 only where src.x >
/// src.y (an if-block); WAIT_ACK; then a TEX clause reads two elements into R2 and R3 through
/// `reads`' DST_SEL, which are exported. Lanes nothing wrote (element 1, the y and w of element
/// 2) are not compared.
fn scratch_program(kind: ShaderKind, reads: [(u32, [u32; 4]); 2]) -> Vec<C> {
    let src = if kind == ShaderKind::Pixel { 0 } else { 1 };
    let lanes = |name: &'static str, d: u32, s: [u8; 4], k: Option<u32>| {
        let insts = (0..4u8).map(|c| match k {
            Some(_) => a(name, (d, c), &[r(src, s[c as usize]), lit(0)]),
            None => a(name, (d, c), &[r(src, s[c as usize])]),
        });
        G(insts.collect(), k.into_iter().collect())
    };
    let zero = |d: u32| G((0..4u8).map(|c| mov((d, c), special(248))).collect(), vec![]);
    let mut cond = a("PRED_SETGT", (9, 0), &[r(src, 0), r(src, 1)]);
    cond.exec = true;
    cond.pred = true;
    cond.write = false;
    let mut prog = Vec::new();
    if kind == ShaderKind::Vertex {
        prog.push(cf("CALL_FS"));
    }
    prog.push(alu(
        "ALU",
        vec![
            lanes("MUL", 4, [0, 1, 2, 3], Some(1.5f32.to_bits())),
            lanes("ADD", 5, [0, 1, 2, 3], Some(2.0f32.to_bits())),
            lanes("MOV", 6, [3, 2, 1, 0], None),
        ],
    ));
    prog.push(scratch_write(0, 4, 0xF));
    prog.push(scratch_write(2, 5, 0b0101));
    prog.push(C::Scratch { ty: 0, base: 5, gpr: 4, burst: 0, mask: 0xF });
    prog.push(C::Scratch { ty: 0, base: 6, gpr: 5, burst: 0, mask: 0xF });
    prog.push(scratch_write(3, 4, 0xF));
    prog.push(alu("ALU", vec![zero(4), zero(5)]));
    prog.push(scratch_write(0, 6, 0b1000));
    let at = prog.len() as u32;
    prog.push(alu("ALU_PUSH_BEFORE", vec![G(vec![cond], vec![])]));
    prog.push(C::N { op: "JUMP", addr: at + 3, pop: 0, cf_const: 0, tex: vec![] });
    prog.push(scratch_write(3, 6, 0xF));
    prog.push(cf_pop("POP", 1));
    prog.push(cf("WAIT_ACK"));
    let fetches = reads.iter().enumerate().map(|(k, (e, sel))| scratch_read(*e, 2 + k as u32, *sel)).collect();
    prog.push(C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: fetches });
    if kind == ShaderKind::Vertex {
        prog.push(C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] });
    }
    prog.push(C::Exp { done: true, ty: if kind == ShaderKind::Pixel { 0 } else { 2 }, base: 0, gpr: 2, burst: 1, sel: [0, 1, 2, 3] });
    prog
}

/// Scratch spills (`scratch_program`) in vertex shaders and pixel quads, every element read
/// back through several destination selects (lanes, 0, 1, masked).
#[test]
fn scratch_spills() {
    let Some(gpu) = gpu() else { return };
    let mut total = Comparison::default();
    let reads: [[(u32, [u32; 4]); 2]; 4] = [
        [(0, [0, 1, 2, 3]), (2, [0, 2, 4, 5])],
        [(5, [3, 2, 1, 0]), (6, [0, 1, 2, 3])],
        [(3, [0, 1, 2, 3]), (1, [0, 1, 2, 3])],
        [(2, [1, 3, 0, 2]), (0, [3, 3, 7, 0])],
    ];
    for kind in [ShaderKind::Vertex, ShaderKind::Pixel] {
        for (k, r) in reads.iter().enumerate() {
            let prog = scratch_program(kind, *r);
            for seed in 0..2 {
                let t = gen::fixed(&format!("scratch {kind:?} reads {k} seed {seed}"), kind, &prog, prog.len() - 1, vec![], false, 40 + seed);
                total.merge(gx2::run(gpu, &t));
            }
        }
    }
    finish("scratch_spills", &total, &["MEM_SCRATCH", "MEM", "WAIT_ACK", "MUL", "ADD", "MOV"], 400);
}

/// What the scratch model leaves out is refused with a reason naming it (no GPU needed): a
/// read with no WAIT_ACK after the write, an indexed write (WRITE_IND), a burst, a read of the scatter
/// buffer (MEM_OP 2), an indexed read, a cached read; the program Mesa's shape gives translates.
#[test]
fn scratch_refusals() {
    let lowered = |prog: &[C]| {
        let t = gen::fixed("scratch", ShaderKind::Pixel, prog, prog.len() - 1, vec![], false, 1);
        shrec::formats::gx2::lower::lower(&t.shader).map(drop).map_err(|e| e.to_string())
    };
    let good = scratch_program(ShaderKind::Pixel, [(0, [0, 1, 2, 3]), (2, [0, 1, 2, 3])]);
    assert_eq!(lowered(&good), Ok(()));
    let wait = good.iter().position(|c| matches!(c, C::N { op: "WAIT_ACK", .. })).unwrap();
    let tex = wait + 1;
    let mut no_wait = good.clone();
    no_wait[wait] = cf("NOP");
    let err = lowered(&no_wait).unwrap_err();
    assert!(err.contains("a scratch read while a MEM_SCRATCH write is not acknowledged"), "{err}");
    let mut indexed = good.clone();
    indexed[1] = C::Scratch { ty: 3, base: 0, gpr: 4, burst: 0, mask: 0xF };
    let err = lowered(&indexed).unwrap_err();
    assert!(err.contains("MEM_SCRATCH") && err.contains("indexed write"), "{err}");
    let mut burst = good.clone();
    burst[1] = C::Scratch { ty: 2, base: 0, gpr: 4, burst: 1, mask: 0xF };
    let err = lowered(&burst).unwrap_err();
    assert!(err.contains("MEM_SCRATCH with BURST_COUNT 1"), "{err}");
    let with_read = |f: &dyn Fn(&mut T)| {
        let mut p = good.clone();
        if let C::N { tex: ts, .. } = &mut p[tex] {
            f(&mut ts[0]);
        }
        lowered(&p).unwrap_err()
    };
    let err = with_read(&|t| t.0[0] |= 2 << 8);
    assert!(err.contains("MEM_OP 2 (the scatter buffer"), "{err}");
    let err = with_read(&|t| t.0[0] |= 1 << 12);
    assert!(err.contains("scratch read with INDEXED"), "{err}");
    let err = with_read(&|t| t.0[0] &= !(1 << 11));
    assert!(err.contains("scratch read with UNCACHED 0"), "{err}");
}

/// Stream-out (MEM_STREAM0-3, docs/gx2.md "GX2 stream-out"): vertex shaders writing lanes of
/// GPRs to all four buffers at various offsets (masks with gaps, WRITE and WRITE_ACK, ARRAY_SIZE
/// 0xFFF or the top lane, a GPR written again after a change) run with transform feedback on
/// lavapipe; every dword of every record is compared with the interpreter's buffers (dwords it
/// does not write must keep the sentinel). Then the same programs with the placements one
/// dword off and with the writes dropped: the comparison must fail.
#[test]
fn stream_out() {
    use shrec_verify::gx2_stream::{self, random_program, with_strides, write};
    let Some(gpu) = gpu() else { return };
    if !gpu.has_transform_feedback() {
        println!("stream_out: the Vulkan device has no VK_EXT_transform_feedback, skipped");
        return;
    }
    // a fixed program: every buffer, masks xyzw / y.w (two outputs) / xyz / ..zw / x
    let prog = vec![
        cf("CALL_FS"),
        alu(
            "ALU",
            vec![G(
                vec![a("MUL", (2, 0), &[r(1, 0), r(1, 1)]), a("FLT_TO_INT", (2, 1), &[r(1, 2)]), mov((2, 2), r(1, 3)), mov((2, 3), r(1, 0))],
                vec![],
            )],
        ),
        write(0, 0, 1, 0xF),
        write(0, 5, 2, 0b1010),
        C::Stream { buffer: 1, ty: 2, base: 1, gpr: 2, elem_size: 0, array_size: 2, mask: 0b0111, burst: 0 },
        write(2, 2, 1, 0b1100),
        write(3, 0, 2, 0b0001),
        C::Exp { done: true, ty: 1, base: 60, gpr: 1, burst: 0, sel: [0, 1, 2, 3] },
    ];
    let mut fixed = gen::fixed("stream-out fixed", ShaderKind::Vertex, &prog, prog.len() - 1, vec![], false, 41);
    fixed.shader = with_strides(fixed.shader, [40, 20, 24, 8]);
    let mut programs = vec![fixed];
    programs.extend((0..24).map(|i| random_program(41, i)));
    let mut total = Comparison::default();
    for p in &programs {
        total.merge(gx2_stream::run(gpu, p));
    }
    println!("{}", total.summary("gx2 stream-out"));
    finish("stream_out", &total, &["MEM_STREAM0", "MEM_STREAM1", "MEM_STREAM2", "MEM_STREAM3"], 1000);
    for m in [Mutation::Gx2StreamOutWrongOffset, Mutation::Gx2StreamOutDropped] {
        set_mutation(m);
        let mut mutated = Comparison::default();
        for p in &programs[..4] {
            mutated.merge(gx2_stream::run(gpu, p));
        }
        set_mutation(Mutation::None);
        common::log_uncaptured(&format!("stream_out mutation {m:?}: {}", mutated.summary("gx2 stream-out")));
        assert!(mutated.mismatches > 0, "the harness missed {m:?}");
    }
}
