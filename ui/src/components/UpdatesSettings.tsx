import { useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { DesktopPrefs, UpdateStatus } from "../bindings";
import { errorMessage } from "../api";
import { desktopApi, listenUpdateStatus } from "../desktopApi";

/** The updater's status, kept current from the backend's events. */
export function useUpdateStatus() {
  const [status, setStatus] = useState<UpdateStatus | null>(null);
  useEffect(() => {
    let gone = false;
    let unlisten: (() => void) | null = null;
    desktopApi.updateStatus().then((s) => !gone && setStatus(s), () => undefined);
    listenUpdateStatus((s) => setStatus(s))
      .then((u) => (gone ? u() : (unlisten = u)))
      .catch(() => undefined);
    return () => {
      gone = true;
      unlisten?.();
    };
  }, []);
  return [status, setStatus] as const;
}

function StateLine({ status }: { status: UpdateStatus }) {
  const { t } = useTranslation();
  const s = status.state;
  switch (s.state) {
    case "idle":
      return <p data-testid="update-state">{t("updates.idle")}</p>;
    case "checking":
      return <p data-testid="update-state">{t("updates.checking")}</p>;
    case "upToDate":
      return (
        <p data-testid="update-state">
          {s.offered && s.offered !== status.currentVersion
            ? t("updates.olderOffered", { offered: s.offered, current: status.currentVersion })
            : t("updates.upToDate", { current: status.currentVersion })}
        </p>
      );
    case "available":
      return <p data-testid="update-state">{t("updates.available", { version: s.version })}</p>;
    case "downloading": {
      const pct = s.total ? Math.floor((s.received / s.total) * 100) : null;
      return (
        <div data-testid="update-state">
          <p>{t("updates.downloading", { version: s.version })}</p>
          <progress data-testid="update-progress" max={s.total ?? undefined} value={s.received} />
          {pct != null && <span className="muted small"> {pct}%</span>}
        </div>
      );
    }
    case "ready":
      return (
        <p data-testid="update-state">
          {s.installable ? t("updates.ready", { version: s.version }) : t("updates.readyNotInstallable", { version: s.version })}
        </p>
      );
    case "failed":
      return (
        <p className="field-error" role="alert" data-testid="update-state">
          {s.message}
        </p>
      );
  }
}

/** Settings → Updates: the feed, automatic checks, "Check now", download and restart. */
export function UpdatesSettings() {
  const { t } = useTranslation();
  const [status, setStatus] = useUpdateStatus();
  const [prefs, setPrefs] = useState<DesktopPrefs | null>(null);
  const [endpoint, setEndpoint] = useState("");
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    desktopApi.prefs().then(
      (p) => {
        setPrefs(p);
        setEndpoint(p.updateEndpoint ?? "");
      },
      (e: unknown) => setError(errorMessage(e)),
    );
  }, []);
  const run = useCallback(
    async (what: () => Promise<UpdateStatus | null>) => {
      setError(null);
      try {
        const s = await what();
        if (s) setStatus(s);
      } catch (e) {
        setError(errorMessage(e));
      }
    },
    [setStatus],
  );
  const save = async (next: DesktopPrefs) => {
    setError(null);
    try {
      setPrefs(await desktopApi.savePrefs(next));
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const state = status?.state.state;
  return (
    <section className="card" aria-labelledby="updates-h" data-testid="settings-updates">
      <h2 id="updates-h">{t("updates.title")}</h2>
      <p className="muted small">{t("updates.help", { current: status?.currentVersion ?? "…" })}</p>
      {prefs && (
        <form
          className="ws-row"
          onSubmit={(e) => {
            e.preventDefault();
            void save({ ...prefs, updateEndpoint: endpoint.trim() });
          }}
        >
          <label className="grow">
            {t("updates.endpoint")}
            <input data-testid="update-endpoint" value={endpoint} onChange={(e) => setEndpoint(e.target.value)} />
          </label>
          <button type="submit" className="btn" data-testid="update-endpoint-save" disabled={endpoint.trim() === prefs.updateEndpoint}>
            {t("updates.save")}
          </button>
        </form>
      )}
      {prefs && (
        <label className="check">
          <input
            type="checkbox"
            data-testid="update-auto"
            checked={prefs.checkForUpdates ?? true}
            onChange={(e) => void save({ ...prefs, checkForUpdates: e.target.checked })}
          />
          {t("updates.auto")}
        </label>
      )}
      {status && <StateLine status={status} />}
      {error && (
        <p className="field-error" role="alert" data-testid="update-error">
          {error}
        </p>
      )}
      <div className="form-actions">
        <button type="button" className="btn" data-testid="update-check" disabled={state === "checking" || state === "downloading"} onClick={() => void run(desktopApi.checkForUpdate)}>
          {t("updates.check")}
        </button>
        {state === "available" && (
          <button type="button" className="btn primary" data-testid="update-download" onClick={() => void run(desktopApi.downloadUpdate)}>
            {t("updates.download")}
          </button>
        )}
        {status?.state.state === "ready" && status.state.installable && (
          <button type="button" className="btn primary" data-testid="update-restart" onClick={() => void run(async () => (await desktopApi.restartToUpdate(), null))}>
            {t("updates.restart")}
          </button>
        )}
      </div>
    </section>
  );
}

/** The dialog of a newer version found by a check (at start, daily or by hand): its notes, Download. */
export function UpdateDialog() {
  const { t } = useTranslation();
  const [status, setStatus] = useUpdateStatus();
  const [dismissed, setDismissed] = useState<string | null>(null);
  const s = status?.state;
  if (!s || s.state !== "available" || dismissed === s.version) return null;
  return (
    <div className="modal-backdrop">
      <div className="modal card" role="dialog" aria-modal="true" aria-labelledby="update-h" data-testid="update-dialog">
        <h2 id="update-h">{t("updates.dialogTitle", { version: s.version })}</h2>
        <p className="muted small">{t("updates.dialogCurrent", { current: status.currentVersion })}</p>
        {s.notes && <pre className="update-notes" data-testid="update-notes">{s.notes}</pre>}
        <div className="form-actions">
          <button type="button" className="btn" data-testid="update-later" onClick={() => setDismissed(s.version)}>
            {t("updates.later")}
          </button>
          <button
            type="button"
            className="btn primary"
            data-testid="update-dialog-download"
            onClick={() => {
              setDismissed(s.version);
              desktopApi.downloadUpdate().then(setStatus, () => undefined);
            }}
          >
            {t("updates.download")}
          </button>
        </div>
      </div>
    </div>
  );
}
