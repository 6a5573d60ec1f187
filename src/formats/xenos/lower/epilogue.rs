//! What runs after the body: the options epilogue (alpha test, reverse Z, ...) and keeping inputs the shader overwrites.

use super::*;

/// The vertex shader's oPts lanes as host outputs (Xenia's reading of export 63):
/// - x, point size → the Vulkan `PointSize` built-in (SPIR-V only: D3D12 has no programmable
///   point size; the guest's PA_SU_POINT_MINMAX clamp is render state the runtime applies);
/// - y, edge flag → nothing: no host API has per-vertex edge flags (a comment says so);
/// - z, kill vertex: the vertex is killed when bits 0-30 are not zero (1.0, -1.0, NaN kill;
///   ±0.0 does not; integer test, so a denormal kills even where floats flush) →
///   `SV_CullDistance` −1 / 0, which discards a primitive whose vertices are all killed: the
///   hardware default (PA_CL_CLIP_CNTL.VTX_KILL_OR = 0; the OR mode is not provided).
pub(super) fn opts_epilogue(ctx: &mut Ctx, body: &mut Vec<Stmt>) {
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
pub(super) fn keep_overwritten_inputs(preloads: &[(u32, u32)], body: &[Stmt], oc0: Option<u32>) -> Vec<Stmt> {
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
pub(super) fn input_overwritten_then_read(body: &[Stmt], reg: u32) -> bool {
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
pub(super) fn writes_temp(s: &Stmt, reg: u32) -> bool {
    let hits = |d: &Dst| d.reg.file == RegFile::Temp && !matches!(d.reg.index, Index::Fixed(i) if i != reg);
    match s {
        Stmt::Assign { dst, .. } | Stmt::LocalLoad { dst, .. } => hits(dst),
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
        | Stmt::LocalStore { .. }
        | Stmt::XenosMemExport { .. } => false,
    }
}
