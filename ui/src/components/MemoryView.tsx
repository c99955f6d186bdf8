import { useCallback, useEffect, useState, type FormEvent } from "react";
import { api, errorMessage } from "../api";
import { formatTime } from "../format";
import { useStore } from "../store";
import type { EmbeddingStatus, MemoryBlock, MemorySearchResult, Skill, SkillSource } from "../types";

/** What each core block is for (the runtime's blocks: persona, user, facts, context). */
const BLOCK_HELP: Record<string, string> = {
  persona: "How the agent describes itself and behaves.",
  user: "What the agent knows about you.",
  facts: "Durable facts worth keeping in every chat.",
  context: "What you are working on right now.",
};

const SOURCE_LABEL: Record<SkillSource, string> = {
  built_in: "built-in",
  external: "external",
  user: "user",
};

const SEARCH_LIMIT = 10;
/** How often the status is read again while older memories are being embedded, in ms. */
const BACKFILL_POLL_MS = 1500;

function BlockEditor({ block, onSaved }: { block: MemoryBlock; onSaved: (b: MemoryBlock) => void }) {
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
        `The ${block.name} block holds ${chars.toLocaleString("en-US")} characters; the limit is ${block.maxChars.toLocaleString("en-US")}. Shorten it.`,
      );
      return;
    }
    setBusy(true);
    try {
      const saved = await api.setMemoryBlock(block.name, text);
      setError(null);
      setStatus(saved.content ? "Saved." : "Cleared.");
      onSaved(saved);
    } catch (err) {
      setError(`Not saved: ${errorMessage(err)}`);
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
        <span className="muted small">{BLOCK_HELP[block.name] ?? ""}</span>
        <span className={`memory-count small${over ? " over" : ""}`} data-testid={`memory-block-count-${block.name}`}>
          {chars.toLocaleString("en-US")} / {block.maxChars.toLocaleString("en-US")}
        </span>
      </div>
      <textarea
        id={id}
        data-testid={`memory-block-${block.name}`}
        rows={3}
        value={text}
        placeholder="Empty"
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
          Revert
        </button>
        <button type="submit" className="btn small primary" data-testid={`memory-block-save-${block.name}`} disabled={busy || !changed}>
          {busy ? "Saving…" : "Save"}
        </button>
      </div>
    </form>
  );
}

/** "on (local model)" / "on (provider model openai/...)": the model the status names. */
function modelLabel(status: EmbeddingStatus): string {
  if (status.provider && status.model) return `provider model ${status.model.replace(/ \(provider\)$/, "")}`;
  return "local model";
}

/**
 * Whether search finds memories by meaning, shown before searching; when the local model is
 * missing, a button downloads it (then older memories get their vectors in the background).
 */
function SemanticSearchStatus() {
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
      setDownloaded(done.downloaded ? `Downloaded to ${done.folder}.` : `The model was already in ${done.folder}.`);
      await refresh();
    } catch (err) {
      setDownloadError(`Download failed: ${errorMessage(err)}`);
    } finally {
      setDownloading(false);
    }
  };

  const canDownload = !!status && !status.active && !status.provider && !status.modelPresent;
  return (
    <div className="memory-semantic">
      <p className="small" data-testid="memory-semantic-status" aria-live="polite">
        <strong>Search by meaning:</strong>{" "}
        {statusError ? (
          <span className="error-text">unknown (could not read the status: {statusError})</span>
        ) : !status ? (
          <span className="muted">checking…</span>
        ) : status.active ? (
          <span title={status.model ?? undefined}>on ({modelLabel(status)})</span>
        ) : canDownload ? (
          // The download offer below names the folder; the full reason stays in the tooltip.
          <span title={status.reason ?? undefined}>off: no embedding model yet, so search matches exact words only</span>
        ) : (
          <span>off: {status.reason ?? "no embedding model"}</span>
        )}
        {status?.active && status.entriesWithoutVector > 0 && (
          <span className="muted" data-testid="memory-backfill">
            {" "}
            · {status.backfilling ? "giving vectors to" : "waiting to give vectors to"}{" "}
            {status.entriesWithoutVector.toLocaleString("en-US")} older{" "}
            {status.entriesWithoutVector === 1 ? "memory" : "memories"} (until then they are found by exact words only)
          </span>
        )}
      </p>
      {canDownload && (
        <div className="note small memory-download" data-testid="memory-download">
          <p>
            Search is full-text only: no embedding model is there. Download the local model once (stored in{" "}
            <code>{status.modelDir}</code>) to also find memories by meaning.
          </p>
          <button
            type="button"
            className="btn small primary"
            data-testid="memory-download-model"
            disabled={downloading}
            aria-busy={downloading}
            onClick={() => void download()}
          >
            {downloading ? "Downloading… (about 90 MB)" : "Download the local model (all-MiniLM-L6-v2, about 90 MB)"}
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
  const [query, setQuery] = useState("");
  const [result, setResult] = useState<{ query: string; found: MemorySearchResult } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const search = async (e: FormEvent) => {
    e.preventDefault();
    const q = query.trim();
    if (!q) {
      setError("Enter the words to search for.");
      return;
    }
    setBusy(true);
    try {
      setResult({ query: q, found: await api.searchMemory(q, SEARCH_LIMIT) });
      setError(null);
    } catch (err) {
      setError(`Search failed: ${errorMessage(err)}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="archive-h">
      <h2 id="archive-h">Archival memory</h2>
      <p className="muted small">
        Memories the agent stored with memory_archive and summaries of finished chats. Search finds them by meaning and by
        exact words.
      </p>
      <SemanticSearchStatus />
      <form className="memory-search-row" role="search" onSubmit={(e) => void search(e)} noValidate>
        <label htmlFor="memory-search" className="sr-only">
          Search archival memory
        </label>
        <input
          id="memory-search"
          data-testid="memory-search"
          type="search"
          value={query}
          placeholder="e.g. release date, units the user prefers"
          onChange={(e) => setQuery(e.target.value)}
        />
        <button type="submit" className="btn" data-testid="memory-search-submit" disabled={busy}>
          {busy ? "Searching…" : "Search"}
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
              <strong>Full-text only</strong> (no matches by meaning): {result.found.textOnlyReason}
            </p>
          )}
          {result.found.hits.length === 0 ? (
            <p className="muted">No memories match “{result.query}”.</p>
          ) : (
            <ol className="memory-hits">
              {result.found.hits.map((h) => (
                <li key={h.id} className="memory-hit" data-testid="memory-hit">
                  <p className="memory-hit-text">{h.content}</p>
                  <div className="memory-hit-meta small muted">
                    <span title="Combined relevance (reciprocal-rank fusion of the full-text and vector rankings)">
                      score {h.score === null ? "—" : h.score.toFixed(4)}
                    </span>
                    <span className="memory-matched">
                      matched by{" "}
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
  const [busy, setBusy] = useState(false);
  const toggle = async (enabled: boolean) => {
    setBusy(true);
    try {
      onChange(await api.setSkillEnabled(skill.name, enabled));
    } catch (e) {
      actions.reportError(e, `Could not ${enabled ? "enable" : "disable"} the skill “${skill.name}”`);
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
          <span className={`badge source-${skill.source}`}>{SOURCE_LABEL[skill.source]}</span>
          {!skill.enabled && <span className="badge">off</span>}
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
  const [blocks, setBlocks] = useState<MemoryBlock[] | null>(null);
  const [skills, setSkills] = useState<Skill[] | null>(null);

  useEffect(() => {
    let live = true;
    api
      .memoryBlocks()
      .then((b) => live && setBlocks(b))
      .catch((e) => actions.reportError(e, "Could not load the memory blocks"));
    api
      .listSkills()
      .then((s) => live && setSkills(s))
      .catch((e) => actions.reportError(e, "Could not load the skills"));
    return () => {
      live = false;
    };
  }, [actions]);

  return (
    <section className="page memory-page">
      <header className="page-head">
        <div>
          <h1>Memory and skills</h1>
          <p className="muted">What the agent remembers across chats, and the skills it can use.</p>
        </div>
      </header>

      <section className="card" aria-labelledby="core-h" data-testid="memory-blocks">
        <h2 id="core-h">Core memory</h2>
        <p className="muted small">These blocks are in every chat's system prompt. The agent edits them too (memory_block_update).</p>
        {!blocks ? (
          <p className="muted">Loading…</p>
        ) : (
          blocks.map((b) => (
            <BlockEditor key={b.name} block={b} onSaved={(saved) => setBlocks((all) => all && all.map((x) => (x.name === saved.name ? saved : x)))} />
          ))
        )}
      </section>

      <ArchiveSearch />

      <section className="card" aria-labelledby="skills-h" data-testid="skills">
        <h2 id="skills-h">Skills</h2>
        <p className="muted small">
          Folders with a SKILL.md: built-in ones, your own (skills/ in the config folder; they replace a built-in skill of the
          same name) and folders listed in SUZENT_SKILL_DIRS. Enabled skills are offered to the agent.
        </p>
        {!skills ? (
          <p className="muted">Loading…</p>
        ) : skills.length === 0 ? (
          <p className="muted">No skills found.</p>
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
