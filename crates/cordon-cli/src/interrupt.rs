//! A request stopped by a signal is recorded as stopped. While `run`, `ask` or `chat` runs, a
//! thread waits for Ctrl-C (SIGINT), the terminal closing (SIGHUP) or SIGTERM; when one comes,
//! it marks the requests this process began and has not ended as `interrupted` in the store
//! (each with its status row, so `audit show` never says "running" of a request that is gone),
//! says so on the terminal, and ends the process as the signal would have (128 + its number).
//! An effect whose host was mid-call keeps its "about to perform" row with no outcome, shown as
//! unknown, as after a crash.

use std::path::Path;

use cordon::api::store::{Durability, SqliteStore, Store};
use tokio::signal::unix::{SignalKind, signal};

use crate::store::StoreArgs;

/// Starts the watcher for the store `store` names (none if it names no store: then nothing was
/// recorded either).
pub fn watch(store: &StoreArgs) {
    let Ok(path) = store.location() else { return };
    // Whatever fails here leaves the default: the signal ends the process unrecorded.
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_io().build() else { return };
    let kinds = [
        (SignalKind::interrupt(), 2, "interrupted"),
        (SignalKind::hangup(), 1, "hung up"),
        (SignalKind::terminate(), 15, "terminated"),
    ];
    // Registered here, before any request begins, so a signal from now on is caught.
    let registered: Result<Vec<_>, _> =
        runtime.block_on(async { kinds.iter().map(|(kind, n, said)| signal(*kind).map(|s| (s, *n, *said))).collect() });
    let Ok(mut signals) = registered else { return };
    std::thread::spawn(move || {
        let (number, said) = runtime.block_on(async {
            let waits =
                signals.iter_mut().map(|(s, n, said)| Box::pin(async move { s.recv().await.map(|_| (*n, *said)) }));
            futures_first(waits).await
        });
        interrupted(&path, said);
        std::process::exit(128 + number);
    });
}

/// The first of `waits` to finish (a signal that can no longer come is never first).
async fn futures_first<F>(waits: impl Iterator<Item = std::pin::Pin<Box<F>>>) -> (i32, &'static str)
where
    F: std::future::Future<Output = Option<(i32, &'static str)>>,
{
    let mut waits: Vec<_> = waits.collect();
    std::future::poll_fn(|cx| {
        for wait in &mut waits {
            if let std::task::Poll::Ready(Some(got)) = wait.as_mut().poll(cx) {
                return std::task::Poll::Ready(got);
            }
        }
        std::task::Poll::Pending
    })
    .await
}

/// Records this process's unfinished requests in the store at `path` as interrupted, and
/// says so on stderr.
fn interrupted(path: &Path, said: &str) {
    let recorded = SqliteStore::open(path, Durability::SurvivesCrash).and_then(|store| store.interrupt_own_requests());
    match recorded {
        Ok(ids) if ids.is_empty() => eprintln!("\ncordon: {said}"),
        Ok(ids) => {
            for id in ids {
                eprintln!(
                    "\ncordon: {said}: request {id} is recorded as interrupted (`cordon audit show --request {id}`)"
                );
            }
        }
        Err(error) => eprintln!("\ncordon: {said}, and the store could not record it: {error}"),
    }
}
