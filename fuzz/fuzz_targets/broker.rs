//! Any bytes, as a client's stream to the credential broker: frames read as the broker reads
//! them, and every ask but `Send` (which would reach the network) answered by a broker holding
//! a canary: no panic, no frame over the limit allocated up front, and no answer holds the
//! canary.

#![no_main]

use std::sync::OnceLock;

use cordon_broker::Broker;
use cordon_broker::protocol::{Ask, read_frame, write_frame};
use cordon_vault::{Destination, Entry, SecretValue};
use libfuzzer_sys::fuzz_target;

const CANARY: &str = "cordon-canary-7Hq2xVp9Lm";

fn broker() -> &'static Broker {
    static BROKER: OnceLock<Broker> = OnceLock::new();
    BROKER.get_or_init(|| {
        let entry = Entry {
            name: "API_KEY".into(),
            destinations: vec![Destination::parse("api.example.com").unwrap()],
            header: "Authorization".into(),
            scheme: None,
            programs: Vec::new(),
        };
        Broker::with_secrets(vec![(entry, SecretValue::from(CANARY))])
    })
}

fuzz_target!(|data: &[u8]| {
    let mut input = data;
    while let Ok(Some(ask)) = read_frame::<Ask>(&mut input) {
        if matches!(ask, Ask::Send(_)) {
            continue;
        }
        let mut answer = Vec::new();
        write_frame(&mut answer, &broker().answer(&ask)).unwrap();
        assert!(!String::from_utf8_lossy(&answer).contains(CANARY));
    }
});
