//! `f32` values held in memory, or lying where a mapped table keeps them.

use std::ops::Deref;
use std::sync::Arc;

/// Bytes that outlive their reader: a mapped or read table file.
pub type SharedBytes = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// A run of `f32` values: a vector, or a slice of a table's bytes that is
/// used where it lies (no copy, no fresh pages) when it is aligned and the
/// machine is little-endian, as the tables are.
#[derive(Clone)]
pub enum Floats {
    Owned(Vec<f32>),
    Shared { bytes: SharedBytes, start: usize, len: usize },
}

impl Floats {
    /// The little-endian values of `bytes[start..]`: borrowed in place when
    /// they can be, copied otherwise. Their byte length must be a multiple of 4.
    pub fn from_table(bytes: SharedBytes, start: usize) -> Result<Floats, String> {
        let all = (*bytes).as_ref();
        let tail = all.get(start..).ok_or_else(|| format!("its values would start at byte {start}, past its end"))?;
        if !tail.len().is_multiple_of(4) {
            return Err(format!("it holds {} bytes of values, not a whole number of them", tail.len()));
        }
        let len = tail.len() / 4;
        if cfg!(target_endian = "little") && bytemuck::try_cast_slice::<u8, f32>(tail).is_ok() {
            return Ok(Floats::Shared { bytes, start, len });
        }
        Ok(Floats::Owned(tail.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect()))
    }

    /// Whether the values are used in place in a table's bytes.
    pub fn is_shared(&self) -> bool {
        matches!(self, Floats::Shared { .. })
    }
}

impl Default for Floats {
    fn default() -> Floats {
        Floats::Owned(Vec::new())
    }
}

impl From<Vec<f32>> for Floats {
    fn from(values: Vec<f32>) -> Floats {
        Floats::Owned(values)
    }
}

impl Deref for Floats {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        match self {
            Floats::Owned(values) => values,
            // Alignment and length were checked when the values were shared.
            Floats::Shared { bytes, start, len } => bytemuck::cast_slice(&(**bytes).as_ref()[*start..start + len * 4]),
        }
    }
}

impl PartialEq for Floats {
    fn eq(&self, other: &Floats) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for Floats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Floats({} values{})", self.len(), if self.is_shared() { ", shared" } else { "" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes whose start is aligned for `f32`, whatever the allocator does.
    struct Aligned(Vec<f32>);

    impl AsRef<[u8]> for Aligned {
        fn as_ref(&self) -> &[u8] {
            bytemuck::cast_slice(&self.0)
        }
    }

    #[test]
    fn aligned_values_are_used_in_place_and_others_copied() {
        let values = [1.5f32, -2.0, 3.25];
        let mut words = vec![f32::from_le_bytes([9; 4])];
        words.extend(values.iter().map(|v| f32::from_le_bytes(v.to_le_bytes())));
        // A stray first byte, then the values: one byte off their alignment.
        let mut odd: Vec<f32> = vec![0.0; words.len() + 1];
        let odd_bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut odd);
        odd_bytes[1..1 + words.len() * 4].copy_from_slice(bytemuck::cast_slice(&words));
        let shared: SharedBytes = Arc::new(Aligned(words));
        let floats = Floats::from_table(Arc::clone(&shared), 4).unwrap();
        assert_eq!(&*floats, &values);
        assert!(floats.is_shared(), "aligned values are used where they lie");
        let odd: SharedBytes = Arc::new(Aligned(odd));
        let copied = Floats::from_table(Arc::clone(&odd), 5).unwrap_err();
        assert!(copied.contains("whole number"), "{copied}");
        let copied = Floats::from_table(Arc::new(OddTail(odd)), 5).unwrap();
        assert_eq!(&*copied, &values);
        assert!(!copied.is_shared(), "misaligned values are copied");
        assert!(Floats::from_table(Arc::clone(&shared), 6).unwrap_err().contains("whole number"));
        assert!(Floats::from_table(shared, 99).unwrap_err().contains("past its end"));
    }

    /// The odd buffer without its last three bytes, so that the values after byte 5 are whole.
    struct OddTail(SharedBytes);

    impl AsRef<[u8]> for OddTail {
        fn as_ref(&self) -> &[u8] {
            let all = (*self.0).as_ref();
            &all[..all.len() - 3]
        }
    }
}
