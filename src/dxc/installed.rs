//! A DXC the developer already has: on Windows, the Vulkan SDK's (`%VULKAN_SDK%\Bin`) and the
//! Windows SDK's (`%ProgramFiles(x86)%\Windows Kits\10\bin\<version>\x64`, newest first). Each
//! ships `dxcompiler.dll` with `dxil.dll` beside it. A copy older than [`super::version::MINIMUM`]
//! is passed over (and named in the search's notes, [`super::LocateOptions::notes`]), so that an old SDK leads
//! to provisioning rather than to a refusal the user did not ask for.
//!
//! Only Windows is searched: there COM's `IUnknown` has one layout in every DXC, while Linux
//! builds before DXC PR #3793 (October 2022) put a virtual destructor in it, and asking such a
//! library for its version would call the wrong function. On Linux a Vulkan SDK's DXC is used
//! with `--dxc`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Name of the DXC library in both SDKs.
pub const DLL: &str = "dxcompiler.dll";

/// The places to look, in order, given the values of `VULKAN_SDK` and `ProgramFiles(x86)`:
/// `<VULKAN_SDK>\Bin\dxcompiler.dll`, then every `<ProgramFiles(x86)>\Windows Kits\10\bin\
/// <version>\x64\dxcompiler.dll` that exists, the highest version first. Only existing files
/// are listed.
pub fn candidates_from(vulkan_sdk: Option<OsString>, program_files_x86: Option<OsString>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(sdk) = vulkan_sdk.filter(|v| !v.is_empty()) {
        out.push(PathBuf::from(sdk).join("Bin").join(DLL));
    }
    if let Some(pf) = program_files_x86.filter(|v| !v.is_empty()) {
        let bin = PathBuf::from(pf).join("Windows Kits").join("10").join("bin");
        let mut versions: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir(&bin)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                // `10.0.22621.0`: only numeric version folders (not `x64`, `arm64`)
                let v: Vec<u32> = name.split('.').map(|p| p.parse().ok()).collect::<Option<_>>()?;
                Some((v, e.path().join("x64").join(DLL)))
            })
            .collect();
        versions.sort_by(|a, b| b.0.cmp(&a.0));
        out.extend(versions.into_iter().map(|(_, p)| p));
    }
    out.retain(|p| p.is_file());
    out
}

/// The installed DXCs of this machine, in the order [`candidates_from`] gives (Windows only).
pub fn candidates() -> Vec<PathBuf> {
    if cfg!(windows) {
        candidates_from(std::env::var_os("VULKAN_SDK"), std::env::var_os("ProgramFiles(x86)"))
    } else {
        Vec::new()
    }
}

/// The first installed DXC at least [`super::version::MINIMUM`], if any. Says in `opts`' notes
/// which ones were passed over and why.
pub fn find(opts: &super::LocateOptions) -> Option<PathBuf> {
    candidates().into_iter().find(|p| acceptable(p, opts))
}

fn acceptable(path: &Path, opts: &super::LocateOptions) -> bool {
    // its validator first, as for any load of DXC (`preload_validator`)
    match super::preload_validator(path).and_then(|()| super::version::query(path)) {
        Ok(v) if v.is_supported() => true,
        Ok(v) => {
            opts.note(&format!("shrec: not using {}: {}\n", path.display(), super::version::too_old_reason(&v)));
            false
        }
        Err(e) => {
            opts.note(&format!("shrec: not using {}: {e}\n", path.display()));
            false
        }
    }
}

#[cfg(test)]
mod tests {
    /// The search order: the Vulkan SDK first, then the Windows SDK's versions, newest by
    /// number (10.0.26100 before 10.0.9600), skipping folders without the DLL or not named as a
    /// version.
    #[test]
    fn vulkan_sdk_first_then_windows_sdks_newest_first() {
        let root = std::env::temp_dir().join(format!("shrec-installed-dxc-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let vk = root.join("VulkanSDK").join("1.4.309.0");
        let kits = root.join("Program Files (x86)");
        let bin = kits.join("Windows Kits").join("10").join("bin");
        let place = |dir: &std::path::Path| {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join(super::DLL), b"MZ").unwrap();
        };
        place(&vk.join("Bin"));
        for v in ["10.0.9600.0", "10.0.26100.0", "10.0.22621.0", "x64"] {
            place(&bin.join(v).join("x64"));
        }
        std::fs::create_dir_all(bin.join("10.0.99999.0").join("x64")).unwrap(); // no DLL in it
        let got = super::candidates_from(Some(vk.clone().into()), Some(kits.clone().into()));
        let want: Vec<_> = [vk.join("Bin"), bin.join("10.0.26100.0/x64"), bin.join("10.0.22621.0/x64"), bin.join("10.0.9600.0/x64")]
            .iter()
            .map(|d| d.join(super::DLL))
            .collect();
        assert_eq!(got, want);
        assert!(super::candidates_from(None, Some(OsString::new())).is_empty());
        let _ = std::fs::remove_dir_all(&root);
    }

    use std::ffi::OsString;
}
