//! The timing model of the ideal asymmetric device (`emu:ideal`; ACE Figure 10h: "an emulated
//! device that has ideal asymmetry ... while the device concurrency is k_w = 8").
//!
//! The device has one unit of capacity. A read occupies `1 / k_r` of it for `t_read`, a write
//! `1 / k_w` of it for `alpha x t_read`; a request starts, in arrival order, as soon as its
//! share is free. So `k_w` writes alone run at once, each in exactly `alpha x t_read` (the
//! next one queues for a whole write time), `k_r` reads alone likewise in `t_read`, and mixed
//! loads share the capacity. Nothing else: no FTL, no garbage collection, no write cache (a
//! write is durable when acknowledged, so `sync` costs nothing), no host stack.
//!
//! Exact arithmetic: capacity is `k_r x k_w` integer units, a read takes `k_w` of them and a
//! write `k_r`. Invariant: every request handed out has started by `last_start`, so the load
//! after `last_start` is the requests whose end is later, and it only falls with time.
//! Bounded: at most `k_r x k_w` requests hold capacity at once (each takes at least one unit).
//! Pure and single-threaded like `flash.rs` (it lives in the device's model mutex).

use super::flash::DeviceNs;
use super::profile::Profile;

/// The ideal device model.
#[derive(Debug)]
pub struct IdealModel {
    read_ns: u64,
    write_ns: u64,
    capacity: u64,
    read_units: u64,
    write_units: u64,
    /// (end, units) of the requests that hold capacity after `last_start`.
    holding: Vec<(DeviceNs, u64)>,
    last_start: DeviceNs,
    busy_until: DeviceNs,
}

impl IdealModel {
    /// The model `profile` describes (`t_read_us`, `alpha`, `k_w`, `k_r`).
    #[must_use]
    pub fn new(profile: &Profile) -> Self {
        let read_ns = (profile.t_read_us * 1000.0).round().max(1.0) as u64;
        let write_ns = (profile.t_read_us * profile.alpha * 1000.0)
            .round()
            .max(1.0) as u64;
        let (k_r, k_w) = (u64::from(profile.k_r.max(1)), u64::from(profile.k_w.max(1)));
        IdealModel {
            read_ns,
            write_ns,
            capacity: k_r * k_w,
            read_units: k_w,
            write_units: k_r,
            holding: Vec::new(),
            last_start: 0,
            busy_until: 0,
        }
    }

    /// A request arriving at `now` that holds `units` for `service_ns`: its completion time.
    fn admit(&mut self, now: DeviceNs, units: u64, service_ns: u64) -> DeviceNs {
        let mut start = now.max(self.last_start);
        loop {
            self.holding.retain(|&(end, _)| end > start);
            let used: u64 = self.holding.iter().map(|&(_, held)| held).sum();
            if used + units <= self.capacity {
                break;
            }
            // The load only falls after `start`: wait for the next request to end.
            start = self
                .holding
                .iter()
                .map(|&(end, _)| end)
                .min()
                .unwrap_or(start);
        }
        let end = start + service_ns;
        self.last_start = start;
        self.holding.push((end, units));
        self.busy_until = self.busy_until.max(end);
        end
    }

    /// A read submitted at `now`; returns its completion time.
    pub fn read(&mut self, now: DeviceNs) -> DeviceNs {
        self.admit(now, self.read_units, self.read_ns)
    }

    /// A write submitted at `now`; returns its completion time (durable then).
    pub fn write(&mut self, now: DeviceNs) -> DeviceNs {
        self.admit(now, self.write_units, self.write_ns)
    }

    /// A flush: acknowledged writes are durable, so it costs nothing.
    #[must_use]
    pub fn sync(&self, now: DeviceNs) -> DeviceNs {
        now
    }

    /// When the requests handed out so far complete.
    #[must_use]
    pub fn quiescent_at(&self) -> DeviceNs {
        self.busy_until
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::emulated::profile::resolve;

    fn model(alpha: &str, k_w: &str, k_r: &str) -> IdealModel {
        let options = [("alpha", alpha), ("k_w", k_w), ("k_r", k_r)]
            .map(|(k, v)| (k.to_string(), v.to_string()));
        IdealModel::new(&resolve("ideal", &options).unwrap())
    }

    #[test]
    fn k_w_writes_run_at_once_and_the_next_waits_a_whole_write() {
        let mut m = model("4", "3", "6");
        let write = m.write_ns;
        assert_eq!(write, 4 * m.read_ns);
        let ends: Vec<DeviceNs> = (0..4).map(|_| m.write(0)).collect();
        assert_eq!(ends, [write, write, write, 2 * write]);
        assert_eq!(m.quiescent_at(), 2 * write);
    }

    #[test]
    fn reads_and_writes_share_the_capacity() {
        // k_r 4, k_w 2: a write takes half the device, a read a quarter.
        let mut m = model("2", "2", "4");
        let (read, write) = (m.read_ns, m.write_ns);
        assert_eq!(m.write(0), write);
        assert_eq!(m.read(0), read);
        assert_eq!(m.read(0), read);
        // Full: the next read starts when the first read ends (FIFO).
        assert_eq!(m.read(0), 2 * read);
        assert_eq!(m.sync(5), 5);
    }
}
