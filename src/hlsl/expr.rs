//! Whole-vector expressions (`float4` values) and integer expressions.
use super::compare::{compare_dim_key, compare_macro, CompareKind};
use super::text::*;
use super::Writer;
use crate::ir::*;

impl Writer<'_> {
    pub(super) fn iexpr(&self, e: &IExpr) -> String {
        match e {
            IExpr::Const(c) if *c == i32::MIN => "(int)0x80000000".into(),
            IExpr::Const(c) => format!("{c}"),
            IExpr::Var(v) => self.m.ext.int_vars[*v as usize].name.clone(),
            IExpr::Elem(v, i) => format!("{}[{}]", self.m.ext.int_vars[*v as usize].name, self.iexpr(i)),
            IExpr::Add(a, b) => format!("({} + {})", self.iexpr(a), self.iexpr(b)),
            IExpr::Sub(a, b) => format!("({} - {})", self.iexpr(a), self.iexpr(b)),
            IExpr::And(a, b) => format!("({} & {})", self.iexpr(a), self.iexpr(b)),
            IExpr::Min(a, b) => format!("min({}, {})", self.iexpr(a), self.iexpr(b)),
            IExpr::Select(c, a, b) => format!("(({}) ? {} : {})", self.cond(c), self.iexpr(a), self.iexpr(b)),
            IExpr::TruncX86(x) => format!("{}(({}).x)", self.h("shrec_f2i_x86"), self.expr(x)),
            IExpr::Uniform { buffer, reg, lane } => {
                format!("(int){}[{reg}].{}", self.m.ext.uint_buffers[*buffer as usize].var, LANES[*lane as usize & 3])
            }
        }
    }

    pub(super) fn expr(&self, e: &Expr) -> String {
        match e {
            Expr::Read(src) => self.read_text(src, &swizzle_text(&src.swizzle)),
            Expr::Literal(v) => literal_text(v),
            Expr::Swizzle(..) | Expr::Unary(UnOp::Neg | UnOp::Abs, _) if literal_of(e).is_some() => literal_text(&literal_of(e).unwrap_or_default()),
            // a swizzle of a register or of per-lane operators picks their lanes (`R1.yx`,
            // `R1.yx + c[0].zw`), of anything else the vector's (`(dot4).xxxx`)
            Expr::Swizzle(a, s) => self.sel(a, s),
            Expr::Compose(parts) => self.composed(&parts.iter().collect::<Vec<_>>()),
            Expr::Unary(op, a) => {
                let a = self.expr(a);
                match (per_lane_unary(*op), prelude_unary(*op)) {
                    (Some(form), _) => form.text(&a, "float4"),
                    (None, Some(helper)) => format!("{}({a})", self.h(helper)),
                    (None, None) => format!("float4(normalize(({a}).xyz), 0.0)"),
                }
            }
            Expr::Binary(op, e_a, e_b) => {
                let (a, b) = (self.expr(e_a), self.expr(e_b));
                let (sa, sb) = (Self::broadcast_operand(e_a, e_b, a.clone()), Self::broadcast_operand(e_b, e_a, b.clone()));
                match op {
                    // 0 × x = +0 needs one test when the other factor is a literal whose
                    // lanes are all finite and non-zero (its product with any x is 0 only for
                    // x = ±0, an inf / NaN x stays inf / NaN): the `_k` form
                    BinOp::MulLegacy => {
                        let k = |e: &Expr| literal_of(e).is_some_and(|v| v.iter().all(|x| x.is_finite() && *x != 0.0));
                        self.mul_legacy((e_a, &a), (e_b, &b), k(e_a), k(e_b))
                    }
                    BinOp::Cross3 => format!("float4(cross(({a}).xyz, ({b}).xyz), 0.0)"),
                    BinOp::MulPica => format!("{}({a}, {b})", self.h("shrec_pica_mul")),
                    BinOp::MaxPica => format!("{}({a}, {b})", self.h("shrec_pica_max")),
                    BinOp::MinPica => format!("{}({a}, {b})", self.h("shrec_pica_min")),
                    // `+ - * /` take a broadcast scalar operand (`1.0 - R1`)
                    _ => {
                        let (x, y) = if infix_operator(*op).is_some() { (&sa, &sb) } else { (&a, &b) };
                        per_lane_binary_text(*op, x, y, "float4").unwrap_or_else(|| unreachable!("{op:?} has an arm above"))
                    }
                }
            }
            Expr::Dot(..) => format!("((float4){})", self.dot(e)),
            // Both arms the same: the select is that value, whatever the compare gives (NaN too).
            Expr::Select { if_true, if_false, .. } if if_true == if_false => self.expr(if_true),
            Expr::Select { cmp: CmpOp::Ne, a, b, if_true, if_false } => {
                format!("select({} == {}, {}, {})", self.exact_operand(a), self.exact_operand(b), self.expr(if_false), self.expr(if_true))
            }
            Expr::Select { cmp, a, b, if_true, if_false } => {
                let op = cmp_text(*cmp);
                format!("select({} {op} {}, {}, {})", self.exact_operand(a), self.exact_operand(b), self.expr(if_true), self.expr(if_false))
            }
            Expr::DotPica(n, a, b) => {
                let f = self.h(["shrec_pica_dot2", "shrec_pica_dot3", "shrec_pica_dot4"][(*n as usize).clamp(2, 4) - 2]);
                format!("{f}({}, {})", self.expr(a), self.expr(b))
            }
            Expr::SelectIf(c, a, b) => format!("(({}) ? {} : {})", self.cond(c), self.expr(a), self.expr(b)),
            Expr::Mad(a, b, c) => format!("({} * {} + {})", self.expr(a), self.expr(b), self.expr(c)),
            Expr::Sample { tex, coord, mode, offset } => {
                let t = &self.m.textures[*tex as usize];
                let c = self.lanes(coord, t.dim.coord_lanes());
                let o = offset_operand(t.dim, offset);
                match mode {
                    SampleMode::Bias(b) if *b == 0.0 => format!("{}.Sample({}, {c}{o})", self.tex_var(*tex), self.smp_var(*tex)),
                    SampleMode::Bias(b) => format!("{}.SampleBias({}, {c}, {}{o})", self.tex_var(*tex), self.smp_var(*tex), float_literal(*b)),
                    // `float(...)`: DXC (compushady-lrtu 0.18) emits an invalid vector Lod operand
                    // ("Expected Image Operand Lod to be float scalar") for a swizzle of a
                    // swizzle such as `((va0).wwww).x`; the cast makes it a plain scalar.
                    SampleMode::Lod(l) => format!("{}.SampleLevel({}, {c}, float({}){o})", self.tex_var(*tex), self.smp_var(*tex), self.lane(l, 0)),
                    SampleMode::BiasExpr(b) => format!("{}.SampleBias({}, {c}, {}{o})", self.tex_var(*tex), self.smp_var(*tex), self.lane(b, 0)),
                    SampleMode::Grad(dx, dy) => {
                        // gradients have the texel lanes (no slice)
                        let n = t.dim.texel_lanes();
                        format!("{}.SampleGrad({}, {c}, {}, {}{o})", self.tex_var(*tex), self.smp_var(*tex), self.lanes(dx, n), self.lanes(dy, n))
                    }
                }
            }
            Expr::SampleCmp { tex, coord, reference, level_zero, offset } => {
                let t = &self.m.textures[*tex as usize];
                let c = format!("({}).{}", self.expr(coord), coord_lanes(t.dim));
                let o = offset_operand(t.dim, offset);
                let f = if *level_zero { "SampleCmpLevelZero" } else { "SampleCmp" };
                // `float(...)`: a scalar reference operand, as for SampleLevel's Lod
                format!("((float4){}.{f}({}, {c}, float(({}).x){o}))", self.tex_var(*tex), self.smp_var(*tex), self.expr(reference))
            }
            Expr::SampleCmpMode { tex, coord, reference, mode, offset } => {
                // through a macro the module defines per target (see `compare_placeholders`):
                // the SampleCmpLevel / Bias / Grad method for DXIL, DXC's SPIR-V placeholder
                // (crate::dxc::dref) for SPIR-V
                let t = &self.m.textures[*tex as usize];
                let c = format!("({}).{}", self.expr(coord), coord_lanes(t.dim));
                self.shader_model.set(self.shader_model.get().max(ShaderModel::for_compare(mode)));
                let (kind, level) = match mode {
                    SampleMode::Bias(b) => (CompareKind::Bias, float_literal(*b)),
                    SampleMode::BiasExpr(b) => (CompareKind::Bias, format!("float({})", self.lane(b, 0))),
                    SampleMode::Lod(l) => (CompareKind::Level, format!("float({})", self.lane(l, 0))),
                    SampleMode::Grad(dx, dy) => {
                        let n = t.dim.texel_lanes();
                        (CompareKind::Grad, format!("{}, {}", self.lanes(dx, n), self.lanes(dy, n)))
                    }
                };
                let with_offset = *offset != [0, 0, 0];
                let o = offset_operand(t.dim, offset);
                let name = compare_macro(kind, t.dim, with_offset);
                self.compare_placeholders.borrow_mut().insert((kind, compare_dim_key(t.dim), with_offset));
                // `float(...)`: a scalar reference operand, as for SampleCmp
                format!("((float4){name}({}, {}, {c}, float(({}).x), {level}{o}))", self.tex_var(*tex), self.smp_var(*tex), self.expr(reference))
            }
            Expr::Gather { tex, coord, offset } => {
                let t = &self.m.textures[*tex as usize];
                let c = format!("({}).{}", self.expr(coord), coord_lanes(t.dim));
                let o = offset_operand(t.dim, offset);
                format!("{}.GatherRed({}, {c}{o})", self.tex_var(*tex), self.smp_var(*tex))
            }
            Expr::QueryLod { tex, coord, clamped } => {
                // the LOD of an array texture depends on its texel lanes only
                let t = &self.m.textures[*tex as usize];
                let lanes = if t.dim.is_array() { &"xyz"[..t.dim.texel_lanes()] } else { coord_lanes(t.dim) };
                let f = if *clamped { "CalculateLevelOfDetail" } else { "CalculateLevelOfDetailUnclamped" };
                format!("((float4){}.{f}({}, ({}).{lanes}))", self.tex_var(*tex), self.smp_var(*tex), self.expr(coord))
            }
            Expr::TexSize { tex } => format!("{}({})", self.h("shrec_tex_size"), self.tex_var(*tex)),
            Expr::Load { tex, coord, lod } => {
                // `Load(intN(coordinates, level))`: the integer lanes are the operands' bit
                // patterns (ir::Expr::Load); validate keeps cubes out
                let t = &self.m.textures[*tex as usize];
                let n = t.dim.coord_lanes();
                format!(
                    "{}.Load(int{}(asint(({}).{}), asint(({}).x)))",
                    self.tex_var(*tex),
                    n + 1,
                    self.expr(coord),
                    coord_lanes(t.dim),
                    self.expr(lod)
                )
            }
            Expr::TexInfo { tex, lod } => {
                format!("{}({}, asuint(({}).x))", self.h("shrec_tex_info"), self.tex_var(*tex), self.expr(lod))
            }
            Expr::Bits(v) if v.iter().all(|&b| b == v[0]) => format!("((float4)asfloat(0x{:08X}u))", v[0]),
            Expr::Bits(v) => format!("asfloat(uint4(0x{:08X}u, 0x{:08X}u, 0x{:08X}u, 0x{:08X}u))", v[0], v[1], v[2], v[3]),
            Expr::IntUnary(op, a) => {
                let a = format!("asuint({})", self.expr(a));
                match op {
                    IntUnOp::Not => format!("asfloat(~{a})"),
                    IntUnOp::FloatToInt => format!("asfloat({}(asfloat({a})))", self.h("shrec_f2i")),
                    IntUnOp::FloatToUint => format!("asfloat({}(asfloat({a})))", self.h("shrec_f2u")),
                    IntUnOp::IntToFloat => format!("((float4)(int4){a})"),
                    IntUnOp::UintToFloat => format!("((float4){a})"),
                }
            }
            Expr::IntBinary(op, a, b) => {
                let (a, b) = (format!("asuint({})", self.expr(a)), format!("asuint({})", self.expr(b)));
                let (ia, ib) = (format!("asint({a})"), format!("asint({b})"));
                let (fa, fb) = (format!("asfloat({a})"), format!("asfloat({b})"));
                let mask = |c: String| format!("asfloat(select({c}, (uint4)0xFFFFFFFFu, (uint4)0u))");
                match (int_binary_text(*op, &a, &b), int_compare_text(*op, &a, &b), float_compare_text(*op, &fa, &fb)) {
                    (Some(t), ..) => t,
                    (None, Some(c), _) | (None, None, Some(c)) => mask(c),
                    (None, None, None) => match op {
                        IntBinOp::MulHiI => format!("asfloat({}({ia}, {ib}))", self.h("shrec_imulhi")),
                        _ => format!("asfloat({}({a}, {b}))", self.h("shrec_umulhi")),
                    },
                }
            }
            Expr::IntTernary(op, a, b, c) => {
                let (a, b, c) = (self.expr(a), self.expr(b), self.expr(c));
                let f = match op {
                    IntTerOp::BfeU => "shrec_bfe_u",
                    IntTerOp::BfeI => "shrec_bfe_i",
                    IntTerOp::Bfi => "shrec_bfi",
                    IntTerOp::CndEI => "shrec_cnde_i",
                    IntTerOp::CndGtI => "shrec_cndgt_i",
                    IntTerOp::CndGeI => "shrec_cndge_i",
                };
                let f = self.h(f);
                format!("asfloat({f}(asuint({a}), asuint({b}), asuint({c})))")
            }
        }
    }
}
