//! Every way out of a `Dir` we know of, hostile first: `..` chains, absolute paths, symlinks and
//! hard links out of the root, symlinks swapped during a run, `/proc/self/root`, devices, pipes
//! and sockets, long names, names that are not UTF-8, a file replaced by a directory, forged
//! and read-only `Dir`s, sizes and quotas. Each must be refused with its code and a reason that
//! says why, and leave every file, inside the root and out, as it was. Each test works in its
//! own temporary directory: `root/` is granted, `outside/` beside it holds what must not be
//! reached.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use cordon_fs::{DirRef, Fs, FsLimits, Grant, Mode, Refusal};

/// What must never be read through the root.
const OUTSIDE: &str = "OUTSIDE: the user's other files";

struct Scene {
    tmp: tempfile::TempDir,
}

impl Scene {
    /// `root/` (with `notes.txt`, `sub/inner.txt`) and `outside/secret.txt`.
    fn new() -> Scene {
        let tmp = tempfile::tempdir().unwrap();
        let scene = Scene { tmp };
        std::fs::create_dir_all(scene.root().join("sub")).unwrap();
        std::fs::create_dir_all(scene.outside()).unwrap();
        std::fs::write(scene.root().join("notes.txt"), "inside").unwrap();
        std::fs::write(scene.root().join("sub/inner.txt"), "inner").unwrap();
        std::fs::write(scene.outside().join("secret.txt"), OUTSIDE).unwrap();
        scene
    }

    fn root(&self) -> PathBuf {
        self.tmp.path().join("root")
    }

    fn outside(&self) -> PathBuf {
        self.tmp.path().join("outside")
    }

    fn fs(&self, mode: Mode) -> Fs {
        self.fs_with(mode, FsLimits::default())
    }

    fn fs_with(&self, mode: Mode, limits: FsLimits) -> Fs {
        let grant = Grant { name: "r".into(), path: self.root(), mode };
        Fs::open(&[grant], "ann", limits).unwrap()
    }

    /// Everything under the temporary directory, symlinks not followed: each path with its
    /// kind and content (a file's bytes, a symlink's target).
    fn snapshot(&self) -> BTreeMap<PathBuf, String> {
        let mut out = BTreeMap::new();
        walk(self.tmp.path(), self.tmp.path(), &mut out);
        out
    }
}

fn walk(base: &Path, at: &Path, out: &mut BTreeMap<PathBuf, String>) {
    for entry in std::fs::read_dir(at).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let rel = path.strip_prefix(base).unwrap().to_path_buf();
        let what = if meta.is_symlink() {
            format!("symlink -> {}", std::fs::read_link(&path).unwrap().display())
        } else if meta.is_dir() {
            walk(base, &path, out);
            "dir".to_string()
        } else if meta.is_file() {
            format!("file {:?}", std::fs::read(&path).unwrap())
        } else {
            "special".to_string()
        };
        out.insert(rel, what);
    }
}

fn root(fs: &Fs) -> DirRef {
    fs.root("r").unwrap()
}

/// What `op` refused, once it is clear that it changed nothing.
#[track_caller]
fn refusal_of<T: std::fmt::Debug>(scene: &Scene, op: impl FnOnce() -> Result<T, Refusal>) -> Refusal {
    let before = scene.snapshot();
    let result = op();
    assert_eq!(scene.snapshot(), before, "a refused operation changed the files ({result:?})");
    match result {
        Err(r) => r,
        Ok(v) => panic!("expected a refusal, got {v:?}"),
    }
}

/// `op` is refused with `code`, changed nothing, and does not say where the root is; the
/// reason.
#[track_caller]
fn refused<T: std::fmt::Debug>(scene: &Scene, op: impl FnOnce() -> Result<T, Refusal>, code: &str) -> String {
    let r = refusal_of(scene, op);
    assert_eq!(r.code, code, "{}", r.reason);
    assert!(!r.reason.contains(scene.tmp.path().to_str().unwrap()), "the reason shows where the root is: {}", r.reason);
    r.reason
}

#[test]
fn dot_dot_chains_are_refused() {
    let scene = Scene::new();
    let mut fs = scene.fs(Mode::ReadWrite);
    let d = root(&fs);
    for path in ["..", "../outside/secret.txt", "sub/../../outside/secret.txt", "sub/..", "./../root/notes.txt"]
        .into_iter()
        .chain([&*"../".repeat(40), &format!("{}etc/passwd", "../".repeat(40))])
    {
        let reason = refused(&scene, || fs.read(&d, path), "bad-path");
        assert!(reason.contains("goes up with `..`"), "{reason}");
        refused(&scene, || fs.write(&d, path, "x"), "bad-path");
        refused(&scene, || fs.remove(&d, path), "bad-path");
        refused(&scene, || fs.subdir(&d, path), "bad-path");
    }
    // Through a subdirectory too: `..` from `sub` would still be inside the root, and is
    // refused all the same (a `Dir` reaches only what is under it).
    let sub = fs.subdir(&d, "sub").unwrap();
    refused(&scene, || fs.read(&sub, "../notes.txt"), "bad-path");
}

#[test]
fn cap_std_itself_refuses_what_the_text_check_refuses() {
    // The text check is for clear messages; the resolution is what holds. Ask cap-std directly
    // for the paths the text check would have stopped, and pin its words (which `dir.rs`
    // recognises as `outside-root`).
    let scene = Scene::new();
    let dir = cap_std::fs::Dir::open_ambient_dir(scene.root(), cap_std::ambient_authority()).unwrap();
    for path in ["../outside/secret.txt", "sub/../../outside/secret.txt", "/etc/passwd", "/proc/self/root/etc/passwd"] {
        let e = dir.open(path).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{path}: {e}");
        assert!(e.to_string().contains("outside of the filesystem"), "{path}: {e}");
    }
}

#[test]
fn absolute_paths_are_refused() {
    let scene = Scene::new();
    let mut fs = scene.fs(Mode::ReadWrite);
    let d = root(&fs);
    let secret = scene.outside().join("secret.txt");
    let inside = scene.root().join("notes.txt");
    // The reason quotes the path the plan gave, which may be where the root is.
    for path in ["/etc/passwd", "/", secret.to_str().unwrap(), inside.to_str().unwrap(), "/proc/self/root/etc/passwd"] {
        let r = refusal_of(&scene, || fs.read(&d, path));
        assert_eq!(r.code, "bad-path");
        assert!(r.reason.contains("is absolute"), "{}", r.reason);
        assert_eq!(refusal_of(&scene, || fs.write(&d, path, "x")).code, "bad-path");
        assert_eq!(refusal_of(&scene, || fs.remove(&d, path)).code, "bad-path");
        assert_eq!(refusal_of(&scene, || fs.subdir(&d, path)).code, "bad-path");
    }
}

#[test]
fn symlinks_out_of_the_root_are_refused() {
    let scene = Scene::new();
    let root_path = scene.root();
    let secret = scene.outside().join("secret.txt");
    symlink(&secret, root_path.join("abs")).unwrap();
    symlink("../outside/secret.txt", root_path.join("rel")).unwrap();
    symlink("../outside", root_path.join("outdir")).unwrap();
    symlink(scene.outside(), root_path.join("outdir_abs")).unwrap();
    symlink("..", root_path.join("up")).unwrap();
    symlink("hop2", root_path.join("hop1")).unwrap(); // a chain: hop1 -> hop2 -> outside
    symlink("outdir/secret.txt", root_path.join("hop2")).unwrap();
    symlink("../notes.txt", root_path.join("sub/to_root_file")).unwrap();
    symlink("/", root_path.join("slash")).unwrap();
    let mut fs = scene.fs(Mode::ReadWrite);
    let d = root(&fs);
    for path in [
        "abs",
        "rel",
        "outdir/secret.txt",
        "outdir_abs/secret.txt",
        "up/outside/secret.txt",
        "hop1",
        "slash/etc/passwd",
    ] {
        let reason = refused(&scene, || fs.read(&d, path), "outside-root");
        assert!(reason.contains("leads outside its directory"), "{reason}");
    }
    for path in ["outdir", "outdir_abs", "up", "slash"] {
        refused(&scene, || fs.subdir(&d, path), "outside-root");
    }
    // Writes: through a directory symlink out, refused by the resolution; onto a symlink
    // itself, refused, and never written through.
    refused(&scene, || fs.write(&d, "outdir/new.txt", "x"), "outside-root");
    refused(&scene, || fs.write(&d, "up/outside/secret.txt", "x"), "outside-root");
    let reason = refused(&scene, || fs.write(&d, "abs", "overwritten"), "not-a-file");
    assert!(reason.contains("a write never goes through"), "{reason}");
    refused(&scene, || fs.write(&d, "rel", "overwritten"), "not-a-file");
    refused(&scene, || fs.remove(&d, "outdir/secret.txt"), "outside-root");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), OUTSIDE);

    // A subdirectory is a root of its own: a symlink in it to elsewhere in the root is out.
    let sub = fs.subdir(&d, "sub").unwrap();
    refused(&scene, || fs.read(&sub, "to_root_file"), "outside-root");
    // ... while from the root it is a symlink inside, and is followed.
    assert_eq!(fs.read(&d, "sub/to_root_file").unwrap(), "inside");

    // Removing a symlink removes the link, never its target.
    fs.remove(&d, "abs").unwrap();
    assert!(!root_path.join("abs").exists());
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), OUTSIDE);
}

#[test]
fn symlinks_inside_the_root_are_followed() {
    let scene = Scene::new();
    symlink("notes.txt", scene.root().join("alias")).unwrap();
    symlink("sub", scene.root().join("subalias")).unwrap();
    symlink(".", scene.root().join("self")).unwrap();
    let mut fs = scene.fs(Mode::ReadWrite);
    let d = root(&fs);
    assert_eq!(fs.read(&d, "alias").unwrap(), "inside");
    assert_eq!(fs.read(&d, "subalias/inner.txt").unwrap(), "inner");
    assert_eq!(fs.read(&d, "self/self/notes.txt").unwrap(), "inside");
    let sub = fs.subdir(&d, "subalias").unwrap();
    assert_eq!(fs.read(&sub, "inner.txt").unwrap(), "inner");
    fs.write(&d, "subalias/new.txt", "made").unwrap();
    assert_eq!(std::fs::read_to_string(scene.root().join("sub/new.txt")).unwrap(), "made");
}

#[test]
fn hard_links_are_refused() {
    let scene = Scene::new();
    let secret = scene.outside().join("secret.txt");
    std::fs::hard_link(&secret, scene.root().join("linked")).unwrap();
    let mut fs = scene.fs(Mode::ReadWrite);
    let d = root(&fs);
    let reason = refused(&scene, || fs.read(&d, "linked"), "hard-linked");
    assert!(reason.contains("2 hard links"), "{reason}");
    refused(&scene, || fs.write(&d, "linked", "overwritten"), "hard-linked");
    refused(&scene, || fs.remove(&d, "linked"), "hard-linked");
    // Through a symlink inside the root to the hard link: the same.
    symlink("linked", scene.root().join("to_linked")).unwrap();
    refused(&scene, || fs.read(&d, "to_linked"), "hard-linked");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), OUTSIDE);
}

/// Swaps `name` in `dir` between two prepared symlinks, atomically (rename), until told to stop.
fn swapper(
    dir: PathBuf,
    name: &'static str,
    a: PathBuf,
    b: PathBuf,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut swaps = 0;
        while !stop.load(Ordering::Relaxed) {
            for target in [&a, &b] {
                let temp = dir.join(format!(".swap-{name}-{swaps}"));
                symlink(target, &temp).unwrap();
                std::fs::rename(&temp, dir.join(name)).unwrap();
                swaps += 1;
            }
        }
        swaps
    })
}

#[test]
fn symlinks_swapped_during_a_run_never_lead_out() {
    let scene = Scene::new();
    let root_path = scene.root();
    symlink("notes.txt", root_path.join("swing")).unwrap();
    symlink("sub", root_path.join("dswing")).unwrap();
    std::fs::write(scene.outside().join("inner.txt"), OUTSIDE).unwrap();
    let mut fs = scene.fs(Mode::ReadWrite);
    let d = root(&fs);
    let stop = Arc::new(AtomicBool::new(false));
    let files =
        swapper(root_path.clone(), "swing", "notes.txt".into(), scene.outside().join("secret.txt"), stop.clone());
    let dirs = swapper(root_path.clone(), "dswing", "sub".into(), "../outside".into(), stop.clone());
    let (mut inside, mut refused_) = (0, 0);
    // At least 3000 rounds, and on until both outcomes were seen (a loaded machine may run the
    // swappers late), within a minute.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut i = 0;
    while i < 3000 || ((inside == 0 || refused_ == 0) && std::time::Instant::now() < deadline) {
        i += 1;
        let results = [fs.read(&d, "swing"), fs.read(&d, "dswing/inner.txt")];
        for result in results {
            match result {
                Ok(text) => {
                    assert!(text == "inside" || text == "inner", "read {text:?} through a swapped symlink");
                    inside += 1;
                }
                // The swap replaces the name: between two renames it may be missing for an
                // instant, or lead out (refused).
                Err(r) => {
                    assert!(["outside-root", "not-found"].contains(&r.code), "{r:?}");
                    refused_ += 1;
                }
            }
        }
        // A write beside the swapping symlinks lands inside, or not at all.
        if i % 100 == 0 {
            let _ = fs.write(&d, "dswing/written.txt", "w");
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = files.join().unwrap() + dirs.join().unwrap();
    assert!(swaps > 100, "the symlinks were swapped only {swaps} times");
    assert!(inside > 0 && refused_ > 0, "{inside} reads inside, {refused_} refused: the race was not exercised");
    assert!(!scene.outside().join("written.txt").exists(), "a write went through a swapped symlink");
    assert_eq!(std::fs::read_to_string(scene.outside().join("secret.txt")).unwrap(), OUTSIDE);
}

#[test]
fn a_subdir_keeps_naming_the_directory_it_opened() {
    // A `Dir` is an open directory, not a path: replacing its path by a symlink out afterwards
    // changes nothing it reaches.
    let scene = Scene::new();
    let mut fs = scene.fs(Mode::ReadWrite);
    let d = root(&fs);
    let sub = fs.subdir(&d, "sub").unwrap();
    std::fs::rename(scene.root().join("sub"), scene.root().join("moved")).unwrap();
    symlink("../outside", scene.root().join("sub")).unwrap();
    std::fs::write(scene.outside().join("inner.txt"), OUTSIDE).unwrap();
    assert_eq!(fs.read(&sub, "inner.txt").unwrap(), "inner");
    fs.write(&sub, "new.txt", "new").unwrap();
    assert_eq!(std::fs::read_to_string(scene.root().join("moved/new.txt")).unwrap(), "new");
    assert!(!scene.outside().join("new.txt").exists());
    // Asking again by the path now leads out, and is refused.
    refused(&scene, || fs.subdir(&d, "sub"), "outside-root");
}

#[test]
fn proc_self_root_is_refused() {
    let scene = Scene::new();
    symlink("/proc/self/root", scene.root().join("proc_root")).unwrap();
    symlink(format!("{}proc/self/root", "../".repeat(30)), scene.root().join("proc_rel")).unwrap();
    symlink("/proc/self/cwd", scene.root().join("proc_cwd")).unwrap();
    let mut fs = scene.fs(Mode::ReadWrite);
    let d = root(&fs);
    refused(&scene, || fs.read(&d, "/proc/self/root/etc/passwd"), "bad-path");
    for path in ["proc_root/etc/passwd", "proc_rel/etc/passwd", "proc_cwd/Cargo.toml"] {
        refused(&scene, || fs.read(&d, path), "outside-root");
    }
    refused(&scene, || fs.subdir(&d, "proc_root"), "outside-root");
    refused(&scene, || fs.write(&d, "proc_root/tmp/x", "x"), "outside-root");
}

/// Runs `f` on a thread and fails if it takes more than a few seconds (a FIFO that blocks).
fn within_seconds<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || send.send(f()));
    receive.recv_timeout(Duration::from_secs(10)).expect("the operation hung")
}

#[test]
fn devices_pipes_and_sockets_are_refused_without_blocking() {
    let scene = Scene::new();
    let root_path = scene.root();
    rustix::fs::mknodat(rustix::fs::CWD, root_path.join("fifo"), rustix::fs::FileType::Fifo, 0o644.into(), 0).unwrap();
    let _socket = std::os::unix::net::UnixListener::bind(root_path.join("sock")).unwrap();
    // A device node needs privilege (CI runs as root); a symlink to one is out of the root.
    let device = rustix::fs::mknodat(
        rustix::fs::CWD,
        root_path.join("null"),
        rustix::fs::FileType::CharacterDevice,
        0o666.into(),
        rustix::fs::makedev(1, 3),
    )
    .is_ok();
    symlink("/dev/zero", root_path.join("zero")).unwrap();
    symlink("/dev/tty", root_path.join("tty")).unwrap();
    let scene = Arc::new(scene);
    let s = scene.clone();
    within_seconds(move || {
        let mut fs = s.fs(Mode::ReadWrite);
        let d = root(&fs);
        let reason = refused(&s, || fs.read(&d, "fifo"), "not-a-file");
        assert!(reason.contains("a device, a pipe or a socket"), "{reason}");
        refused(&s, || fs.write(&d, "fifo", "x"), "not-a-file");
        // Opening a socket fails in the kernel (ENXIO): refused all the same.
        let r = fs.read(&d, "sock").unwrap_err();
        assert!(["not-a-file", "io-error"].contains(&r.code), "{r:?}");
        refused(&s, || fs.write(&d, "sock", "x"), "not-a-file");
        if device {
            refused(&s, || fs.read(&d, "null"), "not-a-file");
            refused(&s, || fs.write(&d, "null", "x"), "not-a-file");
        }
        refused(&s, || fs.read(&d, "zero"), "outside-root");
        refused(&s, || fs.read(&d, "tty"), "outside-root");
    });
}

#[test]
fn long_names_are_refused_and_the_longest_allowed_works() {
    let scene = Scene::new();
    let mut fs = scene.fs(Mode::ReadWrite);
    let d = root(&fs);
    let long = "n".repeat(256);
    let reason = refused(&scene, || fs.read(&d, &long), "bad-path");
    assert!(reason.contains("a name may have at most 255"), "{reason}");
    refused(&scene, || fs.write(&d, &long, "x"), "bad-path");
    refused(&scene, || fs.subdir(&d, &format!("sub/{long}")), "bad-path");
    let very_long = "a/".repeat(5000);
    refused(&scene, || fs.read(&d, &very_long), "bad-path");
    let longest = "n".repeat(255);
    fs.write(&d, &longest, "fits").unwrap();
    assert_eq!(fs.read(&d, &longest).unwrap(), "fits");
    // A deep path under the limit that does not exist is simply not found.
    refused(&scene, || fs.read(&d, &"ab/".repeat(1300)), "not-found");
    refused(&scene, || fs.read(&d, "a\0b"), "bad-path");
}

#[test]
fn names_that_are_not_utf8_are_left_out_and_cannot_be_reached() {
    let scene = Scene::new();
    let bad = std::ffi::OsStr::from_bytes(b"bad\xff.txt");
    std::fs::write(scene.root().join(bad), "hidden").unwrap();
    std::fs::create_dir(scene.root().join(std::ffi::OsStr::from_bytes(b"dir\xfe"))).unwrap();
    let mut fs = scene.fs(Mode::ReadWrite);
    let d = root(&fs);
    let names: Vec<String> = fs.list(&d).unwrap().into_iter().map(|e| e.name).collect();
    assert_eq!(names, ["notes.txt", "sub"]);
    // The nearest a plan's string can come is the replacement character: another name.
    refused(&scene, || fs.read(&d, "bad\u{FFFD}.txt"), "not-found");
    refused(&scene, || fs.remove(&d, "bad\u{FFFD}.txt"), "not-found");
    // Names left out still count toward a listing's bound.
    let mut small = scene.fs_with(Mode::ReadWrite, FsLimits { max_entries: 3, ..FsLimits::default() });
    let d = root(&small);
    refused(&scene, || small.list(&d), "too-large");
    // A file whose content is not UTF-8 is not text.
    std::fs::write(scene.root().join("binary"), b"\xff\xfe\x00").unwrap();
    refused(&scene, || fs.read(&d, "binary"), "not-text");
}

#[test]
fn a_file_replaced_by_a_directory() {
    let scene = Scene::new();
    let mut fs = scene.fs(Mode::ReadWrite);
    let d = root(&fs);
    fs.write(&d, "f", "a file").unwrap();
    std::fs::remove_file(scene.root().join("f")).unwrap();
    std::fs::create_dir(scene.root().join("f")).unwrap();
    std::fs::write(scene.root().join("f/kept.txt"), "kept").unwrap();
    let reason = refused(&scene, || fs.read(&d, "f"), "not-a-file");
    assert!(reason.contains("is a directory"), "{reason}");
    refused(&scene, || fs.write(&d, "f", "over a directory"), "not-a-file");
    refused(&scene, || fs.remove(&d, "f"), "not-empty");
    refused(&scene, || fs.read(&d, "."), "not-a-file");
    refused(&scene, || fs.subdir(&d, "notes.txt"), "not-a-dir");
    refused(&scene, || fs.write(&d, "notes.txt/x", "x"), "not-a-dir");

    // A directory a `Dir` names, replaced by a file: the `Dir` names a removed directory.
    let sub = fs.subdir(&d, "sub").unwrap();
    std::fs::remove_dir_all(scene.root().join("sub")).unwrap();
    std::fs::write(scene.root().join("sub"), "now a file").unwrap();
    refused(&scene, || fs.read(&sub, "inner.txt"), "not-found");
    let r = fs.write(&sub, "x.txt", "x").unwrap_err();
    assert!(["not-found", "io-error"].contains(&r.code), "{r:?}");
    assert_eq!(std::fs::read_to_string(scene.root().join("sub")).unwrap(), "now a file");
}

#[test]
fn read_only_dirs_change_nothing() {
    let scene = Scene::new();
    let mut ro = scene.fs(Mode::ReadOnly);
    let d = root(&ro);
    assert!(!d.writable);
    let reason = refused(&scene, || ro.write(&d, "notes.txt", "x"), "read-only");
    assert!(reason.contains("granted read-only"), "{reason}");
    refused(&scene, || ro.remove(&d, "notes.txt"), "read-only");
    // A forged `Dir` that claims to be writable (the runtime never lets a plan make one; the
    // host does not rely on that).
    let forged = DirRef { writable: true, ..d.clone() };
    refused(&scene, || ro.write(&forged, "notes.txt", "x"), "read-only");
    let sub = ro.subdir(&d, "sub").unwrap();
    assert!(!sub.writable);

    let mut rw = scene.fs(Mode::ReadWrite);
    let d = root(&rw);
    let fenced = rw.read_only(&d).unwrap();
    assert_eq!(fenced, DirRef { writable: false, ..d.clone() });
    let reason = refused(&scene, || rw.write(&fenced, "notes.txt", "x"), "read-only");
    assert!(reason.contains("made read-only"), "{reason}");
    let fenced_sub = rw.subdir(&fenced, "sub").unwrap();
    refused(&scene, || rw.remove(&fenced_sub, "inner.txt"), "read-only");
    assert_eq!(rw.read(&fenced, "notes.txt").unwrap(), "inside");
}

#[test]
fn forged_dirs_are_refused() {
    let scene = Scene::new();
    let mut fs = scene.fs(Mode::ReadWrite);
    for forged in [
        DirRef { root: "nope".into(), path: String::new(), writable: true },
        DirRef { root: "r".into(), path: "../outside".into(), writable: true },
        DirRef { root: "r".into(), path: "/etc".into(), writable: true },
    ] {
        let r = fs.read(&forged, "secret.txt").unwrap_err();
        assert!(["not-found", "bad-path"].contains(&r.code), "{r:?}");
        assert!(fs.write(&forged, "x", "x").is_err());
    }
    assert_eq!(std::fs::read_to_string(scene.outside().join("secret.txt")).unwrap(), OUTSIDE);
}

#[test]
fn sizes_and_quotas_are_bounded_before_anything_happens() {
    let scene = Scene::new();
    let limits =
        FsLimits { max_file_bytes: 10, max_read_bytes: 25, max_write_bytes: 15, max_changes: 3, max_entries: 3 };
    std::fs::write(scene.root().join("big.txt"), "x".repeat(11)).unwrap();
    std::fs::write(scene.root().join("ten.txt"), "x".repeat(10)).unwrap();
    let mut fs = scene.fs_with(Mode::ReadWrite, limits);
    let d = root(&fs);
    let reason = refused(&scene, || fs.read(&d, "big.txt"), "too-large");
    assert!(reason.contains("11 bytes"), "{reason}");
    refused(&scene, || fs.write(&d, "new.txt", &"y".repeat(11)), "too-large");
    assert_eq!(fs.read(&d, "ten.txt").unwrap().len(), 10);
    assert_eq!(fs.read(&d, "ten.txt").unwrap().len(), 10);
    let reason = refused(&scene, || fs.read(&d, "ten.txt"), "quota-exceeded");
    assert!(reason.contains("may read at most 25 bytes"), "{reason}");
    fs.write(&d, "a.txt", &"a".repeat(10)).unwrap();
    refused(&scene, || fs.write(&d, "b.txt", &"b".repeat(6)), "quota-exceeded");
    fs.write(&d, "b.txt", &"b".repeat(5)).unwrap();
    fs.remove(&d, "a.txt").unwrap();
    let reason = refused(&scene, || fs.remove(&d, "b.txt"), "quota-exceeded");
    assert!(reason.contains("at most 3 changes"), "{reason}");
    // Five names, at most three in a listing.
    refused(&scene, || fs.list(&d), "too-large");
    assert_eq!(fs.spent().written_bytes, 15);
}

#[test]
fn a_dir_made_by_an_earlier_process_is_opened_again_under_its_root() {
    // A run saved and resumed in another process holds `Dir`s this host did not open: they are
    // opened again by their path under their root, and that path is resolved like any other.
    let scene = Scene::new();
    let sub = {
        let mut earlier = scene.fs(Mode::ReadWrite);
        let d = root(&earlier);
        earlier.subdir(&d, "sub").unwrap()
    };
    let mut later = scene.fs(Mode::ReadWrite);
    assert_eq!(later.read(&sub, "inner.txt").unwrap(), "inner");
    // Its path replaced by a symlink out in between: refused.
    let mut last = scene.fs(Mode::ReadWrite);
    std::fs::rename(scene.root().join("sub"), scene.root().join("moved")).unwrap();
    symlink("../outside", scene.root().join("sub")).unwrap();
    refused(&scene, || last.read(&sub, "secret.txt"), "outside-root");
    refused(&scene, || last.write(&sub, "new.txt", "x"), "outside-root");
}

#[test]
fn the_root_is_the_directory_opened_at_the_start() {
    // Replacing the granted path itself while the run holds it changes nothing it reaches.
    let scene = Scene::new();
    let mut fs = scene.fs(Mode::ReadWrite);
    let d = root(&fs);
    std::fs::rename(scene.root(), scene.tmp.path().join("moved")).unwrap();
    symlink("outside", scene.root()).unwrap();
    assert_eq!(fs.read(&d, "notes.txt").unwrap(), "inside");
    refused(&scene, || fs.read(&d, "secret.txt"), "not-found");
    fs.write(&d, "new.txt", "new").unwrap();
    assert_eq!(std::fs::read_to_string(scene.tmp.path().join("moved/new.txt")).unwrap(), "new");
    assert!(!scene.outside().join("new.txt").exists());
}
