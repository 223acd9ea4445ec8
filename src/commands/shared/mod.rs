//! What more than one command prints or reads, so that no command imports another
//! (tests/it/architecture.rs): a claim's and a token's answers, the run `wait` and `logs -f` await, what a run left
//! behind (`logs`, and top's logs view).

pub mod attempts;
pub mod awaited;
pub mod claim_report;
pub mod token_report;
