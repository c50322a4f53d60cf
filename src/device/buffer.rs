//! Aligned page buffers and the raw buffer handle carried by I/O requests.
//!
//! [`AlignedBuf`] owns `IO_ALIGN`-aligned, zero-initialised memory (what O_DIRECT needs).
//! [`IoBuffer`] is a raw (pointer, length) pair: the buffer pool points it into its frames.
//! Invariant: an `IoBuffer` handed to [`crate::device::Device::submit`] stays valid until its
//! ticket completes (the caller's `unsafe` contract).

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

use super::IO_ALIGN;
use crate::error::DeviceError;

/// A raw page buffer for I/O requests. Carries no lifetime: see [`crate::device::Device::submit`].
#[derive(Debug, Clone, Copy)]
pub struct IoBuffer {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: an IoBuffer is only a pointer and a length; the submit contract makes the owner
// guarantee exclusive access while the device uses it, from whichever thread completes it.
unsafe impl Send for IoBuffer {}
// SAFETY: as above.
unsafe impl Sync for IoBuffer {}

impl IoBuffer {
    /// Wraps a raw pointer.
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes for as long as the buffer is used.
    #[must_use]
    pub unsafe fn from_raw(ptr: NonNull<u8>, len: usize) -> Self {
        IoBuffer { ptr, len }
    }

    /// The buffer's address.
    #[must_use]
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The buffer's length in bytes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Checks that the buffer is exactly one page and aligned to `IO_ALIGN`.
    ///
    /// # Errors
    /// [`DeviceError::Misaligned`].
    pub fn check(&self, page_size: usize) -> Result<(), DeviceError> {
        let addr = self.ptr.as_ptr() as usize;
        if self.len == page_size && addr.is_multiple_of(IO_ALIGN) {
            Ok(())
        } else {
            Err(DeviceError::Misaligned {
                addr,
                len: self.len,
                align: IO_ALIGN,
                page_size,
            })
        }
    }

    /// Views the buffer as a slice.
    ///
    /// # Safety
    /// Nothing may write the buffer while the slice lives.
    #[must_use]
    pub unsafe fn as_slice<'a>(&self) -> &'a [u8] {
        // SAFETY: forwarded to the caller.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// Views the buffer as a mutable slice.
    ///
    /// # Safety
    /// Nothing else may access the buffer while the slice lives.
    #[must_use]
    pub unsafe fn as_mut_slice<'a>(&self) -> &'a mut [u8] {
        // SAFETY: forwarded to the caller.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

/// Owned, `IO_ALIGN`-aligned, zero-initialised memory.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: AlignedBuf uniquely owns its allocation, like Vec<u8>.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared access only hands out &[u8].
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` zeroed bytes aligned to `IO_ALIGN`. `len` of 0 allocates one aligned block.
    ///
    /// # Panics
    /// If the allocator fails (out of memory), like `Vec`.
    #[must_use]
    pub fn new(len: usize) -> Self {
        let layout = Self::layout(len);
        // SAFETY: the layout has non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(raw) else {
            std::alloc::handle_alloc_error(layout)
        };
        AlignedBuf { ptr, len }
    }

    fn layout(len: usize) -> Layout {
        // Rounding up to the alignment keeps the size valid; the alignment is a power of two.
        Layout::from_size_align(len.max(1).next_multiple_of(IO_ALIGN), IO_ALIGN)
            .unwrap_or_else(|_| Layout::new::<u8>())
    }

    /// Length in bytes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no bytes.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes.
    #[must_use]
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: we own `len` initialised bytes.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, mutably.
    #[must_use]
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: we own `len` initialised bytes and hold `&mut self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// A raw handle for a read into this buffer (the caller then must not touch it until done).
    #[must_use]
    pub fn io_buffer(&mut self) -> IoBuffer {
        IoBuffer {
            ptr: self.ptr,
            len: self.len,
        }
    }

    /// A raw handle for a write from this buffer.
    #[must_use]
    pub fn io_buffer_shared(&self) -> IoBuffer {
        IoBuffer {
            ptr: self.ptr,
            len: self.len,
        }
    }

    /// A raw handle to the `index`-th `chunk`-byte slice (for page-sized pieces of a big arena).
    ///
    /// # Panics
    /// If the chunk lies outside the buffer (a caller bug).
    #[must_use]
    pub fn chunk_io_buffer(&self, index: usize, chunk: usize) -> IoBuffer {
        let start = index * chunk;
        assert!(
            start + chunk <= self.len,
            "chunk {index} of {chunk} bytes out of range"
        );
        // SAFETY: in bounds of our allocation, checked above.
        let ptr = unsafe { NonNull::new_unchecked(self.ptr.as_ptr().add(start)) };
        IoBuffer { ptr, len: chunk }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with the same layout.
        unsafe { dealloc(self.ptr.as_ptr(), Self::layout(self.len)) }
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedBuf")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .finish()
    }
}

impl Clone for AlignedBuf {
    fn clone(&self) -> Self {
        let mut copy = AlignedBuf::new(self.len);
        copy.as_mut_slice().copy_from_slice(self.as_slice());
        copy
    }
}
