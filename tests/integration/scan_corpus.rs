//! Scans `tests/corpus` (a copy of the shared corpus) and checks the result against the
//! `SOURCES.md` file lists and their "facts" tables:
//!
//! * every binary file (xenos `.bin/.psu/.vsu`, gx2 `.gsh`, pica `.shbin`, agal `.agal`) is found at
//!   offset 0 with the right family and stage(s); the gx2 parser edge cases behave as documented;
//! * Xenos keys equal the XXH3-64 column; GX2 keys equal the XXH3-64 of each program block; PICA
//!   keys are `xxh3_64_with_seed(dvlb, index)`;
//! * no text file (`.txt`, `.asm`, `.md`, `.pica`, `.vsh`, `.psh`, ...) yields a detection or error;
//! * the numbers of checked files are asserted, so an empty or partial corpus fails.

use shrec::detect::{detect, ContainerKind};
use shrec::formats::{Family, Stage};
use shrec::scan::{scan_dir, FoundShader, ScanResult};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Corpus files that shrec rejects on purpose live in `tests/corpus-invalid` (see its README).
fn corpus_invalid() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus-invalid")
}

/// Where a file listed in `<family>/SOURCES.md` is.
fn locate(family: &str, rel: &str) -> PathBuf {
    let p = corpus().join(family).join(rel);
    if p.exists() {
        p
    } else {
        corpus_invalid().join(family).join(rel)
    }
}

/// Rows (cells trimmed) of the markdown table that follows the first line starting with
/// `heading_prefix` (or the first table of the file for `None`).
fn table(md: &str, heading_prefix: Option<&str>) -> Vec<Vec<String>> {
    let mut lines = md.lines();
    if let Some(h) = heading_prefix {
        lines.by_ref().find(|l| l.starts_with(h)).unwrap_or_else(|| panic!("no heading {h:?}"));
    }
    let rows: Vec<Vec<String>> = lines
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim().trim_matches('|').split('|').map(|c| c.trim().to_string()).collect())
        .collect();
    // drop the header row and the --- separator
    rows.into_iter().skip(2).collect()
}

struct Sources {
    family: &'static str,
    /// Every file of the list: path relative to the family folder.
    files: Vec<String>,
    /// Facts table rows.
    facts: Vec<Vec<String>>,
}

fn sources(family: &'static str, facts_heading: &str) -> Sources {
    let md = std::fs::read_to_string(corpus().join(family).join("SOURCES.md")).expect("SOURCES.md");
    let files: Vec<String> = table(&md, None).into_iter().map(|r| r[0].clone()).collect();
    // "N files." line
    let declared: usize = md.lines().find_map(|l| l.strip_suffix(" files.").and_then(|n| n.trim().parse().ok())).expect("'N files.' line");
    assert_eq!(files.len(), declared, "{family}: file list length");
    let facts = table(&md, Some(facts_heading));
    assert!(!facts.is_empty(), "{family}: empty facts table");
    Sources { family, files, facts }
}

fn is_binary(path: &str) -> bool {
    [".bin", ".psu", ".vsu", ".gsh", ".shbin", ".agal"].iter().any(|e| path.ends_with(e))
}

fn shaders_of<'a>(r: &'a ScanResult, p: &Path) -> Vec<&'a FoundShader> {
    r.shaders.iter().filter(|s| s.path == p).collect()
}

fn stage_word(s: &FoundShader) -> &'static str {
    s.stage.name_in(s.family)
}

/// The program blocks (types 5, 7, 9) of a GFD, walked independently of shrec's parser.
fn gfd_program_blocks(b: &[u8]) -> Vec<&[u8]> {
    let be = |o: usize| u32::from_be_bytes(b[o..o + 4].try_into().unwrap()) as usize;
    let mut out = Vec::new();
    let mut pos = 0x20;
    while pos + 0x20 <= b.len() {
        let (ty, size) = (be(pos + 0x10), be(pos + 0x14));
        let data = pos + 0x20;
        if [5, 7, 9].contains(&ty) {
            out.push(&b[data..data + size]);
        }
        pos = data + size;
        if ty == 1 {
            break;
        }
    }
    out
}

#[test]
fn corpus_scan_matches_sources() {
    let root = corpus();
    assert!(root.join("README.md").is_file(), "tests/corpus is missing");
    let mut result = scan_dir(&root);
    let invalid = scan_dir(&corpus_invalid());
    result.shaders.extend(invalid.shaders);
    result.errors.extend(invalid.errors);
    result.files += invalid.files;

    let all = [
        sources("xenos", "## Container facts"),
        sources("gx2", "## GFD facts"),
        sources("pica", "## DVLB facts"),
        sources("agal", "## Bytecode facts"),
    ];

    let mut checked: BTreeMap<&str, usize> = BTreeMap::new();
    let mut listed: BTreeSet<PathBuf> = BTreeSet::new();
    let mut text_files = 0usize;
    let mut expected_errors: BTreeSet<PathBuf> = BTreeSet::new();

    for src in &all {
        for f in &src.files {
            let p = locate(src.family, f);
            assert!(p.is_file(), "listed file missing: {}", p.display());
            listed.insert(p.clone());
            if !is_binary(f) {
                let bytes = std::fs::read(&p).unwrap();
                assert!(detect(&bytes).is_empty(), "text file yields a detection: {f}");
                assert!(shaders_of(&result, &p).is_empty(), "text file yields shaders: {f}");
                assert!(!result.errors.iter().any(|e| e.path == p), "text file yields errors: {f}");
                text_files += 1;
            }
        }
        // every binary in the list has a facts row and vice versa
        let binaries: BTreeSet<&str> = src.files.iter().filter(|f| is_binary(f)).map(String::as_str).collect();
        let facts: BTreeSet<&str> = src.facts.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(binaries, facts, "{}: binaries vs facts rows", src.family);

        for row in &src.facts {
            let rel = &row[0];
            let p = locate(src.family, rel);
            let bytes = std::fs::read(&p).unwrap();
            let found = shaders_of(&result, &p);
            match src.family {
                "xenos" => {
                    // | path | type | XXH3-64 | virtualSize | physicalSize | microcode bytes | compiler |
                    assert_eq!(found.len(), 1, "{rel}: {found:?}");
                    let s = found[0];
                    assert_eq!((s.container, s.family, s.offset, s.index), (ContainerKind::Xenos, Family::Xenos, 0, 0), "{rel}");
                    let size: u64 = row[3].parse::<u64>().unwrap() + row[4].parse::<u64>().unwrap();
                    assert_eq!(s.length, size, "{rel}: length");
                    assert_eq!(s.length, bytes.len() as u64, "{rel}: length vs file");
                    assert_eq!(stage_word(s), row[1], "{rel}: stage");
                    assert_eq!(format!("0x{:016X}", s.key), row[2], "{rel}: key");
                }
                "gx2" => {
                    // | path | blocks | shaders (mode) | program sizes | CF ops used |
                    let cands = detect(&bytes);
                    assert_eq!(cands.len(), 1, "{rel}: {cands:?}");
                    assert_eq!((cands[0].kind, cands[0].offset, cands[0].len), (ContainerKind::Gfd, 0, bytes.len()), "{rel}");
                    let stages: Vec<&str> = found.iter().map(|s| stage_word(s)).collect();
                    match rel.as_str() {
                        "rust-wiiu+gfd/tests/header-only.gsh" => {
                            // file header + end-of-file block: a valid GFD with no shaders
                            assert!(found.is_empty(), "{rel}");
                            assert!(!result.errors.iter().any(|e| e.path == p), "{rel}: no error expected");
                        }
                        "rust-wiiu+gfd/tests/vertex-program.gsh" | "rust-wiiu+gfd/tests/vertex-header.gsh" => {
                            // program block without header / header block without program:
                            // the container is reported as an error naming the block, no shader
                            assert!(found.is_empty(), "{rel}");
                            let errs: Vec<_> = result.errors.iter().filter(|e| e.path == p).collect();
                            assert_eq!(errs.len(), 1, "{rel}: {errs:?}");
                            let e = errs[0];
                            assert_eq!((e.offset, e.kind, e.at), (Some(0), Some(ContainerKind::Gfd), Some(0x20)), "{rel}");
                            let want = if rel.ends_with("vertex-program.gsh") {
                                "vertex shader program block at 0x20 has no vertex shader header block"
                            } else {
                                "vertex shader header block at 0x20 has no program block"
                            };
                            assert!(e.reason.contains(want), "{rel}: {}", e.reason);
                            expected_errors.insert(p.clone());
                        }
                        _ => {
                            let want: Vec<String> = row[2].split(", ").map(|s| s.split(' ').next().unwrap().to_lowercase()).collect();
                            assert_eq!(stages, want, "{rel}: stages");
                            // program sizes column: "Vertex 368, Pixel 288"
                            let progs = gfd_program_blocks(&bytes);
                            let sizes: Vec<String> = row[3].split(", ").map(|s| s.split(' ').nth(1).unwrap().to_string()).collect();
                            assert_eq!(progs.iter().map(|p| p.len().to_string()).collect::<Vec<_>>(), sizes, "{rel}: program sizes");
                            let keys: Vec<u64> = found.iter().map(|s| s.key).collect();
                            assert_eq!(keys, progs.iter().map(|p| xxh3_64(p)).collect::<Vec<_>>(), "{rel}: keys");
                            assert!(found.iter().enumerate().all(|(i, s)| s.index == i as u32 && s.length == bytes.len() as u64));
                        }
                    }
                }
                "pica" => {
                    // | path | DVLEs | code words | operand descriptors | opcodes used |
                    let want: Vec<&str> = row[1].split(", ").map(|s| s.split(' ').next().unwrap()).collect();
                    let stages: Vec<&str> = found.iter().map(|s| stage_word(s)).collect();
                    assert_eq!(stages, want, "{rel}: stages");
                    let len = found[0].length as usize;
                    assert!(found.iter().all(|s| s.container == ContainerKind::Dvlb && s.offset == 0 && s.length as usize == len));
                    // the DVLB ends at its last table; only zero padding may follow
                    assert!(len <= bytes.len() && bytes.len() - len < 4, "{rel}: length {len} of {}", bytes.len());
                    assert!(bytes[len..].iter().all(|&b| b == 0), "{rel}: non-zero bytes after the DVLB");
                    for (i, s) in found.iter().enumerate() {
                        assert_eq!(s.index, i as u32);
                        assert_eq!(s.key, xxh3_64_with_seed(&bytes[..len], i as u64), "{rel}: key {i}");
                    }
                }
                "agal" => {
                    // | path | version | type | tokens | features | hazards |
                    assert_eq!(found.len(), 1, "{rel}: {found:?}");
                    let s = found[0];
                    assert_eq!((s.container, s.family, s.offset), (ContainerKind::Agal, Family::Agal, 0), "{rel}");
                    assert_eq!(stage_word(s), row[2], "{rel}: stage");
                    let tokens: u64 = row[3].parse().unwrap();
                    assert_eq!(s.length, 7 + 24 * tokens, "{rel}: length");
                }
                _ => unreachable!(),
            }
            *checked.entry(src.family).or_default() += 1;
        }
    }

    // The corpus README's counts: 33 + 18 + 63 + 113 binaries, 236 text files (the GX2 and AGAL
    // lists include the three files kept in tests/corpus-invalid).
    assert_eq!(checked.get("xenos"), Some(&33));
    assert_eq!(checked.get("gx2"), Some(&18));
    assert_eq!(checked.get("pica"), Some(&63));
    assert_eq!(checked.get("agal"), Some(&113));
    assert_eq!(text_files, 236);

    // Nothing outside the lists (README.md, SOURCES.md) yields anything, and the only errors are
    // the two documented GFD edge cases.
    for s in &result.shaders {
        assert!(listed.contains(&s.path), "shader in an unlisted file: {}", s.path.display());
    }
    let error_paths: BTreeSet<PathBuf> = result.errors.iter().map(|e| e.path.clone()).collect();
    assert_eq!(error_paths, expected_errors, "errors: {:#?}", result.errors);

    // Totals per family × stage (SOURCES / README: 14 + 19 Xenos, 15 + 15 GX2, 63 + 3 PICA).
    let counts = result.counts();
    assert_eq!(counts.get(&(Family::Xenos, Stage::Vertex)), Some(&14));
    assert_eq!(counts.get(&(Family::Xenos, Stage::Pixel)), Some(&19));
    assert_eq!(counts.get(&(Family::Gx2, Stage::Vertex)), Some(&15));
    assert_eq!(counts.get(&(Family::Gx2, Stage::Pixel)), Some(&15));
    assert_eq!(counts.get(&(Family::Pica, Stage::Vertex)), Some(&63));
    assert_eq!(counts.get(&(Family::Pica, Stage::Geometry)), Some(&3));
    assert_eq!(counts.get(&(Family::Agal, Stage::Vertex)), Some(&43));
    assert_eq!(counts.get(&(Family::Agal, Stage::Pixel)), Some(&70));
    assert_eq!(result.files, 469); // 465 corpus files + the 4 of tests/corpus-invalid
}

/// Xenos: the 28 distinct keys of the corpus, and the byte-identical files share a key
/// (XenosRecomp dedupes by this hash).
#[test]
fn xenos_keys_dedupe() {
    let r = scan_dir(&corpus().join("xenos"));
    let keys: BTreeSet<u64> = r.shaders.iter().map(|s| s.key).collect();
    assert_eq!(r.shaders.len(), 33);
    assert_eq!(keys.len(), 28);
    // the note's test vectors (xenos.md §6)
    for k in [0x5873A0E094914DE6u64, 0xB84214E6C36FC587, 0x305B030742891B51, 0xC2A59156B4BF3743, 0xD735633040631EEC, 0xBD7814DC92EEB914] {
        assert!(keys.contains(&k), "missing 0x{k:016X}");
    }
}

/// All corpus binaries concatenated into one buffer, each at a 4-aligned offset (Xenos sizes are
/// multiples of 4 here, so XR's probes stay aligned): every container is found again at its
/// offset with the same shaders, and the output renders.
#[test]
fn corpus_concatenated() {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(corpus())
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.is_file() && is_binary(&p.to_string_lossy()))
        .collect();
    files.sort();
    let mut blob = Vec::new();
    let mut expected = Vec::new();
    for p in &files {
        let bytes = std::fs::read(p).unwrap();
        let (shaders, errors) = shrec::scan::scan_bytes(p, &bytes);
        if !errors.is_empty() {
            continue; // the GFD edge cases
        }
        while blob.len() % 4 != 0 {
            blob.push(0xEE);
        }
        let off = blob.len() as u64;
        blob.extend_from_slice(&bytes);
        for s in shaders {
            expected.push((off, s.container, s.index, s.stage, s.key));
        }
    }
    let (shaders, errors) = shrec::scan::scan_bytes(Path::new("blob"), &blob);
    assert!(errors.is_empty(), "{errors:?}");
    let got: Vec<_> = shaders.iter().map(|s| (s.offset, s.container, s.index, s.stage, s.key)).collect();
    assert_eq!(got, expected);
    assert!(got.len() > 100);
}

/// Issue 23 B5: symbolic links leaving the tree (to /proc/self, /sys, a dangling target) are
/// reported and not followed, so the scan ends and finds exactly the tree's own shaders; a link
/// inside the tree is skipped (its target is scanned under its own path).
#[test]
fn symlinks_out_of_the_tree_are_reported_and_not_followed() {
    let dir = std::env::temp_dir().join(format!("shrec-test-{}-symlinks", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let tree = dir.join("tree");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    let agal = walkdir::WalkDir::new(corpus().join("agal"))
        .into_iter()
        .filter_map(Result::ok)
        .find(|e| e.path().extension().is_some_and(|x| x == "agal"))
        .expect("an AGAL program");
    std::fs::copy(agal.path(), tree.join("sub/a.agal")).unwrap();
    for (name, target) in [("proc", "/proc/self"), ("sys", "/sys"), ("gone", "/nonexistent/target")] {
        std::os::unix::fs::symlink(target, tree.join(name)).unwrap();
    }
    std::os::unix::fs::symlink(tree.join("sub"), tree.join("inside")).unwrap();
    let r = shrec::scan::scan_dir(&tree);
    // a link inside the tree leads where the walk goes anyway: skipped, and counted
    assert_eq!(r.shaders.len(), 1, "sub/a.agal, once: {:?}", r.shaders);
    assert!(r.shaders[0].path.ends_with("sub/a.agal"));
    assert_eq!(r.links_skipped, 1);
    let mut reported: Vec<String> = r.errors.iter().map(|e| e.path.file_name().unwrap().to_string_lossy().into_owned()).collect();
    reported.sort();
    assert_eq!(reported, ["gone", "proc", "sys"], "{:?}", r.errors);
    // /proc and /sys are refused by the tree rule; the dangling link fails to resolve.
    assert!(r.errors.iter().filter(|e| !e.path.ends_with("gone")).all(|e| e.reason.contains("outside the scanned directory")), "{:?}", r.errors);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A file truncated while the scan reads it (issue 23, B4): scans used to memory-map files, and
/// touching a mapped page past a truncated file's new end kills the process with SIGBUS (no
/// message). A thread here flips a 64 MiB file between empty and full every 2 ms while
/// `shrec scan` runs again and again: no run may end in a signal, the other file's shader is
/// always found, and a run that caught the file changing says so for that file.
#[test]
fn a_file_truncated_during_the_scan_is_an_error_not_a_signal() {
    use std::os::unix::process::ExitStatusExt;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};
    let dir = std::env::temp_dir().join(format!("shrec-test-{}-truncated", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let agal = walkdir::WalkDir::new(corpus().join("agal"))
        .into_iter()
        .filter_map(Result::ok)
        .find(|e| e.path().extension().is_some_and(|x| x == "agal"))
        .expect("an AGAL program");
    std::fs::copy(agal.path(), dir.join("a.agal")).unwrap();
    let big = dir.join("big.bin");
    let file = std::fs::File::create(&big).unwrap();
    const LEN: u64 = 64 << 20;
    let stop = AtomicBool::new(false);
    let (mut runs, mut caught) = (0, 0);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                file.set_len(LEN).unwrap();
                std::thread::sleep(Duration::from_millis(2));
                file.set_len(0).unwrap();
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        // stops the flipping thread however this closure ends (the scope joins it)
        struct Stop<'a>(&'a AtomicBool);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let _stop = Stop(&stop);
        let start = Instant::now();
        while runs < 20 || (caught == 0 && start.elapsed() < Duration::from_secs(120)) {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_shrec")).arg("scan").arg(&dir).output().unwrap();
            runs += 1;
            let stdout = String::from_utf8_lossy(&out.stdout);
            if out.status.signal().is_some() {
                panic!("run {runs}: shrec scan ended with {} (stderr: {})", out.status, String::from_utf8_lossy(&out.stderr));
            }
            assert!(stdout.contains("1 shaders in 2 files"), "run {runs}: {stdout}");
            match out.status.code() {
                Some(0) => {}
                Some(2) => {
                    assert!(stdout.contains("big.bin: changed while it was being scanned"), "run {runs}: {stdout}");
                    caught += 1;
                }
                other => panic!("run {runs}: exit {other:?}: {stdout}"),
            }
        }
    });
    eprintln!("{runs} scans, {caught} caught the file changing");
    assert!(caught > 0, "the file never changed during a scan in {runs} runs: the test proves nothing");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Links inside the tree used to multiply the work: a chain of folders each holding two links
/// to the next one is 2^depth paths to the same file, and many links to one large file read it
/// again and again. Each (device, inode) is scanned once, and the skipped links are counted.
#[test]
fn links_inside_the_tree_are_visited_once() {
    let dir = std::env::temp_dir().join(format!("shrec-test-{}-link-bomb", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let agal = std::fs::read(corpus().join("agal/adobe+glsl2agal/agalassembler/adobe_glsl2agal_test2_fs.agal")).unwrap();
    // 16 levels: 65 536 paths to the shader at the bottom when links are followed
    const DEPTH: usize = 16;
    for level in 0..DEPTH {
        let d = dir.join(format!("d{level:02}"));
        std::fs::create_dir_all(&d).unwrap();
        for link in ["a", "b"] {
            std::os::unix::fs::symlink(format!("../d{:02}", level + 1), d.join(link)).unwrap();
        }
    }
    let bottom = dir.join(format!("d{DEPTH:02}"));
    std::fs::create_dir_all(&bottom).unwrap();
    std::fs::write(bottom.join("s.agal"), &agal).unwrap();
    // 20 symbolic and 20 hard links to one 4 MiB file holding the shader
    let mut big = agal.clone();
    big.resize(4 << 20, 0);
    std::fs::write(dir.join("big.bin"), &big).unwrap();
    for i in 0..20 {
        std::os::unix::fs::symlink("big.bin", dir.join(format!("sym{i:02}.bin"))).unwrap();
        std::fs::hard_link(dir.join("big.bin"), dir.join(format!("hard{i:02}.bin"))).unwrap();
    }
    let r = scan_dir(&dir);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.shaders.len(), 2, "the bottom shader and big.bin's, once each: {} found", r.shaders.len());
    assert_eq!(r.bytes, (agal.len() + big.len()) as u64, "each file read once");
    assert_eq!(r.links_skipped, 2 * DEPTH as u64 + 40);
    assert!(shrec::scan::render_table(&r).contains(&format!("note: {} links skipped", 2 * DEPTH + 40)));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A DVLB listing more DVLEs than the cap (256) is an error naming the file and the cap: it
/// used to fail detection and vanish from the scan without a word (exit 0 beside other shaders).
#[test]
fn a_dvlb_over_the_dvle_cap_is_an_error() {
    let dir = std::env::temp_dir().join(format!("shrec-test-{}-dvle-cap", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let agal = std::fs::read(corpus().join("agal/adobe+glsl2agal/agalassembler/adobe_glsl2agal_test2_fs.agal")).unwrap();
    std::fs::write(dir.join("other.agal"), &agal).unwrap();
    // DVLB, 257 DVLE offsets, then the DVLP header (3dbrew "SHBIN")
    let n = 257u32;
    let mut dvlb = b"DVLB".to_vec();
    dvlb.extend_from_slice(&n.to_le_bytes());
    for i in 0..n {
        dvlb.extend_from_slice(&(0x1000 + 0x40 * i).to_le_bytes());
    }
    dvlb.extend_from_slice(b"DVLP");
    dvlb.resize(dvlb.len() + 0x18, 0);
    dvlb.resize(0x1000 + 0x40 * n as usize, 0);
    std::fs::write(dir.join("many.shbin"), &dvlb).unwrap();
    let r = scan_dir(&dir);
    assert_eq!(r.shaders.len(), 1, "the AGAL program");
    assert_eq!(r.errors.len(), 1, "{:?}", r.errors);
    let e = r.errors[0].to_string();
    assert!(e.contains("many.shbin") && e.contains("257 DVLEs exceed the limit of 256"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A `.gsh` or Xenos shader file cut short (a failed copy, a partial download) is an error
/// naming the file, the offset and the reason: it used to yield no shader and no word (exit 0
/// beside other shaders). Cut at several lengths, alone and as a zip member; a magic met inside
/// other data, not at the start, stays silent (XenosRecomp's scan skips it as well).
#[test]
fn a_truncated_gfd_or_xenos_file_is_an_error() {
    let dir = std::env::temp_dir().join(format!("shrec-test-{}-truncated", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let gsh = std::fs::read(corpus().join("gx2/GaryOderNichts+MultiDRCSpaceDemo/shaders/colorShader.gsh")).unwrap();
    let xenos = std::fs::read(corpus().join("xenos/Free60Project+libxenon/devkitxenon/examples/xenon/graphics/cube/files/ps.psu")).unwrap();
    let agal = std::fs::read(corpus().join("agal/adobe+glsl2agal/agalassembler/adobe_glsl2agal_test2_fs.agal")).unwrap();
    for (what, whole) in [("GFD", &gsh), ("Xenos", &xenos)] {
        for cut in [whole.len() / 3, whole.len() / 2, whole.len() - 1] {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("other.agal"), &agal).unwrap();
            std::fs::write(dir.join("cut.bin"), &whole[..cut]).unwrap();
            // the same bytes behind 16 bytes of other data: not a file of that container
            let mut inside = vec![0x55u8; 16];
            inside.extend_from_slice(&whole[..cut]);
            std::fs::write(dir.join("inside.dat"), &inside).unwrap();
            let r = scan_dir(&dir);
            assert_eq!(r.shaders.len(), 1, "{what} cut at {cut}: only the AGAL program: {:?}", r.shaders);
            assert_eq!(r.errors.len(), 1, "{what} cut at {cut}: {:?}", r.errors);
            let e = r.errors[0].to_string();
            assert!(e.contains("cut.bin") && e.contains(&format!("damaged {what} container")), "{what} cut at {cut}: {e}");
            assert!(r.errors[0].at.is_some(), "{what} cut at {cut}: the offset of the fault: {e}");
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
    // as an archive member: the error names the member
    std::fs::create_dir_all(&dir).unwrap();
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    zip.start_file("shaders/cut.gsh", zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored)).unwrap();
    std::io::Write::write_all(&mut zip, &gsh[..gsh.len() / 2]).unwrap();
    std::fs::write(dir.join("pack.zip"), zip.finish().unwrap().into_inner()).unwrap();
    let r = scan_dir(&dir);
    assert_eq!(r.errors.len(), 1, "{:?}", r.errors);
    let e = r.errors[0].to_string();
    assert!(e.contains("pack.zip!shaders/cut.gsh") && e.contains("damaged GFD container"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
