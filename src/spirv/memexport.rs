//! Xenos memory export (`Stmt::XenosMemExport`), written inline with the rules of
//! `shrec_xenos_memexport` / `shrec_xenos_to_fixed` (shader_common.h, whose comments give the
//! sources; `formats::xenos::memexport` has the format table). The HLSL helper returns early
//! on each refusal; here every refusal folds into one condition that guards the stores, and
//! the values are computed for every lane and format with selects — every operation on them is
//! defined for any input (shift counts are masked to five bits, as HLSL masks them), and memory
//! is touched only under the guard.
//!
//! The buffer is `g_MemExport` as DXC declares an HLSL `RWByteAddressBuffer` at `u0, space5`:
//! `struct { uint[] }` (`ArrayStride 4`, `BufferBlock`, `Uniform` storage class), set 5, binding
//! 0; sub-dword elements are merged with `OpAtomicAnd` / `OpAtomicOr` (device scope), as the
//! helper's `InterlockedAnd` / `InterlockedOr`.

use super::{ids, unsupported, Result, Writer};
use crate::ir::*;
use rspirv::dr::Operand;
use rspirv::spirv::{Decoration, GLOp, Op, SelectionControl, StorageClass, Word};

impl Writer<'_> {
    /// `g_MemExport`, declared on first use.
    fn memexport_buffer(&mut self) -> Word {
        if let Some(v) = self.memexport_var {
            return v;
        }
        let array = self.b.id();
        let strukt = self.b.id();
        for inst in [
            rspirv::dr::Instruction::new(Op::TypeRuntimeArray, None, Some(array), vec![Operand::IdRef(self.t.u32)]),
            rspirv::dr::Instruction::new(Op::TypeStruct, None, Some(strukt), vec![Operand::IdRef(array)]),
        ] {
            self.b.insert_types_global_values(rspirv::dr::InsertPoint::End, inst);
        }
        self.b.decorate(array, Decoration::ArrayStride, [Operand::LiteralBit32(4)]);
        self.b.member_decorate(strukt, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
        self.b.decorate(strukt, Decoration::BufferBlock, []);
        let var = self.global_variable(strukt, StorageClass::Uniform, None);
        self.b.decorate(var, Decoration::DescriptorSet, [Operand::LiteralBit32(5)]);
        self.b.decorate(var, Decoration::Binding, [Operand::LiteralBit32(0)]);
        self.memexport_var = Some(var);
        var
    }

    fn u(&mut self, op: Op, a: Word, b: Word) -> Result<Word> {
        self.inst(op, self.t.u32, ids(&[a, b]))
    }

    fn u4(&mut self, op: Op, a: Word, b: Word) -> Result<Word> {
        self.inst(op, self.t.v4u, ids(&[a, b]))
    }

    fn lane_u(&mut self, v: Word, l: u32) -> Result<Word> {
        self.inst(Op::CompositeExtract, self.t.u32, vec![Operand::IdRef(v), Operand::LiteralBit32(l)])
    }

    fn shuffle_u4(&mut self, v: Word, lanes: [u32; 4]) -> Result<Word> {
        let mut operands = ids(&[v, v]);
        operands.extend(lanes.map(Operand::LiteralBit32));
        self.inst(Op::VectorShuffle, self.t.v4u, operands)
    }

    fn sel(&mut self, ty: Word, c: Word, a: Word, b: Word) -> Result<Word> {
        self.inst(Op::Select, ty, ids(&[c, a, b]))
    }

    /// `x & 31` for a `uint4` shift count.
    fn mask31(&mut self, x: Word) -> Result<Word> {
        let k = self.v4u_splat(31);
        self.u4(Op::BitwiseAnd, x, k)
    }

    /// `Stmt::XenosMemExport`.
    pub(super) fn xenos_memexport(&mut self, address: &Expr, value: &Expr, element: u32) -> Result<()> {
        let m = self.m;
        let formats = match &m.ext.resource_abi {
            ResourceAbi::XenosRecomp(XenosRecompAbi { memexport_formats: Some(f), .. }) => f,
            _ => return unsupported("a memory export without the format table"),
        };
        let (u32t, v4u, v4f, boolt) = (self.t.u32, self.t.v4u, self.t.v4f, self.t.bool);
        let ea = self.expr(address)?;
        let ea = self.inst(Op::Bitcast, v4u, ids(&[ea]))?;
        let data = self.expr(value)?;
        let c = |w: &mut Self, v: u32| w.u32_const(v);

        // eA checks: x >> 30 == 1, y / z / w >> 23 == 0x96
        let (ex, ey, ez, ew) = (self.lane_u(ea, 0)?, self.lane_u(ea, 1)?, self.lane_u(ea, 2)?, self.lane_u(ea, 3)?);
        let k30 = c(self, 30);
        let top = self.u(Op::ShiftRightLogical, ex, k30)?;
        let one = c(self, 1);
        let mut ok = self.inst(Op::IEqual, boolt, ids(&[top, one]))?;
        let (k23, k96) = (c(self, 23), c(self, 0x96));
        for lane in [ey, ez, ew] {
            let e = self.u(Op::ShiftRightLogical, lane, k23)?;
            let good = self.inst(Op::IEqual, boolt, ids(&[e, k96]))?;
            ok = self.inst(Op::LogicalAnd, boolt, ids(&[ok, good]))?;
        }
        // index = (y & 0x7FFFFF) + element, below (w & 0x7FFFFF)
        let low23 = c(self, 0x7F_FFFF);
        let base = self.u(Op::BitwiseAnd, ey, low23)?;
        let el = c(self, element);
        let index = self.u(Op::IAdd, base, el)?;
        let count = self.u(Op::BitwiseAnd, ew, low23)?;
        let inside = self.inst(Op::ULessThan, boolt, ids(&[index, count]))?;
        ok = self.inst(Op::LogicalAnd, boolt, ids(&[ok, inside]))?;
        let info = self.u(Op::BitwiseAnd, ez, low23)?;

        // the format table: widths, size_log2, kind of format (info >> 8) & 63; unknown → refused
        let (k8, k63) = (c(self, 8), c(self, 63));
        let id = self.u(Op::ShiftRightLogical, info, k8)?;
        let id = self.u(Op::BitwiseAnd, id, k63)?;
        let mut widths = self.v4u_splat(0);
        let (mut size_log2, mut kind) = (c(self, 0), c(self, 0));
        let mut known = self.b.constant_false(boolt);
        for f in formats {
            let fid = c(self, f.id);
            let is = self.inst(Op::IEqual, boolt, ids(&[id, fid]))?;
            let fw: Vec<Word> = f.widths.iter().map(|&w| self.u32_const(w)).collect();
            let fw = self.composite_const(v4u, fw);
            let is4 = self.splat(self.t.v4b, is, 4)?;
            widths = self.sel(v4u, is4, fw, widths)?;
            let (fs, fk) = (c(self, f.size_log2), c(self, f.kind));
            size_log2 = self.sel(u32t, is, fs, size_log2)?;
            kind = self.sel(u32t, is, fk, kind)?;
            known = self.inst(Op::LogicalOr, boolt, ids(&[known, is]))?;
        }
        ok = self.inst(Op::LogicalAnd, boolt, ids(&[ok, known]))?;

        // endian mode and its swap unit: 0 → 0, 1 → 2, 2-3 → 4, 4 → 8, 5 → 16, else refused
        let k7 = c(self, 7);
        let endian = self.u(Op::BitwiseAnd, info, k7)?;
        let bytes = self.u(Op::ShiftLeftLogical, one, size_log2)?;
        let units: [(u32, u32); 6] = [(0, 0), (1, 2), (2, 4), (3, 4), (4, 8), (5, 16)];
        let mut unit = c(self, u32::MAX);
        for (e, n) in units {
            let ec = c(self, e);
            let is = self.inst(Op::IEqual, boolt, ids(&[endian, ec]))?;
            let nc = c(self, n);
            unit = self.sel(u32t, is, nc, unit)?;
        }
        let fits = self.inst(Op::ULessThanEqual, boolt, ids(&[unit, bytes]))?;
        ok = self.inst(Op::LogicalAnd, boolt, ids(&[ok, fits]))?;

        // the data: raw bits, x and z exchanged when bit 19 is set
        let raw = self.inst(Op::Bitcast, v4u, ids(&[data]))?;
        let k19 = c(self, 19);
        let swap = self.u(Op::ShiftRightLogical, info, k19)?;
        let swap = self.u(Op::BitwiseAnd, swap, one)?;
        let zero = c(self, 0);
        let swap = self.inst(Op::INotEqual, boolt, ids(&[swap, zero]))?;
        let swap4 = self.splat(self.t.v4b, swap, 4)?;
        let zyxw = self.shuffle_u4(raw, [2, 1, 0, 3])?;
        let v = self.sel(v4u, swap4, zyxw, raw)?;
        let vf = self.inst(Op::Bitcast, v4f, ids(&[v]))?;

        // kind 2: f32 → f16 of each lane (the host's rounding), x | y << 16, z | w << 16
        let zero_u = c(self, 0);
        let half = {
            let mut words = Vec::new();
            for pair in [[0u32, 1], [2, 3]] {
                let mut operands = ids(&[vf, vf]);
                operands.extend(pair.map(Operand::LiteralBit32));
                let two = self.inst(Op::VectorShuffle, self.t.v2f, operands)?;
                words.push(self.glsl(GLOp::PackHalf2x16, u32t, &[two])?);
            }
            self.inst(Op::CompositeConstruct, v4u, ids(&[words[0], words[1], zero_u, zero_u]))?
        };
        // kind 0: fixed point per component, then packed
        let fixed = self.memexport_fixed(vf, widths, info, size_log2)?;
        let (k0, k2) = (c(self, 0), c(self, 2));
        let is_fixed = self.inst(Op::IEqual, boolt, ids(&[kind, k0]))?;
        let is_half = self.inst(Op::IEqual, boolt, ids(&[kind, k2]))?;
        let is_fixed4 = self.splat(self.t.v4b, is_fixed, 4)?;
        let is_half4 = self.splat(self.t.v4b, is_half, 4)?;
        let v = self.sel(v4u, is_fixed4, fixed, v)?;
        let v = self.sel(v4u, is_half4, half, v)?;

        // endian: 4 swaps words in pairs, 5 reverses them; then bytes within each word
        let is = |w: &mut Self, e: u32| -> Result<Word> {
            let ec = w.u32_const(e);
            let b = w.inst(Op::IEqual, boolt, ids(&[endian, ec]))?;
            w.splat(w.t.v4b, b, 4)
        };
        let yxwz = self.shuffle_u4(v, [1, 0, 3, 2])?;
        let wzyx = self.shuffle_u4(v, [3, 2, 1, 0])?;
        let e4 = is(self, 4)?;
        let e5 = is(self, 5)?;
        let v = self.sel(v4u, e5, wzyx, v)?;
        let v = self.sel(v4u, e4, yxwz, v)?;
        let k = |w: &mut Self, x: u32| w.v4u_splat(x);
        let (s8, s16, s24) = (k(self, 8), k(self, 16), k(self, 24));
        let (m00ff, mff0000, mff00) = (k(self, 0x00FF_00FF), k(self, 0x00FF_0000), k(self, 0x0000_FF00));
        // endian 1: bytes swapped in each half
        let a = self.u4(Op::BitwiseAnd, v, m00ff)?;
        let a = self.u4(Op::ShiftLeftLogical, a, s8)?;
        let b = self.u4(Op::ShiftRightLogical, v, s8)?;
        let b = self.u4(Op::BitwiseAnd, b, m00ff)?;
        let swap16 = self.u4(Op::BitwiseOr, a, b)?;
        // endian 3: halves swapped
        let a = self.u4(Op::ShiftLeftLogical, v, s16)?;
        let b = self.u4(Op::ShiftRightLogical, v, s16)?;
        let halves = self.u4(Op::BitwiseOr, a, b)?;
        // otherwise (2, 4, 5): the four bytes reversed
        let a = self.u4(Op::ShiftLeftLogical, v, s24)?;
        let b = self.u4(Op::ShiftLeftLogical, v, s8)?;
        let b = self.u4(Op::BitwiseAnd, b, mff0000)?;
        let cc = self.u4(Op::ShiftRightLogical, v, s8)?;
        let cc = self.u4(Op::BitwiseAnd, cc, mff00)?;
        let d = self.u4(Op::ShiftRightLogical, v, s24)?;
        let r = self.u4(Op::BitwiseOr, a, b)?;
        let r = self.u4(Op::BitwiseOr, r, cc)?;
        let reversed = self.u4(Op::BitwiseOr, r, d)?;
        let e0 = is(self, 0)?;
        let e1 = is(self, 1)?;
        let e3 = is(self, 3)?;
        let v_rev = self.sel(v4u, e0, v, reversed)?;
        let v_rev = self.sel(v4u, e3, halves, v_rev)?;
        let v = self.sel(v4u, e1, swap16, v_rev)?;

        // address = (eA.x << 2) + (index << size_log2); the buffer's size in bytes
        let k2s = c(self, 2);
        let base = self.u(Op::ShiftLeftLogical, ex, k2s)?;
        let k31 = c(self, 31);
        let sl = self.u(Op::BitwiseAnd, size_log2, k31)?;
        let offset = self.u(Op::ShiftLeftLogical, index, sl)?;
        let address = self.u(Op::IAdd, base, offset)?;
        let buffer = self.memexport_buffer();
        let words = self.inst(Op::ArrayLength, u32t, vec![Operand::IdRef(buffer), Operand::LiteralBit32(0)])?;
        let four = c(self, 4);
        let size = self.u(Op::IMul, words, four)?;
        let x = self.lane_u(v, 0)?;

        // sub-dword elements: their bytes only, with atomics
        let small = self.inst(Op::ULessThan, boolt, ids(&[bytes, four]))?;
        let not3 = c(self, !3);
        let dword = self.u(Op::BitwiseAnd, address, not3)?;
        let in_buf = self.inst(Op::ULessThan, boolt, ids(&[dword, size]))?;
        let room = self.u(Op::ISub, size, dword)?;
        let room_ok = self.inst(Op::UGreaterThanEqual, boolt, ids(&[room, four]))?;
        let small_ok = [ok, small, in_buf, room_ok];
        let mut guard = small_ok[0];
        for g in &small_ok[1..] {
            guard = self.inst(Op::LogicalAnd, boolt, ids(&[guard, *g]))?;
        }
        self.guarded(guard, |w| {
            let k3 = w.u32_const(3);
            let k8 = w.u32_const(8);
            let low = w.u(Op::BitwiseAnd, address, k3)?;
            let shift = w.u(Op::IMul, low, k8)?;
            let bits = w.u(Op::IMul, bytes, k8)?;
            let bits = w.u(Op::BitwiseAnd, bits, k31)?;
            let one = w.u32_const(1);
            let field = w.u(Op::ShiftLeftLogical, one, bits)?;
            let field = w.u(Op::ISub, field, one)?;
            let mask = w.u(Op::ShiftLeftLogical, field, shift)?;
            let not_mask = w.inst(Op::Not, w.t.u32, ids(&[mask]))?;
            let placed = w.u(Op::ShiftLeftLogical, x, shift)?;
            let placed = w.u(Op::BitwiseAnd, placed, mask)?;
            let two = w.u32_const(2);
            let i = w.u(Op::ShiftRightLogical, dword, two)?;
            let ptr = w.memexport_word(buffer, i)?;
            let (device, relaxed) = (w.u32_const(1), w.u32_const(0));
            w.inst(Op::AtomicAnd, w.t.u32, ids(&[ptr, device, relaxed, not_mask]))?;
            w.inst(Op::AtomicOr, w.t.u32, ids(&[ptr, device, relaxed, placed]))?;
            Ok(())
        })?;

        // whole words: 1, 2 or 4 of them
        let big = self.inst(Op::UGreaterThanEqual, boolt, ids(&[bytes, four]))?;
        let in_buf = self.inst(Op::ULessThan, boolt, ids(&[address, size]))?;
        let room = self.u(Op::ISub, size, address)?;
        let room_ok = self.inst(Op::UGreaterThanEqual, boolt, ids(&[room, bytes]))?;
        let mut guard = ok;
        for g in [big, in_buf, room_ok] {
            guard = self.inst(Op::LogicalAnd, boolt, ids(&[guard, g]))?;
        }
        self.guarded(guard, |w| {
            let two = w.u32_const(2);
            let i = w.u(Op::ShiftRightLogical, address, two)?;
            let ptr = w.memexport_word(buffer, i)?;
            w.b.store(ptr, x, None, [])?;
            let eight = w.u32_const(8);
            let two_words = w.inst(Op::UGreaterThanEqual, w.t.bool, ids(&[bytes, eight]))?;
            w.guarded(two_words, |w| {
                let one = w.u32_const(1);
                let i1 = w.u(Op::IAdd, i, one)?;
                let y = w.lane_u(v, 1)?;
                let ptr = w.memexport_word(buffer, i1)?;
                w.b.store(ptr, y, None, [])?;
                let sixteen = w.u32_const(16);
                let four_words = w.inst(Op::IEqual, w.t.bool, ids(&[bytes, sixteen]))?;
                w.guarded(four_words, |w| {
                    for k in [2u32, 3] {
                        let kc = w.u32_const(k);
                        let ik = w.u(Op::IAdd, i, kc)?;
                        let lane = w.lane_u(v, k)?;
                        let ptr = w.memexport_word(buffer, ik)?;
                        w.b.store(ptr, lane, None, [])?;
                    }
                    Ok(())
                })
            })
        })
    }

    fn memexport_word(&mut self, buffer: Word, i: Word) -> Result<Word> {
        let ptr_ty = self.b.type_pointer(None, StorageClass::Uniform, self.t.u32);
        let zero = self.u32_const(0);
        self.inst(Op::AccessChain, ptr_ty, ids(&[buffer, zero, i]))
    }

    /// `if (cond) { body }` as a selection construct.
    fn guarded(&mut self, cond: Word, body: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        let (merge, then) = (self.b.id(), self.b.id());
        self.b.selection_merge(merge, SelectionControl::NONE)?;
        self.b.branch_conditional(cond, then, merge, [])?;
        self.b.begin_block(Some(then))?;
        body(self)?;
        self.b.branch(merge)?;
        self.b.begin_block(Some(merge))?;
        Ok(())
    }

    /// Fixed-point conversion of the four lanes (`shrec_xenos_to_fixed` per lane, 0 where the
    /// format has no component), packed: two 16-bit halves per word for 8-byte formats, else
    /// one word with the components at their bit offsets.
    fn memexport_fixed(&mut self, vf: Word, widths: Word, info: Word, size_log2: Word) -> Result<Word> {
        let (v4u, v4f, v4i, v4b, boolt) = (self.t.v4u, self.t.v4f, self.t.v4i, self.t.v4b, self.t.bool);
        let flag = |w: &mut Self, bit: u32| -> Result<Word> {
            let b = w.u32_const(bit);
            let s = w.u(Op::ShiftRightLogical, info, b)?;
            let one = w.u32_const(1);
            let s = w.u(Op::BitwiseAnd, s, one)?;
            let zero = w.u32_const(0);
            let f = w.inst(Op::INotEqual, boolt, ids(&[s, zero]))?;
            w.splat(v4b, f, 4)
        };
        let signed = flag(self, 16)?;
        let integer = flag(self, 17)?;
        // NaN → 0
        let bits = self.inst(Op::Bitcast, v4u, ids(&[vf]))?;
        let magnitude = self.v4u_splat(0x7FFF_FFFF);
        let mag = self.u4(Op::BitwiseAnd, bits, magnitude)?;
        let inf = self.v4u_splat(0x7F80_0000);
        let nan = self.inst(Op::UGreaterThan, v4b, ids(&[mag, inf]))?;
        let zero_f = self.v4f_splat(0.0);
        let f = self.sel(v4f, nan, zero_f, vf)?;
        let one_u = self.v4u_splat(1);
        let w = self.mask31(widths)?;
        let mask = self.u4(Op::ShiftLeftLogical, one_u, w)?;
        let mask = self.u4(Op::ISub, mask, one_u)?;
        let clamp = |s: &mut Self, x: Word, lo: Word, hi: Word| -> Result<Word> {
            let m = s.glsl(GLOp::FMax, v4f, &[x, lo])?;
            s.glsl(GLOp::FMin, v4f, &[m, hi])
        };
        let (one_f, neg_one_f, half, neg_half) = (self.v4f_splat(1.0), self.v4f_splat(-1.0), self.v4f_splat(0.5), self.v4f_splat(-0.5));

        // signed: m = 2^(w-1) - 1; integer: clamp to [-1 - m, m]; else clamp to [-1, 1], times
        // m when w > 2; then ± 0.5 by the sign bit, truncated, masked
        let wm1 = self.u4(Op::ISub, widths, one_u)?;
        let wm1 = self.mask31(wm1)?;
        let ms = self.u4(Op::ShiftLeftLogical, one_u, wm1)?;
        let ms = self.u4(Op::ISub, ms, one_u)?;
        let ms = self.inst(Op::ConvertUToF, v4f, ids(&[ms]))?;
        let lo = self.arith(Op::FSub, v4f, ids(&[neg_one_f, ms]))?;
        let s_int = clamp(self, f, lo, ms)?;
        let s_norm = clamp(self, f, neg_one_f, one_f)?;
        let scaled = self.arith(Op::FMul, v4f, ids(&[s_norm, ms]))?;
        let two = self.v4u_splat(2);
        let wide = self.inst(Op::UGreaterThan, v4b, ids(&[widths, two]))?;
        let s_norm = self.sel(v4f, wide, scaled, s_norm)?;
        let s = self.sel(v4f, integer, s_int, s_norm)?;
        let s_bits = self.inst(Op::Bitcast, v4u, ids(&[s]))?;
        let s31 = self.v4u_splat(31);
        let sign = self.u4(Op::ShiftRightLogical, s_bits, s31)?;
        let zero_u = self.v4u_splat(0);
        let negative = self.inst(Op::INotEqual, v4b, ids(&[sign, zero_u]))?;
        let round = self.sel(v4f, negative, neg_half, half)?;
        let s = self.arith(Op::FAdd, v4f, ids(&[s, round]))?;
        let si = self.inst(Op::ConvertFToS, v4i, ids(&[s]))?;
        let si = self.inst(Op::Bitcast, v4u, ids(&[si]))?;
        let r_signed = self.u4(Op::BitwiseAnd, si, mask)?;

        // unsigned: m = 2^w - 1; integer: clamp to [0, m]; else clamp to [0, 1], times m when
        // w > 1; then + 0.5, truncated, masked
        let mu = self.inst(Op::ConvertUToF, v4f, ids(&[mask]))?;
        let u_int = clamp(self, f, zero_f, mu)?;
        let u_norm = clamp(self, f, zero_f, one_f)?;
        let scaled = self.arith(Op::FMul, v4f, ids(&[u_norm, mu]))?;
        let wide = self.inst(Op::UGreaterThan, v4b, ids(&[widths, one_u]))?;
        let u_norm = self.sel(v4f, wide, scaled, u_norm)?;
        let uf = self.sel(v4f, integer, u_int, u_norm)?;
        let uf = self.arith(Op::FAdd, v4f, ids(&[uf, half]))?;
        let ui = self.inst(Op::ConvertFToU, v4u, ids(&[uf]))?;
        let r_unsigned = self.u4(Op::BitwiseAnd, ui, mask)?;

        let r = self.sel(v4u, signed, r_signed, r_unsigned)?;
        let present = self.inst(Op::INotEqual, v4b, ids(&[widths, zero_u]))?;
        let comp = self.sel(v4u, present, r, zero_u)?;

        // packing
        let (cx, cy, cz, cw) = (self.lane_u(comp, 0)?, self.lane_u(comp, 1)?, self.lane_u(comp, 2)?, self.lane_u(comp, 3)?);
        let zero = self.u32_const(0);
        let k16 = self.u32_const(16);
        let y16 = self.u(Op::ShiftLeftLogical, cy, k16)?;
        let w16 = self.u(Op::ShiftLeftLogical, cw, k16)?;
        let lo_word = self.u(Op::BitwiseOr, cx, y16)?;
        let hi_word = self.u(Op::BitwiseOr, cz, w16)?;
        let pairs = self.inst(Op::CompositeConstruct, v4u, ids(&[lo_word, hi_word, zero, zero]))?;
        let (wx, wy, wz) = (self.lane_u(widths, 0)?, self.lane_u(widths, 1)?, self.lane_u(widths, 2)?);
        let k31 = self.u32_const(31);
        let oy = self.u(Op::BitwiseAnd, wx, k31)?;
        let sz = self.u(Op::IAdd, wx, wy)?;
        let oz = self.u(Op::BitwiseAnd, sz, k31)?;
        let sw = self.u(Op::IAdd, sz, wz)?;
        let ow = self.u(Op::BitwiseAnd, sw, k31)?;
        let py = self.u(Op::ShiftLeftLogical, cy, oy)?;
        let pz = self.u(Op::ShiftLeftLogical, cz, oz)?;
        let pw = self.u(Op::ShiftLeftLogical, cw, ow)?;
        let word = self.u(Op::BitwiseOr, cx, py)?;
        let word = self.u(Op::BitwiseOr, word, pz)?;
        let word = self.u(Op::BitwiseOr, word, pw)?;
        let single = self.inst(Op::CompositeConstruct, v4u, ids(&[word, zero, zero, zero]))?;
        let three = self.u32_const(3);
        let is8 = self.inst(Op::IEqual, boolt, ids(&[size_log2, three]))?;
        let is8 = self.splat(v4b, is8, 4)?;
        self.sel(v4u, is8, pairs, single)
    }
}
