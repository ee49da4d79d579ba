//! The `Shop` capability's tools as a [`ToolHost`]: reads a call's JSON arguments, runs the
//! operation and answers in JSON as the tool's declared type in `policies/shop.cord` maps to
//! it. Records the host made come back as objects, and are checked against the host's state
//! (an `Account` or `Order` that does not match is an error, never a panic). Tools that may be
//! refused answer `{"Ok": ..}`.

use cordon_runtime::{Json, ToolCall, ToolHost};
use serde::Deserialize;
use serde_json::json;

use crate::call::Args;

use super::{AccountData, MessageData, OrderData, ProductData, ReviewData, Shop};

/// The capability's declared name.
pub const CAPABILITY: &str = "Shop";

impl ToolHost for Shop {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        if call.capability() != CAPABILITY {
            return Err(format!("the shop environment has no capability `{}`", call.capability()));
        }
        let args = Args { call };
        match call.tool() {
            "search" => Ok(self.search(&args.str("query")?).into_iter().map(product_json).collect()),
            "reviews" => {
                let p: IdArg = args.get("p", "Product")?;
                Ok(self.reviews(&p.id).into_iter().map(review_json).collect())
            }
            "inbox" => Ok(self.data.inbox.iter().map(message_json).collect()),
            "orders" => Ok(self.orders().map(order_json).collect()),
            "accounts" => Ok(self.data.accounts.iter().map(account_json).collect()),
            "buy" => {
                let p: IdArg = args.get("p", "Product")?;
                let from = self.account_arg(&args, "from")?;
                let quantity: i64 = args.get("quantity", "Int")?;
                let order = self.buy(&p.id, quantity, &from)?;
                Ok(json!({ "Ok": order_json(order) }))
            }
            "pay" => {
                let from = self.account_arg(&args, "from")?;
                self.pay(&from, &args.str("merchant")?, args.get("amount", "Int")?, &args.str("memo")?)?;
                Ok(json!({ "Ok": null }))
            }
            "transfer" => {
                let (from, to) = (self.account_arg(&args, "from")?, self.account_arg(&args, "to")?);
                self.transfer(&from, &to, args.get("amount", "Int")?)?;
                Ok(json!({ "Ok": null }))
            }
            "delete_order" => {
                let o = self.order_arg(&args, "o")?;
                self.delete_order(&o)?;
                Ok(json!({ "Ok": null }))
            }
            "request_refund" => {
                let o = self.order_arg(&args, "o")?;
                self.request_refund(&o, &args.str("reason")?)?;
                Ok(json!({ "Ok": null }))
            }
            "message_merchant" => {
                self.message(&args.str("merchant")?, &args.str("text")?)?;
                Ok(json!({ "Ok": null }))
            }
            other => Err(format!("the Shop capability has no tool `{other}`")),
        }
    }
}

/// A host-made record, by its id.
#[derive(Deserialize)]
struct IdArg {
    id: String,
}

impl Shop {
    /// An `Account` argument's id, once it names one of the user's accounts.
    fn account_arg(&self, args: &Args<'_>, param: &str) -> Result<String, String> {
        let a: IdArg = args.get(param, "Account")?;
        if !self.data.accounts.iter().any(|x| x.id == a.id) {
            return Err(args.error(param, &format!("names no account of {}", self.user())));
        }
        Ok(a.id)
    }

    /// An `Order` argument's id, once it names one of the user's orders.
    fn order_arg(&self, args: &Args<'_>, param: &str) -> Result<String, String> {
        let o: IdArg = args.get(param, "Order")?;
        if !self.orders().any(|x| x.id == o.id) {
            return Err(args.error(param, &format!("names no order of {}", self.user())));
        }
        Ok(o.id)
    }
}

fn product_json(p: &ProductData) -> Json {
    json!({ "id": p.id, "name": p.name, "price": p.price, "merchant": p.merchant })
}

fn review_json(r: &ReviewData) -> Json {
    json!({ "product": r.product, "author": r.author, "rating": r.rating, "text": r.text })
}

fn message_json(m: &MessageData) -> Json {
    json!({ "merchant": m.merchant, "time": m.time, "text": m.text })
}

fn order_json(o: &OrderData) -> Json {
    json!({ "id": o.id, "product": o.product, "merchant": o.merchant, "amount": o.amount })
}

fn account_json(a: &AccountData) -> Json {
    json!({ "id": a.id, "name": a.name, "balance": a.balance })
}
