//! [`RegionDevice`]: a view of a contiguous range of another device's pages, as a device of its
//! own. Page `p` of the region is page `first + p` of the inner device; requests outside the
//! region fail with [`DeviceError::OutOfRange`] naming the region's size, so a caller of the
//! view can never reach the pages around it (the data file's header and doublewrite area,
//! `crate::datafile`).
//!
//! Everything else is forwarded: `sync` syncs the whole inner device (there is no finer
//! durability), `stats` are the inner device's (they include I/O outside the region), the
//! fused command maps both of its pages, `bulk_load` is offset.
//!
//! Invariants: `first + pages <= inner.pages` (checked at construction); a request is mapped
//! only after it validated against the region. No locks.

use std::sync::Arc;

use super::{Device, DeviceInfo, DeviceStats, IoOp, IoRequest, IoTicket, SharedDevice};
use crate::error::{DeviceError, PageId};

/// A window of `pages` pages of `inner`, starting at `first`.
#[derive(Debug)]
pub struct RegionDevice {
    inner: SharedDevice,
    first: PageId,
    info: DeviceInfo,
}

impl RegionDevice {
    /// A view of `inner`'s pages `first .. first + pages`.
    ///
    /// # Errors
    /// [`DeviceError::OutOfRange`] when the region does not fit the inner device or is empty.
    pub fn new(inner: SharedDevice, first: PageId, pages: u64) -> Result<Self, DeviceError> {
        let inner_info = inner.info().clone();
        let end = first.checked_add(pages);
        if pages == 0 || end.is_none_or(|end| end > inner_info.pages) {
            return Err(DeviceError::OutOfRange {
                page: first.saturating_add(pages).saturating_sub(1),
                pages: inner_info.pages,
            });
        }
        let info = DeviceInfo {
            name: format!("{}[{first}..{}]", inner_info.name, first + pages),
            pages,
            ..inner_info
        };
        Ok(RegionDevice { inner, first, info })
    }

    /// Shares the view.
    #[must_use]
    pub fn shared(self) -> SharedDevice {
        Arc::new(self)
    }

    /// The inner page of region page `page` (validated).
    fn map(&self, page: PageId) -> PageId {
        assert!(page < self.info.pages, "mapped pages were validated");
        self.first + page
    }

    /// The first inner page of the region.
    pub fn first(&self) -> PageId {
        self.first
    }

    /// The device the region views.
    pub fn inner(&self) -> &SharedDevice {
        &self.inner
    }
}

impl Device for RegionDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    unsafe fn submit(&self, batch: Vec<IoRequest>) -> Vec<IoTicket> {
        let count = batch.len();
        let mut tickets: Vec<Option<IoTicket>> = Vec::with_capacity(count);
        let mut mapped = Vec::with_capacity(count);
        let mut slots = Vec::with_capacity(count);
        for (index, request) in batch.into_iter().enumerate() {
            // Page range only: buffer checks are the inner device's (it may accept more).
            let in_range = self
                .info
                .check_page(request.page)
                .and_then(|()| match request.op {
                    IoOp::FusedReadWrite { write_page } => self.info.check_page(write_page),
                    IoOp::Read | IoOp::Write => Ok(()),
                });
            if let Err(err) = in_range {
                tickets.push(Some(IoTicket::done(Err(err))));
                continue;
            }
            let op = match request.op {
                IoOp::FusedReadWrite { write_page } => IoOp::FusedReadWrite {
                    write_page: self.map(write_page),
                },
                other => other,
            };
            mapped.push(IoRequest {
                op,
                page: self.map(request.page),
                buf: request.buf,
            });
            slots.push(index);
            tickets.push(None);
        }
        // SAFETY: forwarded from our caller's contract, buffers unchanged.
        let inner_tickets = unsafe { self.inner.submit(mapped) };
        assert_eq!(inner_tickets.len(), slots.len(), "one ticket per request");
        for (index, ticket) in slots.into_iter().zip(inner_tickets) {
            tickets[index] = Some(ticket);
        }
        let tickets: Vec<IoTicket> = tickets
            .into_iter()
            .map(|t| t.unwrap_or_else(|| IoTicket::done(Err(DeviceError::Crashed))))
            .collect();
        assert_eq!(tickets.len(), count, "one ticket per request");
        tickets
    }

    fn sync(&self) -> Result<(), DeviceError> {
        self.inner.sync()
    }

    fn stats(&self) -> DeviceStats {
        self.inner.stats()
    }

    fn bulk_load(&self, first_page: PageId, data: &[u8]) -> Result<(), DeviceError> {
        let page_size = self.info.page_size;
        let count = data.len().div_ceil(page_size) as u64;
        let last = first_page.saturating_add(count.max(1)) - 1;
        self.info.check_page(first_page)?;
        self.info.check_page(last)?;
        self.inner.bulk_load(self.first + first_page, data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::AlignedBuf;
    use crate::device::memory::MemoryDevice;

    #[test]
    fn pages_are_offset_and_bounded() {
        let inner: SharedDevice = Arc::new(MemoryDevice::new(4096, 10).unwrap());
        let region = RegionDevice::new(Arc::clone(&inner), 3, 5).unwrap();
        assert_eq!(region.info().pages, 5);
        let mut buf = AlignedBuf::new(4096);
        buf.as_mut_slice().fill(4);
        region.write_page(0, &buf).unwrap();
        let mut back = AlignedBuf::new(4096);
        inner.read_page(3, &mut back).unwrap();
        assert_eq!(back.as_slice()[0], 4);
        assert!(matches!(
            region.write_page(5, &buf),
            Err(DeviceError::OutOfRange { page: 5, pages: 5 })
        ));
        assert!(RegionDevice::new(Arc::clone(&inner), 6, 5).is_err());
        assert!(RegionDevice::new(inner, 0, 0).is_err());
    }
}
