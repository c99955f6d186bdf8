// `suzent://` links: the inbox the app fills (installs waiting for consent, chats to open,
// refusals) and the install dialog's answers, unwrapped like `api` (same ApiError).
import { commands, events } from "./bindings";
import { unwrapCommand } from "./api";

export const deepLinkApi = {
  inbox: () => unwrapCommand("deep_link_inbox", commands.deepLinkInbox()),
  confirm: (id: string) => unwrapCommand("confirm_mcp_install", commands.confirmMcpInstall(id)),
  cancel: (id: string) => unwrapCommand("cancel_mcp_install", commands.cancelMcpInstall(id)),
};

/** Subscribes to "a link arrived or was answered"; resolves to the unsubscribe function. */
export function listenDeepLinks(cb: () => void): Promise<() => void> {
  return events.deepLinkReceived.listen(() => cb());
}
