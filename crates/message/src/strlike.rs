//! What [`crate::Id`] and [`crate::Stamp`] share as types that stand for a
//! string: equality with `str` / `&str` / `String` both ways, and
//! serialising as that string.

/// Implements, for `$ty` (which has `fn with_str(&self, f) -> R` and
/// `From<&str>` / `From<String>`): `PartialEq` with `str`, `&str` and
/// `String` in both directions, `Serialize` as the string, and
/// `Deserialize` from a string (`$expecting` names it in errors).
macro_rules! str_like {
    ($ty:ty, $expecting:literal) => {
        $crate::strlike::str_like!(@eq $ty; str, &str, String);

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.with_str(|text| s.serialize_str(text))
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Text;

                impl serde::de::Visitor<'_> for Text {
                    type Value = $ty;

                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str($expecting)
                    }

                    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<$ty, E> {
                        Ok(<$ty>::from(s))
                    }

                    fn visit_string<E: serde::de::Error>(self, s: String) -> Result<$ty, E> {
                        Ok(<$ty>::from(s))
                    }
                }

                d.deserialize_str(Text)
            }
        }
    };
    (@eq $ty:ty; $($other:ty),*) => {$(
        impl PartialEq<$other> for $ty {
            fn eq(&self, other: &$other) -> bool {
                self.with_str(|s| s == AsRef::<str>::as_ref(other))
            }
        }

        impl PartialEq<$ty> for $other {
            fn eq(&self, other: &$ty) -> bool {
                other == self
            }
        }
    )*};
}

pub(crate) use str_like;
