//! Token usage (SUB-6, COST-1, COST-2): the `ModelUsage` object JS hands in and gets
//! back, its `Cost`, and the read-only sums `ChildUsageSummary` and `UsageTotals`.

use arkagent::subagent::{ChildUsageSummary as CoreUsage, UsageTotals as CoreTotals};
use arkagent::{Cost, ModelUsage};
use napi_derive_ohos::napi;

use crate::args::Arg;
use crate::error::{private_constructor, Thrown};
use crate::numbers::argument;

/// An amount of money (COST-2): `nanos` billionths of the currency unit.
#[napi(object, js_name = "Cost")]
pub struct JsCost {
    pub currency: String,
    pub nanos: f64,
}

impl JsCost {
    /// The core cost; `nanos` must be a non-negative safe integer and the currency
    /// non-empty (`invalid_argument`).
    fn core(&self) -> Result<Cost, Thrown> {
        if self.currency.is_empty() {
            return Err(napi_ohos::Error::new("invalid_argument".to_owned(), "cost currency is empty".to_owned()));
        }
        Ok(Cost { currency: self.currency.clone(), nanos: argument(self.nanos, "cost.nanos")? })
    }
}

// JS numbers: amounts are exact below 2^53 nanos (about 9 million currency units).
impl From<&Cost> for JsCost {
    fn from(cost: &Cost) -> Self {
        Self { currency: cost.currency.clone(), nanos: cost.nanos as f64 }
    }
}

/// Token usage of one model call.
#[napi(object, js_name = "ModelUsage")]
pub struct JsModelUsage {
    pub prompt_tokens: f64,
    pub completion_tokens: f64,
    pub total_tokens: f64,
    pub cached_tokens: Option<f64>,
    pub reasoning_tokens: Option<f64>,
    /// Anthropic's cache writes, priced apart (COST-2).
    pub cache_write_tokens: Option<f64>,
    #[napi(ts_type = "UsageSource")]
    pub source: Option<String>,
    /// The model calls this usage stands for when more than one (a summary written in N
    /// chunks), so `ChildUsageSummary.fromUsages` counts them as Rust and C do.
    pub call_count: Option<f64>,
    /// What the call cost (COST-2), when its model config has a price.
    pub cost: Option<JsCost>,
}

impl JsModelUsage {
    /// The core usage; counts must be non-negative integers (`invalid_argument`).
    pub fn core(&self) -> Result<ModelUsage, Thrown> {
        let tokens = |v: f64, name: &str| argument::<u64>(v, name);
        let mut usage = ModelUsage {
            prompt_tokens: tokens(self.prompt_tokens, "promptTokens")?,
            completion_tokens: tokens(self.completion_tokens, "completionTokens")?,
            total_tokens: tokens(self.total_tokens, "totalTokens")?,
            cached_tokens: self.cached_tokens.map(|v| tokens(v, "cachedTokens")).transpose()?,
            reasoning_tokens: self.reasoning_tokens.map(|v| tokens(v, "reasoningTokens")).transpose()?,
            cache_write_tokens: self.cache_write_tokens.map(|v| tokens(v, "cacheWriteTokens")).transpose()?,
            ..ModelUsage::default()
        };
        if let Some(source) = &self.source {
            usage.source = Some(arkagent::history::UsageSource::from_name(source).ok_or_else(|| {
                napi_ohos::Error::new("invalid_argument".to_owned(), format!("usage source must be a UsageSource, got {source:?}"))
            })?);
        }
        if let Some(calls) = self.call_count {
            usage.call_count = argument::<u32>(calls, "callCount")?;
        }
        usage.cost = self.cost.as_ref().map(JsCost::core).transpose()?.map(Box::new);
        Ok(usage)
    }
}

// JS numbers: token counts are exact below 2^53.
impl From<&ModelUsage> for JsModelUsage {
    fn from(usage: &ModelUsage) -> Self {
        Self {
            prompt_tokens: usage.prompt_tokens as f64,
            completion_tokens: usage.completion_tokens as f64,
            total_tokens: usage.total_tokens as f64,
            cached_tokens: usage.cached_tokens.map(|t| t as f64),
            reasoning_tokens: usage.reasoning_tokens.map(|t| t as f64),
            cache_write_tokens: usage.cache_write_tokens.map(|t| t as f64),
            source: usage.source_name().map(str::to_owned),
            call_count: (usage.call_count != 1).then_some(f64::from(usage.call_count)),
            cost: usage.cost.as_deref().map(JsCost::from),
        }
    }
}

/// Summed usage of model calls (SUB-6); read-only.
#[napi]
pub struct ChildUsageSummary {
    inner: CoreUsage,
}

impl From<CoreUsage> for ChildUsageSummary {
    fn from(inner: CoreUsage) -> Self {
        Self { inner }
    }
}

// JS numbers: token counts are exact below 2^53.
#[napi]
impl ChildUsageSummary {
    /// Instances come from `fromUsages()`, `UsageTotals` and `DecomposedResult.childUsage`;
    /// `new` throws `private_constructor`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("ChildUsageSummary"))
    }

    /// Sums model usages, e.g. `runtime.usages()` (SUB-6). Throws `invalid_argument` for a
    /// token count that is not a non-negative integer.
    #[napi(factory)]
    pub fn from_usages(usages: Arg<Vec<JsModelUsage>>) -> Result<Self, Thrown> {
        let core: Vec<ModelUsage> = usages.0.iter().map(JsModelUsage::core).collect::<Result<_, _>>()?;
        Ok(CoreUsage::from_usages(&core).into())
    }

    /// The summary's JSON, as C and Rust write it.
    #[napi]
    pub fn to_json(&self) -> String {
        self.inner.to_json()
    }

    #[napi(getter)]
    pub fn prompt_tokens(&self) -> f64 {
        self.inner.prompt_tokens as f64
    }

    #[napi(getter)]
    pub fn completion_tokens(&self) -> f64 {
        self.inner.completion_tokens as f64
    }

    #[napi(getter)]
    pub fn total_tokens(&self) -> f64 {
        self.inner.total_tokens as f64
    }

    #[napi(getter)]
    pub fn call_count(&self) -> f64 {
        self.inner.call_count as f64
    }

    /// Prompt tokens served from the provider's cache (COST-1).
    #[napi(getter)]
    pub fn cached_tokens(&self) -> f64 {
        self.inner.cached_tokens as f64
    }

    /// Reasoning tokens (COST-1).
    #[napi(getter)]
    pub fn reasoning_tokens(&self) -> f64 {
        self.inner.reasoning_tokens as f64
    }

    /// How many of `callCount` carry a cost (COST-2).
    #[napi(getter)]
    pub fn priced_call_count(&self) -> f64 {
        self.inner.priced_call_count as f64
    }

    /// One exact sum per currency, sorted by code (COST-2).
    #[napi(getter)]
    pub fn costs(&self) -> Vec<JsCost> {
        self.inner.costs.iter().map(JsCost::from).collect()
    }
}

/// What a session cost (SUB-6): its own calls plus every delegated child's; read-only.
#[napi]
pub struct UsageTotals {
    inner: CoreTotals,
}

impl From<CoreTotals> for UsageTotals {
    fn from(inner: CoreTotals) -> Self {
        Self { inner }
    }
}

#[napi]
impl UsageTotals {
    /// Instances come from `AgentRuntime.totalUsage()`; `new` throws `private_constructor`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("UsageTotals"))
    }

    /// The runtime's own model calls (compression included).
    #[napi(getter)]
    pub fn parent(&self) -> ChildUsageSummary {
        self.inner.parent.clone().into()
    }

    /// All delegated children's model calls.
    #[napi(getter)]
    pub fn children(&self) -> ChildUsageSummary {
        self.inner.children.clone().into()
    }

    /// `parent + children`.
    #[napi(getter)]
    pub fn total(&self) -> ChildUsageSummary {
        self.inner.total.clone().into()
    }
}

// index.d.ts: the declarations of this module's JS API, with their docs (the promises the
// tests keep). scripts/gen-dts.sh assembles these blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts; edit them here, then regenerate.
/* ts
/**
 * An amount of money (COST-2), exact: `nanos` billionths of the currency unit (1 USD =
 * 1e9 nanos), so sums are integers and a total is exactly the sum of its parts. Exact in
 * a JS number below 2^53 nanos (about 9 million units). Show it as `nanos / 1e9`.
 */
export interface Cost {
  /** The currency code as set on the `ModelPrice`, e.g. "USD" or "CNY". */
  currency: string;
  nanos: number;
}

/** Token usage of one model call. */
export interface ModelUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cachedTokens?: number;
  reasoningTokens?: number;
  /** Prompt tokens written to the provider's cache (Anthropic's cache creation), when
   * reported: priced at ModelPrice.cacheWritePerMillion when that is set. */
  cacheWriteTokens?: number;
  /** When set: "context_compression" for a compression's summarizer calls, "unreported"
   * for a call whose provider reported no usage (recorded with 0 tokens, so every call made
   * is in usages()). */
  source?: UsageSource;
  /** The model calls this usage stands for when more than one (a compression whose summary
   * was written in N chunks); absent: one call. */
  callCount?: number;
  /**
   * What the call cost (COST-2), priced once when it was recorded by the `ModelPrice` of
   * the model config that made it (a worker or summarizer on another model by its own);
   * absent without a price (never 0), and for a call whose provider reported no usage.
   */
  cost?: Cost;
}

/** Summed usage of model calls (SUB-6; read-only). */
export class ChildUsageSummary {
  /** Instances come from `fromUsages()`, `AgentRuntime.totalUsage()` and `DecomposedResult.childUsage`. */
  private constructor();
  /**
   * Sums model usages (e.g. `runtime.usages()`); callCount is the number of model calls
   * they stand for (a usage with `callCount` counts that many, any other usage one), as in
   * Rust and C. Throws "invalid_argument" for a token count that is not a non-negative integer.
   */
  static fromUsages(usages: ModelUsage[]): ChildUsageSummary;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
  /** Model calls made: each call of the run loop the model answered (usage reported or
   * not) or cut off mid-answer, and each summarizer call of a committed compression (a
   * summary written in N chunks counts N). The same number whether summed with
   * fromUsages() or read from a total. */
  readonly callCount: number;
  /** Prompt tokens served from the provider's prompt cache (COST-1), summed. */
  readonly cachedTokens: number;
  /** Reasoning tokens (part of completionTokens), summed (COST-1). */
  readonly reasoningTokens: number;
  /** How many of callCount carry a cost (COST-2): costs is complete exactly when it equals callCount. */
  readonly pricedCallCount: number;
  /**
   * What the priced calls cost (COST-2): one exact sum per currency, sorted by currency
   * code; empty when no call was priced (never a 0 standing for "unknown"). Different
   * currencies are never converted or added together.
   */
  readonly costs: Cost[];
  /** `{"prompt_tokens","completion_tokens","total_tokens","cached_tokens","reasoning_tokens","call_count","priced_call_count","costs"?}`, as C writes it (costs absent when empty). */
  toJson(): string;
}

/** What a session cost (SUB-6, COST-1, COST-2; read-only): `total` is exactly `parent` +
 * `children`, and `parent` exactly `ChildUsageSummary.fromUsages(runtime.usages())`. */
export class UsageTotals {
  /** Instances come from `AgentRuntime.totalUsage()`. */
  private constructor();
  /** The runtime's own model calls, compression included. */
  readonly parent: ChildUsageSummary;
  /** Every delegated child's model calls. */
  readonly children: ChildUsageSummary;
  /** parent + children. */
  readonly total: ChildUsageSummary;
}
*/
