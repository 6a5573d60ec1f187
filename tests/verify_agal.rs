//! Verification by execution of the AGAL path: see `shrec::verify`.

use shrec::formats::Stage;
use shrec::verify::agal::{self, asm, Case, RunOptions, TestProgram};
use shrec::verify::Comparison;

fn vp(name: &str, text: &str, cases: Vec<Case>) -> TestProgram {
    TestProgram {
        name: name.into(),
        bytes: asm::assemble(2, Stage::Vertex, text).unwrap(),
        cases,
        textures: vec![],
        reproduce: "cargo test --release --test verify_agal".into(),
    }
}

#[test]
fn smoke() {
    let Some(gpu) = agal::gpu() else { return };
    let case = Case {
        attributes: vec![[1.0, 2.0, 3.0, 4.0], [0.5, -0.25, 8.0, 1.0]],
        constants: vec![[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0], [10.0, 20.0, 30.0, 40.0]],
        ..Default::default()
    };
    let p = vp("smoke", "m44 op, va0, vc0\nadd v0, va1, vc4\nmov v1.zw, va0.xy", vec![case]);
    let c = agal::run(gpu, &p, RunOptions::default());
    for r in &c.reports {
        println!("{r}");
    }
    println!("{}", c.summary("agal"));
    assert_eq!(c.mismatches, 0);
}
