//! The frames' page memory: one anonymous mapping of `frames x page_size` bytes, frame `i`'s
//! page at offset `i x page_size`.
//!
//! The pool touches its pages at random, so with 4 KiB OS pages nearly every access to a page
//! not touched lately also misses the TLB: a walk of the page tables before the cache line
//! itself, which on a pool of a gigabyte cost a fifth of an in-memory lookup's cycles
//! (`docs/performance.md`, "Huge pages for the frames"). The arena therefore asks for
//! transparent huge pages (`madvise(MADV_HUGEPAGE)`) before any page is touched, as InnoDB
//! offers `large_pages` for its pool. `huge_pages = false` (a pool config key) leaves the
//! kernel's default.
//!
//! The arena's memory is populated when it is made ([`Mapping::populate`]): every page fault
//! and the kernel's zeroing of each (huge) page happen then, not on a frame's first use. A pool
//! fills its frames as it warms up, and each first touch of a huge page zeroed 2 MiB inside a
//! client's miss: in the in-memory TPC-C point that was about 4% of the run's cycles, half of
//! them in the measured phase (`docs/performance.md`, "Frames populated when the pool is
//! made"). The memory is charged against the commit limit when the arena is made anyway, so
//! populating it takes nothing the pool had not reserved.
//!
//! Invariants: the memory is zero until written, I/O-aligned (`IO_ALIGN` divides the OS page
//! size), never moves or shrinks while the arena lives, and is charged against the commit
//! limit when the arena is made (a pool the machine cannot hold fails here, not on a fault).

use crate::device::IoBuffer;
use crate::device::mapping::Mapping;
use crate::error::{Error, Result};

/// The frames' page memory (see the module docs).
#[derive(Debug)]
pub struct FrameArena {
    mapping: Mapping,
    page_size: usize,
    frames: usize,
    huge_pages: bool,
}

impl FrameArena {
    /// Memory for `frames` pages of `page_size` bytes, with transparent huge pages asked for
    /// when `huge_pages` is set.
    ///
    /// # Errors
    /// [`Error::Config`] when the size overflows or the OS refuses the mapping.
    pub fn new(frames: usize, page_size: usize, huge_pages: bool) -> Result<FrameArena> {
        let bytes = frames
            .checked_mul(page_size)
            .ok_or_else(|| Error::Config(format!("{frames} frames do not fit in memory")))?;
        let mapping = Mapping::anonymous_accounted(bytes).map_err(|err| {
            Error::Config(format!(
                "a buffer pool of {frames} frames of {page_size} bytes ({} MB) cannot be \
                 allocated: {err}",
                bytes / 1_000_000
            ))
        })?;
        debug_assert_eq!(mapping.as_ptr() as usize % crate::device::IO_ALIGN, 0);
        let huge_pages = huge_pages && mapping.advise_huge_pages();
        // After the advice, so that the pages populated are huge ones.
        mapping.populate();
        Ok(FrameArena {
            mapping,
            page_size,
            frames,
            huge_pages,
        })
    }

    /// Frame `index`'s page.
    ///
    /// # Panics
    /// If `index` is not a frame of the arena (a caller bug).
    #[inline]
    #[must_use]
    pub fn page(&self, index: usize) -> IoBuffer {
        assert!(index < self.frames, "frame {index} out of range");
        // SAFETY: in bounds of the mapping (checked above; the mapping holds every frame's
        // page), and the mapping's base is not null.
        unsafe {
            let ptr =
                std::ptr::NonNull::new_unchecked(self.mapping.as_ptr().add(index * self.page_size));
            IoBuffer::from_raw(ptr, self.page_size)
        }
    }

    /// Whether the kernel took the advice to use transparent huge pages.
    #[must_use]
    pub fn huge_pages(&self) -> bool {
        self.huge_pages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_zero_aligned_and_disjoint() {
        let arena = FrameArena::new(600, 4096, true).unwrap();
        let first = arena.page(0);
        let last = arena.page(599);
        assert_eq!(first.as_ptr() as usize % crate::device::IO_ALIGN, 0);
        assert_eq!(last.as_ptr() as usize - first.as_ptr() as usize, 599 * 4096);
        assert_eq!(last.len(), 4096);
        // SAFETY: nothing else uses the arena's pages in this test.
        let bytes = unsafe { last.as_mut_slice() };
        assert!(bytes.iter().all(|&b| b == 0));
        bytes.fill(7);
        // SAFETY: as above.
        assert!(
            unsafe { arena.page(598).as_mut_slice() }
                .iter()
                .all(|&b| b == 0)
        );
    }

    #[test]
    fn huge_pages_are_reported_only_when_asked_and_possible() {
        assert!(
            !FrameArena::new(600, 4096, false).unwrap().huge_pages(),
            "not asked"
        );
        // One page holds no whole 2 MiB extent: nothing to advise.
        assert!(
            !FrameArena::new(1, 4096, true).unwrap().huge_pages(),
            "too small"
        );
    }

    #[test]
    fn an_arena_too_large_is_a_config_error() {
        let err = FrameArena::new(usize::MAX / 2, 4096, false).unwrap_err();
        assert!(matches!(err, Error::Config(_)), "{err}");
    }
}
