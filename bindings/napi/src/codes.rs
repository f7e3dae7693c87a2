//! The module's own error codes: the `code` of an Error this crate throws for a reason
//! of its own (a refused JS value, a misused constructor, a napi failure), besides the
//! core's [`arkagent::ErrorCode`]s. One enum, so the d.ts union `ErrorCode` is generated
//! from it (scripts/gen-dts.js reads [`ModuleCode::ALL`] through scripts/closed-sets,
//! which includes this file): no code can be thrown that the d.ts does not list.
//!
//! Plain Rust on purpose (no napi, no core imports): scripts/closed-sets compiles this
//! file on its own.

/// A code of the N-API module itself, e.g. [`ModuleCode::InvalidArgument`]
/// (`"invalid_argument"`). The strings never change; a new code is a new variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleCode {
    /// `invalid_argument`: a method argument of the wrong type, class or range.
    InvalidArgument,
    /// `private_constructor`: `new` on a class whose instances the module creates.
    PrivateConstructor,
    /// `invalid_call`: a public constructor called without `new`.
    InvalidCall,
    /// `internal`: the JS engine refused an operation the module needed.
    Internal,
    /// `subagent_unknown_role`: `roleWhitelist()` of a role that is not defined.
    SubagentUnknownRole,
}

impl ModuleCode {
    /// Every code, in declaration order (`as_str`'s match has no wildcard: a new variant
    /// does not compile until it has its string; add it here too).
    // Read by scripts/closed-sets (which compiles this file), not by the module.
    #[allow(dead_code)]
    pub const ALL: [ModuleCode; 5] = [
        Self::InvalidArgument,
        Self::PrivateConstructor,
        Self::InvalidCall,
        Self::Internal,
        Self::SubagentUnknownRole,
    ];

    /// The stable string, e.g. `"invalid_argument"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArgument => "invalid_argument",
            Self::PrivateConstructor => "private_constructor",
            Self::InvalidCall => "invalid_call",
            Self::Internal => "internal",
            Self::SubagentUnknownRole => "subagent_unknown_role",
        }
    }

    /// The code as an owned string, as `napi_ohos::Error::new` takes it.
    pub fn to_owned_code(self) -> String {
        self.as_str().to_owned()
    }
}
