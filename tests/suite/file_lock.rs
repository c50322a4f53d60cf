//! An open file device holds an exclusive lock: a second open of the same file, in this
//! process or in another one, fails with `Error::Locked` naming the file and the holder's pid;
//! dropping the device releases it.

use std::path::Path;

use flashbuf::Error;
use flashbuf::device::OpenOptions;
use flashbuf::device::file;

const PAGE: usize = 4096;

fn options() -> OpenOptions {
    OpenOptions {
        page_size: PAGE,
        pages: 8,
        create: true,
    }
}

fn assert_locked(result: flashbuf::Result<flashbuf::device::SharedDevice>, path: &Path) {
    match result {
        Err(err @ Error::Locked { holder, .. }) => {
            assert_eq!(
                holder,
                Some(std::process::id()),
                "the holder is this process"
            );
            let text = err.to_string();
            assert!(text.contains(&path.display().to_string()), "{text}");
            assert!(
                text.contains(&format!("this process (pid {})", std::process::id())),
                "{text}"
            );
        }
        Err(other) => panic!("expected Locked, got {other}"),
        Ok(_) => panic!("a second open of a locked file succeeded"),
    }
}

#[test]
fn a_second_open_is_refused_until_the_first_is_dropped() {
    let dir = tempfile::Builder::new()
        .prefix("file-lock-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let path = dir.path().join("db");
    let first = file::open(&path, &options()).unwrap();
    assert_locked(file::open(&path, &options()), &path);
    assert_locked(
        file::open(
            &path,
            &OpenOptions {
                create: false,
                ..options()
            },
        ),
        &path,
    );
    // Another process: flock(1) with -n fails (exit 1) while we hold the lock.
    if let Ok(status) = std::process::Command::new("flock")
        .args(["-n", "-x"])
        .arg(&path)
        .arg("true")
        .status()
    {
        assert!(!status.success(), "another process got the lock");
    }
    drop(first);
    let again = file::open(&path, &options()).unwrap();
    assert_eq!(again.info().pages, 8);
}
