import { useEffect, useId, useState } from "react";
import { useTranslation } from "react-i18next";
import { api, errorMessage } from "../api";
import { PROVIDERS } from "../providers";
import { useStore } from "../store";
import type { ChatRecord } from "../types";

// Model lists per provider, read once per window.
const listed = new Map<string, Promise<string[]>>();

function modelsOf(provider: string): Promise<string[]> {
  const cached = listed.get(provider);
  if (cached) return cached;
  const p = api.listModels(provider, null, null).catch(() => [] as string[]);
  listed.set(provider, p);
  return p;
}

/**
 * The composer's model picker: the chat's model (remembered per chat), chosen from the models
 * of the configured providers or typed as `provider/model`; "Default" follows the settings.
 */
export function ModelPicker({ chat }: { chat: ChatRecord }) {
  const { t } = useTranslation();
  const { state, dispatch, actions } = useStore();
  const id = useId();
  const [open, setOpen] = useState(false);
  const [options, setOptions] = useState<string[]>([]);
  const [text, setText] = useState(chat.model ?? "");
  const [error, setError] = useState<string | null>(null);
  const fallback = state.settings?.defaultModel ?? null;
  const current = chat.model ?? fallback;

  useEffect(() => {
    if (!open) return;
    let live = true;
    setText(chat.model ?? "");
    // The default model's provider first, then the others that have a key.
    const keyed = PROVIDERS.filter((p) => !p.needsKey || state.settings?.keys[p.id as "openai" | "anthropic" | "gemini"]);
    const first = fallback?.split("/")[0];
    const order = [...keyed].sort((a, b) => Number(b.id === first) - Number(a.id === first));
    Promise.all(order.map((p) => modelsOf(p.id).then((ms) => ms.map((m) => `${p.id}/${m}`)))).then((all) => {
      if (live) setOptions(all.flat());
    });
    return () => {
      live = false;
    };
  }, [open, chat.model, fallback, state.settings]);

  const choose = async (model: string | null) => {
    setError(null);
    try {
      dispatch({ type: "chats/upsert", chat: await api.setChatModel(chat.id, model) });
      setOpen(false);
    } catch (e) {
      setError(errorMessage(e));
      void actions;
    }
  };

  return (
    <div className="model-picker">
      <button
        type="button"
        className="btn tiny ghost"
        data-testid="model-picker"
        aria-expanded={open}
        aria-controls={open ? `${id}-panel` : undefined}
        title={t("modelPicker.title")}
        onClick={() => setOpen(!open)}
      >
        {current ?? t("modelPicker.none")}
        {!chat.model && current ? ` ${t("modelPicker.defaultMark")}` : ""}
      </button>
      {open && (
        <div className="model-picker-panel card" id={`${id}-panel`} role="group" aria-label={t("modelPicker.title")}>
          <label htmlFor={`${id}-input`}>{t("modelPicker.label")}</label>
          <input
            id={`${id}-input`}
            data-testid="model-picker-input"
            list={`${id}-list`}
            value={text}
            placeholder={fallback ?? "openai/gpt-4.1"}
            spellCheck={false}
            autoFocus
            onChange={(e) => setText(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter") {
                e.preventDefault();
                void choose(text.trim() || null);
              } else if (e.key === "Escape") {
                e.preventDefault();
                e.stopPropagation();
                setOpen(false);
              }
            }}
          />
          <datalist id={`${id}-list`}>
            {options.map((m) => (
              <option key={m} value={m} />
            ))}
          </datalist>
          {error && (
            <p className="field-error" role="alert">
              {error}
            </p>
          )}
          <div className="form-actions">
            <button type="button" className="btn small ghost" data-testid="model-picker-default" onClick={() => void choose(null)}>
              {t("modelPicker.useDefault")}
            </button>
            <button type="button" className="btn small primary" data-testid="model-picker-save" onClick={() => void choose(text.trim() || null)}>
              {t("modelPicker.use")}
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
