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
    all.iter()
        .filter(|p| p.extension().is_some_and(|e| e == "asm"))
        .map(|p| (p.with_extension("bin"), p.clone()))
        .collect()
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
