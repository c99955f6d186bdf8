import { useEffect, useId, useState } from "react";
import { useTranslation } from "react-i18next";
import type { TFunction } from "i18next";
import { api, errorMessage } from "../api";
import type { BrowserMode, ChatBrowserMode } from "../types";

const MODES: BrowserMode[] = ["extension", "managed", "cdp"];

function modeLabel(m: BrowserMode, t: TFunction): string {
  switch (m) {
    case "extension":
      return t("browser.mode.extension");
    case "managed":
      return t("browser.mode.managed");
    case "cdp":
      return t("browser.mode.cdp");
  }
}

/**
 * The composer's browser picker: which browser `browser_action` drives in this chat (the user's
 * own through the extension, a managed Chromium, or a DevTools endpoint); "Default" follows
 * `[browser] mode`.
 */
export function BrowserModePicker({ chatId }: { chatId: string }) {
  const { t } = useTranslation();
  const id = useId();
  const [mode, setMode] = useState<ChatBrowserMode | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    api
      .chatBrowserMode(chatId)
      .then((m) => live && setMode(m))
      .catch((e) => live && setError(errorMessage(e)));
    return () => {
      live = false;
    };
  }, [chatId]);

  if (!mode) return error ? <span className="error small" role="alert">{error}</span> : null;

  const choose = async (value: string) => {
    try {
      setMode(await api.setChatBrowserMode(chatId, value === "" ? null : (value as BrowserMode)));
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  return (
    <span className="browser-mode-picker">
      <label htmlFor={id} className="small">
        {t("browser.mode.label")}
      </label>
      <select
        id={id}
        className="tiny"
        data-testid="browser-mode-select"
        title={t("browser.mode.help")}
        value={mode.chosen ?? ""}
        onChange={(e) => void choose(e.target.value)}
      >
        <option value="">{t("browser.mode.default", { mode: modeLabel(mode.default, t) })}</option>
        {MODES.map((m) => (
          <option key={m} value={m}>
            {modeLabel(m, t)}
          </option>
        ))}
      </select>
      {error && (
        <span className="error small" role="alert" data-testid="browser-mode-error">
          {error}
        </span>
      )}
    </span>
  );
}
