//! What Cordon keeps on disk is the user's alone: the store, its directory and the session
//! files are created private (0600 files, 0700 directories, whatever the umask), and a file is
//! used only where no other user can have written it or can swap it.
//!
//! A file is refused when it is owned by another user, writable by group or others, not a
//! regular file, or a symbolic link (every open here is `O_NOFOLLOW`), and when its directory,
//! or any directory above it, is owned by a user other than the caller and root, or is
//! writable by group or others without the sticky bit (in such a directory someone else can
//! rename the file away and put their own in its place). A file of ours that others may only
//! read is made private (its group and other bits cleared) rather than refused.

use std::fs::{File, Metadata, OpenOptions, Permissions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::StoreError;

/// Group and other write bits.
const WRITABLE_BY_OTHERS: u32 = 0o022;
/// Every group and other bit.
const OTHERS: u32 = 0o077;
/// The sticky bit: in such a directory only an entry's owner may rename or remove it.
const STICKY: u32 = 0o1000;

/// Serializes [`prepare_private`]: a file descriptor this process closes on a store drops
/// every POSIX lock the process's SQLite connections hold on it, so a store is created, and
/// then closed, only while no other thread of the process can be opening it.
static PREPARING: Mutex<()> = Mutex::new(());

/// Makes `path` ready for SQLite to open: creates it 0600 (and missing directories 0700) if
/// it is missing, else checks that it is the caller's alone (see the module's documentation);
/// never keeps it open.
pub fn prepare_private(path: &Path) -> Result<(), StoreError> {
    let _preparing = PREPARING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = directory_of(path);
    create_private_dirs(&dir)?;
    check_directories(&dir)?;
    let options = {
        let mut options = OpenOptions::new();
        options.read(true).write(true).create_new(true).mode(0o600).custom_flags(no_follow());
        options
    };
    match options.open(path) {
        // The umask may have taken bits from 0600: the store must be readable and writable by us.
        Ok(file) => file.set_permissions(PermissionsExt::from_mode(0o600)).map_err(StoreError::io(path)),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => check_private(path),
        Err(e) => Err(refused_open(path)(e)),
    }
}

/// Checks an existing `path` without opening it, as the module's documentation says (a file
/// of ours that others may read is made private); a missing file passes.
pub fn check_private(path: &Path) -> Result<(), StoreError> {
    let dir = directory_of(path);
    if !dir.exists() {
        return Ok(());
    }
    check_directories(&dir)?;
    match std::fs::symlink_metadata(path) {
        Ok(meta) => check_file(path, &meta, |mode| std::fs::set_permissions(path, mode)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(error) => Err(StoreError::Io { path: path.to_path_buf(), error }),
    }
}

/// Opens an existing `path` for reading, if it is the caller's alone (see the module's
/// documentation); `Ok(None)` if there is no such file.
pub fn read_private(path: &Path) -> Result<Option<File>, StoreError> {
    let dir = directory_of(path);
    if !dir.exists() {
        return Ok(None);
    }
    check_directories(&dir)?;
    let opened = OpenOptions::new().read(true).custom_flags(no_follow()).open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(refused_open(path)(e)),
    };
    let meta = file.metadata().map_err(StoreError::io(path))?;
    check_file(path, &meta, |mode| file.set_permissions(mode))?;
    Ok(Some(file))
}

/// Opens `path` for writing, emptied, creating it 0600 (and missing directories 0700) if it is
/// missing; an existing file must be the caller's alone.
pub fn create_private(path: &Path) -> Result<File, StoreError> {
    let dir = directory_of(path);
    create_private_dirs(&dir)?;
    check_directories(&dir)?;
    let mut options = OpenOptions::new();
    options.write(true).create(true).mode(0o600).custom_flags(no_follow());
    let file = options.open(path).map_err(refused_open(path))?;
    let meta = file.metadata().map_err(StoreError::io(path))?;
    check_file(path, &meta, |mode| file.set_permissions(mode))?;
    file.set_len(0).map_err(StoreError::io(path))?;
    Ok(file)
}

/// Writes `contents` to `path` through [`create_private`].
pub fn write_private(path: &Path, contents: &[u8]) -> Result<(), StoreError> {
    create_private(path)?.write_all(contents).map_err(StoreError::io(path))
}

/// The directory `path` is in (`.` for a bare file name), as an absolute path without
/// symbolic links where it exists.
fn directory_of(path: &Path) -> PathBuf {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())
}

/// Creates the missing directories of `dir`, each 0700 whatever the umask.
fn create_private_dirs(dir: &Path) -> Result<(), StoreError> {
    let missing: Vec<&Path> = dir.ancestors().take_while(|d| !d.as_os_str().is_empty() && !d.exists()).collect();
    for d in missing.into_iter().rev() {
        match std::fs::DirBuilder::new().mode(0o700).create(d) {
            Ok(()) => std::fs::set_permissions(d, PermissionsExt::from_mode(0o700)).map_err(StoreError::io(d))?,
            // Another process made it meanwhile: it is checked below like any other.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(StoreError::Io { path: d.to_path_buf(), error: e }),
        }
    }
    Ok(())
}

/// Refuses `dir` or a directory above it that another user could change.
fn check_directories(dir: &Path) -> Result<(), StoreError> {
    let dir = dir.canonicalize().map_err(StoreError::io(dir))?;
    let me = my_uid();
    for d in dir.ancestors() {
        let meta = std::fs::metadata(d).map_err(StoreError::io(d))?;
        let refuse = |reason: String| Err(StoreError::NotPrivate { path: d.to_path_buf(), reason });
        if meta.uid() != me && meta.uid() != 0 {
            return refuse(format!("the directory is owned by {}, not by you ({})", user(meta.uid()), user(me)));
        }
        let mode = meta.mode();
        if mode & WRITABLE_BY_OTHERS != 0 && mode & STICKY == 0 {
            return refuse(format!(
                "the directory is writable by {} (mode {:04o}) without the sticky bit: they could put \
                 their own file in place of yours",
                if mode & 0o002 != 0 { "everyone" } else { "its group" },
                mode & 0o7777
            ));
        }
    }
    Ok(())
}

/// Refuses a file another user owns or may write, or that is not a regular file (a symbolic
/// link included); clears the group and other bits of one of ours with `chmod`.
fn check_file(
    path: &Path,
    meta: &Metadata,
    chmod: impl FnOnce(Permissions) -> std::io::Result<()>,
) -> Result<(), StoreError> {
    let refuse = |reason: String| Err(StoreError::NotPrivate { path: path.to_path_buf(), reason });
    if meta.file_type().is_symlink() {
        return refuse("it is a symbolic link".into());
    }
    let me = my_uid();
    if meta.uid() != me {
        return refuse(format!("it is owned by {}, not by you ({})", user(meta.uid()), user(me)));
    }
    if !meta.is_file() {
        return refuse("it is not a regular file".into());
    }
    let mode = meta.mode() & 0o7777;
    if mode & WRITABLE_BY_OTHERS != 0 {
        return refuse(format!(
            "it is writable by others (mode {mode:04o}), so it may not be what Cordon wrote: check it, then \
             `chmod 600` it"
        ));
    }
    if mode & OTHERS != 0 {
        chmod(PermissionsExt::from_mode(mode & !OTHERS)).map_err(StoreError::io(path))?;
    }
    Ok(())
}

/// `O_NOFOLLOW`: the last component of the path must not be a symbolic link.
fn no_follow() -> i32 {
    rustix::fs::OFlags::NOFOLLOW.bits() as i32
}

/// An open's error, with "it is a symbolic link" for what `O_NOFOLLOW` refused.
fn refused_open(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |error| {
        let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        if link {
            StoreError::NotPrivate { path: path.to_path_buf(), reason: "it is a symbolic link".into() }
        } else {
            StoreError::Io { path: path.to_path_buf(), error }
        }
    }
}

/// The user this process acts as.
fn my_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// A user as people read it: the name in `/etc/passwd` if it has one, and the number.
fn user(uid: u32) -> String {
    let name = std::fs::read_to_string("/etc/passwd").ok().and_then(|passwd| {
        passwd.lines().find_map(|line| {
            let mut fields = line.split(':');
            let name = fields.next()?;
            (fields.nth(1)?.parse() == Ok(uid)).then(|| name.to_string())
        })
    });
    match name {
        Some(name) => format!("user {name} (uid {uid})"),
        None => format!("uid {uid}"),
    }
}
