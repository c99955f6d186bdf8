import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { BackgroundTasks } from "./components/BackgroundTasks";
import { ChatList } from "./components/ChatList";
import { BrowserPairingDialog } from "./components/BrowserPairingDialog";
import { ChatView } from "./components/ChatView";
import { ConfigView } from "./components/ConfigView";
import { ErrorBanner, ErrorBoundary } from "./components/ErrorBanner";
import { Icon, type IconName } from "./components/Icon";
import { FirstRun } from "./components/FirstRun";
import { MemoryView } from "./components/MemoryView";
import { PermissionsView } from "./components/PermissionsView";
import { SchedulesView } from "./components/SchedulesView";
import { RunNotices } from "./components/ChatAutomation";
import { SettingsView } from "./components/SettingsView";
import { useStore } from "./store";
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

  const [skipSetup, setSkipSetup] = useState(false);
  // The tasks sidebar starts open when the window has room for it.
  const [showTasks, setShowTasks] = useState(() => window.innerWidth >= 1000);
  const running = state.tasks.filter((t) => t.status === "running").length;

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

  if (state.settings && !state.settings.defaultModel && !skipSetup) {
    return (
      <>
        <ErrorBanner />
        <FirstRun onSkip={() => setSkipSetup(true)} />
      </>
    );
  }

  return (
    <div className={`app${showTasks ? " with-tasks" : ""}`}>
      <nav className="sidebar" aria-label={t("app.mainNav")}>
        <div className="brand">
          <span className="logo small" aria-hidden="true">
            S
          </span>
          Suzent
        </div>
        <ul className="nav">
          {NAV.map((n) => (
            <li key={n.page}>
              <button
                type="button"
                data-testid={`nav-${n.page}`}
                className={page === n.page ? "active" : ""}
                aria-current={page === n.page ? "page" : undefined}
                onClick={() => setPage(n.page)}
              >
                <Icon name={n.icon} />
                {navLabel(n.page, t)}
              </button>
            </li>
          ))}
        </ul>
        <ChatList />
        {!showTasks && (
          <button type="button" className="btn small ghost tasks-toggle" onClick={() => setShowTasks(true)}>
            {running > 0 ? t("app.tasksRunning", { count: running }) : t("app.tasks")}
          </button>
        )}
      </nav>
      <main className="main">
        <ErrorBanner />
        <ErrorBoundary key={page}>
          {page === "chat" && <ChatView />}
          {page === "schedules" && <SchedulesView onOpenChat={openChat} />}
          {page === "config" && <ConfigView />}
          {page === "memory" && <MemoryView />}
          {page === "permissions" && <PermissionsView />}
          {page === "settings" && <SettingsView />}
        </ErrorBoundary>
        <BrowserPairingDialog />
      </main>
      {showTasks && <BackgroundTasks onClose={() => setShowTasks(false)} />}
      <RunNotices onOpenChat={openChat} />
    </div>
  );
}
