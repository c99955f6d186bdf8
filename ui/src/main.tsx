import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { t } from "./i18n";
import { StoreProvider } from "./store";
import "./styles.css";

async function start() {
  // `vite build --mode mock` only: a scripted backend for looking at the UI in a plain browser.
  // In every other build this branch is removed, and it never runs inside the app.
  if (import.meta.env.MODE === "mock" && !("__TAURI_INTERNALS__" in window)) {
    const { installMockBackend } = await import("./dev/mockBackend");
    installMockBackend();
  }
  const root = document.getElementById("root");
  if (!root) throw new Error("index.html has no #root element");
  createRoot(root).render(
    <StrictMode>
      <StoreProvider>
        <App />
      </StoreProvider>
    </StrictMode>,
  );
}

start().catch((e: unknown) => {
  document.body.textContent = t("app.startFailedWith", { message: e instanceof Error ? e.message : String(e) });
});
