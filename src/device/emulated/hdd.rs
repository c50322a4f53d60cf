//! The timing model of the emulated hard disk (docs/algorithms.md section 7): one actuator, seek
//! 0.8 ms + 15.2 ms x sqrt(distance / max), rotational delay uniform in one revolution (seeded
//! RNG), media transfer, and a small command-queue reordering window.
//!
//! Queueing: requests are served one at a time in submission order (completion times are
//! computed at submission). Real drives reorder their queue (NCQ, shortest positioning time
//! first); the model approximates that by drawing, for each request, the positioning time as the
//! best of `k` candidates, where `k` is the number of requests queued at the actuator (including
//! this one) capped at the profile's `ncq` window. Candidate 0 is the request's own distance
//! from the head; the others are uniform random positions (stand-ins for the other queued
//! requests). At queue depth 1 this is exactly the seek + rotation of the request.
//!
//! Writes: no volatile write cache (the drive acknowledges when on the medium), so `sync` costs
//! only command overhead; a write seek settles `write_settle_ms` longer than a read. The fused
//! RW command is not supported. Distances are fractions of the full stroke: the opened device
//! spans `stroke` of it (0.5 by default: the papers measured half-full disks). Pure and
//! single-threaded like `flash.rs`.

use std::collections::VecDeque;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::flash::{DeviceNs, transfer_ns};
use super::profile::Profile;

/// Requests remembered for queue-depth counting (older ones are dropped; they only widen `k`).
const QUEUE_MEMORY: usize = 4096;

/// The HDD model.
#[derive(Debug)]
pub struct HddModel {
    seek_min_ns: f64,
    seek_span_ns: f64,
    rotation_ns: f64,
    write_settle_ns: u64,
    command_ns: u64,
    media_ns: u64,
    link_ns: u64,
    ncq: usize,
    stroke: f64,
    pages: u64,
    head: u64,
    busy_until: DeviceNs,
    queued: VecDeque<DeviceNs>,
    rng: SmallRng,
}

impl HddModel {
    /// A disk of `pages` pages of `page_size` bytes.
    #[must_use]
    pub fn new(profile: &Profile, page_size: usize, pages: u64) -> Self {
        let ms = |v: f64| v * 1.0e6;
        HddModel {
            seek_min_ns: ms(profile.seek_min_ms),
            seek_span_ns: ms(profile.seek_max_ms - profile.seek_min_ms).max(0.0),
            rotation_ns: ms(profile.rotation_ms),
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            write_settle_ns: ms(profile.write_settle_ms).max(0.0) as u64,
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            command_ns: (profile.fw_us * 1000.0).max(0.0) as u64,
            media_ns: transfer_ns(page_size, profile.media_mb_s.max(1.0)),
            link_ns: transfer_ns(page_size, profile.link_mb_s),
            ncq: profile.ncq.clamp(1, 32) as usize,
            stroke: profile.stroke.clamp(f64::MIN_POSITIVE, 1.0),
            pages: pages.max(1),
            head: 0,
            busy_until: 0,
            queued: VecDeque::new(),
            rng: SmallRng::seed_from_u64(profile.seed),
        }
    }

    #[allow(clippy::cast_precision_loss)]
    fn fraction(&self, a: u64, b: u64) -> f64 {
        a.abs_diff(b) as f64 / self.pages as f64 * self.stroke
    }

    fn positioning(&mut self, distance: f64) -> f64 {
        let seek = if distance > 0.0 {
            self.seek_min_ns + self.seek_span_ns * distance.sqrt()
        } else {
            0.0
        };
        seek + self.rng.gen_range(0.0..self.rotation_ns.max(1.0))
    }

    /// Number of requests still queued at `now`, this one included.
    fn queue_depth(&mut self, now: DeviceNs) -> usize {
        while self.queued.front().is_some_and(|&done| done <= now) {
            self.queued.pop_front();
        }
        self.queued.len() + 1
    }

    fn access(&mut self, now: DeviceNs, lpn: u64, write: bool) -> DeviceNs {
        let k = self.queue_depth(now).min(self.ncq);
        let own = self.fraction(lpn, self.head);
        let mut best = self.positioning(own);
        for _ in 1..k {
            let other = self.rng.gen_range(0..self.pages);
            let distance = self.fraction(other, self.head);
            best = best.min(self.positioning(distance));
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let positioning = best.max(0.0) as u64;
        let settle = if write { self.write_settle_ns } else { 0 };
        let start = (now + self.command_ns).max(self.busy_until);
        let done = start + positioning + settle + self.media_ns;
        self.busy_until = done;
        self.head = lpn.min(self.pages - 1);
        if self.queued.len() >= QUEUE_MEMORY {
            self.queued.pop_front();
        }
        self.queued.push_back(done);
        done + self.link_ns
    }

    /// A read of `lpn` submitted at `now`; returns its completion time.
    pub fn read(&mut self, now: DeviceNs, lpn: u64) -> DeviceNs {
        self.access(now, lpn, false)
    }

    /// A write of `lpn` submitted at `now`; returns its completion time (on the medium).
    pub fn write(&mut self, now: DeviceNs, lpn: u64) -> DeviceNs {
        self.access(now, lpn, true)
    }

    /// A flush: writes are on the medium when acknowledged, so only command overhead.
    pub fn sync(&mut self, now: DeviceNs) -> DeviceNs {
        now + self.command_ns
    }

    /// When the actuator finishes the work queued so far.
    #[must_use]
    pub fn quiescent_at(&self) -> DeviceNs {
        self.busy_until
    }
}
