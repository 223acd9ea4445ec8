//! The store's own keys under a prefix, beside its jobs': the format key, which every command
//! reads first, and the migration lock. (A module of their own, below every other store module,
//! so that a job's keys can name the format key without a circle.)

/// The key that records the store format for a prefix: `<prefix>format`.
pub fn format_key(prefix: &str) -> String {
    format!("{prefix}format")
}

/// The key `anarchon migrate` holds while it converts the store under a prefix:
/// `<prefix>migrating`.
pub fn migration_lock_key(prefix: &str) -> String {
    format!("{prefix}migrating")
}
