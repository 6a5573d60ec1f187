//! `shrec disasm` on every corpus .gsh that has its latte-assembler source next to it matches the
//! source instruction by instruction (CF lines, ALU group lines, TEX lines, END_OF_PROGRAM).
//! Normalization only removes notation the assembler accepts two ways: a literal's raw-bits form
//! `(0x3F800000, 1.0f)` vs `1.0f`, the group number in `PVn`/`PSn`, an explicit `.xyzw`, spacing.

use shrec::detect::ContainerKind;
use shrec::formats::{self, TranslateOptions};
use std::path::PathBuf;

fn normalize(line: &str) -> Option<String> {
    let line = line.split(';').next().unwrap().trim();
    if line.is_empty() {
        return None;
    }
    let mut s = String::new();
    // literal (0x..., v) -> v
    let mut rest = line;
    while let Some(p) = rest.find("(0x") {
        s.push_str(&rest[..p]);
        let close = rest[p..].find(')').unwrap() + p;
        let inner = &rest[p + 1..close];
        s.push_str(inner.split(',').nth(1).unwrap().trim());
        rest = &rest[close + 1..];
    }
    s.push_str(rest);
    // PVn / PSn -> PV / PS
    let mut t = String::new();
    let b: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < b.len() {
        if i + 1 < b.len() && b[i] == 'P' && (b[i + 1] == 'V' || b[i + 1] == 'S') && (i == 0 || !b[i - 1].is_alphanumeric()) {
            t.push(b[i]);
            t.push(b[i + 1]);
            i += 2;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            continue;
        }
        t.push(b[i]);
        i += 1;
    }
    let t = t.replace(".xyzw ", " ").replace(".xyzw,", ",");
    let t = t.strip_suffix(".xyzw").unwrap_or(&t).to_string();
    let t = t.replace(',', " , ");
    Some(t.split_whitespace().collect::<Vec<_>>().join(" "))
}

#[test]
fn disassembly_matches_latte_assembler_sources() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/gx2");
    let mut checked_files = 0;
    let mut checked_lines = 0;
    for e in walkdir::WalkDir::new(&root).sort_by_file_name() {
        let p = e.unwrap().into_path();
        if p.extension().is_none_or(|x| x != "gsh") {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        for (idx, ext) in [(0u32, "vsh"), (1, "psh")] {
            let src = p.with_extension(ext);
            let Ok(text) = std::fs::read_to_string(&src) else { continue };
            let ours = formats::disasm(ContainerKind::Gfd, &bytes, idx, &TranslateOptions::default()).unwrap();
            let want: Vec<String> = text.lines().filter_map(normalize).collect();
            let got: Vec<String> = ours.lines().filter_map(normalize).collect();
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{} line {k}\n--- ours ---\n{ours}", src.display());
            }
            assert_eq!(got.len(), want.len(), "{}\n{ours}", src.display());
            checked_files += 1;
            checked_lines += got.len();
        }
    }
    assert_eq!(checked_files, 6, "3 .gsh files with .vsh + .psh sources");
    assert!(checked_lines > 40, "{checked_lines}");
}
