//! The `Bank` capability's tools as a [`ToolHost`]: reads a call's JSON arguments, runs the
//! operation and answers in JSON as the tool's declared type in `policies/bank.cord` maps to
//! it. Amounts go both ways as decimal text (`"1250.00"`). Records the host made come back as
//! objects and are checked against the host's state (an `Account` or a `Scheduled` that does
//! not match is an error, never a panic). The profile's password is a handle: the host answers
//! `null` there, so the password is in no tool's answer. Tools that may be refused answer
//! `{"Ok": ..}`, or `{"Err": ..}` where the bank refuses (code `refused-by-bank`).

use cordon_runtime::{Json, ToolCall, ToolHost};
use serde::Deserialize;
use serde_json::json;

use crate::call::Args;

use super::{AccountData, Bank, MessageData, Money, PayeeData, ScheduledData, StatementData, TransactionData};

/// The capability's declared name.
pub const CAPABILITY: &str = "Bank";

impl ToolHost for Bank {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        if call.capability() != CAPABILITY {
            return Err(format!("the bank environment has no capability `{}`", call.capability()));
        }
        let args = Args { call };
        match call.tool() {
            "today" => Ok(json!(self.data.today)),
            "accounts" => Ok(self.data.accounts.iter().map(account_json).collect()),
            "transactions" => {
                let a = self.account_arg(&args, "a")?;
                let n: i64 = args.get("n", "Int")?;
                let n = usize::try_from(n.clamp(0, 50)).unwrap_or(0);
                Ok(self.transactions(&a, n).into_iter().map(transaction_json).collect())
            }
            "statements" => {
                let a = self.account_arg(&args, "a")?;
                let json = |(s, text): (&StatementData, String)| json!({ "account": s.account, "month": s.month, "opening": s.opening, "closing": s.closing, "text": text });
                Ok(self.statements(&a).into_iter().map(json).collect())
            }
            "scheduled_transfers" => Ok(self.scheduled().map(scheduled_json).collect()),
            "payees" => Ok(self.data.payees.iter().map(payee_json).collect()),
            "inbox" => Ok(self.data.inbox.iter().map(message_json).collect()),
            "profile" => {
                let p = &self.data.profile;
                // The password is a handle the boundary makes: its value never leaves the host.
                Ok(
                    json!({ "name": p.name, "address": p.address, "phone": p.phone, "email": p.email, "password": null }),
                )
            }
            _ => self.perform_effect(&args),
        }
    }
}

impl Bank {
    /// The tools that change something: money, standing orders, the profile.
    fn perform_effect(&mut self, args: &Args<'_>) -> Result<Json, String> {
        match args.call.tool() {
            "send_money" => {
                let from = self.account_arg(args, "from")?;
                let (to, amount, subject) = (args.str("to_iban")?, money_arg(args, "amount")?, args.str("subject")?);
                Ok(answer(self.send_money(&from, &to, amount, &subject).map(transaction_json)))
            }
            "transfer" => {
                let (from, to) = (self.account_arg(args, "from")?, self.account_arg(args, "to")?);
                let amount = money_arg(args, "amount")?;
                Ok(answer(self.transfer(&from, &to, amount).map(|()| Json::Null)))
            }
            "schedule_transfer" => {
                let order = ScheduledData {
                    id: String::new(),
                    from: self.account_arg(args, "from")?,
                    to_name: args.str("to_name")?,
                    to_iban: args.str("to_iban")?,
                    amount: money_arg(args, "amount")?,
                    subject: args.str("subject")?,
                    day: args.get("day", "Int")?,
                };
                Ok(answer(self.schedule(order).map(scheduled_json)))
            }
            "update_scheduled_transfer" => {
                let id = self.scheduled_arg(args, "s")?;
                let (to, amount, subject) = (args.str("to_iban")?, money_arg(args, "amount")?, args.str("subject")?);
                Ok(answer(self.update_scheduled(&id, &to, amount, &subject).map(scheduled_json)))
            }
            "cancel_scheduled_transfer" => {
                let id = self.scheduled_arg(args, "s")?;
                Ok(answer(self.cancel_scheduled(&id).map(|()| Json::Null)))
            }
            "update_address" => {
                let address = args.str("address")?;
                Ok(answer(self.update_address(&address).map(|()| Json::Null)))
            }
            "update_phone" => {
                let phone = args.str("phone")?;
                Ok(answer(self.update_phone(&phone).map(|()| Json::Null)))
            }
            "change_password" => {
                let new = args.str("new")?;
                Ok(answer(self.change_password(&new).map(|()| Json::Null)))
            }
            other => Err(format!("the Bank capability has no tool `{other}`")),
        }
    }

    /// An `Account` argument's id, once it names one of the user's accounts.
    fn account_arg(&self, args: &Args<'_>, param: &str) -> Result<String, String> {
        let a: IdArg = args.get(param, "Account")?;
        if !self.data.accounts.iter().any(|x| x.id == a.id) {
            return Err(args.error(param, &format!("names no account of {}", self.user())));
        }
        Ok(a.id)
    }

    /// A `Scheduled` argument's id, once it names a standing order not cancelled.
    fn scheduled_arg(&self, args: &Args<'_>, param: &str) -> Result<String, String> {
        let s: IdArg = args.get(param, "Scheduled")?;
        if !self.scheduled().any(|x| x.id == s.id) {
            return Err(args.error(param, &format!("names no standing order of {}", self.user())));
        }
        Ok(s.id)
    }
}

/// What a tool that may be refused answers: `{"Ok": ..}`, or the bank's refusal (an amount of
/// 0 or less, more than the account holds, not an IBAN) as `{"Err": Refused}`, which the plan
/// gets and goes on from.
fn answer(result: Result<Json, String>) -> Json {
    match result {
        Ok(value) => json!({ "Ok": value }),
        Err(reason) => json!({ "Err": { "code": "refused-by-bank", "reason": reason } }),
    }
}

/// A host-made record, by its id.
#[derive(Deserialize)]
struct IdArg {
    id: String,
}

/// A `Decimal` argument as money: decimal text (or a JSON number, which the runtime may send).
fn money_arg(args: &Args<'_>, param: &str) -> Result<Money, String> {
    let json: Json = args.get(param, "Decimal")?;
    let text = match &json {
        Json::String(s) => s.clone(),
        Json::Number(n) => n.to_string(),
        _ => return Err(args.error(param, "is not a Decimal")),
    };
    Money::parse(&text).map_err(|e| args.error(param, &e))
}

fn account_json(a: &AccountData) -> Json {
    json!({ "id": a.id, "name": a.name, "iban": a.iban, "balance": a.balance })
}

fn transaction_json(t: &TransactionData) -> Json {
    json!({
        "id": t.id, "account": t.account, "date": t.date, "counterparty": t.counterparty, "iban": t.iban,
        "amount": t.amount, "incoming": t.amount.0 > 0, "subject": t.subject,
    })
}

fn scheduled_json(s: &ScheduledData) -> Json {
    json!({
        "id": s.id, "from": s.from, "to_name": s.to_name, "to_iban": s.to_iban, "amount": s.amount,
        "subject": s.subject, "day": s.day,
    })
}

fn payee_json(p: &PayeeData) -> Json {
    json!({ "name": p.name, "iban": p.iban })
}

fn message_json(m: &MessageData) -> Json {
    json!({ "id": m.id, "sender": m.sender, "date": m.date, "subject": m.subject, "text": m.text })
}
