//! Random layouts of directories, files and symlinks (relative, absolute, into the root, out of
//! it, chains, loops), and random operations through random `Dir`s with random paths (`..`,
//! `.`, empty names, absolute): nothing is ever read from outside the `Dir` it was read
//! through, nothing outside the root changes, and nothing panics. Every file's content names
//! where it really is, so a read that reached the wrong place says so. Floors make sure the
//! cases reach what they test: reads that succeed, subdirectories made, refusals of each kind.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use cordon_fs::{DirRef, Fs, FsLimits, Grant, Mode};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use proptest::test_runner::{Config, TestRunner};

/// The seed of every case generated here: the same cases on every run, so a floor met once
/// is met always (change it, or set `PROPTEST_CASES`, to search elsewhere).
const SEED: u64 = 0x636f_7264_6f6e;

const NAMES: [&str; 4] = ["a", "b", "l", "m"];

#[derive(Clone, Debug)]
enum Target {
    /// Relative, possibly with `..` and `.`.
    Relative(Vec<&'static str>),
    /// Absolute, into `outside/`.
    Outside(Vec<&'static str>),
    /// Absolute, into the root itself (out by the letter, in by the place: still refused).
    IntoRoot(Vec<&'static str>),
    Slash,
}

#[derive(Clone, Debug)]
enum Node {
    Dir(Vec<&'static str>),
    File(Vec<&'static str>),
    Link(Vec<&'static str>, Target),
}

#[derive(Clone, Debug)]
enum Op {
    Read(usize, String),
    List(usize),
    Subdir(usize, String),
    ReadOnly(usize),
    Write(usize, String),
    Remove(usize, String),
}

fn names() -> impl Strategy<Value = Vec<&'static str>> {
    prop::collection::vec(prop::sample::select(&NAMES[..]), 1..4)
}

fn target() -> impl Strategy<Value = Target> {
    let segment = prop::sample::select(&["a", "b", "l", "m", "..", ".", "outside", "root"][..]);
    prop_oneof![
        4 => prop::collection::vec(segment, 1..6).prop_map(Target::Relative),
        1 => names().prop_map(Target::Outside),
        1 => names().prop_map(Target::IntoRoot),
        1 => Just(Target::Slash),
    ]
}

fn node() -> impl Strategy<Value = Node> {
    prop_oneof![
        3 => names().prop_map(Node::Dir),
        5 => names().prop_map(Node::File),
        3 => (names(), target()).prop_map(|(at, t)| Node::Link(at, t)),
    ]
}

fn path() -> impl Strategy<Value = String> {
    let segment = prop_oneof![
        12 => prop::sample::select(&NAMES[..]),
        1 => prop::sample::select(&["..", ".", "", "x", "outside"][..]),
    ];
    (prop::bool::weighted(0.1), prop::collection::vec(segment, 0..5))
        .prop_map(|(absolute, segments)| format!("{}{}", if absolute { "/" } else { "" }, segments.join("/")))
}

fn op() -> impl Strategy<Value = Op> {
    let dir = 0..8usize;
    prop_oneof![
        6 => (dir.clone(), path()).prop_map(|(d, p)| Op::Read(d, p)),
        1 => dir.clone().prop_map(Op::List),
        4 => (dir.clone(), path()).prop_map(|(d, p)| Op::Subdir(d, p)),
        1 => dir.clone().prop_map(Op::ReadOnly),
        2 => (dir.clone(), path()).prop_map(|(d, p)| Op::Write(d, p)),
        1 => (dir, path()).prop_map(|(d, p)| Op::Remove(d, p)),
    ]
}

/// Makes the layout under `tmp/root`, and the same names under `tmp/outside`, never through a
/// symlink (a layout's symlinks may lead anywhere, `/` included): a node whose parent is
/// missing below a symlink or a file, or whose name is taken, is skipped.
fn build(tmp: &Path, nodes: &[Node]) {
    for top in ["root", "outside"] {
        std::fs::create_dir_all(tmp.join(top)).unwrap();
        for node in nodes {
            let (at, what) = match node {
                Node::Dir(at) => (at, None),
                Node::File(at) => (at, Some(None)),
                Node::Link(at, t) => (at, Some(Some(t))),
            };
            let Some((last, parents)) = at.split_last() else { continue };
            let Some(parent) = real_dirs(&tmp.join(top), parents) else { continue };
            let place = parent.join(last);
            if std::fs::symlink_metadata(&place).is_ok() {
                continue;
            }
            let rel = place.strip_prefix(tmp).unwrap().display().to_string();
            match what {
                None => std::fs::create_dir(&place).unwrap(),
                Some(None) => std::fs::write(&place, format!("FILE:{rel}")).unwrap(),
                // Only the root gets symlinks: outside is where they lead.
                Some(Some(t)) if top == "root" => {
                    let target = match t {
                        Target::Relative(segments) => PathBuf::from(segments.join("/")),
                        Target::Outside(names) => names.iter().fold(tmp.join("outside"), |p, n| p.join(n)),
                        Target::IntoRoot(names) => names.iter().fold(tmp.join("root"), |p, n| p.join(n)),
                        Target::Slash => PathBuf::from("/"),
                    };
                    symlink(target, &place).unwrap();
                }
                Some(Some(_)) => {}
            }
        }
    }
}

/// `base/names..`, made of real directories (made where missing), or `None` where a name is
/// a symlink or a file.
fn real_dirs(base: &Path, names: &[&str]) -> Option<PathBuf> {
    let mut at = base.to_path_buf();
    for name in names {
        at.push(name);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return None,
            Err(_) => std::fs::create_dir(&at).unwrap(),
        }
    }
    Some(at)
}

fn snapshot(at: &Path, out: &mut BTreeMap<PathBuf, String>) {
    for entry in std::fs::read_dir(at).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let what = if meta.is_symlink() {
            format!("-> {}", std::fs::read_link(&path).unwrap().display())
        } else if meta.is_dir() {
            snapshot(&path, out);
            "dir".into()
        } else {
            format!("{:?}", std::fs::read(&path).unwrap())
        };
        out.insert(path, what);
    }
}

#[derive(Debug, Default)]
struct Counts {
    reads: usize,
    subdirs: usize,
    writes: usize,
    codes: BTreeMap<&'static str, usize>,
    io_errors: Vec<String>,
}

/// Runs `ops` against the layout; fails if a read returns what is not under its `Dir`'s real
/// directory, or anything outside the root changes.
fn run(nodes: &[Node], ops: &[Op], counts: &mut Counts) -> Result<(), TestCaseError> {
    let tmp = tempfile::tempdir().unwrap();
    build(tmp.path(), nodes);
    let mut outside_before = BTreeMap::new();
    snapshot(&tmp.path().join("outside"), &mut outside_before);
    let grant = Grant { name: "r".into(), path: tmp.path().join("root"), mode: Mode::ReadWrite };
    let mut fs = Fs::open(&[grant], "ann", FsLimits::default()).unwrap();
    let real_tmp = std::fs::canonicalize(tmp.path()).unwrap();
    // Each `Dir` with where it really is (relative to the temporary directory), found when it
    // was made (nothing else changes the layout while it is in use).
    let mut dirs: Vec<(DirRef, String)> = vec![(fs.root("r").unwrap(), "root".to_string())];
    for op in ops {
        let pick = |i: usize| dirs[i % dirs.len()].clone();
        let refusal = match op {
            Op::Read(i, p) => {
                let (d, real) = pick(*i);
                match fs.read(&d, p) {
                    Ok(text) => {
                        counts.reads += 1;
                        prop_assert!(
                            text == "WRITTEN" || text.starts_with(&format!("FILE:{real}/")),
                            "read {text:?} through {d:?} (really {real}) at {p:?}"
                        );
                        None
                    }
                    Err(r) => Some(r),
                }
            }
            Op::List(i) => fs.list(&pick(*i).0).err(),
            Op::Subdir(i, p) => {
                let (d, _) = pick(*i);
                match fs.subdir(&d, p) {
                    Ok(sub) => {
                        counts.subdirs += 1;
                        let real = std::fs::canonicalize(tmp.path().join("root").join(&sub.path)).unwrap();
                        let real = real.strip_prefix(&real_tmp).unwrap().display().to_string();
                        prop_assert!(real == "root" || real.starts_with("root/"), "{sub:?} is really {real}");
                        dirs.push((sub, real));
                        None
                    }
                    Err(r) => Some(r),
                }
            }
            Op::ReadOnly(i) => {
                let (d, real) = pick(*i);
                let fenced = fs.read_only(&d).unwrap();
                prop_assert!(!fenced.writable);
                dirs.push((fenced, real));
                None
            }
            Op::Write(i, p) => match fs.write(&pick(*i).0, p, "WRITTEN") {
                Ok(()) => {
                    counts.writes += 1;
                    None
                }
                Err(r) => Some(r),
            },
            Op::Remove(i, p) => fs.remove(&pick(*i).0, p).err(),
        };
        if let Some(r) = refusal {
            prop_assert!(!r.reason.contains(tmp.path().to_str().unwrap()) || r.code == "bad-path", "{r:?}");
            *counts.codes.entry(r.code).or_default() += 1;
            if r.code == "io-error" {
                counts.io_errors.push(r.reason);
            }
        }
    }
    let mut outside_after = BTreeMap::new();
    snapshot(&tmp.path().join("outside"), &mut outside_after);
    prop_assert_eq!(outside_before, outside_after, "something outside the root changed");
    Ok(())
}

#[test]
fn random_layouts_and_paths_never_reach_outside_a_dir() {
    let mut runner = TestRunner::new(Config {
        cases: 600,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(SEED),
        ..Config::default()
    });
    let counts = std::cell::RefCell::new(Counts::default());
    let strategy = (prop::collection::vec(node(), 1..16), prop::collection::vec(op(), 1..30));
    runner.run(&strategy, |(nodes, ops)| run(&nodes, &ops, &mut counts.borrow_mut())).unwrap();
    let counts = counts.into_inner();
    // Floors: the cases reached what they test.
    let code = |c: &str| counts.codes.get(c).copied().unwrap_or(0);
    assert!(counts.reads >= 60, "{counts:?}");
    assert!(counts.subdirs >= 120, "{counts:?}");
    assert!(counts.writes >= 60, "{counts:?}");
    assert!(code("outside-root") >= 60, "{counts:?}");
    assert!(code("bad-path") >= 300, "{counts:?}");
    assert!(code("read-only") >= 60, "{counts:?}");
}
