//! Geometry shaders of the PICA200 path executed on lavapipe: a pass-through vertex stage feeds
//! each input primitive to shrec's GS and transform feedback captures every emitted triangle,
//! compared with the reference interpreter (`shrec_verify::interp::pica`), which runs GS
//! programs (setemit/emit, prim/inv, the output bank flip).
//!
//! Everything runs on ONE thread, in its own test binary: with two threads driving geometry
//! jobs at once lavapipe (Mesa 22.3) crashed inside its own threads or hung on a fence; serial
//! runs were clean every time (docs/verification.md, known limits).
//!
//! Commands:
//! - `cargo test --release --test verify_pica_gs`
//! - `SHREC_FUZZ_PROGRAMS=2000 cargo test --release --test verify_pica_gs -- --ignored gs_long_fuzz --nocapture`
//! - `SHREC_FUZZ_SEED=S SHREC_FUZZ_ONLY=I cargo test --release --test verify_pica_gs -- --ignored gs_fuzz_one --nocapture`

use shrec_testkit as common;

use shrec::formats::pica::decode::Rel;
use shrec_verify::interp::pica::State;
use shrec_verify::mutation::{set_mutation, Mutation};
use shrec_verify::pica::{self, asm::Asm, gen, Const, TestProgram};
use shrec_verify::{vk, Comparison, Rng};

/// The mnemonics a vertex shader can execute (emit/setemit are GS-only and rejected in a VS).
const VS_MNEMONICS: &[&str] = &[
    "add", "dp3", "dp4", "dph", "dst", "ex2", "lg2", "litp", "mul", "sge", "slt", "flr", "max", "min", "rcp", "rsq", "mova", "mov", "dphi", "dsti",
    "sgei", "slti", "break", "nop", "end", "breakc", "call", "callc", "callu", "ifu", "ifc", "loop", "jmpc", "jmpu", "cmp", "madi", "mad",
];

/// Geometry-only mnemonics (with [`VS_MNEMONICS`]: all 39).
const GS_ONLY: &[&str] = &["emit", "setemit"];

fn finish(what: &str, c: &Comparison, mnemonics: &[&str], min_comparisons: u64) {
    for r in &c.reports {
        println!("{r}");
    }
    let executed = VS_MNEMONICS.iter().chain(GS_ONLY).filter(|m| c.opcodes.contains(**m)).count();
    let all = VS_MNEMONICS.len() + GS_ONLY.len();
    common::log_uncaptured(&format!(
        "verify pica: {} comparisons, {} mismatches, {executed}/{all} mnemonics executed ({what}: {} programs, {} inconclusive; worst toleranced lane {:.1} ulp, {:.1}% of its bound)",
        c.comparisons,
        c.mismatches,
        c.programs,
        c.inconclusive,
        c.worst_ulps,
        c.worst_fraction * 100.0
    ));
    assert_eq!(c.mismatches, 0, "{what}: mismatches (reports above)");
    assert!(c.comparisons >= min_comparisons, "{what}: only {} comparisons", c.comparisons);
    let missing: Vec<&&str> = mnemonics.iter().filter(|o| !c.opcodes.contains(**o)).collect();
    assert!(missing.is_empty(), "{what}: never executed: {missing:?}");
}

fn gpu() -> Option<&'static vk::Gpu> {
    pica::gpu_or_skip()
}

fn states(rng: &mut Rng, n: usize, f: &mut dyn FnMut(&mut Rng, &mut State)) -> Vec<State> {
    (0..n)
        .map(|_| {
            let mut s = pica::random_state(rng);
            f(rng, &mut s);
            s
        })
        .collect()
}

/// GS outputs used by the geometry tests: position o0, color o1, texcoord0 o2.xy, texcoord1 o3.xy.
fn gs_outputs() -> Vec<(u16, u16, u8)> {
    vec![(0, 0, 0xF), (2, 1, 0xF), (3, 2, 0x3), (5, 3, 0x3)]
}

/// A DVLB of a pass-through VS (raw outputs o0, o1: two registers per GS input vertex) at word 0
/// and the GS `a` from word 3 on.
fn gs_prog(name: &str, a: &Asm, mode: [u8; 4], merge: bool, outputs: Vec<(u16, u16, u8)>, consts: Vec<Const>, cases: Vec<State>) -> TestProgram {
    let vs = pica::Dvle { main: 0, outputs: vec![(0, 0, 0xF), (2, 1, 0xF)], ..Default::default() };
    let gs = pica::Dvle { main: 3, geometry: Some((mode, merge)), outputs, constants: consts };
    TestProgram {
        name: name.into(),
        bytes: pica::dvlb_multi(a, &[vs, gs]),
        dvle: 1,
        cases,
        reproduce: "cargo test --release --test verify_pica -- geometry --nocapture".into(),
    }
}

/// The VS part of [`gs_prog`] (words 0-2).
fn gs_asm() -> Asm {
    let mut a = Asm::default();
    a.op("mov", "o0", &["v0"], Rel::None);
    a.op("mov", "o1", &["v1"], Rel::None);
    a.simple("end");
    a
}

fn require_xfb(gpu: &vk::Gpu) {
    assert!(gpu.has_transform_feedback(), "{} lacks VK_EXT_transform_feedback (needed to capture geometry shaders)", gpu.device_name);
}

/// Geometry shaders executed on lavapipe (transform feedback capture) against the interpreter:
/// point mode (a triangle of 3 × 2 input registers), setemit slots 0-2, `prim`, `inv`, partial
/// writes after `emit` (the output bank flip makes the other bank's stale lanes visible), emit
/// inside a loop and an ifu, fixed mode (inputs in c80.., read directly and through aL),
/// variable mode (packed c0..c31) and merge-outmaps dummy outputs.
fn geometry() {
    let Some(gpu) = gpu() else { return };
    require_xfb(gpu);
    let mut rng = Rng::new(11);
    let mut total = Comparison::default();
    // 1. point mode: straight-line emission with every flag.
    let mut a = gs_asm();
    a.setemit(0, false, false); // 3
    a.op("add", "o0", &["c0", "v0"], Rel::None);
    a.op("mov", "o1", &["v1"], Rel::None);
    a.op("mov", "o2.xy", &["v1.zwxy"], Rel::None);
    a.op("mov", "o3", &["c4"], Rel::None);
    a.simple("emit");
    a.setemit(1, false, false);
    a.op("mul", "o0", &["c1", "v2"], Rel::None);
    a.op("mov", "o1.xz", &["v3"], Rel::None); // y, w: the other bank (never written: 0)
    a.simple("emit");
    a.setemit(2, true, false);
    a.op("mov", "o0.xy", &["v4"], Rel::None); // z, w: still vertex 0's (bank flipped back)
    a.op("dp4", "o1", &["c2", "v5"], Rel::None);
    a.simple("emit"); // triangle (0, 1, 2)
    a.setemit(0, true, true);
    a.op("mov", "o2", &["c3"], Rel::None);
    a.simple("emit"); // triangle (1, new 0, 2)
    a.setemit(1, true, false);
    a.simple("emit"); // triangle (new 0, new 1, 2), no writes in between
    a.simple("end");
    let cs = states(&mut rng, 32, &mut |_, _| {});
    total.merge(pica::run_geometry(gpu, &gs_prog("gs point mode, straight", &a, [0, 0, 0, 0], false, gs_outputs(), vec![], cs)));
    // 2. point mode: emission in a loop (aL-relative positions) and under ifu/ifc; b15 style
    // control from a bool uniform.
    let mut a = gs_asm();
    a.op("mov", "r0", &["v0"], Rel::None); // 3
    a.flowu("loop", 1, 10, 0); // 4: body 5..10
    a.op("add", "r0", &["c10", "r0"], Rel::AL); // 5
    a.op("mov", "o0", &["r0"], Rel::None); // 6
    a.op("mul", "o1", &["v1", "r0"], Rel::None); // 7
    a.op("mov", "o2.x", &["c20"], Rel::AL); // 8
    a.setemit(2, true, false); // 9
    a.simple("emit"); // 10
    a.simple("nop"); // 11
    a.flowu("ifu", 3, 17, 0); // 12: if b3 { 13..16 }
    a.setemit(0, false, false); // 13
    a.op("mov", "o0", &["v2"], Rel::None); // 14
    a.simple("emit"); // 15
    a.simple("nop"); // 16
    a.op("cmp", "lt ge", &["c1", "v3"], Rel::None); // 17
    a.flowc("ifc", true, false, 2, 22, 2); // 18: if cc.x { 19..21 } else { 22..23 }
    a.setemit(2, true, true); // 19
    a.simple("emit"); // 20
    a.simple("nop"); // 21
    a.setemit(1, true, false); // 22
    a.simple("emit"); // 23
    a.simple("end"); // 24
    let cs = states(&mut rng, 48, &mut |r, s| s.i[1] = [r.range(0, 5) as u8, r.range(0, 30) as u8, r.range(0, 3) as u8, 0]);
    total.merge(pica::run_geometry(gpu, &gs_prog("gs point mode, loop/ifu/ifc", &a, [0, 0, 0, 0], false, gs_outputs(), vec![], cs)));
    // 3. fixed mode: 3 vertices × 2 registers at c80..c85, read directly and through aL.
    let mut a = gs_asm();
    a.op("mov", "r3", &["c85"], Rel::None); // 3 (v registers are not inputs in this mode)
    a.flowu("loop", 0, 10, 0); // 4: aL = 80, step 2, 3 iterations: body 5..10
    a.op("mov", "o0", &["c0"], Rel::AL); // 5: c[aL]
    a.op("mov", "o1", &["c1"], Rel::AL); // 6: c[aL + 1]
    a.op("add", "o2.xy", &["c84", "r3"], Rel::None); // 7
    a.op("mov", "o3", &["c81"], Rel::None); // 8
    a.setemit(2, false, false); // 9
    a.simple("emit"); // 10
    a.simple("nop"); // 11
    a.setemit(0, true, false); // 12
    a.op("mul", "o0", &["c82", "r3"], Rel::None); // 13
    a.simple("emit"); // 14
    a.simple("end"); // 15
    let consts = vec![Const::Int(0, [2, 80, 2, 0])];
    let cs = states(&mut rng, 32, &mut |_, _| {});
    total.merge(pica::run_geometry(gpu, &gs_prog("gs fixed mode", &a, [2, 80, 0, 3], false, gs_outputs(), consts, cs)));
    // 4. variable mode: c0..c31 packed in one point; c0.x = vertex count drives a loop via cmp.
    let mut a = gs_asm();
    a.op("mov", "r1", &["c1"], Rel::None); // 3
    a.op("mov", "r2", &["c2"], Rel::None); // 4
    a.setemit(0, false, false); // 5
    a.op("mov", "o0", &["r1"], Rel::None); // 6
    a.simple("emit"); // 7
    a.setemit(1, false, false); // 8
    a.op("add", "o0", &["c3", "r2"], Rel::None); // 9
    a.op("mov", "o1", &["c4"], Rel::None); // 10
    a.simple("emit"); // 11
    a.setemit(2, true, false); // 12
    a.op("mov", "o0", &["c5"], Rel::None); // 13
    a.op("mov", "o2.xy", &["c0"], Rel::None); // 14
    a.simple("emit"); // 15
    a.simple("end"); // 16
    let cs = states(&mut rng, 32, &mut |_, _| {});
    total.merge(pica::run_geometry(gpu, &gs_prog("gs variable mode", &a, [1, 0, 3, 0], false, gs_outputs(), vec![], cs)));
    // 5. merge-outmaps: the GS declares dummy outputs, typed by the VS table (position, color).
    let mut a = gs_asm();
    a.setemit(0, false, false); // 3
    a.op("mov", "o0", &["v0"], Rel::None);
    a.op("mov", "o1", &["v1"], Rel::None);
    a.simple("emit");
    a.setemit(1, false, false);
    a.op("mov", "o0", &["v2"], Rel::None);
    a.op("mov", "o1", &["-v3.wzyx"], Rel::None);
    a.simple("emit");
    a.setemit(2, true, true);
    a.op("mov", "o0", &["v4"], Rel::None);
    a.op("mov", "o1", &["v5"], Rel::None);
    a.simple("emit");
    a.simple("end");
    let cs = states(&mut rng, 32, &mut |_, _| {});
    total.merge(pica::run_geometry(gpu, &gs_prog("gs merge outmaps", &a, [0, 0, 0, 0], true, vec![(9, 0, 0xF), (9, 1, 0xF)], vec![], cs)));
    finish("geometry", &total, &["setemit", "emit", "loop", "ifu", "ifc", "relative"], 1000);
}

/// Runs the random geometry programs; prints how many lowered structured / pc-dispatch and
/// asserts both forms were executed.
fn gs_fuzz(gpu: &vk::Gpu, seed: u64, range: std::ops::Range<u64>) -> Comparison {
    let mut total = Comparison::default();
    let (mut structured, mut dispatch) = (0u64, 0u64);
    for i in range {
        let p = gen::gs_program(seed, i);
        let s = shrec::formats::pica::translate(&p.bytes, p.dvle).is_ok_and(|t| shrec::formats::pica::lower::is_structured(&t.module));
        if s {
            structured += 1
        } else {
            dispatch += 1
        }
        total.merge(pica::run_geometry(gpu, &p));
    }
    common::log_uncaptured(&format!("verify pica geometry fuzz: {structured} programs structured, {dispatch} pc-dispatch"));
    assert!(structured > 0 && dispatch > 0, "both control-flow forms must be executed");
    total
}

/// 100 fixed-seed random geometry programs (point mode, random setemit/emit among the random
/// statements and control flow).
fn geometry_fuzz_fixed_seed() {
    let Some(gpu) = gpu() else { return };
    require_xfb(gpu);
    let c = gs_fuzz(gpu, fuzz_seed(), 0..100);
    // Every one of the 39 mnemonics, through the geometry pipeline alone.
    let all: Vec<&str> = VS_MNEMONICS.iter().chain(GS_ONLY).copied().collect();
    assert_eq!(all.len(), 39);
    finish("geometry_fuzz_fixed_seed", &c, &all, 2000);
}

#[test]
#[ignore]
fn gs_long_fuzz() {
    let Some(gpu) = gpu() else { return };
    require_xfb(gpu);
    let programs = shrec_verify::long_run_programs(2_000);
    let from = programs.start;
    let seed = fuzz_seed();
    let c = gs_fuzz(gpu, seed, programs);
    println!("gs_long_fuzz seed {seed} from #{from}: {} programs, {} comparisons, {} mismatches", c.programs, c.comparisons, c.mismatches);
    finish("gs_long_fuzz", &c, &[], 0);
}

#[test]
#[ignore]
fn gs_fuzz_one() {
    let Some(gpu) = gpu() else { return };
    let index: u64 = std::env::var("SHREC_FUZZ_ONLY").expect("set SHREC_FUZZ_ONLY").parse().expect("a number");
    let p = gen::gs_program(fuzz_seed(), index);
    println!("{}", shrec::formats::pica::disasm(&p.bytes, 1).unwrap_or_default());
    let c = pica::run_geometry(gpu, &p);
    for r in &c.reports {
        println!("{r}");
    }
    println!("{}", c.summary("pica"));
    assert_eq!(c.mismatches, 0);
}

/// The geometry harness can fail: a translation that ignores `setemit … inv` (the emitted vertex
/// order) is caught by the `PicaGsIgnoreWinding` mutation.
fn geometry_harness_detects_mutation() {
    let Some(gpu) = gpu() else { return };
    require_xfb(gpu);
    let mut rng = Rng::new(12);
    let mut a = gs_asm();
    for k in 0..3 {
        a.setemit(k, k == 2, k == 2);
        a.op("mov", "o0", &[&format!("v{}", 2 * k)], Rel::None);
        a.op("mov", "o1", &[&format!("v{}", 2 * k + 1)], Rel::None);
        a.simple("emit");
    }
    a.simple("end");
    let p = gs_prog("inverted triangle", &a, [0, 0, 0, 0], false, gs_outputs(), vec![], states(&mut rng, 8, &mut |_, _| {}));
    set_mutation(Mutation::PicaGsIgnoreWinding);
    let mutated = pica::run_geometry(gpu, &p);
    set_mutation(Mutation::None);
    let clean = pica::run_geometry(gpu, &p);
    println!("mutated: {}\nclean: {}", mutated.summary("pica"), clean.summary("pica"));
    assert!(mutated.mismatches > 0, "the harness missed a geometry shader ignoring the inv flag");
    assert_eq!(clean.mismatches, 0, "{:?}", clean.reports);
}

/// Azahar's geometry cases (`src/tests/video_core/shader.cpp`; the vertex ones are in
/// `verify_pica_azahar.rs`), checked on the interpreter and run on lavapipe against it:
/// "SETEMIT" (vertex slot 0-2 × prim × winding; Azahar also sets slot 3, which does not exist:
/// shrec rejects it naming the instruction) and "EMIT switches the output bank" (after `emit` the
/// other bank is current: a partial write shows its stale lanes; Azahar inspects the banks from
/// C++, here the emitted vertices show them).
fn azahar_gs_cases() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(31);
    let mut total = Comparison::default();
    let same = |a: &shrec_verify::Expect, b: f32| a.err == 0.0 && (a.value == b || (a.value.is_nan() && b.is_nan()));
    let interp_run = |t: &TestProgram, check: &mut dyn FnMut(&State, &shrec_verify::interp::pica::Result)| {
        let p = shrec::formats::pica::dvlb::parse_program(&t.bytes).unwrap();
        for c in &t.cases {
            let mut c = c.clone();
            pica::apply_constants(&p, 1, &mut c);
            check(&c, &shrec_verify::interp::pica::run(&p, 1, &c));
        }
    };
    for vertex in 0..3u32 {
        for prim in [false, true] {
            for inv in [false, true] {
                let mut a = gs_asm();
                a.setemit(vertex, prim, inv);
                a.op("mov", "o0", &["v0"], Rel::None);
                a.op("mov", "o1", &["v1"], Rel::None);
                a.simple("emit");
                a.simple("end");
                let name = format!("SETEMIT {vertex} prim {prim} inv {inv}");
                let t = gs_prog(&name, &a, [0, 0, 0, 0], false, gs_outputs(), vec![], states(&mut rng, 4, &mut |_, _| {}));
                interp_run(&t, &mut |s, r| {
                    assert_eq!(r.triangles.len(), prim as usize, "{name}: a triangle only with prim");
                    if prim {
                        let order = if inv { [1, 0, 2] } else { [0, 1, 2] };
                        for (k, slot) in order.iter().enumerate() {
                            let want = if *slot == vertex as usize { s.v[0] } else { [0.0; 4] };
                            for l in 0..4 {
                                assert!(same(&r.triangles[0][k][0][l], want[l]), "{name}: output vertex {k} o0.{l}");
                            }
                        }
                    }
                });
                total.merge(pica::run_geometry(gpu, &t));
            }
        }
    }
    let mut a = gs_asm();
    a.setemit(3, true, false);
    a.simple("end");
    let t = gs_prog("SETEMIT 3", &a, [0, 0, 0, 0], false, gs_outputs(), vec![], vec![]);
    let e = shrec::formats::pica::translate(&t.bytes, 1).expect_err("setemit vertex 3 must be rejected");
    use shrec::formats::{pica::decode::Op, pica::error::PicaError, ShaderError};
    assert!(matches!(&e, ShaderError::Pica(PicaError::Unsupported { op: Op::Setemit, .. })), "{e:?}");
    // EMIT switches the output bank
    let mut a = gs_asm();
    a.setemit(0, false, false);
    a.op("mov", "o0", &["v0"], Rel::None);
    a.op("mov", "o1", &["v1"], Rel::None);
    a.simple("emit");
    a.op("mov", "o0.x", &["v2"], Rel::None); // the other bank: o0.yzw still 0 there
    a.setemit(1, false, false);
    a.simple("emit"); // back to the first bank (o0 = v0)
    a.setemit(2, true, false);
    a.simple("emit");
    a.simple("end");
    let t = gs_prog("EMIT switches the output bank", &a, [0, 0, 0, 0], false, gs_outputs(), vec![], states(&mut rng, 8, &mut |_, _| {}));
    interp_run(&t, &mut |s, r| {
        assert_eq!(r.triangles.len(), 1);
        let want = [s.v[0], [s.v[2][0], 0.0, 0.0, 0.0], s.v[0]];
        for (k, w) in want.iter().enumerate() {
            for l in 0..4 {
                assert!(same(&r.triangles[0][k][0][l], w[l]), "EMIT bank: vertex {k} o0.{l}");
            }
        }
    });
    total.merge(pica::run_geometry(gpu, &t));
    finish("azahar geometry cases", &total, &["setemit", "emit"], 100);
}

/// The geometry tests, in sequence on one thread (see the module comment).
#[test]
fn geometry_all() {
    azahar_gs_cases();
    geometry();
    geometry_harness_detects_mutation();
    geometry_fuzz_fixed_seed();
}

fn fuzz_seed() -> u64 {
    shrec_verify::env_u64("SHREC_FUZZ_SEED", 1)
}
