import { useCallback, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { BackgroundTasks } from "./components/BackgroundTasks";
import { ChatList } from "./components/ChatList";
import { BrowserPairingDialog } from "./components/BrowserPairingDialog";
import { DeepLinkDialog } from "./components/DeepLinkDialog";
import { UpdateDialog } from "./components/UpdatesSettings";
import { ChatView } from "./components/ChatView";
import { ConfigView } from "./components/ConfigView";
import { ErrorBanner, ErrorBoundary } from "./components/ErrorBanner";
import { Icon, type IconName } from "./components/Icon";
import { FirstRun } from "./components/FirstRun";
import { ShortcutsHelp } from "./components/ShortcutsHelp";
import { SearchDialog } from "./components/SearchDialog";
import { MemoryView } from "./components/MemoryView";
import { PermissionsView } from "./components/PermissionsView";
import { SchedulesView } from "./components/SchedulesView";
import { RunNotices } from "./components/ChatAutomation";
import { SettingsView } from "./components/SettingsView";
import { useStore } from "./store";
import { DRAWER_BELOW, OVERLAY_BELOW, usePanel, useSidebarCollapsed, useWindowWidth } from "./layout";
import type { TFunction } from "i18next";

type Page = "chat" | "schedules" | "config" | "memory" | "permissions" | "settings";

const NAV: { page: Page; icon: IconName }[] = [
  { page: "chat", icon: "chat" },
  { page: "schedules", icon: "clock" },
  { page: "config", icon: "tools" },
  { page: "memory", icon: "memory" },
  { page: "permissions", icon: "shield" },
  { page: "settings", icon: "gear" },
];

function navLabel(page: Page, t: TFunction): string {
  switch (page) {
    case "chat":
      return t("app.nav.chat");
    case "schedules":
      return t("app.nav.schedules");
    case "config":
      return t("app.nav.tools");
    case "memory":
      return t("app.nav.memory");
    case "permissions":
      return t("app.nav.permissions");
    case "settings":
      return t("app.nav.settings");
  }
}

const PAGES: Page[] = ["chat", "schedules", "config", "memory", "permissions", "settings"];
const LAST_CHAT = "suzent.activeChat";

function pageFromHash(): Page {
  const h = window.location.hash.replace(/^#\/?/, "");
  return (PAGES as string[]).includes(h) ? (h as Page) : "chat";
}

export function App() {
  const { state, actions } = useStore();
  const { t } = useTranslation();
  const [page, setPageState] = useState<Page>(pageFromHash);
  const setPage = (p: Page) => {
    setPageState(p);
    window.history.replaceState(null, "", `#/${p}`);
  };

  // After start (and after a reload): reopen the last chat, else one waiting for approval, else the newest.
  const { chatsLoaded, chats, activeChatId, pending } = state;
  const [restored, setRestored] = useState(false);
  useEffect(() => {
    if (restored || !chatsLoaded) return;
    setRestored(true);
    if (activeChatId || chats.length === 0) return;
    let last: string | null = null;
    try {
      last = window.localStorage.getItem(LAST_CHAT);
    } catch {
      last = null;
    }
    const waiting = chats.find((c) => (pending[c.id]?.length ?? 0) > 0);
    const pick = chats.find((c) => c.id === last) ?? waiting ?? chats[0];
    void actions.selectChat(pick.id);
  }, [restored, chatsLoaded, chats, activeChatId, pending, actions]);

  // A new user (no chat yet, a model set up, also right after the first run) starts in an open,
  // focused chat, never on "No chat selected". Once per window, and not when listing failed.
  const [autoCreate, setAutoCreate] = useState<"idle" | "pending" | "done">("idle");
  const hasModel = !!state.settings?.defaultModel;
  useEffect(() => {
    if (autoCreate !== "idle" || !chatsLoaded || state.chatsFailed || chats.length > 0 || activeChatId || !hasModel) return;
    setAutoCreate("pending");
    void actions.createChat().finally(() => setAutoCreate("done"));
  }, [autoCreate, chatsLoaded, state.chatsFailed, chats.length, activeChatId, hasModel, actions]);
  // While the first chat is being chosen or made, the chat pane waits quietly instead of saying
  // "No chat selected"; that shows only once nothing is being opened (or opening failed).
  const opening =
    !activeChatId &&
    !state.chatsFailed &&
    (!chatsLoaded || (chats.length > 0 && !restored) || (chats.length === 0 && hasModel && autoCreate !== "done"));
  useEffect(() => {
    if (!activeChatId) return;
    try {
      window.localStorage.setItem(LAST_CHAT, activeChatId);
    } catch {
      /* storage unavailable: nothing to remember */
    }
  }, [activeChatId]);

  // A scheduled run's chat, from the Schedules page or a run notice.
  const openChat = (chatId: string) => {
    void actions.refreshChats().then(() => actions.selectChat(chatId));
    setPage("chat");
  };

  // A `suzent://chat/ID` link (stable, so the dialog's inbox reader does not re-subscribe).
  const openChatRef = useRef(openChat);
  openChatRef.current = openChat;
  const openDeepLinkedChat = useCallback((chatId: string) => openChatRef.current(chatId), []);

  const [skipSetup, setSkipSetup] = useState(false);
  const width = useWindowWidth();
  // Narrow windows: the sidebar is a drawer and the side panels overlay the chat, which keeps
  // its minimum width instead of being squeezed.
  const drawer = width < DRAWER_BELOW;
  const overlay = width < OVERLAY_BELOW;
  const [collapsed, setCollapsed] = useSidebarCollapsed();
  const [drawerOpen, setDrawerOpen] = useState(false);
  const sidebarShown = drawer ? drawerOpen : !collapsed;
  const chatTasks = state.tasks.filter((task) => task.chatId === activeChatId);
  // The background panel remembers open/closed per chat and starts closed when the chat has no tasks.
  const [showTasks, setShowTasks] = usePanel(activeChatId, "tasks", chatTasks.length > 0);
  const running = state.tasks.filter((task) => task.status === "running").length;
  const hideSidebar = () => (drawer ? setDrawerOpen(false) : setCollapsed(true));
  const showSidebar = () => (drawer ? setDrawerOpen(true) : setCollapsed(false));
  const [help, setHelp] = useState(false);
  const [searching, setSearching] = useState(false);

  // Window-wide shortcuts (listed in the help sheet, Ctrl+/).
  const keys = useRef({ sidebarShown, hideSidebar, showSidebar, setPage });
  keys.current = { sidebarShown, hideSidebar, showSidebar, setPage };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey) return;
      const k = e.key.toLowerCase();
      const focusComposer = () => window.setTimeout(() => document.getElementById("composer-input")?.focus());
      if (k === "n") {
        e.preventDefault();
        keys.current.setPage("chat");
        void actions.createChat().then(focusComposer);
      } else if (k === "k") {
        e.preventDefault();
        setSearching(true);
      } else if (k === "l") {
        e.preventDefault();
        keys.current.setPage("chat");
        focusComposer();
      } else if (k === "b") {
        e.preventDefault();
        if (keys.current.sidebarShown) keys.current.hideSidebar();
        else keys.current.showSidebar();
      } else if (k === "/" || k === "?") {
        e.preventDefault();
        setHelp(true);
      }
    };
    const onHelp = () => setHelp(true);
    window.addEventListener("keydown", onKey);
    window.addEventListener("suzent:help", onHelp);
    return () => {
      window.removeEventListener("keydown", onKey);
      window.removeEventListener("suzent:help", onHelp);
    };
  }, [actions]);

  if (state.startupError) {
    return (
      <main className="first-run">
        <div className="card first-run-card" role="alert" data-testid="error-banner">
          <div className="logo" aria-hidden="true">
            S
          </div>
          <h1>{t("app.startFailed")}</h1>
          <p>{state.startupError}</p>
          <p className="muted small">{t("app.startFailedHelp")}</p>
        </div>
      </main>
    );
  }

  // Until the settings are read, neither the first-run screen nor the pages are known to be
  // right: a quiet shell (same background, the logo) instead of a flash of the wrong one.
  if (!state.settings && !state.settingsFailed) {
    return (
      <main className="first-run" aria-busy="true" data-testid="starting">
        <div className="logo" aria-hidden="true">
          S
        </div>
      </main>
    );
  }

  if (state.settings && !state.settings.defaultModel && !skipSetup) {
    return (
      <>
        <ErrorBanner />
        <FirstRun onSkip={() => setSkipSetup(true)} />
      </>
    );
  }

  return (
    <div
      className={`app${sidebarShown && !drawer ? " sidebar-docked" : " sidebar-hidden"}${showTasks && !overlay ? " with-tasks" : ""}`}
      data-testid="app"
      data-layout={overlay ? "overlay" : "docked"}
    >
      {drawer && drawerOpen && (
        <button type="button" className="drawer-backdrop" aria-label={t("app.hideSidebar")} onClick={() => setDrawerOpen(false)} />
      )}
      {sidebarShown && (
      <nav className={`sidebar${drawer ? " drawer" : ""}`} aria-label={t("app.mainNav")} data-testid="sidebar">
        <div className="brand">
          <span className="logo small" aria-hidden="true">
            S
          </span>
          Suzent
          <button
            type="button"
            className="icon-btn sidebar-collapse"
            data-testid="sidebar-collapse"
            aria-label={t("app.hideSidebar")}
            title={t("app.hideSidebar")}
            onClick={hideSidebar}
          >
            ⟨
          </button>
        </div>
        <ul className="nav">
          {NAV.map((n) => (
            <li key={n.page}>
              <button
                type="button"
                data-testid={`nav-${n.page}`}
                className={page === n.page ? "active" : ""}
                aria-current={page === n.page ? "page" : undefined}
                onClick={() => {
                  setPage(n.page);
                  if (drawer) setDrawerOpen(false);
                }}
              >
                <Icon name={n.icon} />
                {navLabel(n.page, t)}
              </button>
            </li>
          ))}
        </ul>
        <button type="button" className="btn small ghost sidebar-search" data-testid="search-open" onClick={() => setSearching(true)}>
          {t("search.open")}
        </button>
        <ChatList />
        {!showTasks && (
          <button type="button" className="btn small ghost tasks-toggle" onClick={() => setShowTasks(true)}>
            {running > 0 ? t("app.tasksRunning", { count: running }) : t("app.tasks")}
          </button>
        )}
      </nav>
      )}
      <main className="main">
        {!sidebarShown && (
          <button
            type="button"
            className="icon-btn sidebar-open"
            data-testid="sidebar-open"
            aria-label={t("app.showSidebar")}
            title={t("app.showSidebar")}
            onClick={showSidebar}
          >
            ☰
          </button>
        )}
        <ErrorBanner />
        <ErrorBoundary key={page}>
          {page === "chat" && <ChatView opening={opening} tasksOpen={showTasks} onTasks={setShowTasks} taskCount={chatTasks.length} />}
          {page === "schedules" && <SchedulesView onOpenChat={openChat} />}
          {page === "config" && <ConfigView />}
          {page === "memory" && <MemoryView />}
          {page === "permissions" && <PermissionsView />}
          {page === "settings" && <SettingsView />}
        </ErrorBoundary>
        <BrowserPairingDialog />
        <DeepLinkDialog onOpenChat={openDeepLinkedChat} />
        <UpdateDialog />
      </main>
      {showTasks && <BackgroundTasks overlay={overlay} onClose={() => setShowTasks(false)} />}
      {help && <ShortcutsHelp onClose={() => setHelp(false)} />}
      {searching && (
        <SearchDialog
          onClose={() => setSearching(false)}
          onOpen={(chatId) => {
            setSearching(false);
            setPage("chat");
            void actions.selectChat(chatId);
          }}
        />
      )}
      <RunNotices onOpenChat={openChat} />
    </div>
  );
}
