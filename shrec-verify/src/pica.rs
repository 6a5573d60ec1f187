//! PICA200 adapter of the verification harness: a tiny encoder (instruction words + operand
//! descriptors packed into a one-DVLE DVLB), running vertex DVLEs through the whole shrec
//! pipeline (DVLB → decode → lower → HLSL → DXC SPIR-V → lavapipe vertex stage) against the
//! reference interpreter (`formats::pica::interp`), and a random program generator.
//!
//! Geometry DVLEs run through [`run_geometry`] (pass-through vertex stage, transform-feedback
//! capture of the emitted triangles, see `verify::vk::xfb`).

use super::check::{self, VertexExpect};
use super::vk::xfb::{GeometryInvocation, GeometryJob};
use super::vk::{Gpu, Slot, UniformSpec, VertexInvocation};
use super::{Comparison, Expect, Rng};
use crate::interp::pica::{self as interp, State};
use shrec::formats::pica::dvlb::{self, Program};
use shrec::formats::pica::{self as pica_fmt, disasm};
use shrec::formats::Stage;
use std::fmt::Write;

/// Encoder. Operands are written as text: sources `v3`, `r1.yxzw`, `-c5.x`, `c10` (a relative
/// address is a separate argument), destinations `o0`, `r2.xz`.
pub mod asm {
    use shrec::formats::pica::decode::Rel;

    /// (raw 7-bit register, 8-bit selector with component 0 in the top bits, negate).
    pub fn src(t: &str) -> (u32, u32, bool) {
        let (neg, t) = t.strip_prefix('-').map_or((false, t), |r| (true, r));
        let (r, sw) = t.split_once('.').map_or((t, "xyzw"), |(a, b)| (a, b));
        let n: u32 = r[1..].parse().unwrap_or_else(|_| panic!("bad register {t}"));
        let raw = match &r[..1] {
            "v" => n,
            "r" => 0x10 + n,
            "c" => 0x20 + n,
            _ => panic!("bad source {t}"),
        };
        let lanes: Vec<u32> = sw.chars().map(|c| "xyzw".find(c).expect("lane") as u32).collect();
        let sel = (0..4).map(|i| lanes[i.min(lanes.len() - 1)] << (6 - 2 * i)).sum();
        (raw, sel, neg)
    }

    /// (raw 5-bit destination, descriptor mask bits: bit 3 = x).
    pub fn dst(t: &str) -> (u32, u32) {
        let (r, m) = t.split_once('.').map_or((t, "xyzw"), |(a, b)| (a, b));
        let n: u32 = r[1..].parse().expect("dst number");
        let raw = match &r[..1] {
            "o" => n,
            "r" => 0x10 + n,
            _ => panic!("bad destination {t}"),
        };
        let mask = m.chars().map(|c| 8 >> "xyzw".find(c).expect("lane")).sum();
        (raw, mask)
    }

    fn rel_bits(r: Rel) -> u32 {
        match r {
            Rel::None => 0,
            Rel::A0x => 1,
            Rel::A0y => 2,
            Rel::AL => 3,
        }
    }

    /// Code words and operand descriptors.
    #[derive(Clone, Debug, Default)]
    pub struct Asm {
        pub code: Vec<u32>,
        pub descs: Vec<u32>,
    }

    pub fn opcode(name: &str) -> u32 {
        use shrec::formats::pica::decode::{Op, ALL_OPS};
        let op = ALL_OPS.iter().find(|o| o.name() == name).unwrap_or_else(|| panic!("unknown mnemonic {name}"));
        (0..64).find(|&c| Op::from_opcode(c) == Some(*op)).unwrap()
    }

    impl Asm {
        pub fn here(&self) -> u32 {
            self.code.len() as u32
        }
        fn desc(&mut self, d: u32) -> u32 {
            if let Some(i) = self.descs.iter().position(|&x| x == d) {
                return i as u32;
            }
            self.descs.push(d);
            assert!(self.descs.len() <= 128, "operand descriptor table full");
            self.descs.len() as u32 - 1
        }
        fn operand_desc(mask: u32, s: &[(u32, u32, bool)]) -> u32 {
            let mut d = mask;
            for (i, &(_, sel, neg)) in s.iter().enumerate() {
                let (nb, sb) = [(4, 5), (13, 14), (22, 23)][i];
                d |= (neg as u32) << nb | sel << sb;
            }
            d
        }
        /// Formats 1 / 1i / 1u / 1c by mnemonic. `rel` applies to the wide operand (src1 of
        /// format 1/1u/cmp, src2 of 1i). For `cmp`, `d` is `"<x> <y>"` (e.g. `"lt ge"`).
        pub fn op(&mut self, name: &str, d: &str, srcs: &[&str], rel: Rel) -> u32 {
            let s: Vec<_> = srcs.iter().map(|t| src(t)).collect();
            let at = self.here();
            let opc = opcode(name);
            if name == "cmp" {
                let kinds: Vec<u32> = d
                    .split_whitespace()
                    .map(|k| ["eq", "ne", "lt", "le", "gt", "ge", "6", "7"].iter().position(|x| *x == k).expect("cmp kind") as u32)
                    .collect();
                let di = self.desc(Self::operand_desc(0, &s));
                self.code.push(0x2E << 26 | kinds[0] << 24 | kinds[1] << 21 | rel_bits(rel) << 19 | s[0].0 << 12 | s[1].0 << 7 | di);
                return at;
            }
            let (draw, mask) = dst(d);
            let di = self.desc(Self::operand_desc(mask, &s));
            let inverted = matches!(name, "dphi" | "dsti" | "sgei" | "slti");
            let w = if s.len() == 1 {
                opc << 26 | draw << 21 | rel_bits(rel) << 19 | s[0].0 << 12 | di
            } else if inverted {
                assert!(s[0].0 < 0x20, "{name}: src1 must be v/r");
                opc << 26 | draw << 21 | rel_bits(rel) << 19 | s[0].0 << 14 | s[1].0 << 7 | di
            } else {
                assert!(s[1].0 < 0x20, "{name}: src2 must be v/r");
                opc << 26 | draw << 21 | rel_bits(rel) << 19 | s[0].0 << 12 | s[1].0 << 7 | di
            };
            self.code.push(w);
            at
        }
        /// `mad d, s1, s2, s3` (src2 wide) or `madi` (src3 wide); descriptor index must be < 32.
        pub fn mad(&mut self, name: &str, d: &str, srcs: [&str; 3], rel: Rel) -> u32 {
            let s: Vec<_> = srcs.iter().map(|t| src(t)).collect();
            let (draw, mask) = dst(d);
            let di = self.desc(Self::operand_desc(mask, &s));
            assert!(di < 32, "mad operand descriptor {di} >= 32");
            let at = self.here();
            assert!(s[0].0 < 0x20);
            let w = if name == "mad" {
                assert!(s[2].0 < 0x20);
                0x38 << 26 | draw << 24 | rel_bits(rel) << 22 | s[0].0 << 17 | s[1].0 << 10 | s[2].0 << 5 | di
            } else {
                assert!(s[1].0 < 0x20);
                0x30 << 26 | draw << 24 | rel_bits(rel) << 22 | s[0].0 << 17 | s[1].0 << 12 | s[2].0 << 5 | di
            };
            self.code.push(w);
            at
        }
        /// Format 0: break, nop, end, emit.
        pub fn simple(&mut self, name: &str) -> u32 {
            let at = self.here();
            self.code.push(opcode(name) << 26);
            at
        }
        /// Format 4: `setemit vertex[, prim][, inv]`.
        pub fn setemit(&mut self, vertex: u32, prim: bool, inv: bool) -> u32 {
            let at = self.here();
            self.code.push(opcode("setemit") << 26 | vertex << 24 | (prim as u32) << 23 | (inv as u32) << 22);
            at
        }
        /// Format 2 (breakc, call, callc, ifc, jmpc): condition (refx, refy, op 0 OR 1 AND 2 X 3 Y).
        pub fn flowc(&mut self, name: &str, refx: bool, refy: bool, condop: u32, dest: u32, num: u32) -> u32 {
            let at = self.here();
            self.code.push(opcode(name) << 26 | (refx as u32) << 25 | (refy as u32) << 24 | condop << 22 | dest << 10 | num);
            at
        }
        /// Format 3 (callu, ifu, jmpu: bool id; loop: int id).
        pub fn flowu(&mut self, name: &str, id: u32, dest: u32, num: u32) -> u32 {
            let at = self.here();
            let idw = id << 22; // the bool id (ifu / callu / jmpu) and the int id (loop) share bits 22-25
            self.code.push(opcode(name) << 26 | idw | dest << 10 | num);
            at
        }
        /// Rewrites dest/num of the flow instruction at `at`.
        pub fn patch(&mut self, at: u32, dest: u32, num: u32) {
            let w = &mut self.code[at as usize];
            *w = (*w & !(0xFFF << 10 | 0xFF)) | dest << 10 | num;
        }
    }
}

/// A DVLE constant for [`dvlb()`].
#[derive(Clone, Copy, Debug)]
pub enum Const {
    Bool(u16, bool),
    Int(u16, [u8; 4]),
    /// Values must be f24-representable (converted by truncation).
    Float(u16, [f32; 4]),
}

fn f32_to_f24(x: f32) -> u32 {
    let b = x.to_bits();
    let sign = b >> 31;
    let exp = ((b >> 23) & 0xFF) as i32;
    let man = (b & 0x7F_FFFF) >> 7;
    if x == 0.0 {
        return sign << 23;
    }
    let e = exp - 127 + 63;
    if e <= 0 {
        sign << 23
    } else if e >= 0x7F {
        sign << 23 | 0x7F << 16
    } else {
        sign << 23 | (e as u32) << 16 | man
    }
}

/// A one-DVLE vertex DVLB (picasso's layout: 0x28-byte DVLP header). `outputs`: (type, o reg,
/// mask bit 0 = x).
pub fn dvlb(a: &asm::Asm, main: u32, outputs: &[(u16, u16, u8)], constants: &[Const]) -> Vec<u8> {
    dvlb_multi(a, &[Dvle { main, outputs: outputs.to_vec(), constants: constants.to_vec(), ..Dvle::default() }])
}

/// One DVLE of [`dvlb_multi`].
#[derive(Clone, Debug, Default)]
pub struct Dvle {
    pub main: u32,
    /// Geometry DVLE: raw mode bytes (mode 0 point / 1 variable / 2 fixed, fixed start register,
    /// variable vertex count, fixed vertex count) and the merge-outmaps flag.
    pub geometry: Option<([u8; 4], bool)>,
    /// (type, o reg, mask bit 0 = x)
    pub outputs: Vec<(u16, u16, u8)>,
    pub constants: Vec<Const>,
}

/// A DVLB whose DVLEs share the code blob of `a`.
pub fn dvlb_multi(a: &asm::Asm, dvles: &[Dvle]) -> Vec<u8> {
    let mut b = Vec::new();
    let put = |b: &mut Vec<u8>, w: u32| b.extend_from_slice(&w.to_le_bytes());
    b.extend_from_slice(b"DVLB");
    put(&mut b, dvles.len() as u32);
    for _ in dvles {
        put(&mut b, 0); // DVLE offsets, patched
    }
    let p = b.len();
    let code_off = 0x28u32;
    let desc_off = code_off + 4 * a.code.len() as u32;
    b.extend_from_slice(b"DVLP");
    for w in [0, code_off, a.code.len() as u32, desc_off, a.descs.len() as u32, desc_off + 8 * a.descs.len() as u32, 0, 0, 0] {
        put(&mut b, w);
    }
    assert_eq!(b.len() - p, 0x28);
    for &w in &a.code {
        put(&mut b, w);
    }
    for &d in &a.descs {
        put(&mut b, d);
        put(&mut b, 0);
    }
    for (k, dv) in dvles.iter().enumerate() {
        let e = b.len();
        b[8 + 4 * k..12 + 4 * k].copy_from_slice(&(e as u32).to_le_bytes());
        dvle(&mut b, a, dv);
    }
    b
}

fn dvle(b: &mut Vec<u8>, a: &asm::Asm, dv: &Dvle) {
    let put = |b: &mut Vec<u8>, w: u32| b.extend_from_slice(&w.to_le_bytes());
    let (main, outputs, constants) = (dv.main, &dv.outputs[..], &dv.constants[..]);
    let e = b.len();
    b.extend_from_slice(b"DVLE");
    b.extend_from_slice(&0x1002u16.to_le_bytes());
    b.push(dv.geometry.is_some() as u8);
    b.push(dv.geometry.is_some_and(|g| g.1) as u8);
    put(b, main);
    put(b, a.code.len() as u32);
    let out_mask: u16 = outputs.iter().fold(0, |m, o| m | 1 << o.1);
    b.extend_from_slice(&0u16.to_le_bytes());
    b.extend_from_slice(&out_mask.to_le_bytes());
    b.extend_from_slice(&dv.geometry.map_or([0; 4], |g| g.0));
    let const_off = 0x40u32;
    let out_off = const_off + 20 * constants.len() as u32;
    let end = out_off + 8 * outputs.len() as u32;
    for (off, n) in [(const_off, constants.len() as u32), (0, 0), (out_off, outputs.len() as u32), (end, 0), (end, 0)] {
        put(b, off);
        put(b, n);
    }
    assert_eq!(b.len() - e, 0x40);
    for c in constants {
        let (ty, reg, words) = match *c {
            Const::Bool(r, v) => (0u16, r, [v as u32, 0, 0, 0]),
            Const::Int(r, v) => (1, r, [u32::from_le_bytes(v), 0, 0, 0]),
            Const::Float(r, v) => (2, r, v.map(f32_to_f24)),
        };
        b.extend_from_slice(&ty.to_le_bytes());
        b.extend_from_slice(&reg.to_le_bytes());
        for w in words {
            put(b, w);
        }
    }
    for &(ty, reg, mask) in outputs {
        put(b, u32::from(ty) | u32::from(reg) << 16);
        put(b, u32::from(mask));
    }
}

/// A DVLB with the DVLE to run and its invocations.
#[derive(Clone, Debug)]
pub struct TestProgram {
    pub name: String,
    pub bytes: Vec<u8>,
    pub dvle: u32,
    pub cases: Vec<State>,
    pub reproduce: String,
}

/// Applies the DVLE's constant table to a uniform state (as libctru's `shaderProgramUse`).
pub fn apply_constants(p: &Program, dvle: usize, s: &mut State) {
    for c in &p.dvles[dvle].constants {
        match &c.value {
            dvlb::ConstValue::Bool(b) => {
                s.b = (s.b & !(1 << c.reg)) | (u16::from(*b) << c.reg);
            }
            dvlb::ConstValue::Int(v) => s.i[c.reg as usize] = *v,
            dvlb::ConstValue::Float(v) => s.c[c.reg as usize] = *v,
        }
    }
}

/// Location of each output type (shader_common.h PICA section): position → SV_Position (None),
/// others → TEXCOORD<type>, dummy / untyped o<r> → TEXCOORD<16 + r>.
fn expected_outputs(p: &Program, dvle: usize, o: &[[Expect; 4]; 16]) -> VertexExpect {
    let d = &p.dvles[dvle];
    let has_gs = p.dvles.iter().any(|x| x.stage == Stage::Geometry);
    let zero = Expect::exact(0.0);
    let mut position = [zero; 4];
    let mut varyings: Vec<[Expect; 4]> = vec![[zero; 4]; 32];
    let mut used = [false; 32];
    if has_gs {
        // Raw output registers at TEXCOORD<r>, all lanes.
        let mut regs: Vec<u16> = (0..16).filter(|r| d.output_mask >> r & 1 != 0).collect();
        if regs.is_empty() {
            regs = d.outputs.iter().map(|x| x.reg).collect();
        }
        for r in regs {
            varyings[r as usize] = o[r as usize];
        }
        return VertexExpect { position: [Expect::UNKNOWN; 4], varyings };
    }
    for out in &d.outputs {
        let (mask, loc) = match out.ty {
            0 => (out.mask, None),
            9 => (0xF, Some(16 + out.reg as usize)),
            t => (out.mask, Some(t as usize)),
        };
        let target: &mut [Expect; 4] = match loc {
            None => &mut position,
            Some(l) => {
                used[l] = true;
                &mut varyings[l]
            }
        };
        let mut k = 0;
        for lane in 0..4 {
            if mask >> lane & 1 != 0 {
                let mut v = o[out.reg as usize][lane];
                if out.ty == 0 && lane == 2 && v.is_known() {
                    v.value = -v.value;
                }
                target[k] = v;
                k += 1;
            }
        }
    }
    if !d.outputs.iter().any(|x| x.ty == 0) {
        // No position output: SV_Position is not written.
        position = [Expect::UNKNOWN; 4];
    }
    VertexExpect { position, varyings }
}

fn fmt_vec(v: &[f32; 4]) -> String {
    format!("({:?}, {:?}, {:?}, {:?})", v[0], v[1], v[2], v[3])
}

/// Runs one program through shrec and the GPU and compares every output lane of every case.
pub fn run(gpu: &Gpu, t: &TestProgram) -> Comparison {
    let mut cmp = Comparison { programs: 1, ..Default::default() };
    let fail = |cmp: &mut Comparison, what: String| {
        cmp.mismatches += 1;
        cmp.report(format!("== {}: {what}\nreproduce: {}", t.name, t.reproduce));
    };
    let prog = match dvlb::parse_program(&t.bytes) {
        Ok(p) => p,
        Err(e) => {
            fail(&mut cmp, format!("DVLB rejected: {}", e.reason()));
            return cmp;
        }
    };
    let listing = disasm::disassemble(&prog).unwrap_or_default();
    let compiled = pica_fmt::translate(&t.bytes, t.dvle)
        .map_err(|e| format!("translate: {}", e.reason()))
        .and_then(|tr| check::spirv(gpu, &tr.module).map(|s| (tr.module, s)));
    let (module, spirv) = match compiled {
        Ok(x) => x,
        Err(e) => {
            fail(&mut cmp, format!("{e}\n{listing}"));
            return cmp;
        }
    };
    let di = t.dvle as usize;
    let cases: Vec<State> = t
        .cases
        .iter()
        .map(|c| {
            let mut c = c.clone();
            apply_constants(&prog, di, &mut c);
            c
        })
        .collect();
    let invocations = cases
        .iter()
        .map(|c| {
            let mut ints: Vec<[f32; 4]> = c.i.iter().map(|i| i.map(|x| f32::from_bits(u32::from(x)))).collect();
            ints.push([f32::from_bits(u32::from(c.b)), 0.0, 0.0, 0.0]);
            VertexInvocation {
                attributes: module
                    .inputs
                    .iter()
                    .filter_map(|v| match v.semantic {
                        shrec::ir::Semantic::Texcoord(l) => Some((l, c.v[l as usize])),
                        _ => None,
                    })
                    .collect(),
                uniforms: vec![c.c.to_vec(), ints],
            }
        })
        .collect();
    let mut executed = std::collections::BTreeSet::new();
    let mut undetermined = 0u64;
    let outcome = check::vertex(gpu, &module, &spirv, vec![], invocations, &mut |i| {
        let r = interp::run(&prog, di, &cases[i]);
        executed.extend(r.executed.iter().copied());
        if r.undetermined {
            undetermined += 1;
        }
        expected_outputs(&prog, di, &r.o)
    });
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            fail(&mut cmp, format!("GPU run failed: {e}\n{listing}"));
            return cmp;
        }
    };
    cmp.merge(outcome.cmp);
    cmp.opcodes.extend(executed.iter().map(|s| s.to_string()));
    if let Some((ci, lanes)) = outcome.first_mismatch {
        let c = &cases[ci];
        let mut inputs = String::new();
        for (i, v) in c.v.iter().enumerate().take(8) {
            let _ = writeln!(inputs, "  v{i} = {}", fmt_vec(v));
        }
        for (i, v) in c.c.iter().enumerate().take(24) {
            let _ = writeln!(inputs, "  c{i} = {}", fmt_vec(v));
        }
        let _ = writeln!(inputs, "  i = {:?}, b = 0x{:04X}", c.i, c.b);
        cmp.report(format!(
            "== {} ({})\n{listing}case {ci}: mismatching lanes:\n{lanes}inputs:\n{inputs}reproduce: {}",
            t.name, gpu.device_name, t.reproduce
        ));
    }
    cmp
}

/// Expected value of every rasterizer output variable of a geometry DVLE (shader_common.h PICA
/// section: one float4 per output type, lanes named by the entry's mask filled from .x, other
/// lanes 0, position z negated; a dummy output takes its types from the VS table with the
/// merge-outmaps flag, else it is `TEXCOORD<16 + r>`), keyed by semantic.
fn gs_expected(p: &Program, dvle: usize, o: &[[Expect; 4]; 16]) -> Vec<(shrec::ir::Semantic, [Expect; 4])> {
    use shrec::ir::Semantic;
    let d = &p.dvles[dvle];
    let vs = p.dvles.iter().find(|x| x.stage == Stage::Vertex);
    let mut entries = Vec::new();
    for out in &d.outputs {
        let from_vs: Vec<(u16, u16, u8)> = match (out.ty, vs) {
            (9, Some(v)) if d.merge_outmaps => v.outputs.iter().filter(|x| x.reg == out.reg && x.ty != 9).map(|x| (x.ty, x.reg, x.mask)).collect(),
            _ => vec![],
        };
        if !from_vs.is_empty() {
            entries.extend(from_vs);
        } else if out.ty == 9 {
            entries.push((9, out.reg, 0xF));
        } else {
            entries.push((out.ty, out.reg, out.mask));
        }
    }
    let mut vars: Vec<(Semantic, [Expect; 4])> = Vec::new();
    for (ty, reg, mask) in entries {
        let sem = match ty {
            0 => Semantic::Position,
            9 => Semantic::Texcoord(16 + u32::from(reg)),
            t => Semantic::Texcoord(u32::from(t)),
        };
        let i = match vars.iter().position(|v| v.0 == sem) {
            Some(i) => i,
            None => {
                vars.push((sem, [Expect::exact(0.0); 4]));
                vars.len() - 1
            }
        };
        let mut k = 0;
        for lane in 0..4 {
            if mask >> lane & 1 != 0 {
                let mut v = o[reg as usize][lane];
                if ty == 0 && lane == 2 && v.is_known() {
                    v.value = -v.value;
                }
                vars[i].1[k] = v;
                k += 1;
            }
        }
    }
    vars
}

/// The harness vertex shader of a geometry job: attribute location l → `TEXCOORD<l>` /
/// location l, unchanged.
fn passthrough_vs_hlsl(locations: &[u32]) -> String {
    let mut s = String::from("// shrec verify: geometry harness vertex shader\nstruct VsIn\n{\n");
    for l in locations {
        s += &format!("    [[vk::location({l})]] float4 a{l} : ATTR{l};\n");
    }
    s += "};\nstruct VsOut\n{\n";
    for l in locations {
        s += &format!("    [[vk::location({l})]] float4 f{l} : TEXCOORD{l};\n");
    }
    s += "};\nVsOut main(VsIn i)\n{\n    VsOut o;\n";
    for l in locations {
        s += &format!("    o.f{l} = i.a{l};\n");
    }
    s += "    return o;\n}\n";
    s
}

fn uniforms_of(c: &State) -> Vec<Vec<[f32; 4]>> {
    let mut ints: Vec<[f32; 4]> = c.i.iter().map(|i| i.map(|x| f32::from_bits(u32::from(x)))).collect();
    ints.push([f32::from_bits(u32::from(c.b)), 0.0, 0.0, 0.0]);
    vec![c.c.to_vec(), ints]
}

/// Runs a geometry DVLE (`t.dvle`) through shrec and the GPU — a pass-through vertex stage feeds
/// one input primitive per case, transform feedback captures the triangles it emits — and
/// compares the number of triangles and every lane of every emitted vertex with the interpreter.
/// Each case's inputs sit where the GS mode puts them: `v<i>` (point mode) or `c<k>` (fixed and
/// variable mode).
pub fn run_geometry(gpu: &Gpu, t: &TestProgram) -> Comparison {
    use shrec::ir::Semantic;
    let mut cmp = Comparison { programs: 1, ..Default::default() };
    let fail = |cmp: &mut Comparison, what: String| {
        cmp.mismatches += 1;
        cmp.report(format!("== {}: {what}\nreproduce: {}", t.name, t.reproduce));
    };
    let prog = match dvlb::parse_program(&t.bytes) {
        Ok(p) => p,
        Err(e) => {
            fail(&mut cmp, format!("DVLB rejected: {}", e.reason()));
            return cmp;
        }
    };
    let listing = disasm::disassemble(&prog).unwrap_or_default();
    let compiled = pica_fmt::translate(&t.bytes, t.dvle)
        .map_err(|e| format!("translate: {}", e.reason()))
        .and_then(|tr| check::spirv(gpu, &tr.module).map(|s| (tr.module, s)));
    let (module, spirv) = match compiled {
        Ok(x) => x,
        Err(e) => {
            fail(&mut cmp, format!("{e}\n{listing}"));
            return cmp;
        }
    };
    let Some(g) = module.ext.geometry.clone() else {
        fail(&mut cmp, "not a geometry shader".into());
        return cmp;
    };
    let loc = |v: &shrec::ir::IoVar| match v.semantic {
        Semantic::Texcoord(l) => l,
        _ => u32::MAX,
    };
    let locations: Vec<u32> = g.vertex_fields.iter().map(loc).collect();
    let vs = match shrec::dxc::compile(&gpu.dxc, &passthrough_vs_hlsl(&locations), Stage::Vertex, shrec::dxc::Target::Spirv) {
        Ok(v) => v,
        Err(e) => {
            fail(&mut cmp, format!("harness vertex shader: {e}"));
            return cmp;
        }
    };
    let di = t.dvle as usize;
    let cases: Vec<State> = t
        .cases
        .iter()
        .map(|c| {
            let mut c = c.clone();
            apply_constants(&prog, di, &mut c);
            c
        })
        .collect();
    let k = g.primitive.vertices() as usize;
    let invocations = cases
        .iter()
        .map(|c| {
            let mut vertices: Vec<Vec<(u32, [f32; 4])>> = vec![vec![]; k];
            for (v, &(vtx, field)) in module.inputs.iter().zip(&g.input_sources) {
                let value = if let Some(n) = v.name.strip_prefix("cin") {
                    c.c[n.parse::<usize>().expect("cin<k>")]
                } else {
                    c.v[v.name[1..].parse::<usize>().expect("v<i>")]
                };
                vertices[vtx as usize].push((locations[field as usize], value));
            }
            GeometryInvocation { vertices, uniforms: uniforms_of(c) }
        })
        .collect();
    let topology = match g.primitive {
        shrec::ir::GsPrimitive::Point => ash::vk::PrimitiveTopology::POINT_LIST,
        shrec::ir::GsPrimitive::Line => ash::vk::PrimitiveTopology::LINE_LIST,
        shrec::ir::GsPrimitive::Triangle => ash::vk::PrimitiveTopology::TRIANGLE_LIST,
        shrec::ir::GsPrimitive::LineAdj => ash::vk::PrimitiveTopology::LINE_LIST_WITH_ADJACENCY,
        shrec::ir::GsPrimitive::TriangleAdj => ash::vk::PrimitiveTopology::TRIANGLE_LIST_WITH_ADJACENCY,
    };
    let job = GeometryJob {
        vs_spirv: &vs,
        gs_spirv: &spirv,
        topology,
        vertices: k as u32,
        attribute_locations: locations.clone(),
        max_vertices: g.max_vertices,
        uniforms: module
            .const_buffers
            .iter()
            .chain(&module.ext.uint_buffers)
            .map(|cb| UniformSpec { slot: Slot { set: cb.binding.vk_set, binding: cb.binding.vk_binding }, len: cb.len })
            .collect(),
        invocations,
    };
    let got = match gpu.run_geometry(&job) {
        Ok(x) => x,
        Err(e) => {
            fail(&mut cmp, format!("GPU run failed: {e}\n{listing}"));
            return cmp;
        }
    };
    let mut first_bad: Option<String> = None;
    for (ci, (c, gcap)) in cases.iter().zip(&got).enumerate() {
        let r = interp::run(&prog, di, c);
        cmp.opcodes.extend(r.executed.iter().map(|s| s.to_string()));
        if r.undetermined {
            cmp.inconclusive += 1;
            continue;
        }
        let tris = (r.triangles.len()).min(g.max_vertices as usize / 3);
        let mut bad = String::new();
        cmp.comparisons += 1;
        if gcap.vertices.len() != 3 * tris {
            cmp.mismatches += 1;
            let _ = writeln!(bad, "  gpu emitted {} vertices, reference {} triangles", gcap.vertices.len(), tris);
        } else {
            for (vi, got_v) in gcap.vertices.iter().enumerate() {
                let want = gs_expected(&prog, di, &r.triangles[vi / 3][vi % 3]);
                for (oi, var) in module.outputs.iter().enumerate() {
                    let Some(w) = want.iter().find(|x| x.0 == var.semantic).map(|x| x.1) else { continue };
                    let mut gv = got_v[oi];
                    if var.semantic == Semantic::Position {
                        gv[1] = -gv[1]; // DXC's -fvk-invert-y
                    }
                    for lane in 0..4 {
                        if !cmp.lane(gv[lane], w[lane]) {
                            let _ = writeln!(
                                bad,
                                "  vertex {vi} {}.{}: gpu {:?} (0x{:08X}), reference {}",
                                var.name,
                                ['x', 'y', 'z', 'w'][lane],
                                gv[lane],
                                gv[lane].to_bits(),
                                w[lane]
                            );
                        }
                    }
                }
            }
        }
        if !bad.is_empty() && first_bad.is_none() {
            let mut inputs = String::new();
            for (i, v) in c.v.iter().enumerate().take(8) {
                let _ = writeln!(inputs, "  v{i} = {}", fmt_vec(v));
            }
            for (i, v) in c.c.iter().enumerate().take(32) {
                let _ = writeln!(inputs, "  c{i} = {}", fmt_vec(v));
            }
            let _ = writeln!(inputs, "  i = {:?}, b = 0x{:04X}", c.i, c.b);
            first_bad = Some(format!("== {} ({})\n{listing}case {ci}:\n{bad}inputs:\n{inputs}reproduce: {}", t.name, gpu.device_name, t.reproduce));
        }
    }
    if let Some(b) = first_bad {
        cmp.report(b);
    }
    cmp
}

/// Random inputs: dyadic values in (-4, 4) with 6 fractional bits, or (a quarter of the cases)
/// values from {-1, -0.5, 0, 0.5, 1, 2}; c0 holds small integers (for mova), i0..i3 small loop
/// counts/starts/steps, b random.
pub fn random_state(rng: &mut Rng) -> State {
    let few = rng.chance(25);
    let v4 =
        |rng: &mut Rng| -> [f32; 4] { std::array::from_fn(|_| if few { *rng.pick(&[-1.0, -0.5, 0.0, 0.5, 1.0, 2.0]) } else { rng.dyadic(2, 6) }) };
    let mut s = State::default();
    for k in 0..16 {
        s.v[k] = v4(rng);
    }
    for k in 0..96 {
        s.c[k] = v4(rng);
    }
    s.c[0] = std::array::from_fn(|_| rng.range(-8, 40) as f32 + *rng.pick(&[0.0, 0.0, 0.25, -0.25, 0.75]));
    for k in 0..4 {
        s.i[k] = [rng.range(0, 3) as u8, rng.range(0, 40) as u8, rng.range(0, 3) as u8, rng.range(0, 255) as u8];
    }
    s.b = rng.below(65536) as u16;
    s
}

/// Random valid vertex programs (differential fuzzing).
pub mod gen {
    use super::asm::Asm;
    use super::*;
    use shrec::formats::pica::decode::{Op, Rel};
    use std::sync::LazyLock;

    pub fn reproduce_command(seed: u64, index: u64) -> String {
        format!("SHREC_FUZZ_SEED={seed} SHREC_FUZZ_ONLY={index} cargo test --release --test verify_pica -- --ignored fuzz_one --nocapture")
    }

    /// How the random arithmetic statement writes each op (exhaustive: a new [`Op`] does not
    /// compile until it is placed; the lists below are derived from `Op::ALL` through it).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum ArithForm {
        /// Format 1: a wide and a narrow source.
        Two,
        /// Format 1i: the narrow source first.
        Inverted,
        /// Format 1u: one source.
        One,
        /// Not an `arith` statement: mad / madi / cmp and the flow ops have statements of their own.
        Other,
    }

    const fn arith_form(op: Op) -> ArithForm {
        match op {
            Op::Add | Op::Dp3 | Op::Dp4 | Op::Dph | Op::Dst | Op::Mul | Op::Sge | Op::Slt | Op::Max | Op::Min => ArithForm::Two,
            Op::Dphi | Op::Dsti | Op::Sgei | Op::Slti => ArithForm::Inverted,
            Op::Ex2 | Op::Lg2 | Op::Litp | Op::Flr | Op::Rcp | Op::Rsq | Op::Mova | Op::Mov => ArithForm::One,
            Op::Break
            | Op::Nop
            | Op::End
            | Op::Breakc
            | Op::Call
            | Op::Callc
            | Op::Callu
            | Op::Ifu
            | Op::Ifc
            | Op::Loop
            | Op::Emit
            | Op::Setemit
            | Op::Jmpc
            | Op::Jmpu
            | Op::Cmp
            | Op::Madi
            | Op::Mad => ArithForm::Other,
        }
    }

    /// The mnemonics of one form, in table order.
    fn arith_ops(form: ArithForm) -> Vec<&'static str> {
        Op::ALL.iter().filter(|o| arith_form(**o) == form).map(|o| o.name()).collect()
    }

    static TWO: LazyLock<Vec<&'static str>> = LazyLock::new(|| arith_ops(ArithForm::Two));
    static INV: LazyLock<Vec<&'static str>> = LazyLock::new(|| arith_ops(ArithForm::Inverted));
    static ONE: LazyLock<Vec<&'static str>> = LazyLock::new(|| arith_ops(ArithForm::One));

    const L: [char; 4] = ['x', 'y', 'z', 'w'];

    struct G<'r> {
        rng: &'r mut Rng,
        a: Asm,
        /// Pending subroutines: (call instruction positions to patch, body length).
        subs: Vec<(Vec<u32>, usize)>,
        depth: usize,
        in_loop: bool,
        mova_last: bool,
        /// Geometry program: `setemit` / `emit` statements too.
        gs: bool,
    }

    impl G<'_> {
        fn swz(&mut self) -> String {
            match self.rng.below(3) {
                0 => String::new(),
                _ => format!(".{}", (0..4).map(|_| L[self.rng.below(4) as usize]).collect::<String>()),
            }
        }
        fn neg(&mut self) -> &'static str {
            if self.rng.chance(25) {
                "-"
            } else {
                ""
            }
        }
        fn narrow(&mut self) -> String {
            let r = if self.rng.chance(50) { format!("v{}", self.rng.below(8)) } else { format!("r{}", self.rng.below(8)) };
            format!("{}{r}{}", self.neg(), self.swz())
        }
        /// A wide operand and its relative addressing.
        fn wide(&mut self) -> (String, Rel) {
            let roll = self.rng.below(100);
            if roll < 40 {
                let rel = if self.rng.chance(30) { *self.rng.pick(&[Rel::A0x, Rel::A0y, Rel::AL]) } else { Rel::None };
                let n = self.rng.below(96);
                (format!("{}c{n}{}", self.neg(), self.swz()), rel)
            } else {
                (self.narrow(), Rel::None)
            }
        }
        fn dst(&mut self) -> String {
            let r = if self.rng.chance(30) { format!("o{}", self.rng.below(4)) } else { format!("r{}", self.rng.below(8)) };
            let m = (self.rng.below(15) + 1) as u8;
            if m == 0xF {
                r
            } else {
                format!("{r}.{}", (0..4).filter(|i| m >> i & 1 != 0).map(|i| L[i]).collect::<String>())
            }
        }
        fn arith(&mut self) {
            let roll = self.rng.below(100);
            let d = self.dst();
            if roll < 40 {
                let op = *self.rng.pick(&TWO);
                let (w, rel) = self.wide();
                let n = self.narrow();
                self.a.op(op, &d, &[&w, &n], rel);
            } else if roll < 52 {
                let op = *self.rng.pick(&INV);
                let (w, rel) = self.wide();
                let n = self.narrow();
                self.a.op(op, &d, &[&n, &w], rel);
            } else if roll < 80 {
                let mut op = *self.rng.pick(&ONE);
                if op == "mova" && self.mova_last {
                    op = "mov";
                }
                let (w, rel) = self.wide();
                if op == "mova" {
                    // Integer-valued index source: c0 (small integers, some fractional).
                    let m = *self.rng.pick(&["xy", "x", "y"]);
                    let sw = self.swz();
                    self.a.op("mova", &format!("r0.{m}"), &[&format!("c0{sw}")], Rel::None);
                    self.mova_last = true;
                    return;
                }
                self.a.op(op, &d, &[&w], rel);
            } else if roll < 92 {
                let op = if self.rng.chance(50) { "mad" } else { "madi" };
                let (w, rel) = self.wide();
                let (n1, n2) = (self.narrow(), self.narrow());
                if self.a.descs.len() >= 31 {
                    self.a.op("add", &d, &[&w, &n1], rel);
                } else if op == "mad" {
                    self.a.mad("mad", &d, [&n1, &w, &n2], rel);
                } else {
                    self.a.mad("madi", &d, [&n1, &n2, &w], rel);
                }
            } else {
                let k = |r: &mut Rng| *r.pick(&["eq", "ne", "lt", "le", "gt", "ge"]);
                let kinds = format!("{} {}", k(self.rng), k(self.rng));
                let (w, rel) = self.wide();
                let n = self.narrow();
                self.a.op("cmp", &kinds, &[&w, &n], rel);
            }
            self.mova_last = false;
        }
        fn block(&mut self, n: usize) {
            for _ in 0..n {
                self.stmt();
            }
        }
        fn emit(&mut self) {
            if self.rng.chance(80) {
                let (v, prim, inv) = (self.rng.below(3) as u32, self.rng.chance(60), self.rng.chance(30));
                self.a.setemit(v, prim, inv);
            }
            self.a.simple("emit");
            self.mova_last = false;
        }
        fn stmt(&mut self) {
            if self.gs && self.rng.chance(15) {
                self.emit();
                return;
            }
            let roll = self.rng.below(100);
            self.mova_last = self.mova_last && roll >= 72;
            if roll < 72 || self.depth >= 3 {
                self.arith();
                return;
            }
            self.depth += 1;
            self.mova_last = false;
            match roll {
                72..=79 => {
                    // if (ifc / ifu) with optional else
                    let at = if self.rng.chance(60) {
                        let (x, y, op) = (self.rng.chance(50), self.rng.chance(50), self.rng.below(4) as u32);
                        self.a.flowc("ifc", x, y, op, 0, 0)
                    } else {
                        let id = self.rng.below(16) as u32;
                        self.a.flowu("ifu", id, 0, 0)
                    };
                    let n = self.rng.range(1, 3) as usize;
                    self.block(n);
                    let else_at = self.a.here();
                    let m = if self.rng.chance(50) { self.rng.range(1, 3) as usize } else { 0 };
                    self.block(m);
                    let num = self.a.here() - else_at;
                    self.a.patch(at, else_at, num);
                }
                80..=86 => {
                    // loop over i<id>; body may break/breakc
                    let id = self.rng.below(4) as u32;
                    let at = self.a.flowu("loop", id, 0, 0);
                    let was = self.in_loop;
                    self.in_loop = true;
                    let n = self.rng.range(1, 3) as usize;
                    self.block(n);
                    if self.rng.chance(30) {
                        let (x, y, op) = (self.rng.chance(50), self.rng.chance(50), self.rng.below(4) as u32);
                        self.a.flowc("breakc", x, y, op, 0, 0);
                        self.arith();
                    }
                    if self.gs && self.rng.chance(30) {
                        // ifc { break } (the VS generator never emits an unconditional break)
                        let (x, y, op) = (self.rng.chance(50), self.rng.chance(50), self.rng.below(4) as u32);
                        let at = self.a.flowc("ifc", x, y, op, 0, 0);
                        self.a.simple("break");
                        let here = self.a.here();
                        self.a.patch(at, here, 0);
                        self.a.simple("nop");
                        self.arith();
                    }
                    self.in_loop = was;
                    let last = self.a.here() - 1;
                    self.a.patch(at, last, 0);
                    self.a.simple("nop"); // padding after a block end (erratum, picasso inserts it)
                }
                87..=93 => {
                    // call / callc / callu of a subroutine placed after `end`
                    let at = match self.rng.below(3) {
                        0 => self.a.flowc("call", false, false, 0, 0, 0),
                        1 => {
                            let (x, y, op) = (self.rng.chance(50), self.rng.chance(50), self.rng.below(4) as u32);
                            self.a.flowc("callc", x, y, op, 0, 0)
                        }
                        _ => {
                            let id = self.rng.below(16) as u32;
                            self.a.flowu("callu", id, 0, 0)
                        }
                    };
                    self.subs.push((vec![at], self.rng.range(1, 4) as usize));
                }
                _ => {
                    // forward jmpc / jmpu over a few instructions
                    let at = if self.rng.chance(50) {
                        let (x, y, op) = (self.rng.chance(50), self.rng.chance(50), self.rng.below(4) as u32);
                        self.a.flowc("jmpc", x, y, op, 0, 0)
                    } else {
                        let id = self.rng.below(16) as u32;
                        let inv = self.rng.below(2) as u32;
                        self.a.flowu("jmpu", id, 0, inv)
                    };
                    let n = self.rng.range(1, 3) as usize;
                    for _ in 0..n {
                        self.arith();
                    }
                    let target = self.a.here();
                    let w = self.a.code[at as usize];
                    self.a.patch(at, target, w & 0xFF);
                    self.a.simple("nop");
                }
            }
            self.depth -= 1;
        }
    }

    /// Program `index` of the fuzzing run `seed`, with 4 random cases.
    pub fn program(seed: u64, index: u64) -> TestProgram {
        let mut rng = Rng::new(seed.wrapping_mul(0x100_0000_01B3) ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let n = rng.range(3, 16) as usize;
        let mut g = G { rng: &mut rng, a: Asm::default(), subs: vec![], depth: 0, in_loop: false, mova_last: false, gs: false };
        g.block(n);
        // Fill the outputs o0..o3 at the end (position, color, texcoord0, texcoord1) partially.
        for o in 0..4 {
            if g.rng.chance(50) {
                let (w, rel) = g.wide();
                g.a.op("mov", &format!("o{o}.{}", *g.rng.pick(&["xy", "zw", "x", "yzw"])), &[&w], rel);
            }
        }
        g.a.simple("end");
        let subs = std::mem::take(&mut g.subs);
        for (calls, len) in subs {
            let start = g.a.here();
            g.depth = 3; // plain arithmetic in subroutines
            for _ in 0..len {
                g.arith();
            }
            for c in calls {
                let w = g.a.code[c as usize];
                let _ = w;
                g.a.patch(c, start, len as u32);
            }
        }
        let outputs = [(0u16, 0u16, 0xFu8), (2, 1, 0xF), (3, 2, 0x3), (5, 3, 0x3)];
        let bytes = dvlb(&g.a, 0, &outputs, &[]);
        let cases = (0..4).map(|_| random_state(&mut rng)).collect();
        TestProgram { name: format!("fuzz seed {seed} program {index}"), bytes, dvle: 0, cases, reproduce: reproduce_command(seed, index) }
    }

    pub fn gs_reproduce_command(seed: u64, index: u64) -> String {
        format!("SHREC_FUZZ_SEED={seed} SHREC_FUZZ_ONLY={index} cargo test --release --test verify_pica -- --ignored gs_fuzz_one --nocapture")
    }

    /// Geometry program `index` of the fuzzing run `seed`: a DVLB with a pass-through VS (o0, o1
    /// raw outputs) and a point-mode GS reading v0..v7 (so 1-4 input vertices), made of the same
    /// random statements plus `setemit`/`emit`, writing position, color, texcoord0 and texcoord1.
    pub fn gs_program(seed: u64, index: u64) -> TestProgram {
        let mut rng = Rng::new(seed.wrapping_mul(0x100_0000_01B3) ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x6753);
        let mut a = Asm::default();
        a.op("mov", "o0", &["v0"], Rel::None);
        a.op("mov", "o1", &["v1"], Rel::None);
        a.simple("end");
        let main = a.here();
        let n = rng.range(3, 14) as usize;
        let mut g = G { rng: &mut rng, a, subs: vec![], depth: 0, in_loop: false, mova_last: false, gs: true };
        g.block(n);
        if g.rng.chance(70) {
            g.a.setemit(2, true, g.rng.chance(30));
            g.a.simple("emit");
        }
        g.a.simple("end");
        let subs = std::mem::take(&mut g.subs);
        for (calls, len) in subs {
            let start = g.a.here();
            g.depth = 3;
            for _ in 0..len {
                g.stmt();
            }
            for c in calls {
                g.a.patch(c, start, len as u32);
            }
        }
        let outputs = vec![(0u16, 0u16, 0xFu8), (2, 1, 0xF), (3, 2, 0x3), (5, 3, 0x3)];
        let vs = Dvle { main: 0, outputs: vec![(0, 0, 0xF), (2, 1, 0xF)], ..Dvle::default() };
        let gs = Dvle { main, geometry: Some(([0, 0, 0, 0], false)), outputs, constants: vec![] };
        let bytes = dvlb_multi(&g.a, &[vs, gs]);
        let cases = (0..4).map(|_| random_state(&mut rng)).collect();
        TestProgram { name: format!("gs fuzz seed {seed} program {index}"), bytes, dvle: 1, cases, reproduce: gs_reproduce_command(seed, index) }
    }
}

/// The shared GPU (see [`super::vk::require`]).
pub fn gpu_or_skip() -> Option<&'static Gpu> {
    super::vk::require()
}
