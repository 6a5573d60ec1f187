//! Looks up every shader of the embedded cache through `shrec-runtime` and checks what it gets:
//! a DXIL container (`DXBC`, size field, parts) and a SPIR-V module (magic, version 1.x).
//!
//! `shrec-cargo-consumer [DUMP_DIR]` also writes `<KEY>.dxil` and `<KEY>.spv` into DUMP_DIR
//! (tests/integration/embed_cargo.rs checks the DXIL container hashes from there).

mod shader_cache {
    include!(concat!(env!("OUT_DIR"), "/shader_cache.rs"));
}

use shrec_runtime::{Backend, Slice};

fn main() {
    let dump = std::env::args_os().nth(1).map(std::path::PathBuf::from);
    if let Some(d) = &dump {
        std::fs::create_dir_all(d).expect("dump dir");
    }
    assert_eq!(shader_cache::LAYOUT, shader_cache::LAYOUT_PER_SHADER);
    let dxil = Backend::per_shader(shader_cache::DXIL_COMPRESSED, shader_cache::DXIL_DECOMPRESSED_SIZE, shader_cache::DXIL_DICT);
    let spirv = Backend::per_shader(shader_cache::SPIRV_COMPRESSED, shader_cache::SPIRV_DECOMPRESSED_SIZE, shader_cache::SPIRV_DICT);

    let mut failures = 0;
    for e in shader_cache::ENTRIES.iter() {
        // A game computes the key from what it hands the graphics API (README, "Keys").
        let found = shader_cache::lookup(e.key).expect("every table key is found");
        assert!(std::ptr::eq(found, e));
        let d = dxil.get(Slice::per_shader(e.dxil_offset, e.dxil_size, e.dxil_frame_offset, e.dxil_frame_size));
        let s = spirv.get(Slice::per_shader(e.spirv_offset, e.spirv_size, e.spirv_frame_offset, e.spirv_frame_size));
        let checked = d.and_then(|d| {
            shrec_runtime::check_dxil(&d)?;
            let words = shrec_runtime::spirv_words(&s?, shader_cache::SPIRV_ENCODING)?;
            Ok((d, words))
        });
        match checked {
            Ok((d, words)) => {
                println!(
                    "{:016X} family {} stage {} dxil {} bytes spirv {} words version 0x{:08X}",
                    e.key,
                    e.family,
                    e.stage,
                    d.len(),
                    words.len(),
                    words[1]
                );
                if let Some(dir) = &dump {
                    std::fs::write(dir.join(format!("{:016X}.dxil", e.key)), &*d).unwrap();
                    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                    std::fs::write(dir.join(format!("{:016X}.spv", e.key)), bytes).unwrap();
                }
            }
            Err(err) => {
                println!("FAIL {:016X}: {err}", e.key);
                failures += 1;
            }
        }
    }
    assert!(shader_cache::lookup(0).is_none() || shader_cache::ENTRIES.iter().any(|e| e.key == 0));
    // Per-shader frames: nothing was decompressed as a whole.
    assert!(!dxil.is_fully_decompressed() && !spirv.is_fully_decompressed());
    println!(
        "checked {} shaders ({} failed); blobs: dxil {} bytes + {} dict, spirv {} bytes + {} dict",
        shader_cache::ENTRY_COUNT,
        failures,
        shader_cache::DXIL_COMPRESSED_SIZE,
        shader_cache::DXIL_DICT.len(),
        shader_cache::SPIRV_COMPRESSED_SIZE,
        shader_cache::SPIRV_DICT.len()
    );
    std::process::exit(if failures == 0 { 0 } else { 1 });
}
