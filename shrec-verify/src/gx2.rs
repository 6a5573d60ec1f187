//! GX2 (Latte) adapter of the verification harness: a small Latte assembler (CF list + ALU
//! groups + fetch clauses → program bytes, bit layouts from docs/isa/gx2.md §5-§7), GX2 VS/PS structs
//! around it, running them through shrec (lower → HLSL → DXC SPIR-V, as the build does) on
//! lavapipe and comparing every output lane with `formats::gx2::interp`; plus a random program
//! generator for differential fuzzing.

use super::check::{self, PixelExpect, VertexExpect};
use super::vk::{FragmentQuad, Gpu, VertexInvocation};
use super::{Comparison, Expect, Rng, TextureShape};
use crate::interp::gx2::{self as interp, Inputs, Run, V};
use shrec::formats::gx2::isa;
use shrec::formats::gx2::shader_struct::{AttribVar, Gx2Shader, LoopVar, SamplerVar, ShaderKind, UniformBlock};
use shrec::ir::{Module, Semantic};
use std::fmt::Write;

/// Assembler (mirrors the field layouts the decoder reads).
pub mod asm {
    use shrec::formats::gx2::isa;

    /// ALU source: select, channel, negate, relative, abs.
    #[derive(Clone, Copy, Debug)]
    pub struct S {
        pub sel: u32,
        pub chan: u8,
        pub neg: bool,
        pub rel: bool,
        pub abs: bool,
    }
    pub fn r(g: u32, c: u8) -> S {
        S { sel: g, chan: c, neg: false, rel: false, abs: false }
    }
    pub fn c(i: u32, ch: u8) -> S {
        S { sel: 256 + i, ..r(0, ch) }
    }
    pub fn kc(i: u32, ch: u8) -> S {
        S { sel: 128 + i, ..r(0, ch) }
    }
    pub fn lit(ch: u8) -> S {
        S { sel: isa::SEL_LITERAL, ..r(0, ch) }
    }
    pub fn special(sel: u32) -> S {
        S { sel, ..r(0, 0) }
    }
    pub fn pv(ch: u8) -> S {
        S { sel: isa::SEL_PV, ..r(0, ch) }
    }
    pub fn ps() -> S {
        S { sel: isa::SEL_PS, ..r(0, 0) }
    }
    impl S {
        pub fn neg(mut self) -> S {
            self.neg = true;
            self
        }
        pub fn abs(mut self) -> S {
            self.abs = true;
            self
        }
        pub fn rel(mut self) -> S {
            self.rel = true;
            self
        }
        /// The same operand, channel `chan`.
        pub fn ch(mut self, chan: u8) -> S {
            self.chan = chan;
            self
        }
    }

    /// One ALU instruction.
    #[derive(Clone, Debug)]
    pub struct A {
        pub name: &'static str,
        pub dst: (u32, u8),
        pub src: Vec<S>,
        pub write: bool,
        pub exec: bool,
        pub pred: bool,
        pub pred_sel: u32,
        pub index_mode: u32,
        pub dst_rel: bool,
        pub clamp: bool,
        pub omod: u32,
    }
    pub fn a(name: &'static str, dst: (u32, u8), src: &[S]) -> A {
        A { name, dst, src: src.to_vec(), write: true, exec: false, pred: false, pred_sel: 0, index_mode: 0, dst_rel: false, clamp: false, omod: 0 }
    }
    impl A {
        /// WRITE_MASK clear: the result goes to PV/PS only.
        pub fn nowrite(mut self) -> A {
            self.write = false;
            self
        }
        /// UPDATE_EXEC_MASK.
        pub fn exec(mut self) -> A {
            self.exec = true;
            self
        }
        /// UPDATE_PRED.
        pub fn upd_pred(mut self) -> A {
            self.pred = true;
            self
        }
        /// PRED_SEL: 2 = write when the predicate is 0, 3 = when it is 1.
        pub fn pred_sel(mut self, p: u32) -> A {
            self.pred_sel = p;
            self
        }
        /// INDEX_MODE: 0-3 AR.x-w, 4 the loop index.
        pub fn index(mut self, mode: u32) -> A {
            self.index_mode = mode;
            self
        }
        /// DST_REL: the destination GPR is relative (INDEX_MODE).
        pub fn dst_rel(mut self) -> A {
            self.dst_rel = true;
            self
        }
        pub fn words(&self, last: bool) -> [u32; 2] {
            let s = |k: usize| self.src.get(k).copied().unwrap_or(special(248));
            let f = |x: S| x.sel | (x.rel as u32) << 9 | (x.chan as u32) << 10 | (x.neg as u32) << 12;
            let w0 = f(s(0)) | f(s(1)) << 13 | self.index_mode << 26 | self.pred_sel << 29 | (last as u32) << 31;
            let common = self.dst.0 << 21 | (self.dst_rel as u32) << 28 | (self.dst.1 as u32) << 29 | (self.clamp as u32) << 31;
            let op = isa::AluOp::from_name(self.name).unwrap_or_else(|| panic!("no opcode {}", self.name));
            let w1 = if op.info().op3 {
                f(s(2)) | op.code() << 13 | common
            } else {
                (s(0).abs as u32)
                    | (s(1).abs as u32) << 1
                    | (self.exec as u32) << 2
                    | (self.pred as u32) << 3
                    | (self.write as u32) << 4
                    | self.omod << 5
                    | op.code() << 7
                    | common
            };
            [w0, w1]
        }
    }

    /// A group: instructions + literal dwords.
    #[derive(Clone, Debug)]
    pub struct G(pub Vec<A>, pub Vec<u32>);

    /// A TEX-clause fetch (3 words).
    #[derive(Clone, Debug)]
    pub struct T(pub [u32; 3]);
    /// TEX fetch: dst select xyzw, normalized coordinates.
    pub fn tex(name: &str, res: u32, smp: u32, src: u32, dst: u32, src_sel: [u32; 4]) -> T {
        let op = isa::TexOp::from_name(name).unwrap_or_else(|| panic!("no TEX {name}")).code();
        let w0 = op | res << 8 | src << 16;
        let w1 = dst | 1 << 12 | 2 << 15 | 3 << 18 | 0xF << 28;
        let w2 = smp << 15 | src_sel[0] << 20 | src_sel[1] << 23 | src_sel[2] << 26 | src_sel[3] << 29;
        T([w0, w1, w2])
    }
    /// `t` with OFFSET_X/Y/Z (TEX word 2 bits 0-14, 5-bit signed each) set to `half_texels`.
    pub fn with_offset(mut t: T, half_texels: [i32; 3]) -> T {
        for (k, o) in half_texels.into_iter().enumerate() {
            t.0[2] = (t.0[2] & !(0x1F << (5 * k))) | ((o as u32) & 0x1F) << (5 * k);
        }
        t
    }
    /// VTX_FETCH of uniform block `loc`: element asint(src.x) + offset / 16.
    pub fn vfetch(loc: u32, src: u32, dst: u32, offset: u32) -> T {
        let w0 = (0x80 + loc) << 8 | src << 16 | 15 << 26;
        let w1 = dst | 1 << 12 | 2 << 15 | 3 << 18 | 34 << 22;
        T([w0, w1, offset | 1 << 19])
    }

    /// A CF instruction.
    #[derive(Clone, Debug)]
    pub enum C {
        N {
            op: &'static str,
            addr: u32,
            pop: u32,
            cf_const: u32,
            tex: Vec<T>,
        },
        Alu {
            op: &'static str,
            kc: [(u32, u32, u32); 2],
            groups: Vec<G>,
        },
        /// EXP/EXP_DONE: type (0 pixel, 1 pos, 2 param), base, gpr, burst, sel.
        Exp {
            done: bool,
            ty: u32,
            base: u32,
            gpr: u32,
            burst: u32,
            sel: [u32; 4],
        },
        /// MEM_RING: type (0 WRITE, 1 WRITE_IND), ARRAY_BASE (dwords), GPR, INDEX_GPR, burst,
        /// COMP_MASK; ELEM_SIZE 3, ARRAY_SIZE 0xFFF.
        Ring {
            ty: u32,
            base: u32,
            gpr: u32,
            index_gpr: u32,
            burst: u32,
            mask: u32,
        },
        /// MEM_SCRATCH: TYPE (0 WRITE, 2 WRITE_ACK), ARRAY_BASE (float4 elements), RW_GPR,
        /// BURST_COUNT, COMP_MASK; ELEM_SIZE 3, ARRAY_SIZE 0 (what Mesa r600 writes for a direct
        /// spill; docs/gx2.md "GX2 scratch memory").
        Scratch {
            ty: u32,
            base: u32,
            gpr: u32,
            burst: u32,
            mask: u32,
        },
        /// Any export / memory CF opcode `op` with COMP_MASK 0xF and every other field zero
        /// (for the opcodes a translator must reject by name).
        Mem {
            op: u32,
        },
        /// MEM_STREAM`buffer` (0-3): TYPE, ARRAY_BASE (dwords), RW_GPR, ELEM_SIZE, ARRAY_SIZE,
        /// COMP_MASK, BURST_COUNT (docs/gx2.md "GX2 stream-out").
        Stream {
            buffer: u32,
            ty: u32,
            base: u32,
            gpr: u32,
            elem_size: u32,
            array_size: u32,
            mask: u32,
            burst: u32,
        },
    }
    /// A ring FETCH (buffer 0x9F, NO_INDEX_OFFSET, the ring's own format): R\[dst\] = the float4
    /// at dword asint(R\[src\].chan) + offset / 4, through `dst_sel`.
    pub fn ring_fetch(src: u32, chan: u32, dst: u32, dst_sel: [u32; 4], offset: u32) -> T {
        let w0 = 2 << 5 | shrec::formats::gx2::ring::RING_BUFFER_ID << 8 | src << 16 | chan << 24 | 15 << 26;
        let w1 = dst | dst_sel[0] << 9 | dst_sel[1] << 12 | dst_sel[2] << 15 | dst_sel[3] << 18 | 1 << 21;
        T([w0, w1, offset | 1 << 19])
    }
    /// A TEX-clause MEM read of scratch element `element` into R\[dst\] through `dst_sel`, in
    /// the MEM_RD layout Mesa r600 writes for a direct spill read (MEM_OP 0, ELEM_SIZE 3,
    /// UNCACHED, FMT_32_32_32_32, NUM_FORMAT INT).
    pub fn scratch_read(element: u32, dst: u32, dst_sel: [u32; 4]) -> T {
        let w0 = 2 | 3 << 5 | 1 << 11;
        let w1 = dst | dst_sel[0] << 9 | dst_sel[1] << 12 | dst_sel[2] << 15 | dst_sel[3] << 18 | 0x22 << 22 | 1 << 28;
        T([w0, w1, element])
    }
    /// MEM_SCRATCH WRITE_ACK of lanes `mask` of R\[gpr\] into element `base`.
    pub fn scratch_write(base: u32, gpr: u32, mask: u32) -> C {
        C::Scratch { ty: 2, base, gpr, burst: 0, mask }
    }
    pub fn cf(op: &'static str) -> C {
        C::N { op, addr: 0, pop: 0, cf_const: 0, tex: vec![] }
    }
    pub fn cf_pop(op: &'static str, pop: u32) -> C {
        C::N { op, addr: 0, pop, cf_const: 0, tex: vec![] }
    }
    pub fn alu(op: &'static str, groups: Vec<G>) -> C {
        C::Alu { op, kc: [(0, 0, 0); 2], groups }
    }

    /// CF words first, then the clauses (fetch clauses at even slots); `eop` gets END_OF_PROGRAM.
    pub fn assemble(cfs: &[C], eop: usize) -> Vec<u8> {
        let n = cfs.len() as u32 + (cfs.len() as u32 & 1);
        let mut clause: Vec<u32> = Vec::new();
        let mut cfw = Vec::new();
        let slot = |v: &Vec<u32>| n + v.len() as u32 / 2;
        for (i, x) in cfs.iter().enumerate() {
            let end = (i == eop) as u32;
            let w = match x {
                C::N { op, addr, pop, cf_const, tex } => {
                    let code = isa::CfOp::from_name(op).unwrap_or_else(|| panic!("CF {op}")).code();
                    let (addr, count) = if tex.is_empty() {
                        (*addr, 0)
                    } else {
                        if slot(&clause) % 2 == 1 {
                            clause.extend([0, 0]);
                        }
                        let a = slot(&clause);
                        for t in tex {
                            clause.extend(t.0);
                            clause.push(0);
                        }
                        (a, tex.len() as u32 - 1)
                    };
                    [addr, pop | cf_const << 3 | (count & 7) << 10 | (count >> 3) << 19 | end << 21 | code << 23 | 1 << 31]
                }
                C::Alu { op, kc, groups } => {
                    let code = isa::AluCfOp::from_name(op).unwrap_or_else(|| panic!("ALU CF {op}")).code();
                    let at = slot(&clause);
                    for G(insts, lits) in groups {
                        for (k, i) in insts.iter().enumerate() {
                            clause.extend(i.words(k + 1 == insts.len()));
                        }
                        // exactly the literal dwords the sources reference (the decoder's rule)
                        let need = insts
                            .iter()
                            .flat_map(|i| i.src.iter())
                            .filter(|s| s.sel == isa::SEL_LITERAL)
                            .map(|s| s.chan as usize + 1)
                            .max()
                            .unwrap_or(0);
                        let mut l: Vec<u32> = lits.iter().copied().chain(std::iter::repeat(0)).take(need).collect();
                        if l.len() % 2 == 1 {
                            l.push(0);
                        }
                        clause.extend(l);
                    }
                    let count = slot(&clause) - at - 1;
                    [at | kc[0].0 << 22 | kc[1].0 << 26 | kc[0].1 << 30, kc[1].1 | kc[0].2 << 2 | kc[1].2 << 10 | count << 18 | code << 26 | 1 << 31]
                }
                C::Ring { ty, base, gpr, index_gpr, burst, mask } => {
                    [base | ty << 13 | gpr << 15 | index_gpr << 23 | 3 << 30, 0xFFF | mask << 12 | burst << 17 | end << 21 | 0x26 << 23 | 1 << 31]
                }
                C::Mem { op } => [0, 0xF << 12 | end << 21 | op << 23 | 1 << 31],
                C::Scratch { ty, base, gpr, burst, mask } => {
                    [base | ty << 13 | gpr << 15 | 3 << 30, mask << 12 | burst << 17 | end << 21 | 0x24 << 23 | 1 << 31]
                }
                C::Stream { buffer, ty, base, gpr, elem_size, array_size, mask, burst } => [
                    base | ty << 13 | gpr << 15 | elem_size << 30,
                    array_size | mask << 12 | burst << 17 | end << 21 | (0x20 + buffer) << 23 | 1 << 31,
                ],
                C::Exp { done, ty, base, gpr, burst, sel } => {
                    let op = if *done { 0x28 } else { 0x27 };
                    [base | ty << 13 | gpr << 15, sel[0] | sel[1] << 3 | sel[2] << 6 | sel[3] << 9 | burst << 17 | end << 21 | op << 23 | 1 << 31]
                }
            };
            cfw.extend(w);
        }
        if cfs.len() % 2 == 1 {
            cfw.extend([0, 0]); // NOP padding so clauses start at an even slot count
        }
        cfw.extend(clause);
        cfw.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// A GFD v7.1 file with one shader (the synthetic GX2 tests and the compact-HLSL bench write
/// theirs with it): header block (BE struct, arrays, strings, patch table,
/// `}BLK` trailer; pointers tagged 0xD06/0xCA7), program block, end-of-file block.
pub fn gfd(s: &Gx2Shader) -> Vec<u8> {
    const D: u32 = 0xD060_0000;
    const STR: u32 = 0xCA70_0000;
    let kind = s.kind;
    let f = kind.var_fields();
    let mut b: Vec<u8> = vec![0; kind.struct_size()];
    let mut words = s.words.clone();
    let mut patches: Vec<u32> = Vec::new();
    let mut strings: Vec<(usize, String)> = Vec::new();
    let be = |b: &mut Vec<u8>, x: u32| b.extend_from_slice(&x.to_be_bytes());
    let arr = |b: &mut Vec<u8>, words: &mut Vec<u32>, field: usize, n: usize, patches: &mut Vec<u32>| {
        words[field / 4] = n as u32;
        if n > 0 {
            words[field / 4 + 1] = D | b.len() as u32;
            patches.push(D | (field + 4) as u32);
        }
    };
    arr(&mut b, &mut words, f.uniform_blocks, s.uniform_blocks.len(), &mut patches);
    for x in &s.uniform_blocks {
        strings.push((b.len(), x.name.clone()));
        for v in [0, x.offset, x.size] {
            be(&mut b, v);
        }
    }
    arr(&mut b, &mut words, f.loop_vars, s.loop_vars.len(), &mut patches);
    for x in &s.loop_vars {
        be(&mut b, x.offset);
        be(&mut b, x.value);
    }
    arr(&mut b, &mut words, f.sampler_vars, s.sampler_vars.len(), &mut patches);
    for x in &s.sampler_vars {
        strings.push((b.len(), x.name.clone()));
        for v in [0, x.ty, x.location] {
            be(&mut b, v);
        }
    }
    if let Some(af) = f.attrib_vars {
        arr(&mut b, &mut words, af, s.attrib_vars.len(), &mut patches);
        for x in &s.attrib_vars {
            strings.push((b.len(), x.name.clone()));
            for v in [0, x.ty, x.count, x.location] {
                be(&mut b, v);
            }
        }
    }
    for (at, name) in strings {
        let p = STR | b.len() as u32;
        b[at..at + 4].copy_from_slice(&p.to_be_bytes());
        patches.push(D | at as u32);
        b.extend_from_slice(name.as_bytes());
        b.push(0);
    }
    while !b.len().is_multiple_of(4) {
        b.push(0);
    }
    let (so, _) = kind.program_fields();
    words[so / 4] = s.program.len() as u32;
    if kind == ShaderKind::Geometry {
        words[0x54 / 4] = s.copy_program.len() as u32;
    }
    for (i, w) in words.iter().enumerate() {
        b[i * 4..i * 4 + 4].copy_from_slice(&w.to_be_bytes());
    }
    let pt = b.len() as u32;
    for p in &patches {
        be(&mut b, *p);
    }
    let data_size = pt;
    for v in [u32::from_be_bytes(*b"}BLK"), 0x28, 0, data_size, D, 0, 0, 0, patches.len() as u32, D | pt] {
        be(&mut b, v);
    }
    let (ht, pt_) = match kind {
        ShaderKind::Vertex => (3, 5),
        ShaderKind::Pixel => (6, 7),
        ShaderKind::Geometry => (8, 9),
    };
    let mut out = Vec::new();
    for v in [u32::from_be_bytes(*b"Gfx2"), 0x20, 7, 1, 2, 0, 0, 0] {
        be(&mut out, v);
    }
    let block = |out: &mut Vec<u8>, ty: u32, data: &[u8]| {
        for v in [u32::from_be_bytes(*b"BLK{"), 0x20, 1, 0, ty, data.len() as u32, 0, 0] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        out.extend_from_slice(data);
    };
    block(&mut out, ht, &b);
    block(&mut out, pt_, &s.program);
    if kind == ShaderKind::Geometry {
        block(&mut out, 10, &s.copy_program);
    }
    block(&mut out, 1, &[]);
    out
}

/// A GX2 shader struct of `kind` from its register `words` and programs, with no variables but
/// `loop_vars` (the test shaders' common part).
pub fn bare_shader(kind: ShaderKind, words: Vec<u32>, program: Vec<u8>, copy_program: Vec<u8>, loop_vars: Vec<LoopVar>) -> Gx2Shader {
    Gx2Shader {
        kind,
        words,
        uniform_blocks: vec![],
        uniform_vars: vec![],
        initial_values: vec![],
        loop_vars,
        sampler_vars: vec![],
        attrib_vars: vec![],
        program,
        copy_program,
    }
}

/// SPI_VS_OUT_ID[10] (VS and GS structs): PARAM i → semantic i for i < `n_params`, 0xFF (unused)
/// in the other bytes.
pub(super) fn vs_out_ids(n_params: u32) -> [u32; 10] {
    std::array::from_fn(|k| (0..4).fold(0, |w, b| w | if 4 * k as u32 + b < n_params { 4 * k as u32 + b } else { 0xFF } << (8 * b)))
}

/// A GX2 VS: attributes at locations 0..n_attr in SQ_VTX_SEMANTIC slots 0.. (→ R1..), PARAM i →
/// semantic i. Register mode unless `block` (then uniform block at location 1, 64 vec4).
pub fn vertex_shader(program: Vec<u8>, n_attr: u32, n_params: u32, block: bool, loop_vars: Vec<LoopVar>) -> Gx2Shader {
    let mut words = vec![0u32; ShaderKind::Vertex.struct_size() / 4];
    words[0] = 16;
    words[0x08 / 4] = n_params.saturating_sub(1) << 1;
    words[0x0C / 4] = n_params.div_ceil(4);
    words[0x10 / 4..0x10 / 4 + 10].copy_from_slice(&vs_out_ids(n_params));
    words[0x40 / 4] = n_attr;
    for k in 0..32 {
        words[0x44 / 4 + k] = if (k as u32) < n_attr { k as u32 } else { 0xFF };
    }
    let attrib_vars = (0..n_attr).map(|l| AttribVar { name: format!("a{l}"), ty: 11, count: 0, location: l }).collect();
    let mut s = bare_shader(ShaderKind::Vertex, words, program, Vec::new(), loop_vars);
    s.attrib_vars = attrib_vars;
    if block {
        set_block_mode(&mut s);
    }
    s
}

/// A GX2 PS: R i = varying semantic i for i < n_in; `n_targets` colour exports.
pub fn pixel_shader(program: Vec<u8>, n_in: u32, n_targets: u32, block: bool, loop_vars: Vec<LoopVar>) -> Gx2Shader {
    let mut words = vec![0u32; ShaderKind::Pixel.struct_size() / 4];
    words[0] = 16;
    words[1] = n_targets << 1; // byte offset 0x04
    words[0x08 / 4] = n_in;
    words[0x10 / 4] = n_in;
    for i in 0..n_in as usize {
        words[0x14 / 4 + i] = i as u32;
    }
    words[0x94 / 4] = (1u32 << (4 * n_targets)) - 1;
    words[0x98 / 4] = (1 << n_targets) - 1;
    let mut s = bare_shader(ShaderKind::Pixel, words, program, Vec::new(), loop_vars);
    if block {
        set_block_mode(&mut s);
    }
    s
}

/// Uniform-block mode with one block at location 1 (64 vec4).
pub const BLOCK_LOC: u32 = 1;
pub const BLOCK_LEN: usize = 64;

fn set_block_mode(s: &mut Gx2Shader) {
    let f = s.kind.var_fields();
    s.words[f.mode / 4] = 1;
    s.uniform_blocks = vec![UniformBlock { name: "UB".into(), offset: BLOCK_LOC, size: BLOCK_LEN as u32 * 16 }];
}

/// A program and its invocations (VS: one `Inputs` per vertex; PS: quads of four).
#[derive(Clone, Debug)]
pub struct TestProgram {
    pub name: String,
    pub shader: Gx2Shader,
    pub cases: Vec<Inputs>,
    /// PS only: the quads the cases came from (cases = 4 per quad).
    pub quads: Vec<FragmentQuad>,
    pub reproduce: String,
}

pub(super) fn expect(v: V) -> Expect {
    if !v.known() {
        Expect::UNKNOWN
    } else {
        Expect { value: v.val(), err: v.err }
    }
}

fn expect4(v: &[V; 4]) -> [Expect; 4] {
    v.map(expect)
}

/// Uniform data for each const buffer of the module, from one invocation's inputs.
pub(super) fn uniform_data(module: &Module, inp: &Inputs) -> Vec<Vec<[f32; 4]>> {
    module
        .const_buffers
        .iter()
        .map(|cb| {
            let words: Vec<[u32; 4]> = if cb.var == "C" {
                inp.regfile.clone()
            } else {
                let loc: u32 = cb.var.trim_start_matches("CB").parse().unwrap_or(u32::MAX);
                inp.blocks.get(&loc).cloned().unwrap_or_default()
            };
            let mut v: Vec<[f32; 4]> = words.iter().map(|w| w.map(f32::from_bits)).collect();
            v.resize(cb.len as usize, [0.0; 4]);
            v
        })
        .collect()
}

fn textures(module: &Module, inp: &Inputs) -> Vec<super::vk::TextureSpec> {
    let bound = |i: usize| {
        let name = &module.textures[i].tex_var;
        let res: u32 = name.trim_start_matches('t').split('_').next().and_then(|x| x.parse().ok()).unwrap_or(0);
        // the view type follows the module's declaration; the interpreter finds contents of
        // the other kind undetermined
        let shape = TextureShape::of(module.textures[i].dim);
        inp.textures.iter().find(|t| t.resource == res && t.shape == shape)
    };
    let mut specs = check::texture_specs(module, |i| match bound(i) {
        Some(t) => (t.size, t.texels.clone()),
        None => (1, vec![[0.0; 4]; if module.textures[i].dim.is_cube() { 6 } else { 1 }]),
    });
    for (i, spec) in specs.iter_mut().enumerate() {
        if let Some(t) = bound(i) {
            spec.height = t.height;
            spec.mips = t.mips.clone();
            spec.layers = t.layers;
        }
    }
    specs
}

fn vertex_expect(s: &Gx2Shader, r: &Run) -> VertexExpect {
    if r.undetermined {
        return VertexExpect { position: [Expect::UNKNOWN; 4], varyings: vec![[Expect::UNKNOWN; 4]; 44] };
    }
    let get = |t: (u32, u32)| r.exports.get(&t).map_or([Expect::UNKNOWN; 4], expect4);
    let mut varyings = vec![[Expect::UNKNOWN; 4]; 44];
    for (&(ty, idx), v) in &r.exports {
        if ty == 2 {
            let word = s.reg(0x10 + 4 * (idx / 4) as usize);
            let sem = (word >> (8 * (idx % 4)) & 0xFF) as usize;
            if sem < 40 {
                varyings[sem] = expect4(v);
            }
        } else if ty == 1 && (61..=63).contains(&idx) {
            varyings[(40 + idx - 61) as usize] = expect4(v);
        }
    }
    VertexExpect { position: get((1, 60)), varyings }
}

fn pixel_expect(r: &Run) -> PixelExpect {
    if r.undetermined {
        return PixelExpect { written: None, colors: vec![], depth: Expect::UNKNOWN };
    }
    let colors = (0..8).map(|n| r.exports.get(&(0, n)).map_or([Expect::UNKNOWN; 4], expect4)).collect();
    let depth = r.exports.get(&(0, 61)).map_or(Expect::UNKNOWN, |v| {
        let e = expect(v[0]);
        if e.is_known() {
            Expect { value: e.value.clamp(0.0, 1.0), err: e.err }
        } else {
            e
        }
    });
    PixelExpect { written: Some(!r.killed), colors, depth }
}

/// A failed step of program `t`'s run, counted as a mismatch of `cmp` with its report.
pub(crate) fn fail(cmp: &mut Comparison, t: &TestProgram, what: String) {
    cmp.mismatches += 1;
    cmp.report(format!("== {}: {what}\nreproduce: {}", t.name, t.reproduce));
}

/// What a run starts from: the decoded program, its listing, its IR and the SPIR-V the build
/// makes of it.
pub(crate) struct Compiled {
    pub prog: isa::Program,
    pub listing: String,
    pub module: Module,
    pub spirv: Vec<u8>,
}

/// Decodes, lists, translates and compiles `t`'s program; a failing step is a mismatch of `cmp`
/// (see [`fail`]) and gives None.
pub(crate) fn compile(gpu: &Gpu, t: &TestProgram, cmp: &mut Comparison) -> Option<Compiled> {
    let prog = match isa::decode(&t.shader.program) {
        Ok(p) => p,
        Err(e) => {
            fail(cmp, t, format!("decode: {e}"));
            return None;
        }
    };
    let listing = shrec::formats::gx2::disasm::disassemble(&prog);
    let compiled =
        shrec::formats::gx2::lower::lower(&t.shader).map_err(|e| format!("translate: {e}")).and_then(|m| check::spirv(gpu, &m).map(|s| (m, s)));
    match compiled {
        Ok((module, spirv)) => Some(Compiled { prog, listing, module, spirv }),
        Err(e) => {
            fail(cmp, t, format!("{e}\n{listing}"));
            None
        }
    }
}

/// One vertex invocation per case: the attributes the module reads and its uniform data.
pub(crate) fn vertex_invocations(module: &Module, cases: &[Inputs]) -> Vec<VertexInvocation> {
    cases
        .iter()
        .map(|c| VertexInvocation {
            attributes: module
                .inputs
                .iter()
                .filter_map(|v| match v.semantic {
                    Semantic::Texcoord(l) => Some((l, c.attribs.get(&l).copied().unwrap_or([0.0; 4]))),
                    _ => None,
                })
                .collect(),
            uniforms: uniform_data(module, c),
        })
        .collect()
}

/// Runs one program through shrec and the GPU and compares every output lane of every case.
pub fn run(gpu: &Gpu, t: &TestProgram) -> Comparison {
    let mut cmp = Comparison { programs: 1, ..Default::default() };
    let Some(Compiled { prog, listing, module, spirv }) = compile(gpu, t, &mut cmp) else { return cmp };
    let mut executed = std::collections::BTreeSet::new();
    let first = t.cases.first().cloned().unwrap_or_default();
    // one set of textures per job (the first case's), as the GPU sees them
    let cases: Vec<Inputs> = t.cases.iter().map(|c| Inputs { textures: first.textures.clone(), ..c.clone() }).collect();
    let t = &TestProgram { cases, ..t.clone() };
    let outcome = if t.shader.kind == ShaderKind::Vertex {
        let invocations = vertex_invocations(&module, &t.cases);
        check::vertex(gpu, &module, &spirv, textures(&module, &first), invocations, &mut |i| {
            let r = interp::run(&t.shader, &prog, &t.cases[i]);
            executed.extend(r.executed.iter().copied());
            vertex_expect(&t.shader, &r)
        })
    } else {
        let quads: Vec<FragmentQuad> =
            t.quads.iter().enumerate().map(|(q, fq)| FragmentQuad { uniforms: uniform_data(&module, &t.cases[4 * q]), ..fq.clone() }).collect();
        check::fragment(gpu, &module, &spirv, textures(&module, &first), quads, &mut |q, _| {
            let inp: [Inputs; 4] = std::array::from_fn(|p| t.cases[4 * q + p].clone());
            let runs = interp::run_quad(&t.shader, &prog, &inp);
            for r in &runs {
                executed.extend(r.executed.iter().copied());
            }
            runs.map(|r| pixel_expect(&r))
        })
    };
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            fail(&mut cmp, t, format!("GPU run failed: {e}\n{listing}"));
            return cmp;
        }
    };
    cmp.merge(outcome.cmp);
    cmp.opcodes.extend(executed.iter().map(|s| s.to_string()));
    if let Some((ci, lanes)) = outcome.first_mismatch {
        let case = if t.shader.kind == ShaderKind::Vertex { ci } else { 4 * ci };
        let c = &t.cases[case];
        let mut inputs = String::new();
        for (l, v) in &c.attribs {
            let _ = writeln!(inputs, "  attrib/varying {l} = {v:?}");
        }
        for (i, v) in c.regfile.iter().enumerate().take(16) {
            let _ = writeln!(inputs, "  c{i} = {:?}", v.map(f32::from_bits));
        }
        if let Some(b) = c.blocks.get(&BLOCK_LOC) {
            for (i, v) in b.iter().enumerate().take(16) {
                let _ = writeln!(inputs, "  CB{BLOCK_LOC}[{i}] = {:?}", v.map(f32::from_bits));
            }
        }
        cmp.report(format!(
            "== {} ({})\n{listing}case {ci}: mismatching lanes:\n{lanes}inputs:\n{inputs}reproduce: {}",
            t.name, gpu.device_name, t.reproduce
        ));
    }
    cmp
}

/// Random inputs: dyadic floats in (-4, 4) with 6 fractional bits, or (a quarter of the cases)
/// values from a small set with zeros and ±1; c0 / CB\[0\] hold small integers (indices) as
/// floats, c1 / CB\[1\] the same as ints; textures get texel values at resource 0.
pub fn random_inputs(rng: &mut Rng, n_attr: u32) -> Inputs {
    let few = rng.chance(25);
    let f4 =
        |rng: &mut Rng| -> [f32; 4] { std::array::from_fn(|_| if few { *rng.pick(&[-1.0, -0.5, 0.0, 0.5, 1.0, 2.0]) } else { rng.dyadic(2, 6) }) };
    let mut inp = Inputs::default();
    for l in 0..n_attr.max(4) {
        inp.attribs.insert(l, f4(rng));
    }
    let mut words: Vec<[u32; 4]> = (0..256).map(|_| f4(rng).map(f32::to_bits)).collect();
    words[0] = std::array::from_fn(|_| (rng.range(0, 3) as f32 + *rng.pick(&[0.0, 0.0, 0.25, 0.75, 0.5])).to_bits());
    words[1] = std::array::from_fn(|_| rng.range(0, 3) as u32);
    words[2] = std::array::from_fn(|_| rng.range(0, 32) as u32);
    inp.regfile = words.clone();
    words.truncate(BLOCK_LEN);
    inp.blocks.insert(BLOCK_LOC, words);
    inp.textures = vec![interp::Texture::new(0, 4, 4, TextureShape::Flat, (0..16).map(|_| f4(rng)).collect())];
    inp
}

/// Random valid programs (differential fuzzing) and single-op programs.
pub mod gen {
    use super::asm::*;
    use super::*;
    use isa::AluOp;
    use std::sync::LazyLock;

    pub fn reproduce_command(seed: u64, index: u64) -> String {
        format!("SHREC_FUZZ_SEED={seed} SHREC_FUZZ_ONLY={index} cargo test --release --test verify_gx2 -- --ignored fuzz_one --nocapture")
    }

    /// The generator's list of each ALU op. Exhaustive: a new [`AluOp`] does not compile until it
    /// is placed in a list (or marked not generated); the lists below are derived from
    /// `AluOp::ALL` through it, in table order.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Class {
        /// Float ops of one or two sources, vector or trans slot.
        Float2,
        /// Float ops of one source.
        Float1,
        /// Integer ops of two sources.
        Int2,
        /// Integer ops of one source.
        Int1,
        /// Trans-slot-only ops.
        Trans,
        /// Three-source ops.
        Op3,
        /// PRED_SET comparisons (also the branch conditions).
        PredCompare,
        /// PRED_SET_CLR, PRED_SET_RESTORE.
        PredOther,
        /// KILL* (pixel shaders).
        Kill,
        /// Reductions over the four vector slots.
        Reduction,
        /// AR writes.
        Mova,
        /// NOP (placed by the generator itself) and the ops the table marks Rejected.
        NotGenerated,
    }

    pub const fn class(op: AluOp) -> Class {
        match op {
            AluOp::ADD
            | AluOp::MUL
            | AluOp::MUL_IEEE
            | AluOp::MAX
            | AluOp::MIN
            | AluOp::MAX_DX10
            | AluOp::MIN_DX10
            | AluOp::SETE
            | AluOp::SETGT
            | AluOp::SETGE
            | AluOp::SETNE
            | AluOp::SETE_DX10
            | AluOp::SETGT_DX10
            | AluOp::SETGE_DX10
            | AluOp::SETNE_DX10 => Class::Float2,
            AluOp::FRACT | AluOp::TRUNC | AluOp::CEIL | AluOp::RNDNE | AluOp::FLOOR | AluOp::MOV => Class::Float1,
            AluOp::AND_INT
            | AluOp::OR_INT
            | AluOp::XOR_INT
            | AluOp::ADD_INT
            | AluOp::SUB_INT
            | AluOp::MAX_INT
            | AluOp::MIN_INT
            | AluOp::MAX_UINT
            | AluOp::MIN_UINT
            | AluOp::SETE_INT
            | AluOp::SETGT_INT
            | AluOp::SETGE_INT
            | AluOp::SETNE_INT
            | AluOp::SETGT_UINT
            | AluOp::SETGE_UINT
            | AluOp::ASHR_INT
            | AluOp::LSHR_INT
            | AluOp::LSHL_INT => Class::Int2,
            AluOp::NOT_INT => Class::Int1,
            AluOp::EXP_IEEE
            | AluOp::LOG_CLAMPED
            | AluOp::LOG_IEEE
            | AluOp::RECIP_CLAMPED
            | AluOp::RECIP_FF
            | AluOp::RECIP_IEEE
            | AluOp::RECIPSQRT_CLAMPED
            | AluOp::RECIPSQRT_FF
            | AluOp::RECIPSQRT_IEEE
            | AluOp::SQRT_IEEE
            | AluOp::FLT_TO_INT
            | AluOp::INT_TO_FLT
            | AluOp::UINT_TO_FLT
            | AluOp::SIN
            | AluOp::COS
            | AluOp::MULLO_INT
            | AluOp::MULHI_INT
            | AluOp::MULLO_UINT
            | AluOp::MULHI_UINT
            | AluOp::FLT_TO_UINT => Class::Trans,
            AluOp::BFE_UINT
            | AluOp::BFE_INT
            | AluOp::BFI_INT
            | AluOp::FMA
            | AluOp::MULADD
            | AluOp::MULADD_M2
            | AluOp::MULADD_M4
            | AluOp::MULADD_D2
            | AluOp::MULADD_IEEE
            | AluOp::MULADD_IEEE_M2
            | AluOp::MULADD_IEEE_M4
            | AluOp::MULADD_IEEE_D2
            | AluOp::CNDE
            | AluOp::CNDGT
            | AluOp::CNDGE
            | AluOp::CNDE_INT
            | AluOp::CNDGT_INT
            | AluOp::CNDGE_INT => Class::Op3,
            AluOp::PRED_SETGT_UINT
            | AluOp::PRED_SETGE_UINT
            | AluOp::PRED_SETE
            | AluOp::PRED_SETGT
            | AluOp::PRED_SETGE
            | AluOp::PRED_SETNE
            | AluOp::PRED_SETE_INT
            | AluOp::PRED_SETGT_INT
            | AluOp::PRED_SETGE_INT
            | AluOp::PRED_SETNE_INT => Class::PredCompare,
            AluOp::PRED_SET_CLR | AluOp::PRED_SET_RESTORE => Class::PredOther,
            AluOp::KILLE
            | AluOp::KILLGT
            | AluOp::KILLGE
            | AluOp::KILLNE
            | AluOp::KILLGT_UINT
            | AluOp::KILLGE_UINT
            | AluOp::KILLE_INT
            | AluOp::KILLGT_INT
            | AluOp::KILLGE_INT
            | AluOp::KILLNE_INT => Class::Kill,
            AluOp::DOT4 | AluOp::DOT4_IEEE | AluOp::CUBE | AluOp::MAX4 => Class::Reduction,
            AluOp::MOVA | AluOp::MOVA_FLOOR | AluOp::MOVA_INT => Class::Mova,
            AluOp::FREXP_64
            | AluOp::ADD_64
            | AluOp::NOP
            | AluOp::MUL_64
            | AluOp::FLT64_TO_FLT32
            | AluOp::FLT32_TO_FLT64
            | AluOp::PRED_SET_INV
            | AluOp::PRED_SET_POP
            | AluOp::PRED_SETE_PUSH
            | AluOp::PRED_SETGT_PUSH
            | AluOp::PRED_SETGE_PUSH
            | AluOp::PRED_SETNE_PUSH
            | AluOp::PRED_SETE_PUSH_INT
            | AluOp::PRED_SETGT_PUSH_INT
            | AluOp::PRED_SETGE_PUSH_INT
            | AluOp::PRED_SETNE_PUSH_INT
            | AluOp::PRED_SETLT_PUSH_INT
            | AluOp::PRED_SETLE_PUSH_INT
            | AluOp::GROUP_BARRIER
            | AluOp::GROUP_SEQ_BEGIN
            | AluOp::GROUP_SEQ_END
            | AluOp::SET_MODE
            | AluOp::SET_CF_IDX0
            | AluOp::SET_CF_IDX1
            | AluOp::SET_LDS_SIZE
            | AluOp::MUL_INT24
            | AluOp::MULHI_INT24
            | AluOp::MOVA_GPR_INT
            | AluOp::RECIP_INT
            | AluOp::RECIP_UINT
            | AluOp::LDEXP_64
            | AluOp::FRACT_64
            | AluOp::PRED_SETGT_64
            | AluOp::PRED_SETE_64
            | AluOp::PRED_SETGE_64
            | AluOp::MULADD_64
            | AluOp::MULADD_64_M2
            | AluOp::MULADD_64_M4
            | AluOp::MULADD_64_D2
            | AluOp::MUL_LIT
            | AluOp::MUL_LIT_M2
            | AluOp::MUL_LIT_M4
            | AluOp::MUL_LIT_D2 => Class::NotGenerated,
        }
    }

    /// The mnemonics of one class, in table order.
    fn of(class: Class) -> Vec<&'static str> {
        AluOp::ALL.iter().filter(|o| self::class(**o) == class).map(|o| o.name()).collect()
    }

    pub static FLOAT2: LazyLock<Vec<&'static str>> = LazyLock::new(|| of(Class::Float2));
    pub static FLOAT1: LazyLock<Vec<&'static str>> = LazyLock::new(|| of(Class::Float1));
    pub static INT2: LazyLock<Vec<&'static str>> = LazyLock::new(|| of(Class::Int2));
    pub static INT1: LazyLock<Vec<&'static str>> = LazyLock::new(|| of(Class::Int1));
    /// Trans-only (slot t).
    pub static TRANS: LazyLock<Vec<&'static str>> = LazyLock::new(|| of(Class::Trans));
    pub static OP3: LazyLock<Vec<&'static str>> = LazyLock::new(|| of(Class::Op3));
    /// The comparisons a branch condition may use.
    pub static PRED_COMPARE: LazyLock<Vec<&'static str>> = LazyLock::new(|| of(Class::PredCompare));
    /// Every PRED_SET form generated.
    pub static PRED: LazyLock<Vec<&'static str>> = LazyLock::new(|| [of(Class::PredCompare), of(Class::PredOther)].concat());
    pub static KILL: LazyLock<Vec<&'static str>> = LazyLock::new(|| of(Class::Kill));
    pub static REDUC: LazyLock<Vec<&'static str>> = LazyLock::new(|| of(Class::Reduction));
    pub static MOVA: LazyLock<Vec<&'static str>> = LazyLock::new(|| of(Class::Mova));

    /// Work registers R0..R9; loop counters from R12 (never a random destination).
    const WORK: u32 = 10;
    const COUNTER: u32 = 12;

    pub struct Gen<'r> {
        pub rng: &'r mut Rng,
        pub kind: ShaderKind,
        pub block: bool,
        pub cfs: Vec<C>,
        /// Subroutine bodies (ALU clause lists) and the CALL positions that target them.
        pub subs: Vec<(usize, Vec<C>)>,
        pub loop_vars: Vec<LoopVar>,
        depth: u32,
        loops: u32,
        /// Op to force into every group (single-op tests).
        pub force: Option<&'static str>,
        /// AR lanes some MOVA has set.
        ar_lanes: [bool; 4],
        /// Relative GPR addressing (AR / AL) in this program: lavapipe lowers every indexed
        /// access of the temp array to a compare ladder, which makes such shaders slow to
        /// compile, so only a minority of programs use it.
        pub allow_rel: bool,
        /// Compiler-shaped control flow (`Gen::shaped_stmt`) instead of the random forms.
        pub shaped: bool,
        /// Deepest nesting the compiler-shaped mode reached.
        pub max_depth: u32,
        /// Else-if ladders the compiler-shaped mode emitted (`Gen::shaped_ladder`).
        pub ladders: u32,
        /// If-blocks open inside the innermost loop: ALU_BREAK / ALU_CONTINUE act on every
        /// inactive lane, so compilers put them only directly in a loop body (`if (c) break`
        /// is a LOOP_BREAK in its own if), and a jump over one is not exact per lane.
        ifs_in_loop: u32,
        /// Scratch spills of the compiler-shaped mode (`Gen::maybe_spill`), drawn from their own
        /// random stream so that the programs without them stay those of earlier runs.
        pub spill: Option<Rng>,
        /// CF instructions the spills added (not counted against [`SHAPED_CF_BUDGET`]).
        spill_cfs: usize,
        /// Scratch elements a spill has written so far (reads pick among them).
        spilled: u8,
    }

    /// Deepest if / loop nesting of the compiler-shaped mode.
    pub const SHAPED_MAX_NEST: u32 = 7;
    /// CF instructions after which the compiler-shaped mode opens no new block.
    const SHAPED_CF_BUDGET: usize = 60;

    fn is_int_op(n: &str) -> bool {
        n.contains("INT") || n.contains("UINT") || n.starts_with("BF") || n.starts_with("MULLO") || n.starts_with("MULHI")
    }

    impl<'r> Gen<'r> {
        pub fn new(rng: &'r mut Rng, kind: ShaderKind, block: bool) -> Gen<'r> {
            let allow_rel = rng.chance(15);
            Gen {
                rng,
                kind,
                block,
                cfs: vec![],
                subs: vec![],
                loop_vars: vec![],
                depth: 0,
                loops: 0,
                force: None,
                ar_lanes: [false; 4],
                allow_rel,
                shaped: false,
                max_depth: 0,
                ladders: 0,
                ifs_in_loop: 0,
                spill: None,
                spill_cfs: 0,
                spilled: 0,
            }
        }

        fn const_src(&mut self, lits: &mut Vec<u32>, int: bool) -> S {
            match self.rng.below(6) {
                0 | 1 => {
                    if self.block {
                        kc(self.rng.below(14) as u32 + 2, self.rng.below(4) as u8)
                    } else {
                        c(self.rng.below(64) as u32 + 2, self.rng.below(4) as u8)
                    }
                }
                2 | 3 => {
                    if lits.len() < 4 {
                        let v = if int {
                            *self.rng.pick(&[0u32, 1, 2, 3, 5, 7, 16, 31, 0xFFFF_FFFF, 0x8000_0000, 0x3F80_0000])
                        } else {
                            self.rng.dyadic(3, 4).to_bits()
                        };
                        lits.push(v);
                    }
                    lit(self.rng.below(lits.len().max(1) as u64) as u8)
                }
                _ => special(*self.rng.pick(&[248, 249, 250, 251, 252])),
            }
        }

        /// A random source operand; `pv` = slots the previous group of this clause wrote.
        fn src(&mut self, lits: &mut Vec<u32>, pv: &[bool; 5], int: bool) -> S {
            let roll = self.rng.below(100);
            let mut s = if roll < 55 {
                let mut s = r(self.rng.below(u64::from(WORK)) as u32, self.rng.below(4) as u8);
                if roll < 8 && self.ar_lanes.iter().any(|&x| x) && self.allow_rel {
                    s.sel = self.rng.below(6) as u32;
                    s.rel = true;
                }
                s
            } else if roll < 80 {
                self.const_src(lits, int)
            } else {
                let slots: Vec<usize> = (0..5).filter(|&k| pv[k]).collect();
                if slots.is_empty() {
                    r(self.rng.below(u64::from(WORK)) as u32, self.rng.below(4) as u8)
                } else {
                    let k = *self.rng.pick(&slots);
                    if k == 4 {
                        ps()
                    } else {
                        asm::pv(k as u8)
                    }
                }
            };
            if !int {
                s.neg = self.rng.chance(20);
                s.abs = self.rng.chance(10);
            }
            s
        }

        /// One random instruction for `slot` (0-3 vector, 4 trans).
        // the `*` clippy calls needless is needed: without it the match's arm type is `&&str`
        #[allow(clippy::explicit_auto_deref)]
        fn inst(&mut self, slot: usize, lits: &mut Vec<u32>, pv: &[bool; 5], taken: &[bool; 4], pred_used: &mut bool) -> A {
            let roll = self.rng.below(100);
            let name: &'static str = match self.force {
                Some(f)
                    if self.rng.chance(60)
                        && flags_of(f) & isa::flags::REDUC == 0
                        && flags_of(f) & if slot == 4 { isa::flags::TRANS } else { isa::flags::VEC } != 0 =>
                {
                    f
                }
                _ if slot == 4 && roll < 55 => *self.rng.pick(&TRANS),
                _ if roll < 30 => *self.rng.pick(&FLOAT2),
                _ if roll < 42 => *self.rng.pick(&FLOAT1),
                _ if roll < 60 => *self.rng.pick(&INT2),
                _ if roll < 62 => *self.rng.pick(&INT1),
                _ if roll < 85 => *self.rng.pick(&OP3),
                _ if roll < 90 && slot < 4 => *self.rng.pick(&MOVA),
                _ if roll < 95 && self.kind == ShaderKind::Pixel && self.rng.chance(30) => *self.rng.pick(&KILL),
                _ => *self.rng.pick(&PRED),
            };
            let name = if name.starts_with("PRED") && *pred_used { "ADD" } else { name };
            let n_src = alu_op(name).srcs() as usize;
            let int = is_int_op(name) && !name.starts_with("CNDE") || name == "INT_TO_FLT" || name == "UINT_TO_FLT";
            let mut srcs: Vec<S> = (0..n_src).map(|_| self.src(lits, pv, int)).collect();
            if name.starts_with("MOVA") {
                // integer-ish index values from c0 (floats) / c1 (ints)
                let base = if name == "MOVA_INT" { 1 } else { 0 };
                srcs = vec![if self.block { kc(base, self.rng.below(4) as u8) } else { c(base, self.rng.below(4) as u8) }];
            }
            if name.starts_with("BFE") {
                // offset + width ≤ 32 (beyond that the field is not defined)
                let o = self.rng.below(24) as u32;
                let w = self.rng.below(u64::from(33 - o).min(17)) as u32;
                if lits.len() <= 2 {
                    lits.push(o);
                    lits.push(w);
                    srcs[1] = lit(lits.len() as u8 - 2);
                    srcs[2] = lit(lits.len() as u8 - 1);
                } else {
                    srcs[1] = special(250);
                    srcs[2] = special(248);
                }
            }
            let dst_chan = if slot < 4 {
                slot as u8
            } else {
                // a VEC|TRANS op lands in t only when its channel's vector slot is taken
                let vec_op = flags_of(name) & isa::flags::VEC != 0;
                let chans: Vec<u8> = (0..4u8).filter(|&k| !vec_op || taken[k as usize]).collect();
                if chans.is_empty() {
                    return a("NOP", (0, 0), &[]);
                }
                *self.rng.pick(&chans)
            };
            let dst = self.rng.below(u64::from(WORK)) as u32;
            let mut x = a(name, (dst, dst_chan), &srcs);
            if name.starts_with("PRED") {
                *pred_used = true;
                x.pred = self.rng.chance(70);
            }
            x.write = !name.starts_with("MOVA") && self.rng.chance(90);
            if self.rng.chance(8) && self.ar_lanes.iter().any(|&x| x) && self.allow_rel {
                x.dst_rel = true;
                x.dst.0 = self.rng.below(6) as u32;
            }
            if !int && !name.starts_with("PRED") && !name.starts_with("KILL") && !name.starts_with("MOVA") && !name.contains("DX10") {
                x.clamp = self.rng.chance(10);
                if !alu_op(name).info().op3 {
                    x.omod = if self.rng.chance(10) { self.rng.range(1, 3) as u32 } else { 0 };
                }
            }
            x.pred_sel = if self.rng.chance(10) { self.rng.range(2, 3) as u32 } else { 0 };
            // relative operands index through an AR lane a MOVA has set
            let lanes: Vec<u32> = (0..4).filter(|&k| self.ar_lanes[k as usize]).collect();
            x.index_mode = if lanes.is_empty() { 0 } else { *self.rng.pick(&lanes) };
            x
        }

        /// A random ALU group (all slots read before any write); `exec` adds a PRED_SET with
        /// UPDATE_EXEC_MASK (the condition of a branch / break).
        fn group(&mut self, pv: &mut [bool; 5], exec: bool) -> G {
            let mut lits = Vec::new();
            let mut insts: Vec<A> = Vec::new();
            let mut taken = [false; 4];
            let mut pred_used = false;
            let mut mova = false;
            let forced_reduc = self.force.filter(|f| REDUC.contains(f));
            if !exec && (self.rng.chance(8) || forced_reduc.is_some() && self.rng.chance(60)) {
                // a reduction over the four vector slots
                let name = forced_reduc.unwrap_or_else(|| *self.rng.pick(&REDUC));
                for k in 0..4u8 {
                    let srcs: Vec<S> = (0..if name == "MAX4" { 1 } else { 2 }).map(|_| self.src(&mut lits, pv, false)).collect();
                    let mut x = a(name, (self.rng.below(u64::from(WORK)) as u32, k), &srcs);
                    x.write = self.rng.chance(50);
                    insts.push(x);
                }
                taken = [true; 4];
            } else {
                for k in 0..4 {
                    if self.rng.chance(55) || (k == 0 && exec) {
                        let mut x = if exec && k == 0 {
                            let name = *self.rng.pick(&PRED_COMPARE);
                            let int = is_int_op(name);
                            // a GPR against a constant: keeps most branch decisions determined
                            let g = r(self.rng.below(u64::from(WORK)) as u32, self.rng.below(4) as u8);
                            let k = self.const_src(&mut lits, int);
                            let srcs = if self.rng.chance(50) { vec![g, k] } else { vec![k, g] };
                            let mut x = a(name, (self.rng.below(u64::from(WORK)) as u32, 0), &srcs);
                            x.exec = true;
                            x.pred = self.rng.chance(50);
                            x.write = self.rng.chance(50);
                            pred_used = true;
                            x
                        } else {
                            self.inst(k, &mut lits, pv, &taken, &mut pred_used)
                        };
                        if x.name.starts_with("MOVA") {
                            if mova {
                                x = a("MOV", x.dst, &x.src);
                            }
                            mova = true;
                        }
                        if x.name == "NOP" && self.rng.chance(50) {
                            continue;
                        }
                        taken[k] = true;
                        insts.push(x);
                    }
                }
            }
            if self.rng.chance(45) || insts.is_empty() {
                let x = self.inst(4, &mut lits, pv, &taken, &mut pred_used);
                if x.name != "NOP" || insts.is_empty() {
                    insts.push(x);
                }
            }
            *pv = [false; 5];
            for x in &insts {
                if x.name == "NOP" {
                    continue;
                }
                let vec = flags_of(x.name) & isa::flags::VEC != 0;
                let slot = if !vec || (x.dst.1 as usize) < 4 && pv[x.dst.1 as usize] && !REDUC.contains(&x.name) { 4 } else { x.dst.1 as usize };
                pv[slot] = true;
            }
            for x in &insts {
                if x.name.starts_with("MOVA") {
                    self.ar_lanes[x.dst.1 as usize] = true;
                }
            }
            let _ = mova;
            while lits.len() % 2 == 1 {
                lits.push(0);
            }
            G(insts, lits)
        }

        fn alu_clause(&mut self, op: &'static str, exec: bool) -> C {
            let n = self.rng.range(1, 4) as usize;
            let mut pv = [false; 5];
            let mut groups: Vec<G> = (0..n).map(|_| self.group(&mut pv, false)).collect();
            if exec {
                groups.push(self.group(&mut pv, true));
            }
            let mut cfi = alu(op, groups);
            if self.block {
                if let C::Alu { kc, .. } = &mut cfi {
                    // bank 0 = the block, 16 or 32 constants, loop-relative in a bounded loop
                    let mode = if self.loops > 0 && self.rng.chance(30) { 3 } else { self.rng.range(1, 2) as u32 };
                    kc[0] = (BLOCK_LOC, mode, 0);
                }
            }
            cfi
        }

        fn tex_clause(&mut self) -> C {
            if self.shaped && self.rng.chance(45) {
                return self.shaped_texture_unit();
            }
            // coordinates at texel centres of the 4×4 texture at resource 0
            let (cr, dst) = (COUNTER + 6, self.rng.below(u64::from(WORK)) as u32);
            let u = (self.rng.below(4) as f32 + 0.5) / 4.0;
            let v = (self.rng.below(4) as f32 + 0.5) / 4.0;
            let setup = alu("ALU", vec![G(vec![a("MOV", (cr, 0), &[lit(0)]), a("MOV", (cr, 1), &[lit(1)])], vec![u.to_bits(), v.to_bits()])]);
            self.cfs.push(setup);
            // the compiler-shaped programs also draw the gradient forms at an explicit LOD (the
            // plain fuzzer keeps its list, so its pinned regression indices stay valid)
            let ops: &[&str] = match (self.kind == ShaderKind::Pixel, self.shaped) {
                (true, false) => &["SAMPLE", "SAMPLE_L", "SAMPLE_LB", "SAMPLE_LZ", "SAMPLE_G"],
                (true, true) => &["SAMPLE", "SAMPLE_L", "SAMPLE_LB", "SAMPLE_LZ", "SAMPLE_G", "SAMPLE_G_L", "SAMPLE_G_LB", "SAMPLE_G_LZ"],
                (false, false) => &["SAMPLE_L", "SAMPLE_LZ"],
                (false, true) => &["SAMPLE_L", "SAMPLE_LZ", "SAMPLE_G_L", "SAMPLE_G_LB", "SAMPLE_G_LZ"],
            };
            let name = *self.rng.pick(ops);
            let mut fetches = vec![];
            if name.starts_with("SAMPLE_G") {
                fetches.push(tex("SET_GRADIENTS_H", 0, 0, cr, 0, [0, 1, 4, 4]));
                fetches.push(tex("SET_GRADIENTS_V", 0, 0, cr, 0, [1, 0, 4, 4]));
            }
            fetches.push(tex(name, 0, 0, cr, dst, [0, 1, 4, 4]));
            if self.block && self.rng.chance(50) {
                // dynamically indexed uniform-block read: index from CB[1] (ints 0..3)
                self.cfs.push(alu("ALU", vec![G(vec![a("MOV", (cr, 2), &[kc(1, self.rng.below(4) as u8)])], vec![])]));
                if let Some(C::Alu { kc: k, .. }) = self.cfs.last_mut() {
                    k[0] = (BLOCK_LOC, 1, 0);
                }
                fetches.push(vfetch(BLOCK_LOC, cr, self.rng.below(u64::from(WORK)) as u32, 16 * self.rng.below(8) as u32));
                if let Some(T(w)) = fetches.last_mut() {
                    w[0] |= 2 << 24; // SRC_SEL_X = z
                }
            }
            C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: fetches }
        }

        /// A compiler-shaped TEX clause on the texture unit's other kinds (the textures of
        /// [`shaped_textures`]): SAMPLE / SAMPLE_LZ on the 2D array at resource 1 (slice from an
        /// unnormalized src.z: whole, fractional, negative, past the end), SAMPLE_C_LZ on the 2D
        /// shadow map at resource 2 (reference in src.w, lane x read), FETCH4 on resource 0 (a
        /// footprint between texel centres), SET_CUBEMAP_INDEX then SAMPLE / SAMPLE_LZ on the cube
        /// array at resource 3 (face coordinates at texel centres, indices whole, fractional and
        /// out of range) and, in pixel shaders, GET_COMP_TEX_LOD of a work register (lanes x, y).
        fn shaped_texture_unit(&mut self) -> C {
            let (cr, dst) = (COUNTER + 6, self.rng.below(u64::from(WORK)) as u32);
            let pixel = self.kind == ShaderKind::Pixel;
            let sample = if pixel { *self.rng.pick(&["SAMPLE", "SAMPLE_LZ"]) } else { "SAMPLE_LZ" };
            let centre = |rng: &mut Rng| (rng.below(4) as f32 + 0.5) / 4.0;
            let mut lits = [0f32; 4];
            let mut srcs = [None; 4];
            let mut fetches = vec![];
            let form = self.rng.below(if pixel { 5 } else { 4 });
            match form {
                0 => {
                    lits = [centre(self.rng), centre(self.rng), *self.rng.pick(&[0.0, 1.0, 2.0, 1.25, 2.75, -0.5, 3.5]), 0.0];
                    let mut t = tex(sample, 1, 1, cr, dst, [0, 1, 2, 3]);
                    t.0[1] &= !(1 << 30); // COORD_TYPE_Z unnormalized, as the compilers mark a slice
                    fetches.push(t);
                }
                1 => {
                    lits = [centre(self.rng), centre(self.rng), 0.0, *self.rng.pick(&[0.0, 0.3, 0.55, 0.8, 1.0])];
                    let mut t = tex("SAMPLE_C_LZ", 2, 2, cr, dst, [0, 1, 2, 3]);
                    t.0[1] = (t.0[1] & !(0xFFF << 9)) | 4 << 12 | 5 << 15 | 7 << 18; // x, 0, 1, masked
                    fetches.push(t);
                }
                2 => {
                    let between = |rng: &mut Rng| (rng.below(3) as f32 + 1.0) / 4.0;
                    lits = [between(self.rng), between(self.rng), 0.0, 0.0];
                    fetches.push(tex("FETCH4", 0, 0, cr, dst, [0, 1, 4, 4]));
                }
                3 => {
                    let face_centre = |rng: &mut Rng| 1.0 + (rng.below(2) as f32 + 0.5) / 2.0;
                    lits =
                        [face_centre(self.rng), face_centre(self.rng), self.rng.below(6) as f32, *self.rng.pick(&[0.0, 1.0, 0.75, 1.25, -1.0, 5.0])];
                    fetches.push(tex("SET_CUBEMAP_INDEX", 3, 3, cr, 0, [3, 3, 3, 3]));
                    fetches.push(tex(sample, 3, 3, cr, dst, [0, 1, 2, 4]));
                }
                _ => {
                    // the LOD of whatever two work registers hold (determined where the quad's
                    // derivatives allow it)
                    let w = self.rng.below(u64::from(WORK)) as u32;
                    srcs = [Some(r(w, 0)), Some(r(w, 1)), None, None];
                    let mut t = tex("GET_COMP_TEX_LOD", 0, 0, cr, dst, [0, 1, 4, 4]);
                    t.0[1] = (t.0[1] & !(0xFFF << 9)) | 1 << 12 | 4 << 15 | 7 << 18; // x, y, 0, masked
                    fetches.push(t);
                }
            }
            let slots: Vec<A> = (0..4u8).map(|ch| a("MOV", (cr, ch), &[srcs[ch as usize].unwrap_or(lit(ch))])).collect();
            self.cfs.push(alu("ALU", vec![G(slots, lits.map(f32::to_bits).to_vec())]));
            C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: fetches }
        }

        fn stmt(&mut self) {
            if self.shaped {
                self.shaped_stmt();
                return;
            }
            let roll = self.rng.below(100);
            if roll < 55 || self.depth >= 3 {
                let c = self.alu_clause("ALU", false);
                self.cfs.push(c);
                return;
            }
            self.depth += 1;
            match roll {
                55..=66 => {
                    // if / else through ALU_PUSH_BEFORE (+ the compilers' JUMP over the then-part)
                    // or PUSH + ALU; every jump aimed where a compiler aims it
                    let mut push_at = None;
                    let mut jump_at = None;
                    if self.rng.chance(60) {
                        let c = self.alu_clause("ALU_PUSH_BEFORE", true);
                        self.cfs.push(c);
                        if self.rng.chance(50) {
                            jump_at = Some(self.cfs.len());
                            self.cfs.push(cf("JUMP"));
                        }
                    } else {
                        push_at = Some(self.cfs.len());
                        self.cfs.push(cf("PUSH"));
                        let c = self.alu_clause("ALU", true);
                        self.cfs.push(c);
                    }
                    self.if_block(1, 3);
                    match self.rng.below(4) {
                        0 => {
                            let c = self.alu_clause("ALU_POP_AFTER", false);
                            self.cfs.push(c);
                            self.aim(jump_at, self.cfs.len(), 1);
                        }
                        1 => {
                            self.aim(jump_at, self.cfs.len(), 0);
                            let c = self.alu_clause("ALU_ELSE_AFTER", false);
                            self.cfs.push(c);
                            self.if_block(1, 2);
                            self.cfs.push(cf_pop("POP", 1));
                        }
                        2 => {
                            let else_at = self.cfs.len();
                            self.aim(jump_at, else_at, 0);
                            self.cfs.push(cf("ELSE"));
                            self.if_block(1, 2);
                            self.cfs.push(cf_pop("POP", 1));
                            self.aim(Some(else_at), self.cfs.len(), 1);
                        }
                        _ => {
                            self.cfs.push(cf_pop("POP", 1));
                            self.aim(jump_at, self.cfs.len(), 1);
                        }
                    }
                    self.aim(push_at, self.cfs.len(), 0);
                }
                67..=70 => {
                    // two nested conditions closed by one ALU_POP2_AFTER
                    let c = self.alu_clause("ALU_PUSH_BEFORE", true);
                    self.cfs.push(c);
                    let c = self.alu_clause("ALU_PUSH_BEFORE", true);
                    self.cfs.push(c);
                    self.if_block(0, 2);
                    let c = self.alu_clause("ALU_POP2_AFTER", false);
                    self.cfs.push(c);
                }
                71..=73 => {
                    // PUSH_ELSE / POP_PUSH / POP_PUSH_ELSE forms (PUSH_ELSE jumps to the POP_PUSH*,
                    // POP_JUMP to the next instruction)
                    let at = self.cfs.len();
                    self.cfs.push(cf("PUSH_ELSE"));
                    self.if_block(1, 2);
                    self.aim(Some(at), self.cfs.len(), 0);
                    self.cfs.push(cf_pop(if self.rng.chance(50) { "POP_PUSH" } else { "POP_PUSH_ELSE" }, 1));
                    self.if_block(1, 2);
                    let last = self.cfs.len();
                    let pop_jump = self.rng.chance(50);
                    self.cfs.push(cf_pop(if pop_jump { "POP_JUMP" } else { "POP" }, 1));
                    if pop_jump {
                        self.aim(Some(last), last + 1, 1);
                    }
                }
                74..=85 if self.loops < 2 => self.loop_stmt(),
                86..=89 if self.loops > 0 => {
                    // conditional LOOP_BREAK / LOOP_CONTINUE / ALU_BREAK / ALU_CONTINUE (the
                    // latter two only directly in the loop body)
                    match self.rng.below(4) {
                        k if k < 2 || self.ifs_in_loop > 0 => {
                            let c = self.alu_clause("ALU_PUSH_BEFORE", true);
                            self.cfs.push(c);
                            let jump_at = self.rng.chance(50).then_some(self.cfs.len());
                            if jump_at.is_some() {
                                self.cfs.push(cf("JUMP"));
                            }
                            self.cfs.push(cf(if self.rng.chance(50) { "LOOP_BREAK" } else { "LOOP_CONTINUE" }));
                            self.cfs.push(cf_pop("POP", 1));
                            self.aim(jump_at, self.cfs.len(), 1);
                        }
                        2 => {
                            let c = self.alu_clause("ALU_BREAK", true);
                            self.cfs.push(c);
                        }
                        _ => {
                            let c = self.alu_clause("ALU_CONTINUE", true);
                            self.cfs.push(c);
                        }
                    }
                }
                90..=93 => {
                    // CALL of a subroutine placed after END_OF_PROGRAM
                    let at = self.cfs.len();
                    self.cfs.push(cf("CALL"));
                    let body = vec![self.alu_clause("ALU", false)];
                    self.subs.push((at, body));
                }
                94..=96 if self.kind == ShaderKind::Pixel => {
                    let c = self.alu_clause("ALU_PUSH_BEFORE", true);
                    self.cfs.push(c);
                    self.cfs.push(cf("KILL"));
                    self.cfs.push(cf_pop("POP", 1));
                }
                // the geometry harness binds no texture
                _ if self.kind == ShaderKind::Geometry => {
                    let c = self.alu_clause("ALU", false);
                    self.cfs.push(c);
                }
                _ => {
                    let c = self.tex_clause();
                    self.cfs.push(c);
                }
            }
            self.depth -= 1;
        }

        /// Statements of an if-block (see `ifs_in_loop`).
        fn if_block(&mut self, lo: i64, hi: i64) {
            self.ifs_in_loop += 1;
            self.block_stmts(lo, hi);
            self.ifs_in_loop -= 1;
        }

        /// Points the jumping CF instruction at `at` (if any) to CF `target` with POP_CNT(`pop`).
        fn aim(&mut self, at: Option<usize>, target: usize, pop: u32) {
            if let Some(C::N { addr, pop: p, .. }) = at.map(|k| &mut self.cfs[k]) {
                *addr = target as u32;
                *p = pop;
            }
        }

        fn block_stmts(&mut self, lo: i64, hi: i64) {
            let n = self.rng.range(lo, hi);
            for _ in 0..n {
                self.stmt();
            }
        }

        fn loop_stmt(&mut self) {
            let counter = COUNTER + self.loops;
            let kind = *self.rng.pick(&["LOOP_START_DX10", "LOOP_START", "LOOP_START_NO_AL"]);
            // counter = 0 before the loop (the DX10 loop's termination)
            self.cfs.push(alu("ALU", vec![G(vec![a("MOV", (counter, 0), &[special(248)])], vec![])]));
            let cf_const = self.loop_vars.len() as u32;
            if kind != "LOOP_START_DX10" {
                let count = self.rng.range(0, 4) as u32;
                let init = self.rng.range(-2, 3) as i32 as u32 & 0xFFF;
                let inc = self.rng.range(-1, 2) as i8 as u8 as u32;
                self.loop_vars.push(LoopVar { offset: cf_const, value: count | init << 12 | inc << 24 });
            }
            let start = self.cfs.len();
            self.cfs.push(C::N { op: kind, addr: 0, pop: 0, cf_const, tex: vec![] });
            self.loops += 1;
            // counter += 1; break when counter > limit (keeps every loop finite on the GPU)
            let limit = self.rng.range(1, 4) as f32;
            let inc = G(vec![a("ADD", (counter, 0), &[r(counter, 0), special(249)])], vec![]);
            let mut test = a("PRED_SETGE", (counter, 1), &[lit(0), r(counter, 0)]);
            test.exec = true;
            test.write = false;
            let test = G(vec![test], vec![limit.to_bits(), 0]);
            self.cfs.push(alu("ALU_BREAK", vec![inc, test]));
            if kind == "LOOP_START" && self.allow_rel && self.rng.chance(60) {
                // AL-relative GPR read (INDEX_MODE loop) into a work register
                let mut x = a("MOV", (self.rng.below(u64::from(WORK)) as u32, self.rng.below(4) as u8), &[r(4, self.rng.below(4) as u8).rel()]);
                x.index_mode = 4;
                self.cfs.push(alu("ALU", vec![G(vec![x], vec![])]));
            }
            let outer_ifs = std::mem::replace(&mut self.ifs_in_loop, 0);
            self.block_stmts(1, 3);
            if self.rng.chance(40) {
                // `if (c) continue;` as one ALU_CONTINUE directly in the loop body
                let c = self.alu_clause("ALU_CONTINUE", true);
                self.cfs.push(c);
                self.block_stmts(0, 1);
            }
            self.ifs_in_loop = outer_ifs;
            // LOOP_END jumps back to the instruction after its LOOP_START, which jumps past it
            let end = self.cfs.len();
            self.cfs.push(C::N { op: "LOOP_END", addr: start as u32 + 1, pop: 0, cf_const, tex: vec![] });
            self.aim(Some(start), end + 1, 0);
            self.loops -= 1;
        }

        /// One statement as the compilers emit control flow (Mesa r600 `emit_if` / `tgsi_else`
        /// / `tgsi_endif`, LLVM's R600ControlFlowFinalizer, and Nintendo's compiler in the corpus):
        /// if / else / else-if chains whose JUMP and ELSE aim past the POP that closes them with
        /// POP_CNT = the levels they stand for, chains closed by one POP_CNT(n) /
        /// ALU_POP2_AFTER, loops with ALU_BREAK / LOOP_BREAK / LOOP_CONTINUE, nested up to
        /// [`SHAPED_MAX_NEST`] deep. Conditions are uniform (constants only: every lane agrees,
        /// so on the GPU whole waves take the jumps) or divergent (per-vertex / per-pixel data).
        fn shaped_stmt(&mut self) {
            self.maybe_spill();
            // past a budget of CF instructions only plain clauses: nesting multiplies size, and a
            // compiled shader's CF program is tens of instructions, not hundreds
            let room = if self.cfs.len() - self.spill_cfs > SHAPED_CF_BUDGET { 0 } else { SHAPED_MAX_NEST.saturating_sub(self.depth) };
            let roll = if room == 0 { 99 } else { self.rng.below(100) };
            match roll {
                // deeper nesting is likelier near the top, so chains reach the maximum depth
                0..=8 if room >= 3 => self.shaped_ladder(room),
                0..=44 if room > 0 => self.shaped_if_chain(room),
                45..=56 if room > 0 && self.loops < 2 => {
                    self.depth += 1;
                    self.max_depth = self.max_depth.max(self.depth);
                    self.loop_stmt();
                    self.depth -= 1;
                }
                57..=66 if self.loops > 0 => {
                    // if (c) break; / if (c) continue; as Mesa emits it
                    self.cond_clause();
                    let jump_at = self.cfs.len();
                    self.cfs.push(cf("JUMP"));
                    self.cfs.push(cf(if self.rng.chance(50) { "LOOP_BREAK" } else { "LOOP_CONTINUE" }));
                    self.cfs.push(cf_pop("POP", 1));
                    self.aim(Some(jump_at), self.cfs.len(), 1);
                }
                67..=72 if self.kind == ShaderKind::Pixel => {
                    self.cond_clause();
                    let jump_at = self.cfs.len();
                    self.cfs.push(cf("JUMP"));
                    self.cfs.push(cf("KILL"));
                    self.cfs.push(cf_pop("POP", 1));
                    self.aim(Some(jump_at), self.cfs.len(), 1);
                }
                73..=80 if self.kind != ShaderKind::Geometry => {
                    let c = self.tex_clause();
                    self.cfs.push(c);
                }
                _ => {
                    let c = self.alu_clause("ALU", false);
                    self.cfs.push(c);
                }
            }
        }

        /// A register spill as Mesa r600 writes one (docs/gx2.md "GX2 scratch memory"), before
        /// one statement in five of a program that spills: MEM_SCRATCH WRITE_ACK of some lanes
        /// of a work register to element 0-3 followed by WAIT_ACK, or a TEX clause reading an
        /// element written before back into a work register through a destination select.
        fn maybe_spill(&mut self) {
            let Some(sr) = self.spill.as_mut() else { return };
            if !sr.chance(20) {
                return;
            }
            let w = sr.below(u64::from(WORK)) as u32;
            if self.spilled == 0 || sr.chance(50) {
                let element = sr.below(4) as u32;
                let mask = 1 + sr.below(15) as u32;
                self.spilled |= 1 << element;
                self.cfs.push(scratch_write(element, w, mask));
                self.cfs.push(cf("WAIT_ACK"));
                self.spill_cfs += 2;
            } else {
                let written: Vec<u32> = (0..4).filter(|e| self.spilled >> e & 1 != 0).collect();
                let element = *sr.pick(&written);
                let sel = *sr.pick(&[[0, 1, 2, 3], [3, 2, 1, 0], [0, 0, 1, 1], [2, 4, 5, 7]]);
                self.cfs.push(C::N { op: "TEX", addr: 0, pop: 0, cf_const: 0, tex: vec![scratch_read(element, w, sel)] });
                self.spill_cfs += 1;
            }
        }

        /// `if (c0) A else if (c1) B … [else Z]`, `n ≤ room` conditions, closed by one pop of
        /// `n` levels. Every ELSE (and the last JUMP when there is no final else) aims past that
        /// pop with POP_CNT = its level + 1; every other JUMP aims at its ELSE with POP_CNT(0).
        fn shaped_if_chain(&mut self, room: u32) {
            let n = if room >= 2 && self.rng.chance(35) { self.rng.range(2, i64::from(room.min(3))) as u32 } else { 1 };
            let mut past_close = Vec::new();
            for k in 0..n {
                self.cond_clause();
                self.depth += 1;
                self.max_depth = self.max_depth.max(self.depth);
                let jump_at = self.cfs.len();
                self.cfs.push(cf("JUMP"));
                self.block_stmts(1, 2);
                let last = k + 1 == n;
                if !last || self.rng.chance(50) {
                    self.aim(Some(jump_at), self.cfs.len(), 0);
                    past_close.push((self.cfs.len(), k + 1));
                    self.cfs.push(cf("ELSE"));
                    if last {
                        self.block_stmts(1, 2);
                    }
                } else {
                    past_close.push((jump_at, k + 1));
                }
            }
            // the close: a POP, or the last clause turned into ALU_POP_AFTER / ALU_POP2_AFTER
            match n {
                1 | 2 if self.rng.chance(50) => {
                    let c = self.alu_clause(if n == 1 { "ALU_POP_AFTER" } else { "ALU_POP2_AFTER" }, false);
                    self.cfs.push(c);
                }
                _ => self.cfs.push(cf_pop("POP", n)),
            }
            self.depth -= n;
            let target = self.cfs.len();
            for (at, pop) in past_close {
                self.aim(Some(at), target, pop);
            }
        }

        /// The else-if ladder of Nintendo's compiler (11 retail shaders): `w` levels of
        /// `ALU_PUSH_BEFORE; JUMP; then; ELSE`, each nested in the else of the one before, and an
        /// innermost if without else whose then-part is the clause of ALU_POP2_AFTER (or
        /// ALU_POP_AFTER). The remaining levels close with POP POP_CNT(n) and with else-tail
        /// clauses (ALU_POP_AFTER: the rest of an outer level's else), the first close after the
        /// clause always a POP. The innermost JUMP aims past one of the POPs right after its
        /// clause, so the pops it stands for are split over several instructions (a pop wakes a
        /// lane before the target; only pops follow until the taken jump's depth). Every JUMP of
        /// a level aims at its ELSE; every ELSE aims past the first close of its level, popping
        /// what that path pops. `w + 1 ≤ room` levels, `w` from 2 to 5.
        fn shaped_ladder(&mut self, room: u32) {
            let w = self.rng.range(2, i64::from(room.min(6)) - 1) as u32;
            let base = self.depth;
            let mut elses = Vec::new();
            for _ in 0..w {
                self.cond_clause();
                self.depth += 1;
                self.max_depth = self.max_depth.max(self.depth);
                let jump_at = self.cfs.len();
                self.cfs.push(cf("JUMP"));
                self.block_stmts(1, 1);
                self.aim(Some(jump_at), self.cfs.len(), 0);
                elses.push((self.cfs.len(), self.depth));
                self.cfs.push(cf("ELSE"));
            }
            self.cond_clause();
            self.depth += 1;
            self.max_depth = self.max_depth.max(self.depth);
            let jump_at = self.cfs.len();
            let jump_depth = self.depth;
            self.cfs.push(cf("JUMP"));
            // the closes, each as (CF index after it, depth after it)
            let first = if self.rng.chance(70) { 2 } else { 1 };
            let c = self.alu_clause(if first == 2 { "ALU_POP2_AFTER" } else { "ALU_POP_AFTER" }, false);
            self.cfs.push(c);
            self.depth -= first;
            let mut closes = vec![(self.cfs.len(), self.depth)];
            // POPs right after the clause (the innermost JUMP may aim past any of them), then
            // POPs and else-tails
            let mut leading_pops = 0;
            let mut tail_seen = false;
            while self.depth > base {
                if leading_pops > 0 && self.rng.chance(40) {
                    let c = self.alu_clause("ALU_POP_AFTER", false);
                    self.cfs.push(c);
                    self.depth -= 1;
                    tail_seen = true;
                } else {
                    let n = self.rng.range(1, i64::from((self.depth - base).min(3))) as u32;
                    self.cfs.push(cf_pop("POP", n));
                    self.depth -= n;
                    if !tail_seen {
                        leading_pops += 1;
                    }
                }
                closes.push((self.cfs.len(), self.depth));
            }
            let (target, depth) = closes[self.rng.range(1, leading_pops as i64) as usize];
            self.aim(Some(jump_at), target, jump_depth - depth);
            for (at, d) in elses {
                let (target, depth) = closes.iter().copied().find(|&(_, depth)| depth < d).expect("the ladder closes every level");
                self.aim(Some(at), target, d - depth);
            }
            self.ladders += 1;
        }

        /// ALU_PUSH_BEFORE whose last group sets the execution mask with a PRED_SET* — on
        /// constants only (uniform) or on a per-lane register (divergent).
        fn cond_clause(&mut self) {
            let mut groups = Vec::new();
            let mut pv = [false; 5];
            if self.rng.chance(50) {
                groups.push(self.group(&mut pv, false));
            }
            let name = *self.rng.pick(&["PRED_SETGT", "PRED_SETGE", "PRED_SETE", "PRED_SETNE"]);
            let mut lits = Vec::new();
            let x = if self.rng.chance(45) {
                self.const_src(&mut lits, false)
            } else {
                // R1..R4 hold the attributes of a VS, R0..R3 the varyings of a PS
                let first = u32::from(self.kind == ShaderKind::Vertex);
                r(first + self.rng.below(4) as u32, self.rng.below(4) as u8)
            };
            let y = self.const_src(&mut lits, false);
            let mut p = a(name, (WORK - 1, 0), &[x, y]);
            p.exec = true;
            p.pred = true;
            p.write = false;
            groups.push(G(vec![p], lits));
            let mut cfi = alu("ALU_PUSH_BEFORE", groups);
            if self.block {
                if let C::Alu { kc, .. } = &mut cfi {
                    kc[0] = (BLOCK_LOC, 1, 0);
                }
            }
            self.cfs.push(cfi);
        }

        /// Initialises the work registers (VS: R5..R9; PS: R4..R9), runs the statements, exports.
        pub fn program(&mut self, n_stmts: usize) -> Vec<u8> {
            if self.kind == ShaderKind::Vertex {
                self.cfs.push(cf("CALL_FS"));
            }
            let first = if self.kind == ShaderKind::Vertex { 5 } else { 4 };
            let mut init = vec![];
            for r0 in first..WORK {
                let x: Vec<A> = (0..4u8).map(|k| a("MOV", (r0, k), &[if self.block { kc(2 + r0, k) } else { c(2 + r0, k) }])).collect();
                init.push(G(x, vec![]));
            }
            if self.allow_rel {
                // AR.xyzw = small integers (c1 / CB[1]) so relative operands have an index
                let x: Vec<A> = (0..4u8)
                    .map(|k| a("MOVA_INT", (0, k), &[if self.block { kc(1, k) } else { c(1, k) }]))
                    .map(|mut x| {
                        x.write = false;
                        x
                    })
                    .collect();
                init.push(G(x, vec![]));
                self.ar_lanes = [true; 4];
            }
            let mut init_cf = alu("ALU", init);
            if self.block {
                if let C::Alu { kc, .. } = &mut init_cf {
                    kc[0] = (BLOCK_LOC, 1, 0);
                }
            }
            self.cfs.push(init_cf);
            for _ in 0..n_stmts {
                self.stmt();
            }
            // exports
            let sel =
                |rng: &mut Rng| -> [u32; 4] { std::array::from_fn(|_| if rng.chance(85) { rng.below(4) as u32 } else { *rng.pick(&[4, 5, 7]) }) };
            let pick = |rng: &mut Rng| rng.below(u64::from(WORK) - 1) as u32;
            if self.kind == ShaderKind::Vertex {
                let g = pick(self.rng);
                let s = sel(self.rng);
                self.cfs.push(C::Exp { done: true, ty: 1, base: 60, gpr: g, burst: 0, sel: s });
                let g = pick(self.rng);
                let s = sel(self.rng);
                self.cfs.push(C::Exp { done: true, ty: 2, base: 0, gpr: g, burst: 1, sel: s });
            } else {
                let g = pick(self.rng);
                let s = sel(self.rng);
                self.cfs.push(C::Exp { done: true, ty: 0, base: 0, gpr: g, burst: 1, sel: s });
            }
            self.finish()
        }
    }

    impl Gen<'_> {
        /// Ends the main program at the last CF so far (END_OF_PROGRAM), places the subroutine
        /// bodies after it (each closed by RETURN, its CALL pointed at it) and assembles.
        fn finish(&mut self) -> Vec<u8> {
            let eop = self.cfs.len() - 1;
            let subs = std::mem::take(&mut self.subs);
            for (at, body) in subs {
                let start = self.cfs.len() as u32;
                self.cfs.extend(body);
                self.cfs.push(cf("RETURN"));
                if let C::N { addr, .. } = &mut self.cfs[at] {
                    *addr = start;
                }
            }
            assemble(&self.cfs, eop)
        }

        /// A random geometry program in the ring model of `formats::gx2::ring` (`verify::gx2_gs`
        /// runs it): one VTX clause of ring fetches first (R0 / R1 still hold the input vertices'
        /// ring offsets), each a random (input vertex, slot < `in_slots`) into R2..R9; then
        /// `emits` times: random statements (any control flow; no TEX: the geometry harness
        /// binds no texture), MEM_RING writes of random work registers to the `vert_slots`
        /// slots of the vertex (GSVS vertex n at `n · 4 · vert_slots` dwords, lane masks random),
        /// and an emit: EMIT_VERTEX, EMIT_CUT_VERTEX, or CUT_VERTEX then EMIT_VERTEX.
        pub fn gs_program(&mut self, in_slots: u32, vert_slots: u32, emits: usize) -> Vec<u8> {
            let src = [(0, 0), (0, 1), (0, 3)];
            let fetches: Vec<T> = (2..WORK)
                .map(|dst| {
                    let (g, ch) = src[self.rng.below(3) as usize];
                    ring_fetch(g, ch, dst, [0, 1, 2, 3], 16 * self.rng.below(u64::from(in_slots)) as u32)
                })
                .collect();
            self.cfs.push(C::N { op: "VTX", addr: 0, pop: 0, cf_const: 0, tex: fetches });
            for n in 0..emits as u32 {
                self.block_stmts(0, 3);
                // a quarter of the vertices are written and emitted under a condition
                let conditional = self.rng.chance(25);
                if conditional {
                    let c = self.alu_clause("ALU_PUSH_BEFORE", true);
                    self.cfs.push(c);
                }
                for s in 0..vert_slots {
                    let gpr = self.rng.below(u64::from(WORK)) as u32;
                    let mask = if self.rng.chance(80) { 0xF } else { self.rng.range(1, 16) as u32 };
                    self.cfs.push(C::Ring { ty: 0, base: 4 * (vert_slots * n + s), gpr, index_gpr: 0, burst: 0, mask });
                }
                match self.rng.below(10) {
                    0..=5 => self.cfs.push(cf("EMIT_VERTEX")),
                    6..=8 => self.cfs.push(cf("EMIT_CUT_VERTEX")),
                    _ => {
                        self.cfs.push(cf("CUT_VERTEX"));
                        self.cfs.push(cf("EMIT_VERTEX"));
                    }
                }
                if conditional {
                    self.cfs.push(cf_pop("POP", 1));
                }
            }
            self.finish()
        }
    }

    /// Slot flags of an ALU mnemonic (OP2 or OP3 table).
    pub fn flags_of(name: &str) -> u8 {
        isa::AluOp::from_name(name).map_or(0, |o| o.flags())
    }

    fn alu_op(name: &str) -> isa::AluOp {
        isa::AluOp::from_name(name).unwrap_or_else(|| panic!("no ALU op {name}"))
    }

    fn cases(rng: &mut Rng, kind: ShaderKind, n: usize, n_loc: u32) -> (Vec<Inputs>, Vec<FragmentQuad>) {
        if kind == ShaderKind::Vertex {
            let mut v: Vec<Inputs> = (0..n).map(|_| random_inputs(rng, n_loc)).collect();
            for (i, c) in v.iter_mut().enumerate() {
                c.vertex_id = i as u32;
            }
            (v, vec![])
        } else {
            let mut cases = Vec::new();
            let mut quads = Vec::new();
            for _ in 0..n {
                let base = random_inputs(rng, n_loc);
                let slope = |rng: &mut Rng| -> Vec<[f32; 4]> {
                    (0..n_loc).map(|_| std::array::from_fn(|_| *rng.pick(&[0.0, 0.0, 0.25, -0.5, 1.0]))).collect()
                };
                let q =
                    FragmentQuad { base: (0..n_loc).map(|l| base.attribs[&l]).collect(), slope_x: slope(rng), slope_y: slope(rng), uniforms: vec![] };
                for p in 0..4 {
                    let mut c = base.clone();
                    for l in 0..n_loc {
                        c.attribs.insert(l, q.pixel_varying(l as usize, p));
                    }
                    cases.push(c);
                }
                quads.push(q);
            }
            (cases, quads)
        }
    }

    /// Program `index` of the fuzzing run `seed` (VS or PS, register or block mode), 4 cases.
    pub fn program(seed: u64, index: u64) -> TestProgram {
        let mut rng = Rng::new(seed.wrapping_mul(0x100_0000_01B3) ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let kind = if rng.chance(50) { ShaderKind::Vertex } else { ShaderKind::Pixel };
        let block = rng.chance(35);
        let n = rng.range(2, 8) as usize;
        let mut g = Gen::new(&mut rng, kind, block);
        let bytes = g.program(n);
        let loop_vars = std::mem::take(&mut g.loop_vars);
        let shader = match kind {
            ShaderKind::Vertex => vertex_shader(bytes, 4, 2, block, loop_vars),
            _ => pixel_shader(bytes, 4, 2, block, loop_vars),
        };
        let (cases, quads) = cases(&mut rng, kind, 4, 4);
        TestProgram { name: format!("fuzz seed {seed} program {index}"), shader, cases, quads, reproduce: reproduce_command(seed, index) }
    }

    /// Program `index` of the compiler-shaped run `seed` (`Gen::shaped_stmt`).
    pub fn shaped_program(seed: u64, index: u64) -> TestProgram {
        shaped_program_and_stats(seed, index).0
    }

    /// What one compiler-shaped program contains, for the tests' coverage asserts.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct ShapedStats {
        /// Deepest if / loop nesting.
        pub depth: u32,
        /// Else-if ladders (`Gen::shaped_ladder`).
        pub ladders: u32,
    }

    /// The textures a compiler-shaped program may read besides the random 2D one at resource 0
    /// (`Gen::shaped_texture_unit`), with their GX2SamplerType: every texel distinct and made
    /// without the random stream (the cases stay what they were): a 2D array of three 4×4
    /// slices (type 10) at resource 1, a 4×4 2D shadow map of depths k/8 (type 6) at 2, a cube
    /// array of two 2×2 cubes (type 13) at 3.
    pub fn shaped_textures() -> Vec<(u32, interp::Texture)> {
        let array =
            interp::Texture::array(1, 4, 4, 3, (0..48).map(|k| [(k % 4) as f32, (k / 4 % 4) as f32, (k / 16) as f32, k as f32 / 8.0]).collect());
        let shadow = interp::Texture::new(2, 4, 4, TextureShape::Flat, (0..16).map(|k| [((k * 5) % 9) as f32 / 8.0, 0.0, 0.0, 0.0]).collect());
        let mut cubes = interp::Texture::new(
            3,
            2,
            2,
            TextureShape::CubeArray,
            (0..48).map(|k| [(k / 4 % 6) as f32, (k % 2) as f32, (k / 2 % 2) as f32, (k / 24) as f32 + k as f32 / 64.0]).collect(),
        );
        cubes.layers = 2;
        vec![(10, array), (6, shadow), (13, cubes)]
    }

    /// [`shaped_program`] and what it contains.
    pub fn shaped_program_and_stats(seed: u64, index: u64) -> (TestProgram, ShapedStats) {
        let mut rng = Rng::new(seed.wrapping_mul(0x5851_F42D_4C95_7F2D) ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5AA5);
        let kind = if rng.chance(50) { ShaderKind::Vertex } else { ShaderKind::Pixel };
        let block = rng.chance(35);
        let n = rng.range(2, 5) as usize;
        let mut g = Gen::new(&mut rng, kind, block);
        g.shaped = true;
        g.allow_rel = false;
        // one program in eight spills to scratch memory
        if index % 8 == 5 {
            g.spill = Some(Rng::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ index ^ 0x5C5C));
        }
        let bytes = g.program(n);
        let loop_vars = std::mem::take(&mut g.loop_vars);
        let shader = match kind {
            ShaderKind::Vertex => vertex_shader(bytes, 4, 2, block, loop_vars),
            _ => pixel_shader(bytes, 4, 2, block, loop_vars),
        };
        let stats = ShapedStats { depth: g.max_depth, ladders: g.ladders };
        let mut shader = shader;
        shader.sampler_vars =
            shaped_textures().into_iter().map(|(ty, t)| SamplerVar { name: format!("tex{}", t.resource), ty, location: t.resource }).collect();
        let (mut cases, quads) = cases(&mut rng, kind, 4, 4);
        for c in &mut cases {
            c.textures.extend(shaped_textures().into_iter().map(|(_, t)| t));
        }
        let t = TestProgram {
            name: format!("compiler-shaped seed {seed} program {index}"),
            shader,
            cases,
            quads,
            reproduce: format!("SHREC_FUZZ_SEED={seed} SHREC_FUZZ_ONLY={index} SHREC_FUZZ_SHAPED=1 cargo test --release --test verify_gx2 -- --ignored fuzz_one --nocapture"),
        };
        (t, stats)
    }

    /// A program whose groups execute `op` (ALU mnemonic) in many operand forms.
    pub fn single_op(op: &'static str, kind: ShaderKind, seed: u64) -> TestProgram {
        let mut rng = Rng::new(seed ^ op.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b))));
        let block = rng.chance(30);
        let mut g = Gen::new(&mut rng, kind, block);
        g.force = Some(op);
        g.allow_rel = MOVA.contains(&op);
        let bytes = g.program(4);
        let loop_vars = std::mem::take(&mut g.loop_vars);
        let shader = match kind {
            ShaderKind::Vertex => vertex_shader(bytes, 4, 2, block, loop_vars),
            _ => pixel_shader(bytes, 4, 2, block, loop_vars),
        };
        let (cases, quads) = cases(&mut rng, kind, 8, 4);
        TestProgram {
            name: format!("single op {op} ({})", kind.name()),
            shader,
            cases,
            quads,
            reproduce: format!("single_op(\"{op}\", {kind:?}, {seed})"),
        }
    }

    /// A program from an explicit CF list (hand-written tests).
    pub fn fixed(name: &str, kind: ShaderKind, cfs: &[C], eop: usize, loop_vars: Vec<LoopVar>, block: bool, seed: u64) -> TestProgram {
        let mut rng = Rng::new(seed);
        let bytes = assemble(cfs, eop);
        let shader = match kind {
            ShaderKind::Vertex => vertex_shader(bytes, 4, 2, block, loop_vars),
            _ => pixel_shader(bytes, 4, 2, block, loop_vars),
        };
        let (cases, quads) = cases(&mut rng, kind, 8, 4);
        TestProgram { name: name.to_string(), shader, cases, quads, reproduce: format!("test {name}") }
    }

    /// Random cases for a corpus shader (attributes / varyings at every location it reads).
    pub fn corpus_cases(shader: &Gx2Shader, seed: u64) -> (Vec<Inputs>, Vec<FragmentQuad>) {
        let mut rng = Rng::new(seed);
        let _ = shader;
        cases(&mut rng, shader.kind, 4, 32)
    }
}

/// The shared GPU (see [`super::vk::require`]).
pub fn gpu_or_skip() -> Option<&'static Gpu> {
    super::vk::require()
}
