//! The checkpoint's byte format: the header (magic, version, dimension, payload
//! length), the payload's hash, and the versions this build writes and reads.

use super::CheckpointError;

/// The checkpoint format version this build writes and reads.
pub const CHECKPOINT_VERSION: u32 = 8;

/// The oldest checkpoint format version this build reads.
pub const OLDEST_CHECKPOINT_VERSION: u32 = 2;

/// The first eight bytes of every checkpoint.
pub const CHECKPOINT_MAGIC: [u8; 8] = *b"PBFCKPT\0";

/// Length of the fixed header before the payload.
pub const HEADER_LEN: usize = 32;

/// FNV-1a, 64 bits: a checksum against truncation and bit flips (not against
/// deliberate tampering).
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg_attr(not(feature = "serde"), allow(dead_code))]
/// The format version, the dimension and the payload of a checkpoint whose header,
/// length and hash check out.
pub(crate) fn split_header(bytes: &[u8]) -> Result<(u32, u32, &[u8]), CheckpointError> {
    let magic_len = bytes.len().min(8);
    if bytes[..magic_len] != CHECKPOINT_MAGIC[..magic_len] {
        return Err(CheckpointError::NotACheckpoint {
            found: bytes[..magic_len].to_vec(),
        });
    }
    if bytes.len() < HEADER_LEN {
        return Err(CheckpointError::Truncated {
            expected: HEADER_LEN as u64,
            found: bytes.len() as u64,
        });
    }
    let u32_at = |k: usize| u32::from_le_bytes(bytes[k..k + 4].try_into().expect("4 bytes"));
    let u64_at = |k: usize| u64::from_le_bytes(bytes[k..k + 8].try_into().expect("8 bytes"));
    let version = u32_at(8);
    if !(OLDEST_CHECKPOINT_VERSION..=CHECKPOINT_VERSION).contains(&version) {
        return Err(CheckpointError::UnsupportedVersion {
            found: version,
            supported: CHECKPOINT_VERSION,
        });
    }
    let dimension = u32_at(12);
    let length = u64_at(16);
    let stored = u64_at(24);
    let found = (bytes.len() - HEADER_LEN) as u64;
    if found < length {
        return Err(CheckpointError::Truncated {
            // Saturating: a corrupted length may be near u64::MAX (found by the
            // `checkpoint_load` fuzz target; see `a_huge_length_is_truncation`).
            expected: (HEADER_LEN as u64).saturating_add(length),
            found: bytes.len() as u64,
        });
    }
    if found > length {
        return Err(CheckpointError::TrailingBytes {
            extra: found - length,
        });
    }
    let payload = &bytes[HEADER_LEN..];
    let computed = fnv1a(payload);
    if computed != stored {
        return Err(CheckpointError::Corrupted { stored, computed });
    }
    Ok((version, dimension, payload))
}

/// The header for a payload.
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
pub(crate) fn header(dimension: usize, payload: &[u8]) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(&CHECKPOINT_MAGIC);
    h[8..12].copy_from_slice(&CHECKPOINT_VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&(dimension as u32).to_le_bytes());
    h[16..24].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    h[24..32].copy_from_slice(&fnv1a(payload).to_le_bytes());
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_errors_are_typed() {
        assert!(matches!(
            split_header(b"PBF"),
            Err(CheckpointError::Truncated {
                expected: 32,
                found: 3
            })
        ));
        assert!(matches!(
            split_header(b"hello world, this is not a checkpoint"),
            Err(CheckpointError::NotACheckpoint { .. })
        ));
        let payload = [1u8, 2, 3];
        let mut file = header(2, &payload).to_vec();
        file.extend_from_slice(&payload);
        assert_eq!(
            split_header(&file),
            Ok((CHECKPOINT_VERSION, 2, &payload[..]))
        );
        let mut second = file.clone();
        second[8] = 2;
        assert_eq!(split_header(&second), Ok((2, 2, &payload[..])));
        let mut flipped = file.clone();
        flipped[33] ^= 4;
        assert!(matches!(
            split_header(&flipped),
            Err(CheckpointError::Corrupted { .. })
        ));
        for other in [1, 9] {
            let mut file = file.clone();
            file[8] = other;
            assert_eq!(
                split_header(&file),
                Err(CheckpointError::UnsupportedVersion {
                    found: u32::from(other),
                    supported: CHECKPOINT_VERSION
                })
            );
        }
        assert_eq!(
            split_header(&file[..34]),
            Err(CheckpointError::Truncated {
                expected: 35,
                found: 34
            })
        );
        file.push(0);
        assert_eq!(
            split_header(&file),
            Err(CheckpointError::TrailingBytes { extra: 1 })
        );
    }

    #[test]
    fn a_huge_length_is_truncation() {
        // Regression (fuzz target `checkpoint_load`): a length field near u64::MAX
        // overflowed `HEADER_LEN + length` while the error was built.
        let mut file = header(3, &[]).to_vec();
        file[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        file.extend_from_slice(&[0; 10]);
        assert_eq!(
            split_header(&file),
            Err(CheckpointError::Truncated {
                expected: u64::MAX,
                found: 42
            })
        );
    }
}
