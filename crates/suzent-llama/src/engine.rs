//! The in-process engine: one worker thread per loaded model, owning the llama.cpp model and its
//! context, fed with jobs over a channel.
//!
//! The model is loaded on first use and shared by every chat (jobs run one at a time, in order);
//! the worker keeps the tokens already in its KV cache and evaluates only what a new prompt adds
//! after the common prefix (an agent's next step repeats the whole conversation). After
//! [`EngineOptions::idle_unload`] without a job the worker ends and the memory is freed; the next
//! job loads the model again.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use suzent_core::ChatMessage;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::grammar::{ToolGrammar, tool_grammar};
use crate::machine;
use crate::template::{ChatTemplate, TemplateTool, ToolFormat};

/// Settings of the engine; `None` fields are chosen from the machine and the model.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineOptions {
    /// Context size in tokens (default: from the model's training context and free memory, at
    /// most 16,384).
    pub context_size: Option<u32>,
    /// CPU threads for generation and prompt evaluation (default: the machine's cores).
    pub threads: Option<u32>,
    /// Unload the model after this long without a request.
    pub idle_unload: Duration,
    /// Layers offloaded to a GPU when a GPU back end is built in (`metal`, `vulkan`, `cuda`).
    pub gpu_layers: u32,
}

impl Default for EngineOptions {
    fn default() -> EngineOptions {
        EngineOptions {
            context_size: None,
            threads: None,
            idle_unload: Duration::from_secs(300),
            gpu_layers: if cfg!(any(feature = "metal", feature = "vulkan", feature = "cuda")) {
                999
            } else {
                0
            },
        }
    }
}

/// Whether and how the reply may call tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolChoice {
    /// Text or a call (the grammar applies once a call starts).
    #[default]
    Auto,
    /// A call and nothing else.
    Required,
    /// Text only; tools are still described so the history makes sense (with the generic
    /// form the reply is then `{"response": ...}`).
    None,
}

/// One completion request.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerateRequest {
    /// System prompt.
    pub system: String,
    /// The conversation so far.
    pub messages: Vec<ChatMessage>,
    /// Tools the model may call.
    pub tools: Vec<TemplateTool>,
    /// How it may call them.
    pub tool_choice: ToolChoice,
    /// Most tokens to generate.
    pub max_tokens: u32,
    /// Sampling temperature; 0 means greedy (deterministic).
    pub temperature: f32,
    /// Seed of the sampler when `temperature > 0`.
    pub seed: u32,
}

/// Why generation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// The model ended its turn.
    Stop,
    /// `max_tokens` or the context was reached.
    Length,
    /// The receiver was dropped.
    Cancelled,
}

/// Measurements of one request (all durations in milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Timings {
    /// Loading the model (0 when it was loaded already).
    pub load_ms: f64,
    /// Evaluating the prompt tokens not already cached.
    pub prompt_ms: f64,
    /// From the request to the first generated token.
    pub first_token_ms: f64,
    /// Generating after the first token.
    pub generation_ms: f64,
    /// Prompt tokens taken from the cache.
    pub cached_tokens: u32,
    /// Prompt tokens evaluated.
    pub evaluated_tokens: u32,
}

impl Timings {
    /// Prompt evaluation speed in tokens per second.
    pub fn prompt_tokens_per_second(&self) -> f64 {
        per_second(self.evaluated_tokens, self.prompt_ms)
    }
}

fn per_second(tokens: u32, ms: f64) -> f64 {
    if ms <= 0.0 {
        0.0
    } else {
        f64::from(tokens) * 1000.0 / ms
    }
}

/// A finished completion.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    /// The generated text (special tokens such as `<tool_call>` included, end-of-turn excluded).
    pub text: String,
    /// Tokens in the prompt.
    pub prompt_tokens: u32,
    /// Tokens generated.
    pub completion_tokens: u32,
    /// Why it stopped.
    pub finish: Finish,
    /// How this model writes tool calls.
    pub tool_format: ToolFormat,
    /// Whether a tool-call grammar constrained the reply.
    pub constrained: bool,
    /// Measurements.
    pub timings: Timings,
}

impl Generation {
    /// Generation speed in tokens per second (tokens after the first one).
    pub fn tokens_per_second(&self) -> f64 {
        per_second(
            self.completion_tokens.saturating_sub(1),
            self.timings.generation_ms,
        )
    }
}

/// What a running request reports.
#[derive(Debug)]
pub enum GenerateEvent {
    /// A piece of text (whole UTF-8 characters).
    Text(String),
    /// The end: the completion, or why it failed.
    Done(Result<Generation, LlamaError>),
}

/// What a loaded model is.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    /// The GGUF file.
    pub path: PathBuf,
    /// `general.name` from the GGUF, or the file name.
    pub name: String,
    /// The context size in use.
    pub context_size: u32,
    /// The context size it was trained with.
    pub trained_context: u32,
    /// Threads in use.
    pub threads: u32,
    /// Parameters.
    pub parameters: u64,
    /// Bytes of weights.
    pub size_bytes: u64,
    /// How it writes tool calls.
    pub tool_format: ToolFormat,
    /// Whether its chat template came from the GGUF (else ChatML is used).
    pub has_template: bool,
}

/// An engine failure.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlamaError {
    /// The GGUF file is missing or llama.cpp could not load it.
    #[error("cannot load model '{path}': {message}")]
    Load {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The prompt does not fit the context.
    #[error(
        "the prompt needs {prompt_tokens} tokens but the context holds {context_size} (set a larger context size or start a new chat)"
    )]
    ContextFull {
        /// Tokens in the prompt.
        prompt_tokens: u32,
        /// The context size.
        context_size: u32,
    },
    /// The chat template failed.
    #[error("{0}")]
    Template(String),
    /// llama.cpp failed while evaluating.
    #[error("llama.cpp failed: {0}")]
    Runtime(String),
    /// The worker thread ended before answering.
    #[error("the local model worker stopped unexpectedly")]
    WorkerGone,
}

/// The process-wide llama.cpp back end (it may be initialised once per process).
fn backend() -> Result<&'static LlamaBackend, LlamaError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(
                llama_cpp_2::LogOptions::default().with_logs_enabled(true),
            );
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| LlamaError::Runtime(e.clone()))
}

struct Job {
    request: GenerateRequest,
    events: UnboundedSender<GenerateEvent>,
    queued: Instant,
}

struct Worker {
    path: PathBuf,
    jobs: mpsc::Sender<Job>,
    info: ModelInfo,
    alive: Arc<AtomicBool>,
}

/// The local model engine: shared by every chat, at most one model loaded at a time.
#[derive(Clone)]
pub struct LocalEngine {
    options: EngineOptions,
    worker: Arc<Mutex<Option<Worker>>>,
}

impl std::fmt::Debug for LocalEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEngine")
            .field("options", &self.options)
            .field("loaded", &self.loaded())
            .finish()
    }
}

impl LocalEngine {
    /// An engine with nothing loaded.
    pub fn new(options: EngineOptions) -> LocalEngine {
        LocalEngine {
            options,
            worker: Arc::new(Mutex::new(None)),
        }
    }

    /// The loaded model, if any.
    pub fn loaded(&self) -> Option<ModelInfo> {
        let guard = self.worker.lock().ok()?;
        guard
            .as_ref()
            .filter(|w| w.alive.load(Ordering::SeqCst))
            .map(|w| w.info.clone())
    }

    /// Loads `model` (if it is not the loaded one) and returns what it is. Blocking: call it off
    /// the async runtime.
    pub fn load(&self, model: &Path) -> Result<ModelInfo, LlamaError> {
        let mut guard = self.worker.lock().map_err(|_| LlamaError::WorkerGone)?;
        Ok(self.ensure_worker(&mut guard, model)?.info.clone())
    }

    /// Unloads the model now (a running request finishes first).
    pub fn unload(&self) {
        if let Ok(mut guard) = self.worker.lock() {
            *guard = None;
        }
    }

    /// Starts a completion with `model`; its text and end arrive on the returned channel.
    /// Dropping the receiver cancels it. Loads the model first when needed, so this blocks for
    /// the load: call it off the async runtime.
    pub fn start(
        &self,
        model: &Path,
        request: GenerateRequest,
    ) -> Result<UnboundedReceiver<GenerateEvent>, LlamaError> {
        let (events, receiver) = unbounded_channel();
        let queued = Instant::now();
        let mut guard = self.worker.lock().map_err(|_| LlamaError::WorkerGone)?;
        let mut job = Job {
            request,
            events,
            queued,
        };
        // A worker that unloaded itself since the last request refuses the job: start another.
        for _ in 0..2 {
            let worker = self.ensure_worker(&mut guard, model)?;
            match worker.jobs.send(job) {
                Ok(()) => return Ok(receiver),
                Err(mpsc::SendError(returned)) => {
                    job = returned;
                    *guard = None;
                }
            }
        }
        Err(LlamaError::WorkerGone)
    }

    /// Runs a completion to its end, calling `on_text` with each piece (blocking).
    pub fn generate(
        &self,
        model: &Path,
        request: GenerateRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Generation, LlamaError> {
        let mut events = self.start(model, request)?;
        while let Some(event) = events.blocking_recv() {
            match event {
                GenerateEvent::Text(text) => on_text(&text),
                GenerateEvent::Done(result) => return result,
            }
        }
        Err(LlamaError::WorkerGone)
    }

    fn ensure_worker<'g>(
        &self,
        guard: &'g mut Option<Worker>,
        model: &Path,
    ) -> Result<&'g mut Worker, LlamaError> {
        let reuse = guard
            .as_ref()
            .is_some_and(|w| w.path == model && w.alive.load(Ordering::SeqCst));
        if !reuse {
            // Drop the old worker first so two models are never in memory at once.
            *guard = None;
            *guard = Some(spawn_worker(model, &self.options)?);
        }
        guard.as_mut().ok_or(LlamaError::WorkerGone)
    }
}

fn spawn_worker(path: &Path, options: &EngineOptions) -> Result<Worker, LlamaError> {
    let (jobs, job_receiver) = mpsc::channel::<Job>();
    let (ready, ready_receiver) = mpsc::channel::<Result<ModelInfo, LlamaError>>();
    let alive = Arc::new(AtomicBool::new(true));
    let thread_path = path.to_path_buf();
    let thread_options = options.clone();
    let thread_alive = alive.clone();
    std::thread::Builder::new()
        .name("suzent-llama".into())
        .spawn(move || {
            worker_main(&thread_path, &thread_options, job_receiver, ready);
            thread_alive.store(false, Ordering::SeqCst);
        })
        .map_err(|e| LlamaError::Runtime(format!("cannot start the model thread: {e}")))?;
    let info = ready_receiver
        .recv()
        .map_err(|_| LlamaError::WorkerGone)??;
    Ok(Worker {
        path: path.to_path_buf(),
        jobs,
        info,
        alive,
    })
}

/// ChatML, for GGUF files that carry no chat template.
const CHATML: &str = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

struct Loaded<'m> {
    model: &'m LlamaModel,
    context: LlamaContext<'m>,
    template: ChatTemplate,
    info: ModelInfo,
    cached: Vec<LlamaToken>,
    batch_size: usize,
}

fn worker_main(
    path: &Path,
    options: &EngineOptions,
    jobs: mpsc::Receiver<Job>,
    ready: mpsc::Sender<Result<ModelInfo, LlamaError>>,
) {
    let load_started = Instant::now();
    let load_error = |message: String| LlamaError::Load {
        path: path.to_path_buf(),
        message,
    };
    let backend = match backend() {
        Ok(backend) => backend,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    if !path.is_file() {
        let _ = ready.send(Err(load_error("no such file".into())));
        return;
    }
    let params = LlamaModelParams::default().with_n_gpu_layers(options.gpu_layers);
    let model = match LlamaModel::load_from_file(backend, path, &params) {
        Ok(model) => model,
        Err(e) => {
            let _ = ready.send(Err(load_error(e.to_string())));
            return;
        }
    };
    let loaded = match prepare(backend, &model, path, options) {
        Ok(loaded) => loaded,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let mut loaded = loaded;
    let mut load_ms = load_started.elapsed().as_secs_f64() * 1000.0;
    tracing::info!(
        model = %loaded.info.name,
        context = loaded.info.context_size,
        threads = loaded.info.threads,
        "local model loaded"
    );
    if ready.send(Ok(loaded.info.clone())).is_err() {
        return;
    }
    loop {
        match jobs.recv_timeout(options.idle_unload) {
            Ok(job) => {
                let result = run_job(&mut loaded, &job, load_ms);
                load_ms = 0.0;
                let _ = job.events.send(GenerateEvent::Done(result));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                tracing::info!(model = %loaded.info.name, "local model unloaded after idle time");
                break;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
}

fn prepare<'m>(
    backend: &LlamaBackend,
    model: &'m LlamaModel,
    path: &Path,
    options: &EngineOptions,
) -> Result<Loaded<'m>, LlamaError> {
    let trained = model.n_ctx_train();
    let context_size = options.context_size.unwrap_or_else(|| {
        machine::default_context_size(
            trained,
            kv_bytes_per_token(model),
            machine::available_memory(),
        )
    });
    let context_size = context_size.clamp(256, trained.max(256));
    let threads = options
        .threads
        .unwrap_or_else(machine::default_threads)
        .max(1);
    let batch_size: u32 = 512;
    let threads_i32 = i32::try_from(threads).unwrap_or(i32::MAX);
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(context_size))
        .with_n_batch(batch_size)
        .with_n_threads(threads_i32)
        .with_n_threads_batch(threads_i32);
    let context = model
        .new_context(backend, params)
        .map_err(|e| LlamaError::Load {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    let vocab = model.vocab();
    let token_text = |token: LlamaToken| {
        vocab
            .text(token)
            .and_then(|t| t.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let bos = token_text(vocab.bos());
    let eos = token_text(vocab.eos());
    let source = model
        .chat_template(None)
        .ok()
        .and_then(|t| t.to_string().ok());
    let has_template = source.is_some();
    let template = match ChatTemplate::new(source.as_deref().unwrap_or(CHATML), &bos, &eos) {
        Ok(template) => template,
        Err(e) => {
            tracing::warn!(error = %e, "the model's chat template does not compile; using ChatML");
            ChatTemplate::new(CHATML, &bos, &eos)
                .map_err(|e| LlamaError::Template(e.to_string()))?
        }
    };
    let name = model
        .meta_val_str("general.name")
        .ok()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
    let info = ModelInfo {
        path: path.to_path_buf(),
        name,
        context_size: context.n_ctx(),
        trained_context: trained,
        threads,
        parameters: model.n_params(),
        size_bytes: model.size(),
        tool_format: template.tool_format(),
        has_template,
    };
    Ok(Loaded {
        model,
        context,
        template,
        info,
        cached: Vec::new(),
        batch_size: batch_size as usize,
    })
}

/// Bytes of KV cache one token takes (f16 keys and values).
fn kv_bytes_per_token(model: &LlamaModel) -> u64 {
    let layers = u64::from(model.n_layer());
    let heads = u64::from(model.n_head().max(1));
    let kv_heads = u64::from(model.n_head_kv().max(1));
    let embd = u64::try_from(model.n_embd()).unwrap_or(0);
    2 * layers * (embd * kv_heads / heads) * 2
}

fn run_job(loaded: &mut Loaded<'_>, job: &Job, load_ms: f64) -> Result<Generation, LlamaError> {
    let request = &job.request;
    let prompt = loaded
        .template
        .render(&request.system, &request.messages, &request.tools)
        .map_err(|e| LlamaError::Template(e.to_string()))?;
    tracing::debug!(prompt = %prompt, "local model prompt");
    let model = loaded.model;
    let vocab = model.vocab();
    let bos_text = vocab
        .text(vocab.bos())
        .and_then(|t| t.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let add_bos = vocab.should_add_bos() && (bos_text.is_empty() || !prompt.starts_with(&bos_text));
    let tokens = vocab.tokenize(prompt.as_bytes(), add_bos, true);
    let context_size = loaded.context.n_ctx();
    let prompt_tokens = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
    if prompt_tokens + 16 > context_size {
        return Err(LlamaError::ContextFull {
            prompt_tokens,
            context_size,
        });
    }
    let max_new = request.max_tokens.min(context_size - prompt_tokens).max(1);

    // Reuse the cached prefix; evaluate at least the last prompt token to get its logits.
    let mut common = loaded
        .cached
        .iter()
        .zip(&tokens)
        .take_while(|(a, b)| a == b)
        .count();
    if common == tokens.len() {
        common -= 1;
    }
    let removed = u32::try_from(common)
        .ok()
        .and_then(|p0| {
            loaded
                .context
                .clear_kv_cache_seq(Some(0), Some(p0), None)
                .ok()
        })
        .unwrap_or(false);
    if !removed {
        loaded.context.clear_kv_cache();
        common = 0;
    }
    loaded.cached.truncate(common);

    let started = Instant::now();
    let mut batch = LlamaBatch::new(loaded.batch_size.max(1), 1);
    let total = tokens.len();
    for (chunk_index, chunk) in tokens[common..].chunks(loaded.batch_size).enumerate() {
        batch.clear();
        let base = common + chunk_index * loaded.batch_size;
        for (offset, token) in chunk.iter().enumerate() {
            let position = base + offset;
            let last = position + 1 == total;
            batch
                .add(*token, position_i32(position)?, &[0], last)
                .map_err(|e| LlamaError::Runtime(e.to_string()))?;
        }
        loaded
            .context
            .decode(&mut batch)
            .map_err(|e| LlamaError::Runtime(e.to_string()))?;
        loaded.cached.extend_from_slice(chunk);
    }
    let prompt_ms = started.elapsed().as_secs_f64() * 1000.0;

    let grammar = match request.tool_choice {
        // Tools described in the prompt but none may be called: the generic form is kept, as
        // an answer.
        ToolChoice::None
            if !request.tools.is_empty()
                && loaded.template.tool_format() == ToolFormat::Generic =>
        {
            crate::grammar::response_grammar()
                .map_err(|e| tracing::warn!(error = %e, "the answer is not constrained"))
                .ok()
        }
        ToolChoice::None => None,
        choice => tool_grammar(
            &request.tools,
            loaded.template.tool_format(),
            choice == ToolChoice::Required,
        )
        .unwrap_or_else(|e| {
            tracing::warn!(error = %e, "tool calls are not constrained");
            None
        }),
    };
    let (mut sampler, constrained) = sampler(model, grammar.as_ref(), request);

    let mut text = String::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut generated: u32 = 0;
    let mut first_token_ms = 0.0;
    let mut first_token_at = None;
    let mut finish = Finish::Length;
    let mut position = total;
    let mut logits_index = batch.n_tokens() - 1;
    while generated < max_new {
        let token = sampler.sample(&loaded.context, logits_index);
        if vocab.is_eog(token) {
            finish = Finish::Stop;
            break;
        }
        generated += 1;
        if first_token_at.is_none() {
            first_token_at = Some(Instant::now());
            first_token_ms = job.queued.elapsed().as_secs_f64() * 1000.0;
        }
        pending.extend(vocab.token_to_piece(token, true, None));
        let piece = take_utf8(&mut pending);
        if !piece.is_empty() {
            text.push_str(&piece);
            if job.events.send(GenerateEvent::Text(piece)).is_err() {
                finish = Finish::Cancelled;
                break;
            }
        }
        if position + 1 >= context_size as usize {
            break;
        }
        batch.clear();
        batch
            .add(token, position_i32(position)?, &[0], true)
            .map_err(|e| LlamaError::Runtime(e.to_string()))?;
        loaded
            .context
            .decode(&mut batch)
            .map_err(|e| LlamaError::Runtime(e.to_string()))?;
        loaded.cached.push(token);
        position += 1;
        logits_index = 0;
    }
    if !pending.is_empty() {
        let rest = String::from_utf8_lossy(&pending).into_owned();
        text.push_str(&rest);
        let _ = job.events.send(GenerateEvent::Text(rest));
    }
    let generation_ms = first_token_at
        .map(|at| at.elapsed().as_secs_f64() * 1000.0)
        .unwrap_or(0.0);
    Ok(Generation {
        text,
        prompt_tokens,
        completion_tokens: generated,
        finish,
        tool_format: loaded.template.tool_format(),
        constrained,
        timings: Timings {
            load_ms,
            prompt_ms,
            first_token_ms,
            generation_ms,
            cached_tokens: u32::try_from(common).unwrap_or(u32::MAX),
            evaluated_tokens: u32::try_from(total - common).unwrap_or(u32::MAX),
        },
    })
}

fn position_i32(position: usize) -> Result<i32, LlamaError> {
    i32::try_from(position)
        .map_err(|_| LlamaError::Runtime(format!("position {position} overflows")))
}

/// The sampler chain: the grammar (when there is one) first, then greedy or temperature
/// sampling. Returns whether the grammar is in it.
fn sampler(
    model: &LlamaModel,
    grammar: Option<&ToolGrammar>,
    request: &GenerateRequest,
) -> (LlamaSampler, bool) {
    let mut chain = Vec::new();
    let mut constrained = false;
    if let Some(grammar) = grammar {
        let built = if grammar.triggers.is_empty() {
            LlamaSampler::grammar(model, &grammar.grammar, &grammar.root)
        } else {
            // A trigger word that is one special token (Qwen's `<tool_call>`) also triggers as
            // that token.
            let trigger_tokens: Vec<LlamaToken> = grammar
                .triggers
                .iter()
                .filter_map(|word| {
                    let tokens = model.vocab().tokenize(word.as_bytes(), false, true);
                    (tokens.len() == 1).then(|| tokens[0])
                })
                .collect();
            LlamaSampler::grammar_lazy(
                model,
                &grammar.grammar,
                &grammar.root,
                &grammar.triggers,
                &trigger_tokens,
            )
        };
        match built {
            Ok(sampler) => {
                chain.push(sampler);
                constrained = true;
            }
            Err(e) => {
                tracing::warn!(error = %e, "the tool-call grammar was refused; calls are not constrained")
            }
        }
    }
    // A mild repetition penalty over the last 64 tokens (llama.cpp's classic default): small
    // models otherwise loop on one sentence under greedy decoding.
    chain.push(LlamaSampler::penalties(model.n_vocab(), 64, 1.1, 0.0, 0.0));
    if request.temperature > 0.0 {
        chain.push(LlamaSampler::top_k(40));
        chain.push(LlamaSampler::top_p(0.95, 1));
        chain.push(LlamaSampler::min_p(0.05, 1));
        chain.push(LlamaSampler::temp(request.temperature));
        chain.push(LlamaSampler::dist(request.seed));
    } else {
        chain.push(LlamaSampler::greedy());
    }
    (LlamaSampler::chain_simple(chain), constrained)
}

/// The longest valid UTF-8 prefix of `bytes`, removed from it; invalid bytes become U+FFFD.
fn take_utf8(bytes: &mut Vec<u8>) -> String {
    let mut out = String::new();
    loop {
        match std::str::from_utf8(bytes) {
            Ok(text) => {
                out.push_str(text);
                bytes.clear();
                return out;
            }
            Err(e) => {
                let valid = e.valid_up_to();
                out.push_str(&String::from_utf8_lossy(&bytes[..valid]));
                match e.error_len() {
                    // An incomplete character at the end: wait for the rest.
                    None => {
                        bytes.drain(..valid);
                        return out;
                    }
                    Some(bad) => {
                        out.push('\u{fffd}');
                        bytes.drain(..valid + bad);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn split_utf8_characters_wait_for_their_last_byte() {
        let mut bytes = "é".as_bytes()[..1].to_vec();
        assert_eq!(take_utf8(&mut bytes), "");
        bytes.extend(&"é".as_bytes()[1..]);
        bytes.extend(b"x");
        assert_eq!(take_utf8(&mut bytes), "éx");
        assert!(bytes.is_empty());
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        let mut bytes = vec![b'a', 0xff, b'b'];
        assert_eq!(take_utf8(&mut bytes), "a\u{fffd}b");
    }

    #[test]
    fn a_missing_model_file_is_a_load_error_naming_it() {
        let engine = LocalEngine::new(EngineOptions::default());
        let error = engine
            .load(Path::new("/nonexistent/model.gguf"))
            .unwrap_err();
        assert_eq!(
            error,
            LlamaError::Load {
                path: "/nonexistent/model.gguf".into(),
                message: "no such file".into()
            }
        );
        assert_eq!(engine.loaded(), None);
    }
}
