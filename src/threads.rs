//! Work spread over scoped threads, one item a thread, the way every native parallel path here
//! does it: an item whose thread cannot start (WASI has no threads, or the OS refuses one) runs
//! on the caller's thread instead, and a panic in a thread is raised again on the caller's, so no
//! path swallows one or panics where threads are missing.

use std::sync::Mutex;

/// Runs `work` on every item, each on a thread of its own, while `meanwhile` runs on the caller's
/// thread; returns the results in the items' order, and what `meanwhile` returned.
pub fn run_each<I, R, M>(
    items: Vec<I>,
    work: impl Fn(I) -> R + Sync,
    meanwhile: impl FnOnce() -> M,
) -> (Vec<R>, M)
where
    I: Send,
    R: Send,
{
    // Each item waits in a cell so that a thread which fails to start leaves it to the caller.
    let cells: Vec<Mutex<Option<I>>> = items.into_iter().map(|i| Mutex::new(Some(i))).collect();
    let take = |cell: &Mutex<Option<I>>| {
        cell.lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
    };
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = cells
            .iter()
            .map(|cell| {
                std::thread::Builder::new()
                    .spawn_scoped(scope, move || take(cell).map(work))
                    .ok()
            })
            .collect();
        let other = meanwhile();
        let results = handles
            .into_iter()
            .zip(&cells)
            .map(|(handle, cell)| {
                let done = match handle {
                    Some(h) => h
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                    None => None,
                };
                // A thread that did not start left its item in the cell.
                done.or_else(|| take(cell).map(work))
                    .expect("every item is taken exactly once")
            })
            .collect();
        (results, other)
    })
}

#[cfg(test)]
mod tests {
    use super::run_each;

    #[test]
    fn results_keep_the_items_order_and_meanwhile_runs() {
        let (out, side) = run_each((0..16u64).collect(), |i| i * i, || "read");
        assert_eq!(out, (0..16u64).map(|i| i * i).collect::<Vec<_>>());
        assert_eq!(side, "read");
    }

    #[test]
    #[cfg(not(target_os = "wasi"))]
    fn a_panic_in_a_thread_reaches_the_caller() {
        let caught = std::panic::catch_unwind(|| {
            run_each(vec![1, 2, 3], |i| assert_ne!(i, 2, "item two fails"), || ())
        });
        assert!(caught.is_err());
    }
}
