//! The C ABI (`include/arkagent.h`). Conversions and handles only; no decisions.
