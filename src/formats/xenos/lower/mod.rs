//! Xenos microcode → shrec IR.
//!
//! Register model (all in the IR temp file, so that relative temp addressing can index r0-r63):
//! r0-r63 are the Xenos temps; 64 = p0 (lane x, 0/1), 65 = a0 (x), 66 = aL (x), 67 = ps (previous
//! scalar result, all lanes), 68 = pc for the pc-dispatch loop, 69/70 = vector / scalar results of
//! the current ALU instruction, 71 = fetch result, 72-75 loop counters and 76-79 saved aL (a
//! stack, top first), 80 = call depth, 81-84 return addresses (a stack, top first), 85 = scratch
//! of a relative destination. Relative temps (r[n + aL]) are selects over r0-r63, not an indexed
//! array: lavapipe took seconds per shader to compile indexed temp arrays inside the pc-dispatch
//! loop (every register then lives in memory). Semantics follow Xenia's ucode.h pseudo-code; anything not lowered exactly is rejected
//! with the CF / slot index and mnemonic.

use super::container::{Container, DECL_USAGE_NAMES};
use super::error::XenosError;
use super::memexport::{self, EA, EM0, EM_COUNT};
use super::ucode::*;
use crate::formats::{cube, Family, ShaderError, Stage};
use crate::ir::build::*;
use crate::ir::*;
use std::collections::BTreeMap;

mod alu;
mod epilogue;
mod exports;
mod fetch;
mod flow;
mod unleashed;
use epilogue::*;
use exports::*;
use flow::*;
use unleashed::*;

const P0: u32 = 64;
const A0: u32 = 65;
const AL: u32 = 66;
const PS: u32 = 67;
const PC: u32 = 68;
const VRES: u32 = 69;
const SRES: u32 = 70;
const FRES: u32 = 71;
const LOOP_CTR: u32 = 72;
const LOOP_SAVE: u32 = 76;
const MAX_LOOP_DEPTH: u32 = 4;
const CALL_DEPTH: u32 = 80;
const CALL_STACK: u32 = 81;
/// Return addresses kept by the translation (the hardware's depth is not documented publicly; a
/// deeper call drops the oldest address, and the reference interpreter does not determine it).
pub const MAX_CALL_DEPTH: u32 = 4;
/// Holds the value of a relative (r[n + aL]) destination before it is routed to its register.
const REL_SCRATCH: u32 = 85;
/// The vertex shader's export 63 (oPts): x = point size, y = edge flag, z = kill vertex. Kept
/// in a temp and turned into host outputs by the vertex epilogue.
const OPTS: u32 = 86;
/// Texture-fetch state: xyz = horizontal gradients (setGradientsH), w = register LOD
/// (setTexLOD); and the vertical gradients (setGradientsV). Zero until set.
const GRAD_H_LOD: u32 = 87;
const GRAD_V: u32 = 88;
const TEMP_COUNT: u32 = 89;
/// Memory export state (temps past TEMP_COUNT, declared only by shaders that export to memory):
/// eA as raw bits, eM0-eM4, and which eM# were written since the last store (1.0 / 0.0: eM0-eM3
/// in lanes x-w of EM_WRITTEN, eM4 in lane x of EM4_WRITTEN). See `memexport`.
const EA_REG: u32 = 89;
const EM_REG: u32 = 90;
const EM_WRITTEN: u32 = 95;
const EM4_WRITTEN: u32 = 96;
const MEMEXPORT_TEMP_COUNT: u32 = 97;
/// Xenos temps relative addressing can reach (r0-r63).
const GPRS: u32 = 64;

/// Constant files of the IR, read as the module's `ResourceAbi::XenosRecomp` says (the HLSL
/// writer's `hlsl::xenos_abi` writes XenosRecomp's cbuffers on DXIL and its push-constant buffer
/// device addresses on SPIR-V). `CB_FLOAT`: float constant register i as the guest uploads it
/// (0 outside the runtime's buffer).
const CB_FLOAT: u32 = XenosRecompAbi::FLOAT_CONSTANTS;
/// The shared state: 16 = (asfloat(g_Booleans), asfloat(g_SwappedTexcoords), g_HalfPixelOffset)
/// (XenosRecomp's c16 of SharedConstants), 17 = (g_AlphaThreshold, 0, 0, 0), 18 = specialization
/// constant bits as 1.0 / 0.0: x = SPEC_CONSTANT_ALPHA_TEST, y = SPEC_CONSTANT_R11G11B10_NORMAL.
const CB_SHARED: u32 = XenosRecompAbi::STATE;
const STATE_SPEC: u32 = XenosRecompAbi::STATE_SPEC;
/// Entry 20 + w: lane x = asfloat(word w of this stage's booleans b0-b255) (shrec extension of
/// SharedConstants); read for b16 and above.
const STATE_BOOLS: u32 = XenosRecompAbi::STATE_BOOLS;
/// Entry 32 + i: (count, aL start, aL step, 0) of this stage's loop constant i<i> (shrec
/// extension of SharedConstants); read for loops without a literal `defi`.
const STATE_LOOPS: u32 = XenosRecompAbi::STATE_LOOPS;

/// XenosRecomp's specialization-constant bits (shader_common.h).
pub const SPEC_CONSTANT_R11G11B10_NORMAL: u32 = XenosRecompAbi::SPEC_R11G11B10_NORMAL;
pub const SPEC_CONSTANT_ALPHA_TEST: u32 = XenosRecompAbi::SPEC_ALPHA_TEST;
/// The bits XenosRecomp adds when built with `UNLEASHED_RECOMP` (its shader_common.h, inside
/// `#ifdef UNLEASHED_RECOMP`); only the [`Profile::Unleashed`] translation sets them.
pub const SPEC_CONSTANT_BICUBIC_GI_FILTER: u32 = XenosRecompAbi::SPEC_BICUBIC_GI_FILTER;
pub const SPEC_CONSTANT_ALPHA_TO_COVERAGE: u32 = XenosRecompAbi::SPEC_ALPHA_TO_COVERAGE;
pub const SPEC_CONSTANT_REVERSE_Z: u32 = XenosRecompAbi::SPEC_REVERSE_Z;
/// Entry 19 (Unleashed profile only): (BICUBIC_GI_FILTER, ALPHA_TO_COVERAGE, REVERSE_Z, 0) as
/// 1.0 / 0.0.
const STATE_SPEC_UNLEASHED: u32 = XenosRecompAbi::STATE_SPEC_UNLEASHED;
/// Temps of the Unleashed profile (past the memory-export ones): pixelCoord (xy) and three
/// scratch registers of the bicubic GI fetch.
const UL_PIXEL_COORD: u32 = 97;
const UL_BICUBIC: u32 = 98;
const UNLEASHED_TEMP_COUNT: u32 = 101;

/// Which XenosRecomp build the translation reproduces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Profile {
    /// XenosRecomp as built by default (generic games).
    #[default]
    Generic,
    /// XenosRecomp built with `UNLEASHED_RECOMP` (UnleashedRecomp's mode; docs/profiles.md lists
    /// every difference): reverse-Z projection, alpha to coverage, bicubic GI sampling on tf10,
    /// instanced `g_IndexCount` / `POSITION1` inputs, `1.0 - sampZBuffer`.
    Unleashed,
}

/// Options of the Xenos lowering.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LowerOptions {
    pub profile: Profile,
}

/// What the Unleashed profile found in the container's constant table (XenosRecomp's
/// `UNLEASHED_RECOMP` code keys on these names), and which of the two runs of a reverse-Z
/// vertex shader is being lowered.
#[derive(Clone, Debug, Default)]
struct Unleashed {
    /// Vertex shader naming `g_MtxProjection` (XenosRecomp's `hasMtxProjection`).
    reverse_z: bool,
    /// Its float4 registers `[first, first + count)` when it is a float4 constant of more than
    /// one register: the reads XenosRecomp replaces by the reverse-Z matrix.
    projection: Option<(u32, u32)>,
    /// Lowering the first run (`iterationIndex == 0`): projection rows read reversed, memory
    /// exports not stored.
    reverse_pass: bool,
    /// Lowering the second run: oPos written only when SPEC_CONSTANT_REVERSE_Z is clear.
    guard_position: bool,
    /// `g_InstanceTypes` (vertex): TEXCOORD2 is a `uint4` input.
    meta_instancer: bool,
    /// `g_IndexCount` (vertex): its register; r0.x starts as iVertexId + g_IndexCount.x × iInstanceId.
    index_count: Option<u32>,
    /// Pixel shader naming `g_MtxPrevInvViewProjection`: the slot of `sampZBuffer`, whose
    /// fetches return 1.0 − the texel.
    z_buffer_slot: Option<u32>,
}

/// Float constant registers the runtime uploads per stage (XenosRecomp reads 0 past them).
pub const VS_CONSTANTS: u32 = 256;
pub const PS_CONSTANTS: u32 = 224;
/// Entries of each descriptor-index array of SharedConstants (texture2D/3D/Cube, sampler).
pub const SAMPLER_SLOTS: u32 = 16;

fn lit(v: f32) -> Expr {
    Expr::Literal([v; 4])
}
fn t(i: u32) -> Expr {
    read(RegFile::Temp, i, XYZW)
}
fn tx(i: u32) -> Expr {
    read(RegFile::Temp, i, [0; 4])
}
fn sel(cmp: CmpOp, a: Expr, b: Expr, t: Expr, f: Expr) -> Expr {
    Expr::Select { cmp, a: Box::new(a), b: Box::new(b), if_true: Box::new(t), if_false: Box::new(f) }
}
fn assign(reg: u32, mask: u8, value: Expr) -> Stmt {
    Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Temp, reg), mask }, value, saturate: false }
}
fn lane(e: Expr, l: u8) -> Expr {
    broadcast(e, l)
}
fn mul_l(a: Expr, b: Expr) -> Expr {
    bin(BinOp::MulLegacy, a, b)
}
fn p0_true() -> Cond {
    Cond::Compare(CmpOp::Ne, tx(P0), lit(0.0))
}
fn pred_cond(want: bool) -> Cond {
    if want {
        p0_true()
    } else {
        Cond::Not(Box::new(p0_true()))
    }
}

/// True when lane `l` of `g_XenosState[index]` (a specialization-constant bit as 1.0 / 0.0) is 0.
fn spec_bit_clear(index: u32, l: u8) -> Cond {
    Cond::Compare(CmpOp::Eq, read(RegFile::Const(CB_SHARED), index, [l; 4]), lit(0.0))
}
fn spec_bit_set(index: u32, l: u8) -> Cond {
    Cond::Compare(CmpOp::Ne, read(RegFile::Const(CB_SHARED), index, [l; 4]), lit(0.0))
}

pub struct Lowered {
    pub module: Module,
    /// XenosRecomp's `specConstantsMask`: the SPEC_CONSTANT_* bits the shader reads.
    pub spec_constants_mask: u32,
}

struct Ctx<'a> {
    c: &'a Container,
    vertex: bool,
    defs: BTreeMap<u32, [f32; 4]>,
    int_defs: BTreeMap<u32, u32>,
    inputs: Vec<IoVar>,
    input_by_addr: BTreeMap<u32, u32>,
    outputs: Vec<IoVar>,
    output_by_export: BTreeMap<u32, u32>,
    textures: Vec<Texture>,
    tex_by_slot: BTreeMap<(u32, u32), u32>,
    indexable: bool,
    /// Sampler name (from the constant table, sanitized and unique) per fetch-constant slot.
    sampler_names: BTreeMap<u32, String>,
    spec_constants_mask: u32,
    /// Lanes of oPts (export 63) the shader writes somewhere.
    opts_written: u8,
    /// Module-wide notices for the HLSL header: deviations that belong to no one statement (a
    /// comment in the body could be dropped by the IR passes once the code after it is gone).
    notices: Vec<String>,
    /// eM0-eM4 (bits 0-4) the shader writes somewhere, and whether it writes eA.
    em_used: u8,
    ea_used: bool,
    /// Profile::Unleashed state (None: generic).
    ul: Option<Unleashed>,
    /// Current instruction for error messages.
    at: String,
}

fn usage_name(u: u32) -> &'static str {
    match u {
        0 => "POSITION",
        1 => "BLENDWEIGHT",
        2 => "BLENDINDICES",
        3 => "NORMAL",
        4 => "PSIZE",
        5 => "TEXCOORD",
        6 => "TANGENT",
        7 => "BINORMAL",
        8 => "TESSFACTOR",
        9 => "POSITIONT",
        10 => "COLOR",
        11 => "FOG",
        12 => "DEPTH",
        _ => "SAMPLE",
    }
}

/// Interpolator linkage location for a D3DDECLUSAGE / index pair (both stages use it, so a vertex
/// shader links with every pixel shader that reads the same semantics): TEXCOORD n → n (0-15),
/// COLOR n → 16 + n, every other usage u → 18 + 2·u + min(index, 1)... bounded below 48.
pub fn interpolator_location(usage: u32, index: u32) -> u32 {
    match usage {
        5 => index & 15,
        10 => 16 + (index & 1),
        u => 18 + ((u * 2 + (index & 1)) % 30),
    }
}

impl<'a> Ctx<'a> {
    fn err(&self, what: impl std::fmt::Display) -> ShaderError {
        XenosError::Unsupported { at: self.at.clone(), what: what.to_string() }.into()
    }
    /// An opcode whose table row is rejected, with the table's reason.
    fn rejected(&self, op: &'static str, status: crate::formats::opcodes::Status) -> ShaderError {
        XenosError::Rejected { at: self.at.clone(), op, reason: status.reason().unwrap_or("rejected") }.into()
    }

    /// Reads temp `index` (relative: r[index + aL]) with a swizzle, |x| and negation. A relative
    /// read is a binary tree of selects on aL over r0-r63 (out of range reads r0 / r63: the
    /// hardware's result there is not known, and the reference does not determine it).
    fn temp_read(&self, index: u32, rel: bool, swizzle: [u8; 4], abs: bool, negate: bool) -> Expr {
        let leaf = |k: u32| Expr::Read(Src { reg: RegRef::fixed(RegFile::Temp, k), swizzle, abs, negate });
        if !rel {
            return leaf(index);
        }
        fn tree(lo: u32, hi: u32, index: u32, leaf: &dyn Fn(u32) -> Expr) -> Expr {
            if hi - lo == 1 {
                return leaf(lo);
            }
            let mid = (lo + hi) / 2;
            // aL + index < mid; aL holds an integer.
            let c = Cond::Compare(CmpOp::Lt, tx(AL), lit(mid as f32 - index as f32));
            Expr::SelectIf(Box::new(c), Box::new(tree(lo, mid, index, leaf)), Box::new(tree(mid, hi, index, leaf)))
        }
        tree(0, GPRS, index, &leaf)
    }

    /// Writes temp `index` (relative: r[index + aL], through the scratch register and a binary
    /// tree of ifs on aL; out of range writes nothing).
    fn temp_write(&self, index: u32, rel: bool, mask: u8, value: Expr, saturate: bool, out: &mut Vec<Stmt>) {
        if !rel {
            out.push(Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Temp, index), mask }, value, saturate });
            return;
        }
        out.push(Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Temp, REL_SCRATCH), mask }, value, saturate });
        fn tree(lo: i64, hi: i64, index: u32, mask: u8) -> Vec<Stmt> {
            if hi - lo == 1 {
                return vec![assign(lo as u32, mask, t(REL_SCRATCH))];
            }
            let mid = (lo + hi) / 2;
            let c = Cond::Compare(CmpOp::Lt, tx(AL), lit(mid as f32 - index as f32));
            vec![Stmt::If { cond: c, then_body: tree(lo, mid, index, mask), else_body: tree(mid, hi, index, mask) }]
        }
        let in_range = Cond::Compare(CmpOp::Ge, tx(AL), lit(-(index as f32)));
        let below = Cond::Compare(CmpOp::Lt, tx(AL), lit(GPRS as f32 - index as f32));
        out.push(Stmt::If {
            cond: in_range,
            then_body: vec![Stmt::If { cond: below, then_body: tree(0, GPRS as i64, index, mask), else_body: vec![] }],
            else_body: vec![],
        });
    }

    fn operand(&mut self, o: &Operand) -> Expr {
        let swizzle = o.swizzle;
        if o.is_temp {
            return self.temp_read(o.index, o.addr != Addr::Static, swizzle, o.abs, o.negate);
        }
        let reg = match o.addr {
            Addr::Static => {
                if let Some(v) = self.defs.get(&o.index) {
                    let mut e = swz(Expr::Literal(*v), swizzle);
                    if o.abs {
                        e = un(UnOp::Abs, e);
                    }
                    if o.negate {
                        e = un(UnOp::Neg, e);
                    }
                    return e;
                }
                if let Some(row) = self.reverse_z_row(o.index) {
                    let mut e = swz(row, swizzle);
                    if o.abs {
                        e = un(UnOp::Abs, e);
                    }
                    if o.negate {
                        e = un(UnOp::Neg, e);
                    }
                    return e;
                }
                RegRef::fixed(RegFile::Const(CB_FLOAT), o.index)
            }
            Addr::A0 | Addr::AL => RegRef {
                file: RegFile::Const(CB_FLOAT),
                index: Index::Dynamic { base: o.index as i32, value: Box::new(tx(if o.addr == Addr::A0 { A0 } else { AL })), conv: IndexConv::Floor },
            },
        };
        Expr::Read(Src { reg, swizzle, abs: o.abs, negate: o.negate })
    }

    fn output(&mut self, export: u32) -> Result<u32, ShaderError> {
        if let Some(&i) = self.output_by_export.get(&export) {
            return Ok(i);
        }
        let (name, semantic, components) = if self.vertex {
            match export {
                62 => ("oPos".to_string(), Semantic::Position, 4),
                0..=15 => {
                    let loc = self
                        .c
                        .interpolators
                        .iter()
                        .find(|i| i.reg == export)
                        .map(|i| interpolator_location(i.usage, i.usage_index))
                        .unwrap_or(export);
                    (format!("o{export}"), Semantic::Texcoord(loc), 4)
                }
                _ => return Err(self.err(format!("unknown vertex export register {export}"))),
            }
        } else {
            match export {
                0..=3 => (format!("oC{export}"), Semantic::Target(export), 4),
                61 => ("oDepth".to_string(), Semantic::Depth, 1),
                _ => return Err(self.err(format!("unknown pixel export register {export}"))),
            }
        };
        self.outputs.push(IoVar { name, semantic, components });
        let i = self.outputs.len() as u32 - 1;
        self.output_by_export.insert(export, i);
        Ok(i)
    }

    fn input(&mut self, address: u32) -> Result<u32, ShaderError> {
        if let Some(&i) = self.input_by_addr.get(&address) {
            return Ok(i);
        }
        let (k, e) = self
            .c
            .vertex_elements
            .iter()
            .enumerate()
            .find(|(_, e)| e.address == address)
            .ok_or_else(|| self.err(format!("vfetch at slot {address} has no vertex element in the container")))?;
        let name = format!("i{}{}", DECL_USAGE_NAMES.get(e.usage as usize).unwrap_or(&"usage"), e.usage_index);
        let (u, index, location) = (usage_name(e.usage), e.usage_index, vertex_input_location(&self.c.vertex_elements, k));
        // XenosRecomp's input types: BLENDINDICES, NORMAL, TANGENT and BINORMAL are uint4.
        let semantic = if is_uint_usage(e.usage) || self.unleashed_uint_input(e.usage, e.usage_index) {
            Semantic::UsageUint { name: u, index, location }
        } else {
            Semantic::Usage { name: u, index, location }
        };
        self.inputs.push(IoVar { name, semantic, components: 4 });
        let i = self.inputs.len() as u32 - 1;
        self.input_by_addr.insert(address, i);
        Ok(i)
    }
}

/// Interpolator locations a vertex shader declares whether it writes them or not: XenosRecomp's
/// fixed signature, TEXCOORD0-15 and COLOR0-1 at locations 0-17 (`INTERPOLATORS` in its
/// shader_recompiler.cpp, each `out float4` set to 0.0 at the start of main). Declaring all of
/// them (unwritten ones stay 0, as the writer initialises every output) keeps the SPIR-V
/// interface identical to XenosRecomp's, so any vertex shader links with any pixel shader
/// reading up to 18 interpolators, as a runtime built for XenosRecomp's output expects.
const XENOSRECOMP_INTERPOLATORS: u32 = 18;

fn declare_every_interpolator(ctx: &mut Ctx) {
    for loc in 0..XENOSRECOMP_INTERPOLATORS {
        if !ctx.outputs.iter().any(|o| o.semantic == Semantic::Texcoord(loc)) {
            ctx.outputs.push(IoVar { name: format!("oUnwritten{loc}"), semantic: Semantic::Texcoord(loc), components: 4 });
        }
    }
}

/// Comment before the memory-export stores an `alloc` performs (see `Lowerer::alloc`).
pub const MEMEXPORT_ALLOC_BEGIN: &str = "memexport: stores at alloc";
/// Comment after the memory-export stores an `alloc` performs.
pub const MEMEXPORT_ALLOC_END: &str = "memexport: end of the stores at alloc";
/// First statement of the `if` that stores a pixel's pending memory exports before a kill.
pub const MEMEXPORT_KILL: &str = "memexport: stores before a kill";

pub fn lower(c: &Container, p: &super::ucode::Program) -> Result<Lowered, ShaderError> {
    lower_with(c, p, &LowerOptions::default())
}

/// [`lower`] with options (the XenosRecomp build to reproduce, see [`Profile`]).
pub fn lower_with(c: &Container, p: &super::ucode::Program, opts: &LowerOptions) -> Result<Lowered, ShaderError> {
    let vertex = c.is_vertex();
    let mut defs = BTreeMap::new();
    for d in &c.float_defs {
        for (k, v) in d.values.chunks(4).enumerate() {
            let mut a = [0.0; 4];
            a[..v.len()].copy_from_slice(v);
            defs.insert(d.register + k as u32, a);
        }
    }
    let mut int_defs = BTreeMap::new();
    for d in &c.int_defs {
        for (k, v) in d.values.iter().enumerate() {
            // Stored big-endian: count in the most significant byte? Values are 4 packed int8
            // (x = count, y = start, z = step) in register order; normalise to x in byte 0.
            int_defs.insert(d.register + k as u32, *v);
        }
    }
    let mut ctx = Ctx {
        c,
        vertex,
        defs,
        int_defs,
        inputs: Vec::new(),
        input_by_addr: BTreeMap::new(),
        outputs: Vec::new(),
        output_by_export: BTreeMap::new(),
        textures: Vec::new(),
        tex_by_slot: BTreeMap::new(),
        indexable: false,
        sampler_names: sampler_names(c),
        spec_constants_mask: 0,
        opts_written: 0,
        notices: Vec::new(),
        em_used: 0,
        ea_used: false,
        ul: if opts.profile == Profile::Unleashed { Some(unleashed_state(c, vertex)?) } else { None },
        at: String::new(),
    };
    // Which memory-export registers the program writes (the stores at each `alloc` need it
    // before the writes are lowered).
    for cl in &p.clauses {
        for s in cl {
            if let Instr::Alu(a) = &s.instr {
                let written = a.vector_result_mask() | a.scalar_result_mask() | a.const1_mask() | a.const0_mask();
                if a.is_export() && written != 0 {
                    match a.vector_dest() {
                        EA => ctx.ea_used = true,
                        r if (EM0..EM0 + EM_COUNT).contains(&r) => ctx.em_used |= 1 << (r - EM0),
                        _ => {}
                    }
                }
            }
        }
    }
    let mut body = Vec::new();
    // Pixel shaders: interpolators are preloaded into r0-r15.
    let mut preloads = Vec::new();
    if !vertex {
        for ip in &c.interpolators {
            let name = format!("i{}{}", DECL_USAGE_NAMES.get(ip.usage as usize).unwrap_or(&"usage"), ip.usage_index);
            ctx.inputs.push(IoVar { name, semantic: Semantic::Texcoord(interpolator_location(ip.usage, ip.usage_index)), components: 4 });
            let i = ctx.inputs.len() as u32 - 1;
            body.push(assign(ip.reg, 0xF, read(RegFile::Input, i, XYZW)));
            preloads.push((i, ip.reg));
        }
    }
    let memexport = ctx.ea_used || ctx.em_used != 0;
    let temp_count = if ctx.ul.is_some() {
        UNLEASHED_TEMP_COUNT
    } else if memexport {
        MEMEXPORT_TEMP_COUNT
    } else {
        TEMP_COUNT
    };
    // Unleashed profile, instanced vertex shaders (g_IndexCount): XenosRecomp's
    // `float4 r0 = float4(iVertexId + g_IndexCount.x * iInstanceId, 0.0, 0.0, 0.0)`.
    let index_count = ctx.ul.as_ref().and_then(|u| u.index_count);
    let index_init = index_count.map(|reg| {
        ctx.inputs.push(IoVar { name: "iVertexId".into(), semantic: Semantic::VertexId, components: 1 });
        let vid = Expr::IntUnary(IntUnOp::UintToFloat, Box::new(read(RegFile::Input, ctx.inputs.len() as u32 - 1, [0; 4])));
        ctx.inputs.push(IoVar { name: "iInstanceId".into(), semantic: Semantic::InstanceId, components: 1 });
        let iid = read(RegFile::Input, ctx.inputs.len() as u32 - 1, [0; 4]);
        let value = bin(BinOp::Add, vid, bin(BinOp::Mul, read(RegFile::Const(CB_FLOAT), reg, [0; 4]), iid));
        assign(0, 0xF, Expr::Compose(Box::new([value, lit(0.0), lit(0.0), lit(0.0)])))
    });
    // Unleashed profile, vertex shaders naming g_MtxProjection: XenosRecomp runs the shader twice
    // (`[unroll] for (iterationIndex = 0; iterationIndex < 2; …)`), first with the reverse-Z
    // projection, then with the game's; oPos keeps the first run's value when
    // SPEC_CONSTANT_REVERSE_Z is set, everything else is the second run's.
    let reverse_z = ctx.ul.as_ref().is_some_and(|u| u.reverse_z);
    if reverse_z {
        ctx.spec_constants_mask |= SPEC_CONSTANT_REVERSE_Z;
    }
    for run in 0..if reverse_z { 2 } else { 1 } {
        if let Some(u) = ctx.ul.as_mut() {
            u.reverse_pass = reverse_z && run == 0;
            u.guard_position = reverse_z && run == 1;
        }
        if run == 1 {
            // registers start again at 0, outputs but oPos too (XenosRecomp declares them in the loop)
            body.push(Stmt::Comment("UNLEASHED_RECOMP reverse-Z: second run, with the game's g_MtxProjection".into()));
            body.extend((0..temp_count).map(|r| assign(r, 0xF, lit(0.0))));
            for (o, v) in ctx.outputs.iter().enumerate().filter(|(_, v)| v.semantic != Semantic::Position) {
                let mask = ((1u32 << v.components) - 1) as u8;
                body.push(Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Output, o as u32), mask }, value: lit(0.0), saturate: false });
            }
        }
        body.extend(index_init.clone());
        if is_linear(p) {
            lower_linear(&mut ctx, p, &mut body)?;
        } else {
            lower_dispatch(&mut ctx, p, &mut body)?;
        }
        // The end of the shader stores the pending memory exports.
        body.extend(ctx.memexport_flush());
    }
    if let Some(u) = ctx.ul.as_mut() {
        u.reverse_pass = false;
        u.guard_position = false;
    }
    // Vertex epilogue: XenosRecomp's half-pixel offset, oPos.xy += g_HalfPixelOffset * oPos.w.
    if vertex {
        if let Some(&o) = ctx.output_by_export.get(&62) {
            let pos = read(RegFile::Output, o, XYZW);
            let hp = read(RegFile::Const(CB_SHARED), 16, [2, 3, 2, 3]);
            body.push(Stmt::Assign {
                dst: Dst { reg: RegRef::fixed(RegFile::Output, o), mask: 0b0011 },
                value: bin(BinOp::Add, pos.clone(), bin(BinOp::Mul, hp, lane(pos, 3))),
                saturate: false,
            });
        } else {
            return Err(XenosError::Shader { what: "vertex shader never exports oPos".into() }.into());
        }
        opts_epilogue(&mut ctx, &mut body);
        declare_every_interpolator(&mut ctx);
    }
    // Pixel epilogue: XenosRecomp's alpha test behind SPEC_CONSTANT_ALPHA_TEST,
    // clip(oC0.w - g_AlphaThreshold) (every pixel shader carries it, as in XenosRecomp).
    if !vertex {
        body.extend(keep_overwritten_inputs(&preloads, &body, ctx.output_by_export.get(&0).copied()));
        ctx.spec_constants_mask |= SPEC_CONSTANT_ALPHA_TEST;
        let alpha = match ctx.output_by_export.get(&0) {
            Some(&o) => read(RegFile::Output, o, [3; 4]),
            None => lit(0.0),
        };
        let threshold = read(RegFile::Const(CB_SHARED), 17, [0; 4]);
        let mut else_body = vec![];
        if ctx.ul.is_some() {
            // XenosRecomp UNLEASHED_RECOMP: `else if (g_SpecConstants() & SPEC_CONSTANT_ALPHA_TO_COVERAGE)`
            ctx.spec_constants_mask |= SPEC_CONSTANT_ALPHA_TO_COVERAGE;
            match ctx.output_by_export.get(&0) {
                Some(&o) => {
                    else_body.push(Stmt::If { cond: spec_bit_set(STATE_SPEC_UNLEASHED, 1), then_body: alpha_to_coverage(o), else_body: vec![] })
                }
                None => ctx.notices.push("alpha to coverage: the shader writes no oC0, so it has none (XenosRecomp's HLSL would not compile)".into()),
            }
        }
        body.push(Stmt::If {
            cond: Cond::Compare(CmpOp::Ne, read(RegFile::Const(CB_SHARED), STATE_SPEC, [0; 4]), lit(0.0)),
            then_body: vec![Stmt::Discard(Cond::Compare(CmpOp::Lt, bin(BinOp::Sub, alpha, threshold), lit(0.0)))],
            else_body,
        });
    }
    let stage = if vertex { Stage::Vertex } else { Stage::Pixel };
    let none = Binding { dx_register: 0, dx_space: 0, vk_set: 0, vk_binding: 0 };
    let const_buffers = vec![
        ConstBuffer {
            block: if vertex { "VertexShaderConstants" } else { "PixelShaderConstants" }.into(),
            var: "c".into(),
            len: if vertex { VS_CONSTANTS } else { PS_CONSTANTS },
            binding: none,
        },
        ConstBuffer { block: "SharedConstants".into(), var: "g_XenosState".into(), len: XenosRecompAbi::STATE_LEN, binding: none },
    ];
    let extension = uses_extension(p, &ctx.int_defs);
    let mut texture_slots = vec![0; ctx.textures.len()];
    for (&(slot, _), &i) in &ctx.tex_by_slot {
        texture_slots[i as usize] = slot;
    }
    let ext = ModuleExt {
        resource_abi: ResourceAbi::XenosRecomp(XenosRecompAbi {
            samplers: ctx.sampler_names.iter().map(|(&slot, name)| (slot, name.clone())).collect(),
            texture_slots,
            spec_constants_mask: ctx.spec_constants_mask,
            shared_extension: extension,
            memexport_formats: memexport.then(memexport_formats),
            unleashed: ctx.ul.is_some(),
        }),
        ..Default::default()
    };
    let mut header_comments = vec![format!(
        "Xenos {} shader, {} CF instructions, {} slots; conventions: shader_common.h (Xenos section).",
        if vertex { "vertex" } else { "pixel" },
        p.cf.len(),
        p.slot_count
    )];
    header_comments.append(&mut ctx.notices);
    if memexport {
        // the format comes from the stream constant at run time, so these cannot be rejected here
        header_comments.push(
            "memory export to g_MemExport: formats outside shrec's table, endian modes 6-7 and swap units larger than the element store NOTHING; 16-bit float formats round as the host's f32tof16 does (shader_common.h, Xenos memexport)".into(),
        );
    }
    if let Some(ct) = &c.constant_table {
        for k in &ct.constants {
            header_comments.push(format!("constant {:?} {:?} {} x{}", k.name, k.register_set, k.register_index, k.register_count));
        }
    }
    let module = Module {
        family: Family::Xenos,
        stage,
        inputs: ctx.inputs,
        outputs: ctx.outputs,
        const_buffers,
        textures: ctx.textures,
        temps: TempFile { count: temp_count, prefix: "r".into(), indexable: ctx.indexable },
        body,
        header_comments,
        ext,
    };
    Ok(Lowered { module, spec_constants_mask: ctx.spec_constants_mask })
}

/// XenosRecomp's Vulkan vertex-input locations (`USAGE_LOCATIONS`, what an UnleashedRecomp-style
/// runtime binds): (D3DDECLUSAGE, index) → location.
const XR_INPUT_LOCATIONS: [(u32, u32, u32); 17] = [
    (0, 0, 0), // POSITION0
    (3, 0, 1), // NORMAL0
    (6, 0, 2), // TANGENT0
    (7, 0, 3), // BINORMAL0
    (5, 0, 4), // TEXCOORD0-3
    (5, 1, 5),
    (5, 2, 6),
    (5, 3, 7),
    (10, 0, 8),  // COLOR0
    (2, 0, 9),   // BLENDINDICES0
    (1, 0, 10),  // BLENDWEIGHT0
    (10, 1, 11), // COLOR1
    (5, 4, 12),  // TEXCOORD4-7
    (5, 5, 13),
    (5, 6, 14),
    (5, 7, 15),
    (0, 1, 15), // POSITION1
];

/// Vulkan location of vertex element `k`: XenosRecomp's location for the usages its table lists
/// (unless an earlier element already took it: POSITION1 and TEXCOORD7 share 15 there); any
/// other element, which XenosRecomp cannot compile, gets 16 + k.
pub fn vertex_input_location(elements: &[super::container::VertexElement], k: usize) -> u32 {
    let xr =
        |e: &super::container::VertexElement| XR_INPUT_LOCATIONS.iter().find(|&&(u, i, _)| u == e.usage && i == e.usage_index).map(|&(_, _, l)| l);
    match xr(&elements[k]) {
        Some(l) if !elements[..k].iter().any(|e| xr(e) == Some(l)) => l,
        _ => 16 + k as u32,
    }
}

/// D3DDECLUSAGE values XenosRecomp declares `uint4`: BLENDINDICES, NORMAL, TANGENT, BINORMAL.
fn is_uint_usage(usage: u32) -> bool {
    matches!(usage, 2 | 3 | 6 | 7)
}

/// A constant-table name as an HLSL identifier: characters outside `[A-Za-z0-9_]` become `_`,
/// a leading digit gets a `_` prefix (real containers have scrubbed names such as "@@@@").
pub fn sanitize(name: &str) -> String {
    let mut s: String = name.chars().map(|ch| if ch.is_ascii_alphanumeric() || ch == '_' { ch } else { '_' }).collect();
    if s.is_empty() || s.starts_with(|ch: char| ch.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// Sampler name per fetch-constant slot, from the constant table's sampler entries: a sampler
/// array `NAME[n]` at register r names slots r..r+n `NAME`, `NAME_1`, ... (XenosRecomp names only
/// the first). Names are sanitized and made unique (`s<digits>` is reserved for slots without an
/// entry).
pub fn sampler_names(c: &Container) -> BTreeMap<u32, String> {
    use super::container::RegisterSet;
    let mut out = BTreeMap::new();
    let mut used = std::collections::BTreeSet::new();
    if let Some(ct) = &c.constant_table {
        for k in ct.constants.iter().filter(|k| k.register_set == RegisterSet::Sampler) {
            let mut base = sanitize(&k.name);
            // `shrec_` names are reserved: renaming with suffixes alone would never leave the
            // prefix (fuzz find: a sampler named `shrec_re` looped forever)
            if base.starts_with("shrec_") {
                base.insert(0, '_');
            }
            for j in 0..k.register_count.max(1) as u32 {
                let slot = k.register_index as u32 + j;
                if out.contains_key(&slot) || slot >= SAMPLER_SLOTS {
                    continue;
                }
                let mut name = if j == 0 { base.clone() } else { format!("{base}_{j}") };
                let mut n = 1;
                while used.contains(&name) || is_slot_name(&name) {
                    name = format!("{base}_{}_{n}", if j == 0 { 0 } else { j });
                    n += 1;
                }
                used.insert(name.clone());
                out.insert(slot, name);
            }
        }
    }
    // Slots without a constant-table entry get XenosRecomp's fallback name `s<slot>` when a
    // fetch uses them (`Ctx::sampler_name`).
    out
}

/// `s<digits>`: the fallback names of unnamed slots, reserved.
fn is_slot_name(name: &str) -> bool {
    name.len() > 1 && name.starts_with('s') && name[1..].chars().all(|ch| ch.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assign(reg: u32, mask: u8, value: Expr) -> Stmt {
        Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Temp, reg), mask }, value, saturate: false }
    }

    #[test]
    fn an_input_register_written_and_read_keeps_its_input() {
        let to_output = |reg: u32| Stmt::Assign {
            dst: Dst { reg: RegRef::fixed(RegFile::Output, 0), mask: 0xF },
            value: read(RegFile::Temp, reg, XYZW),
            saturate: false,
        };
        // every lane overwritten, then read (vo_xenon ps_osd)
        assert!(input_overwritten_then_read(&[assign(0, 0xF, lit(1.0)), to_output(0)], 0));
        // xyz overwritten and only xyz read: DXC would drop the input although it is read
        assert!(input_overwritten_then_read(&[assign(0, 0x7, lit(1.0)), to_output(0)], 0));
        // overwritten inside a loop (the pc-dispatch body), read there
        assert!(input_overwritten_then_read(&[Stmt::Loop { body: vec![assign(0, 0xF, lit(1.0)), to_output(0), Stmt::Break] }], 0));
        // never written: every read carries the input, which stays live by itself
        assert!(!input_overwritten_then_read(&[to_output(0)], 0));
        // read first, overwritten afterwards: the first read keeps the input live
        assert!(!input_overwritten_then_read(&[to_output(0), assign(0, 0xF, lit(1.0)), to_output(0)], 0));
        // written, never read: XenosRecomp drops the input too
        assert!(!input_overwritten_then_read(&[assign(0, 0xF, lit(1.0))], 0));
        // another register
        assert!(!input_overwritten_then_read(&[assign(1, 0xF, lit(1.0)), to_output(1)], 0));
    }
}
