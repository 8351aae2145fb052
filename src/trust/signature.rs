//! Signed catalogs, for organisations that mirror the catalog: the mirror
//! signs what it serves with minisign (Ed25519, a detached `.minisig` file,
//! made by the `minisign` command or any compatible tool), and clients pin
//! the mirror's public keys (`CRUSH_PROVIDER_PUBLIC_KEY`, or
//! `options.provider_public_keys` in a JSON config). With a key pinned,
//! every source but the embedded snapshot must come with a valid signature
//! by one of them, whose trusted comment carries the signing time
//! (`timestamp:<unix seconds>`, minisign's default), so that an older
//! signed catalog cannot be replayed over a newer one. The cryptography is
//! the `minisign-verify` crate's.

use std::fmt;
use std::path::Path;

use minisign_verify::{PublicKey, Signature};

use crate::store::file;
use crate::store::state::rfc3339;

/// What is appended to a catalog's URL or path to find its signature.
pub(crate) const SIGNATURE_SUFFIX: &str = ".minisig";
/// Largest signature read: a minisign signature is about 300 bytes.
pub(crate) const MAX_SIGNATURE_BYTES: usize = 64 * 1024;

/// How far after this machine's clock a signing time may be: a day, for
/// clocks that are off and time zones written wrong.
pub(crate) const MAX_AHEAD: u64 = 24 * 60 * 60;

/// The environment variable that pins keys, separated by commas.
pub(crate) const KEYS_ENV: &str = "CRUSH_PROVIDER_PUBLIC_KEY";

/// The public keys a client trusts, at least one.
#[derive(Clone)]
pub struct TrustedKeys {
    keys: Vec<PublicKey>,
    entries: Vec<String>,
}

impl fmt::Debug for TrustedKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TrustedKeys").field(&self.entries).finish()
    }
}

impl TrustedKeys {
    /// The keys of `entries`, each a minisign public key given as its
    /// base64 line (`RW…`) or as the path of a `.pub` file; `None` when
    /// there are none. A bad entry is an error naming it: a pinned key
    /// must never be ignored.
    pub fn parse(entries: &[String]) -> Result<Option<TrustedKeys>, KeyError> {
        let entries: Vec<String> = (entries.iter().map(|e| e.trim().to_owned()))
            .filter(|e| !e.is_empty())
            .collect();
        let keys = entries
            .iter()
            .map(|entry| key(entry))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((!keys.is_empty()).then_some(TrustedKeys { keys, entries }))
    }

    /// The keys as they were given, to hand on to a helper process.
    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    /// Checks that `signature` (the text of a `.minisig` file) is a valid
    /// signature of `bytes` by one of the keys, and returns the signing
    /// time from its trusted comment; a time more than `MAX_AHEAD` after
    /// `now` (this machine's clock, seconds since the Unix epoch) is
    /// refused: recorded, it would make every honest catalog signed later
    /// look like a replay.
    pub fn verify(&self, bytes: &[u8], signature: &[u8], now: u64) -> Result<u64, SignatureError> {
        let signature = parse(signature)?;
        let mut error = SignatureError::UnknownKey;
        for key in &self.keys {
            match key.verify(bytes, &signature, false) {
                Ok(()) => {
                    let signed = timestamp(signature.trusted_comment())?;
                    if signed > now.saturating_add(MAX_AHEAD) {
                        let (signed, now) = (rfc3339(signed), rfc3339(now));
                        return Err(SignatureError::Future { signed, now });
                    }
                    return Ok(signed);
                }
                Err(minisign_verify::Error::UnexpectedKeyId) => {}
                // A pinned key's signature of the raw bytes: minisign's
                // legacy format, which signs what it is given rather than
                // its hash.
                Err(minisign_verify::Error::UnexpectedAlgorithm) => {
                    return Err(SignatureError::Legacy);
                }
                Err(_) => error = SignatureError::Invalid,
            }
        }
        Err(error)
    }
}

/// The key of one entry: its base64 line, else the `.pub` file it names.
fn key(entry: &str) -> Result<PublicKey, KeyError> {
    let entry_owned = || entry.to_owned();
    let e = match PublicKey::from_base64(entry) {
        Ok(key) => return Ok(key),
        Err(e) if !Path::new(entry).is_file() => e,
        Err(_) => {
            let unreadable = |why: String| KeyError::Unreadable {
                entry: entry_owned(),
                why,
            };
            let text = match file::read_regular(Path::new(entry), MAX_SIGNATURE_BYTES) {
                Ok(Some((bytes, _))) => String::from_utf8(bytes).map_err(|_| "it is not text"),
                Ok(None) => Err("it does not exist"),
                Err(e) => return Err(unreadable(e.to_string())),
            };
            let text = text.map_err(|why| unreadable(why.into()))?;
            return PublicKey::decode(&text).map_err(|e| KeyError::NotAKeyFile {
                entry: entry_owned(),
                why: describe(&e),
            });
        }
    };
    Err(KeyError::Neither {
        entry: entry_owned(),
        why: describe(&e),
    })
}

/// The id of the key that made `signature` (the text of a `.minisig`
/// file), as minisign shows it (`minisign public key 1A2B…`: 16 hex digits
/// of the little-endian number); `None` when it cannot be read.
pub(crate) fn key_id(signature: &[u8]) -> Option<String> {
    let line = std::str::from_utf8(signature).ok()?.lines().nth(1)?.trim();
    // The algorithm (2 bytes), then the key id (8): the first 16 base64
    // characters hold 12 bytes.
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let digits: Vec<u32> = (line.bytes().take(16))
        .map(|c| ALPHABET.iter().position(|&a| a == c).map(|d| d as u32))
        .collect::<Option<_>>()?;
    if digits.len() < 16 {
        return None;
    }
    let bytes: Vec<u8> = (digits.chunks(4))
        .map(|q| q.iter().fold(0, |n, &d| (n << 6) | d))
        .flat_map(|n: u32| [(n >> 16) as u8, (n >> 8) as u8, n as u8])
        .collect();
    let id = u64::from_le_bytes(bytes[2..10].try_into().ok()?);
    Some(format!("{id:016X}"))
}

/// Decodes the text of a `.minisig` file, refusing what it cannot read.
pub fn parse(signature: &[u8]) -> Result<Signature, SignatureError> {
    if signature.len() > MAX_SIGNATURE_BYTES {
        return Err(SignatureError::too_large());
    }
    let text = std::str::from_utf8(signature)
        .map_err(|_| SignatureError::Malformed("it is not text".into()))?;
    Signature::decode(text).map_err(|e| SignatureError::Malformed(describe(&e)))
}

/// The signing time in a trusted comment: the `timestamp:` field among
/// its tab-separated fields, as minisign writes it: digits, given once.
pub fn timestamp(trusted_comment: &str) -> Result<u64, SignatureError> {
    let mut times =
        (trusted_comment.split(['\t', ' '])).filter_map(|field| field.strip_prefix("timestamp:"));
    let time = times.next();
    if times.next().is_some() {
        let why = "its trusted comment has two timestamps".into();
        return Err(SignatureError::Malformed(why));
    }
    time.filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|t| t.parse().ok())
        .ok_or(SignatureError::NoTimestamp)
}

fn describe(e: &minisign_verify::Error) -> String {
    use minisign_verify::Error;
    match e {
        Error::InvalidEncoding => "invalid encoding".into(),
        Error::InvalidSignature => "invalid signature".into(),
        Error::IoError(e) => e.to_string(),
        Error::UnexpectedAlgorithm | Error::UnsupportedAlgorithm => {
            "an unsupported algorithm".into()
        }
        Error::UnexpectedKeyId => "made by another key".into(),
        Error::UnsupportedLegacyMode => "the legacy format, which is not accepted".into(),
    }
}

/// Why a pinned public key cannot be used: the entry as given, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// A `.pub` file that cannot be read.
    #[error("cannot read the public key file {entry}: {why}")]
    Unreadable {
        /// The path given.
        entry: String,
        /// Why, in words.
        why: String,
    },
    /// A file that is not a minisign public key file.
    #[error("{entry} is not a minisign public key file: {why}")]
    NotAKeyFile {
        /// The path given.
        entry: String,
        /// What is wrong with it, in words.
        why: String,
    },
    /// Neither a key nor a file there.
    #[error("{entry:?} is neither a minisign public key nor a readable .pub file: {why}")]
    Neither {
        /// The entry as given.
        entry: String,
        /// What is wrong with it as a key, in words.
        why: String,
    },
}

/// Why a signed source was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureError {
    /// There is no signature where there must be one.
    #[error("no signature: {0}")]
    Missing(String),
    /// The signature cannot be read.
    #[error("the signature cannot be read: {0}")]
    Malformed(String),
    /// None of the pinned keys made it.
    #[error("the signature was not made by a pinned key")]
    UnknownKey,
    /// A pinned key's signature, but not of these bytes.
    #[error("the signature does not match the catalog (altered, or signed for another file)")]
    Invalid,
    /// Minisign's legacy format (`minisign -S -l`), which signs the raw
    /// bytes: not accepted.
    #[error("the signature is in minisign's legacy format, which is not accepted")]
    Legacy,
    /// The trusted comment has no signing time, so a replay cannot be told.
    #[error("the signature's trusted comment has no timestamp")]
    NoTimestamp,
    /// Signed more than `MAX_AHEAD` after this machine's clock.
    #[error("it was signed at {signed}, more than a day after this machine's clock ({now})")]
    Future {
        /// When it says it was signed (RFC 3339).
        signed: String,
        /// The time here.
        now: String,
    },
}

impl SignatureError {
    /// A signature larger than [`MAX_SIGNATURE_BYTES`], which is not read.
    pub(crate) fn too_large() -> SignatureError {
        let limit = MAX_SIGNATURE_BYTES / 1024;
        SignatureError::Malformed(format!("it is larger than {limit} KiB"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_come_from_the_trusted_comment() {
        assert_eq!(
            timestamp("timestamp:1700000000\tfile:providers.json\thashed"),
            Ok(1_700_000_000)
        );
        assert_eq!(timestamp("file:x\ttimestamp:42"), Ok(42));
        assert_eq!(timestamp("file:x"), Err(SignatureError::NoTimestamp));
        assert_eq!(
            timestamp("timestamp:soon"),
            Err(SignatureError::NoTimestamp)
        );
        assert_eq!(timestamp(""), Err(SignatureError::NoTimestamp));
    }

    /// Only digits make a time: a sign, a fraction, a negative or one past
    /// u64 is none; two `timestamp:` fields are refused, rather than one
    /// taken while a person reading the comment takes the other.
    #[test]
    fn a_timestamp_is_digits_and_given_once() {
        for comment in [
            "timestamp:+1700000000",
            "timestamp:-1",
            "timestamp:1700000000.5",
            "timestamp:18446744073709551616",
            "timestamp: 1700000000",
            "timestamp:",
        ] {
            assert_eq!(
                timestamp(comment),
                Err(SignatureError::NoTimestamp),
                "{comment}"
            );
        }
        assert_eq!(timestamp("timestamp:18446744073709551615"), Ok(u64::MAX));
        for comment in [
            "timestamp:1700000000\ttimestamp:4102444800",
            "timestamp:4102444800 file:x timestamp:1700000000",
        ] {
            assert!(
                matches!(timestamp(comment), Err(SignatureError::Malformed(ref why)) if why.contains("two timestamps")),
                "{comment}: {:?}",
                timestamp(comment)
            );
        }
    }

    #[test]
    fn bad_keys_are_errors_naming_them() {
        assert!(TrustedKeys::parse(&[]).unwrap().is_none());
        assert!(TrustedKeys::parse(&[" ".into()]).unwrap().is_none());
        let err = TrustedKeys::parse(&["not-a-key".into()]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("\"not-a-key\" is neither a minisign public key"),
            "{err}"
        );
    }

    /// The key id a signature names is the one minisign prints for its
    /// key (`minisign public key 1A2B…` in the .pub file's comment).
    #[test]
    fn a_signature_names_its_key_as_minisign_does() {
        let minisign::KeyPair { pk, sk } =
            minisign::KeyPair::generate_unencrypted_keypair().unwrap();
        let signature = minisign::sign(
            Some(&pk),
            &sk,
            std::io::Cursor::new(b"[]"),
            Some("timestamp:1"),
            None,
        )
        .unwrap()
        .into_string();
        let id = key_id(signature.as_bytes()).unwrap();
        let comment = pk.to_box().unwrap().to_string();
        assert!(
            comment.contains(&format!("minisign public key: {id}"))
                || comment.contains(&format!("minisign public key {id}")),
            "{id}: {comment}"
        );
        assert_eq!(key_id(b"untrusted comment: x\n"), None);
        assert_eq!(key_id(b"a\n!!!!!!!!!!!!!!!!\n"), None);
    }

    #[test]
    fn garbage_is_a_malformed_signature() {
        for bad in [
            &b""[..],
            b"\xff\xfe",
            b"untrusted comment: x\n",
            &[b'a'; MAX_SIGNATURE_BYTES + 1],
        ] {
            assert!(
                matches!(parse(bad), Err(SignatureError::Malformed(_))),
                "{bad:?}"
            );
        }
    }
}
