import { useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { DeepLinkNotice, PendingMcpInstall } from "../bindings";
import { errorMessage } from "../api";
import { deepLinkApi, listenDeepLinks } from "../deepLinkApi";

/**
 * What `suzent://` links asked for, shown over any page: the install dialog of an MCP server
 * (its full command, arguments, environment and URL; added untrusted only on Confirm), chats to
 * open (handed to `onOpenChat`) and refusals. Reads the backend's inbox at mount, so a link the
 * app was started with, or one that came while the window was closed, is shown too.
 */
export function DeepLinkDialog({ onOpenChat }: { onOpenChat: (chatId: string) => void }) {
  const { t } = useTranslation();
  const [pending, setPending] = useState<PendingMcpInstall[]>([]);
  const [refusals, setRefusals] = useState<string[]>([]);
  const [added, setAdded] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const read = useCallback(async () => {
    try {
      const inbox = await deepLinkApi.inbox();
      setPending(inbox.pending);
      // Notices are handed over once: act on them even if this component went away meanwhile.
      inbox.notices.forEach((notice: DeepLinkNotice) => {
        if (notice.kind === "openChat") onOpenChat(notice.chatId);
        else setRefusals((r) => [...r, notice.message]);
      });
    } catch (e) {
      setError(errorMessage(e));
    }
  }, [onOpenChat]);

  useEffect(() => {
    void read();
    let unlisten: (() => void) | null = null;
    let gone = false;
    listenDeepLinks(() => void read())
      .then((u) => (gone ? u() : (unlisten = u)))
      .catch(() => undefined);
    return () => {
      gone = true;
      unlisten?.();
    };
  }, [read]);

  const request = pending[0];
  const answer = async (confirm: boolean) => {
    if (!request) return;
    setBusy(true);
    setError(null);
    try {
      if (confirm) {
        const server = await deepLinkApi.confirm(request.id);
        setAdded(server.name);
      } else {
        await deepLinkApi.cancel(request.id);
      }
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
    await read();
  };

  const env = request ? Object.entries(request.server.env ?? {}) : [];
  return (
    <>
      <div className="link-notices">
        {refusals.length > 0 && (
          <div className="error-banner link-notice" role="alert" data-testid="deep-link-refused">
            {refusals.map((message, i) => (
              <p key={i}>{t("deepLink.refused", { message })}</p>
            ))}
            <button type="button" className="btn" onClick={() => setRefusals([])}>
              {t("deepLink.dismiss")}
            </button>
          </div>
        )}
        {added && !request && (
          <div className="card link-notice" role="status" data-testid="deep-link-added">
            <p>{t("deepLink.added", { name: added })}</p>
            <button type="button" className="btn" onClick={() => setAdded(null)}>
              {t("deepLink.dismiss")}
            </button>
          </div>
        )}
      </div>
      {request && (
        <div className="modal-backdrop">
          <div className="modal card" role="dialog" aria-modal="true" aria-labelledby="mcp-install-h" data-testid="mcp-install-dialog">
            <h2 id="mcp-install-h">{t("deepLink.installTitle")}</h2>
            <p>{t("deepLink.installAsk", { name: request.server.name })}</p>
            <dl className="install-details">
              {request.server.command != null && (
                <>
                  <dt>{t("deepLink.command")}</dt>
                  <dd>
                    <code data-testid="mcp-install-command">{request.server.command}</code>
                  </dd>
                  <dt>{t("deepLink.args")}</dt>
                  <dd data-testid="mcp-install-args">
                    {request.server.args.length === 0 ? (
                      <span className="muted">{t("deepLink.noArgs")}</span>
                    ) : (
                      <ol>
                        {request.server.args.map((arg, i) => (
                          <li key={i}>
                            <code data-testid="mcp-install-arg">{arg}</code>
                          </li>
                        ))}
                      </ol>
                    )}
                  </dd>
                  <dt>{t("deepLink.env")}</dt>
                  <dd data-testid="mcp-install-env">
                    {env.length === 0 ? (
                      <span className="muted">{t("deepLink.noEnv")}</span>
                    ) : (
                      <ul>
                        {env.map(([key, value]) => (
                          <li key={key}>
                            <code>
                              {key}={value}
                            </code>
                          </li>
                        ))}
                      </ul>
                    )}
                  </dd>
                </>
              )}
              {request.server.url != null && (
                <>
                  <dt>{t("deepLink.url")}</dt>
                  <dd>
                    <code data-testid="mcp-install-url">{request.server.url}</code>
                  </dd>
                </>
              )}
            </dl>
            <p className="field-error">{t("deepLink.installWarn")}</p>
            {error && (
              <p className="field-error" role="alert" data-testid="mcp-install-error">
                {error}
              </p>
            )}
            <div className="form-actions">
              <button type="button" className="btn" data-testid="mcp-install-cancel" disabled={busy} onClick={() => void answer(false)}>
                {t("deepLink.cancel")}
              </button>
              <button type="button" className="btn primary" data-testid="mcp-install-confirm" disabled={busy} onClick={() => void answer(true)}>
                {t("deepLink.confirm")}
              </button>
            </div>
          </div>
        </div>
      )}
    </>
  );
}
