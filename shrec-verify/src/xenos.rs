//! Xenos adapter of the verification harness: runs shrec's exact cache SPIR-V of a Xenos container
//! on lavapipe through XenosRecomp's runtime ABI (constants and SharedConstants by buffer device
//! address in push constants, bindless texture / sampler heaps at sets 0 and 3) and compares every
//! output lane with [`crate::interp::xenos`].
//!
//! Also: a microcode assembler ([`asm`]), a container writer ([`container`]) and a generator of
//! random valid programs ([`gen`]) for the fuzz tests.

use super::check::VertexExpect;
use super::vk::{AddressPush, FragmentJob, FragmentQuad, Gpu, PixelCapture, Slot, TextureSpec, VertexCapture, VertexInvocation, VertexJob};
use super::{Comparison, Expect, Rng, TextureShape};
use crate::interp::xenos::{self as interp, State, Texture};
use shrec::dxc::{self, Target};
use shrec::formats::xenos::container::{self as xc, Container};
use shrec::formats::xenos::lower::{interpolator_location, vertex_input_location, LowerOptions};
use shrec::formats::xenos::ucode::{self, Instr, Program};
use shrec::ir::Semantic;
use std::collections::BTreeMap;
use std::fmt::Write;

#[path = "xenos_heaps.rs"]
mod heaps;
#[path = "xenos_shaped.rs"]
mod shaped;

/// Microcode encoders (bit layouts as `ucode.rs` / Xenia's ucode.h).
pub mod asm {
    /// CF opcodes.
    pub const EXEC: u64 = 1;
    pub const EXEC_END: u64 = 2;
    pub const COND_EXEC: u64 = 3;
    pub const COND_EXEC_END: u64 = 4;
    pub const COND_EXEC_PRED: u64 = 5;
    pub const COND_EXEC_PRED_END: u64 = 6;
    pub const LOOP_START: u64 = 7;
    pub const LOOP_END: u64 = 8;
    pub const CALL: u64 = 9;
    pub const RET: u64 = 10;
    pub const JMP: u64 = 11;
    pub const ALLOC: u64 = 12;
    pub const COND_EXEC_PRED_CLEAN: u64 = 13;
    pub const COND_EXEC_PRED_CLEAN_END: u64 = 14;

    /// An exec-family CF instruction; `fetch[i]` marks instruction i as a fetch.
    pub fn exec(op: u64, address: u32, fetch: &[bool], bool_address: u32, condition: bool) -> u64 {
        let mut seq = 0u64;
        for (i, &f) in fetch.iter().enumerate() {
            seq |= (f as u64) << (2 * i);
        }
        address as u64 | (fetch.len() as u64) << 12 | seq << 16 | (bool_address as u64) << 34 | (condition as u64) << 42 | op << 44
    }
    pub fn jmp(target: u32, unconditional: bool, predicated: bool, condition: bool, bool_address: u32) -> u64 {
        target as u64 | (unconditional as u64) << 13 | (predicated as u64) << 14 | (bool_address as u64) << 34 | (condition as u64) << 42 | JMP << 44
    }
    /// cond_call: the same fields as cond_jmp.
    pub fn call(target: u32, unconditional: bool, predicated: bool, condition: bool, bool_address: u32) -> u64 {
        jmp(target, unconditional, predicated, condition, bool_address) & !(0xF << 44) | CALL << 44
    }
    pub fn ret() -> u64 {
        RET << 44
    }
    pub fn loop_start(skip_target: u32, loop_id: u32) -> u64 {
        skip_target as u64 | (loop_id as u64) << 16 | LOOP_START << 44
    }
    pub fn loop_end(body_target: u32, loop_id: u32, predicated_break: bool, condition: bool) -> u64 {
        body_target as u64 | (loop_id as u64) << 16 | (predicated_break as u64) << 21 | (condition as u64) << 42 | LOOP_END << 44
    }
    pub fn alloc(size: u32, ty: u32) -> u64 {
        size as u64 | (ty as u64) << 41 | ALLOC << 44
    }

    /// One ALU operand: temp (abs, relative to aL) or constant (relative per the instruction).
    #[derive(Clone, Copy, Debug)]
    pub struct Src {
        pub temp: bool,
        pub reg: u32,
        pub abs: bool,
        pub rel: bool,
        pub negate: bool,
        /// Vector: component per lane; scalar: [a, b, ..].
        pub swizzle: [u8; 4],
    }
    impl Src {
        pub fn r(reg: u32) -> Src {
            Src { temp: true, reg, abs: false, rel: false, negate: false, swizzle: [0, 1, 2, 3] }
        }
        pub fn c(reg: u32) -> Src {
            Src { temp: false, ..Src::r(reg) }
        }
        pub fn swz(mut self, s: [u8; 4]) -> Src {
            self.swizzle = s;
            self
        }
        pub fn neg(mut self) -> Src {
            self.negate = true;
            self
        }
    }

    #[derive(Clone, Copy, Debug)]
    pub struct Alu {
        pub vop: u32,
        pub sop: u32,
        pub vdst: u32,
        pub sdst: u32,
        pub vmask: u32,
        pub smask: u32,
        pub vclamp: bool,
        pub sclamp: bool,
        pub export: bool,
        /// Export only: lanes in neither mask are written with 0 (scalar_dest_rel bit).
        pub export_zero: bool,
        pub predicated: bool,
        pub pred_condition: bool,
        /// Relative constants use a0 (true) or aL.
        pub rel_a0: bool,
        pub abs_constants: bool,
        pub src: [Src; 3],
    }

    impl Default for Alu {
        fn default() -> Alu {
            Alu {
                vop: 0,
                sop: 50,
                vdst: 0,
                sdst: 0,
                vmask: 0,
                smask: 0,
                vclamp: false,
                sclamp: false,
                export: false,
                export_zero: false,
                predicated: false,
                pred_condition: false,
                rel_a0: true,
                abs_constants: false,
                src: [Src::r(0); 3],
            }
        }
    }

    impl Alu {
        pub fn encode(&self) -> [u32; 3] {
            let mut d0 = self.vdst | (self.abs_constants as u32) << 7 | self.sdst << 8 | (self.export_zero as u32) << 14;
            d0 |= (self.export as u32) << 15 | self.vmask << 16 | self.smask << 20;
            d0 |= (self.vclamp as u32) << 24 | (self.sclamp as u32) << 25 | self.sop << 26;
            let mut d1 = (self.pred_condition as u32) << 27 | (self.predicated as u32) << 28 | (self.rel_a0 as u32) << 29;
            let mut d2 = self.vop << 24;
            let mut const_slot = 0;
            for (i, s) in self.src.iter().enumerate() {
                // Swizzle: vector lanes ((s >> 2k) + k) & 3; src3 also carries the scalar a/b
                // selects (a in bits 6-7 as (a - 3) & 3, b in bits 0-1) when the scalar op reads it.
                let sw: u32 = if i == 2 && self.sop != 50 && self.vop_operands() < 3 {
                    (((s.swizzle[0] as u32).wrapping_sub(3) & 3) << 6) | (s.swizzle[1] as u32 & 3)
                } else {
                    (0..4).map(|k| (((s.swizzle[k] as u32).wrapping_sub(k as u32)) & 3) << (2 * k)).sum()
                };
                d1 |= sw << (16 - 8 * i as u32);
                d1 |= (s.negate as u32) << (26 - i as u32);
                let reg = if s.temp { s.reg & 0x3F | (s.rel as u32) << 6 | (s.abs as u32) << 7 } else { s.reg & 0xFF };
                d2 |= reg << (16 - 8 * i as u32);
                d2 |= (s.temp as u32) << (31 - i as u32);
                if !s.temp && s.rel {
                    d1 |= 1 << (31 - const_slot);
                }
                if !s.temp {
                    const_slot += 1;
                }
            }
            [d0, d1, d2]
        }
        fn vop_operands(&self) -> u8 {
            shrec::formats::xenos::ucode::VECTOR_OPS[self.vop as usize].1
        }
    }

    /// `vfetch rDST, r0.x, vf0` (full fetch, 32_32_32_32_FLOAT) with a destination swizzle
    /// (0-3 lane, 4 = 0, 5 = 1, 7 = keep).
    pub fn vfetch(dst: u32, dst_swizzle: [u8; 4], predicated: bool, condition: bool) -> [u32; 3] {
        let sw: u32 = (0..4).map(|k| (dst_swizzle[k] as u32 & 7) << (3 * k)).sum();
        let d0 = (dst & 0x3F) << 12 | 1 << 19;
        let d1 = sw | 57 << 16 | (predicated as u32) << 31;
        let d2 = 16 | (condition as u32) << 31;
        [d0, d1, d2]
    }

    /// `tfetch{1D,2D} rDST, rSRC.xy, tfSLOT` (normalised coordinates, no offsets).
    pub fn tfetch(
        dst: u32,
        src: u32,
        src_swizzle: [u8; 3],
        slot: u32,
        dim: u32,
        dst_swizzle: [u8; 4],
        predicated: bool,
        condition: bool,
    ) -> [u32; 3] {
        let ssw = src_swizzle[0] as u32 | (src_swizzle[1] as u32) << 2 | (src_swizzle[2] as u32) << 4;
        let d0 = 1 | (src & 0x3F) << 5 | (dst & 0x3F) << 12 | 1 << 19 | (slot & 0x1F) << 20 | ssw << 26;
        let sw: u32 = (0..4).map(|k| (dst_swizzle[k] as u32 & 7) << (3 * k)).sum();
        let d1 = sw | 1 << 28 | (predicated as u32) << 31;
        let d2 = (dim & 3) << 14 | (condition as u32) << 31;
        [d0, d1, d2]
    }

    /// Packs CF instructions (two per 96-bit triple) followed by the instruction slots; exec
    /// addresses must already count the CF triples (`cf_triples(cf.len())`).
    pub fn microcode(cf: &[u64], slots: &[[u32; 3]]) -> Vec<u32> {
        let mut out = Vec::new();
        for pair in cf.chunks(2) {
            let a = pair[0];
            let b = pair.get(1).copied().unwrap_or(0);
            out.push(a as u32);
            out.push((a >> 32) as u32 & 0xFFFF | (b as u32 & 0xFFFF) << 16);
            out.push((b >> 16) as u32);
        }
        for s in slots {
            out.extend_from_slice(s);
        }
        out
    }
    pub fn cf_triples(n: usize) -> u32 {
        n.div_ceil(2) as u32
    }
}

/// Writes a D3D9-for-Xenon container (notes §4): no constant table, an optional definition table
/// (`float_defs` reg → value, `int_defs` loop register → packed count/start/step), vertex elements
/// (slot address, usage, index) or pixel outputs, and interpolators (reg, usage, index).
pub mod container {
    pub struct Spec<'a> {
        pub vertex: bool,
        pub microcode: &'a [u32],
        pub vertex_elements: &'a [(u32, u32, u32)],
        pub interpolators: &'a [(u32, u32, u32)],
        pub ps_outputs: u32,
        pub float_defs: &'a [(u32, [f32; 4])],
        pub int_defs: &'a [(u32, u32)],
    }

    pub fn write(s: &Spec) -> Vec<u8> {
        write_with_constants(s, &[])
    }

    /// One constant-table entry: name, register set (0 bool, 1 int4, 2 float4, 3 sampler),
    /// register index and count.
    pub type Constant<'a> = (&'a str, u16, u16, u16);

    /// [`write()`] with a constant table (D3DXSHADER_CONSTANTTABLE as the container parser and
    /// XenosRecomp read it: table header, 20-byte ConstantInfo records, NUL-terminated names;
    /// offsets relative to the table, no type info or defaults).
    pub fn write_with_constants(s: &Spec, constants: &[Constant]) -> Vec<u8> {
        let mut v: Vec<u32> = vec![0; 9];
        v[0] = 0x102A_1100 | s.vertex as u32;
        if !constants.is_empty() {
            v[4] = v.len() as u32 * 4;
            let mut names = Vec::new();
            let mut name_offs = Vec::new();
            let strings_at = 28 + 20 * constants.len();
            for (name, ..) in constants {
                name_offs.push((strings_at + names.len()) as u32);
                names.extend_from_slice(name.as_bytes());
                names.push(0);
                names.resize(names.len().div_ceil(4) * 4, 0);
            }
            let table_len = (strings_at + names.len()) as u32;
            let version = if s.vertex { 0xFFFE_0300 } else { 0xFFFF_0300 };
            v.extend_from_slice(&[table_len + 4, 28, 0, version, constants.len() as u32, 28, 0, 0]);
            for (k, &(_, set, index, count)) in constants.iter().enumerate() {
                v.extend_from_slice(&[name_offs[k], (set as u32) << 16 | index as u32, (count as u32) << 16, 0, 0]);
            }
            v.extend(names.chunks(4).map(|c| u32::from_be_bytes(c.try_into().unwrap())));
        }
        let mut def_off = 0;
        let code_bytes = (s.microcode.len() * 4) as u32;
        if !s.float_defs.is_empty() || !s.int_defs.is_empty() {
            def_off = v.len() as u32 * 4;
            v.extend_from_slice(&[0, 0, 0, 0, 0]);
            for (k, (reg, _)) in s.float_defs.iter().enumerate() {
                let reg = if s.vertex { *reg } else { reg + 256 };
                v.push(reg << 16 | 4);
                v.push(code_bytes + 16 * k as u32);
            }
            v.push(0);
            for (reg, val) in s.int_defs {
                v.push((0x2320 + 4 * reg) << 16 | 1);
                v.push(*val);
            }
            v.push(0);
        }
        let so = v.len() as u32 * 4;
        v.extend_from_slice(&[0, code_bytes, 0, 0, 0, (s.interpolators.len() as u32) << 5]);
        if s.vertex {
            v.extend_from_slice(&[1, s.vertex_elements.len() as u32, 0, 0]);
            for &(a, u, i) in s.vertex_elements {
                v.push(a & 0xFFF | (u & 0xF) << 12 | (i & 0xF) << 16);
            }
        } else {
            v.extend_from_slice(&[0, s.ps_outputs]);
        }
        for &(r, u, i) in s.interpolators {
            v.push(i & 0xF | (u & 0xF) << 4 | (r & 0xF) << 8);
        }
        let vsize = v.len() as u32 * 4;
        v.extend_from_slice(s.microcode);
        for (_, val) in s.float_defs {
            v.extend(val.iter().map(|f| f.to_bits()));
        }
        let psize = v.len() as u32 * 4 - vsize;
        v[1] = vsize;
        v[2] = psize;
        v[5] = def_off;
        v[6] = so;
        v.iter().flat_map(|w| w.to_be_bytes()).collect()
    }
}

/// Synthetic containers with constant tables, for the `--profile unleashed` tests (the names
/// XenosRecomp's UNLEASHED_RECOMP code keys on: g_MtxProjection, g_IndexCount, g_InstanceTypes,
/// g_MtxPrevInvViewProjection / sampZBuffer, tf10).
pub mod synthetic {
    use super::asm::{self, Alu, Src};
    use super::container;

    /// A synthetic vertex shader: vfetch POSITION0 → r1, POSITION1 → r2, TEXCOORD2 → r3, then
    /// oPos = r1 × [c0..c3] (row vector times a matrix, mul/mad), o0 = r2, o1 = r3, o2 = r0;
    /// `extra` elements are fetched to r4.. and added to o3.
    pub fn vertex_shader(constants: &[container::Constant], extra: &[(u32, u32)]) -> Vec<u8> {
        let base = asm::cf_triples(2);
        let mut slots =
            vec![asm::vfetch(1, [0, 1, 2, 3], false, false), asm::vfetch(2, [0, 1, 2, 3], false, false), asm::vfetch(3, [0, 1, 2, 3], false, false)];
        let mut elements = vec![(base, 0, 0), (base + 1, 0, 1), (base + 2, 5, 2)];
        for (k, &(usage, index)) in extra.iter().enumerate() {
            elements.push((base + slots.len() as u32, usage, index));
            slots.push(asm::vfetch(4 + k as u32, [0, 1, 2, 3], false, false));
        }
        let fetches = slots.len();
        let alu = |vop: u32, vdst: u32, export: bool, src: [Src; 3]| Alu { vop, vdst, vmask: 0xF, export, src, ..Alu::default() }.encode();
        let lane = |r: u32, l: u8| Src::r(r).swz([l; 4]);
        slots.push(alu(1, 10, false, [lane(1, 0), Src::c(0), Src::r(0)]));
        slots.push(alu(11, 10, false, [lane(1, 1), Src::c(1), Src::r(10)]));
        slots.push(alu(11, 10, false, [lane(1, 2), Src::c(2), Src::r(10)]));
        slots.push(alu(11, 62, true, [lane(1, 3), Src::c(3), Src::r(10)]));
        // max(x, x) = x
        slots.push(alu(2, 0, true, [Src::r(2), Src::r(2), Src::r(0)]));
        slots.push(alu(2, 1, true, [Src::r(3), Src::r(3), Src::r(0)]));
        slots.push(alu(2, 2, true, [Src::r(0), Src::r(0), Src::r(0)]));
        for k in 0..extra.len() as u32 {
            slots.push(alu(0, 3, true, [Src::r(4 + k), Src::r(4 + k), Src::r(0)]));
        }
        let fetch: Vec<bool> = (0..slots.len()).map(|i| i < fetches).collect();
        let first = fetch.len().min(6);
        let cf = [asm::exec(asm::EXEC, base, &fetch[..first], 0, false), asm::exec(asm::EXEC_END, base + first as u32, &fetch[first..], 0, false)];
        let code = asm::microcode(&cf, &slots);
        let interpolators = [(0, 5, 0), (1, 5, 1), (2, 5, 2), (3, 5, 3)];
        let spec = container::Spec {
            vertex: true,
            microcode: &code,
            vertex_elements: &elements,
            interpolators: &interpolators[..3 + !extra.is_empty() as usize],
            ps_outputs: 0,
            float_defs: &[],
            int_defs: &[],
        };
        container::write_with_constants(&spec, constants)
    }

    /// A synthetic pixel shader: tfetch2D r1 ← tf0, r2 ← tf1, r3 ← tf`gi` at r0.xy,
    /// oC0 = r1 + r2 − r3 (an alpha below 0 now and then, for the alpha test at threshold 0).
    pub fn pixel_shader(constants: &[container::Constant], gi: u32) -> Vec<u8> {
        let base = asm::cf_triples(1);
        let tf = |dst: u32, slot: u32| asm::tfetch(dst, 0, [0, 1, 2], slot, 1, [0, 1, 2, 3], false, false);
        let alu =
            |vdst: u32, export: bool, a: Src, b: Src| Alu { vop: 0, vdst, vmask: 0xF, export, src: [a, b, Src::r(0)], ..Alu::default() }.encode();
        let slots = [tf(1, 0), tf(2, 1), tf(3, gi), alu(4, false, Src::r(1), Src::r(2)), alu(0, true, Src::r(4), Src::r(3).neg())];
        let cf = [asm::exec(asm::EXEC_END, base, &[true, true, true, false, false], 0, false)];
        let code = asm::microcode(&cf, &slots);
        let spec = container::Spec {
            vertex: false,
            microcode: &code,
            vertex_elements: &[],
            interpolators: &[(0, 5, 0)],
            ps_outputs: 1,
            float_defs: &[],
            int_defs: &[],
        };
        container::write_with_constants(&spec, constants)
    }
}

/// One invocation (vertex) or one 2×2 quad (pixel).
#[derive(Clone, Debug, Default)]
pub struct Case {
    /// Float constants c0.. (the container's literal `def`s are applied over them).
    pub c: Vec<[f32; 4]>,
    /// b0-b15 of the shader's stage.
    pub booleans: u16,
    /// b16-b255 of the shader's stage (shrec's SharedConstants extension; bits 0-15 unused).
    pub ext_booleans: [u32; 8],
    /// Run-time loop constants i0-i31 of the shader's stage (shrec's SharedConstants extension).
    pub loop_constants: [u32; 32],
    /// Vertex: the value of each vertex element, by its vfetch slot address.
    pub inputs: BTreeMap<u32, [f32; 4]>,
    /// Pixel: per interpolator register, the value at the top-left pixel and its x / y slopes.
    pub base: BTreeMap<u32, [f32; 4]>,
    pub slope_x: BTreeMap<u32, [f32; 4]>,
    pub slope_y: BTreeMap<u32, [f32; 4]>,
    /// XenosRecomp's g_HalfPixelOffset (SharedConstants + 264): the vertex epilogue adds
    /// `g_HalfPixelOffset * oPos.w` to oPos.xy.
    pub half_pixel_offset: [f32; 2],
    /// XenosRecomp's g_AlphaThreshold (SharedConstants + 272): pixel shaders run with
    /// SPEC_CONSTANT_ALPHA_TEST set ([`run_spec`]) discard where `oC0.w - g_AlphaThreshold < 0`.
    pub alpha_threshold: f32,
}

#[derive(Clone, Debug)]
pub struct TestProgram {
    pub name: String,
    pub bytes: Vec<u8>,
    pub cases: Vec<Case>,
    /// Textures by fetch-constant slot (2D, shared by all cases).
    pub textures: BTreeMap<u32, Texture>,
    pub reproduce: String,
}

/// What a run saw beyond the lane counts.
#[derive(Clone, Debug, Default)]
pub struct Extra {
    /// cexec_pred / exec_pred outcomes over all cases: (taken, not taken).
    pub pred_exec: (u64, u64),
    /// Cases whose interpreter run was undetermined.
    pub undetermined: u64,
    /// Pixel quads whose four determined pixels ran the same number of CF steps with the same
    /// `(p0) exec` outcomes (lanes that agree), and quads whose pixels differ in either (lanes
    /// that took different paths).
    pub quads_uniform: u64,
    pub quads_divergent: u64,
}

impl Extra {
    /// Adds another run's counts.
    pub fn merge(&mut self, o: Extra) {
        self.pred_exec.0 += o.pred_exec.0;
        self.pred_exec.1 += o.pred_exec.1;
        self.undetermined += o.undetermined;
        self.quads_uniform += o.quads_uniform;
        self.quads_divergent += o.quads_divergent;
    }
}

fn pixel_state(c: &Container, case: &Case, p: usize, textures: &BTreeMap<u32, Texture>, spec: u32) -> State {
    let (i, j) = ((p & 1) as f32, (p >> 1) as f32);
    let mut s = state_common(c, case, textures, spec);
    for ip in &c.interpolators {
        let g = |m: &BTreeMap<u32, [f32; 4]>| m.get(&ip.reg).copied().unwrap_or([0.0; 4]);
        let (b, sx, sy) = (g(&case.base), g(&case.slope_x), g(&case.slope_y));
        s.interpolators.insert(ip.reg, std::array::from_fn(|k| b[k] + i * sx[k] + j * sy[k]));
    }
    s
}

/// Source derivatives of a quad's getGradients / getCompTexLOD (pixels 0 1 / 2 3, x to the
/// right, y down) from the sources its four pixels recorded: per source lane, ddx = right − left
/// and ddy = bottom − top, determined when every pixel executed the same number of those
/// fetches, the lane's values are exact and finite and lie on a plane (then coarse and fine
/// derivatives agree).
fn quad_gradients(runs: &[interp::Outcome]) -> Vec<[Expect; 6]> {
    let n = runs[0].gradient_sources.len();
    if runs.iter().any(|r| r.gradient_sources.len() != n) {
        return Vec::new();
    }
    (0..n)
        .map(|k| {
            let d = |lane: usize| -> Option<(f32, f32)> {
                let v: Vec<f32> = runs.iter().map(|r| r.gradient_sources[k][lane]).map(|e| e.exact_finite()).collect::<Option<_>>()?;
                let (dx, dy) = (v[1] - v[0], v[2] - v[0]);
                (v[3] - v[2] == dx && v[3] - v[1] == dy && dx.is_finite() && dy.is_finite()).then_some((dx, dy))
            };
            let mut g = [Expect::UNKNOWN; 6];
            for lane in 0..3 {
                if let Some((dx, dy)) = d(lane) {
                    g[2 * lane] = Expect::exact(dx);
                    g[2 * lane + 1] = Expect::exact(dy);
                }
            }
            g
        })
        .collect()
}

fn state_common(c: &Container, case: &Case, textures: &BTreeMap<u32, Texture>, spec: u32) -> State {
    let alpha_test = !c.is_vertex() && spec & shrec::formats::xenos::lower::SPEC_CONSTANT_ALPHA_TEST != 0;
    State {
        c: constants(c, case),
        booleans: case.booleans,
        ext_booleans: case.ext_booleans,
        loop_constants: case.loop_constants,
        vertex_inputs: case.inputs.clone(),
        interpolators: BTreeMap::new(),
        textures: textures.clone(),
        half_pixel_offset: case.half_pixel_offset,
        alpha_test: alpha_test.then_some(case.alpha_threshold),
        gradients: Vec::new(),
    }
}

/// The case's constants with the container's literal `def`s applied (the hardware register file
/// holds them; shrec folds static reads, relative reads see the uploaded values).
fn constants(c: &Container, case: &Case) -> Vec<[f32; 4]> {
    let n = if c.is_vertex() { interp::VS_CONSTANTS } else { interp::PS_CONSTANTS };
    let mut v = case.c.clone();
    v.resize(n, [0.0; 4]);
    for d in &c.float_defs {
        for (k, chunk) in d.values.chunks(4).enumerate() {
            if let Some(slot) = v.get_mut(d.register as usize + k) {
                slot[..chunk.len()].copy_from_slice(chunk);
            }
        }
    }
    v
}

fn f32_bytes(v: &[[f32; 4]]) -> Vec<u8> {
    v.iter().flatten().flat_map(|f| f.to_le_bytes()).collect()
}

/// Texture fetch-constant slots the program reads, in first-use order.
fn texture_slots(p: &Program) -> Vec<u32> {
    let mut out = Vec::new();
    for cl in &p.clauses {
        for s in cl {
            if let Instr::Fetch(f) = &s.instr {
                if f.reads_texture() && !out.contains(&f.const_index()) {
                    out.push(f.const_index());
                }
            }
        }
    }
    out
}

/// XenosRecomp's SharedConstants (288 bytes) and shrec's extension (booleans b16+ and loop
/// constants, 608 bytes in all): slot `slots[k]` reads texture heap element k and sampler heap
/// element `n - 1 - k` (see `run`). The other stage's extension words get the bitwise
/// complement, so a shader reading the wrong stage's words is caught.
/// The heap a texture is bound in (XenosRecomp's: 0 = 2D, also 1D; 1 = 3D; 2 = cube), which is
/// also its Vulkan set and the index of its `texture*Indices` array in SharedConstants.
fn heap_of(t: &Texture) -> usize {
    match t.shape {
        // (Xenos fetches have no array kind; an array is never bound here)
        TextureShape::Flat | TextureShape::FlatArray => 0,
        TextureShape::Volume => 1,
        TextureShape::Cube | TextureShape::CubeArray => 2,
    }
}

fn shared_constants(vertex: bool, case: &Case, slots: &[(u32, usize)]) -> Vec<u8> {
    let booleans = case.booleans;
    let mut b = vec![0u8; 608];
    let put = |b: &mut Vec<u8>, at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    let n = slots.len() as u32;
    // texture element: the slot's rank among the slots of its heap (texture2DIndices at 0,
    // texture3DIndices at 64, textureCubeIndices at 128)
    let mut next = [0u32; 3];
    for (k, &(s, heap)) in slots.iter().enumerate() {
        put(&mut b, 64 * heap + 4 * s as usize, next[heap]);
        next[heap] += 1;
        put(&mut b, 192 + 4 * s as usize, n - 1 - k as u32);
    }
    put(&mut b, 256, if vertex { booleans as u32 } else { (booleans as u32) << 16 });
    // g_HalfPixelOffset (float2) at 264, g_AlphaThreshold at 272 (XenosRecomp shader_common.h)
    put(&mut b, 264, case.half_pixel_offset[0].to_bits());
    put(&mut b, 268, case.half_pixel_offset[1].to_bits());
    put(&mut b, 272, case.alpha_threshold.to_bits());
    let (mine, other) = if vertex { ((288, 352), (320, 480)) } else { ((320, 480), (288, 352)) };
    for (w, &v) in case.ext_booleans.iter().enumerate() {
        put(&mut b, mine.0 + 4 * w, v);
        put(&mut b, other.0 + 4 * w, !v);
    }
    for (i, &v) in case.loop_constants.iter().enumerate() {
        put(&mut b, mine.1 + 4 * i, v);
        put(&mut b, other.1 + 4 * i, !v);
    }
    b
}

fn fmt4(v: &[f32; 4]) -> String {
    format!("({:?}, {:?}, {:?}, {:?})", v[0], v[1], v[2], v[3])
}

/// Runs one program through shrec and the GPU and compares every output lane of every case.
pub fn run(gpu: &Gpu, t: &TestProgram) -> (Comparison, Extra) {
    run_inner(gpu, t, None, None, &LowerOptions::default(), 0, None)
}

/// [`run`] with the pipeline's specialization constant 0 (XenosRecomp's `g_SpecConstants`) set
/// to `spec`; the interpreter models SPEC_CONSTANT_ALPHA_TEST (the pixel epilogue's alpha
/// test against each case's `alpha_threshold`).
pub fn run_spec(gpu: &Gpu, t: &TestProgram, spec: u32) -> (Comparison, Extra) {
    run_inner(gpu, t, None, None, &LowerOptions::default(), spec, None)
}

/// [`run`] with shrec's translation in another profile (`--profile unleashed`). The job leaves
/// every specialization constant at 0 (the harness passes no specialization info), and the
/// reference interpreter runs the program as the generic profile does: the two agree where the
/// profile's differences sit behind spec-constant bits (alpha to coverage, bicubic GI,
/// reverse-Z's oPos); the name-keyed ones (`g_IndexCount`, `sampZBuffer`, uint POSITION1 /
/// TEXCOORD2) are not modelled, and no corpus shader has them (docs/profiles.md).
pub fn run_profile(gpu: &Gpu, t: &TestProgram, opts: &LowerOptions) -> (Comparison, Extra) {
    run_inner(gpu, t, None, None, opts, 0, None)
}

/// [`run_with_spirv`] with shrec's translation (which gives the job's interface) in a profile.
pub fn run_with_spirv_profile(gpu: &Gpu, t: &TestProgram, spirv: &[u8], opts: &LowerOptions) -> (Comparison, Extra) {
    run_inner(gpu, t, None, Some(spirv), opts, 0, None)
}

/// [`run`] with another compiler's SPIR-V for the same container (XenosRecomp's, see
/// [`crate::xenosrecomp`]) in place of shrec's: the same job (inputs, constants, textures, heap
/// sizes, captured outputs, all derived from shrec's translation of the container, whose
/// interface the other module must share) and the same reference interpreter.
pub fn run_with_spirv(gpu: &Gpu, t: &TestProgram, spirv: &[u8]) -> (Comparison, Extra) {
    run_inner(gpu, t, None, Some(spirv), &LowerOptions::default(), 0, None)
}

/// What the GPU returned for one program (see [`run_versus`]).
#[derive(Clone, Debug, Default)]
pub enum Captures {
    #[default]
    None,
    Vertex(Vec<VertexCapture>),
    Pixel(Vec<[PixelCapture; 4]>),
}

/// A copy of `spirv` whose `OpSpecConstant` decorated `SpecId id` has the default `value`: the
/// module as a pipeline specialised with that value runs it (the harness passes no
/// VkSpecializationInfo). XenosRecomp's `g_SpecConstants` is spec id 0.
pub fn with_spec_constant(spirv: &[u8], id: u32, value: u32) -> Result<Vec<u8>, String> {
    let mut w: Vec<u32> = spirv.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let mut insts = Vec::new();
    let mut i = 5;
    while i < w.len() {
        let len = (w[i] >> 16) as usize;
        if len == 0 {
            return Err(format!("instruction of length 0 at word {i}"));
        }
        insts.push(i);
        i += len;
    }
    // OpDecorate (71) %target SpecId (1) id
    let target = insts.iter().find(|&&i| w[i] & 0xFFFF == 71 && w[i] >> 16 == 4 && w[i + 2] == 1 && w[i + 3] == id).map(|&i| w[i + 1]);
    let target = target.ok_or_else(|| format!("no SpecId {id}"))?;
    // OpSpecConstant (50) %type %result value
    let at = insts
        .iter()
        .find(|&&i| w[i] & 0xFFFF == 50 && w[i] >> 16 == 4 && w[i + 2] == target)
        .ok_or_else(|| format!("SpecId {id}: no 32-bit OpSpecConstant"))?;
    w[at + 3] = value;
    Ok(w.iter().flat_map(|x| x.to_le_bytes()).collect())
}

/// Two GPU runs of one program compared with each other (see [`run_versus`]).
#[derive(Clone, Debug, Default)]
pub struct Versus {
    /// Output lanes (and pixel written flags) compared.
    pub lanes: usize,
    /// Lanes where one run has +0.0 and the other −0.0 (not counted in `differing`).
    pub signed_zeros: usize,
    /// Lanes whose bits differ (NaNs of any payload, and ±0.0, count as equal).
    pub differing: usize,
    /// Of those, lanes further apart than 2^-20 relative (the rest are rounding differences).
    pub beyond_rounding: usize,
    /// The first differences.
    pub report: String,
}

/// Runs `t` on the GPU twice with the same job — shrec's SPIR-V (translated with `opts`) and
/// `other` (another compiler's SPIR-V of the same container, e.g. XenosRecomp's) — both
/// specialised with spec constant 0 = `spec`, and compares the two captures lane by lane, with
/// no reference interpreter: what an execution-parity check needs where the interpreter does not
/// model the semantics (the `--profile unleashed` paths behind spec-constant bits).
pub fn run_versus(gpu: &Gpu, t: &TestProgram, other: &[u8], opts: &LowerOptions, spec: u32) -> Result<Versus, String> {
    run_versus_specs(gpu, t, other, opts, spec, spec)
}

/// [`run_versus`] with `other` specialised with `other_spec` (a test that specialisation
/// engages: runs that should differ do).
pub fn run_versus_specs(gpu: &Gpu, t: &TestProgram, other: &[u8], opts: &LowerOptions, spec: u32, other_spec: u32) -> Result<Versus, String> {
    let capture = |spirv: Option<&[u8]>, spec: u32| {
        let mut cap = Captures::None;
        let (cmp, _) = run_inner(gpu, t, None, spirv, opts, spec, Some(&mut cap));
        match cap {
            Captures::None => Err(cmp.reports.join("\n")),
            c => Ok(c),
        }
    };
    let (a, b) = (capture(None, spec)?, capture(Some(other), other_spec)?);
    let mut v = Versus::default();
    let lane = |v: &mut Versus, what: String, x: f32, y: f32| {
        v.lanes += 1;
        if x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()) {
            return;
        }
        if x == 0.0 && y == 0.0 {
            v.signed_zeros += 1;
            return;
        }
        v.differing += 1;
        // a NaN on one side only (or an infinity against a number) is far too
        let gap = (x - y).abs();
        let far = gap.is_nan() || x.is_infinite() || y.is_infinite() || gap > x.abs().max(y.abs()) * 2f32.powi(-20);
        if far {
            v.beyond_rounding += 1;
        }
        if v.report.lines().count() < 12 {
            let _ = writeln!(v.report, "  {what}: shrec {x:?} other {y:?}{}", if far { "" } else { " (rounding)" });
        }
    };
    match (a, b) {
        (Captures::Vertex(a), Captures::Vertex(b)) => {
            for (i, (x, y)) in a.iter().zip(&b).enumerate() {
                for k in 0..4 {
                    lane(&mut v, format!("invocation {i} oPos.{k}"), x.position[k], y.position[k]);
                }
                for (l, (p, q)) in x.varyings.iter().zip(&y.varyings).enumerate() {
                    for k in 0..4 {
                        lane(&mut v, format!("invocation {i} location {l}.{k}"), p[k], q[k]);
                    }
                }
            }
        }
        (Captures::Pixel(a), Captures::Pixel(b)) => {
            for (q, (x, y)) in a.iter().zip(&b).enumerate() {
                for (p, (u, w)) in x.iter().zip(y).enumerate() {
                    v.lanes += 1;
                    if u.written != w.written {
                        v.differing += 1;
                        v.beyond_rounding += 1;
                        let _ = writeln!(v.report, "  quad {q} pixel {p}: written shrec {} other {}", u.written, w.written);
                        continue;
                    }
                    if !u.written {
                        continue;
                    }
                    for (n, (c, d)) in u.colors.iter().zip(&w.colors).enumerate() {
                        for k in 0..4 {
                            lane(&mut v, format!("quad {q} pixel {p} target {n}.{k}"), c[k], d[k]);
                        }
                    }
                    lane(&mut v, format!("quad {q} pixel {p} depth"), u.depth, w.depth);
                }
            }
        }
        _ => return Err("the two runs captured different stages".into()),
    }
    Ok(v)
}

/// Vulkan binding of shader_common.h's `g_MemExport` (register u0, space5).
pub const MEMEXPORT_SLOT: Slot = Slot { set: 5, binding: 0 };

/// [`run`] for shaders that export to memory: guest memory starts as `memory` (its length a
/// multiple of 16), the cases run as draws in order (vertex: one invocation each; pixel: one
/// 2×2 quad each), and every byte of memory after them is compared with the interpreter's
/// stores (written bytes and untouched ones alike; see `expected_memory` for what is not
/// compared).
pub fn run_with_memory(gpu: &Gpu, t: &TestProgram, memory: &[u8]) -> (Comparison, Extra) {
    run_inner(gpu, t, Some(memory), None, &LowerOptions::default(), 0, None)
}

/// The memory the interpreter's stores make of `initial` (None: byte not determined). Each run
/// is one invocation (a vertex, or a pixel); the invocations' stores may interleave in any order
/// (draws, and a draw's fragments, are not ordered for storage writes), an invocation's own
/// stores land in program order. So a byte ends as the last value some invocation stored into
/// it — or, for 8- / 16-bit elements (atomic and-then-or on their dword), the or of such last
/// values: it is determined when every invocation that stores it leaves the same value there,
/// and not when one of those values is itself undetermined (`Store::undetermined`).
fn expected_memory(initial: &[u8], runs: &[&interp::Outcome]) -> Vec<Option<u8>> {
    if runs.iter().any(|r| r.memory_undetermined || r.undetermined) {
        return vec![None; initial.len()];
    }
    let mut want: Vec<Option<u8>> = initial.iter().map(|&b| Some(b)).collect();
    let mut written = vec![false; initial.len()];
    for r in runs {
        // this invocation's last value of every byte it stores (None: not determined)
        let mut last: BTreeMap<usize, Option<u8>> = BTreeMap::new();
        for st in &r.memory {
            for (k, &b) in st.bytes.iter().enumerate() {
                let at = st.address.wrapping_add(k as u32) as usize;
                // (a byte past the buffer: the shader drops the store)
                if at < initial.len() {
                    last.insert(at, (st.undetermined >> k & 1 == 0).then_some(b));
                }
            }
        }
        for (at, b) in last {
            want[at] = if written[at] && want[at] != b { None } else { b };
            written[at] = true;
        }
    }
    want
}

/// Compares guest memory after the draws with the interpreter's stores; returns the report of
/// the first mismatching bytes (or None).
fn compare_memory(cmp: &mut Comparison, initial: &[u8], got: &[u8], runs: &[&interp::Outcome], what: &str) -> Option<String> {
    let want = expected_memory(initial, runs);
    let mut bad = String::new();
    for (at, (&g, &w)) in got.iter().zip(&want).enumerate() {
        let w = w.map_or(Expect::UNKNOWN, |b| Expect::exact(f32::from(b)));
        if !cmp.lane(f32::from(g), w) && bad.lines().count() < 16 {
            let _ = writeln!(bad, "  memory[0x{at:X}]: gpu 0x{g:02X}, reference 0x{:02X} (initial 0x{:02X})", w.value as u8, initial[at]);
        }
    }
    if bad.is_empty() {
        return None;
    }
    let mut stores = String::new();
    for (i, r) in runs.iter().enumerate() {
        for st in &r.memory {
            let _ = writeln!(stores, "  {what} {i}: 0x{:X} <- {:02X?} (undetermined bytes {:#b})", st.address, st.bytes, st.undetermined);
        }
    }
    Some(format!("memory:\n{bad}reference stores:\n{stores}"))
}

fn run_inner(
    gpu: &Gpu,
    t: &TestProgram,
    memory: Option<&[u8]>,
    spirv_override: Option<&[u8]>,
    opts: &LowerOptions,
    spec: u32,
    captures: Option<&mut Captures>,
) -> (Comparison, Extra) {
    let mut cmp = Comparison { programs: 1, ..Default::default() };
    let mut extra = Extra::default();
    let fail = |cmp: &mut Comparison, what: String| {
        cmp.mismatches += 1;
        cmp.report(format!("== {}: {what}\nreproduce: {}", t.name, t.reproduce));
    };
    let parsed = xc::parse(&t.bytes).and_then(|c| ucode::decode(&c.microcode).map(|p| (c, p)));
    let (c, prog) = match parsed {
        Ok(x) => x,
        Err(e) => {
            fail(&mut cmp, format!("container rejected: {}", e));
            return (cmp, extra);
        }
    };
    let listing = shrec::formats::xenos::disasm(&t.bytes).unwrap_or_default();
    let compiled = shrec::formats::xenos::translate_with(&t.bytes, opts).map_err(|e| format!("translate: {}", e.reason())).and_then(|tr| {
        let module = crate::mutation::applied(&tr.module);
        shrec::ir::validate(&module).map_err(|e| format!("IR validation: {e}"))?;
        if let Some(s) = spirv_override {
            return Ok((tr.module, s.to_vec()));
        }
        if crate::check::backend_from_env() == shrec::build::SpirvBackend::Direct {
            let words = shrec::spirv::write(&module, &shrec::spirv::Options::default()).map_err(|e| format!("direct SPIR-V: {e}"))?;
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            shrec_testkit::spirv_val(&bytes, "verify-direct").map_err(|e| format!("direct SPIR-V fails spirv-val: {e}"))?;
            return Ok((tr.module, bytes));
        }
        let hlsl = shrec::hlsl::write(&module);
        dxc::compile_with_spec_constants(&gpu.dxc, &hlsl, tr.module.stage, Target::Spirv, tr.spec_constants_mask)
            .map(|s| (tr.module, s))
            .map_err(|e| format!("DXC: {e}\n{hlsl}"))
    });
    let (module, spirv) = match compiled {
        Ok(x) => x,
        Err(e) => {
            fail(&mut cmp, format!("{e}\n{listing}"));
            return (cmp, extra);
        }
    };
    let slots = texture_slots(&prog);
    // One heap element per used slot (texture element k = k-th used slot); the sampler heap is
    // filled in reverse so a slot's texture and sampler indices differ, as they may in a runtime.
    let mut textures = Vec::new();
    let mut slot_textures = BTreeMap::new();
    for s in &slots {
        let Some(tex) = t.textures.get(s) else {
            fail(&mut cmp, format!("no texture for tf{s}\n{listing}"));
            return (cmp, extra);
        };
        // each texture in its heap: 2D (set 0), 3D (set 1), cube (set 2)
        let set = heap_of(tex) as u32;
        textures.push(TextureSpec {
            texture: Slot { set, binding: 0 },
            sampler: Slot { set: 3, binding: 0 },
            shape: tex.shape,
            size: tex.size,
            height: tex.size,
            texels: tex.texels.clone(),
            mips: tex.mips.clone(),
            layers: 1,
            compare: false,
        });
        slot_textures.insert(*s, tex.clone());
    }
    // A fetch whose dimension's heap is not the bound texture's would index a heap with nothing
    // bound: undefined (lavapipe crashed on such random programs, tfetchCube of a volume).
    for f in prog.clauses.iter().flatten().filter_map(|s| if let Instr::Fetch(f) = &s.instr { Some(f) } else { None }) {
        let heap = [0, 0, 1, 2][f.dimension() as usize];
        if f.reads_texture() && slot_textures.get(&f.const_index()).is_some_and(|t| heap_of(t) != heap) {
            fail(
                &mut cmp,
                format!(
                    "tf{} is fetched with dimension {} but the test binds it in heap {} (the shader would read an unbound heap)\n{listing}",
                    f.const_index(),
                    f.dimension(),
                    heap_of(&slot_textures[&f.const_index()])
                ),
            );
            return (cmp, extra);
        }
    }
    let in_heap = |h: usize| slot_textures.values().filter(|t| heap_of(t) == h).count() as u32;
    let lens = heaps::HeapLens { d2: in_heap(0), d3: in_heap(1), cube: in_heap(2), samplers: slots.len() as u32 };
    let slots: Vec<(u32, usize)> = slots.iter().map(|s| (*s, heap_of(&slot_textures[s]))).collect();
    let spirv = if spec != 0 {
        match with_spec_constant(&spirv, 0, spec) {
            Ok(s) => s,
            Err(e) => {
                fail(&mut cmp, format!("specialization constant 0 = {spec}: {e}\n{listing}"));
                return (cmp, extra);
            }
        }
    } else {
        spirv
    };
    let spirv = match heaps::size_heaps(&spirv, lens) {
        Ok(s) => s,
        Err(e) => {
            fail(&mut cmp, format!("SPIR-V heap sizing: {e}\n{listing}"));
            return (cmp, extra);
        }
    };
    let t_textures = &slot_textures;
    let vertex = c.is_vertex();
    let push = AddressPush {
        blocks: t
            .cases
            .iter()
            .map(|case| {
                let consts = f32_bytes(&constants(&c, case));
                let (vs, ps) = if vertex { (consts, Vec::new()) } else { (Vec::new(), consts) };
                vec![vs, ps, shared_constants(vertex, case, &slots)]
            })
            .collect(),
        block_size: 4096,
        addresses: 3,
    };
    let mut executed = std::collections::BTreeSet::new();
    let mut mismatch_report = None;
    let mut note = |r: &interp::Outcome, extra: &mut Extra| {
        executed.extend(r.executed.iter().cloned());
        if r.undetermined {
            extra.undetermined += 1;
        }
        for &o in &r.pred_exec_outcomes {
            if o {
                extra.pred_exec.0 += 1;
            } else {
                extra.pred_exec.1 += 1;
            }
        }
    };
    let lanes = |cmp: &mut Comparison, bad: &mut String, name: &str, got: &[f32; 4], want: &[Expect; 4]| {
        for k in 0..4 {
            if !cmp.lane(got[k], want[k]) {
                let _ = writeln!(bad, "  {name}.{}: gpu {:?} (0x{:08X}), reference {}", ['x', 'y', 'z', 'w'][k], got[k], got[k].to_bits(), want[k]);
            }
        }
    };
    if vertex {
        // Inputs: module input location ← the vertex element's value.
        let mut loc_addr = BTreeMap::new();
        for (k, e) in c.vertex_elements.iter().enumerate() {
            loc_addr.insert(vertex_input_location(&c.vertex_elements, k), e.address);
        }
        let locations: Vec<u32> = module
            .inputs
            .iter()
            .filter_map(|v| match v.semantic {
                Semantic::Usage { location, .. } | Semantic::UsageUint { location, .. } => Some(location),
                _ => None,
            })
            .collect();
        let outputs: Vec<(u32, u32)> = module
            .outputs
            .iter()
            .filter_map(|v| match v.semantic {
                Semantic::Texcoord(l) => v.name.strip_prefix('o').and_then(|n| n.parse().ok()).map(|r| (r, l)),
                _ => None,
            })
            .collect();
        let point_size = module.outputs.iter().any(|v| v.semantic == Semantic::PointSize);
        let kill_vertex = module.outputs.iter().any(|v| v.semantic == Semantic::CullDistance);
        let job = VertexJob {
            spirv: &spirv,
            attribute_locations: locations.clone(),
            varyings: outputs.iter().map(|&(_, l)| l + 1).max().unwrap_or(0),
            extras: point_size || kill_vertex,
            uniforms: vec![],
            textures,
            invocations: t
                .cases
                .iter()
                .map(|case| VertexInvocation {
                    attributes: locations
                        .iter()
                        .map(|l| (*l, loc_addr.get(l).and_then(|a| case.inputs.get(a)).copied().unwrap_or([0.0; 4])))
                        .collect(),
                    uniforms: vec![],
                })
                .collect(),
        };
        let mut gpu_memory = memory.map(<[u8]>::to_vec);
        let result = match gpu_memory.as_mut() {
            Some(m) => gpu.run_vertex_with_memory(&job, &push, (MEMEXPORT_SLOT, m)),
            None => gpu.run_vertex_with_addresses(&job, &push),
        };
        let got = match result {
            Ok(g) => g,
            Err(e) => {
                fail(&mut cmp, format!("GPU run failed: {e}\n{listing}"));
                return (cmp, extra);
            }
        };
        if let Some(cap) = captures {
            *cap = Captures::Vertex(got.clone());
        }
        let runs: Vec<interp::Outcome> = t.cases.iter().map(|case| interp::run(&c, &prog, &state_common(&c, case, t_textures, spec))).collect();
        if let (Some(initial), Some(got_mem)) = (memory, &gpu_memory) {
            mismatch_report = compare_memory(&mut cmp, initial, got_mem, &runs.iter().collect::<Vec<_>>(), "case");
        }
        for (i, g) in got.iter().enumerate() {
            let r = runs[i].clone();
            note(&r, &mut extra);
            let get = |reg: u32| r.exports.get(&reg).copied().unwrap_or([Expect::UNKNOWN; 4]);
            let want = VertexExpect { position: get(62), varyings: vec![] };
            let mut pos = g.position;
            pos[1] = -pos[1]; // -fvk-invert-y
            let mut bad = String::new();
            lanes(&mut cmp, &mut bad, "oPos", &pos, &want.position);
            for &(reg, l) in &outputs {
                lanes(&mut cmp, &mut bad, &format!("o{reg}"), &g.varyings[l as usize], &get(reg));
            }
            // oPts: the point size lane as written, kill vertex as a cull distance of -1 / 0
            let extras = g.extras.unwrap_or([0.0; 4]);
            let mut one = |name: &str, got: f32, want: Expect| {
                if !cmp.lane(got, want) {
                    let _ = writeln!(bad, "  {name}: gpu {got:?} (0x{:08X}), reference {want}", got.to_bits());
                }
            };
            if point_size {
                one("oPts.x (PointSize)", extras[0], get(63)[0]);
            }
            if kill_vertex {
                let killed = r.vertex_killed.map_or(Expect::UNKNOWN, |k| Expect::exact(if k { -1.0 } else { 0.0 }));
                one("oPts.z (kill vertex → SV_CullDistance)", extras[1], killed);
                if killed.is_known() {
                    cmp.opcodes.insert(if r.vertex_killed == Some(true) { "kill vertex (killed)" } else { "kill vertex (kept)" }.into());
                }
            }
            if !bad.is_empty() && mismatch_report.is_none() {
                let mut inputs = String::new();
                for (a, v) in &t.cases[i].inputs {
                    let _ = writeln!(inputs, "  vfetch@{a} = {}", fmt4(v));
                }
                mismatch_report = Some(format!("invocation {i}:\n{bad}inputs:\n{inputs}"));
            }
        }
    } else {
        let mut by_loc: BTreeMap<u32, u32> = BTreeMap::new();
        for ip in &c.interpolators {
            by_loc.insert(interpolator_location(ip.usage, ip.usage_index), ip.reg);
        }
        let varyings = by_loc.keys().map(|l| l + 1).max().unwrap_or(0);
        let targets: Vec<u32> = module
            .outputs
            .iter()
            .filter_map(|v| match v.semantic {
                Semantic::Target(n) => Some(n),
                _ => None,
            })
            .collect();
        let depth = module.outputs.iter().any(|v| v.semantic == Semantic::Depth);
        let quads = t
            .cases
            .iter()
            .map(|case| {
                let per =
                    |m: &BTreeMap<u32, [f32; 4]>| (0..varyings).map(|l| by_loc.get(&l).and_then(|r| m.get(r)).copied().unwrap_or([0.0; 4])).collect();
                FragmentQuad { base: per(&case.base), slope_x: per(&case.slope_x), slope_y: per(&case.slope_y), uniforms: vec![] }
            })
            .collect();
        let job = FragmentJob { spirv: &spirv, varyings, targets: targets.clone(), depth, uniforms: vec![], textures, quads };
        let mut gpu_memory = memory.map(<[u8]>::to_vec);
        let result = match gpu_memory.as_mut() {
            Some(m) => gpu.run_fragment_with_memory(&job, &push, (MEMEXPORT_SLOT, m)),
            None => gpu.run_fragment_with_addresses(&job, &push),
        };
        let got = match result {
            Ok(g) => g,
            Err(e) => {
                fail(&mut cmp, format!("GPU run failed: {e}\n{listing}"));
                return (cmp, extra);
            }
        };
        if let Some(cap) = captures {
            *cap = Captures::Pixel(got.clone());
        }
        let quad_runs: Vec<Vec<interp::Outcome>> = (0..got.len())
            .map(|q| {
                let runs: Vec<interp::Outcome> = (0..4).map(|p| interp::run(&c, &prog, &pixel_state(&c, &t.cases[q], p, t_textures, spec))).collect();
                if runs.iter().any(|r| !r.gradient_sources.is_empty()) {
                    // getGradients / getCompTexLOD: the quad's derivatives, then every pixel again with them
                    let gradients = quad_gradients(&runs);
                    return (0..4)
                        .map(|p| interp::run(&c, &prog, &State { gradients: gradients.clone(), ..pixel_state(&c, &t.cases[q], p, t_textures, spec) }))
                        .collect();
                }
                runs
            })
            .collect();
        if let (Some(initial), Some(got_mem)) = (memory, &gpu_memory) {
            // every pixel is an invocation of its own (pixel 4q + p)
            mismatch_report = compare_memory(&mut cmp, initial, got_mem, &quad_runs.iter().flatten().collect::<Vec<_>>(), "pixel");
        }
        for (q, g) in got.iter().enumerate() {
            let mut bad = String::new();
            let runs = &quad_runs[q];
            if runs.iter().all(|r| !r.undetermined) {
                let path = |r: &interp::Outcome| (r.steps, r.pred_exec_outcomes.clone());
                if runs.iter().all(|r| path(r) == path(&runs[0])) {
                    extra.quads_uniform += 1;
                } else {
                    extra.quads_divergent += 1;
                }
            }
            for (p, gp) in g.iter().enumerate() {
                let r = &runs[p];
                note(r, &mut extra);
                if !cmp.flag(gp.written, r.written) {
                    let _ = writeln!(bad, "  pixel {p}: gpu written={}, reference written={:?}", gp.written, r.written);
                }
                if !(gp.written && r.written == Some(true)) {
                    continue;
                }
                for (ti, &n) in targets.iter().enumerate() {
                    let want = r.exports.get(&n).copied().unwrap_or([Expect::UNKNOWN; 4]);
                    lanes(&mut cmp, &mut bad, &format!("pixel {p} oC{n}"), &gp.colors[ti], &want);
                }
                if depth {
                    let d = r.exports.get(&61).map_or(Expect::UNKNOWN, |v| v[0]);
                    let d = if d.is_known() && d.err == 0.0 && !d.value.is_nan() { Expect::exact(d.value.clamp(0.0, 1.0)) } else { Expect::UNKNOWN };
                    if !cmp.lane(gp.depth, d) {
                        let _ = writeln!(bad, "  pixel {p} oDepth: gpu {:?}, reference {d}", gp.depth);
                    }
                }
            }
            if !bad.is_empty() && mismatch_report.is_none() {
                let mut inputs = String::new();
                let case = &t.cases[q];
                for (r, v) in &case.base {
                    let z = [0.0; 4];
                    let _ = writeln!(
                        inputs,
                        "  r{r}: base {} dx {} dy {}",
                        fmt4(v),
                        fmt4(case.slope_x.get(r).unwrap_or(&z)),
                        fmt4(case.slope_y.get(r).unwrap_or(&z))
                    );
                }
                mismatch_report = Some(format!("quad {q}:\n{bad}inputs:\n{inputs}"));
            }
        }
    }
    cmp.opcodes.extend(executed);
    if let Some(m) = mismatch_report {
        let case = t.cases.first();
        let mut consts = String::new();
        if let Some(case) = case {
            for (i, v) in case.c.iter().enumerate().take(16) {
                let _ = writeln!(consts, "  c{i} = {}", fmt4(v));
            }
        }
        cmp.report(format!("== {} ({})\n{listing}{m}constants (first case):\n{consts}reproduce: {}", t.name, gpu.device_name, t.reproduce));
    }
    (cmp, extra)
}

/// A random value: dyadic in (-4, 4) with 5 fractional bits, or (1 in 4) a special value.
pub fn random_value(rng: &mut Rng) -> f32 {
    if rng.chance(25) {
        *rng.pick(&[0.0, -0.0, 1.0, -1.0, 0.5, 2.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 3.0])
    } else {
        rng.dyadic(2, 5)
    }
}

pub fn random_vec(rng: &mut Rng) -> [f32; 4] {
    std::array::from_fn(|_| random_value(rng))
}

/// A `size`×`size` texture of a few distinct values (so comparisons of texels tie and differ).
pub fn random_texture(rng: &mut Rng, size: u32) -> Texture {
    let palette: Vec<[f32; 4]> = (0..3).map(|_| std::array::from_fn(|_| rng.dyadic(0, 3).abs())).collect();
    Texture { size, shape: TextureShape::Flat, texels: (0..size * size).map(|_| *rng.pick(&palette)).collect(), mips: vec![] }
}

/// A cube map of `size`×`size` faces whose texels all differ: (face, column, row, random), so a
/// wrong face or texel shows.
pub fn random_cube_texture(rng: &mut Rng, size: u32) -> Texture {
    let texels = (0..6 * size * size)
        .map(|k| {
            let (f, r) = (k / (size * size), k % (size * size));
            [f as f32, (r % size) as f32, (r / size) as f32, rng.dyadic(0, 3)]
        })
        .collect();
    Texture { size, shape: TextureShape::Cube, texels, mips: vec![] }
}

/// A `size`³ volume whose texels all differ: (x, y, z, random), so a wrong texel shows.
pub fn random_volume_texture(rng: &mut Rng, size: u32) -> Texture {
    let texels =
        (0..size * size * size).map(|k| [(k % size) as f32, (k / size % size) as f32, (k / (size * size)) as f32, rng.dyadic(0, 3)]).collect();
    Texture { size, shape: TextureShape::Volume, texels, mips: vec![] }
}

/// Random cases for any container: constants, vertex-element values, interpolators (texture-range
/// values with power-of-two slopes, so that pixels of a quad differ), booleans.
pub fn random_cases(rng: &mut Rng, bytes: &[u8], n: usize, texcoord_range: bool) -> Vec<Case> {
    let Ok(c) = xc::parse(bytes) else { return vec![] };
    (0..n)
        .map(|_| {
            let mut case = Case { booleans: rng.next_u64() as u16, ..Default::default() };
            case.c = (0..32).map(|_| if texcoord_range { std::array::from_fn(|_| rng.dyadic(0, 6)) } else { random_vec(rng) }).collect();
            for e in &c.vertex_elements {
                case.inputs.insert(e.address, random_vec(rng));
            }
            for ip in &c.interpolators {
                // Finite only: the rasterizer's interpolation turns inf into NaN (0·inf weights).
                let v: [f32; 4] =
                    if texcoord_range { std::array::from_fn(|_| rng.below(64) as f32 / 64.0) } else { std::array::from_fn(|_| rng.dyadic(2, 5)) };
                case.base.insert(ip.reg, v);
                let slope = |rng: &mut Rng| if rng.chance(50) { 0.0 } else { *rng.pick(&[1.0 / 64.0, -1.0 / 32.0, 0.25, 1.0]) };
                case.slope_x.insert(ip.reg, std::array::from_fn(|_| slope(rng)));
                case.slope_y.insert(ip.reg, std::array::from_fn(|_| slope(rng)));
            }
            case
        })
        .collect()
}

/// Random valid programs (see [`gen::program`]).
pub mod gen {
    use super::asm::{self, Alu, Src};
    pub use super::shaped::{shaped_program, shaped_program_and_stats, ShapedStats, SHAPED_MAX_NEST};
    use super::*;

    /// Vector ops 0-29 (kills only in pixel shaders), scalar ops 0-50 but 41.
    pub fn vector_ops(pixel: bool) -> Vec<u32> {
        (0..30).filter(|&o| pixel || !(24..=27).contains(&o)).collect()
    }
    pub fn scalar_ops(pixel: bool) -> Vec<u32> {
        (0..51).filter(|&o| o != 41 && (pixel || !(35..=39).contains(&o))).collect()
    }

    pub fn reproduce_command(seed: u64, index: u64) -> String {
        format!("SHREC_FUZZ_SEED={seed} SHREC_FUZZ_ONLY={index} cargo test --release --test verify_xenos -- --ignored fuzz_one --nocapture")
    }

    const TEMPS: u32 = 8;

    /// A CF word without its address / target, its clause (exec) and the clause's fetch flags.
    type CfEntry = (u64, Option<Vec<[u32; 3]>>, Vec<bool>);

    fn src(rng: &mut Rng, scalar: bool) -> Src {
        let temp = rng.chance(70);
        let mut s = if temp { Src::r(rng.below(TEMPS as u64) as u32) } else { Src::c(rng.below(8) as u32) };
        s.negate = rng.chance(20);
        s.abs = temp && rng.chance(10);
        if !temp && rng.chance(10) {
            s.rel = true;
            s.reg = 4 + rng.below(4) as u32;
        }
        if temp && rng.chance(5) {
            s.rel = true; // r[n + aL]; aL stays within 0..3 (loops below)
            s.reg = rng.below(4) as u32;
        }
        s.swizzle = if rng.chance(40) && !scalar { [0, 1, 2, 3] } else { std::array::from_fn(|_| rng.below(4) as u8) };
        s
    }

    /// One random ALU instruction writing temps r0-r7 (or, when `kill` is allowed, a kill op).
    pub fn alu(rng: &mut Rng, pixel: bool, predicable: bool) -> Alu {
        let vops = vector_ops(pixel);
        let sops = scalar_ops(pixel);
        let mut a = Alu::default();
        let mut vop = *rng.pick(&vops);
        let mut sop = *rng.pick(&sops);
        // Kills are rare (they end the pixel); one state writer of p0 / a0 per instruction.
        if (24..=27).contains(&vop) && !rng.chance(20) {
            vop = 0;
        }
        if (35..=39).contains(&sop) && !rng.chance(20) {
            sop = 0;
        }
        let v_p0 = (20..=23).contains(&vop);
        let s_p0 = (27..=34).contains(&sop);
        if v_p0 && s_p0 {
            sop = 0;
        }
        if vop == 29 && (sop == 23 || sop == 24) {
            sop = 2;
        }
        a.vop = vop;
        a.sop = if rng.chance(10) { 50 } else { sop };
        a.vdst = rng.below(TEMPS as u64) as u32;
        a.sdst = rng.below(TEMPS as u64) as u32;
        a.vmask = rng.below(16) as u32;
        a.smask = rng.below(16) as u32;
        if a.sop == 50 && rng.chance(50) {
            a.smask = 0;
        }
        a.vclamp = rng.chance(10);
        a.sclamp = rng.chance(10);
        a.rel_a0 = rng.chance(70);
        a.abs_constants = rng.chance(5);
        a.src = [src(rng, false), src(rng, false), src(rng, true)];
        // mulsc/addsc/subsc: src3 is a constant; the temp comes from the swizzle/select bits.
        if (42..=47).contains(&a.sop) {
            a.src[2].temp = false;
            a.src[2].rel = false;
            a.src[2].reg = rng.below(8) as u32;
        }
        if predicable && rng.chance(20) {
            a.predicated = true;
            a.pred_condition = rng.chance(50);
        }
        a
    }

    /// A random program: vertex or pixel, 1-5 blocks of random ALU instructions (and texture
    /// fetches in pixel programs: tfetch1D/2D/Cube with offsets, unnormalised coordinates or an
    /// LOD bias, getWeights; getGradients in the first clause), control flow from {exec, cexec
    /// bN, cexec_pred, forward (predicated / boolean / unconditional) jmp, loop over a literal
    /// `defi`}, then exports. `SHREC_FUZZ_VOLUMES` adds tfetch3D programs, `SHREC_FUZZ_COORDS`
    /// texel offsets and unnormalised coordinates on tfetchCube / tfetch3D (both off by default:
    /// the programs of the fixed seeds stay as recorded).
    pub fn program(seed: u64, index: u64) -> TestProgram {
        let env = |name: &str| std::env::var_os(name).is_some();
        program_with(
            seed,
            index,
            Features { fetch_variants: true, volumes: env("SHREC_FUZZ_VOLUMES"), comp_lod: true, coords: env("SHREC_FUZZ_COORDS") },
        )
    }

    /// What a program may use; each later feature draws from its own random stream, so the
    /// programs recorded before it existed can be made again.
    #[derive(Clone, Copy)]
    struct Features {
        fetch_variants: bool,
        volumes: bool,
        comp_lod: bool,
        /// Texel offsets and unnormalised coordinates on the tfetchCube / tfetch3D of a cube
        /// (volume) program.
        coords: bool,
    }

    /// The program as the generator made it before the fetch variants existed (the programs of
    /// `fuzz_regressions` were recorded then).
    pub fn recorded_program(seed: u64, index: u64) -> TestProgram {
        program_with(seed, index, Features { fetch_variants: false, volumes: false, comp_lod: false, coords: false })
    }

    /// The program as the generator made it with the fetch variants, before getCompTexLOD, and
    /// without `SHREC_FUZZ_VOLUMES` (#2276 of `fuzz_regressions` was recorded so).
    pub fn recorded_fetch_program(seed: u64, index: u64) -> TestProgram {
        program_with(seed, index, Features { fetch_variants: true, volumes: false, comp_lod: false, coords: false })
    }

    fn program_with(seed: u64, index: u64, features: Features) -> TestProgram {
        let Features { fetch_variants, volumes, comp_lod, coords } = features;
        let mut rng = Rng::new(seed.wrapping_mul(0x9E37_79B9).wrapping_add(index));
        let pixel = rng.chance(50);
        // Features added after seeds were recorded (call/ret, run-time loop constants, b16+) draw
        // from their own stream, so the main stream of earlier programs is unchanged.
        let mut rng2 = Rng::new(seed.wrapping_mul(0xA24B_AED4_963E_E407).wrapping_add(index).wrapping_add(0x5EED));
        // The fetch variants (added later still) draw from a third stream.
        let mut rng3 = Rng::new(seed.wrapping_mul(0x3C6E_F372_FE94_F82B).wrapping_add(index).wrapping_add(0xFE7C));
        // getCompTexLOD (later still) from a fourth.
        let mut rng4 = Rng::new(seed.wrapping_mul(0xBB67_AE85_84CA_A73B).wrapping_add(index).wrapping_add(0x10D));
        // Cube / volume offsets and unnormalised coordinates (later still) from a fifth.
        let mut rng5 = Rng::new(seed.wrapping_mul(0x9B05_688C_2B3E_6C1F).wrapping_add(index).wrapping_add(0xC0DE));
        // A cube (volume) program samples the cube map (volume) only: lavapipe (Mesa 22.3, LLVM
        // 15) segfaults in LLVM's EarlyCSE compiling some pixel shaders that sample a 2D texture
        // and a cube map (e.g. `tfetch2D r2, r0.xy, tf0` + `tfetchCube r1, r0.xyz, tf1`; see
        // docs/xenos.md).
        // Volume programs only with SHREC_FUZZ_VOLUMES set (they would change the fixed seeds'
        // programs). Most of their fetches used to be tfetchCube of the volume (`fetch_variant`
        // OR-ed the dimension onto a 2D fetch's), which reads the unbound cube heap: the likely
        // cause of the lavapipe crashes of long volume runs (README); the harness now refuses
        // a fetch whose heap is not its texture's.
        let sampled = match rng3.below(20) {
            _ if !(fetch_variants && pixel) => SampledKind::Flat,
            0..=2 => SampledKind::Cube,
            3..=4 if volumes => SampledKind::Volume,
            _ => SampledKind::Flat,
        };
        let mut cf: Vec<CfEntry> = Vec::new(); // (cf word w/o address, clause)
        let mut int_defs = Vec::new();
        let mut next_loop_id = 0u32;
        let mut runtime_loops: Vec<u32> = Vec::new();
        // Subroutines (placed after the end of the main program) and the CF entries calling them.
        let mut subs: Vec<Vec<CfEntry>> = Vec::new();
        // (index in cf or in a subroutine, callee): targets patched at assembly.
        let mut call_sites: Vec<(Option<usize>, usize, usize)> = Vec::new();
        let mut textures = BTreeMap::new();
        let mut elements = Vec::new();
        let ninputs = 1 + rng.below(3) as u32;
        // Inputs → r0..: vertex fetches (element per slot) or interpolators r0..
        let mut first: Vec<[u32; 3]> = Vec::new();
        let mut first_fetch = Vec::new();
        if !pixel {
            for i in 0..ninputs {
                first.push(asm::vfetch(i, [0, 1, 2, 3], false, false));
                first_fetch.push(true);
                elements.push(i);
            }
        }
        // Set p0 and a0 so predication and relative reads see both values.
        let mut init = Alu { vop: 0, sop: 29 + rng.below(2) as u32, vdst: 7, sdst: 6, vmask: 0xF, smask: 1, ..Default::default() };
        init.src = [Src::r(0), Src::c(0), Src::r(rng.below(ninputs as u64) as u32).swz([rng.below(4) as u8, 0, 0, 0])];
        first.push(init.encode());
        first_fetch.push(false);
        if fetch_variants && rng3.chance(25) {
            // getGradients of an input or of r7 in the first clause, which every pixel of a quad
            // runs (derivatives in divergent control flow are undefined).
            let src = if rng3.chance(70) { rng3.below(ninputs as u64) as u32 } else { 7 };
            let sw = [rng3.below(4) as u8, rng3.below(4) as u8, 0];
            let mut g = asm::tfetch(rng3.below(TEMPS as u64) as u32, src, sw, 0, 1, [0, 1, 2, 3], rng3.chance(20), rng3.chance(50));
            g[0] = g[0] & !0x1F | 18;
            first.push(g);
            first_fetch.push(true);
        }
        if comp_lod && pixel && sampled == SampledKind::Flat && rng4.chance(20) {
            // getCompTexLOD{1D,2D} of an input or of r7 in the first clause (derivatives, as
            // getGradients), on its own texture in slot 4 (so the other streams' textures are
            // made as before), unnormalised coordinates sometimes. 4×4 like every 2D texture of
            // a random program: in a pixel shader, lavapipe (Mesa 22.3) answers a size query
            // (GetDimensions, used by getWeights and unnormalised coordinates) of a second heap
            // texture with the first one's size (seed 1 #444 with an 8×8 texture here; the
            // SPIR-V queries two different heap elements; vertex shaders are right; README).
            textures.insert(4, random_texture(&mut rng4, 4));
            let src = if rng4.chance(70) { rng4.below(ninputs as u64) as u32 } else { 7 };
            let sw = [rng4.below(4) as u8, rng4.below(4) as u8, 0];
            let dim = if rng4.chance(25) { 0 } else { 1 };
            let mut g = asm::tfetch(rng4.below(TEMPS as u64) as u32, src, sw, 4, dim, [0, 1, 2, 3], rng4.chance(20), rng4.chance(50));
            g[0] = g[0] & !0x1F | 17 | (rng4.chance(20) as u32) << 25;
            first.push(g);
            first_fetch.push(true);
        }
        cf.push((asm::exec(asm::EXEC, 0, &first_fetch, 0, false), Some(first), first_fetch.clone()));
        let blocks = 1 + rng.below(5);
        for _ in 0..blocks {
            let n = 1 + rng.below(5) as usize;
            let mut clause = Vec::new();
            let mut fetch = Vec::new();
            for _ in 0..n {
                if pixel && rng.chance(15) {
                    let slot = rng.below(2) as u32;
                    textures.entry(slot).or_insert_with(|| random_texture(&mut rng, 4));
                    let dim = if rng.chance(20) { 0 } else { 1 };
                    let dsw = if rng.chance(70) { [0, 1, 2, 3] } else { std::array::from_fn(|_| *rng.pick(&[0u8, 1, 2, 3, 4, 5, 7])) };
                    let pred = rng.chance(15);
                    let mut f = asm::tfetch(
                        rng.below(TEMPS as u64) as u32,
                        rng.below(TEMPS as u64) as u32,
                        [rng.below(4) as u8, rng.below(4) as u8, 0],
                        slot,
                        dim,
                        dsw,
                        pred,
                        rng.chance(50),
                    );
                    if fetch_variants {
                        fetch_variant(&mut rng3, coords.then_some(&mut rng5), &mut f, &mut textures, sampled);
                    }
                    clause.push(f);
                    fetch.push(true);
                } else {
                    clause.push(alu(&mut rng, pixel, true).encode());
                    fetch.push(false);
                }
            }
            let kind = rng.below(10);
            let mut bool_addr = |rng: &mut Rng| {
                let b = rng.below(16) as u32;
                if rng2.chance(30) {
                    16 + rng2.below(240) as u32
                } else {
                    b
                }
            };
            match kind {
                0 | 1 => {
                    let b = bool_addr(&mut rng);
                    cf.push((asm::exec(asm::COND_EXEC, 0, &fetch, b, rng.chance(50)), Some(clause), fetch))
                }
                2 => cf.push((asm::exec(asm::COND_EXEC_PRED, 0, &fetch, 0, rng.chance(50)), Some(clause), fetch)),
                3 => {
                    // cond_exec_pred_clean tests a boolean constant (see the lowering).
                    let cond = rng.chance(50);
                    let b = rng2.below(256) as u32;
                    cf.push((asm::exec(asm::COND_EXEC_PRED_CLEAN, 0, &fetch, b, cond), Some(clause), fetch))
                }
                4 => {
                    // jmp over the clause (target patched below: CF index after it).
                    let pred = rng.chance(50);
                    let uncond = rng.chance(15);
                    let cond = rng.chance(50);
                    let j = asm::jmp(0, uncond, pred && !uncond, cond, bool_addr(&mut rng));
                    cf.push((j, None, vec![]));
                    cf.push((asm::exec(asm::EXEC, 0, &fetch, 0, false), Some(clause), fetch));
                }
                5 | 6 => {
                    // loop i<id> { clause } with aL start 0-1, step 1, count 0-3 (literal defi),
                    // or a run-time loop constant (per case, see below).
                    let id = next_loop_id;
                    next_loop_id += 1;
                    let count = rng.below(4) as u32;
                    let start = rng.below(2) as u32;
                    if rng2.chance(40) {
                        runtime_loops.push(id);
                    } else {
                        int_defs.push((id, count | start << 8 | 1 << 16));
                    }
                    cf.push((asm::loop_start(0, id), None, vec![]));
                    cf.push((asm::exec(asm::EXEC, 0, &fetch, 0, false), Some(clause), fetch));
                    if rng2.chance(20) {
                        // A call inside the loop body (the callee may loop too).
                        call_sites.push((None, cf.len(), subs.len()));
                        cf.push((asm::call(0, true, false, false, 0), None, vec![]));
                        subs.push(subroutine(&mut rng2, pixel, &mut next_loop_id, &mut int_defs, &mut runtime_loops));
                    }
                    let brk = rng.chance(30);
                    cf.push((asm::loop_end(0, id, brk, rng.chance(50)), None, vec![]));
                }
                _ => cf.push((asm::exec(asm::EXEC, 0, &fetch, 0, false), Some(clause), fetch)),
            }
            if rng2.chance(25) {
                // cond_call (unconditional, b<n> or predicated) of a new subroutine.
                let (uncond, pred) = match rng2.below(3) {
                    0 => (true, false),
                    1 => (false, false),
                    _ => (false, true),
                };
                let b = if rng2.chance(40) { 16 + rng2.below(240) as u32 } else { rng2.below(16) as u32 };
                call_sites.push((None, cf.len(), subs.len()));
                cf.push((asm::call(0, uncond, pred, rng2.chance(50), b), None, vec![]));
                subs.push(subroutine(&mut rng2, pixel, &mut next_loop_id, &mut int_defs, &mut runtime_loops));
            } else if rng2.chance(5) {
                cf.push((asm::ret(), None, vec![])); // outside a subroutine: does nothing
            }
            match rng.below(20) {
                0 => cf.push((asm::alloc(1, 1), None, vec![])),
                1 => cf.push((0, None, vec![])),        // nop
                2 => cf.push((15 << 44, None, vec![])), // vfetch_end (mark_vs_fetch_done)
                _ => {}
            }
        }
        // Exports.
        let mut last = Vec::new();
        let mut interpolators = Vec::new();
        let export = |reg: u32, from: u32, rng: &mut Rng| {
            let mut a = Alu { vop: 0, sop: 50, vdst: reg, vmask: 0xF, smask: 0, export: true, ..Default::default() };
            // add src, 0 (c8 is 0: beyond the random constants' defs) keeps the value exact.
            a.src = [Src::r(from), Src::c(200), Src::r(0)];
            if rng.chance(20) {
                // scalar into one lane, constant 1 where both masks are set.
                a.sop = 0;
                a.smask = 1 << rng.below(4);
                a.vmask = 0xF & !a.smask | if rng.chance(30) { a.smask } else { 0 };
            }
            a.encode()
        };
        if pixel {
            last.push(export(0, rng.below(TEMPS as u64) as u32, &mut rng));
            if rng.chance(20) {
                last.push(export(1, rng.below(TEMPS as u64) as u32, &mut rng));
            }
            if rng.chance(10) {
                last.push(export(61, rng.below(TEMPS as u64) as u32, &mut rng));
            }
            for i in 0..ninputs {
                interpolators.push((i, 5, i));
            }
        } else {
            last.push(export(62, rng.below(TEMPS as u64) as u32, &mut rng));
            let nout = 1 + rng.below(3) as u32;
            for i in 0..nout {
                last.push(export(i, rng.below(TEMPS as u64) as u32, &mut rng));
                interpolators.push((i, 5, i));
            }
        }
        let lf = vec![false; last.len()];
        // The exports, then an end-of-shader exec of one of the four end forms (its clause
        // writes only a temp, so whether it runs does not change the outputs).
        if rng.chance(50) {
            cf.push((asm::exec(asm::EXEC_END, 0, &lf, 0, false), Some(last), lf));
        } else {
            cf.push((asm::exec(asm::EXEC, 0, &lf, 0, false), Some(last), lf));
            let op = *rng.pick(&[asm::EXEC_END, asm::COND_EXEC_END, asm::COND_EXEC_PRED_END, asm::COND_EXEC_PRED_CLEAN_END]);
            let tail = vec![alu(&mut rng, false, false).encode()];
            cf.push((asm::exec(op, 0, &[false], rng.below(16) as u32, rng.chance(50)), Some(tail), vec![false]));
        }
        // Subroutines after the end, each a run of CF entries ending in ret; a subroutine may
        // call the next one (nested calls).
        let mut sub_start = Vec::new();
        let mut k = 0;
        while k < subs.len() {
            if rng2.chance(30) && subs.len() < 4 {
                let at = subs[k].len() - 1; // before the ret
                call_sites.push((Some(k), at, subs.len()));
                subs[k].insert(at, (asm::call(0, true, false, false, 0), None, vec![]));
                let sub = subroutine(&mut rng2, pixel, &mut next_loop_id, &mut int_defs, &mut runtime_loops);
                subs.push(sub);
            }
            k += 1;
        }
        let mut sub_offsets = Vec::new();
        for sub in &subs {
            sub_offsets.push(cf.len());
            sub_start.push(cf.len());
            cf.extend(sub.iter().cloned());
        }
        for (owner, at, callee) in &call_sites {
            let i = match owner {
                None => *at,
                Some(s) => sub_offsets[*s] + *at,
            };
            cf[i].0 |= sub_start[*callee] as u64;
        }
        // Assemble: addresses, jump / loop targets.
        let base = asm::cf_triples(cf.len());
        let mut slots = Vec::new();
        let mut words = Vec::new();
        let mut loop_starts = Vec::new();
        for (i, (w, clause, _)) in cf.iter().enumerate() {
            let mut w = *w;
            let op = w >> 44;
            if let Some(cl) = clause {
                w |= (base + slots.len() as u32) as u64;
                slots.extend_from_slice(cl);
            } else if op == asm::JMP {
                w |= (i + 2) as u64; // skip the next CF (its clause)
            } else if op == asm::LOOP_START {
                loop_starts.push(i);
            } else if op == asm::LOOP_END {
                let s = loop_starts.pop().unwrap();
                w |= (s + 1) as u64; // the body
                words[s] |= (i + 1) as u64; // loop_start skips past the loop_end
            }
            words.push(w);
        }
        let code = asm::microcode(&words, &slots);
        let ps_outputs = 1;
        let els: Vec<(u32, u32, u32)> = elements.iter().map(|&i| (base + i, 5, i)).collect();
        let bytes = container::write(&container::Spec {
            vertex: !pixel,
            microcode: &code,
            vertex_elements: &els,
            interpolators: &interpolators,
            ps_outputs,
            float_defs: &[],
            int_defs: &int_defs,
        });
        let ncases = if pixel { 8 } else { 16 };
        let mut cases = random_cases(&mut rng, &bytes, ncases, false);
        for case in &mut cases {
            // c4-c7: small integers for maxa/maxas (a0) then relative reads c[4..7 + a0].
            for k in 0..4 {
                case.c[k] = std::array::from_fn(|_| *rng.pick(&[-2.0, -1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0]));
            }
            // Texture coordinates in range some of the time.
            if pixel && rng.chance(50) {
                for v in case.base.values_mut() {
                    *v = std::array::from_fn(|_| rng.below(64) as f32 / 64.0);
                }
            }
        }
        for case in &mut cases {
            case.ext_booleans = std::array::from_fn(|_| rng2.next_u64() as u32);
            for &id in &runtime_loops {
                // count 0-3; aL start 0-1 with step 0-2, or start 3 counting down (aL stays in
                // 1..=7 inside the body: relative temps r[n + aL] stay in r0-r10).
                let count = rng2.below(4) as u32;
                let (start, step) = if rng2.chance(25) { (3, 0xFFu32) } else { (rng2.below(2) as u32, rng2.below(3) as u32) };
                case.loop_constants[id as usize] = count | start << 8 | step << 16;
            }
        }
        TestProgram { name: format!("fuzz seed {seed} #{index}"), bytes, cases, textures, reproduce: reproduce_command(seed, index) }
    }

    /// Turns a generated `tfetch{1D,2D}` into one of the later fetch forms (or leaves it): texel
    /// offsets, unnormalised coordinates, an LOD bias (the random textures have one level, so it
    /// must not change the texel), getWeights (destination not reading W, which is rejected); in
    /// a cube (volume) program every other fetch becomes tfetchCube of the cube map in slot 2
    /// (source z picks the face; tfetch3D of the 5³ volume in slot 3), with `coords` (its own
    /// stream) sometimes with texel offsets (x, y, z), unnormalised coordinates or both.
    fn fetch_variant(rng: &mut Rng, coords: Option<&mut Rng>, f: &mut [u32; 3], textures: &mut BTreeMap<u32, Texture>, sampled: SampledKind) {
        let variant = rng.below(8);
        if sampled != SampledKind::Flat && variant != 3 {
            let (slot, dim) = if sampled == SampledKind::Cube {
                textures.entry(2).or_insert_with(|| random_cube_texture(rng, 4));
                (2, 3)
            } else {
                // 5 texels: the random dyadic coordinates never sit on a texel boundary
                textures.entry(3).or_insert_with(|| random_volume_texture(rng, 5));
                (3, 2)
            };
            f[0] = f[0] & !(0x1F << 20) | slot << 20 | (rng.below(4) as u32) << 30;
            // replace the dimension (OR-ing 3D onto a 2D fetch made tfetchCube of the volume)
            f[2] = f[2] & !(3 << 14) | dim << 14;
            if let Some(r) = coords {
                let form = r.below(4);
                if form & 1 != 0 {
                    f[2] |= (r.below(32) as u32) << 16 | (r.below(32) as u32) << 21 | (r.below(32) as u32) << 26;
                }
                if form & 2 != 0 {
                    f[0] |= 1 << 25;
                }
            }
            return;
        }
        match variant {
            0 => f[2] |= (rng.below(32) as u32) << 16 | (rng.below(32) as u32) << 21,
            1 => f[0] |= 1 << 25,
            2 => f[2] |= (rng.below(128) as u32) << 2,
            3 => {
                f[0] = f[0] & !0x1F | 19;
                for k in 0..4 {
                    if f[1] >> (3 * k) & 7 == 3 {
                        f[1] |= 7 << (3 * k);
                    }
                }
            }
            _ => {}
        }
    }

    /// Which textures a random pixel program samples (see `program_with`).
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum SampledKind {
        Flat,
        Cube,
        Volume,
    }

    /// A subroutine: an ALU clause, sometimes inside a loop (literal or run-time constant), then
    /// ret.
    fn subroutine(rng: &mut Rng, pixel: bool, next_loop_id: &mut u32, int_defs: &mut Vec<(u32, u32)>, runtime_loops: &mut Vec<u32>) -> Vec<CfEntry> {
        let n = 1 + rng.below(3) as usize;
        let clause: Vec<[u32; 3]> = (0..n).map(|_| alu(rng, pixel, true).encode()).collect();
        let fetch = vec![false; n];
        let mut v = Vec::new();
        let looped = rng.chance(40) && *next_loop_id < 32;
        let id = *next_loop_id;
        if looped {
            *next_loop_id += 1;
            if rng.chance(50) {
                runtime_loops.push(id);
            } else {
                int_defs.push((id, (1 + rng.below(3) as u32) | (rng.below(2) as u32) << 8 | 1 << 16));
            }
            v.push((asm::loop_start(0, id), None, vec![]));
        }
        v.push((asm::exec(asm::EXEC, 0, &fetch, 0, false), Some(clause), fetch));
        if looped {
            v.push((asm::loop_end(0, id, rng.chance(20), rng.chance(50)), None, vec![]));
        }
        v.push((asm::ret(), None, vec![]));
        v
    }
}

/// The shared GPU, or None (skip) when `SHREC_ALLOW_MISSING_TOOLS=1` and none is available.
pub fn gpu_or_skip() -> Option<&'static Gpu> {
    super::vk::require()
}
