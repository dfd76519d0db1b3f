//! The keys of a snapshot document that the library does not model ([`Extra`]), kept verbatim
//! in little memory.

use std::borrow::Cow;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// Keys Paimon writers put in most snapshots: held without an allocation of their own.
const COMMON_KEYS: &[&str] = &[
    "baseManifestListSize",
    "deltaManifestListSize",
    "changelogManifestListSize",
    "changelogRecordCount",
    "nextRowId",
    "watermark",
    "logOffsets",
    "uuid",
    "writerVersion",
    "indexManifestSize",
    "properties",
];

/// Every other key of a snapshot document, with its JSON value, in key order (as
/// `serde_json::Map` orders them, so documents serialize alike).
///
/// A sorted vector rather than a map: expiry holds every expired snapshot while it
/// plans, and a `BTreeMap` node for the usual four keys took about 760 bytes a snapshot, this
/// about 230 (7 MB at 10,000 snapshots). Lookups scan a few keys.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extra(Vec<(Cow<'static, str>, Value)>);

fn intern(key: String) -> Cow<'static, str> {
    match COMMON_KEYS.iter().copied().find(|k| *k == key) {
        Some(k) => Cow::Borrowed(k),
        None => Cow::Owned(key),
    }
}

impl Extra {
    /// No keys.
    pub fn new() -> Extra {
        Extra::default()
    }

    fn position(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_ref().cmp(key))
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.position(key).ok().map(|i| &self.0[i].1)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_ok()
    }

    /// Sets `key` to `value`; returns the value it replaces.
    pub fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        match self.position(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                self.0.insert(i, (intern(key), value));
                None
            }
        }
    }

    /// Removes `key`; returns its value.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.position(key).ok().map(|i| self.0.remove(i).1)
    }

    /// Keeps only the keys `keep` accepts (and gives back the room of the others).
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &Value) -> bool) {
        self.0.retain(|(k, v)| keep(k, v));
        self.0.shrink_to_fit();
    }

    /// The keys and values, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// From keys and values in any order; a repeated key keeps its last value (as a map
    /// would).
    fn from_pairs(mut pairs: Vec<(Cow<'static, str>, Value)>) -> Extra {
        // Stable: equal keys stay in arrival order, and the last of each run is kept.
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Cow<'static, str>, Value)> = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            match out.last_mut() {
                Some(last) if last.0 == k => last.1 = v,
                _ => out.push((k, v)),
            }
        }
        out.shrink_to_fit();
        Extra(out)
    }
}

impl From<serde_json::Map<String, Value>> for Extra {
    fn from(map: serde_json::Map<String, Value>) -> Extra {
        Extra::from_pairs(map.into_iter().map(|(k, v)| (intern(k), v)).collect())
    }
}

impl std::ops::Index<&str> for Extra {
    type Output = Value;

    /// The value of `key`, `null` when absent (as indexing a JSON object gives).
    fn index(&self, key: &str) -> &Value {
        static NULL: Value = Value::Null;
        self.get(key).unwrap_or(&NULL)
    }
}

impl Serialize for Extra {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k.as_ref(), v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Extra {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Extra, D::Error> {
        struct ExtraVisitor;

        impl<'de> Visitor<'de> for ExtraVisitor {
            type Value = Extra;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Extra, A::Error> {
                let mut pairs = Vec::with_capacity(access.size_hint().unwrap_or(0).min(64));
                while let Some((k, v)) = access.next_entry::<String, Value>()? {
                    pairs.push((intern(k), v));
                }
                Ok(Extra::from_pairs(pairs))
            }
        }

        deserializer.deserialize_map(ExtraVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_keys_sorted_and_the_last_of_a_repeated_key() {
        let e: Extra =
            serde_json::from_str(r#"{"z":1,"nextRowId":2,"a":{"b":[1]},"z":3}"#).unwrap();
        assert_eq!(e.len(), 3);
        assert_eq!(
            e.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            vec!["a", "nextRowId", "z"]
        );
        assert_eq!(e["z"], json!(3));
        assert_eq!(e["missing"], Value::Null);
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"a":{"b":[1]},"nextRowId":2,"z":3}"#
        );
    }

    #[test]
    fn serializes_like_a_json_map() {
        let text = r#"{"uuid":"u","b":null,"baseManifestListSize":12,"a":1.5}"#;
        let map: serde_json::Map<String, Value> = serde_json::from_str(text).unwrap();
        let e: Extra = serde_json::from_str(text).unwrap();
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            serde_json::to_string(&map).unwrap()
        );
        assert_eq!(Extra::from(map), e);
    }

    #[test]
    fn insert_get_remove() {
        let mut e = Extra::new();
        assert!(e.is_empty());
        assert_eq!(e.insert("uuid".into(), json!("x")), None);
        assert_eq!(e.insert("k".into(), json!(1)), None);
        assert_eq!(e.insert("uuid".into(), json!("y")), Some(json!("x")));
        assert_eq!(e.get("uuid"), Some(&json!("y")));
        assert!(e.contains_key("k"));
        assert_eq!(e.remove("k"), Some(json!(1)));
        assert_eq!(e.remove("k"), None);
        assert_eq!(e.len(), 1);
        e.insert("a".into(), json!(2));
        e.retain(|k, _| k == "a");
        assert_eq!(e.iter().collect::<Vec<_>>(), vec![("a", &json!(2))]);
    }
}
