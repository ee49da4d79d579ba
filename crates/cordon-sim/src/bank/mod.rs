//! A deterministic simulated online bank, for the scenario of `policies/bank.cord`: a customer
//! (`nora`) with a checking and a savings account, their transactions (an incoming one's
//! subject is written by whoever sent the money), monthly statements, standing orders (rent,
//! the gym, insurance, savings), saved payees, a message box (the bank, the landlord, the
//! employer) and a profile with a password no tool gives out. The benchmark places its
//! injections in the subjects, the statements and the messages; the gate and the labels stand
//! between them and the money.
//!
//! The state is loaded from a JSON data file (the default one is the benchmark's:
//! [`DATA`]). Tools read and change it in memory: a payment leaves an account (and lands in the
//! other account when it goes to one of the user's own IBANs), standing orders are set up,
//! changed and cancelled, the address, phone and password change, and every payment, move and
//! change is recorded for tests to inspect.

mod data;
mod tools;

pub use data::{
    AccountData, Data, MessageData, Money, PayeeData, ProfileData, ScheduledData, SentData, StatementData,
    TransactionData, TransferData, is_iban,
};
pub use tools::CAPABILITY;

/// The built-in data file: the bank suite's, with no injection in it.
pub const DATA: &str = include_str!("../../../../bench/bank/data.json");

/// The policy module that declares the `Bank` capability this environment implements.
pub const POLICY: &str = include_str!("../../../../policies/bank.cord");

/// The policy's path from the repository root.
pub const POLICY_PATH: &str = "policies/bank.cord";

/// The simulated bank, and the customer the agent acts for.
#[derive(Clone, Debug, PartialEq)]
pub struct Bank {
    data: Data,
}

loaded_from_data!(Bank, |data| Bank { data });

impl Bank {
    /// The account `id`.
    pub fn account(&self, id: &str) -> Result<&AccountData, String> {
        self.data.accounts.iter().find(|a| a.id == id).ok_or_else(|| format!("there is no account `{id}`"))
    }

    fn account_mut(&mut self, id: &str) -> Result<&mut AccountData, String> {
        self.data.accounts.iter_mut().find(|a| a.id == id).ok_or_else(|| format!("there is no account `{id}`"))
    }

    /// The newest `n` transactions of account `id`, newest first.
    pub fn transactions(&self, id: &str, n: usize) -> Vec<&TransactionData> {
        self.data.transactions.iter().rev().filter(|t| t.account == id).take(n).collect()
    }

    /// The statements of account `id`, oldest first, each with its text and the notes printed
    /// on it.
    pub fn statements(&self, id: &str) -> Vec<(&StatementData, String)> {
        let printed = |s: &StatementData| {
            let mut text = s.text.clone();
            if !s.notes.is_empty() {
                text.push_str("\n\nNotes:\n");
                text.push_str(&s.notes.join("\n"));
            }
            text
        };
        self.data.statements.iter().filter(|s| s.account == id).map(|s| (s, printed(s))).collect()
    }

    /// The standing orders not cancelled, in the order they were set up.
    pub fn scheduled(&self) -> impl Iterator<Item = &ScheduledData> {
        self.data.scheduled.iter().filter(|s| !self.data.cancelled.contains(&s.id))
    }

    /// Takes `amount` out of account `from`, which must hold it.
    fn withdraw(&mut self, from: &str, amount: Money) -> Result<(), String> {
        if amount.0 <= 0 {
            return Err(format!("an amount must be more than 0, not {amount}"));
        }
        let account = self.account_mut(from)?;
        if account.balance < amount {
            return Err(format!("the account `{from}` holds {}, less than {amount}", account.balance));
        }
        account.balance.0 -= amount.0;
        Ok(())
    }

    /// Books a transaction on account `account`; returns its id.
    fn book(&mut self, account: &str, counterparty: &str, iban: &str, amount: Money, subject: &str) -> String {
        let id = format!("T-{}", self.data.transactions.len() + 1);
        self.data.transactions.push(TransactionData {
            id: id.clone(),
            account: account.into(),
            date: self.data.today.clone(),
            counterparty: counterparty.into(),
            iban: iban.into(),
            amount,
            subject: subject.into(),
        });
        id
    }

    /// Sends `amount` from account `from` to an IBAN with a subject; returns the booked
    /// transaction. Money sent to one of the user's own IBANs lands in that account.
    pub fn send_money(
        &mut self,
        from: &str,
        to_iban: &str,
        amount: Money,
        subject: &str,
    ) -> Result<&TransactionData, String> {
        if !is_iban(to_iban) {
            return Err(format!("`{to_iban}` is not an IBAN"));
        }
        self.withdraw(from, amount)?;
        let payer = self.account(from)?.clone();
        let payee = self.data.payees.iter().find(|p| p.iban == to_iban).map(|p| p.name.clone());
        let own = self.data.accounts.iter().find(|a| a.iban == to_iban).map(|a| a.id.clone());
        if let Some(to) = &own {
            self.account_mut(to)?.balance.0 += amount.0;
            let name = self.data.profile.name.clone();
            self.book(to, &name, &payer.iban, amount, subject);
        }
        let name = payee.or_else(|| own.is_some().then(|| self.data.profile.name.clone())).unwrap_or_default();
        let sent = SentData { from: from.into(), to_iban: to_iban.into(), amount, subject: subject.into() };
        self.data.sent.push(sent);
        let id = self.book(from, &name, to_iban, Money(-amount.0), subject);
        self.data.transactions.iter().find(|t| t.id == id).ok_or_else(|| "the payment was not booked".into())
    }

    /// Moves `amount` between two of the user's accounts.
    pub fn transfer(&mut self, from: &str, to: &str, amount: Money) -> Result<(), String> {
        if from == to {
            return Err("a transfer needs two different accounts".into());
        }
        let to_iban = self.account(to)?.iban.clone();
        let from_iban = self.account(from)?.iban.clone();
        self.withdraw(from, amount)?;
        self.account_mut(to)?.balance.0 += amount.0;
        let name = self.data.profile.name.clone();
        self.book(from, &name, &to_iban, Money(-amount.0), "Transfer");
        self.book(to, &name, &from_iban, amount, "Transfer");
        self.data.transfers.push(TransferData { from: from.into(), to: to.into(), amount });
        Ok(())
    }

    /// Sets up a standing order; returns it.
    pub fn schedule(&mut self, order: ScheduledData) -> Result<&ScheduledData, String> {
        self.account(&order.from)?;
        Bank::check_order(&order.to_iban, order.amount, order.day)?;
        let id = format!("S-{}", self.data.scheduled.len() + 1);
        let order = ScheduledData { id, ..order };
        self.data.changes.push(format!(
            "{}: new, to {} {} \"{}\" on day {}",
            order.id, order.to_iban, order.amount, order.subject, order.day
        ));
        self.data.scheduled.push(order);
        self.data.scheduled.last().ok_or_else(|| "the standing order was not stored".into())
    }

    fn check_order(to_iban: &str, amount: Money, day: i64) -> Result<(), String> {
        if !is_iban(to_iban) {
            return Err(format!("`{to_iban}` is not an IBAN"));
        }
        if amount.0 <= 0 {
            return Err(format!("an amount must be more than 0, not {amount}"));
        }
        if !(1..=28).contains(&day) {
            return Err(format!("a standing order is paid on a day from 1 to 28, not {day}"));
        }
        Ok(())
    }

    /// Changes a standing order's recipient, amount and subject; returns it.
    pub fn update_scheduled(
        &mut self,
        id: &str,
        to_iban: &str,
        amount: Money,
        subject: &str,
    ) -> Result<&ScheduledData, String> {
        if !self.scheduled().any(|s| s.id == id) {
            return Err(format!("there is no standing order `{id}`"));
        }
        let day = self.scheduled().find(|s| s.id == id).map_or(1, |s| s.day);
        Bank::check_order(to_iban, amount, day)?;
        let order = self.data.scheduled.iter_mut().find(|s| s.id == id).ok_or("the standing order is gone")?;
        order.to_iban = to_iban.into();
        order.amount = amount;
        order.subject = subject.into();
        self.data.changes.push(format!("{id}: to {to_iban} {amount} \"{subject}\""));
        self.data.scheduled.iter().find(|s| s.id == id).ok_or_else(|| "the standing order is gone".into())
    }

    /// Cancels a standing order.
    pub fn cancel_scheduled(&mut self, id: &str) -> Result<(), String> {
        if !self.scheduled().any(|s| s.id == id) {
            return Err(format!("there is no standing order `{id}`"));
        }
        self.data.cancelled.push(id.into());
        Ok(())
    }

    /// Changes the user's postal address.
    pub fn update_address(&mut self, address: &str) -> Result<(), String> {
        if address.trim().is_empty() {
            return Err("an address cannot be empty".into());
        }
        self.data.profile.address = address.into();
        self.data.changes.push(format!("address: {address}"));
        Ok(())
    }

    /// Changes the user's phone number.
    pub fn update_phone(&mut self, phone: &str) -> Result<(), String> {
        if phone.trim().is_empty() {
            return Err("a phone number cannot be empty".into());
        }
        self.data.profile.phone = phone.into();
        self.data.changes.push(format!("phone: {phone}"));
        Ok(())
    }

    /// Sets a new password (at least 12 characters). The change is logged without it.
    pub fn change_password(&mut self, new: &str) -> Result<(), String> {
        if new.chars().count() < 12 {
            return Err("a password needs at least 12 characters".into());
        }
        self.data.profile.password = new.into();
        self.data.changes.push("password: changed".into());
        Ok(())
    }

    /// Did any effect move money or change a standing order, the profile or the password?
    pub fn changed(&self) -> bool {
        !self.data.sent.is_empty()
            || !self.data.transfers.is_empty()
            || !self.data.cancelled.is_empty()
            || !self.data.changes.is_empty()
    }
}
