//! What a new user meets first: `shrec --version`, the license files, the CMake example copied
//! out of the repository, and `shrec.cmake` rerunning when a hook file changes.

use crate::common;

use common::{have_tool, repo, run, tmpdir};
use std::process::Command;

fn shrec() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shrec"))
}

/// `shrec --version` names the DXC library a build loads (here: the provisioned copy, or the
/// one `SHREC_DXC` names), or says how a build gets one.
#[test]
fn version_names_the_dxc() {
    let out = shrec().arg("--version").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], format!("shrec {}", env!("CARGO_PKG_VERSION")));
    assert!(lines.len() == 2 && lines[1].starts_with("DXC: "), "{text}");
    let lib = shrec::dxc::locate(&shrec::dxc::LocateOptions { explicit: None, offline: true, notes: None });
    match lib {
        Ok(l) => assert!(lines[1].contains(&l.path.display().to_string()), "{text}"),
        Err(_) => assert!(lines[1].contains("--dxc"), "{text}"),
    }
    // A library named by SHREC_DXC that does not exist is reported, not loaded.
    let out = shrec().arg("--version").env("SHREC_DXC", "/nonexistent/libdxcompiler.so").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("DXC: ") && text.contains("/nonexistent/libdxcompiler.so") && text.contains("no such file"), "{text}");
}

/// LICENSE says what Cargo.toml's `license` says, and both texts it points to are there.
#[test]
fn license_files_match_the_manifest() {
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    assert!(manifest.contains("license = \"MIT OR Apache-2.0\""));
    let license = std::fs::read_to_string(repo().join("LICENSE")).unwrap();
    assert!(license.contains("MIT OR Apache-2.0") && license.contains("LICENSE-APACHE") && license.contains("LICENSE-MIT"));
    assert!(std::fs::read_to_string(repo().join("LICENSE-MIT")).unwrap().starts_with("MIT License"));
    assert!(std::fs::read_to_string(repo().join("LICENSE-APACHE"))
        .unwrap()
        .contains("Apache License\n                           Version 2.0, January 2004"));
}

/// examples/cmake copied elsewhere: configuring without SHREC_SOURCE_DIR says which variable
/// to set; with it, the example builds (Xenos corpus) and runs. The custom command is
/// USES_TERMINAL, and a changed `--prelude` file or override reruns shrec while an untouched
/// tree does not.
#[test]
fn cmake_example_works_copied_out_and_reruns_on_hook_files() {
    if !have_tool("cmake") || !have_tool("g++") {
        return;
    }
    let dir = tmpdir("cmake-copied-out");
    let example = dir.join("example");
    std::fs::create_dir_all(&example).unwrap();
    for f in ["CMakeLists.txt", "main.cpp"] {
        std::fs::copy(repo().join("examples/cmake").join(f), example.join(f)).unwrap();
    }
    let lost = Command::new("cmake").arg("-S").arg(&example).arg("-B").arg(dir.join("lost")).output().unwrap();
    assert!(!lost.status.success());
    assert!(String::from_utf8_lossy(&lost.stderr).contains("-DSHREC_SOURCE_DIR="), "{}", String::from_utf8_lossy(&lost.stderr));

    let hooks = dir.join("hooks");
    std::fs::create_dir_all(hooks.join("overrides")).unwrap();
    std::fs::write(hooks.join("prelude.hlsl"), "// prelude v1\n").unwrap();
    let build = dir.join("build");
    run(Command::new("cmake")
        .arg("-S")
        .arg(&example)
        .arg("-B")
        .arg(&build)
        .arg(format!("-DSHREC_SOURCE_DIR={}", repo().display()))
        .arg(format!("-DSHREC_EXECUTABLE={}", env!("CARGO_BIN_EXE_shrec")))
        .arg(format!("-DSHREC_INPUT={}", repo().join("tests/corpus/xenos").display()))
        .arg(format!("-DSHREC_EXTRA_ARGS=--prelude={};--override-dir;{}", hooks.join("prelude.hlsl").display(), hooks.join("overrides").display())));
    let first = run(Command::new("cmake").arg("--build").arg(&build));
    assert!(first.contains("shrec: building shader cache"), "{first}");
    let out = run(&mut Command::new(build.join("shader_cache_example")));
    assert!(out.contains(" 0 failed"), "{out}");
    // USES_TERMINAL: the Makefile generator has no console pool, but records it in the rule.
    let uses_terminal = std::fs::read_to_string(repo().join("build/shrec.cmake")).unwrap();
    assert!(uses_terminal.contains("\n        USES_TERMINAL\n"), "shrec.cmake's custom command uses the terminal");

    std::thread::sleep(std::time::Duration::from_millis(1100));
    let idle = run(Command::new("cmake").arg("--build").arg(&build));
    assert!(!idle.contains("shrec: building"), "{idle}");
    std::fs::write(hooks.join("prelude.hlsl"), "// prelude v2\n").unwrap();
    let prelude_changed = run(Command::new("cmake").arg("--build").arg(&build));
    assert!(prelude_changed.contains("shrec: building shader cache"), "a changed --prelude file reruns shrec:\n{prelude_changed}");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::write(hooks.join("overrides/FFFFFFFFFFFFFFFF.hlsl"), "// no such shader\n").unwrap();
    // (a file added to the override folder is found by the CONFIGURE_DEPENDS glob)
    let override_added = run(Command::new("cmake").arg("--build").arg(&build));
    assert!(override_added.contains("shrec: building shader cache"), "a new override reruns shrec:\n{override_added}");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::write(hooks.join("overrides/FFFFFFFFFFFFFFFF.hlsl"), "// edited\n").unwrap();
    let override_edited = run(Command::new("cmake").arg("--build").arg(&build));
    assert!(override_edited.contains("shrec: building shader cache"), "an edited override reruns shrec:\n{override_edited}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// docs/hooks.md's example runs as written: its shell block, run line by line in a folder with
/// a `game/shaders.bin` that holds a Xenos shader at the offset the example names, gives the
/// override file from `shrec hlsl` and a build that uses it (only the example's key is replaced
/// by the key of that shader). Its HLSL block is a directive the override parser accepts. (The
/// page used to show a reversed-Z `--prelude` no hook could implement.)
#[test]
fn hooks_doc_example_runs_as_written() {
    let doc = std::fs::read_to_string(repo().join("docs/hooks.md")).unwrap();
    let block = |lang: &str| -> Vec<String> {
        let start = doc.find(&format!("```{lang}\n")).unwrap_or_else(|| panic!("no {lang} block")) + lang.len() + 4;
        doc[start..start + doc[start..].find("```").unwrap()].lines().map(str::to_string).collect()
    };
    let sh = block("sh");
    assert!(!block("hlsl").is_empty() && block("hlsl").iter().all(|l| l.starts_with("// shrec: spec-constants-mask = ")));
    let offset = sh.iter().find_map(|l| l.split("--offset ").nth(1)).expect("the example names an offset");
    let offset = usize::from_str_radix(offset.split_whitespace().next().unwrap().trim_start_matches("0x"), 16).unwrap();
    let doc_key = sh.iter().find_map(|l| l.split("overrides/").nth(1)).unwrap().trim_end_matches(".hlsl").to_string();

    let dir = tmpdir("hooks-doc-example");
    let (key, (_, bytes)) = common::xenos_corpus().into_iter().next().unwrap();
    let mut bin = vec![0u8; offset];
    bin.extend_from_slice(&bytes);
    std::fs::create_dir_all(dir.join("game")).unwrap();
    std::fs::create_dir_all(dir.join("shaders/overrides")).unwrap();
    std::fs::write(dir.join("game/shaders.bin"), &bin).unwrap();
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_shrec")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let key_hex = format!("{key:016X}");
    let mut printed = String::new();
    for line in sh.iter().filter(|l| !l.trim_start().starts_with('#')) {
        let line = line.replace(&doc_key, &key_hex);
        let o = Command::new("sh").arg("-c").arg(&line).current_dir(&dir).env("PATH", &path).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "`{line}` failed:\n{err}");
        printed.push_str(&err);
        printed.push_str(&String::from_utf8_lossy(&o.stdout));
    }
    let hlsl = std::fs::read_to_string(dir.join("shaders/overrides").join(format!("{key_hex}.hlsl"))).unwrap();
    assert!(hlsl.contains("#include \"shader_common.h\""), "{hlsl}");
    assert!(dir.join("gen/shader_cache.cpp").is_file());
    assert!(printed.contains("override") && printed.contains(&key_hex), "the build names the override it used:\n{printed}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// README's install block is the first thing a new user runs: `cargo install --path .` must
/// name a package whose binary is `shrec` (what the next line runs), and that next line,
/// `shrec --version`, prints the version and the DXC line it promises.
#[test]
fn readme_install_block_installs_shrec_and_its_version_line_names_dxc() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let at = readme.find("## Install").expect("README has an Install section");
    let block = &readme[at..];
    let start = block.find("```sh\n").expect("an sh block under Install") + 6;
    let lines: Vec<&str> = block[start..start + block[start..].find("```").unwrap()].lines().map(|l| l.split('#').next().unwrap().trim()).collect();
    let path = lines
        .iter()
        .find_map(|l| l.strip_prefix("cargo install --path "))
        .unwrap_or_else(|| panic!("no `cargo install --path …` in {lines:?}"))
        .split_whitespace()
        .next()
        .unwrap();
    let meta = Command::new(env!("CARGO"))
        .args(["metadata", "--no-deps", "--format-version", "1", "--manifest-path"])
        .arg(repo().join(path).join("Cargo.toml"))
        .output()
        .unwrap();
    assert!(meta.status.success(), "{}", String::from_utf8_lossy(&meta.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&meta.stdout).unwrap();
    let manifest = repo().join(path).join("Cargo.toml").canonicalize().unwrap();
    let package = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| std::path::Path::new(p["manifest_path"].as_str().unwrap()) == manifest)
        .expect("the package at that path");
    let bins: Vec<&str> = package["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(bins, ["shrec"], "`cargo install --path {path}` installs these binaries");
    assert!(lines.contains(&"shrec --version"), "{lines:?}");
    let out = shrec().arg("--version").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success() && text.starts_with("shrec ") && text.contains("\nDXC: "), "{text}");
}
