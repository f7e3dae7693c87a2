//! Response wire shapes of a whole `chat.completion` (LLM-2), and the `usage` object the
//! whole-body parser (`parse`) and the stream parser (`stream`) share so both build
//! identical answers.
//!
//! Each object type lists the fields read; `Fields::field` is called once per key in
//! document order, so a repeated key keeps its last value (as a `Value` map did), and every
//! other key's value is checked as JSON without being kept (`Skip`).

use serde::de::MapAccess;
use serde_json::Value;

use crate::llm::common::{Args, Count, Fields, First, IsNull, List, Obj, Skip, Text};
use crate::history::ModelUsage;

/// A whole `chat.completion`.
#[derive(Default)]
pub(crate) struct CompletionWire<'a> {
    /// `error`, including an explicit `null` (a cold path: kept as a tree).
    pub(crate) error: Option<Value>,
    pub(crate) choices: Option<First<Obj<ChoiceWire<'a>>>>,
    /// A top-level `code` that is present and not `null`.
    pub(crate) code_not_null: bool,
    pub(crate) usage: Option<Obj<UsageWire>>,
}

#[derive(Default)]
pub(crate) struct ChoiceWire<'a> {
    pub(crate) message: Option<Obj<MessageWire<'a>>>,
    pub(crate) finish_reason: Text<'a>,
}

#[derive(Default)]
pub(crate) struct MessageWire<'a> {
    pub(crate) content: Text<'a>,
    pub(crate) reasoning_content: Text<'a>,
    pub(crate) reasoning: Text<'a>,
    pub(crate) tool_calls: Option<List<Obj<CallWire<'a>>>>,
}

#[derive(Default)]
pub(crate) struct CallWire<'a> {
    pub(crate) id: Text<'a>,
    pub(crate) function: Option<Obj<FunctionWire<'a>>>,
}

#[derive(Default)]
pub(crate) struct FunctionWire<'a> {
    pub(crate) name: Text<'a>,
    pub(crate) arguments: Option<Args<'a>>,
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
            ..ModelUsage::default()
        }
    }
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
