//! The opcode pages docs/opcodes/<family>.md and the README's opcode summary lines are generated
//! from the opcode tables in the source (`shrec::formats::opcodes`); this test regenerates them
//! and fails when the committed text differs. To update the files:
//! `SHREC_BLESS=1 cargo test --release -p shrec --test integration opcode_docs::`.

use crate::common;

use shrec::formats::opcodes;

const UPDATE: &str = "SHREC_BLESS=1 cargo test --release -p shrec --test integration opcode_docs::";

#[test]
fn opcode_pages_match_the_tables() {
    let bless = std::env::var_os("SHREC_BLESS").is_some();
    let root = common::repo();
    let mut stale = Vec::new();
    for (family, rows) in opcodes::families() {
        let path = root.join(format!("docs/opcodes/{family}.md"));
        let want = opcodes::markdown(family, &rows);
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        if have != want {
            if bless {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &want).unwrap();
            } else {
                stale.push(path.display().to_string());
            }
        }
    }
    assert!(stale.is_empty(), "{} differ from the opcode tables; run: {UPDATE}", stale.join(", "));
}

/// The README has one summary line per family (the counts), between the opcode-table markers.
#[test]
fn readme_summary_matches_the_tables() {
    let bless = std::env::var_os("SHREC_BLESS").is_some();
    let path = common::repo().join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (begin, end) = ("<!-- opcode-summary: generated, see tests/integration/opcode_docs.rs -->\n", "<!-- /opcode-summary -->\n");
    let i = readme.find(begin).map(|i| i + begin.len()).expect("README opcode-summary begin marker");
    let j = readme[i..].find(end).map(|j| i + j).expect("README opcode-summary end marker");
    let want: String = opcodes::families().iter().map(|(f, rows)| opcodes::summary(f, rows) + "\n").collect();
    if readme[i..j] != want {
        assert!(bless, "README.md opcode summary differs from the opcode tables; run: {UPDATE}\nwant:\n{want}");
        std::fs::write(&path, format!("{}{want}{}", &readme[..i], &readme[j..])).unwrap();
    }
    assert!(readme.lines().count() <= 300, "README.md must stay within 300 lines");
}

/// Every GX2 opcode has one row and one encoding per table, and the decoder's lookups invert the
/// table (from_code(code()) is the opcode).
#[test]
fn gx2_table_encodings_are_unique() {
    use shrec::formats::gx2::isa::{AluCfOp, AluOp, CfOp, ExpOp, TexOp, VtxOp};
    for &o in CfOp::ALL {
        assert_eq!(CfOp::from_code(o.code()), Some(o));
    }
    for &o in AluCfOp::ALL {
        assert_eq!(AluCfOp::from_code(o.code()), Some(o));
    }
    for &o in ExpOp::ALL {
        assert_eq!(ExpOp::from_code(o.code()), Some(o));
    }
    for &o in TexOp::ALL {
        assert_eq!(TexOp::from_code(o.code()), Some(o));
    }
    for &o in VtxOp::ALL {
        assert_eq!(VtxOp::from_code(o.code()), Some(o));
    }
    for &o in AluOp::ALL {
        assert_eq!(AluOp::from_code(o.info().op3, o.code()), Some(o));
        assert_eq!(AluOp::from_name(o.name()), Some(o));
    }
}

/// The PICA table's opcode ranges invert `from_opcode`, cover exactly the used opcodes, and its
/// source counts are what the decoder produces for each mnemonic; an unused opcode is a typed
/// error naming the instruction index and the word.
#[test]
fn pica_table_agrees_with_the_decoder() {
    use shrec::formats::pica::decode::{decode, Instr, Op};
    use shrec::formats::pica::error::PicaError;
    let mut used = 0;
    for opcode in 0..64u32 {
        let word = opcode << 26;
        match Op::from_opcode(opcode) {
            Some(op) => {
                used += 1;
                let i = op.info();
                assert!((i.lo..=i.hi).contains(&opcode));
                let srcs = match decode(&[word], &[0], 0).unwrap() {
                    Instr::Arith { srcs, .. } => srcs.len(),
                    Instr::Mad { .. } => 3,
                    Instr::Cmp { .. } => 2,
                    Instr::Simple(_) | Instr::Flow { .. } | Instr::Setemit { .. } => 0,
                };
                assert_eq!(srcs, i.srcs as usize, "{op}");
            }
            None => assert_eq!(decode(&[word], &[0], 0), Err(PicaError::UnusedOpcode { pc: 0, word, opcode })),
        }
    }
    assert_eq!((Op::ALL.len(), used), (39, 54));
}
