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
/// The vertex shader's oPts lanes as host outputs (Xenia's reading of export 63):
/// - x, point size → the Vulkan `PointSize` built-in (SPIR-V only: D3D12 has no programmable
///   point size; the guest's PA_SU_POINT_MINMAX clamp is render state the runtime applies);
/// - y, edge flag → nothing: no host API has per-vertex edge flags (a comment says so);
/// - z, kill vertex: the vertex is killed when bits 0-30 are not zero (1.0, -1.0, NaN kill;
///   ±0.0 does not; integer test, so a denormal kills even where floats flush) →
///   `SV_CullDistance` −1 / 0, which discards a primitive whose vertices are all killed: the
///   hardware default (PA_CL_CLIP_CNTL.VTX_KILL_OR = 0; the OR mode is not provided).
fn opts_epilogue(ctx: &mut Ctx, body: &mut Vec<Stmt>) {
    let written = ctx.opts_written;
    if written & 1 != 0 {
        ctx.outputs.push(IoVar { name: "oPointSize".into(), semantic: Semantic::PointSize, components: 1 });
        let o = ctx.outputs.len() as u32 - 1;
        body.push(Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Output, o), mask: 1 }, value: tx(OPTS), saturate: false });
    }
    if written & 2 != 0 {
        ctx.notices.push("oPts.y (edge flag) is written: ignored, no host API has per-vertex edge flags".into());
    }
    if written & 4 != 0 {
        ctx.outputs.push(IoVar { name: "oKillVertex".into(), semantic: Semantic::CullDistance, components: 1 });
        let o = ctx.outputs.len() as u32 - 1;
        let ib = |op: IntBinOp, a: Expr, b: Expr| Expr::IntBinary(op, Box::new(a), Box::new(b));
        let bits = |v: u32| lit(f32::from_bits(v));
        // all-ones when killed, else 0; masked to the bits of -1.0
        let killed = ib(IntBinOp::NeI, ib(IntBinOp::And, read(RegFile::Temp, OPTS, [2; 4]), bits(0x7FFF_FFFF)), bits(0));
        body.push(Stmt::Assign {
            dst: Dst { reg: RegRef::fixed(RegFile::Output, o), mask: 1 },
            value: ib(IntBinOp::And, killed, bits((-1.0f32).to_bits())),
            saturate: false,
        });
    }
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

    /// Unleashed profile, first run of a reverse-Z vertex shader: row `index` of XenosRecomp's
    /// `mtxProjectionReverseZ = mul(mtxProjection, float4x4(1,0,0,0, 0,1,0,0, 0,0,-1,0, 0,0,1,1))`,
    /// i.e. the row (x, y, w − z, w) of `g_MtxProjection` (z/w becomes 1 − z/w). Static reads
    /// only: XenosRecomp drops a relative offset there, shrec keeps relative reads as they are.
    fn reverse_z_row(&self, index: u32) -> Option<Expr> {
        let u = self.ul.as_ref().filter(|u| u.reverse_pass)?;
        let (first, count) = u.projection?;
        if !(first..first + count).contains(&index) {
            return None;
        }
        let r = read(RegFile::Const(CB_FLOAT), index, XYZW);
        Some(Expr::Compose(Box::new([lane(r.clone(), 0), lane(r.clone(), 1), bin(BinOp::Sub, lane(r.clone(), 3), lane(r.clone(), 2)), lane(r, 3)])))
    }

    /// Whether vertex element (usage, index) is a `uint4` input only in the Unleashed profile
    /// (XenosRecomp `UNLEASHED_RECOMP`: POSITION1 always, TEXCOORD2 with `g_InstanceTypes`);
    /// vfetch converts it by value, as HLSL's uint4 → float4 assignment does.
    fn unleashed_uint_input(&self, usage: u32, index: u32) -> bool {
        self.ul.as_ref().is_some_and(|u| (usage == 0 && index == 1) || (usage == 5 && index == 2 && u.meta_instancer))
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

    /// A texture of the bindless heaps: `g_Texture{2D,3D,Cube}DescriptorHeap[NAME_Texture…DescriptorIndex]`
    /// sampled with `g_SamplerDescriptorHeap[NAME_SamplerDescriptorIndex]` (XenosRecomp's names
    /// and SharedConstants offsets; 1D textures live in the 2D heap, see `fetch`).
    fn texture(&mut self, slot: u32, dim: TexDim) -> Result<u32, ShaderError> {
        let dim = if dim == TexDim::D1 { TexDim::D2 } else { dim };
        let key = (slot, dim as u32);
        if let Some(&i) = self.tex_by_slot.get(&key) {
            return Ok(i);
        }
        if slot >= SAMPLER_SLOTS {
            return Err(self.err(format!(
                "texture fetch constant tf{slot}: XenosRecomp's SharedConstants hold descriptor indices for tf0-tf{} only",
                SAMPLER_SLOTS - 1
            )));
        }
        let name = self.sampler_name(slot);
        let suffix = heap_suffix(dim);
        let none = Binding { dx_register: 0, dx_space: 0, vk_set: 0, vk_binding: 0 };
        self.textures.push(Texture {
            tex_var: format!("g_Texture{suffix}DescriptorHeap[{name}_Texture{suffix}DescriptorIndex]"),
            smp_var: format!("g_SamplerDescriptorHeap[{name}_SamplerDescriptorIndex]"),
            dim,
            compare: false,
            texture_binding: none,
            sampler_binding: none,
        });
        let i = self.textures.len() as u32 - 1;
        self.tex_by_slot.insert(key, i);
        Ok(i)
    }

    fn sampler_name(&mut self, slot: u32) -> String {
        self.sampler_names.entry(slot).or_insert_with(|| format!("s{slot}")).clone()
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

    /// Writes `value` (a float4 in `FRES`) through a fetch destination swizzle.
    fn fetch_store(&mut self, f: &Fetch, out: &mut Vec<Stmt>) {
        let s = f.dst_swizzle();
        let mut mask = 0u8;
        let mut parts: Vec<Expr> = Vec::new();
        for (l, &c) in s.iter().enumerate() {
            match c {
                0..=3 => {
                    mask |= 1 << l;
                    parts.push(read(RegFile::Temp, FRES, [c; 4]));
                }
                4 => {
                    mask |= 1 << l;
                    parts.push(lit(0.0));
                }
                5 | 6 => {
                    mask |= 1 << l;
                    parts.push(lit(1.0));
                }
                _ => parts.push(lit(0.0)),
            }
        }
        if mask == 0 {
            return;
        }
        let value = if s == [0, 1, 2, 3] {
            t(FRES)
        } else {
            let p: [Expr; 4] = parts.try_into().unwrap();
            Expr::Compose(Box::new(p))
        };
        self.temp_write(f.dst_reg(), f.dst_rel(), mask, value, false, out);
    }

    /// The texture fetch's source coordinates: three lanes by the fetch's source swizzle (W
    /// repeats Z; no fetch reads a fourth coordinate).
    fn fetch_source_xyz(&self, f: &Fetch) -> Expr {
        let sw = f.tfetch_src_swizzle();
        self.temp_read(f.src_reg(), f.src_rel(), [sw[0], sw[1], sw[2], sw[2]], false, false)
    }

    /// One source lane of a texture fetch, broadcast to all four lanes.
    fn fetch_source_lane(&self, f: &Fetch, l: usize) -> Expr {
        self.temp_read(f.src_reg(), f.src_rel(), [f.tfetch_src_swizzle()[l]; 4], false, false)
    }

    fn fetch(&mut self, f: &Fetch, address: u32, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        let mut body = Vec::new();
        if self.ul.is_some() && f.op() != Some(FetchOp::VertexFetch) && f.const_index() == 10 {
            // XenosRecomp UNLEASHED_RECOMP: any texture-clause instruction on tf10 (g_GISampler)
            // sets the bit, whether or not it samples (see `unleashed_sample`).
            self.spec_constants_mask |= SPEC_CONSTANT_BICUBIC_GI_FILTER;
        }
        let overrides = f.filter_overrides();
        if matches!(f.op(), Some(FetchOp::TextureFetch | FetchOp::GetTextureComputedLod | FetchOp::GetTextureWeights)) && !overrides.is_empty() {
            // XenosRecomp's ABI binds one sampler per texture, made by the runtime from the fetch
            // constant: the instruction's own filters cannot pick another one.
            out.push(Stmt::Comment(format!(
                "fetch filter overrides {}: not applied, the runtime's sampler (from the fetch constant) filters, as in XenosRecomp",
                overrides.join(", ")
            )));
        }
        let Some(op) = f.op() else {
            return Err(self.err(format!("fetch opcode {} (unknown) is not supported", f.opcode())));
        };
        match op {
            FetchOp::VertexFetch => {
                if f.is_mini() {
                    // A mini fetch reads the next dwords of the same vertex from the stream of the
                    // preceding full fetch; its element is the container's entry for this slot.
                }
                let i = self.input(address)?;
                let usage = self.c.vertex_elements.iter().find(|e| e.address == address).map(|e| (e.usage, e.usage_index));
                let value = read(RegFile::Input, i, XYZW);
                let value = match usage {
                    Some((u, index)) if self.unleashed_uint_input(u, index) => Expr::IntUnary(IntUnOp::UintToFloat, Box::new(value)),
                    _ => value,
                };
                let value = match usage {
                    // XenosRecomp's vfetch conversions (tfetchR11G11B10 / tfetchTexcoord).
                    Some((3 | 6 | 7, _)) => {
                        self.spec_constants_mask |= SPEC_CONSTANT_R11G11B10_NORMAL;
                        let on = Cond::Compare(CmpOp::Ne, read(RegFile::Const(CB_SHARED), STATE_SPEC, [1; 4]), lit(0.0));
                        Expr::SelectIf(Box::new(on), Box::new(r11g11b10(value.clone())), Box::new(value))
                    }
                    Some((2, _)) => Expr::IntUnary(IntUnOp::UintToFloat, Box::new(value)),
                    Some((5, index)) if index < 32 => {
                        let swapped = Cond::BitSet { value: read(RegFile::Const(CB_SHARED), 16, [1; 4]), bit: index };
                        Expr::SelectIf(Box::new(swapped), Box::new(swz(value.clone(), [1, 0, 3, 2])), Box::new(value))
                    }
                    _ => value,
                };
                // ExpAdjust (Xenia's translators): the fetched value times 2^n, after the
                // format's conversion (which the host input layout does). Not part of a vertex
                // declaration, so the shader applies it.
                let value = if f.exp_adjust() != 0 { bin(BinOp::Mul, value, lit(2f32.powi(f.exp_adjust()))) } else { value };
                body.push(assign(FRES, 0xF, value));
                self.fetch_store(f, &mut body);
            }
            FetchOp::TextureFetch => {
                self.unleashed_pixel_coord(f, &mut body)?;
                let raw = self.fetch_source_xyz(f);
                let dim = fetch_dim(f);
                let offsets = f.offsets();
                let shifted = offsets != [0.0; 3];
                let mut coord = self.fetch_source_xyz(f);
                // tfetchCube's face coordinate, before the s / t offsets touch the vector
                let face = lane(coord.clone(), 2);
                let tex = self.texture(f.const_index(), dim)?;
                // a cube fetch's z offset moves the face (below), not s or t
                let moved = if dim == TexDim::Cube { offsets[0] != 0.0 || offsets[1] != 0.0 } else { shifted };
                if moved || f.coord_denorm() {
                    // To normalised coordinates in texels of the base level: (c + offset) / size
                    // for unnormalised c, c + offset / size otherwise (Xenia's translators). A 3D
                    // fetch offsets and normalises x, y and z (XenosRecomp's 3D heap holds 3D
                    // textures only, no stacked 2D ones, so z is never a layer index); a cube
                    // fetch s and t by the face's width and height (the face coordinate, lane z,
                    // is taken below).
                    let oz = if dim == TexDim::D3 { offsets[2] } else { 0.0 };
                    let off = Expr::Literal([offsets[0], offsets[1], oz, 0.0]);
                    let size = Expr::TexSize { tex };
                    coord = if f.coord_denorm() {
                        bin(BinOp::Div, bin(BinOp::Add, coord, off), size)
                    } else {
                        bin(BinOp::Add, coord, bin(BinOp::Div, off, size))
                    };
                    if moved {
                        body.push(Stmt::Comment(
                            "tfetch texel offsets are applied in texels of the base level (a fetch from a smaller mip level shifts by that level's texels on the hardware)".into(),
                        ));
                    }
                }
                if dim == TexDim::D1 {
                    // XenosRecomp's heaps have no 1D textures: a 1D texture is a one-texel-high
                    // texture of the 2D heap, sampled at its vertical centre.
                    coord = Expr::Compose(Box::new([lane(coord, 0), lit(0.5), lit(0.0), lit(0.0)]));
                }
                let mode = self.sample_mode(f, dim, tex);
                if dim == TexDim::Cube {
                    // tfetchCube takes face coordinates (s, t, face) as `cube`, rcp and mad 1.5
                    // make them; Xenia's fetch translators add the z offset to the face (a whole
                    // or half face, not divided by a size), clamp the face to [0, 5] and
                    // truncate it, then rebuild the direction (`formats::cube::cube_direction`)
                    // from s and t moved and normalised above.
                    let face = if offsets[2] != 0.0 { bin(BinOp::Add, face, lit(offsets[2])) } else { face };
                    coord = face_direction(coord, face);
                }
                let sample = Expr::Sample { tex, coord: Box::new(coord), mode: mode.clone(), offset: [0; 3] };
                self.unleashed_sample(f, dim, tex, raw, mode, sample, &mut body);
                self.fetch_store(f, &mut body);
            }
            FetchOp::GetTextureGradients => {
                // getGradients (Xenia's translators): (ddx(s.x), ddy(s.x), ddx(s.y), ddy(s.y)) of
                // the source; vertex shaders have no derivatives: 0. Computed outside the
                // predicate (derivatives need the whole quad), stored under it.
                let value = if self.vertex {
                    lit(0.0)
                } else {
                    let x = self.fetch_source_lane(f, 0);
                    let y = self.fetch_source_lane(f, 1);
                    let d = |op: UnOp, v: &Expr| lane(un(op, v.clone()), 0);
                    Expr::Compose(Box::new([d(UnOp::Ddx, &x), d(UnOp::Ddy, &x), d(UnOp::Ddx, &y), d(UnOp::Ddy, &y)]))
                };
                out.push(assign(FRES, 0xF, value));
                self.fetch_store(f, &mut body);
            }
            FetchOp::GetTextureComputedLod => {
                // getCompTexLOD (Xenia's translators): the LOD an implicit-derivative fetch at the
                // source would compute, relative to the base level, not clamped and without any
                // bias (Xenia: the `lod` instruction's unclamped result; texel offsets are not
                // getCompTexLOD operands), in x; y, z, w = 0. Computed outside the predicate
                // (derivatives need the whole quad), stored under it.
                if self.vertex || !f.use_comp_lod() || f.use_reg_gradients() {
                    // Xenia's translators store 0 where the fetch would not compute a LOD from
                    // derivatives: in a vertex shader (no implicit derivatives), without
                    // UseComputedLOD, or with UseRegisterGradients ("getCompTexLOD used with
                    // explicit LOD or gradients - contradicts MSDN").
                    body.push(Stmt::Comment(
                        "getCompTexLOD without implicit derivatives (vertex shader, no UseComputedLOD, or UseRegisterGradients): 0, as Xenia's translators read it".into(),
                    ));
                    body.push(assign(FRES, 0xF, lit(0.0)));
                } else {
                    let lod = self.comp_tex_lod(f)?;
                    out.push(assign(FRES, 0xF, Expr::Compose(Box::new([lod, lit(0.0), lit(0.0), lit(0.0)]))));
                }
                self.fetch_store(f, &mut body);
            }
            FetchOp::GetTextureWeights => {
                self.unleashed_pixel_coord(f, &mut body)?;
                self.get_weights(f, &mut body)?;
                self.fetch_store(f, &mut body);
            }
            // setTexLOD (source x → the register LOD), setGradientsH / V (source xyz): state
            // for later fetches with UseRegisterLOD / UseRegisterGradients (Xenia).
            FetchOp::SetTextureLod => body.push(assign(GRAD_H_LOD, 0x8, self.fetch_source_lane(f, 0))),
            FetchOp::SetTextureGradientsHorz => body.push(assign(GRAD_H_LOD, 0x7, self.fetch_source_xyz(f))),
            FetchOp::SetTextureGradientsVert => body.push(assign(GRAD_V, 0x7, self.fetch_source_xyz(f))),
            FetchOp::GetTextureBorderColorFrac => {
                // What fraction of the filter footprint falls on border texels depends on the
                // fetch constant's clamp modes and border colour, which XenosRecomp's binding
                // model does not give the shader (the runtime's sampler decides); Xenia does not
                // translate it either.
                return Err(self.rejected(op.name(), op.info().status));
            }
        }
        if f.is_predicated() {
            out.push(Stmt::If { cond: pred_cond(f.pred_condition()), then_body: body, else_body: vec![] });
        } else {
            out.extend(body);
        }
        Ok(())
    }

    /// Unleashed profile, pixel shader, tfetch2D / getWeights2D on tf0: XenosRecomp's
    /// `pixelCoord = getPixelCoord(…_Texture2DDescriptorIndex, src.xy)` (texture size × the
    /// source coordinates, before the fetch), which alpha to coverage reads. Vertex shaders have
    /// no pixelCoord (XenosRecomp's HLSL names an undeclared variable there).
    fn unleashed_pixel_coord(&mut self, f: &Fetch, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        if self.ul.is_none() || self.vertex || f.const_index() != 0 || f.dimension() != 1 {
            return Ok(());
        }
        let tex = self.texture(0, TexDim::D2)?;
        let coord = self.fetch_source_xyz(f);
        out.push(assign(UL_PIXEL_COORD, 0x3, bin(BinOp::Mul, Expr::TexSize { tex }, coord)));
        Ok(())
    }

    /// Stores a tfetch's texel in FRES: `sample`, or in the Unleashed profile
    /// - on tf10 (2D): XenosRecomp's `tfetch2DBicubic` when SPEC_CONSTANT_BICUBIC_GI_FILTER is set;
    /// - on `sampZBuffer` in a pixel shader naming `g_MtxPrevInvViewProjection`: 1.0 − the texel.
    #[allow(clippy::too_many_arguments)]
    fn unleashed_sample(&self, f: &Fetch, dim: TexDim, tex: u32, raw: Expr, mode: SampleMode, sample: Expr, body: &mut Vec<Stmt>) {
        let Some(u) = &self.ul else {
            body.push(assign(FRES, 0xF, sample));
            return;
        };
        if f.const_index() != 10 {
            body.push(assign(FRES, 0xF, sample));
        } else if dim == TexDim::D2 {
            let then_body = bicubic(f, tex, raw, mode);
            body.push(Stmt::If { cond: spec_bit_set(STATE_SPEC_UNLEASHED, 0), then_body, else_body: vec![assign(FRES, 0xF, sample)] });
        } else {
            body.push(Stmt::Comment(
                "tf10 (g_GISampler) is not 2D: XenosRecomp UNLEASHED_RECOMP has no bicubic form of this fetch (its HLSL names an undefined tfetch…Bicubic); sampled as usual".into(),
            ));
            body.push(assign(FRES, 0xF, sample));
        }
        if u.z_buffer_slot == Some(f.const_index()) {
            body.push(Stmt::Comment(
                "sampZBuffer with g_MtxPrevInvViewProjection: 1.0 - texel (XenosRecomp UNLEASHED_RECOMP, reverse-Z depth)".into(),
            ));
            body.push(assign(FRES, 0xF, bin(BinOp::Sub, lit(1.0), t(FRES))));
        }
    }

    /// getCompTexLOD's LOD (pixel shaders, UseComputedLOD): the unclamped LOD query
    /// (`CalculateLevelOfDetailUnclamped`) at the source, normalised (unnormalised coordinates
    /// divided by the size: x, y and z of a 3D texture by width, height, depth; s and t of a cube
    /// map by the face's width and height); 1D on the 2D heap's one-texel-high texture; a
    /// cube map at the direction rebuilt from the face coordinates as tfetchCube does (face
    /// clamped to [0, 5] and truncated, sc = 2s − 3, tc = 2t − 3; Xenia's translators).
    fn comp_tex_lod(&mut self, f: &Fetch) -> Result<Expr, ShaderError> {
        let dim = fetch_dim(f);
        let tex = self.texture(f.const_index(), dim)?;
        let mut coord = self.fetch_source_xyz(f);
        if f.coord_denorm() {
            coord = bin(BinOp::Div, coord, Expr::TexSize { tex });
        }
        match dim {
            // the 2D heap's one-texel-high texture (as tfetch1D): no vertical change
            TexDim::D1 => coord = Expr::Compose(Box::new([lane(coord, 0), lit(0.5), lit(0.0), lit(0.0)])),
            TexDim::Cube => coord = face_direction(coord.clone(), lane(coord, 2)),
            // (`fetch_dim` never gives an array: Xenos fetch constants have no array kind)
            TexDim::D2 | TexDim::D3 | TexDim::D1Array | TexDim::D2Array | TexDim::CubeArray => {}
        }
        Ok(lane(Expr::QueryLod { tex, coord: Box::new(coord) }, 0))
    }

    /// How a tfetch picks its LOD (Xenia's translators): the LOD bias is the instruction's plus,
    /// with UseRegisterLOD, the register LOD (setTexLOD). A computed LOD (UseComputedLOD in a
    /// pixel shader, or with UseRegisterGradients in any shader) applies the bias to the
    /// derivatives, or to the register gradients (setGradientsH / V, scaled by 2^bias;
    /// unnormalised coordinates' gradients are in texels; a cube map's are the derivatives of the
    /// cube-space direction, passed as the TextureCube's gradients, and Xenia does not normalise
    /// them for unnormalised coordinates — its TODO —, nor does this); otherwise the LOD is the
    /// bias itself.
    /// The fetch constant's own LOD bias is not part of XenosRecomp's ABI and is not applied.
    fn sample_mode(&self, f: &Fetch, dim: TexDim, tex: u32) -> SampleMode {
        let bias = if f.use_reg_lod() { bin(BinOp::Add, lane(t(GRAD_H_LOD), 3), lit(f.lod_bias())) } else { lit(f.lod_bias()) };
        let computed = f.use_comp_lod() && (!self.vertex || f.use_reg_gradients());
        if !computed {
            return SampleMode::Lod(Box::new(bias));
        }
        if !f.use_reg_gradients() {
            return if f.use_reg_lod() { SampleMode::BiasExpr(Box::new(bias)) } else { SampleMode::Bias(f.lod_bias()) };
        }
        let scale = un(UnOp::Exp2, bias);
        let gradient = |reg: u32| {
            let mut g = bin(BinOp::Mul, swz(t(reg), [0, 1, 2, 2]), scale.clone());
            if f.coord_denorm() && dim != TexDim::Cube {
                g = bin(BinOp::Div, g, Expr::TexSize { tex });
            }
            if dim == TexDim::D1 {
                // the 2D heap's one-texel-high texture: no vertical change
                g = Expr::Compose(Box::new([lane(g, 0), lit(0.0), lit(0.0), lit(0.0)]));
            }
            Box::new(g)
        };
        SampleMode::Grad(gradient(GRAD_H_LOD), gradient(GRAD_V))
    }

    /// getWeights{1D,2D,3D,Cube}: the bilinear lerp factors a fetch at the source coordinates
    /// would use, `frac(coord × size + offset − 0.5)` per filtered axis (XenosRecomp's
    /// `getWeights2D`, Xenia's translators; unnormalised coordinates skip the `× size`), 0 for a
    /// NaN coordinate (XenosRecomp) and for the axes the dimension lacks (a cube map filters s
    /// and t only, not the face). The size is the base level's. W, the mip lerp factor, is 0 for
    /// the instruction's MipFilter=point / BASEMAP; otherwise it depends on the sampler's mip
    /// filter and the LOD, neither known here: a destination that reads it is rejected.
    fn get_weights(&mut self, f: &Fetch, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        // W is the mip lerp factor: 0 when the instruction's own MipFilter is point or BASEMAP
        // (no blend between levels); with a linear mip filter it needs the LOD, and with the
        // fetch constant's filter ("keep") the runtime's sampler, which the shader does not see.
        if f.dst_swizzle().contains(&3) && !matches!(f.mip_filter(), 0 | 2) {
            return Err(self.err(format!(
                "getWeights: the destination reads W, the mip lerp factor, with MipFilter={} (it needs the sampler's mip filter and the LOD; W is translated for MipFilter=point / BASEMAP)",
                ["point", "linear", "BASEMAP", "keep"][f.mip_filter() as usize]
            )));
        }
        let dim = fetch_dim(f);
        // the axes the texture filters: a cube map filters s and t only, not the face
        let axes = match dim {
            TexDim::D1 | TexDim::D1Array => 1,
            TexDim::D3 => 3,
            TexDim::D2 | TexDim::Cube | TexDim::D2Array | TexDim::CubeArray => 2,
        };
        let tex = self.texture(f.const_index(), dim)?;
        let coord = self.fetch_source_xyz(f);
        let texels = if f.coord_denorm() { coord.clone() } else { bin(BinOp::Mul, coord.clone(), Expr::TexSize { tex }) };
        let off = f.offsets();
        let shift = Expr::Literal([off[0] - 0.5, off[1] - 0.5, off[2] - 0.5, 0.0]);
        let w = un(UnOp::Fract, bin(BinOp::Add, texels, shift));
        out.push(Stmt::Comment(
            "getWeights: lerp factors at the texture's base level (a fetch that samples a smaller mip level filters with that level's size)".into(),
        ));
        out.push(assign(FRES, 0xF, sel(CmpOp::Eq, coord.clone(), coord, w, lit(0.0))));
        out.push(assign(FRES, 0xF & !((1 << axes) - 1), lit(0.0)));
        Ok(())
    }

    fn vector_value(&mut self, a: &Alu, out: &mut Vec<Stmt>) -> Result<Option<Expr>, ShaderError> {
        let Some(op) = a.vector_op() else { return Err(self.err(format!("vector opcode {}", a.vector_opcode()))) };
        let n = a.vector_operand_count();
        let s: Vec<Expr> = (1..=n as u32).map(|i| a.vector_src(i)).collect::<Vec<_>>().iter().map(|o| self.operand(o)).collect();
        let one = || lit(1.0);
        let zero = || lit(0.0);
        let hsum = |p: Expr, k: usize| {
            let mut acc = lane(p.clone(), 0);
            for l in 1..k {
                acc = bin(BinOp::Add, acc, lane(p.clone(), l as u8));
            }
            acc
        };
        Ok(Some(match op {
            VectorOp::Add => bin(BinOp::Add, s[0].clone(), s[1].clone()),
            VectorOp::Mul => mul_l(s[0].clone(), s[1].clone()),
            VectorOp::Max => sel(CmpOp::Ge, s[0].clone(), s[1].clone(), s[0].clone(), s[1].clone()),
            VectorOp::Min => sel(CmpOp::Lt, s[0].clone(), s[1].clone(), s[0].clone(), s[1].clone()),
            VectorOp::Seq => sel(CmpOp::Eq, s[0].clone(), s[1].clone(), one(), zero()),
            VectorOp::Sgt => sel(CmpOp::Gt, s[0].clone(), s[1].clone(), one(), zero()),
            VectorOp::Sge => sel(CmpOp::Ge, s[0].clone(), s[1].clone(), one(), zero()),
            VectorOp::Sne => sel(CmpOp::Ne, s[0].clone(), s[1].clone(), one(), zero()),
            VectorOp::Frc => un(UnOp::Fract, s[0].clone()),
            VectorOp::Trunc => un(UnOp::Trunc, s[0].clone()),
            VectorOp::Floor => un(UnOp::Floor, s[0].clone()),
            VectorOp::Mad => bin(BinOp::Add, mul_l(s[0].clone(), s[1].clone()), s[2].clone()),
            VectorOp::CndEq => sel(CmpOp::Eq, s[0].clone(), zero(), s[1].clone(), s[2].clone()),
            VectorOp::CndGe => sel(CmpOp::Ge, s[0].clone(), zero(), s[1].clone(), s[2].clone()),
            VectorOp::CndGt => sel(CmpOp::Gt, s[0].clone(), zero(), s[1].clone(), s[2].clone()),
            // The products once into the vector result register, then their sum (one
            // multiply per lane in the HLSL instead of one per summed lane); the sources are
            // read before anything of this instruction is written, as before.
            VectorOp::Dp4 | VectorOp::Dp3 => {
                out.push(assign(VRES, 0xF, mul_l(s[0].clone(), s[1].clone())));
                hsum(t(VRES), if op == VectorOp::Dp4 { 4 } else { 3 })
            }
            VectorOp::Dp2Add => {
                out.push(assign(VRES, 0xF, mul_l(s[0].clone(), s[1].clone())));
                bin(BinOp::Add, hsum(t(VRES), 2), lane(s[2].clone(), 0))
            }
            VectorOp::Cube => {
                // Xenia's ucode.h / translators: the direction is src0 read as .z_xy (z = lane 0,
                // x = lane 2, y = lane 3; the compilers write src0.zzxy, src1.yxzz and src1 is not
                // read); result (tc, sc, 2 × major axis, face id). The same lanes, ties, face ids
                // and table as R600's CUBE; the sign test is Xenia's `< 0` (a NaN major axis picks
                // the positive face), see `formats::cube`.
                let l = |k: u8| lane(s[0].clone(), k);
                let [tc, sc, ma, face] = cube::cube(l(2), l(3), l(0), cube::SignTest::LtZeroIsNegative);
                Expr::Compose(Box::new([tc, sc, ma, face]))
            }
            VectorOp::Max4 => {
                let m01 = sel(CmpOp::Ge, lane(s[0].clone(), 0), lane(s[0].clone(), 1), lane(s[0].clone(), 0), lane(s[0].clone(), 1));
                let m2 = sel(CmpOp::Ge, m01.clone(), lane(s[0].clone(), 2), m01, lane(s[0].clone(), 2));
                sel(CmpOp::Ge, m2.clone(), lane(s[0].clone(), 3), m2, lane(s[0].clone(), 3))
            }
            VectorOp::SetpEqPush | VectorOp::SetpNePush | VectorOp::SetpGtPush | VectorOp::SetpGePush => {
                let cmp = [CmpOp::Eq, CmpOp::Ne, CmpOp::Gt, CmpOp::Ge][(op.code() - 20) as usize];
                // p0 from the w lanes, result from the x lanes.
                let p = sel(CmpOp::Eq, lane(s[0].clone(), 3), zero(), sel(cmp, lane(s[1].clone(), 3), zero(), one(), zero()), zero());
                let inc = bin(BinOp::Add, lane(s[0].clone(), 0), one());
                let v = sel(CmpOp::Eq, lane(s[0].clone(), 0), zero(), sel(cmp, lane(s[1].clone(), 0), zero(), zero(), inc.clone()), inc);
                out.push(assign(VRES, 0xF, v));
                out.push(assign(P0, 0xF, p));
                return Ok(None);
            }
            VectorOp::KillEq | VectorOp::KillGt | VectorOp::KillGe | VectorOp::KillNe => {
                if self.vertex {
                    return Err(self.err("kill in a vertex shader"));
                }
                let cmp = [CmpOp::Eq, CmpOp::Gt, CmpOp::Ge, CmpOp::Ne][(op.code() - 24) as usize];
                let any = dot(4, sel(cmp, s[0].clone(), s[1].clone(), one(), zero()), one());
                out.push(assign(VRES, 0xF, sel(CmpOp::Gt, any.clone(), zero(), one(), zero())));
                self.discard(Cond::Compare(CmpOp::Gt, any, zero()), out);
                return Ok(None);
            }
            VectorOp::Dst => {
                Expr::Compose(Box::new([one(), lane(mul_l(s[0].clone(), s[1].clone()), 1), lane(s[0].clone(), 2), lane(s[1].clone(), 3)]))
            }
            VectorOp::MaxA => {
                let a0 = un(UnOp::Floor, bin(BinOp::Add, lane(s[0].clone(), 3), lit(0.5)));
                let a0 = bin(BinOp::Max, bin(BinOp::Min, a0, lit(255.0)), lit(-256.0));
                let v = sel(CmpOp::Ge, s[0].clone(), s[1].clone(), s[0].clone(), s[1].clone());
                out.push(assign(VRES, 0xF, v));
                // a0 changes after both operations read their sources (committed in `alu`).
                out.push(assign(FRES, 0xF, a0));
                return Ok(None);
            }
        }))
    }

    fn scalar_value(&mut self, a: &Alu, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        let Some(op) = a.scalar_op() else { return Err(self.err(format!("scalar opcode {} is not defined", a.scalar_opcode()))) };
        let srcs: Vec<Expr> = a.scalar_srcs().iter().map(|o| self.operand(o)).collect();
        let av = || lane(srcs[0].clone(), 0);
        let bv = || lane(srcs[0].clone(), 1);
        let ps = || t(PS);
        let one = || lit(1.0);
        let zero = || lit(0.0);
        let fmax = f32::MAX;
        let setp = |v: Expr, p: Expr, out: &mut Vec<Stmt>| {
            out.push(assign(SRES, 0xF, v));
            out.push(assign(P0, 0xF, p));
        };
        let v = match op {
            ScalarOp::Adds => bin(BinOp::Add, av(), bv()),
            ScalarOp::AddsPrev => bin(BinOp::Add, av(), ps()),
            ScalarOp::Muls => mul_l(av(), bv()),
            ScalarOp::MulsPrev => mul_l(av(), ps()),
            ScalarOp::MulsPrev2 => {
                // ps == -FLT_MAX || !isfinite(ps) || !isfinite(b) || b <= 0 ? -FLT_MAX : a * ps
                let prod = mul_l(av(), ps());
                let r = sel(CmpOp::Le, bv(), zero(), lit(-fmax), prod);
                let r = sel(CmpOp::Le, un(UnOp::Abs, bv()), lit(fmax), r, lit(-fmax));
                let r = sel(CmpOp::Le, un(UnOp::Abs, ps()), lit(fmax), r, lit(-fmax));
                sel(CmpOp::Eq, ps(), lit(-fmax), lit(-fmax), r)
            }
            ScalarOp::Maxs => sel(CmpOp::Ge, av(), bv(), av(), bv()),
            ScalarOp::Mins => sel(CmpOp::Lt, av(), bv(), av(), bv()),
            ScalarOp::Seqs => sel(CmpOp::Eq, av(), zero(), one(), zero()),
            ScalarOp::Sgts => sel(CmpOp::Gt, av(), zero(), one(), zero()),
            ScalarOp::Sges => sel(CmpOp::Ge, av(), zero(), one(), zero()),
            ScalarOp::Snes => sel(CmpOp::Ne, av(), zero(), one(), zero()),
            ScalarOp::Frcs => un(UnOp::Fract, av()),
            ScalarOp::Truncs => un(UnOp::Trunc, av()),
            ScalarOp::Floors => un(UnOp::Floor, av()),
            ScalarOp::Exp => un(UnOp::Exp2, av()),
            ScalarOp::Logc => un(UnOp::Log2ClampMax, av()),
            ScalarOp::Log => un(UnOp::Log2ExactOne, av()),
            ScalarOp::Rcpc => un(UnOp::RcpClampMax, av()),
            ScalarOp::Rcpf => un(UnOp::RcpClampZero, av()),
            ScalarOp::Rcp => un(UnOp::Rcp, av()),
            ScalarOp::Rsqc => un(UnOp::RsqClampMax, av()),
            ScalarOp::Rsqf => un(UnOp::RsqClampZero, av()),
            ScalarOp::Rsq => un(UnOp::RsqExactOne, av()),
            ScalarOp::MaxAs | ScalarOp::MaxAsf => {
                let r = if op == ScalarOp::MaxAs { bin(BinOp::Add, av(), lit(0.5)) } else { av() };
                let a0 = bin(BinOp::Max, bin(BinOp::Min, un(UnOp::Floor, r), lit(255.0)), lit(-256.0));
                // The result reads its (possibly a0-relative) sources before a0 changes.
                out.push(assign(SRES, 0xF, sel(CmpOp::Ge, av(), bv(), av(), bv())));
                out.push(assign(A0, 0xF, a0));
                return Ok(());
            }
            ScalarOp::Subs => bin(BinOp::Sub, av(), bv()),
            ScalarOp::SubsPrev => bin(BinOp::Sub, av(), ps()),
            ScalarOp::SetpEq | ScalarOp::SetpNe | ScalarOp::SetpGt | ScalarOp::SetpGe => {
                let cmp = [CmpOp::Eq, CmpOp::Ne, CmpOp::Gt, CmpOp::Ge][(op.code() - 27) as usize];
                setp(sel(cmp, av(), zero(), zero(), one()), sel(cmp, av(), zero(), one(), zero()), out);
                return Ok(());
            }
            ScalarOp::SetpInv => {
                let v = sel(CmpOp::Eq, av(), one(), zero(), sel(CmpOp::Eq, av(), zero(), one(), av()));
                setp(v, sel(CmpOp::Eq, av(), one(), one(), zero()), out);
                return Ok(());
            }
            ScalarOp::SetpPop => {
                let m = bin(BinOp::Sub, av(), one());
                setp(sel(CmpOp::Le, m.clone(), zero(), zero(), m.clone()), sel(CmpOp::Le, m, zero(), one(), zero()), out);
                return Ok(());
            }
            ScalarOp::SetpClr => {
                setp(lit(fmax), zero(), out);
                return Ok(());
            }
            ScalarOp::SetpRstr => {
                setp(sel(CmpOp::Eq, av(), zero(), zero(), av()), sel(CmpOp::Eq, av(), zero(), one(), zero()), out);
                return Ok(());
            }
            ScalarOp::KillsEq | ScalarOp::KillsGt | ScalarOp::KillsGe | ScalarOp::KillsNe | ScalarOp::KillsOne => {
                if self.vertex {
                    return Err(self.err("kill in a vertex shader"));
                }
                // kills_eq, _gt, _ge, _ne compare with 0, kills_one with 1 (in encoding order).
                let (cmp, rhs) =
                    [(CmpOp::Eq, 0.0), (CmpOp::Gt, 0.0), (CmpOp::Ge, 0.0), (CmpOp::Ne, 0.0), (CmpOp::Eq, 1.0)][(op.code() - 35) as usize];
                out.push(assign(SRES, 0xF, sel(cmp, av(), lit(rhs), one(), zero())));
                self.discard(Cond::Compare(cmp, av(), lit(rhs)), out);
                return Ok(());
            }
            ScalarOp::Sqrt => un(UnOp::Sqrt, av()),
            // mulsc / addsc / subsc: constant .a and temp .b (two encodings each).
            ScalarOp::Mulsc0 | ScalarOp::Mulsc1 => mul_l(lane(srcs[0].clone(), 0), lane(srcs[1].clone(), 0)),
            ScalarOp::Addsc0 | ScalarOp::Addsc1 => bin(BinOp::Add, lane(srcs[0].clone(), 0), lane(srcs[1].clone(), 0)),
            ScalarOp::Subsc0 | ScalarOp::Subsc1 => bin(BinOp::Sub, lane(srcs[0].clone(), 0), lane(srcs[1].clone(), 0)),
            ScalarOp::Sin => un(UnOp::Sin, av()),
            ScalarOp::Cos => un(UnOp::Cos, av()),
            ScalarOp::RetainPrev => ps(),
            ScalarOp::Undefined41 => return Err(self.rejected(op.name(), op.info().status)),
        };
        out.push(assign(SRES, 0xF, v));
        Ok(())
    }

    fn write_dest(
        &mut self,
        export: bool,
        reg: u32,
        rel: bool,
        mask: u32,
        value: Expr,
        saturate: bool,
        out: &mut Vec<Stmt>,
    ) -> Result<(), ShaderError> {
        if mask == 0 {
            return Ok(());
        }
        if export && reg == EA {
            out.push(Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Temp, EA_REG), mask: mask as u8 }, value, saturate });
        } else if export && (EM0..EM0 + EM_COUNT).contains(&reg) {
            let e = reg - EM0;
            out.push(Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Temp, EM_REG + e), mask: mask as u8 }, value, saturate });
            let (flag, l) = if e < 4 { (EM_WRITTEN, e) } else { (EM4_WRITTEN, 0) };
            out.push(assign(flag, 1 << l, lit(1.0)));
        } else if export && self.vertex && reg == 63 {
            self.opts_written |= mask as u8;
            out.push(Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Temp, OPTS), mask: mask as u8 }, value, saturate });
        } else if export {
            let o = self.output(reg)?;
            let write = Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Output, o), mask: mask as u8 }, value, saturate };
            if self.vertex && reg == 62 && self.ul.as_ref().is_some_and(|u| u.guard_position) {
                // XenosRecomp UNLEASHED_RECOMP: `if ((g_SpecConstants() & SPEC_CONSTANT_REVERSE_Z) == 0 || iterationIndex == 0)`
                out.push(Stmt::If { cond: spec_bit_clear(STATE_SPEC_UNLEASHED, 2), then_body: vec![write], else_body: vec![] });
            } else {
                out.push(write);
            }
        } else {
            self.temp_write(reg, rel, mask as u8, value, saturate, out);
        }
        Ok(())
    }

    /// Memory-export stores of the eM# written since the previous store, then eM0-eM4 and the
    /// written flags cleared (`memexport`: at every `alloc`, the end, and before a kill).
    fn memexport_flush(&self) -> Vec<Stmt> {
        let mut v = Vec::new();
        if self.ul.as_ref().is_some_and(|u| u.reverse_pass) {
            // the reverse-Z run of an Unleashed vertex shader stores nothing (the second run does)
            return v;
        }
        for e in 0..EM_COUNT {
            if self.em_used & (1 << e) == 0 {
                continue;
            }
            let flag = if e < 4 { read(RegFile::Temp, EM_WRITTEN, [e as u8; 4]) } else { tx(EM4_WRITTEN) };
            let em = t(EM_REG + e);
            v.push(Stmt::If {
                cond: Cond::Compare(CmpOp::Ne, flag, lit(0.0)),
                then_body: vec![Stmt::XenosMemExport { address: t(EA_REG), value: em, element: e }],
                else_body: vec![],
            });
        }
        if !v.is_empty() {
            v.push(assign(EM_WRITTEN, 0xF, lit(0.0)));
            v.push(assign(EM4_WRITTEN, 0xF, lit(0.0)));
            for e in 0..EM_COUNT {
                if self.em_used & (1 << e) != 0 {
                    v.push(assign(EM_REG + e, 0xF, lit(0.0)));
                }
            }
        }
        v
    }

    /// `alloc`: ends the previous memory export; `alloc export` (type 3) also clears eA.
    fn alloc(&self, cf: &Cf) -> Vec<Stmt> {
        // The markers name where the stores come from in the HLSL, and let the verification
        // suite remove exactly these stores to prove it notices (shrec-verify's mutations).
        let flush = self.memexport_flush();
        let mut v = Vec::new();
        if !flush.is_empty() {
            v.push(Stmt::Comment(MEMEXPORT_ALLOC_BEGIN.into()));
            v.extend(flush);
            v.push(Stmt::Comment(MEMEXPORT_ALLOC_END.into()));
        }
        if cf.alloc_type() == 3 && (self.ea_used || self.em_used != 0) {
            v.push(assign(EA_REG, 0xF, lit(0.0)));
        }
        v
    }

    /// A kill: the pixel's pending memory exports are stored before it is discarded.
    fn discard(&self, cond: Cond, out: &mut Vec<Stmt>) {
        let flush = self.memexport_flush();
        if !flush.is_empty() {
            let mut then_body = vec![Stmt::Comment(MEMEXPORT_KILL.into())];
            then_body.extend(flush);
            out.push(Stmt::If { cond: cond.clone(), then_body, else_body: vec![] });
        }
        out.push(Stmt::Discard(cond));
    }

    fn alu(&mut self, a: &Alu, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        let mut body = Vec::new();
        let has_v = a.has_vector_op();
        let has_s = a.has_scalar_op();
        // Both operations read their sources before either writes.
        if has_v {
            if let Some(v) = self.vector_value(a, &mut body)? {
                body.push(assign(VRES, 0xF, v));
            }
        }
        if has_s {
            self.scalar_value(a, &mut body)?;
        }
        if has_v && a.vector_op() == Some(VectorOp::MaxA) {
            body.push(assign(A0, 0xF, t(FRES)));
        }
        if has_v {
            self.write_dest(a.is_export(), a.vector_dest(), a.vector_dest_rel(), a.vector_result_mask(), t(VRES), a.vector_clamp(), &mut body)?;
        }
        if has_s {
            let (reg, rel) = if a.is_export() { (a.vector_dest(), false) } else { (a.scalar_dest(), a.scalar_dest_rel()) };
            self.write_dest(a.is_export(), reg, rel, a.scalar_result_mask(), t(SRES), a.scalar_clamp(), &mut body)?;
            body.push(assign(PS, 0xF, t(SRES)));
        }
        if a.is_export() {
            let c1 = a.const1_mask() & !(a.vector_result_mask() | a.scalar_result_mask());
            let c0 = a.const0_mask();
            self.write_dest(true, a.vector_dest(), false, c1, lit(1.0), false, &mut body)?;
            self.write_dest(true, a.vector_dest(), false, c0, lit(0.0), false, &mut body)?;
        }
        if a.is_predicated() {
            out.push(Stmt::If { cond: pred_cond(a.pred_condition()), then_body: body, else_body: vec![] });
        } else {
            out.extend(body);
        }
        Ok(())
    }

    fn clause(&mut self, cf_index: usize, slots: &[Slot], out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        for s in slots {
            match &s.instr {
                Instr::Fetch(f) => {
                    self.at = format!("CF {cf_index} slot {} ({})", s.address, f.name().unwrap_or("fetch?"));
                    self.fetch(f, s.address, out)?
                }
                Instr::Alu(a) => {
                    let vn = a.vector_op().map_or("?", VectorOp::name);
                    let sn = a.scalar_op().map_or("?", ScalarOp::name);
                    self.at = format!("CF {cf_index} slot {} ({vn} / {sn})", s.address);
                    self.alu(a, out)?
                }
            }
        }
        Ok(())
    }

    fn bool_cond(&self, b: u32, want: bool) -> Result<Cond, ShaderError> {
        // b0-b15: XenosRecomp packing, g_Booleans bit (b + 16 * isPixel). b16-b255 (XenosRecomp
        // has none): bit b % 32 of word b / 32 of the stage's extension words.
        let c = if b < 16 {
            let bit = b + if self.vertex { 0 } else { 16 };
            Cond::BitSet { value: read(RegFile::Const(CB_SHARED), 16, [0; 4]), bit }
        } else if b < 256 {
            Cond::BitSet { value: read(RegFile::Const(CB_SHARED), STATE_BOOLS + b / 32, [0; 4]), bit: b % 32 }
        } else {
            return Err(self.err(format!("boolean constant b{b} (b0-b255 exist)")));
        };
        Ok(if want { c } else { Cond::Not(Box::new(c)) })
    }

    /// (count, aL start, aL step) of loop constant i<id>: the literal `defi` folded, else the
    /// stage's run-time constant (shrec's SharedConstants extension).
    fn loop_constant(&self, id: u32) -> (Expr, Expr, Expr) {
        match self.int_defs.get(&id) {
            Some(&v) => (lit((v & 0xFF) as f32), lit(((v >> 8) & 0xFF) as f32), lit(((v >> 16) & 0xFF) as u8 as i8 as f32)),
            None => {
                let r = |l: u8| read(RegFile::Const(CB_SHARED), STATE_LOOPS + id, [l; 4]);
                (r(0), r(1), r(2))
            }
        }
    }

    /// Condition under which an exec-family CF instruction runs its clause (None = always).
    fn exec_cond(&self, cf: &Cf) -> Result<Option<Cond>, ShaderError> {
        Ok(match cf.op() {
            // 13 / 14 (cond_exec_pred_clean) test a boolean constant, as 3 / 4 (Xenia's
            // translators parse them as cond_exec; no corpus shader has them).
            CfOp::CondExec | CfOp::CondExecEnd | CfOp::CondExecPredClean | CfOp::CondExecPredCleanEnd => {
                Some(self.bool_cond(cf.bool_address(), cf.condition())?)
            }
            CfOp::CondExecPred | CfOp::CondExecPredEnd => Some(pred_cond(cf.condition())),
            CfOp::Exec
            | CfOp::ExecEnd
            | CfOp::Nop
            | CfOp::LoopStart
            | CfOp::LoopEnd
            | CfOp::CondCall
            | CfOp::Return
            | CfOp::CondJmp
            | CfOp::Alloc
            | CfOp::MarkVsFetchDone => None,
        })
    }
}

/// Straight-line lowering (exec family, alloc, nop, vfetch_end only).
///
/// A conditional exec-end (`cexece`, `exece_pred`) ends the shader only when its condition holds
/// (Xenia: ucode.h on kCondExecEnd / kCondExecPredEnd, "only if the condition is actually met",
/// with a game ending in `cexece b130; cexece !b130; exece`; its translators end the shader inside
/// the condition): the CF instructions after it become its `else` branch.
fn lower_linear(ctx: &mut Ctx, p: &super::ucode::Program, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
    lower_linear_from(ctx, p, 0, out)
}

fn lower_linear_from(ctx: &mut Ctx, p: &super::ucode::Program, first: usize, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
    for (i, cf) in p.cf.iter().enumerate().skip(first) {
        ctx.at = format!("CF {i} ({})", cf.op());
        if cf.op() == CfOp::Alloc {
            out.extend(ctx.alloc(cf));
        }
        if cf.is_exec() {
            let cond = ctx.exec_cond(cf)?;
            let mut body = Vec::new();
            ctx.clause(i, &p.clauses[i], &mut body)?;
            match cond {
                Some(c) if cf.ends_shader() => {
                    let mut rest = Vec::new();
                    lower_linear_from(ctx, p, i + 1, &mut rest)?;
                    out.push(Stmt::If { cond: c, then_body: body, else_body: rest });
                    return Ok(());
                }
                Some(c) => out.push(Stmt::If { cond: c, then_body: body, else_body: vec![] }),
                None => out.extend(body),
            }
            if cf.ends_shader() {
                break;
            }
        }
    }
    Ok(())
}

fn is_linear(p: &super::ucode::Program) -> bool {
    p.cf.iter().all(|c| c.is_exec() || matches!(c.op(), CfOp::Nop | CfOp::Alloc | CfOp::MarkVsFetchDone))
}

/// Pops the loop stack (counters and saved aL move up one place).
fn pop_loop() -> Vec<Stmt> {
    let mut v = Vec::new();
    for k in 0..MAX_LOOP_DEPTH - 1 {
        v.push(assign(LOOP_CTR + k, 0xF, tx(LOOP_CTR + k + 1)));
        v.push(assign(LOOP_SAVE + k, 0xF, tx(LOOP_SAVE + k + 1)));
    }
    v
}

/// Whether the program reads shrec's SharedConstants extension: b16+ (cexec, jmp, call) or a
/// loop constant without a literal `defi`.
fn uses_extension(p: &super::ucode::Program, int_defs: &BTreeMap<u32, u32>) -> bool {
    p.cf.iter().any(|cf| match cf.op() {
        CfOp::CondExec | CfOp::CondExecEnd | CfOp::CondExecPredClean | CfOp::CondExecPredCleanEnd => cf.bool_address() >= 16,
        CfOp::CondJmp | CfOp::CondCall => !cf.is_unconditional() && !cf.is_predicated() && cf.bool_address() >= 16,
        CfOp::LoopStart | CfOp::LoopEnd => !int_defs.contains_key(&cf.loop_id()),
        CfOp::Nop | CfOp::Exec | CfOp::ExecEnd | CfOp::CondExecPred | CfOp::CondExecPredEnd | CfOp::Return | CfOp::Alloc | CfOp::MarkVsFetchDone => {
            false
        }
    })
}

/// Checks that no path through the CF program ends a loop that is not open, or opens more than
/// `MAX_LOOP_DEPTH` loops. The loop stack is dynamic (Xenia's translators keep it as a run-time
/// stack: ProcessLoopStartInstruction pushes, ProcessLoopEndInstruction pops when the count runs
/// out or a predicated break is taken and falls through), so one `loop_start` may be closed by
/// several `loop_end`s, e.g. a predicated early endloop before the real one (fxc 2.0.7680). The
/// check follows every CF edge (both ways of each condition) with the set of possible depths at
/// each CF; subroutines (call targets) start at depth 0 relative to their caller.
fn check_loop_depths(p: &super::ucode::Program) -> Result<(), ShaderError> {
    let n = p.cf.len();
    // Bit d of depths[i]: CF i can be reached with d loops open.
    let mut depths = vec![0u8; n];
    let mut work = Vec::new();
    let reach = |at: usize, depth: u32, depths: &mut Vec<u8>, work: &mut Vec<usize>| {
        if at < n && depths[at] & (1 << depth) == 0 {
            depths[at] |= 1 << depth;
            work.push(at);
        }
    };
    if n > 0 {
        reach(0, 0, &mut depths, &mut work);
    }
    for cf in &p.cf {
        if cf.op() == CfOp::CondCall {
            reach(cf.target() as usize, 0, &mut depths, &mut work);
        }
    }
    while let Some(i) = work.pop() {
        let cf = &p.cf[i];
        let set = depths[i];
        for depth in (0..=MAX_LOOP_DEPTH).filter(|d| set & (1 << d) != 0) {
            let mut to = |at: usize, d: u32| reach(at, d, &mut depths, &mut work);
            match cf.op() {
                CfOp::Exec
                | CfOp::ExecEnd
                | CfOp::CondExec
                | CfOp::CondExecEnd
                | CfOp::CondExecPred
                | CfOp::CondExecPredEnd
                | CfOp::CondExecPredClean
                | CfOp::CondExecPredCleanEnd => {
                    // An unconditional exec-end ends the shader; a conditional one only when
                    // its condition holds.
                    if cf.op() != CfOp::ExecEnd {
                        to(i + 1, depth);
                    }
                }
                CfOp::LoopStart => {
                    if depth == MAX_LOOP_DEPTH {
                        return Err(XenosError::LoopTooDeep { cf: i, max: MAX_LOOP_DEPTH }.into());
                    }
                    to(i + 1, depth + 1);
                    to(cf.target() as usize, depth);
                }
                CfOp::LoopEnd => {
                    if depth == 0 {
                        return Err(XenosError::EndloopWithoutLoop { cf: i }.into());
                    }
                    to(cf.target() as usize, depth);
                    to(i + 1, depth - 1);
                }
                CfOp::CondJmp => {
                    to(cf.target() as usize, depth);
                    if !cf.is_unconditional() {
                        to(i + 1, depth);
                    }
                }
                // A call returns to the next CF with the caller's loops; a return outside a
                // subroutine does nothing (Xenia's ucode.h).
                CfOp::CondCall | CfOp::Return | CfOp::Nop | CfOp::Alloc | CfOp::MarkVsFetchDone => to(i + 1, depth),
            }
        }
    }
    Ok(())
}

/// pc-dispatch lowering: `pc = 0; loop { if (pc == 0) {...} ... break; }`, one block per CF
/// instruction. Handles forward and backward jumps and loops with literal integer constants.
fn lower_dispatch(ctx: &mut Ctx, p: &super::ucode::Program, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
    check_loop_depths(p)?;
    let n = p.cf.len() as u32;
    let set_pc = |v: u32| assign(PC, 0xF, lit(v as f32));
    let mut blocks = Vec::new();
    for (i, cf) in p.cf.iter().enumerate() {
        let i32_ = i as u32;
        ctx.at = format!("CF {i} ({})", cf.op());
        let mut b = Vec::new();
        let next = i32_ + 1;
        match cf.op() {
            CfOp::Exec
            | CfOp::ExecEnd
            | CfOp::CondExec
            | CfOp::CondExecEnd
            | CfOp::CondExecPred
            | CfOp::CondExecPredEnd
            | CfOp::CondExecPredClean
            | CfOp::CondExecPredCleanEnd => {
                let cond = ctx.exec_cond(cf)?;
                let mut body = Vec::new();
                ctx.clause(i, &p.clauses[i], &mut body)?;
                // A conditional exec-end ends the shader only when its condition holds (see
                // `lower_linear`).
                match cond {
                    Some(c) if cf.ends_shader() => {
                        body.push(Stmt::Break);
                        b.push(Stmt::If { cond: c, then_body: body, else_body: vec![] });
                        b.push(set_pc(next));
                    }
                    Some(c) => {
                        b.push(Stmt::If { cond: c, then_body: body, else_body: vec![] });
                        b.push(set_pc(next));
                    }
                    None => {
                        b.extend(body);
                        b.push(if cf.ends_shader() { Stmt::Break } else { set_pc(next) });
                    }
                }
            }
            CfOp::Alloc => {
                b.extend(ctx.alloc(cf));
                b.push(set_pc(next));
            }
            CfOp::Nop | CfOp::MarkVsFetchDone => b.push(set_pc(next)),
            CfOp::CondJmp => {
                let target = cf.target();
                if target >= n {
                    return Err(ctx.err(format!("jump target {target} outside the {n} CF instructions")));
                }
                if cf.is_unconditional() {
                    b.push(set_pc(target));
                } else {
                    let c = if cf.is_predicated() { pred_cond(cf.condition()) } else { ctx.bool_cond(cf.bool_address(), cf.condition())? };
                    b.push(Stmt::If { cond: c, then_body: vec![set_pc(target)], else_body: vec![set_pc(next)] });
                }
            }
            CfOp::LoopStart => {
                // Loop constant: byte 0 = count, byte 1 = aL start, byte 2 = aL step (signed);
                // a literal `defi` is folded, otherwise the stage's run-time constant is read.
                let (count, start, _) = ctx.loop_constant(cf.loop_id());
                // Push (counter, saved aL): the stack is dynamic because a subroutine's loop may
                // run inside a caller's loop.
                for k in (1..MAX_LOOP_DEPTH).rev() {
                    b.push(assign(LOOP_CTR + k, 0xF, tx(LOOP_CTR + k - 1)));
                    b.push(assign(LOOP_SAVE + k, 0xF, tx(LOOP_SAVE + k - 1)));
                }
                b.push(assign(LOOP_SAVE, 0xF, tx(AL)));
                if !cf.is_repeat() {
                    b.push(assign(AL, 0xF, start));
                }
                b.push(assign(LOOP_CTR, 0xF, count));
                let skip = cf.target();
                let mut exit = vec![assign(AL, 0xF, tx(LOOP_SAVE))];
                exit.extend(pop_loop());
                exit.push(set_pc(skip));
                b.push(Stmt::If { cond: Cond::Compare(CmpOp::Le, tx(LOOP_CTR), lit(0.0)), then_body: exit, else_body: vec![set_pc(next)] });
            }
            CfOp::LoopEnd => {
                let (_, _, step) = ctx.loop_constant(cf.loop_id());
                b.push(assign(LOOP_CTR, 0xF, bin(BinOp::Sub, tx(LOOP_CTR), lit(1.0))));
                b.push(assign(AL, 0xF, bin(BinOp::Add, tx(AL), step)));
                if cf.is_predicated_break() {
                    // Break when the predicate equals the condition.
                    b.push(Stmt::If { cond: pred_cond(cf.condition()), then_body: vec![assign(LOOP_CTR, 0xF, lit(0.0))], else_body: vec![] });
                }
                let mut exit = vec![assign(AL, 0xF, tx(LOOP_SAVE))];
                exit.extend(pop_loop());
                exit.push(set_pc(next));
                b.push(Stmt::If { cond: Cond::Compare(CmpOp::Gt, tx(LOOP_CTR), lit(0.0)), then_body: vec![set_pc(cf.target())], else_body: exit });
            }
            CfOp::CondCall => {
                let target = cf.target();
                if target >= n {
                    return Err(ctx.err(format!("call target {target} outside the {n} CF instructions")));
                }
                // Push the return address (the oldest falls off past MAX_CALL_DEPTH).
                let mut call = Vec::new();
                for k in (1..MAX_CALL_DEPTH).rev() {
                    call.push(assign(CALL_STACK + k, 0xF, tx(CALL_STACK + k - 1)));
                }
                call.push(assign(CALL_STACK, 0xF, lit(next as f32)));
                call.push(assign(CALL_DEPTH, 0xF, bin(BinOp::Min, bin(BinOp::Add, tx(CALL_DEPTH), lit(1.0)), lit(MAX_CALL_DEPTH as f32))));
                call.push(set_pc(target));
                if cf.is_unconditional() {
                    b.extend(call);
                } else {
                    let c = if cf.is_predicated() { pred_cond(cf.condition()) } else { ctx.bool_cond(cf.bool_address(), cf.condition())? };
                    b.push(Stmt::If { cond: c, then_body: call, else_body: vec![set_pc(next)] });
                }
            }
            CfOp::Return => {
                // Outside a subroutine a return does nothing (Xenia's ucode.h).
                let mut ret = vec![assign(PC, 0xF, tx(CALL_STACK))];
                for k in 0..MAX_CALL_DEPTH - 1 {
                    ret.push(assign(CALL_STACK + k, 0xF, tx(CALL_STACK + k + 1)));
                }
                ret.push(assign(CALL_DEPTH, 0xF, bin(BinOp::Sub, tx(CALL_DEPTH), lit(1.0))));
                b.push(Stmt::If { cond: Cond::Compare(CmpOp::Gt, tx(CALL_DEPTH), lit(0.0)), then_body: ret, else_body: vec![set_pc(next)] });
            }
        }
        b.push(Stmt::Continue);
        blocks.push(Stmt::If { cond: Cond::Compare(CmpOp::Eq, tx(PC), lit(i32_ as f32)), then_body: b, else_body: vec![] });
    }
    blocks.push(Stmt::Break);
    out.push(assign(PC, 0xF, lit(0.0)));
    out.push(assign(CALL_DEPTH, 0xF, lit(0.0)));
    out.push(Stmt::Loop { body: blocks });
    Ok(())
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

/// What XenosRecomp's `UNLEASHED_RECOMP` code reads from the constant table (its
/// shader_recompiler.cpp keys every difference on these names).
fn unleashed_state(c: &Container, vertex: bool) -> Result<Unleashed, ShaderError> {
    use super::container::RegisterSet;
    let consts = c.constant_table.as_ref().map(|ct| ct.constants.as_slice()).unwrap_or(&[]);
    let named = |n: &str| consts.iter().any(|k| k.name == n);
    let float4 = |n: &str| consts.iter().find(|k| k.name == n && k.register_set == RegisterSet::Float4);
    let mut u = Unleashed::default();
    if vertex {
        u.reverse_z = named("g_MtxProjection");
        u.projection = float4("g_MtxProjection").filter(|k| k.register_count > 1).map(|k| (k.register_index as u32, k.register_count as u32));
        u.meta_instancer = named("g_InstanceTypes");
        if named("g_IndexCount") {
            // XenosRecomp reads `g_IndexCount.x`, which only compiles for a one-register float4
            let k = float4("g_IndexCount").filter(|k| k.register_count == 1).ok_or_else(|| {
                XenosError::Shader {
                    what: "--profile unleashed: g_IndexCount is not a one-register float4 constant (XenosRecomp's UNLEASHED_RECOMP code reads g_IndexCount.x)".into(),
                }
            })?;
            u.index_count = Some(k.register_index as u32);
        }
    } else if named("g_MtxPrevInvViewProjection") {
        // XenosRecomp's sampler map keeps the first sampler constant of each register
        let samplers: Vec<_> = consts.iter().filter(|k| k.register_set == RegisterSet::Sampler).collect();
        u.z_buffer_slot = samplers
            .iter()
            .enumerate()
            .find(|(i, k)| k.name == "sampZBuffer" && !samplers[..*i].iter().any(|e| e.register_index == k.register_index))
            .map(|(_, k)| k.register_index as u32);
    }
    Ok(u)
}

/// XenosRecomp UNLEASHED_RECOMP alpha to coverage (pixel shaders, when SPEC_CONSTANT_ALPHA_TEST
/// is clear and SPEC_CONSTANT_ALPHA_TO_COVERAGE set):
/// `oC0.w *= 1.0 + computeMipLevel(pixelCoord) * 0.25;`
/// `oC0.w = 0.5 + (oC0.w - g_AlphaThreshold) / max(fwidth(oC0.w), 1e-6);`
/// with computeMipLevel(c) = max(0, 0.5 · log2(max(dot(ddx(c), ddx(c)), dot(ddy(c), ddy(c))))).
fn alpha_to_coverage(oc0: u32) -> Vec<Stmt> {
    let w = || read(RegFile::Output, oc0, [3; 4]);
    let pc = swz(t(UL_PIXEL_COORD), [0, 1, 0, 1]);
    let (dx, dy) = (un(UnOp::Ddx, pc.clone()), un(UnOp::Ddy, pc));
    let delta = bin(BinOp::Max, dot(2, dx.clone(), dx), dot(2, dy.clone(), dy));
    let mip = bin(BinOp::Max, lit(0.0), bin(BinOp::Mul, lit(0.5), un(UnOp::Log2, delta)));
    let fwidth = bin(BinOp::Add, un(UnOp::Abs, un(UnOp::Ddx, w())), un(UnOp::Abs, un(UnOp::Ddy, w())));
    let threshold = read(RegFile::Const(CB_SHARED), 17, [0; 4]);
    let set = |value: Expr| Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Output, oc0), mask: 0b1000 }, value, saturate: false };
    vec![
        set(bin(BinOp::Mul, w(), bin(BinOp::Add, lit(1.0), bin(BinOp::Mul, mip, lit(0.25))))),
        set(bin(BinOp::Add, lit(0.5), bin(BinOp::Div, bin(BinOp::Sub, w(), threshold), bin(BinOp::Max, fwidth, lit(1e-6))))),
    ]
}

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
    let ext = ModuleExt {
        resource_abi: ResourceAbi::XenosRecomp(XenosRecompAbi {
            samplers: ctx.sampler_names.iter().map(|(&slot, name)| (slot, name.clone())).collect(),
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

/// XenosRecomp's pixel-shader inputs on SPIR-V: it copies each interpolator into its register
/// (`float4 r1 = iColor0;`) and keeps the registers in memory (its one-lane writes are access
/// chains, which DXC's optimizer does not promote), so an input stays in the entry point's
/// interface whenever its register is read again, even if every lane was overwritten before
/// that read; an input whose register is never read is dropped. shrec's registers are SSA
/// values (docs/performance.md), so DXC drops an input whose preloaded value no lane ever reaches.
/// For each input whose register is both written and read ([`input_overwritten_then_read`]) this
/// returns `oC0.x = asfloat(asuint(oC0.x) | min(asuint(input.x), 0u))`:
/// `min(u, 0u)` is 0 and `b | 0` is `b` for every bit pattern, so the value is unchanged, but the
/// input is loaded by a live instruction DXC's folding rules do not remove. Found by
/// `interfaces_match_xenosrecomp` (vo_xenon ps_osd: COLOR0 in r1, every lane overwritten before
/// it is read); `tests/integration/xenos_abi.rs` checks the rule on the corpus.
fn keep_overwritten_inputs(preloads: &[(u32, u32)], body: &[Stmt], oc0: Option<u32>) -> Vec<Stmt> {
    let Some(o) = oc0 else { return vec![] };
    let rest = &body[preloads.len().min(body.len())..];
    let mut out = Vec::new();
    for &(input, reg) in preloads {
        if input_overwritten_then_read(rest, reg) {
            let keep = Expr::IntBinary(IntBinOp::MinU, Box::new(read(RegFile::Input, input, [0; 4])), Box::new(Expr::Bits([0; 4])));
            out.push(Stmt::Assign {
                dst: Dst { reg: RegRef::fixed(RegFile::Output, o), mask: 0b0001 },
                value: Expr::IntBinary(IntBinOp::Or, Box::new(read(RegFile::Output, o, XYZW)), Box::new(keep)),
                saturate: false,
            });
        }
    }
    out
}

/// Whether the preloaded value of temp `reg` may be dead in DXC's output although the program
/// reads the register (XenosRecomp then keeps the input, DXC would drop it): the register is
/// read, and the first top-level statement that reads it comes after, or itself holds, a write
/// to it (at any depth, or through a dynamic or relative destination). A first read before any
/// write sees the input itself, which keeps it live. An earlier rule (all four lanes written at
/// the top level before the first read) missed partial overwrites whose remaining lanes are
/// never read and overwrites inside a loop (the pc-dispatch body). The keep costs a few
/// instructions, never a value, so erring towards it only costs bytes.
fn input_overwritten_then_read(body: &[Stmt], reg: u32) -> bool {
    let reads = |s: &Stmt| {
        let mut hit = false;
        crate::ir::visit::stmt_reads(s, &mut |r| {
            hit |= r.file == RegFile::Temp && !matches!(r.index, Index::Fixed(i) if i != reg);
        });
        hit
    };
    let mut written = false;
    for s in body {
        let writes = writes_temp(s, reg);
        if reads(s) {
            return written || writes;
        }
        written |= writes;
    }
    false
}

/// Whether `s` (or a statement nested in it) may write temp `reg`.
fn writes_temp(s: &Stmt, reg: u32) -> bool {
    let hits = |d: &Dst| d.reg.file == RegFile::Temp && !matches!(d.reg.index, Index::Fixed(i) if i != reg);
    match s {
        Stmt::Assign { dst, .. } | Stmt::RingLoad { dst, .. } => hits(dst),
        Stmt::If { then_body, else_body, .. } => then_body.iter().chain(else_body).any(|s| writes_temp(s, reg)),
        Stmt::Loop { body } => body.iter().any(|s| writes_temp(s, reg)),
        Stmt::Break
        | Stmt::Continue
        | Stmt::Return
        | Stmt::Comment(_)
        | Stmt::Discard(_)
        | Stmt::SetInt { .. }
        | Stmt::GsStore(_)
        | Stmt::GsEmitVertex
        | Stmt::GsEmitTriangle { .. }
        | Stmt::GsCutStrip
        | Stmt::RingStore { .. }
        | Stmt::XenosMemExport { .. } => false,
    }
}

/// The format table `shrec_xenos_memexport_format` (declared in shader_common.h) returns.
fn memexport_formats() -> Vec<MemExportFormat> {
    memexport::FORMATS
        .iter()
        .map(|f| {
            // kind: 0 fixed point, 1 raw 32-bit floats, 2 16-bit floats (shader_common.h)
            let (widths, kind) = match f.kind {
                memexport::Kind::Fixed(w) => (w, 0),
                memexport::Kind::Float32(_) => ([0; 4], 1),
                memexport::Kind::Float16(_) => ([0; 4], 2),
            };
            MemExportFormat { id: f.id, name: f.name.to_string(), widths, size_log2: f.size_log2(), kind }
        })
        .collect()
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

/// XenosRecomp's `tfetchR11G11B10` with SPEC_CONSTANT_R11G11B10_NORMAL set, on the raw bits of
/// lane x: (sign bit 10 ? -1 : 0) + bits 0-9 / 1024, (bit 21 ? -1 : 0) + bits 11-20 / 1024,
/// (bit 31 ? -1 : 0) + bits 22-30 / 512, 0.
fn r11g11b10(raw: Expr) -> Expr {
    let x = swz(raw, [0; 4]);
    let ib = |op, a, b| Expr::IntBinary(op, Box::new(a), Box::new(b));
    let fields = ib(IntBinOp::And, ib(IntBinOp::ShrU, x.clone(), Expr::Bits([0, 11, 22, 0])), Expr::Bits([0x3FF, 0x3FF, 0x1FF, 0]));
    let magnitude =
        bin(BinOp::Mul, Expr::IntUnary(IntUnOp::UintToFloat, Box::new(fields)), Expr::Literal([1.0 / 1024.0, 1.0 / 1024.0, 1.0 / 512.0, 0.0]));
    let signs = Expr::IntUnary(IntUnOp::UintToFloat, Box::new(ib(IntBinOp::And, x, Expr::Bits([0x400, 0x20_0000, 0x8000_0000, 0]))));
    let sign = sel(CmpOp::Gt, signs, lit(0.0), lit(-1.0), lit(0.0));
    bin(BinOp::Add, sign, magnitude)
}

/// XenosRecomp's `tfetch2DBicubic` (its shader_common.h, UNLEASHED_RECOMP; the fast bicubic
/// B-spline filter from four bilinear samples, GPU Gems 2 ch. 20): at texel position
/// x = coord × size + offset − 0.5 (unnormalised coordinates: coord + offset − 0.5),
/// p = floor(x), f = x − p, weights w0-w3 of f, g0 = w0 + w1, g1 = w2 + w3,
/// h0 = −1 + w1 / g0 + 0.5, h1 = 1 + w3 / g1 + 0.5, and
/// g0(fy)·(g0(fx)·S(p + h0x, p + h0y) + g1(fx)·S(p + h1x, p + h0y)) + g1(fy)·(… h1y …),
/// each S a sample at (p + h) / size with the fetch's own LOD mode. Same operation order as
/// XenosRecomp's HLSL. Scratch: UL_BICUBIC (x, p), +1 (g0x, g0y, g1x, g1y), +2 (p + h0, p + h1).
fn bicubic(f: &Fetch, tex: u32, raw: Expr, mode: SampleMode) -> Vec<Stmt> {
    let (a, g, h) = (UL_BICUBIC, UL_BICUBIC + 1, UL_BICUBIC + 2);
    let size = || Expr::TexSize { tex };
    let o = f.offsets();
    let off = Expr::Literal([o[0], o[1], 0.0, 0.0]);
    let texels = if f.coord_denorm() { bin(BinOp::Add, raw, off) } else { bin(BinOp::Add, bin(BinOp::Mul, raw, size()), off) };
    let mul = |x: Expr, y: Expr| bin(BinOp::Mul, x, y);
    let add = |x: Expr, y: Expr| bin(BinOp::Add, x, y);
    let sixth = || lit(1.0 / 6.0);
    let w0 =
        |x: &Expr| mul(sixth(), add(mul(x.clone(), bin(BinOp::Sub, mul(x.clone(), add(un(UnOp::Neg, x.clone()), lit(3.0))), lit(3.0))), lit(1.0)));
    let w1 = |x: &Expr| mul(sixth(), add(mul(mul(x.clone(), x.clone()), bin(BinOp::Sub, mul(lit(3.0), x.clone()), lit(6.0))), lit(4.0)));
    let w2 = |x: &Expr| mul(sixth(), add(mul(x.clone(), add(mul(x.clone(), add(mul(lit(-3.0), x.clone()), lit(3.0))), lit(3.0))), lit(1.0)));
    let w3 = |x: &Expr| mul(sixth(), mul(mul(x.clone(), x.clone()), x.clone()));
    let fr = swz(t(a), [0, 1, 0, 1]);
    let p = swz(t(a), [2, 3, 2, 3]);
    let h0 = add(add(lit(-1.0), bin(BinOp::Div, w1(&fr), add(w0(&fr), w1(&fr)))), lit(0.5));
    let h1 = add(add(lit(1.0), bin(BinOp::Div, w3(&fr), add(w2(&fr), w3(&fr)))), lit(0.5));
    let s = |i: u8, j: u8| Expr::Sample {
        tex,
        coord: Box::new(bin(BinOp::Div, Expr::Compose(Box::new([lane(t(h), i), lane(t(h), j), lit(0.0), lit(0.0)])), size())),
        mode: mode.clone(),
        offset: [0; 3],
    };
    let gl = |l: u8| lane(t(g), l);
    let row = |j: u8| add(mul(gl(0), s(0, j)), mul(gl(2), s(2, j)));
    vec![
        Stmt::Comment("bicubic GI filter (XenosRecomp UNLEASHED_RECOMP tfetch2DBicubic)".into()),
        assign(a, 0x3, bin(BinOp::Sub, texels, lit(0.5))),
        assign(a, 0xC, un(UnOp::Floor, swz(t(a), [0, 1, 0, 1]))),
        assign(a, 0x3, bin(BinOp::Sub, t(a), swz(t(a), [2, 3, 2, 3]))),
        assign(g, 0x3, add(w0(&fr), w1(&fr))),
        assign(g, 0xC, add(w2(&fr), w3(&fr))),
        assign(h, 0x3, add(p.clone(), h0)),
        assign(h, 0xC, add(p, h1)),
        assign(FRES, 0xF, add(mul(gl(1), row(1)), mul(gl(3), row(3)))),
    ]
}

/// The texture dimension a texture fetch (tfetch, getWeights) names.
fn fetch_dim(f: &Fetch) -> TexDim {
    match f.dimension() {
        0 => TexDim::D1,
        1 => TexDim::D2,
        2 => TexDim::D3,
        _ => TexDim::Cube,
    }
}

fn heap_suffix(dim: TexDim) -> &'static str {
    match dim {
        TexDim::D1 | TexDim::D2 => "2D",
        TexDim::D3 => "3D",
        TexDim::Cube => "Cube",
        // not produced by `fetch_dim` (Xenos has no array fetch); named for completeness
        TexDim::D1Array | TexDim::D2Array => "2DArray",
        TexDim::CubeArray => "CubeArray",
    }
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

/// The cube-space direction of face coordinates (s, t in lanes x, y; `face`) as tfetchCube and
/// getCompTexLODCube read them (Xenia's fetch translators): the face clamped to [0, 5] and
/// truncated, the direction rebuilt from sc = 2s − 3, tc = 2t − 3 (`formats::cube`).
fn face_direction(st: Expr, face: Expr) -> Expr {
    let face = bin(BinOp::Max, bin(BinOp::Min, face, lit(5.0)), lit(0.0));
    cube::cube_direction(lane(st.clone(), 0), lane(st, 1), un(UnOp::Floor, face))
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
