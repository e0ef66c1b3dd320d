//! Header parse benchmark: time to parse a GGUF header from memory (median of runs) and the
//! peak heap the parse allocates, counted by a wrapping global allocator.
//!
//! usage: cargo run --release --example parse_header -- FILE [RUNS]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use gguf_lens::gguf::{parse, ParseStatus};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: ptr came from System.alloc with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: parse_header FILE [RUNS]");
    let runs: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(15);
    let file_size = std::fs::metadata(path).expect("stat").len();
    // Read just the header region, as a range reader would.
    let probe =
        gguf_lens::gguf::read_header(&mut std::fs::File::open(path).expect("open"), file_size)
            .expect("parse");
    let header_len = usize::try_from(probe.header_len()).expect("fits");
    drop(probe);
    let bytes = {
        use std::io::Read;
        let mut buf = vec![0u8; header_len];
        std::fs::File::open(path)
            .expect("open")
            .read_exact(&mut buf)
            .expect("read");
        buf
    };
    let mut times = Vec::new();
    let mut peak = 0;
    for _ in 0..runs {
        let before = CURRENT.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        let start = Instant::now();
        let status = parse(&bytes, Some(file_size)).expect("parse");
        times.push(start.elapsed().as_secs_f64() * 1e3);
        peak = PEAK.load(Ordering::Relaxed) - before;
        let ParseStatus::Complete(file) = status else {
            panic!("whole header given")
        };
        std::hint::black_box(&file);
    }
    times.sort_by(f64::total_cmp);
    let ParseStatus::Complete(file) = parse(&bytes, Some(file_size)).expect("parse") else {
        panic!("whole header given")
    };
    println!(
        "{path}: header {header_len} bytes, {} keys, {} tensors: parse median {:.2} ms (min {:.2}), peak heap {:.2} MiB ({:.2}x header)",
        file.metadata_len(),
        file.tensors().len(),
        times[times.len() / 2],
        times[0],
        peak as f64 / (1 << 20) as f64,
        peak as f64 / header_len as f64
    );
}
