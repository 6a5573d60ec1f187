//! Values read lane by lane: one lane of an expression as a scalar (`R1.y * c[3].x`), some
//! lanes as a `floatN` (`R1.zy + c[2].xw`), register reads gathered into one swizzle.
use super::text::*;
use super::Writer;
use crate::ir::*;

impl Writer<'_> {
    /// Lane x of `e` as a scalar, `text` writing a computed `e` (a compared operand goes
    /// through [`Self::exact_operand`]).
    pub(super) fn lane_x_of(&self, e: &Expr, text: fn(&Self, &Expr) -> String) -> String {
        match literal_of(e) {
            Some(v) => float_literal(v[0]),
            None if is_plain_read(e) => self.lane(e, 0),
            None => format!("({}).x", text(self, e)),
        }
    }

    /// Lane `l` of `e` as a scalar expression: a register lane is `R1.y`, a per-lane operator
    /// is written on the scalar lanes of its operands (`R1.y * c[3].x`); anything else is the
    /// vector expression's lane.
    pub(super) fn lane(&self, e: &Expr, l: u8) -> String {
        let l = l & 3;
        let lane = |a: &Expr| self.lane(a, l);
        match e {
            Expr::Read(src) => self.read_text(src, &LANES[src.swizzle[l as usize] as usize & 3].to_string()),
            Expr::Literal(v) => float_literal(v[l as usize]),
            Expr::Bits(v) => format!("asfloat(0x{:08X}u)", v[l as usize]),
            Expr::Swizzle(a, sw) => self.lane(a, sw[l as usize]),
            Expr::Compose(parts) => self.lane(&parts[l as usize], 0),
            Expr::Unary(op, a) => match per_lane_unary(*op) {
                Some(form) => form.text(&lane(a), "float"),
                None => self.vector_lane(e, l),
            },
            Expr::Binary(BinOp::Cross3, ..) => self.vector_lane(e, l),
            // a dot product is a scalar, the same in every lane
            Expr::Dot(..) => self.dot(e),
            Expr::Binary(op, e_a, e_b) => {
                let (a, b) = (lane(e_a), lane(e_b));
                // the prelude's scalar overloads of the per-lane helpers
                let k = |e: &Expr| literal_of(e).is_some_and(|v| v[l as usize].is_finite() && v[l as usize] != 0.0);
                match op {
                    BinOp::MulLegacy => self.mul_legacy((e_a, &a), (e_b, &b), k(e_a), k(e_b)),
                    BinOp::MaxPica => format!("{}({a}, {b})", self.h("shrec_pica_max")),
                    BinOp::MinPica => format!("{}({a}, {b})", self.h("shrec_pica_min")),
                    BinOp::MulPica => format!("{}({a}, {b})", self.h("shrec_pica_mul")),
                    _ => per_lane_binary_text(*op, &a, &b, "float").unwrap_or_else(|| self.vector_lane(e, l)),
                }
            }
            Expr::Mad(a, b, c) => format!("({} * {} + {})", lane(a), lane(b), lane(c)),
            Expr::SelectIf(c, a, b) => format!("(({}) ? {} : {})", self.cond(c), lane(a), lane(b)),
            Expr::Select { if_true, if_false, .. } if if_true == if_false => lane(if_true),
            Expr::IntUnary(IntUnOp::Not, a) => format!("asfloat(~{})", uint_text(&lane(a))),
            Expr::IntUnary(IntUnOp::IntToFloat, a) => format!("((float)asint({}))", uint_text(&lane(a))),
            Expr::IntUnary(IntUnOp::UintToFloat, a) => format!("((float){})", uint_text(&lane(a))),
            Expr::IntTernary(op @ (IntTerOp::CndEI | IntTerOp::CndGtI | IntTerOp::CndGeI), a, b, c) => {
                let f = match op {
                    IntTerOp::CndEI => "shrec_cnde_i",
                    IntTerOp::CndGtI => "shrec_cndgt_i",
                    _ => "shrec_cndge_i",
                };
                let f = self.h(f);
                format!("asfloat({f}({}, {}, {}))", uint_text(&lane(a)), uint_text(&lane(b)), uint_text(&lane(c)))
            }
            Expr::IntBinary(IntBinOp::MulHiI | IntBinOp::MulHiU, ..) => self.vector_lane(e, l),
            Expr::IntBinary(op, a, b) => {
                let (fa, fb) = (lane(a), lane(b));
                let (a, b) = (uint_text(&fa), uint_text(&fb));
                match (int_binary_text(*op, &a, &b), int_compare_text(*op, &a, &b), float_compare_text(*op, &fa, &fb)) {
                    (Some(t), ..) => t,
                    // select, not `?:`: a scalar `?:` short-circuits in HLSL 2021 (a branch in SPIR-V)
                    (None, Some(c), _) | (None, None, Some(c)) => format!("asfloat(select({c}, 0xFFFFFFFFu, 0u))"),
                    (None, None, None) => self.vector_lane(e, l),
                }
            }
            _ => self.vector_lane(e, l),
        }
    }

    /// The first `n` lanes (1-4) of `e` (a coordinate operand).
    pub(super) fn lanes(&self, e: &Expr, n: usize) -> String {
        self.sel(e, &[0, 1, 2, 3][..n])
    }

    /// Lanes `mask` of `e`, packed (the value of a partial write).
    pub(super) fn masked(&self, e: &Expr, mask: u8) -> String {
        let picked: Vec<u8> = (0..4).filter(|i| mask >> i & 1 == 1).collect();
        self.sel(e, &picked)
    }

    /// Lanes `picked` of `e` as a `floatN` (N = their count): a register's swizzle (`R1.zy`),
    /// per-lane operators on their operands' picked lanes (`R1.xy * c[2].zw`), else the vector
    /// expression's lanes.
    pub(super) fn sel(&self, e: &Expr, picked: &[u8]) -> String {
        let n = picked.len();
        if n == 1 {
            return self.lane(e, picked[0]);
        }
        let letters = |sw: &[u8; 4]| -> String { picked.iter().map(|&l| LANES[sw[l as usize & 3] as usize & 3]).collect() };
        let sel = |a: &Expr| self.sel(a, picked);
        let vector = || {
            let v = self.expr(e);
            if picked == [0, 1, 2, 3] {
                v
            } else {
                format!("({v}).{}", letters(&XYZW))
            }
        };
        match e {
            Expr::Read(src) => self.read_text(src, &letters(&src.swizzle)),
            Expr::Literal(v) => {
                let vals: Vec<f32> = picked.iter().map(|&l| v[l as usize & 3]).collect();
                if vals.iter().all(|x| x.to_bits() == vals[0].to_bits()) {
                    format!("((float{n}){})", float_literal(vals[0]))
                } else {
                    let p: Vec<String> = vals.iter().map(|&x| float_literal(x)).collect();
                    format!("float{n}({})", p.join(", "))
                }
            }
            Expr::Swizzle(a, sw) => {
                let inner: Vec<u8> = picked.iter().map(|&l| sw[l as usize & 3] & 3).collect();
                self.sel(a, &inner)
            }
            Expr::Compose(parts) => self.composed(&picked.iter().map(|&l| &parts[l as usize & 3]).collect::<Vec<_>>()),
            Expr::Bits(_) => {
                let p: Vec<String> = picked.iter().map(|&l| self.lane(e, l)).collect();
                format!("float{n}({})", p.join(", "))
            }
            Expr::Unary(op, a) => match per_lane_unary(*op) {
                Some(form) => form.text(&sel(a), &format!("float{n}")),
                None => vector(),
            },
            Expr::Binary(BinOp::Cross3 | BinOp::MulLegacy | BinOp::MulPica | BinOp::MaxPica | BinOp::MinPica, ..) => vector(),
            Expr::Binary(op, e_a, e_b) => {
                let (a, b) = (sel(e_a), sel(e_b));
                let (sa, sb) = (Self::broadcast_operand(e_a, e_b, a.clone()), Self::broadcast_operand(e_b, e_a, b.clone()));
                match op {
                    BinOp::Add => format!("({sa} + {sb})"),
                    BinOp::Sub => format!("({sa} - {sb})"),
                    BinOp::Mul => format!("({sa} * {sb})"),
                    BinOp::Div => format!("({sa} / {sb})"),
                    BinOp::Min => format!("min({a}, {b})"),
                    BinOp::Max => format!("max({a}, {b})"),
                    BinOp::Pow => format!("pow({a}, {b})"),
                    BinOp::Sge => format!("((float{n})({a} >= {b}))"),
                    BinOp::Slt => format!("((float{n})({a} < {b}))"),
                    BinOp::Seq => format!("((float{n})({a} == {b}))"),
                    BinOp::Sne => format!("((float{n})!({a} == {b}))"),
                    _ => vector(),
                }
            }
            Expr::Mad(a, b, c) => format!("({} * {} + {})", sel(a), sel(b), sel(c)),
            // Both arms the same: the select is that value, whatever the compare gives (NaN too).
            Expr::Select { if_true, if_false, .. } if if_true == if_false => sel(if_true),
            _ => vector(),
        }
    }

    /// An operand of a per-lane arithmetic operator (`lanes` its text), the other operand
    /// giving the vector's width:
    /// a literal with the same value in every lane is written as that scalar (`1.0 - R1`,
    /// HLSL broadcasts it: the same value in every lane), anything else as its lanes.
    pub(super) fn broadcast_operand(e: &Expr, other: &Expr, lanes: String) -> String {
        let uniform = literal_of(e).filter(|v| v.iter().all(|x| x.to_bits() == v[0].to_bits()));
        match (uniform, literal_of(other)) {
            (Some(v), None) => float_literal(v[0]),
            _ => lanes,
        }
    }

    /// A `floatN` of lane x of each of `parts` (N = their count), adjacent lanes of one
    /// register read as one swizzle: `float4(R1.xyz, c[3].x)`, or `R1.xyz` alone.
    pub(super) fn composed(&self, parts: &[&Expr]) -> String {
        let mut runs: Vec<(Option<&Src>, String)> = Vec::new();
        for p in parts {
            let read = read_lane(p, 0);
            match (runs.last_mut(), read) {
                (Some((Some(prev), letters)), Some((src, l))) if prev.reg == src.reg && prev.abs == src.abs && prev.negate == src.negate => {
                    letters.push(LANES[l as usize & 3]);
                }
                (_, Some((src, l))) => runs.push((Some(src), LANES[l as usize & 3].to_string())),
                (_, None) => runs.push((None, self.lane(p, 0))),
            }
        }
        let texts: Vec<String> = runs.iter().map(|(src, t)| src.map_or_else(|| t.clone(), |s| self.read_text(s, t))).collect();
        match runs.as_slice() {
            [(Some(_), _)] if parts.len() > 1 => texts[0].clone(),
            _ => format!("float{}({})", parts.len(), texts.join(", ")),
        }
    }

    /// Lanes `letters` of register read `src` (no swizzle for `xyzw`), with its modifiers.
    pub(super) fn read_text(&self, src: &Src, letters: &str) -> String {
        let mut t = self.reg(&src.reg);
        // a swizzle of two or more lanes (`r.xy`, `r.xxxx`) loads the whole vector; a one-lane
        // read would be an access chain, and so would a whole read that a later `.x` selects from
        if self.is_variable(&src.reg) && (letters.len() == 1 || letters == "xyzw") {
            t = format!("((float4){t})");
        }
        if letters != "xyzw" {
            t = format!("{t}.{letters}");
        }
        if src.abs {
            t = format!("abs({t})");
        }
        if src.negate {
            t = format!("(-{t})");
        }
        t
    }

    /// The scalar `dot` of an `Expr::Dot` (its operands' first `n` lanes).
    pub(super) fn dot(&self, e: &Expr) -> String {
        let Expr::Dot(n, a, b) = e else { unreachable!("dot() is called on Expr::Dot") };
        let n = (*n as usize).clamp(1, 4);
        format!("dot({}, {})", self.lanes(a, n), self.lanes(b, n))
    }

    /// Lane `l` of the vector expression `e`.
    pub(super) fn vector_lane(&self, e: &Expr, l: u8) -> String {
        format!("({}).{}", self.expr(e), LANES[l as usize & 3])
    }
}
