import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { api } from "../api";
import { baseUrlError, modelError, providerLabel, PROVIDERS, type ProviderId } from "../providers";
import { useStore } from "../store";
import type { SettingsPatch } from "../types";

/** Shown while no default model is configured: sets a provider, a model and its key. */
export function FirstRun({ onSkip }: { onSkip: () => void }) {
  const { state, dispatch, actions } = useStore();
  const { t } = useTranslation();
  const [provider, setProvider] = useState<ProviderId>("openai");
  const info = PROVIDERS.find((p) => p.id === provider) ?? PROVIDERS[0];
  const [model, setModel] = useState("");
  const [key, setKey] = useState("");
  const [baseUrl, setBaseUrl] = useState("");
  const [errors, setErrors] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const name = model.trim() || info.example;
    const full = `${provider}/${name}`;
    const problems = [modelError(full), baseUrlError(providerLabel(info.id), baseUrl)].filter((x): x is string => !!x);
    setErrors(problems);
    if (problems.length) return;
    setBusy(true);
    try {
      if (info.needsKey && key.trim()) await api.setApiKey(provider, key.trim());
      const current = state.settings?.providers;
      const patch: SettingsPatch =
        baseUrl.trim() && current
          ? { defaultModel: full, providers: { ...current, [provider]: { baseUrl: baseUrl.trim() } } }
          : { defaultModel: full };
      dispatch({ type: "settings/set", settings: await api.saveSettings(patch) });
    } catch (err) {
      actions.reportError(err, t("firstRun.saveFailed"));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="first-run" data-testid="first-run">
      <form className="card first-run-card" onSubmit={(e) => void submit(e)} noValidate>
        <div className="logo" aria-hidden="true">
          S
        </div>
        <h1>{t("firstRun.welcome")}</h1>
        <p className="muted">{t("firstRun.intro")}</p>
        <div className="field">
          <label htmlFor="fr-provider">{t("firstRun.provider")}</label>
          <select
            id="fr-provider"
            data-testid="first-run-provider"
            value={provider}
            onChange={(e) => setProvider(e.target.value as ProviderId)}
          >
            {PROVIDERS.map((p) => (
              <option key={p.id} value={p.id}>
                {providerLabel(p.id)}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="fr-model">{t("firstRun.model")}</label>
          <input
            id="fr-model"
            data-testid="first-run-model"
            value={model}
            placeholder={info.example}
            spellCheck={false}
            onChange={(e) => setModel(e.target.value)}
          />
        </div>
        {info.needsKey && (
          <div className="field">
            <label htmlFor="fr-key">{t("firstRun.apiKey")}</label>
            <input
              id="fr-key"
              type="password"
              autoComplete="off"
              data-testid="first-run-key"
              value={key}
              placeholder={t("firstRun.apiKeyPlaceholder")}
              onChange={(e) => setKey(e.target.value)}
            />
            <small className="muted">{t("firstRun.apiKeyHelp")}</small>
          </div>
        )}
        <div className="field">
          <label htmlFor="fr-url">{t("firstRun.baseUrl")}</label>
          <input
            id="fr-url"
            data-testid="first-run-base-url"
            value={baseUrl}
            placeholder={info.env}
            spellCheck={false}
            onChange={(e) => setBaseUrl(e.target.value)}
          />
        </div>
        {errors.length > 0 && (
          <ul className="field-error" role="alert">
            {errors.map((m) => (
              <li key={m}>{m}</li>
            ))}
          </ul>
        )}
        <div className="form-actions">
          <button type="button" className="btn ghost" onClick={onSkip}>
            {t("firstRun.skip")}
          </button>
          <button type="submit" className="btn primary" data-testid="first-run-save" disabled={busy}>
            {t("firstRun.start")}
          </button>
        </div>
      </form>
    </main>
  );
}
