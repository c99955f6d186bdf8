import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { DesktopPrefs } from "../bindings";
import { errorMessage } from "../api";
import { desktopApi } from "../desktopApi";

/** Settings → Desktop: Start at login (off by default) and keeping Suzent in the tray. */
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
      {error && (
        <p className="field-error" role="alert" data-testid="desktop-error">
          {error}
        </p>
      )}
    </section>
  );
}
