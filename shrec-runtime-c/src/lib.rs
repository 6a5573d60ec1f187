//! C ABI of shrec-runtime's SMOL-V decoder (`include/shrec_runtime.h`): what a C or C++ game
//! links to read the SPIR-V of a shrec cache stored as SMOL-V, instead of fetching a third-party
//! decoder. Both functions take untrusted bytes: errors are return values, never panics.

use std::slice;

/// Return codes (mirrored in `include/shrec_runtime.h`).
pub const SHREC_OK: i32 = 0;
pub const SHREC_ERROR_NULL: i32 = 1;
pub const SHREC_ERROR_BAD_SMOLV: i32 = 2;
pub const SHREC_ERROR_OUT_TOO_SMALL: i32 = 3;

/// `smolv` as a slice; `None` for a null pointer with a non-zero size.
///
/// # Safety
/// `ptr` must be null or point to `len` readable bytes that stay valid and unmodified for the
/// returned lifetime.
unsafe fn input<'a>(ptr: *const u8, len: usize) -> Option<&'a [u8]> {
    if len == 0 {
        return Some(&[]);
    }
    if ptr.is_null() {
        return None;
    }
    // SAFETY: non-null, and the caller guarantees `len` readable bytes (the header's contract).
    Some(unsafe { slice::from_raw_parts(ptr, len) })
}

/// Size of the SPIR-V module `smolv` decodes to; 0 when it is not SMOL-V.
///
/// # Safety
/// `smolv` must be null or point to `smolv_size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn shrec_smolv_decoded_size(smolv: *const u8, smolv_size: usize) -> usize {
    // SAFETY: forwarded contract of this function.
    let Some(data) = (unsafe { input(smolv, smolv_size) }) else { return 0 };
    shrec_runtime::smolv::decoded_size(data).unwrap_or(0)
}

/// Decodes `smolv` into `out`; returns [`SHREC_OK`] or an error code.
///
/// # Safety
/// `smolv` must be null or point to `smolv_size` readable bytes; `out` must be null or point to
/// `out_size` writable bytes not overlapping `smolv`.
#[no_mangle]
pub unsafe extern "C" fn shrec_smolv_decode(smolv: *const u8, smolv_size: usize, out: *mut u8, out_size: usize) -> i32 {
    // SAFETY: forwarded contract of this function.
    let Some(data) = (unsafe { input(smolv, smolv_size) }) else { return SHREC_ERROR_NULL };
    let Ok(spirv) = shrec_runtime::smolv::decode(data) else { return SHREC_ERROR_BAD_SMOLV };
    if spirv.len() > out_size {
        return SHREC_ERROR_OUT_TOO_SMALL;
    }
    if out.is_null() {
        return if spirv.is_empty() { SHREC_OK } else { SHREC_ERROR_NULL };
    }
    // SAFETY: `out` is non-null with `out_size >= spirv.len()` writable bytes that do not overlap
    // `smolv` (the caller's contract); `spirv` is our own buffer.
    unsafe { std::ptr::copy_nonoverlapping(spirv.as_ptr(), out, spirv.len()) };
    SHREC_OK
}
