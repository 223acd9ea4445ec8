//! Decoding replies the same way everywhere: a reply that is not what docs/store-format.md
//! promises is an error naming its key (and field), never a panic or a silent default.

use redis::{FromRedisValue, Value};

use crate::error::{Error, Result};

/// Converts one reply of a pipeline, naming the key when it is not what the format promises.
pub fn decode<T: FromRedisValue>(key: &str, value: Value) -> Result<T> {
    if let Value::ServerError(e) = &value {
        return Err(if e.code() == "WRONGTYPE" {
            Error::WrongType {
                key: key.to_string(),
                found: "another type".into(),
                expected: "the type docs/store-format.md gives".into(),
            }
        } else {
            Error::redis(
                Some(e.code()),
                format!("{} on {key}", e.details().unwrap_or(e.code())),
            )
        });
    }
    T::from_redis_value(value).map_err(|e| Error::corrupt(key, e.to_string()))
}

/// A hash field that holds a decimal integer, as anarchon writes them: None when absent, an error
/// naming the key and the field when it holds anything else.
pub fn int_field(key: &str, field: &str, value: Option<&str>) -> Result<Option<i64>> {
    value
        .map(|v| {
            v.parse::<i64>()
                .map_err(|_| Error::corrupt(key, format!("field {field} is {v:?}, not an integer")))
        })
        .transpose()
}
