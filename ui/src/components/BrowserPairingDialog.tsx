import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { PairingRequest } from "../bindings";
import { errorMessage } from "../api";
import { browserApi } from "../browserApi";
import { useBrowserStatus } from "./BrowserSettings";

/**
 * The approval dialog for a browser extension that asks to pair (shown over any page): the
 * extension id, the browser and the code its popup shows. Only an approval here gives the
 * extension a credential.
 */
export function BrowserPairingDialog() {
  const { t } = useTranslation();
  const { status, refresh } = useBrowserStatus();
  const [error, setError] = useState<string | null>(null);
  const request: PairingRequest | undefined = status?.pending[0];
  if (!request) return null;

  const answer = async (approve: boolean) => {
    setError(null);
    try {
      if (approve) await browserApi.approve(request.id);
      else await browserApi.reject(request.id);
    } catch (e) {
      setError(errorMessage(e));
    }
    await refresh();
  };

  return (
    <div className="modal-backdrop">
      <div className="modal card" role="dialog" aria-modal="true" aria-labelledby="pairing-h" data-testid="browser-pairing-dialog">
        <h2 id="pairing-h">{t("browser.dialogTitle")}</h2>
        <p>{t("browser.dialogAsk", { browser: `${request.browser} ${request.browserVersion}` })}</p>
        <p className="pairing-code" data-testid="browser-pairing-code">
          {request.code}
        </p>
        <p className="muted small" data-testid="browser-pairing-extension">
          {t("browser.dialogExtension", { id: request.extensionId, version: request.extensionVersion })}
        </p>
        {!request.shippedExtension && (
          <p className="field-error" role="alert" data-testid="browser-pairing-foreign">
            {t("browser.dialogForeign")}
          </p>
        )}
        {error && (
          <p className="field-error" role="alert">
            {error}
          </p>
        )}
        <div className="form-actions">
          <button type="button" className="btn" data-testid="browser-pairing-reject" onClick={() => void answer(false)}>
            {t("browser.decline")}
          </button>
          <button type="button" className="btn primary" data-testid="browser-pairing-approve" onClick={() => void answer(true)}>
            {t("browser.approve")}
          </button>
        </div>
      </div>
    </div>
  );
}
