//! `--override-dir` for Xenos shaders (the mask an override declares, unread files named), the
//! per-backend result of a shader one backend rejects, and the failure path on stderr, in CI
//! annotations and in `--hlsl-dir`'s `dxc.sh`.

use crate::common;

use common::{copy_tree, repo, tmpdir};
use shrec::build::{self, BuildOptions};
use shrec::formats::{self, TranslateOptions};
use shrec::report::{Phase, Status};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn shrec() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shrec"))
}

/// A copy of one Xenos container of the corpus with one byte changed so that it still scans
/// (same container, new key) but no longer translates, because an instruction's opcode is one
/// shrec rejects: (mutated bytes, original key, the translation's error).
fn untranslatable_xenos() -> (Vec<u8>, u64, String) {
    for (key, (_, bytes)) in common::xenos_corpus() {
        // From the end: the microcode follows the header and tables.
        for at in (0..bytes.len()).rev() {
            for flip in [0xFFu8, 0x80, 0x40, 0x20] {
                let mut m = bytes.clone();
                m[at] ^= flip;
                if let Err(e) = formats::translate(shrec::detect::ContainerKind::Xenos, &m, 0, &TranslateOptions::default()) {
                    let reason = e.reason();
                    let found = shrec::detect::detect(&m);
                    if reason.contains("opcode") && found.len() == 1 && found[0].offset == 0 {
                        return (m, key, reason);
                    }
                }
            }
        }
    }
    panic!("no single byte change makes a corpus shader untranslatable by its opcode");
}

/// Acceptance of the override item: the HLSL shrec generates for every Xenos corpus shader,
/// given back through `--override-dir` (as a user takes it from `--hlsl-dir`), builds with 0
/// failures for DXIL and SPIR-V, with the mask it declares; so does one shader made
/// untranslatable by one changed opcode byte, whose override is its original's HLSL.
#[test]
fn generated_xenos_hlsl_works_as_an_override_even_when_translation_fails() {
    let dir = tmpdir("xenos-overrides");
    let input = dir.join("in");
    copy_tree(&repo().join("tests/corpus/xenos"), &input);
    let (mutated, original_key, reason) = untranslatable_xenos();
    std::fs::write(input.join("broken.bin"), &mutated).unwrap();
    let broken_key = {
        let s = shrec::scan::scan_dir(&input.join("broken.bin"));
        assert_eq!(s.shaders.len(), 1);
        s.shaders[0].key
    };
    let hlsl_dir = dir.join("hlsl");
    let build = |extra: &[&str]| {
        shrec()
            .arg("build")
            .arg(&input)
            .arg("-o")
            .arg(dir.join("c.cpp"))
            .arg("--no-cache")
            .arg("--report")
            .arg(dir.join("r.json"))
            .args(["--allow-failures", "-q"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = build(&["--hlsl-dir", hlsl_dir.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("0x{broken_key:016X}")) && stderr.contains("shrec: 1 of "), "{reason}\n{stderr}");

    // Every generated file, named by its key; the broken shader gets its original's text.
    let overrides = dir.join("overrides");
    std::fs::create_dir_all(&overrides).unwrap();
    let mut with_mask = 0;
    for e in std::fs::read_dir(&hlsl_dir).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        let Some(key) = name.strip_suffix(".xenos.vertex.hlsl").or_else(|| name.strip_suffix(".xenos.pixel.hlsl")) else { continue };
        let key = u64::from_str_radix(key, 16).unwrap();
        let text = std::fs::read_to_string(hlsl_dir.join(&name)).unwrap();
        with_mask += usize::from(shrec::hlsl::declared_spec_constants_mask(&text).unwrap().is_some_and(|m| m != 0));
        std::fs::write(overrides.join(format!("{key:016X}.hlsl")), &text).unwrap();
        if key == original_key {
            std::fs::write(overrides.join(format!("{broken_key:016X}.hlsl")), &text).unwrap();
        }
    }
    assert!(with_mask > 0, "some corpus shaders use specialization constants");
    assert!(overrides.join(format!("{broken_key:016X}.hlsl")).exists());

    let out = build(&["--override-dir", overrides.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    assert_eq!(r["totals"]["failed"], 0, "{stderr}");
    assert_eq!(r["totals"]["compiled"], r["totals"]["found"], "{stderr}");
    assert!(!stderr.contains("error:"), "{stderr}");

    // Library view of the same build: the broken shader has DXIL and SPIR-V and its original's
    // mask, which its override declared.
    let mut opts = BuildOptions::new(&input, dir.join("lib.cpp"));
    opts.cache_dir = None;
    opts.allow_failures = true;
    opts.hooks = shrec::hooks::Hooks::new(None, &[], Some(overrides.clone()), vec![]).unwrap();
    let built = build::run(&opts).unwrap();
    let masks: std::collections::BTreeMap<u64, u32> = built.entries.iter().map(|e| (e.key, e.spec_constants_mask)).collect();
    let broken = built.entries.iter().find(|e| e.key == broken_key).expect("the broken shader is in the cache");
    assert!(broken.dxil.is_some() && broken.spirv.is_some());
    assert_eq!(broken.spec_constants_mask, masks[&original_key]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Override files no shader reads are named on stderr: a key no shader has, `0x`, lower case.
#[test]
fn unread_override_files_get_a_warning() {
    let dir = tmpdir("override-warnings");
    let input = repo().join("tests/corpus/xenos/LibXenonProject+xmplayer");
    let key = shrec::scan::scan_dir(&input).shaders.iter().map(|s| s.key).min().unwrap();
    let overrides = dir.join("overrides");
    std::fs::create_dir_all(&overrides).unwrap();
    for name in ["FFFFFFFFFFFFFFFF.hlsl".to_string(), format!("0x{key:016X}.hlsl"), format!("{key:016x}.hlsl"), "README.md".into()] {
        std::fs::write(overrides.join(name), "// not read\n").unwrap();
    }
    let out = shrec()
        .arg("build")
        .arg(&input)
        .arg("-o")
        .arg(dir.join("c.cpp"))
        .arg("--no-cache")
        .arg("-q")
        .arg("--override-dir")
        .arg(&overrides)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.starts_with("warning: --override-dir file")).collect();
    assert_eq!(warnings.len(), 3, "{stderr}");
    assert!(warnings.iter().any(|w| w.contains("FFFFFFFFFFFFFFFF.hlsl: matches no shader")), "{stderr}");
    let wanted = format!("shrec reads {key:016X}.hlsl");
    assert_eq!(warnings.iter().filter(|w| w.contains(&wanted)).count(), 2, "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An AGAL fragment program of the corpus (a file holding just it) in `dir/in`, alone or with
/// the whole AGAL corpus (so the build goes on around it), and its key.
fn agal_input(dir: &Path, with_rest: bool) -> (PathBuf, u64) {
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    if with_rest {
        copy_tree(&repo().join("tests/corpus/agal"), &input);
    }
    let fragment = common::files_with_extension(&repo().join("tests/corpus/agal"), "agal")
        .into_iter()
        .find(|p| {
            let s = shrec::scan::scan_dir(p);
            s.shaders.len() == 1 && s.shaders[0].stage == shrec::Stage::Pixel
        })
        .expect("an AGAL fragment program");
    std::fs::copy(&fragment, input.join("fs.agal")).unwrap();
    let key = shrec::scan::scan_dir(&input.join("fs.agal")).shaders[0].key;
    (input, key)
}

/// A shader DXIL rejects is still in the cache with its SPIR-V, and the other way round; the
/// report names the backend that failed.
#[test]
fn one_backend_failing_keeps_the_other() {
    let dir = tmpdir("per-backend");
    let (input, key) = agal_input(&dir, false);
    for (failing, phase, kept) in [("__spirv__", Phase::DxcSpirv, "DXIL"), ("SHREC_NOT_SPIRV", Phase::DxcDxil, "SPIR-V")] {
        let overrides = dir.join(format!("o-{failing}"));
        std::fs::create_dir_all(&overrides).unwrap();
        // `__spirv__` is defined by DXC when it compiles for SPIR-V only.
        let guard = if failing == "__spirv__" { "#ifdef __spirv__" } else { "#ifndef __spirv__" };
        std::fs::write(
            overrides.join(format!("{key:016X}.hlsl")),
            format!("{guard}\n#error not for this backend\n#endif\nfloat4 main() : SV_Target0 {{ return 1; }}\n"),
        )
        .unwrap();
        let mut opts = BuildOptions::new(&input, dir.join("c.cpp"));
        opts.cache_dir = None;
        opts.hooks = shrec::hooks::Hooks::new(None, &[], Some(overrides), vec![]).unwrap();
        let built = build::run(&opts).unwrap();
        let Status::Failed { phase: got, reason, .. } = &built.report.outcomes[0].status else { panic!("{:?}", built.report.outcomes[0].status) };
        assert_eq!(*got, phase);
        assert!(reason.contains("not for this backend") && reason.ends_with(&format!("(its {kept} is in the cache)")), "{reason}");
        let e = &built.entries[0];
        assert_eq!(e.key, key);
        assert_eq!((e.dxil.is_some(), e.spirv.is_some()), (kept == "DXIL", kept == "SPIR-V"));
        assert_eq!(shrec::report::exit_code(&built.report), 2, "still a failure");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// DXC's diagnostics keep their line breaks under the `error:` line; the error is printed while
/// the build still runs (the output file does not exist yet when it arrives), and `-q` ends with
/// one line naming `--allow-failures` / `ALLOW_FAILURES`.
#[test]
fn errors_keep_line_breaks_arrive_as_they_happen_and_quiet_builds_close_with_a_count() {
    let dir = tmpdir("failure-path");
    let (input, key) = agal_input(&dir, true);
    let overrides = dir.join("overrides");
    std::fs::create_dir_all(&overrides).unwrap();
    std::fs::write(overrides.join(format!("{key:016X}.hlsl")), "float4 main() : SV_Target0 {\n  return undeclared_a + undeclared_b;\n}\n").unwrap();
    let out_cpp = dir.join("c.cpp");
    // One thread: shaders go in key order, the failing one (smallest key) first.
    let mut child = shrec()
        .arg("build")
        .arg(&input)
        .arg("-o")
        .arg(&out_cpp)
        .args(["--no-cache", "-q", "-j", "1", "--override-dir"])
        .arg(&overrides)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mine = format!("0x{key:016X}");
    let first = lines.by_ref().map(Result::unwrap).find(|l| l.starts_with("error: ") && l.contains(&mine)).expect("the error line");
    assert!(!out_cpp.exists(), "the error line came before the cache was written: {first}");
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    assert_eq!(child.wait().unwrap().code(), Some(2));
    assert!(first.contains("rejected the generated HLSL: (see: shrec hlsl"), "{first}");
    let details: Vec<&String> = rest.iter().take_while(|l| l.starts_with("    ")).collect();
    assert!(details.len() >= 2, "{first}\n{rest:?}");
    assert!(details.iter().any(|l| l.contains("undeclared_a")) && details.iter().any(|l| l.contains("undeclared_b")), "{rest:?}");
    assert!(!first.contains("\\u{a}"), "{first}");
    let last = rest.last().unwrap();
    assert!(
        last.starts_with("shrec: ") && last.contains("shaders failed") && last.contains("--allow-failures") && last.contains("ALLOW_FAILURES"),
        "{rest:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Under GitHub Actions: one `::error` per failure with a title and the file on disk relative
/// to the workspace, and a Markdown table appended to `$GITHUB_STEP_SUMMARY`.
#[test]
fn github_actions_get_titled_annotations_and_a_step_summary() {
    let dir = tmpdir("gha");
    let (input, key) = agal_input(&dir, false);
    let overrides = dir.join("overrides");
    std::fs::create_dir_all(&overrides).unwrap();
    std::fs::write(overrides.join(format!("{key:016X}.hlsl")), "float4 main() : SV_Target0 { return nope; }\n").unwrap();
    let summary = dir.join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let out = shrec()
        .arg("build")
        .arg(&input)
        .arg("-o")
        .arg(dir.join("c.cpp"))
        .args(["--no-cache", "-q", "--override-dir"])
        .arg(&overrides)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_WORKSPACE", &dir)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let annotations: Vec<&str> = stdout.lines().filter(|l| l.starts_with("::error")).collect();
    assert_eq!(annotations.len(), 1, "{stdout}");
    assert!(annotations[0].starts_with("::error file=in/fs.agal,title=shrec%3A agal fragment shader failed (dxc-dxil)::"), "{stdout}");
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.starts_with("earlier step\n### shrec build\n"), "{md}");
    assert!(md.contains("| agal | 1 | 0 | 1 | 0 | 0 |") && md.contains(&format!("0x{key:016X} | dxc-dxil |")), "{md}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--hlsl-dir`'s `dxc.sh` compiles a file that declares a non-zero mask to DXIL as a library
/// (`lib_6_3`), the others with their stage profile, and names where `dxc` comes from.
#[test]
fn dxc_script_picks_the_library_profile_per_file() {
    let dir = tmpdir("dxc-sh-xenos");
    let hlsl = dir.join("hlsl");
    let out = shrec()
        .arg("build")
        .arg(repo().join("tests/corpus/xenos"))
        .arg("-o")
        .arg(dir.join("c.cpp"))
        .args(["--no-cache", "-q", "--hlsl-dir"])
        .arg(&hlsl)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let script = std::fs::read_to_string(hlsl.join("dxc.sh")).unwrap();
    assert!(script.contains("github.com/microsoft/DirectXShaderCompiler/releases") && script.contains("DXC=/path/to/dxc"), "{script}");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("fake-dxc"), "#!/bin/sh\necho \"$@\" > \"$DXC_ARGS_OUT\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("fake-dxc"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (mut library, mut stage) = (0, 0);
    for e in std::fs::read_dir(&hlsl).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if !name.ends_with(".hlsl") {
            continue;
        }
        let mask = shrec::hlsl::declared_spec_constants_mask(&std::fs::read_to_string(hlsl.join(&name)).unwrap()).unwrap().unwrap_or(0);
        let record = dir.join("args.txt");
        let status = Command::new("sh")
            .current_dir(&hlsl)
            .arg("dxc.sh")
            .arg(&name)
            .arg("dxil")
            .env("DXC", bin.join("fake-dxc"))
            .env("DXC_ARGS_OUT", &record)
            .status()
            .unwrap();
        assert!(status.success());
        let args = std::fs::read_to_string(&record).unwrap();
        let s = if name.contains(".pixel.") { shrec::Stage::Pixel } else { shrec::Stage::Vertex };
        let want = shrec::dxc::command_line_args(s, shrec::dxc::Target::Dxil, mask).join(" ");
        assert!(args.starts_with(&format!("{want} -Fo ")), "{name} (mask 0x{mask:X}): {args}");
        if mask != 0 {
            library += 1;
            assert!(args.contains("-T lib_6_3"));
        } else {
            stage += 1;
        }
    }
    assert!(library > 0 && stage > 0, "{library} library, {stage} stage files");
    std::fs::remove_dir_all(&dir).unwrap();
}
