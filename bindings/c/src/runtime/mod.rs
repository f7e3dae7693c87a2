//! Runtime and tool-registry handles: the executor the blocking calls run on
//! ([`executor`]), creating and freeing runtimes and tool sets ([`handle`]), the calls that
//! run the model ([`run`]) and the ones that read or replace the state ([`state`]).

mod approval;
mod executor;
mod gestures;
mod handle;
mod image_codec;
mod images;
mod mcp;
mod run;
mod state;

pub use approval::{
    arkagent_runtime_approve, arkagent_runtime_cancel_approvals, arkagent_runtime_pending_approvals, arkagent_runtime_reject, arkagent_runtime_resume_run,
    arkagent_tools_register_with_approval, arkagent_tools_set_policy, ArkAgentApprovalCallback, ArkAgentPolicy, ArkAgentToolPolicyCallback,
};
pub use executor::arkagent_shutdown;
pub use gestures::{arkagent_runtime_edit_and_resend, arkagent_runtime_fork, arkagent_runtime_regenerate, arkagent_runtime_rewind};
pub(crate) use handle::runtime_handle;
pub use handle::{
    arkagent_runtime_free, arkagent_runtime_new, arkagent_runtime_new_with_compressor, arkagent_tools_free, arkagent_tools_new,
    arkagent_tools_register, ArkAgentRuntime, ArkAgentTools,
};
pub use image_codec::{
    arkagent_estimate_image_tokens, arkagent_image_codec_output_set, arkagent_tools_set_image_codec, ArkAgentImageCodecCallback, ArkAgentImageCodecOutput,
    ArkAgentImageCodecRequest,
};
pub use images::{arkagent_runtime_image, arkagent_runtime_run_parts};
pub use mcp::{arkagent_tools_set_mcp_auth, ArkAgentMcpAuthCallback};
pub use run::{
    arkagent_child_usage_summary, arkagent_runtime_cancel, arkagent_runtime_close_sub_agents, arkagent_runtime_compress_now,
    arkagent_runtime_episodes, arkagent_runtime_memory_recall, arkagent_runtime_memory_store, arkagent_runtime_run,
    arkagent_runtime_run_decomposed, arkagent_runtime_sub_agents, arkagent_runtime_total_usage, ArkAgentMemoryTier,
};
pub use state::{
    arkagent_runtime_export_state, arkagent_runtime_import_state, arkagent_runtime_messages, arkagent_runtime_session_id,
    arkagent_runtime_subscribe, arkagent_runtime_unsubscribe, arkagent_runtime_usages,
};

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
