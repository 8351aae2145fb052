//! The digest that names a cached catalog: in its state file, in the
//! `--sha256` check, and as the ETag Catwalk gives it.

/// SHA-256 of `bytes`: the project's one hash function, ring's (the
/// cryptography rustls uses here, one library in the binary rather than
/// two), with assembly for CPUs with and without SHA extensions
/// (docs/BENCHMARKS.md).
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    let mut out = [0u8; 32];
    out.copy_from_slice(digest.as_ref());
    out
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    let digit = |d: u8| char::from(b"0123456789abcdef"[usize::from(d)]);
    bytes
        .iter()
        .flat_map(|&b| [digit(b >> 4), digit(b & 15)])
        .collect()
}

/// The bytes that `text` is the hex of (either case); `None` when it is
/// not hex pairs.
pub(crate) fn unhex(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    if !text.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16);
    text.chunks(2)
        .map(|pair| Some((digit(pair[0])? * 16 + digit(pair[1])?) as u8))
        .collect()
}

/// The ETag Catwalk sends for a body with this SHA-256: the quoted hex of its
/// first 16 bytes.
pub fn catwalk_etag(sha256: &[u8; 32]) -> String {
    format!("\"{}\"", hex(&sha256[..16]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_is_sha256() {
        // FIPS 180-2, appendix B.1.
        assert_eq!(
            hex(&sha256(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn catwalk_etag_is_first_16_bytes_of_sha256() {
        let digest = sha256(b"[]");
        assert_eq!(
            catwalk_etag(&digest),
            format!("\"{}\"", &hex(&digest)[..32])
        );
        assert_eq!(hex(&digest).len(), 64);
    }
}
