//! `dxil-resign DIR`: for every `DIR/*.dxil` (a DXIL container as a shrec cache holds it,
//! written by `cache-check --extract DIR`), zeroes its hash and has Microsoft's validator
//! (`dxil.dll`, through `IDxcValidator::Validate` with in-place edit) validate and sign it
//! again; the result must be the container byte for byte. Run from the folder of
//! `dxcompiler.dll` and `dxil.dll` (Windows looks for DLLs named without a path in the
//! program's own folder first, so the program is copied there). With `cache-check
//! --signed-dxil`, which recomputes each stored hash with shrec's `dxil_hash`, this shows that
//! `dxil_hash` computes exactly the hash `dxil.dll` writes.

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: dxil-resign DIR");
        return ExitCode::from(2);
    };
    let mut files: Vec<_> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "dxil")).collect(),
        Err(e) => {
            eprintln!("error: {}: {e}", std::path::Path::new(&dir).display());
            return ExitCode::from(1);
        }
    };
    files.sort();
    let (mut same, mut differ) = (0usize, 0usize);
    for path in &files {
        let original = match std::fs::read(path) {
            Ok(b) if b.len() >= 32 => b,
            Ok(b) => {
                eprintln!("error: {}: {} bytes, not a container", path.display(), b.len());
                differ += 1;
                continue;
            }
            Err(e) => {
                eprintln!("error: {}: {e}", path.display());
                differ += 1;
                continue;
            }
        };
        let mut unsigned = original.clone();
        unsigned[4..20].fill(0);
        match hassle_rs::validate_dxil(&unsigned) {
            Ok(signed) if signed == original => same += 1,
            Ok(signed) => {
                let hash = |b: &[u8]| b.get(4..20).map(|h| h.iter().map(|x| format!("{x:02x}")).collect::<String>()).unwrap_or_default();
                eprintln!("error: {}: dxil.dll signs it {} (cache: {})", path.display(), hash(&signed), hash(&original));
                differ += 1;
            }
            Err(e) => {
                eprintln!("error: {}: dxil.dll: {e}", path.display());
                differ += 1;
            }
        }
    }
    println!("{} DXIL containers re-signed by dxil.dll: {same} identical to the cache, {differ} not", files.len());
    if differ > 0 || same == 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
