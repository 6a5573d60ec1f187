//! `--hlsl-dir` support files: the prelude and a `dxc.sh` that compiles one file as the build did.

use crate::cache;
use crate::dxc::{self, Target};
use std::collections::BTreeSet;
use std::path::Path;

/// Makes `--hlsl-dir` self-contained: the prelude every file includes, and `dxc.sh`, which runs
/// a standalone `dxc` on one of the files with the build's own arguments (from
/// [`dxc::command_line_args`], so the script cannot drift from the build): the DXIL target of a
/// file that declares a non-zero specialization-constant mask (the line
/// [`crate::hlsl::SPEC_CONSTANTS_MASK_LINE`]) is the library profile, as in the build, and the
/// entry point is the build's (`--abi xenosrecomp-metal`: `shaderMain`).
pub(super) fn write_hlsl_dir_support(dir: &Path, targets: &[Target], entry_point: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    cache::atomic::write(&dir.join(crate::hlsl::PRELUDE_NAME), crate::hlsl::PRELUDE.as_bytes())?;
    let mut script = String::from(concat!(
        "#!/bin/sh\n",
        "# Written by shrec build --hlsl-dir: compiles one file of this directory with a standalone dxc\n",
        "# and the arguments shrec used. Usage: ./dxc.sh KEY.FAMILY.STAGE.hlsl [dxil|spirv]\n",
        "# A file that declares a non-zero spec-constants mask compiles to DXIL as a library (lib_6_3),\n",
        "# as in the build (the runtime links it with the definition of g_SpecConstants()).\n",
        "#\n",
        "# dxc is the DirectX Shader Compiler's command-line program, which shrec does not ship (shrec\n",
        "# loads the library): from https://github.com/microsoft/DirectXShaderCompiler/releases (the\n",
        "# linux_dxc_*.x86_64.tar.gz or dxc_*.zip archive, bin/dxc) or the Vulkan SDK (bin/dxc).\n",
        "# Set DXC=/path/to/dxc when it is not on PATH.\n",
        "set -e\n",
        "DXC=\"${DXC:-dxc}\"\n",
        "f=\"$1\"; target=\"${2:-dxil}\"\n",
    ));
    script.push_str(&format!(
        "mask=$(sed -n 's|^{}\\(0[xX][0-9A-Fa-f]*\\).*|\\1|p' \"$f\" 2>/dev/null | head -n 1)\n",
        crate::hlsl::SPEC_CONSTANTS_MASK_LINE
    ));
    script.push_str("case \"$mask\" in ''|0x0|0X0|0x00000000) lib= ;; *) lib=1 ;; esac\n");
    // a shader that needs a later shader model declares it (crate::hlsl::SHADER_MODEL_LINE)
    script.push_str(&format!(
        "sm=$(sed -n 's|^{}\\(6_[0-9]\\).*|\\1|p' \"$f\" 2>/dev/null | head -n 1)\nsm=\"${{sm:-{}}}\"\n",
        crate::hlsl::SHADER_MODEL_LINE,
        dxc::SHADER_MODEL
    ));
    script.push_str("case \"$f:$target\" in\n");
    let args = |stage, target, mask| {
        let mut a = dxc::command_line_args(stage, target, mask);
        if let Some(e) = a.iter().position(|x| x == "-E") {
            a[e + 1] = entry_point.to_string();
        }
        a.join(" ")
    };
    for stage in [crate::ir::Stage::Vertex, crate::ir::Stage::Pixel, crate::ir::Stage::Geometry] {
        let names: BTreeSet<&str> = crate::ir::Family::ALL.iter().map(|&f| stage.name_in(f)).collect();
        for &target in targets {
            let patterns: Vec<String> = names.iter().map(|n| format!("*.{n}.hlsl:{}", target.name())).collect();
            let (plain, library) = (args(stage, target, 0), args(stage, target, 1));
            // the stage profile at the file's declared model (`-T ps_${sm}`)
            let same = plain == library;
            let plain = plain.replacen(&format!("_{} ", dxc::SHADER_MODEL), "_${sm} ", 1);
            let library = if same { plain.clone() } else { library };
            let out = if target == Target::Spirv { "spv" } else { "dxil" };
            let run = |a: &str| format!("exec \"$DXC\" {a} -Fo \"${{f%.hlsl}}.{out}\" \"$f\"");
            if plain == library {
                script.push_str(&format!("  {}) {} ;;\n", patterns.join("|"), run(&plain)));
            } else {
                script.push_str(&format!("  {}) if [ -n \"$lib\" ]; then {}; else {}; fi ;;\n", patterns.join("|"), run(&library), run(&plain)));
            }
        }
    }
    script.push_str("  *) echo \"usage: $0 KEY.FAMILY.STAGE.hlsl [dxil|spirv]\" >&2; exit 2 ;;\nesac\n");
    let path = dir.join("dxc.sh");
    cache::atomic::write(&path, script.as_bytes())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}
