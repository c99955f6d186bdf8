// Settings → Browser and the pairing dialog: the browser bridge's commands and event, unwrapped
// like `api` (same ApiError), kept apart so the rest of the API file stays as it is.
import { commands, events } from "./bindings";
import type { BridgeEvent } from "./bindings";
import { unwrapCommand } from "./api";

export const browserApi = {
  status: () => unwrapCommand("browser_status", commands.browserStatus()),
  approve: (requestId: string) => unwrapCommand("approve_browser_pairing", commands.approveBrowserPairing(requestId)),
  reject: (requestId: string) => unwrapCommand("reject_browser_pairing", commands.rejectBrowserPairing(requestId)),
  revoke: (pairingId: string) => unwrapCommand("revoke_browser_pairing", commands.revokeBrowserPairing(pairingId)),
  saveZip: () => unwrapCommand("save_browser_extension_zip", commands.saveBrowserExtensionZip()),
  showFolder: () => unwrapCommand("show_browser_extension_folder", commands.showBrowserExtensionFolder()),
};

/** Subscribes to bridge events (pairing requests, connections); resolves to the unsubscribe. */
export function listenBridgeEvents(cb: (event: BridgeEvent) => void): Promise<() => void> {
  return events.browserBridgeEvent.listen((e) => cb(e.payload));
}
