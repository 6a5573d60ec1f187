//! The C++ cache-key helper `shrec_pica_dvlb_length` (shader_common.h) compiled with g++ agrees
//! with shrec's own DVLB length (`dvlb::probe`, which the cache key hashes) on every corpus
//! `.shbin`, on the same bytes with trailing padding, on truncations and on corrupted headers.
//!
//! `cargo test --release -p shrec-verify --test no_gpu pica_dvlb_length_cpp::` (needs g++; a missing g++ FAILS unless
//! SHREC_ALLOW_MISSING_TOOLS=1).

use crate::common;

use common::{have_tool, repo, run, tmpdir};
use shrec::formats::pica::dvlb;
use shrec_verify::Rng;
use std::process::Command;

const MAIN: &str = r#"
#include "shader_common.h"
#include <cstdio>
#include <vector>
int main(int argc, char** argv)
{
    for (int i = 1; i < argc; i++) {
        FILE* f = std::fopen(argv[i], "rb");
        if (!f) return 2;
        std::vector<uint8_t> b;
        int c;
        while ((c = std::fgetc(f)) != EOF) b.push_back((uint8_t)c);
        std::fclose(f);
        // A null pointer is never read when size is 0.
        std::printf("%zu\n", shrec_pica_dvlb_length(b.empty() ? nullptr : b.data(), b.size()));
    }
    return 0;
}
"#;

#[test]
fn cpp_helper_matches_probe() {
    if !have_tool("g++") {
        return;
    }
    let dir = tmpdir("pica-dvlb-length");
    let src = dir.join("main.cpp");
    std::fs::write(&src, MAIN).unwrap();
    let exe = dir.join("dvlb_length");
    run(Command::new("g++")
        .args(["-std=c++17", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O1", "-fsanitize=address,undefined"])
        .arg("-I")
        .arg(repo())
        .arg(&src)
        .arg("-o")
        .arg(&exe));
    let shbins = common::files_with_extension(&repo().join("tests/corpus/pica"), "shbin");
    assert!(shbins.len() >= 20, "corpus has {} .shbin files", shbins.len());
    let mut rng = Rng::new(5);
    let mut variants: Vec<(String, Vec<u8>)> = vec![("empty".into(), vec![]), ("DVOJ".into(), b"DVOJ\x01\0\0\0".to_vec())];
    for f in &shbins {
        let bytes = std::fs::read(f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let len = dvlb::probe(&bytes).expect("corpus DVLB");
        variants.push((name.to_string(), bytes.clone()));
        let mut padded = bytes.clone();
        padded.extend([0xAA; 13]);
        variants.push((format!("{name}+pad"), padded));
        for cut in [len - 1, len / 2, 0x1C, 5, 3] {
            variants.push((format!("{name}[..{cut}]"), bytes[..cut.min(bytes.len())].to_vec()));
        }
        for k in 0..24 {
            // Corrupt one byte of the headers (DVLB, DVLP, first DVLE) or anywhere.
            let mut b = bytes.clone();
            let at = if k < 16 { rng.below(0x90.min(b.len() as u64)) as usize } else { rng.below(b.len() as u64) as usize };
            b[at] ^= 1 << rng.below(8);
            variants.push((format!("{name} bit flip at {at}"), b));
        }
    }
    let paths: Vec<_> = variants
        .iter()
        .enumerate()
        .map(|(i, (_, b))| {
            let p = dir.join(format!("{i}.bin"));
            std::fs::write(&p, b).unwrap();
            p
        })
        .collect();
    let mut out = String::new();
    for chunk in paths.chunks(200) {
        out.push_str(&run(Command::new(&exe).args(chunk)));
    }
    let got: Vec<usize> = out.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(got.len(), variants.len());
    let (mut valid, mut mismatches) = (0, vec![]);
    for ((name, b), cpp) in variants.iter().zip(&got) {
        let rust = dvlb::probe(b).unwrap_or(0);
        valid += (rust != 0) as usize;
        if rust != *cpp {
            mismatches.push(format!("{name}: probe {rust}, C++ {cpp}"));
        }
    }
    common::log_uncaptured(&format!(
        "shrec_pica_dvlb_length: {} inputs ({} DVLBs, {valid} accepted), {} disagreements",
        variants.len(),
        shbins.len(),
        mismatches.len()
    ));
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    assert!(valid >= 2 * shbins.len(), "every corpus file and its padded copy are DVLBs");
    let _ = std::fs::remove_dir_all(&dir);
}
