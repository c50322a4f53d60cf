//! A `file:` device can be reopened at once after its holder was killed with SIGKILL in the
//! middle of its I/O, as a supervisor restarting a crashed process does: the reopen never fails
//! with `Error::Locked` once the holder is dead (the kernel may still be tearing down the dead
//! process's io_uring; the open waits for that instead of refusing), and no write of the dead
//! holder lands after the reopen (the file reads the same twice, 20 ms apart). While the
//! holder lives, an open fails with `Error::Locked` naming the holder's pid.
//!
//! The child is this test binary run again with [`CHILD_ENV`] set: it opens the file with the
//! default backend, keeps a queue of writes and reads in flight, and says `ready` once its
//! first batch completed. The short loop runs in the normal suite; 100 cycles:
//! `cargo test --release --test file_restart_after_kill -- --ignored`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use flashbuf::Error;
use flashbuf::device::file;
use flashbuf::device::ticket::wait_all;
use flashbuf::device::{AlignedBuf, IoRequest, OpenOptions, SharedDevice};

/// Set in the child: the file it holds.
const CHILD_ENV: &str = "FLASHBUF_TEST_RESTART_CHILD";
const PAGE: usize = 4096;
const PAGES: u64 = 1024;
/// Requests the child keeps per batch (a deep queue, so a kill lands with I/O in flight).
const BATCH: usize = 128;
/// How long the parent keeps retrying an open the device refused, before giving up on the cycle.
const SETTLE: Duration = Duration::from_secs(30);

fn options(create: bool) -> OpenOptions {
    OpenOptions {
        page_size: PAGE,
        pages: PAGES,
        create,
    }
}

/// The child: hold the file and keep I/O in flight until killed. Never returns.
fn run_child(path: &Path) -> ! {
    let device = file::open(path, &options(false)).expect("child opens the file");
    let mut bufs: Vec<AlignedBuf> = (0..BATCH).map(|_| AlignedBuf::new(PAGE)).collect();
    let mut round: u64 = 0;
    loop {
        let batch: Vec<IoRequest> = bufs
            .iter_mut()
            .enumerate()
            .map(|(index, buf)| {
                let page = (round * 37 + index as u64 * 8) % PAGES;
                if index % 4 == 0 {
                    IoRequest::read(page, buf.io_buffer())
                } else {
                    buf.as_mut_slice()[0] = round as u8;
                    IoRequest::write(page, buf.io_buffer_shared())
                }
            })
            .collect();
        // SAFETY: every buffer outlives its request (wait_all returns after all completed).
        wait_all(unsafe { device.submit(batch) }).expect("child I/O");
        if round == 0 {
            println!("ready");
        }
        round += 1;
    }
}

fn child_path() -> Option<PathBuf> {
    std::env::var_os(CHILD_ENV).map(PathBuf::from)
}

/// Starts this test binary as the child holding `path`, and waits until its I/O runs.
fn spawn_child(test_name: &str, path: &Path) -> Child {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([test_name, "--exact", "--include-ignored", "--nocapture"])
        .env(CHILD_ENV, path)
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the child");
    let stdout = child.stdout.take().unwrap();
    let ready = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .any(|line| line == "ready");
    assert!(ready, "the child ended before its first I/O completed");
    child
}

#[derive(Debug, Default)]
struct Tally {
    cycles: usize,
    spurious_locked: usize,
    late_writes: usize,
    live_locked_with_pid: usize,
    slowest_reopen: Duration,
}

/// Kill/restart cycles; returns what happened.
fn kill_restart_cycles(test_name: &str, cycles: usize) -> Tally {
    let dir = tempfile::Builder::new()
        .prefix("file-restart-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let path = dir.path().join("db");
    drop(file::open(&path, &options(true)).unwrap());
    let mut tally = Tally::default();
    for cycle in 0..cycles {
        let mut child = spawn_child(test_name, &path);
        let pid = child.id();
        match file::open(&path, &options(false)) {
            Err(err @ Error::Locked { .. }) => {
                let text = err.to_string();
                assert!(text.contains(&path.display().to_string()), "{text}");
                assert!(
                    text.contains(&format!("process {pid}")),
                    "Locked names the live holder {pid}: {text}"
                );
                tally.live_locked_with_pid += 1;
            }
            Err(other) => panic!("cycle {cycle}: open beside a live holder: {other}"),
            Ok(_) => panic!("cycle {cycle}: opened a file a live process holds"),
        }
        // Land the kill at a varying point of the child's I/O.
        std::thread::sleep(Duration::from_micros(((cycle * 7919) % 5000) as u64));
        child.kill().unwrap();
        child.wait().unwrap();
        let started = Instant::now();
        let reopened = file::open(&path, &options(false));
        tally.slowest_reopen = tally.slowest_reopen.max(started.elapsed());
        match reopened {
            Ok(device) => {
                let before = read_all(&device);
                std::thread::sleep(Duration::from_millis(20));
                if read_all(&device) != before {
                    tally.late_writes += 1;
                }
            }
            Err(Error::Locked { .. }) => {
                tally.spurious_locked += 1;
                settle(&path);
            }
            Err(other) => panic!("cycle {cycle}: reopen after kill -9: {other}"),
        }
        tally.cycles += 1;
    }
    tally
}

/// Every page of the device.
fn read_all(device: &SharedDevice) -> Vec<u8> {
    let mut bufs: Vec<AlignedBuf> = (0..PAGES).map(|_| AlignedBuf::new(PAGE)).collect();
    let batch: Vec<IoRequest> = bufs
        .iter_mut()
        .enumerate()
        .map(|(page, buf)| IoRequest::read(page as u64, buf.io_buffer()))
        .collect();
    // SAFETY: every buffer outlives its request (wait_all returns after all completed).
    wait_all(unsafe { device.submit(batch) }).expect("read back");
    bufs.iter()
        .flat_map(|buf| buf.as_slice().to_vec())
        .collect()
}

/// Retries the open until the dead holder's lock is gone (only after a spurious refusal).
fn settle(path: &Path) {
    let started = Instant::now();
    loop {
        match file::open(path, &options(false)) {
            Ok(_) => return,
            Err(Error::Locked { .. }) if started.elapsed() < SETTLE => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(other) => panic!("the lock of a dead holder stayed after {SETTLE:?}: {other}"),
        }
    }
}

fn check(test_name: &str, cycles: usize) {
    if let Some(path) = child_path() {
        run_child(&path);
    }
    let tally = kill_restart_cycles(test_name, cycles);
    eprintln!("{tally:?}");
    assert_eq!(tally.cycles, cycles);
    assert_eq!(tally.live_locked_with_pid, cycles);
    assert_eq!(
        tally.spurious_locked, 0,
        "reopens refused after the holder died: {tally:?}"
    );
    assert_eq!(
        tally.late_writes, 0,
        "writes of a dead holder landed after the reopen: {tally:?}"
    );
}

#[test]
fn reopen_right_after_kill_9_succeeds_10_cycles() {
    check("reopen_right_after_kill_9_succeeds_10_cycles", 10);
}

#[test]
#[ignore = "100 kill -9 / restart cycles (about a minute)"]
fn reopen_right_after_kill_9_succeeds_100_cycles() {
    check("reopen_right_after_kill_9_succeeds_100_cycles", 100);
}
