import { useEffect, useId, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { api, ApiError, errorMessage } from "../api";
import { baseUrlError, providerLabel, PROVIDERS, type ProviderId } from "../providers";
import { useStore } from "../store";
import { LocalModels } from "./LocalModels";
import type { SettingsPatch } from "../types";

/**
 * The model name to store for what the user typed or picked: as is when the provider lists it
 * (OpenAI-compatible servers have ids like `openai/gpt-4o`), else without a leading copy of the
 * provider's own prefix, so `openai/mock` under OpenAI is saved as `openai/mock`, never
 * `openai/openai/mock`.
 */
export function modelName(provider: string, typed: string, listed: readonly string[]): string {
  let name = typed.trim();
  if (listed.includes(name)) return name;
  while (name.startsWith(`${provider}/`)) name = name.slice(provider.length + 1);
  return name;
}

/** Where the provider's key comes from, as the setup settled it. */
type KeyChoice = "keychain" | "environment" | "session" | "none";

type Check = { state: "idle" } | { state: "running" } | { state: "ok"; text: string } | { state: "error"; text: string };

/**
 * First run: provider, key (the OS keychain; when it cannot be used, the environment's key or
 * one kept for this session only), a model from the provider's list (or typed), a connection
 * test that makes one real request, and the workspace folder. Shown while no default model is
 * configured.
 */
export function FirstRun({ onSkip }: { onSkip: () => void }) {
  const { state, dispatch } = useStore();
  const { t } = useTranslation();
  const ids = useId();
  const [provider, setProvider] = useState<ProviderId>("openai");
  const info = PROVIDERS.find((p) => p.id === provider) ?? PROVIDERS[0];
  const [baseUrl, setBaseUrl] = useState("");
  const [key, setKey] = useState("");
  const [keyChoice, setKeyChoice] = useState<KeyChoice>("none");
  const [keychainProblem, setKeychainProblem] = useState<string | null>(null);
  const [envHasKey, setEnvHasKey] = useState(false);
  const [models, setModels] = useState<string[] | null>(null);
  const [modelsError, setModelsError] = useState<string | null>(null);
  const [model, setModel] = useState("");
  const [check, setCheck] = useState<Check>({ state: "idle" });
  const [workspace, setWorkspace] = useState(state.settings?.workspace ?? "");
  const [workspaceError, setWorkspaceError] = useState<string | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);

  // What the environment and the keychain already hold for this provider.
  useEffect(() => {
    let live = true;
    setKeyChoice("none");
    setKeychainProblem(null);
    setModels(null);
    setCheck({ state: "idle" });
    api.providerKeys().then(
      (all) => {
        if (!live) return;
        const mine = all.find((k) => k.provider === provider);
        setEnvHasKey(!!mine?.inEnvironment);
        setKeyChoice(mine?.inKeychain ? "keychain" : mine?.inSession ? "session" : mine?.inEnvironment ? "environment" : "none");
      },
      () => live && setEnvHasKey(false),
    );
    return () => {
      live = false;
    };
  }, [provider]);

  const url = baseUrl.trim() || null;

  /** Stores the typed key where it can go; says why when the keychain cannot take it. */
  const storeKey = async (): Promise<boolean> => {
    const k = key.trim();
    if (!k) return true;
    try {
      await api.setApiKey(provider, k);
      setKeyChoice("keychain");
      setKeychainProblem(null);
      setKey("");
      return true;
    } catch (e) {
      if (e instanceof ApiError && e.kind === "keychain") {
        setKeychainProblem(errorMessage(e));
        return false;
      }
      setErrors([t("firstRun.keyFailed", { error: errorMessage(e) })]);
      return false;
    }
  };

  const keepForSession = async () => {
    try {
      await api.setSessionKey(provider, key.trim());
      setKeyChoice("session");
      setKeychainProblem(null);
      setKey("");
    } catch (e) {
      setErrors([t("firstRun.keyFailed", { error: errorMessage(e) })]);
    }
  };

  const loadModels = async () => {
    if (!(await storeKey())) return;
    setModelsError(null);
    try {
      const list = await api.listModels(provider, url, null);
      setModels(list);
      if (list.length && !model) setModel(list[0]);
    } catch (e) {
      setModels([]);
      setModelsError(errorMessage(e));
    }
  };

  const name = modelName(provider, model, models ?? []);

  const testConnection = async () => {
    if (!name) {
      setCheck({ state: "error", text: t("firstRun.modelRequired") });
      return;
    }
    if (!(await storeKey())) return;
    setCheck({ state: "running" });
    try {
      const r = await api.testConnection(`${provider}/${name}`, url);
      setCheck({ state: "ok", text: t("firstRun.testOk", { model: r.model, ms: r.latencyMs }) });
    } catch (e) {
      setCheck({ state: "error", text: t("firstRun.testFailed", { error: errorMessage(e) }) });
    }
  };

  const pickFolder = async () => {
    try {
      const path = await api.pickWorkspace();
      if (path) {
        setWorkspace(path);
        setWorkspaceError(null);
      }
    } catch (e) {
      setWorkspaceError(errorMessage(e));
    }
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const problems = [
      name ? null : t("firstRun.modelRequired"),
      baseUrlError(providerLabel(info.id), baseUrl),
      workspace.trim() ? null : t("firstRun.workspaceRequired"),
    ].filter((x): x is string => !!x);
    setErrors(problems);
    setWorkspaceError(null);
    if (problems.length) return;
    if (!(await storeKey())) return;
    setBusy(true);
    try {
      const current = state.settings?.providers;
      const patch: SettingsPatch = {
        defaultModel: `${provider}/${name}`,
        workspace: workspace.trim(),
        ...(url && current ? { providers: { ...current, [provider]: { baseUrl: url } } } : {}),
      };
      dispatch({ type: "settings/set", settings: await api.saveSettings(patch) });
    } catch (err) {
      if (err instanceof ApiError && err.field === "workspace") setWorkspaceError(errorMessage(err));
      else setErrors([t("firstRun.saveFailedWith", { error: errorMessage(err) })]);
    } finally {
      setBusy(false);
    }
  };

  const keyEnv = info.keyEnv;
  return (
    <main className="first-run" data-testid="first-run">
      <form className="card first-run-card" onSubmit={(e) => void submit(e)} noValidate>
        <div className="logo" aria-hidden="true">
          S
        </div>
        <h1>{t("firstRun.welcome")}</h1>
        <section className="first-run-local" aria-labelledby="fr-local-h">
          <h2 id="fr-local-h">{t("localModels.firstRunTitle")}</h2>
          <p className="muted">{t("localModels.firstRunIntro")}</p>
          <LocalModels firstRun />
        </section>
        <h2 className="first-run-or">{t("localModels.orProvider")}</h2>
        <p className="muted">{t("firstRun.intro")}</p>

        <h2 className="first-run-step">{t("firstRun.step1")}</h2>
        <div className="field">
          <label htmlFor={`${ids}-provider`}>{t("firstRun.provider")}</label>
          <select
            id={`${ids}-provider`}
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
          <label htmlFor={`${ids}-url`}>{t("firstRun.baseUrl")}</label>
          <input
            id={`${ids}-url`}
            data-testid="first-run-base-url"
            value={baseUrl}
            placeholder={info.env}
            spellCheck={false}
            onChange={(e) => setBaseUrl(e.target.value)}
          />
        </div>

        {info.needsKey && (
          <>
            <h2 className="first-run-step">{t("firstRun.step2")}</h2>
            <div className="field">
              <label htmlFor={`${ids}-key`}>{t("firstRun.apiKey")}</label>
              <input
                id={`${ids}-key`}
                type="password"
                autoComplete="off"
                data-testid="first-run-key"
                value={key}
                placeholder={t("firstRun.apiKeyPlaceholder")}
                onChange={(e) => setKey(e.target.value)}
              />
              <small className="muted" data-testid="first-run-key-status">
                {keyChoice === "keychain"
                  ? t("firstRun.keyInKeychain")
                  : keyChoice === "session"
                    ? t("firstRun.keyInSession")
                    : keyChoice === "environment" && keyEnv
                      ? t("firstRun.keyFromEnv", { env: keyEnv })
                      : keyEnv
                        ? t("firstRun.apiKeyHelp", { env: keyEnv })
                        : null}
              </small>
            </div>
            {keychainProblem && (
              <div className="note keychain-problem" role="alert" data-testid="first-run-keychain-problem">
                <p>{t("firstRun.keychainUnavailable", { reason: keychainProblem })}</p>
                <div className="form-actions">
                  {envHasKey && keyEnv && (
                    <button
                      type="button"
                      className="btn"
                      data-testid="first-run-use-env"
                      onClick={() => {
                        setKey("");
                        setKeyChoice("environment");
                        setKeychainProblem(null);
                      }}
                    >
                      {t("firstRun.useEnv", { env: keyEnv })}
                    </button>
                  )}
                  <button type="button" className="btn" data-testid="first-run-session-key" onClick={() => void keepForSession()}>
                    {t("firstRun.keepForSession")}
                  </button>
                </div>
              </div>
            )}
          </>
        )}

        <h2 className="first-run-step">{t("firstRun.step3")}</h2>
        <div className="field">
          <label htmlFor={`${ids}-model`}>{t("firstRun.model")}</label>
          <div className="first-run-row">
            <input
              id={`${ids}-model`}
              data-testid="first-run-model"
              list={`${ids}-models`}
              value={model}
              placeholder={info.example}
              spellCheck={false}
              onChange={(e) => {
                setModel(e.target.value);
                setCheck({ state: "idle" });
              }}
            />
            <button type="button" className="btn" data-testid="first-run-load-models" onClick={() => void loadModels()}>
              {t("firstRun.loadModels")}
            </button>
          </div>
          <datalist id={`${ids}-models`}>
            {(models ?? []).map((m) => (
              <option key={m} value={m} />
            ))}
          </datalist>
          {models && models.length > 0 && (
            <select
              className="first-run-model-list"
              data-testid="first-run-model-list"
              aria-label={t("firstRun.modelList")}
              size={Math.min(6, models.length)}
              value={models.includes(model) ? model : ""}
              onChange={(e) => {
                setModel(e.target.value);
                setCheck({ state: "idle" });
              }}
            >
              {models.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          )}
          {modelsError && (
            <small className="field-error" data-testid="first-run-models-error">
              {t("firstRun.modelsFailed", { error: modelsError })}
            </small>
          )}
          {name && model.trim() !== name && <small className="muted">{t("firstRun.savedAs", { model: `${provider}/${name}` })}</small>}
        </div>
        <div className="first-run-row">
          <button
            type="button"
            className="btn"
            data-testid="first-run-test"
            disabled={check.state === "running"}
            onClick={() => void testConnection()}
          >
            {check.state === "running" ? t("firstRun.testing") : t("firstRun.test")}
          </button>
          <span
            className={check.state === "error" ? "field-error" : "ok-text"}
            role="status"
            data-testid="first-run-test-result"
            data-state={check.state}
          >
            {check.state === "ok" || check.state === "error" ? check.text : ""}
          </span>
        </div>

        <h2 className="first-run-step">{t("firstRun.step4")}</h2>
        <div className="field">
          <label htmlFor={`${ids}-ws`}>{t("firstRun.workspace")}</label>
          <div className="first-run-row">
            <input
              id={`${ids}-ws`}
              data-testid="first-run-workspace"
              value={workspace}
              placeholder={t("firstRun.workspacePlaceholder")}
              spellCheck={false}
              aria-invalid={!!workspaceError}
              onChange={(e) => {
                setWorkspace(e.target.value);
                setWorkspaceError(null);
              }}
            />
            <button type="button" className="btn" data-testid="first-run-workspace-pick" onClick={() => void pickFolder()}>
              {t("firstRun.chooseFolder")}
            </button>
          </div>
          <small className="muted">{t("firstRun.workspaceHelp")}</small>
          {workspaceError && (
            <small className="field-error" role="alert" data-testid="first-run-workspace-error">
              {workspaceError}
            </small>
          )}
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
