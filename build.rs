//! Build script: records which source built the binary, so that every results file names its
//! build (`flashbuf::BUILD`: the git commit, with `-dirty` when tracked files differed from it
//! at build time; `unknown` outside a git checkout or without git).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn main() {
    for path in ["src", "experiments", "Cargo.toml", "Cargo.lock", "build.rs"] {
        println!("cargo:rerun-if-changed={path}");
    }
    let build = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(commit) => {
            // A new commit or checkout changes these, so the build is recorded again. Only
            // paths that exist: Cargo reruns the script on every build for a missing one.
            let dirs = (
                git(&["rev-parse", "--git-dir"]),
                git(&["rev-parse", "--git-common-dir"]),
            );
            let watched = [
                dirs.0.map(|dir| format!("{dir}/HEAD")),
                dirs.1.as_ref().map(|dir| format!("{dir}/refs/heads")),
                dirs.1.map(|dir| format!("{dir}/packed-refs")),
            ];
            for path in watched.into_iter().flatten() {
                if std::path::Path::new(&path).exists() {
                    println!("cargo:rerun-if-changed={path}");
                }
            }
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|status| !status.is_empty());
            format!("{commit}{}", if dirty { "-dirty" } else { "" })
        }
        None => "unknown".to_string(),
    };
    println!("cargo:rustc-env=FLASHBUF_BUILD={build}");
}
