//! A message object read as raw members, for the reference path of classification.

use serde::Deserialize;
use serde_json::value::RawValue;

/// The members of a message object that classification reads, unread; a member written twice
/// counts with its last value, as in a `serde_json::Value`.
#[derive(Default)]
pub(super) struct RawMembers<'a> {
    pub(super) jsonrpc: Option<&'a RawValue>,
    pub(super) id: Option<&'a RawValue>,
    pub(super) method: Option<&'a RawValue>,
    pub(super) params: Option<&'a RawValue>,
}

impl<'de> Deserialize<'de> for RawMembers<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;

        impl<'de> serde::de::Visitor<'de> for MembersVisitor {
            type Value = RawMembers<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut members = RawMembers::default();
                while let Some(name) = map.next_key::<MemberName>()? {
                    let slot = match name {
                        MemberName::Jsonrpc => &mut members.jsonrpc,
                        MemberName::Id => &mut members.id,
                        MemberName::Method => &mut members.method,
                        MemberName::Params => &mut members.params,
                        MemberName::Other => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = Some(map.next_value()?);
                }
                Ok(members)
            }
        }

        deserializer.deserialize_map(MembersVisitor)
    }
}

/// A member's name. Read as bytes, so that a name which is not valid Unicode (a lone
/// surrogate escape) is one more unknown member rather than an unreadable message.
enum MemberName {
    Jsonrpc,
    Id,
    Method,
    Params,
    Other,
}

impl<'de> Deserialize<'de> for MemberName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameVisitor;

        impl serde::de::Visitor<'_> for NameVisitor {
            type Value = MemberName;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }

            fn visit_bytes<E: serde::de::Error>(self, name: &[u8]) -> Result<MemberName, E> {
                Ok(match name {
                    b"jsonrpc" => MemberName::Jsonrpc,
                    b"id" => MemberName::Id,
                    b"method" => MemberName::Method,
                    b"params" => MemberName::Params,
                    _ => MemberName::Other,
                })
            }

            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<MemberName, E> {
                self.visit_bytes(name.as_bytes())
            }
        }

        deserializer.deserialize_bytes(NameVisitor)
    }
}
