// The canvas panel beside the chat: the chat's `canvas` surfaces, newest last, each with a close
// button; a drag handle (also keyboard operable) sets its width, which is remembered.
import { useCallback, useLayoutEffect, useRef, useState, type KeyboardEvent, type PointerEvent } from "react";
import { useTranslation } from "react-i18next";
import { CHAT_MIN_WIDTH } from "../../layout";
import { useStore } from "../../store";
import type { Surface } from "../../types";
import { SurfaceView } from "./SurfaceView";

const WIDTH_KEY = "suzent.canvasWidth";
export const CANVAS_MIN_WIDTH = 280;
const CANVAS_MAX_WIDTH = 960;
const CANVAS_DEFAULT_WIDTH = 400;
/** Arrow keys move the handle this many pixels (with Shift: four times as far). */
export const CANVAS_KEY_STEP = 16;

function storedWidth(): number {
  try {
    const v = Number(window.localStorage.getItem(WIDTH_KEY));
    return Number.isFinite(v) && v >= CANVAS_MIN_WIDTH ? Math.min(CANVAS_MAX_WIDTH, v) : CANVAS_DEFAULT_WIDTH;
  } catch {
    return CANVAS_DEFAULT_WIDTH;
  }
}

/** The canvas width the user chose, in CSS pixels, remembered in localStorage. */
function useCanvasWidth(): [number, (w: number) => void] {
  const [width, setWidth] = useState(storedWidth);
  const set = useCallback((next: number) => {
    setWidth(next);
    try {
      window.localStorage.setItem(WIDTH_KEY, String(next));
    } catch {
      /* storage unavailable: the width lasts for this window only */
    }
  }, []);
  return [width, set];
}

/** The handle between the chat and the canvas: drag it, or focus it and use the arrow keys. */
function ResizeHandle({
  width,
  max,
  onWidth,
  panelId,
}: {
  width: number;
  max: number;
  onWidth: (w: number) => void;
  panelId: string;
}) {
  const { t } = useTranslation();
  const drag = useRef<{ x: number; width: number } | null>(null);
  const onPointerDown = (e: PointerEvent<HTMLDivElement>) => {
    e.preventDefault();
    drag.current = { x: e.clientX, width };
    e.currentTarget.setPointerCapture?.(e.pointerId);
  };
  const onPointerMove = (e: PointerEvent<HTMLDivElement>) => {
    // The panel is on the right: moving the handle left widens it.
    if (drag.current) onWidth(drag.current.width + (drag.current.x - e.clientX));
  };
  const onPointerUp = (e: PointerEvent<HTMLDivElement>) => {
    drag.current = null;
    e.currentTarget.releasePointerCapture?.(e.pointerId);
  };
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const step = e.shiftKey ? CANVAS_KEY_STEP * 4 : CANVAS_KEY_STEP;
    let next: number | null = null;
    if (e.key === "ArrowLeft") next = width + step;
    else if (e.key === "ArrowRight") next = width - step;
    else if (e.key === "Home") next = CANVAS_MIN_WIDTH;
    else if (e.key === "End") next = max;
    if (next !== null) {
      e.preventDefault();
      onWidth(next);
    }
  };
  return (
    <div
      className="canvas-resize"
      role="separator"
      aria-orientation="vertical"
      aria-label={t("canvas.resize")}
      aria-controls={panelId}
      aria-valuenow={width}
      aria-valuemin={CANVAS_MIN_WIDTH}
      aria-valuemax={max}
      tabIndex={0}
      data-testid="canvas-resize"
      title={t("canvas.resizeTitle")}
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={onPointerUp}
      onPointerCancel={onPointerUp}
      onKeyDown={onKeyDown}
    />
  );
}

/** The side panel with a chat's canvas surfaces. */
export function CanvasPanel({ surfaces, onHide, overlay = false }: { surfaces: Surface[]; onHide: () => void; overlay?: boolean }) {
  const { actions } = useStore();
  const { t } = useTranslation();
  const [chosen, setChosen] = useCanvasWidth();
  const panelId = "canvas-panel";
  const aside = useRef<HTMLElement>(null);
  // The room beside the chat: the layout's width (the window's, less the sidebar, before layout).
  const [room, setRoom] = useState(() => window.innerWidth - 248);
  useLayoutEffect(() => {
    const layout = aside.current?.parentElement;
    const measure = () => setRoom(layout?.clientWidth || window.innerWidth - 248);
    measure();
    const observer = typeof ResizeObserver === "undefined" || !layout ? null : new ResizeObserver(measure);
    if (layout) observer?.observe(layout);
    window.addEventListener("resize", measure);
    return () => {
      observer?.disconnect();
      window.removeEventListener("resize", measure);
    };
  }, []);
  // Beside the chat, the chat keeps its minimum width; over it, the canvas leaves a strip of the
  // chat visible (and never grows past the window).
  const max = overlay
    ? Math.max(CANVAS_MIN_WIDTH, Math.min(CANVAS_MAX_WIDTH, room - 48))
    : Math.max(CANVAS_MIN_WIDTH, Math.min(CANVAS_MAX_WIDTH, room - CHAT_MIN_WIDTH));
  // A narrow window shows less than the chosen width without forgetting it.
  const width = Math.round(Math.min(max, Math.max(CANVAS_MIN_WIDTH, chosen)));
  const setWidth = (w: number) => setChosen(Math.round(Math.min(max, Math.max(CANVAS_MIN_WIDTH, w))));
  return (
    <>
      {!overlay && <ResizeHandle width={width} max={max} onWidth={setWidth} panelId={panelId} />}
      <aside
        ref={aside}
        id={panelId}
        className={`canvas-panel${overlay ? " overlay" : ""}`}
        data-overlay={overlay}
        data-testid="canvas-panel"
        aria-labelledby="canvas-h"
        style={{ width }}
      >
        <div className="canvas-head">
          <h2 id="canvas-h">{t("canvas.title")}</h2>
          <button type="button" className="icon-btn" aria-label={t("canvas.hide")} title={t("canvas.hide")} onClick={onHide}>
            ⟩
          </button>
        </div>
        <div className="canvas-surfaces">
          {surfaces.length === 0 ? (
            <p className="muted small canvas-empty">
              {t("canvas.emptyBefore")}
              <code>render_ui</code>
              {t("canvas.emptyAfter")}
            </p>
          ) : (
            surfaces.map((s) => (
              <SurfaceView
                key={s.surfaceId}
                surface={s}
                onClose={() => void actions.deleteSurface(s.chatId, s.surfaceId)}
              />
            ))
          )}
        </div>
      </aside>
    </>
  );
}
