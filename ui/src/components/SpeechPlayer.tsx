import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { SpeechClip } from "../types";
import { formatDuration } from "../format";
import type { ToolItem } from "../model";

/** The URI scheme the desktop shell serves speech clips from (src-tauri/src/audio.rs). */
export const AUDIO_SCHEME = "suzent-audio";

/**
 * The URL of a stored speech clip: `suzent-audio://localhost/<chat>/<file>` on Linux and macOS,
 * `http://suzent-audio.localhost/<chat>/<file>` on Windows and Android (where Tauri maps custom
 * schemes to that form). Like Tauri's `convertFileSrc`, which it uses when the app provides it;
 * `windowsForm` forces one form.
 */
export function speechClipUrl(clip: Pick<SpeechClip, "chatId" | "file">, windowsForm?: boolean): string {
  const path = `${encodeURIComponent(clip.chatId)}/${encodeURIComponent(clip.file)}`;
  const internals = (window as { __TAURI_INTERNALS__?: { convertFileSrc?: (path: string, protocol?: string) => string } })
    .__TAURI_INTERNALS__;
  if (windowsForm === undefined && typeof internals?.convertFileSrc === "function") {
    // convertFileSrc encodes its argument whole; the scheme wants the two names as path segments.
    return internals.convertFileSrc("", AUDIO_SCHEME) + path;
  }
  const http = windowsForm ?? /Windows|Android/i.test(navigator.userAgent);
  return http ? `http://${AUDIO_SCHEME}.localhost/${path}` : `${AUDIO_SCHEME}://localhost/${path}`;
}

/** The clip a finished `speak` call returned (its output is the clip as JSON), else null. */
export function speechClipOf(item: Pick<ToolItem, "name" | "status" | "output">): SpeechClip | null {
  if (item.name !== "speak" || item.status !== "ok" || !item.output) return null;
  try {
    const clip = JSON.parse(item.output) as Partial<SpeechClip>;
    if (typeof clip.chatId === "string" && typeof clip.file === "string" && typeof clip.durationMs === "number") {
      return clip as SpeechClip;
    }
  } catch {
    /* not a clip: the card shows the output as text */
  }
  return null;
}

/**
 * The clip as a `blob:` URL for the player, read with `fetch` from the app's audio scheme:
 * WebKitGTK cannot play media from a custom scheme (MEDIA_ERR_SRC_NOT_SUPPORTED), but it plays
 * blobs. `{url}` once read (revoked when the player goes), `{error}` when the read failed.
 */
function useClipBlob(clip: Pick<SpeechClip, "chatId" | "file" | "mimeType">): { url?: string; error?: string } {
  const [state, setState] = useState<{ url?: string; error?: string }>({});
  const source = speechClipUrl(clip);
  const type = clip.mimeType || "audio/wav";
  useEffect(() => {
    let url: string | undefined;
    let gone = false;
    setState({});
    fetch(source)
      .then(async (r) => {
        if (!r.ok) throw new Error((await r.text().catch(() => "")) || `HTTP ${r.status}`);
        return r.arrayBuffer();
      })
      .then((bytes) => {
        if (gone) return;
        url = URL.createObjectURL(new Blob([bytes], { type }));
        setState({ url });
      })
      .catch((e: unknown) => {
        if (!gone) setState({ error: e instanceof Error ? e.message : String(e) });
      });
    return () => {
      gone = true;
      if (url) URL.revokeObjectURL(url);
    };
  }, [source, type]);
  return state;
}

/** A player for a stored speech clip, with its voice, length and file. Plays on click unless `autoPlay`. */
export function SpeechPlayer({ clip, autoPlay = false }: { clip: SpeechClip; autoPlay?: boolean }) {
  const { t } = useTranslation();
  const { url, error } = useClipBlob(clip);
  return (
    <figure className="speech-clip" data-testid="speech-player" aria-busy={!url && !error}>
      <audio
        controls
        preload="metadata"
        src={url}
        autoPlay={autoPlay}
        aria-label={t("tool.speech.player")}
        data-testid="speech-audio"
      />
      {error && (
        <p className="error small" role="alert" data-testid="speech-error">
          {t("tool.speech.loadFailed", { error })}
        </p>
      )}
      <figcaption className="muted small">
        <div>{t("tool.speech.details", { voice: clip.voice, duration: formatDuration(clip.durationMs), backend: clip.backend })}</div>
        <div className="speech-file">
          <code className="path" title={t("tool.speech.file")}>
            {clip.path}
          </code>
        </div>
      </figcaption>
    </figure>
  );
}
