//! Resource caps (issue "Robustness", `src/limits.rs`): each cap refuses an oversized shader
//! with an error naming it, and every real shader of the corpus stays far below each cap.

use crate::common;

use shrec::detect::ContainerKind;
use shrec::formats::{self, Stage, TranslateOptions};
use shrec::ir::Stmt;
use shrec::limits;
use shrec_verify::{agal, pica};

/// AGAL2 fragment program with `depth` nested `ife … eif` blocks around one move.
fn nested_agal_ifs(depth: usize) -> Vec<u8> {
    let mut text = String::new();
    text.push_str("mov ft0, fc0\n");
    text.push_str(&"ife ft0.x, fc1.x\n".repeat(depth));
    text.push_str("add ft0, ft0, fc1\n");
    text.push_str(&"eif\n".repeat(depth));
    text.push_str("mov oc, ft0\n");
    agal::asm::assemble(2, Stage::Pixel, &text).expect("assembles")
}

#[test]
fn nesting_cap_refuses_deeper_control_flow_and_allows_the_limit() {
    let opts = TranslateOptions::default();
    let at_limit = nested_agal_ifs(limits::MAX_NESTING);
    let t = formats::translate(ContainerKind::Agal, &at_limit, 0, &opts).expect("the limit itself translates");
    assert_eq!(limits::measure(&t.module.body).1, limits::MAX_NESTING);

    let over = nested_agal_ifs(limits::MAX_NESTING + 1);
    let e = formats::translate(ContainerKind::Agal, &over, 0, &opts).expect_err("one level deeper is refused");
    assert!(e.reason().contains("resource cap") && e.reason().contains(&format!("nests {} blocks deep", limits::MAX_NESTING + 1)), "{}", e.reason());
}

#[test]
fn microcode_cap_refuses_an_oversized_pica_program_with_its_offset() {
    let words = limits::MAX_MICROCODE_BYTES / 4 + 1;
    let mut a = pica::asm::Asm { code: vec![pica::asm::opcode("nop") << 26; words - 1], ..Default::default() };
    a.code.push(pica::asm::opcode("end") << 26);
    let bytes = pica::dvlb(&a, 0, &[(0, 0, 0xF)], &[]);
    let e = formats::translate(ContainerKind::Dvlb, &bytes, 0, &TranslateOptions::default()).expect_err("over the cap");
    assert!(e.reason().contains("resource cap") && e.reason().contains(&format!("{} bytes of microcode", 4 * words)), "{}", e.reason());
    assert_eq!(e.offset(), Some(12 + 0x28), "the code blob's offset: DVLB header (12 bytes) + the DVLP's code offset");

    // The same program one word shorter passes the microcode cap (whatever later stages say).
    a.code.remove(0);
    let bytes = pica::dvlb(&a, 0, &[(0, 0, 0xF)], &[]);
    if let Err(e) = formats::translate(ContainerKind::Dvlb, &bytes, 0, &TranslateOptions::default()) {
        assert!(!e.reason().contains("microcode"), "{}", e.reason());
    }
}

#[test]
fn ir_statement_cap_refuses_a_module_over_it() {
    let bytes = nested_agal_ifs(1);
    let mut t = formats::translate(ContainerKind::Agal, &bytes, 0, &TranslateOptions::default()).unwrap();
    shrec::ir::validate(&t.module).expect("a real module passes");
    t.module.body = vec![Stmt::Return; limits::MAX_IR_STATEMENTS + 1];
    let e = shrec::error::ShaderError::from(shrec::ir::validate(&t.module).expect_err("over the cap"));
    assert!(
        e.reason().contains("resource cap") && e.reason().contains(&format!("{} IR statements", limits::MAX_IR_STATEMENTS + 1)),
        "{}",
        e.reason()
    );
}

/// Every corpus shader sits far below every cap: the caps can never refuse a real shader.
/// Prints the maxima quoted in `src/limits.rs` and README.
#[test]
fn corpus_shaders_stay_far_below_every_cap() {
    let opts = TranslateOptions::default();
    let (mut shaders, mut max_statements, mut max_depth, mut max_hlsl, mut max_container) = (0, 0, 0, 0, 0);
    let files = walkdir::WalkDir::new(common::repo().join("tests/corpus")).into_iter().map(|e| e.unwrap().into_path());
    for path in files.filter(|p| p.is_file()) {
        let bytes = std::fs::read(&path).unwrap();
        for c in shrec::detect::detect(&bytes) {
            let data = &bytes[c.offset..c.offset + c.len];
            let Ok(entries) = formats::entries(c.kind, data) else { continue };
            max_container = max_container.max(data.len());
            for e in entries {
                let Ok(t) = formats::translate(c.kind, data, e.index, &opts) else { continue };
                let (statements, depth) = limits::measure(&t.module.body);
                max_statements = max_statements.max(statements);
                max_depth = max_depth.max(depth);
                max_hlsl = max_hlsl.max(shrec::hlsl::write(&t.module).len());
                shaders += 1;
            }
        }
    }
    println!("corpus: {shaders} shaders; maxima: container {max_container} bytes, {max_statements} IR statements, nesting {max_depth}, HLSL {max_hlsl} bytes");
    assert!(shaders > 100, "the corpus was found ({shaders} shaders)");
    assert!(max_container * 16 < limits::MAX_MICROCODE_BYTES);
    assert!(max_statements * 16 < limits::MAX_IR_STATEMENTS);
    assert!(max_depth * 4 < limits::MAX_NESTING);
    assert!(max_hlsl * 16 < limits::MAX_HLSL_BYTES);
}

/// PICA forward jumps nest without a hardware stack: `depth` jumps, each over the next. The
/// structured lowering would nest one `if` per jump; past its depth limit the program takes
/// the flat pc-dispatch form instead of failing (the PICA issue: "never a failure").
fn nested_pica_jumps(depth: u32) -> Vec<u8> {
    let mut a = pica::asm::Asm::default();
    for i in 0..depth {
        a.flowu("jmpu", i % 16, 2 * depth - i, 0);
    }
    for _ in depth..=2 * depth {
        a.simple("nop");
    }
    a.op("mov", "o0", &["v0"], shrec::formats::pica::decode::Rel::None);
    a.simple("end");
    pica::dvlb(&a, 0, &[(0, 0, 0xF)], &[])
}

#[test]
fn deeply_nested_pica_jumps_fall_back_to_pc_dispatch() {
    let opts = TranslateOptions::default();
    let shallow = formats::translate(ContainerKind::Dvlb, &nested_pica_jumps(4), 0, &opts).expect("translates");
    assert!(shrec::formats::pica::lower::is_structured(&shallow.module), "4 nested jumps are structured");
    for depth in [200, 1000] {
        let t = formats::translate(ContainerKind::Dvlb, &nested_pica_jumps(depth), 0, &opts)
            .unwrap_or_else(|e| panic!("{depth} nested jumps: {}", e.reason()));
        assert!(!shrec::formats::pica::lower::is_structured(&t.module), "{depth} nested jumps take pc-dispatch");
        assert!(limits::measure(&t.module.body).1 <= limits::MAX_NESTING);
    }
}
