import { useEffect, useState } from "react";
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
import { SettingsView } from "./components/SettingsView";
import { useStore } from "./store";

type Page = "chat" | "config" | "memory" | "permissions" | "settings";

const NAV: { page: Page; label: string; icon: IconName }[] = [
  { page: "chat", label: "Chat", icon: "chat" },
  { page: "config", label: "Tools", icon: "tools" },
  { page: "memory", label: "Memory", icon: "memory" },
  { page: "permissions", label: "Permissions", icon: "shield" },
  { page: "settings", label: "Settings", icon: "gear" },
];

const PAGES: Page[] = ["chat", "config", "memory", "permissions", "settings"];
const LAST_CHAT = "suzent.activeChat";

function pageFromHash(): Page {
  const h = window.location.hash.replace(/^#\/?/, "");
  return (PAGES as string[]).includes(h) ? (h as Page) : "chat";
}

export function App() {
  const { state, actions } = useStore();
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
          <h1>Suzent could not start</h1>
          <p>{state.startupError}</p>
          <p className="muted small">Fix the problem (for example the config file named above), then restart the app.</p>
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
      <nav className="sidebar" aria-label="Main">
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
                {n.label}
              </button>
            </li>
          ))}
        </ul>
        <ChatList />
        {!showTasks && (
          <button type="button" className="btn small ghost tasks-toggle" onClick={() => setShowTasks(true)}>
            Background tasks{running > 0 ? ` (${running} running)` : ""}
          </button>
        )}
      </nav>
      <main className="main">
        <ErrorBanner />
        <ErrorBoundary key={page}>
          {page === "chat" && <ChatView />}
          {page === "config" && <ConfigView />}
          {page === "memory" && <MemoryView />}
          {page === "permissions" && <PermissionsView />}
          {page === "settings" && <SettingsView />}
        </ErrorBoundary>
        <BrowserPairingDialog />
      </main>
      {showTasks && <BackgroundTasks onClose={() => setShowTasks(false)} />}
    </div>
  );
}
