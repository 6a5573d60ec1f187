//! Compiler-shaped AGAL programs: what real Stage3D toolchains emit, instead of the random
//! instruction soup of [`crate::agal::gen`].
//!
//! Two families, mixed in one program:
//!
//! - **AGAL2/3 if/else** as Adobe's AGALMiniAssembler accepts it (`ife / ine / ifg / ifl` with two
//!   sources and no destination, `els`, `eif`; openfl/openfl@80e9c778
//!   src/openfl/utils/AGALMiniAssembler.hx, the Haxe port of Adobe's 2015 assembler, L729-734:
//!   flags `OP_NO_DEST | OP_VERSION2 | OP_INCNEST`), nested up to [`MAX_NESTING`] — the
//!   assembler's `MAX_NESTING = 4` (same file L45; declared, never checked; the deepest real
//!   program known, Ruffle's raytrace fragment shader, nests 4, docs/isa/agal.md §11). AGAL1 has
//!   no branches (the opcodes are `OP_VERSION2`), so AGAL1 programs are straight-line only.
//!   Conditions read constants only (every pixel agrees), flat or sloped varyings against
//!   thresholds on the same grid (quads whose pixels agree and quads whose pixels split), integer
//!   varyings for `ife` / `ine` equality, sampled texels (alpha-tested branches) and temporaries
//!   computed with exact ops. Branch bodies hold `kil` (Away3D's alpha test), `tex` (2d and cube),
//!   `ddx` / `ddy`, register-indexed constant reads (vertex), nested ifs and a path-signature
//!   leaf (`add sig.l, sig.l, c.l`, a distinct power of two per leaf) written to `oc1` / `v9`, so a
//!   wrong path shows even where the data registers do not differ.
//! - **Straight-line framework code**: Starling's MeshEffect (`m44 op, va0, vc0`, `mul v0, va1,
//!   vc4`, `mov v1, va2`; `tex ft1, v1, fs0 <2d, linear, mipnone, clamp>`, `mul oc, ft1, v0`;
//!   Gamua/Starling-Framework starling/src/starling/rendering/MeshEffect.as; the sampler words
//!   and the premultiplied-alpha `mul ft.xyz, ft.xyz, ft.www` from utils/RenderUtil.as
//!   `createAGALTexOperation`: `<2d, rgba|dxt1|dxt5>` in Starling 2, the full state in Starling
//!   1's FragmentFilter `<2d, clamp, linear, mipnone>`), Away3D's GPU
//!   skinning (`dp4 vt.x, va0, vc[va4.x+N]`, `.y` from `+N+1`, `.z` from `+N+2`, `mov vt.w,
//!   va0.w`, `mul` by the joint weight, accumulated with `add`; dp3 for normals;
//!   away3d/away3d-core-fp11 src/away3d/animators/SkeletonAnimationSet.as
//!   `getAGALVertexCode`), Away3D's Blinn-Phong specular (`add`, `nrm`, `dp3`, `sat`, `pow`,
//!   `mul`; materials/methods/BasicSpecularMethod.as `getFragmentCodePerLight`), diffuse
//!   `dp3` / `max`, the alpha threshold `sub ft.w, ft.w, fc.x; kil ft.w; add ft.w, ft.w, fc.x`
//!   (BasicDiffuseMethod.as) and linear fog (`sub`, `mul`, `sat`, blend; FogMethod.as), and the
//!   branchless selects (`sge` / `slt` times a value) these frameworks use instead of branches.
//!
//! Inputs are dyadic, so every condition, index and texel choice is exact and the reference
//! interpreter decides it (no undetermined lanes from the shapes themselves). Fragment quads have
//! per-case slopes: flat quads (all four pixels equal) and sloped ones.

use crate::agal::{asm, gen, Case, TestProgram};
use crate::Rng;
use shrec::formats::agal::decode;
use shrec::formats::Stage;

/// Deepest if/els/eif nesting generated: AGALMiniAssembler's `MAX_NESTING` (see the module docs).
pub const MAX_NESTING: u32 = 4;

/// Command that reruns shaped program `index` of `seed`.
pub fn reproduce_command(seed: u64, index: u64) -> String {
    format!(
        "SHREC_FUZZ_SHAPED=1 SHREC_FUZZ_SEED={seed} SHREC_FUZZ_ONLY={index} cargo test --release -p shrec-verify --test verify_agal -- --ignored fuzz_one --nocapture"
    )
}

const L: [char; 4] = ['x', 'y', 'z', 'w'];

/// Fragment constants: fc0 = (0, 0.5, 1, 2); fc1 light direction xyz, gloss w; fc2 light colour;
/// fc3 ambient; fc4.x alpha cut-off; fc5 fog (start, 1/range); fc6 fog colour; fc7..fc15
/// thresholds on the 0.25 grid (fc8 integers 0..3 for equality); fc16..fc19 colours; fc20..fc22
/// the signature's powers of two.
const F_SIG: u32 = 20;
/// Vertex constants: vc0..vc3 MVP; vc4 alpha (Starling); vc5..vc7 colours; vc8..vc11 world;
/// vc12 camera; vc13, vc14 thresholds; vc15 integers 0..3; vc16..vc18 the signature's powers of
/// two; vc20.. joint matrices (3 rows each, 16 joints).
const V_SIG: u32 = 16;
const V_JOINTS: u32 = 20;
const JOINTS: i64 = 16;

struct G<'r> {
    rng: &'r mut Rng,
    vertex: bool,
    version: u32,
    lines: Vec<String>,
    /// Leaves written so far (signature powers).
    leaves: u32,
    /// Deepest nesting generated.
    deepest: u32,
    /// Fragment sampler words per slot (one word per slot: Flash Error #3696).
    words: [&'static str; 3],
}

impl G<'_> {
    fn lane(&mut self) -> char {
        L[self.rng.below(4) as usize]
    }
    fn grid_threshold(&mut self) -> String {
        // thresholds live in fc7, fc9..fc15 / vc13, vc14 (lane picked at random)
        let l = self.lane();
        if self.vertex {
            format!("vc{}.{l}", 13 + self.rng.below(2))
        } else {
            format!("fc{}.{l}", *self.rng.pick(&[7, 9, 10, 11, 12, 13, 14, 15]))
        }
    }

    fn leaf(&mut self) {
        let k = self.leaves % 12;
        self.leaves += 1;
        let l = L[(k % 4) as usize];
        let base = if self.vertex { V_SIG } else { F_SIG };
        let sig = if self.vertex { "vt8" } else { "ft9" };
        let c = if self.vertex { "vc" } else { "fc" };
        self.lines.push(format!("add {sig}.{l}, {sig}.{l}, {c}{}.{l}", base + k / 4));
    }

    /// An if block at nesting `depth` (the block's body is at `depth + 1`).
    fn if_block(&mut self, depth: u32, force_deep: bool) {
        let op = *self.rng.pick(&["ife", "ine", "ifg", "ifl", "ifg", "ifl"]);
        let cond = if self.vertex { self.vertex_condition(op) } else { self.fragment_condition(op) };
        self.lines.push(cond);
        self.deepest = self.deepest.max(depth + 1);
        self.block(depth + 1, force_deep);
        if self.rng.chance(55) {
            self.lines.push("els".into());
            self.block(depth + 1, false);
        }
        self.lines.push("eif".into());
    }

    /// A branch body: a signature leaf, then 1..2 items (one of them the deep chain's next if).
    fn block(&mut self, depth: u32, force_deep: bool) {
        self.leaf();
        let n = self.rng.range(1, 2);
        let deep_at = if force_deep && depth < MAX_NESTING { Some(self.rng.below(n as u64) as i64) } else { None };
        for i in 0..n {
            if Some(i) == deep_at {
                self.if_block(depth, true);
            } else {
                self.item(depth);
            }
        }
    }

    fn item(&mut self, depth: u32) {
        let nest = self.version >= 2 && depth < MAX_NESTING && self.rng.chance(if depth == 0 { 30 } else { 15 });
        if nest {
            self.if_block(depth, false);
        } else if self.vertex {
            self.vertex_item(depth);
        } else {
            self.fragment_item(depth);
        }
    }

    // ---- fragment programs -------------------------------------------------------------------

    fn fragment_condition(&mut self, op: &str) -> String {
        let l = self.lane();
        match (op, self.rng.below(5)) {
            // equality on integer varyings (v8) against integer constants (fc8)
            ("ife" | "ine", k) if k < 3 => format!("{op} v8.{l}, fc8.{}", self.lane()),
            ("ife" | "ine", _) => {
                let t = self.grid_threshold();
                format!("{op} v5.{l}, {t}")
            }
            // constants only: every pixel of every quad agrees (ft7 = fc7 .. copied in the prologue)
            (_, 0) => {
                let t = self.grid_threshold();
                format!("{op} ft7.{l}, {t}")
            }
            // a sampled texel (alpha-tested branch): texels differ per pixel
            (_, 1) => {
                let slot = *self.rng.pick(&[0, 2]);
                let w = self.words[slot];
                self.lines.push(format!("tex ft4, v0, fs{slot} <{w}>"));
                let t = self.grid_threshold();
                format!("{op} ft4.{l}, {t}")
            }
            // a temporary computed with exact ops
            (_, 2) => {
                let (a, b) = (self.lane(), self.lane());
                self.lines.push(format!("add ft8, v5.{a}{b}{a}{b}, v6"));
                let t = self.grid_threshold();
                format!("{op} ft8.{l}, {t}")
            }
            // a varying, flat or sloped per case
            _ => {
                let v = *self.rng.pick(&["v5", "v6"]);
                let t = self.grid_threshold();
                format!("{op} {v}.{l}, {t}")
            }
        }
    }

    fn fragment_item(&mut self, depth: u32) {
        let v2 = self.version >= 2;
        match self.rng.below(12) {
            // colour arithmetic on ft1 (exact ops)
            0 => {
                let line = match self.rng.below(6) {
                    // Starling's conversion of a non-premultiplied texel (RenderUtil.as)
                    5 => "mul ft1.xyz, ft1.xyz, ft1.www".to_string(),
                    0 => format!("mul ft1.xyz, ft1.xyz, fc{}.xyz", 16 + self.rng.below(4)),
                    1 => format!("add ft1, ft1, fc{}", 16 + self.rng.below(4)),
                    2 => "sat ft1, ft1".to_string(),
                    3 => "mul ft1, ft1, v1".to_string(),
                    _ => "max ft1, ft1, fc0.xxxx".to_string(),
                };
                self.lines.push(line);
            }
            // a second texture, blended (Starling's multi-texture / Away3D's detail maps)
            1 | 2 => {
                let (slot, coord) = if self.rng.chance(30) {
                    (1, "v7".to_string())
                } else if self.rng.chance(30) {
                    self.lines.push("add ft5, v0, fc0.xxxx".into());
                    (2, "ft5".to_string())
                } else {
                    (*self.rng.pick(&[0, 2]), "v0".to_string())
                };
                let w = self.words[slot];
                self.lines.push(format!("tex ft4, {coord}, fs{slot} <{w}>"));
                let blend = match self.rng.below(3) {
                    0 => "mul ft1, ft1, ft4",
                    1 => "add ft1.xyz, ft1.xyz, ft4.xyz",
                    _ => "mul ft1.w, ft1.w, ft4.w",
                };
                self.lines.push(blend.into());
            }
            // Away3D's alpha threshold (in a branch: kil discards only that side's pixels)
            3 | 4 => {
                if self.rng.chance(50) {
                    self.lines.push("sub ft1.w, ft1.w, fc4.x".into());
                    self.lines.push("kil ft1.w".into());
                    self.lines.push("add ft1.w, ft1.w, fc4.x".into());
                } else {
                    let v = *self.rng.pick(&["v5", "v6"]);
                    let l = self.lane();
                    let (c, cl, kl) = (*self.rng.pick(&[7, 9, 10]), self.lane(), self.lane());
                    self.lines.push(format!("sub ft6, {v}.{l}, fc{c}.{cl}"));
                    self.lines.push(format!("kil ft6.{kl}"));
                }
            }
            // derivatives (AGAL2): of a varying or of the colour, accumulated in ft10 → oc2
            5 | 6 if v2 => {
                let op = if self.rng.chance(50) { "ddx" } else { "ddy" };
                let src = *self.rng.pick(&["v5", "v6", "v1", "ft1", "ft8.yzwx"]);
                self.lines.push(format!("{op} ft6, {src}"));
                self.lines.push("add ft10, ft10, ft6".into());
            }
            // diffuse term (Away3D BasicDiffuseMethod): dp3 / max / mul
            7 => {
                self.lines.push("nrm ft2.xyz, v2".into());
                self.lines.push("dp3 ft3.x, ft2.xyz, fc1.xyz".into());
                self.lines.push("max ft3.x, ft3.x, fc0.x".into());
                self.lines.push("mul ft3.xyz, fc2.xyz, ft3.x".into());
                self.lines.push("add ft1.xyz, ft1.xyz, ft3.xyz".into());
            }
            // branchless select (sge / slt as a 0/1 factor)
            8 | 9 => {
                let op = *self.rng.pick(&["sge", "slt", "seq", "sne"]);
                let (v, c) =
                    if (op == "seq" || op == "sne") && v2 { ("v8", "fc8".to_string()) } else { ("v5", format!("fc{}", *self.rng.pick(&[7, 9, 11]))) };
                self.lines.push(format!("{op} ft3, {v}, {c}"));
                self.lines.push(format!("mul ft3, ft3, fc{}", 16 + self.rng.below(4)));
                self.lines.push("add ft1, ft1, ft3".into());
            }
            _ => {
                if v2 && depth < 2 {
                    self.if_block(depth, false);
                } else {
                    self.lines.push("mul ft1, ft1, v1".into());
                }
            }
        }
    }

    fn fragment(&mut self, deep: bool) {
        let v2 = self.version >= 2;
        // Prologue (Starling MeshEffect / Away3D albedo).
        let w0 = self.words[0];
        self.lines.push(format!("tex ft1, v0, fs0 <{w0}>"));
        self.lines.push("mul ft1, ft1, v1".into());
        if v2 {
            self.lines.push("mov ft9, fc0.xxxx".into());
            self.lines.push("mov ft10, fc0.xxxx".into());
            self.lines.push("mov ft7, fc7".into());
            self.lines.push("mov ft8, v6".into());
        }
        // Alpha test right after the albedo (Away3D) in some programs.
        if self.rng.chance(25) {
            self.lines.push("sub ft1.w, ft1.w, fc4.x".into());
            self.lines.push("kil ft1.w".into());
            self.lines.push("add ft1.w, ft1.w, fc4.x".into());
        }
        if deep && v2 {
            self.if_block(0, true);
        }
        for _ in 0..self.rng.range(1, 3) {
            self.item(0);
        }
        // Epilogue: specular (Away3D BasicSpecularMethod), fog (FogMethod), outputs.
        if self.rng.chance(40) {
            self.lines.push("nrm ft2.xyz, v2".into());
            self.lines.push("add ft3.xyz, fc1.xyz, v3.xyz".into());
            self.lines.push("nrm ft3.xyz, ft3.xyz".into());
            self.lines.push("dp3 ft3.w, ft2.xyz, ft3.xyz".into());
            self.lines.push("sat ft3.w, ft3.w".into());
            self.lines.push("pow ft3.w, ft3.w, fc1.w".into());
            self.lines.push("mul ft3.xyz, fc2.xyz, ft3.w".into());
            self.lines.push("add ft1.xyz, ft1.xyz, ft3.xyz".into());
        }
        if self.rng.chance(40) {
            self.lines.push("sub ft5.w, v4.z, fc5.x".into());
            self.lines.push("mul ft5.w, ft5.w, fc5.y".into());
            self.lines.push("sat ft5.w, ft5.w".into());
            self.lines.push("sub ft6, fc6, ft1".into());
            self.lines.push("mul ft6, ft6, ft5.w".into());
            self.lines.push("add ft1, ft1, ft6".into());
        }
        self.lines.push(if v2 { "mov oc0, ft1" } else { "mov oc, ft1" }.into());
        if v2 {
            self.lines.push("mov oc1, ft9".into());
            self.lines.push("mov oc2, ft10".into());
        }
    }

    // ---- vertex programs ---------------------------------------------------------------------

    fn vertex_condition(&mut self, op: &str) -> String {
        let l = self.lane();
        match (op, self.rng.below(4)) {
            ("ife" | "ine", k) if k < 3 => format!("{op} va7.{l}, vc15.{}", self.lane()),
            // constants only (vt10 = vc14, copied in the prologue)
            (_, 0) => {
                let t = self.grid_threshold();
                format!("{op} vt10.{l}, {t}")
            }
            // computed with exact ops
            (_, 1) => {
                let (a, b) = (self.lane(), self.lane());
                self.lines.push(format!("add vt11, va6.{a}{b}{a}{b}, va7"));
                let t = self.grid_threshold();
                format!("{op} vt11.{l}, {t}")
            }
            // a register-indexed constant read (a joint's row) as the condition
            (_, 2) => {
                let j = self.lane();
                self.lines.push(format!("mov vt11, vc[va4.{j}+{}]", V_JOINTS));
                format!("{op} vt11.{l}, va6.{}", self.lane())
            }
            _ => {
                let t = self.grid_threshold();
                format!("{op} va6.{l}, {t}")
            }
        }
    }

    fn vertex_item(&mut self, depth: u32) {
        // Accumulator, select and index temporaries (AGAL1 has vt0..vt7 only).
        let (acc, sel, idx) = if self.version >= 2 { ("vt9", "vt3", "vt12") } else { ("vt3", "vt4", "vt4") };
        let text = self.vertex_item_text(depth);
        for line in text {
            self.lines.push(line.replace("$acc", acc).replace("$sel", sel).replace("$idx", idx));
        }
    }

    fn vertex_item_text(&mut self, depth: u32) -> Vec<String> {
        let mut out = Vec::new();
        match self.rng.below(8) {
            0 | 1 => {
                let line = match self.rng.below(4) {
                    0 => format!("mul $acc.xyz, $acc.xyz, vc{}.xyz", 5 + self.rng.below(3)),
                    1 => format!("add $acc, $acc, vc{}", 5 + self.rng.below(3)),
                    2 => "add $acc, $acc, va6".to_string(),
                    _ => "sat $acc, $acc".to_string(),
                };
                out.push(line);
            }
            // a register-indexed read in the body (joint row by attribute or by temp)
            2 | 3 => {
                let j = self.lane();
                let row = self.rng.below(3);
                if self.rng.chance(50) {
                    out.push(format!("add $acc, $acc, vc[va4.{j}+{}]", V_JOINTS as u64 + row));
                } else {
                    out.push("mov $idx, va4".into());
                    out.push(format!("mul $acc, $acc, vc[$idx.{j}+{}].wzyx", V_JOINTS as u64 + row));
                }
            }
            // branchless select
            4 => {
                let op = *self.rng.pick(&["sge", "slt", "seq", "sne"]);
                let (a, c) = if op == "seq" || op == "sne" { ("va7", "vc15") } else { ("va6", "vc13") };
                out.push(format!("{op} $sel, {a}, {c}"));
                out.push("add $acc, $acc, $sel".into());
            }
            5 => {
                out.push(format!("dp3 $acc.w, $acc.xyz, vc{}.xyz", 5 + self.rng.below(3)));
            }
            _ => {
                if self.version >= 2 && depth < 2 {
                    self.if_block(depth, false);
                } else {
                    out.push("add $acc, $acc, va6".into());
                }
            }
        }
        out
    }

    fn vertex(&mut self, deep: bool) {
        let v2 = self.version >= 2;
        // Skinning (Away3D SkeletonAnimationSet) of the position (dp4) and the normal (dp3).
        let joints = if self.rng.chance(60) { self.rng.range(1, 4) as usize } else { 0 };
        let by_temp = self.rng.chance(30);
        if by_temp && joints > 0 {
            self.lines.push("mov vt5, va4".into());
        }
        let index = if by_temp { "vt5" } else { "va4" };
        if joints == 0 {
            self.lines.push("mov vt1, va0".into());
            self.lines.push("mov vt2, va3".into());
        }
        for (src, acc, dot) in [("va0", "vt1", "dp4"), ("va3", "vt2", "dp3")] {
            for j in 0..joints {
                let l = L[j];
                if self.rng.chance(20) && dot == "dp4" {
                    // the older form: one m34 per joint
                    self.lines.push(format!("m34 vt0.xyz, {src}, vc[{index}.{l}+{V_JOINTS}]"));
                } else {
                    for (k, d) in ["x", "y", "z"].iter().enumerate() {
                        self.lines.push(format!("{dot} vt0.{d}, {src}, vc[{index}.{l}+{}]", V_JOINTS as usize + k));
                    }
                }
                self.lines.push(format!("mov vt0.w, {src}.w"));
                self.lines.push(format!("mul vt0, vt0, va5.{l}"));
                self.lines.push(if j == 0 { format!("mov {acc}, vt0") } else { format!("add {acc}, {acc}, vt0") });
            }
        }
        // Projection and Starling's colour / uv.
        if self.rng.chance(50) {
            self.lines.push("m44 op, vt1, vc0".into());
        } else {
            self.lines.push("m44 vt6, vt1, vc0".into());
            self.lines.push("mov op, vt6".into());
        }
        self.lines.push("mul v0, va1, vc4".into());
        self.lines.push("mov v1, va2".into());
        // Away3D: world position, view direction, world normal.
        if self.rng.chance(60) {
            self.lines.push("m44 vt6, vt1, vc8".into());
            self.lines.push("sub v2, vc12, vt6".into());
            self.lines.push("m33 vt7.xyz, vt2, vc8".into());
            self.lines.push("mov vt7.w, va3.w".into());
            self.lines.push("mov v3, vt7".into());
        }
        if v2 {
            self.lines.push("mov vt8, vc13.xxxx".into());
            self.lines.push("sub vt8, vt8, vc13.xxxx".into());
            self.lines.push("mov vt9, va6".into());
            self.lines.push("mov vt10, vc14".into());
            if deep {
                self.if_block(0, true);
            }
            for _ in 0..self.rng.range(1, 3) {
                self.item(0);
            }
            self.lines.push("mov v4, vt9".into());
            self.lines.push("mov v9, vt8".into());
        } else {
            self.lines.push("mov vt3, va6".into());
            for _ in 0..self.rng.range(0, 3) {
                self.vertex_item(0);
            }
            self.lines.push("mov v4, vt3".into());
        }
    }
}

/// Shaped program `index` of `seed` and the deepest if-nesting its text has.
pub fn shaped_program_and_depth(seed: u64, index: u64) -> (TestProgram, u32) {
    let mut rng = Rng::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index.wrapping_mul(0x100_0000_01B3) ^ 0x5A5A_0019);
    let vertex = rng.chance(40);
    let version = match rng.below(20) {
        0..=4 => 1,
        5..=17 => 2,
        _ => 3,
    };
    // Every third AGAL2/3 program nests a chain to MAX_NESTING.
    let deep = version >= 2 && rng.chance(35);
    let words = [
        // Starling 1 writes the sampler state into the word (`<2d, clamp, linear, mipnone>`),
        // Starling 2 only the format (`<2d, rgba>` / `<2d, dxt1>`; the rest through
        // setSamplerStateAt, RenderUtil.as), Away3D `<2d,linear,miplinear,repeat>`.
        *rng.pick(&[
            "2d, linear, mipnone, clamp",
            "2d, clamp, linear, mipnone",
            "2d,linear,miplinear,repeat",
            "2d, nearest, mipnearest, repeat, dxt1",
            "2d, rgba",
            "2d, dxt1",
        ]),
        *rng.pick(&["cube, linear, miplinear", "cube,nearest,mipnone,clamp", "cube, linear, mipnone, clamp"]),
        *rng.pick(&["2d, linear, mipnone, repeat, dxt5", "2d,nearest,mipnone,clamp", "2d, linear, miplinear, repeat, -0.5"]),
    ];
    let mut g = G { rng: &mut rng, vertex, version, lines: Vec::new(), leaves: 0, deepest: 0, words };
    if vertex {
        g.vertex(deep);
    } else {
        g.fragment(deep);
    }
    let (lines, deepest) = (std::mem::take(&mut g.lines), g.deepest);
    let limits = decode::limits(version);
    assert!(lines.len() <= limits.tokens, "shaped program has {} tokens, AGAL{version} allows {}", lines.len(), limits.tokens);
    let text = lines.join("\n");
    let stage = if vertex { Stage::Vertex } else { Stage::Pixel };
    let bytes = asm::assemble(version, stage, &text).unwrap_or_else(|e| panic!("shaped generator produced invalid assembly: {e}\n{text}"));
    let (cases, textures) = if vertex {
        ((0..24).map(|_| vertex_case(&mut rng)).collect(), Vec::new())
    } else {
        let t = gen::textures(&mut rng);
        ((0..8).map(|_| fragment_case(&mut rng)).collect(), t)
    };
    let p = TestProgram { name: format!("shaped seed {seed} program {index}"), bytes, cases, textures, reproduce: reproduce_command(seed, index) };
    (p, deepest)
}

/// Shaped program `index` of `seed`.
pub fn shaped_program(seed: u64, index: u64) -> TestProgram {
    shaped_program_and_depth(seed, index).0
}

fn grid(rng: &mut Rng) -> f32 {
    rng.range(-8, 8) as f32 * 0.25
}

fn fragment_case(rng: &mut Rng) -> Case {
    let mut c = Case { varyings: vec![[0.0; 4]; 10], slope_x: vec![[0.0; 4]; 10], slope_y: vec![[0.0; 4]; 10], ..Default::default() };
    // v0: texel centres of an 8×8 grid, one texel step per pixel.
    c.varyings[0] = [(rng.range(0, 5) as f32 + 0.5) / 8.0, (rng.range(0, 5) as f32 + 0.5) / 8.0, 0.0, 0.0];
    c.slope_x[0] = [0.125, 0.0, 0.0, 0.0];
    c.slope_y[0] = [0.0, 0.125, 0.0, 0.0];
    c.varyings[1] = std::array::from_fn(|_| rng.range(0, 15) as f32 / 16.0);
    c.varyings[2] = std::array::from_fn(|_| rng.dyadic(1, 4));
    c.varyings[2][rng.below(3) as usize] = 1.5;
    c.varyings[3] = std::array::from_fn(|_| rng.dyadic(1, 4));
    c.varyings[4] = std::array::from_fn(|_| rng.range(0, 63) as f32 / 16.0);
    // Flat quads (every pixel equal) or sloped ones, per case.
    let flat = rng.chance(40);
    for v in [5, 6] {
        c.varyings[v] = std::array::from_fn(|_| grid(rng));
        if !flat {
            c.slope_x[v] = std::array::from_fn(|_| *rng.pick(&[0.0, 0.25, 0.5, -0.5, 1.0]));
            c.slope_y[v] = std::array::from_fn(|_| *rng.pick(&[0.0, 0.25, -0.25, 0.5, -1.0]));
        }
    }
    c.slope_x[4] = [0.0, 0.0, if flat { 0.0 } else { 0.25 }, 0.0];
    let mut dir = [rng.dyadic(0, 4) * 0.5, rng.dyadic(0, 4) * 0.5, if rng.chance(50) { 1.0 } else { -1.0 }, 1.0];
    dir.swap(2, rng.below(3) as usize);
    c.varyings[7] = dir;
    c.varyings[8] = std::array::from_fn(|_| rng.range(0, 3) as f32);
    if !flat {
        c.slope_x[8] = std::array::from_fn(|_| *rng.pick(&[0.0, 1.0]));
        c.slope_y[8] = std::array::from_fn(|_| *rng.pick(&[0.0, -1.0]));
    }
    let mut k: Vec<[f32; 4]> = (0..24).map(|_| std::array::from_fn(|_| rng.dyadic(1, 4))).collect();
    k[0] = [0.0, 0.5, 1.0, 2.0];
    k[1] = [rng.dyadic(0, 3), rng.dyadic(0, 3), 0.75, *rng.pick(&[1.0, 2.0, 4.0, 8.0])];
    k[2] = std::array::from_fn(|_| rng.range(0, 8) as f32 / 8.0);
    k[3] = std::array::from_fn(|_| rng.range(0, 4) as f32 / 8.0);
    k[4] = [rng.range(0, 16) as f32 / 16.0, 0.0, 0.0, 0.0];
    k[5] = [rng.range(0, 8) as f32 / 4.0, *rng.pick(&[0.25, 0.5, 1.0]), 0.0, 0.0];
    k[6] = std::array::from_fn(|_| rng.range(0, 8) as f32 / 8.0);
    for t in 7..=15 {
        k[t] = std::array::from_fn(|_| grid(rng));
    }
    k[8] = std::array::from_fn(|_| rng.range(0, 3) as f32);
    for s in 0..3 {
        k[F_SIG as usize + s] = std::array::from_fn(|i| (1u32 << (4 * s + i)) as f32);
    }
    c.constants = k;
    c
}

fn vertex_case(rng: &mut Rng) -> Case {
    let mut a: Vec<[f32; 4]> = (0..8).map(|_| std::array::from_fn(|_| rng.dyadic(2, 6))).collect();
    a[0][3] = 1.0;
    a[1] = std::array::from_fn(|_| rng.range(0, 63) as f32 / 64.0);
    a[2] = std::array::from_fn(|_| rng.range(0, 63) as f32 / 64.0);
    a[3] = std::array::from_fn(|_| rng.dyadic(1, 4));
    a[3][3] = 0.0;
    // Away3D joint indices are register offsets: joint × 3 (three rows per joint).
    a[4] = std::array::from_fn(|_| (rng.range(0, JOINTS - 1) * 3) as f32);
    a[5] = std::array::from_fn(|_| *rng.pick(&[0.0, 0.25, 0.5, 0.75, 1.0]));
    a[6] = std::array::from_fn(|_| grid(rng));
    a[7] = std::array::from_fn(|_| rng.range(0, 3) as f32);
    let mut k: Vec<[f32; 4]> = (0..128).map(|_| std::array::from_fn(|_| rng.dyadic(1, 6))).collect();
    k[4] = [rng.range(0, 16) as f32 / 16.0; 4];
    k[13] = std::array::from_fn(|_| grid(rng));
    k[14] = std::array::from_fn(|_| grid(rng));
    k[15] = std::array::from_fn(|_| rng.range(0, 3) as f32);
    for s in 0..3 {
        k[V_SIG as usize + s] = std::array::from_fn(|i| (1u32 << (4 * s + i)) as f32);
    }
    Case { constants: k, attributes: a, ..Default::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shrec::formats::agal::decode::{decode, DecodeOptions};

    /// Every shaped program decodes (Flash's validation rules: one constant per instruction,
    /// register ranges per version, balanced if/els/eif, one sampler word per slot) and stays
    /// within its version's token limit (200 / 1024 / 2048).
    #[test]
    fn shaped_programs_decode_within_limits() {
        let (mut total, mut most, mut deepest) = (0, 0, 0);
        for i in 0..400 {
            let (p, depth) = shaped_program_and_depth(1, i);
            let prog = decode(&p.bytes, DecodeOptions::default()).unwrap_or_else(|e| panic!("program {i}: {e}"));
            assert!(prog.tokens.len() <= decode::limits(prog.version).tokens);
            if prog.version == 1 {
                assert_eq!(depth, 0, "AGAL1 has no if");
            }
            total += prog.tokens.len();
            most = most.max(prog.tokens.len());
            deepest = deepest.max(depth);
        }
        println!("400 shaped programs: {total} tokens, at most {most}, deepest nesting {deepest}");
        assert_eq!(deepest, MAX_NESTING);
    }
}
