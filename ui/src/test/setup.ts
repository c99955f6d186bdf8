import "@testing-library/jest-dom/vitest";
import i18n from "../i18n";
import { clearMocks } from "@tauri-apps/api/mocks";
import { cleanup, configure } from "@testing-library/react";
import { afterEach } from "vitest";

// Builders share a busy machine: wait longer before calling an element missing.
configure({ asyncUtilTimeout: 5000 });

// jsdom's window is 1024 px wide; tests that need another width set it and this puts it back.
const JSDOM_WIDTH = window.innerWidth;

afterEach(() => {
  cleanup();
  window.innerWidth = JSDOM_WIDTH;
  clearMocks();
  window.localStorage.clear();
  window.history.replaceState(null, "", "/");
});

// Tests read English text unless they switch the language themselves.
afterEach(async () => {
  if (i18n.language !== "en") await i18n.changeLanguage("en");
});
