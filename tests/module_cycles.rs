//! The library's top-level modules form no import cycle (issue 20: `ir` is a leaf, front ends
//! and back ends depend on it, never the reverse). Reads src/**/*.rs, maps every `crate::<top>`
//! path (also inside `use crate::{a, b::c}` groups) and every `super::` chain that climbs to the
//! crate root to the top-level module it names, and looks for strongly connected components.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Cycles known and not yet broken, each as its sorted list of modules. Anything else fails.
/// cache <-> scan: `cache::scan_index` stores `scan`'s per-file results and `scan` consults it;
/// left to whoever next restructures the scan index (it belongs under `scan`).
const KNOWN_CYCLES: &[&[&str]] = &[&["cache", "scan"]];

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Top-level module names in `text` reached through `crate::`: `crate::x` and the first name of
/// every item of a `crate::{...}` group.
fn crate_refs(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    for (i, _) in text.match_indices("crate::") {
        if i > 0 && text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue; // e.g. `shrec_crate::`
        }
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut start = true;
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => start = true,
                    c if c.is_whitespace() => {}
                    _ if start && depth == 1 => {
                        out.insert(ident(&group[k..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out
}

/// Code of a line without its `//` comment (doc comments mention paths that are not imports).
fn code(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let mods: BTreeSet<String> = lib.lines().filter_map(|l| l.trim().strip_prefix("pub mod ")?.strip_suffix(';').map(str::to_string)).collect();
    let mut deps = BTreeMap::new();
    for m in &mods {
        let mut files = Vec::new();
        if src.join(format!("{m}.rs")).exists() {
            files.push(src.join(format!("{m}.rs")));
        }
        if src.join(m).is_dir() {
            rs_files(&src.join(m), &mut files);
        }
        let mut used = BTreeSet::new();
        for f in &files {
            let text: String = std::fs::read_to_string(f).unwrap().lines().map(code).collect::<Vec<_>>().join("\n");
            used.extend(crate_refs(&text));
            // `super::super::…` from a file `depth` levels below src/ reaches the crate root
            // when it climbs `depth` times; the next name is a top-level module.
            let depth = f.strip_prefix(&src).unwrap().components().count() - 1
                + usize::from(!f.ends_with("mod.rs") && f.parent() != Some(&src));
            let climb = "super::".repeat(depth.max(1));
            for (i, _) in text.match_indices(&climb) {
                let rest = &text[i + climb.len()..];
                if !rest.starts_with("super::") {
                    used.insert(rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect());
                }
            }
        }
        used.retain(|u| mods.contains(u) && u != m);
        deps.insert(m.clone(), used);
    }
    deps
}

/// Strongly connected components with more than one module (Tarjan).
fn cycles(deps: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        deps: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        for w in &t.deps[v] {
            if !t.index.contains_key(w.as_str()) {
                visit(t, w);
                let lw = t.low[w.as_str()];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w.as_str()) {
                let iw = t.index[w.as_str()];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut c = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on.remove(w);
                c.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if c.len() > 1 {
                c.sort();
                t.out.push(c);
            }
        }
    }
    let mut t = T { deps, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), on: BTreeSet::new(), out: Vec::new() };
    for m in deps.keys() {
        if !t.index.contains_key(m.as_str()) {
            visit(&mut t, m);
        }
    }
    t.out
}

#[test]
fn library_modules_have_no_new_cycle() {
    let deps = graph();
    let listing: Vec<String> = deps.iter().map(|(m, d)| format!("{m} -> {}", d.iter().cloned().collect::<Vec<_>>().join(" "))).collect();
    eprintln!("{}", listing.join("\n"));
    assert!(deps["ir"].is_empty(), "ir must depend on no other module: {:?}", deps["ir"]);
    let found = cycles(&deps);
    let unknown: Vec<_> = found.iter().filter(|c| !KNOWN_CYCLES.iter().any(|k| k.iter().copied().eq(c.iter().map(String::as_str)))).collect();
    assert!(unknown.is_empty(), "module cycles: {unknown:?}\n{}", listing.join("\n"));
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let g = |edges: &[(&str, &str)]| {
        let mut d: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            d.entry(a.to_string()).or_default().insert(b.to_string());
            d.entry(b.to_string()).or_default();
        }
        d
    };
    assert_eq!(cycles(&g(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])), vec![vec!["a", "b", "c"]]);
    assert!(cycles(&g(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
    assert_eq!(crate_refs("use crate::{ir::{Module, Stage}, formats::x, error};"), ["error", "formats", "ir"].map(String::from).into());
}
