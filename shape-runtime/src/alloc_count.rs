//! The unit tests' allocator: the system's, counting on each thread the bytes it holds, so a
//! test can measure what a value really takes (estimates of memory are checked against it).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

pub(crate) struct Counting;

thread_local! {
    static HELD: Cell<isize> = const { Cell::new(0) };
}

/// What an allocation takes from glibc's heap: an 8-byte header, 16-byte granules, 32 bytes
/// at least.
fn charge(layout: Layout) -> isize {
    let size = (layout.size() + 8).div_ceil(16).max(2) * 16;
    isize::try_from(size).unwrap_or(isize::MAX)
}

// SAFETY: every call is forwarded to `System` unchanged; the counter is a thread-local
// `Cell` (const-initialised, no allocation, no destructor), touched with `try_with` so that
// a thread being torn down is simply not counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = HELD.try_with(|h| h.set(h.get() + charge(layout)));
        // SAFETY: the caller's contract for `alloc` is passed on as it is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let _ = HELD.try_with(|h| h.set(h.get() - charge(layout)));
        // SAFETY: `ptr` was allocated by `System` with `layout` (every allocation goes there).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `alloc` and `dealloc`: the caller's contract, passed on.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            let grown = Layout::from_size_align(new_size, layout.align()).unwrap_or(layout);
            let _ = HELD.try_with(|h| h.set(h.get() - charge(layout) + charge(grown)));
        }
        new
    }
}

/// The bytes this thread holds now (allocations minus frees, each with its bookkeeping).
pub(crate) fn held() -> isize {
    HELD.with(Cell::get)
}
