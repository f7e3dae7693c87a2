//! The demo's tools: `get_weather(city)` and `get_time(city)` on canned data, and
//! `calculate(expression)` on a tiny evaluator. Bad arguments and evaluation errors come
//! back to the model as tool errors (`is_error`), never as a panic.

mod calculator;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use arkagent::{
    ArkAgentError, ToolContext, ToolDefinition, ToolExecutor, ToolInvocation, ToolRegistry,
    ToolResult,
};
use async_trait::async_trait;
use serde_json::{json, Value};

pub use calculator::{evaluate, format_number};

/// A city the demo has canned data for.
#[derive(Debug, Clone, Copy)]
pub struct City {
    /// Canonical English name.
    pub name: &'static str,
    /// Other spellings the simulated model recognises (lower case, or Chinese).
    pub aliases: &'static [&'static str],
    /// Canned weather condition.
    pub condition: &'static str,
    /// Canned temperature, °C.
    pub temperature_c: i32,
    /// Canned relative humidity, %.
    pub humidity_pct: u32,
    /// UTC offset in minutes (no daylight saving; it is a demo).
    pub utc_offset_min: i32,
}

/// Cities with canned data.
pub const CITIES: &[City] = &[
    City {
        name: "Beijing",
        aliases: &["北京"],
        condition: "sunny",
        temperature_c: 22,
        humidity_pct: 35,
        utc_offset_min: 480,
    },
    City {
        name: "Shanghai",
        aliases: &["上海"],
        condition: "cloudy",
        temperature_c: 24,
        humidity_pct: 70,
        utc_offset_min: 480,
    },
    City {
        name: "Shenzhen",
        aliases: &["深圳"],
        condition: "light rain",
        temperature_c: 27,
        humidity_pct: 82,
        utc_offset_min: 480,
    },
    City {
        name: "Guangzhou",
        aliases: &["广州"],
        condition: "thunderstorms",
        temperature_c: 28,
        humidity_pct: 85,
        utc_offset_min: 480,
    },
    City {
        name: "Hangzhou",
        aliases: &["杭州"],
        condition: "overcast",
        temperature_c: 23,
        humidity_pct: 74,
        utc_offset_min: 480,
    },
    City {
        name: "Chengdu",
        aliases: &["成都"],
        condition: "hazy",
        temperature_c: 21,
        humidity_pct: 68,
        utc_offset_min: 480,
    },
    City {
        name: "Wuhan",
        aliases: &["武汉"],
        condition: "partly cloudy",
        temperature_c: 25,
        humidity_pct: 60,
        utc_offset_min: 480,
    },
    City {
        name: "Xi'an",
        aliases: &["xian", "西安"],
        condition: "windy",
        temperature_c: 19,
        humidity_pct: 40,
        utc_offset_min: 480,
    },
    City {
        name: "Nanjing",
        aliases: &["南京"],
        condition: "drizzle",
        temperature_c: 20,
        humidity_pct: 77,
        utc_offset_min: 480,
    },
    City {
        name: "Hong Kong",
        aliases: &["香港"],
        condition: "humid and sunny",
        temperature_c: 29,
        humidity_pct: 80,
        utc_offset_min: 480,
    },
    City {
        name: "Tokyo",
        aliases: &["东京"],
        condition: "clear",
        temperature_c: 18,
        humidity_pct: 55,
        utc_offset_min: 540,
    },
    City {
        name: "Singapore",
        aliases: &["新加坡"],
        condition: "showers",
        temperature_c: 31,
        humidity_pct: 84,
        utc_offset_min: 480,
    },
    City {
        name: "London",
        aliases: &["伦敦"],
        condition: "foggy",
        temperature_c: 12,
        humidity_pct: 88,
        utc_offset_min: 0,
    },
    City {
        name: "Paris",
        aliases: &["巴黎"],
        condition: "mild",
        temperature_c: 16,
        humidity_pct: 65,
        utc_offset_min: 60,
    },
    City {
        name: "Berlin",
        aliases: &["柏林"],
        condition: "breezy",
        temperature_c: 14,
        humidity_pct: 60,
        utc_offset_min: 60,
    },
    City {
        name: "New York",
        aliases: &["纽约"],
        condition: "crisp and clear",
        temperature_c: 15,
        humidity_pct: 50,
        utc_offset_min: -300,
    },
    City {
        name: "San Francisco",
        aliases: &["旧金山"],
        condition: "foggy",
        temperature_c: 17,
        humidity_pct: 78,
        utc_offset_min: -480,
    },
];

/// The city named `name` (canonical name or alias, case-insensitive).
pub fn find_city(name: &str) -> Option<&'static City> {
    let wanted = name.trim().to_lowercase();
    CITIES.iter().find(|c| {
        c.name.to_lowercase() == wanted || c.aliases.iter().any(|a| a.to_lowercase() == wanted)
    })
}

/// A registry with `get_weather`, `get_time` and `calculate`.
pub fn demo_tools() -> Result<ToolRegistry, ArkAgentError> {
    let city_schema = json!({
        "type": "object",
        "properties": {"city": {"type": "string", "description": "City name, e.g. Beijing"}},
        "required": ["city"]
    });
    let mut registry = ToolRegistry::new();
    registry.register(
        ToolDefinition::new(
            "get_weather",
            "Current weather for a city (canned demo data).",
            city_schema.clone(),
        ),
        Arc::new(GetWeather),
    )?;
    registry.register(
        ToolDefinition::new("get_time", "Current local time in a city.", city_schema),
        Arc::new(GetTime),
    )?;
    registry.register(
        ToolDefinition::new(
            "calculate",
            "Evaluates an arithmetic expression with + - * / and parentheses.",
            json!({
                "type": "object",
                "properties": {"expression": {"type": "string", "description": "e.g. (12 + 30) * 2"}},
                "required": ["expression"]
            }),
        ),
        Arc::new(Calculate),
    )?;
    Ok(registry)
}

fn tool_error(code: &str, message: &str) -> ToolResult {
    let mut result =
        ToolResult::failure(json!({"error": {"code": code, "message": message}}).to_string());
    result.error_code = Some(code.to_owned());
    result
}

fn string_argument<'a>(call: &'a ToolInvocation, name: &str) -> Result<&'a str, ToolResult> {
    match call
        .arguments
        .get(name)
        .and_then(Value::as_str)
        .map(str::trim)
    {
        Some(value) if !value.is_empty() => Ok(value),
        _ => Err(tool_error(
            "missing_argument",
            &format!("argument {name:?} (a non-empty string) is required"),
        )),
    }
}

/// `get_weather(city)`.
#[derive(Debug, Clone, Copy)]
pub struct GetWeather;

#[async_trait]
impl ToolExecutor for GetWeather {
    async fn execute(&self, call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        let city = match string_argument(&call, "city") {
            Ok(city) => city,
            Err(result) => return result,
        };
        match find_city(city) {
            Some(c) => ToolResult::ok(
                json!({
                    "city": c.name,
                    "condition": c.condition,
                    "temperature_c": c.temperature_c,
                    "humidity_pct": c.humidity_pct,
                    "source": "canned demo data"
                })
                .to_string(),
            ),
            None => tool_error(
                "unknown_city",
                &format!("no weather data for {city:?} in this demo"),
            ),
        }
    }
}

/// `get_time(city)`.
#[derive(Debug, Clone, Copy)]
pub struct GetTime;

#[async_trait]
impl ToolExecutor for GetTime {
    async fn execute(&self, call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        let city = match string_argument(&call, "city") {
            Ok(city) => city,
            Err(result) => return result,
        };
        let Some(c) = find_city(city) else {
            return tool_error(
                "unknown_city",
                &format!("no time zone known for {city:?} in this demo"),
            );
        };
        let utc_secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        let minute_of_day = (utc_secs / 60 + i64::from(c.utc_offset_min)).rem_euclid(24 * 60);
        let offset = format!(
            "UTC{}{}",
            if c.utc_offset_min < 0 { '-' } else { '+' },
            c.utc_offset_min.abs() as f64 / 60.0
        );
        ToolResult::ok(
            json!({
                "city": c.name,
                "local_time": format!("{:02}:{:02}", minute_of_day / 60, minute_of_day % 60),
                "utc_offset": offset
            })
            .to_string(),
        )
    }
}

/// `calculate(expression)`.
#[derive(Debug, Clone, Copy)]
pub struct Calculate;

#[async_trait]
impl ToolExecutor for Calculate {
    async fn execute(&self, call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        let expression = match string_argument(&call, "expression") {
            Ok(e) => e,
            Err(result) => return result,
        };
        match evaluate(expression) {
            Ok(value) => ToolResult::ok(
                json!({"expression": expression, "result": format_number(value)}).to_string(),
            ),
            Err(message) => tool_error("invalid_expression", &message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arkagent::CancellationToken;

    fn ctx() -> ToolContext {
        ToolContext {
            session_id: "s".into(),
            run_id: "r".into(),
            cancel: CancellationToken::new(),
            abort: Default::default(),
            memory: arkagent::memory::NamespacedMemoryStore::new().scope("global"),
            episodes: None,
        }
    }

    fn call(name: &str, arguments: Value) -> ToolInvocation {
        ToolInvocation {
            call_id: "c1".into(),
            name: name.into(),
            arguments,
        }
    }

    #[tokio::test]
    async fn dx_2_demo_tools_answer_and_fail_as_tool_errors() {
        let weather = GetWeather
            .execute(call("get_weather", json!({"city": "beijing"})), ctx())
            .await;
        assert!(!weather.is_error);
        assert!(weather.content.contains("\"Beijing\"") && weather.content.contains("sunny"));

        let by_alias = GetWeather
            .execute(call("get_weather", json!({"city": "深圳"})), ctx())
            .await;
        assert!(by_alias.content.contains("Shenzhen"));

        let unknown = GetWeather
            .execute(call("get_weather", json!({"city": "Atlantis"})), ctx())
            .await;
        assert!(unknown.is_error);
        assert_eq!(unknown.error_code.as_deref(), Some("unknown_city"));

        let missing = Calculate.execute(call("calculate", json!({})), ctx()).await;
        assert_eq!(missing.error_code.as_deref(), Some("missing_argument"));

        let sum = Calculate
            .execute(
                call("calculate", json!({"expression": "(12 + 30) * 2"})),
                ctx(),
            )
            .await;
        assert!(!sum.is_error);
        assert!(sum.content.contains("\"84\""));

        let div = Calculate
            .execute(call("calculate", json!({"expression": "1/0"})), ctx())
            .await;
        assert!(div.is_error && div.content.contains("division by zero"));

        let time = GetTime
            .execute(call("get_time", json!({"city": "Tokyo"})), ctx())
            .await;
        assert!(time.content.contains("UTC+9"));
    }

    #[test]
    fn dx_2_demo_registry_has_the_three_tools() {
        let Ok(registry) = demo_tools() else {
            panic!("registry")
        };
        assert_eq!(registry.names(), ["get_weather", "get_time", "calculate"]);
    }
}
