//! The whole pipeline on the bundled corpus: scan → translate → real DXC → pack → embed, checked
//! from the consumer's side (C++ and Rust), plus the incremental rebuild.

use crate::common;

use common::{copy_tree, repo, run, run_cpp_consumer, spirv_val, tmpdir};
use shrec::build::{self, BuildOptions};
use shrec::cache::{self, SpirvEncoding};
use shrec::detect::ContainerKind;
use shrec::dxc::{self, Target};
use shrec::formats::{self, TranslateOptions};
use shrec::report;
use shrec::Family;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn options(out: &Path, cache: &Path) -> BuildOptions {
    let mut o = BuildOptions::new(repo().join("tests/corpus"), out);
    o.cache_dir = Some(cache.to_path_buf());
    o.spirv_encoding = SpirvEncoding::Raw;
    // these tests compare the cache with what DXC makes of the HLSL, for both targets (the
    // default direct SPIR-V back end has its own: spirv_direct.rs)
    o.spirv_backend = build::SpirvBackend::Dxc;
    o
}

/// Distinct shaders per family in tests/corpus, for the families shrec translates today.
const AGAL_KEYS: usize = 101;
const XENOS_KEYS: usize = 28;
const PICA_KEYS: usize = 54;
const GX2_KEYS: usize = 29;
const BUILT: usize = AGAL_KEYS + XENOS_KEYS + PICA_KEYS + GX2_KEYS;

/// Every distinct shader in tests/corpus: key → (container kind, container bytes, index).
fn corpus_shaders() -> BTreeMap<u64, (ContainerKind, Vec<u8>, u32)> {
    let scan = shrec::scan::scan_dir(&repo().join("tests/corpus"));
    let mut m = BTreeMap::new();
    for s in scan.shaders {
        m.entry(s.key).or_insert_with(|| (s.container, shrec::scan::read_container(&s).unwrap(), s.index));
    }
    m
}

#[test]
fn corpus_builds_and_consumers_get_dxcs_bytes() {
    let dir = tmpdir("pipeline");
    let out_cpp = dir.join("shader_cache.cpp");
    let cache = dir.join("cache");
    let first = build::run(&options(&out_cpp, &cache)).expect("build runs");
    let r = &first.report;
    let shaders = corpus_shaders();

    // Every shader of every family compiled, nothing failed or skipped.
    let totals = r.totals();
    assert_eq!(report::exit_code(r), 0, "{}", report::summary_table(r));
    assert_eq!(totals.failed, 0);
    assert_eq!(totals.compiled, BUILT);
    assert_eq!(r.dxc_compilations, 2 * BUILT);
    let by_family = r.counts_by_family();
    let compiled = |f: Family| by_family[&f].compiled;
    assert_eq!(
        [compiled(Family::Agal), compiled(Family::Xenos), compiled(Family::Pica), compiled(Family::Gx2)],
        [AGAL_KEYS, XENOS_KEYS, PICA_KEYS, GX2_KEYS]
    );
    assert_eq!(totals.skipped, 0);
    assert_eq!(first.entries.len(), BUILT);

    // The bytes in the cache are exactly what DXC produces for the translated HLSL, DXIL carries
    // a filled, correct container hash, and spirv-val accepts every SPIR-V module.
    let lib = dxc::locate(&dxc::LocateOptions::default()).unwrap();
    for e in &first.entries {
        let (kind, bytes, index) = &shaders[&e.key];
        assert_eq!(kind.family(), e.family);
        let t = formats::translate(*kind, bytes, *index, &TranslateOptions::default()).unwrap();
        let hlsl = shrec::hlsl::write(&t.module);
        let dxil = e.dxil.as_ref().expect("dxil built");
        let spirv = e.spirv.as_ref().expect("spirv built");
        assert_eq!(e.spec_constants_mask, t.spec_constants_mask);
        let compile = |target| dxc::compile_with_spec_constants(&lib, &hlsl, e.stage, target, t.spec_constants_mask).unwrap();
        assert_eq!(dxil, &compile(Target::Dxil), "{:016X}: DXIL differs", e.key);
        assert_eq!(spirv, &compile(Target::Spirv), "{:016X}: SPIR-V differs", e.key);
        assert_eq!(&dxil[..4], b"DXBC");
        assert_ne!(&dxil[4..20], &[0u8; 16], "{:016X}: DXIL hash not filled", e.key);
        assert!(shrec::pack::dxil_hash::hash_is_valid(dxil), "{:016X}: DXIL hash wrong", e.key);
        spirv_val(spirv, &format!("{:016X}", e.key)).unwrap_or_else(|d| panic!("{:016X}: spirv-val: {d}", e.key));
        if e.family == Family::Agal {
            assert_eq!(e.meta.len() % 3, 0, "AGAL metadata is (slot, lo, hi) triples");
        }
    }

    // The generated .cpp compiles; a C++ consumer finds every key and gets the same bytes.
    let keys: Vec<u64> = first.entries.iter().map(|e| e.key).collect();
    if let Some(stdout) = run_cpp_consumer(&out_cpp, &keys) {
        assert!(!stdout.contains("FAIL"), "{stdout}");
        let lines: Vec<&str> = stdout.lines().skip(1).collect();
        assert_eq!(lines.len(), keys.len());
        for (e, line) in first.entries.iter().zip(lines) {
            assert_eq!(line, common::consumer_line(e, None), "consumer line for {:016X}", e.key);
        }
    }

    // The frames were compressed while DXC ran, and the file is byte for byte what writing the
    // same entries from scratch gives.
    assert!(first.packed_during_build, "the single layout's frames were not packed during the build");
    let scratch = dir.join("scratch.cpp");
    let raw = cache::WriteOptions { spirv_encoding: SpirvEncoding::Raw, ..cache::WriteOptions::default() };
    cache::cpp::write(&scratch, &first.entries, &raw).unwrap();
    let text = |p: &Path, stem: &str| {
        std::fs::read_to_string(p).unwrap().replace(&format!("{stem}.h"), "HEADER").replace(&format!("{stem}.msvc.inc"), "MSVC")
    };
    assert!(text(&out_cpp, "shader_cache") == text(&scratch, "scratch"), "streamed and from-scratch caches differ");
    assert!(
        std::fs::read(out_cpp.with_extension("msvc.inc")).unwrap() == std::fs::read(scratch.with_extension("msvc.inc")).unwrap(),
        "streamed and from-scratch cl.exe blobs differ"
    );

    // A second identical build compiles nothing and leaves the output untouched.
    let mtime = std::fs::metadata(&out_cpp).unwrap().modified().unwrap();
    let second = build::run(&options(&out_cpp, &cache)).expect("rebuild runs");
    assert_eq!(second.report.dxc_compilations, 0);
    assert_eq!(second.report.cache_hits, BUILT);
    assert!(!second.output_written);
    assert_eq!(std::fs::metadata(&out_cpp).unwrap().modified().unwrap(), mtime);
    assert_eq!(second.entries, first.entries);
    println!("cold build {:?}, warm rebuild {:?}", first.timings.wall, second.timings.wall);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The SMOL-V the cache stores decodes to a module spirv-val accepts, equal to DXC's output
/// minus debug instructions.
#[test]
fn smolv_cache_decodes_to_valid_spirv() {
    let dir = tmpdir("pipeline-smolv");
    let out_cpp = dir.join("cache.cpp");
    let mut o = options(&out_cpp, &dir.join("cache"));
    o.spirv_encoding = SpirvEncoding::Smolv;
    o.targets = vec![Target::Spirv];
    let b = build::run(&o).unwrap();
    let keys: Vec<u64> = b.entries.iter().map(|e| e.key).collect();
    assert_eq!(keys.len(), BUILT);
    let Some(stdout) = run_cpp_consumer(&out_cpp, &keys) else { return };
    for (e, line) in b.entries.iter().zip(stdout.lines().skip(1)) {
        let fields: Vec<&str> = line.split(' ').collect();
        assert_eq!(fields[4], "-", "no DXIL in a SPIR-V-only build");
        let smolv: Vec<u8> = (0..fields[5].len()).step_by(2).map(|i| u8::from_str_radix(&fields[5][i..i + 2], 16).unwrap()).collect();
        let decoded = shrec::pack::smolv::decode(&smolv).unwrap();
        spirv_val(&decoded, &format!("smolv-{:016X}", e.key)).unwrap_or_else(|d| panic!("{:016X}: {d}", e.key));
        let original = e.spirv.as_ref().unwrap();
        assert!(decoded.len() <= original.len());
        assert_eq!(&decoded[..20], &original[..20], "header kept");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The generated Rust module compiles on its own.
#[test]
fn generated_rust_module_compiles() {
    let dir = tmpdir("pipeline-rs");
    let out = dir.join("shader_cache.rs");
    let b = build::run(&options(&out, &dir.join("cache"))).unwrap();
    assert_eq!(b.entries.len(), BUILT);
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    run(Command::new(rustc).args(["--edition", "2021", "--crate-type", "lib", "-D", "warnings", "--out-dir"]).arg(&dir).arg(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn shrec() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shrec"))
}

/// Exit codes and error lines of the command line: the invalid AGAL program of the corpus is the
/// only failure and its line names the file, the offset and Flash's error number.
#[test]
fn cli_reports_the_invalid_agal_program() {
    let dir = tmpdir("cli-invalid");
    let input = dir.join("agal");
    copy_tree(&repo().join("tests/corpus/agal"), &input);
    copy_tree(&repo().join("tests/corpus-invalid/agal"), &input);
    let out = shrec().arg("build").arg(&input).arg("-o").arg(dir.join("c.cpp")).arg("--cache-dir").arg(dir.join("cache")).arg("-q").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("ruffle_sampler_conflict_fs_INVALID.agal+0x0 [agal fragment #0 0x"), "{}", errors[0]);
    assert!(errors[0].contains("Flash Error #3696"), "{}", errors[0]);
    assert!(dir.join("c.cpp").is_file(), "the cache is written with the good shaders");
    // The line ends with the command that shows the shader; run it as a user would paste it.
    let listing = run_see_command(errors[0]);
    assert!(listing.contains("tex"), "the disassembly of the failing program: {listing}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs the `(see: shrec …)` command an error line ends with through `sh`, with `shrec` being
/// the binary under test; returns its standard output. The shader is invalid, so the command
/// exits 2 after listing it, with the same reason on stderr.
fn run_see_command(line: &str) -> String {
    let cmd = line.rsplit_once("(see: shrec ").map(|(_, c)| c.trim_end_matches(')')).unwrap_or_else(|| panic!("no command in {line}"));
    let script = format!("exec '{}' {cmd}", env!("CARGO_BIN_EXE_shrec"));
    let out = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{script}: {stderr}");
    assert!(stderr.contains("Flash Error #3696"), "{script}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// A failing shader inside an archive: the error line names `archive!member`, and its command
/// opens the member (zip, stored and deflated).
#[test]
fn cli_failure_inside_an_archive_names_a_command_that_opens_the_member() {
    use std::io::Write;
    let dir = tmpdir("cli-member");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let bad =
        std::fs::read(repo().join(
            "tests/corpus-invalid/agal/ruffle-rs+ruffle/tests/tests/swfs/avm2/stage3d_agal_upload_errors/ruffle_sampler_conflict_fs_INVALID.agal",
        ))
        .expect("the invalid AGAL program of the corpus");
    let mut w = zip::ZipWriter::new(std::fs::File::create(input.join("it's data.zip")).unwrap());
    w.start_file("shaders/bad fs.agal", zip::write::SimpleFileOptions::default()).unwrap();
    w.write_all(&bad).unwrap();
    w.finish().unwrap();
    let out = shrec().arg("build").arg(&input).arg("-o").arg(dir.join("c.cpp")).arg("--no-cache").arg("-q").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let error = stderr.lines().find(|l| l.starts_with("error:")).unwrap_or_else(|| panic!("{stderr}"));
    assert!(error.contains("it's data.zip!shaders/bad fs.agal+0x0 [agal fragment #0 0x"), "{error}");
    let listing = run_see_command(error);
    assert!(listing.contains("tex"), "{listing}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cli_scan_json_lists_every_shader() {
    let out = shrec().arg("scan").arg(repo().join("tests/corpus")).arg("--json").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let lib = shrec::scan::scan_dir(&repo().join("tests/corpus"));
    let shaders = v["shaders"].as_array().expect("shaders array");
    assert_eq!(shaders.len(), lib.shaders.len());
    for (j, s) in shaders.iter().zip(&lib.shaders) {
        assert_eq!(j["family"], s.family.name());
        assert_eq!(j["stage"], s.stage.name_in(s.family));
        assert_eq!(j["key"], format!("0x{:016X}", s.key));
    }
}

/// Truncated and bit-flipped copies of the corpus binaries (every family): the build finishes
/// without a panic, exits 2, prints one well-formed error line per failed shader or container
/// and still writes the good ones.
#[test]
fn damaged_inputs_fail_one_by_one() {
    let dir = tmpdir("damaged");
    let input = dir.join("in");
    copy_tree(&repo().join("tests/corpus"), &input);
    let binary = |p: &Path| p.extension().is_some_and(|e| ["agal", "bin", "psu", "vsu", "gsh", "shbin"].iter().any(|x| e == *x));
    let mut files: Vec<_> = walkdir::WalkDir::new(&input).into_iter().map(|e| e.unwrap().into_path()).filter(|p| binary(p)).collect();
    files.sort();
    let mut rng = 0x2545F4914F6CDD1Du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for (i, f) in files.iter().enumerate() {
        let mut b = std::fs::read(f).unwrap();
        match i % 3 {
            0 => b.truncate(7 + (next() as usize % b.len().saturating_sub(7).max(1))),
            1 => {
                let bit = next() as usize % (b.len() * 8);
                b[bit / 8] ^= 1 << (bit % 8);
            }
            _ => continue,
        }
        std::fs::write(f, b).unwrap();
    }
    // One damage that must fail: the raytrace shader's first `eif` becomes `els` (if blocks
    // left open).
    let ray = files.iter().find(|p| p.to_string_lossy().contains("raytrace")).expect("raytrace shader");
    let mut b = std::fs::read(ray).unwrap();
    let first_eif = (7..b.len()).step_by(24).find(|&at| b[at..at + 4] == [0x21, 0, 0, 0]).expect("an eif");
    b[first_eif] = 0x20;
    std::fs::write(ray, b).unwrap();

    let report_path = dir.join("report.json");
    let out = shrec()
        .arg("build")
        .arg(&input)
        .args(["-o"])
        .arg(dir.join("c.cpp"))
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .arg("--report")
        .arg(&report_path)
        .arg("-q")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&report_path).unwrap()).unwrap();
    let failed = v["totals"]["failed"].as_u64().unwrap() as usize + v["scan_errors"].as_array().unwrap().len();
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert!(failed >= 1);
    assert_eq!(errors.len(), failed, "{stderr}");
    for e in &errors {
        // error: <file>+0x<offset> [<family> ...]: <reason>
        let (head, reason) = e.split_once("]: ").unwrap_or_else(|| panic!("malformed: {e}"));
        assert!(head.starts_with(&format!("error: {}", input.display())), "{e}");
        assert!(head.contains("+0x") && head.contains(" ["), "{e}");
        assert!(!reason.trim().is_empty(), "{e}");
    }
    let compiled = v["totals"]["compiled"].as_u64().unwrap();
    assert!(compiled > 0);
    let text = std::fs::read_to_string(dir.join("c.cpp")).unwrap();
    assert!(text.contains(&format!("const size_t g_shaderCacheEntryCount = {compiled};")));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Resource cap: a shader whose HLSL is over the limit fails with the sizes in its reason, the
/// others build.
#[test]
fn hlsl_size_cap_fails_only_the_large_shaders() {
    let dir = tmpdir("hlsl-cap");
    let mut o = options(&dir.join("c.cpp"), &dir.join("cache"));
    o.input = repo().join("tests/corpus/agal");
    o.max_hlsl_bytes = 2500;
    let r = build::run(&o).expect("build runs").report;
    let failed: Vec<_> = r
        .outcomes
        .iter()
        .filter_map(|o| match &o.status {
            report::Status::Failed { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    assert!(!failed.is_empty() && failed.len() < r.outcomes.len(), "{} of {} failed", failed.len(), r.outcomes.len());
    for reason in &failed {
        assert!(reason.starts_with("the generated HLSL is ") && reason.contains("over the limit of 2500 bytes"), "{reason}");
    }
    assert_eq!(report::exit_code(&r), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A damaged incremental cache, seen by a real build: one artifact with a flipped byte, one
/// truncated. The rebuild compiles exactly those two shaders, reports each damaged entry by
/// path and reason, and writes the cache the first build wrote.
#[test]
fn damaged_incremental_cache_entries_are_reported_and_rebuilt() {
    let dir = tmpdir("damaged-cache");
    let game = dir.join("game");
    std::fs::create_dir_all(&game).unwrap();
    let sources = common::files_with_extension(&repo().join("tests/corpus/agal/adobe+glsl2agal/agalassembler"), "agal");
    for f in sources.iter().take(4) {
        std::fs::copy(f, game.join(f.file_name().unwrap())).unwrap();
    }
    let out_cpp = dir.join("shader_cache.cpp");
    let cache = dir.join("cache");
    let mut opts = BuildOptions::new(&game, &out_cpp);
    opts.cache_dir = Some(cache.clone());
    let first = build::run(&opts).expect("build runs");
    let n = first.entries.len();
    assert!(n >= 3, "{n} shaders");
    assert_eq!(first.report.dxc_compilations, 2 * n);
    assert!(first.report.cache_repairs.is_empty());
    let cpp_before = std::fs::read(&out_cpp).unwrap();

    // Artifacts live in <cache>/<2 hex digits>/<hash>.bin, one per shader.
    let mut artifacts: Vec<_> = walkdir::WalkDir::new(&cache)
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.extension().is_some_and(|x| x == "bin") && p.parent().unwrap().file_name().unwrap().len() == 2)
        .collect();
    artifacts.sort();
    assert_eq!(artifacts.len(), n);
    let mut flipped = std::fs::read(&artifacts[0]).unwrap();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    std::fs::write(&artifacts[0], flipped).unwrap();
    let whole = std::fs::read(&artifacts[1]).unwrap();
    std::fs::write(&artifacts[1], &whole[..whole.len() - 5]).unwrap();

    let second = build::run(&opts).expect("rebuild runs");
    let r = &second.report;
    assert_eq!(report::exit_code(r), 0, "damage is repaired, not a failure");
    assert_eq!(r.dxc_compilations, 2 * 2, "exactly the two damaged shaders are compiled again");
    assert_eq!(r.cache_hits, n - 2);
    assert_eq!(r.cache_repairs.len(), 2, "{:?}", r.cache_repairs);
    let says = |p: &Path, what: &str| r.cache_repairs.iter().any(|w| w.contains(&p.display().to_string()) && w.contains(what));
    assert!(says(&artifacts[0], "checksum mismatch"), "{:?}", r.cache_repairs);
    assert!(says(&artifacts[1], "truncated"), "{:?}", r.cache_repairs);
    assert_eq!(second.entries, first.entries, "the rebuilt artifacts are DXC's bytes again");
    assert_eq!(std::fs::read(&out_cpp).unwrap(), cpp_before);
    let json = report::to_json(r);
    assert_eq!(json["cache_repairs"].as_array().unwrap().len(), 2);

    // The repaired entries are whole again: a third build compiles nothing.
    let third = build::run(&opts).expect("third build runs");
    assert_eq!(third.report.dxc_compilations, 0);
    assert!(third.report.cache_repairs.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Compilation starts while the scan is still reading: the shader in the first file (path
/// order) is taken by a worker before thousands of later filler files have been scanned.
#[test]
fn compiles_while_scanning() {
    let dir = tmpdir("overlap");
    let game = dir.join("game");
    std::fs::create_dir_all(game.join("z-filler")).unwrap();
    let shader = &common::files_with_extension(&repo().join("tests/corpus/agal/adobe+glsl2agal/agalassembler"), "agal")[0];
    std::fs::copy(shader, game.join("a.agal")).unwrap();
    for i in 0..4000 {
        std::fs::write(game.join(format!("z-filler/{i:05}.bin")), [0u8; 4096]).unwrap();
    }
    let mut opts = BuildOptions::new(&game, dir.join("cache.cpp"));
    opts.cache_dir = None;
    let out = build::run(&opts).expect("build runs");
    assert_eq!(out.report.totals().compiled, 1);
    let t = &out.timings;
    let first = t.first_shader_started.expect("a shader was built");
    println!("scan ended at {:?}, first shader started at {:?}", t.scan_ended, first);
    assert!(first < t.scan_ended, "the first shader waited for the scan: started {first:?}, scan ended {:?}", t.scan_ended);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--hlsl-dir` is self-contained: the prelude the files include sits next to them, and its
/// `dxc.sh` runs a standalone dxc with the build's own arguments (a stand-in `dxc` on PATH
/// records them here; the real compilation of these files is what the build itself did).
#[test]
fn hlsl_dir_has_the_prelude_and_a_dxc_script_with_the_build_arguments() {
    let dir = tmpdir("hlsl-dir");
    let hlsl = dir.join("hlsl");
    let out = shrec()
        .arg("build")
        .arg(repo().join("tests/corpus/agal"))
        .arg("-o")
        .arg(dir.join("c.cpp"))
        .arg("--no-cache")
        .arg("-q")
        .arg("--hlsl-dir")
        .arg(&hlsl)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(hlsl.join("shader_common.h")).unwrap(), shrec::hlsl::PRELUDE);
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("dxc"), "#!/bin/sh\necho \"$@\" > \"$DXC_ARGS_OUT\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("dxc"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut checked = 0;
    for (stage_word, stage) in [("vertex", shrec::Stage::Vertex), ("fragment", shrec::Stage::Pixel)] {
        let file = std::fs::read_dir(&hlsl)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .find(|n| n.ends_with(&format!(".agal.{stage_word}.hlsl")))
            .expect("a file of this stage");
        for target in [shrec::dxc::Target::Dxil, shrec::dxc::Target::Spirv] {
            let record = dir.join("args.txt");
            let status = Command::new("sh")
                .current_dir(&hlsl)
                .arg("dxc.sh")
                .arg(&file)
                .arg(target.name())
                .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()))
                .env("DXC_ARGS_OUT", &record)
                .status()
                .unwrap();
            assert!(status.success());
            let ext = if target == shrec::dxc::Target::Spirv { "spv" } else { "dxil" };
            let mut want = shrec::dxc::command_line_args(stage, target, 0);
            want.extend(["-Fo".to_string(), file.replace(".hlsl", &format!(".{ext}")), file.clone()]);
            assert_eq!(std::fs::read_to_string(&record).unwrap().trim(), want.join(" "));
            checked += 1;
        }
    }
    assert_eq!(checked, 4);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// No shader in the input is an error unless `--allow-empty`; the JSON report says why, and a
/// fatal error (here: DXC cannot be found offline) still writes a report.
#[test]
fn empty_input_fails_unless_allowed_and_fatal_errors_write_the_report() {
    let dir = tmpdir("empty-input");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    std::fs::write(input.join("readme.txt"), "no shaders here").unwrap();
    let build = |extra: &[&str]| {
        let out = shrec()
            .arg("build")
            .arg(&input)
            .arg("-o")
            .arg(dir.join("c.cpp"))
            .arg("--no-cache")
            .arg("-q")
            .arg("--report")
            .arg(dir.join("r.json"))
            .args(extra)
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned(), report)
    };
    let (code, stderr, report) = build(&[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("error: no shader found in") && stderr.contains("--allow-empty"), "{stderr}");
    assert_eq!(report["schema_version"], 4);
    assert_eq!(report["version"], 4, "the name before schema 3, kept, the same number");
    assert!(report["empty_input"].as_str().unwrap().contains("no shader found"), "{report}");
    let (code, stderr, report) = build(&["--allow-empty"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(report["empty_input"].is_null());
    let (code, stderr, report) = build(&["--offline", "--dxc", "/nonexistent/libdxcompiler.so"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(report["exit_code"], 1);
    assert!(report["fatal"][0].as_str().unwrap().contains("/nonexistent/libdxcompiler.so"), "{report}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every duplicate is listed (path, offset, index, key), not only counted.
#[test]
fn duplicates_are_listed_in_the_report() {
    let dir = tmpdir("duplicates");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let agal = walkdir::WalkDir::new(repo().join("tests/corpus/agal"))
        .into_iter()
        .filter_map(Result::ok)
        .find(|e| e.path().extension().is_some_and(|x| x == "agal"))
        .unwrap();
    for name in ["a.agal", "b.agal", "c.agal"] {
        std::fs::copy(agal.path(), input.join(name)).unwrap();
    }
    let out = shrec()
        .arg("build")
        .arg(&input)
        .arg("-o")
        .arg(dir.join("c.cpp"))
        .arg("--no-cache")
        .arg("-q")
        .arg("--report")
        .arg(dir.join("r.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    let dups = report["duplicates"].as_array().unwrap();
    assert_eq!(dups.len(), 2, "{report}");
    let built = report["outcomes"][0]["path"].as_str().unwrap();
    let mut paths: Vec<&str> = dups.iter().map(|d| d["path"].as_str().unwrap()).chain([built]).collect();
    paths.sort();
    assert_eq!(paths, ["a.agal", "b.agal", "c.agal"].map(|n| input.join(n).display().to_string()));
    assert!(dups.iter().all(|d| d["key"] == report["outcomes"][0]["key"]));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Project hooks end to end: `--override-dir` replaces one shader's HLSL (reported), `-D`,
/// `--prelude` and `--dxc-arg` reach DXC (the override only compiles when all three did), both
/// in-process and with `--isolate-dxc`; the `--hlsl-dir` copy shows the applied text.
#[test]
fn hooks_reach_dxc_and_overrides_are_reported() {
    let dir = tmpdir("hooks");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let fragment = walkdir::WalkDir::new(repo().join("tests/corpus/agal"))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "agal"))
        .find(|e| {
            let s = shrec::scan::scan_dir(e.path());
            s.shaders.len() == 1 && s.shaders[0].stage == shrec::Stage::Pixel
        })
        .expect("an AGAL fragment program");
    std::fs::copy(fragment.path(), input.join("fs.agal")).unwrap();
    let key = shrec::scan::scan_dir(&input).shaders[0].key;
    let overrides = dir.join("overrides");
    std::fs::create_dir_all(&overrides).unwrap();
    std::fs::write(
        overrides.join(format!("{key:016X}.hlsl")),
        "#if !defined(FROM_DXC_ARG) || FROM_DEFINE != 3\n#error hooks not applied\n#endif\n\
         float4 main() : SV_Target0 { return from_prelude(); }\n",
    )
    .unwrap();
    std::fs::write(dir.join("prelude.hlsl"), "float4 from_prelude() { return float4(1, 0, 0, 1); }\n").unwrap();
    for isolate in [false, true] {
        let hlsl_dir = dir.join(format!("hlsl-{isolate}"));
        let report = dir.join("r.json");
        let mut cmd = shrec();
        cmd.arg("build").arg(&input).arg("-o").arg(dir.join("c.cpp")).arg("--no-cache").arg("--report").arg(&report);
        cmd.arg("--override-dir").arg(&overrides).arg("--prelude").arg(dir.join("prelude.hlsl"));
        cmd.args(["-D", "FROM_DEFINE=3", "--dxc-arg=-DFROM_DXC_ARG"]).arg("--hlsl-dir").arg(&hlsl_dir);
        if isolate {
            cmd.arg("--isolate-dxc");
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(stderr.contains(&format!("note: {}", input.join("fs.agal").display())) && stderr.contains("HLSL from"), "{stderr}");
        let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        assert_eq!(r["outcomes"][0]["status"], "compiled");
        assert_eq!(r["outcomes"][0]["hlsl_override"].as_str().unwrap(), overrides.join(format!("{key:016X}.hlsl")).display().to_string());
        let written = std::fs::read_to_string(hlsl_dir.join(shrec::dxc::hlsl_file_name(key, shrec::Family::Agal, shrec::Stage::Pixel))).unwrap();
        assert!(written.starts_with("#define FROM_DEFINE 3\n") && written.contains("from_prelude() { return"), "{written}");
    }
    // Without the DXC argument the override's #error fires: the argument really reached DXC.
    let out = shrec()
        .arg("build")
        .arg(&input)
        .arg("-o")
        .arg(dir.join("c.cpp"))
        .arg("--no-cache")
        .arg("-q")
        .arg("--override-dir")
        .arg(&overrides)
        .arg("--prelude")
        .arg(dir.join("prelude.hlsl"))
        .args(["-D", "FROM_DEFINE=3"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("hooks not applied") && stderr.contains(&format!("{key:016X}.agal.fragment.hlsl:")), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--abi xenosrecomp`: the project's own `shader_cache.h` (here: UnleashedRecomp's declarations,
/// the first part of shrec's header) is neither refused nor touched, the `.cpp` defines exactly
/// XenosRecomp's symbols (nothing `shrec`), and a consumer compiles and links against the pair.
#[test]
fn xenosrecomp_abi_uses_the_projects_own_header() {
    if Command::new("g++").arg("--version").output().is_err() {
        return;
    }
    let dir = tmpdir("abi-xr");
    let gen = dir.join("gen");
    std::fs::create_dir_all(&gen).unwrap();
    let header = gen.join("shader_cache.h");
    let ur_part = &shrec::cache::cpp::HEADER[..shrec::cache::cpp::HEADER.find("// ---- shrec extras").unwrap()];
    std::fs::write(&header, ur_part).unwrap();
    let input = repo().join("tests/corpus/xenos");
    let out = shrec().arg("build").arg(&input).arg("-o").arg(gen.join("shader_cache.cpp")).args(["--abi", "xenosrecomp", "-q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(&header).unwrap(), ur_part, "the project's header is left alone");
    let cpp = std::fs::read_to_string(gen.join("shader_cache.cpp")).unwrap();
    // (SHREC_MSVC_INC_ID is no symbol: a macro of the .msvc.inc the .cpp checks under cl.exe)
    let symbols = cpp.replace("SHREC_MSVC_INC_ID", "");
    assert!(!symbols.contains("g_shrec") && !symbols.contains("SHREC_"), "only XenosRecomp's symbols");
    std::fs::write(
        dir.join("main.cpp"),
        "#include \"shader_cache.h\"\n#include <cstdio>\nint main() {\n\
         for (size_t i = 1; i < g_shaderCacheEntryCount; i++) if (g_shaderCacheEntries[i - 1].hash >= g_shaderCacheEntries[i].hash) return 1;\n\
         std::printf(\"%zu %zu %zu\\n\", g_shaderCacheEntryCount, g_dxilCacheCompressedSize > 0 ? (size_t)g_compressedDxilCache[0] : 0, g_spirvCacheDecompressedSize > 0 ? (size_t)1 : 0);\n\
         return 0; }\n",
    )
    .unwrap();
    let exe = dir.join("consumer");
    let status = Command::new("g++")
        .args(["-std=c++17", "-Wall", "-Werror", "-I"])
        .arg(&gen)
        .arg(dir.join("main.cpp"))
        .arg(gen.join("shader_cache.cpp"))
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap();
    assert!(status.success());
    let printed = String::from_utf8(Command::new(&exe).output().unwrap().stdout).unwrap();
    let keys: std::collections::BTreeSet<u64> = shrec::scan::scan_dir(&input).shaders.iter().map(|s| s.key).collect();
    // zstd's magic starts the DXIL blob (0x28 = 40); SPIR-V was built.
    assert_eq!(printed.trim(), format!("{} 40 1", keys.len()));
    // Per-shader frames need shrec's header: refused before any work.
    let out = shrec()
        .arg("build")
        .arg(&input)
        .arg("-o")
        .arg(gen.join("shader_cache.cpp"))
        .args(["--abi", "xenosrecomp", "--layout", "per-shader", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--abi xenosrecomp"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 23 B13: a file name that is not UTF-8 no longer stops the scan index from being written
/// (the other files are indexed), and reports keep its bytes as `\xNN`; the error line's command
/// still opens the file (through printf, the portable way to type such a name).
#[test]
fn non_utf8_file_names_are_indexed_around_and_reported_exactly() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tmpdir("non-utf8");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let bad =
        std::fs::read(repo().join(
            "tests/corpus-invalid/agal/ruffle-rs+ruffle/tests/tests/swfs/avm2/stage3d_agal_upload_errors/ruffle_sampler_conflict_fs_INVALID.agal",
        ))
        .unwrap();
    let name = std::ffi::OsStr::from_bytes(b"bad\xFF 100% it's.agal");
    std::fs::write(input.join(name), &bad).unwrap();
    let good = walkdir::WalkDir::new(repo().join("tests/corpus/agal"))
        .into_iter()
        .filter_map(Result::ok)
        .find(|e| e.path().extension().is_some_and(|x| x == "agal"))
        .unwrap();
    std::fs::copy(good.path(), input.join("good.agal")).unwrap();

    let index = dir.join("scan-index.json");
    let (first, _) = shrec::scan::scan_dir_incremental(&input, &index);
    assert_eq!(first.shaders.len(), 2);
    let text = std::fs::read_to_string(&index).expect("the index is written");
    assert!(text.contains("good.agal"), "{text}");

    let out = shrec().arg("build").arg(&input).arg("-o").arg(dir.join("c.cpp")).arg("--no-cache").arg("-q").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let error = stderr.lines().find(|l| l.starts_with("error:")).unwrap();
    assert!(error.contains("bad\\xFF 100% it's.agal+0x0 [agal fragment #0"), "{error}");
    let listing = run_see_command(error);
    assert!(listing.contains("tex"), "{listing}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A file rewritten between the scan and the compile, same length, other bytes (issue 23, B9):
/// the build used to compile the new bytes and cache them under the key the scan had computed
/// from the old ones, exit 0. The build reads containers again through `scan::read_container`,
/// which now computes the key again from the bytes it read: a shader whose key changed fails,
/// naming the change; one whose bytes did not change still reads.
#[test]
fn a_file_rewritten_after_the_scan_is_not_built_under_its_old_key() {
    let dir = tmpdir("rewritten");
    let gsh = walkdir::WalkDir::new(repo().join("tests/corpus/gx2"))
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "gsh"))
        .find(|e| formats::gx2::gfd::pairs(&std::fs::read(e.path()).unwrap()).is_ok_and(|p| p.len() >= 2))
        .expect("a GFD with two shaders");
    let file = dir.join("two.gsh");
    std::fs::copy(gsh.path(), &file).unwrap();
    let scan = shrec::scan::scan_dir(&dir);
    assert!(scan.shaders.len() >= 2 && scan.errors.is_empty(), "{:?}", scan.errors);
    // same length, one byte of shader 0's program changed
    let mut bytes = std::fs::read(&file).unwrap();
    let (_, _, program) = formats::gx2::gfd::pairs(&bytes).unwrap()[0];
    bytes[program.data_offset] ^= 0xFF;
    std::fs::write(&file, &bytes).unwrap();
    let first = scan.shaders.iter().find(|s| s.index == 0).unwrap();
    let Err(e) = shrec::scan::read_container(first) else { panic!("shader 0 changed, but its new bytes were read under the scan's key") };
    assert!(e.starts_with("file changed since the scan: shader 0 now has key 0x") && e.ends_with("; not built"), "{e}");
    assert!(e.contains(&format!("(the scan found {})", shrec::scan::key_hex(first.key))), "{e}");
    let second = scan.shaders.iter().find(|s| s.index == 1).unwrap();
    shrec::scan::read_container(second).expect("shader 1 is unchanged");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A full `--hlsl-dir` disk (issue 23, B3): each shader whose HLSL file could not be written
/// failed, so a full disk silently dropped them from the cache (143 shaders → 6). Now the file
/// is an error of its own (an `error:` line per file, exit code 2) and every shader is still
/// built: the cache equals the one built without `--hlsl-dir`, byte for byte. The folder is a
/// tmpfs with room for the prelude, the script and two shader files when the test may mount
/// one; otherwise directories stand where the other files would go, so their renames fail.
#[test]
fn a_full_hlsl_dir_is_an_error_but_keeps_every_shader_in_the_cache() {
    let dir = tmpdir("hlsl-full");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let mut agal: Vec<_> = walkdir::WalkDir::new(repo().join("tests/corpus/agal"))
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.extension().is_some_and(|x| x == "agal"))
        .collect();
    agal.truncate(8);
    for (i, p) in agal.iter().enumerate() {
        std::fs::copy(p, input.join(format!("{i}.agal"))).unwrap();
    }
    let shaders = shrec::scan::scan_dir(&input).shaders;
    let keys: std::collections::BTreeSet<u64> = shaders.iter().map(|s| s.key).collect();
    assert!(keys.len() >= 6, "{} distinct shaders", keys.len());

    let hlsl = dir.join("hlsl");
    std::fs::create_dir_all(&hlsl).unwrap();
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let page = 4096;
    let size = shrec::hlsl::PRELUDE.len().div_ceil(page) * page + page + 2 * page;
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(&hlsl)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let _unmount = mounted.then(|| Unmount(hlsl.clone()));
    if !mounted {
        eprintln!("cannot mount a tmpfs: directories block the HLSL files instead");
        for s in shaders.iter().skip(2) {
            std::fs::create_dir_all(hlsl.join(shrec::dxc::hlsl_file_name(s.key, s.family, s.stage))).unwrap();
        }
    }
    // the two builds write c.cpp in folders of their own, so their outputs compare byte for byte
    let build = |folder: &str, with_dir: bool| {
        let (out, report) = (dir.join(folder).join("c.cpp"), dir.join(format!("{folder}.json")));
        let mut c = shrec();
        c.arg("build").arg(&input).arg("-o").arg(&out).arg("--no-cache").arg("-q").arg("--report").arg(&report);
        if with_dir {
            c.arg("--hlsl-dir").arg(&hlsl);
        }
        let o = c.output().unwrap();
        let report: serde_json::Value = serde_json::from_slice(&std::fs::read(report).unwrap()).unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned(), report)
    };
    let (code, stderr, report) = build("full", true);
    let dump_errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:") && l.contains("--hlsl-dir: writing ")).collect();
    eprintln!("{} of {} HLSL files not written ({})", dump_errors.len(), keys.len(), if mounted { "full tmpfs" } else { "blocked by directories" });
    assert_eq!(code, Some(2), "{stderr}");
    assert!(dump_errors.len() >= keys.len() - 2, "{stderr}");
    assert_eq!(dump_errors.len(), stderr.lines().filter(|l| l.starts_with("error:")).count(), "{stderr}");
    if mounted {
        assert!(dump_errors.iter().all(|l| l.contains("No space left on device")), "{stderr}");
    }
    assert!(dump_errors.iter().all(|l| l.ends_with("(the shader is built and in the cache; only this copy of its HLSL is missing)")), "{stderr}");
    assert_eq!(report["totals"]["compiled"], keys.len(), "{report}");
    assert_eq!(report["totals"]["failed"], 0, "{report}");
    let with_error = report["outcomes"].as_array().unwrap().iter().filter(|o| o["hlsl_dump_error"].is_string()).count();
    assert_eq!(with_error, dump_errors.len());

    let (code, stderr, _) = build("plain", false);
    assert_eq!(code, Some(0), "{stderr}");
    for name in ["c.cpp", "c.h", "c.msvc.inc"] {
        let same = std::fs::read(dir.join("full").join(name)).unwrap() == std::fs::read(dir.join("plain").join(name)).unwrap();
        assert!(same, "{name} differs between the builds with and without the full --hlsl-dir");
    }
    drop(_unmount);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Each failed shader's `error_kind` names its cause (docs/report-json.md): on real failures of
/// four kinds — a GFD whose header block lost its `}BLK` trailer, a DVLB with an output of an
/// unknown type (both listed by the scan, refused when loaded), the corpus's invalid AGAL
/// program, and then every shader once with a prelude DXC cannot compile and once over
/// `--max-hlsl-bytes` — the report has the kind and the typed errors match.
#[test]
fn failure_kinds_name_the_cause() {
    use shrec::formats::container_fault::ContainerFault;
    use shrec::formats::gx2::error::Gx2Error;
    use shrec::formats::pica::error::PicaError;
    use shrec::formats::ShaderError;
    let dir = tmpdir("failure-kinds");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let mut gsh = std::fs::read(repo().join("tests/corpus/gx2/devkitPro+wut/samples/cmake/content/pos_col_shader.gsh")).unwrap();
    let trailer = gsh.windows(4).position(|w| w == b"}BLK").expect("a relocation trailer");
    gsh[trailer + 3] = b'X';
    let e = formats::translate(ContainerKind::Gfd, &gsh, 0, &TranslateOptions::default()).unwrap_err();
    assert!(matches!(e, ShaderError::Gx2(Gx2Error::Container { offset: Some(_), fault: ContainerFault::Signature(_) })), "{e:?}");
    std::fs::write(input.join("no_trailer.gsh"), &gsh).unwrap();
    let mut shbin = std::fs::read(repo().join("tests/corpus/pica/TaraHoleInIt+minivmac-3ds/src/3DSGLU__vshader_shbin.shbin")).unwrap();
    let dvle = formats::pica::dvlb::parse(&shbin).unwrap().dvles[0].offset;
    let le32 = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize;
    assert!(le32(&shbin, dvle + 0x2C) > 0, "the DVLE has outputs");
    let output = dvle + le32(&shbin, dvle + 0x28);
    shbin[output..output + 2].copy_from_slice(&7u16.to_le_bytes()); // output types are 0-6, 8, 9
    let e = formats::translate(ContainerKind::Dvlb, &shbin, 0, &TranslateOptions::default()).unwrap_err();
    assert!(matches!(e, ShaderError::Pica(PicaError::Container { fault: ContainerFault::BadValue(_), .. })), "{e:?}");
    std::fs::write(input.join("bad_output.shbin"), &shbin).unwrap();
    let invalid = repo()
        .join("tests/corpus-invalid/agal/ruffle-rs+ruffle/tests/tests/swfs/avm2/stage3d_agal_upload_errors/ruffle_sampler_conflict_fs_INVALID.agal");
    std::fs::copy(&invalid, input.join("invalid.agal")).unwrap();
    let good = repo().join("tests/corpus/agal/adobe+glsl2agal/agalassembler/adobe_glsl2agal_test2_fs.agal");
    std::fs::copy(&good, input.join("good.agal")).unwrap();

    let build = |extra: &[&str]| -> Vec<(String, String)> {
        let report_path = dir.join("r.json");
        let out = shrec()
            .arg("build")
            .arg(&input)
            .arg("-o")
            .arg(dir.join("c.cpp"))
            .args(["--no-cache", "-q", "--report"])
            .arg(&report_path)
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
        let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report_path).unwrap()).unwrap();
        let mut kinds: Vec<(String, String)> = r["outcomes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                let name = Path::new(o["file"].as_str().unwrap()).file_name().unwrap().to_string_lossy().into_owned();
                (name, o["error_kind"].as_str().unwrap_or(o["status"].as_str().unwrap()).to_string())
            })
            .collect();
        kinds.sort();
        kinds
    };
    let pairs = |v: &[(&str, &str)]| v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
    assert_eq!(
        build(&[]),
        pairs(&[
            ("bad_output.shbin", "pica.container"),
            ("good.agal", "compiled"),
            ("invalid.agal", "agal.microcode"),
            // (its pixel shader's header block keeps its trailer)
            ("no_trailer.gsh", "compiled"),
            ("no_trailer.gsh", "gx2.container"),
        ])
    );
    std::fs::remove_file(input.join("no_trailer.gsh")).unwrap();
    std::fs::remove_file(input.join("bad_output.shbin")).unwrap();
    std::fs::remove_file(input.join("invalid.agal")).unwrap();
    let prelude = dir.join("prelude.hlsl");
    std::fs::write(&prelude, "this is not HLSL;\n").unwrap();
    assert_eq!(build(&["--prelude", prelude.to_str().unwrap()]), pairs(&[("good.agal", "dxc.compile")]));
    assert_eq!(build(&["--max-hlsl-bytes", "100"]), pairs(&[("good.agal", "limit.hlsl")]));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 22 item 6: `scan --json` and `build --report` are one schema. On the same input (two
/// copies of a program, one named with a line break and an ESC, a zip named with a quote and an
/// invalid program inside it, a GFD whose shaders cannot be listed), both documents carry
/// `schema_version`, name each shader with the same fields and equal values, list the same
/// duplicates and the same scan errors; nothing from the input reaches the text unescaped.
#[test]
fn scan_json_and_build_report_share_one_schema() {
    use std::io::Write;
    let dir = tmpdir("schema");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let agal = |rel: &str| std::fs::read(repo().join("tests/corpus/agal/adobe+glsl2agal/agalassembler").join(rel)).unwrap();
    std::fs::write(input.join("a.agal"), agal("adobe_glsl2agal_test2_fs.agal")).unwrap();
    // a file name with a line break and an ESC sequence: serde_json escapes them
    std::fs::write(input.join("b\n\u{1b}[31m.agal"), agal("adobe_glsl2agal_test2_fs.agal")).unwrap();
    let invalid = repo()
        .join("tests/corpus-invalid/agal/ruffle-rs+ruffle/tests/tests/swfs/avm2/stage3d_agal_upload_errors/ruffle_sampler_conflict_fs_INVALID.agal");
    let mut w = zip::ZipWriter::new(std::fs::File::create(input.join("pack \"q\".zip")).unwrap());
    w.start_file("sub/evil\n\u{1b}[31m.agal", zip::write::SimpleFileOptions::default()).unwrap();
    w.write_all(&agal("adobe_glsl2agal_complexrtt2_fs.agal")).unwrap();
    w.start_file("sub/bad.agal", zip::write::SimpleFileOptions::default()).unwrap();
    w.write_all(&std::fs::read(invalid).unwrap()).unwrap();
    w.finish().unwrap();
    std::fs::copy(repo().join("tests/corpus-invalid/gx2/rust-wiiu+gfd/tests/vertex-program.gsh"), input.join("bad.gsh")).unwrap();

    let scan = shrec().arg("scan").arg(&input).arg("--json").output().unwrap();
    assert_eq!(scan.status.code(), Some(2), "scan errors: {}", String::from_utf8_lossy(&scan.stderr));
    let report_path = dir.join("r.json");
    let build = shrec()
        .arg("build")
        .arg(&input)
        .arg("-o")
        .arg(dir.join("c.cpp"))
        .arg("--no-cache")
        .arg("-q")
        .arg("--report")
        .arg(&report_path)
        .output()
        .unwrap();
    assert_eq!(build.status.code(), Some(2), "{}", String::from_utf8_lossy(&build.stderr));
    let build_text = std::fs::read(&report_path).unwrap();
    for text in [&scan.stdout, &build_text] {
        assert!(!text.contains(&0x1b), "an ESC reached the JSON text unescaped");
    }
    let s: serde_json::Value = serde_json::from_slice(&scan.stdout).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&build_text).unwrap();
    assert_eq!(s["schema_version"], 4);
    assert_eq!(b["schema_version"], 4);
    assert_eq!((s["command"].as_str(), b["command"].as_str()), (Some("scan"), Some("build")));
    assert_eq!((&s["exit_code"], &b["exit_code"]), (&2.into(), &2.into()));

    const SHADER: [&str; 10] = ["path", "file", "member", "container", "family", "stage", "offset", "index", "key", "name"];
    let pick = |v: &serde_json::Value, fields: &[&str]| {
        fields.iter().map(|f| (f.to_string(), v.get(*f).cloned().unwrap_or_else(|| panic!("no {f} in {v}")))).collect::<BTreeMap<_, _>>()
    };
    let outcomes = b["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 3, "{b}");
    for o in outcomes {
        let same = s["shaders"].as_array().unwrap().iter().find(|x| x["path"] == o["path"] && x["offset"] == o["offset"] && x["index"] == o["index"]);
        let same = same.unwrap_or_else(|| panic!("{o} not in the scan's {}", s["shaders"]));
        assert_eq!(pick(same, &SHADER), pick(o, &SHADER));
    }
    let evil = outcomes.iter().find(|o| o["member"][0].as_str().is_some_and(|m| m.starts_with("sub/evil"))).expect("the zip member");
    // (the archive reader already names members with their control characters escaped)
    let member = evil["member"][0].as_str().unwrap();
    assert!(!member.chars().any(char::is_control), "{member:?}");
    assert_eq!(evil["file"], input.join("pack \"q\".zip").display().to_string());
    assert_eq!(evil["path"], format!("{}!{member}", input.join("pack \"q\".zip").display()));
    assert_eq!(evil["container"], "agal");

    // The invalid program: a failure with its kind, message and place.
    let failed: Vec<_> = outcomes.iter().filter(|o| o["status"] == "failed").collect();
    assert_eq!(failed.len(), 1, "{b}");
    let f = failed[0];
    assert_eq!((f["error_kind"].as_str(), f["phase"].as_str()), (Some("agal.microcode"), Some("translate")), "{f}");
    assert!(f["message"].as_str().unwrap().contains("sub/bad.agal"), "{f}");
    assert!(f["reason"].is_string() && f["command"].is_string(), "{f}");
    if let Some(d) = f["detail_offset"].as_u64() {
        assert_eq!(f["at"].as_u64(), Some(f["offset"].as_u64().unwrap() + d));
    } else {
        assert!(f["at"].is_null());
    }

    // The same duplicate, with the same fields.
    let dups = |v: &serde_json::Value| v["duplicates"].as_array().unwrap().iter().map(|d| pick(d, &SHADER)).collect::<Vec<_>>();
    assert_eq!(dups(&s).len(), 1, "{s}");
    assert_eq!(dups(&s), dups(&b));
    assert_eq!(dups(&s)[0]["path"], input.join("b\n\u{1b}[31m.agal").display().to_string(), "the name, exactly, once parsed");

    // The same scan error, every field equal.
    let errors = |v: &serde_json::Value| v["scan_errors"].as_array().unwrap().clone();
    assert_eq!(errors(&s).len(), 1, "{s}");
    assert_eq!(errors(&s), errors(&b));
    let e = &errors(&s)[0];
    assert_eq!((e["error_kind"].as_str(), e["container"].as_str(), e["family"].as_str()), (Some("container"), Some("gfd"), Some("gx2")));
    assert_eq!((e["offset"].as_u64(), e["at"].as_u64()), (Some(0), Some(0x20)));
    assert!(e["message"].as_str().unwrap().contains("bad.gsh+0x20 [gx2]: gfd container: "), "{e}");

    // A scan that cannot run still writes its document.
    let missing = shrec().arg("scan").arg(dir.join("nonexistent")).arg("--json").output().unwrap();
    assert_eq!(missing.status.code(), Some(1));
    let m: serde_json::Value = serde_json::from_slice(&missing.stdout).unwrap();
    assert_eq!((&m["schema_version"], &m["exit_code"]), (&4.into(), &1.into()));
    assert!(m["fatal"][0].as_str().unwrap().contains("nonexistent: no such file or directory"), "{m}");
    std::fs::remove_dir_all(&dir).unwrap();
}
