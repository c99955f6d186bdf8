import { useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { api, listenLocalModelProgress } from "../api";
import { useStore } from "../store";
import type { DownloadProgress, LocalModelsView } from "../types";

const gb = (bytes: number) => (bytes / 1e9).toFixed(1);
const mib = (bytes: number) => (bytes / 1_048_576).toFixed(0);

/**
 * Local GGUF models: the installed ones (use, delete), the recommended ones (download with
 * progress) and importing a file from disk. `firstRun` shows the short form of the first-run
 * screen: "Use a local model (no account)".
 */
export function LocalModels({ firstRun = false }: { firstRun?: boolean }) {
  const { dispatch, actions } = useStore();
  const { t } = useTranslation();
  const [view, setView] = useState<LocalModelsView | null>(null);
  const [progress, setProgress] = useState<Record<string, DownloadProgress>>({});
  const [busy, setBusy] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setView(await api.localModels());
    } catch (err) {
      actions.reportError(err, t("localModels.loadFailed"));
    }
  }, [actions, t]);

  useEffect(() => {
    void load();
    let unlisten: (() => void) | null = null;
    let cancelled = false;
    void listenLocalModelProgress((p) => setProgress((all) => ({ ...all, [p.id]: p }))).then((u) => {
      if (cancelled) u();
      else unlisten = u;
    });
    return () => {
      cancelled = true;
      unlisten?.();
    };
  }, [load]);

  const run = async (key: string, what: () => Promise<void>, failed: string) => {
    setBusy(key);
    try {
      await what();
    } catch (err) {
      actions.reportError(err, failed);
    } finally {
      setBusy(null);
    }
  };

  const use = (id: string) =>
    run(`use:${id}`, async () => dispatch({ type: "settings/set", settings: await api.useLocalModel(id) }), t("localModels.useFailed"));
  const pull = (id: string) => run(`pull:${id}`, async () => setView(await api.pullLocalModel(id)), t("localModels.pullFailed"));
  const remove = (id: string) => run(`rm:${id}`, async () => setView(await api.removeLocalModel(id)), t("localModels.removeFailed"));
  const importFile = () =>
    run(
      "import",
      async () => {
        const next = await api.importLocalModel();
        if (next) setView(next);
      },
      t("localModels.importFailed"),
    );

  if (!view) return <p className="muted">{t("localModels.loading")}</p>;
  const installed = view.installed;
  const available = view.recommended.filter((r) => !r.installed);

  return (
    <div className="local-models" data-testid="local-models">
      {firstRun && installed.length > 0 && (
        <button
          type="button"
          className="btn primary"
          data-testid="use-local-model"
          disabled={busy !== null}
          onClick={() => void use(installed[0].id)}
        >
          {t("localModels.useInstalled", { name: installed[0].name ?? installed[0].id })}
        </button>
      )}
      {(!firstRun || installed.length > 1) && installed.length > 0 && (
        <ul className="model-list" aria-label={t("localModels.installed")}>
          {installed.map((m) => (
            <li key={m.id} data-testid={`installed-${m.id}`}>
              <span>
                <strong>{m.name ?? m.id}</strong>{" "}
                <small className="muted">
                  local/{m.id} · {mib(m.sizeBytes ?? 0)} MiB · {m.architecture}
                </small>
              </span>
              <span className="row-actions">
                <button type="button" className="btn" disabled={busy !== null} onClick={() => void use(m.id)}>
                  {t("localModels.use")}
                </button>
                {!firstRun && (
                  <button type="button" className="btn ghost" disabled={busy !== null} onClick={() => void remove(m.id)}>
                    {t("localModels.delete")}
                  </button>
                )}
              </span>
            </li>
          ))}
        </ul>
      )}
      {!firstRun && installed.length === 0 && <p className="muted">{t("localModels.none", { dir: view.dir })}</p>}
      {(installed.length === 0 || !firstRun) && available.length > 0 && (
        <>
          <h3>{t("localModels.recommended")}</h3>
          <ul className="model-list">
            {available.map(({ model }) => {
              const p = progress[model.id];
              // Byte counts cross as f64, typed `number | null` by the bindings (null never comes for a count).
              const percent = p?.total ? Math.floor(((p.downloaded ?? 0) * 100) / p.total) : null;
              return (
                <li key={model.id} data-testid={`recommended-${model.id}`}>
                  <span>
                    <strong>{model.name}</strong>{" "}
                    <small className="muted">
                      {t("localModels.facts", { size: gb(model.sizeBytes), license: model.license, ram: model.minRamGb })}
                    </small>
                    <br />
                    <small>{model.purpose}</small>
                    {busy === `pull:${model.id}` && (
                      <progress
                        max={100}
                        value={percent ?? undefined}
                        aria-label={t("localModels.downloading", { name: model.name })}
                        data-testid={`progress-${model.id}`}
                      />
                    )}
                  </span>
                  <button type="button" className="btn" disabled={busy !== null} onClick={() => void pull(model.id)}>
                    {busy === `pull:${model.id}` && percent !== null ? `${percent}%` : t("localModels.download")}
                  </button>
                </li>
              );
            })}
          </ul>
        </>
      )}
      {!firstRun && (
        <button type="button" className="btn ghost" disabled={busy !== null} onClick={() => void importFile()}>
          {t("localModels.import")}
        </button>
      )}
    </div>
  );
}
