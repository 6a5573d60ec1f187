//! Issue 23 S1 / B13: file names are attacker-controlled. 1 000 copies of a shader shrec rejects,
//! named with control characters, line breaks, `::` workflow commands, `%` escapes and invalid
//! UTF-8, go through `shrec build` with GITHUB_ACTIONS=true: every one is reported, and no line
//! of stdout or stderr starts with `::` except shrec's own annotations, one per failure.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::process::Command;

/// A deterministic name generator (xorshift): pieces that attack log lines, mixed.
fn hostile_name(i: u64) -> OsString {
    let pieces: [&[u8]; 12] = [
        b"\n::warning file=a::pwned",
        b"\r\n::error::x",
        b"::set-output name=x::y",
        b"%0A::notice::z",
        b"\x1b[31mred\x1b]0;title\x07",
        b"\xff\xfe",
        b"\xc3\x28",
        b"\t",
        b"::",
        b"%",
        b"\x7f",
        b"plain",
    ];
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut name = format!("{i:04}-").into_bytes();
    for _ in 0..3 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        name.extend_from_slice(pieces[(x % pieces.len() as u64) as usize]);
    }
    name.extend_from_slice(b".agal");
    OsString::from_vec(name)
}

#[test]
fn thousand_hostile_names_through_build() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let bad =
        std::fs::read(root.join(
            "tests/corpus-invalid/agal/ruffle-rs+ruffle/tests/tests/swfs/avm2/stage3d_agal_upload_errors/ruffle_sampler_conflict_fs_INVALID.agal",
        ))
        .expect("the rejected AGAL sample");
    let dir = std::env::temp_dir().join(format!("shrec-hostile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let n: u64 = 1000;
    for i in 0..n {
        // every file its own shader (identical files would be one shader and 999 duplicates):
        // the first `tex`'s coordinate swizzle (byte 18) and write mask (byte 13) vary; the
        // rejection comes from the second `tex` whatever they are
        let mut bytes = bad.clone();
        bytes[18] = (i % 256) as u8;
        bytes[13] = 1 + (i / 256 % 15) as u8;
        std::fs::write(input.join(hostile_name(i)), &bytes).unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_shrec"))
        .args(["build", "--no-cache", "-q", "-o"])
        .arg(dir.join("cache.cpp"))
        .arg(&input)
        .env("GITHUB_ACTIONS", "true")
        .output()
        .expect("run shrec");
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "every shader failed, so the build must say so\n{stderr}");
    let mut annotations = 0;
    for line in stdout.lines().chain(stderr.lines()) {
        if line.starts_with("::") {
            assert!(line.starts_with("::error file="), "a line starts a workflow command: {line:?}");
            annotations += 1;
        }
        assert!(!line.chars().any(|c| c.is_control()), "control character in {line:?}");
    }
    assert_eq!(annotations, n, "one annotation per failed shader\n{stdout}");
    let error_lines = stderr.lines().filter(|l| l.starts_with("error: ")).count();
    assert_eq!(error_lines as u64, n, "one error line per failed shader\n{stderr}");
}

/// `shrec scan` prints names from the input (files, archive members) in its table, its error
/// list and its "could not be opened" warning: each escaped as `build` does, so none starts a
/// workflow command on a line of its own, sends an ESC sequence, or carries a line separator or
/// a bidirectional override.
#[test]
fn scan_table_errors_and_warnings_escape_names() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let shader = std::fs::read(root.join("tests/corpus/agal/adobe+glsl2agal/agalassembler/adobe_glsl2agal_test2_fs.agal")).unwrap();
    let dir = std::env::temp_dir().join(format!("shrec-hostile-scan-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (shaders, unopened) = (dir.join("shaders"), dir.join("unopened"));
    std::fs::create_dir_all(&shaders).unwrap();
    std::fs::create_dir_all(&unopened).unwrap();
    let evil = "\n::warning::pwned\u{1b}[31m\u{2028}\u{202e}";
    let corrupt_gzip: &[u8] = &[0x1F, 0x8B, 0x08, 0, 0, 0, 0, 0, 0, 3, 0xFF, 0xFF, 0xFF, 0xFF];
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, data) in [(format!("member{evil}.agal"), &shader[..]), (format!("bad{evil}.gz"), corrupt_gzip)] {
        w.start_file(name, zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored)).unwrap();
        std::io::Write::write_all(&mut w, data).unwrap();
    }
    let zip = w.finish().unwrap().into_inner();
    std::fs::write(shaders.join(format!("a{evil}.zip")), zip).unwrap();
    std::fs::write(shaders.join(format!("file{evil}.agal")), &shader).unwrap();
    std::fs::write(unopened.join(format!("y{evil}.szs")), b"Yaz1\0\0\0\x10\0\0\0\0\0\0\0\0").unwrap();
    for (input, expect) in [(&shaders, "1 errors:"), (&unopened, "could not be opened")] {
        let out = Command::new(env!("CARGO_BIN_EXE_shrec")).arg("scan").arg(input).arg("--list-containers").output().unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(text.contains(expect), "{text}");
        assert!(text.contains("\\u{a}::warning::pwned\\u{1b}[31m\\u{2028}\\u{202e}"), "the names are shown, escaped:\n{text}");
        for line in text.lines() {
            assert!(!line.starts_with("::"), "a name started a workflow command: {line:?}");
            assert!(!line.contains(['\u{1b}', '\u{2028}', '\u{202e}']), "raw escape or separator: {line:?}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
