//! Waiting for another thread's event instead of for a fixed time: a loaded host may run that
//! thread late, so a test polls for what it waits for and gives up only after [`LIMIT`], which
//! no scheduling delay reaches.

use std::time::{Duration, Instant};

/// How long a test waits for an event before it fails.
pub const LIMIT: Duration = Duration::from_secs(60);

/// Returns once `happened()` holds; panics naming `event` when it has not within [`LIMIT`].
pub fn until(event: &str, mut happened: impl FnMut() -> bool) {
    let began = Instant::now();
    while !happened() {
        assert!(began.elapsed() < LIMIT, "{event}: not within {LIMIT:?}");
        std::thread::sleep(Duration::from_millis(1));
    }
}
