//! A real PostgreSQL server for the tests: a throwaway cluster made by `initdb` under the
//! target's temporary directory, listening only on a Unix socket in its own data directory,
//! with a database of its own for each test. One server serves the whole test binary; a test
//! that restarts its server starts another. A watchdog process stops each server and removes
//! its directory once the test process is gone, however it ended.
//!
//! The server programs are Debian's (`/usr/lib/postgresql/*/bin`); without them the tests fail,
//! saying `.ci/run` installs them. PostgreSQL refuses to run as root: as root, the cluster is
//! made and run as the `postgres` user (`runuser`).
#![allow(dead_code, clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The database superuser the tests connect as.
const USER: &str = "cordon";

/// A PostgreSQL server of this test process.
pub struct Server {
    bin: PathBuf,
    data: PathBuf,
    /// As root, the server's programs run as this user (uid, gid).
    owner: Option<(u32, u32)>,
}

/// The server shared by the tests of this binary, started on first use.
pub fn shared() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| Server::start("shared"))
}

/// The newest PostgreSQL's server programs, or a failure saying how to install them.
fn bin_dir() -> PathBuf {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin): &(u32, PathBuf)| bin.join("initdb").exists() && bin.join("pg_ctl").exists())
        .collect();
    found.sort();
    match found.pop() {
        Some((_, bin)) => bin,
        None => panic!(
            "PostgreSQL's server programs are not installed (no /usr/lib/postgresql/*/bin/initdb): these tests \
             run a real server; .ci/run installs it (apt-get install --no-install-recommends postgresql)"
        ),
    }
}

fn id_of(flag: &str) -> u32 {
    let out = Command::new("id").args([flag, "postgres"]).output().unwrap();
    assert!(out.status.success(), "as root, the server runs as the `postgres` user, and there is none");
    String::from_utf8(out.stdout).unwrap().trim().parse().unwrap()
}

/// Runs `cmd`, failing with its output if it fails.
fn run(cmd: &mut Command) {
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Stops the servers, and removes the directories, of test processes that are gone and whose
/// watchdog did not (it was killed too).
fn sweep(base: &Path, bin: &Path, owner: Option<(u32, u32)>) {
    for entry in std::fs::read_dir(base).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.split('-').next().and_then(|p| p.parse::<u32>().ok()) else { continue };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let gone = Server { bin: bin.to_path_buf(), data: entry.path(), owner };
        let _ = gone.program("pg_ctl").arg("-D").arg(&gone.data).args(["-m", "immediate", "stop"]).output();
        let _ = std::fs::remove_dir_all(&gone.data);
    }
}

/// Quotes `s` for the shell.
fn quoted(s: &Path) -> String {
    format!("'{}'", s.display().to_string().replace('\'', r"'\''"))
}

impl Server {
    /// Makes and starts a new server, named `name` among this process's.
    pub fn start(name: &str) -> Server {
        let bin = bin_dir();
        let owner = rustix::process::geteuid().is_root().then(|| (id_of("-u"), id_of("-g")));
        let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("postgres");
        std::fs::create_dir_all(&base).unwrap();
        // The `postgres` user must reach its directory.
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        sweep(&base, &bin, owner);
        let mut data = base.join(format!("{}-{name}", std::process::id()));
        // The socket's path must fit a Unix socket address (107 bytes).
        if data.join(".s.PGSQL.5432").as_os_str().len() > 100 {
            data = std::env::temp_dir().join(format!("cordon-pg-{}-{name}", std::process::id()));
        }
        let _ = std::fs::remove_dir_all(&data);
        std::fs::create_dir(&data).unwrap();
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o700)).unwrap();
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&data, Some(uid), Some(gid)).unwrap();
        }
        let server = Server { bin, data, owner };
        server.watch();
        let mut initdb = server.program("initdb");
        initdb.arg("-D").arg(&server.data).args(["-U", USER, "--auth=trust", "--no-sync", "-E", "UTF8"]);
        run(initdb.args(["--locale=C", "--no-instructions"]));
        let settings = format!(
            "\nlisten_addresses = ''\nunix_socket_directories = '{}'\nport = 5432\nmax_connections = 200\n\
             fsync = off\nfull_page_writes = off\n",
            server.data.display()
        );
        let conf = server.data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf).unwrap();
        text.push_str(&settings);
        std::fs::write(&conf, text).unwrap();
        server.pg_ctl(&["start"]);
        server
    }

    /// A command running one of the server's programs (as `postgres`, if this is root).
    fn program(&self, name: &str) -> Command {
        match self.owner {
            Some(_) => {
                let mut cmd = Command::new("runuser");
                cmd.args(["-u", "postgres", "--"]).arg(self.bin.join(name));
                cmd
            }
            None => Command::new(self.bin.join(name)),
        }
    }

    /// Runs `pg_ctl` on this server, waiting for it to finish.
    fn pg_ctl(&self, args: &[&str]) {
        let mut cmd = self.program("pg_ctl");
        cmd.arg("-D").arg(&self.data).arg("-l").arg(self.data.join("server.log")).args(["-w", "-t", "60"]);
        run(cmd.args(args));
    }

    /// Starts the process that stops the server and removes its files once this process ends.
    fn watch(&self) {
        let mut stop = format!("{} -D {} -m immediate stop", quoted(&self.bin.join("pg_ctl")), quoted(&self.data));
        if self.owner.is_some() {
            stop = format!("runuser -u postgres -- {stop}");
        }
        // In the background of a shell that exits at once (so it outlives this process, never a
        // zombie of it), deaf to the terminal's signals and in a process group of its own: a
        // Ctrl-C that stops the tests does not stop it.
        let script = format!(
            "(trap '' INT HUP; while kill -0 {pid} 2>/dev/null; do sleep 0.5; done; {stop}; rm -rf {data}) \
             </dev/null >/dev/null 2>&1 &",
            pid = std::process::id(),
            data = quoted(&self.data)
        );
        let started = Command::new("sh").args(["-c", &script]).process_group(0).status().unwrap();
        assert!(started.success(), "the watchdog did not start");
    }

    /// The connection string of database `db`.
    pub fn url(&self, db: &str) -> String {
        format!("host={} port=5432 user={USER} dbname={db}", self.data.display())
    }

    /// A new, empty database; its connection string.
    pub fn database(&self) -> String {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!("t{}", NEXT.fetch_add(1, Ordering::Relaxed));
        self.admin().batch_execute(&format!("CREATE DATABASE {name} TEMPLATE template0")).unwrap();
        self.url(&name)
    }

    /// A connection to the server's own database, for what an administrator does.
    pub fn admin(&self) -> postgres::Client {
        raw(&self.url("postgres"))
    }

    /// Restarts the server: `fast` ends every connection and shuts down cleanly, `immediate`
    /// as a crash would (the server recovers from its write-ahead log).
    pub fn restart(&self, mode: &str) {
        self.pg_ctl(&["-m", mode, "restart"]);
    }

    pub fn stop(&self) {
        self.pg_ctl(&["-m", "fast", "stop"]);
    }

    pub fn resume(&self) {
        self.pg_ctl(&["start"]);
    }
}

/// A raw connection: what an attacker, or an administrator, with the database's password does.
pub fn raw(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls).unwrap()
}
