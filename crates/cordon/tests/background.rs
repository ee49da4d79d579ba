//! Runs in the background: a worker parks a run at its card, a person answers that card (once,
//! and only the principal it asks), and the run goes on, in another worker too; a card whose
//! deadline passes is a denial; a saved run or card edited in the store is refused; a worker
//! whose lease was taken over performs nothing more; a run whose worker died after an effect is
//! never made again.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::path::Path;

use cordon::api::Grant;
use cordon::api::store::Verdict;
use cordon::api::store::{AnswerRefused, EffectIntent, NewRun, RunId, RunKind, RunState};
use cordon::background::{Did, Given, Refused, Worker, WorkerSettings, seal_holds};
use cordon::{Storage, ToolChoice, Tools, Workspace};

const KEY: &[u8] = b"the deployment's key, for tests";

/// Writes `a.txt`, then `b.txt`: two cards.
const TWO_WRITES: &str = r#"match fs.root("out") {
  Some(out) => if out.writable {
    let a = fs.write(out, "a.txt", "first");
    let b = fs.write(out, "b.txt", "second");
    match (a, b) {
      (Ok(_), Ok(_)) => "wrote both",
      _ => "a write was refused",
    }
  } else { "read-only" },
  None => "no out",
}"#;

fn storage(dir: &Path) -> Storage {
    Storage::open(&dir.join("cordon.db"), cordon::api::store::Durability::SurvivesCrash).expect("the store opens")
}

/// A store in a fresh directory, and the writable directory `out` beside it.
struct Fixture {
    dir: tempfile::TempDir,
    out: std::path::PathBuf,
    storage: Storage,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let storage = storage(dir.path());
        Fixture { dir, out, storage }
    }
}

fn new_worker(name: &str, storage: &Storage, out: &Path, lease_ms: i64, card_ms: i64) -> Worker {
    let settings =
        WorkerSettings { name: name.into(), key: KEY.to_vec(), lease_ms, card_ms, model: None, notify: None };
    let grant = Grant::parse(&format!("out={}:rw", out.display())).expect("a grant");
    let (store, out) = (storage.clone(), grant);
    let open = move |principal: &str| {
        let choice = ToolChoice { dirs: vec![out.clone()], principal: Some(principal.into()), ..ToolChoice::default() };
        let tools = Tools::open(&choice, Vec::new())?;
        Ok(Workspace::new(tools, store.clone(), cordon::Settings::default()))
    };
    Worker::new(settings, storage.clone(), Box::new(open))
}

/// Alice's two writes, parked at the first card by a worker.
fn parked(storage: &Storage, out: &Path) -> (Worker, RunId) {
    let mut worker = new_worker("w1", storage, out, 60_000, 3_600_000);
    let id = submit(storage, "alice", TWO_WRITES);
    assert_eq!(worker.work_once().unwrap(), Some(Did::Parked(id)));
    (worker, id)
}

/// The store's database, as whoever can write its file opens it.
fn database(dir: &tempfile::TempDir) -> rusqlite::Connection {
    rusqlite::Connection::open(dir.path().join("cordon.db")).unwrap()
}

fn submit(storage: &Storage, principal: &str, plan: &str) -> RunId {
    let run = NewRun { principal, kind: RunKind::Plan, name: "plan.cord", text: plan, clearance: None };
    storage.store().submit_run(&run).expect("queued")
}

/// The card run `id` waits on, after checking its seal, and the seal.
fn card(storage: &Storage, id: RunId) -> (serde_json::Value, String) {
    let run = storage.store().queued_run(id).expect("read").expect("the run");
    assert_eq!(run.state, RunState::Waiting, "{run:?}");
    let (card, seal) = (run.card.expect("a card"), run.seal.expect("a seal"));
    assert!(seal_holds(KEY, id, &card, &seal), "the stored card's seal holds");
    (card, seal)
}

fn answer(storage: &Storage, id: RunId, by: &str, answer: &str) -> Result<(), Refused> {
    let (_, seal) = card(storage, id);
    given(storage, id, by, &seal, answer)
}

/// `by`'s `answer` to the card sealed `seal`.
fn given(storage: &Storage, id: RunId, by: &str, seal: &str, answer: &str) -> Result<(), Refused> {
    let given = Given { seal, answer, confirm: None };
    cordon::background::answer(storage, KEY, id, by, &given).expect("the store answers")
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).expect("a row's content is JSON")
}

fn intact(storage: &Storage) {
    let verdict = storage.store().verify().expect("verified");
    assert!(matches!(verdict, Verdict::Intact { .. }), "{verdict:?}");
}

#[test]
fn a_run_parks_at_each_card_and_goes_on_when_its_principal_answers() {
    let Fixture { dir: _dir, out, storage } = Fixture::new();
    let mut worker = new_worker("w1", &storage, &out, 60_000, 3_600_000);
    let id = submit(&storage, "alice", TWO_WRITES);

    assert_eq!(worker.work_once().unwrap(), Some(Did::Parked(id)));
    assert!(!out.join("a.txt").exists(), "nothing is written before the answer");
    let (shown, _) = card(&storage, id);
    assert!(shown["text"].as_str().unwrap().contains("a.txt"), "{shown}");
    assert_eq!(worker.work_once().unwrap(), None, "a waiting run is no one's work");

    assert_eq!(answer(&storage, id, "bob", "yes"), Err(Refused::Store(AnswerRefused::NotYours)));
    assert_eq!(answer(&storage, id, "alice", "yes"), Ok(()));
    assert_eq!(answer(&storage, id, "alice", "yes"), Err(Refused::Store(AnswerRefused::NotWaiting)), "a second answer");

    // Another worker, as another process would, goes on with the saved run.
    let mut other = new_worker("w2", &storage, &out, 60_000, 3_600_000);
    assert_eq!(other.work_once().unwrap(), Some(Did::Parked(id)), "parked again at the second card");
    assert_eq!(std::fs::read_to_string(out.join("a.txt")).unwrap(), "first");
    assert!(!out.join("b.txt").exists());
    let (second, _) = card(&storage, id);
    assert!(second["text"].as_str().unwrap().contains("b.txt"), "{second}");

    assert_eq!(answer(&storage, id, "alice", "no"), Ok(()));
    assert_eq!(worker.work_once().unwrap(), Some(Did::Ended(id, RunState::Done)));
    assert!(!out.join("b.txt").exists(), "denied");
    let run = storage.store().queued_run(id).unwrap().unwrap();
    assert_eq!(run.result.as_ref().unwrap()["result"], "a write was refused", "{:?}", run.result);
    // One request, performed once, and every answer in the chain.
    let request = run.request.expect("recorded");
    let log = storage.store().show(request).unwrap();
    let performed = log.entries.iter().filter(|e| e.kind == "effect" && e.content["tool"] == "Fs.write").count();
    assert_eq!(performed, 1, "{log:?}");
    let rows = storage.store().rows(1, 1000).unwrap();
    let answers: Vec<_> =
        rows.iter().filter(|r| r.kind == "answer").map(|r| json(&r.content)["answer"].clone()).collect();
    assert_eq!(answers, ["yes", "no"]);
    intact(&storage);
}

#[test]
fn a_card_whose_deadline_passes_is_denied_by_no_one() {
    let Fixture { dir: _dir, out, storage } = Fixture::new();
    let mut worker = new_worker("w1", &storage, &out, 60_000, 0);
    let id = submit(&storage, "alice", TWO_WRITES);
    assert_eq!(worker.work_once().unwrap(), Some(Did::Parked(id)));
    assert_eq!(answer(&storage, id, "alice", "yes"), Err(Refused::Store(AnswerRefused::TooLate)));
    // Both cards pass their deadline in turn.
    assert_eq!(worker.work_once().unwrap(), Some(Did::Parked(id)));
    assert_eq!(worker.work_once().unwrap(), Some(Did::Ended(id, RunState::Done)));
    assert!(!out.join("a.txt").exists() && !out.join("b.txt").exists());
    let rows = storage.store().rows(1, 1000).unwrap();
    let by: Vec<_> = rows.iter().filter(|r| r.kind == "answer").map(|r| json(&r.content)["by"].clone()).collect();
    assert_eq!(by, [serde_json::Value::Null, serde_json::Value::Null]);
    intact(&storage);
}

#[test]
fn a_saved_run_edited_in_the_store_is_refused() {
    let Fixture { dir, out, storage } = Fixture::new();
    let (mut worker, id) = parked(&storage, &out);
    assert_eq!(answer(&storage, id, "alice", "yes"), Ok(()));
    // Anyone who can write the database changes the saved run: the label of a value, say.
    let db = database(&dir);
    db.execute("UPDATE runs SET saved = CAST(replace(CAST(saved AS TEXT), 'first', 'FIRST') AS BLOB)", []).unwrap();
    assert_eq!(worker.work_once().unwrap(), Some(Did::Ended(id, RunState::Failed)));
    let run = storage.store().queued_run(id).unwrap().unwrap();
    let error = run.result.unwrap()["error"].as_str().unwrap().to_string();
    assert!(error.contains("changed after it was saved"), "{error}");
    assert!(!out.join("a.txt").exists());
}

#[test]
fn a_card_edited_in_the_store_no_longer_holds_its_seal() {
    let Fixture { dir, out, storage } = Fixture::new();
    let (mut worker, id) = parked(&storage, &out);
    let (_, seal) = card(&storage, id);
    let db = database(&dir);
    db.execute("UPDATE runs SET card = replace(card, 'a.txt', 'harmless.txt')", []).unwrap();
    // No one can answer it: the person would approve what the store says, not what will happen.
    assert_eq!(given(&storage, id, "alice", &seal, "yes"), Err(Refused::CardChanged));
    assert_eq!(worker.work_once().unwrap(), None, "it waits still, unanswered");
    assert!(!out.join("a.txt").exists() && !out.join("harmless.txt").exists());
    let run = storage.store().queued_run(id).unwrap().unwrap();
    assert!(!seal_holds(KEY, id, run.card.as_ref().unwrap(), run.seal.as_ref().unwrap()));
    // Sealing the edited card needs the key; under any other, the seal does not hold either.
    let resealed = cordon::background::seal(b"another key", id, run.card.as_ref().unwrap());
    assert!(!seal_holds(KEY, id, run.card.as_ref().unwrap(), &resealed));
}

#[test]
fn an_answer_to_another_card_than_the_one_the_run_waits_on_is_refused() {
    let Fixture { dir: _dir, out, storage } = Fixture::new();
    let (_worker, id) = parked(&storage, &out);
    // The seal answered is another card's (say a page showed an older one): the store keeps the
    // answer only for the card the run waits on.
    let refused = given(&storage, id, "alice", "0f".repeat(32).as_str(), "yes");
    assert_eq!(refused, Err(Refused::Store(AnswerRefused::OtherCard)));
}

#[test]
fn a_worker_whose_lease_was_taken_over_performs_nothing_more() {
    let Fixture { dir: _dir, out, storage } = Fixture::new();
    let id = submit(&storage, "alice", TWO_WRITES);
    // The first worker takes the run and stops answering (its lease runs out at once).
    let first = storage.store().claim_run("dead", 0).unwrap().expect("claimed");
    std::thread::sleep(std::time::Duration::from_millis(5));
    let mut second = new_worker("w2", &storage, &out, 60_000, 3_600_000);
    assert_eq!(second.work_once().unwrap(), Some(Did::Parked(id)), "the second worker starts it afresh");
    let lost = storage.store().renew_lease(&first.lease, 60_000).unwrap_err();
    assert!(lost.to_string().contains("taken over"), "{lost}");
    let finished = storage.store().finish_run(&first.lease, RunState::Done, None, &serde_json::json!({}));
    assert!(finished.is_err(), "the first worker cannot end the run");
    intact(&storage);
}

#[test]
fn a_run_whose_worker_died_after_an_effect_is_not_made_again() {
    let Fixture { dir: _dir, out, storage } = Fixture::new();
    let id = submit(&storage, "alice", TWO_WRITES);
    let mut first = new_worker("w1", &storage, &out, 60_000, 3_600_000);
    assert_eq!(first.work_once().unwrap(), Some(Did::Parked(id)));
    assert_eq!(answer(&storage, id, "alice", "yes"), Ok(()));
    // A worker takes the answered run and dies right after its effect's "about to perform" row
    // (written here as that worker would have).
    let claimed = storage.store().claim_run("dying", 0).unwrap().expect("claimed");
    let request = claimed.run.request.expect("recorded");
    let intent = EffectIntent {
        tool: "fs.write".into(),
        args: serde_json::json!({ "name": "a.txt" }),
        decision: "approved".into(),
        approved_by: Some("alice".into()),
        labels: serde_json::json!({}),
        stages: Vec::new(),
    };
    let _never_ended = storage.store().begin_effect(Some(request), &intent).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let mut next = new_worker("w2", &storage, &out, 60_000, 3_600_000);
    assert_eq!(next.work_once().unwrap(), Some(Did::Ended(id, RunState::Failed)));
    let run = storage.store().queued_run(id).unwrap().unwrap();
    let error = run.result.unwrap()["error"].as_str().unwrap().to_string();
    assert!(error.contains("going on would make them again"), "{error}");
    assert!(!out.join("a.txt").exists(), "the effect the dead worker began is not made again");
    assert_eq!(storage.store().unknown_outcomes().unwrap().len(), 1, "and the log says its outcome is unknown");
    intact(&storage);
}

#[test]
fn tools_that_act_for_someone_refuse_anyone_else() {
    let dir = tempfile::tempdir().unwrap();
    let storage = storage(dir.path());
    let settings = WorkerSettings {
        name: "w".into(),
        key: KEY.to_vec(),
        lease_ms: 60_000,
        card_ms: 60_000,
        model: None,
        notify: None,
    };
    let store = storage.clone();
    let open = move |principal: &str| {
        let choice =
            ToolChoice { envs: vec!["github".into()], principal: Some(principal.into()), ..ToolChoice::default() };
        Ok(Workspace::new(Tools::open(&choice, Vec::new())?, store.clone(), cordon::Settings::default()))
    };
    let mut worker = Worker::new(settings, storage.clone(), Box::new(open));
    let id = submit(&storage, "mallory", "len(gh.list_repos())");
    assert_eq!(worker.work_once().unwrap(), Some(Did::Ended(id, RunState::Failed)));
    let run = storage.store().queued_run(id).unwrap().unwrap();
    let error = run.result.unwrap()["error"].as_str().unwrap().to_string();
    assert!(error.contains("cannot act for `mallory`"), "{error}");
}

#[test]
fn two_answers_at_once_to_one_card_are_taken_once() {
    let Fixture { dir, out, storage } = Fixture::new();
    let (_worker, id) = parked(&storage, &out);
    let (_, seal) = card(&storage, id);
    // Two servers (each with its own connection to the store) take an answer at the same time.
    let path = dir.path().join("cordon.db");
    let answers: Vec<_> = ["yes", "no"]
        .into_iter()
        .map(|answer| {
            let (path, seal) = (path.clone(), seal.clone());
            std::thread::spawn(move || {
                let own = Storage::open(&path, cordon::api::store::Durability::SurvivesCrash).unwrap();
                given(&own, id, "alice", &seal, answer)
            })
        })
        .collect();
    let taken: Vec<_> = answers.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(taken.iter().filter(|t| t.is_ok()).count(), 1, "{taken:?}");
    assert!(taken.contains(&Err(Refused::Store(AnswerRefused::NotWaiting))), "{taken:?}");
    let rows = storage.store().rows(1, 1000).unwrap();
    assert_eq!(rows.iter().filter(|r| r.kind == "answer").count(), 1);
    intact(&storage);
}

#[test]
fn workers_on_one_store_each_take_a_run_once() {
    let dir = tempfile::tempdir().unwrap();
    let storage = storage(dir.path());
    let runs: Vec<RunId> = (0..20).map(|i| submit(&storage, "alice", &format!("{i} + 1"))).collect();
    let path = dir.path().join("cordon.db");
    let claimers: Vec<_> = (0..4)
        .map(|n| {
            let path = path.clone();
            std::thread::spawn(move || {
                let own = Storage::open(&path, cordon::api::store::Durability::SurvivesCrash).unwrap();
                let mut taken = Vec::new();
                while let Some(claimed) = own.store().claim_run(&format!("w{n}"), 60_000).unwrap() {
                    taken.push(claimed.run.id);
                }
                taken
            })
        })
        .collect();
    let mut taken: Vec<RunId> = claimers.into_iter().flat_map(|t| t.join().unwrap()).collect();
    taken.sort();
    assert_eq!(taken, runs, "every run taken, and by one worker");
}

#[test]
fn an_approval_written_into_the_store_without_the_key_is_a_denial() {
    let Fixture { dir, out, storage } = Fixture::new();
    let (mut worker, id) = parked(&storage, &out);
    assert_eq!(answer(&storage, id, "alice", "no"), Ok(()));
    // Whoever can write the database turns the person's no into a yes.
    let db = database(&dir);
    db.execute("UPDATE runs SET answer = 'yes'", []).unwrap();
    // The worker parks again at the second card: the first write was denied.
    assert_eq!(worker.work_once().unwrap(), Some(Did::Parked(id)));
    assert!(!out.join("a.txt").exists(), "the forged yes was not applied");
}

/// A request in words, answered by a scripted model whose fill opens an issue: the run parks at
/// the fill's card and goes on, in the fill, once answered.
#[test]
fn a_request_in_words_parks_inside_the_models_fill_and_goes_on_there() {
    let dir = tempfile::tempdir().unwrap();
    let storage = storage(dir.path());
    let fill = r#"match gh.repo("alice", "website") {
  Some(r) => if r.private { ("private", s) } else {
    let (i, s) = gh.create_issue(s, r, "Hello", "thanks");
    ("Opened #" + to_string(i.number), s)
  },
  None => ("no website", s),
}"#;
    let script = dir.path().join("model.json");
    let reply = serde_json::json!({ "replies": [{ "text": format!("```cordon\n{fill}\n```") }] });
    std::fs::write(&script, reply.to_string()).unwrap();
    let model = cordon::api::models::ProviderConfig::parse(&format!("scripted:{}", script.display())).unwrap();
    let settings = WorkerSettings {
        name: "w".into(),
        key: KEY.to_vec(),
        lease_ms: 60_000,
        card_ms: 3_600_000,
        model: Some(model),
        notify: None,
    };
    let store = storage.clone();
    let open = move |principal: &str| {
        let choice =
            ToolChoice { envs: vec!["github".into()], principal: Some(principal.into()), ..ToolChoice::default() };
        Ok(Workspace::new(Tools::open(&choice, Vec::new())?, store.clone(), cordon::Settings::default()))
    };
    let mut worker = Worker::new(settings, storage.clone(), Box::new(open));
    let principal = Tools::open(&ToolChoice { envs: vec!["github".into()], ..ToolChoice::default() }, Vec::new())
        .unwrap()
        .principal;
    let request = "Open an issue on alice/website titled Hello saying thanks";
    let run = NewRun { principal: &principal, kind: RunKind::Ask, name: "request", text: request, clearance: None };
    let id = storage.store().submit_run(&run).unwrap();
    let did = worker.work_once().unwrap();
    assert_eq!(did, Some(Did::Parked(id)), "{:?}", storage.store().queued_run(id).unwrap().unwrap().result);
    let (shown, seal) = card(&storage, id);
    assert!(shown["text"].as_str().unwrap().contains("create issue"), "{shown}");
    // The card is flagged (the model's fill chose where the issue goes): approved only by typing
    // the end of the flagged value, in every front end.
    assert_eq!(answer(&storage, id, &principal, "yes"), Err(Refused::NotConfirmed));
    let tail = shown["confirm"]["tail"].as_str().expect("a flagged card");
    let typed = Given { seal: &seal, answer: "yes", confirm: Some(tail) };
    assert_eq!(cordon::background::answer(&storage, KEY, id, &principal, &typed).unwrap(), Ok(()));
    assert_eq!(worker.work_once().unwrap(), Some(Did::Ended(id, RunState::Done)));
    let result = storage.store().queued_run(id).unwrap().unwrap().result.unwrap();
    assert!(result["result"][0].as_str().unwrap().starts_with("Opened #"), "{result}");
    intact(&storage);
}

/// A request whose worker's lease another worker took over performs nothing: it stops before
/// its first effect, as soon as it would note its request in the queue.
#[test]
fn a_request_whose_lease_was_taken_over_performs_nothing() {
    let Fixture { dir: _dir, out, storage } = Fixture::new();
    let id = submit(&storage, "alice", TWO_WRITES);
    let first = storage.store().claim_run("first", 0).unwrap().expect("claimed");
    std::thread::sleep(std::time::Duration::from_millis(5));
    let second = storage.store().claim_run("second", 60_000).unwrap().expect("taken over");
    assert_eq!((first.run.id, second.run.id), (id, id));
    let grant = Grant::parse(&format!("out={}:rw", out.display())).unwrap();
    let choice = ToolChoice { dirs: vec![grant], principal: Some("alice".into()), ..ToolChoice::default() };
    let mut workspace = Workspace::new(Tools::open(&choice, Vec::new()).unwrap(), storage.clone(), Default::default());
    let mut later = cordon::background::Later::new(KEY, id);
    let plan = cordon::Source::new("plan.cord", TWO_WRITES);
    let background = cordon::background::Background { key: KEY.to_vec(), lease: first.lease, lease_ms: 60_000 };
    let prepared = workspace.prepare(cordon::Request::Plan(&plan), &mut later).unwrap().in_background(background);
    let ran = prepared.unwrap().run(&mut cordon::api::events::Observers::new());
    let error = ran.expect_err("the lease is lost").to_string();
    assert!(error.contains("taken over"), "{error}");
    assert!(std::fs::read_dir(&out).unwrap().next().is_none(), "nothing was written");
}
