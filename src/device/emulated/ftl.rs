//! The flash translation layer of the emulated SSD (docs/algorithms.md section 7): a page-level
//! logical-to-physical map, per-die append points and greedy garbage collection.
//!
//! Layout: die `d` owns blocks `d * blocks_per_die .. (d + 1) * blocks_per_die`; physical page
//! `block * pages_per_block + offset`. Each die writes into one open ("active") block; when it
//! fills, the next free block of the die opens. When a die has fewer than `GC_RESERVE` free
//! blocks, the die collects: the closed block with the fewest valid pages (greedy) is the victim,
//! its valid pages are appended to the die's active block, and it is erased. For uniform random
//! writes the write amplification is about (1 + rho) / (2 rho) (rho = spare / user pages; greedy
//! does a little better than that FIFO estimate).
//!
//! The FTL only does bookkeeping; the caller (`flash.rs`) turns the returned [`GcWork`] into
//! die time. Invariants (checked by `debug_check` in tests): `l2p` and `p2l` are inverse on
//! mapped pages; a block's `valid` count equals its mapped pages; the active block of every die
//! has room. Not thread-safe on its own: it lives inside the emulator's model mutex.
//!
//! Simplifications: no wear levelling, no bad blocks, no separate GC append point (host and
//! GC data mix in one block), and small devices get smaller blocks (see [`Ftl::new`]).

use crate::error::{Error, Result};

const UNMAPPED: u32 = u32::MAX;
/// Free blocks a die keeps before it garbage-collects (one to finish a collection into, one slack).
pub const GC_RESERVE: usize = 2;
/// A die gets at least this many blocks (blocks shrink on small devices) so greedy GC has choice.
const MIN_BLOCKS_PER_DIE: u64 = 64;
/// Smallest block the FTL shrinks to.
const MIN_PAGES_PER_BLOCK: u64 = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockState {
    Free,
    Open,
    Closed,
}

/// Flash work garbage collection did for one host write (charged on the die by the caller).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GcWork {
    /// Valid pages copied (each a read and a program).
    pub copies: u64,
    /// Blocks erased.
    pub erases: u64,
}

/// Page-level FTL with greedy GC.
#[derive(Debug)]
pub struct Ftl {
    dies: u32,
    pages_per_block: u32,
    blocks_per_die: u32,
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    valid: Vec<u32>,
    state: Vec<BlockState>,
    free: Vec<Vec<u32>>,
    active: Vec<u32>,
    next_offset: Vec<u32>,
}

impl Ftl {
    /// An empty FTL for `logical_pages` pages on `dies` dies with `op` spare (physical pages =
    /// logical x (1 + op), rounded up to whole blocks). The block size is `pages_per_block`
    /// unless that leaves a die fewer than 64 blocks, in which case it shrinks (to at least 4).
    ///
    /// # Errors
    /// [`Error::Config`] when the device is too large for 32-bit page numbers.
    pub fn new(logical_pages: u64, dies: u32, pages_per_block: u32, op: f64) -> Result<Self> {
        assert!(dies > 0 && logical_pages > 0, "FTL needs dies and pages");
        let d = u64::from(dies);
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let physical_wanted = ((logical_pages as f64) * (1.0 + op)).ceil() as u64;
        let per_die = physical_wanted.div_ceil(d);
        let ppb = (per_die / MIN_BLOCKS_PER_DIE)
            .clamp(MIN_PAGES_PER_BLOCK, u64::from(pages_per_block.max(1)));
        let user_blocks_per_die = logical_pages.div_ceil(d).div_ceil(ppb);
        let blocks_per_die = per_die
            .div_ceil(ppb)
            .max(user_blocks_per_die + GC_RESERVE as u64 + 2);
        let physical = blocks_per_die * ppb * d;
        if physical >= u64::from(UNMAPPED) || logical_pages >= u64::from(UNMAPPED) {
            return Err(Error::Config(format!(
                "emulated SSD of {logical_pages} pages is too large (at most 2^32 physical pages)"
            )));
        }
        let (ppb, bpd) = (
            u32::try_from(ppb).unwrap_or(u32::MAX),
            u32::try_from(blocks_per_die).unwrap_or(u32::MAX),
        );
        let blocks = (bpd * dies) as usize;
        let mut ftl = Ftl {
            dies,
            pages_per_block: ppb,
            blocks_per_die: bpd,
            l2p: vec![UNMAPPED; usize::try_from(logical_pages).unwrap_or(0)],
            p2l: vec![UNMAPPED; usize::try_from(physical).unwrap_or(0)],
            valid: vec![0; blocks],
            state: vec![BlockState::Free; blocks],
            free: (0..dies)
                .map(|die| (die * bpd..(die + 1) * bpd).rev().collect())
                .collect(),
            active: vec![0; dies as usize],
            next_offset: vec![0; dies as usize],
        };
        for die in 0..dies {
            ftl.open_next(die);
        }
        Ok(ftl)
    }

    /// Pages per erase block actually used.
    #[must_use]
    pub fn pages_per_block(&self) -> u32 {
        self.pages_per_block
    }

    /// Number of logical pages.
    #[must_use]
    pub fn logical_pages(&self) -> u64 {
        self.l2p.len() as u64
    }

    /// Number of physical pages.
    #[must_use]
    pub fn physical_pages(&self) -> u64 {
        self.p2l.len() as u64
    }

    /// The die holding `lpn`, if it is mapped.
    #[must_use]
    pub fn die_of(&self, lpn: u64) -> Option<u32> {
        let ppn = *self.l2p.get(usize::try_from(lpn).ok()?)?;
        (ppn != UNMAPPED).then(|| ppn / self.pages_per_block / self.blocks_per_die)
    }

    fn open_next(&mut self, die: u32) {
        let block = self.free[die as usize].pop();
        // The GC reserve guarantees a free block whenever the active one fills.
        assert!(block.is_some(), "die {die} ran out of free blocks");
        let block = block.unwrap_or(0);
        self.state[block as usize] = BlockState::Open;
        self.active[die as usize] = block;
        self.next_offset[die as usize] = 0;
    }

    /// Appends `lpn` at the die's write point (the old copy must already be invalid).
    fn append(&mut self, die: u32, lpn: u32) {
        let block = self.active[die as usize];
        let ppn = block * self.pages_per_block + self.next_offset[die as usize];
        self.p2l[ppn as usize] = lpn;
        self.l2p[lpn as usize] = ppn;
        self.valid[block as usize] += 1;
        self.next_offset[die as usize] += 1;
        if self.next_offset[die as usize] == self.pages_per_block {
            self.state[block as usize] = BlockState::Closed;
            self.open_next(die);
        }
    }

    fn invalidate(&mut self, lpn: u32) {
        let ppn = self.l2p[lpn as usize];
        if ppn != UNMAPPED {
            self.p2l[ppn as usize] = UNMAPPED;
            self.valid[(ppn / self.pages_per_block) as usize] -= 1;
            self.l2p[lpn as usize] = UNMAPPED;
        }
    }

    /// Writes `lpn` to `die` (collecting garbage there first if the die is short of free
    /// blocks); returns the collection work done. Pages out of range are ignored.
    pub fn write(&mut self, die: u32, lpn: u64) -> GcWork {
        assert!(die < self.dies, "die {die} out of range");
        let Ok(lpn) = u32::try_from(lpn) else {
            return GcWork::default();
        };
        if lpn as usize >= self.l2p.len() {
            return GcWork::default();
        }
        self.invalidate(lpn);
        let work = self.collect(die);
        self.append(die, lpn);
        work
    }

    /// Greedy GC on `die` until it has `GC_RESERVE` free blocks. Bounded by the die's block
    /// count (each round erases one block).
    fn collect(&mut self, die: u32) -> GcWork {
        let mut work = GcWork::default();
        for _ in 0..self.blocks_per_die {
            if self.free[die as usize].len() >= GC_RESERVE {
                break;
            }
            let Some(victim) = self.greedy_victim(die) else {
                break;
            };
            if self.valid[victim as usize] >= self.pages_per_block {
                break; // nothing to gain: the die is full of valid data
            }
            let first = victim * self.pages_per_block;
            for ppn in first..first + self.pages_per_block {
                let lpn = self.p2l[ppn as usize];
                if lpn != UNMAPPED {
                    self.invalidate(lpn);
                    self.append(die, lpn);
                    work.copies += 1;
                }
            }
            assert_eq!(self.valid[victim as usize], 0, "victim still holds data");
            self.state[victim as usize] = BlockState::Free;
            self.free[die as usize].push(victim);
            work.erases += 1;
        }
        work
    }

    fn greedy_victim(&self, die: u32) -> Option<u32> {
        (die * self.blocks_per_die..(die + 1) * self.blocks_per_die)
            .filter(|&b| self.state[b as usize] == BlockState::Closed)
            .min_by_key(|&b| self.valid[b as usize])
    }

    /// Checks the map invariants (O(pages); for tests).
    ///
    /// # Panics
    /// When an invariant is broken.
    pub fn debug_check(&self) {
        let mut counted = vec![0u32; self.valid.len()];
        for (lpn, &ppn) in self.l2p.iter().enumerate() {
            if ppn != UNMAPPED {
                assert_eq!(self.p2l[ppn as usize] as usize, lpn, "l2p/p2l mismatch");
                counted[(ppn / self.pages_per_block) as usize] += 1;
            }
        }
        assert_eq!(counted, self.valid, "valid counts");
        for die in 0..self.dies as usize {
            assert!(
                self.next_offset[die] < self.pages_per_block,
                "active block full"
            );
        }
    }
}
