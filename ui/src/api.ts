// Typed API over the generated bindings: every command's `Result` is unwrapped into its value or
// an `ApiError` whose message a person can read.
import { commands, events } from "./bindings";
import type {
  ApprovalResponse,
  Attachment,
  BrowserMode,
  AuditFilter,
  ChannelConfig,
  ChannelPlatform,
  ChannelProfile,
  CreateChatArgs,
  DeviceScope,
  DownloadProgress,
  GoalInput,
  JobInput,
  JsonValue,
  McpServerConfig,
  PermissionMode,
  RuleDraft,
  RuntimeEvent,
  SettingsPatch,
  SurfaceAction,
} from "./types";

/** A failed backend command, with a readable message and the command it came from. */
export class ApiError extends Error {
  readonly command: string;
  readonly kind: string | null;
  /** The argument or form field the backend named as at fault (`name`, `url`, ...), if any. */
  readonly field: string | null;
  constructor(command: string, message: string, kind: string | null, field: string | null = null) {
    super(message);
    this.name = "ApiError";
    this.command = command;
    this.kind = kind;
    this.field = field;
  }
}

/** Turns whatever a command rejected with into a sentence. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "string") return error || "unknown error";
  if (error && typeof error === "object") {
    const o = error as Record<string, unknown>;
    if (typeof o.message === "string" && o.message) return o.message;
    if (typeof o.error === "string" && o.error) return o.error;
    try {
      return JSON.stringify(error);
    } catch {
      return "unknown error";
    }
  }
  return String(error ?? "unknown error");
}

type Res<T> = { status: "ok"; data: T } | { status: "error"; error: unknown };

/** A command's result as its value, or an `ApiError` (for API files beside this one). */
export function unwrapCommand<T>(command: string, p: Promise<Res<T>>): Promise<T> {
  return unwrap(command, p);
}

async function unwrap<T>(command: string, p: Promise<Res<T>>): Promise<T> {
  let r: Res<T>;
  try {
    r = await p;
  } catch (e) {
    if (typeof window !== "undefined" && !("__TAURI_INTERNALS__" in window)) {
      throw new ApiError(command, "the Suzent backend is not available (this page runs outside the app)", null);
    }
    throw new ApiError(command, errorMessage(e), null);
  }
  if (r.status === "ok") return r.data;
  const kind =
    r.error && typeof r.error === "object" && typeof (r.error as { kind?: unknown }).kind === "string"
      ? ((r.error as { kind: string }).kind)
      : null;
  const field =
    r.error && typeof r.error === "object" && typeof (r.error as { field?: unknown }).field === "string"
      ? ((r.error as { field: string }).field)
      : null;
  throw new ApiError(command, errorMessage(r.error), kind, field);
}

export const api = {
  listSchedules: () => unwrap("list_schedules", commands.listSchedules()),
  saveSchedule: (input: JobInput) => unwrap("save_schedule", commands.saveSchedule(input)),
  removeSchedule: (jobId: string) => unwrap("remove_schedule", commands.removeSchedule(jobId)),
  pauseSchedule: (jobId: string, paused: boolean) => unwrap("pause_schedule", commands.pauseSchedule(jobId, paused)),
  runScheduleNow: (jobId: string) => unwrap("run_schedule_now", commands.runScheduleNow(jobId)),
  scheduleHistory: (jobId: string, limit: number) => unwrap("schedule_history", commands.scheduleHistory(jobId, limit)),
  previewSchedule: (schedule: string, timezone: string | null) =>
    unwrap("preview_schedule", commands.previewSchedule(schedule, timezone)),
  schedulerStatus: () => unwrap("scheduler_status", commands.schedulerStatus()),
  systemTimezone: () => commands.systemTimezone(),
  chatHeartbeat: (chatId: string) => unwrap("chat_heartbeat", commands.chatHeartbeat(chatId)),
  setChatHeartbeat: (chatId: string, everyMinutes: number | null) =>
    unwrap("set_chat_heartbeat", commands.setChatHeartbeat(chatId, everyMinutes)),
  quietTurns: (chatId: string) => unwrap("quiet_turns", commands.quietTurns(chatId)),
  chatGoal: (chatId: string) => unwrap("chat_goal", commands.chatGoal(chatId)),
  startGoal: (chatId: string, input: GoalInput) => unwrap("start_goal", commands.startGoal(chatId, input)),
  pauseGoal: (chatId: string) => unwrap("pause_goal", commands.pauseGoal(chatId)),
  resumeGoal: (chatId: string) => unwrap("resume_goal", commands.resumeGoal(chatId)),
  clearGoal: (chatId: string) => unwrap("clear_goal", commands.clearGoal(chatId)),
  listChats: () => unwrap("list_chats", commands.listChats()),
  searchChats: (query: string, limit: number) => unwrap("search_chats", commands.searchChats(query, limit)),
  providerKeys: () => unwrap("provider_keys", commands.providerKeys()),
  setSessionKey: (provider: string, key: string) => unwrap("set_session_key", commands.setSessionKey(provider, key)),
  listModels: (provider: string, baseUrl: string | null, apiKey: string | null) =>
    unwrap("list_models", commands.listModels(provider, baseUrl, apiKey)),
  testConnection: (model: string, baseUrl: string | null) => unwrap("test_connection", commands.testConnection(model, baseUrl)),
  setChatModel: (chatId: string, model: string | null) => unwrap("set_chat_model", commands.setChatModel(chatId, model)),
  chatBrowserMode: (chatId: string) => unwrap("chat_browser_mode", commands.chatBrowserMode(chatId)),
  setChatBrowserMode: (chatId: string, mode: BrowserMode | null) =>
    unwrap("set_chat_browser_mode", commands.setChatBrowserMode(chatId, mode)),
  logFile: () => unwrap("log_file", commands.logFile()),
  openLogFolder: () => unwrap("open_log_folder", commands.openLogFolder()),
  createChat: (args: CreateChatArgs = {}) => unwrap("create_chat", commands.createChat(args)),
  renameChat: (chatId: string, title: string) => unwrap("rename_chat", commands.renameChat(chatId, title)),
  deleteChat: (chatId: string) => unwrap("delete_chat", commands.deleteChat(chatId)),
  getMessages: (chatId: string) => unwrap("get_messages", commands.getMessages(chatId)),
  chatNotes: (chatId: string) => unwrap("chat_notes", commands.chatNotes(chatId)),
  sendMessage: (chatId: string, text: string, attachments: Attachment[] = []) =>
    unwrap("send_message", commands.sendMessage(chatId, text, attachments)),
  addAttachment: (chatId: string, name: string, data: string) => unwrap("add_attachment", commands.addAttachment(chatId, name, data)),
  retryTurn: (chatId: string) => unwrap("retry_turn", commands.retryTurn(chatId)),
  compactChat: (chatId: string) => unwrap("compact_chat", commands.compactChat(chatId)),
  chatCompactions: (chatId: string) => unwrap("chat_compactions", commands.chatCompactions(chatId)),
  resumeApprovals: (chatId: string, answers: ApprovalResponse[]) =>
    unwrap("resume_approvals", commands.resumeApprovals(chatId, answers)),
  pendingApprovals: (chatId: string | null) => unwrap("pending_approvals", commands.pendingApprovals(chatId)),
  cancelRun: (chatId: string) => unwrap("cancel_run", commands.cancelRun(chatId)),
  setChatMode: (chatId: string, mode: PermissionMode) => unwrap("set_chat_mode", commands.setChatMode(chatId, mode)),
  setChatTools: (chatId: string, tools: string[] | null) =>
    unwrap("set_chat_tools", commands.setChatTools(chatId, tools)),
  getCatalog: () => unwrap("get_catalog", commands.getCatalog()),
  getSettings: () => unwrap("get_settings", commands.getSettings()),
  saveSettings: (patch: SettingsPatch) => unwrap("save_settings", commands.saveSettings(patch)),
  setApiKey: (provider: string, key: string) => unwrap("set_api_key", commands.setApiKey(provider, key)),
  deleteApiKey: (provider: string) => unwrap("delete_api_key", commands.deleteApiKey(provider)),
  listRules: (chatId: string | null) => unwrap("list_rules", commands.listRules(chatId)),
  addRule: (draft: RuleDraft, chatId: string | null) => unwrap("add_rule", commands.addRule(draft, chatId)),
  deleteRule: (ruleId: string) => unwrap("delete_rule", commands.deleteRule(ruleId)),
  readAuditLog: (filter: AuditFilter) => unwrap("read_audit_log", commands.readAuditLog(filter)),
  explainPermission: (tool: string, args: JsonValue, mode: PermissionMode | null, chatId: string | null) =>
    unwrap("explain_permission", commands.explainPermission(tool, args, mode, chatId)),
  pickWorkspace: () => unwrap("pick_workspace", commands.pickWorkspace()),
  backgroundTasks: () => unwrap("background_tasks", commands.backgroundTasks()),
  stopBackgroundTask: (taskId: string) => unwrap("stop_background_task", commands.stopBackgroundTask(taskId)),
  getPlan: (chatId: string) => unwrap("get_plan", commands.getPlan(chatId)),
  memoryBlocks: () => unwrap("memory_blocks", commands.memoryBlocks()),
  setMemoryBlock: (name: string, content: string) => unwrap("set_memory_block", commands.setMemoryBlock(name, content)),
  searchMemory: (query: string, limit: number) => unwrap("search_memory", commands.searchMemory(query, limit)),
  embeddingStatus: () => unwrap("embedding_status", commands.embeddingStatus()),
  downloadEmbeddingModel: () => unwrap("download_embedding_model", commands.downloadEmbeddingModel()),
  localModels: () => unwrap("local_models", commands.localModels()),
  pullLocalModel: (id: string) => unwrap("pull_local_model", commands.pullLocalModel(id)),
  importLocalModel: () => unwrap("import_local_model", commands.importLocalModel()),
  removeLocalModel: (id: string) => unwrap("remove_local_model", commands.removeLocalModel(id)),
  useLocalModel: (id: string) => unwrap("use_local_model", commands.useLocalModel(id)),
  listSkills: () => unwrap("list_skills", commands.listSkills()),
  setSkillEnabled: (name: string, enabled: boolean) => unwrap("set_skill_enabled", commands.setSkillEnabled(name, enabled)),
  listSurfaces: (chatId: string) => unwrap("list_surfaces", commands.listSurfaces(chatId)),
  submitSurfaceAction: (chatId: string, action: SurfaceAction) =>
    unwrap("submit_surface_action", commands.submitSurfaceAction(chatId, action)),
  deleteSurface: (chatId: string, surfaceId: string) => unwrap("delete_surface", commands.deleteSurface(chatId, surfaceId)),
  /** Stages an HtmlFrame document for the `suzent-frame:` scheme; returns its token (see `htmlFrameUrl`). */
  stageHtmlFrame: (html: string) => unwrap("stage_html_frame", commands.stageHtmlFrame(html)),
  mcpServers: () => unwrap("mcp_servers", commands.mcpServers()),
  mcpTools: (filter: string | null, loadSchemas: boolean) => unwrap("mcp_tools", commands.mcpTools(filter, loadSchemas)),
  addMcpServer: (name: string, config: McpServerConfig) => unwrap("add_mcp_server", commands.addMcpServer(name, config)),
  removeMcpServer: (name: string) => unwrap("remove_mcp_server", commands.removeMcpServer(name)),
  setMcpServerEnabled: (name: string, enabled: boolean) =>
    unwrap("set_mcp_server_enabled", commands.setMcpServerEnabled(name, enabled)),
  setMcpServerTrusted: (name: string, trusted: boolean) =>
    unwrap("set_mcp_server_trusted", commands.setMcpServerTrusted(name, trusted)),
  testMcpServer: (name: string) => unwrap("test_mcp_server", commands.testMcpServer(name)),
  refreshMcpServer: (name: string) => unwrap("refresh_mcp_server", commands.refreshMcpServer(name)),
  importMcpServers: (path: string) => unwrap("import_mcp_servers", commands.importMcpServers(path)),
  thisDevice: () => unwrap("this_device", commands.thisDevice()),
  listDevices: () => unwrap("list_devices", commands.listDevices()),
  nearbyDevices: () => unwrap("nearby_devices", commands.nearbyDevices()),
  startPairing: () => unwrap("start_pairing", commands.startPairing()),
  pairingStatus: (waitMs: number) => unwrap("pairing_status", commands.pairingStatus(waitMs)),
  confirmPairing: (accept: boolean) => unwrap("confirm_pairing", commands.confirmPairing(accept)),
  cancelPairing: () => unwrap("cancel_pairing", commands.cancelPairing()),
  joinDevice: (code: string) => unwrap("join_device", commands.joinDevice(code)),
  finishJoin: (accept: boolean) => unwrap("finish_join", commands.finishJoin(accept)),
  renameDevice: (deviceId: string, name: string) => unwrap("rename_device", commands.renameDevice(deviceId, name)),
  setDeviceScope: (deviceId: string, scope: DeviceScope) => unwrap("set_device_scope", commands.setDeviceScope(deviceId, scope)),
  revokeDevice: (deviceId: string) => unwrap("revoke_device", commands.revokeDevice(deviceId)),
  deviceOutbox: (deviceId: string | null) => unwrap("device_outbox", commands.deviceOutbox(deviceId)),
  listChannels: () => unwrap("list_channels", commands.listChannels()),
  testChannel: (platform: ChannelPlatform, baseUrl: string | null, token: string) =>
    unwrap("test_channel", commands.testChannel(platform, baseUrl, token)),
  addChannel: (channel: ChannelConfig) => unwrap("add_channel", commands.addChannel(channel)),
  setChannelToken: (name: string, token: string, sessionOnly: boolean) =>
    unwrap("set_channel_token", commands.setChannelToken(name, token, sessionOnly)),
  setChannelAllowedUsers: (name: string, users: string[]) =>
    unwrap("set_channel_allowed_users", commands.setChannelAllowedUsers(name, users)),
  setChannelEnabled: (name: string, enabled: boolean) => unwrap("set_channel_enabled", commands.setChannelEnabled(name, enabled)),
  setChannelProfile: (name: string, profile: ChannelProfile) => unwrap("set_channel_profile", commands.setChannelProfile(name, profile)),
  removeChannel: (name: string) => unwrap("remove_channel", commands.removeChannel(name)),
  channelRequests: () => unwrap("channel_requests", commands.channelRequests()),
  approveChannelRequest: (name: string, userId: string) =>
    unwrap("approve_channel_request", commands.approveChannelRequest(name, userId)),
  dismissChannelRequest: (name: string, userId: string) =>
    unwrap("dismiss_channel_request", commands.dismissChannelRequest(name, userId)),
};

/** Progress of local model downloads and imports; resolves to the unsubscribe function. */
export function listenLocalModelProgress(cb: (progress: DownloadProgress) => void): Promise<() => void> {
  return events.localModelProgress.listen((e) => cb(e.payload));
}

/** Subscribes to the runtime's event stream; resolves to the unsubscribe function. */
export function listenRuntimeEvents(cb: (event: RuntimeEvent) => void): Promise<() => void> {
  return events.runtimeEvent.listen((e) => cb(e.payload));
}
