//! Cube-map face selection, shared by the GX2 `CUBE` and the Xenos `cube` evaluations: both
//! ISAs pick the same major axis and write the same face coordinates (GX2: the R600 ISA's CUBE
//! and Mesa's `cube_r600` constant folding; Xenos: Xenia's `ucode.h` and shader translators).
//! Each interpreter keeps its own value type and comparisons; only the rules live here.

/// The major axis of a direction (0: x, 1: y, 2: z): the component of largest magnitude, z
/// winning ties over y and y over x (`|z| >= |x| && |z| >= |y|`, else `|y| >= |x|`).
/// `at_least(a, b)` says whether |component a| >= |component b|, `None` when the interpreter
/// cannot decide it (within the operands' error); then so is the axis.
pub fn major_axis(at_least: impl Fn(usize, usize) -> Option<bool>) -> Option<usize> {
    match (at_least(2, 0), at_least(2, 1)) {
        (Some(true), Some(true)) => Some(2),
        (Some(false), _) | (_, Some(false)) => at_least(1, 0).map(|y_wins| if y_wins { 1 } else { 0 }),
        _ => None,
    }
}

/// The face, 0-5 = +x −x +y −y +z −z, of a major axis and its sign.
pub fn face(axis: usize, negative: bool) -> usize {
    2 * axis + usize::from(negative)
}

/// One face coordinate: the direction's component it is, and whether negated.
#[derive(Clone, Copy, Debug)]
pub struct FaceCoord {
    pub component: usize,
    pub negate: bool,
}

const fn coord(component: usize, negate: bool) -> FaceCoord {
    FaceCoord { component, negate }
}

/// (tc, sc) of each face: +x (−y, −z), −x (−y, z), +y (z, x), −y (−z, x), +z (−y, x),
/// −z (−y, −x).
pub const FACE_COORDS: [(FaceCoord, FaceCoord); 6] = [
    (coord(1, true), coord(2, true)),
    (coord(1, true), coord(2, false)),
    (coord(2, false), coord(0, false)),
    (coord(2, true), coord(0, false)),
    (coord(1, true), coord(0, false)),
    (coord(1, true), coord(0, true)),
];
