//! Text of the smallest pieces the writer prints: literals, lane letters, comparison
//! operators, semantics, texture operands. Free functions of values, no writer state.

use crate::ir::*;

pub(super) const LANES: [char; 4] = ['x', 'y', 'z', 'w'];

/// A float literal of exactly `v`, typed `float`: the `f` suffix matters. An unsuffixed HLSL
/// literal is a "literal float" that DXC keeps at 64 bits until it meets a 32-bit operand, so
/// the shortest decimal that names `v` among floats (`{v:?}`) is read as a *double* near `v`,
/// and literal-only arithmetic (after the IR passes propagated two constants into one
/// operation) runs on those doubles; DXC's SPIR-V even held one such literal a float below the
/// nearest (GX2 gs_long_fuzz seed 1 #147: `7.9999995` became `7.99999905`, 0x40FFFFFE for
/// 0x40FFFFFF, one ulp off in `MULADD`). With the suffix the decimal is rounded to the nearest
/// float, which is `v`. Slang's HLSL emitter suffixes its literals for the same reason
/// (shader-slang/slang#6381).
pub(super) fn float_literal(v: f32) -> String {
    if v.is_finite() {
        let s = format!("{v:?}");
        if s.contains(['.', 'e', 'E']) {
            format!("{s}f")
        } else {
            format!("{s}.0f")
        }
    } else {
        format!("asfloat(0x{:08X}u)", v.to_bits())
    }
}

/// The value of `e` when it is a literal, possibly swizzled, negated or made absolute (exact
/// operations on the bits, as the GPU performs them), so that the writer prints one literal
/// instead of an expression DXC has to parse and fold.
pub(super) fn literal_of(e: &Expr) -> Option<[f32; 4]> {
    match e {
        Expr::Literal(v) => Some(*v),
        Expr::Swizzle(a, s) => literal_of(a).map(|v| s.map(|l| v[l as usize & 3])),
        Expr::Unary(UnOp::Neg, a) => literal_of(a).map(|v| v.map(|x| -x)),
        Expr::Unary(UnOp::Abs, a) => literal_of(a).map(|v| v.map(f32::abs)),
        _ => None,
    }
}

/// Whether `e` reads a register (with swizzles and source modifiers) and computes nothing.
pub(super) fn is_plain_read(e: &Expr) -> bool {
    match e {
        Expr::Read(_) => true,
        Expr::Swizzle(a, _) => is_plain_read(a),
        _ => false,
    }
}

/// Whether the text of `e` may be written more than once in one expression (a prelude macro
/// repeats its operands): a register lane at a fixed index or a literal, nothing computed.
pub(super) fn is_repeatable(e: &Expr) -> bool {
    match e {
        Expr::Read(src) => matches!(src.reg.index, Index::Fixed(_)),
        Expr::Literal(_) => true,
        Expr::Swizzle(a, _) => is_repeatable(a),
        _ => false,
    }
}

/// The argument of `text` when all of `text` is one call `name(argument)`.
pub(super) fn call_argument<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let inner = text.strip_prefix(name)?.strip_prefix('(')?.strip_suffix(')')?;
    // the parentheses of `name(` and the last `)` must be a pair
    let mut depth = 0i32;
    for c in inner.chars() {
        depth += match c {
            '(' => 1,
            ')' => -1,
            _ => 0,
        };
        if depth < 0 {
            return None;
        }
    }
    (depth == 0).then_some(inner)
}

/// The 32 bits of a scalar float text as `uint`: `asuint(x)`, or the bits themselves when the
/// text is `asfloat(bits)` (the same pattern, without the round trip).
pub(super) fn uint_text(float: &str) -> String {
    match call_argument(float, "asfloat") {
        Some(bits) => format!("({bits})"),
        None => format!("asuint({float})"),
    }
}

pub(super) fn literal_text(v: &[f32; 4]) -> String {
    if v.iter().all(|&x| x.to_bits() == v[0].to_bits()) {
        format!("((float4){})", float_literal(v[0]))
    } else {
        let parts: Vec<String> = v.iter().map(|&x| float_literal(x)).collect();
        format!("float4({})", parts.join(", "))
    }
}

pub(super) fn mask_text(mask: u8) -> String {
    (0..4).filter(|i| mask >> i & 1 == 1).map(|i| LANES[i]).collect()
}

pub(super) fn swizzle_text(s: &[u8; 4]) -> String {
    s.iter().map(|&l| LANES[l as usize & 3]).collect()
}

/// How a unary operator that works lane by lane is written around its operand, at any width
/// (a scalar lane, some lanes, the whole vector).
#[derive(Clone, Copy)]
pub(super) enum UnaryForm {
    /// `name(a)`: an HLSL intrinsic with the operator's exact semantics.
    Call(&'static str),
    /// `(-(a))`
    Neg,
    /// `(1.0 / (a))`
    Rcp,
    /// `((floatN)sign(a))`: HLSL's `sign` returns integers.
    Sign,
}

impl UnaryForm {
    /// The operator applied to operand text `a` of type `ty` (`float`, `float2`, ...).
    pub(super) fn text(self, a: &str, ty: &str) -> String {
        match self {
            UnaryForm::Call(f) => format!("{f}({a})"),
            UnaryForm::Neg => format!("(-({a}))"),
            UnaryForm::Rcp => format!("(1.0 / ({a}))"),
            UnaryForm::Sign => format!("(({ty})sign({a}))"),
        }
    }
}

/// The per-lane form of `op`; `None` for the operators written only on whole vectors (the
/// prelude's helpers, `normalize`, `frac`).
pub(super) fn per_lane_unary(op: UnOp) -> Option<UnaryForm> {
    Some(match op {
        UnOp::Neg => UnaryForm::Neg,
        UnOp::Rcp => UnaryForm::Rcp,
        UnOp::Sign => UnaryForm::Sign,
        UnOp::Abs => UnaryForm::Call("abs"),
        UnOp::Rsq => UnaryForm::Call("rsqrt"),
        UnOp::Sqrt => UnaryForm::Call("sqrt"),
        UnOp::Log2 => UnaryForm::Call("log2"),
        UnOp::Exp2 => UnaryForm::Call("exp2"),
        UnOp::Floor => UnaryForm::Call("floor"),
        UnOp::Sin => UnaryForm::Call("sin"),
        UnOp::Cos => UnaryForm::Call("cos"),
        UnOp::Saturate => UnaryForm::Call("saturate"),
        UnOp::Ddx => UnaryForm::Call("ddx"),
        UnOp::Ddy => UnaryForm::Call("ddy"),
        UnOp::Trunc => UnaryForm::Call("trunc"),
        UnOp::Ceil => UnaryForm::Call("ceil"),
        UnOp::RoundEven => UnaryForm::Call("round"),
        _ => return None,
    })
}

/// The prelude helper (shader_common.h) that computes `op`, for the operators without an exact
/// HLSL intrinsic; `None` for the per-lane operators and `Normalize3`.
pub(super) fn prelude_unary(op: UnOp) -> Option<&'static str> {
    Some(match op {
        UnOp::Fract => "shrec_frac",
        UnOp::RcpClampMax => "shrec_rcp_clamp_max",
        UnOp::RcpClampZero => "shrec_rcp_clamp_zero",
        UnOp::RsqExactOne => "shrec_rsq_exact_one",
        UnOp::RsqClampMax => "shrec_rsq_clamp_max",
        UnOp::RsqClampZero => "shrec_rsq_clamp_zero",
        UnOp::Log2ExactOne => "shrec_log2_exact_one",
        UnOp::Log2ClampMax => "shrec_log2_clamp_max",
        UnOp::RcpClamped => "shrec_rcp_clamped",
        UnOp::RcpFF => "shrec_rcp_ff",
        UnOp::RsqClamped => "shrec_rsq_clamped",
        UnOp::RsqFF => "shrec_rsq_ff",
        UnOp::Log2Clamped => "shrec_log2_clamped",
        _ => return None,
    })
}

/// An integer operator of the 32-bit patterns `a` and `b` (`uint` texts of any width) whose
/// result is a pattern, as a float text: `asfloat(a + b)`. `None` for the comparisons (see
/// [`int_compare_text`]) and the high-half multiplies (prelude helpers, whole vectors only).
/// Shift counts use their low five bits, as every source ISA's shifter.
pub(super) fn int_binary_text(op: IntBinOp, a: &str, b: &str) -> Option<String> {
    let (ia, ib) = (format!("asint({a})"), format!("asint({b})"));
    let body = match op {
        IntBinOp::Add => format!("{a} + {b}"),
        IntBinOp::Sub => format!("{a} - {b}"),
        IntBinOp::MulLo => format!("{a} * {b}"),
        IntBinOp::And => format!("{a} & {b}"),
        IntBinOp::Or => format!("{a} | {b}"),
        IntBinOp::Xor => format!("{a} ^ {b}"),
        IntBinOp::Shl => format!("{a} << ({b} & 31u)"),
        IntBinOp::ShrU => format!("{a} >> ({b} & 31u)"),
        IntBinOp::ShrI => format!("{ia} >> ({b} & 31u)"),
        IntBinOp::MinI => format!("min({ia}, {ib})"),
        IntBinOp::MaxI => format!("max({ia}, {ib})"),
        IntBinOp::MinU => format!("min({a}, {b})"),
        IntBinOp::MaxU => format!("max({a}, {b})"),
        _ => return None,
    };
    Some(format!("asfloat({body})"))
}

/// The condition of an integer comparison of the patterns `a` and `b` (`uint` texts), signed
/// or unsigned as the operator says; `None` for the other operators and the float compares.
pub(super) fn int_compare_text(op: IntBinOp, a: &str, b: &str) -> Option<String> {
    let (ia, ib) = (format!("asint({a})"), format!("asint({b})"));
    Some(match op {
        IntBinOp::EqI => format!("{a} == {b}"),
        IntBinOp::NeI => format!("{a} != {b}"),
        IntBinOp::GtI => format!("{ia} > {ib}"),
        IntBinOp::GeI => format!("{ia} >= {ib}"),
        IntBinOp::GtU => format!("{a} > {b}"),
        IntBinOp::GeU => format!("{a} >= {b}"),
        _ => return None,
    })
}

/// The condition of a float comparison of `a` and `b` (float texts) whose result is a lane
/// mask; `!(a == b)` for not-equal (true with NaN, see [`cmp_text`]). `None` for the other
/// operators.
pub(super) fn float_compare_text(op: IntBinOp, a: &str, b: &str) -> Option<String> {
    Some(match op {
        IntBinOp::EqF => format!("{a} == {b}"),
        IntBinOp::NeF => format!("!({a} == {b})"),
        IntBinOp::GtF => format!("{a} > {b}"),
        IntBinOp::GeF => format!("{a} >= {b}"),
        _ => return None,
    })
}

/// HLSL text of a comparison. Float `!=` is never written with this: the IR's `Ne` is IEEE
/// (true when either side is NaN, as in DXIL), but DXC's SPIR-V backend compiles HLSL `!=` to an
/// ordered compare (false with NaN), so float `Ne` is written as `!(a == b)` (or a select with
/// swapped arms) and both targets agree. Integer compares have no NaN and use it as is.
pub(super) fn cmp_text(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "==",
        CmpOp::Ne => "!=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
    }
}

pub(super) fn semantic_text(s: &Semantic) -> String {
    match s {
        Semantic::Texcoord(n) => format!("TEXCOORD{n}"),
        Semantic::Position => "SV_Position".into(),
        Semantic::Target(n) => format!("SV_Target{n}"),
        Semantic::Depth => "SV_Depth".into(),
        Semantic::InstanceId => "SV_InstanceID".into(),
        Semantic::Usage { name, index, .. } | Semantic::UsageUint { name, index, .. } => format!("{name}{index}"),
        Semantic::VertexId => "SV_VertexID".into(),
        Semantic::PointSize => "PSIZE".into(),
        Semantic::CullDistance => "SV_CullDistance".into(),
        Semantic::StreamOut { index, .. } => format!("{STREAM_OUT_SEMANTIC}{index}"),
    }
}

/// The semantic name of stream-out outputs (`Semantic::StreamOut`): a D3D12 consumer's
/// `D3D12_SO_DECLARATION_ENTRY::SemanticName` (docs/cache-abi.md).
pub const STREAM_OUT_SEMANTIC: &str = "SHREC_SO";

/// Outputs only the SPIR-V target has (declared and written inside `#ifdef __spirv__`).
pub(super) fn spirv_only(s: &Semantic) -> bool {
    *s == Semantic::PointSize
}

/// The HLSL infix operator of `+ - * /`, the same text for vectors and scalars.
pub(super) fn infix_operator(op: BinOp) -> Option<&'static str> {
    match op {
        BinOp::Add => Some("+"),
        BinOp::Sub => Some("-"),
        BinOp::Mul => Some("*"),
        BinOp::Div => Some("/"),
        _ => None,
    }
}

/// `a op b` of a per-lane operator HLSL writes directly: `+ - * /`, `min` / `max` / `pow`,
/// and the set-on-compare operators as a 1.0 / 0.0 of type `ty` (`float4` or `float`). One
/// table for whole vectors and single lanes. `None`: the caller writes `op` (the legacy
/// multiply and the PICA operators through prelude helpers, Cross3 on whole vectors).
pub(super) fn per_lane_binary_text(op: BinOp, a: &str, b: &str, ty: &str) -> Option<String> {
    Some(match op {
        BinOp::Min => format!("min({a}, {b})"),
        BinOp::Max => format!("max({a}, {b})"),
        BinOp::Pow => format!("pow({a}, {b})"),
        BinOp::Sge => format!("(({ty})({a} >= {b}))"),
        BinOp::Slt => format!("(({ty})({a} < {b}))"),
        BinOp::Seq => format!("(({ty})({a} == {b}))"),
        BinOp::Sne => format!("(({ty})!({a} == {b}))"),
        _ => format!("({a} {} {b})", infix_operator(op)?),
    })
}

/// Vulkan location for user semantics; builtins get none (DXC maps them to built-ins).
pub(super) fn vk_location(s: &Semantic) -> Option<u32> {
    match s {
        Semantic::Texcoord(n) => Some(*n),
        Semantic::Usage { location, .. } | Semantic::UsageUint { location, .. } | Semantic::StreamOut { location, .. } => Some(*location),
        _ => None,
    }
}

/// The register read and its lane that lane `l` of `e` is, when `e` is a (swizzled) read.
pub(super) fn read_lane(e: &Expr, l: u8) -> Option<(&Src, u8)> {
    match e {
        Expr::Read(src) => Some((src, src.swizzle[l as usize & 3])),
        Expr::Swizzle(a, sw) => read_lane(a, sw[l as usize & 3]),
        _ => None,
    }
}

/// The coordinate lanes a sample of a `dim` texture reads (`x` … `xyzw`).
pub(super) fn coord_lanes(dim: TexDim) -> &'static str {
    &"xyzw"[..dim.coord_lanes()]
}

/// HLSL's constant texel-offset operand (`, int2(1, -2)`), empty when all zero; it has the
/// texture's texel lanes (an array's slice has none).
pub(super) fn offset_operand(dim: TexDim, offset: &[i8; 3]) -> String {
    if *offset == [0, 0, 0] {
        return String::new();
    }
    let n = dim.texel_lanes();
    let v: Vec<String> = offset[..n].iter().map(|o| o.to_string()).collect();
    format!(", int{n}({})", v.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_exact_hlsl() {
        assert_eq!(float_literal(1.0), "1.0f");
        assert_eq!(float_literal(0.125), "0.125f");
        assert_eq!(float_literal(7.9999995), "7.9999995f");
        assert_eq!(float_literal(f32::INFINITY), "asfloat(0x7F800000u)");
        assert_eq!(float_literal(1e-40), "1e-40f");
    }

    #[test]
    fn masks_and_swizzles() {
        assert_eq!(mask_text(0b0110), "yz");
        assert_eq!(swizzle_text(&[3, 3, 0, 1]), "wwxy");
    }
}
