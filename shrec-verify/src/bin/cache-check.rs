//! `cache-check CACHE.cpp [--keys FILE] [--signed-dxil] [--extract DIR]`: reads back a shrec
//! `.cpp` cache (single-frame layout), writes its sorted keys to FILE (one `0x%016X` a line),
//! with `--signed-dxil` requires every DXIL container to carry a non-zero hash (written by
//! DXC's validator) that `shrec::pack::dxil_hash` recomputes exactly from the same bytes, and
//! with `--extract` writes each DXIL container to `DIR/<KEY>.dxil` (for `dxil-resign`). Test
//! tooling for the Windows CI step (`scripts/windows-wine-check.sh`).

use shrec_verify::shrec_cpp::ShrecCpp;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut cpp, mut keys_out, mut signed, mut extract) = (None, None, false, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--keys" => keys_out = it.next().cloned(),
            "--signed-dxil" => signed = true,
            "--extract" => extract = it.next().cloned(),
            _ if cpp.is_none() => cpp = Some(a.clone()),
            _ => {
                eprintln!("usage: cache-check CACHE.cpp [--keys FILE] [--signed-dxil] [--extract DIR]");
                return ExitCode::from(2);
            }
        }
    }
    let Some(cpp) = cpp else {
        eprintln!("usage: cache-check CACHE.cpp [--keys FILE] [--signed-dxil] [--extract DIR]");
        return ExitCode::from(2);
    };
    let cache = match ShrecCpp::read(cpp.as_ref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {cpp}: {e}");
            return ExitCode::from(1);
        }
    };
    let keys = cache.sorted_keys();
    println!("{cpp}: {} shaders", keys.len());
    if let Some(path) = keys_out {
        let text: String = keys.iter().map(|k| format!("0x{k:016X}\n")).collect();
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("error: {path}: {e}");
            return ExitCode::from(1);
        }
    }
    if let Some(dir) = extract {
        let dir = std::path::Path::new(&dir);
        for r in cache.rows.iter().filter(|r| r.dxil_size > 0) {
            let path = dir.join(format!("{:016X}.dxil", r.key));
            if let Err(e) = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, &cache.dxil[r.dxil_offset..r.dxil_offset + r.dxil_size]))
            {
                eprintln!("error: {}: {e}", path.display());
                return ExitCode::from(1);
            }
        }
    }
    if signed {
        let c = cache.check_dxil_hashes();
        println!("{} DXIL containers, {} signed (non-zero hash), {} of those recomputed exactly by dxil_hash", c.containers, c.signed, c.recomputed);
        for p in &c.problems {
            eprintln!("error: {p}");
        }
        if c.containers == 0 || !c.problems.is_empty() {
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}
