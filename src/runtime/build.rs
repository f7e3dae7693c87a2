//! Building a runtime: its tools (host tools, `retrieve_memory`, `delegate_task`), its
//! system prompt, its [`Session`] and, for a root with a store, the stored session.

use std::sync::{Arc, Mutex};

use super::agent::{AgentRuntime, Inner};
use super::approval_hub::TreePlace;
use super::config::{AgentRuntimeConfig, Compression};
use super::events::Emitter;
use super::tool_exec::ExecPolicy;
use crate::error::{ArkAgentError, ErrorCode};
use crate::history::AgentState;
use crate::llm::{ChatClient, HttpTransport};
use crate::compress::{ContextCompressor, DefaultContextCompressor};
use crate::memory::{retrieve_memory_definition, RetrieveMemoryTool, RETRIEVE_MEMORY_TOOL_NAME};
use crate::session::{RequestShape, Session, SessionState};
use super::delegation::{DelegateTaskTool, SubAgentService};
use super::worker_config::delegate_task_definition;
use crate::subagent::{DelegationBudget, DELEGATION_PROMPT};
use crate::tools::ToolDefinition;

impl AgentRuntime {
    /// A runtime with an empty history. Errors: `invalid_config`, `tool_name_duplicate`
    /// (a host tool named `retrieve_memory` while compression is on).
    pub fn new(config: AgentRuntimeConfig, transport: Arc<dyn HttpTransport>) -> Result<Self, ArkAgentError> {
        Self::new_at_depth(config, transport, 0, None, TreePlace::default())
    }

    /// A sub-agent runtime one level below its parent, in its parent's delegation tree
    /// (`budget`: it delegates, if its depth allows, under the root's shared budgets).
    pub(crate) fn new_child(
        config: AgentRuntimeConfig,
        transport: Arc<dyn HttpTransport>,
        depth: u32,
        budget: Arc<DelegationBudget>,
        place: TreePlace,
    ) -> Result<Self, ArkAgentError> {
        Self::new_at_depth(config, transport, depth.max(1), Some(budget), place)
    }

    /// The checks [`new`](Self::new) makes before it builds anything (SUB-3: a delegation
    /// runs them before it reserves a slot, so a worker that cannot be built consumes none).
    pub(crate) fn check_buildable(config: &AgentRuntimeConfig) -> Result<(), ArkAgentError> {
        config.validate()?;
        if config.compression.is_some() && config.tools.has(RETRIEVE_MEMORY_TOOL_NAME) {
            return Err(ArkAgentError::config(ErrorCode::ToolNameDuplicate, format!("tool {RETRIEVE_MEMORY_TOOL_NAME:?} is already registered")));
        }
        Ok(())
    }

    fn new_at_depth(
        config: AgentRuntimeConfig,
        transport: Arc<dyn HttpTransport>,
        depth: u32,
        budget: Option<Arc<DelegationBudget>>,
        place: TreePlace,
    ) -> Result<Self, ArkAgentError> {
        Self::check_buildable(&config)?;
        let session_id = config.session_id.clone().unwrap_or_else(|| config.id_generator.next_id());
        let client = ChatClient::new(Arc::clone(&transport), config.model.clone());
        let state = SessionState::new(AgentState::new(session_id), &config.model);
        let view = state.view();
        let emitter = Emitter::new(Arc::clone(&config.clock), view.clone());
        let mut tools = config.tools.clone();
        let compressor: Option<Arc<dyn ContextCompressor>> = match &config.compression {
            None => None,
            Some(Compression::Custom(c)) => Some(Arc::clone(c)),
            Some(Compression::Default { config: c, summarizer }) => {
                let model = summarizer.clone().unwrap_or_else(|| config.model.clone());
                Some(Arc::new(DefaultContextCompressor::new(ChatClient::new(Arc::clone(&transport), model), c.clone())))
            }
        };
        if compressor.is_some() {
            // MEM-2: retrieve_memory is registered whenever a compressor is configured.
            tools.register(retrieve_memory_definition(), Arc::new(RetrieveMemoryTool::new(view.memory_service())))?;
        }
        // A root, or a child below max_depth (SUB-3), offers delegate_task; a worker at
        // max_depth gets no service: its config has no delegation (SUB-4).
        let sub_agents =
            SubAgentService::new(config.clone(), Arc::clone(&transport), view, state.child_usage_sink(), emitter.clone(), depth, budget, place.clone());
        let (mut system_prompt, mut delegate) = (config.system_prompt.clone(), None);
        if let (Some(service), Some(delegation)) = (&sub_agents, &config.delegation) {
            let tool = Arc::new(DelegateTaskTool { service: Arc::clone(service) });
            tools.register(delegate_task_definition(delegation), tool.clone())?;
            delegate = Some(tool);
            if !system_prompt.is_empty() {
                system_prompt.push_str("\n\n");
            }
            system_prompt.push_str(DELEGATION_PROMPT);
        }
        // ISO-2: the model is shown only allowed tools (built-in memory retrieval stays).
        let exec_policy = ExecPolicy {
            is_sub_agent: depth > 0 && sub_agents.is_none(),
            allowed: config.allowed_tools.as_ref().map(|a| a.iter().cloned().chain([RETRIEVE_MEMORY_TOOL_NAME.to_owned()]).collect()),
            default_timeout_ms: config.tool_timeout_ms,
            delegates: delegate.is_some(),
            gated: std::sync::atomic::AtomicBool::new(config.tool_policy.is_some() || tools.iter().any(|t| t.definition.requires_approval || t.approval.is_some())),
        };
        let tool_definitions: Vec<ToolDefinition> = tools.definitions().into_iter().filter(|d| exec_policy.allows(&d.name)).collect();
        let memory = config.memory_store.scope(&config.memory_namespace);
        let shape = RequestShape { model: config.model.clone(), system_prompt, tool_definitions, tool_choice: config.tool_choice.clone() };
        let session = Arc::new(Session::new(state, shape, Arc::clone(&config.clock), Arc::clone(&config.id_generator)));
        let runtime = Self {
            inner: Arc::new(Inner {
                exec_policy,
                memory,
                delegate,
                tools: std::sync::RwLock::new(Arc::new(tools.clone())),
                base_tools: tools,
                mcp: (!config.mcp_servers.is_empty()).then(|| crate::mcp::McpHub::new(config.mcp_servers.clone(), Arc::clone(&transport))),
                config,
                client,
                compressor,
                sub_agents,
                depth,
                session,
                emitter,
                active_run: Mutex::new(None),
                closed: Default::default(),
                answering: Mutex::new(()),
                place,
                run_usage: super::run_usage::RunUsageMark::default(),
                originals: Mutex::default(),
            }),
        };
        if let Some(store) = runtime.inner.config.store.clone().filter(|_| depth == 0) {
            runtime.attach_store(store, None)?;
        }
        Ok(runtime)
    }
}
