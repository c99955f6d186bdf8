import { useEffect, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { api, ApiError, errorMessage } from "../api";
import { baseUrlError, modelError, providerLabel, PROVIDERS, type ProviderId } from "../providers";
import { ChannelsSettings } from "./ChannelsSettings";
import { DevicesSettings } from "./DevicesSettings";
import { LanguageSwitch } from "./LanguageSwitch";
import { useStore } from "../store";
import type { LogFile, Settings } from "../types";
import { BrowserSettings } from "./BrowserSettings";
import { LocalModels } from "./LocalModels";
import { UpdatesSettings } from "./UpdatesSettings";
import { DesktopSettings } from "./DesktopSettings";

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
  const { t } = useTranslation();
  const [value, setValue] = useState("");
  const [busy, setBusy] = useState(false);
  const [keychainProblem, setKeychainProblem] = useState<string | null>(null);
  const inputId = `key-${provider}`;
  const save = async () => {
    if (!value.trim()) return;
    setBusy(true);
    try {
      await api.setApiKey(provider, value.trim());
      setValue("");
      setKeychainProblem(null);
      await actions.refreshSettings();
    } catch (e) {
      // No usable keychain: say why and offer a key for this session instead.
      if (e instanceof ApiError && e.kind === "keychain") setKeychainProblem(errorMessage(e));
      else actions.reportError(e, t("settings.keyStoreFailed", { provider: label }));
    } finally {
      setBusy(false);
    }
  };
  const keepForSession = async () => {
    try {
      await api.setSessionKey(provider, value.trim());
      setValue("");
      setKeychainProblem(null);
      await actions.refreshSettings();
    } catch (e) {
      actions.reportError(e, t("settings.keyStoreFailed", { provider: label }));
    }
  };
  const remove = async () => {
    setBusy(true);
    try {
      await api.deleteApiKey(provider);
      await actions.refreshSettings();
    } catch (e) {
      actions.reportError(e, t("settings.keyRemoveFailed", { provider: label }));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="key-row">
      <label htmlFor={inputId}>{label}</label>
      <span className={`badge ${stored ? "ok" : ""}`} data-testid={`settings-key-status-${provider}`}>
        {stored ? t("settings.keyStored") : t("settings.keyNotSet")}
      </span>
      <input
        id={inputId}
        type="password"
        autoComplete="off"
        spellCheck={false}
        data-testid={`settings-api-key-${provider}`}
        placeholder={stored ? t("settings.keyReplace") : t("settings.keyPaste")}
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
        {t("settings.storeKey")}
      </button>
      {stored ? (
        <button type="button" className="btn small danger" disabled={busy} onClick={() => void remove()}>
          {t("settings.remove")}
        </button>
      ) : (
        <span />
      )}
      {keychainProblem && (
        <div className="note keychain-problem" role="alert" data-testid={`settings-keychain-problem-${provider}`}>
          <p>{t("settings.keychainUnavailable", { reason: keychainProblem })}</p>
          <button type="button" className="btn small" data-testid={`settings-session-key-${provider}`} onClick={() => void keepForSession()}>
            {t("settings.keepForSession")}
          </button>
        </div>
      )}
    </div>
  );
}

/** Settings → Log: where the app's log file is, with a button that opens its folder. */
function LogSection() {
  const { t } = useTranslation();
  const { actions } = useStore();
  const [log, setLog] = useState<LogFile | null>(null);
  useEffect(() => {
    api.logFile().then(setLog, (e: unknown) => actions.reportError(e, t("settings.logFailed")));
  }, [actions, t]);
  return (
    <section className="card" aria-labelledby="log-h">
      <h2 id="log-h">{t("settings.log")}</h2>
      <p className="muted small">{t("settings.logHelp")}</p>
      <div className="ws-row">
        <code className="path" data-testid="settings-log-file">
          {log ? (log.current ?? log.folder ?? t("settings.logNone")) : "…"}
        </code>
        <button
          type="button"
          className="btn"
          data-testid="settings-log-open"
          disabled={!log?.folder}
          onClick={() => void api.openLogFolder().catch((e: unknown) => actions.reportError(e, t("settings.logOpenFailed")))}
        >
          {t("settings.logOpen")}
        </button>
      </div>
    </section>
  );
}

/** `system`, or `openai/…`, `openai-compatible/…`, `gemini/…` (what `[speech] model` takes). */
export function speechModelValid(model: string): boolean {
  const m = model.trim();
  return m === "system" || /^(openai|openai-compatible|gemini)\/\S+$/.test(m);
}

/** Settings → Speech: what `speak` synthesizes with, its default voice, and autoplay in the app. */
export function SpeechSettings() {
  const { t } = useTranslation();
  const { state, dispatch, actions } = useStore();
  const speech = state.settings?.speech;
  const [model, setModel] = useState("system");
  const [voice, setVoice] = useState("");
  const [autoplay, setAutoplay] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  useEffect(() => {
    if (!speech) return;
    setModel(speech.model ?? "system");
    setVoice(speech.voice ?? "");
    setAutoplay(speech.autoplay ?? false);
  }, [speech]);
  if (!speech) return null;
  const save = async (e: FormEvent) => {
    e.preventDefault();
    setStatus(null);
    if (!speechModelValid(model)) {
      setError(t("settings.speech.modelInvalid"));
      return;
    }
    setError(null);
    try {
      const saved = await api.saveSettings({ speech: { model: model.trim(), voice: voice.trim() || null, autoplay } });
      dispatch({ type: "settings/set", settings: saved });
      setStatus(t("settings.speech.saved"));
    } catch (err) {
      actions.reportError(err, t("settings.speech.saveFailed"));
    }
  };
  return (
    <form className="card" onSubmit={(e) => void save(e)} noValidate aria-labelledby="speech-h" data-testid="speech-settings">
      <h2 id="speech-h">{t("settings.speech.title")}</h2>
      <p className="muted small">{t("settings.speech.help")}</p>
      <div className="grid">
        <div className="field">
          <label htmlFor="speech-model">{t("settings.speech.model")}</label>
          <input id="speech-model" data-testid="speech-model" value={model} spellCheck={false} onChange={(e) => setModel(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="speech-voice">{t("settings.speech.voice")}</label>
          <input
            id="speech-voice"
            data-testid="speech-voice"
            value={voice}
            placeholder={t("settings.speech.voicePlaceholder")}
            spellCheck={false}
            onChange={(e) => setVoice(e.target.value)}
          />
        </div>
      </div>
      <label className="check">
        <input type="checkbox" data-testid="speech-autoplay" checked={autoplay} onChange={(e) => setAutoplay(e.target.checked)} />{" "}
        {t("settings.speech.autoplay")}
      </label>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      <div className="form-actions">
        {status && (
          <span className="ok-text" role="status">
            {status}
          </span>
        )}
        <button type="submit" className="btn primary" data-testid="speech-save">
          {t("settings.speech.save")}
        </button>
      </div>
    </form>
  );
}

/** Settings: default model, provider base URLs, API keys (write-only), workspace folder. */
export function SettingsView() {
  const { state, dispatch, actions } = useStore();
  const { t } = useTranslation();
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
        <h1>{t("settings.title")}</h1>
        <p className="muted">{t("settings.loading")}</p>
      </section>
    );
  }

  const save = async (e: FormEvent) => {
    e.preventDefault();
    const steps = Number(maxSteps);
    const problems = [
      modelError(model),
      Number.isInteger(steps) && steps >= 1 && steps <= 1000 ? null : t("settings.maxStepsInvalid"),
      ...PROVIDERS.map((p) => baseUrlError(providerLabel(p.id), urls[p.id])),
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
      setStatus(t("settings.saved"));
    } catch (err) {
      actions.reportError(err, t("settings.saveFailed"));
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
      actions.reportError(err, t("settings.workspaceFailed"));
    }
  };

  return (
    <section className="page">
      <header className="page-head">
        <div>
          <h1>{t("settings.title")}</h1>
          <p className="muted">{t("settings.intro")}</p>
          <p className="muted small">
            {t("settings.savedIn")} <code>{settings.configFile}</code>
          </p>
        </div>
      </header>

      <form className="card" onSubmit={(e) => void save(e)} noValidate aria-labelledby="model-h">
        <h2 id="model-h">{t("settings.model")}</h2>
        <div className="field">
          <label htmlFor="settings-model">{t("settings.defaultModel")}</label>
          <input
            id="settings-model"
            data-testid="settings-model"
            value={model}
            placeholder="openai/gpt-4.1"
            spellCheck={false}
            onChange={(e) => setModel(e.target.value)}
          />
          <small className="muted">{t("settings.defaultModelHelp")}</small>
        </div>
        <div className="field narrow">
          <label htmlFor="settings-max-steps">{t("settings.maxSteps")}</label>
          <input
            id="settings-max-steps"
            data-testid="settings-max-steps"
            type="number"
            min={1}
            max={1000}
            value={maxSteps}
            onChange={(e) => setMaxSteps(e.target.value)}
          />
          <small className="muted">{t("settings.maxStepsHelp")}</small>
        </div>
        <h3>{t("settings.baseUrls")}</h3>
        <p className="muted small">{t("settings.baseUrlsHelp")}</p>
        <div className="grid">
          {PROVIDERS.map((p) => (
            <div className="field" key={p.id}>
              <label htmlFor={`url-${p.id}`}>{providerLabel(p.id)}</label>
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
            {t("settings.save")}
          </button>
        </div>
      </form>

      <section className="card" aria-labelledby="local-models-h">
        <h2 id="local-models-h">{t("localModels.title")}</h2>
        <p className="muted">{t("localModels.intro")}</p>
        <LocalModels />
      </section>

      <section className="card" aria-labelledby="keys-h">
        <h2 id="keys-h">{t("settings.apiKeys")}</h2>
        <p className="muted small">{t("settings.apiKeysHelp")}</p>
        {KEYED.map((p) => (
          <KeyRow key={p.id} provider={p.id} label={providerLabel(p.id)} stored={settings.keys[p.id]} />
        ))}
      </section>

      <section className="card" aria-labelledby="ws-h">
        <h2 id="ws-h">{t("settings.workspace")}</h2>
        <p className="muted small">{t("settings.workspaceHelp")}</p>
        <div className="ws-row">
          <code className="path" data-testid="settings-workspace">{settings.workspace ?? t("settings.workspaceNotSet")}</code>
          <button type="button" className="btn" data-testid="settings-workspace-pick" onClick={() => void pick()}>
            {t("settings.chooseFolder")}
          </button>
        </div>
      </section>

      <SpeechSettings />
      <LanguageSwitch />
      <LogSection />
      <UpdatesSettings />
      <DesktopSettings />

      <DevicesSettings />
      <ChannelsSettings />
      <BrowserSettings />
    </section>
  );
}
