//! Filesystem operations from fuzzer bytes, on a fresh directory per input: `root/` (granted,
//! read-write) holds a file, a subdirectory and symlinks into it, up and out (relative,
//! absolute, to `/proc/self/root`, a loop), and `outside/` beside it holds a canary. The input
//! is a list of operations, `OP DIR PATH` separated by newlines (lossy UTF-8), where OP picks
//! read, list, subdir, read_only, write or remove, DIR one of the `Dir`s made so far, and PATH
//! is any text. Nothing may panic, no read may return the canary, and nothing outside the root
//! may change.

#![no_main]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use cordon_fs::{DirRef, Fs, FsLimits, Grant, Mode};
use libfuzzer_sys::fuzz_target;

const CANARY: &str = "CANARY: outside the root";

static RUNS: AtomicU64 = AtomicU64::new(0);

fn layout() -> PathBuf {
    let base = std::env::temp_dir().join(format!("cordon-fuzz-fs-{}-{}", std::process::id(), RUNS.fetch_add(1, Ordering::Relaxed)));
    let _ = std::fs::remove_dir_all(&base);
    let root = base.join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::write(base.join("outside/secret.txt"), CANARY).unwrap();
    std::fs::write(root.join("notes.txt"), "inside").unwrap();
    std::fs::write(root.join("sub/inner.txt"), "inner").unwrap();
    for (name, target) in [
        ("in", PathBuf::from("notes.txt")),
        ("sub/up", PathBuf::from("../notes.txt")),
        ("out", PathBuf::from("../outside/secret.txt")),
        ("outdir", PathBuf::from("../outside")),
        ("abs", base.join("outside/secret.txt")),
        ("proc", PathBuf::from("/proc/self/root")),
        ("loop", PathBuf::from("loop")),
    ] {
        symlink(target, root.join(name)).unwrap();
    }
    base
}

fn outside(base: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(base.join("outside"))
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let content = std::fs::read(&p).unwrap_or_default();
            (p, content)
        })
        .collect();
    files.sort();
    files
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let base = layout();
    let before = outside(&base);
    let grant = Grant { name: "r".into(), path: base.join("root"), mode: Mode::ReadWrite };
    let limits = FsLimits { max_changes: 50, ..FsLimits::default() };
    let mut fs = Fs::open(&[grant], "user", limits).unwrap();
    let mut dirs: Vec<DirRef> = vec![fs.root("r").unwrap()];
    for line in text.lines().take(64) {
        let mut parts = line.splitn(3, ' ');
        let op = parts.next().unwrap_or("").bytes().next().unwrap_or(0);
        let pick = parts.next().unwrap_or("").bytes().next().unwrap_or(0) as usize;
        let path = parts.next().unwrap_or("");
        let d = dirs[pick % dirs.len()].clone();
        match op % 6 {
            0 => {
                if let Ok(read) = fs.read(&d, path) {
                    assert!(!read.contains("CANARY"), "read the canary through {d:?} at {path:?}");
                }
            }
            1 => {
                let _ = fs.list(&d);
            }
            2 => {
                if let Ok(sub) = fs.subdir(&d, path) {
                    dirs.push(sub);
                }
            }
            3 => dirs.push(fs.read_only(&d).unwrap()),
            4 => {
                let _ = fs.write(&d, path, "written");
            }
            _ => {
                let _ = fs.remove(&d, path);
            }
        }
    }
    assert_eq!(outside(&base), before, "something outside the root changed");
    let _ = std::fs::remove_dir_all(&base);
});
