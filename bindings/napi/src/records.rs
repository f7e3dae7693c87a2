//! BND-2: the records that cross to JS (usage, costs, sums, run and compression results,
//! sub-agent records, event payloads) in one shape — the core's JSON with camelCase keys,
//! as index.d.ts declares them (generated from the same Rust types by scripts/gen-dts.js).
//! No hand copy: a record goes out as `to_js` of the core value and comes in through
//! `from_js` into the core type, so a field added in the core reaches JS unchanged.
//!
//! Values the schema leaves open pass unchanged: a tool result's `metadata` (the host's
//! JSON) and a child's `messages` (the runtime's own message JSON, as `historyJson()`).

use napi_ohos::bindgen_prelude::{FromNapiValue, TypeName, ValidateNapiValue};
use napi_ohos::{sys, ValueType};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Number, Value};

use crate::error::Thrown;

/// Keys whose values are not renamed (their schema is arbitrary JSON).
const OPAQUE: &[&str] = &["metadata", "messages"];

/// `snake_case` → `camelCase`.
pub fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `camelCase` → `snake_case`.
pub fn snake(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// 2^53 − 1: the largest integer a JS number holds exactly.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// Renames every object key of `value` with `rename_key` and passes each number through
/// `number`, leaving open values as they are.
fn rename(value: Value, rename_key: fn(&str) -> String, number: fn(Number) -> Number) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (key, v) in map {
                let v = if OPAQUE.contains(&key.as_str()) { v } else { rename(v, rename_key, number) };
                out.insert(rename_key(&key), v);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(|v| rename(v, rename_key, number)).collect()),
        Value::Number(n) => Value::Number(number(n)),
        other => other,
    }
}

/// Out to JS: an integer beyond 2^53 becomes a plain (rounded) number rather than the
/// BigInt napi would make of it — the declarations say `number`.
fn to_js_number(n: Number) -> Number {
    match n.as_f64() {
        Some(f) if !n.is_f64() && f.abs() > MAX_SAFE => Number::from_f64(f).unwrap_or(n),
        _ => n,
    }
}

/// In from JS: napi reads a whole number above 2^32 as a float; a whole float up to 2^53
/// is the integer it stands for (a cost's nanos, a large token count). Fractions stay
/// floats, so an integer field refuses them.
fn from_js_number(n: Number) -> Number {
    match n.as_f64() {
        Some(f) if n.is_f64() && f.fract() == 0.0 && (0.0..=MAX_SAFE).contains(&f) => Number::from(f as u64),
        Some(f) if n.is_f64() && f.fract() == 0.0 && (-MAX_SAFE..0.0).contains(&f) => Number::from(f as i64),
        _ => n,
    }
}

/// A core record as JS gets it: its JSON with camelCase keys.
pub fn to_js<T: Serialize>(record: &T) -> Value {
    rename(serde_json::to_value(record).unwrap_or(Value::Null), camel, to_js_number)
}

/// [`to_js`] as JSON text (an event's `payloadJson`).
pub fn to_js_json<T: Serialize>(record: &T) -> String {
    to_js(record).to_string()
}

/// A record JS handed in (camelCase keys) as the core type; a value of the wrong shape
/// throws `invalid_argument` naming `what`.
pub fn from_js<T: DeserializeOwned>(value: Value, what: &str) -> Result<T, Thrown> {
    serde_json::from_value(rename(value, snake, from_js_number))
        .map_err(|e| napi_ohos::Error::new("invalid_argument".to_owned(), format!("{what}: {e}")))
}

/// A record argument from JS: any JS object, read as JSON (`from_js` makes it the core
/// type). Anything but an object is refused by the argument check.
pub struct JsRecord(pub Value);

impl TypeName for JsRecord {
    fn type_name() -> &'static str {
        "Object"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ValidateNapiValue for JsRecord {}

impl FromNapiValue for JsRecord {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> napi_ohos::Result<Self> {
        // SAFETY: forwarded contract (a live env and a value of it).
        Ok(Self(unsafe { Value::from_napi_value(env, value)? }))
    }
}

// index.d.ts: the records' interfaces, generated (BND-2): scripts/gen-dts.js replaces the
// marker line by one interface per record, from the Rust types' JSON Schema that
// scripts/closed-sets prints (the core's `schema` feature), docs included.
/* ts
/*
 * Records. Everything the module hands over as data — event payloads, usages, costs,
 * usage sums, run and compression results, sub-agent records, session summaries — is one
 * of the interfaces below, generated from the Rust type that defines it: its JSON, keys
 * in camelCase (values left open, `Object`, pass as the host or the runtime wrote them).
 * The same record has the same shape wherever it appears, an event's payloadJson
 * included. A property declared `name?:` may be absent; one declared `T | null` is
 * present, null when it does not apply. Numbers are exact below 2^53.
 */

// records: generated by scripts/gen-dts.js
*/
