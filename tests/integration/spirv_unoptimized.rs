//! `--spirv-unoptimized-above`: a shader whose HLSL is over the threshold compiles to SPIR-V
//! with DXC's `-O0` (DXC's SPIR-V optimizer takes minutes on very long straight-line shaders:
//! `shrec::limits::SPIRV_UNOPTIMIZED_HLSL_BYTES`). The module is still valid, the DXIL is
//! untouched, the report marks the shader, and the incremental cache keeps the two builds apart.

use crate::common;

use common::{repo, tmpdir};
use shrec::build::BuildOptions;
use shrec::cache::SpirvEncoding;
use std::collections::BTreeMap;

fn build(dir: &std::path::Path, name: &str, unoptimized_above: usize) -> shrec::build::BuildOutput {
    let mut o = BuildOptions::new(repo().join("tests/corpus/gx2"), dir.join(format!("{name}.rs")));
    o.cache_dir = Some(dir.join("cache"));
    o.spirv_encoding = SpirvEncoding::Raw;
    o.spirv_unoptimized_above = unoptimized_above;
    // the threshold is DXC's (the direct back end has no optimizer to skip)
    o.spirv_backend = shrec::build::SpirvBackend::Dxc;
    shrec::build::run(&o).expect("build runs")
}

#[test]
fn shaders_over_the_threshold_get_valid_unoptimized_spirv_and_say_so() {
    let dir = tmpdir("spirv-unoptimized");
    let optimized = build(&dir, "optimized", shrec::limits::SPIRV_UNOPTIMIZED_HLSL_BYTES);
    // every corpus shader's HLSL is over 1 byte: all of them compile unoptimized
    let unoptimized = build(&dir, "unoptimized", 1);
    let by_key = |o: &shrec::build::BuildOutput| o.entries.iter().map(|e| (e.key, e.clone())).collect::<BTreeMap<_, _>>();
    let (a, b) = (by_key(&optimized), by_key(&unoptimized));
    assert!(!a.is_empty());
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    assert!(optimized.report.outcomes.iter().all(|o| !o.spirv_unoptimized), "the default threshold is above every corpus shader");
    assert!(unoptimized.report.outcomes.iter().all(|o| o.spirv_unoptimized && matches!(o.status, shrec::report::Status::Compiled { cached: false })));
    let json = shrec::report::to_json(&unoptimized.report).to_string();
    assert!(json.contains("\"spirv_unoptimized\":true"), "the JSON report marks them");
    let (mut bytes_o, mut bytes_u) = (0, 0);
    for (key, e) in &a {
        let u = &b[key];
        assert_eq!(e.dxil, u.dxil, "{key:016X}: the DXIL does not depend on the SPIR-V optimizer");
        let (so, su) = (e.spirv.as_ref().unwrap(), u.spirv.as_ref().unwrap());
        common::spirv_val(su, &format!("{key:016X}-O0")).unwrap_or_else(|d| panic!("{key:016X}: unoptimized SPIR-V is invalid: {d}"));
        bytes_o += so.len();
        bytes_u += su.len();
    }
    // DXC's optimizer runs on the default build, not on the other: -O0 keeps registers in memory
    assert!(bytes_u > bytes_o * 3 / 2, "unoptimized {bytes_u} bytes vs optimized {bytes_o}");
}
