//! Stops the build with a clear instruction when the system Z3 library is missing, instead of
//! the linker's "cannot find -lz3" once everything else has compiled.

use std::env;
use std::path::Path;
use std::process::Command;

/// Where Z3's shared or static library is usually installed.
const LIBRARY_DIRS: &[&str] = &[
    "/usr/lib",
    "/usr/lib64",
    "/usr/local/lib",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/opt/homebrew/lib",
];

#[expect(clippy::panic, reason = "a build script fails by panicking, with its message")]
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=Z3_LIBRARY_PATH_OVERRIDE");
    println!("cargo:rerun-if-env-changed=LIBRARY_PATH");
    if found() {
        return;
    }
    panic!(
        "\n\nCordon needs the Z3 library (4.8 or newer), and it is not installed.\n\
         Install it, then build again:\n  \
         Debian, Ubuntu: apt-get install -y libz3-dev pkg-config\n  \
         Fedora:         dnf install -y z3-devel\n  \
         macOS:          brew install z3\n\
         If Z3 is installed somewhere else, set Z3_LIBRARY_PATH_OVERRIDE to its library folder.\n\n"
    );
}

fn found() -> bool {
    if env::var_os("Z3_LIBRARY_PATH_OVERRIDE").is_some() {
        return true;
    }
    let pkg_config = Command::new("pkg-config").args(["--exists", "z3"]).status();
    if pkg_config.is_ok_and(|s| s.success()) {
        return true;
    }
    let from_env = env::var("LIBRARY_PATH").unwrap_or_default();
    let dirs = LIBRARY_DIRS.iter().copied().chain(from_env.split(':').filter(|d| !d.is_empty()));
    dirs.into_iter()
        .any(|dir| ["libz3.so", "libz3.dylib", "libz3.a"].iter().any(|lib| Path::new(dir).join(lib).exists()))
}
