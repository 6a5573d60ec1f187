//! Xenos disassembly compared instruction by instruction with Microsoft's listings in the corpus.

use shrec::formats::xenos::{container, disasm, ucode};
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/xenos")
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Normalises one listing line: comments, `+` co-issue marks and whitespace are cosmetic.
fn norm(l: &str) -> Option<String> {
    let l = l.split("//").next().unwrap().trim();
    let l = l.strip_prefix("+ ").unwrap_or(l).trim();
    if l.is_empty() {
        return None;
    }
    let first = l.split_whitespace().next().unwrap();
    if first.starts_with("dcl_") || matches!(first, "def" | "defi" | "defb" | "defconst" | "config" | "xps_3_0" | "xvs_3_0" | "#if" | "#endif") {
        return None;
    }
    Some(l.split_whitespace().collect::<Vec<_>>().join(" "))
}

pub fn asm_pairs() -> Vec<(PathBuf, PathBuf)> {
    let mut all = Vec::new();
    files(&corpus(), &mut all);
    all.sort();
    all.iter().filter(|p| p.extension().is_some_and(|e| e == "asm")).map(|p| (p.with_extension("bin"), p.clone())).collect()
}

#[test]
fn disassembly_matches_microsoft_listings() {
    let pairs = asm_pairs();
    assert_eq!(pairs.len(), 26, "listings in the corpus");
    let mut compared = 0;
    let mut failures = Vec::new();
    for (bin, asm) in &pairs {
        let bytes = std::fs::read(bin).unwrap();
        let c = container::parse(&bytes).unwrap();
        let p = ucode::decode(&c.microcode).unwrap();
        let ours: Vec<String> = disasm::listing_lines(&c, &p).iter().filter_map(|l| norm(l)).collect();
        let theirs: Vec<String> = std::fs::read_to_string(asm).unwrap().lines().filter_map(norm).collect();
        for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            if a != b {
                failures.push(format!("{}: line {i}: ours `{a}` vs listing `{b}`", asm.display()));
                break;
            }
        }
        if ours.len() != theirs.len() {
            failures.push(format!("{}: {} lines vs {}", asm.display(), ours.len(), theirs.len()));
        }
        compared += theirs.len();
    }
    assert!(failures.is_empty(), "{} mismatching listings:\n{}", failures.len(), failures.join("\n"));
    assert!(compared > 1000, "{compared}");
}

/// The instruction's filter overrides and FetchValidOnly=false are listed (names as Xenia's
/// disassembler; "keep" = the fetch constant's, not listed). No corpus listing has them.
#[test]
fn fetch_filter_overrides_are_listed() {
    let (bin, _) = &asm_pairs()[0];
    let c = container::parse(&std::fs::read(bin).unwrap()).unwrap();
    // tfetch2D r1, r3.xy, tf0 with every filter field "keep" (3; aniso 7) and FetchValidOnly
    let keep = ucode::Fetch {
        d: [1 | 3 << 5 | 1 << 12 | 1 << 19 | 0b100100 << 26, 0x688 | 3 << 12 | 3 << 14 | 3 << 16 | 7 << 18 | 3 << 24 | 3 << 26 | 1 << 28, 1 << 14],
    };
    assert_eq!(disasm::fetch_line(&keep, &c, 0), "tfetch2D r1, r3.xy, tf0");
    // MagFilter=point, MinFilter=linear, MipFilter=BASEMAP, AnisoFilter=max4to1, not valid-only
    let mut f = keep;
    f.d[0] &= !(1 << 19);
    f.d[1] = (f.d[1] & !(0x3FF << 12)) | 1 << 14 | 2 << 16 | 3 << 18 | 3 << 24 | 3 << 26;
    assert_eq!(
        disasm::fetch_line(&f, &c, 0),
        "tfetch2D r1, r3.xy, tf0, FetchValidOnly=false, MagFilter=point, MinFilter=linear, MipFilter=BASEMAP, AnisoFilter=max4to1"
    );
    // a 3D fetch also lists its volume filters
    f.d[2] = 2 << 14;
    f.d[1] = (f.d[1] & !(0xF << 24)) | 1 << 24;
    assert!(
        disasm::fetch_line(&f, &c, 0).ends_with("AnisoFilter=max4to1, VolMagFilter=linear, VolMinFilter=point"),
        "{}",
        disasm::fetch_line(&f, &c, 0)
    );
}
