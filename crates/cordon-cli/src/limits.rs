//! The limits of a plan's run, as the flags `run`, `ask` and `chat` share: calls and loop
//! iterations (fuel), tool calls, and the memory its values may take.

use cordon::api::values::Limits;

#[derive(Debug, Clone, clap::Args)]
pub struct LimitArgs {
    /// Calls and loop iterations the run may make (each KiB it allocates counts as one more)
    #[arg(long, value_name = "N", default_value_t = Limits::default().fuel)]
    pub fuel: u64,

    /// Tool calls the run may make
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_tool_calls)]
    pub max_tool_calls: u32,

    /// Memory the run's values (strings, lists, tuples, records) may hold at once: bytes, or
    /// with K, M or G (`64M`, `2G`)
    #[arg(long, value_name = "SIZE", value_parser = size, default_value = "1G")]
    pub max_memory: u64,
}

impl LimitArgs {
    /// The limits these flags give, the others as by default.
    pub fn limits(&self) -> Limits {
        Limits {
            fuel: self.fuel,
            max_tool_calls: self.max_tool_calls,
            max_memory_bytes: self.max_memory,
            ..Limits::default()
        }
    }
}

/// A size in bytes: digits, then nothing, `K`, `M` or `G` (powers of 1,024; `KB`, `MiB` and
/// lower case too).
fn size(text: &str) -> Result<u64, String> {
    let bad = || format!("`{text}` is not a size: give bytes, or a number with K, M or G (`64M`)");
    let digits = text.trim().trim_end_matches(['B', 'b']).trim_end_matches(['i', 'I']);
    let (number, shift) = match digits.char_indices().last() {
        Some((at, 'k' | 'K')) => (&digits[..at], 10),
        Some((at, 'm' | 'M')) => (&digits[..at], 20),
        Some((at, 'g' | 'G')) => (&digits[..at], 30),
        _ => (digits, 0),
    };
    let n: u64 = number.parse().map_err(|_| bad())?;
    n.checked_mul(1 << shift).filter(|&bytes| bytes > 0).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::size;

    #[test]
    fn sizes_read_as_bytes_or_with_a_unit() {
        for (text, bytes) in [
            ("4096", 4096),
            ("64K", 64 << 10),
            ("64M", 64 << 20),
            ("2G", 2 << 30),
            ("512MiB", 512 << 20),
            ("1gb", 1 << 30),
        ] {
            assert_eq!(size(text).ok(), Some(bytes), "{text}");
        }
        for text in ["", "M", "-1M", "0", "1.5G", "1T", "99999999999G"] {
            assert!(size(text).is_err(), "{text}");
        }
    }
}
