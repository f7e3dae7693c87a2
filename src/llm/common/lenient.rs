//! Lenient JSON readers for the providers' responses (LLM-2): each reads one JSON value in
//! one pass, borrowing strings that have no escapes, and is exactly as lenient as reading
//! the field out of a `serde_json::Value` was — a value of an unexpected type reads as
//! absent, a repeated key keeps its last value, and every byte (skipped values included)
//! must still be valid JSON. Used by the whole-completion and the chunk shapes.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

/// The fields of an object type, read one key at a time.
pub(crate) trait Fields<'de>: Default {
    /// Reads the value of `key` (or skips it).
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error>;
}

/// Visitor methods that accept a value without looking at it and return `$value`:
/// `accept!(v; visit_bool(bool), visit_unit())`.
macro_rules! accept {
    ($value:expr; $($method:ident($($ty:ty)?)),*) => {
        $(
            fn $method<E: de::Error>(self $(, _: $ty)?) -> Result<Self::Value, E> {
                Ok($value)
            }
        )*
    };
}

/// `visit_seq` and `visit_map` that check every element as JSON and return `$value`.
macro_rules! skip_containers {
    ($value:expr) => {
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            skip_seq(seq).map(|()| $value)
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            skip_map(map).map(|()| $value)
        }
    };
}

/// Any JSON value, read (so that it must be valid: UTF-8, escapes, number ranges, depth,
/// exactly what a `Value` accepts) and dropped without allocating.
pub(crate) struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SkipVisitor;
        impl<'de> Visitor<'de> for SkipVisitor {
            type Value = Skip;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            accept!(Skip; visit_bool(bool), visit_i64(i64), visit_u64(u64), visit_f64(f64), visit_str(&str), visit_unit());
            skip_containers!(Skip);
        }
        deserializer.deserialize_any(SkipVisitor)
    }
}

/// Whether a value is `null` (any other value is checked and dropped).
pub(crate) struct IsNull(pub(crate) bool);

impl<'de> Deserialize<'de> for IsNull {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IsNullVisitor;
        impl<'de> Visitor<'de> for IsNullVisitor {
            type Value = IsNull;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            accept!(IsNull(false); visit_bool(bool), visit_i64(i64), visit_u64(u64), visit_f64(f64), visit_str(&str));
            skip_containers!(IsNull(false));
            fn visit_unit<E: de::Error>(self) -> Result<IsNull, E> {
                Ok(IsNull(true))
            }
        }
        deserializer.deserialize_any(IsNullVisitor)
    }
}

/// A string field, borrowed when it has no escapes; any other value reads as absent.
#[derive(Default, Clone)]
pub(crate) struct Text<'a>(pub(crate) Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for TextVisitor<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            accept!(Text(None); visit_bool(bool), visit_i64(i64), visit_u64(u64), visit_f64(f64), visit_unit());
            skip_containers!(Text(None));
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Owned(v))))
            }
        }
        deserializer.deserialize_any(TextVisitor(PhantomData))
    }
}

/// A count: a `u64`, or absent for anything else (negative, fractional, a string).
#[derive(Default)]
pub(crate) struct Count(pub(crate) Option<u64>);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CountVisitor;
        impl<'de> Visitor<'de> for CountVisitor {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            accept!(Count(None); visit_bool(bool), visit_i64(i64), visit_f64(f64), visit_str(&str), visit_unit());
            skip_containers!(Count(None));
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Count, E> {
                Ok(Count(Some(v)))
            }
        }
        deserializer.deserialize_any(CountVisitor)
    }
}

/// Tool-call arguments: a JSON text (borrowed when it has no escapes), `null`, or another
/// value (some servers send an object), kept as its compact serialization.
pub(crate) enum Args<'a> {
    Text(Cow<'a, str>),
    Null,
    Json(Value),
}

impl<'a> Args<'a> {
    /// The argument text; `None` for `null`.
    pub(crate) fn into_text(self) -> Option<Cow<'a, str>> {
        match self {
            Args::Text(t) => Some(t),
            Args::Null => None,
            Args::Json(v) => Some(Cow::Owned(v.to_string())),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Args<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ArgsVisitor<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for ArgsVisitor<'a> {
            type Value = Args<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Args::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Args::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Args::Text(Cow::Owned(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Args::Null)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Args::Json(Value::Bool(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Args::Json(Value::from(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Args::Json(Value::from(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Args::Json(Value::from(v)))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                Value::deserialize(de::value::MapAccessDeserializer::new(map)).map(Args::Json)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Value::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(Args::Json)
            }
        }
        deserializer.deserialize_any(ArgsVisitor(PhantomData))
    }
}

/// An object of type `T`, or any other value (read as JSON and dropped).
pub(crate) enum Obj<T> {
    Object(T),
    Other,
}

impl<'de, T: Fields<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjVisitor<T>(PhantomData<T>);
        impl<'de, T: Fields<'de>> Visitor<'de> for ObjVisitor<T> {
            type Value = Obj<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            accept!(Obj::Other; visit_bool(bool), visit_i64(i64), visit_u64(u64), visit_f64(f64), visit_str(&str), visit_unit());
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                skip_seq(seq).map(|()| Obj::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut fields = T::default();
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    fields.field(&key.0, &mut map)?;
                }
                Ok(Obj::Object(fields))
            }
        }
        deserializer.deserialize_any(ObjVisitor(PhantomData))
    }
}

/// An object key, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// An array read element by element as `T`, or any other value (checked and dropped).
pub(crate) enum List<T> {
    Items(Vec<T>),
    NotArray,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ListVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ListVisitor<T> {
            type Value = List<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            accept!(List::NotArray; visit_bool(bool), visit_i64(i64), visit_u64(u64), visit_f64(f64), visit_str(&str), visit_unit());
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                skip_map(map).map(|()| List::NotArray)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(16));
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(List::Items(items))
            }
        }
        deserializer.deserialize_any(ListVisitor(PhantomData))
    }
}

/// An array whose first element is read as `T` and the rest checked and dropped (only the
/// first choice is used), or any other value.
pub(crate) enum First<T> {
    Items(Option<T>),
    NotArray,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for First<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FirstVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for FirstVisitor<T> {
            type Value = First<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            accept!(First::NotArray; visit_bool(bool), visit_i64(i64), visit_u64(u64), visit_f64(f64), visit_str(&str), visit_unit());
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                skip_map(map).map(|()| First::NotArray)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let first = seq.next_element()?;
                skip_seq(seq)?;
                Ok(First::Items(first))
            }
        }
        deserializer.deserialize_any(FirstVisitor(PhantomData))
    }
}

fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<Skip>()?.is_some() {}
    Ok(())
}

fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_key::<Skip>()?.is_some() {
        map.next_value::<Skip>()?;
    }
    Ok(())
}
