//! What more than one command prints or reads, so that no command imports another
//! (tests/it/architecture.rs): a claim's and a token's answers, the run `wait` and `logs -f` await.

pub mod awaited;
pub mod claim_report;
pub mod token_report;
