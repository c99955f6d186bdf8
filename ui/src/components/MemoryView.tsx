import { useCallback, useEffect, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import type { TFunction } from "i18next";
import { api, errorMessage } from "../api";
import { formatTime } from "../format";
import { useStore } from "../store";
import type { EmbeddingStatus, MemoryBlock, MemorySearchResult, Skill, SkillSource } from "../types";

/** What each core block is for (the runtime's blocks: persona, user, facts, context). */
function blockHelp(name: string, t: TFunction): string {
  switch (name) {
    case "persona":
      return t("memory.block.persona");
    case "user":
      return t("memory.block.user");
    case "facts":
      return t("memory.block.facts");
    case "context":
      return t("memory.block.context");
    default:
      return "";
  }
}

function sourceLabel(source: SkillSource, t: TFunction): string {
  switch (source) {
    case "built_in":
      return t("memory.source.builtIn");
    case "external":
      return t("memory.source.external");
    case "user":
      return t("memory.source.user");
  }
}

const SEARCH_LIMIT = 10;
/** How often the status is read again while older memories are being embedded, in ms. */
const BACKFILL_POLL_MS = 1500;

function BlockEditor({ block, onSaved }: { block: MemoryBlock; onSaved: (b: MemoryBlock) => void }) {
  const { t } = useTranslation();
  const [text, setText] = useState(block.content);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const id = `memory-block-input-${block.name}`;
  const chars = [...text.trim()].length;
  const over = chars > block.maxChars;
  const changed = text.trim() !== block.content;

  // A newly stored text (this save, or a reload) replaces the edit. Adjusted during render, not
  // in an effect, so a mount-time effect can never overwrite what the user already typed.
  const [shown, setShown] = useState(block.content);
  if (shown !== block.content) {
    setShown(block.content);
    setText(block.content);
  }

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setStatus(null);
    if (over) {
      setError(
        t("memory.tooLong", { name: block.name, chars: chars.toLocaleString("en-US"), max: block.maxChars.toLocaleString("en-US") }),
      );
      return;
    }
    setBusy(true);
    try {
      const saved = await api.setMemoryBlock(block.name, text);
      setError(null);
      setStatus(saved.content ? t("memory.saved") : t("memory.cleared"));
      onSaved(saved);
    } catch (err) {
      setError(t("memory.notSaved", { error: errorMessage(err) }));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="memory-block" onSubmit={(e) => void save(e)} noValidate aria-labelledby={`${id}-label`}>
      <div className="memory-block-head">
        <label id={`${id}-label`} htmlFor={id}>
          {block.name}
        </label>
        <span className="muted small">{blockHelp(block.name, t)}</span>
        <span className={`memory-count small${over ? " over" : ""}`} data-testid={`memory-block-count-${block.name}`}>
          {chars.toLocaleString("en-US")} / {block.maxChars.toLocaleString("en-US")}
        </span>
      </div>
      <textarea
        id={id}
        data-testid={`memory-block-${block.name}`}
        rows={3}
        value={text}
        placeholder={t("memory.empty")}
        aria-invalid={over || !!error}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={(e) => {
          setText(e.target.value);
          setStatus(null);
        }}
      />
      {error && (
        <p className="field-error" role="alert" id={`${id}-error`} data-testid={`memory-block-error-${block.name}`}>
          {error}
        </p>
      )}
      <div className="form-actions">
        {status && (
          <span className="ok-text" role="status">
            {status}
          </span>
        )}
        <button
          type="button"
          className="btn small ghost"
          disabled={busy || !changed}
          onClick={() => {
            setText(block.content);
            setError(null);
          }}
        >
          {t("memory.revert")}
        </button>
        <button type="submit" className="btn small primary" data-testid={`memory-block-save-${block.name}`} disabled={busy || !changed}>
          {busy ? t("memory.saving") : t("memory.save")}
        </button>
      </div>
    </form>
  );
}

/** "on (local model)" / "on (provider model openai/...)": the model the status names. */
function modelLabel(status: EmbeddingStatus, t: TFunction): string {
  if (status.provider && status.model) return t("memory.providerModel", { model: status.model.replace(/ \(provider\)$/, "") });
  return t("memory.localModel");
}

/**
 * Whether search finds memories by meaning, shown before searching; when the local model is
 * missing, a button downloads it (then older memories get their vectors in the background).
 */
function SemanticSearchStatus() {
  const { t } = useTranslation();
  const [status, setStatus] = useState<EmbeddingStatus | null>(null);
  const [statusError, setStatusError] = useState<string | null>(null);
  const [downloading, setDownloading] = useState(false);
  const [downloadError, setDownloadError] = useState<string | null>(null);
  const [downloaded, setDownloaded] = useState<string | null>(null);

  const refresh = useCallback(async () => {
    try {
      setStatus(await api.embeddingStatus());
      setStatusError(null);
    } catch (err) {
      setStatusError(errorMessage(err));
    }
  }, []);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  // While older memories are being embedded, follow the count down.
  const backfilling = status?.backfilling ?? false;
  useEffect(() => {
    if (!backfilling) return;
    const timer = window.setTimeout(() => void refresh(), BACKFILL_POLL_MS);
    return () => window.clearTimeout(timer);
  }, [backfilling, status, refresh]);

  const download = async () => {
    setDownloading(true);
    setDownloadError(null);
    setDownloaded(null);
    try {
      const done = await api.downloadEmbeddingModel();
      setDownloaded(done.downloaded ? t("memory.downloadedTo", { folder: done.folder }) : t("memory.alreadyIn", { folder: done.folder }));
      await refresh();
    } catch (err) {
      setDownloadError(t("memory.downloadFailed", { error: errorMessage(err) }));
    } finally {
      setDownloading(false);
    }
  };

  const canDownload = !!status && !status.active && !status.provider && !status.modelPresent;
  return (
    <div className="memory-semantic">
      <p className="small" data-testid="memory-semantic-status" aria-live="polite">
        <strong>{t("memory.semantic")}</strong>{" "}
        {statusError ? (
          <span className="error-text">{t("memory.semanticUnknown", { error: statusError })}</span>
        ) : !status ? (
          <span className="muted">{t("memory.checking")}</span>
        ) : status.active ? (
          <span title={status.model ?? undefined}>{t("memory.semanticOn", { model: modelLabel(status, t) })}</span>
        ) : canDownload ? (
          // The download offer below names the folder; the full reason stays in the tooltip.
          <span title={status.reason ?? undefined}>{t("memory.semanticOffNoModel")}</span>
        ) : (
          <span>{t("memory.semanticOff", { reason: status.reason ?? t("memory.noModel") })}</span>
        )}
        {status?.active && status.entriesWithoutVector > 0 && (
          <span className="muted" data-testid="memory-backfill">
            {" · "}
            {status.backfilling
              ? t("memory.backfilling", { count: status.entriesWithoutVector, formatted: status.entriesWithoutVector.toLocaleString("en-US") })
              : t("memory.backfillWaiting", { count: status.entriesWithoutVector, formatted: status.entriesWithoutVector.toLocaleString("en-US") })}
          </span>
        )}
      </p>
      {canDownload && (
        <div className="note small memory-download" data-testid="memory-download">
          <p>
            {t("memory.downloadOfferBefore")}
            <code>{status.modelDir}</code>
            {t("memory.downloadOfferAfter")}
          </p>
          <button
            type="button"
            className="btn small primary"
            data-testid="memory-download-model"
            disabled={downloading}
            aria-busy={downloading}
            onClick={() => void download()}
          >
            {downloading ? t("memory.downloading") : t("memory.download")}
          </button>
        </div>
      )}
      {downloadError && (
        <p className="field-error" role="alert" data-testid="memory-download-error">
          {downloadError}
        </p>
      )}
      {downloaded && (
        <p className="ok-text small" data-testid="memory-download-done">
          {downloaded}
        </p>
      )}
    </div>
  );
}

function ArchiveSearch() {
  const { t } = useTranslation();
  const [query, setQuery] = useState("");
  const [result, setResult] = useState<{ query: string; found: MemorySearchResult } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const search = async (e: FormEvent) => {
    e.preventDefault();
    const q = query.trim();
    if (!q) {
      setError(t("memory.enterWords"));
      return;
    }
    setBusy(true);
    try {
      setResult({ query: q, found: await api.searchMemory(q, SEARCH_LIMIT) });
      setError(null);
    } catch (err) {
      setError(t("memory.searchFailed", { error: errorMessage(err) }));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="archive-h">
      <h2 id="archive-h">{t("memory.archive")}</h2>
      <p className="muted small">{t("memory.archiveHelp")}</p>
      <SemanticSearchStatus />
      <form className="memory-search-row" role="search" onSubmit={(e) => void search(e)} noValidate>
        <label htmlFor="memory-search" className="sr-only">
          {t("memory.searchLabel")}
        </label>
        <input
          id="memory-search"
          data-testid="memory-search"
          type="search"
          value={query}
          placeholder={t("memory.searchPlaceholder")}
          onChange={(e) => setQuery(e.target.value)}
        />
        <button type="submit" className="btn" data-testid="memory-search-submit" disabled={busy}>
          {busy ? t("memory.searching") : t("memory.search")}
        </button>
      </form>
      {error && (
        <p className="field-error" role="alert" data-testid="memory-search-error">
          {error}
        </p>
      )}
      {result && (
        <div className="memory-results" data-testid="memory-results" aria-live="polite">
          {result.found.textOnlyReason && (
            <p className="note small" data-testid="memory-text-only">
              <strong>{t("memory.textOnly")}</strong> {t("memory.textOnlyReason", { reason: result.found.textOnlyReason })}
            </p>
          )}
          {result.found.hits.length === 0 ? (
            <p className="muted">{t("memory.noMatch", { query: result.query })}</p>
          ) : (
            <ol className="memory-hits">
              {result.found.hits.map((h) => (
                <li key={h.id} className="memory-hit" data-testid="memory-hit">
                  <p className="memory-hit-text">{h.content}</p>
                  <div className="memory-hit-meta small muted">
                    <span title={t("memory.scoreHelp")}>
                      {t("memory.score", { score: h.score === null ? "—" : h.score.toFixed(4) })}
                    </span>
                    <span className="memory-matched">
                      {t("memory.matchedBy")}{" "}
                      {h.matchedBy.map((m) => (
                        <span key={m} className={`badge match-${m}`} data-testid="memory-hit-matched">
                          {m}
                        </span>
                      ))}
                    </span>
                    <span>{formatTime(h.createdAt)}</span>
                  </div>
                </li>
              ))}
            </ol>
          )}
        </div>
      )}
    </section>
  );
}

function SkillRow({ skill, onChange }: { skill: Skill; onChange: (skills: Skill[]) => void }) {
  const { actions } = useStore();
  const { t } = useTranslation();
  const [busy, setBusy] = useState(false);
  const toggle = async (enabled: boolean) => {
    setBusy(true);
    try {
      onChange(await api.setSkillEnabled(skill.name, enabled));
    } catch (e) {
      actions.reportError(e, enabled ? t("memory.skillEnableFailed", { name: skill.name }) : t("memory.skillDisableFailed", { name: skill.name }));
    } finally {
      setBusy(false);
    }
  };
  const inputId = `skill-toggle-${skill.name}`;
  return (
    <li className={`skill-row${skill.enabled ? "" : " disabled"}`} data-testid={`skill-${skill.name}`} data-enabled={skill.enabled}>
      <input
        id={inputId}
        type="checkbox"
        role="switch"
        data-testid={inputId}
        checked={skill.enabled}
        disabled={busy}
        aria-describedby={`${inputId}-desc`}
        onChange={(e) => void toggle(e.target.checked)}
      />
      <span className="skill-text">
        <label htmlFor={inputId} className="skill-name">
          {skill.name}
          <span className={`badge source-${skill.source}`}>{sourceLabel(skill.source, t)}</span>
          {!skill.enabled && <span className="badge">{t("memory.off")}</span>}
        </label>
        <span className="muted small" id={`${inputId}-desc`}>
          {skill.description}
        </span>
        <code className="skill-dir small" title={skill.dir}>
          {skill.dir}
        </code>
      </span>
    </li>
  );
}

/** Memory and skills: the core memory blocks (editable), archival memory search, and skills. */
export function MemoryView() {
  const { actions } = useStore();
  const { t } = useTranslation();
  const [blocks, setBlocks] = useState<MemoryBlock[] | null>(null);
  const [skills, setSkills] = useState<Skill[] | null>(null);

  useEffect(() => {
    let live = true;
    api
      .memoryBlocks()
      .then((b) => live && setBlocks(b))
      .catch((e) => actions.reportError(e, t("memory.blocksFailed")));
    api
      .listSkills()
      .then((s) => live && setSkills(s))
      .catch((e) => actions.reportError(e, t("memory.skillsFailed")));
    return () => {
      live = false;
    };
  }, [actions]);

  return (
    <section className="page memory-page">
      <header className="page-head">
        <div>
          <h1>{t("memory.title")}</h1>
          <p className="muted">{t("memory.intro")}</p>
        </div>
      </header>

      <section className="card" aria-labelledby="core-h" data-testid="memory-blocks">
        <h2 id="core-h">{t("memory.core")}</h2>
        <p className="muted small">{t("memory.coreHelp")}</p>
        {!blocks ? (
          <p className="muted">{t("memory.loading")}</p>
        ) : (
          blocks.map((b) => (
            <BlockEditor key={b.name} block={b} onSaved={(saved) => setBlocks((all) => all && all.map((x) => (x.name === saved.name ? saved : x)))} />
          ))
        )}
      </section>

      <ArchiveSearch />

      <section className="card" aria-labelledby="skills-h" data-testid="skills">
        <h2 id="skills-h">{t("memory.skills")}</h2>
        <p className="muted small">{t("memory.skillsHelp")}</p>
        {!skills ? (
          <p className="muted">{t("memory.loading")}</p>
        ) : skills.length === 0 ? (
          <p className="muted">{t("memory.noSkills")}</p>
        ) : (
          <ul className="skill-list">
            {skills.map((s) => (
              <SkillRow key={s.name} skill={s} onChange={setSkills} />
            ))}
          </ul>
        )}
      </section>
    </section>
  );
}
