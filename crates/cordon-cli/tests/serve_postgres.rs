//! Several `cordon serve` processes sharing one real PostgreSQL database (a throwaway server the
//! test makes, as the store's own tests do): a card parked by one process is answered through
//! another and its run goes on in whichever takes it; processes killed with SIGKILL at arbitrary
//! points of their runs, and the database restarted as a crash would, leave every run ended, the
//! chain intact, and no effect made twice.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

#[path = "../../cordon-store/tests/pg/mod.rs"]
mod pg;

use std::time::Duration;

use common::served::{
    TWENTY_CALLS, add_user, bearer, ended, http, made_no_effect_twice, serve_with, submit, until, waiting, write_plan,
};
use common::workdir;

/// The deployment's key, the same for every process.
const KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/// `cordon serve` on the database `url` with `tools`, with a lease of one second.
fn serve_on(dir: &std::path::Path, url: &str, tools: &[&str]) -> common::served::Served {
    let mut args = vec!["--lease", "1", "--workers", "2"];
    args.extend_from_slice(tools);
    serve_with(dir, &args, &[("CORDON_DATABASE_URL", url), ("CORDON_SERVE_KEY", KEY)])
}

#[test]
fn a_card_parked_by_one_process_is_answered_through_another() {
    let server = pg::shared();
    let url = server.database();
    let dir = workdir("serve-postgres", "two");
    let alice = add_user(&dir, "alice", &["--database", &url]);
    // A writable `out` directory that both processes grant (as a shared volume would be).
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let out = format!("out={}:rw", dir.join("out").display());
    let (one, two) = (serve_on(&dir, &url, &["--dir", &out]), serve_on(&dir, &url, &["--dir", &out]));
    let run = submit(one.port, &alice, &write_plan("shared.txt", "from two machines"));
    let parked = until(two.port, &alice, run, waiting);
    let seal = parked["seal"].as_str().unwrap();
    let answer = serde_json::json!({ "seal": seal, "answer": "yes" }).to_string();
    let path = format!("/api/runs/{run}/answer");
    assert_eq!(http(two.port, "POST", &path, &[("Authorization", &bearer(&alice))], &answer).status, 200);
    assert_eq!(http(one.port, "POST", &path, &[("Authorization", &bearer(&alice))], &answer).status, 409);
    assert_eq!(until(one.port, &alice, run, ended)["result"]["result"], "wrote");
    assert_eq!(std::fs::read_to_string(dir.join("out/shared.txt")).unwrap(), "from two machines");
}

#[test]
fn processes_killed_mid_run_and_a_database_crash_make_no_effect_twice() {
    let server = pg::Server::start("serve-crash");
    let url = server.database();
    let dir = workdir("serve-postgres", "killed");
    let alice = add_user(&dir, "alice", &["--database", &url]);
    let steady = serve_on(&dir, &url, &["--env", "github"]);
    let mut runs = Vec::new();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    for round in 0..4 {
        let doomed = serve_on(&dir, &url, &["--env", "github"]);
        for i in 0..8 {
            let port = if i % 2 == 0 { doomed.port } else { steady.port };
            runs.push(submit(port, &alice, TWENTY_CALLS));
        }
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_millis(20 + seed % 250));
        drop(doomed); // SIGKILL, mid-run or not
        if round == 1 {
            // The database goes down as a crash would, and comes back.
            server.restart("immediate");
        }
    }
    for run in &runs {
        until(steady.port, &alice, *run, ended);
    }
    drop(steady);
    let store = cordon_store::PostgresStore::connect(&url).unwrap();
    let done = made_no_effect_twice(&store, &runs);
    eprintln!("{} runs: {done} done, {} failed", runs.len(), runs.len() - done);
    assert!(done > 0, "some runs finished");
}
