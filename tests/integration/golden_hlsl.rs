//! Golden HLSL: the HLSL of every distinct corpus shader (Xenos in both profiles) is committed
//! under `tests/out/hlsl/<family>/<KEY>.hlsl`, as naga keeps `tests/out/`. A change to a front
//! end, an IR pass or the writer that changes any shader's HLSL fails here with the first
//! differing line; when the change is intended, accept it with
//!
//! ```text
//! SHREC_BLESS=1 cargo test --release -p shrec --test integration golden_hlsl
//! ```
//!
//! and review the diff of `tests/out/hlsl/` like any other change. No DXC is needed.

use crate::common::repo;
use shrec::detect::ContainerKind;
use shrec::formats::xenos::lower::Profile;
use shrec::formats::{self, TranslateOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the golden files live, relative to the repository.
const GOLDEN: &str = "tests/out/hlsl";

/// The HLSL (or the translation error, so that a shader that stops translating is a diff too)
/// of every distinct corpus shader, by its path under [`GOLDEN`].
fn current() -> BTreeMap<PathBuf, String> {
    let scan = shrec::scan::scan_dir(&repo().join("tests/corpus"));
    let mut shaders = BTreeMap::new();
    for s in &scan.shaders {
        if let std::collections::btree_map::Entry::Vacant(v) = shaders.entry(s.key) {
            v.insert((s.container, shrec::scan::read_container(s).expect("corpus shader readable"), s.index));
        }
    }
    let mut out = BTreeMap::new();
    for (key, (kind, bytes, index)) in shaders {
        let mut profiles = vec![(kind.family().name().to_string(), TranslateOptions::default())];
        if kind == ContainerKind::Xenos {
            let opts = TranslateOptions { xenos_profile: Profile::Unleashed, ..TranslateOptions::default() };
            profiles.push(("xenos-unleashed".to_string(), opts));
        }
        for (dir, opts) in profiles {
            let text = match formats::translate(kind, &bytes, index, &opts) {
                Ok(t) => shrec::hlsl::write(&t.module),
                Err(e) => format!("// translation failed: {e}\n"),
            };
            out.insert(PathBuf::from(dir).join(format!("{key:016X}.hlsl")), text);
        }
    }
    out
}

/// Every file under `dir`, by its path relative to `dir`.
fn committed(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(dir).into_iter().filter_map(Result::ok).filter(|e| e.file_type().is_file()) {
        let rel = e.path().strip_prefix(dir).unwrap().to_path_buf();
        out.insert(rel, std::fs::read_to_string(e.path()).unwrap_or_else(|err| panic!("{}: {err}", e.path().display())));
    }
    out
}

/// The first line where `a` and `b` differ, as "line N: -old / +new".
fn first_difference(old: &str, new: &str) -> String {
    let (mut o, mut n) = (old.lines(), new.lines());
    for line in 1.. {
        match (o.next(), n.next()) {
            (None, None) => return "no line differs (line endings?)".into(),
            (a, b) if a == b => continue,
            (a, b) => return format!("line {line}:\n  - {}\n  + {}", a.unwrap_or("<end>"), b.unwrap_or("<end>")),
        }
    }
    unreachable!()
}

#[test]
fn corpus_hlsl_matches_the_committed_golden_files() {
    let dir = repo().join(GOLDEN);
    let now = current();
    assert!(now.len() > 200, "only {} corpus shaders translated", now.len());
    if std::env::var_os("SHREC_BLESS").is_some() {
        let _ = std::fs::remove_dir_all(&dir);
        for (rel, text) in &now {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
        }
        println!("blessed {} files under {}", now.len(), dir.display());
        return;
    }
    let old = committed(&dir);
    let mut problems = Vec::new();
    for (rel, text) in &now {
        match old.get(rel) {
            None => problems.push(format!("{}: new (not committed)", rel.display())),
            Some(o) if o != text => problems.push(format!("{}: differs at {}", rel.display(), first_difference(o, text))),
            Some(_) => {}
        }
    }
    for rel in old.keys().filter(|r| !now.contains_key(*r)) {
        problems.push(format!("{}: committed, but no corpus shader has this key any more", rel.display()));
    }
    assert!(
        problems.is_empty(),
        "{} of {} golden HLSL files differ (first 10 below); if intended, run \
         `SHREC_BLESS=1 cargo test --release -p shrec --test integration golden_hlsl` and review the diff:\n{}",
        problems.len(),
        now.len(),
        problems.iter().take(10).cloned().collect::<Vec<_>>().join("\n")
    );
}
