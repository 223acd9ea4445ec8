//! Strategies: how exactly one claimant wins a run. Only `lease` gives leases; see the seed's table.

pub mod lease;

/// A fresh claim token: 128 random bits in hex. Only its holder can heartbeat or finish the run.
pub fn new_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The default runner name, `host:pid`, so an operator can find the process that holds a lease.
pub fn default_runner() -> String {
    let host = gethostname::gethostname().to_string_lossy().into_owned();
    format!("{host}:{}", std::process::id())
}

#[cfg(test)]
mod tests {
    #[test]
    fn tokens_are_unique_hex() {
        let a = super::new_token();
        let b = super::new_token();
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert!(super::default_runner().ends_with(&format!(":{}", std::process::id())));
    }
}
