//! Which DXC shrec accepts: the version a loaded library reports, and the documented minimum.
//!
//! The HLSL writer relies on HLSL 2021's `select`, `and` and `or` intrinsics in both back ends.
//! DXC 1.6.2112 (the `compushady==0.17.5` Windows wheel) has them in DXIL but not in SPIR-V: 125
//! of the 212 corpus shaders failed with it (`select intrinsic function unimplemented`,
//! `packoffset caused overlap with previous members`). The oldest DXC the whole corpus is known
//! to build with is 1.8 (the Linux library shrec provisions), so that is the minimum; the Windows
//! library shrec provisions is 1.9.2602. An older library is refused before any work, with the
//! version found and where to get a newer one.
//!
//! The version is DXC's own answer to `IDxcVersionInfo::GetVersion` (major, minor) on its
//! compiler object, plus `IDxcVersionInfo2::GetCommitInfo` (commit count and hash) when the
//! library has it; release numbers such as `1.8.2407` are not reported by the library itself.

use std::ffi::{c_char, c_void, CStr};
use std::fmt;
use std::path::Path;

/// The oldest DXC (major, minor) shrec accepts.
pub const MINIMUM: (u32, u32) = (1, 8);

/// What a DXC library says its version is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DxcVersion {
    pub major: u32,
    pub minor: u32,
    /// Commit count and abbreviated hash of the build, when the library reports them.
    pub commit: Option<(u32, String)>,
}

impl DxcVersion {
    /// Whether this is at least [`MINIMUM`].
    pub fn is_supported(&self) -> bool {
        (self.major, self.minor) >= MINIMUM
    }
}

impl fmt::Display for DxcVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)?;
        if let Some((count, hash)) = &self.commit {
            write!(f, " (commit {count}, {hash})")?;
        }
        Ok(())
    }
}

/// A COM interface identifier, laid out as Windows' `GUID`.
#[repr(C)]
struct Guid(u32, u16, u16, [u8; 8]);

const CLSID_DXC_COMPILER: Guid = Guid(0x73e2_2d93, 0xe6ce, 0x47f3, [0xb5, 0xbf, 0xf0, 0x66, 0x4f, 0x39, 0xc1, 0xb0]);
const IID_IDXC_VERSION_INFO: Guid = Guid(0xb04f_5b50, 0x2059, 0x4f12, [0xa8, 0xff, 0xa1, 0xe0, 0xcd, 0xe1, 0xcc, 0x7e]);
const IID_IDXC_VERSION_INFO2: Guid = Guid(0xfb69_04c4, 0x42f0, 0x4b62, [0x9c, 0x46, 0x98, 0x3a, 0xf7, 0xda, 0x7c, 0x83]);

type CreateInstance = unsafe extern "system" fn(clsid: *const Guid, iid: *const Guid, out: *mut *mut c_void) -> i32;
type QueryInterface = unsafe extern "system" fn(this: *mut c_void, iid: *const Guid, out: *mut *mut c_void) -> i32;
type Release = unsafe extern "system" fn(this: *mut c_void) -> u32;
type GetVersion = unsafe extern "system" fn(this: *mut c_void, major: *mut u32, minor: *mut u32) -> i32;
type GetCommitInfo = unsafe extern "system" fn(this: *mut c_void, count: *mut u32, hash: *mut *mut c_char) -> i32;

/// Vtable slot `index` of the COM object `this`: IUnknown's QueryInterface, AddRef and Release
/// are slots 0 to 2; `IDxcVersionInfo` adds GetVersion (3) and GetFlags (4), and
/// `IDxcVersionInfo2`, which derives from it, GetCommitInfo (5).
///
/// # Safety
/// `this` must be a live COM object whose vtable has more than `index` slots.
unsafe fn slot(this: *mut c_void, index: usize) -> *const c_void {
    // SAFETY: a COM object starts with its vtable pointer; the caller guarantees the slot exists.
    unsafe { *(*(this as *const *const *const c_void)).add(index) }
}

/// Asks the library at `path` for its version. The library is loaded (or, already loaded by
/// `dxc::locate`, referenced once more) and released again.
pub fn query(path: &Path) -> Result<DxcVersion, String> {
    // SAFETY: loading runs the library's initialisers; `dxc::locate` only calls this on a file it
    // chose to load as DXC anyway (and has loaded already).
    let lib = unsafe { libloading::Library::new(path) }.map_err(|e| format!("loading {}: {e}", path.display()))?;
    // SAFETY: DxcCreateInstance has this signature in every DXC (dxcapi.h).
    let create: libloading::Symbol<CreateInstance> = unsafe { lib.get(b"DxcCreateInstance\0") }.map_err(|e| e.to_string())?;
    let mut info: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid GUIDs and an out pointer; on success `info` is an IDxcVersionInfo we own.
    let hr = unsafe { create(&CLSID_DXC_COMPILER, &IID_IDXC_VERSION_INFO, &mut info) };
    if hr < 0 || info.is_null() {
        return Err(format!("its compiler has no IDxcVersionInfo (HRESULT 0x{:08x}): not a DXC shrec can use", hr as u32));
    }
    let (mut major, mut minor) = (0u32, 0u32);
    // SAFETY: `info` is a live IDxcVersionInfo (slots 0 to 4).
    let hr = unsafe { std::mem::transmute::<*const c_void, GetVersion>(slot(info, 3))(info, &mut major, &mut minor) };
    let commit = if hr >= 0 { commit_info(info) } else { None };
    // SAFETY: releases the reference DxcCreateInstance gave us; `info` is not used afterwards.
    unsafe { std::mem::transmute::<*const c_void, Release>(slot(info, 2))(info) };
    if hr < 0 {
        return Err(format!("IDxcVersionInfo::GetVersion failed (HRESULT 0x{:08x})", hr as u32));
    }
    Ok(DxcVersion { major, minor, commit })
}

/// `IDxcVersionInfo2::GetCommitInfo` of the object `info`, when it has that interface.
fn commit_info(info: *mut c_void) -> Option<(u32, String)> {
    let mut info2: *mut c_void = std::ptr::null_mut();
    // SAFETY: `info` is a live COM object; QueryInterface is slot 0 of every one.
    let hr = unsafe { std::mem::transmute::<*const c_void, QueryInterface>(slot(info, 0))(info, &IID_IDXC_VERSION_INFO2, &mut info2) };
    if hr < 0 || info2.is_null() {
        return None;
    }
    let (mut count, mut hash) = (0u32, std::ptr::null_mut::<c_char>());
    // SAFETY: `info2` is a live IDxcVersionInfo2 (slots 0 to 5).
    let hr = unsafe { std::mem::transmute::<*const c_void, GetCommitInfo>(slot(info2, 5))(info2, &mut count, &mut hash) };
    // SAFETY: DXC fills `hash` with a NUL-terminated string on success. It was allocated with
    // DXC's CoTaskMemAlloc; those few bytes are not freed (once per run), since freeing them
    // would need the COM allocator of the platform DXC was built for.
    let text = (hr >= 0 && !hash.is_null()).then(|| unsafe { CStr::from_ptr(hash) }.to_string_lossy().into_owned());
    // SAFETY: releases the reference QueryInterface gave us.
    unsafe { std::mem::transmute::<*const c_void, Release>(slot(info2, 2))(info2) };
    text.map(|t| (count, t))
}

/// The error text for a library older than [`MINIMUM`]: the version found, why it is not
/// enough, and where to get a newer one.
pub fn too_old_reason(found: &DxcVersion) -> String {
    format!(
        "is DXC {found}, older than the {}.{} shrec needs (older DXCs lack HLSL 2021's select / and / or in their SPIR-V back end, \
         which shrec's HLSL uses): {}, or leave out --dxc and SHREC_DXC so that shrec uses or provisions its own ({})",
        MINIMUM.0,
        MINIMUM.1,
        super::provision::WHERE_TO_GET,
        super::provision::VERSION
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimum_is_compared_on_major_then_minor() {
        let v = |major, minor| DxcVersion { major, minor, commit: None };
        assert!(!v(1, 6).is_supported() && !v(1, 7).is_supported() && !v(0, 9).is_supported());
        assert!(v(1, 8).is_supported() && v(1, 9).is_supported() && v(2, 0).is_supported());
    }

    #[test]
    fn refusal_names_the_version_found_and_where_to_get_a_newer_one() {
        let found = DxcVersion { major: 1, minor: 6, commit: Some((2112, "ab12cd34".into())) };
        let text = too_old_reason(&found);
        assert!(text.starts_with("is DXC 1.6 (commit 2112, ab12cd34), older than the 1.8 shrec needs"), "{text}");
        assert!(text.contains("DirectXShaderCompiler/releases") && text.contains("vulkan.lunarg.com"), "{text}");
    }
}
