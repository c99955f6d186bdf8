import "./browser.css";
import { useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { BrowserStatus, BrowserPairingStatus } from "../bindings";
import { errorMessage } from "../api";
import { browserApi, listenBridgeEvents } from "../browserApi";

/** The browser status, refreshed on every bridge event. */
export function useBrowserStatus() {
  const [status, setStatus] = useState<BrowserStatus | null>(null);
  const [error, setError] = useState<string | null>(null);
  const refresh = useCallback(async () => {
    try {
      setStatus(await browserApi.status());
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    }
  }, []);
  useEffect(() => {
    void refresh();
    let unlisten: (() => void) | null = null;
    let gone = false;
    listenBridgeEvents(() => void refresh())
      .then((u) => (gone ? u() : (unlisten = u)))
      .catch(() => undefined);
    return () => {
      gone = true;
      unlisten?.();
    };
  }, [refresh]);
  return { status, error, refresh };
}

function PairingRow({ p, onRevoke }: { p: BrowserPairingStatus; onRevoke: (id: string) => void }) {
  const { t } = useTranslation();
  const when = (at: string | null | undefined) => (at ? new Date(at).toLocaleString() : t("browser.never"));
  const pairing = p.pairing;
  const revoked = pairing.revokedAt != null;
  return (
    <li className="pairing" data-testid={`browser-pairing-${pairing.id}`}>
      <div>
        <strong>
          {pairing.browser} {pairing.browserVersion}
        </strong>{" "}
        <span className={`badge ${p.connected ? "ok" : revoked ? "muted" : ""}`} data-testid="browser-pairing-state">
          {revoked ? t("browser.revoked") : p.connected ? t("browser.connected") : t("browser.notConnected")}
        </span>
        <div className="muted small">
          {t("browser.details", {
            id: pairing.extensionId,
            version: pairing.extensionVersion,
            paired: when(pairing.createdAt),
            seen: when(p.connectedSince ?? pairing.lastSeenAt),
          })}
          {revoked && t("browser.revokedAt", { at: when(pairing.revokedAt) })}
        </div>
      </div>
      {!revoked && (
        <button type="button" className="btn danger small" data-testid="browser-revoke" onClick={() => onRevoke(pairing.id)}>
          {t("browser.revoke")}
        </button>
      )}
    </li>
  );
}

/** Settings → Browser: status, the extension as a ZIP or a folder, install steps, pairings. */
export function BrowserSettings() {
  const { t } = useTranslation();
  const { status, error, refresh } = useBrowserStatus();
  const [note, setNote] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);

  const run = async (what: () => Promise<string | null>) => {
    setActionError(null);
    try {
      const text = await what();
      if (text) setNote(text);
      await refresh();
    } catch (e) {
      setActionError(errorMessage(e));
    }
  };
  const saveZip = () =>
    run(async () => {
      const path = await browserApi.saveZip();
      return path ? t("browser.savedTo", { path }) : null;
    });
  const showFolder = () => run(async () => t("browser.folderAt", { path: await browserApi.showFolder() }));
  const revoke = (id: string) => run(async () => ((await browserApi.revoke(id)) ? t("browser.revokedNote") : null));

  const active = status?.pairings.filter((p) => p.pairing.revokedAt == null) ?? [];
  const revoked = status?.pairings.filter((p) => p.pairing.revokedAt != null) ?? [];
  const stateText: Record<BrowserStatus["state"], string> = {
    notInstalled: t("browser.stateNotInstalled"),
    paired: t("browser.statePaired"),
    connected: t("browser.stateConnected"),
  };

  return (
    <section className="card" aria-labelledby="browser-h" data-testid="browser-settings">
      <h2 id="browser-h">{t("browser.title")}</h2>
      <p className="muted small">{t("browser.intro")}</p>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      {status && (
        <>
          <p data-testid="browser-state" data-state={status.state}>
            <strong>{stateText[status.state]}</strong>
            {status.port != null && <span className="muted small"> · {t("browser.bridgeOn", { port: status.port })}</span>}
          </p>
          <p className="muted small">
            {status.extensionVersion
              ? t("browser.bundled", { version: status.extensionVersion, id: status.shippedExtensionId })
              : t("browser.notBundled")}
          </p>
        </>
      )}
      <div className="form-actions left">
        <button type="button" className="btn primary" data-testid="browser-download-zip" onClick={() => void saveZip()}>
          {t("browser.downloadZip")}
        </button>
        <button type="button" className="btn" data-testid="browser-show-folder" onClick={() => void showFolder()}>
          {t("browser.showFolder")}
        </button>
      </div>
      {note && (
        <p className="ok-text small" role="status" data-testid="browser-note">
          {note}
        </p>
      )}
      {actionError && (
        <p className="field-error" role="alert" data-testid="browser-error">
          {actionError}
        </p>
      )}
      <div className="grid">
        <div>
          <h3>{t("browser.chrome")}</h3>
          <ol className="small">
            <li>{t("browser.chromeStep1")}</li>
            <li>{t("browser.chromeStep2")}</li>
            <li>{t("browser.chromeStep3")}</li>
            <li>{t("browser.chromeStep4")}</li>
            <li>{t("browser.approveStep")}</li>
          </ol>
        </div>
        <div>
          <h3>{t("browser.edge")}</h3>
          <ol className="small">
            <li>{t("browser.edgeStep1")}</li>
            <li>{t("browser.edgeStep2")}</li>
            <li>{t("browser.edgeStep3")}</li>
            <li>{t("browser.edgeStep4")}</li>
            <li>{t("browser.approveStep")}</li>
          </ol>
        </div>
      </div>
      <h3>{t("browser.pairedBrowsers")}</h3>
      {active.length === 0 ? (
        <p className="muted small" data-testid="browser-no-pairings">
          {t("browser.none")}
        </p>
      ) : (
        <ul className="pairings">
          {active.map((p) => (
            <PairingRow key={p.pairing.id} p={p} onRevoke={(id) => void revoke(id)} />
          ))}
        </ul>
      )}
      {revoked.length > 0 && (
        <details>
          <summary className="small">{t("browser.revokedList", { n: revoked.length })}</summary>
          <ul className="pairings">
            {revoked.map((p) => (
              <PairingRow key={p.pairing.id} p={p} onRevoke={() => undefined} />
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}
