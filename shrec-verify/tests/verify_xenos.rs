//! Verification by execution of the Xenos path (see `shrec::verify`): every vector, scalar, fetch
//! and control-flow op the translator accepts, every corpus container (including the snes9x 2xSaI
//! pixel shader and its `cexec_pred`, both outcomes asserted), and a fixed-seed differential fuzz
//! sample, run as container → decode → lower → HLSL → DXC SPIR-V (shrec's cache bytes) →
//! lavapipe with XenosRecomp's ABI, compared lane by lane with `shrec_verify::interp::xenos`.
//!
//! Commands:
//! - `cargo test --release --test verify_xenos`
//! - `SHREC_FUZZ_PROGRAMS=10000 cargo test --release --test verify_xenos -- --ignored long_fuzz --nocapture --test-threads=1`
//!   (`SHREC_FUZZ_FROM=K` starts at program K: a long run in parts)
//! - `SHREC_FUZZ_PROGRAMS=10000 cargo test --release --test verify_xenos -- --ignored long_shaped --nocapture`
//!   (compiler-shaped programs, `gen::shaped_program`; `SHREC_FUZZ_FROM`, `SHREC_FUZZ_SECONDS` as for long_fuzz)
//! - `SHREC_FUZZ_SEED=S SHREC_FUZZ_ONLY=I cargo test --release --test verify_xenos -- --ignored fuzz_one --nocapture`
//!   (`SHREC_FUZZ_SHAPED=1`: the compiler-shaped program I)
//!   (`SHREC_FUZZ_DUMP=FILE` also writes the program's container to FILE)

use shrec_testkit as common;

use shrec::formats::xenos::error::XenosError;
use shrec::formats::xenos::ucode::{CF_NAMES, SCALAR_OPS, VECTOR_OPS};
use shrec::formats::ShaderError;
use shrec_verify::mutation::{set_mutation, Mutation};
use shrec_verify::xenos::{self, asm, asm::Alu, asm::Src, container, gen, Case, Extra, TestProgram};
use shrec_verify::{vk, Comparison, Rng};
use std::collections::BTreeMap;

fn gpu() -> Option<&'static vk::Gpu> {
    xenos::gpu_or_skip()
}

fn finish(what: &str, c: &Comparison, must_execute: &[String], min_comparisons: u64) {
    for r in &c.reports {
        println!("{r}");
    }
    common::log_uncaptured(&format!(
        "verify xenos: {} programs, {} comparisons, {} mismatches, {} inconclusive, {} ops executed ({what}; worst toleranced lane {:.1} ulp, {:.1}% of its bound)",
        c.programs,
        c.comparisons,
        c.mismatches,
        c.inconclusive,
        c.opcodes.len(),
        c.worst_ulps,
        c.worst_fraction * 100.0
    ));
    assert_eq!(c.mismatches, 0, "{what}: mismatches (reports above)");
    assert!(c.comparisons >= min_comparisons, "{what}: only {} comparisons", c.comparisons);
    let missing: Vec<&String> = must_execute.iter().filter(|o| !c.opcodes.contains(*o)).collect();
    assert!(missing.is_empty(), "{what}: never executed: {missing:?}");
}

/// Every vector op, every scalar op (41 does not exist).
fn all_alu_ops() -> Vec<String> {
    let v = VECTOR_OPS.iter().map(|o| o.0.to_string());
    let s = SCALAR_OPS.iter().enumerate().filter(|(i, _)| *i != 41).map(|(_, o)| o.0.to_string());
    v.chain(s).collect()
}

/// A one-ALU-instruction program: `vop` → r1, `sop` → r2, sources r0 (input), c0 / c1, then both
/// exported (vertex: o0 = r1, o1 = r2, oPos = r0; pixel: oC0 = r1, oC1 = r2).
fn single_op(pixel: bool, vop: u32, sop: u32, src_swizzle: [u8; 4]) -> Vec<u8> {
    let mut a = Alu { vop, sop, vdst: 1, sdst: 2, vmask: 0xF, smask: 0xF, ..Default::default() };
    a.src = [Src::r(0), Src::c(1), Src::r(0).swz(src_swizzle)];
    if (42..=47).contains(&sop) {
        a.src[2] = Src::c(2).swz(src_swizzle);
    }
    clause_program(pixel, vec![(a.encode(), false)])
}

/// Inputs for the per-op tests: random dyadic values and the special values (±0, ±1, ±inf, NaN,
/// FLT_MAX) in both operands, small positive values for the rcp/rsq/log/sqrt family.
fn op_cases(rng: &mut Rng, bytes: &[u8], n: usize) -> Vec<Case> {
    let specials = [0.0, -0.0, 1.0, -1.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::MAX, 0.5, -2.0, 4.0];
    let mut cases = xenos::random_cases(rng, bytes, n, false);
    for (k, c) in cases.iter_mut().enumerate() {
        let pick = |rng: &mut Rng| -> f32 {
            match rng.below(4) {
                0 => *rng.pick(&specials),
                1 => rng.below(64) as f32 / 16.0 + 1.0 / 32.0,
                _ => rng.dyadic(2, 4),
            }
        };
        let v: [f32; 4] = std::array::from_fn(|_| pick(rng));
        let w: [f32; 4] = if k % 3 == 0 { v } else { std::array::from_fn(|_| pick(rng)) };
        c.c[1] = w;
        c.c[2] = std::array::from_fn(|_| pick(rng));
        for x in c.inputs.values_mut() {
            *x = v;
        }
        for x in c.base.values_mut() {
            // Interpolated inputs must be finite and small (the rasterizer's weights): the
            // specials reach the op through c1 / c2 and through the scalar operand swizzles.
            *x = v.map(|f| if f.is_finite() && f.abs() <= 8.0 { f } else { 0.75 });
        }
        for m in [&mut c.slope_x, &mut c.slope_y] {
            for x in m.values_mut() {
                *x = [0.0; 4];
            }
        }
    }
    cases
}

fn run_all(gpu: &vk::Gpu, programs: impl Iterator<Item = TestProgram>) -> (Comparison, Extra) {
    let mut c = Comparison::default();
    let mut e = Extra::default();
    for p in programs {
        let t0 = std::time::Instant::now();
        let (pc, pe) = xenos::run(gpu, &p);
        if std::env::var("SHREC_XENOS_TIMING").is_ok() {
            println!("TIME {:.2}s {} ({} bytes)", t0.elapsed().as_secs_f64(), p.name, p.bytes.len());
        }
        // SHREC_XENOS_SEEDS=DIR keeps every program's container there (fuzz seeds for
        // `fuzz/run.sh translate_xenos`, whose grown corpus is fuzz/corpus/translate_xenos)
        if let Ok(dir) = std::env::var("SHREC_XENOS_SEEDS") {
            let name: String = p.name.chars().map(|ch| if ch.is_ascii_alphanumeric() { ch } else { '_' }).collect();
            std::fs::write(std::path::Path::new(&dir).join(format!("{name}.bin")), &p.bytes).expect("SHREC_XENOS_SEEDS is a writable folder");
        }
        if pc.mismatches > 0 {
            println!("MISMATCH {}: {} of {} lanes", p.name, pc.mismatches, pc.comparisons);
        }
        c.merge(pc);
        e.merge(pe);
    }
    (c, e)
}

#[test]
fn every_alu_op() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(4);
    let vops = gen::vector_ops(true);
    let sops = gen::scalar_ops(true);
    let mut programs = Vec::new();
    for (k, &sop) in sops.iter().enumerate() {
        let vop = vops[k % vops.len()];
        for pixel in [false, true] {
            let (vop, sop) =
                if pixel { (vop, sop) } else { (if (24..=27).contains(&vop) { 1 } else { vop }, if (35..=39).contains(&sop) { 2 } else { sop }) };
            for swz in [[0, 1, 2, 3], [3, 2, 1, 0]] {
                let bytes = single_op(pixel, vop, sop, swz);
                let cases = op_cases(&mut rng, &bytes, 16);
                programs.push(TestProgram {
                    name: format!("{} / {} ({})", VECTOR_OPS[vop as usize].0, SCALAR_OPS[sop as usize].0, if pixel { "pixel" } else { "vertex" }),
                    bytes,
                    cases,
                    textures: BTreeMap::new(),
                    reproduce: "cargo test --release --test verify_xenos every_alu_op".into(),
                });
            }
        }
    }
    // cube on directions from constants (so ±inf / NaN reach pixel shaders too), with ties
    // between the components' magnitudes, ±0, ±inf, NaN and FLT_MAX
    for pixel in [false, true] {
        let bytes = cube_op_program(pixel);
        let cases = cube_cases(&mut rng, &bytes, 48);
        programs.push(TestProgram {
            name: format!("cube on c1 ({})", if pixel { "pixel" } else { "vertex" }),
            bytes,
            cases,
            textures: BTreeMap::new(),
            reproduce: "cargo test --release --test verify_xenos every_alu_op".into(),
        });
    }
    let (c, _) = run_all(gpu, programs.into_iter());
    finish("every_alu_op", &c, &all_alu_ops(), 20_000);
}

fn export_alu(reg: u32, from: u32) -> [u32; 3] {
    let mut e = Alu { vop: 0, sop: 50, vdst: reg, vmask: 0xF, export: true, ..Default::default() };
    e.src = [Src::r(from), Src::c(200), Src::r(0)];
    e.encode()
}

/// A container of one exec clause (`fetch` flags per slot) then the exports of r1 (and r2):
/// vertex o0 = r1, o1 = r2, oPos = r0 (r0 from vfetch, first slot); pixel oC0 = r1, oC1 = r2.
fn clause_program(pixel: bool, body: Vec<([u32; 3], bool)>) -> Vec<u8> {
    clause_program_with_vfetch(pixel, asm::vfetch(0, [0, 1, 2, 3], false, false), body)
}

/// `clause_program` with `vfetch` as a vertex shader's first slot (it must write r0).
fn clause_program_with_vfetch(pixel: bool, vfetch: [u32; 3], body: Vec<([u32; 3], bool)>) -> Vec<u8> {
    let mut slots = Vec::new();
    let mut fetch = Vec::new();
    if !pixel {
        slots.push(vfetch);
        fetch.push(true);
    }
    for (s, f) in body {
        slots.push(s);
        fetch.push(f);
    }
    let ex = if pixel { vec![export_alu(0, 1), export_alu(1, 2)] } else { vec![export_alu(62, 0), export_alu(0, 1), export_alu(1, 2)] };
    // one exec per six slots (an exec's count field is 3 bits; six is what the compilers emit)
    let clauses: Vec<&[bool]> = fetch.chunks(6).collect();
    let base = asm::cf_triples(clauses.len() + 1);
    let mut cf = Vec::new();
    for (k, flags) in clauses.iter().enumerate() {
        cf.push(asm::exec(asm::EXEC, base + 6 * k as u32, flags, 0, false));
    }
    cf.push(asm::exec(asm::EXEC_END, base + slots.len() as u32, &vec![false; ex.len()], 0, false));
    slots.extend(ex);
    two_output_container(pixel, base, &asm::microcode(&cf, &slots), &[])
}

/// `cube r1, c1.zzxy, c1.yxzz` (the compilers' operand pattern) and `mov r2, c1` beside it.
fn cube_op_program(pixel: bool) -> Vec<u8> {
    let mut a = Alu { vop: 18, sop: 50, vdst: 1, vmask: 0xF, ..Default::default() };
    a.src = [Src::c(1).swz([2, 2, 0, 1]), Src::c(1).swz([1, 0, 2, 2]), Src::r(0)];
    let mut m = Alu { vop: 2, sop: 50, vdst: 2, vmask: 0xF, ..Default::default() };
    m.src = [Src::c(1), Src::c(1), Src::r(0)];
    clause_program(pixel, vec![(a.encode(), false), (m.encode(), false)])
}

/// Directions for `cube`: components from a small set (so magnitudes tie often: all three,
/// two of them, ±0 against ±0) with ±inf, NaN and FLT_MAX, or random dyadic values.
fn cube_cases(rng: &mut Rng, bytes: &[u8], n: usize) -> Vec<Case> {
    let set = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::MAX, -f32::MAX];
    let mut cases = xenos::random_cases(rng, bytes, n, false);
    for (k, c) in cases.iter_mut().enumerate() {
        let d: [f32; 4] = match k % 4 {
            // all three magnitudes equal, signs random
            0 => {
                let m = *rng.pick(&[0.0f32, 1.0, 2.0, f32::INFINITY]);
                std::array::from_fn(|_| if rng.chance(50) { -m } else { m })
            }
            1 | 2 => std::array::from_fn(|_| *rng.pick(&set)),
            _ => std::array::from_fn(|_| rng.dyadic(2, 4)),
        };
        c.c[1] = d;
    }
    cases
}

/// Directions aimed at texel centres of a `size` cube map (face f, texel i, j: s, t = 1 +
/// (i + 0.5) / size, the direction from the face table scaled by ±2^k), and random directions.
fn cube_sample_cases(rng: &mut Rng, bytes: &[u8], n: usize, size: u32) -> Vec<Case> {
    let mut cases = xenos::random_cases(rng, bytes, n, false);
    for (k, c) in cases.iter_mut().enumerate() {
        let d: [f32; 4] = if k % 4 == 3 {
            std::array::from_fn(|_| rng.dyadic(2, 4))
        } else {
            let f = rng.below(6) as usize;
            let coord = |rng: &mut Rng| 2.0 * (rng.below(size as u64) as f32 + 0.5) / size as f32 - 1.0;
            let (sc, tc) = (coord(rng), coord(rng));
            let v = match f {
                0 => [1.0, -tc, -sc],
                1 => [-1.0, -tc, sc],
                2 => [sc, 1.0, tc],
                3 => [sc, -1.0, -tc],
                4 => [sc, -tc, 1.0],
                _ => [-sc, -tc, -1.0],
            };
            let scale = [0.25f32, 0.5, 1.0, 2.0, 8.0][rng.below(5) as usize];
            [v[0] * scale, v[1] * scale, v[2] * scale, 0.0]
        };
        c.c[1] = d;
        c.c[3] = [1.5; 4];
    }
    cases
}

/// The compilers' cube-map sequence: `cube r1, c1.zzxy, c1.yxzz`; `rcp r2.z, |r1.z|`;
/// `mad r1.xy, r1, r2.zzzz, c3` (c3 = 1.5); `tfetchCube r1, r1.yxw, tf0`; and r2 = c1.
fn cube_sample_program(pixel: bool) -> Vec<u8> {
    let mut a = Alu { vop: 18, sop: 50, vdst: 1, vmask: 0xF, ..Default::default() };
    a.src = [Src::c(1).swz([2, 2, 0, 1]), Src::c(1).swz([1, 0, 2, 2]), Src::r(0)];
    let mut r = Alu { vop: 0, sop: 19, sdst: 2, smask: 0x4, ..Default::default() };
    let mut z = Src::r(1).swz([2, 2, 2, 2]);
    z.abs = true;
    r.src = [Src::r(0), Src::r(0), z];
    let mut m = Alu { vop: 11, sop: 50, vdst: 1, vmask: 0x3, ..Default::default() };
    m.src = [Src::r(1), Src::r(2).swz([2, 2, 2, 2]), Src::c(3)];
    let f = asm::tfetch(1, 1, [1, 0, 3], 0, 3, [0, 1, 2, 3], false, false);
    let mut c = Alu { vop: 2, sop: 50, vdst: 2, vmask: 0xF, ..Default::default() };
    c.src = [Src::c(1), Src::c(1), Src::r(0)];
    clause_program(pixel, vec![(a.encode(), false), (r.encode(), false), (m.encode(), false), (f, true), (c.encode(), false)])
}

/// `cube` → rcp → mad 1.5 → `tfetchCube` on a cube map whose texels all differ, vertex and
/// pixel shaders: face choice, face coordinates and the heap's cube element.
#[test]
fn cube_sample() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(18);
    let mut programs = Vec::new();
    for pixel in [false, true] {
        let bytes = cube_sample_program(pixel);
        let cases = cube_sample_cases(&mut rng, &bytes, 48, 4);
        let mut textures = BTreeMap::new();
        textures.insert(0, xenos::random_cube_texture(&mut rng, 4));
        programs.push(TestProgram {
            name: format!("cube sample ({})", if pixel { "pixel" } else { "vertex" }),
            bytes,
            cases,
            textures,
            reproduce: "cargo test --release --test verify_xenos cube_sample".into(),
        });
    }
    let (c, _) = run_all(gpu, programs.into_iter());
    finish("cube_sample", &c, &["cube".to_string(), "tfetchCube".to_string()], 600);
}

/// `getWeights{1D,2D,3D,Cube} r1, r3.xyz, tf0` with texel `offsets` (in half texels),
/// unnormalised coordinates or not and the instruction's MipFilter (0 point, 1 linear, 2
/// BASEMAP, 3 keep the fetch constant's), after `mov r3, c1`; `mov r2, c1` beside it.
fn weights_program(pixel: bool, dim: u32, offsets: [i32; 3], denorm: bool, dst_swizzle: [u8; 4], mip_filter: u32) -> Vec<u8> {
    let mut f = asm::tfetch(1, 3, [0, 1, 2], 0, dim, dst_swizzle, false, false);
    f[0] = (f[0] & !0x1F) | 19 | (denorm as u32) << 25;
    f[1] = (f[1] & !(3 << 16)) | mip_filter << 16;
    for (k, lo) in [16, 21, 26].into_iter().enumerate() {
        f[2] |= (offsets[k] as u32 & 0x1F) << lo;
    }
    one_fetch_program(pixel, f)
}

/// `mov r3, c1`; the fetch `f` (reading r3, writing r1); `mov r2, c1`.
fn one_fetch_program(pixel: bool, f: [u32; 3]) -> Vec<u8> {
    let copy = |dst: u32| {
        let mut a = Alu { vop: 2, sop: 50, vdst: dst, vmask: 0xF, ..Default::default() };
        a.src = [Src::c(1), Src::c(1), Src::r(0)];
        a.encode()
    };
    clause_program(pixel, vec![(copy(3), false), (f, true), (copy(2), false)])
}

/// Coordinates for getWeights: normalised ones on a 1/64 grid (texel centres, edges and
/// between), unnormalised ones on a 1/16 grid, a few random values and the specials (NaN gives
/// 0; ±inf NaN).
fn weights_cases(rng: &mut Rng, bytes: &[u8], n: usize, denorm: bool) -> Vec<Case> {
    let specials = [f32::NAN, 0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, 1.0, -1.0];
    let mut cases = xenos::random_cases(rng, bytes, n, false);
    for (k, c) in cases.iter_mut().enumerate() {
        c.c[1] = std::array::from_fn(|_| match (k % 8, rng.below(8)) {
            (7, _) => *rng.pick(&specials),
            (_, 0) => xenos::random_value(rng),
            _ if denorm => rng.range(-48, 160) as f32 / 16.0,
            _ => rng.range(-128, 192) as f32 / 64.0,
        });
    }
    cases
}

/// getWeights: `frac(coord × size + offset − 0.5)` per filtered axis (1D x, 2D and cube x y, 3D
/// x y z), 0 for NaN and for the other axes; texture sizes 4 and 5, texel offsets, unnormalised
/// coordinates, vertex and pixel shaders; 3D also compiled for DXIL; W (the mip lerp factor) 0
/// with MipFilter=point / BASEMAP, rejected with linear / keep.
#[test]
fn get_weights() {
    // The GPU first: DXC loaded before lavapipe makes lavapipe's LLVM crash (seen here).
    let Some(gpu) = gpu() else { return };
    let lib = &gpu.dxc;
    for pixel in [false, true] {
        let bytes = weights_program(pixel, 2, [1, -1, 3], false, [0, 1, 2, 5], 0);
        let t = shrec::formats::xenos::translate(&bytes).unwrap_or_else(|e| panic!("getWeights3D: {e}"));
        let hlsl = shrec::hlsl::write(&t.module);
        assert!(hlsl.contains("shrec_tex_size(g_Texture3DDescriptorHeap["), "getWeights3D reads the 3D heap's size\n{hlsl}");
        // `asm::tfetch` leaves every filter field 0: overrides the translation says it ignores
        assert!(hlsl.contains("fetch filter overrides MagFilter=point, MinFilter=point, MipFilter=point, AnisoFilter=disabled, VolMagFilter=point, VolMinFilter=point: not applied"), "{hlsl}");
        let stage = if pixel { shrec::formats::Stage::Pixel } else { shrec::formats::Stage::Vertex };
        for target in [shrec::dxc::Target::Dxil, shrec::dxc::Target::Spirv] {
            shrec::dxc::compile_with_spec_constants(lib, &hlsl, stage, target, t.spec_constants_mask)
                .unwrap_or_else(|e| panic!("getWeights3D {target:?}: {e}\n{hlsl}"));
        }
        // W with a linear mip filter or the fetch constant's ("keep") needs the LOD or the sampler
        for mip in [1, 3] {
            let w = shrec::formats::xenos::translate(&weights_program(pixel, 1, [0; 3], false, [3, 1, 7, 7], mip))
                .map(|_| ())
                .expect_err("getWeights into .w accepted");
            assert!(w.reason().contains("getWeights") && w.reason().contains("mip lerp factor"), "{}", w.reason());
        }
    }
    let mut rng = Rng::new(19);
    let mut programs = Vec::new();
    for pixel in [false, true] {
        for (dim, name) in [(0, "1D"), (1, "2D"), (2, "3D"), (3, "Cube")] {
            for offsets in [[0, 0, 0], [1, -1, 0], [3, -4, 2]] {
                for denorm in [false, true] {
                    let size = if rng.chance(50) { 4 } else { 5 };
                    // W (the mip lerp factor) is 0 for the instruction's MipFilter=point /
                    // BASEMAP (`asm::tfetch` writes point)
                    let bytes = weights_program(pixel, dim, offsets, denorm, [0, 1, 2, 3], if denorm { 2 } else { 0 });
                    let cases = weights_cases(&mut rng, &bytes, 32, denorm);
                    let tex = match dim {
                        2 => xenos::random_volume_texture(&mut rng, size),
                        3 => xenos::random_cube_texture(&mut rng, size),
                        _ => xenos::random_texture(&mut rng, size),
                    };
                    let what = format!("getWeights{name} offsets {offsets:?}{} size {size}", if denorm { " unnormalised" } else { "" });
                    programs.push(textured_program(what, pixel, bytes, cases, tex, "get_weights"));
                }
            }
        }
    }
    let (c, _) = run_all(gpu, programs.into_iter());
    finish("get_weights", &c, &["getWeights1D", "getWeights2D", "getWeights3D", "getWeightsCube"].map(String::from), 4000);
}

/// tfetch3D on volumes whose texels all differ ((x, y, z, random)), sizes 4 and 5, vertex and
/// pixel shaders, source swizzles xyz and zxy: coordinates a quarter texel around the centres of
/// texels −1..=size on each axis (outside: clamped).
#[test]
fn tfetch3d() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(23);
    let mut programs = Vec::new();
    for pixel in [false, true] {
        for swizzle in [[0, 1, 2], [2, 0, 1]] {
            for size in [4, 5] {
                let bytes = one_fetch_program(pixel, asm::tfetch(1, 3, swizzle, 0, 2, [0, 1, 2, 3], false, false));
                let mut cases = xenos::random_cases(&mut rng, &bytes, 48, false);
                for c in cases.iter_mut() {
                    c.c[1] =
                        std::array::from_fn(|_| (rng.range(-1, size as i64) as f32 + 0.5 + [-0.25, 0.0, 0.25][rng.below(3) as usize]) / size as f32);
                }
                let tex = xenos::random_volume_texture(&mut rng, size);
                let what = format!("tfetch3D r3.{} size {size}", swizzle.map(|c| ['x', 'y', 'z'][c as usize]).iter().collect::<String>());
                programs.push(textured_program(what, pixel, bytes, cases, tex, "tfetch3d"));
            }
        }
    }
    let (c, _) = run_all(gpu, programs.into_iter());
    finish("tfetch3d", &c, &["tfetch3D".to_string()], 2000);
}

/// A test program with one texture on tf0, named `what (vertex|pixel)`, reproduced by `cargo
/// test … verify_xenos FILTER`.
fn textured_program(
    what: String,
    pixel: bool,
    bytes: Vec<u8>,
    cases: Vec<Case>,
    tex: shrec_verify::interp::xenos::Texture,
    filter: &str,
) -> TestProgram {
    TestProgram {
        name: format!("{what} ({})", if pixel { "pixel" } else { "vertex" }),
        bytes,
        cases,
        textures: BTreeMap::from([(0, tex)]),
        reproduce: format!("cargo test --release --test verify_xenos {filter}"),
    }
}

/// `tfetch{1D,2D,3D,Cube} r1, r3.xyz, tf0` with texel `offsets` (x, y, z in half texels) and
/// unnormalised coordinates or not, after `mov r3, c1`; `mov r2, c1` beside it.
fn offset_fetch_program(pixel: bool, dim: u32, offsets: [i32; 3], denorm: bool) -> Vec<u8> {
    let mut f = asm::tfetch(1, 3, [0, 1, 2], 0, dim, [0, 1, 2, 3], false, false);
    f[0] |= (denorm as u32) << 25;
    f[2] |= (offsets[0] as u32 & 0x1F) << 16 | (offsets[1] as u32 & 0x1F) << 21 | (offsets[2] as u32 & 0x1F) << 26;
    one_fetch_program(pixel, f)
}

/// tfetch1D / tfetch2D with texel offsets and unnormalised coordinates on textures whose texels
/// all differ (column, row, random), sizes 4 and 5 (1D: 5, an odd height has a centre row),
/// vertex and pixel shaders: coordinates a quarter texel around texel centres, including
/// texels outside the texture (clamped). tfetch3D / tfetchCube: the next two tests.
#[test]
fn tfetch_offsets_and_unnormalised_coordinates() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(16);
    let mut programs = Vec::new();
    for pixel in [false, true] {
        for (dim, name) in [(0, "1D"), (1, "2D")] {
            for offsets in [[0, 0], [1, -1], [3, -4], [-2, 5]] {
                for denorm in [false, true] {
                    if offsets == [0, 0] && !denorm {
                        continue;
                    }
                    let size = if dim == 0 || rng.chance(50) { 5 } else { 4 };
                    let bytes = offset_fetch_program(pixel, dim, [offsets[0], offsets[1], 0], denorm);
                    let mut cases = xenos::random_cases(&mut rng, &bytes, 32, false);
                    for c in cases.iter_mut() {
                        c.c[1] = std::array::from_fn(|k| {
                            // a quarter texel around the centre of texel -1..=size, before the offset
                            let t = rng.range(-1, size as i64) as f32 + 0.5 + [-0.25, 0.0, 0.25][rng.below(3) as usize];
                            let t = t - offsets[k.min(1)] as f32 / 2.0;
                            if denorm {
                                t
                            } else {
                                t / size as f32
                            }
                        });
                    }
                    let texels = (0..size * size).map(|k| [(k % size) as f32, (k / size) as f32, rng.dyadic(0, 3), 1.0]).collect();
                    let tex = shrec_verify::interp::xenos::Texture { size, shape: shrec_verify::TextureShape::Flat, texels, mips: vec![] };
                    let what = format!("tfetch{name} offsets {offsets:?}{} size {size}", if denorm { " unnormalised" } else { "" });
                    programs.push(textured_program(what, pixel, bytes, cases, tex, "tfetch_offsets"));
                }
            }
        }
    }
    let (c, _) = run_all(gpu, programs.into_iter());
    finish("tfetch_offsets_and_unnormalised_coordinates", &c, &["tfetch1D", "tfetch2D"].map(String::from), 5000);
}

/// tfetch3D with texel offsets (x, y, z; positive and negative, whole and half texels) and
/// unnormalised coordinates on volumes of 4³ and 5³ texels that all differ ((x, y, z, random)),
/// vertex and pixel shaders: per axis a quarter texel around the centre of a texel −2..=size + 1
/// (outside the volume: clamped) after the offset, so x, y and z each pick their own texel. z is
/// normalised like x and y (XenosRecomp's 3D heap holds 3D textures only).
#[test]
fn tfetch3d_offsets_and_unnormalised_coordinates() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(25);
    let mut programs = Vec::new();
    for pixel in [false, true] {
        for offsets in [[0, 0, 0], [1, -1, 2], [3, -4, -3], [-2, 5, 1], [0, 0, -5]] {
            for denorm in [false, true] {
                if offsets == [0, 0, 0] && !denorm {
                    continue;
                }
                for size in [4, 5] {
                    let bytes = offset_fetch_program(pixel, 2, offsets, denorm);
                    let mut cases = xenos::random_cases(&mut rng, &bytes, 32, false);
                    for c in cases.iter_mut() {
                        c.c[1] = std::array::from_fn(|k| {
                            let t = rng.range(-2, size as i64 + 1) as f32 + 0.5 + [-0.25, 0.0, 0.25][rng.below(3) as usize];
                            let t = t - offsets[k.min(2)] as f32 / 2.0;
                            if denorm {
                                t
                            } else {
                                t / size as f32
                            }
                        });
                    }
                    let tex = xenos::random_volume_texture(&mut rng, size);
                    let what = format!("tfetch3D offsets {offsets:?}{} size {size}", if denorm { " unnormalised" } else { "" });
                    programs.push(textured_program(what, pixel, bytes, cases, tex, "tfetch3d_offsets"));
                }
            }
        }
    }
    let (c, _) = run_all(gpu, programs.into_iter());
    finish("tfetch3d_offsets_and_unnormalised_coordinates", &c, &["tfetch3D".to_string()], 10_000);
}

/// tfetchCube with texel offsets and unnormalised coordinates, face coordinates straight from a
/// constant (`cube_sample` covers `cube` → rcp → mad 1.5), cube maps of 4×4 and 5×5 faces whose
/// texels all differ, vertex and pixel shaders. s and t: a quarter texel around a texel centre
/// of the face after the x / y offset (normalised: 1 + texels / size; unnormalised: size +
/// texels); one case in eight moves off the face (not determined). The z offset (whole and half
/// faces, both signs) is added to the face coordinate, which lands at a quarter, half or three
/// quarters of faces −2..=7 (clamped to 0..5).
#[test]
fn tfetch_cube_offsets_and_unnormalised_coordinates() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(26);
    let mut programs = Vec::new();
    for pixel in [false, true] {
        for offsets in [[0, 0, 0], [1, -1, 0], [3, -4, 2], [-2, 5, -3], [0, 0, 1], [0, 0, -4]] {
            for denorm in [false, true] {
                if offsets == [0, 0, 0] && !denorm {
                    continue;
                }
                for size in [4, 5] {
                    let bytes = offset_fetch_program(pixel, 3, offsets, denorm);
                    let mut cases = xenos::random_cases(&mut rng, &bytes, 32, false);
                    for (n, c) in cases.iter_mut().enumerate() {
                        let st = |k: usize, rng: &mut Rng| {
                            let texel = if n % 8 == 7 { rng.range(-2, size as i64 + 2) } else { rng.below(size as u64) as i64 };
                            let t = texel as f32 + 0.5 + [-0.25, 0.0, 0.25][rng.below(3) as usize] - offsets[k] as f32 / 2.0;
                            if denorm {
                                size as f32 + t
                            } else {
                                1.0 + t / size as f32
                            }
                        };
                        let (s, t) = (st(0, &mut rng), st(1, &mut rng));
                        let face = rng.range(-2, 7) as f32 + [0.25, 0.5, 0.75][rng.below(3) as usize] - offsets[2] as f32 / 2.0;
                        c.c[1] = [s, t, face, 0.0];
                    }
                    let tex = xenos::random_cube_texture(&mut rng, size);
                    let what = format!("tfetchCube offsets {offsets:?}{} size {size}", if denorm { " unnormalised" } else { "" });
                    programs.push(textured_program(what, pixel, bytes, cases, tex, "tfetch_cube_offsets"));
                }
            }
        }
    }
    let (c, _) = run_all(gpu, programs.into_iter());
    finish("tfetch_cube_offsets_and_unnormalised_coordinates", &c, &["tfetchCube".to_string()], 10_000);
}

/// A texture of `size` (a power of two) with all its mip levels, every texel distinct:
/// (level, column, row, random) (cube maps: (level + 8 × face, column, row, random)).
fn mip_texture(rng: &mut Rng, size: u32, cube: bool) -> shrec_verify::interp::xenos::Texture {
    let faces = if cube { 6 } else { 1 };
    let level = |rng: &mut Rng, k: u32| -> Vec<[f32; 4]> {
        let side = (size >> k).max(1);
        (0..faces * side * side)
            .map(|i| [(k + 8 * (i / (side * side))) as f32, (i % side) as f32, (i / side % side) as f32, rng.dyadic(0, 3)])
            .collect()
    };
    let levels = size.trailing_zeros();
    shrec_verify::interp::xenos::Texture {
        size,
        shape: if cube { shrec_verify::TextureShape::Cube } else { shrec_verify::TextureShape::Flat },
        texels: level(rng, 0),
        mips: (1..=levels).map(|k| level(rng, k)).collect(),
    }
}

/// A volume of `size`³ texels with its full mip chain (level k: `max(size >> k, 1)` on every axis,
/// down to 1³), every texel distinct: (level + 16 × z, x, y, random).
fn mip_volume(rng: &mut Rng, size: u32) -> shrec_verify::interp::xenos::Texture {
    let level = |rng: &mut Rng, k: u32| -> Vec<[f32; 4]> {
        let side = (size >> k).max(1);
        (0..side * side * side)
            .map(|i| [(k + 16 * (i / (side * side))) as f32, (i % side) as f32, (i / side % side) as f32, rng.dyadic(0, 3)])
            .collect()
    };
    let levels = 32 - size.leading_zeros() - 1;
    shrec_verify::interp::xenos::Texture {
        size,
        shape: shrec_verify::TextureShape::Volume,
        texels: level(rng, 0),
        mips: (1..=levels).map(|k| level(rng, k)).collect(),
    }
}

/// `mov r3, c1` … `mov r6, c4`; `setTexLOD r4.x`; `setGradientsH r5.xyz`; `setGradientsV
/// r6.xyz`; `tfetch{1D,2D,Cube} r1, r3.xyz, tf0` with UseComputedLOD / UseRegisterLOD /
/// UseRegisterGradients and an instruction LOD bias (in 1/16); `mov r2, c1`.
fn register_lod_program(pixel: bool, dim: u32, comp_lod: bool, reg_lod: bool, reg_grad: bool, bias16: i32) -> Vec<u8> {
    let copy = |dst: u32, c: u32| {
        let mut a = Alu { vop: 2, sop: 50, vdst: dst, vmask: 0xF, ..Default::default() };
        a.src = [Src::c(c), Src::c(c), Src::r(0)];
        (a.encode(), false)
    };
    let set = |op: u32, src: u32| {
        let mut f = asm::tfetch(0, src, [0, 1, 2], 0, 1, [7; 4], false, false);
        f[0] = (f[0] & !0x1F) | op;
        (f, true)
    };
    let mut f = asm::tfetch(1, 3, [0, 1, 2], 0, dim, [0, 1, 2, 3], false, false);
    f[1] = (f[1] & !(3 << 28)) | (comp_lod as u32) << 28 | (reg_lod as u32) << 29;
    f[2] |= reg_grad as u32 | (bias16 as u32 & 0x7F) << 2;
    let body = vec![copy(3, 1), copy(4, 2), copy(5, 3), copy(6, 4), set(24, 4), set(25, 5), set(26, 6), (f, true), copy(2, 1)];
    clause_program(pixel, body)
}

/// setTexLOD / setGradientsH / setGradientsV and tfetch with UseRegisterLOD and
/// UseRegisterGradients on 8×8 textures with all mip levels (every texel distinct): explicit
/// LOD = register LOD + bias (vertex and pixel, 1D / 2D / cube), register gradients scaled by
/// 2^bias (1D / 2D, pixel; cube register gradients: `cube_register_gradients`). A computed LOD
/// from derivatives is run but not determined by the reference (it has no quad derivatives).
#[test]
fn register_lod_and_gradients() {
    let Some(gpu) = gpu() else { return };
    let t = shrec::formats::xenos::translate(&register_lod_program(false, 1, true, true, true, 8)).unwrap_or_else(|e| panic!("{e}"));
    let hlsl = shrec::hlsl::write(&t.module);
    assert!(hlsl.contains(".SampleGrad("), "{hlsl}");
    for target in [shrec::dxc::Target::Dxil, shrec::dxc::Target::Spirv] {
        shrec::dxc::compile_with_spec_constants(&gpu.dxc, &hlsl, shrec::formats::Stage::Vertex, target, t.spec_constants_mask)
            .unwrap_or_else(|e| panic!("vertex register gradients {target:?}: {e}\n{hlsl}"));
    }
    let mut rng = Rng::new(24);
    let mut programs = Vec::new();
    let lods = [-2.0, -0.3, 0.2, 0.7, 1.2, 1.8, 2.3, 2.9, 3.4, 5.0];
    for pixel in [false, true] {
        for (dim, name) in [(0, "1D"), (1, "2D"), (3, "Cube")] {
            // (UseComputedLOD, UseRegisterLOD, UseRegisterGradients)
            for (comp, reg_lod, reg_grad) in [(false, true, false), (true, false, true), (true, true, true), (true, true, false)] {
                // lavapipe (Mesa 22.3, LLVM 15) aborts compiling a vertex shader with explicit
                // gradients ("LLVM ERROR: Cannot emit physreg copy instruction"): register
                // gradients run in pixel shaders only (vertex: compiled by DXC, below)
                if (dim == 3 || !pixel) && reg_grad {
                    continue;
                }
                for bias16 in [0, 8, -16] {
                    let bytes = register_lod_program(pixel, dim, comp, reg_lod, reg_grad, bias16);
                    let mut cases = xenos::random_cases(&mut rng, &bytes, 24, false);
                    for c in cases.iter_mut() {
                        let centre = |rng: &mut Rng| (rng.below(8) as f32 + 0.5) / 8.0;
                        c.c[1] = if dim == 3 {
                            [1.0 + centre(&mut rng), 1.0 + centre(&mut rng), rng.below(6) as f32, 0.0]
                        } else {
                            [centre(&mut rng), centre(&mut rng), 0.0, 0.0]
                        };
                        c.c[2] = [*rng.pick(&lods), rng.dyadic(2, 3), 0.0, 0.0];
                        for g in [3, 4] {
                            let mut v = [0.0f32; 4];
                            if !rng.chance(15) {
                                let axes = if rng.chance(15) { 2 } else { 1 };
                                for _ in 0..axes {
                                    let a = rng.range(-3, 4) as i32;
                                    v[rng.below(2) as usize] = if rng.chance(50) { -1.0 } else { 1.0 } * 2f32.powi(a) / 8.0;
                                }
                            }
                            c.c[g] = v;
                        }
                    }
                    let tex = mip_texture(&mut rng, 8, dim == 3);
                    let flags = format!(
                        "{}{}{}",
                        if comp { " UseComputedLOD" } else { "" },
                        if reg_lod { " UseRegisterLOD" } else { "" },
                        if reg_grad { " UseRegisterGradients" } else { "" }
                    );
                    programs.push(textured_program(format!("tfetch{name}{flags} bias {bias16}/16"), pixel, bytes, cases, tex, "register_lod"));
                }
            }
        }
    }
    let (c, _) = run_all(gpu, programs.into_iter());
    finish(
        "register_lod_and_gradients",
        &c,
        &["setTexLOD", "setGradientsH", "setGradientsV", "tfetch1D", "tfetch2D", "tfetchCube"].map(String::from),
        5000,
    );
}

/// tfetch3D on volumes with their full mip chain (8³: levels 8, 4, 2, 1; 5³: 5, 2, 1; every texel
/// distinct): the explicit LOD of the instruction's bias alone (reaching every level) or plus the
/// register LOD (setTexLOD), vertex and pixel (`SampleLevel`), and register gradients scaled by
/// 2^bias, pixel only (`SampleGrad`; lavapipe aborts compiling a vertex shader with it, see
/// `register_lod_and_gradients`). Coordinates a quarter texel around base-level texel centres.
#[test]
fn tfetch3d_mip_levels() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(27);
    let mut programs = Vec::new();
    let lods = [-2.0, -0.3, 0.2, 0.7, 1.2, 1.8, 2.3, 2.9, 3.4, 5.0];
    for pixel in [false, true] {
        // (UseComputedLOD, UseRegisterLOD, UseRegisterGradients)
        for (comp, reg_lod, reg_grad) in [(false, false, false), (false, true, false), (true, false, true), (true, true, true)] {
            if reg_grad && !pixel {
                continue;
            }
            let biases: &[i32] = if comp || reg_lod { &[0, 8, -16] } else { &[0, 20, 36, 60, -16] };
            for &bias16 in biases {
                for size in [8, 5] {
                    let bytes = register_lod_program(pixel, 2, comp, reg_lod, reg_grad, bias16);
                    let mut cases = xenos::random_cases(&mut rng, &bytes, 24, false);
                    for c in cases.iter_mut() {
                        c.c[1] =
                            std::array::from_fn(|_| (rng.below(size as u64) as f32 + 0.5 + [-0.25, 0.0, 0.25][rng.below(3) as usize]) / size as f32);
                        c.c[2] = [*rng.pick(&lods), rng.dyadic(2, 3), 0.0, 0.0];
                        for g in [3, 4] {
                            let mut v = [0.0f32; 4];
                            if !rng.chance(15) {
                                let axes = if rng.chance(15) { 2 } else { 1 };
                                for _ in 0..axes {
                                    let a = rng.range(-3, 4) as i32;
                                    v[rng.below(3) as usize] = if rng.chance(50) { -1.0 } else { 1.0 } * 2f32.powi(a) / 8.0;
                                }
                            }
                            c.c[g] = v;
                        }
                    }
                    let tex = mip_volume(&mut rng, size);
                    let flags = format!(
                        "{}{}{}",
                        if comp { " UseComputedLOD" } else { "" },
                        if reg_lod { " UseRegisterLOD" } else { "" },
                        if reg_grad { " UseRegisterGradients" } else { "" }
                    );
                    programs.push(textured_program(
                        format!("tfetch3D{flags} bias {bias16}/16 size {size} with mips"),
                        pixel,
                        bytes,
                        cases,
                        tex,
                        "tfetch3d_mip_levels",
                    ));
                }
            }
        }
    }
    let (c, _) = run_all(gpu, programs.into_iter());
    finish("tfetch3d_mip_levels", &c, &["setTexLOD", "setGradientsH", "setGradientsV", "tfetch3D"].map(String::from), 5000);
}

/// `mad r3, r0, c1, c2` (r0: the interpolator in pixel shaders, the vertex input in vertex
/// shaders; c1, c2 from the constant buffer, so a helper invocation that loaded them wrongly
/// would show in the derivatives) or, with `from_constants` false, `add r3, r0, -r0.wzyx`;
/// `getGradients r1, r3.<swizzle>`; `mov r2, r3`.
fn gradients_program(pixel: bool, src_swizzle: [u8; 3], from_constants: bool) -> Vec<u8> {
    let source = if from_constants {
        let mut mad = Alu { vop: 11, sop: 50, vdst: 3, vmask: 0xF, ..Default::default() };
        mad.src = [Src::r(0), Src::c(1), Src::c(2)];
        mad
    } else {
        let mut add = Alu { vop: 0, sop: 50, vdst: 3, vmask: 0xF, ..Default::default() };
        add.src = [Src::r(0), Src::r(0).swz([3, 2, 1, 0]).neg(), Src::r(0)];
        add
    };
    let mut f = asm::tfetch(1, 3, src_swizzle, 0, 1, [0, 1, 2, 3], false, false);
    f[0] = (f[0] & !0x1F) | 18;
    let mut copy = Alu { vop: 2, sop: 50, vdst: 2, vmask: 0xF, ..Default::default() };
    copy.src = [Src::r(3), Src::r(3), Src::r(0)];
    clause_program(pixel, vec![(source.encode(), false), (f, true), (copy.encode(), false)])
}

/// getGradients: (ddx(s.x), ddy(s.x), ddx(s.y), ddy(s.y)) of a value that is linear across the
/// quad (an interpolator times and plus constants, or lanes of it added), pixel shaders; 0 in
/// vertex shaders. The reference takes the derivatives from the quad's four runs
/// (`quad_gradients`).
#[test]
fn get_gradients() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(18);
    let mut programs = Vec::new();
    for pixel in [false, true] {
        for from_constants in [true, false] {
            for swizzle in [[0, 1, 2], [2, 3, 0], [1, 1, 3]] {
                let bytes = gradients_program(pixel, swizzle, from_constants);
                let cases = xenos::random_cases(&mut rng, &bytes, 32, true);
                programs.push(TestProgram {
                    name: format!(
                        "getGradients r3.{} of {} ({})",
                        swizzle.map(|c| ['x', 'y', 'z', 'w'][c as usize]).iter().collect::<String>(),
                        if from_constants { "r0 × c1 + c2" } else { "r0 − r0.wzyx" },
                        if pixel { "pixel" } else { "vertex" }
                    ),
                    bytes,
                    cases,
                    textures: BTreeMap::new(),
                    reproduce: "cargo test --release --test verify_xenos get_gradients".into(),
                });
            }
        }
    }
    let (c, _) = run_all(gpu, programs.into_iter());
    finish("get_gradients", &c, &["getGradients".to_string()], 4000);
}

/// `mad r3, r0, c1, c2`; `getCompTexLOD{1D,2D,3D,Cube} r1, r3.<swizzle>, tf0` (unnormalised
/// coordinates or not); `mov r2, r3`.
fn comp_tex_lod_program(pixel: bool, dim: u32, src_swizzle: [u8; 3], denorm: bool) -> Vec<u8> {
    let mut f = asm::tfetch(1, 3, src_swizzle, 0, dim, [0, 1, 2, 3], false, false);
    f[0] = (f[0] & !0x1F) | 17 | (denorm as u32) << 25;
    mad_fetch_program(pixel, f)
}

/// `mad r3, r0, c1, c2`; the fetch `f` (reading r3, writing r1); `mov r2, r3`.
fn mad_fetch_program(pixel: bool, f: [u32; 3]) -> Vec<u8> {
    let mut mad = Alu { vop: 11, sop: 50, vdst: 3, vmask: 0xF, ..Default::default() };
    mad.src = [Src::r(0), Src::c(1), Src::c(2)];
    let mut copy = Alu { vop: 2, sop: 50, vdst: 2, vmask: 0xF, ..Default::default() };
    copy.src = [Src::r(3), Src::r(3), Src::r(0)];
    clause_program(pixel, vec![(mad.encode(), false), (f, true), (copy.encode(), false)])
}

/// getCompTexLOD: log2 of the larger screen-direction derivative length in base-level texels,
/// unclamped (negative and beyond the last level), in x; y, z, w = 0. Pixel shaders, 1D / 2D /
/// 3D, textures of 4 and 8 texels with and without mips, normalised and unnormalised
/// coordinates, derivatives from an interpolator times constants (powers of two, 0, 1.5, 3).
/// The reference takes the derivatives from the quad (`quad_gradients`). Cube maps:
/// `comp_tex_lod_cube`; vertex shaders: `comp_tex_lod_without_derivatives`.
#[test]
fn comp_tex_lod() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(17);
    let mut programs = Vec::new();
    let scales = [0.0, 0.5, -0.5, 1.0, 2.0, -4.0, 8.0, 1.5, 3.0, 0.25, 64.0];
    for (dim, name) in [(0, "1D"), (1, "2D"), (2, "3D")] {
        for denorm in [false, true] {
            for swizzle in [[0, 1, 2], [2, 0, 1]] {
                for (size, mips) in [(8, true), (4, false)] {
                    let bytes = comp_tex_lod_program(true, dim, swizzle, denorm);
                    let mut cases = xenos::random_cases(&mut rng, &bytes, 24, true);
                    for c in cases.iter_mut() {
                        c.c[1] = std::array::from_fn(|_| *rng.pick(&scales));
                        c.c[2] = std::array::from_fn(|_| rng.dyadic(1, 4));
                    }
                    let tex = match (dim, mips) {
                        (2, true) => mip_volume(&mut rng, size),
                        (2, false) => xenos::random_volume_texture(&mut rng, size),
                        (_, true) => mip_texture(&mut rng, size, false),
                        _ => xenos::random_texture(&mut rng, size),
                    };
                    let what = format!(
                        "getCompTexLOD{name} r3.{}{} size {size}{}",
                        swizzle.map(|c| ['x', 'y', 'z'][c as usize]).iter().collect::<String>(),
                        if denorm { " unnormalised" } else { "" },
                        if mips { " with mips" } else { "" }
                    );
                    programs.push(textured_program(what, true, bytes, cases, tex, "comp_tex_lod"));
                }
            }
        }
    }
    let (c, _) = run_all(gpu, programs.into_iter());
    finish("comp_tex_lod", &c, &["getCompTexLOD1D", "getCompTexLOD2D", "getCompTexLOD3D"].map(String::from), 2000);
}

/// A cube-map case of `register_lod_program`: c1 = face coordinates (s, t) at texel centres of
/// the 8×8 base level (1 + (i + 0.5) / 8), sometimes on the face's edge (1 or 2: the rebuilt
/// direction has two major axes), and the face, sometimes outside 0-5 or not integral (clamped,
/// truncated); c2.x = the register LOD; c3, c4 = setGradientsH / V, the cube-space direction's
/// derivatives: mostly one non-zero component off the face's axis (±2^k / 8 or ±3 · 2^k / 8),
/// sometimes none, two of them, or one along the face's axis as well (the reference leaves
/// those undetermined).
fn cube_gradient_case(rng: &mut Rng, c: &mut Case, lods: &[f32]) {
    let coord = |rng: &mut Rng| if rng.chance(5) { *rng.pick(&[1.0f32, 2.0]) } else { 1.0 + (rng.below(8) as f32 + 0.5) / 8.0 };
    let face = if rng.chance(10) { *rng.pick(&[-1.0f32, 2.5, 5.75, 7.0]) } else { rng.below(6) as f32 };
    c.c[1] = [coord(rng), coord(rng), face, 0.0];
    c.c[2] = [*rng.pick(lods), rng.dyadic(2, 3), 0.0, 0.0];
    let major = face.clamp(0.0, 5.0) as usize / 2;
    let component = |rng: &mut Rng| {
        let sign = if rng.chance(50) { -1.0 } else { 1.0 };
        sign * if rng.chance(30) { 3.0 } else { 1.0 } * 2f32.powi(rng.range(-2, 5) as i32) / 8.0
    };
    for g in [3, 4] {
        let mut v = [0.0f32; 4];
        let minor = (major + 1 + rng.below(2) as usize) % 3;
        match rng.below(20) {
            0 | 1 => {}
            2..=4 => {
                v[(major + 1) % 3] = component(rng);
                v[(major + 2) % 3] = component(rng);
            }
            5 | 6 => {
                v[minor] = component(rng);
                v[major] = component(rng);
            }
            _ => v[minor] = component(rng),
        }
        c.c[g] = v;
    }
}

/// tfetchCube with UseComputedLOD and UseRegisterGradients (register gradients in cube space,
/// Xenia: the TextureCube's explicit gradients, scaled by 2^bias) on 8×8 cube maps with all
/// mip levels, every texel distinct, with and without UseRegisterLOD, LOD biases 0, 1/2 and −1:
/// the level follows the gradients' components off the face's axis (half of one in face
/// texels; `interp::level`). Pixel shaders (lavapipe aborts compiling a vertex shader with
/// explicit gradients, see `register_lod_and_gradients`); the vertex form is compiled by DXC
/// for DXIL and SPIR-V.
#[test]
fn cube_register_gradients() {
    let Some(gpu) = gpu() else { return };
    let t = shrec::formats::xenos::translate(&register_lod_program(false, 3, true, true, true, 8)).unwrap_or_else(|e| panic!("{e}"));
    let hlsl = shrec::hlsl::write(&t.module);
    assert!(hlsl.contains(".SampleGrad(") && hlsl.contains("g_TextureCubeDescriptorHeap["), "{hlsl}");
    for target in [shrec::dxc::Target::Dxil, shrec::dxc::Target::Spirv] {
        shrec::dxc::compile_with_spec_constants(&gpu.dxc, &hlsl, shrec::formats::Stage::Vertex, target, t.spec_constants_mask)
            .unwrap_or_else(|e| panic!("vertex cube register gradients {target:?}: {e}\n{hlsl}"));
    }
    let mut rng = Rng::new(25);
    let mut programs = Vec::new();
    let lods = [-2.0, -0.3, 0.2, 0.7, 1.2, 1.8, 2.3, 2.9, 3.4, 5.0];
    for reg_lod in [false, true] {
        for bias16 in [0, 8, -16] {
            let bytes = register_lod_program(true, 3, true, reg_lod, true, bias16);
            let mut cases = xenos::random_cases(&mut rng, &bytes, 48, false);
            for c in cases.iter_mut() {
                cube_gradient_case(&mut rng, c, &lods);
            }
            let tex = mip_texture(&mut rng, 8, true);
            let what = format!("tfetchCube UseComputedLOD{} UseRegisterGradients bias {bias16}/16", if reg_lod { " UseRegisterLOD" } else { "" });
            programs.push(textured_program(what, true, bytes, cases, tex, "cube_register_gradients"));
        }
    }
    let (c, _) = run_all(gpu, programs.into_iter());
    finish("cube_register_gradients", &c, &["setTexLOD", "setGradientsH", "setGradientsV", "tfetchCube"].map(String::from), 3000);
}

/// A getCompTexLODCube case of `comp_tex_lod_program` (c1 = 1, c2 = 0: r3 = r0, the
/// interpolator) reading r3 through `swizzle`: face coordinates s, t on a 1/64 grid in
/// [1 + 1/16, 2 − 1/16] and a ±x or ±y face (sometimes not integral or below 0: truncated,
/// clamped); per screen direction mostly the face coordinate that moves the direction's x or y
/// component changing (t on ±x faces, s on ±y faces; ±1/64 … 1/4, 3/64, 3/32), sometimes none
/// or both, and sometimes the face changing across the quad (the reference leaves those, and
/// quads that reach a face's edge, undetermined). Not ±z faces nor a change of the direction's
/// z component: lavapipe's LOD query on a cube map (Mesa 22.3.6) does not follow Vulkan's
/// cube-map rule there (README).
fn cube_lod_case(rng: &mut Rng, c: &mut Case, swizzle: [u8; 3]) {
    let steps = [1.0 / 64.0, 1.0 / 32.0, 3.0 / 64.0, 1.0 / 16.0, 3.0 / 32.0, 1.0 / 8.0, 1.0 / 4.0];
    let step = |rng: &mut Rng| if rng.chance(50) { -1.0 } else { 1.0 } * *rng.pick(&steps);
    let (mut base, mut dx, mut dy) = ([0.0f32; 4], [0.0f32; 4], [0.0f32; 4]);
    let at = |k: usize| swizzle[k] as usize;
    for k in 0..2 {
        base[at(k)] = 1.0 + rng.range(4, 61) as f32 / 64.0;
    }
    let face = if rng.chance(10) { *rng.pick(&[-1.0f32, 0.5, 1.75, 3.25]) } else { rng.below(4) as f32 };
    base[at(2)] = face;
    // the face coordinate that moves the direction's x or y component
    let moving = if face.clamp(0.0, 5.0) < 2.0 { 1 } else { 0 };
    for d in [&mut dx, &mut dy] {
        match rng.below(10) {
            0 => {}
            1 => {
                d[at(0)] = step(rng);
                d[at(1)] = step(rng);
            }
            _ => d[at(moving)] = step(rng),
        }
    }
    if rng.chance(10) {
        let d = if rng.chance(50) { &mut dx } else { &mut dy };
        d[at(2)] = *rng.pick(&[1.0f32, -1.0, 0.5]);
    }
    c.base.insert(0, base);
    c.slope_x.insert(0, dx);
    c.slope_y.insert(0, dy);
    c.c[1] = [1.0; 4];
    c.c[2] = [0.0; 4];
}

/// getCompTexLODCube: the unclamped LOD of the direction tfetchCube rebuilds from the face
/// coordinates (sc = 2s − 3, tc = 2t − 3, ±1 on the face's axis), pixel shaders, cube maps of
/// 4 (one level), 8 and 16 texels (all levels), two source swizzles. The reference determines
/// quads on one face away from its edges, where the face-coordinate derivatives are those of s
/// and t (`interp::computed_lod`); unnormalised coordinates (s, t in face texels) on 8 and 16.
#[test]
fn comp_tex_lod_cube() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(26);
    let mut programs = Vec::new();
    for swizzle in [[0, 1, 2], [2, 0, 1]] {
        for (size, mips) in [(8, true), (4, false), (16, true)] {
            let bytes = comp_tex_lod_program(true, 3, swizzle, false);
            let mut cases = xenos::random_cases(&mut rng, &bytes, 48, true);
            for c in cases.iter_mut() {
                cube_lod_case(&mut rng, c, swizzle);
            }
            let tex = if mips { mip_texture(&mut rng, size, true) } else { xenos::random_cube_texture(&mut rng, size) };
            let what = format!(
                "getCompTexLODCube r3.{} size {size}{}",
                swizzle.map(|c| ['x', 'y', 'z'][c as usize]).iter().collect::<String>(),
                if mips { " with mips" } else { "" }
            );
            programs.push(textured_program(what, true, bytes, cases, tex, "comp_tex_lod_cube"));
        }
    }
    // unnormalised: the same quads with s and t (values and slopes) scaled to face texels by c1
    for (size, swizzle) in [(8, [0, 1, 2]), (16, [2, 0, 1])] {
        let bytes = comp_tex_lod_program(true, 3, swizzle, true);
        let mut cases = xenos::random_cases(&mut rng, &bytes, 48, true);
        for c in cases.iter_mut() {
            cube_lod_case(&mut rng, c, swizzle);
            c.c[1][swizzle[0] as usize] = size as f32;
            c.c[1][swizzle[1] as usize] = size as f32;
        }
        let tex = mip_texture(&mut rng, size, true);
        programs.push(textured_program(format!("getCompTexLODCube unnormalised size {size}"), true, bytes, cases, tex, "comp_tex_lod_cube"));
    }
    let (c, _) = run_all(gpu, programs.into_iter());
    finish("comp_tex_lod_cube", &c, &["getCompTexLODCube".to_string()], 2000);
}

/// getCompTexLOD where the fetch has no implicit derivatives — a vertex shader, no
/// UseComputedLOD, or UseRegisterGradients —: Xenia's translators store 0 (the destination's
/// 0 / 1 selects and kept lanes as usual). Vertex shaders (1D, 2D, cube, with and without
/// UseRegisterGradients) and pixel shaders (2D, cube, without UseComputedLOD or with
/// UseRegisterGradients), destinations xyzw and x1y_ (1, keep).
#[test]
fn comp_tex_lod_without_derivatives() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(27);
    let mut programs = Vec::new();
    // (pixel, dim, UseComputedLOD, UseRegisterGradients)
    let forms = [
        (false, 0, true, false),
        (false, 1, true, false),
        (false, 3, true, false),
        (false, 1, true, true),
        (false, 3, false, false),
        (true, 1, false, false),
        (true, 3, false, false),
        (true, 1, true, true),
        (true, 3, true, true),
    ];
    for (pixel, dim, comp_lod, reg_grad) in forms {
        for dst in [[0, 1, 2, 3], [0, 5, 1, 7]] {
            let mut f = asm::tfetch(1, 3, [0, 1, 2], 0, dim, dst, false, false);
            f[0] = (f[0] & !0x1F) | 17;
            f[1] = (f[1] & !(1 << 28)) | (comp_lod as u32) << 28;
            f[2] |= reg_grad as u32;
            let bytes = mad_fetch_program(pixel, f);
            let cases = xenos::random_cases(&mut rng, &bytes, 16, pixel);
            let tex = if dim == 3 { xenos::random_cube_texture(&mut rng, 4) } else { xenos::random_texture(&mut rng, 4) };
            let what = format!(
                "getCompTexLOD{}{}{} dst {dst:?}",
                ["1D", "2D", "3D", "Cube"][dim as usize],
                if comp_lod { " UseComputedLOD" } else { "" },
                if reg_grad { " UseRegisterGradients" } else { "" }
            );
            programs.push(textured_program(what, pixel, bytes, cases, tex, "comp_tex_lod_without_derivatives"));
        }
    }
    let (c, _) = run_all(gpu, programs.into_iter());
    finish("comp_tex_lod_without_derivatives", &c, &["getCompTexLOD1D", "getCompTexLOD2D", "getCompTexLODCube"].map(String::from), 1000);
}

/// A vertex program exporting oPos = r0 and oPts (export 63) = max(r0, r0) (keeps −0) on the
/// lanes of `opts_mask` (x point size, y edge flag, z kill vertex).
fn opts_program(opts_mask: u32) -> Vec<u8> {
    let export = |reg: u32, mask: u32| {
        let mut e = Alu { vop: 2, sop: 50, vdst: reg, vmask: mask, export: true, ..Default::default() };
        e.src = [Src::r(0), Src::r(0), Src::r(0)];
        e.encode()
    };
    let slots = vec![asm::vfetch(0, [0, 1, 2, 3], false, false), export(62, 0xF), export(63, opts_mask), export(0, 0xF)];
    let base = asm::cf_triples(2);
    let cf = [asm::exec(asm::EXEC, base, &[true], 0, false), asm::exec(asm::EXEC_END, base + 1, &[false; 3], 0, false)];
    let code = asm::microcode(&cf, &slots);
    container::write(&container::Spec {
        vertex: true,
        microcode: &code,
        vertex_elements: &[(base, 5, 0)],
        interpolators: &[(0, 5, 0)],
        ps_outputs: 1,
        float_defs: &[],
        int_defs: &[],
    })
}

/// oPts: the point size reaches the Vulkan PointSize built-in, the kill-vertex flag becomes
/// SV_CullDistance −1 exactly when bits 0-30 of oPts.z are set (±0 keep the vertex; 1, −1, 0.5,
/// inf, NaN kill it), the edge flag is accepted (and ignored, said in the HLSL).
#[test]
fn vertex_point_size_edge_flag_kill_vertex() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(63);
    let kill = [0.0, -0.0, 1.0, -1.0, 0.5, f32::INFINITY, f32::NAN, -3.0];
    let mut total = Comparison::default();
    for (mask, name) in [(0x7, "oPts.xyz"), (0x1, "oPts.x"), (0x4, "oPts.z"), (0x2, "oPts.y")] {
        let bytes = opts_program(mask);
        let t = shrec::formats::xenos::translate(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let hlsl = shrec::hlsl::write(&t.module);
        assert_eq!(hlsl.contains("PointSize"), mask & 1 != 0, "{name}: PointSize output\n{hlsl}");
        assert_eq!(hlsl.contains("SV_CullDistance"), mask & 4 != 0, "{name}: SV_CullDistance output\n{hlsl}");
        assert_eq!(hlsl.contains("edge flag"), mask & 2 != 0, "{name}: edge-flag comment\n{hlsl}");
        // DXIL: the cull distance is in the output signature, the point size is not (D3D12 has none)
        let lib = shrec::dxc::locate(&shrec::dxc::LocateOptions::default()).expect("DXC");
        let dxil =
            shrec::dxc::compile_with_spec_constants(&lib, &hlsl, shrec::formats::Stage::Vertex, shrec::dxc::Target::Dxil, t.spec_constants_mask)
                .unwrap_or_else(|e| panic!("{name}: {e}\n{hlsl}"));
        let has = |what: &[u8]| dxil.windows(what.len()).any(|w| w == what);
        assert!(!has(b"PSIZE"), "{name}: DXIL signature has PSIZE");
        assert_eq!(has(b"SV_CullDistance"), mask & 4 != 0, "{name}: DXIL SV_CullDistance");
        let mut cases = xenos::random_cases(&mut rng, &bytes, 32, false);
        for (k, c) in cases.iter_mut().enumerate() {
            for v in c.inputs.values_mut() {
                v[0] = 1.0 + (k % 16) as f32;
                v[2] = kill[k % kill.len()];
                v[3] = 1.0;
            }
        }
        let p = TestProgram {
            name: name.into(),
            bytes,
            cases,
            textures: BTreeMap::new(),
            reproduce: "cargo test --release --test verify_xenos vertex_point_size".into(),
        };
        let (c, _) = run_all(gpu, std::iter::once(p));
        total.merge(c);
    }
    finish("vertex_point_size_edge_flag_kill_vertex", &total, &["kill vertex (killed)".into(), "kill vertex (kept)".into()], 200);
}

/// XenosRecomp's runtime ABI at run time: the vertex epilogue `oPos.xy += g_HalfPixelOffset *
/// oPos.w` with non-zero offsets (the runtime's (1 / width, −1 / height)-like values, dyadic so
/// the product is exact), and the pixel epilogue `clip(oC0.w - g_AlphaThreshold)` behind
/// SPEC_CONSTANT_ALPHA_TEST (XenosRecomp `shader_recompiler.cpp`, offsets 264 / 272 of
/// SharedConstants in `shader_common.h`): with the bit set the threshold splits each quad's
/// pixels (alphas b + {0, 0.25, 0.5, 0.75}, thresholds at odd multiples of 1/8, so no alpha
/// equals a threshold); with it clear the same threshold discards nothing. The interpreter
/// models both from that one rule (`interp::xenos::run`, "Pixel epilogue").
#[test]
fn xenosrecomp_half_pixel_offset_and_alpha_test() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(264);
    let mut total = Comparison::default();
    // vertex: oPos = r0 = the fetched input (single_op exports it), w in {±0.25 … 4}
    let bytes = single_op(false, 0, 0, [0, 1, 2, 3]);
    let offsets = [[1.0 / 1024.0, -1.0 / 512.0], [-1.0 / 256.0, 1.0 / 128.0], [0.5, -0.5], [0.0, 0.0], [3.0 / 64.0, 0.0]];
    let mut cases = xenos::random_cases(&mut rng, &bytes, 40, false);
    for (k, c) in cases.iter_mut().enumerate() {
        c.half_pixel_offset = offsets[k % offsets.len()];
        for v in c.inputs.values_mut() {
            v[3] = *rng.pick(&[1.0, 2.0, 0.5, 4.0, 0.25, -1.0, -2.0]);
        }
    }
    let p = TestProgram {
        name: "half-pixel offset".into(),
        bytes,
        cases,
        textures: BTreeMap::new(),
        reproduce: "cargo test --release --test verify_xenos xenosrecomp_half_pixel".into(),
    };
    let (c, _) = xenos::run(gpu, &p);
    println!("half-pixel offset: {} comparisons, {} mismatches", c.comparisons, c.mismatches);
    total.merge(c);
    // pixel: oC0 = r0 + c1 (ADDv), r0.w interpolated over the quad
    let bytes = single_op(true, 0, 0, [0, 1, 2, 3]);
    let mut cases = xenos::random_cases(&mut rng, &bytes, 48, false);
    let (mut below, mut above) = (0, 0);
    for c in cases.iter_mut() {
        let b = *rng.pick(&[-0.5, -0.25, 0.0, 0.25, 0.5]);
        c.c[1][3] = 0.0;
        for v in c.base.values_mut() {
            v[3] = b;
        }
        for v in c.slope_x.values_mut() {
            v[3] = 0.25;
        }
        for v in c.slope_y.values_mut() {
            v[3] = 0.5;
        }
        c.alpha_threshold = *rng.pick(&[0.125, 0.375, 0.625, -0.125]);
        for (i, j) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)] {
            if b + 0.25 * i + 0.5 * j < c.alpha_threshold {
                below += 1
            } else {
                above += 1
            }
        }
    }
    assert!(below >= 20 && above >= 20, "the thresholds must split the pixels: {below} below, {above} above");
    let p = TestProgram {
        name: "alpha test".into(),
        bytes,
        cases,
        textures: BTreeMap::new(),
        reproduce: "cargo test --release --test verify_xenos xenosrecomp_half_pixel".into(),
    };
    for spec in [0, shrec::formats::xenos::lower::SPEC_CONSTANT_ALPHA_TEST] {
        let (c, _) = xenos::run_spec(gpu, &p, spec);
        println!(
            "alpha test, spec constants {spec}: {} comparisons, {} mismatches ({below} pixels below the threshold, {above} above)",
            c.comparisons, c.mismatches
        );
        total.merge(c);
    }
    finish("xenosrecomp_half_pixel_offset_and_alpha_test", &total, &[], 500);
}

/// vfetch's ExpAdjust (Xenia's translators: the fetched value times 2^n after the format's
/// conversion): n = −32 (the smallest), −3, 5 and 31 (the largest) on inputs that overflow to
/// ±inf or fall to denormals (undetermined: hosts may flush them), NaN and ±0; r0 (the fetch)
/// is exported. n = 0 is every other vertex test.
#[test]
fn vfetch_exp_adjust() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(32);
    let mut programs = Vec::new();
    for n in [-32i32, -3, 5, 31] {
        let mut vfetch = asm::vfetch(0, [0, 1, 2, 3], false, false);
        vfetch[1] |= (n as u32 & 0x3F) << 24;
        let copy = {
            let mut a = Alu { vop: 2, sop: 50, vdst: 1, vmask: 0xF, ..Default::default() };
            a.src = [Src::r(0), Src::r(0), Src::r(0)];
            a.encode()
        };
        let bytes = clause_program_with_vfetch(false, vfetch, vec![(copy, false)]);
        let hlsl = shrec::hlsl::write(&shrec::formats::xenos::translate(&bytes).unwrap().module);
        assert!(hlsl.contains(&format!("{:?}", 2f32.powi(n))), "ExpAdjust={n}: no scale\n{hlsl}");
        let specials = [f32::NAN, 0.0, -0.0, f32::INFINITY, 1.0e38, -3.0e-38, 1.5, f32::MIN_POSITIVE];
        let mut cases = xenos::random_cases(&mut rng, &bytes, 32, false);
        for c in cases.iter_mut() {
            for v in c.inputs.values_mut() {
                *v = std::array::from_fn(|_| if rng.chance(30) { *rng.pick(&specials) } else { xenos::random_value(&mut rng) });
            }
        }
        let reproduce = "cargo test --release --test verify_xenos vfetch_exp_adjust".to_string();
        programs.push(TestProgram { name: format!("vfetch ExpAdjust={n}"), bytes, cases, textures: Default::default(), reproduce });
    }
    let (c, _) = run_all(gpu, programs.into_iter());
    finish("vfetch_exp_adjust", &c, &["vfetch".to_string()], 400);
}

fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let dir = common::repo().join("tests/corpus/xenos");
    let files = ["bin", "psu", "vsu"].iter().flat_map(|e| common::files_with_extension(&dir, e));
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        if shrec::formats::xenos::container::check(&bytes).is_ok() {
            out.push((f.strip_prefix(common::repo()).unwrap().display().to_string(), bytes));
        }
    }
    out
}

fn corpus_program(rng: &mut Rng, name: &str, bytes: Vec<u8>) -> TestProgram {
    let pixel = bytes[3] & 1 == 0;
    let cases = xenos::random_cases(rng, &bytes, 16, pixel);
    let textures = (0..16).map(|s| (s, xenos::random_texture(rng, 8))).collect();
    TestProgram { name: name.to_string(), bytes, cases, textures, reproduce: "cargo test --release --test verify_xenos corpus".into() }
}

#[test]
fn corpus_shaders() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(7);
    let files = corpus();
    assert!(files.len() >= 20, "corpus: {} containers", files.len());
    let programs: Vec<TestProgram> = files.into_iter().map(|(n, b)| corpus_program(&mut rng, &n, b)).collect();
    let n = programs.len();
    let (c, e) = run_all(gpu, programs.into_iter());
    common::log_uncaptured(&format!("verify xenos corpus: {n} containers, {} undetermined invocations", e.undetermined));
    finish("corpus_shaders", &c, &["tfetch2D".into(), "vfetch".into()], 1_000);
}

/// snes9x-gx's 2xSaI pixel shader: its `cexec_pred` clauses must run for some pixels and be
/// skipped for others (XenosRecomp ignores the condition), matching the interpreter.
#[test]
fn snes9x_2xsai_predicated_exec() {
    let Some(gpu) = gpu() else { return };
    let path = common::repo().join("tests/corpus/xenos/LibXenonProject+snes9x-gx");
    let file =
        common::files_with_extension(&path, "bin").into_iter().find(|f| f.to_string_lossy().contains("s2xsal")).expect("s2xsal.ps in the corpus");
    let bytes = std::fs::read(&file).unwrap();
    let listing = shrec::formats::xenos::disasm(&bytes).unwrap();
    assert!(listing.contains("(p0) exec"), "the 2xSaI shader has predicated execs (cexec_pred):\n{listing}");
    let mut rng = Rng::new(11);
    let mut programs = Vec::new();
    for k in 0..4 {
        let mut p = corpus_program(&mut rng, "s2xsal.ps", bytes.clone());
        // Small textures with two colours: neighbouring texels tie and differ.
        p.textures = (0..16).map(|s| (s, xenos::random_texture(&mut rng, 2 + 2 * (k % 2)))).collect();
        for case in &mut p.cases {
            for c in case.c.iter_mut().take(8) {
                *c = std::array::from_fn(|_| rng.below(8) as f32 / 16.0);
            }
        }
        programs.push(p);
    }
    let (c, e) = run_all(gpu, programs.into_iter());
    common::log_uncaptured(&format!(
        "verify xenos s2xsal: cexec_pred taken {} times, skipped {} times, {} undetermined pixels",
        e.pred_exec.0, e.pred_exec.1, e.undetermined
    ));
    finish("snes9x_2xsai_predicated_exec", &c, &[], 500);
    assert!(e.pred_exec.0 > 0 && e.pred_exec.1 > 0, "both predicate outcomes must occur: {:?}", e.pred_exec);
}

fn fuzz_seed() -> u64 {
    shrec_verify::env_u64("SHREC_FUZZ_SEED", 1)
}

/// Stops starting new programs after `SHREC_FUZZ_SECONDS` (long runs on a shared machine); the
/// summary then counts the programs that ran.
fn out_of_time(start: std::time::Instant) -> bool {
    std::env::var("SHREC_FUZZ_SECONDS").ok().and_then(|s| s.parse::<f64>().ok()).is_some_and(|limit| start.elapsed().as_secs_f64() > limit)
}

fn fuzz(seed: u64, range: std::ops::Range<u64>, threads: u64) -> Comparison {
    let began = std::time::Instant::now();
    let len = range.end - range.start;
    let handles: Vec<_> = (0..threads)
        .map(|t| range.start + len * t / threads..range.start + len * (t + 1) / threads)
        .map(|r| {
            std::thread::spawn(move || {
                let gpu = xenos::gpu_or_skip().expect("checked by the caller");
                // Progress lines (long runs): running counts every 250 programs of this thread.
                let mut c = Comparison::default();
                let start = r.start;
                for i in r {
                    if out_of_time(began) {
                        common::log_uncaptured(&format!("time limit: stopped before #{i}"));
                        break;
                    }
                    c.merge(run_all(gpu, std::iter::once(gen::program(seed, i))).0);
                    if (i - start + 1) % 250 == 0 {
                        common::log_uncaptured(&format!(
                            "progress: thread from #{start}: {} programs, {} comparisons, {} mismatches",
                            c.programs, c.comparisons, c.mismatches
                        ));
                    }
                }
                c
            })
        })
        .collect();
    let mut c = Comparison::default();
    for h in handles {
        c.merge(h.join().unwrap());
    }
    c
}

#[test]
fn fuzz_fixed_seed() {
    if gpu().is_none() {
        return;
    }
    let c = fuzz(fuzz_seed(), 0..150, 1);
    let mut must: Vec<String> = all_alu_ops();
    for cf in [
        "exec",
        "exece",
        "cexec",
        "cexece",
        "exec_pred",
        "exece_pred",
        "exec_pred_clean",
        "exece_pred_clean",
        "loop",
        "endloop",
        "call",
        "ret",
        "jmp",
        "alloc",
        "nop",
        "vfetch_end",
    ] {
        assert!(CF_NAMES.contains(&cf));
        must.push(cf.into());
    }
    must.extend(
        [
            "vfetch",
            "tfetch2D",
            "tfetch1D",
            "tfetchCube",
            "getWeights1D",
            "getWeights2D",
            "getGradients",
            "getCompTexLOD1D",
            "getCompTexLOD2D",
            "predicated",
            "relative",
            "saturate",
            "b16+",
            "run-time loop constant",
        ]
        .map(String::from),
    );
    finish("fuzz_fixed_seed", &c, &must, 20_000);
}

/// Programs that found bugs (fixed): seed 1 #34, `maxasf r6.z, c[6+a0]` read its relative
/// constant with the a0 it was setting (translator; the hardware reads sources first); #146, a
/// vector `maxa` changed a0 before the scalar op of the same instruction read `c[7+a0]`
/// (translator and interpreter); #133 / #280, `ps` after a saturated scalar op is the unclamped
/// result (interpreter; Xenia stores ps before the clamp); #613, lavapipe folded `-x - -x` to 0
/// for x = NaN (HLSL: `precise` registers); #2276 (generator with fetch variants), a loop
/// drove `tfetch2D` coordinates to FLT_MAX, where lavapipe's texel conversion overflows to texel
/// 0 and the interpreter said the clamped last texel (interpreter: not determined beyond
/// `verify::TEXEL_COORD_LIMIT`; 32 mismatching lanes before); #6545, `rcpc r3.xyw, -r4.y` with
/// r4.y = 0 gave -inf: lavapipe compiled the prelude's `isinf(1.0 / x)` as false there (prelude:
/// `shrec_is_inf`, a bit test; 3 mismatching lanes before). Compiler-shaped seed 1 #6897
/// (`gen::shaped_program`): `sqrt r6.w, -r5.y` then `muls_prev r5.zw, -r6.w` multiplies the NaN of
/// a square root of a negative by itself, which lavapipe rewrote as −|x| (Mesa's
/// nir_opt_algebraic `~fmul(fsqrt a, fsqrt a) → fabs a`; prelude: `shrec_mul_legacy` computes
/// its product into a `precise` local; 12 mismatching lanes before). Both compare as IEEE says
/// (the interpreter left them undetermined until the HLSL forbade the rewrites). Compiler-shaped
/// #9127: `frc` of a NaN, which the Xenos defines (`x - floor(x)`: NaN) but HLSL `frac` does
/// not (llvmpipe: 0.99999994, then `trunc` gave 0; prelude: `shrec_frac` computes non-finite
/// lanes as `x - x`; 1 mismatching lane with `frac` alone).
#[test]
fn fuzz_regressions() {
    let Some(gpu) = gpu() else { return };
    let early = [(1, 34), (1, 133), (1, 146), (1, 280), (1, 613)].into_iter().map(|(s, i)| gen::recorded_program(s, i));
    let fetches = [(1, 2276), (1, 6545)].into_iter().map(|(s, i)| gen::recorded_fetch_program(s, i));
    let shaped = [(1, 6897), (1, 9127)].into_iter().map(|(s, i)| gen::shaped_program(s, i));
    let (c, _) = run_all(gpu, early.chain(fetches).chain(shaped));
    let must = ["maxasf", "relative", "tfetch2D", "rcpc", "sqrt", "muls_prev", "frc"].map(String::from);
    finish("fuzz_regressions", &c, &must, 50);
}

#[test]
#[ignore]
fn long_fuzz() {
    if gpu().is_none() {
        return;
    }
    let programs = shrec_verify::long_run_programs(10_000);
    let first = programs.start;
    let seed = fuzz_seed();
    // One thread by default: two threads driving lavapipe (Mesa 22.3) at once have crashed or
    // hung it (see README); SHREC_FUZZ_THREADS overrides.
    let threads: u64 = shrec_verify::env_u64("SHREC_FUZZ_THREADS", 1).max(1);
    let start = std::time::Instant::now();
    let c = fuzz(seed, programs, threads);
    println!(
        "long_fuzz seed {seed} from #{first}: {} programs, {} comparisons, {} mismatches, {} inconclusive in {:.0} s",
        c.programs,
        c.comparisons,
        c.mismatches,
        c.inconclusive,
        start.elapsed().as_secs_f64()
    );
    finish("long_fuzz", &c, &[], 0);
}

#[test]
#[ignore]
fn fuzz_one() {
    let Some(gpu) = gpu() else { return };
    let index: u64 = std::env::var("SHREC_FUZZ_ONLY").expect("set SHREC_FUZZ_ONLY").parse().expect("a number");
    // SHREC_FUZZ_SHAPED=1: program `index` of the compiler-shaped generator
    let p = if std::env::var_os("SHREC_FUZZ_SHAPED").is_some() { gen::shaped_program(fuzz_seed(), index) } else { gen::program(fuzz_seed(), index) };
    if let Ok(path) = std::env::var("SHREC_FUZZ_DUMP") {
        // the container, for `shrec hlsl` / `shrec disasm` (e.g. when lavapipe itself crashes)
        std::fs::write(&path, &p.bytes).unwrap();
    }
    println!("{}", shrec::formats::xenos::disasm(&p.bytes).unwrap_or_default());
    let (c, _) = xenos::run(gpu, &p);
    for r in &c.reports {
        println!("{r}");
    }
    println!("{}", c.summary("xenos"));
    assert_eq!(c.mismatches, 0);
}

/// Runs compiler-shaped programs `range` of run `seed` (`gen::shaped_program`); returns the
/// comparison, the run's extras and the deepest nesting / most loops open any program reached.
/// Totals over the compiler-shaped programs of a run.
#[derive(Default)]
struct ShapedTotals {
    /// Deepest nesting, most loops open, most CF instructions of one program.
    depth: u32,
    loops: u32,
    cf: usize,
    /// Programs without a jump, loop or call; early endloops; call sites, reused subroutines.
    linear: u64,
    early_endloops: usize,
    calls: usize,
    reused_calls: usize,
}

fn shaped(gpu: &vk::Gpu, seed: u64, range: std::ops::Range<u64>) -> (Comparison, Extra, ShapedTotals) {
    let began = std::time::Instant::now();
    let mut c = Comparison::default();
    let mut e = Extra::default();
    let mut most = ShapedTotals::default();
    for i in range {
        if out_of_time(began) {
            common::log_uncaptured(&format!("time limit: stopped before #{i}"));
            break;
        }
        let (p, stats) = gen::shaped_program_and_stats(seed, i);
        most.depth = most.depth.max(stats.depth);
        most.loops = most.loops.max(stats.loops);
        most.cf = most.cf.max(stats.cf);
        most.linear += u64::from(stats.linear);
        most.early_endloops += stats.early_endloops;
        most.calls += stats.calls;
        most.reused_calls += stats.reused_calls;
        let (mut pc, pe) = run_all(gpu, std::iter::once(p));
        // reports at once (a long run may be stopped before its end)
        for r in std::mem::take(&mut pc.reports) {
            println!("{r}");
        }
        c.merge(pc);
        e.merge(pe);
        if c.programs % 500 == 0 && std::env::var_os("SHREC_FUZZ_PROGRESS").is_some() {
            common::log_uncaptured(&format!("progress (up to #{i}): {}", c.summary("xenos")));
        }
    }
    (c, e, most)
}

/// What the compiler-shaped runs must have executed both ways: every CF form fxc emits (see
/// `gen::shaped_program`), the predicate counter ops, every way out of a loop, conditional
/// exec-ends met and not met, conditional jumps taken and not.
fn shaped_must_execute() -> Vec<String> {
    // every CF form but nop and the *_pred_clean pair (CF_NAMES 1-12)
    let mut must: Vec<String> = CF_NAMES[1..=12].iter().map(|n| n.to_string()).collect();
    must.extend(
        [
            "setp_eq_push",
            "setp_ne_push",
            "setp_gt_push",
            "setp_ge_push",
            "setp_eq",
            "setp_ne",
            "setp_gt",
            "setp_ge",
            "setp_inv",
            "setp_pop",
            "setp_rstr",
            "predicated",
            "relative",
            "b16+",
            "run-time loop constant",
            "endloop: predicated break",
            "endloop: count ran out",
            "endloop: repeat",
            "exec-end (condition met)",
            "exec-end (condition not met)",
        ]
        .map(String::from),
    );
    must.push(shrec_verify::interp::xenos::JMP_TAKEN.into());
    must.push(shrec_verify::interp::xenos::JMP_NOT_TAKEN.into());
    must
}

fn shaped_summary(what: &str, c: &Comparison, e: &Extra, most: &ShapedTotals, seconds: f64) -> String {
    format!(
        "{what}: {} programs ({} without jump / loop / call), {} comparisons, {} mismatches, {} inconclusive, {} undetermined runs; deepest nesting {}, {} loops open at most, {} CF at most, {} early endloops, {} call sites ({} reusing a subroutine); (p0) exec taken {} / skipped {}; pixel quads uniform {} / divergent {}; {seconds:.0} s",
        c.programs,
        most.linear,
        c.comparisons,
        c.mismatches,
        c.inconclusive,
        e.undetermined,
        most.depth,
        most.loops,
        most.cf,
        most.early_endloops,
        most.calls,
        most.reused_calls,
        e.pred_exec.0,
        e.pred_exec.1,
        e.quads_uniform,
        e.quads_divergent
    )
}

/// Issue 19 item 2: 200 compiler-shaped programs of a fixed seed (`gen::shaped_program`: fxc's
/// predicated execs, predicate counter stack, cexec / jmp on booleans and on p0, loops with
/// predicated and early endloops, subroutines, conditional exec-end tails; nested up to
/// `SHAPED_MAX_NEST`, four loops), vertex and pixel, 0 mismatches; every shape ran both ways.
#[test]
fn compiler_shaped_fixed_seed() {
    let Some(gpu) = gpu() else { return };
    let started = std::time::Instant::now();
    let (c, e, most) = shaped(gpu, fuzz_seed(), 0..200);
    common::log_uncaptured(&shaped_summary("compiler_shaped_fixed_seed", &c, &e, &most, started.elapsed().as_secs_f64()));
    assert!(most.depth >= 5, "no program nested 5 deep (deepest {})", most.depth);
    assert_eq!(most.loops, 4, "no program opened four loops");
    assert!(most.early_endloops > 0 && most.reused_calls > 0, "early endloops {}, reused subroutines {}", most.early_endloops, most.reused_calls);
    assert!(c.opcodes.iter().any(|o| o.starts_with("kill_")), "no pixel kill executed");
    assert!(e.pred_exec.0 > 0 && e.pred_exec.1 > 0, "(p0) exec both taken and skipped: {:?}", e.pred_exec);
    assert!(e.quads_uniform > 0 && e.quads_divergent > 0, "pixel quads both agreeing and diverging: {} / {}", e.quads_uniform, e.quads_divergent);
    finish("compiler_shaped_fixed_seed", &c, &shaped_must_execute(), 10_000);
}

/// Long mode of [`compiler_shaped_fixed_seed`]: `SHREC_FUZZ_PROGRAMS` programs (default 10 000)
/// from `SHREC_FUZZ_FROM` (default 0); `SHREC_FUZZ_SECONDS` stops starting new ones.
#[test]
#[ignore]
fn long_shaped() {
    let Some(gpu) = gpu() else { return };
    let programs = shrec_verify::long_run_programs(10_000);
    let first = programs.start;
    let started = std::time::Instant::now();
    let (c, e, most) = shaped(gpu, fuzz_seed(), programs);
    println!("{}", shaped_summary(&format!("long_shaped seed {} from #{first}", fuzz_seed()), &c, &e, &most, started.elapsed().as_secs_f64()));
    finish("long_shaped", &c, &[], 0);
}

/// The harness catches an IEEE multiply in place of the Xenos one (0 × inf = 0).
#[test]
fn harness_detects_mutation() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(9);
    let bytes = single_op(true, 1, 2, [0, 1, 2, 3]);
    let mut cases = op_cases(&mut rng, &bytes, 8);
    for c in &mut cases {
        c.c[1] = [0.0, f32::INFINITY, 0.0, 2.0];
        for x in c.base.values_mut() {
            *x = [f32::INFINITY, 0.0, f32::NAN, 0.5];
        }
    }
    let p = TestProgram { name: "mutated mul".into(), bytes, cases, textures: BTreeMap::new(), reproduce: String::new() };
    let (clean, _) = xenos::run(gpu, &p);
    assert_eq!(clean.mismatches, 0, "{:?}", clean.reports);
    set_mutation(Mutation::XenosMulAsIeee);
    let (mutated, _) = xenos::run(gpu, &p);
    set_mutation(Mutation::None);
    common::log_uncaptured(&format!(
        "verify xenos mutation XenosMulAsIeee: {} mismatches of {} comparisons",
        mutated.mismatches, mutated.comparisons
    ));
    assert!(mutated.mismatches > 0, "the IEEE multiply went unnoticed");
}

/// Two slots read two different heap elements (texture indices 0 / 1, sampler indices 1 / 0).
#[test]
fn two_textures_distinct_heap_elements() {
    let Some(gpu) = gpu() else { return };
    let base = asm::cf_triples(2);
    let slots = vec![
        asm::tfetch(1, 0, [0, 1, 0], 0, 1, [0, 1, 2, 3], false, false),
        asm::tfetch(2, 0, [0, 1, 0], 1, 1, [0, 1, 2, 3], false, false),
        {
            let mut e = Alu { vop: 0, sop: 50, vdst: 0, vmask: 0xF, export: true, ..Default::default() };
            e.src = [Src::r(1), Src::c(200), Src::r(0)];
            e.encode()
        },
        {
            let mut e = Alu { vop: 0, sop: 50, vdst: 1, vmask: 0xF, export: true, ..Default::default() };
            e.src = [Src::r(2), Src::c(200), Src::r(0)];
            e.encode()
        },
    ];
    let cf = [asm::exec(asm::EXEC, base, &[true, true], 0, false), asm::exec(asm::EXEC_END, base + 2, &[false, false], 0, false)];
    let code = asm::microcode(&cf, &slots);
    let bytes = container::write(&container::Spec {
        vertex: false,
        microcode: &code,
        vertex_elements: &[],
        interpolators: &[(0, 5, 0)],
        ps_outputs: 3,
        float_defs: &[],
        int_defs: &[],
    });
    let mut rng = Rng::new(1);
    let mut cases = xenos::random_cases(&mut rng, &bytes, 2, true);
    for c in &mut cases {
        for m in [&mut c.slope_x, &mut c.slope_y] {
            for x in m.values_mut() {
                *x = [0.0; 4];
            }
        }
    }
    let mut textures = BTreeMap::new();
    textures.insert(
        0,
        shrec_verify::interp::xenos::Texture {
            size: 2,
            shape: shrec_verify::TextureShape::Flat,
            texels: vec![[0.25, 0.5, 0.125, 1.0]; 4],
            mips: vec![],
        },
    );
    textures.insert(
        1,
        shrec_verify::interp::xenos::Texture {
            size: 2,
            shape: shrec_verify::TextureShape::Flat,
            texels: vec![[0.75, 0.375, 0.625, 0.0]; 4],
            mips: vec![],
        },
    );
    let p = TestProgram { name: "two textures".into(), bytes, cases, textures, reproduce: String::new() };
    let (c, _) = xenos::run(gpu, &p);
    finish("two textures", &c, &[], 8);
}

// ---------------------------------------------------------------------------------------------
// Memory export (eA / eM0-eM4, `shrec::formats::xenos::memexport`).

/// Byte address of export section A / D and of the decoy eA written first in section A.
const MEM_A: u32 = 0x100;
const MEM_D: u32 = 0x1000;
const MEM_DECOY: u32 = 0x1800;
const MEM_LEN: usize = 0x2000;

/// A stream constant (eA before the index is added): base byte address, format info, count.
fn stream_constant(base: u32, info: u32, count: u32) -> [f32; 4] {
    [0x4000_0000 | base >> 2, 0x4B00_0000, 0x4B00_0000 | info, 0x4B00_0000 | count].map(f32::from_bits)
}

fn format_info(format: u32, endian: u32, signed: bool, integer: bool, swap_rb: bool) -> u32 {
    endian | format << 8 | (signed as u32) << 16 | (integer as u32) << 17 | (swap_rb as u32) << 19
}

/// A shader with two memory exports. Vertex (flags 0x102A1111 when `multipass_flags`): r0 =
/// vfetch A (x = index of section A, y = index of section D, z = predicate source), r1 = vfetch B
/// (data). Pixel: r0 / r1 are interpolators (w of r0: kill source), and eM1 / eM3 / D's eM1 take
/// their data from c5 (constants carry the special values interpolation cannot). p0 = (r0.z == 0).
/// - `alloc export`; eA = r0.x·(0,1,0,0) + c21 (a decoy), then eA = r0.x·(0,1,0,0) + c20;
///   eM0 = r1, eM1 = r1.yzwx, (p0) eM2 = r1.zwxy, eM3 = r1.wxyz; next exec: eM4 = r1.xxyy (pixel:
///   then `kill_gt r0.w, 0`: a killed pixel stores section A before it is discarded, and nothing
///   after).
/// - `alloc export`: stores section A; eA = r0.y·(0,1,0,0) + c22; eM0.x = r1.w (the other lanes
///   stay 0: cleared by the store); (!p0) eM1 = r1.
/// - `alloc position` (pixel: `alloc colors`): stores section D; oPos = r0 (pixel: oC0 = r1).
fn memexport_program(pixel: bool, multipass_flags: bool) -> Vec<u8> {
    let mov = |dst: u32, src: Src, swz: [u8; 4], mask: u32| {
        let mut a = Alu { vop: 2, vdst: dst, vmask: mask, export: true, ..Default::default() };
        a.src = [src.swz(swz), src.swz(swz), Src::r(0)];
        a
    };
    let data = Src::r(1);
    let other = if pixel { Src::c(5) } else { Src::r(1) };
    let ea = |lane: u8, stream: u32| {
        let mut a = Alu { vop: 11, vdst: 32, vmask: 0xF, export: true, ..Default::default() };
        a.src = [Src::r(0).swz([lane; 4]), Src::c(1), Src::c(stream)];
        a.encode()
    };
    let mut setp = Alu { vop: 0, sop: 27, ..Default::default() };
    setp.src = [Src::r(0), Src::r(0), Src::r(0).swz([2, 2, 2, 2])];
    let pred = |mut a: Alu, cond: bool| {
        a.predicated = true;
        a.pred_condition = cond;
        a
    };
    // kill_gt r0.wwww, c1.xxxx (c1 = (0, 1, 0, 0))
    let mut kill = Alu { vop: 25, vdst: 3, vmask: 0xF, ..Default::default() };
    kill.src = [Src::r(0).swz([3; 4]), Src::c(1).swz([0; 4]), Src::r(0)];
    let mut first = Vec::new();
    if !pixel {
        first.push((asm::vfetch(0, [0, 1, 2, 3], false, false), true));
        first.push((asm::vfetch(1, [0, 1, 2, 3], false, false), true));
    }
    first.push((setp.encode(), false));
    let mut third = vec![(mov(37, data, [0, 0, 1, 1], 0xF).encode(), false)];
    if pixel {
        third.push((kill.encode(), false));
    }
    let clauses: Vec<Vec<([u32; 3], bool)>> = vec![
        first,
        vec![
            (ea(0, 21), false),
            (ea(0, 20), false),
            (mov(33, data, [0, 1, 2, 3], 0xF).encode(), false),
            (mov(34, other, [1, 2, 3, 0], 0xF).encode(), false),
            (pred(mov(35, data, [2, 3, 0, 1], 0xF), true).encode(), false),
            (mov(36, other, [3, 0, 1, 2], 0xF).encode(), false),
        ],
        third,
        vec![
            (ea(1, 22), false),
            (mov(33, data, [3, 3, 3, 3], 0x1).encode(), false),
            (pred(mov(34, other, [0, 1, 2, 3], 0xF), false).encode(), false),
        ],
        vec![(if pixel { export_alu(0, 1) } else { export_alu(62, 0) }, false)],
    ];
    let n_cf = clauses.len() + 3;
    let base = asm::cf_triples(n_cf);
    let mut slots = Vec::new();
    let mut starts = Vec::new();
    for cl in &clauses {
        starts.push(base + slots.len() as u32);
        slots.extend(cl.iter().map(|s| s.0));
    }
    let flags = |k: usize| clauses[k].iter().map(|s| s.1).collect::<Vec<bool>>();
    let cf = vec![
        asm::exec(asm::EXEC, starts[0], &flags(0), 0, false),
        asm::alloc(0, 3),
        asm::exec(asm::EXEC, starts[1], &flags(1), 0, false),
        asm::exec(asm::EXEC, starts[2], &flags(2), 0, false),
        asm::alloc(0, 3),
        asm::exec(asm::EXEC, starts[3], &flags(3), 0, false),
        asm::alloc(0, if pixel { 2 } else { 1 }),
        asm::exec(asm::EXEC_END, starts[4], &flags(4), 0, false),
    ];
    assert_eq!(cf.len(), n_cf);
    let code = asm::microcode(&cf, &slots);
    let elements = [(base, 0, 0), (base + 1, 5, 0)];
    let mut bytes = container::write(&container::Spec {
        vertex: !pixel,
        microcode: &code,
        vertex_elements: if pixel { &[] } else { &elements },
        interpolators: if pixel { &[(0, 5, 0), (1, 5, 1)] } else { &[] },
        ps_outputs: if pixel { 1 } else { 0 },
        float_defs: &[],
        int_defs: &[],
    });
    if multipass_flags {
        bytes[..4].copy_from_slice(&0x102A_1111u32.to_be_bytes());
    }
    bytes
}

/// Data values: exact dyadic values around every format's range and rounding points, the
/// specials for fixed-point formats (NaN → 0, ±inf clamp), plain values for the raw ones; for
/// the 16-bit float formats ±0, f16 denormals and their ties, 65504 / 65520 and values between,
/// overflow, ±inf, NaN, round-to-nearest-even ties, an f32 denormal (values the reference cannot
/// pin down leave their bytes inconclusive, see `memexport::to_f16`).
fn memexport_data(rng: &mut Rng, kind: shrec::formats::xenos::memexport::Kind) -> [f32; 4] {
    use shrec::formats::xenos::memexport::Kind;
    const FIXED: [f32; 24] = [
        0.0,
        -0.0,
        0.5,
        1.0,
        -1.0,
        0.25,
        -0.75,
        2.0,
        -2.0,
        0.001953125,
        127.5,
        -128.5,
        255.0,
        1000.0,
        40000.0,
        70000.0,
        -40000.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.333_333_34,
        3.5,
        -3.5,
        0.998_046_9,
    ];
    match kind {
        Kind::Float32(_) => std::array::from_fn(|_| rng.dyadic(3, 6)),
        Kind::Float16(_) => std::array::from_fn(|_| if rng.chance(25) { rng.dyadic(3, 6) } else { *rng.pick(&F16) }),
        Kind::Fixed(_) => std::array::from_fn(|_| if rng.chance(25) { rng.dyadic(3, 6) } else { *rng.pick(&FIXED) }),
    }
}

/// 2^-24, the smallest f16 denormal.
const P24: f32 = 1.0 / 16_777_216.0;
/// Values for the 16-bit float formats: ±0, ±65504, 65520 (the round-to-nearest-even overflow
/// tie), 65519 / 65512 (between 65504 and 65520), overflow, ±inf, NaN, f16 denormals (the
/// smallest, the largest, ties between them and to 0), the smallest normal, round-to-nearest-even
/// ties (1 + 2^-11 → 1, 1 + 3·2^-11 → 1 + 2^-9, 2049 → 2048, 2051 → 2052, 1024.5 → 1024), inexact
/// values that are not ties, an f32 denormal.
const F16: [f32; 30] = [
    0.0,
    -0.0,
    1.0,
    -2.0,
    0.5,
    65504.0,
    -65504.0,
    65520.0,
    65519.0,
    65512.0,
    -65536.0,
    70000.0,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    P24,
    -3.0 * P24,
    1023.0 * P24,
    1024.0 * P24,
    0.5 * P24,
    1.5 * P24,
    1.0 + 1.0 / 2048.0,
    1.0 + 3.0 / 2048.0,
    -(1.0 + 1.0 / 2048.0),
    2049.0,
    2051.0,
    1024.5,
    1.0 + 1.0 / 4096.0,
    0.1,
    1e-40,
];

/// Cases for the vertex `memexport_program`: case i exports section A at element 5i and
/// section D at 2i.
fn memexport_cases(rng: &mut Rng, bytes: &[u8], n: usize, streams: [[f32; 4]; 3], kind: shrec::formats::xenos::memexport::Kind) -> Vec<Case> {
    let mut cases = xenos::random_cases(rng, bytes, n, false);
    let c = shrec::formats::xenos::container::parse(bytes).unwrap();
    let (a, b) = (c.vertex_elements[0].address, c.vertex_elements[1].address);
    for (i, case) in cases.iter_mut().enumerate() {
        case.c[1] = [0.0, 1.0, 0.0, 0.0];
        case.c[20] = streams[0];
        case.c[21] = streams[1];
        case.c[22] = streams[2];
        case.inputs.insert(a, [(5 * i) as f32, (2 * i) as f32, if rng.chance(50) { 0.0 } else { 1.0 }, 1.0]);
        case.inputs.insert(b, memexport_data(rng, kind));
    }
    cases
}

/// The kind of a format id (unknown formats: fixed-point data).
fn memexport_kind(id: u32) -> shrec::formats::xenos::memexport::Kind {
    use shrec::formats::xenos::memexport as me;
    me::format(id).map_or(me::Kind::Fixed([8, 0, 0, 0]), |f| f.kind)
}

/// Endian modes for section A / D of program `k` of format `id`: A one that fits the element
/// (cycling), D another fitting one or (every fourth program) one that stores nothing.
fn memexport_endians(rng: &mut Rng, k: usize, id: u32) -> (u32, u32) {
    use shrec::formats::xenos::memexport as me;
    let size = me::format(id).map_or(4, |f| 1u32 << f.size_log2());
    let fits: Vec<u32> = (0..6).filter(|&e| me::swap_unit(e).unwrap() <= size).collect();
    let endian_a = fits[k % fits.len()];
    let endian_d = if k % 4 == 3 { *rng.pick(&[6, 7, 4, 5, 1]) } else { *rng.pick(&fits) };
    (endian_a, endian_d)
}

/// Every memexport format, endian swaps that fit the element, invalid ones and formats that store
/// nothing, run on lavapipe; every byte of guest memory compared with the interpreter.
fn memexport_programs(rng: &mut Rng) -> Vec<(TestProgram, Vec<u8>)> {
    use shrec::formats::xenos::memexport::{self as me, FORMATS};
    let bytes = memexport_program(false, false);
    // the 16-bit float formats after the others (where they stood when they stored nothing, so
    // the other programs' random draws are as before), then formats outside the table
    let f16 = |id: &u32| matches!(memexport_kind(*id), me::Kind::Float16(_));
    let mut ids: Vec<u32> = FORMATS.iter().map(|f| f.id).filter(|id| !f16(id)).collect();
    ids.extend(FORMATS.iter().map(|f| f.id).filter(f16));
    ids.extend([1, 63]);
    let mut out = Vec::new();
    for (k, &id) in ids.iter().enumerate() {
        let (endian_a, endian_d) = memexport_endians(rng, k, id);
        let (s, i) = (rng.chance(50), rng.chance(50));
        let info_a = format_info(id, endian_a, s, i, k % 3 == 0);
        let info_d = format_info(id, endian_d, !s, i, k % 3 == 1);
        let n = 8;
        let mut d_stream = stream_constant(MEM_D, info_d, 1000);
        if k % 7 == 5 {
            d_stream[2] = f32::from_bits(0x4A00_0000 | info_d); // wrong exponent: no store
        }
        let streams = [stream_constant(MEM_A, info_a, 5 * n as u32 - 3), stream_constant(MEM_DECOY, info_a, 1000), d_stream];
        let cases = memexport_cases(rng, &bytes, n, streams, memexport_kind(id));
        let name = format!(
            "memexport {} endian {endian_a}/{endian_d} signed {s} integer {i}",
            me::format(id).map_or(format!("format {id}"), |f| f.name.to_string())
        );
        let memory: Vec<u8> = (0..MEM_LEN).map(|_| rng.next_u64() as u8).collect();
        out.push((TestProgram { name, bytes: bytes.clone(), cases, textures: BTreeMap::new(), reproduce: String::new() }, memory));
    }
    out
}

/// Guest memory of the pixel programs: section A at MEM_A (8 elements per pixel), D at
/// MEM_PIXEL_D (2 per pixel), the decoy at MEM_DECOY.
const MEM_PIXEL_D: u32 = 0x1400;

/// Quads for the pixel `memexport_program`: pixel p of quad q (4q + p = its number k) exports
/// section A at element 8k and section D at 2k — or, with `shared_d`, every pixel of quad q at
/// 8q (several invocations storing the same bytes). Interpolators: r0 = (8k, 2k or 8q, predicate
/// source, kill source: some pixels killed), r1 = data (dyadic, exact after interpolation); c5 =
/// the format's special values (one vector per quad).
fn memexport_pixel_cases(
    rng: &mut Rng,
    bytes: &[u8],
    n: usize,
    streams: [[f32; 4]; 3],
    kind: shrec::formats::xenos::memexport::Kind,
    shared_d: bool,
) -> Vec<Case> {
    let mut cases = xenos::random_cases(rng, bytes, n, false);
    for (q, case) in cases.iter_mut().enumerate() {
        case.c[1] = [0.0, 1.0, 0.0, 0.0];
        case.c[5] = memexport_data(rng, kind);
        case.c[20] = streams[0];
        case.c[21] = streams[1];
        case.c[22] = streams[2];
        let q4 = 4.0 * q as f32;
        let slope = |rng: &mut Rng| *rng.pick(&[0.0f32, 1.0, -1.0, 0.5]);
        let (pz, pzx, pzy) = (*rng.pick(&[0.0f32, 1.0, -1.0]), slope(rng), slope(rng));
        let (kw, kwx, kwy) = (*rng.pick(&[-1.0f32, -0.5, 0.5]), slope(rng), slope(rng));
        let d = if shared_d { 8.0 * q as f32 } else { 2.0 * q4 };
        let (dx, dy) = if shared_d { (0.0, 0.0) } else { (2.0, 4.0) };
        case.base.insert(0, [8.0 * q4, d, pz, kw]);
        case.slope_x.insert(0, [8.0, dx, pzx, kwx]);
        case.slope_y.insert(0, [16.0, dy, pzy, kwy]);
        case.base.insert(1, std::array::from_fn(|_| rng.dyadic(2, 4)));
        case.slope_x.insert(1, std::array::from_fn(|_| *rng.pick(&[0.0f32, 0.25, -0.5, 1.0])));
        case.slope_y.insert(1, std::array::from_fn(|_| *rng.pick(&[0.0f32, 0.125, -1.0, 2.0])));
    }
    cases
}

/// The interpreter's runs of a pixel program's pixels (the harness's interpolation).
fn pixel_runs(p: &TestProgram) -> Vec<shrec_verify::interp::xenos::Outcome> {
    let cont = shrec::formats::xenos::container::parse(&p.bytes).unwrap();
    let prog = shrec::formats::xenos::ucode::decode(&cont.microcode).unwrap();
    let mut out = Vec::new();
    for case in &p.cases {
        for px in 0..4 {
            let (i, j) = ((px & 1) as f32, (px >> 1) as f32);
            let interpolators =
                case.base.iter().map(|(r, b)| (*r, std::array::from_fn(|k| b[k] + i * case.slope_x[r][k] + j * case.slope_y[r][k]))).collect();
            let st = shrec_verify::interp::xenos::State { c: case.c.clone(), interpolators, ..Default::default() };
            out.push(shrec_verify::interp::xenos::run(&cont, &prog, &st));
        }
    }
    out
}

/// Pixel-shader memexport programs: one per format of a list covering every element size and
/// kind (8-, 16-bit elements through atomics, 32 / 64 / 128-bit stores, fixed point, raw and
/// 16-bit floats) and a format outside the table; every third with all pixels of a quad storing
/// section D to the same elements.
fn memexport_pixel_programs(rng: &mut Rng) -> Vec<(TestProgram, Vec<u8>)> {
    use shrec::formats::xenos::memexport as me;
    let bytes = memexport_program(true, false);
    let ids = [2, 3, 6, 7, 10, 16, 24, 25, 26, 30, 31, 32, 36, 37, 38, 63];
    let n = 8;
    let mut out = Vec::new();
    for (k, &id) in ids.iter().enumerate() {
        let (endian_a, endian_d) = memexport_endians(rng, k, id);
        let (s, i) = (rng.chance(50), rng.chance(50));
        let info_a = format_info(id, endian_a, s, i, k % 3 == 0);
        let info_d = format_info(id, endian_d, !s, i, k % 3 == 1);
        let shared_d = k % 3 == 2;
        let streams = [
            stream_constant(MEM_A, info_a, 8 * 4 * n as u32 - 5),
            stream_constant(MEM_DECOY, info_a, 1000),
            stream_constant(MEM_PIXEL_D, info_d, 1000),
        ];
        let cases = memexport_pixel_cases(rng, &bytes, n, streams, memexport_kind(id), shared_d);
        let name = format!(
            "memexport pixel {} endian {endian_a}/{endian_d} signed {s} integer {i}{}",
            me::format(id).map_or(format!("format {id}"), |f| f.name.to_string()),
            if shared_d { " shared D" } else { "" }
        );
        let memory: Vec<u8> = (0..MEM_LEN).map(|_| rng.next_u64() as u8).collect();
        out.push((TestProgram { name, bytes: bytes.clone(), cases, textures: BTreeMap::new(), reproduce: String::new() }, memory));
    }
    out
}

#[test]
fn memexport() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(0x3E);
    let mut c = Comparison::default();
    let mut stored = 0usize;
    let mut undetermined_bytes = 0u32;
    for (p, memory) in memexport_programs(&mut rng) {
        let (pc, _) = xenos::run_with_memory(gpu, &p, &memory);
        if pc.mismatches > 0 {
            println!("MISMATCH {}: {} of {} comparisons", p.name, pc.mismatches, pc.comparisons);
        }
        // the interpreter's stores, to assert the programs store something
        let cont = shrec::formats::xenos::container::parse(&p.bytes).unwrap();
        let prog = shrec::formats::xenos::ucode::decode(&cont.microcode).unwrap();
        for case in &p.cases {
            let st = shrec_verify::interp::xenos::State { c: case.c.clone(), vertex_inputs: case.inputs.clone(), ..Default::default() };
            let r = shrec_verify::interp::xenos::run(&cont, &prog, &st);
            stored += r.memory.len();
            undetermined_bytes += r.memory.iter().map(|s| s.undetermined.count_ones()).sum::<u32>();
        }
        c.merge(pc);
    }
    common::log_uncaptured(&format!(
        "verify xenos memexport: {stored} reference stores, {undetermined_bytes} stored bytes not determined (16-bit floats)"
    ));
    assert!(stored > 500, "only {stored} stores");
    assert!(undetermined_bytes > 0 && c.inconclusive > 0, "no 16-bit float the reference leaves open: {undetermined_bytes}");
    // every byte of every program's memory is compared or inconclusive (8192 each), plus oPos
    assert_eq!(c.comparisons + c.inconclusive, 28 * (MEM_LEN as u64 + 8 * 4), "bytes and lanes");
    finish("memexport", &c, &["memexport".to_string(), "predicated".to_string(), "alloc".to_string()], 28 * MEM_LEN as u64 - 2000);
}

/// Every value of `F16` stored as 16_16_16_16_FLOAT from a vertex shader (each case's data is
/// four consecutive values of the list), and the reference's own rule (`memexport::to_f16`) on
/// some of them: which bytes a conforming host leaves open.
#[test]
fn memexport_f16_values() {
    use shrec::formats::xenos::memexport::to_f16;
    assert_eq!(to_f16(0.0), (0x0000, 0));
    assert_eq!(to_f16(-0.0), (0x8000, 0));
    assert_eq!(to_f16(-2.0), (0xC000, 0));
    assert_eq!(to_f16(65504.0), (0x7BFF, 0));
    assert_eq!(to_f16(1024.0 * P24), (0x0400, 0));
    assert_eq!(to_f16(f32::NEG_INFINITY), (0xFC00, 0));
    // either neighbour: 65504 or inf (all bytes); a tie or an inexact value (the low byte)
    assert_eq!(to_f16(65520.0), (0x7C00, 0xFFFF));
    assert_eq!(to_f16(65519.0), (0x7BFF, 0xFFFF));
    assert_eq!(to_f16(1.0 + 1.0 / 2048.0), (0x3C00, 0x00FF));
    assert_eq!(to_f16(2051.0), (0x6802, 0x00FF));
    assert_eq!(to_f16(0.1), (0x2E66, 0x00FF));
    // denormal results may be flushed to 0
    assert_eq!(to_f16(P24), (0x0001, 0x00FF));
    assert_eq!(to_f16(-1023.0 * P24), (0x83FF, 0xFFFF));
    assert_eq!(to_f16(1.5 * P24), (0x0002, 0x00FF));
    assert_eq!(to_f16(1e-40), (0x0000, 0x00FF));
    assert_eq!(to_f16(f32::NAN).1, 0xFFFF);
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(0x44);
    let bytes = memexport_program(false, false);
    let info = format_info(32, 0, false, false, false);
    let streams = [stream_constant(MEM_A, info, 100), stream_constant(MEM_DECOY, info, 100), stream_constant(MEM_D, info, 100)];
    let mut cases = memexport_cases(&mut rng, &bytes, 8, streams, memexport_kind(32));
    let c = shrec::formats::xenos::container::parse(&bytes).unwrap();
    for (i, case) in cases.iter_mut().enumerate() {
        case.inputs.insert(c.vertex_elements[1].address, std::array::from_fn(|k| F16[(4 * i + k) % F16.len()]));
    }
    let memory: Vec<u8> = (0..MEM_LEN).map(|_| rng.next_u64() as u8).collect();
    let p = TestProgram { name: "memexport 16_16_16_16_FLOAT values".into(), bytes, cases, textures: BTreeMap::new(), reproduce: String::new() };
    let (c, _) = xenos::run_with_memory(gpu, &p, &memory);
    assert!(c.inconclusive > 0);
    finish("memexport_f16_values", &c, &["memexport".to_string()], MEM_LEN as u64 - 500);
}

/// Pixel-shader memory export, executed: every byte of guest memory after the quads' draws is
/// compared with the interpreter's stores of every pixel (killed pixels store what was pending
/// at the kill, nothing after; bytes several pixels store differently are inconclusive).
#[test]
fn memexport_pixel() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(0x41);
    let mut c = Comparison::default();
    let (mut stored, mut killed, mut shared_inconclusive) = (0usize, 0usize, 0u64);
    let programs = memexport_pixel_programs(&mut rng);
    let count = programs.len() as u64;
    for (p, memory) in programs {
        let (pc, _) = xenos::run_with_memory(gpu, &p, &memory);
        if pc.mismatches > 0 {
            println!("MISMATCH {}: {} of {} comparisons", p.name, pc.mismatches, pc.comparisons);
        }
        for r in pixel_runs(&p) {
            stored += r.memory.len();
            killed += usize::from(r.written == Some(false));
        }
        if p.name.ends_with("shared D") {
            shared_inconclusive += pc.inconclusive;
        }
        c.merge(pc);
    }
    common::log_uncaptured(&format!("verify xenos memexport_pixel: {stored} reference stores, {killed} of {} pixels killed, {shared_inconclusive} inconclusive in the shared-D programs", count * 32));
    assert!(stored > 500, "only {stored} stores");
    assert!(killed > 10 && killed < (count * 32) as usize - 10, "{killed} pixels killed");
    assert!(shared_inconclusive > 0, "no byte stored differently by two pixels");
    finish(
        "memexport_pixel",
        &c,
        &["memexport".to_string(), "predicated".to_string(), "alloc".to_string(), "kill_gt".to_string()],
        count * (MEM_LEN as u64 - 1000),
    );
}

/// The multipass memexport vertex shader of docs/isa/xenos.md (flags 0x102A1111) runs as well.
#[test]
fn memexport_multipass_flags() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(0x3F);
    let bytes = memexport_program(false, true);
    let info = format_info(38, 2, false, false, false);
    let streams = [stream_constant(MEM_A, info, 100), stream_constant(MEM_DECOY, info, 100), stream_constant(MEM_D, info, 100)];
    let cases = memexport_cases(&mut rng, &bytes, 6, streams, memexport_kind(38));
    let memory: Vec<u8> = (0..MEM_LEN).map(|_| rng.next_u64() as u8).collect();
    // DXIL and SPIR-V (spirv-val) of the translation
    let t = shrec::formats::xenos::translate(&bytes).unwrap();
    let hlsl = shrec::hlsl::write(&t.module);
    assert!(hlsl.contains("RWByteAddressBuffer") || hlsl.contains("SHREC_XENOS_MEMEXPORT 1"), "{hlsl}");
    for target in [shrec::dxc::Target::Dxil, shrec::dxc::Target::Spirv] {
        let code = shrec::dxc::compile_with_spec_constants(&gpu.dxc, &hlsl, shrec::Stage::Vertex, target, t.spec_constants_mask)
            .unwrap_or_else(|e| panic!("{e}\n{hlsl}"));
        if target == shrec::dxc::Target::Spirv {
            common::spirv_val(&code, "memexport 0x102A1111").unwrap();
        }
    }
    let p = TestProgram { name: "memexport 0x102A1111".into(), bytes, cases, textures: BTreeMap::new(), reproduce: String::new() };
    let (c, _) = xenos::run_with_memory(gpu, &p, &memory);
    finish("memexport 0x102A1111", &c, &["memexport".to_string()], MEM_LEN as u64);
}

/// Runs `p` clean (no mismatch) and with `mutation`; returns the mutated run.
fn mutated_run(gpu: &vk::Gpu, p: &TestProgram, memory: &[u8], mutation: Mutation) -> Comparison {
    let (clean, _) = xenos::run_with_memory(gpu, p, memory);
    assert_eq!(clean.mismatches, 0, "{:?}", clean.reports);
    set_mutation(mutation);
    let (mutated, _) = xenos::run_with_memory(gpu, p, memory);
    set_mutation(Mutation::None);
    common::log_uncaptured(&format!(
        "verify xenos mutation {mutation:?} ({}): {} mismatches of {} comparisons",
        p.name, mutated.mismatches, mutated.comparisons
    ));
    mutated
}

/// The memexport test fails when `alloc` does not store (the end then stores everything with the
/// last eA), in vertex and in pixel shaders.
#[test]
fn memexport_detects_mutation() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(0x40);
    let bytes = memexport_program(false, false);
    let info = format_info(6, 0, false, false, false);
    let streams = [stream_constant(MEM_A, info, 100), stream_constant(MEM_DECOY, info, 100), stream_constant(MEM_D, info, 100)];
    let cases = memexport_cases(&mut rng, &bytes, 8, streams, memexport_kind(6));
    let memory: Vec<u8> = (0..MEM_LEN).map(|_| rng.next_u64() as u8).collect();
    let p = TestProgram { name: "memexport mutation".into(), bytes, cases, textures: BTreeMap::new(), reproduce: String::new() };
    let mutated = mutated_run(gpu, &p, &memory, Mutation::XenosMemExportAllocNoStore);
    assert!(mutated.mismatches > 0, "alloc without a store went unnoticed");
    // pixel shader
    let bytes = memexport_program(true, false);
    let streams = [stream_constant(MEM_A, info, 200), stream_constant(MEM_DECOY, info, 100), stream_constant(MEM_PIXEL_D, info, 100)];
    let cases = memexport_pixel_cases(&mut rng, &bytes, 8, streams, memexport_kind(6), false);
    let p = TestProgram { name: "memexport pixel mutation".into(), bytes, cases, textures: BTreeMap::new(), reproduce: String::new() };
    let mutated = mutated_run(gpu, &p, &memory, Mutation::XenosMemExportAllocNoStore);
    assert!(mutated.mismatches > 0, "pixel-shader alloc without a store went unnoticed");
}

/// A pixel-shader kill that discards without storing the pending exports is caught (killed
/// pixels then miss section A).
#[test]
fn memexport_kill_detects_mutation() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(0x42);
    let bytes = memexport_program(true, false);
    let info = format_info(38, 0, false, false, false);
    let streams = [stream_constant(MEM_A, info, 200), stream_constant(MEM_DECOY, info, 100), stream_constant(MEM_PIXEL_D, info, 100)];
    let cases = memexport_pixel_cases(&mut rng, &bytes, 8, streams, memexport_kind(38), false);
    let memory: Vec<u8> = (0..MEM_LEN).map(|_| rng.next_u64() as u8).collect();
    let p = TestProgram { name: "memexport kill mutation".into(), bytes, cases, textures: BTreeMap::new(), reproduce: String::new() };
    let killed = pixel_runs(&p).iter().filter(|r| r.written == Some(false)).count();
    assert!(killed > 0, "no pixel killed");
    let mutated = mutated_run(gpu, &p, &memory, Mutation::XenosMemExportKillNoStore);
    assert!(mutated.mismatches > 0, "a kill without a store went unnoticed");
}

/// 16_16_FLOAT with its two halves exchanged is caught, in vertex and in pixel shaders.
#[test]
fn memexport_f16_detects_mutation() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(0x43);
    let info = format_info(31, 0, false, false, false);
    let bytes = memexport_program(false, false);
    let streams = [stream_constant(MEM_A, info, 100), stream_constant(MEM_DECOY, info, 100), stream_constant(MEM_D, info, 100)];
    let cases = memexport_cases(&mut rng, &bytes, 8, streams, memexport_kind(31));
    let memory: Vec<u8> = (0..MEM_LEN).map(|_| rng.next_u64() as u8).collect();
    let p = TestProgram { name: "memexport 16_16_FLOAT mutation".into(), bytes, cases, textures: BTreeMap::new(), reproduce: String::new() };
    let mutated = mutated_run(gpu, &p, &memory, Mutation::XenosMemExportSwapXY);
    assert!(mutated.mismatches > 0, "swapped 16_16_FLOAT halves went unnoticed");
    let bytes = memexport_program(true, false);
    let streams = [stream_constant(MEM_A, info, 200), stream_constant(MEM_DECOY, info, 100), stream_constant(MEM_PIXEL_D, info, 100)];
    let cases = memexport_pixel_cases(&mut rng, &bytes, 8, streams, memexport_kind(31), false);
    let p = TestProgram { name: "memexport pixel 16_16_FLOAT mutation".into(), bytes, cases, textures: BTreeMap::new(), reproduce: String::new() };
    let mutated = mutated_run(gpu, &p, &memory, Mutation::XenosMemExportSwapXY);
    assert!(mutated.mismatches > 0, "swapped 16_16_FLOAT halves went unnoticed (pixel)");
}

/// A loop whose body holds a predicated early `endloop` before the real one (issue 25: fxc
/// 2.0.7680 emits such loops): two `loop_end`s close one `loop_start`, each falling through to
/// its own tail when the loop ends. r3 += r0 and r1 += r3 each iteration, p0 = r3.x > c2.x;
/// b0 picks the path through the body:
///
/// ```text
/// 0 exec          [vfetch r0]; r1 = c4; r3 = c4
/// 1 loop i0, skip 8
/// 2 exec          r3 += r0; r4 = r3 - c2; r1 += r3, setp_gt r4.x
/// 3 jmp b0 == true, 6
/// 4 (p0 == COND) endloop i0, 2     early: break when p0 == COND, else count down / repeat
/// 5 exece         exports r1 and c5 (tail 1)
/// 6 exec          r1 *= c3
/// 7 endloop i0, 2
/// 8 exece         exports r1 and c6 (tail 2)
/// ```
///
/// Loop semantics (Xenia's translators, ProcessLoopStartInstruction / ProcessLoopEndInstruction;
/// docs/xenos.md): loop_end decrements the count and leaves the loop, popping it, when the count
/// reaches 0 or a predicated break's p0 equals its condition, else adds the step to aL and jumps
/// to the body. Nothing ties a loop_end to one loop_start statically.
fn early_endloop_program(pixel: bool, condition: bool) -> Vec<u8> {
    let mov = |dst: u32, s: Src| {
        let mut a = Alu { vop: 2, sop: 50, vdst: dst, vmask: 0xF, ..Default::default() };
        a.src = [s, s, Src::r(0)];
        a.encode()
    };
    let add = |dst: u32, a: Src, b: Src| {
        let mut x = Alu { vop: 0, sop: 50, vdst: dst, vmask: 0xF, ..Default::default() };
        x.src = [a, b, Src::r(0)];
        x
    };
    let export = |reg: u32, s: Src| {
        let mut a = Alu { vop: 2, sop: 50, vdst: reg, vmask: 0xF, export: true, ..Default::default() };
        a.src = [s, s, Src::r(0)];
        a.encode()
    };
    let tail = |other: u32| {
        if pixel {
            vec![export(0, Src::r(1)), export(1, Src::c(other))]
        } else {
            vec![export(62, Src::r(0)), export(0, Src::r(1)), export(1, Src::c(other))]
        }
    };
    let base = asm::cf_triples(9);
    let mut slots = Vec::new();
    let mut cf = Vec::new();
    // 0: prologue
    let mut flags = Vec::new();
    if !pixel {
        slots.push(asm::vfetch(0, [0, 1, 2, 3], false, false));
        flags.push(true);
    }
    slots.extend([mov(1, Src::c(4)), mov(3, Src::c(4))]);
    flags.extend([false, false]);
    cf.push(asm::exec(asm::EXEC, base, &flags, 0, false));
    // 1: loop
    cf.push(asm::loop_start(8, 0));
    // 2: body
    let body_at = base + slots.len() as u32;
    let mut setp = add(1, Src::r(1), Src::r(3));
    setp.sop = SCALAR_OPS.iter().position(|o| o.0 == "setp_gt").unwrap() as u32;
    setp.src[2] = Src::r(4).swz([0, 0, 0, 0]);
    slots.extend([add(3, Src::r(3), Src::r(0)).encode(), add(4, Src::r(3), Src::c(2).neg()).encode(), setp.encode()]);
    cf.push(asm::exec(asm::EXEC, body_at, &[false; 3], 0, false));
    // 3, 4
    cf.push(asm::jmp(6, false, false, true, 0));
    cf.push(asm::loop_end(2, 0, true, condition));
    // 5: tail 1
    let t1 = tail(5);
    cf.push(asm::exec(asm::EXEC_END, base + slots.len() as u32, &vec![false; t1.len()], 0, false));
    slots.extend(t1);
    // 6, 7: second half of the body, the real endloop
    let mut mul = add(1, Src::r(1), Src::c(3));
    mul.vop = 1;
    cf.push(asm::exec(asm::EXEC, base + slots.len() as u32, &[false], 0, false));
    slots.push(mul.encode());
    cf.push(asm::loop_end(2, 0, false, false));
    // 8: tail 2
    let t2 = tail(6);
    cf.push(asm::exec(asm::EXEC_END, base + slots.len() as u32, &vec![false; t2.len()], 0, false));
    slots.extend(t2);
    // i0: count 5, aL from 0, step 1
    two_output_container(pixel, base, &asm::microcode(&cf, &slots), &[(0, 5 | 1 << 16)])
}

/// A container for the CF-shape tests: vertex (vfetch slot `base`, two interpolators out) or
/// pixel (one interpolator in, oC0 / oC1 out).
fn two_output_container(pixel: bool, base: u32, code: &[u32], int_defs: &[(u32, u32)]) -> Vec<u8> {
    let interp = if pixel { vec![(0, 5, 0)] } else { vec![(0, 5, 0), (1, 5, 1)] };
    container::write(&container::Spec {
        vertex: !pixel,
        microcode: code,
        vertex_elements: &[(base, 5, 0)],
        interpolators: &interp,
        ps_outputs: 3,
        float_defs: &[],
        int_defs,
    })
}

/// The CF-shape programs `build(pixel, condition)` for vertex and pixel shaders and both
/// conditions, with `cases` cases each (b0 alternating, vertex inputs small dyadic values, then
/// `tweak`), run on lavapipe; asserts every case was determined.
fn run_cf_shapes(
    gpu: &vk::Gpu,
    seed: u64,
    what: &str,
    cases: usize,
    build: impl Fn(bool, bool) -> Vec<u8>,
    mut tweak: impl FnMut(&mut Rng, &mut Case),
) -> (Comparison, Extra) {
    let mut rng = Rng::new(seed);
    let mut programs = Vec::new();
    for pixel in [false, true] {
        for condition in [true, false] {
            let bytes = build(pixel, condition);
            let mut cs = xenos::random_cases(&mut rng, &bytes, cases, false);
            for (k, c) in cs.iter_mut().enumerate() {
                c.booleans = (k % 2) as u16;
                for v in c.inputs.values_mut() {
                    *v = std::array::from_fn(|_| rng.dyadic(1, 2));
                }
                tweak(&mut rng, c);
            }
            programs.push(TestProgram {
                name: format!("{what} ({}, condition {condition})", if pixel { "pixel" } else { "vertex" }),
                bytes,
                cases: cs,
                textures: BTreeMap::new(),
                reproduce: format!("cargo test --release --test verify_xenos {what}"),
            });
        }
    }
    let (c, e) = run_all(gpu, programs.into_iter());
    assert_eq!(e.undetermined, 0, "{what}: every case determined");
    (c, e)
}

/// Issue 25: a predicated early endloop inside a loop body, before the real endloop, with both
/// predicate conditions, vertex and pixel shaders (pixel quads disagree on p0): every way out of
/// the loop (break at the early endloop, count running out at either endloop) occurs, 0 mismatches.
#[test]
fn predicated_early_endloop() {
    let Some(gpu) = gpu() else { return };
    for pixel in [false, true] {
        let listing = shrec::formats::xenos::disasm(&early_endloop_program(pixel, true)).unwrap();
        assert_eq!(listing.matches("endloop").count(), 2, "two endloops for one loop:\n{listing}");
    }
    let (c, _) = run_cf_shapes(gpu, 25, "predicated_early_endloop", 48, early_endloop_program, |rng, c| {
        c.c[2] = std::array::from_fn(|_| rng.dyadic(2, 2));
        c.c[3] = std::array::from_fn(|_| rng.dyadic(1, 2));
        c.c[4] = std::array::from_fn(|_| rng.dyadic(1, 2));
    });
    let ways = ["endloop: predicated break".to_string(), "endloop: count ran out".to_string(), "endloop: repeat".to_string()];
    finish("predicated_early_endloop", &c, &ways, 1_000);
}

/// The loop-depth check still refuses programs that really end a loop that is not open or nest
/// past the stack: an endloop reached after its loop has ended on some path, and five nested loops.
#[test]
fn loop_stack_underflow_and_overflow_are_refused() {
    let program = |cf: &[u64]| {
        let base = asm::cf_triples(cf.len());
        let mut cf = cf.to_vec();
        let last = cf.len() - 1;
        cf[last] |= base as u64; // the final exece's address
        let mut e = Alu { vop: 2, sop: 50, vdst: 0, vmask: 0xF, export: true, ..Default::default() };
        e.src = [Src::r(0), Src::r(0), Src::r(0)];
        let code = asm::microcode(&cf, &[e.encode()]);
        container::write(&container::Spec {
            vertex: false,
            microcode: &code,
            vertex_elements: &[],
            interpolators: &[(0, 5, 0)],
            ps_outputs: 1,
            float_defs: &[],
            int_defs: &[(0, 3)],
        })
    };
    let exece = asm::exec(asm::EXEC_END, 0, &[false], 0, false);
    // loop; endloop; endloop: the second is reached only after the loop has been popped.
    let under = program(&[asm::loop_start(3, 0), asm::loop_end(1, 0, false, false), asm::loop_end(1, 0, false, false), exece]);
    let e = shrec::formats::xenos::translate(&under).expect_err("underflow refused");
    assert_eq!(e, ShaderError::Xenos(XenosError::EndloopWithoutLoop { cf: 2 }));
    assert_eq!(e.to_string(), "CF 2 (endloop) without a loop");
    // five nested loops (the stack holds four)
    let mut cf: Vec<u64> = (0..5).map(|k| asm::loop_start(10 - k, 0)).collect();
    cf.extend((0..5).map(|k| asm::loop_end(5 - k, 0, false, false)));
    cf.push(exece);
    let e = shrec::formats::xenos::translate(&program(&cf)).expect_err("overflow refused");
    assert_eq!(e, ShaderError::Xenos(XenosError::LoopTooDeep { cf: 4, max: 4 }));
    assert_eq!(e.to_string(), "CF 4 (loop): nesting deeper than 4");
}

/// Three ways to end a shader in sequence, as in the game Xenia's ucode.h quotes for kCondExecEnd
/// (`cexece b130; cexece !b130; exece`): a conditional exec-end ends the shader only when its
/// condition holds, else the next CF runs.
///
/// ```text
/// 0 exec                 [vfetch r0]; r1 = c4, setp_gt r0.x (p0 = r0.x > 0)
/// 1 cexece b0 == true    exports max(r1, r1), c5
/// 2 exece_pred p0 == C   exports frc(r0), c6
/// 3 exece                exports floor(r0), c7
/// ```
fn conditional_end_program(pixel: bool, condition: bool) -> Vec<u8> {
    let op = |name: &str| VECTOR_OPS.iter().position(|o| o.0 == name).unwrap() as u32;
    let alu = |vop: u32, dst: u32, s: Src, export: bool| {
        let mut a = Alu { vop, sop: 50, vdst: dst, vmask: 0xF, export, ..Default::default() };
        a.src = [s, s, Src::r(0)];
        a
    };
    let tail = |vop: u32, other: u32| {
        let mut t = Vec::new();
        if !pixel {
            t.push(alu(op("max"), 62, Src::r(0), true).encode());
        }
        t.push(alu(vop, 0, if vop == op("max") { Src::r(1) } else { Src::r(0) }, true).encode());
        t.push(alu(op("max"), 1, Src::c(other), true).encode());
        t
    };
    let base = asm::cf_triples(4);
    let mut slots = Vec::new();
    let mut flags = Vec::new();
    if !pixel {
        slots.push(asm::vfetch(0, [0, 1, 2, 3], false, false));
        flags.push(true);
    }
    let mut first = alu(op("max"), 1, Src::c(4), false);
    first.sop = SCALAR_OPS.iter().position(|o| o.0 == "setp_gt").unwrap() as u32;
    first.src[2] = Src::r(0).swz([0, 0, 0, 0]);
    slots.push(first.encode());
    flags.push(false);
    let mut cf = vec![asm::exec(asm::EXEC, base, &flags, 0, false)];
    for (kind, vop, other) in [(asm::COND_EXEC_END, op("max"), 5), (asm::COND_EXEC_PRED_END, op("frc"), 6), (asm::EXEC_END, op("floor"), 7)] {
        let t = tail(vop, other);
        let cond = if kind == asm::COND_EXEC_PRED_END { condition } else { true };
        cf.push(asm::exec(kind, base + slots.len() as u32, &vec![false; t.len()], 0, cond));
        slots.extend(t);
    }
    two_output_container(pixel, base, &asm::microcode(&cf, &slots), &[])
}

/// Audit finding (docs/semantics-audit.md): `cexece` / `exece_pred` used to end the shader in
/// the translator and the interpreter even when their condition failed, so the clauses after them
/// never ran. Every tail runs here (frc and floor only in the later ones), pixel quads disagree
/// on p0, 0 mismatches.
#[test]
fn conditional_exec_end_ends_only_when_its_condition_holds() {
    let Some(gpu) = gpu() else { return };
    for pixel in [false, true] {
        let listing = shrec::formats::xenos::disasm(&conditional_end_program(pixel, true)).unwrap();
        assert_eq!(listing.matches("exece").count(), 3, "three exec-ends:\n{listing}");
    }
    let (c, e) = run_cf_shapes(gpu, 130, "conditional_exec_end", 32, conditional_end_program, |_, _| {});
    assert!(e.pred_exec.0 > 0 && e.pred_exec.1 > 0, "exece_pred both ways: {:?}", e.pred_exec);
    let must = ["frc", "floor", "exec-end (condition met)", "exec-end (condition not met)"].map(String::from);
    finish("conditional_exec_end_ends_only_when_its_condition_holds", &c, &must, 500);
}

// ---------------------------------------------------------------------------------------------
// Tests of the one-source rules (docs/semantics-audit.md, "Tests of the one-source rules"):
// programs whose lanes hit exactly the case a rule decides, compared with the interpreter.
// ---------------------------------------------------------------------------------------------

/// A CF item of [`cf_program`]: an exec-family clause (op, boolean, condition, ALU slots; at most
/// seven slots with a vertex shader's vfetch) or a raw CF word (ret, call, ...).
enum CfItem {
    Clause(u64, u32, bool, Vec<[u32; 3]>),
    Raw(u64),
}

/// A container from CF items (a vertex shader's first clause gets `vfetch r0` in front); the
/// last item must be an exec-end clause exporting r1 and r2 (and oPos = r0 in a vertex shader).
fn cf_program(pixel: bool, items: Vec<CfItem>) -> Vec<u8> {
    cf_program_with_loops(pixel, items, &[])
}

/// [`cf_program`] with literal loop constants (`defi`).
fn cf_program_with_loops(pixel: bool, items: Vec<CfItem>, int_defs: &[(u32, u32)]) -> Vec<u8> {
    let base = asm::cf_triples(items.len());
    let mut slots = Vec::new();
    let mut cf = Vec::new();
    let mut first = !pixel;
    for item in items {
        match item {
            CfItem::Raw(w) => cf.push(w),
            CfItem::Clause(op, b, cond, body) => {
                let mut flags = Vec::new();
                let at = base + slots.len() as u32;
                if first {
                    slots.push(asm::vfetch(0, [0, 1, 2, 3], false, false));
                    flags.push(true);
                    first = false;
                }
                flags.extend(body.iter().map(|_| false));
                slots.extend(body);
                cf.push(asm::exec(op, at, &flags, b, cond));
            }
        }
    }
    two_output_container(pixel, base, &asm::microcode(&cf, &slots), int_defs)
}

/// The export tail of [`cf_program`]: oPos = r0 (vertex), then r1 and r2.
fn export_tail(pixel: bool) -> Vec<[u32; 3]> {
    if pixel {
        vec![export_alu(0, 1), export_alu(1, 2)]
    } else {
        vec![export_alu(62, 0), export_alu(0, 1), export_alu(1, 2)]
    }
}

fn vop(name: &str) -> u32 {
    VECTOR_OPS.iter().position(|o| o.0 == name).unwrap() as u32
}

fn sop(name: &str) -> u32 {
    SCALAR_OPS.iter().position(|o| o.0 == name).unwrap() as u32
}

/// `vop dst, a, b` with no scalar operation.
fn valu(op: &str, dst: u32, a: Src, b: Src) -> [u32; 3] {
    let mut x = Alu { vop: vop(op), sop: 50, vdst: dst, vmask: 0xF, ..Default::default() };
    x.src = [a, b, Src::r(0)];
    x.encode()
}

/// Sets r0 of every case (vertex input, or the interpolator with zero slopes).
fn set_r0(c: &mut Case, v: [f32; 4]) {
    for x in c.inputs.values_mut() {
        *x = v;
    }
    for x in c.base.values_mut() {
        *x = v;
    }
    for m in [&mut c.slope_x, &mut c.slope_y] {
        for x in m.values_mut() {
            *x = [0.0; 4];
        }
    }
}

/// Xenos rows "DP4 / DP3 sum the products in x, y, z, w order" and "MAD is not fused": dp4 and
/// dp3 on products (2^24, 1, −2^24, 1) — x, y, z, w order gives 1 (dp4) / 0 (dp3), the reverse
/// order 2 / 1 — and mad on (1 + 2^-12)² − (1 + 2^-11), 0 when the product is rounded first and
/// 2^-24 when fused. Half of the cases are these operands (scaled by a power of two, either
/// sign), half random; the operands' discrimination is checked here first.
#[test]
fn dot_product_order_and_unfused_mad() {
    let Some(gpu) = gpu() else { return };
    let big = 16_777_216.0f32;
    let p = [big, 1.0, -big, 1.0];
    let fwd = |k: usize| (1..k).fold(p[0], |acc, l| acc + p[l]);
    let rev = |k: usize| (0..k - 1).rev().fold(p[k - 1], |acc, l| acc + p[l]);
    assert_ne!(fwd(4), rev(4), "dp4 operands tell the orders apart");
    assert_ne!(fwd(3), rev(3), "dp3 operands tell the orders apart");
    let (a, c) = (1.0f32 + 1.0 / 4096.0, -(1.0f32 + 1.0 / 2048.0));
    assert_ne!(a * a + c, a.mul_add(a, c), "mad operands tell fused from unfused");
    let mut rng = Rng::new(19);
    let mut programs = Vec::new();
    for pixel in [false, true] {
        for op in ["dp4", "dp3", "mad"] {
            // mad: src2 = r0.wzyx, so lane x is r0.x * c1.x + r0.w
            let bytes = single_op(pixel, vop(op), 50, [3, 2, 1, 0]);
            let mut cases = op_cases(&mut rng, &bytes, 24);
            for (k, case) in cases.iter_mut().enumerate() {
                if k % 2 == 1 {
                    continue;
                }
                let s = [1.0f32, 2.0, 0.5, -1.0, -4.0][k / 2 % 5];
                if op == "mad" {
                    set_r0(case, [a * s.abs(), 0.5, 0.25, c * s.abs()]);
                    case.c[1] = [a, a, a, a];
                } else {
                    set_r0(case, [1.0; 4]);
                    case.c[1] = p.map(|x| x * s);
                }
            }
            programs.push(TestProgram {
                name: format!("{op} order / fusion ({})", if pixel { "pixel" } else { "vertex" }),
                bytes,
                cases,
                textures: BTreeMap::new(),
                reproduce: "cargo test --release --test verify_xenos dot_product_order_and_unfused_mad".into(),
            });
        }
    }
    let (c, _) = run_all(gpu, programs.into_iter());
    finish("dot_product_order_and_unfused_mad", &c, &["dp4", "dp3", "mad"].map(String::from), 500);
}

/// Xenos row "`ps` is not updated by a scalar op that fails its predicate":
///
/// ```text
/// setp_eq ____, r0.z          p0 = (r0.z == 0), ps = 0 or 1
/// (p0) adds ____, r0.xy       ps = r0.x + r0.y (in (2.5, 3.5)) only where p0
/// max r1, r0, r0 + retain_prev r2   r2 = ps
/// ```
///
/// r0.z is 0 in half of the cases, so the predicated op runs and fails in both shader kinds.
#[test]
fn ps_kept_when_a_scalar_op_fails_its_predicate() {
    let Some(gpu) = gpu() else { return };
    let build = |pixel: bool, condition: bool| {
        let mut setp = Alu { vop: vop("max"), sop: sop("setp_eq"), ..Default::default() };
        setp.src = [Src::r(0), Src::r(0), Src::r(0).swz([2, 2, 2, 2])];
        let mut adds = Alu { vop: vop("max"), sop: sop("adds"), predicated: true, pred_condition: condition, ..Default::default() };
        adds.src = [Src::r(0), Src::r(0), Src::r(0).swz([0, 1, 0, 1])];
        let mut keep = Alu { vop: vop("max"), sop: 50, vdst: 1, vmask: 0xF, sdst: 2, smask: 0xF, ..Default::default() };
        keep.src = [Src::r(0), Src::r(0), Src::r(0)];
        let mut body = vec![setp.encode(), adds.encode(), keep.encode()];
        body.extend(export_tail(pixel));
        cf_program(pixel, vec![CfItem::Clause(asm::EXEC_END, 0, false, body)])
    };
    let (c, _) = run_cf_shapes(gpu, 1900, "ps_kept_when_a_scalar_op_fails_its_predicate", 32, build, |rng, c| {
        let z = if rng.chance(50) { 0.0 } else { rng.below(4) as f32 + 0.5 };
        set_r0(c, [2.5, rng.below(8) as f32 / 8.0 + 0.125, z, 1.0]);
    });
    finish("ps_kept_when_a_scalar_op_fails_its_predicate", &c, &["predicated", "setp_eq", "adds", "retain_prev"].map(String::from), 200);
}

/// Xenos rows "cond_exec_pred_clean (13) tests a bool constant like cexec" and "`ret` outside a
/// subroutine does nothing":
///
/// ```text
/// 0 exec                          r1 = c4
/// 1 cexec_pred_clean b0 == C      r1 = r1 + c5
/// 2 ret                           (no subroutine: does nothing)
/// 3 exec                          r1 = r1 + c6
/// 4 exece                         exports
/// ```
///
/// b0 alternates over the cases, both conditions: the clause runs and is skipped.
#[test]
fn cexec_pred_clean_and_ret_outside_a_subroutine() {
    let Some(gpu) = gpu() else { return };
    let build = |pixel: bool, condition: bool| {
        let mut tail = vec![valu("max", 2, Src::r(1), Src::r(1))];
        tail.extend(export_tail(pixel));
        cf_program(
            pixel,
            vec![
                CfItem::Clause(asm::EXEC, 0, false, vec![valu("max", 1, Src::c(4), Src::c(4))]),
                CfItem::Clause(asm::COND_EXEC_PRED_CLEAN, 0, condition, vec![valu("add", 1, Src::r(1), Src::c(5))]),
                CfItem::Raw(asm::ret()),
                CfItem::Clause(asm::EXEC, 0, false, vec![valu("add", 1, Src::r(1), Src::c(6))]),
                CfItem::Clause(asm::EXEC_END, 0, false, tail),
            ],
        )
    };
    for pixel in [false, true] {
        let listing = shrec::formats::xenos::disasm(&build(pixel, true)).unwrap();
        // the listing names 13 as `cexec` (Xenia's reading); the must-execute list below checks the opcode
        assert!(listing.contains("cexec b0") && listing.contains("    ret\n"), "cexec_pred_clean and ret:\n{listing}");
    }
    let (c, _) = run_cf_shapes(gpu, 1901, "cexec_pred_clean_and_ret_outside_a_subroutine", 16, build, |rng, c| {
        for r in 4..=6 {
            c.c[r] = std::array::from_fn(|_| rng.dyadic(2, 2) + 0.125);
        }
    });
    finish("cexec_pred_clean_and_ret_outside_a_subroutine", &c, &[CF_NAMES[13], CF_NAMES[10]].map(String::from), 200);
}

/// `add r1, r1, c[aL]` (the loop tests' body): r1 sums the constants the loop's aL visits.
fn add_r1_c_al() -> Alu {
    let mut rel = Src::c(0);
    rel.rel = true;
    let mut add = Alu { vop: vop("add"), sop: 50, vdst: 1, vmask: 0xF, rel_a0: false, ..Default::default() };
    add.src = [Src::r(1), rel, Src::r(0)];
    add
}

/// The loop tests' tail: r2 = r1, then the stage's exports.
fn r1_exported(pixel: bool) -> Vec<[u32; 3]> {
    let mut tail = vec![valu("max", 2, Src::r(1), Src::r(1))];
    tail.extend(export_tail(pixel));
    tail
}

/// Xenos row "Loops: … aL start = bits 8-15 (unsigned), step = bits 16-23 (signed)": a loop over
/// `defi i0` with start 150 (negative if read as signed) and step +1 or −1 (255 if read as
/// unsigned), two iterations, each adding `c[aL]` to r1: r1 = c4 + c150 + c151 (step +1) or
/// c4 + c150 + c149 (step −1).
///
/// ```text
/// 0 exec           r1 = c4
/// 1 loop i0        (skips to 4 when the count is 0)
/// 2 exec           r1 = r1 + c[aL]
/// 3 endloop i0     (body 2)
/// 4 exece          r2 = r1, exports
/// ```
#[test]
fn loop_start_unsigned_and_step_signed() {
    let Some(gpu) = gpu() else { return };
    let build = |pixel: bool, up: bool| {
        let (add, tail) = (add_r1_c_al(), r1_exported(pixel));
        let step: u32 = if up { 1 } else { 0xFF };
        cf_program_with_loops(
            pixel,
            vec![
                CfItem::Clause(asm::EXEC, 0, false, vec![valu("max", 1, Src::c(4), Src::c(4))]),
                CfItem::Raw(asm::loop_start(4, 0)),
                CfItem::Clause(asm::EXEC, 0, false, vec![add.encode()]),
                CfItem::Raw(asm::loop_end(2, 0, false, false)),
                CfItem::Clause(asm::EXEC_END, 0, false, tail),
            ],
            &[(0, 2 | 150 << 8 | step << 16)],
        )
    };
    for pixel in [false, true] {
        let listing = shrec::formats::xenos::disasm(&build(pixel, false)).unwrap();
        assert!(listing.contains("loop") && listing.contains("endloop"), "a loop:\n{listing}");
    }
    let (c, _) = run_cf_shapes(gpu, 1902, "loop_start_unsigned_and_step_signed", 16, build, |rng, c| {
        c.c.resize(160, [0.0; 4]);
        c.c[4] = std::array::from_fn(|_| rng.dyadic(2, 2));
        for r in 149..=151 {
            c.c[r] = std::array::from_fn(|_| rng.dyadic(2, 2) + 0.125);
        }
    });
    finish("loop_start_unsigned_and_step_signed", &c, &["loop".to_string(), "endloop: count ran out".to_string(), "relative".to_string()], 200);
}

/// Xenos row "maxa / maxas / maxasf: a0 = (int)clamp(floor(x + 0.5) / floor(x), …); a0 changes
/// after both operations read their sources": every read of a0 is a relative constant read.
///
/// ```text
/// 1 maxas  ____, r0.x                      a0 = floor(r0.x + 0.5)
/// 2 maxa   r1, r0.xyzy, r0 + adds r2.x, c[a0 + 10].xy    the adds reads the a0 of 1; a0 = floor(r0.y + 0.5)
/// 3 maxas  r2.y, c[a0 + 20].x              reads with the a0 of 2, then a0 = floor(c[..].x + 0.5)
/// 4 max    r2.zw, c[a0 + 30], c[a0 + 30]   the a0 of 3
/// ```
///
/// r0.x, r0.y and c20-c28.x are k + {0, 0.25, 0.5, 0.75}: floor(x + 0.5) and floor(x) differ in
/// half of them.
#[test]
fn maxa_a0_changes_after_the_sources_are_read() {
    let Some(gpu) = gpu() else { return };
    let build = |pixel: bool, _: bool| {
        let rel = |r: u32| {
            let mut s = Src::c(r);
            s.rel = true;
            s
        };
        let mut i1 = Alu { vop: vop("max"), sop: sop("maxas"), ..Default::default() };
        i1.src = [Src::r(0), Src::r(0), Src::r(0).swz([0, 0, 0, 0])];
        let mut i2 = Alu { vop: vop("maxa"), sop: sop("adds"), vdst: 1, vmask: 0xF, sdst: 2, smask: 1, ..Default::default() };
        i2.src = [Src::r(0).swz([0, 1, 2, 1]), Src::r(0), rel(10).swz([0, 1, 0, 1])];
        let mut i3 = Alu { vop: vop("max"), sop: sop("maxas"), sdst: 2, smask: 2, ..Default::default() };
        i3.src = [Src::r(0), Src::r(0), rel(20).swz([0, 0, 0, 0])];
        let mut i4 = Alu { vop: vop("max"), sop: 50, vdst: 2, vmask: 0xC, ..Default::default() };
        i4.src = [rel(30), rel(30), Src::r(0)];
        let body = vec![i1.encode(), i2.encode(), i3.encode(), i4.encode()];
        cf_program(pixel, vec![CfItem::Clause(asm::EXEC, 0, false, body), CfItem::Clause(asm::EXEC_END, 0, false, export_tail(pixel))])
    };
    let (c, _) = run_cf_shapes(gpu, 1903, "maxa_a0_changes_after_the_sources_are_read", 32, build, |rng, c| {
        let v = |rng: &mut Rng| rng.below(8) as f32 + *rng.pick(&[0.0, 0.25, 0.5, 0.75]);
        let (x, y) = (v(rng), v(rng));
        set_r0(c, [x, y, 1.0, 2.0]);
        c.c.resize(48, [0.0; 4]);
        for r in 10..48 {
            c.c[r] = std::array::from_fn(|_| rng.dyadic(2, 2));
        }
        for r in 20..30 {
            c.c[r][0] = v(rng);
        }
    });
    finish("maxa_a0_changes_after_the_sources_are_read", &c, &["maxa", "maxas", "relative"].map(String::from), 200);
}

/// Xenos row "Loops: … `loop` with the repeat bit keeps aL": an inner `loop` with the repeat bit
/// (D3D9 `rep`) inside a loop over `defi i0` (start 150): the inner loop's own start (20) is not
/// loaded, its body reads `c[aL]` from 150 on with the inner step (+1 or −1); the shaped programs
/// that use the repeat bit never read aL in such a loop (mutation check in
/// docs/semantics-audit.md).
///
/// ```text
/// 0 exec               r1 = c4
/// 1 loop i0            (count 1, aL = 150)
/// 2 loop i1, repeat    (count 2; aL kept)
/// 3 exec               r1 = r1 + c[aL]
/// 4 endloop i1
/// 5 endloop i0
/// 6 exece              r2 = r1, exports
/// ```
#[test]
fn repeat_loop_keeps_al() {
    let Some(gpu) = gpu() else { return };
    let build = |pixel: bool, up: bool| {
        let (add, tail) = (add_r1_c_al(), r1_exported(pixel));
        let step: u32 = if up { 1 } else { 0xFF };
        cf_program_with_loops(
            pixel,
            vec![
                CfItem::Clause(asm::EXEC, 0, false, vec![valu("max", 1, Src::c(4), Src::c(4))]),
                CfItem::Raw(asm::loop_start(6, 0)),
                CfItem::Raw(asm::loop_start(5, 1) | 1 << 13),
                CfItem::Clause(asm::EXEC, 0, false, vec![add.encode()]),
                CfItem::Raw(asm::loop_end(3, 1, false, false)),
                CfItem::Raw(asm::loop_end(2, 0, false, false)),
                CfItem::Clause(asm::EXEC_END, 0, false, tail),
            ],
            &[(0, 1 | 150 << 8), (1, 2 | 20 << 8 | step << 16)],
        )
    };
    let (c, _) = run_cf_shapes(gpu, 1904, "repeat_loop_keeps_al", 16, build, |rng, c| {
        c.c.resize(160, [0.0; 4]);
        c.c[4] = std::array::from_fn(|_| rng.dyadic(2, 2));
        for r in (19..=21).chain(149..=151) {
            c.c[r] = std::array::from_fn(|_| rng.dyadic(2, 2) + 0.125);
        }
    });
    finish("repeat_loop_keeps_al", &c, &["loop".to_string(), "endloop: repeat".to_string(), "relative".to_string()], 200);
}
