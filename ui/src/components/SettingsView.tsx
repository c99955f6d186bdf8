import { useEffect, useState, type FormEvent } from "react";
import { api } from "../api";
import { baseUrlError, modelError, PROVIDERS, type ProviderId } from "../providers";
import { useStore } from "../store";
import type { Settings } from "../types";
import { BrowserSettings } from "./BrowserSettings";

type Urls = Record<ProviderId, string>;

// Providers that take an API key (the ones KeyStatus reports on).
const KEYED = PROVIDERS.filter((p): p is Extract<(typeof PROVIDERS)[number], { id: keyof Settings["keys"] }> => p.needsKey);

function urlsOf(s: Settings): Urls {
  const out = {} as Urls;
  for (const p of PROVIDERS) out[p.id] = s.providers[p.id]?.baseUrl ?? "";
  return out;
}

function KeyRow({ provider, label, stored }: { provider: keyof Settings["keys"]; label: string; stored: boolean }) {
  const { actions } = useStore();
  const [value, setValue] = useState("");
  const [busy, setBusy] = useState(false);
  const inputId = `key-${provider}`;
  const save = async () => {
    if (!value.trim()) return;
    setBusy(true);
    try {
      await api.setApiKey(provider, value.trim());
      setValue("");
      await actions.refreshSettings();
    } catch (e) {
      actions.reportError(e, `Could not store the ${label} key`);
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    setBusy(true);
    try {
      await api.deleteApiKey(provider);
      await actions.refreshSettings();
    } catch (e) {
      actions.reportError(e, `Could not remove the ${label} key`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="key-row">
      <label htmlFor={inputId}>{label}</label>
      <span className={`badge ${stored ? "ok" : ""}`} data-testid={`settings-key-status-${provider}`}>
        {stored ? "stored" : "not set"}
      </span>
      <input
        id={inputId}
        type="password"
        autoComplete="off"
        spellCheck={false}
        data-testid={`settings-api-key-${provider}`}
        placeholder={stored ? "Enter a new key to replace it" : "Paste the API key"}
        value={value}
        onChange={(e) => setValue(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            void save();
          }
        }}
      />
      <button type="button" className="btn small" data-testid={`settings-api-key-save-${provider}`} disabled={busy || !value.trim()} onClick={() => void save()}>
        Store key
      </button>
      {stored ? (
        <button type="button" className="btn small danger" disabled={busy} onClick={() => void remove()}>
          Remove
        </button>
      ) : (
        <span />
      )}
    </div>
  );
}

/** Settings: default model, provider base URLs, API keys (write-only), workspace folder. */
export function SettingsView() {
  const { state, dispatch, actions } = useStore();
  const settings = state.settings;
  const [model, setModel] = useState("");
  const [maxSteps, setMaxSteps] = useState("");
  const [urls, setUrls] = useState<Urls | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const [status, setStatus] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!settings) return;
    setModel(settings.defaultModel ?? "");
    setMaxSteps(String(settings.maxSteps));
    setUrls(urlsOf(settings));
  }, [settings]);

  if (!settings || !urls) {
    return (
      <section className="page">
        <h1>Settings</h1>
        <p className="muted">Loading settings…</p>
      </section>
    );
  }

  const save = async (e: FormEvent) => {
    e.preventDefault();
    const steps = Number(maxSteps);
    const problems = [
      modelError(model),
      Number.isInteger(steps) && steps >= 1 && steps <= 1000 ? null : "Max steps must be a whole number from 1 to 1000.",
      ...PROVIDERS.map((p) => baseUrlError(p.label, urls[p.id])),
    ].filter((x): x is string => !!x);
    setErrors(problems);
    setStatus(null);
    if (problems.length) return;
    setBusy(true);
    try {
      const providers = Object.fromEntries(
        PROVIDERS.map((p) => [p.id, { baseUrl: urls[p.id].trim() || null }]),
      ) as Settings["providers"];
      dispatch({ type: "settings/set", settings: await api.saveSettings({ defaultModel: model.trim(), maxSteps: steps, providers }) });
      setStatus("Saved.");
    } catch (err) {
      actions.reportError(err, "Could not save settings");
    } finally {
      setBusy(false);
    }
  };

  const pick = async () => {
    try {
      const path = await api.pickWorkspace();
      if (!path) return;
      dispatch({ type: "settings/set", settings: await api.saveSettings({ workspace: path }) });
    } catch (err) {
      actions.reportError(err, "Could not set the workspace folder");
    }
  };

  return (
    <section className="page">
      <header className="page-head">
        <div>
          <h1>Settings</h1>
          <p className="muted">Models, provider keys and the folder the agent works in.</p>
          <p className="muted small">
            Saved in <code>{settings.configFile}</code>
          </p>
        </div>
      </header>

      <form className="card" onSubmit={(e) => void save(e)} noValidate aria-labelledby="model-h">
        <h2 id="model-h">Model</h2>
        <div className="field">
          <label htmlFor="settings-model">Default model</label>
          <input
            id="settings-model"
            data-testid="settings-model"
            value={model}
            placeholder="openai/gpt-4.1"
            spellCheck={false}
            onChange={(e) => setModel(e.target.value)}
          />
          <small className="muted">provider/model — e.g. openai/gpt-4.1, anthropic/claude-sonnet-4-5, gemini/gemini-2.5-pro, ollama/qwen2.5</small>
        </div>
        <div className="field narrow">
          <label htmlFor="settings-max-steps">Max steps per run</label>
          <input
            id="settings-max-steps"
            data-testid="settings-max-steps"
            type="number"
            min={1}
            max={1000}
            value={maxSteps}
            onChange={(e) => setMaxSteps(e.target.value)}
          />
          <small className="muted">How many model steps one turn may take before it stops.</small>
        </div>
        <h3>Provider base URLs</h3>
        <p className="muted small">Leave empty to use the provider's default or its environment variable.</p>
        <div className="grid">
          {PROVIDERS.map((p) => (
            <div className="field" key={p.id}>
              <label htmlFor={`url-${p.id}`}>{p.label}</label>
              <input
                id={`url-${p.id}`}
                data-testid={`settings-base-url-${p.id}`}
                value={urls[p.id]}
                placeholder={p.env}
                spellCheck={false}
                onChange={(e) => setUrls({ ...urls, [p.id]: e.target.value })}
              />
            </div>
          ))}
        </div>
        {errors.length > 0 && (
          <ul className="field-error" role="alert">
            {errors.map((m) => (
              <li key={m}>{m}</li>
            ))}
          </ul>
        )}
        <div className="form-actions">
          {status && (
            <span className="ok-text" role="status">
              {status}
            </span>
          )}
          <button type="submit" className="btn primary" data-testid="settings-save" disabled={busy}>
            Save
          </button>
        </div>
      </form>

      <section className="card" aria-labelledby="keys-h">
        <h2 id="keys-h">API keys</h2>
        <p className="muted small">Keys go to your system keychain and are never shown again.</p>
        {KEYED.map((p) => (
          <KeyRow key={p.id} provider={p.id} label={p.label} stored={settings.keys[p.id]} />
        ))}
      </section>

      <section className="card" aria-labelledby="ws-h">
        <h2 id="ws-h">Workspace folder</h2>
        <p className="muted small">New chats work in this folder. File tools cannot reach outside it.</p>
        <div className="ws-row">
          <code className="path" data-testid="settings-workspace">{settings.workspace ?? "Not set (the app's current folder)"}</code>
          <button type="button" className="btn" data-testid="settings-workspace-pick" onClick={() => void pick()}>
            Choose folder…
          </button>
        </div>
      </section>

      <BrowserSettings />
    </section>
  );
}
