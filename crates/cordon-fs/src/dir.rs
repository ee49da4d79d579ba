//! The filesystem operations, on directory handles only. This module is the security boundary
//! for the filesystem: every open is relative to a `cap_std::fs::Dir` (the root the user
//! granted, or a subdirectory opened from it), and cap-std resolves each path one name at a
//! time beneath that handle (with `openat2(RESOLVE_BENEATH)` where the kernel has it), so `..`,
//! absolute paths and symlinks that lead out are refused by the resolution itself, and a
//! symlink swapped mid-resolution cannot redirect it. On top of that:
//!
//! - a file is read only if, once open, it is a regular file with one link (a hard link may be
//!   a file outside the directory under a second name); it is opened non-blocking, so a FIFO or
//!   a device cannot hang the run, and checked on the open descriptor, not the path;
//! - a write creates a new file beside the target and renames it over it, so it never writes
//!   through a symlink, a hard link or a device, and the new text appears whole or not at all;
//! - sizes are bounded before anything is read or written, and every run has a quota.

use std::collections::HashMap;
use std::io::{self, Read as _, Write as _};

use cap_std::fs::{Dir as CapDir, MetadataExt as _, OpenOptions, OpenOptionsExt as _};

use crate::Refusal;
use crate::grant::{Grant, Mode};
use crate::path::RelPath;

/// What one run may read and write. A limit reached is a refusal (`too-large`,
/// `quota-exceeded`) before anything is read or changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FsLimits {
    /// The largest file a plan may read or write, in bytes.
    pub max_file_bytes: u64,
    /// The most a run may read, in bytes, over all its reads.
    pub max_read_bytes: u64,
    /// The most a run may write, in bytes, over all its writes.
    pub max_write_bytes: u64,
    /// The most writes and removals a run may make.
    pub max_changes: u32,
    /// The most names a listing may hold.
    pub max_entries: usize,
}

impl Default for FsLimits {
    fn default() -> FsLimits {
        FsLimits {
            max_file_bytes: 1 << 20,
            max_read_bytes: 64 << 20,
            max_write_bytes: 16 << 20,
            max_changes: 1_000,
            max_entries: 10_000,
        }
    }
}

/// What a run has used of its [`FsLimits`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spent {
    pub read_bytes: u64,
    pub written_bytes: u64,
    pub changes: u32,
}

/// A `Dir` value as the plan holds it: the host's facts, which the runtime guarantees the host
/// made (a plan cannot build or alter one).
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct DirRef {
    pub root: String,
    pub path: String,
    pub writable: bool,
}

/// One name in a listing.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    pub name: String,
    /// `file`, `dir`, `symlink` or `other`.
    pub kind: &'static str,
    pub size: u64,
}

struct Root {
    name: String,
    dir: CapDir,
    writable: bool,
}

/// The directories granted to one run, and what the run has spent.
pub struct Fs {
    principal: String,
    roots: Vec<Root>,
    /// Every directory a `Dir` the host made names, by root and path, opened when the host
    /// made it: a `Dir` keeps naming that directory even if its path is later renamed or
    /// replaced by a symlink.
    opened: HashMap<(String, String), CapDir>,
    limits: FsLimits,
    spent: Spent,
    temp_files: u64,
}

impl std::fmt::Debug for Fs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fs")
            .field("roots", &self.roots.iter().map(|r| (&r.name, r.writable)).collect::<Vec<_>>())
            .field("limits", &self.limits)
            .field("spent", &self.spent)
            .finish_non_exhaustive()
    }
}

impl Fs {
    /// Opens every granted directory (the only opens from an ambient path), acting for
    /// `principal`. A directory that cannot be opened, or a name given twice, is an error that
    /// says which.
    pub fn open(grants: &[Grant], principal: &str, limits: FsLimits) -> Result<Fs, String> {
        let mut roots: Vec<Root> = Vec::with_capacity(grants.len());
        for grant in grants {
            if roots.iter().any(|r| r.name == grant.name) {
                return Err(format!("the directory name `{}` is granted twice", grant.name));
            }
            let dir = CapDir::open_ambient_dir(&grant.path, cap_std::ambient_authority()).map_err(|e| {
                format!("cannot open the directory `{}` granted as `{}`: {e}", grant.path.display(), grant.name)
            })?;
            roots.push(Root { name: grant.name.clone(), dir, writable: grant.mode == Mode::ReadWrite });
        }
        Ok(Fs {
            principal: principal.to_string(),
            roots,
            opened: HashMap::new(),
            limits,
            spent: Spent::default(),
            temp_files: 0,
        })
    }

    /// The principal the agent acts for (`user()` in the policy's labels).
    pub fn principal(&self) -> &str {
        &self.principal
    }

    /// What this run has used so far.
    pub fn spent(&self) -> Spent {
        self.spent
    }

    /// Every root, as a plan's `Dir`.
    pub fn roots(&self) -> Vec<DirRef> {
        self.roots.iter().map(|r| DirRef { root: r.name.clone(), path: String::new(), writable: r.writable }).collect()
    }

    /// The root granted as `name`.
    pub fn root(&self, name: &str) -> Option<DirRef> {
        self.roots().into_iter().find(|d| d.root == name)
    }

    /// The directory at `path` under `d`, opened now, with `d`'s writability.
    pub fn subdir(&mut self, d: &DirRef, path: &str) -> Result<DirRef, Refusal> {
        let rel = RelPath::parse(path)?;
        if rel.is_empty() {
            return Err(Refusal::new("bad-path", "`subdir` needs the name of a directory under this one"));
        }
        let shown = shown(d, &rel);
        let sub = self.dir(d)?.open_dir(rel.to_path()).map_err(|e| refusal(&shown, e))?;
        let made = DirRef { root: d.root.clone(), path: rel.under(&d.path), writable: d.writable };
        self.opened.insert((made.root.clone(), made.path.clone()), sub);
        Ok(made)
    }

    /// The same directory, read-only.
    pub fn read_only(&mut self, d: &DirRef) -> Result<DirRef, Refusal> {
        self.dir(d)?;
        Ok(DirRef { writable: false, ..d.clone() })
    }

    /// The text of the file at `path` under `d`.
    pub fn read(&mut self, d: &DirRef, path: &str) -> Result<String, Refusal> {
        let rel = RelPath::parse(path)?;
        let shown = shown(d, &rel);
        if rel.is_empty() {
            return Err(Refusal::new("not-a-file", format!("`{shown}` is a directory; read a file in it")));
        }
        let max = self.limits.max_file_bytes;
        let left = self.limits.max_read_bytes.saturating_sub(self.spent.read_bytes);
        let mut options = OpenOptions::new();
        options.read(true);
        // A FIFO or a device opened for reading would block, or act, on `open`: non-blocking,
        // and no controlling terminal, so that the check below is reached first.
        options.custom_flags((rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32);
        let mut file = self.dir(d)?.open_with(rel.to_path(), &options).map_err(|e| refusal(&shown, e))?;
        let meta = file.metadata().map_err(|e| refusal(&shown, e))?;
        regular_file(&shown, &meta)?;
        if meta.len() > max {
            return Err(Refusal::new(
                "too-large",
                format!("`{shown}` is {} bytes; a file read may be at most {max}", meta.len()),
            ));
        }
        if meta.len() > left {
            return Err(quota(&shown, "read", self.limits.max_read_bytes));
        }
        // The file may grow after the check: never read more than the limit.
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        std::io::Read::by_ref(&mut file)
            .take(max.min(left) + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| refusal(&shown, e))?;
        let got = bytes.len() as u64;
        if got > max.min(left) {
            return Err(Refusal::new(
                "too-large",
                format!("`{shown}` grew past {} bytes while it was read", max.min(left)),
            ));
        }
        self.spent.read_bytes += got;
        String::from_utf8(bytes)
            .map_err(|_| Refusal::new("not-text", format!("`{shown}` is not UTF-8 text; only text files can be read")))
    }

    /// What is in `d`, sorted by name. Names that are not UTF-8 are left out: a plan could not
    /// name them.
    pub fn list(&mut self, d: &DirRef) -> Result<Vec<Entry>, Refusal> {
        let shown = if d.path.is_empty() { d.root.clone() } else { format!("{}/{}", d.root, d.path) };
        let max = self.limits.max_entries;
        let mut out = Vec::new();
        // Names left out count too: a directory of a million unnamable files is as large.
        for (seen, entry) in self.dir(d)?.entries().map_err(|e| refusal(&shown, e))?.enumerate() {
            if seen == max {
                return Err(Refusal::new("too-large", format!("`{shown}` holds more than {max} names")));
            }
            let entry = entry.map_err(|e| refusal(&shown, e))?;
            let Ok(name) = entry.file_name().into_string() else { continue };
            let kind = entry.file_type().map_err(|e| refusal(&shown, e))?;
            let (kind, size) = if kind.is_file() {
                ("file", entry.metadata().map(|m| m.len()).unwrap_or(0))
            } else if kind.is_dir() {
                ("dir", 0)
            } else if kind.is_symlink() {
                ("symlink", 0)
            } else {
                ("other", 0)
            };
            out.push(Entry { name, kind, size });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// Writes `content` to the file at `path` under `d`: a new file beside it, renamed over it.
    pub fn write(&mut self, d: &DirRef, path: &str, content: &str) -> Result<(), Refusal> {
        let rel = RelPath::parse(path)?;
        let shown = shown(d, &rel);
        let (parent_path, name) = self.writable_target(d, &rel, &shown)?;
        let len = content.len() as u64;
        if len > self.limits.max_file_bytes {
            return Err(Refusal::new(
                "too-large",
                format!("{len} bytes for `{shown}`; a file written may be at most {}", self.limits.max_file_bytes),
            ));
        }
        if self.spent.written_bytes + len > self.limits.max_write_bytes {
            return Err(quota(&shown, "write", self.limits.max_write_bytes));
        }
        self.temp_files += 1;
        let temp = format!(".cordon-write-{}-{}.tmp", std::process::id(), self.temp_files);
        let parent = self.dir(d)?.open_dir(parent_path.to_path()).map_err(|e| refusal(&shown, e))?;
        match parent.symlink_metadata(name) {
            Ok(meta) if meta.is_symlink() => {
                return Err(Refusal::new(
                    "not-a-file",
                    format!("`{shown}` is a symlink; a write never goes through one"),
                ));
            }
            Ok(meta) => regular_file(&shown, &meta)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(refusal(&shown, e)),
        }
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let mut file = parent.open_with(&temp, &options).map_err(|e| refusal(&shown, e))?;
        let written = file.write_all(content.as_bytes()).and_then(|()| file.flush());
        drop(file);
        // Renaming over the name replaces the entry itself: a symlink or hard link put there
        // since the check is replaced, never written through.
        let renamed = written.and_then(|()| parent.rename(&temp, &parent, name));
        if let Err(e) = renamed {
            let _ = parent.remove_file(&temp);
            return Err(refusal(&shown, e));
        }
        self.spent.written_bytes += len;
        self.spent.changes += 1;
        Ok(())
    }

    /// Removes the file, symlink or empty directory at `path` under `d`.
    pub fn remove(&mut self, d: &DirRef, path: &str) -> Result<(), Refusal> {
        let rel = RelPath::parse(path)?;
        let shown = shown(d, &rel);
        let (parent_path, name) = self.writable_target(d, &rel, &shown)?;
        let parent = self.dir(d)?.open_dir(parent_path.to_path()).map_err(|e| refusal(&shown, e))?;
        let meta = parent.symlink_metadata(name).map_err(|e| refusal(&shown, e))?;
        let removed = if meta.is_dir() {
            parent.remove_dir(name)
        } else {
            if meta.is_file() && meta.nlink() > 1 {
                return Err(hard_linked(&shown, meta.nlink()));
            }
            parent.remove_file(name)
        };
        removed.map_err(|e| refusal(&shown, e))?;
        self.spent.changes += 1;
        Ok(())
    }

    /// For a change at `rel` under `d`: refused unless `d` and its root are writable, `rel`
    /// names something under `d`, and the run may make another change. The parent's path and
    /// the last name.
    fn writable_target<'p>(&self, d: &DirRef, rel: &'p RelPath, shown: &str) -> Result<(RelPath, &'p str), Refusal> {
        let root = self.root_of(d)?;
        if !d.writable || !root.writable {
            let why = if root.writable { "this `Dir` was made read-only" } else { "its root was granted read-only" };
            return Err(Refusal::new("read-only", format!("cannot change `{shown}`: {why}")));
        }
        let Some((parent, name)) = rel.split_last() else {
            return Err(Refusal::new("bad-path", format!("`{shown}` is the `Dir` itself; name a file in it")));
        };
        if self.spent.changes >= self.limits.max_changes {
            return Err(quota(shown, "change", u64::from(self.limits.max_changes)));
        }
        Ok((parent, name))
    }

    fn root_of(&self, d: &DirRef) -> Result<&Root, Refusal> {
        self.roots
            .iter()
            .find(|r| r.name == d.root)
            .ok_or_else(|| Refusal::new("not-found", format!("no directory was granted as `{}`", d.root)))
    }

    /// The directory `d` names: the one opened when the host made `d`, or (for a `Dir` made by
    /// an earlier process, e.g. a run saved and resumed) opened again from its root.
    fn dir(&mut self, d: &DirRef) -> Result<&CapDir, Refusal> {
        let key = (d.root.clone(), d.path.clone());
        if !self.opened.contains_key(&key) {
            let root = self.root_of(d)?;
            let rel = RelPath::parse(&d.path)?;
            let dir = if rel.is_empty() { root.dir.try_clone() } else { root.dir.open_dir(rel.to_path()) };
            let dir = dir.map_err(|e| refusal(&format!("{}/{}", d.root, d.path), e))?;
            self.opened.insert(key.clone(), dir);
        }
        self.opened.get(&key).ok_or_else(|| Refusal::new("io-error", "the directory was not kept"))
    }
}

/// A path as the diagnostics show it: the root's name, never where the root is on disk.
fn shown(d: &DirRef, rel: &RelPath) -> String {
    rel.under(&if d.path.is_empty() { d.root.clone() } else { format!("{}/{}", d.root, d.path) })
}

/// Refused unless `meta` is a regular file with one link.
fn regular_file(shown: &str, meta: &cap_std::fs::Metadata) -> Result<(), Refusal> {
    if meta.is_dir() {
        return Err(Refusal::new("not-a-file", format!("`{shown}` is a directory")));
    }
    if !meta.is_file() {
        return Err(Refusal::new(
            "not-a-file",
            format!("`{shown}` is a device, a pipe or a socket; only regular files are read and written"),
        ));
    }
    if meta.nlink() > 1 {
        return Err(hard_linked(shown, meta.nlink()));
    }
    Ok(())
}

fn hard_linked(shown: &str, links: u64) -> Refusal {
    Refusal::new(
        "hard-linked",
        format!("`{shown}` has {links} hard links: it may also be a file outside the directory, so it is not used"),
    )
}

fn quota(shown: &str, what: &str, limit: u64) -> Refusal {
    let unit = if what == "change" { "changes" } else { "bytes" };
    Refusal::new("quota-exceeded", format!("`{shown}`: this run may {what} at most {limit} {unit}, and has used it"))
}

/// An operating system error on `shown`, as a refusal with a code a plan can match.
fn refusal(shown: &str, e: io::Error) -> Refusal {
    // cap-std's words for a path that resolved outside its directory (a `..` or an absolute
    // symlink); `tests/escape.rs` pins them.
    if e.kind() == io::ErrorKind::PermissionDenied && e.to_string().contains("outside of the filesystem") {
        return Refusal::new(
            "outside-root",
            format!("`{shown}` leads outside its directory (through `..` or a symlink); refused"),
        );
    }
    let code = match e.kind() {
        io::ErrorKind::NotFound => "not-found",
        io::ErrorKind::NotADirectory => "not-a-dir",
        io::ErrorKind::IsADirectory => "not-a-file",
        io::ErrorKind::AlreadyExists => "exists",
        io::ErrorKind::DirectoryNotEmpty => "not-empty",
        io::ErrorKind::InvalidFilename => "bad-path",
        _ if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            return Refusal::new("bad-path", format!("`{shown}` goes through too many symlinks (a loop?)"));
        }
        _ => "io-error",
    };
    Refusal::new(code, format!("`{shown}`: {e}"))
}
