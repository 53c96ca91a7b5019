//! Byte sizes and durations as they are written in workload files and on the command line.
//!
//! Sizes take fio's binary suffixes: `4k`, `64KiB`, `1m`, `2G` (k = 1024). A bare number is bytes.
//! Durations take `us`, `ms`, `s`, `m`, `h`: `500ms`, `30s`, `15m`; a bare number is seconds.
//! In results (JSON), durations are plain seconds with a fraction: [`secs`] and [`opt_secs`].

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// A number of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bytes(pub u64);

impl Bytes {
    pub const KIB: u64 = 1024;
    pub const MIB: u64 = 1024 * 1024;
    pub const GIB: u64 = 1024 * 1024 * 1024;

    pub fn get(self) -> u64 {
        self.0
    }
}

impl FromStr for Bytes {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
        let (num, suffix) = t.split_at(split);
        if num.is_empty() {
            return Err(format!("`{s}` is not a size (expected e.g. 4096, 4k, 64KiB, 1g)"));
        }
        let mult = match suffix.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kb" | "kib" => Self::KIB,
            "m" | "mb" | "mib" => Self::MIB,
            "g" | "gb" | "gib" => Self::GIB,
            "t" | "tb" | "tib" => Self::GIB * 1024,
            other => return Err(format!("`{s}` has an unknown size suffix `{other}` (use k, m, g or t)")),
        };
        let value = if num.contains('.') {
            let f: f64 = num.parse().map_err(|_| format!("`{s}` is not a size"))?;
            (f * mult as f64).round() as u64
        } else {
            let n: u64 = num.parse().map_err(|_| format!("`{s}` is not a size"))?;
            n.checked_mul(mult).ok_or_else(|| format!("`{s}` is too large"))?
        };
        Ok(Bytes(value))
    }
}

impl fmt::Display for Bytes {
    /// The shortest exact binary form: `4k`, `1m`, `1536k`, `100`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        for (unit, suffix) in [
            (Self::GIB * 1024, "t"),
            (Self::GIB, "g"),
            (Self::MIB, "m"),
            (Self::KIB, "k"),
        ] {
            if n >= unit && n.is_multiple_of(unit) {
                return write!(f, "{}{suffix}", n / unit);
            }
        }
        write!(f, "{n}")
    }
}

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0 < Self::KIB || !self.0.is_multiple_of(Self::KIB) {
            s.serialize_u64(self.0)
        } else {
            s.serialize_str(&self.to_string())
        }
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NumOrStr::<Bytes>(std::marker::PhantomData))
    }
}

/// A span of time, written `30s`, `500ms`, `15m`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span(pub Duration);

impl Span {
    pub fn get(self) -> Duration {
        self.0
    }
}

impl FromStr for Span {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
        let (num, suffix) = t.split_at(split);
        let value: f64 = num
            .parse()
            .map_err(|_| format!("`{s}` is not a duration (expected e.g. 30s, 500ms, 15m)"))?;
        let secs = match suffix.trim() {
            "" | "s" | "sec" => value,
            "us" => value / 1e6,
            "ms" => value / 1e3,
            "m" | "min" => value * 60.0,
            "h" => value * 3600.0,
            other => {
                return Err(format!(
                    "`{s}` has an unknown time unit `{other}` (use us, ms, s, m or h)"
                ))
            }
        };
        if !secs.is_finite() || secs < 0.0 {
            return Err(format!("`{s}` is not a valid duration"));
        }
        if secs > Span::LONGEST.as_secs_f64() {
            return Err(format!("`{s}` is too long: fslab takes durations up to 10 years"));
        }
        Ok(Span(Duration::from_secs_f64(secs)))
    }
}

impl Span {
    /// The longest duration fslab takes: far beyond any run, and short enough that adding it
    /// to a clock reading or multiplying it by a few thousand repeats cannot overflow.
    pub const LONGEST: Duration = Duration::from_secs(10 * 365 * 24 * 3600);
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let us = self.0.as_micros();
        if us == 0 {
            write!(f, "0s")
        } else if us.is_multiple_of(1_000_000) {
            write!(f, "{}s", us / 1_000_000)
        } else if us.is_multiple_of(1000) {
            write!(f, "{}ms", us / 1000)
        } else {
            write!(f, "{us}us")
        }
    }
}

impl Serialize for Span {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Span {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NumOrStr::<Span>(std::marker::PhantomData))
    }
}

/// A size is written as a number of bytes, or as text with a unit (`4k`, `1g`).
impl schemars::JsonSchema for Bytes {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Bytes".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "bytes: a number, or text with a binary unit (k, m, g, t: 1024-based), e.g. \"4k\"",
            "type": ["integer", "string"],
            "minimum": 0
        })
    }
}

/// A span of time is written as seconds, or as text with a unit (`30s`, `500ms`, `15m`).
impl schemars::JsonSchema for Span {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Span".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "a duration: seconds as a number, or text with a unit (us, ms, s, m, h), e.g. \"30s\"",
            "type": ["number", "string"],
            "minimum": 0
        })
    }
}

/// Durations as seconds with a fraction, in JSON.
pub mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom)
    }
}

/// Optional durations as seconds with a fraction, in JSON.
pub mod opt_secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<f64>::deserialize(d)?
            .map(|v| Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// An optional fraction written as a percentage: `"2%"` (or a plain number, 0.02), written back
/// as `"2%"`.
pub mod opt_fraction {
    use serde::{de, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(f) => s.serialize_some(&format!("{}%", f * 100.0)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Number(f64),
            Text(String),
        }
        let fraction = match Option::<Written>::deserialize(d)? {
            None => return Ok(None),
            Some(Written::Number(f)) => f,
            Some(Written::Text(t)) => match t.trim().strip_suffix('%') {
                Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
                None => t.trim().parse::<f64>(),
            }
            .map_err(|_| de::Error::custom(format!("`{t}` is not a percentage (write e.g. \"2%\")")))?,
        };
        if !(fraction.is_finite() && fraction > 0.0 && fraction < 1.0) {
            return Err(de::Error::custom(format!(
                "{}% is not a percentage above 0 and below 100",
                fraction * 100.0
            )));
        }
        Ok(Some(fraction))
    }
}

/// Accepts either a string to parse or a plain non-negative number (bytes or seconds).
struct NumOrStr<T>(std::marker::PhantomData<T>);

impl<T: FromStr<Err = String>> de::Visitor<'_> for NumOrStr<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number or a string with a unit")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        v.parse().map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        v.to_string().parse().map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        if v < 0 {
            return Err(E::custom(format!("{v} is negative")));
        }
        self.visit_u64(v as u64)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        v.to_string().parse().map_err(E::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_too_long_for_a_clock_is_refused_not_a_panic() {
        for text in ["1e30", "18446744073709551616", "315360001s", "5256001m"] {
            assert!(text.parse::<Span>().is_err(), "{text}");
        }
        let e = "18446744073709551616".parse::<Span>().unwrap_err();
        assert!(e.contains("too long"), "{e}");
        let w: Result<std::collections::BTreeMap<String, Span>, _> = toml::from_str("t = 1e30");
        assert!(w.unwrap_err().to_string().contains("too long"));
        assert!("315360000s".parse::<Span>().is_ok(), "ten years is the longest");
    }

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!("4096".parse::<Bytes>().unwrap(), Bytes(4096));
        assert_eq!("4k".parse::<Bytes>().unwrap(), Bytes(4096));
        assert_eq!("64KiB".parse::<Bytes>().unwrap(), Bytes(65536));
        assert_eq!("1M".parse::<Bytes>().unwrap(), Bytes(1 << 20));
        assert_eq!("2g".parse::<Bytes>().unwrap(), Bytes(2 << 30));
        assert_eq!("1.5k".parse::<Bytes>().unwrap(), Bytes(1536));
        assert!("4q".parse::<Bytes>().unwrap_err().contains("unknown size suffix `q`"));
        assert!("k".parse::<Bytes>().is_err());
    }

    #[test]
    fn sizes_print_in_their_shortest_exact_form() {
        assert_eq!(Bytes(4096).to_string(), "4k");
        assert_eq!(Bytes(1536).to_string(), "1536");
        assert_eq!(Bytes(3 << 20).to_string(), "3m");
        assert_eq!(Bytes(100).to_string(), "100");
    }

    #[test]
    fn durations_parse_and_print() {
        assert_eq!("30s".parse::<Span>().unwrap().0, Duration::from_secs(30));
        assert_eq!("500ms".parse::<Span>().unwrap().0, Duration::from_millis(500));
        assert_eq!("15m".parse::<Span>().unwrap().0, Duration::from_secs(900));
        assert_eq!("2".parse::<Span>().unwrap().0, Duration::from_secs(2));
        assert_eq!(Span(Duration::from_millis(1500)).to_string(), "1500ms");
        assert!("10 parsecs".parse::<Span>().is_err());
    }
}
