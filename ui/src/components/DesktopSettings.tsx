import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { CliToolStatus, DesktopPrefs } from "../bindings";
import { errorMessage } from "../api";
import { desktopApi } from "../desktopApi";

/**
 * "Install command-line tool" (macOS: links `suzent` into /usr/local/bin, asking for an administrator
 * through the system prompt when needed; Windows: adds the install folder to the user's Path). Hidden
 * where the packages put the CLI on PATH themselves (Linux).
 */
function CliTool() {
  const { t } = useTranslation();
  const [status, setStatus] = useState<CliToolStatus | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    desktopApi.cliToolStatus().then(setStatus, (e: unknown) => setError(errorMessage(e)));
  }, []);
  if (!status?.supported && !error) return null;
  const install = async () => {
    setBusy(true);
    setError(null);
    try {
      setStatus(await desktopApi.installCliTool());
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div data-testid="cli-tool">
      <div className="ws-row">
        <p className="grow" data-testid="cli-tool-state">
          {status?.installed
            ? t("desktop.cliInstalled", { target: status.target ?? "" })
            : t("desktop.cliNotInstalled", { target: status?.target ?? "" })}
        </p>
        {status && !status.installed && (
          <button type="button" className="btn" data-testid="cli-tool-install" disabled={busy || status.problem != null} onClick={() => void install()}>
            {t("desktop.cliInstall")}
          </button>
        )}
      </div>
      {(status?.problem ?? error) && (
        <p className="field-error" role="alert" data-testid="cli-tool-error">
          {status?.problem ?? error}
        </p>
      )}
    </div>
  );
}

/** Settings → Desktop: Start at login (off by default), keeping Suzent in the tray, the command-line tool. */
export function DesktopSettings() {
  const { t } = useTranslation();
  const [autostart, setAutostart] = useState<boolean | null>(null);
  const [prefs, setPrefs] = useState<DesktopPrefs | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    desktopApi.autostartEnabled().then(setAutostart, (e: unknown) => setError(errorMessage(e)));
    desktopApi.prefs().then(setPrefs, (e: unknown) => setError(errorMessage(e)));
  }, []);
  const toggleAutostart = async (on: boolean) => {
    setError(null);
    try {
      setAutostart(await desktopApi.setAutostart(on));
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const toggleTray = async (on: boolean) => {
    if (!prefs) return;
    setError(null);
    try {
      setPrefs(await desktopApi.savePrefs({ ...prefs, keepRunningInTray: on }));
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  return (
    <section className="card" aria-labelledby="desktop-h" data-testid="settings-desktop">
      <h2 id="desktop-h">{t("desktop.title")}</h2>
      <label className="check">
        <input
          type="checkbox"
          data-testid="autostart-toggle"
          disabled={autostart === null}
          checked={autostart ?? false}
          onChange={(e) => void toggleAutostart(e.target.checked)}
        />
        {t("desktop.autostart")}
      </label>
      <label className="check">
        <input
          type="checkbox"
          data-testid="tray-toggle"
          disabled={prefs === null}
          checked={prefs?.keepRunningInTray ?? false}
          onChange={(e) => void toggleTray(e.target.checked)}
        />
        {t("desktop.tray")}
      </label>
      <p className="muted small">{t("desktop.trayHelp")}</p>
      <CliTool />
      {error && (
        <p className="field-error" role="alert" data-testid="desktop-error">
          {error}
        </p>
      )}
    </section>
  );
}
