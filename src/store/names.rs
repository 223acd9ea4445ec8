//! The store's own keys under a prefix, beside its jobs': the format key, which every command
//! reads first, and the migration lock; and a job's events key, which every reader of a job's
//! keys names. (A module of their own, below every other store module, so that a job's keys can
//! name them without a circle.)

/// The key that records the store format for a prefix: `<prefix>format`.
pub fn format_key(prefix: &str) -> String {
    format!("{prefix}format")
}

/// The key `anarchon migrate` holds while it converts the store under a prefix:
/// `<prefix>migrating`.
pub fn migration_lock_key(prefix: &str) -> String {
    format!("{prefix}migrating")
}

/// A job's events: the operators' actions on it (`crate::store::events`), in the job's hash tag
/// so it sits beside its keys, in its Cluster slot, in either layout.
pub fn events_key(prefix: &str, job: &str) -> String {
    format!("{{{prefix}{job}}}:events")
}
