//! SMOL-V codec against the reference encoder's output (tests/vectors/smolv, see its README.md).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use shrec::pack::smolv::{decode, decoded_size, encode};

fn vector_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/smolv")
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Base names (without `.spv`) of the vectors, sorted; `invalid` selects the synthetic malformed
/// modules instead of the valid ones.
fn names(invalid: bool) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(vector_dir())
        .expect("tests/vectors/smolv is missing")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|f| f.strip_suffix(".spv").map(str::to_owned))
        .filter(|n| n.starts_with("synthetic_invalid-") == invalid)
        .collect();
    names.sort();
    names
}

struct Vector {
    name: String,
    spv: Vec<u8>,
    smolv: Vec<u8>,
    strip: Vec<u8>,
}

fn valid_vectors() -> Vec<Vector> {
    let dir = vector_dir();
    let vectors: Vec<Vector> = names(false)
        .into_iter()
        .map(|name| Vector {
            spv: read(&dir.join(format!("{name}.spv"))),
            smolv: read(&dir.join(format!("{name}.smolv"))),
            strip: read(&dir.join(format!("{name}.strip.smolv"))),
            name,
        })
        .collect();
    // 47 pairs at the time of writing; fail loudly if the folder went missing or empty.
    assert!(vectors.len() >= 40, "expected at least 40 SMOL-V vectors, found {}", vectors.len());
    vectors
}

/// Byte comparison that reports the first difference instead of dumping whole buffers.
fn assert_bytes_eq(actual: &[u8], expected: &[u8], what: &str) {
    if actual == expected {
        return;
    }
    let first = actual.iter().zip(expected).position(|(a, b)| a != b).unwrap_or(actual.len().min(expected.len()));
    let window = |b: &[u8]| format!("{:02x?}", &b[first.min(b.len())..(first + 16).min(b.len())]);
    panic!(
        "{what}: {} bytes vs {} expected, first difference at byte {first}: {} vs {}",
        actual.len(),
        expected.len(),
        window(actual),
        window(expected)
    );
}

const DEBUG_OPS: [u32; 9] = [
    2,   // OpSourceContinued
    3,   // OpSource
    4,   // OpSourceExtension
    5,   // OpName
    6,   // OpMemberName
    7,   // OpString
    8,   // OpLine
    317, // OpNoLine
    330, // OpModuleProcessed
];

/// `spv` with its debug instructions removed, by walking the instruction stream.
fn strip_debug(spv: &[u8]) -> Vec<u8> {
    let words: Vec<u32> = spv.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    let mut out = words[..5].to_vec();
    let mut pos = 5;
    while pos < words.len() {
        let len = (words[pos] >> 16) as usize;
        assert!(len > 0 && pos + len <= words.len(), "bad instruction at word {pos}");
        if !DEBUG_OPS.contains(&(words[pos] & 0xFFFF)) {
            out.extend_from_slice(&words[pos..pos + len]);
        }
        pos += len;
    }
    out.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[test]
fn encode_matches_reference() {
    let vectors = valid_vectors();
    for v in &vectors {
        let plain = encode(&v.spv, false).unwrap_or_else(|e| panic!("{}: encode failed: {e}", v.name));
        assert_bytes_eq(&plain, &v.smolv, &format!("{}: encode(strip=false)", v.name));
        let stripped = encode(&v.spv, true).unwrap_or_else(|e| panic!("{}: encode(strip) failed: {e}", v.name));
        assert_bytes_eq(&stripped, &v.strip, &format!("{}: encode(strip=true)", v.name));
    }
    println!("encode matched the reference for {} modules (x2 flag settings)", vectors.len());
}

#[test]
fn decode_matches_reference() {
    let vectors = valid_vectors();
    for v in &vectors {
        assert_eq!(decoded_size(&v.smolv).unwrap(), v.spv.len(), "{}: decoded_size", v.name);
        let spv = decode(&v.smolv).unwrap_or_else(|e| panic!("{}: decode failed: {e}", v.name));
        assert_bytes_eq(&spv, &v.spv, &format!("{}: decode", v.name));
    }
    println!("decoded {} reference SMOL-V files byte for byte", vectors.len());
}

/// Finds spirv-val, or explains how to get it. `None` means "skip validation" (explicitly allowed).
fn spirv_val() -> Option<&'static str> {
    let present = Command::new("spirv-val").arg("--version").output().is_ok_and(|o| o.status.success());
    if present {
        return Some("spirv-val");
    }
    if std::env::var("SHREC_ALLOW_MISSING_TOOLS").as_deref() == Ok("1") {
        eprintln!("spirv-val not found; skipping validation (SHREC_ALLOW_MISSING_TOOLS=1)");
        return None;
    }
    panic!("spirv-val not found: install spirv-tools (e.g. `apt install spirv-tools`), or set SHREC_ALLOW_MISSING_TOOLS=1 to skip");
}

/// Runs spirv-val on a module; `Err` holds its diagnostics.
fn validate(tool: &str, spv: &[u8], file_name: &str) -> Result<(), String> {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(file_name);
    std::fs::write(&path, spv).unwrap();
    let out = Command::new(tool).arg(&path).output().expect("running spirv-val");
    let _ = std::fs::remove_file(&path);
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
    }
}

#[test]
fn decode_stripped_is_module_minus_debug_info() {
    let vectors = valid_vectors();
    let tool = spirv_val();
    let (mut validated, mut invalid_originals) = (0, Vec::new());
    for v in &vectors {
        let expected = strip_debug(&v.spv);
        assert_eq!(decoded_size(&v.strip).unwrap(), expected.len(), "{}: decoded_size of stripped", v.name);
        let spv = decode(&v.strip).unwrap_or_else(|e| panic!("{}: decode(strip) failed: {e}", v.name));
        assert_bytes_eq(&spv, &expected, &format!("{}: decode(strip)", v.name));

        if let Some(tool) = tool {
            if let Err(diag) = validate(tool, &spv, &format!("smolv-stripped-{}.spv", v.name)) {
                // A module the validator already rejects before stripping (one glslang test uses
                // 16-bit spec constants) cannot be expected to pass after it.
                if validate(tool, &v.spv, &format!("smolv-original-{}.spv", v.name)).is_ok() {
                    panic!("{}: stripped module fails spirv-val, original passes:\n{diag}", v.name);
                }
                invalid_originals.push(v.name.clone());
            } else {
                validated += 1;
            }
        }
    }
    if tool.is_some() {
        // Guard against the validator silently rejecting everything.
        assert!(validated + 3 >= vectors.len(), "only {validated} of {} validated", vectors.len());
        println!(
            "stripped decode checked for {} modules; spirv-val passed {validated}, skipped {:?} (original invalid too)",
            vectors.len(),
            invalid_originals
        );
    }
}

#[test]
fn invalid_modules_are_rejected() {
    let dir = vector_dir();
    let invalid = names(true);
    assert_eq!(invalid.len(), 3, "expected the 3 synthetic_invalid-* modules listed in REJECTED.txt");
    for name in &invalid {
        let spv = read(&dir.join(format!("{name}.spv")));
        for strip in [false, true] {
            match encode(&spv, strip) {
                Ok(_) => panic!("{name}: encode(strip={strip}) accepted a malformed module"),
                Err(e) => println!("{name} (strip={strip}): {e}"),
            }
        }
    }
}

#[test]
fn round_trip() {
    let vectors = valid_vectors();
    for v in &vectors {
        let smolv = encode(&v.spv, false).unwrap();
        assert_bytes_eq(&decode(&smolv).unwrap(), &v.spv, &format!("{}: round trip", v.name));
    }
    println!("round-tripped {} modules", vectors.len());
}

/// Evenly spread sample of `count` positions in `0..len` (all of them if `count >= len`).
fn sample_positions(len: usize, count: usize) -> Vec<usize> {
    if count >= len {
        return (0..len).collect();
    }
    (0..count).map(|i| i * len / count).collect()
}

/// Truncated and bit-flipped inputs must decode to `Ok` or `Err`, never panic.
///
/// Every length / every byte would be quadratic in file size (the largest vector is 91 KB and an
/// unoptimized decode runs at a few MB/s), so each file gets an evenly spread sample of cut
/// points and flipped bytes (one bit per chosen byte, rotating through the bit positions), sized
/// so that each file costs about the same: files up to about 180 bytes are covered
/// exhaustively, the largest ones get at least 6 cuts and 6 flips. The module's unit tests cover
/// every cut and every bit of a small synthetic module exhaustively.
#[test]
fn decode_robustness() {
    const BYTES_BUDGET_PER_FILE: usize = 32 << 10; // roughly, bytes of input decoded per file and mode
    let started = Instant::now();
    let vectors = valid_vectors();
    let (mut files, mut truncations, mut flips) = (0, 0, 0);
    for v in &vectors {
        for (kind, smolv) in [("smolv", &v.smolv), ("strip.smolv", &v.strip)] {
            files += 1;
            let count = (BYTES_BUDGET_PER_FILE / smolv.len()).max(6);
            for cut in sample_positions(smolv.len(), count) {
                truncations += 1;
                // Every strict prefix is short of the declared size (or of the header).
                assert!(decode(&smolv[..cut]).is_err(), "{}.{kind}: truncated to {cut} bytes decoded", v.name);
            }
            let mut flipped = smolv.clone();
            for (n, pos) in sample_positions(smolv.len(), count).into_iter().enumerate() {
                flips += 1;
                let bit = 1u8 << (n % 8);
                flipped[pos] ^= bit;
                let _ = decode(&flipped);
                flipped[pos] ^= bit;
            }
        }
    }
    println!("robustness: {files} files, {truncations} truncations, {flips} bit flips in {:.1?}", started.elapsed());
    assert!(files >= 80, "expected at least 80 SMOL-V files, found {files}");
}
