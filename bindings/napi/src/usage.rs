//! Token usage (SUB-6, COST-1, COST-2): `ModelUsage` as JS hands it in, and `sumUsages`.
//! The records themselves (`ModelUsage`, `Cost`, `ChildUsageSummary`, `UsageTotals`) are
//! the core's, in their one JS shape (`records`); their declarations are generated.

use arkagent::subagent::ChildUsageSummary;
use arkagent::ModelUsage;
use napi_derive_ohos::napi;
use serde_json::Value;

use crate::args::Arg;
use crate::error::Thrown;
use crate::records::{self, JsRecord};

/// A `ModelUsage` JS handed in as the core usage: counts must be non-negative safe
/// integers (the three totals present), a source one of `UsageSource`, a cost's currency non-empty
/// (`invalid_argument` naming `what`).
pub fn usage_from_js(value: Value, what: &str) -> Result<ModelUsage, Thrown> {
    // The counts ModelUsage declares required (the core reads an absent one as 0, for
    // records written before a count existed; from JS it is a mistake).
    for key in ["promptTokens", "completionTokens", "totalTokens"] {
        if value.get(key).is_none() {
            return Err(napi_ohos::Error::new("invalid_argument".to_owned(), format!("{what}.{key} is missing")));
        }
    }
    let usage: ModelUsage = records::from_js(value, what)?;
    if usage.cost.as_ref().is_some_and(|c| c.currency.is_empty()) {
        return Err(napi_ohos::Error::new("invalid_argument".to_owned(), format!("{what}: cost currency is empty")));
    }
    Ok(usage)
}

/// Sums model usages (e.g. `runtime.usages()`), as Rust and C do: callCount is the number
/// of model calls they stand for (a usage with `callCount` counts that many, any other
/// usage one), costs one exact sum per currency. Throws "invalid_argument" for a token
/// count that is not a non-negative integer, an unknown source or an empty currency.
#[cfg_attr(test, allow(dead_code))]
#[napi(ts_return_type = "ChildUsageSummary")]
pub fn sum_usages(#[napi(ts_arg_type = "ModelUsage[]")] usages: Arg<Vec<JsRecord>>) -> Result<Value, Thrown> {
    let core: Vec<ModelUsage> = usages
        .0
        .into_iter()
        .enumerate()
        .map(|(i, u)| usage_from_js(u.0, &format!("usages[{i}]")))
        .collect::<Result<_, _>>()?;
    Ok(records::to_js(&ChildUsageSummary::from_usages(&core)))
}

// index.d.ts: this module's JS API, in order. `// declare: Name` is the generated
// declaration of the #[napi] item Name, its docs the Rust ones above (the promises the tests
// keep); the rest is hand TypeScript. scripts/regen.sh assembles the blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts.
/* ts
// declare: sumUsages
*/
