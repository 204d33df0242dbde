//! `interpreter/list`: the interpreters of the server's inventory, as `environment/create`
//! resolves among them.

use wsp_interpreters::Inventory;
use wsp_protocol::{Interpreter, Interpreters};

use super::handlers::Answer;

/// Every working interpreter `inventory` finds, newest first, in the order a create prefers
/// them.
pub(super) async fn list(inventory: Inventory) -> Answer<Interpreters> {
    let available = inventory.available().await;
    Ok(Interpreters {
        interpreters: available.into_iter().map(Interpreter::from).collect(),
    })
}
