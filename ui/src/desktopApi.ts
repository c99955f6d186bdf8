// The desktop shell's own commands (updates, desktop preferences, tray, Start at login, the command-line tool), unwrapped like `api` (same
// ApiError), kept apart so the rest of the API file stays as it is.
import { commands, events } from "./bindings";
import type { DesktopPrefs, UpdateStatus } from "./bindings";
import { unwrapCommand } from "./api";

export const desktopApi = {
  updateStatus: () => unwrapCommand("update_status", commands.updateStatus()),
  checkForUpdate: () => unwrapCommand("check_for_update", commands.checkForUpdate()),
  downloadUpdate: () => unwrapCommand("download_update", commands.downloadUpdate()),
  restartToUpdate: () => unwrapCommand("restart_to_update", commands.restartToUpdate()),
  prefs: () => unwrapCommand("desktop_prefs", commands.desktopPrefs()),
  savePrefs: (prefs: DesktopPrefs) => unwrapCommand("save_desktop_prefs", commands.saveDesktopPrefs(prefs)),
  trayStatus: () => unwrapCommand("tray_status", commands.trayStatus()),
  autostartEnabled: () => unwrapCommand("autostart_enabled", commands.autostartEnabled()),
  setAutostart: (enabled: boolean) => unwrapCommand("set_autostart", commands.setAutostart(enabled)),
  cliToolStatus: () => unwrapCommand("cli_tool_status", commands.cliToolStatus()),
  installCliTool: () => unwrapCommand("install_cli_tool", commands.installCliTool()),
};

/** Subscribes to update status changes; resolves to the unsubscribe function. */
export function listenUpdateStatus(cb: (status: UpdateStatus) => void): Promise<() => void> {
  return events.updateStatusChanged.listen((e) => cb(e.payload));
}
