//! The `Fs` tool host in JSON, as the engine calls it: answers in the shapes `policies/fs.cord`
//! declares (a refusal is an `Err` answer the plan may handle), and arguments no checked plan
//! could send (missing, of the wrong shape, an unknown tool or capability) are tool failures
//! that say which, never a panic.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_fs::{Fs, FsLimits, Grant, Mode};
use cordon_runtime::{Effect, Json, ToolCall, ToolHost};
use serde_json::json;

fn host(mode: Mode) -> (tempfile::TempDir, Fs) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.txt"), "alpha").unwrap();
    let fs = Fs::open(&[Grant { name: "r".into(), path: tmp.path().to_path_buf(), mode }], "ann", FsLimits::default());
    (tmp, fs.unwrap())
}

fn call(fs: &mut Fs, capability: &str, tool: &str, args: Json) -> Result<Json, String> {
    let effect = Effect::outside_a_run(capability, tool, Vec::new());
    let Json::Object(args) = args else { panic!("arguments are an object") };
    fs.perform(&ToolCall { effect: &effect, args })
}

#[test]
fn answers_have_the_declared_shapes() {
    let (_tmp, mut fs) = host(Mode::ReadWrite);
    let r = json!({ "root": "r", "path": "", "writable": true });
    assert_eq!(call(&mut fs, "Fs", "roots", json!({})), Ok(json!([r])));
    assert_eq!(call(&mut fs, "Fs", "root", json!({ "name": "r" })), Ok(r.clone()));
    assert_eq!(call(&mut fs, "Fs", "root", json!({ "name": "nope" })), Ok(Json::Null));
    assert_eq!(call(&mut fs, "Fs", "read", json!({ "d": r, "path": "a.txt" })), Ok(json!({ "Ok": "alpha" })));
    assert_eq!(
        call(&mut fs, "Fs", "list", json!({ "d": r })),
        Ok(json!({ "Ok": [{ "name": "a.txt", "kind": "file", "size": 5 }] }))
    );
    assert_eq!(
        call(&mut fs, "Fs", "read_only", json!({ "d": r })),
        Ok(json!({ "root": "r", "path": "", "writable": false }))
    );
    assert_eq!(
        call(&mut fs, "Fs", "write", json!({ "d": r, "path": "b.txt", "content": "beta" })),
        Ok(json!({ "Ok": null }))
    );
    let refused = call(&mut fs, "Fs", "read", json!({ "d": r, "path": "../x" })).unwrap();
    assert_eq!(refused["Err"]["code"], "bad-path", "{refused}");
    assert!(refused["Err"]["reason"].as_str().unwrap().contains("goes up with `..`"), "{refused}");
    let sub = call(&mut fs, "Fs", "subdir", json!({ "d": r, "path": "missing" })).unwrap();
    assert_eq!(sub["Err"]["code"], "not-found", "{sub}");
}

#[test]
fn arguments_no_checked_plan_could_send_are_tool_failures() {
    let (_tmp, mut fs) = host(Mode::ReadOnly);
    let r = json!({ "root": "r", "path": "", "writable": false });
    let cases = [
        ("Fs", "read", json!({ "path": "a.txt" }), "Fs.read: the argument `d` is missing"),
        ("Fs", "read", json!({ "d": "r", "path": "a.txt" }), "Fs.read: the argument `d` is not a Dir"),
        ("Fs", "read", json!({ "d": { "root": "r" }, "path": "a.txt" }), "the argument `d` is not a Dir"),
        ("Fs", "read", json!({ "d": r, "path": 7 }), "Fs.read: the argument `path` is not a String"),
        ("Fs", "write", json!({ "d": r, "path": "x" }), "Fs.write: the argument `content` is missing"),
        ("Fs", "chmod", json!({ "d": r }), "the Fs capability has no tool `chmod`"),
        ("GitHub", "read", json!({ "d": r, "path": "a.txt" }), "the filesystem has no capability `GitHub`"),
        (
            "Fs",
            "read_only",
            json!({ "d": { "root": "nope", "path": "", "writable": false } }),
            "no directory was granted as `nope`",
        ),
    ];
    for (capability, tool, args, expected) in cases {
        let error = call(&mut fs, capability, tool, args.clone()).unwrap_err();
        assert!(error.contains(expected), "{tool} {args}: {error}");
    }
}
