//! The passes on small modules: what they remove, keep and rewrite.

use super::*;
use crate::ir::build::read;
use crate::ir::*;

fn module(body: Vec<Stmt>) -> Module {
    Module {
        family: Family::Gx2,
        stage: Stage::Pixel,
        inputs: vec![IoVar { name: "v0".into(), semantic: Semantic::Texcoord(0), components: 4 }],
        outputs: vec![IoVar { name: "o0".into(), semantic: Semantic::Target(0), components: 4 }],
        const_buffers: vec![],
        textures: vec![],
        temps: TempFile { count: 8, prefix: "R".into(), indexable: false },
        body,
        header_comments: vec![],
        ext: ModuleExt::default(),
    }
}

fn assign(file: RegFile, index: u32, mask: u8, value: Expr) -> Stmt {
    Stmt::Assign { dst: Dst { reg: RegRef::fixed(file, index), mask }, value, saturate: false }
}

fn t(i: u32, lane: u8) -> Expr {
    read(RegFile::Temp, i, [lane; 4])
}

const IN: RegFile = RegFile::Input;
const OUT: RegFile = RegFile::Output;
const TMP: RegFile = RegFile::Temp;

fn optimized(body: Vec<Stmt>) -> Vec<Stmt> {
    let mut m = module(body);
    optimize_checked(&mut m).expect("passes keep the IR valid");
    m.body
}

#[test]
fn dead_writes_and_dead_lanes_go() {
    let sin = |e| Expr::Unary(UnOp::Sin, Box::new(e));
    let body = optimized(vec![
        // R1.xyzw computed, only R1.x read afterwards
        assign(TMP, 1, 0xF, sin(read(IN, 0, XYZW))),
        // never read
        assign(TMP, 2, 0xF, sin(read(IN, 0, XYZW))),
        assign(OUT, 0, 0xF, Expr::Swizzle(Box::new(read(TMP, 1, XYZW)), [0; 4])),
    ]);
    // R1's only use takes its computation (result forwarding); R2 and R1 go
    assert_eq!(body.len(), 1, "{body:#?}");
    let mut reads_temp = false;
    crate::ir::visit::stmt_reads(&body[0], &mut |r| reads_temp |= r.file == TMP);
    assert!(!reads_temp, "{body:#?}");
    let Stmt::Assign { dst, .. } = &body[0] else { panic!("{body:#?}") };
    assert_eq!(dst.reg, RegRef::fixed(OUT, 0));
}

#[test]
fn result_temporaries_forward_to_their_destinations() {
    // GX2 shape: PV.x = v0.x + v0.y; PV.y = v0.x; R1.x = PV.x; R1.y = PV.y; o0 = R1
    let add = Expr::Binary(BinOp::Add, Box::new(read(IN, 0, [0; 4])), Box::new(read(IN, 0, [1; 4])));
    let body = optimized(vec![
        assign(TMP, 6, 1, add),
        assign(TMP, 6, 2, read(IN, 0, [0; 4])),
        assign(TMP, 1, 1, t(6, 0)),
        assign(TMP, 1, 2, t(6, 1)),
        assign(OUT, 0, 0xF, read(TMP, 1, [0, 1, 1, 1])),
    ]);
    // R1.xy in one statement, the output reads R1 and v0 directly
    assert!(body.len() <= 2, "{body:#?}");
    let mut reads_pv = false;
    for s in &body {
        crate::ir::visit::stmt_reads(s, &mut |r| reads_pv |= *r == RegRef::fixed(TMP, 6));
    }
    assert!(!reads_pv, "{body:#?}");
}

#[test]
fn a_move_whose_source_changes_is_not_propagated_past_the_change() {
    let body = optimized(vec![
        assign(TMP, 1, 1, read(IN, 0, [0; 4])),
        assign(IN, 0, 1, Expr::Literal([5.0; 4])),
        assign(OUT, 0, 0xF, Expr::Binary(BinOp::Add, Box::new(t(1, 0)), Box::new(read(IN, 0, [0; 4])))),
    ]);
    // the sum is old v0.x + 5: v0.x is read where it still holds the old value (its write of
    // 5.0 is propagated and dies), never the new value twice
    let add = Expr::Binary(BinOp::Add, Box::new(read(IN, 0, [0; 4])), Box::new(Expr::Literal([5.0; 4])));
    assert_eq!(body, vec![assign(OUT, 0, 0xF, add)]);
}

#[test]
fn loops_keep_values_read_in_a_later_iteration() {
    // R1.x = 0; loop { o0.x = R1.x; R1.x = v0.x; if (v0.y < 0) break; }
    let body = optimized(vec![
        assign(TMP, 1, 1, Expr::Literal([0.0; 4])),
        Stmt::Loop {
            body: vec![
                assign(OUT, 0, 1, t(1, 0)),
                assign(TMP, 1, 1, Expr::Unary(UnOp::Sin, Box::new(read(IN, 0, [0; 4])))),
                Stmt::If {
                    cond: Cond::Compare(CmpOp::Lt, read(IN, 0, [1; 4]), Expr::Literal([0.0; 4])),
                    then_body: vec![Stmt::Break],
                    else_body: vec![],
                },
            ],
        },
    ]);
    let Stmt::Loop { body: inner } = &body[1] else { panic!("{body:#?}") };
    assert!(inner.iter().any(|s| matches!(s, Stmt::Assign { dst, .. } if dst.reg == RegRef::fixed(TMP, 1))), "{body:#?}");
}

#[test]
fn constant_integer_operations_fold_and_float_ones_do_not() {
    let int_add = Expr::IntBinary(IntBinOp::Add, Box::new(Expr::Bits([1; 4])), Box::new(Expr::Bits([u32::MAX; 4])));
    let float_add = Expr::Binary(BinOp::Add, Box::new(Expr::Literal([1.0; 4])), Box::new(Expr::Literal([2.0; 4])));
    let body = optimized(vec![assign(OUT, 0, 1, int_add), assign(OUT, 0, 2, float_add.clone())]);
    let Stmt::Assign { value: Expr::Compose(parts), .. } = &body[0] else { panic!("{body:#?}") };
    assert_eq!(parts[0], Expr::Literal([0.0; 4]));
    assert_eq!(parts[1], Expr::Swizzle(Box::new(float_add), [1; 4]));
}

#[test]
fn a_read_of_the_destination_in_between_blocks_forwarding() {
    // PV.x = v0.x * 2; o0.x = R1.x (the old R1.x); R1.x = PV.x: forwarding would let o0.x see
    // the product
    let mul = Expr::Binary(BinOp::Mul, Box::new(read(IN, 0, [0; 4])), Box::new(Expr::Literal([2.0; 4])));
    let body = vec![assign(TMP, 6, 1, mul.clone()), assign(OUT, 0, 1, t(1, 0)), assign(TMP, 1, 1, t(6, 0))];
    let mut m = module(body.clone());
    forward::run(&mut m, &mut Budget { left: 1 << 20 }).unwrap();
    assert_eq!(m.body, body);
    // without the read in between it forwards
    let body = vec![assign(TMP, 6, 1, mul.clone()), assign(OUT, 0, 2, t(2, 0)), assign(TMP, 1, 1, t(6, 0))];
    let mut m = module(body);
    forward::run(&mut m, &mut Budget { left: 1 << 20 }).unwrap();
    assert_eq!(m.body[0], assign(TMP, 1, 1, Expr::Swizzle(Box::new(mul), [0; 4])));
    assert_eq!(m.body[2], assign(TMP, 6, 1, t(1, 0)));
}
