// The popup: shows the state (not paired / waiting for approval with the code / connected to
// <device name>, the controlled tab) and the Connect, Disconnect and Revoke buttons. It only
// talks to this extension's service worker.

import type { PopupRequest, PopupState } from "./state";

const t = (key: string, ...subs: string[]) => chrome.i18n.getMessage(key, subs) || key;

function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing #${id}`);
  return el as T;
}

for (const el of document.querySelectorAll<HTMLElement>("[data-i18n]")) {
  el.textContent = t(el.dataset.i18n ?? "");
}

function render(state: PopupState): void {
  const text: Record<PopupState["phase"], string> = {
    notPaired: t("stateNotPaired"),
    connecting: t("stateConnecting"),
    waiting: t("stateWaiting"),
    connected: t("stateConnected", state.device ?? ""),
    disconnected: t("stateDisconnected"),
    appNotRunning: t("stateAppNotRunning"),
    rejected: t("stateRejected", state.reason ?? ""),
    revoked: t("stateRevoked"),
  };
  byId("state").textContent = text[state.phase];
  byId("state").dataset.phase = state.phase;
  const code = byId("code");
  code.hidden = state.phase !== "waiting" || !state.code;
  code.textContent = state.code ?? "";
  const tab = byId("tab");
  tab.textContent = state.controlledTab
    ? `${t("controlledTab")} ${state.controlledTab.title || state.controlledTab.url} · ${t("sharedTabs", String(state.sharedCount))}`
    : t("noControlledTab");
  const error = byId("error");
  error.hidden = !state.error;
  error.textContent = state.error ? t("errorPrefix", state.error) : "";
  const live = state.phase === "connected" || state.phase === "waiting" || state.phase === "connecting";
  byId<HTMLButtonElement>("connect").disabled = state.phase === "connected" && state.sharedCount > 0;
  byId<HTMLButtonElement>("disconnect").disabled = !live && state.sharedCount === 0;
  byId<HTMLButtonElement>("revoke").hidden = state.phase === "notPaired" || state.phase === "revoked";
}

async function ask(request: PopupRequest): Promise<boolean> {
  const state = (await chrome.runtime.sendMessage(request).catch(() => undefined)) as PopupState | undefined;
  if (state) render(state);
  return state !== undefined;
}

/** The worker may still be starting (just installed or woken up): ask again until it answers. */
async function firstState(): Promise<void> {
  for (let i = 0; i < 40; i++) {
    if (await ask({ kind: "getState" })) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

chrome.runtime.onMessage.addListener((message: { kind?: string; state?: PopupState }) => {
  if (message.kind === "state" && message.state) render(message.state);
});

byId("connect").addEventListener("click", () => void ask({ kind: "connect" }));
byId("disconnect").addEventListener("click", () => void ask({ kind: "disconnect" }));
byId("revoke").addEventListener("click", () => void ask({ kind: "revoke" }));
void firstState();
