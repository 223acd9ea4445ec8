//! Tokens: what names one attempt of a run (only its holder may heartbeat or finish it) and one
//! holder of `migrate`'s lock. Defined down here because the store's own scripts take them.
//!
//! A token is a random UUID (122 random bits) written in base 62: 22 letters and digits. Every
//! ended attempt keeps its token in its `:results` member and its `:runs` entry for the whole
//! history, so its length is paid for by every run a store keeps: 22 characters instead of the
//! UUID's 32 hex digits save 10 bytes in each (and often a whole allocation size), without a
//! character a shell or a command line would treat specially (no `-` to read as a flag).

/// The digits of base 62, in ASCII order (so tokens of one length sort as their numbers do).
const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The length of a token this version makes: the base 62 digits a 128-bit number takes at most
/// (62^22 > 2^128). Earlier releases made 32 (hex); a shorter one is a hand-made token, or the
/// start of one (`claim` abbreviates tokens on a terminal).
pub const TOKEN_LEN: usize = 22;

/// A fresh token: a random UUID in 22 base 62 digits.
pub fn new_token() -> String {
    encode(uuid::Uuid::new_v4().as_u128())
}

/// `n` in exactly 22 base 62 digits, leading zeros kept.
fn encode(mut n: u128) -> String {
    let mut digits = [b'0'; TOKEN_LEN];
    for d in digits.iter_mut().rev() {
        *d = DIGITS[(n % 62) as usize];
        n /= 62;
    }
    String::from_utf8(digits.to_vec()).expect("base 62 digits are ASCII")
}

/// The UUID a token of this version was made from: Some for a 22-digit base 62 token, and for
/// earlier releases' tokens (a UUID's 32 hex digits); None for any other token (a hand-made one
/// given to `claim --token`).
pub fn token_uuid(token: &str) -> Option<uuid::Uuid> {
    if token.len() == TOKEN_LEN {
        let mut n: u128 = 0;
        for c in token.bytes() {
            let digit = DIGITS.iter().position(|&d| d == c)? as u128;
            n = n.checked_mul(62)?.checked_add(digit)?;
        }
        return Some(uuid::Uuid::from_u128(n));
    }
    uuid::Uuid::try_parse(token).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_22_letters_and_digits_and_unique() {
        let a = new_token();
        let b = new_token();
        assert_eq!(a.len(), 22);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric()), "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn a_token_gives_back_its_uuid() {
        for n in [0, 1, 61, 62, u128::MAX, uuid::Uuid::new_v4().as_u128()] {
            let token = encode(n);
            assert_eq!(token.len(), 22);
            assert_eq!(token_uuid(&token), Some(uuid::Uuid::from_u128(n)));
        }
        assert_eq!(encode(0), "0000000000000000000000");
        let hex = "4f1c0a2b3c4d4e5f8a9b0c1d2e3f4a5b";
        assert_eq!(token_uuid(hex), uuid::Uuid::try_parse(hex).ok());
        // 22 characters that are not base 62, or a number over 128 bits: no UUID.
        assert_eq!(token_uuid("skip:17962203000000000"), None);
        assert_eq!(token_uuid("zzzzzzzzzzzzzzzzzzzzzz"), None);
        assert_eq!(token_uuid("a1"), None);
    }
}
