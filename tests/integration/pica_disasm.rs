//! PICA decoder/disassembler against the corpus: every `.shbin` decodes completely, and the
//! instruction sequence equals the mnemonics of its picasso sources (`.pica`, `.v.pica` +
//! `.g.pica`, `.vsh`), modulo picasso's automatic choices (inverted forms `dphi/dsti/sgei/slti/madi`,
//! padding `nop`s). nihstro's "nihcode" sources (`.vsh`) are compared the same way after removing
//! their notation: `//` comments and the block terminators `else` / `endif` / `endloop` (nihcode
//! closes scopes with them; the binary encodes the scope in the opening instruction's dest/num,
//! so they are not instructions).

use crate::common;

use common::repo;
use shrec::formats::pica::{decode, disasm, dvlb};
use std::path::{Path, PathBuf};

/// Every bundled .shbin, sorted.
fn shbins() -> Vec<PathBuf> {
    common::files_with_extension(&repo().join("tests/corpus/pica"), "shbin")
}

fn normalize(m: &str) -> Option<String> {
    let m = m.to_ascii_lowercase();
    Some(match m.as_str() {
        "nop" => return None,
        "dphi" => "dph".into(),
        "dsti" => "dst".into(),
        "sgei" => "sge".into(),
        "slti" => "slt".into(),
        "madi" => "mad".into(),
        "for" => "loop".into(),
        // nihcode block terminators (see the module comment).
        "else" | "endif" | "endloop" => return None,
        _ => m,
    })
}

fn source_mnemonics(sources: &[PathBuf]) -> Vec<String> {
    let mut v = Vec::new();
    for s in sources {
        for line in std::fs::read_to_string(s).unwrap().lines() {
            // `;` comments (picasso) and `//` comments (nihcode)
            let mut l = line.split(';').next().unwrap().split("//").next().unwrap().trim();
            // labels (possibly followed by an instruction)
            while let Some(p) = l.find(':') {
                let (head, rest) = l.split_at(p);
                if head.split_whitespace().count() == 1 && !head.contains('.') {
                    l = rest[1..].trim();
                } else {
                    break;
                }
            }
            if l.is_empty() || l.starts_with('.') {
                continue;
            }
            let m = l.split_whitespace().next().unwrap();
            v.extend(normalize(m));
        }
    }
    v
}

fn sources_of(shbin: &Path) -> Vec<PathBuf> {
    let stem = shbin.file_stem().unwrap().to_str().unwrap();
    let dir = shbin.parent().unwrap();
    for set in [vec![format!("{stem}.pica")], vec![format!("{stem}.v.pica"), format!("{stem}.g.pica")], vec![format!("{stem}.vsh")]] {
        let found: Vec<PathBuf> = set.iter().map(|n| dir.join(n)).filter(|p| p.exists()).collect();
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

#[test]
fn every_corpus_word_decodes() {
    let mut n = 0;
    let mut dvles = 0;
    for f in shbins() {
        let b = std::fs::read(&f).unwrap();
        let p = dvlb::parse_program(&b).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        dvles += p.dvles.len();
        for pc in 0..p.code.len() {
            decode::decode(&p.code, &p.opdescs, pc).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        }
        disasm::disassemble(&p).unwrap();
        n += 1;
    }
    assert_eq!((n, dvles), (63, 66));
}

#[test]
fn instruction_sequences_match_the_sources() {
    let mut matched = Vec::new();
    let mut mismatched = Vec::new();
    for f in shbins() {
        let src = sources_of(&f);
        if src.is_empty() {
            continue;
        }
        let b = std::fs::read(&f).unwrap();
        // The text `shrec disasm` prints: one instruction per non-comment line.
        let text = shrec::formats::pica::disasm(&b, 0).unwrap();
        let got: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with(';') && !l.ends_with(':')) // comments, jump labels
            .filter_map(|l| normalize(l.split_whitespace().next().unwrap()))
            .collect();
        let want = source_mnemonics(&src);
        if got == want {
            matched.push(f);
        } else {
            mismatched.push((f, got, want));
        }
    }
    for (f, g, w) in &mismatched {
        eprintln!("{}:\n  got  {g:?}\n  want {w:?}", f.display());
    }
    common::log_uncaptured(&format!("pica disasm vs sources: {} pairs match, {} differ", matched.len(), mismatched.len()));
    assert!(mismatched.is_empty(), "{} file(s) differ from their sources (see above)", mismatched.len());
    assert!(matched.len() >= 10, "only {} files match their sources", matched.len());
}

#[test]
fn operand_text_matches_sources() {
    // geoshader: spot-check full lines, registers after alias resolution.
    let f = repo().join("tests/corpus/pica/devkitPro+3ds-examples/graphics/gpu/geoshader/source/program.shbin");
    let p = dvlb::parse_program(&std::fs::read(f).unwrap()).unwrap();
    let t = |pc| disasm::instr_text(&decode::decode(&p.code, &p.opdescs, pc).unwrap());
    assert_eq!(t(1), "mov o0.w, c95.yyyy");
    assert_eq!(t(16), "call 26, 15");
    assert_eq!(t(36), "setemit 2, prim");
    assert_eq!(t(41), "dp4 o0.x, c0, r8");
    assert_eq!(p.dvles[1].gs_mode().unwrap(), dvlb::GsMode::Point);
}
