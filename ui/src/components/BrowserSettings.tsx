import "./browser.css";
import { useCallback, useEffect, useState } from "react";
import type { BrowserStatus, PairingStatus } from "../bindings";
import { errorMessage } from "../api";
import { browserApi, listenBridgeEvents } from "../browserApi";

const STATE_TEXT: Record<BrowserStatus["state"], string> = {
  notInstalled: "Not installed — no browser is paired yet",
  paired: "Paired, not connected",
  connected: "Connected",
};

function when(at: string | null | undefined): string {
  return at ? new Date(at).toLocaleString() : "never";
}

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

function PairingRow({ p, onRevoke }: { p: PairingStatus; onRevoke: (id: string) => void }) {
  const pairing = p.pairing;
  const revoked = pairing.revokedAt != null;
  return (
    <li className="pairing" data-testid={`browser-pairing-${pairing.id}`}>
      <div>
        <strong>
          {pairing.browser} {pairing.browserVersion}
        </strong>{" "}
        <span className={`badge ${p.connected ? "ok" : revoked ? "muted" : ""}`} data-testid="browser-pairing-state">
          {revoked ? "revoked" : p.connected ? "connected" : "not connected"}
        </span>
        <div className="muted small">
          Extension <code>{pairing.extensionId}</code> v{pairing.extensionVersion} · paired {when(pairing.createdAt)} · last seen{" "}
          {when(p.connectedSince ?? pairing.lastSeenAt)}
          {revoked && <> · revoked {when(pairing.revokedAt)}</>}
        </div>
      </div>
      {!revoked && (
        <button type="button" className="btn danger small" data-testid="browser-revoke" onClick={() => onRevoke(pairing.id)}>
          Revoke
        </button>
      )}
    </li>
  );
}

/** Settings → Browser: status, the extension as a ZIP or a folder, install steps, pairings. */
export function BrowserSettings() {
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
  const saveZip = () => run(async () => {
    const path = await browserApi.saveZip();
    return path ? `Saved to ${path}` : null;
  });
  const showFolder = () => run(async () => `The extension folder: ${await browserApi.showFolder()}`);
  const revoke = (id: string) => run(async () => ((await browserApi.revoke(id)) ? "Pairing revoked; the browser was disconnected." : null));

  const active = status?.pairings.filter((p) => p.pairing.revokedAt == null) ?? [];
  const revoked = status?.pairings.filter((p) => p.pairing.revokedAt != null) ?? [];

  return (
    <section className="card" aria-labelledby="browser-h" data-testid="browser-settings">
      <h2 id="browser-h">Browser</h2>
      <p className="muted small">
        The Suzent extension lets the agent work in the Chrome or Edge tabs you share with it, with your logins. It talks only to
        this app on 127.0.0.1, after you approve it here.
      </p>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      {status && (
        <>
          <p data-testid="browser-state" data-state={status.state}>
            <strong>{STATE_TEXT[status.state]}</strong>
            {status.port != null && <span className="muted small"> · bridge on 127.0.0.1:{status.port}</span>}
          </p>
          <p className="muted small">
            {status.extensionVersion
              ? <>Bundled extension {status.extensionVersion} (id <code>{status.shippedExtensionId}</code>)</>
              : "This build does not include the extension."}
          </p>
        </>
      )}
      <div className="form-actions left">
        <button type="button" className="btn primary" data-testid="browser-download-zip" onClick={() => void saveZip()}>
          Download the extension (.zip)
        </button>
        <button type="button" className="btn" data-testid="browser-show-folder" onClick={() => void showFolder()}>
          Show the folder
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
          <h3>Chrome</h3>
          <ol className="small">
            <li>
              Open <code>chrome://extensions</code>.
            </li>
            <li>Turn on <em>Developer mode</em> (top right).</li>
            <li>
              Click <em>Load unpacked</em> and choose the folder (<em>Show the folder</em>), or drop the downloaded ZIP on the page.
            </li>
            <li>Click the Suzent button in the toolbar, then <em>Connect</em>.</li>
            <li>Approve the request here after checking that both show the same code.</li>
          </ol>
        </div>
        <div>
          <h3>Edge</h3>
          <ol className="small">
            <li>
              Open <code>edge://extensions</code>.
            </li>
            <li>Turn on <em>Developer mode</em> (left pane).</li>
            <li>
              Click <em>Load unpacked</em> and choose the folder, or drop the downloaded ZIP on the page.
            </li>
            <li>Click the Suzent button (under the puzzle piece), then <em>Connect</em>.</li>
            <li>Approve the request here after checking that both show the same code.</li>
          </ol>
        </div>
      </div>
      <h3>Paired browsers</h3>
      {active.length === 0 ? (
        <p className="muted small" data-testid="browser-no-pairings">
          None yet.
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
          <summary className="small">Revoked ({revoked.length})</summary>
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
