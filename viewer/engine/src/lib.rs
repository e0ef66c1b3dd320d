//! The viewer's stand-in engine (used only when the npm package's build is not in the site):
//! gguf-lens's ggml type table and dequantizer behind a raw C ABI, so `www/lite/gguf-lite.js`
//! needs no bindings generator. Header parsing happens in JS; every number comes from here.

use gguf_lens::{dequantize, GgmlType};

/// Allocates `n` bytes in wasm memory (align 8) for the caller to fill; 0 on failure.
#[no_mangle]
pub extern "C" fn gl_alloc(n: usize) -> *mut u8 {
    let Ok(layout) = std::alloc::Layout::from_size_align(n.max(1), 8) else {
        return std::ptr::null_mut();
    };
    // SAFETY: the layout has a non-zero size.
    unsafe { std::alloc::alloc(layout) }
}

/// Frees a buffer from [`gl_alloc`] of the same size.
///
/// # Safety
/// `p` must come from `gl_alloc(n)` and not be freed twice.
#[no_mangle]
pub unsafe extern "C" fn gl_free(p: *mut u8, n: usize) {
    if p.is_null() {
        return;
    }
    let layout = std::alloc::Layout::from_size_align(n.max(1), 8).expect("valid layout");
    std::alloc::dealloc(p, layout);
}

fn ty(id: u32) -> Option<GgmlType> {
    GgmlType::from_id(id).ok()
}

/// Elements per block of type `id`, 0 if the type is unknown or removed.
#[no_mangle]
pub extern "C" fn gl_block_size(id: u32) -> u32 {
    ty(id).map_or(0, |t| t.block_size())
}

/// Bytes per block of type `id`, 0 if unknown.
#[no_mangle]
pub extern "C" fn gl_type_size(id: u32) -> u32 {
    ty(id).map_or(0, |t| t.type_size())
}

/// Writes the ggml name of type `id` (ASCII) into `out` (capacity `cap`); returns its length,
/// 0 if unknown.
///
/// # Safety
/// `out` must be valid for `cap` bytes.
#[no_mangle]
pub unsafe extern "C" fn gl_type_name(id: u32, out: *mut u8, cap: usize) -> usize {
    let Some(t) = ty(id) else { return 0 };
    let name = t.name().as_bytes();
    let n = name.len().min(cap);
    std::ptr::copy_nonoverlapping(name.as_ptr(), out, n);
    n
}

/// Dequantizes `src_len` bytes of whole blocks of type `id` into `n` f32 at `dst`.
/// Returns 0 on success, 1 for an unknown type, 2 for mismatched lengths.
///
/// # Safety
/// `src` must be valid for `src_len` bytes and `dst` for `n` f32, not overlapping.
#[no_mangle]
pub unsafe extern "C" fn gl_dequant(
    id: u32,
    src: *const u8,
    src_len: usize,
    dst: *mut f32,
    n: usize,
) -> u32 {
    let Some(t) = ty(id) else { return 1 };
    let bytes = std::slice::from_raw_parts(src, src_len);
    let out = std::slice::from_raw_parts_mut(dst, n);
    match dequantize(t, bytes, out) {
        Ok(()) => 0,
        Err(_) => 2,
    }
}
