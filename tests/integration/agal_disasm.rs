//! `shrec disasm` of AGAL agrees, token by token, with the corpus disassemblies (`.dis.txt`,
//! written by the independent checker tools/agal_dis.py) and with the AGALMiniAssembler sources
//! (`.agal.txt`) the corpus binaries were assembled from.

use shrec::detect::ContainerKind;
use shrec::formats::{self, TranslateOptions};
use std::path::Path;

fn corpus() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/agal")
}

/// Our listing without its comment header and indentation.
fn listing(bytes: &[u8]) -> Vec<String> {
    let text = formats::disasm(ContainerKind::Agal, bytes, 0, &TranslateOptions::default()).expect("disassembles");
    text.lines().filter(|l| !l.starts_with("//")).map(|l| l.trim().to_string()).collect()
}

#[test]
fn disassembly_matches_the_independent_checker() {
    let mut files = 0;
    for e in walkdir::WalkDir::new(corpus()) {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().to_string();
        let Some(stem) = name.strip_suffix(".dis.txt") else { continue };
        let bin = e.path().with_file_name(format!("{stem}.agal"));
        let want: Vec<String> = std::fs::read_to_string(e.path())
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| l.trim().to_string())
            .collect();
        let got = listing(&std::fs::read(&bin).unwrap());
        assert_eq!(got, want, "{}", bin.display());
        files += 1;
    }
    assert_eq!(files, 10, "the corpus has 10 .dis.txt listings");
}

/// Each assembly source's instruction lines (comments and blank lines dropped) name the same
/// opcodes in the same order as the disassembly of its binary.
#[test]
fn opcodes_match_the_assembly_sources() {
    let mut files = 0;
    for e in walkdir::WalkDir::new(corpus()) {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().to_string();
        let Some(stem) = name.strip_suffix(".agal.txt") else { continue };
        let bin = e.path().with_file_name(format!("{stem}.agal"));
        if !bin.exists() {
            continue; // the NONSTANDARD program has no binary (negative indirect offset)
        }
        let src = std::fs::read_to_string(e.path()).unwrap();
        let want: Vec<String> = src
            .lines()
            .map(|l| l.split("//").next().unwrap().trim())
            .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with(';'))
            .map(|l| l.split_whitespace().next().unwrap().to_lowercase())
            .collect();
        let got: Vec<String> = listing(&std::fs::read(&bin).unwrap()).iter().map(|l| l.split(' ').next().unwrap().to_string()).collect();
        assert_eq!(got, want, "{}", bin.display());
        files += 1;
    }
    assert!(files >= 48, "checked {files} assembly sources");
}
