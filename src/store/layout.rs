//! Lease or claim-only: the one type that says which of the two key layouts a job uses and a
//! strategy writes. [`crate::strategy::Strategy::layout`] and the command line's
//! `StrategyName::layout` answer with it (exhaustive matches: a new strategy must pick one), and
//! [`crate::store::JobKeys::new`] takes it. Code that acts differently for the two layouts matches
//! on it, or on a type whose variants are its two (`JobKeys`, the runner's `Claimed`), so a third
//! layout would be listed by the compiler.

use serde::Serialize;

/// Which key layout a job uses (and a strategy writes).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// `{<prefix><job>}:state` ... (strategy lease).
    Lease,
    /// `<prefix><job>:runs` ... (strategies stream-id, idmp, script).
    ClaimOnly,
}

impl Layout {
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Lease => "lease",
            Layout::ClaimOnly => "claim-only",
        }
    }
}
