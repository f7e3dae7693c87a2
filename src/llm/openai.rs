//! OpenAI-compatible Chat Completions: request bodies and response parsing (LLM-2).
//! DeepSeek, Qwen (DashScope compatible mode), Moonshot, Zhipu GLM and Ollama speak the
//! same shape with small extensions handled here (`reasoning_content`, cache-hit fields).
//!
//! Responses are read into typed wire structs in one pass, borrowing every string that
//! has no escapes; no `serde_json::Value` tree is built for a completion. The structs are
//! exactly as lenient as reading the fields out of a `Value` was: a field of an
//! unexpected type reads as absent, a repeated key takes its last value, and every byte
//! of the body (fields we do not read included) must still be valid JSON, so a body is
//! accepted or rejected exactly as before. `Value` remains only on cold paths: error
//! objects, and tool arguments sent as a JSON object instead of a JSON text (kept in their
//! compact serialization, as before).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

pub use super::classify::{classify_error_object, classify_http_error, classify_status, parse_retry_after, retry_after_ms};
use super::client::{ChatRequest, ChatResponse};
pub use super::stream::parse_stream;
use super::{LlmError, ModelConfig};
use crate::history::{Message, ModelUsage, ToolCall};

/// Builds the JSON body of a chat completions request from scratch (typed wire structs,
/// [`wire::encode_body`](super::wire::encode_body)).
pub fn build_request_body(config: &ModelConfig, request: &ChatRequest<'_>) -> String {
    super::wire::encode_body(config, request)
}

/// Parses a non-streaming response body.
pub fn parse_response(body: &[u8]) -> Result<ChatResponse, LlmError> {
    let completion: Obj<CompletionWire<'_>> = serde_json::from_slice(body).map_err(|e| json_error("body", &e))?;
    // Not an object: no field can be read.
    let Obj::Object(completion) = completion else { return Err(LlmError::MalformedResponse("no choices".into())) };
    if let Some(err) = completion.error.filter(|e| !e.is_null()) {
        // Some providers answer HTTP 200 with an error object.
        return Err(classify_error_object(200, &err));
    }
    let choice = match completion.choices {
        Some(First::Items(first)) => first,
        // DashScope-native style `{"code", "message"}` without choices is an error too;
        // the whole object is classified (a cold path: the body is read again as a tree).
        None if completion.code_not_null => {
            let value: Value = serde_json::from_slice(body).map_err(|e| json_error("body", &e))?;
            return Err(classify_error_object(200, &value));
        }
        _ => return Err(LlmError::MalformedResponse("no choices".into())),
    };
    let choice = choice.ok_or_else(|| LlmError::MalformedResponse("no choices".into()))?;
    let Obj::Object(ChoiceWire { message: Some(Obj::Object(message)), finish_reason }) = choice else {
        return Err(LlmError::MalformedResponse("choice has no message".into()));
    };
    let content = message.content.0.map(Cow::into_owned);
    // `reasoning_content` (DeepSeek, Qwen, GLM, Kimi) wins over `reasoning` (Ollama, vLLM),
    // even when it is empty.
    let reasoning = message.reasoning_content.0.or(message.reasoning.0).filter(|r| !r.is_empty()).map(Cow::into_owned);
    let mut tool_calls = Vec::new();
    if let Some(List::Items(calls)) = message.tool_calls {
        tool_calls.reserve_exact(calls.len());
        for call in calls {
            tool_calls.push(tool_call(call)?);
        }
    }
    let usage = match completion.usage {
        Some(Obj::Object(usage)) => Some(usage.into_usage()),
        _ => None,
    };
    Ok(ChatResponse {
        message: finish_message(content, tool_calls, reasoning),
        usage,
        finish_reason: finish_reason.0.map(Cow::into_owned),
    })
}

/// The assistant message of a completion; shared with the stream parser so both paths
/// build identical messages. Empty text beside tool calls is dropped.
pub(crate) fn finish_message(content: Option<String>, tool_calls: Vec<ToolCall>, reasoning: Option<String>) -> Message {
    Message::Assistant { content: content.filter(|c| !c.is_empty() || tool_calls.is_empty()), tool_calls, reasoning }
}

/// A JSON error without the offending input (which could echo anything, a key included).
pub(crate) fn json_error(what: &str, e: &serde_json::Error) -> LlmError {
    LlmError::MalformedResponse(format!("{what} is not valid JSON ({:?} error at line {} column {})", e.classify(), e.line(), e.column()))
}

fn tool_call(call: Obj<CallWire<'_>>) -> Result<ToolCall, LlmError> {
    let Obj::Object(call) = call else { return Err(LlmError::MalformedResponse("tool call without function".into())) };
    let function = call.function.ok_or_else(|| LlmError::MalformedResponse("tool call without function".into()))?;
    let (name, arguments) = match function {
        Obj::Object(f) => (f.name.0, f.arguments),
        Obj::Other => (None, None),
    };
    let name = name.filter(|n| !n.is_empty()).ok_or_else(|| LlmError::MalformedResponse("tool call without name".into()))?;
    // Arguments are a JSON text per the spec (kept verbatim, even when it is not valid
    // JSON: the runtime answers that with a tool error); some servers send an object.
    let arguments = arguments.and_then(Args::into_text).map_or_else(|| "{}".to_owned(), Cow::into_owned);
    // A missing id is filled in by the runtime from its id generator.
    let id = call.id.0.map(Cow::into_owned).unwrap_or_default();
    Ok(ToolCall { id, name: name.into_owned(), arguments })
}

/// Parses a `usage` object, including cached and reasoning token details. Cached tokens:
/// `prompt_tokens_details.cached_tokens` (OpenAI, Qwen, GLM, DeepSeek), DeepSeek's
/// `prompt_cache_hit_tokens`, or a top-level `cached_tokens` (Moonshot). A missing
/// `total_tokens` is prompt + completion, saturating at `u64::MAX` (the numbers come from
/// the provider and are not trusted to be small). A value that is not an object gives
/// zero counts.
pub fn parse_usage(usage: &Value) -> ModelUsage {
    match Obj::<UsageWire>::deserialize(usage) {
        Ok(Obj::Object(usage)) => usage.into_usage(),
        _ => UsageWire::default().into_usage(),
    }
}

// ---------------------------------------------------------------------------------------
// Response wire shapes, shared with the stream parser. Each object type lists the fields
// read; `Fields::field` is called once per key in document order, so a repeated key keeps
// its last value (as a `Value` map did), and every other key's value is checked as JSON
// without being kept (`Skip`).

/// A whole `chat.completion`.
#[derive(Default)]
struct CompletionWire<'a> {
    /// `error`, including an explicit `null` (a cold path: kept as a tree).
    error: Option<Value>,
    choices: Option<First<Obj<ChoiceWire<'a>>>>,
    /// A top-level `code` that is present and not `null`.
    code_not_null: bool,
    usage: Option<Obj<UsageWire>>,
}

#[derive(Default)]
struct ChoiceWire<'a> {
    message: Option<Obj<MessageWire<'a>>>,
    finish_reason: Text<'a>,
}

#[derive(Default)]
struct MessageWire<'a> {
    content: Text<'a>,
    reasoning_content: Text<'a>,
    reasoning: Text<'a>,
    tool_calls: Option<List<Obj<CallWire<'a>>>>,
}

#[derive(Default)]
struct CallWire<'a> {
    id: Text<'a>,
    function: Option<Obj<FunctionWire<'a>>>,
}

#[derive(Default)]
struct FunctionWire<'a> {
    name: Text<'a>,
    arguments: Option<Args<'a>>,
}

/// A `usage` object: the counts we read, each a `u64` or absent.
#[derive(Default)]
pub(crate) struct UsageWire {
    prompt_tokens: Count,
    completion_tokens: Count,
    total_tokens: Count,
    prompt_tokens_details: Option<Obj<DetailsWire>>,
    completion_tokens_details: Option<Obj<DetailsWire>>,
    prompt_cache_hit_tokens: Count,
    cached_tokens: Count,
}

/// `prompt_tokens_details` / `completion_tokens_details`.
#[derive(Default)]
struct DetailsWire {
    cached_tokens: Count,
    reasoning_tokens: Count,
}

impl UsageWire {
    pub(crate) fn into_usage(self) -> ModelUsage {
        let prompt = self.prompt_tokens.0.unwrap_or(0);
        let completion = self.completion_tokens.0.unwrap_or(0);
        let detail = |d: Option<Obj<DetailsWire>>, pick: fn(DetailsWire) -> Count| match d {
            Some(Obj::Object(d)) => pick(d).0,
            _ => None,
        };
        ModelUsage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: self.total_tokens.0.unwrap_or(prompt.saturating_add(completion)),
            cached_tokens: detail(self.prompt_tokens_details, |d| d.cached_tokens)
                .or(self.prompt_cache_hit_tokens.0)
                .or(self.cached_tokens.0),
            reasoning_tokens: detail(self.completion_tokens_details, |d| d.reasoning_tokens),
            raw: Map::new(),
        }
    }
}

/// The fields of an object type, read one key at a time.
pub(crate) trait Fields<'de>: Default {
    /// Reads the value of `key` (or skips it).
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error>;
}

impl<'de: 'a, 'a> Fields<'de> for CompletionWire<'a> {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "error" => self.error = Some(map.next_value()?),
            "choices" => self.choices = Some(map.next_value()?),
            "code" => self.code_not_null = !map.next_value::<IsNull>()?.0,
            "usage" => self.usage = Some(map.next_value()?),
            _ => map.next_value::<Skip>().map(drop)?,
        }
        Ok(())
    }
}

impl<'de: 'a, 'a> Fields<'de> for ChoiceWire<'a> {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "message" => self.message = Some(map.next_value()?),
            "finish_reason" => self.finish_reason = map.next_value()?,
            _ => map.next_value::<Skip>().map(drop)?,
        }
        Ok(())
    }
}

impl<'de: 'a, 'a> Fields<'de> for MessageWire<'a> {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "content" => self.content = map.next_value()?,
            "reasoning_content" => self.reasoning_content = map.next_value()?,
            "reasoning" => self.reasoning = map.next_value()?,
            "tool_calls" => self.tool_calls = Some(map.next_value()?),
            _ => map.next_value::<Skip>().map(drop)?,
        }
        Ok(())
    }
}

impl<'de: 'a, 'a> Fields<'de> for CallWire<'a> {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "id" => self.id = map.next_value()?,
            "function" => self.function = Some(map.next_value()?),
            _ => map.next_value::<Skip>().map(drop)?,
        }
        Ok(())
    }
}

impl<'de: 'a, 'a> Fields<'de> for FunctionWire<'a> {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "name" => self.name = map.next_value()?,
            "arguments" => self.arguments = Some(map.next_value()?),
            _ => map.next_value::<Skip>().map(drop)?,
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for UsageWire {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "prompt_tokens" => self.prompt_tokens = map.next_value()?,
            "completion_tokens" => self.completion_tokens = map.next_value()?,
            "total_tokens" => self.total_tokens = map.next_value()?,
            "prompt_tokens_details" => self.prompt_tokens_details = Some(map.next_value()?),
            "completion_tokens_details" => self.completion_tokens_details = Some(map.next_value()?),
            "prompt_cache_hit_tokens" => self.prompt_cache_hit_tokens = map.next_value()?,
            "cached_tokens" => self.cached_tokens = map.next_value()?,
            _ => map.next_value::<Skip>().map(drop)?,
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for DetailsWire {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "cached_tokens" => self.cached_tokens = map.next_value()?,
            "reasoning_tokens" => self.reasoning_tokens = map.next_value()?,
            _ => map.next_value::<Skip>().map(drop)?,
        }
        Ok(())
    }
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
struct IsNull(bool);

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
#[derive(Default)]
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
pub(crate) struct Count(Option<u64>);

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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn llm_2_parses_tool_calls_usage_and_reasoning() {
        let body = br#"{"choices":[{"message":{"role":"assistant","content":null,"reasoning_content":"think",
            "tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]},
            "finish_reason":"tool_calls"}],
            "usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,
            "prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":2}}}"#;
        let r = parse_response(body).unwrap();
        assert_eq!(r.message.tool_calls()[0].arguments, r#"{"x":1}"#);
        let u = r.usage.unwrap();
        assert_eq!((u.prompt_tokens, u.cached_tokens, u.reasoning_tokens), (10, Some(4), Some(2)));
        assert!(matches!(r.message, Message::Assistant { reasoning: Some(ref t), content: None, .. } if t == "think"));
    }

    #[test]
    fn llm_3_classifies_errors_without_echoing_bodies() {
        let body = br#"{"error":{"message":"Incorrect API key provided: sk-secret","code":"invalid_api_key"}}"#;
        let e = classify_http_error(401, body, None);
        assert_eq!(e.code(), "llm_auth");
        assert!(!e.to_string().contains("sk-secret"));
        let e = classify_http_error(400, br#"{"error":{"code":"context_length_exceeded","message":"x"}}"#, None);
        assert_eq!(e, LlmError::ContextOverflow);
        assert_eq!(classify_http_error(429, b"", Some("2")), LlmError::RateLimited { retry_after_ms: Some(2000) });
        assert_eq!(parse_response(br#"{"choices":[]}"#).unwrap_err().code(), "llm_malformed_response");
        assert_eq!(parse_response(br#"{"error":{"code":"500","message":"boom"}}"#).unwrap_err().code(), "llm_server");
    }

    /// The parser as it was before the typed wire structs (reading a `serde_json::Value`
    /// tree): the reference the typed parser must agree with on every input.
    mod reference {
        use serde_json::{Map, Value};

        use super::super::{classify_error_object, finish_message, json_error};
        use crate::history::{ModelUsage, ToolCall};
        use crate::llm::{ChatResponse, LlmError};

        /// Parses a non-streaming response body.
        pub(super) fn parse_response(body: &[u8]) -> Result<ChatResponse, LlmError> {
            let value: Value = serde_json::from_slice(body).map_err(|e| json_error("body", &e))?;
            if let Some(err) = value.get("error").filter(|e| !e.is_null()) {
                // Some providers answer HTTP 200 with an error object.
                return Err(classify_error_object(200, err));
            }
            let choices = match value.get("choices") {
                Some(Value::Array(choices)) => choices,
                // DashScope-native style `{"code", "message"}` without choices is an error too.
                None if value.get("code").is_some_and(|c| !c.is_null()) => return Err(classify_error_object(200, &value)),
                _ => return Err(LlmError::MalformedResponse("no choices".into())),
            };
            let choice = choices.first().ok_or_else(|| LlmError::MalformedResponse("no choices".into()))?;
            let message = choice
                .get("message")
                .and_then(Value::as_object)
                .ok_or_else(|| LlmError::MalformedResponse("choice has no message".into()))?;
            let content = message.get("content").and_then(Value::as_str).map(str::to_owned);
            // `reasoning_content` (DeepSeek, Qwen, GLM, Kimi) wins over `reasoning` (Ollama, vLLM).
            let reasoning = match message.get("reasoning_content") {
                Some(Value::String(r)) => Some(r),
                _ => message.get("reasoning").and_then(|r| match r {
                    Value::String(r) => Some(r),
                    _ => None,
                }),
            }
            .filter(|r| !r.is_empty())
            .cloned();
            let mut tool_calls = Vec::new();
            if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
                for call in calls {
                    tool_calls.push(parse_tool_call(call)?);
                }
            }
            let usage = value.get("usage").filter(|u| u.is_object()).map(parse_usage);
            Ok(ChatResponse {
                message: finish_message(content, tool_calls, reasoning),
                usage,
                finish_reason: choice.get("finish_reason").and_then(Value::as_str).map(str::to_owned),
            })
        }


        fn parse_tool_call(call: &Value) -> Result<ToolCall, LlmError> {
            let function = call
                .get("function")
                .ok_or_else(|| LlmError::MalformedResponse("tool call without function".into()))?;
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .ok_or_else(|| LlmError::MalformedResponse("tool call without name".into()))?;
            // Arguments are a JSON text per the spec (kept verbatim, even when it is not valid
            // JSON: the runtime answers that with a tool error); some servers send an object.
            let arguments = match function.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => "{}".to_owned(),
                Some(other) => other.to_string(),
            };
            // A missing id is filled in by the runtime from its id generator.
            let id = call.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
            Ok(ToolCall { id, name: name.to_owned(), arguments })
        }

        /// Parses a `usage` object, including cached and reasoning token details. Cached tokens:
        /// `prompt_tokens_details.cached_tokens` (OpenAI, Qwen, GLM, DeepSeek), DeepSeek's
        /// `prompt_cache_hit_tokens`, or a top-level `cached_tokens` (Moonshot). A missing
        /// `total_tokens` is prompt + completion, saturating at `u64::MAX` (the numbers come from
        /// the provider and are not trusted to be small).
        fn parse_usage(usage: &Value) -> ModelUsage {
            let n = |v: Option<&Value>| v.and_then(Value::as_u64);
            let prompt = n(usage.get("prompt_tokens")).unwrap_or(0);
            let completion = n(usage.get("completion_tokens")).unwrap_or(0);
            let total = n(usage.get("total_tokens")).unwrap_or(prompt.saturating_add(completion));
            let cached = n(usage.pointer("/prompt_tokens_details/cached_tokens"))
                .or_else(|| n(usage.get("prompt_cache_hit_tokens")))
                .or_else(|| n(usage.get("cached_tokens")));
            let reasoning = n(usage.pointer("/completion_tokens_details/reasoning_tokens"));
            ModelUsage {
                prompt_tokens: prompt,
                completion_tokens: completion,
                total_tokens: total,
                cached_tokens: cached,
                reasoning_tokens: reasoning,
                raw: Map::new(),
            }
        }
    }

    /// Keys the parser reads, and one it does not.
    const KEYS: &[&str] = &[
        "choices", "message", "content", "reasoning_content", "reasoning", "tool_calls", "function", "name", "arguments", "id",
        "usage", "prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details",
        "cached_tokens", "reasoning_tokens", "prompt_cache_hit_tokens", "error", "code", "finish_reason", "other",
    ];

    /// JSON text with repeated keys allowed (a `Value` cannot hold them) and the odd
    /// escape, big number or `null` in every position.
    fn json_text() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_owned()),
            Just("true".to_owned()),
            Just("0".to_owned()),
            Just("7".to_owned()),
            Just("-3".to_owned()),
            Just("2.5".to_owned()),
            Just("18446744073709551615".to_owned()),
            Just("18446744073709551616".to_owned()),
            Just("1e400".to_owned()),
            Just(r#""""#.to_owned()),
            Just(r#""stop""#.to_owned()),
            Just(r#""f""#.to_owned()),
            Just(r#""{\"x\":1}""#.to_owned()),
            Just(r#""\u00e9\n北京""#.to_owned()),
            Just(r#""\ud800""#.to_owned()),
            Just(r#""\ud83d\ude00""#.to_owned()),
        ];
        leaf.prop_recursive(5, 48, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(|items| format!("[{}]", items.join(","))),
                prop::collection::vec((prop::sample::select(KEYS), any::<bool>(), inner), 0..5).prop_map(|fields| {
                    let fields: Vec<String> = fields
                        .into_iter()
                        .map(|(k, escaped, v)| {
                            // An escaped key must read as the same key.
                            let key = if escaped { k.replacen('o', "\\u006f", 1) } else { k.to_owned() };
                            format!("\"{key}\": {v}")
                        })
                        .collect();
                    format!("{{{}}}", fields.join(","))
                }),
            ]
        })
    }

    fn fixtures() -> Vec<Vec<u8>> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/providers");
        ["openai", "deepseek", "qwen", "zhipu", "moonshot", "ollama"]
            .iter()
            .map(|p| std::fs::read(format!("{dir}/{p}/nonstream.json")).unwrap())
            .collect()
    }

    #[test]
    fn llm_2_typed_parser_agrees_with_the_value_parser_on_quirks() {
        let cases: &[&[u8]] = &[
            br#"{"choices":[{"message":{"content":null,"tool_calls":[{"function":{"name":"f","arguments":{"b":1, "a":"\u00e9"}}}]}}]}"#,
            br#"{"choices":[{"message":{"content":"x","tool_calls":[{"id":5,"function":{"name":"f","arguments":null}}]}}]}"#,
            br#"{"choices":[{"message":{"content":"x","tool_calls":[{"function":null}]}}]}"#,
            br#"{"choices":[{"message":{"content":"x","tool_calls":[7]}}]}"#,
            br#"{"choices":[{"message":{"reasoning_content":"","reasoning":"r"}}]}"#,
            br#"{"choices":[{"message":{"reasoning_content":3,"reasoning":"r"}}]}"#,
            br#"{"choices":[{"message":{"content":"a"},"finish_reason":"stop"}],"choices":[]}"#,
            br#"{"choices":[{"message":{"content":"a"}}],"usage":{"prompt_tokens":1.0,"completion_tokens":-1,"prompt_tokens_details":[],"cached_tokens":3}}"#,
            br#"{"choices":[{"message":{"content":"a"}}],"usage":{"prompt_tokens_details":{"cached_tokens":2},"prompt_cache_hit_tokens":5}}"#,
            br#"{"choices":[{"message":{"content":"a"}}],"usage":[1]}"#,
            br#"{"choices":[{"message":{"content":"a"}}, 5],"x":"\ud800"}"#,
            br#"{"choices":[{"message":{"content":"a"}}],"x":1e400}"#,
            b"{\"choices\":[{\"message\":{\"content\":\"a\"}}],\"x\":\"\xFF\"}",
            br#"{"code":"InvalidApiKey","message":"bad"}"#,
            br#"{"code":null,"message":"bad"}"#,
            br#"{"choices":{},"code":"x"}"#,
            br#"{"error":null,"choices":[{"message":{"content":"a"}}]}"#,
            br#"{"error":"model not found"}"#,
            br#"[1,2]"#,
            br#""text""#,
            br#"{"choices":[{"message":"x"}]}"#,
            br#"{"choices":[{"message":{"content":"a"}}]} x"#,
            br#"{"choices":[{"message":{"content":"a"}}"#,
        ];
        for body in cases {
            assert_eq!(parse_response(body), reference::parse_response(body), "{}", String::from_utf8_lossy(body));
        }
        for body in fixtures() {
            assert_eq!(parse_response(&body), reference::parse_response(&body));
            assert!(parse_response(&body).is_ok());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 8 } else { 2048 }, ..ProptestConfig::default() })]

        /// Any JSON (repeated keys, every type in every field) and any corruption of the
        /// providers' fixtures: the typed parser returns exactly what the `Value` parser
        /// returned — the same completion or the same error, message included.
        #[test]
        fn llm_2_typed_parser_agrees_with_the_value_parser(
            text in json_text(),
            fixture in 0usize..6,
            edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, any::<u8>()), 0..4),
        ) {
            prop_assert_eq!(parse_response(text.as_bytes()), reference::parse_response(text.as_bytes()), "{}", text);
            let wrapped = format!(r#"{{"choices":[{{"message":{text}}}],"usage":{text}}}"#);
            prop_assert_eq!(parse_response(wrapped.as_bytes()), reference::parse_response(wrapped.as_bytes()));
            let mut body = fixtures().swap_remove(fixture);
            for (at, op, byte) in edits {
                let i = at.index(body.len());
                match op {
                    0 => body[i] = byte,
                    1 => { body.remove(i); }
                    _ => body.insert(i, byte),
                }
            }
            prop_assert_eq!(parse_response(&body), reference::parse_response(&body));
        }
    }
}
