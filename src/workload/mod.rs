//! Workloads: what the benchmark runs against a page store.
//!
//! [`PageAccess`] is the interface a workload drives (the buffer pool implements it);
//! [`synthetic`] holds the ACE page-level mixes and [`keys`] their page distributions.
//!
//! The record-level workloads drive the transactional key-value interface
//! ([`crate::kv::KvEngine`]) through [`record::RecordWorkload`]: [`tpcc`], [`ycsb`] and
//! [`linkbench`].

pub mod keys;
pub mod linkbench;
pub mod record;
pub mod synthetic;
pub mod tpcc;
pub mod ycsb;

use crate::error::{PageId, Result};

/// What a page-level workload runs against. The buffer pool implements it; tests may use a
/// trivial in-memory implementation.
pub trait PageAccess: Send + Sync {
    /// Number of pages in the database (valid ids are `0..pages()`).
    fn pages(&self) -> u64;
    /// Page size in bytes (the closures see the whole page, header included).
    fn page_size(&self) -> usize;
    /// Runs `f` on the page's bytes under a shared latch.
    ///
    /// # Errors
    /// Out-of-range page, corrupt page, device errors.
    fn read_with(&self, page: PageId, f: &mut dyn FnMut(&[u8])) -> Result<()>;
    /// Runs `f` on the page's bytes under an exclusive latch and marks the page dirty.
    ///
    /// # Errors
    /// Out-of-range page, corrupt page, device errors, a poisoned pool.
    fn update_with(&self, page: PageId, f: &mut dyn FnMut(&mut [u8])) -> Result<()>;
}

impl PageAccess for crate::core::BufferPool {
    fn pages(&self) -> u64 {
        self.pages()
    }
    fn page_size(&self) -> usize {
        self.page_size()
    }
    fn read_with(&self, page: PageId, f: &mut dyn FnMut(&[u8])) -> Result<()> {
        let guard = self.read(page)?;
        f(guard.data());
        Ok(())
    }
    fn update_with(&self, page: PageId, f: &mut dyn FnMut(&mut [u8])) -> Result<()> {
        let mut guard = self.write(page)?;
        f(guard.data_mut());
        Ok(())
    }
}
