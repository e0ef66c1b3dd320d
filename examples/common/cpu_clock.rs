//! This thread's CPU time for the benchmark examples (`#[path]`-included by each: an example
//! cannot import another).

/// This thread's CPU time in seconds (Linux `CLOCK_THREAD_CPUTIME_ID`; on WASI the process
/// CPU clock, which under Node also counts its helper threads), None elsewhere.
pub fn thread_cpu() -> Option<f64> {
    #[cfg(target_os = "wasi")]
    {
        #[link(wasm_import_module = "wasi_snapshot_preview1")]
        extern "C" {
            fn clock_time_get(id: u32, precision: u64, time: *mut u64) -> u16;
        }
        let mut ns = 0u64;
        // SAFETY: `ns` is a valid u64 to write; id 2 is WASI's process_cputime_id.
        if unsafe { clock_time_get(2, 1, &mut ns) } == 0 {
            return Some(ns as f64 * 1e-9);
        }
    }
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn clock_gettime(id: i32, ts: *mut [i64; 2]) -> i32;
        }
        let mut ts = [0i64; 2];
        // SAFETY: `ts` is a valid timespec (two 64-bit fields on 64-bit Linux); id 3 is
        // CLOCK_THREAD_CPUTIME_ID.
        if cfg!(target_pointer_width = "64") && unsafe { clock_gettime(3, &mut ts) } == 0 {
            return Some(ts[0] as f64 + ts[1] as f64 * 1e-9);
        }
    }
    None
}
