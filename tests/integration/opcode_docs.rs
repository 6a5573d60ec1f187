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
    for (family, rows) in shrec::formats::opcode_tables() {
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
    let want: String = shrec::formats::opcode_tables().iter().map(|(f, rows)| opcodes::summary(f, rows) + "\n").collect();
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

/// The AGAL table inverts `Op::from_code` / `Op::from_name` and covers exactly the opcode numbers
/// the decoder accepts; an unknown opcode is a typed error (Flash Error #3620) naming the token's
/// byte offset, and the rejected row (`ted`) is refused with the table's reason.
#[test]
fn agal_table_agrees_with_the_decoder() {
    use shrec::formats::agal::decode::{decode, DecodeOptions, Op};
    use shrec::formats::agal::error::{AgalError, TokenError};
    for &o in Op::ALL {
        assert_eq!(Op::from_code(o.info().code), Some(o));
        assert_eq!(Op::from_name(o.name()), Some(o));
    }
    // AGAL3 fragment program: header, then one token whose opcode field is `code` (all other
    // fields zero), after a valid first token.
    let program = |code: u32| {
        let mut p = vec![0xA0, 3, 0, 0, 0, 0xA1, 1];
        let mut mov = [0u8; 24];
        mov[4..8].copy_from_slice(&0x020F_0000u32.to_le_bytes()); // mov ft0, v0 (dest ft0.xyzw)
        mov[8..16].copy_from_slice(&(4u64 << 32 | 0xE4 << 24).to_le_bytes());
        p.extend_from_slice(&mov);
        let mut t = [0u8; 24];
        t[0..4].copy_from_slice(&code.to_le_bytes());
        p.extend_from_slice(&t);
        p
    };
    assert!(decode(&program(0), DecodeOptions::default()).is_err(), "mov without operands is invalid, but its opcode is known");
    let mut known = 0;
    for code in 0..0x40u32 {
        let err = decode(&program(code), DecodeOptions { allow_agal4: true }).err();
        let bad_opcode = matches!(err, Some(AgalError::Token { offset: 31, token: 2, reason: TokenError::BadOpcode { code: c }, .. }) if c == code);
        match Op::from_code(code) {
            Some(op) => {
                known += 1;
                assert!(!bad_opcode, "{op} decodes as an unknown opcode");
                if let Some(reason) = op.status().reason() {
                    assert!(
                        matches!(err, Some(AgalError::Token { reason: TokenError::Rejected { op: o, reason: r }, .. }) if o == op && r == reason),
                        "{err:?}"
                    );
                }
            }
            None => assert!(bad_opcode, "0x{code:02X}: {err:?}"),
        }
    }
    assert_eq!((Op::ALL.len(), known), (43, 43));
    assert_eq!(Op::ALL.iter().filter(|o| o.status().is_rejected()).count(), 1);
}

/// The Xenos tables are in encoding order (vector 0-29, scalar 0-50, CF 0-15), invert
/// `from_code`, and the decoder refuses the ALU field values no row has (vector 30-31, scalar
/// 51-63) with a typed error naming the CF instruction and slot.
#[test]
fn xenos_tables_agree_with_the_decoder() {
    use shrec::formats::xenos::error::XenosError;
    use shrec::formats::xenos::ucode::{decode, CfOp, FetchOp, ScalarOp, VectorOp};
    for (i, &o) in VectorOp::ALL.iter().enumerate() {
        assert_eq!((o.code(), VectorOp::from_code(o.code())), (i as u32, Some(o)));
    }
    for (i, &o) in ScalarOp::ALL.iter().enumerate() {
        assert_eq!((o.code(), ScalarOp::from_code(o.code())), (i as u32, Some(o)));
    }
    for (i, &o) in CfOp::ALL.iter().enumerate() {
        assert_eq!((o.code(), CfOp::from_code(o.code())), (i as u32, o));
    }
    for &o in FetchOp::ALL {
        assert_eq!(FetchOp::from_code(o.code()), Some(o));
    }
    assert_eq!((VectorOp::ALL.len(), ScalarOp::ALL.len(), FetchOp::ALL.len(), CfOp::ALL.len()), (30, 51, 9, 16));
    // One CF triple: `exece` of one ALU slot at address 1, then `nop`; slot 1 holds the ALU word.
    let program = |vector: u32, scalar: u32| {
        let exece = 2u64 << 44 | 1 << 12 | 1; // opcode 2, count 1, address 1, sequence 0 (ALU)
        let cf = [exece as u32, (exece >> 32) as u32, 0];
        vec![cf[0], cf[1], cf[2], scalar << 26, 0, vector << 24]
    };
    for vector in 0..32 {
        for scalar in 0..64 {
            let r = decode(&program(vector, scalar));
            let known = VectorOp::from_code(vector).is_some() && ScalarOp::from_code(scalar).is_some();
            match r {
                Ok(_) => assert!(known, "{vector} / {scalar} decoded"),
                Err(e) => {
                    assert!(!known, "{vector} / {scalar}: {e}");
                    assert_eq!(e, XenosError::UnknownAluOpcode { cf: 0, slot: 1, vector, scalar, microcode_base: 0 });
                    assert_eq!(e.microcode_offset(), Some(12));
                }
            }
        }
    }
}
