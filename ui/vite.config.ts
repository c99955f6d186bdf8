import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

// Tauri loads devUrl http://localhost:1420 in development and ui/dist in release builds.
export default defineConfig(({ mode }) => ({
  plugins: [react()],
  clearScreen: false,
  server: { port: 1420, strictPort: true },
  preview: { port: 4173, strictPort: true, host: "127.0.0.1" },
  build: {
    // WebKitGTK on Linux, WKWebView on macOS (Safari 15+), WebView2 on Windows.
    target: ["es2021", "safari15", "chrome105"],
    outDir: mode === "mock" ? "dist-mock" : "dist",
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 1200,
  },
  test: {
    environment: "jsdom",
    setupFiles: ["./src/test/setup.ts"],
    css: false,
    testTimeout: 30000,
  },
}));
