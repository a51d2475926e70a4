use std::fmt;
use std::str::FromStr;

/// An Ethernet MAC address.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    pub const BROADCAST: MacAddr = MacAddr([0xff; 6]);

    /// True for a multicast (and so broadcast) address: such a source MAC is invalid.
    pub fn is_multicast(&self) -> bool {
        self.0[0] & 1 == 1
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[0], b[1], b[2], b[3], b[4], b[5])
    }
}

impl fmt::Debug for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseMacError(pub String);

impl fmt::Display for ParseMacError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not a MAC address: write six hex bytes like 02:00:00:00:00:01", self.0)
    }
}

impl std::error::Error for ParseMacError {}

impl FromStr for MacAddr {
    type Err = ParseMacError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseMacError(s.to_owned());
        let parts: Vec<&str> = s.split([':', '-']).collect();
        if parts.len() != 6 {
            return Err(err());
        }
        let mut mac = [0u8; 6];
        for (byte, part) in mac.iter_mut().zip(parts) {
            if part.is_empty() || part.len() > 2 {
                return Err(err());
            }
            *byte = u8::from_str_radix(part, 16).map_err(|_| err())?;
        }
        Ok(MacAddr(mac))
    }
}

impl schemars::JsonSchema for MacAddr {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "MacAddr".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A MAC address, six hex bytes separated by colons",
            "type": "string",
            "pattern": "^([0-9a-f]{2}:){5}[0-9a-f]{2}$"
        })
    }
}

impl serde::Serialize for MacAddr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The inverse of `Serialize`: the address's text, as `FromStr` reads it.
impl<'de> serde::Deserialize<'de> for MacAddr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<MacAddr, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mac_reads_back_from_what_it_writes() {
        use serde::de::value::{Error, StrDeserializer};
        use serde::Deserialize;
        let mac = MacAddr([0x02, 0, 0xab, 0xcd, 0xef, 0x01]);
        // Serialize writes the Display text (collect_str).
        let text = mac.to_string();
        assert_eq!(MacAddr::deserialize(StrDeserializer::<Error>::new(&text)), Ok(mac));
        let refused = MacAddr::deserialize(StrDeserializer::<Error>::new("02:00")).unwrap_err().to_string();
        assert!(refused.starts_with("\"02:00\" is not a MAC address"), "{refused}");
    }

    #[test]
    fn parses_and_prints() {
        let m: MacAddr = "02:0A:ff:00:00:01".parse().unwrap();
        assert_eq!(m.0, [2, 10, 255, 0, 0, 1]);
        assert_eq!(m.to_string(), "02:0a:ff:00:00:01");
        assert_eq!("02-00-00-00-00-01".parse::<MacAddr>().unwrap().0[0], 2);
    }

    #[test]
    fn rejects_garbage() {
        for bad in ["", "02:00:00:00:00", "02:00:00:00:00:00:00", "0g:00:00:00:00:00", "002:00:00:00:00:00"] {
            assert!(bad.parse::<MacAddr>().is_err(), "{bad}");
        }
    }

    #[test]
    fn multicast_bit() {
        assert!(MacAddr::BROADCAST.is_multicast());
        assert!(!MacAddr([2, 0, 0, 0, 0, 1]).is_multicast());
    }
}
