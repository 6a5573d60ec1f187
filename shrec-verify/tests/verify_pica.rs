//! Verification by execution of the PICA200 path (see `shrec::verify`): every mnemonic and every
//! control-flow form, the corpus vertex DVLEs and a fixed-seed differential fuzzing sample, run
//! as DVLB → decode → lower → HLSL → DXC SPIR-V → lavapipe vertex stage and compared lane by
//! lane with the reference interpreter (`shrec_verify::interp::pica`). Geometry shaders run in
//! `verify_pica_gs.rs`, Azahar's test cases in `verify_pica_azahar.rs`. Every suite here prints how
//! many programs lowered structured and how many pc-dispatch, and asserts both forms ran.
//!
//! Commands:
//! - `cargo test --release --test verify_pica`
//! - `SHREC_FUZZ_PROGRAMS=10000 cargo test --release --test verify_pica -- --ignored long_fuzz --nocapture`
//! - `SHREC_FUZZ_SEED=S SHREC_FUZZ_ONLY=I cargo test --release --test verify_pica -- --ignored fuzz_one --nocapture`

use shrec_testkit as common;

use shrec::formats::pica::decode::Rel;
use shrec_verify::interp::pica::State;
use shrec_verify::mutation::{set_mutation, Mutation};
use shrec_verify::pica::{self, asm::Asm, dvlb, gen, Const, TestProgram};
use shrec_verify::pica_shaped::{self, ShapedStats};
use shrec_verify::{vk, Comparison, Rng};

/// The mnemonics a vertex shader can execute (emit/setemit are GS-only and rejected in a VS).
const VS_MNEMONICS: &[&str] = &[
    "add", "dp3", "dp4", "dph", "dst", "ex2", "lg2", "litp", "mul", "sge", "slt", "flr", "max", "min", "rcp", "rsq", "mova", "mov", "dphi", "dsti",
    "sgei", "slti", "break", "nop", "end", "breakc", "call", "callc", "callu", "ifu", "ifc", "loop", "jmpc", "jmpu", "cmp", "madi", "mad",
];

/// Geometry-only mnemonics (with [`VS_MNEMONICS`]: all 39).
const GS_ONLY: &[&str] = &["emit", "setemit"];

const OUTPUTS: [(u16, u16, u8); 4] = [(0, 0, 0xF), (2, 1, 0xF), (3, 2, 0x3), (5, 3, 0x3)];

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

/// Whether a test program's DVLE lowers to the structured control-flow form (else pc-dispatch).
fn structured(t: &TestProgram) -> bool {
    shrec::formats::pica::translate(&t.bytes, t.dvle).is_ok_and(|tr| shrec::formats::pica::lower::is_structured(&tr.module))
}

/// Counts of programs per control-flow form: (structured, pc-dispatch).
#[derive(Default, Clone, Copy)]
struct Forms(u64, u64);
impl Forms {
    fn add(&mut self, t: &TestProgram) {
        if structured(t) {
            self.0 += 1
        } else {
            self.1 += 1
        }
    }
    fn merge(&mut self, o: Forms) {
        self.0 += o.0;
        self.1 += o.1;
    }
    /// Prints the counts and asserts both forms were executed.
    fn check(&self, what: &str) {
        common::log_uncaptured(&format!("verify pica {what}: {} programs structured, {} pc-dispatch", self.0, self.1));
        assert!(self.0 > 0 && self.1 > 0, "{what}: both control-flow forms must be executed");
    }
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

fn prog(name: &str, a: &Asm, consts: &[Const], cases: Vec<State>) -> TestProgram {
    TestProgram {
        name: name.into(),
        bytes: dvlb(a, 0, &OUTPUTS, consts),
        dvle: 0,
        cases,
        reproduce: "cargo test --release --test verify_pica -- --nocapture".into(),
    }
}

/// Writes r0..r3 to o0..o3 and ends.
fn epilogue(a: &mut Asm) {
    for k in 0..4 {
        a.op("mov", &format!("o{k}"), &[&format!("r{k}")], Rel::None);
    }
    a.simple("end");
}

fn full(r: &mut Rng) -> f32 {
    // Full 24-bit mantissas, magnitudes 2^-8 .. 2^8, both signs.
    let m = 1.0 + (r.below(1 << 23) as f32) / (1u64 << 23) as f32;
    let e = r.range(-8, 8) as i32;
    let s = if r.chance(50) { -1.0 } else { 1.0 };
    s * m * 2f32.powi(e)
}

fn special(r: &mut Rng) -> f32 {
    *r.pick(&[0.0, -0.0, 1.0, -1.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 0.5, 2.0, 800.0, -800.0])
}

/// One program per arithmetic mnemonic, each with exact dyadic, full-precision and special
/// (0, ±inf, NaN) inputs.
#[test]
fn per_mnemonic() {
    let Some(gpu) = gpu() else { return };
    let mut total = Comparison::default();
    let mut rng = Rng::new(5);
    let two = ["add", "mul", "max", "min", "dp3", "dp4", "dph", "dst", "sge", "slt"];
    let inv = ["dphi", "dsti", "sgei", "slti"];
    let one = ["mov", "flr", "rcp", "rsq", "ex2", "lg2", "litp"];
    type Gen = fn(&mut Rng) -> f32;
    let gens: [(&str, Gen); 3] = [("dyadic", |r| r.dyadic(3, 8)), ("full", full), ("special", special)];
    for (gname, g) in gens {
        let mut fill = |rng: &mut Rng, s: &mut State| {
            for k in 0..8 {
                s.v[k] = std::array::from_fn(|_| g(rng));
            }
            for k in 0..16 {
                s.c[k] = std::array::from_fn(|_| g(rng));
            }
        };
        for op in two.iter().chain(&inv).chain(&one) {
            let mut a = Asm::default();
            let is_inv = inv.contains(op);
            for (k, (s1, s2)) in [("v0", "v1"), ("c3.wzyx", "-v2.yxwz"), ("-v3.zzxy", "r0"), ("c5", "v4.w")].iter().enumerate() {
                let d = format!("r{}", k);
                if one.contains(op) {
                    a.op(op, &d, &[s1], Rel::None);
                } else if is_inv {
                    // inverted form: narrow src1, wide src2
                    let (n, w) = if s1.contains('c') { (*s2, *s1) } else { (*s1, *s2) };
                    a.op(op, &d, &[n, w], Rel::None);
                } else {
                    let (w, n) = if s2.starts_with('c') || s2.starts_with("-c") { (*s2, *s1) } else { (*s1, *s2) };
                    a.op(op, &d, &[w, n], Rel::None);
                }
            }
            epilogue(&mut a);
            let cs = states(&mut rng, 24, &mut fill);
            total.merge(pica::run(gpu, &prog(&format!("{op} ({gname})"), &a, &[], cs)));
        }
        // mad / madi / cmp / masks
        let mut a = Asm::default();
        a.mad("mad", "r0", ["v0", "c4.yzwx", "v1"], Rel::None);
        a.mad("madi", "r1.xzw", ["-v2", "v3.x", "c7"], Rel::None);
        a.mad("mad", "r2.y", ["r0", "v5", "-r1"], Rel::None);
        a.op("cmp", "lt ge", &["c1", "v1"], Rel::None);
        a.flowc("ifc", true, false, 2, 6, 1);
        a.op("mov", "r3", &["v6"], Rel::None);
        a.op("mov", "r3", &["v7"], Rel::None);
        epilogue(&mut a);
        let cs = states(&mut rng, 24, &mut fill);
        total.merge(pica::run(gpu, &prog(&format!("mad madi cmp ({gname})"), &a, &[], cs)));
    }
    finish(
        "per_mnemonic",
        &total,
        &[
            "add", "mul", "max", "min", "dp3", "dp4", "dph", "dst", "sge", "slt", "dphi", "dsti", "sgei", "slti", "mov", "flr", "rcp", "rsq", "ex2",
            "lg2", "litp", "mad", "madi", "cmp",
        ],
        5000,
    );
}

/// Relative addressing through a0.x, a0.y and aL, including offsets outside s8 and indices ≥ 96.
#[test]
fn mova_and_relative_addressing() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(6);
    let mut a = Asm::default();
    a.op("mova", "r0.xy", &["v0"], Rel::None);
    a.op("mov", "r0", &["c10.yxzw"], Rel::A0x);
    a.op("add", "r1", &["c90", "v1"], Rel::A0y);
    a.op("mova", "r0.x", &["v0.zzzz"], Rel::None);
    a.op("dp4", "r2", &["-c0", "v2"], Rel::A0x);
    a.mad("mad", "r3", ["v3", "c20", "v3"], Rel::A0y);
    a.flowu("loop", 1, a.here() + 2, 0);
    a.op("add", "r2", &["c0", "r2"], Rel::AL);
    a.mad("madi", "r1", ["r1", "v1", "c2"], Rel::AL);
    a.simple("nop");
    epilogue(&mut a);
    let cs = states(&mut rng, 64, &mut |r, s| {
        s.v[0] = std::array::from_fn(|_| {
            *r.pick(&[-200.0, -129.5, -128.0, -20.25, -1.75, -0.5, 0.0, 0.75, 3.0, 5.5, 40.0, 90.0, 127.0, 127.9, 128.0, 300.0, f32::NAN, 1e10])
        });
        s.i[1] = [r.range(0, 4) as u8, r.range(0, 255) as u8, r.range(0, 255) as u8, 0];
    });
    let c = pica::run(gpu, &prog("mova + relative", &a, &[], cs));
    finish("mova_and_relative_addressing", &c, &["mova", "relative", "loop"], 1000);
}

/// Control flow: ifc/ifu with else, nested; loop with aL (nested, restored), break, breakc;
/// call/callc/callu; jmpc/jmpu forward and backward; scope ends with a JMP.
#[test]
fn control_flow() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(7);
    let mut total = Comparison::default();
    let mut forms = Forms::default();
    // Each program runs as lowered (structured when it nests) and forced to pc-dispatch.
    let mut run = |total: &mut Comparison, rng: &mut Rng, name: &str, a: &Asm, consts: &[Const]| {
        let cs = states(rng, 48, &mut |_, _| {});
        let p = prog(name, a, consts, cs);
        let tr = shrec::formats::pica::translate(&p.bytes, 0).expect("translates");
        println!(
            "{name}: {:?}",
            tr.module.header_comments.iter().filter(|c| c.contains("control flow") || c.contains("because")).collect::<Vec<_>>()
        );
        forms.add(&p);
        total.merge(pica::run(gpu, &p));
        shrec::formats::pica::lower::set_force_dispatch(true);
        forms.add(&p);
        total.merge(pica::run(gpu, &p));
        shrec::formats::pica::lower::set_force_dispatch(false);
    };
    // 1. ifc with else, nested ifu inside both branches
    let mut a = Asm::default();
    a.op("cmp", "lt gt", &["c1", "v0"], Rel::None); // 0
    a.flowc("ifc", true, true, 0, 6, 3); // 1: if (x || y) 2..5 else 6..8
    a.op("add", "r0", &["c2", "v1"], Rel::None); // 2
    a.flowu("ifu", 3, 5, 0); // 3: if b3 { 4 }
    a.op("mul", "r1", &["c3", "r0"], Rel::None); // 4
    a.simple("nop"); // 5
    a.op("mov", "r0", &["-v2"], Rel::None); // 6
    a.flowc("ifc", false, true, 1, 9, 0); // 7: if (!x && y) { 8 }
    a.op("mov", "r2", &["c4"], Rel::None); // 8
    a.simple("nop"); // 9
    epilogue(&mut a);
    run(&mut total, &mut rng, "ifc/ifu/else nested", &a, &[]);
    // 2. nested loops with aL, break and breakc
    let mut a = Asm::default();
    a.flowu("loop", 0, 7, 0); // 0: loop i0, body 1..7
    a.op("add", "r0", &["c10", "r0"], Rel::AL); // 1
    a.flowu("loop", 2, 4, 0); // 2: loop i2, body 3..4
    a.op("add", "r1", &["c20", "r1"], Rel::AL); // 3
    a.op("mul", "r2", &["c1", "r1"], Rel::AL); // 4
    a.op("cmp", "gt lt", &["c30", "r0"], Rel::AL); // 5
    a.flowc("breakc", true, false, 2, 0, 0); // 6
    a.op("add", "r3", &["c2", "r3"], Rel::AL); // 7
    a.op("mov", "r2.w", &["c3"], Rel::AL); // 8 (after the loop: aL not restored at the outer level)
    a.flowu("loop", 3, 12, 0); // 9
    a.flowu("ifu", 2, 12, 0); // 10: if b2 { break }
    a.simple("break"); // 11
    a.op("add", "r1.x", &["c4", "r1"], Rel::None); // 12
    a.simple("nop"); // 13
    epilogue(&mut a);
    run(&mut total, &mut rng, "loops/aL/break/breakc", &a, &[]);
    // 2b. the same shapes nested cleanly (structured form): nested loops restoring aL, breakc
    // directly in a loop body, an if ending inside a loop body, a loop inside a called body.
    let mut a = Asm::default();
    a.flowu("loop", 0, 9, 0); // 0: loop i0, body 1..9
    a.op("add", "r0", &["c10", "r0"], Rel::AL); // 1
    a.flowu("loop", 1, 4, 0); // 2: loop i1, body 3..4
    a.op("add", "r1", &["c20", "r1"], Rel::AL); // 3
    a.op("mul", "r2", &["c1", "r1"], Rel::AL); // 4
    a.op("cmp", "gt lt", &["c30", "r0"], Rel::AL); // 5
    a.flowc("breakc", true, false, 2, 0, 0); // 6
    a.flowu("ifu", 2, 9, 0); // 7: if b2 { 8 }
    a.op("add", "r3", &["c2", "r3"], Rel::AL); // 8
    a.op("mov", "r2.w", &["c3"], Rel::AL); // 9 (last of the outer loop)
    a.flowc("call", false, false, 0, 20, 3); // 10
    epilogue(&mut a); // 11..15
    while a.here() < 20 {
        a.simple("nop");
    }
    a.flowu("loop", 2, 21, 0); // 20: loop i2, body 21
    a.op("add", "r1.x", &["c4", "r1"], Rel::AL); // 21
    a.mad("mad", "r2", ["v3", "c8", "r2"], Rel::None); // 22 (last of the call body)
    run(&mut total, &mut rng, "structured loops/breakc/call", &a, &[]);
    // 3. call / callc / callu, nested calls
    let mut a = Asm::default();
    a.flowc("call", false, false, 0, 10, 2); // 0
    a.op("cmp", "ge lt", &["c5", "v1"], Rel::None); // 1
    a.flowc("callc", true, false, 3, 12, 1); // 2
    a.flowu("callu", 5, 13, 2); // 3
    a.flowc("callc", false, false, 0, 12, 1); // 4
    epilogue(&mut a); // 5..9
    assert_eq!(a.here(), 10);
    a.op("add", "r0", &["c6", "v2"], Rel::None); // 9
    a.op("mul", "r1", &["c7", "r0"], Rel::None); // 10
    a.mad("mad", "r2", ["v3", "c8", "r2"], Rel::None); // 11
    a.flowc("call", false, false, 0, 12, 1); // 13: nested call
    a.op("add", "r3", &["c9", "r3"], Rel::None); // 13
    run(&mut total, &mut rng, "call/callc/callu", &a, &[]);
    // 4. jmpc / jmpu forward and backward (a counted backward loop over cc), and a jmp that
    // ends an if scope (never taken).
    let mut a = Asm::default();
    a.op("mov", "r0", &["c0"], Rel::None); // 0 (c0 = counter start, constant table)
    a.op("add", "r0", &["c1", "r0"], Rel::None); // 1: r0 += 1
    a.op("add", "r1", &["v0", "r1"], Rel::None); // 2
    a.op("cmp", "lt lt", &["c2", "r0"], Rel::None); // 3: c2 (limit) < r0 ?
    a.flowc("jmpc", false, false, 2, 1, 0); // 4: if !cc.x goto 1 (backward)
    a.flowu("jmpu", 4, 8, 0); // 5: if b4 goto 8
    a.op("mov", "r2", &["v1"], Rel::None); // 6
    a.flowu("jmpu", 6, 9, 1); // 7: if !b6 goto 9
    a.op("mov", "r3", &["v2"], Rel::None); // 8
    a.flowu("ifu", 1, 11, 0); // 9: if b1 { 10 }
    a.flowc("jmpc", true, true, 0, 13, 0); // 10: jmp at the end of the if scope: never taken
    a.op("add", "r3", &["c3", "r3"], Rel::None); // 11
    a.flowc("jmpc", false, false, 1, 14, 0); // 12: if !x && !y goto 14
    a.op("mul", "r2", &["c3", "r2"], Rel::None); // 13
    epilogue(&mut a); // 14..
    let consts = [Const::Float(0, [0.0; 4]), Const::Float(1, [1.0; 4]), Const::Float(2, [5.0, 3.0, 0.0, 0.0])];
    run(&mut total, &mut rng, "jmpc/jmpu", &a, &consts);
    forms.check("control_flow");
    assert!(forms.0 >= 3, "the nested if / loop / call programs must lower structured");
    finish("control_flow", &total, &["ifc", "ifu", "loop", "break", "breakc", "call", "callc", "callu", "jmpc", "jmpu", "nop", "end"], 2000);
}

/// Runs `a` as lowered and forced to pc-dispatch, with `cases`; returns the comparison and the
/// count of programs per form.
fn both_forms(gpu: &vk::Gpu, name: &str, a: &Asm, consts: &[Const], cases: Vec<State>) -> (Comparison, Forms) {
    let mut total = Comparison::default();
    let mut forms = Forms::default();
    let p = prog(name, a, consts, cases);
    for dispatch in [false, true] {
        shrec::formats::pica::lower::set_force_dispatch(dispatch);
        let form = if structured(&p) { "structured" } else { "pc-dispatch" };
        forms.add(&p);
        let c = pica::run(gpu, &p);
        println!("{name} ({form}): {} comparisons, {} mismatches", c.comparisons, c.mismatches);
        total.merge(c);
    }
    shrec::formats::pica::lower::set_force_dispatch(false);
    (total, forms)
}

/// aL after a loop that is not nested keeps the value the loop left (start + iterations × step);
/// only a nested loop restores the enclosing loop's aL (Azahar interpreter: "Only restore
/// previous value if there is a surrounding LOOP scope"; its x64 JIT saves / restores
/// `LOOPCOUNT_REG` only when `loop_depth` > 0). The reads `c[n + aL]` after each outermost loop
/// land in compared output lanes (o0, o1 whole), as does a read after an inner loop (restored).
/// docs/semantics-audit.md "Tests of the one-source rules": restoring after an outermost loop
/// too (aL back to its value before the loop) is detected here.
#[test]
fn al_kept_after_an_outermost_loop() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(19);
    let mut a = Asm::default();
    a.flowu("loop", 0, 1, 0); // 0: loop i0, body 1
    a.op("add", "r0", &["c10", "r0"], Rel::AL); // 1
    a.op("mov", "r1", &["c20"], Rel::AL); // 2: after the outermost loop: aL = i0.y + (i0.x + 1)·i0.z
    a.flowu("loop", 1, 6, 0); // 3: loop i1, body 4..6
    a.flowu("loop", 2, 5, 0); // 4: loop i2, body 5 (nested)
    a.op("add", "r2", &["c30", "r2"], Rel::AL); // 5
    a.op("add", "r3", &["c40", "r3"], Rel::AL); // 6: after the nested loop: aL restored to i1's
    a.op("mul", "r0", &["c4", "r0"], Rel::AL); // 7: after the second outermost loop
    epilogue(&mut a);
    let cs = states(&mut rng, 64, &mut |r, s| {
        // zero-start registers so every lane's value depends on the reads; counts 0..2,
        // starts 1..24, steps 0..3 (every index stays below 96)
        for k in 0..3 {
            s.i[k] = [r.range(0, 3) as u8, r.range(1, 25) as u8, r.range(0, 4) as u8, 0];
        }
    });
    let (c, forms) = both_forms(gpu, "aL after an outermost loop", &a, &[], cs);
    finish("al_kept_after_an_outermost_loop", &c, &["loop", "add", "mov", "mul"], 1000);
    forms.check("al_kept_after_an_outermost_loop");
    assert!(forms.0 >= 1, "the nested loops must lower structured");
}

/// A pc past the last code word ends the program (outputs as written so far): a program without
/// `end` runs its last word and stops, a `jmpu` / `callu` whose target is the word after the
/// last one ends the program there (the decoder accepts such targets), and in a blob longer than
/// the code memory word 4095 acts as `end`. Azahar treats the last
/// possible word (4095) as an implicit END (`program_counter < MAX_PROGRAM_CODE_LENGTH - 1` in
/// its interpreter and both JITs: "Treat the last possible instruction as an implicit END, like
/// the other backends"); past the DVLB's code blob its array holds whatever was uploaded before,
/// so shrec's "past the blob ends the program" is its own choice there (docs/semantics-audit.md).
#[test]
fn pc_past_the_code_ends_the_program() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(20);
    let mut total = Comparison::default();
    let mut forms = Forms::default();
    let start = |a: &mut Asm| {
        for k in 0..4 {
            a.op("mov", &format!("o{k}"), &[&format!("v{k}")], Rel::None);
        }
    };
    // (a) jmpu b0 to the word after the last; else three more words, the last one writing o0
    let mut a = Asm::default();
    start(&mut a); // 0..3
    a.flowu("jmpu", 0, 8, 0); // 4: if b0 goto 8 (past the code)
    a.op("add", "o1", &["c1", "v1"], Rel::None); // 5
    a.op("mul", "o2", &["c2", "v2"], Rel::None); // 6
    a.op("add", "o0", &["c3", "v0"], Rel::None); // 7: the last word, no `end` after it
    assert_eq!(a.here(), 8);
    let cs = states(&mut rng, 48, &mut |_, _| {});
    let (c, f) = both_forms(gpu, "jmpu past the code, no end", &a, &[], cs);
    total.merge(c);
    forms.merge(f);
    // (b) callu b1 of a "procedure" at the word after the last: the program ends at the call
    let mut a = Asm::default();
    start(&mut a); // 0..3
    a.flowu("callu", 1, 8, 1); // 4: if b1 call 8 (past the code)
    a.op("add", "o1", &["c1", "v1"], Rel::None); // 5
    a.op("mul", "o3", &["c2", "v3"], Rel::None); // 6
    a.op("add", "o0", &["c3", "v0"], Rel::None); // 7: the last word
    let cs = states(&mut rng, 48, &mut |_, _| {});
    let (c, f) = both_forms(gpu, "callu past the code", &a, &[], cs);
    total.merge(c);
    forms.merge(f);
    // (c) a blob of 4097 words: word 4095 is the last one that can exist in the 4096-word code
    // memory and acts as `end` (Azahar); the words from 4095 on never run
    let mut a = Asm::default();
    a.flowu("jmpu", 0, 4090, 0); // 0: if b0 goto 4090
    a.flowu("jmpu", 0, 4090, 1); // 1: if !b0 goto 4090
    a.simple("end"); // 2
    while a.here() < 4090 {
        a.simple("nop"); // unreachable filler
    }
    start(&mut a); // 4090..4093
    a.op("add", "o1", &["c1", "v1"], Rel::None); // 4094: the last word that runs
    a.op("add", "o0", &["c3", "v0"], Rel::None); // 4095: acts as `end`
    a.op("mul", "o2", &["c2", "v2"], Rel::None); // 4096: past the code memory
    let cs = states(&mut rng, 48, &mut |_, _| {});
    let (c, f) = both_forms(gpu, "word 4095 acts as end", &a, &[], cs);
    total.merge(c);
    forms.merge(f);
    finish("pc_past_the_code_ends_the_program", &total, &["jmpu", "callu", "add", "mul", "mov"], 500);
    forms.check("pc_past_the_code_ends_the_program");
}

/// lg2 / rsq of x <= 0 (SPIR-V leaves Log2 / InverseSqrt undefined there; lavapipe folded
/// ex2(lg2(x)) to x for a negative x: fuzz seed 1 program 2279) give the PICA values, also when
/// the result feeds another instruction.
#[test]
fn lg2_rsq_of_non_positive() {
    let Some(gpu) = gpu() else { return };
    let mut a = Asm::default();
    a.op("lg2", "r4", &["c0"], Rel::None);
    a.op("ex2", "o0", &["r4"], Rel::None);
    a.op("rsq", "r5", &["c1"], Rel::None);
    a.op("rsq", "o1", &["r5"], Rel::None);
    a.op("lg2", "o2", &["v0"], Rel::None);
    a.op("rsq", "o3", &["v0"], Rel::None);
    a.simple("end");
    let mut rng = Rng::new(2279);
    let xs = [-0.578125, -1.0, -0.0, 0.0, 1.0, 4.0, f32::NEG_INFINITY, f32::INFINITY, f32::NAN, -3.5e10];
    let cs = states(&mut rng, 40, &mut |r, s| {
        s.c[0] = [*r.pick(&xs), 0.0, 0.0, 0.0];
        s.c[1] = [*r.pick(&xs), 0.0, 0.0, 0.0];
        s.v[0] = [*r.pick(&xs), 0.0, 0.0, 0.0];
    });
    let c = pica::run(gpu, &prog("lg2/rsq of x <= 0", &a, &[], cs));
    finish("lg2_rsq_of_non_positive", &c, &["lg2", "ex2", "rsq"], 300);
}

/// `litp r0, r0`: cc comes from the source as read, not from the clamped result written to the
/// same register (fuzz seed 1 program 8574). cc.x / cc.y are observed through ifc.
#[test]
fn litp_cc_reads_the_source() {
    let Some(gpu) = gpu() else { return };
    let mut a = Asm::default();
    a.op("mov", "r0", &["v0"], Rel::None); // 0
    a.op("litp", "r0", &["r0"], Rel::None); // 1
    a.flowc("ifc", true, false, 2, 4, 1); // 2: if cc.x
    a.op("mov", "r1.x", &["c1"], Rel::None); // 3
    a.op("mov", "r1.x", &["c2"], Rel::None); // 4 (else)
    a.flowc("ifc", false, true, 3, 7, 1); // 5: if cc.y
    a.op("mov", "r1.y", &["c1"], Rel::None); // 6
    a.op("mov", "r1.y", &["c2"], Rel::None); // 7 (else)
    a.op("mov", "r2", &["r0"], Rel::None);
    epilogue(&mut a);
    let consts = [Const::Float(1, [1.0; 4]), Const::Float(2, [-1.0; 4])];
    let mut rng = Rng::new(8574);
    let cs = states(&mut rng, 32, &mut |r, s| s.v[0] = std::array::from_fn(|_| *r.pick(&[-1.5, -0.25, 0.0, 0.5, 3.0])));
    let c = pica::run(gpu, &prog("litp r0, r0", &a, &consts, cs));
    finish("litp_cc_reads_the_source", &c, &["litp", "ifc"], 300);
}

/// A `break` out of an IF inside a loop leaves that IF's entry on the stack (Azahar's
/// interpreter pops only when the top entry's else address follows the word just run), so the
/// enclosing if-else's then-part does not jump over its else part: both run. Azahar's x64 JIT
/// (structured IF / LOOP) would skip the else part; docs/semantics-audit.md "PICA control
/// flow". shrec's pc-dispatch form and the interpreter follow the interpreter; the structured
/// form refuses the program.
#[test]
fn break_out_of_if_keeps_the_if_entry() {
    let mut a = Asm::default();
    a.op("mov", "r0", &["c0"], Rel::None); // 0: r0 = 0
    a.flowu("ifu", 0, 8, 1); // 1: if b0 { 2..7 } else { 8 }
    a.flowu("loop", 0, 6, 0); // 2: loop i0, body 3..6
    a.flowu("ifu", 1, 6, 0); // 3: if b1 { 4..5 }
    a.simple("break"); // 4
    a.simple("nop"); // 5
    a.op("add", "r0.x", &["c1", "r0"], Rel::None); // 6: last of the loop body
    a.op("add", "r0.y", &["c1", "r0"], Rel::None); // 7: last of the then-part
    a.op("add", "r0.z", &["c1", "r0"], Rel::None); // 8: the else part
    epilogue(&mut a);
    let consts = [Const::Float(0, [0.0; 4]), Const::Float(1, [1.0; 4])];
    let bytes = dvlb(&a, 0, &OUTPUTS, &consts);
    let tr = shrec::formats::pica::translate(&bytes, 0).expect("translates");
    assert!(!shrec::formats::pica::lower::is_structured(&tr.module), "a break inside an IF must take the pc-dispatch form");
    let program = shrec::formats::pica::dvlb::parse_program(&bytes).unwrap();
    // (b0, b1) → r0: the break leaves the inner IF's entry on top, so word 7 does not pop the
    // outer IF and the else part (word 8) runs as well.
    let want = [((true, true), [0.0, 1.0, 1.0, 0.0]), ((true, false), [3.0, 1.0, 0.0, 0.0]), ((false, true), [0.0, 0.0, 1.0, 0.0])];
    let mut cases = Vec::new();
    for ((b0, b1), r0) in want {
        let mut s = State { b: u16::from(b0) | u16::from(b1) << 1, ..State::default() };
        s.i[0] = [2, 0, 0, 0];
        pica::apply_constants(&program, 0, &mut s);
        let r = shrec_verify::interp::pica::run(&program, 0, &s);
        let got: Vec<f32> = r.o[0].iter().map(|e| e.value).collect();
        assert_eq!(got, r0, "interpreter, b0 = {b0}, b1 = {b1}");
        cases.push(s);
    }
    let Some(gpu) = gpu() else { return };
    let c = pica::run(gpu, &prog("break out of an if", &a, &consts, cases));
    finish("break_out_of_if_keeps_the_if_entry", &c, &["break", "ifu", "loop"], 12);
}

/// emit/setemit are GS-only: a vertex DVLE using them is rejected naming the instruction.
#[test]
fn emit_in_vertex_shader_is_rejected() {
    for op in ["emit", "setemit"] {
        let mut a = Asm::default();
        a.op("mov", "o0", &["v0"], Rel::None);
        a.simple(op);
        a.simple("end");
        let bytes = dvlb(&a, 0, &OUTPUTS, &[]);
        let e = shrec::formats::pica::translate(&bytes, 0).expect_err("emit in a VS must be rejected");
        use shrec::formats::{pica::error::PicaError, ShaderError};
        assert!(matches!(&e, ShaderError::Pica(PicaError::Unsupported { op: o, pc: 1, .. }) if o.name() == op), "{e:?}");
    }
}

fn fuzz_seed() -> u64 {
    shrec_verify::env_u64("SHREC_FUZZ_SEED", 1)
}

fn fuzz(seed: u64, range: std::ops::Range<u64>, threads: u64) -> (Comparison, Forms) {
    let len = range.end - range.start;
    let handles: Vec<_> = (0..threads)
        .map(|t| range.start + len * t / threads..range.start + len * (t + 1) / threads)
        .map(|r| {
            std::thread::spawn(move || {
                let gpu = pica::gpu_or_skip().expect("checked by the caller");
                let mut c = Comparison::default();
                let mut f = Forms::default();
                for i in r {
                    let p = gen::program(seed, i);
                    f.add(&p);
                    c.merge(pica::run(gpu, &p));
                    if i % 500 == 499 {
                        common::log_uncaptured(&format!(
                            "fuzz progress: program {i}, {} mismatches so far, {} structured / {} pc-dispatch",
                            c.mismatches, f.0, f.1
                        ));
                    }
                }
                (c, f)
            })
        })
        .collect();
    let mut total = Comparison::default();
    let mut forms = Forms::default();
    for h in handles {
        let (c, f) = h.join().expect("fuzz thread");
        total.merge(c);
        forms.merge(f);
    }
    (total, forms)
}

/// 300 fixed-seed random programs.
/// Programs of `long_fuzz` seed 1 that found a bug: #1622 and #8080 multiply −inf by a register
/// never written (a literal −0 once the IR passes propagate it); lavapipe kept the NaN product
/// while the prelude's `shrec_pica_mul` tested it with `isnan` (12 lanes through DXC, 0 on the
/// direct back end). The NaN test is on the bits now.
#[test]
fn fuzz_regressions() {
    if gpu().is_none() {
        return;
    }
    let mut total = Comparison::default();
    for i in [1622, 8080] {
        total.merge(fuzz(1, i..i + 1, 1).0);
    }
    finish("fuzz_regressions", &total, &[], 100);
}

#[test]
fn fuzz_fixed_seed() {
    if gpu().is_none() {
        return;
    }
    let (c, forms) = fuzz(fuzz_seed(), 0..300, 1);
    forms.check("fuzz_fixed_seed");
    let cf = ["ifc", "ifu", "loop", "breakc", "call", "callc", "callu", "jmpc", "jmpu"];
    let ops: Vec<&str> = VS_MNEMONICS.iter().copied().filter(|m| *m != "break").chain(cf).collect();
    finish("fuzz_fixed_seed", &c, &ops, 15_000);
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
    // One thread by default: lavapipe (Mesa 22.3) has crashed / hung with two threads driving it.
    let threads = shrec_verify::env_u64("SHREC_FUZZ_THREADS", 1);
    let t0 = std::time::Instant::now();
    let (c, forms) = fuzz(seed, programs, threads);
    println!(
        "long_fuzz seed {seed} from #{from}: {} programs ({} structured, {} pc-dispatch), {} comparisons, {} mismatches, {:.0} s",
        c.programs,
        forms.0,
        forms.1,
        c.comparisons,
        c.mismatches,
        t0.elapsed().as_secs_f64()
    );
    forms.check("long_fuzz");
    finish("long_fuzz", &c, &[], 0);
}

#[test]
#[ignore]
fn fuzz_one() {
    let Some(gpu) = gpu() else { return };
    let index: u64 = std::env::var("SHREC_FUZZ_ONLY").expect("set SHREC_FUZZ_ONLY").parse().expect("a number");
    // SHREC_FUZZ_SHAPED=1: program `index` of the compiler-shaped generator
    let p = if std::env::var_os("SHREC_FUZZ_SHAPED").is_some() {
        let (p, st) = pica_shaped::shaped_program_and_stats(fuzz_seed(), index);
        println!("{st:?}");
        p
    } else {
        gen::program(fuzz_seed(), index)
    };
    // SHREC_PICA_DISPATCH=1: lower with pc-dispatch even when the program is structured.
    shrec::formats::pica::lower::set_force_dispatch(std::env::var("SHREC_PICA_DISPATCH").as_deref() == Ok("1"));
    println!("{}", shrec::formats::pica::disasm(&p.bytes, 0).unwrap_or_default());
    let c = pica::run(gpu, &p);
    for r in &c.reports {
        println!("{r}");
    }
    println!("{}", c.summary("pica"));
    assert_eq!(c.mismatches, 0);
}

/// The harness can fail: PICA `mul` lowered as an IEEE multiply (0·inf = NaN) is caught.
#[test]
fn harness_detects_mutation() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(9);
    let mut a = Asm::default();
    a.op("mul", "r0", &["c0", "v0"], Rel::None);
    epilogue(&mut a);
    let cs = states(&mut rng, 16, &mut |r, s| {
        s.v[0] = std::array::from_fn(|_| *r.pick(&[0.0, f32::INFINITY, 2.0]));
        s.c[0] = std::array::from_fn(|_| *r.pick(&[0.0, f32::NEG_INFINITY, -0.5]));
    });
    let p = prog("mutated mul", &a, &[], cs);
    set_mutation(Mutation::PicaMulAsIeee);
    let mutated = pica::run(gpu, &p);
    set_mutation(Mutation::None);
    let clean = pica::run(gpu, &p);
    println!("mutated: {}\nclean: {}", mutated.summary("pica"), clean.summary("pica"));
    assert!(mutated.mismatches > 0, "the harness missed PICA mul lowered as IEEE mul");
    assert_eq!(clean.mismatches, 0);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Every vertex DVLE of the corpus (`tests/corpus/pica`), random inputs.
#[test]
fn corpus_vertex_dvles() {
    let Some(gpu) = gpu() else { return };
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("tests/corpus/pica");
    let mut files: Vec<_> = walk(&dir).into_iter().filter(|p| p.extension().is_some_and(|e| e == "shbin")).collect();
    files.sort();
    let mut total = Comparison::default();
    let mut rng = Rng::new(2024);
    let mut dvles = 0;
    let mut forms = Forms::default();
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let Ok(p) = shrec::formats::pica::dvlb::parse_program(&bytes) else { continue };
        for (i, d) in p.dvles.iter().enumerate() {
            if d.stage != shrec::formats::Stage::Vertex {
                continue;
            }
            dvles += 1;
            let cs = states(&mut rng, 16, &mut |_, _| {});
            let name = format!("{} DVLE {i}", f.strip_prefix(&dir).unwrap().display());
            let t = TestProgram {
                name,
                bytes: bytes.clone(),
                dvle: i as u32,
                cases: cs,
                reproduce: "cargo test --release --test verify_pica -- corpus_vertex_dvles --nocapture".into(),
            };
            forms.add(&t);
            total.merge(pica::run(gpu, &t));
        }
    }
    println!("corpus_vertex_dvles: {} files, {dvles} vertex DVLEs", files.len());
    forms.check("corpus_vertex_dvles");
    finish("corpus_vertex_dvles", &total, &[], 1000);
}

/// Runs compiler-shaped programs `range` of run `seed` (`pica_shaped::shaped_program`): the
/// comparison, the control-flow forms and the summed statistics.
fn shaped(gpu: &vk::Gpu, seed: u64, range: std::ops::Range<u64>) -> (Comparison, Forms, ShapedStats) {
    let mut c = Comparison::default();
    let mut forms = Forms::default();
    let mut st = ShapedStats::default();
    let began = std::time::Instant::now();
    // SHREC_FUZZ_SECONDS: start no new program after this many seconds (long runs on a shared
    // machine end with their summary line)
    let limit = std::env::var("SHREC_FUZZ_SECONDS").ok().and_then(|s| s.parse::<f64>().ok());
    for i in range {
        if limit.is_some_and(|l| began.elapsed().as_secs_f64() > l) {
            common::log_uncaptured(&format!("time limit: stopped before #{i}"));
            println!("time limit: stopped before #{i}");
            break;
        }
        let (p, s) = pica_shaped::shaped_program_and_stats(seed, i);
        st.merge(&s);
        forms.add(&p);
        let mut pc = pica::run(gpu, &p);
        // reports at once (a long run may be stopped before its end)
        for r in std::mem::take(&mut pc.reports) {
            println!("{r}");
        }
        c.merge(pc);
        if c.programs % 100 == 0 {
            common::log_uncaptured(&format!("shaped progress (up to #{i}): {} mismatches, {} comparisons", c.mismatches, c.comparisons));
        }
    }
    (c, forms, st)
}

fn shaped_summary(what: &str, c: &Comparison, f: &Forms, s: &ShapedStats, seconds: f64) -> String {
    format!(
        "{what}: {} programs ({} structured, {} pc-dispatch), {} comparisons, {} mismatches, {} inconclusive; deepest nesting {} ({} programs at least {} deep), {} words at most, stacks at most if {} / call {} / loop {}, {} full-stack pushes; ifs taken {} / not taken {}; {} loop exits by break ({} break/breakc sites in ifs), loops with count 0: {} / more: {}; {} calls ({} sites in ifs, {} procedures); {} ends in procedures placed, {} runs ended inside a call; {} jumps over an else, {} out of a then-part; branch sites uniform {} / differing between vertices {}; {} undetermined runs; {seconds:.0} s",
        c.programs,
        f.0,
        f.1,
        c.comparisons,
        c.mismatches,
        c.inconclusive,
        s.depth,
        s.deep,
        pica_shaped::MIN_DEEP,
        s.words,
        s.max_stack[0],
        s.max_stack[1],
        s.max_stack[2],
        s.overwrites,
        s.ifs_taken,
        s.ifs_not_taken,
        s.loop_breaks,
        s.breaks_in_ifs,
        s.loops_count0,
        s.loops_more,
        s.calls,
        s.calls_in_ifs,
        s.procs,
        s.ends_in_procs,
        s.ends_in_calls,
        s.jumps_over_else,
        s.jumps_out_of_then,
        s.uniform_sites,
        s.divergent_sites,
        s.undetermined,
    )
}

/// Issue 19 item 2: 200 compiler-shaped programs of a fixed seed (`pica_shaped`: picasso's
/// `.if` / `.else` / `.for` / `.proc` placement with its padding NOPs, cmp-flag and bool
/// conditions, loops over i0..i3 with breaks, calls up to four deep, `end` in procedures, forward
/// jumps), 0 mismatches, and every shape really ran: nesting ≥ 6, ifs taken and not, loops left
/// by break, loops with count 0 and more, calls, a run ended inside a call, jumps over an else
/// and out of a then-part, branch sites where the vertices of one uniform set agree and where
/// they differ, never a push onto a full stack.
#[test]
fn compiler_shaped_fixed_seed() {
    let Some(gpu) = gpu() else { return };
    let started = std::time::Instant::now();
    let (c, forms, s) = shaped(gpu, fuzz_seed(), 0..200);
    common::log_uncaptured(&shaped_summary("compiler_shaped_fixed_seed", &c, &forms, &s, started.elapsed().as_secs_f64()));
    assert!(
        s.depth >= pica_shaped::MIN_DEEP && s.deep >= c.programs / 3,
        "deepest nesting {}, {} programs nested {} deep",
        s.depth,
        s.deep,
        pica_shaped::MIN_DEEP
    );
    assert!(s.ifs_taken > 0 && s.ifs_not_taken > 0, "ifs taken {} / not taken {}", s.ifs_taken, s.ifs_not_taken);
    assert!(s.loop_breaks > 0 && s.breaks_in_ifs > 0, "loop exits by break {}, break sites in ifs {}", s.loop_breaks, s.breaks_in_ifs);
    assert!(s.loops_count0 > 0 && s.loops_more > 0, "loops with count 0: {} / more: {}", s.loops_count0, s.loops_more);
    assert!(
        s.calls > 0 && s.calls_in_ifs > 0 && s.ends_in_calls > 0,
        "calls {}, in ifs {}, ends in calls {}",
        s.calls,
        s.calls_in_ifs,
        s.ends_in_calls
    );
    assert!(s.jumps_over_else > 0 && s.jumps_out_of_then > 0, "jumps over an else {}, out of a then-part {}", s.jumps_over_else, s.jumps_out_of_then);
    assert!(s.divergent_sites > 0 && s.uniform_sites > 0, "branch sites uniform {} / differing {}", s.uniform_sites, s.divergent_sites);
    assert!(s.max_stack[1] == pica_shaped::CALL_STACK, "calls nested {} deep at most", s.max_stack[1]);
    assert_eq!(s.overwrites, 0, "a shaped program pushed onto a full stack");
    forms.check("compiler_shaped_fixed_seed");
    let cf = ["ifc", "ifu", "loop", "break", "breakc", "call", "callc", "callu", "jmpc", "jmpu", "cmp", "mova", "nop", "end", "relative"];
    finish("compiler_shaped_fixed_seed", &c, &cf, 10_000);
}

/// Long mode of [`compiler_shaped_fixed_seed`]: `SHREC_FUZZ_PROGRAMS` programs (default 10 000)
/// from `SHREC_FUZZ_FROM` (default 0) of run `SHREC_FUZZ_SEED` (default 1);
/// `SHREC_FUZZ_SECONDS` stops starting new ones (the summary says where it stopped).
#[test]
#[ignore]
fn long_shaped() {
    let Some(gpu) = gpu() else { return };
    let programs = shrec_verify::long_run_programs(10_000);
    let from = programs.start;
    let started = std::time::Instant::now();
    let (c, forms, s) = shaped(gpu, fuzz_seed(), programs);
    println!("{}", shaped_summary(&format!("long_shaped seed {} from #{from}", fuzz_seed()), &c, &forms, &s, started.elapsed().as_secs_f64()));
    assert_eq!(s.overwrites, 0, "a shaped program pushed onto a full stack");
    finish("long_shaped", &c, &[], 0);
}

/// The shaped generator places blocks as picasso does (CPU only): every sample translates,
/// none pushes onto a full stack, and programs are deterministic per (seed, index).
#[test]
fn shaped_programs_are_well_formed() {
    for i in 0..60 {
        let (a, s) = pica_shaped::shaped_program_and_stats(7, i);
        let (b, _) = pica_shaped::shaped_program_and_stats(7, i);
        assert_eq!(a.bytes, b.bytes, "program {i} not deterministic");
        shrec::formats::pica::translate(&a.bytes, 0).unwrap_or_else(|e| panic!("program {i}: {}", e.reason()));
        assert_eq!(s.overwrites, 0, "program {i} pushed onto a full stack");
        assert!(s.words <= 512, "program {i}: {} words", s.words);
    }
}

/// Prints program `SHREC_FUZZ_ONLY` of the shaped generator (listing and statistics) and the
/// summed statistics of its first `SHREC_FUZZ_PROGRAMS` programs (CPU only, no GPU).
#[test]
#[ignore]
fn shaped_peek() {
    let seed = fuzz_seed();
    let n: u64 = shrec_verify::env_u64("SHREC_FUZZ_PROGRAMS", 240);
    let index: u64 = shrec_verify::env_u64("SHREC_FUZZ_ONLY", 0);
    let (p, s) = pica_shaped::shaped_program_and_stats(seed, index);
    println!("{}\n{s:?}", shrec::formats::pica::disasm(&p.bytes, 0).unwrap_or_default());
    let mut total = ShapedStats::default();
    let mut forms = Forms::default();
    for i in 0..n {
        let (p, s) = pica_shaped::shaped_program_and_stats(seed, i);
        forms.add(&p);
        total.merge(&s);
    }
    println!("{}", shaped_summary("peek", &Comparison::default(), &forms, &total, 0.0));
}
