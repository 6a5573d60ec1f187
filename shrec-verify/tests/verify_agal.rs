//! Verification by execution of the AGAL path (see `shrec::verify`): every opcode and operand
//! mode, and a fixed-seed differential fuzzing sample, run as decode → lower → HLSL → DXC SPIR-V →
//! lavapipe and compared lane by lane with the reference interpreter
//! (`shrec_verify::interp::agal`).
//!
//! Commands:
//! - `cargo test --release --test verify_agal` — the suite (per-opcode, operand modes, 300 fuzz
//!   programs, the mutation check);
//! - `SHREC_FUZZ_PROGRAMS=10000 cargo test --release --test verify_agal -- --ignored long_fuzz --nocapture`
//!   — long differential fuzzing (`SHREC_FUZZ_SEED` picks the seed);
//! - `SHREC_FUZZ_SEED=S SHREC_FUZZ_ONLY=I cargo test --release --test verify_agal -- --ignored fuzz_one --nocapture`
//!   — rerun one fuzz program (printed by every mismatch report; `SHREC_FUZZ_SHAPED=1` for a
//!   compiler-shaped one);
//! - `SHREC_FUZZ_PROGRAMS=10000 cargo test --release --test verify_agal -- --ignored long_shaped --nocapture`
//!   — compiler-shaped programs (`shrec_verify::agal_shaped`), from `SHREC_FUZZ_FROM` (default 0)
//!   on `SHREC_FUZZ_THREADS` threads (default 1).
//!
//! Without a Vulkan driver the tests fail naming the packages to install, unless
//! `SHREC_ALLOW_MISSING_TOOLS=1`.

use shrec_testkit as common;

use shrec::formats::agal::decode::{self, AgalError, DecodeOptions, Op, TokenError};
use shrec::formats::{Stage, TranslateOptions};
use shrec_verify::agal::{self, asm, Case, RunOptions, TestProgram};
use shrec_verify::agal_shaped;
use shrec_verify::interp::agal::{FlowStats, Texture};
use shrec_verify::mutation::{set_mutation, Mutation};
use shrec_verify::{Comparison, Rng};

/// Every opcode the AGAL path translates, from the decoder's table: all but the rejected ones
/// (`ted`) and the AGAL4-only `tld` (tested separately).
fn translated_opcodes() -> Vec<&'static str> {
    Op::ALL.iter().filter(|o| !o.status().is_rejected() && o.info().min_version <= 3).map(|o| o.name()).collect()
}

const REPRO: &str = "cargo test --release --test verify_agal -- --nocapture";

/// Prints the reports and the summary line, then asserts the suite's invariants.
fn finish(what: &str, c: &Comparison, all_opcodes: bool) {
    for r in &c.reports {
        println!("{r}");
    }
    common::log_uncaptured(&format!("{what}: {}", c.summary("agal")));
    println!("{what}: worst toleranced lane: {:.3e} absolute, {:.1} ulp, {:.1}% of its bound", c.worst_abs, c.worst_ulps, c.worst_fraction * 100.0);
    assert_eq!(c.mismatches, 0, "{what}: mismatches (reports above)");
    assert!(c.comparisons >= 1000, "{what}: only {} comparisons", c.comparisons);
    if all_opcodes {
        let missing: Vec<&str> = translated_opcodes().into_iter().filter(|o| !c.opcodes.contains(*o)).collect();
        assert!(missing.is_empty(), "{what}: opcodes never executed: {missing:?}");
    }
}

/// Register prefixes per stage, substituted for `$t` (temp), `$c` (constant), `$i` (input:
/// attribute or varying), `$o` (output: op or oc).
fn stage_text(text: &str, stage: Stage) -> String {
    let (t, c, i, o) = if stage == Stage::Vertex { ("vt", "vc", "va", "op") } else { ("ft", "fc", "v", "oc") };
    text.replace("$t", t).replace("$c", c).replace("$i", i).replace("$o", o)
}

/// Random cases: every input lane and constant drawn from `value`.
fn cases(rng: &mut Rng, stage: Stage, n: usize, value: &mut dyn FnMut(&mut Rng) -> f32) -> Vec<Case> {
    let mut v4 = |rng: &mut Rng| -> [f32; 4] { std::array::from_fn(|_| value(rng)) };
    (0..n)
        .map(|_| {
            let mut c = Case { constants: (0..16).map(|_| v4(rng)).collect(), ..Default::default() };
            if stage == Stage::Vertex {
                c.attributes = (0..8).map(|_| v4(rng)).collect();
            } else {
                c.varyings = (0..10).map(|_| v4(rng)).collect();
            }
            c
        })
        .collect()
}

fn program(name: &str, version: u32, stage: Stage, text: &str, cases: Vec<Case>, textures: Vec<Option<Texture>>) -> TestProgram {
    let text = stage_text(text, stage);
    let bytes = asm::assemble(version, stage, &text).unwrap_or_else(|e| panic!("{name}: {e}"));
    TestProgram { name: format!("{name} ({stage:?})"), bytes, cases, textures, reproduce: REPRO.into() }
}

fn run(p: &TestProgram) -> Comparison {
    run_with(p, RunOptions::default())
}

fn run_with(p: &TestProgram, opts: RunOptions) -> Comparison {
    let gpu = agal::gpu().expect("checked by the caller");
    agal::run(gpu, p, opts)
}

/// Runs `text` as a vertex and as a fragment program (AGAL2) over random inputs.
fn both(total: &mut Comparison, name: &str, text: &str, value: &mut dyn FnMut(&mut Rng) -> f32) {
    let mut rng = Rng::new(name.bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b))));
    let mut this = Comparison::default();
    for stage in [Stage::Vertex, Stage::Pixel] {
        let n = if stage == Stage::Vertex { 48 } else { 12 };
        let cs = cases(&mut rng, stage, n, value);
        this.merge(run(&program(name, 2, stage, text, cs, vec![])));
    }
    if this.worst_fraction > 0.0 {
        // The measurements behind the tolerance table (interp::TOLERANCES).
        println!(
            "  {name:<12} {:>6} lanes, worst {:.3e} absolute, {:6.2} ulp, {:5.1}% of the bound",
            this.comparisons,
            this.worst_abs,
            this.worst_ulps,
            this.worst_fraction * 100.0
        );
    }
    total.merge(this);
}

fn dyadic(int_bits: u32, frac_bits: u32) -> impl FnMut(&mut Rng) -> f32 {
    move |r: &mut Rng| r.dyadic(int_bits, frac_bits)
}

/// Nonzero values with |x| in [1/16, 16), either sign.
fn away_from_zero(r: &mut Rng) -> f32 {
    let m = 1.0 + r.below(256) as f32 / 256.0;
    let e = r.range(-4, 3);
    let s = if r.chance(50) { 1.0 } else { -1.0 };
    s * m * (e as f32).exp2()
}

/// Full 24-bit mantissas, |x| in [1/16, 16), either sign: rounding differences show up.
fn full_precision(r: &mut Rng) -> f32 {
    let bits = (r.next_u64() as u32 & 0x007F_FFFF) | ((127 + r.range(-4, 3)) as u32) << 23 | if r.chance(50) { 0x8000_0000 } else { 0 };
    f32::from_bits(bits)
}

/// Few distinct values, so that equality happens often.
fn few_values(r: &mut Rng) -> f32 {
    *r.pick(&[-1.0, -0.5, 0.0, 0.5, 1.0, 2.0])
}

/// NaN, infinities and zeros of both signs among a few numbers: the IEEE corner cases of compares.
fn special_values(r: &mut Rng) -> f32 {
    *r.pick(&[f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, 1.0, -1.0])
}

/// Texture with distinct random texels.
fn texture(rng: &mut Rng, cube: bool, size: u32) -> Option<Texture> {
    let n = (size * size * if cube { 6 } else { 1 }) as usize;
    Some(Texture { cube, size, texels: (0..n).map(|_| std::array::from_fn(|_| rng.dyadic(3, 8))).collect() })
}

fn per_opcode(total: &mut Comparison) {
    // Exact ops, general values.
    for op in ["add", "sub", "mul", "min", "max", "sge", "slt"] {
        both(
            total,
            op,
            &format!("mov $t0, $c0\n{op} $t0, $i0, $i1\nmov $o, $t0\nmov $t1, $c1\n{op} $t1.yw, $i2.wzyx, $c3\nmov $o.yw, $t1"),
            &mut dyadic(4, 10),
        );
    }
    for op in ["mov", "abs", "neg", "sat", "frc", "sgn"] {
        both(total, op, &format!("{op} $t0, $i0\nmov $o, $t0"), &mut dyadic(3, 12));
    }
    both(total, "sgn-zero", "sgn $t0, $i0\nmov $o, $t0", &mut few_values);
    // frc of ±inf and NaN is NaN (`x - floor(x)`, Adobe's spec): constants, as below. HLSL
    // `frac` alone leaves it to the driver (`shrec_frac` does not; verify_gx2.rs
    // `fract_of_infinities_and_nan` says more).
    both(total, "frc-special", "frc $t0, $c0\nmov $o, $t0", &mut special_values);
    for op in ["seq", "sne", "sge", "slt"] {
        both(total, &format!("{op}-equal"), &format!("{op} $t0, $i0, $i1\nmov $o, $t0"), &mut few_values);
        // IEEE comparisons: NaN is unordered (only sne is true), infinities compare as numbers;
        // constants, not inputs (a fragment input is interpolated: inf × weight can give NaN)
        both(
            total,
            &format!("{op}-special"),
            &format!("mov $t2, $c1\nmov $t3, $c3\n{op} $t0, $c0, $t2\nmov $o, $t0\n{op} $t1, $c2.wzyx, $t3\nmov $o.xy, $t1"),
            &mut special_values,
        );
    }
    // Correctly rounded or nearly: small ULP bounds.
    both(total, "div", "div $t0, $i0, $i1\nmov $o, $t0", &mut away_from_zero);
    both(total, "div-full", "div $t0, $i0, $i1\nmov $o, $t0", &mut full_precision);
    for op in ["rcp", "sqt", "rsq", "log"] {
        // |x| semantics: negative inputs too.
        both(total, op, &format!("{op} $t0, $i0\nmov $o, $t0"), &mut away_from_zero);
        both(total, &format!("{op}-full"), &format!("{op} $t0, $i0\nmov $o, $t0"), &mut full_precision);
    }
    both(total, "exp-full", "exp $t0, $i0\nmov $o, $t0", &mut full_precision);
    both(total, "sin-large", "sin $t0, $i0\ncos $t1, $i1\nmov $o, $t0\nadd $o.zw, $t1, $c0", &mut dyadic(13, 4));
    both(total, "sin-full", "sin $t0, $i0\ncos $t1, $i1\nmov $o, $t0\nadd $o.zw, $t1, $c0", &mut full_precision);
    both(total, "pow-full", "pow $t0, $i0, $i1\nmov $o, $t0", &mut |r: &mut Rng| full_precision(r) * 0.25);
    for op in ["dp3", "dp4", "crs", "m33", "m34", "m44"] {
        let text = if op == "crs" {
            "mov $t0, $c0\ncrs $t0.xyz, $i0, $i1\nmov $o, $t0".to_string()
        } else {
            format!("mov $t0, $c0\n{op} $t0, $i0, $c1\nmov $o, $t0")
        };
        both(total, &format!("{op}-full"), &text, &mut full_precision);
    }
    both(total, "nrm-full", "mov $t0, $c0\nnrm $t0.xyz, $i0\nmov $o, $t0", &mut full_precision);
    both(total, "exp", "exp $t0, $i0\nmov $o, $t0", &mut dyadic(4, 10));
    both(total, "sin", "sin $t0, $i0\nmov $o, $t0", &mut dyadic(6, 10));
    both(total, "cos", "cos $t0, $i0\nmov $o, $t0", &mut dyadic(6, 10));
    both(total, "sin-small", "sin $t0, $i0\ncos $t1, $i1\nmov $o, $t0\nadd $o.zw, $t1, $c0", &mut dyadic(2, 16));
    // pow(|a|, b), a in ±[1/16, 16), b in (-4, 4).
    both(total, "pow", "mov $t1, $i1\nfrc $t1, $t1\nmul $t1, $t1, $c0\npow $t0, $i0, $t1\nmov $o, $t0", &mut away_from_zero);
    both(total, "pow-int", "pow $t0, $i0, $c0\nmov $o, $t0", &mut |r: &mut Rng| *r.pick(&[-2.0, -1.0, 0.5, 1.0, 2.0, 3.0, 1.5, -0.25]));
    // Vector ops.
    both(total, "dp3", "dp3 $t0, $i0, $i1\nmov $o, $t0\ndp3 $t1.zw, $i2.yzwx, $c2\nmov $o.zw, $t1", &mut dyadic(3, 8));
    both(total, "dp4", "dp4 $t0, $i0, $c1\nmov $o, $t0\ndp4 $t1.x, $i2, $i3.wzyx\nmov $o.x, $t1", &mut dyadic(3, 8));
    both(total, "crs", "mov $t0, $c0\ncrs $t0.xyz, $i0, $i1\nmov $o, $t0\ncrs $t1.xyz, $i2.yzxw, $c3\nmov $o.yz, $t1", &mut dyadic(3, 8));
    both(total, "nrm", "mov $t0, $c0\nnrm $t0.xyz, $i0\nmov $o, $t0\nmov $t1, $c1\nnrm $t1.xz, $i1.wzyx\nmov $o.xz, $t1", &mut away_from_zero);
    both(total, "m33", "mov $t0, $c9\nm33 $t0.xyz, $i0, $c2\nmov $o, $t0", &mut dyadic(3, 8));
    both(total, "m34", "mov $t0, $c9\nm34 $t0.xyz, $i0, $c3\nmov $o, $t0\nmov $t1, $c8\nm34 $t1.xz, $i1, $c4\nmov $o.xz, $t1", &mut dyadic(3, 8));
    both(total, "m44", "m44 $t0, $i0, $c4\nmov $o, $t0\nm44 $t1.yw, $i1.yyxw, $c0\nmov $o.yw, $t1", &mut dyadic(3, 8));
    // Control flow (AGAL2), with values that are often equal.
    for op in ["ife", "ine", "ifg", "ifl"] {
        let text = format!(
            "mov $t0, $c0\n{op} $i0.x, $i1.y\nadd $t0, $i2, $c1\nels\nsub $t0, $i2, $c1\neif\nmov $o, $t0\n{op} $i3.w, $c2.z\nmov $o.w, $c3\neif"
        );
        both(total, op, &text, &mut few_values);
        // (one constant operand per instruction: the second goes through a temporary)
        let special = format!("mov $t0, $c0\nmov $t2, $c1\nmov $t3, $c3\n{op} $c0.x, $t2.y\nadd $t0, $t3, $c1\nels\nsub $t0, $t3, $c1\neif\nmov $o, $t0\n{op} $t3.w, $c2.z\nmov $o.w, $c3\neif");
        both(total, &format!("{op}-special"), &special, &mut special_values);
    }
    both(
        total,
        "nested-if",
        "mov $t0, $c0\nmov $t1, $c1\nifg $i0.x, $i0.y\n ifl $i1.z, $c2.x\n  add $t0, $t0, $i2\n  ine $i3.x, $c3.y\n   mul $t1, $t1, $i3\n  eif\n els\n  sub $t0.yz, $t0, $i2\n eif\n ife $i1.w, $i0.w\n  mov $t1.x, $c4.w\n eif\nels\n max $t0, $t0, $i1\neif\nadd $o, $t0, $t1",
        &mut few_values,
    );
}

/// Fragment-only ops: kil, tex (2d, cube, sampler words), ddx/ddy.
fn fragment_ops(total: &mut Comparison) {
    let mut rng = Rng::new(99);
    let mut textures = vec![texture(&mut rng, false, 4), texture(&mut rng, true, 4), None, texture(&mut rng, false, 8)];
    textures.resize(16, None);
    textures[15] = texture(&mut rng, false, 8);
    let tex_cases = |rng: &mut Rng, n: usize, slopes: bool| -> Vec<Case> {
        let mut cs = cases(rng, Stage::Pixel, n, &mut |r: &mut Rng| r.dyadic(2, 8));
        for c in &mut cs {
            // v0: 2d texel centres of an 8×8 grid (also centres of 4×4 texels scaled); one texel step per pixel.
            c.varyings[0] = [(rng.range(0, 6) as f32 + 0.5) / 8.0, (rng.range(0, 6) as f32 + 0.5) / 8.0, 0.0, 0.0];
            // v1: cube directions with a clear major axis of either sign.
            let mut d = [rng.dyadic(0, 4) * 0.5, rng.dyadic(0, 4) * 0.5, if rng.chance(50) { 1.0 } else { -1.0 }, 0.0];
            d.swap(2, rng.below(3) as usize);
            c.varyings[1] = d;
            c.slope_x = vec![[0.0; 4]; 10];
            c.slope_y = vec![[0.0; 4]; 10];
            if slopes {
                c.slope_x[0] = [0.125, 0.0, 0.0, 0.0];
                c.slope_y[0] = [0.0, 0.125, 0.0, 0.0];
                for l in 2..6 {
                    for k in 0..4 {
                        c.slope_x[l][k] = *rng.pick(&[0.0, 0.5, -0.25, 1.0, 2.0]);
                        c.slope_y[l][k] = *rng.pick(&[0.0, 0.125, -1.0, 4.0]);
                    }
                }
            }
        }
        cs
    };
    let progs = [
        ("tex-2d", "tex ft0, v0, fs0 <2d,nearest,mipnone,clamp>\nmov oc, ft0"),
        ("tex-2d-linear-word", "tex ft0, v0.xyzw, fs3 <2d,linear,miplinear,repeat>\nmov oc, ft0"),
        ("tex-2d-bias", "tex ft0, v0, fs0 <2d,nearest,mipnone,clamp,-1.5>\nmov oc, ft0"),
        ("tex-slot15", "tex ft0, v0, fs15 <2d,nearest,mipnone,clamp,2>\ntex ft1, v1, fs1 <cube,nearest,mipnone,clamp>\nadd oc, ft0, ft1"),
        ("tex-cube", "tex ft0, v1, fs1 <cube,nearest,mipnone,clamp>\nmov oc, ft0"),
        ("tex-cube-linear-swizzle", "mov ft1, v1.zxyw\ntex ft0.yw, ft1.yzxw, fs1 <cube,linear,mipnone,clamp>\nmov ft0.xz, fc0\nmov oc, ft0"),
        ("tex-computed-coord", "add ft1, v0, fc0.wwww\nsub ft1, ft1, fc0.wwww\ntex ft2, ft1, fs3 <2d,nearest,mipnone,clamp>\nmov oc, ft2"),
        ("kil-broadcast", "kil v2.x\nmov oc, v3"),
        ("kil-any-lane", "kil v2.xyzw\nmov oc, v3"),
        ("kil-computed", "sub ft0, v2, fc0\nkil ft0.yyyy\nmov oc, ft0"),
        ("ddx-ddy-varying", "ddx ft0, v2\nddy ft1, v3.wzyx\nmov oc, ft0\nmov ft2, fc0\nddx ft2.yz, v4\nmov oc1, ft1\nmov oc2, ft2"),
        ("ddx-ddy-nonlinear", "mul ft0, v2, v3\nddx ft1, ft0\nddy ft2, ft0\nadd oc, ft1, ft2\nmul ft3, v4, v4\nddy oc1, ft3.xxyy"),
        ("ddx-then-kil", "ddx ft0, v2\nkil v5.x\nmov oc, ft0"),
    ];
    for (name, text) in progs {
        for slopes in [false, true] {
            let cs = tex_cases(&mut rng, 16, slopes);
            total.merge(run(&program(&format!("{name}{}", if slopes { "-slopes" } else { "" }), 2, Stage::Pixel, text, cs, textures.clone())));
        }
    }
}

/// Swizzles, masks, indirect addressing, every register type, MRT, depth, AGAL1, AGAL3.
fn operand_modes(total: &mut Comparison) {
    let mut rng = Rng::new(5);
    let index_cases = |rng: &mut Rng, n: usize| -> Vec<Case> {
        let mut cs = cases(rng, Stage::Vertex, n, &mut |r: &mut Rng| r.dyadic(3, 8));
        for c in &mut cs {
            c.constants = (0..250).map(|_| std::array::from_fn(|_| rng.dyadic(3, 8))).collect();
            // Indices with fractions to exercise floor(x + 0.5).
            c.attributes[0] = std::array::from_fn(|_| rng.range(0, 20) as f32 + *rng.pick(&[0.0, 0.25, -0.25, 0.375]));
            c.attributes[1] = std::array::from_fn(|_| rng.range(0, 40) as f32);
        }
        cs
    };
    let vertex = [
        // Positional single-lane writes: vt0.z = vc0.y, vt0.w = vc0.y (the short swizzle pads).
        ("positional", "mov vt0, vc1\nmov vt0.zw, vc0.xy\nmov op, vt0\nmov vt1, vc2\nadd vt1.w, va2, vc3\nmov v0, vt1\nneg v1.y, va3\nmov v1.xzw, va4.wzyx"),
        ("masks", "mov vt0, vc0\nmov vt0.yz, va1\nmov vt0.w, va2.x\nmov op, vt0\nmov vt1, vc1\nmul vt1.xw, va3, va4\nmov v9, vt1\nmov v3.yw, va5\nmov v3.xz, va6.wwww"),
        ("indirect-attribute", "mov op, vc[va0.x+5]\nmov v0, vc[va0.y+0].zwxy\nadd v1, va2, vc[va0.w+200]"),
        ("indirect-temp", "mov vt1, va1\nmov op, vc[vt1.y+3]\nmov vt2, va0\nmul v2, va3, vc[vt2.z+7].xxyy"),
        ("indirect-constant", "mov op, vc[vc2.x+0]\nmov v4, va1"),
        ("indirect-matrix", "m44 op, va2, vc[va1.x+10]\nm33 vt0.xyz, va3, vc[va0.z+50]\nmov vt0.w, va3\nmov v5, vt0"),
        ("high-constants", "add op, va0, vc249\nmov v8, vc128\nmov v9, va7"),
        ("all-varyings", "mov op, va0\nmov v0, va1\nmov v1, va2\nmov v2, va3\nmov v3, va4\nmov v4, va5\nmov v5, va6\nmov v6, va7\nmov v7, vc0\nmov v8, vc1\nmov v9, vc2"),
        ("varying-readback", "mov v0, va0\nadd v0.xy, v0, va1\nmul op, v0, vc0"),
        ("partial-op-writes", "mov op.xw, va0.xzzz\nneg op.y, va0\nmul vt0.z, va0, vc3\nadd op.z, vt0, vc3.w"),
    ];
    for (name, text) in vertex {
        let cs = index_cases(&mut rng, 48);
        total.merge(run(&program(name, 2, Stage::Vertex, text, cs, vec![])));
    }
    // AGAL1 vertex: 128 constants.
    let cs = index_cases(&mut rng, 48);
    total.merge(run(&program("agal1-vertex", 1, Stage::Vertex, "m44 op, va0, vc0\nmov v0, va1\nmov v7, vc[va1.x+80]", cs, vec![])));
    // AGAL3: iid reads instance 0.
    let cs = index_cases(&mut rng, 16);
    total.merge(run(&program("agal3-iid", 3, Stage::Vertex, "add op, va0, iid\nmov v0, iid.xxxx", cs, vec![])));

    let fragment = [
        ("mrt", "mov oc0, v0\nadd oc1, v1, fc1\nmul oc2, v2.wzyx, fc2\nsub oc3.xy, v3, fc3\nmov oc3.zw, v4.x"),
        ("mrt-sparse", "mov oc0, v0\nmov oc2, v9"),
        ("depth", "mov oc, v0\nsat od, v1"),
        ("depth-unclamped", "mov oc, v0\nmov od, v1.yyyy"),
        ("fragment-masks", "mov ft0, fc0\nmov ft0.yw, v1.xy\nadd ft0.z, v2, fc3\nmov oc, ft0"),
        ("high-fc", "add oc, v0, fc63"),
        ("all-varyings-in", "add ft0, v0, v1\nadd ft0, ft0, v2\nadd ft0, ft0, v3\nadd ft0, ft0, v4\nadd ft0, ft0, v5\nadd ft0, ft0, v6\nadd ft0, ft0, v7\nadd ft0, ft0, v8\nadd oc, ft0, v9"),
        ("many-temps", "mov ft25, v0\nmov ft13, ft25.wzyx\nadd oc, ft13, ft25"),
    ];
    for (name, text) in fragment {
        let mut cs = cases(&mut rng, Stage::Pixel, 16, &mut |r: &mut Rng| r.dyadic(3, 8));
        for c in &mut cs {
            c.constants = (0..64).map(|_| std::array::from_fn(|_| rng.dyadic(3, 8))).collect();
            c.varyings[1][1] = rng.dyadic(1, 8); // depth values in and out of [0, 1]
        }
        total.merge(run(&program(name, 2, Stage::Pixel, text, cs, vec![])));
    }
    // AGAL1 fragment: `oc`, 28 constants.
    let cs = cases(&mut rng, Stage::Pixel, 16, &mut |r: &mut Rng| r.dyadic(3, 8));
    total.merge(run(&program("agal1-fragment", 1, Stage::Pixel, "mul ft0, v0, fc27\nadd oc, ft0, v7", cs, vec![])));
}

#[test]
fn every_opcode_and_operand_mode() {
    if agal::gpu().is_none() {
        return;
    }
    let mut total = Comparison::default();
    per_opcode(&mut total);
    fragment_ops(&mut total);
    operand_modes(&mut total);
    tld_vertex_texture_fetch(&mut total);
    ifg_strict_option(&mut total);
    finish("every_opcode_and_operand_mode", &total, true);
    assert!(total.opcodes.contains("tld"), "tld never executed");
}

#[test]
fn ted_is_rejected() {
    let bytes = asm::assemble(2, Stage::Pixel, "ted ft0, v0, fs0 <2d,nearest,mipnone,clamp>\nmov oc, ft0").unwrap();
    let err = decode::decode(&bytes, DecodeOptions::default()).expect_err("ted must be rejected");
    let reason = Op::Ted.status().reason().expect("ted is a rejected row");
    assert!(
        matches!(err, AgalError::Token { token: 1, offset: 7, reason: TokenError::Rejected { op: Op::Ted, reason: r }, .. } if r == reason),
        "{err:?}"
    );
    let err = shrec::formats::agal::translate(&bytes, &TranslateOptions::default()).expect_err("ted must be rejected");
    assert!(matches!(err, shrec::formats::ShaderError::Agal(AgalError::Token { reason: TokenError::Rejected { op: Op::Ted, .. }, .. })), "{err:?}");
}

/// AGAL4 vertex texture fetch (needs `--agal4`).
fn tld_vertex_texture_fetch(total: &mut Comparison) {
    let mut rng = Rng::new(44);
    let textures = vec![texture(&mut rng, false, 4), texture(&mut rng, true, 2)];
    let mut cs = cases(&mut rng, Stage::Vertex, 48, &mut |r: &mut Rng| r.dyadic(2, 8));
    for c in &mut cs {
        c.attributes[0] = [(rng.range(0, 3) as f32 + 0.5) / 4.0, (rng.range(0, 3) as f32 + 0.5) / 4.0, 0.0, 0.0];
        let mut d = [rng.dyadic(0, 4) * 0.5, rng.dyadic(0, 4) * 0.5, if rng.chance(50) { 1.0 } else { -1.0 }, 0.0];
        d.swap(2, rng.below(3) as usize);
        c.attributes[1] = d;
    }
    let p = program(
        "tld",
        4,
        Stage::Vertex,
        "tld vt0, va0, vs0 <2d,nearest,mipnone,clamp>\nmov op, vt0\ntld v0, va1, vs1 <cube,nearest,mipnone,clamp>\nmov v1, va2",
        cs,
        textures,
    );
    let opts = RunOptions { translate: TranslateOptions { agal4: true, ..Default::default() }, ..Default::default() };
    total.merge(run_with(&p, opts));
}

/// `ifg` as strict `>` (`--agal-ifg-strict`).
fn ifg_strict_option(total: &mut Comparison) {
    let mut rng = Rng::new(3);
    for stage in [Stage::Vertex, Stage::Pixel] {
        let cs = cases(&mut rng, stage, if stage == Stage::Vertex { 64 } else { 16 }, &mut few_values);
        let p = program("ifg-strict", 2, stage, "mov $t0, $c0\nifg $i0.x, $i1.x\nmov $t0, $i2\neif\nmov $o, $t0", cs, vec![]);
        let opts = RunOptions { translate: TranslateOptions { agal_ifg_strict: true, ..Default::default() }, ..Default::default() };
        total.merge(run_with(&p, opts));
    }
}

fn fuzz_seed() -> u64 {
    shrec_verify::env_u64("SHREC_FUZZ_SEED", 1)
}

/// Runs fuzz programs `range` of `seed` on `threads` threads.
fn fuzz(seed: u64, range: std::ops::Range<u64>, threads: u64) -> Comparison {
    fuzz_with(seed, range, threads, RunOptions::default())
}

/// [`fuzz`] with options (the SPIR-V back end).
fn fuzz_with(seed: u64, range: std::ops::Range<u64>, threads: u64, opts: RunOptions) -> Comparison {
    let handles: Vec<_> = shrec_verify::split_range(range, threads)
        .into_iter()
        .map(|r| {
            std::thread::spawn(move || {
                let gpu = agal::gpu().expect("checked by the caller");
                let mut c = Comparison::default();
                let (start, len) = (r.start, r.end - r.start);
                for i in r {
                    c.merge(agal::run(gpu, &agal::gen::program(seed, i), opts));
                    let done = i + 1 - start;
                    if len >= 2000 && done % 1000 == 0 {
                        eprintln!("  fuzz: {done}/{len} programs of this thread, {} mismatches so far", c.mismatches);
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

/// The fixed-seed differential fuzzing sample: 300 random programs (two halves run as two tests
/// so that they use both cores).
#[test]
fn fuzz_fixed_seed_a() {
    if agal::gpu().is_none() {
        return;
    }
    let c = fuzz(fuzz_seed(), 0..150, 1);
    finish("fuzz_fixed_seed_a", &c, true);
}

#[test]
fn fuzz_fixed_seed_b() {
    if agal::gpu().is_none() {
        return;
    }
    let c = fuzz(fuzz_seed(), 150..300, 1);
    finish("fuzz_fixed_seed_b", &c, true);
}

/// The same 300 fixed-seed programs with the SPIR-V written by the direct back end
/// (`--spirv-backend direct`, `shrec::spirv`) instead of DXC: the same lanes, the same
/// interpreter, 0 mismatches.
#[test]
fn fuzz_fixed_seed_direct_spirv() {
    if agal::gpu().is_none() {
        return;
    }
    let opts = RunOptions { spirv_backend: Some(shrec::build::SpirvBackend::Direct), ..Default::default() };
    let c = fuzz_with(fuzz_seed(), 0..300, 1, opts);
    finish("fuzz_fixed_seed_direct_spirv", &c, true);
}

/// Long mode: `SHREC_FUZZ_PROGRAMS=10000 cargo test --release --test verify_agal -- --ignored long_fuzz --nocapture`.
#[test]
#[ignore]
fn long_fuzz() {
    if agal::gpu().is_none() {
        return;
    }
    let programs = shrec_verify::long_run_programs(10_000);
    let from = programs.start;
    let seed = fuzz_seed();
    let default_threads = std::thread::available_parallelism().map_or(2, |n| n.get() as u64);
    let threads = shrec_verify::env_u64("SHREC_FUZZ_THREADS", default_threads);
    let start = std::time::Instant::now();
    let c = fuzz(seed, programs, threads);
    println!(
        "long_fuzz seed {seed} from #{from}: {} programs, {} comparisons, {} mismatches ({} inconclusive lanes, {} opcodes executed, {:.0} s)",
        c.programs,
        c.comparisons,
        c.mismatches,
        c.inconclusive,
        c.opcodes.len(),
        start.elapsed().as_secs_f64()
    );
    finish("long_fuzz", &c, true);
}

/// Reruns one fuzz program: `SHREC_FUZZ_SEED=S SHREC_FUZZ_ONLY=I ... -- --ignored fuzz_one --nocapture`.
#[test]
#[ignore]
fn fuzz_one() {
    let Some(gpu) = agal::gpu() else { return };
    let index: u64 = std::env::var("SHREC_FUZZ_ONLY").expect("set SHREC_FUZZ_ONLY").parse().expect("a number");
    let p = if std::env::var_os("SHREC_FUZZ_SHAPED").is_some() {
        agal_shaped::shaped_program(fuzz_seed(), index)
    } else {
        agal::gen::program(fuzz_seed(), index)
    };
    let prog = decode::decode(&p.bytes, DecodeOptions::default()).expect("generated programs decode");
    println!("{}", shrec::formats::agal::disasm::disassemble(&prog));
    let c = agal::run(gpu, &p, RunOptions::default());
    for r in &c.reports {
        println!("{r}");
    }
    println!("{}", c.summary("agal"));
    assert_eq!(c.mismatches, 0);
}

/// Runs shaped programs `range` of `seed` on `threads` threads: the comparison, the control-flow
/// counts and the deepest nesting in the generated text.
fn shaped(seed: u64, range: std::ops::Range<u64>, threads: u64) -> (Comparison, FlowStats, u32) {
    let handles: Vec<_> = shrec_verify::split_range(range, threads)
        .into_iter()
        .map(|r| {
            std::thread::spawn(move || {
                let gpu = agal::gpu().expect("checked by the caller");
                let (mut c, mut flow, mut deepest) = (Comparison::default(), FlowStats::default(), 0);
                let (start, len) = (r.start, r.end - r.start);
                for i in r {
                    let (p, depth) = agal_shaped::shaped_program_and_depth(seed, i);
                    deepest = deepest.max(depth);
                    let (one, f) = agal::run_counted(gpu, &p, RunOptions::default());
                    c.merge(one);
                    flow.merge(&f);
                    let done = i + 1 - start;
                    if len >= 2000 && done % 1000 == 0 {
                        eprintln!("  shaped: {done}/{len} programs of this thread, {} mismatches so far", c.mismatches);
                    }
                }
                (c, flow, deepest)
            })
        })
        .collect();
    let (mut total, mut flow, mut deepest) = (Comparison::default(), FlowStats::default(), 0);
    for h in handles {
        let (c, f, d) = h.join().expect("shaped thread");
        total.merge(c);
        flow.merge(&f);
        deepest = deepest.max(d);
    }
    (total, flow, deepest)
}

fn flow_line(f: &FlowStats, deepest: u32) -> String {
    format!(
        "deepest if-nesting executed {} (generated {deepest}); if decisions taken {} / not taken {}; fragment ifs: quads uniform {} / divergent {}; \
         kil discarding in a branch {}; tex in a branch: whole quad {} / divergent quad {}; ddx/ddy in a branch on a uniform quad {}, \
         on a non-uniform quad (undetermined) {}; relative constant reads {}",
        f.max_depth,
        f.taken,
        f.not_taken,
        f.quads_uniform,
        f.quads_divergent,
        f.kil_in_branch,
        f.tex_in_branch,
        f.tex_divergent,
        f.derivative_in_branch,
        f.derivative_divergent,
        f.relative_reads
    )
}

/// Opcodes the compiler-shaped programs must execute.
const SHAPED_OPCODES: &[&str] = &[
    "ife", "ine", "ifg", "ifl", "els", "eif", "kil", "tex", "ddx", "ddy", "m44", "m34", "m33", "dp3", "dp4", "nrm", "pow", "sat", "max", "sge",
    "slt", "seq", "sne",
];

/// Compiler-shaped programs (`shrec_verify::agal_shaped`), fixed seed: AGAL2/3 if/els/eif nested
/// to AGALMiniAssembler's limit with conditions every pixel agrees on and conditions that split
/// quads, kil / tex / derivatives inside branches, Starling / Away3D straight-line code with
/// register-indexed skinning. Asserts that each shape was exercised.
#[test]
fn compiler_shaped_fixed_seed() {
    if agal::gpu().is_none() {
        return;
    }
    let started = std::time::Instant::now();
    let (c, f, deepest) = shaped(fuzz_seed(), 0..200, 2);
    let line = flow_line(&f, deepest);
    common::log_uncaptured(&format!("compiler_shaped_fixed_seed: {line}; {:.0} s", started.elapsed().as_secs_f64()));
    finish("compiler_shaped_fixed_seed", &c, false);
    assert!(c.programs >= 200);
    let missing: Vec<&&str> = SHAPED_OPCODES.iter().filter(|o| !c.opcodes.contains(**o)).collect();
    assert!(missing.is_empty(), "opcodes never executed: {missing:?}");
    assert_eq!(deepest, agal_shaped::MAX_NESTING, "generated nesting");
    assert_eq!(f.max_depth, agal_shaped::MAX_NESTING, "no live lane reached the deepest nesting");
    assert!(f.taken > 100 && f.not_taken > 100, "{line}");
    assert!(f.quads_uniform > 50 && f.quads_divergent > 50, "{line}");
    assert!(f.kil_in_branch > 0, "{line}");
    assert!(f.tex_in_branch > 0 && f.tex_divergent > 0, "{line}");
    assert!(f.derivative_in_branch > 0, "{line}");
    assert!(f.relative_reads > 1000, "{line}");
}

/// Long mode of [`compiler_shaped_fixed_seed`]: `SHREC_FUZZ_PROGRAMS` programs (default 10 000)
/// from `SHREC_FUZZ_FROM` (default 0) of `SHREC_FUZZ_SEED`, on `SHREC_FUZZ_THREADS` threads.
#[test]
#[ignore]
fn long_shaped() {
    if agal::gpu().is_none() {
        return;
    }
    let programs = shrec_verify::long_run_programs(10_000);
    let (from, last) = (programs.start, programs.end - 1);
    let threads = shrec_verify::env_u64("SHREC_FUZZ_THREADS", 1);
    let seed = fuzz_seed();
    let started = std::time::Instant::now();
    let (c, f, deepest) = shaped(seed, programs, threads);
    println!(
        "long_shaped seed {seed} programs #{from}..#{}: {} programs, {} comparisons, {} mismatches ({} inconclusive lanes, {} opcodes executed, {:.0} s); {}",
        last,
        c.programs,
        c.comparisons,
        c.mismatches,
        c.inconclusive,
        c.opcodes.len(),
        started.elapsed().as_secs_f64(),
        flow_line(&f, deepest)
    );
    finish("long_shaped", &c, false);
}

/// The harness can fail: with `add` deliberately lowered as `sub`, it must report mismatches.
#[test]
fn harness_detects_mutation() {
    if agal::gpu().is_none() {
        return;
    }
    let mut rng = Rng::new(11);
    let cs = cases(&mut rng, Stage::Vertex, 16, &mut dyadic(3, 8));
    let p = program("mutated add", 2, Stage::Vertex, "add op, va0, va1\nmov v0, va2", cs, vec![]);
    set_mutation(Mutation::AgalAddAsSub);
    let mutated = run(&p);
    let fuzzed = fuzz_with_mutation(0..40);
    set_mutation(Mutation::None);
    let clean = run(&p);
    println!("mutated: {}\nfuzz with the mutation: {}\nclean: {}", mutated.summary("agal"), fuzzed.summary("agal"), clean.summary("agal"));
    if let Some(r) = fuzzed.reports.first() {
        println!("first fuzz report with the mutation:\n{r}");
    }
    assert!(mutated.mismatches > 0, "the harness missed `add` lowered as `sub`");
    assert!(fuzzed.mismatches > 0, "the fuzzer missed `add` lowered as `sub`");
    let report = &mutated.reports[0];
    assert!(report.contains("add op, va0, va1") && report.contains("reproduce:"), "report lacks disassembly or reproduction:\n{report}");
    assert_eq!(clean.mismatches, 0);
}

/// A subtler mistranslation (Ruffle's single-lane write deviation, notes §9.5): the fuzzer finds it.
#[test]
fn harness_detects_single_lane_mutation() {
    if agal::gpu().is_none() {
        return;
    }
    set_mutation(Mutation::AgalSingleLaneWriteFromX);
    let fuzzed = fuzz_with_mutation(0..40);
    set_mutation(Mutation::None);
    println!("fuzz with single-lane writes from x: {}", fuzzed.summary("agal"));
    assert!(fuzzed.mismatches > 0, "the fuzzer missed single-lane writes taking lane x");
}

/// Fuzz programs on the calling thread (the mutation switch is per thread).
fn fuzz_with_mutation(range: std::ops::Range<u64>) -> Comparison {
    let gpu = agal::gpu().expect("checked by the caller");
    let mut c = Comparison::default();
    for i in range {
        c.merge(agal::run(gpu, &agal::gen::program(fuzz_seed(), i), RunOptions::default()));
    }
    c
}

/// The AGAL corpus (`tests/corpus/agal`, or `shared/corpus/agal` beside the repository).
fn corpus_dir() -> Option<std::path::PathBuf> {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    [root.join("tests/corpus/agal"), root.join("../shared/corpus/agal"), root.join("../../shared/corpus/agal")].into_iter().find(|p| p.is_dir())
}

/// Every real program of the corpus that decodes, with random inputs (textures of the dimension
/// each sampler word declares, random slopes for derivatives).
#[test]
fn corpus_programs() {
    if agal::gpu().is_none() {
        return;
    }
    let Some(dir) = corpus_dir() else {
        println!("corpus_programs: no AGAL corpus found (tests/corpus/agal or ../shared/corpus/agal); nothing to run");
        return;
    };
    let mut files: Vec<_> = walk(&dir).into_iter().filter(|p| p.extension().is_some_and(|e| e == "agal")).collect();
    files.sort();
    let mut total = Comparison::default();
    let mut rejected = Vec::new();
    let mut rng = Rng::new(2024);
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let Ok(prog) = decode::decode(&bytes, DecodeOptions::default()) else {
            rejected.push(f.file_name().unwrap().to_string_lossy().into_owned());
            continue;
        };
        let vertex = prog.stage == Stage::Vertex;
        let limits = decode::limits(prog.version);
        let nconst = if vertex { limits.vertex_constants } else { limits.fragment_constants };
        let mut cs = cases(&mut rng, prog.stage, if vertex { 32 } else { 8 }, &mut |r: &mut Rng| r.dyadic(2, 6));
        for c in &mut cs {
            c.constants = (0..nconst).map(|_| std::array::from_fn(|_| rng.dyadic(2, 6))).collect();
            if vertex {
                // Small non-negative attributes in va0..va1 so indirect indices stay in range.
                for a in 0..2 {
                    c.attributes[a] = std::array::from_fn(|_| rng.range(0, 8) as f32);
                }
            } else {
                c.slope_x = (0..10).map(|_| std::array::from_fn(|_| *rng.pick(&[0.0, 0.125, -0.25, 0.5]))).collect();
                c.slope_y = (0..10).map(|_| std::array::from_fn(|_| *rng.pick(&[0.0, 0.0625, 0.25, -0.5]))).collect();
            }
        }
        let mut textures: Vec<Option<Texture>> = vec![None; 16];
        for t in &prog.tokens {
            if let decode::Operand2::Sampler(s) = t.src2 {
                textures[s.num as usize] = texture(&mut rng, s.dim == 1, 4);
            }
        }
        let name = f.strip_prefix(&dir).unwrap().display().to_string();
        let p = TestProgram {
            name,
            bytes,
            cases: cs,
            textures,
            reproduce: "cargo test --release --test verify_agal -- corpus_programs --nocapture".into(),
        };
        total.merge(run(&p));
    }
    println!("corpus_programs: {} files, {} rejected by the decoder: {rejected:?}", files.len(), rejected.len());
    finish("corpus_programs", &total, false);
    assert!(total.programs >= 40, "only {} corpus programs ran", total.programs);
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

/// AGAL row "ife / ine / ifg / ifl compare the first lane of each swizzled source"
/// (docs/semantics-audit.md, "Tests of the one-source rules"): the conditions of
/// `every_opcode_and_operand_mode` read broadcast swizzles (`$i0.x`, `$i1.y`), where every lane
/// is the same; here the sources are full `xyzw` registers whose lanes differ, so comparing
/// another lane, or all four (Ruffle), gives other branches.
#[test]
fn if_compares_lane_x_of_full_swizzles() {
    if agal::gpu().is_none() {
        return;
    }
    let mut total = Comparison::default();
    for op in ["ife", "ine", "ifg", "ifl"] {
        let text = format!("mov $t0, $c0\n{op} $i0, $i1\nadd $t0, $i2, $c1\nels\nsub $t0, $i2, $c1\neif\nmov $o, $t0");
        both(&mut total, &format!("{op}-xyzw"), &text, &mut few_values);
    }
    finish("if_compares_lane_x_of_full_swizzles", &total, false);
}
