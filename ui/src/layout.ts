// Window layout: how wide things are, what overlays what, and which panels each chat keeps open.
import { useCallback, useEffect, useState } from "react";

/** The chat column is never narrower than this (CSS pixels). */
export const CHAT_MIN_WIDTH = 560;
/** The sidebar's width when it is docked. */
export const SIDEBAR_WIDTH = 248;
/** Below this window width the canvas and the background panel overlay the chat. */
export const OVERLAY_BELOW = 1100;
/** Below this window width the sidebar is a drawer (docked it would squeeze the chat). */
export const DRAWER_BELOW = SIDEBAR_WIDTH + CHAT_MIN_WIDTH;

/** The window's inner width, following resizes. */
export function useWindowWidth(): number {
  const [width, setWidth] = useState(() => window.innerWidth);
  useEffect(() => {
    const onResize = () => setWidth(window.innerWidth);
    window.addEventListener("resize", onResize);
    return () => window.removeEventListener("resize", onResize);
  }, []);
  return width;
}

/** The side panels a chat remembers. */
export type Panel = "canvas" | "tasks";

const PANELS_KEY = "suzent.panels";

type Choices = Record<string, Partial<Record<Panel, boolean>>>;

function readChoices(): Choices {
  try {
    const v: unknown = JSON.parse(window.localStorage.getItem(PANELS_KEY) ?? "{}");
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Choices) : {};
  } catch {
    return {};
  }
}

/** The user's open/closed choice for a chat's panel, or null when they never chose. */
export function panelChoice(chatId: string, panel: Panel): boolean | null {
  const v = readChoices()[chatId]?.[panel];
  return typeof v === "boolean" ? v : null;
}

/** Remembers a chat's panel as open or closed (kept in the webview's local storage). */
export function setPanelChoice(chatId: string, panel: Panel, open: boolean) {
  const all = readChoices();
  all[chatId] = { ...all[chatId], [panel]: open };
  try {
    window.localStorage.setItem(PANELS_KEY, JSON.stringify(all));
  } catch {
    /* storage unavailable: the choice lasts for this window */
  }
}

/** Forgets a panel choice (used when a choice made before any chat moves to the first chat). */
function clearPanelChoice(chatId: string, panel: Panel) {
  const all = readChoices();
  if (!all[chatId]) return;
  delete all[chatId][panel];
  try {
    window.localStorage.setItem(PANELS_KEY, JSON.stringify(all));
  } catch {
    /* storage unavailable */
  }
}

/**
 * A chat's panel: open as the user last left it in this chat, else open only when it has
 * something to show (`hasContent`). Returns the state and its setter (which remembers).
 * A choice made while no chat was open yet (the window's) goes to the first chat that opens,
 * so a click during start-up is not undone when the chat list arrives.
 */
export function usePanel(chatId: string | null, panel: Panel, hasContent: boolean): [boolean, (open: boolean) => void] {
  const [version, setVersion] = useState(0);
  // Without a chat (none yet), the choice is the window's.
  const owner = chatId ?? "";
  const early = chatId === null ? null : panelChoice("", panel);
  const chosen = panelChoice(owner, panel) ?? early;
  const open = chosen ?? hasContent;
  useEffect(() => {
    if (chatId === null || early === null) return;
    if (panelChoice(chatId, panel) === null) setPanelChoice(chatId, panel, early);
    clearPanelChoice("", panel);
  }, [chatId, panel, early]);
  const set = useCallback(
    (next: boolean) => {
      setPanelChoice(owner, panel, next);
      setVersion((v) => v + 1);
    },
    [owner, panel],
  );
  void version;
  return [open, set];
}

const SIDEBAR_KEY = "suzent.sidebar";

/** Whether the user collapsed the docked sidebar (remembered). */
export function useSidebarCollapsed(): [boolean, (collapsed: boolean) => void] {
  const [collapsed, setCollapsed] = useState(() => {
    try {
      return window.localStorage.getItem(SIDEBAR_KEY) === "collapsed";
    } catch {
      return false;
    }
  });
  const set = useCallback((next: boolean) => {
    setCollapsed(next);
    try {
      if (next) window.localStorage.setItem(SIDEBAR_KEY, "collapsed");
      else window.localStorage.removeItem(SIDEBAR_KEY);
    } catch {
      /* storage unavailable */
    }
  }, []);
  return [collapsed, set];
}
