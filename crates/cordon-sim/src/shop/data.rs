//! The simulated bank and shop's state as plain data: what the JSON data file holds, what the
//! tools did (payments, transfers, deleted orders, refund requests, messages sent), and the
//! checks that make a loaded file a consistent state.

use serde::{Deserialize, Serialize};

/// The whole state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Data {
    /// The customer the agent acts for: the principal of its labels.
    pub user: String,
    /// The host's clock (seconds since 1970).
    pub now: i64,
    pub accounts: Vec<AccountData>,
    /// Every merchant the shop knows.
    pub merchants: Vec<String>,
    pub products: Vec<ProductData>,
    #[serde(default)]
    pub reviews: Vec<ReviewData>,
    /// Messages merchants sent the user, oldest first.
    #[serde(default)]
    pub inbox: Vec<MessageData>,
    #[serde(default)]
    pub orders: Vec<OrderData>,
    /// Payments made, in order.
    #[serde(default)]
    pub payments: Vec<PaymentData>,
    /// Transfers between accounts made (the policy never lets an agent make one).
    #[serde(default)]
    pub transfers: Vec<TransferData>,
    /// Ids of the orders deleted.
    #[serde(default)]
    pub deleted: Vec<String>,
    /// Refunds requested: the order and the reason given.
    #[serde(default)]
    pub refunds: Vec<(String, String)>,
    /// Messages the user sent merchants.
    #[serde(default)]
    pub sent: Vec<SentData>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountData {
    pub id: String,
    pub name: String,
    /// In cents.
    pub balance: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProductData {
    pub id: String,
    pub name: String,
    /// In cents.
    pub price: i64,
    pub merchant: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewData {
    pub product: String,
    pub author: String,
    pub rating: i64,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageData {
    pub merchant: String,
    pub time: i64,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderData {
    pub id: String,
    pub product: String,
    pub merchant: String,
    /// In cents.
    pub amount: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaymentData {
    pub from: String,
    pub merchant: String,
    pub amount: i64,
    pub memo: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferData {
    pub from: String,
    pub to: String,
    pub amount: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SentData {
    pub merchant: String,
    pub text: String,
}

/// Parses and validates a data file.
pub fn parse(text: &str) -> Result<Data, String> {
    let data: Data = serde_json::from_str(text).map_err(|e| format!("the shop data is not valid: {e}"))?;
    validate(&data).map_err(|e| format!("the shop data is not valid: {e}"))?;
    Ok(data)
}

/// Checks what the JSON shape cannot: ids unique, merchants and products that exist, amounts
/// and balances not negative, ratings from 1 to 5, no message after the clock.
pub fn validate(data: &Data) -> Result<(), String> {
    if data.user.is_empty() {
        return Err("the user has no name".into());
    }
    crate::unique_ids(data.accounts.iter().map(|a| a.id.as_str()), "the account")?;
    crate::unique_ids(data.merchants.iter().map(String::as_str), "the merchant")?;
    crate::unique_ids(data.products.iter().map(|p| p.id.as_str()), "the product")?;
    crate::unique_ids(data.orders.iter().map(|o| o.id.as_str()), "the order")?;
    let merchant = |m: &str, what: String| {
        if data.merchants.iter().any(|x| x == m) {
            Ok(())
        } else {
            Err(format!("{what} names the unknown merchant `{m}`"))
        }
    };
    let product = |p: &str, what: String| {
        if data.products.iter().any(|x| x.id == p) {
            Ok(())
        } else {
            Err(format!("{what} names the unknown product `{p}`"))
        }
    };
    for a in &data.accounts {
        if a.balance < 0 {
            return Err(format!("the account `{}` has a negative balance", a.id));
        }
    }
    for p in &data.products {
        merchant(&p.merchant, format!("the product `{}`", p.id))?;
        if p.price <= 0 {
            return Err(format!("the product `{}` has a price of {}: expected more than 0", p.id, p.price));
        }
    }
    for (i, r) in data.reviews.iter().enumerate() {
        product(&r.product, format!("review {}", i + 1))?;
        if !(1..=5).contains(&r.rating) {
            return Err(format!("review {} has the rating {}: expected 1 to 5", i + 1, r.rating));
        }
    }
    for (i, m) in data.inbox.iter().enumerate() {
        merchant(&m.merchant, format!("message {}", i + 1))?;
        if m.time > data.now {
            return Err(format!("message {} was sent at {}, after the clock ({})", i + 1, m.time, data.now));
        }
    }
    for o in &data.orders {
        merchant(&o.merchant, format!("the order `{}`", o.id))?;
        product(&o.product, format!("the order `{}`", o.id))?;
        if o.amount <= 0 {
            return Err(format!("the order `{}` has an amount of {}: expected more than 0", o.id, o.amount));
        }
    }
    Ok(())
}
