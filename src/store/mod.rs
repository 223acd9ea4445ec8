//! Store formats 1 and 2: key names, the format key, and decoding what the keys hold. Each lease
//! store format is one module of [`lease`].
//! docs/store-format.md is the prose version of this module.

pub mod attempt;
pub mod calendar;
pub mod decode;
pub mod discover;
pub mod events;
pub mod format;
pub mod history;
pub mod job;
pub mod keys;
pub mod layout;
pub mod lease;
pub mod limit;
pub mod migrate;
pub mod names;
pub mod output;
pub mod pause;
pub mod read;
pub mod registry;
pub mod requests;
pub mod state;
pub mod token;
pub mod view;

pub use format::{STORE_FORMAT, StoreCheck};
pub use keys::{
    ClaimKeys, DEFAULT_PREFIX, JobKeys, LeaseFormat, LeaseKeys, format_key, validate_job_name,
    validate_prefix,
};
pub use layout::Layout;
pub use state::{RunKind, RunState, RunStatus};
