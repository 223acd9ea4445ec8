//! Tokens: what names one attempt of a run (only its holder may heartbeat or finish it) and one
//! holder of `migrate`'s lock. Defined down here because the store's own scripts take them.

/// A fresh token: 128 random bits in hex.
pub fn new_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}
