//! Sub-agent workers for C hosts: a factory callback configures each worker through a
//! builder handle that is valid only during the callback.

use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};

use crate::boundary::{boundary, free_boundary};
use crate::callbacks::{register_host_tool, ArkAgentToolCallback, UserData};
use crate::codes::{ArkAgentResult, FfiError, FfiResult};
use crate::handles::{self, Kind};
use crate::strings::str_arg;
use arkagent::error::{ArkAgentError, ErrorCode};
use arkagent::runtime::{AgentRuntimeConfig, SubAgentDefinition, SubAgentFactory};

/// Opaque: the named workers a runtime may delegate to. Owned by the caller; free with
/// [`arkagent_workers_free`] (a runtime keeps its own copy).
pub struct ArkAgentWorkers {
    _private: [u8; 0],
}

/// Opaque: the worker being built, valid only during an [`ArkAgentWorkerFactory`] call.
/// It starts as a copy of the parent's configuration without its C compressor (the
/// factory gives it one with `arkagent_worker_set_compressor`). Whatever it is given, the runtime
/// strips `delegate_task` from the final worker (workers never delegate; with `max_depth`
/// above 1 a child below it gets the parent's own delegation settings instead).
pub struct ArkAgentWorkerBuilder {
    _private: [u8; 0],
}

/// Builds one worker when the model delegates to `worker_name`. Called on the thread
/// running `arkagent_runtime_run`, synchronously. Configure the worker through `builder`
/// ([`arkagent_worker_configure`], [`arkagent_worker_register_tool`]) and return
/// `ARK_AGENT_RESULT_OK` (0) as a plain integer; any other number fails that delegation
/// with `subagent_factory_failed`. `worker_name` and `builder` are valid only during the
/// call.
pub type ArkAgentWorkerFactory =
    Option<unsafe extern "C" fn(userdata: *mut c_void, worker_name: *const c_char, builder: *mut ArkAgentWorkerBuilder) -> i32>;

struct HostWorkerFactory {
    callback: unsafe extern "C" fn(*mut c_void, *const c_char, *mut ArkAgentWorkerBuilder) -> i32,
    userdata: UserData,
    name: std::ffi::CString,
}

#[async_trait::async_trait]
impl SubAgentFactory for HostWorkerFactory {
    async fn create(&self, parent: &AgentRuntimeConfig) -> Result<AgentRuntimeConfig, ArkAgentError> {
        // The core hands a named worker's factory the parent's settings without its
        // custom compressor (`named_worker_start`); `arkagent_worker_set_compressor`
        // gives it one.
        let cell = Arc::new(Mutex::new(Some(parent.clone())));
        let builder = handles::insert::<ArkAgentWorkerBuilder, _>(Kind::WorkerBuilder, Arc::clone(&cell));
        // SAFETY: the host registered this callback and promised userdata stays valid.
        let result = unsafe { (self.callback)(self.userdata.0, self.name.as_ptr(), builder) };
        let _ = handles::remove::<_, Mutex<Option<AgentRuntimeConfig>>>(Kind::WorkerBuilder, builder);
        let config = cell.lock().ok().and_then(|mut c| c.take());
        match (result, config) {
            (0, Some(config)) => Ok(config),
            _ => Err(ArkAgentError::config(ErrorCode::SubagentFactoryFailed, "the host's worker factory failed")),
        }
    }
}

/// Creates an empty worker set in `*out`.
///
/// # Safety
/// `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_workers_new(out: *mut *mut ArkAgentWorkers) -> ArkAgentResult {
    boundary(|| {
        if out.is_null() {
            return Err(FfiError::new(ArkAgentResult::NullArgument, "out is NULL"));
        }
        let handle = handles::insert(Kind::Workers, Arc::new(Mutex::new(Vec::<SubAgentDefinition>::new())));
        // SAFETY: checked non-NULL.
        unsafe { *out = handle };
        Ok(())
    })
}

/// Adds a named worker. Its factory configures a copy of the delegating runtime's
/// settings, its tools included, but not its C custom compressor: the worker's definition
/// decides, so it has one only when its factory calls `arkagent_worker_set_compressor` (a
/// `clone` child inherits the parent's; a worker whose parent has only a C compressor and
/// that is given none does not compress). Errors:
/// `ARK_AGENT_RESULT_SUBAGENT_NAME_EMPTY`,
/// `ARK_AGENT_RESULT_SUBAGENT_NAME_RESERVED` ("clone" in any case),
/// `ARK_AGENT_RESULT_SUBAGENT_NAME_DUPLICATE`. `userdata` must stay valid until every
/// runtime created with these workers is freed.
///
/// # Safety
/// `name` and `description` NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn arkagent_workers_add(
    workers: *mut ArkAgentWorkers,
    name: *const c_char,
    description: *const c_char,
    factory: ArkAgentWorkerFactory,
    userdata: *mut c_void,
) -> ArkAgentResult {
    boundary(|| {
        let set: Arc<Mutex<Vec<SubAgentDefinition>>> = handles::get(Kind::Workers, workers)?;
        // SAFETY: forwarded contract.
        let (name, description) = unsafe { (str_arg(name, "name")?, str_arg(description, "description")?) };
        let callback = factory.ok_or_else(|| FfiError::new(ArkAgentResult::NullArgument, "factory is NULL"))?;
        let trimmed = std::ffi::CString::new(name.trim()).map_err(|_| FfiError::new(ArkAgentResult::InvalidUtf8, "name contains NUL"))?;
        let host = Arc::new(HostWorkerFactory { callback, userdata: UserData(userdata), name: trimmed });
        let definition = SubAgentDefinition::create(name, description, host)?;
        let mut set = set.lock().map_err(|_| FfiError::new(ArkAgentResult::Internal, "poisoned"))?;
        if set.iter().any(|d| d.name == definition.name) {
            return Err(ArkAgentError::config(ErrorCode::SubagentNameDuplicate, format!("sub-agent {:?} is already registered", definition.name)).into());
        }
        set.push(definition);
        Ok(())
    })
}

/// Frees a worker set. NULL and already-freed handles are ignored.
#[no_mangle]
pub extern "C" fn arkagent_workers_free(workers: *mut ArkAgentWorkers) {
    free_boundary(|| handles::remove::<_, Mutex<Vec<SubAgentDefinition>>>(Kind::Workers, workers).map(drop));
}

pub(crate) fn workers_arg(workers: *const ArkAgentWorkers) -> FfiResult<Vec<SubAgentDefinition>> {
    if workers.is_null() {
        return Ok(Vec::new());
    }
    let set: Arc<Mutex<Vec<SubAgentDefinition>>> = handles::get(Kind::Workers, workers)?;
    let guard = set.lock().map_err(|_| FfiError::new(ArkAgentResult::Internal, "poisoned"))?;
    Ok(guard.clone())
}

pub(crate) fn with_builder(builder: *mut ArkAgentWorkerBuilder, f: impl FnOnce(&mut AgentRuntimeConfig) -> FfiResult<()>) -> FfiResult<()> {
    let cell: Arc<Mutex<Option<AgentRuntimeConfig>>> = handles::get(Kind::WorkerBuilder, builder)?;
    let mut guard = cell.lock().map_err(|_| FfiError::new(ArkAgentResult::Internal, "poisoned"))?;
    let config = guard.as_mut().ok_or_else(|| FfiError::new(ArkAgentResult::InvalidHandle, "the worker builder is finished"))?;
    f(config)
}

/// Applies `{"system_prompt"?,"max_iterations"?,"max_parallel_tools"?,"tool_timeout_ms"?,"model"?:name|{…},
/// "temperature"?,"max_tokens"?,"price"?:{…}|null,"thinking"?:"off"|"on"|{…}|null}` to the
/// worker; on error the worker is unchanged. `"thinking"` (THINK-4, as in
/// `arkagent_runtime_new`) replaces the inherited setting, `null` leaves the provider's
/// default. COST-2: `"price"` is the worker model's own (as in `arkagent_runtime_new`);
/// a `"model"` naming another model without a `"price"` drops the inherited price, and
/// `"price":null` drops it, so a worker is never priced at another model's price. A
/// `"model"` object is a whole model config, as `arkagent_runtime_new`'s `"model"` (what an
/// ArkTS `WorkerConfig.model` or a Rust factory gives): the worker's own `"base_url"`,
/// `"api_key"`, `"wire_format"`, image bounds and `"price"` (none when it gives none). An
/// invalid price or model gives `ARK_AGENT_RESULT_INVALID_CONFIG`.
///
/// # Safety
/// `overrides_json` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_worker_configure(builder: *mut ArkAgentWorkerBuilder, overrides_json: *const c_char) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let json = unsafe { str_arg(overrides_json, "overrides_json") }?;
        with_builder(builder, |config| {
            // Applied to a copy: a rejected override leaves the worker as it was.
            let mut next = config.clone();
            next.apply_overrides_json(json)?;
            *config = next;
            Ok(())
        })
    })
}

/// Registers a tool on the worker (same contract as `arkagent_tools_register`). A
/// `delegate_task` registered here is removed before the worker runs.
///
/// # Safety
/// `definition_json` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_worker_register_tool(
    builder: *mut ArkAgentWorkerBuilder,
    definition_json: *const c_char,
    callback: ArkAgentToolCallback,
    userdata: *mut c_void,
) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let json = unsafe { str_arg(definition_json, "definition_json") }?;
        with_builder(builder, |config| register_host_tool(&mut config.tools, json, callback, userdata))
    })
}
