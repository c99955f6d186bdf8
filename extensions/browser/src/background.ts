// The service worker: the one connection to the Suzent app (ws://127.0.0.1:<port>/v1/bridge),
// pairing, the shared tabs (the "Suzent" tab group), and the commands the app sends. Every
// command runs code shipped inside this extension: the in-page agent (agent.js, called by the
// name of one of its fixed functions) and an allow-list of chrome.debugger methods for trusted
// input. Nothing the app sends is ever evaluated as script.

import type {
  AgentFunctionName,
  AppMessage,
  BridgeCommand,
  CommandOutcome,
  ExtensionMessage,
  FailureKind,
  FrameInfoWire,
  InputEffectsWire,
  InputEventWire,
  NavigationWire,
  TabInfoWire,
} from "./bindings";
import { type PopupRequest, type PopupState, initialState } from "./state";

const NATIVE_HOST = "dev.suzent.bridge";
const PROTOCOL = 1;
const LOAD_TIMEOUT_MS = 15000;
const KEEPALIVE_MS = 20000;
const RECONNECT_ALARM = "suzent-reconnect";

/** The only chrome.debugger methods this extension ever sends (trusted input). */
const ALLOWED_CDP = new Set(["Input.dispatchMouseEvent", "Input.dispatchKeyEvent", "Input.insertText"]);

/** The agent's fixed functions; any other name is refused before anything runs. */
const AGENT_FUNCTIONS: ReadonlySet<AgentFunctionName> = new Set([
  "snapshot",
  "act",
  "scrollPage",
  "frameRect",
  "announceFrames",
  "frameSlot",
  "pageInfo",
]);

interface Stored {
  credential?: string;
  pairingId?: string;
  deviceName?: string;
  wantConnected?: boolean;
}

let state: PopupState = initialState();
let socket: WebSocket | null = null;
let keepalive: ReturnType<typeof setInterval> | null = null;
const attached = new Set<number>();

class Failure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------------------------
// State for the popup

async function stored(): Promise<Stored> {
  return (await chrome.storage.local.get(["credential", "pairingId", "deviceName", "wantConnected"])) as Stored;
}

async function setState(patch: Partial<PopupState>): Promise<void> {
  state = { ...state, ...patch };
  state.sharedCount = (await sharedTabs()).length;
  state.controlledTab = await controlledTab();
  chrome.runtime.sendMessage({ kind: "state", state }).catch(() => {
    // No popup is open.
  });
}

async function groupId(): Promise<number | undefined> {
  const { groupId } = (await chrome.storage.session.get("groupId")) as { groupId?: number };
  if (groupId === undefined) return undefined;
  try {
    await chrome.tabGroups.get(groupId);
    return groupId;
  } catch {
    await chrome.storage.session.remove("groupId");
    return undefined;
  }
}

async function sharedTabs(): Promise<chrome.tabs.Tab[]> {
  const id = await groupId();
  if (id === undefined) return [];
  return chrome.tabs.query({ groupId: id });
}

async function controlledTab(): Promise<PopupState["controlledTab"]> {
  const shared = await sharedTabs();
  const tab = shared.find((t) => t.active) ?? shared[0];
  return tab && tab.id !== undefined ? { id: tab.id, title: tab.title ?? "", url: tab.url ?? "" } : null;
}

// ---------------------------------------------------------------------------------------------
// Sharing tabs: the tabs in the extension's "Suzent" tab group

async function share(tabId: number): Promise<void> {
  const existing = await groupId();
  if (existing !== undefined) {
    await chrome.tabs.group({ groupId: existing, tabIds: [tabId] });
    return;
  }
  const created = await chrome.tabs.group({ tabIds: [tabId] });
  await chrome.tabGroups.update(created, { title: chrome.i18n.getMessage("groupTitle"), color: "blue" });
  await chrome.storage.session.set({ groupId: created });
}

async function unshareAll(): Promise<void> {
  const ids = (await sharedTabs()).map((t) => t.id).filter((id): id is number => id !== undefined);
  for (const id of attached) await chrome.debugger.detach({ tabId: id }).catch(() => undefined);
  attached.clear();
  const [first, ...rest] = ids;
  if (first !== undefined) await chrome.tabs.ungroup([first, ...rest]).catch(() => undefined);
  await chrome.storage.session.remove("groupId");
}

async function isShared(tab: chrome.tabs.Tab): Promise<boolean> {
  const id = await groupId();
  return id !== undefined && tab.groupId === id;
}

// A tab opened by a shared tab (target=_blank, window.open) is shared too.
chrome.tabs.onCreated.addListener(async (tab) => {
  if (tab.id === undefined || tab.openerTabId === undefined) return;
  const opener = await chrome.tabs.get(tab.openerTabId).catch(() => undefined);
  if (opener && (await isShared(opener))) await share(tab.id).catch(() => undefined);
});

async function tabsChanged(): Promise<void> {
  await setState({});
  send({ type: "tabsChanged", shared: state.sharedCount });
}
chrome.tabs.onUpdated.addListener((_id, change) => {
  if ("groupId" in change || "title" in change) void tabsChanged();
});
chrome.tabs.onRemoved.addListener((tabId) => {
  attached.delete(tabId);
  void tabsChanged();
});
chrome.debugger.onDetach.addListener((source) => {
  if (source.tabId !== undefined) attached.delete(source.tabId);
});

// ---------------------------------------------------------------------------------------------
// The connection

/**
 * The app's port, from the native messaging host the app installs (its manifest allows only
 * the paired extension). There is no fallback to a guessed port: whatever listens there could
 * be another program, and the hello carries the credential.
 */
async function port(): Promise<number | null> {
  try {
    const answer = (await chrome.runtime.sendNativeMessage(NATIVE_HOST, { want: "port" })) as { port?: unknown };
    if (typeof answer?.port === "number" && answer.port > 0 && answer.port < 65536) return answer.port;
  } catch {
    // No native host: the app never ran on this computer, or this extension is not the paired one.
  }
  return null;
}

function browserInfo(): { browser: string; browserVersion: string } {
  const data = (navigator as Navigator & { userAgentData?: { brands: { brand: string; version: string }[] } })
    .userAgentData;
  const brands = data?.brands ?? [];
  for (const [brand, name] of [
    ["Microsoft Edge", "Edge"],
    ["Google Chrome", "Chrome"],
    ["Chromium", "Chromium"],
  ] as const) {
    const hit = brands.find((b) => b.brand === brand);
    if (hit) return { browser: name, browserVersion: hit.version };
  }
  const match = /Chrom(?:e|ium)\/([\d.]+)/.exec(navigator.userAgent);
  return { browser: "Chromium", browserVersion: match?.[1] ?? "" };
}

function send(message: ExtensionMessage): void {
  if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

async function connect(): Promise<void> {
  if (socket && (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING)) return;
  const { credential } = await stored();
  await setState({ phase: "connecting", error: undefined });
  const appPort = await port();
  if (appPort === null) {
    await setState({ phase: "appNotRunning" });
    const { wantConnected } = await stored();
    if (wantConnected) await chrome.alarms.create(RECONNECT_ALARM, { delayInMinutes: 0.5 });
    return;
  }
  const ws = new WebSocket(`ws://127.0.0.1:${appPort}/v1/bridge`);
  socket = ws;
  ws.onopen = () => {
    const info = browserInfo();
    ws.send(
      JSON.stringify({
        type: "hello",
        protocol: PROTOCOL,
        browser: info.browser,
        browserVersion: info.browserVersion,
        extensionVersion: chrome.runtime.getManifest().version,
        credential: credential ?? null,
      } satisfies ExtensionMessage),
    );
    if (!credential) ws.send(JSON.stringify({ type: "pairRequest" } satisfies ExtensionMessage));
    keepalive = setInterval(() => send({ type: "ping" }), KEEPALIVE_MS);
  };
  ws.onmessage = (event) => {
    let message: AppMessage;
    try {
      message = JSON.parse(String(event.data)) as AppMessage;
    } catch {
      return;
    }
    void onMessage(message);
  };
  ws.onclose = (event) => void onClose(ws, event);
}

async function onMessage(message: AppMessage): Promise<void> {
  switch (message.type) {
    case "welcome":
      await chrome.storage.local.set({ deviceName: message.deviceName, pairingId: message.pairingId });
      await setState({ phase: "connected", device: message.deviceName, code: undefined });
      break;
    case "pairPending":
      await setState({ phase: "waiting", code: message.code });
      break;
    case "paired":
      await chrome.storage.local.set({
        credential: message.credential,
        pairingId: message.pairingId,
        deviceName: message.deviceName,
      });
      await setState({ phase: "connected", device: message.deviceName, code: undefined });
      break;
    case "pairRejected":
      await chrome.storage.local.set({ wantConnected: false });
      await setState({ phase: "rejected", reason: message.reason, code: undefined });
      break;
    case "revoked":
      await forget();
      await setState({ phase: "revoked" });
      break;
    case "request": {
      const outcome = await run(message.command);
      send({ type: "response", id: message.id, outcome });
      break;
    }
  }
}

async function forget(): Promise<void> {
  await chrome.storage.local.remove(["credential", "pairingId", "deviceName"]);
  await chrome.storage.local.set({ wantConnected: false });
  await unshareAll();
}

async function onClose(ws: WebSocket, event: CloseEvent): Promise<void> {
  if (socket === ws) socket = null;
  if (keepalive) clearInterval(keepalive);
  keepalive = null;
  if (event.reason === "credential refused") {
    // The app does not know this credential (revoked while we were away, or the app's data
    // was reset): forget it, so Connect pairs anew.
    await forget();
    await setState({ phase: "revoked" });
    return;
  }
  if (event.reason === "revoked" || state.phase === "revoked" || state.phase === "rejected") return;
  const { credential, wantConnected } = await stored();
  if (state.phase === "connecting" && !event.wasClean) {
    await setState({ phase: "appNotRunning" });
  } else {
    await setState({ phase: credential ? "disconnected" : "notPaired", code: undefined });
  }
  if (wantConnected) await chrome.alarms.create(RECONNECT_ALARM, { delayInMinutes: 0.5 });
}

async function disconnect(): Promise<void> {
  await chrome.storage.local.set({ wantConnected: false });
  await chrome.alarms.clear(RECONNECT_ALARM);
  await unshareAll();
  socket?.close(1000, "disconnected by the user");
  socket = null;
  const { credential } = await stored();
  await setState({ phase: credential ? "disconnected" : "notPaired", code: undefined });
}

chrome.alarms.onAlarm.addListener(async (alarm) => {
  if (alarm.name !== RECONNECT_ALARM) return;
  const { wantConnected, credential } = await stored();
  if (wantConnected && credential) await connect();
});

async function resume(): Promise<void> {
  const { wantConnected, credential, deviceName } = await stored();
  if (credential) state = { ...state, phase: "disconnected", device: deviceName };
  if (wantConnected && credential) await connect();
}
chrome.runtime.onStartup.addListener(() => void resume());
chrome.runtime.onInstalled.addListener(() => void resume());
void resume();

// ---------------------------------------------------------------------------------------------
// The popup

chrome.runtime.onMessage.addListener((request: PopupRequest, sender, reply) => {
  // Only this extension's own popup page talks to the worker.
  if (sender.id !== chrome.runtime.id || !sender.url?.startsWith(chrome.runtime.getURL("popup.html"))) return false;
  void (async () => {
    try {
      if (request.kind === "connect") {
        await chrome.storage.local.set({ wantConnected: true });
        const tab = await tabToShare();
        if (tab?.id !== undefined) await share(tab.id);
        await connect();
      } else if (request.kind === "disconnect") {
        await disconnect();
      } else if (request.kind === "revoke") {
        send({ type: "revoke" });
        await forget();
        socket?.close(1000, "revoked by the user");
        await setState({ phase: "notPaired" });
      }
      await setState({});
    } catch (e) {
      await setState({ error: e instanceof Error ? e.message : String(e) });
    }
    reply(state);
  })();
  return true;
});

/**
 * The tab Connect shares: the active tab of the focused window, or — when that is this
 * extension's own popup page opened as a tab — the most recently used web page.
 */
async function tabToShare(): Promise<chrome.tabs.Tab | undefined> {
  const [active] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
  if (active && controllable(active.url ?? "")) return active;
  if (!active?.url?.startsWith(chrome.runtime.getURL(""))) return undefined;
  const pages = (await chrome.tabs.query({})).filter((t) => controllable(t.url ?? ""));
  pages.sort((a, b) => (b.lastAccessed ?? 0) - (a.lastAccessed ?? 0));
  return pages[0];
}

// ---------------------------------------------------------------------------------------------
// Commands

function controllable(url: string): boolean {
  return url.startsWith("http://") || url.startsWith("https://") || url === "about:blank";
}

function checkUrl(url: string): void {
  if (!controllable(url)) {
    const scheme = url.split(":")[0] ?? url;
    throw new Failure("refused", `navigation to '${scheme}:' urls is refused (only http, https and about:blank)`);
  }
}

async function sharedTab(id: string): Promise<chrome.tabs.Tab> {
  const tabId = Number(id);
  if (!Number.isInteger(tabId)) throw new Failure("tabClosed", `tab ${id} does not exist`);
  const tab = await chrome.tabs.get(tabId).catch(() => undefined);
  if (!tab) throw new Failure("tabClosed", `tab ${id} no longer exists`);
  if (!(await isShared(tab))) throw new Failure("tabNotShared", `tab ${id} is not shared with Suzent`);
  return tab;
}

async function controllableTab(id: string): Promise<chrome.tabs.Tab> {
  const tab = await sharedTab(id);
  if (!controllable(tab.url ?? "")) {
    throw new Failure("refused", `tab ${id} shows a page Suzent never controls (${(tab.url ?? "").split(":")[0]}:)`);
  }
  return tab;
}

async function tabInfo(tab: chrome.tabs.Tab): Promise<TabInfoWire> {
  const shared = await isShared(tab);
  return {
    id: String(tab.id),
    url: shared ? (tab.url ?? "") : "",
    title: shared ? (tab.title ?? "") : "",
    active: tab.active,
    shared,
    opener: tab.openerTabId !== undefined ? String(tab.openerTabId) : null,
  };
}

/** Waits until the tab's top frame finished loading (bounded), then returns the tab. */
async function loaded(tabId: number, start: () => Promise<unknown>): Promise<chrome.tabs.Tab> {
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const listener = (id: number, change: { status?: string }) => {
    if (id === tabId && change.status === "complete") done();
  };
  chrome.tabs.onUpdated.addListener(listener);
  try {
    await start();
    const timer = new Promise<void>((resolve) => setTimeout(resolve, LOAD_TIMEOUT_MS));
    await Promise.race([finished, timer]);
  } finally {
    chrome.tabs.onUpdated.removeListener(listener);
  }
  const tab = await chrome.tabs.get(tabId).catch(() => undefined);
  if (!tab) throw new Failure("tabClosed", `tab ${tabId} no longer exists`);
  return tab;
}

async function frames(tab: chrome.tabs.Tab): Promise<FrameInfoWire[]> {
  const all = (await chrome.webNavigation.getAllFrames({ tabId: tab.id! })) ?? [];
  const out: FrameInfoWire[] = [];
  const byParent = new Map<number, chrome.webNavigation.GetAllFrameResultDetails[]>();
  for (const f of all) byParent.set(f.parentFrameId, [...(byParent.get(f.parentFrameId) ?? []), f]);
  const queue = [...(byParent.get(-1) ?? [])];
  while (queue.length > 0) {
    const f = queue.shift()!;
    const ok = controllable(f.url) || f.url === "about:srcdoc";
    out.push({
      id: String(f.frameId),
      parent: f.parentFrameId === -1 ? null : String(f.parentFrameId),
      url: f.url,
      reachable: ok && !f.errorOccurred,
      reason: ok ? (f.errorOccurred ? "the frame failed to load" : null) : `a ${f.url.split(":")[0]}: frame`,
    });
    queue.push(...(byParent.get(f.frameId) ?? []));
  }
  return out;
}

async function callAgent(tab: chrome.tabs.Tab, frame: string, fn: AgentFunctionName, args: unknown): Promise<unknown> {
  if (!AGENT_FUNCTIONS.has(fn)) throw new Failure("refused", `'${fn}' is not one of the agent's functions`);
  const frameId = Number(frame);
  if (!Number.isInteger(frameId)) throw new Failure("frameGone", `frame ${frame} does not exist`);
  const target = { tabId: tab.id!, frameIds: [frameId] };
  try {
    // The shipped agent, in the extension's isolated world (a second injection is a no-op).
    await chrome.scripting.executeScript({ target, files: ["agent.js"] });
    const [result] = await chrome.scripting.executeScript({
      target,
      // A fixed function of this extension; the name and the arguments are data.
      func: (name: string, callArgs: unknown) =>
        (globalThis as unknown as { __suzentAgent: { call(n: string, a: unknown): unknown } }).__suzentAgent.call(
          name,
          callArgs,
        ),
      args: [fn, args],
    });
    return result?.result ?? null;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (/No frame with id|Frame with ID .* was removed|frame was removed/i.test(message)) {
      throw new Failure("frameGone", `frame ${frame} is gone`);
    }
    if (/No tab with id/i.test(message)) throw new Failure("tabClosed", `tab ${tab.id} no longer exists`);
    throw new Failure("agent", `the page agent failed: ${message}`);
  }
}

async function cdp(tabId: number, method: string, params: object): Promise<void> {
  if (!ALLOWED_CDP.has(method)) throw new Failure("refused", `the debugger method '${method}' is not allowed`);
  if (!attached.has(tabId)) {
    await chrome.debugger.attach({ tabId }, "1.3");
    attached.add(tabId);
  }
  await chrome.debugger.sendCommand({ tabId }, method, params);
}

async function input(tab: chrome.tabs.Tab, event: InputEventWire): Promise<void> {
  const tabId = tab.id!;
  switch (event.kind) {
    case "mouse_move":
      await cdp(tabId, "Input.dispatchMouseEvent", { type: "mouseMoved", x: event.x, y: event.y });
      return;
    case "click":
      for (let i = 1; i <= Math.max(1, Math.min(event.count, 3)); i++) {
        const base = { x: event.x, y: event.y, button: "left", buttons: 1, clickCount: i };
        await cdp(tabId, "Input.dispatchMouseEvent", { ...base, type: "mousePressed" });
        await cdp(tabId, "Input.dispatchMouseEvent", { ...base, type: "mouseReleased", buttons: 0 });
      }
      return;
    case "key": {
      const base = {
        key: event.key,
        code: event.code,
        windowsVirtualKeyCode: event.keyCode,
        nativeVirtualKeyCode: event.keyCode,
        modifiers: event.modifiers,
      };
      await cdp(tabId, "Input.dispatchKeyEvent", {
        ...base,
        type: event.text ? "keyDown" : "rawKeyDown",
        ...(event.text ? { text: event.text, unmodifiedText: event.text } : {}),
      });
      await cdp(tabId, "Input.dispatchKeyEvent", { ...base, type: "keyUp" });
      return;
    }
    case "insert_text":
      await cdp(tabId, "Input.insertText", { text: event.text });
      return;
  }
}

/**
 * Dispatches the input while listening for what it starts in the tab, then makes one round trip
 * through the page: the page handled the event before the debugger answered, so the navigation
 * or new window it started was reported to this worker before the page answers that trip.
 */
async function inputWatched(tab: chrome.tabs.Tab, event: InputEventWire): Promise<InputEffectsWire> {
  const tabId = tab.id!;
  const effects: InputEffectsWire = { navigation: false, newTab: false };
  const onNavigation = (d: { tabId: number; frameId: number }) => {
    if (d.tabId === tabId && d.frameId === 0) effects.navigation = true;
  };
  const onTarget = (d: { sourceTabId: number }) => {
    if (d.sourceTabId === tabId) effects.newTab = true;
  };
  const onCreated = (t: chrome.tabs.Tab) => {
    if (t.openerTabId === tabId) effects.newTab = true;
  };
  chrome.webNavigation.onBeforeNavigate.addListener(onNavigation);
  chrome.webNavigation.onHistoryStateUpdated.addListener(onNavigation);
  chrome.webNavigation.onReferenceFragmentUpdated.addListener(onNavigation);
  chrome.webNavigation.onCreatedNavigationTarget.addListener(onTarget);
  chrome.tabs.onCreated.addListener(onCreated);
  try {
    await input(tab, event);
    try {
      await chrome.scripting.executeScript({ target: { tabId, frameIds: [0] }, func: () => 0 });
    } catch {
      // The document is going away: most likely the navigation the input started.
      effects.navigation = true;
    }
    return effects;
  } finally {
    chrome.webNavigation.onBeforeNavigate.removeListener(onNavigation);
    chrome.webNavigation.onHistoryStateUpdated.removeListener(onNavigation);
    chrome.webNavigation.onReferenceFragmentUpdated.removeListener(onNavigation);
    chrome.webNavigation.onCreatedNavigationTarget.removeListener(onTarget);
    chrome.tabs.onCreated.removeListener(onCreated);
  }
}

async function navigate(tab: chrome.tabs.Tab, to: NavigationWire): Promise<chrome.tabs.Tab> {
  const tabId = tab.id!;
  switch (to.kind) {
    case "url":
      checkUrl(to.url);
      return loaded(tabId, () => chrome.tabs.update(tabId, { url: to.url }));
    case "back":
      return loaded(tabId, () => chrome.tabs.goBack(tabId));
    case "forward":
      return loaded(tabId, () => chrome.tabs.goForward(tabId));
    case "reload":
      return loaded(tabId, () => chrome.tabs.reload(tabId, { bypassCache: to.ignoreCache }));
  }
}

async function execute(command: BridgeCommand): Promise<unknown> {
  switch (command.op) {
    case "tabs": {
      const all = await chrome.tabs.query({});
      return Promise.all(all.map(tabInfo));
    }
    case "openTab": {
      checkUrl(command.url);
      const shared = await sharedTabs();
      const anchor = shared.find((t) => t.active) ?? shared[0];
      const created = await chrome.tabs.create({
        url: "about:blank",
        active: true,
        ...(anchor ? { windowId: anchor.windowId, openerTabId: anchor.id } : {}),
      });
      await share(created.id!);
      const tab = await loaded(created.id!, () => chrome.tabs.update(created.id!, { url: command.url }));
      return tabInfo(tab);
    }
    case "closeTab": {
      const tab = await sharedTab(command.tab);
      await chrome.tabs.remove(tab.id!);
      return null;
    }
    case "activateTab": {
      const tab = await sharedTab(command.tab);
      await chrome.tabs.update(tab.id!, { active: true });
      await chrome.windows.update(tab.windowId, { focused: true }).catch(() => undefined);
      return null;
    }
    case "navigate": {
      const tab = await sharedTab(command.tab);
      return tabInfo(await navigate(tab, command.to as NavigationWire));
    }
    case "frames":
      return frames(await controllableTab(command.tab));
    case "callAgent":
      return callAgent(await controllableTab(command.tab), command.frame, command.function, command.args);
    case "input":
      return inputWatched(await controllableTab(command.tab), command.event as InputEventWire);
  }
}

async function run(command: BridgeCommand): Promise<CommandOutcome> {
  try {
    const value = await execute(command);
    return { status: "ok", value: value ?? null };
  } catch (e) {
    if (e instanceof Failure) return { status: "error", kind: e.kind, message: e.message };
    const message = e instanceof Error ? e.message : String(e);
    if (/No tab with id/i.test(message)) return { status: "error", kind: "tabClosed", message: message.toLowerCase() };
    return { status: "error", kind: "browser", message };
  }
}
