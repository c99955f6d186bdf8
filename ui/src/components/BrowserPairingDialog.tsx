import { useState } from "react";
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
        <h2 id="pairing-h">Pair a browser extension?</h2>
        <p>
          <strong>
            {request.browser} {request.browserVersion}
          </strong>{" "}
          asks to connect to Suzent. Approve only if you just pressed <em>Connect</em> in the Suzent extension and it shows this
          code:
        </p>
        <p className="pairing-code" data-testid="browser-pairing-code">
          {request.code}
        </p>
        <p className="muted small">
          Extension id <code data-testid="browser-pairing-extension">{request.extensionId}</code> · version {request.extensionVersion}
        </p>
        {!request.shippedExtension && (
          <p className="field-error" role="alert" data-testid="browser-pairing-foreign">
            This is not the extension that comes with Suzent. Approve only if you installed it on purpose.
          </p>
        )}
        {error && (
          <p className="field-error" role="alert">
            {error}
          </p>
        )}
        <div className="form-actions">
          <button type="button" className="btn" data-testid="browser-pairing-reject" onClick={() => void answer(false)}>
            Decline
          </button>
          <button type="button" className="btn primary" data-testid="browser-pairing-approve" onClick={() => void answer(true)}>
            Approve
          </button>
        </div>
      </div>
    </div>
  );
}
