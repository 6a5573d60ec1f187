//! The ATI cube-map convention shared by Xenos (`cube`, `tfetchCube`) and R600 / GX2 (`CUBE`,
//! `SAMPLE` on a cube resource), as IR builders used by both lowerings.
//!
//! Both GPUs compute cube-map coordinates in the shader: the `cube` / `CUBE` instruction takes the
//! direction (x, y, z) and returns (tc, sc, 2 × major axis, face id); the compiler follows it with
//! a reciprocal of |2 × major axis| and a multiply-add by 1.5, so the fetch receives face
//! coordinates s, t in [1, 2] and the face id. The host samples a `TextureCube` with a direction,
//! so the fetch side rebuilds one ([`cube_direction`]).
//!
//! What Xenos (Xenia's `ucode.h` / translators) and R600 (the R600 ISA, Mesa's `cube_r600`) agree
//! on: the major axis is the component of largest magnitude, z winning ties over y and y over x
//! (`|z| >= |x| && |z| >= |y|`, then `|y| >= |x|`); face ids 0-5 = +x −x +y −y +z −z
//! (D3DCUBEMAP_FACES, the Vulkan / D3D layer order); (sc, tc) per face as in the GL / Vulkan
//! cube-map table; −0 counts as positive. Where they differ: the sign test of a NaN major axis
//! (R600 per Mesa: `>= 0`, so NaN picks the negative face; Xenos per Xenia: `< 0` picks the
//! negative face, so NaN picks the positive one), see [`SignTest`]; and the fetch's handling of a
//! non-integral face value (Xenos per Xenia: clamped to [0, 5] and truncated, applied by the
//! caller before [`cube_direction`]; GX2: nearest, not known from hardware).

use crate::ir::build::*;
use crate::ir::*;

/// How the sign of the major axis is tested (only a NaN major axis tells them apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignTest {
    /// Positive face when `v >= 0` (R600, Mesa `cube_r600`).
    GeZero,
    /// Negative face when `v < 0` (Xenos, Xenia's `cube`).
    LtZeroIsNegative,
}

fn lit(v: f32) -> Expr {
    Expr::Literal([v; 4])
}

/// `cube` of the direction (x, y, z): (tc, sc, 2 × major axis, face id), see the module doc.
pub fn cube(x: Expr, y: Expr, z: Expr, sign: SignTest) -> [Expr; 4] {
    let ge_abs = |a: &Expr, b: &Expr| Cond::Compare(CmpOp::Ge, un(UnOp::Abs, a.clone()), un(UnOp::Abs, b.clone()));
    let z_major = Cond::And(Box::new(ge_abs(&z, &x)), Box::new(ge_abs(&z, &y)));
    let y_major = ge_abs(&y, &x);
    let by_axis = |zv: Expr, yv: Expr, xv: Expr| {
        Expr::SelectIf(Box::new(z_major.clone()), Box::new(zv), Box::new(Expr::SelectIf(Box::new(y_major.clone()), Box::new(yv), Box::new(xv))))
    };
    let by_sign = |v: &Expr, pos: Expr, neg: Expr| match sign {
        SignTest::GeZero => Expr::SelectIf(Box::new(Cond::Compare(CmpOp::Ge, v.clone(), lit(0.0))), Box::new(pos), Box::new(neg)),
        SignTest::LtZeroIsNegative => Expr::SelectIf(Box::new(Cond::Compare(CmpOp::Lt, v.clone(), lit(0.0))), Box::new(neg), Box::new(pos)),
    };
    let neg = |v: &Expr| un(UnOp::Neg, v.clone());
    let tc = by_axis(neg(&y), by_sign(&y, z.clone(), neg(&z)), neg(&y));
    let sc = by_axis(by_sign(&z, x.clone(), neg(&x)), x.clone(), by_sign(&x, neg(&z), z.clone()));
    let ma = by_axis(bin(BinOp::Mul, z.clone(), lit(2.0)), bin(BinOp::Mul, y.clone(), lit(2.0)), bin(BinOp::Mul, x.clone(), lit(2.0)));
    let face = by_axis(by_sign(&z, lit(4.0), lit(5.0)), by_sign(&y, lit(2.0), lit(3.0)), by_sign(&x, lit(0.0), lit(1.0)));
    [tc, sc, ma, face]
}

/// The direction a `TextureCube` sample needs for face coordinates (s, t, face):
/// s = sc / |2 ma| + 1.5 and t = tc / |2 ma| + 1.5 in [1, 2] (what `cube`, a reciprocal of
/// |2 ma| and a multiply-add by 1.5 produce); sc = 2s − 3 and tc = 2t − 3 are exact there, and
/// the direction puts ±1 on the face's axis: +x (1, −tc, −sc), −x (−1, −tc, sc),
/// +y (sc, 1, tc), −y (sc, −1, −tc), +z (sc, −tc, 1), −z (−sc, −tc, −1) (the inverse of
/// [`cube`]'s table; Xenia's fetch translators rebuild the same). A face value other than 0-5
/// picks the nearest.
pub fn cube_direction(s: Expr, t: Expr, face: Expr) -> Expr {
    cube_direction_and(s, t, face, lit(0.0))
}

/// [`cube_direction`] with `w` in lane w: a cube array's index (GX2 SET_CUBEMAP_INDEX).
pub fn cube_direction_and(s: Expr, t: Expr, face: Expr, w: Expr) -> Expr {
    let sc = bin(BinOp::Sub, bin(BinOp::Mul, s, lit(2.0)), lit(3.0));
    let tc = bin(BinOp::Sub, bin(BinOp::Mul, t, lit(2.0)), lit(3.0));
    let neg = |v: &Expr| un(UnOp::Neg, v.clone());
    let by_face = |v: [Expr; 6]| {
        let [v0, v1, v2, v3, v4, v5] = v;
        let mut acc = v5;
        for (k, e) in [(4, v4), (3, v3), (2, v2), (1, v1), (0, v0)] {
            let cond = Cond::Compare(CmpOp::Lt, face.clone(), lit(k as f32 + 0.5));
            acc = Expr::SelectIf(Box::new(cond), Box::new(e), Box::new(acc));
        }
        acc
    };
    let x = by_face([lit(1.0), lit(-1.0), sc.clone(), sc.clone(), sc.clone(), neg(&sc)]);
    let y = by_face([neg(&tc), neg(&tc), lit(1.0), lit(-1.0), neg(&tc), neg(&tc)]);
    let z = by_face([neg(&sc), sc.clone(), tc.clone(), neg(&tc), lit(1.0), lit(-1.0)]);
    Expr::Compose(Box::new([x, y, z, w]))
}
