import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { App } from "../App";
import type { InstalledModel, LocalModelsView, RecommendedModel } from "../types";
import { backend, renderWithStore, settings } from "./backend";

const tiny: InstalledModel = {
  id: "SmolLM2-135M-Instruct.Q4_1",
  path: "/data/models/gguf/SmolLM2-135M-Instruct.Q4_1.gguf",
  sizeBytes: 98_362_432,
  sha256: "ab".repeat(32),
  source: "folder",
  architecture: "llama",
  name: "SmolLM2 135M Instruct",
  contextLength: 8192,
};

const coder: RecommendedModel = {
  id: "qwen2.5-coder-1.5b-instruct-q4_k_m",
  name: "Qwen2.5 Coder 1.5B Instruct (Q4_K_M)",
  hubPath: "Qwen/x/resolve/main/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
  sizeBytes: 1_120_000_000,
  sha256: null,
  license: "Apache-2.0",
  purpose: "Coding help on an 8 GB laptop.",
  minRamGb: 8,
};

const view = (installed: InstalledModel[], recommendedInstalled = false): LocalModelsView => ({
  dir: "/data/models/gguf",
  installed,
  recommended: [{ model: coder, installed: recommendedInstalled }],
});

describe("local models", () => {
  it("first run offers the installed local model and a finished choice leaves the screen", async () => {
    let s = settings({ defaultModel: null, keys: { openai: false, anthropic: false, gemini: false } });
    const be = backend({
      get_settings: () => s,
      local_models: () => view([tiny]),
      use_local_model: (a) => (s = { ...s, defaultModel: `local/${String(a.id)}` }),
    });
    renderWithStore(<App />);
    await screen.findByTestId("first-run");
    expect(screen.getByRole("heading", { name: "Use a local model (no account)" })).toBeInTheDocument();
    // The offer is a block of its own, set apart from the provider form that follows it.
    const offer = (await screen.findByTestId("use-local-model")).closest("section");
    expect(offer).toHaveClass("first-run-local");
    expect(offer?.nextElementSibling).toHaveClass("first-run-or");
    expect(offer?.nextElementSibling).toHaveTextContent("Or connect a model provider");
    await userEvent.click(await screen.findByTestId("use-local-model"));
    await waitFor(() => expect(screen.queryByTestId("first-run")).not.toBeInTheDocument());
    expect(be.callsOf("use_local_model")).toEqual([{ id: "SmolLM2-135M-Instruct.Q4_1" }]);
    expect(be.callsOf("save_settings")).toEqual([]);
  });

  it("first run without a model offers the recommended downloads", async () => {
    backend({
      get_settings: () => settings({ defaultModel: null }),
      local_models: () => view([]),
    });
    renderWithStore(<App />);
    const row = await screen.findByTestId(`recommended-${coder.id}`);
    expect(row).toHaveTextContent("Qwen2.5 Coder 1.5B Instruct (Q4_K_M)");
    expect(row).toHaveTextContent("about 1.1 GB · Apache-2.0 · needs 8 GB RAM");
    expect(screen.queryByTestId("use-local-model")).not.toBeInTheDocument();
  });

  it("settings downloads a recommended model with progress, then lists it", async () => {
    let finish: (v: LocalModelsView) => void = () => {};
    const be = backend({
      local_models: () => view([]),
      pull_local_model: () => new Promise<LocalModelsView>((resolve) => (finish = resolve)),
    });
    renderWithStore(<App />);
    await userEvent.click(await screen.findByTestId("nav-settings"));
    const row = await screen.findByTestId(`recommended-${coder.id}`);
    await userEvent.click(within(row).getByRole("button", { name: "Download" }));
    expect(be.callsOf("pull_local_model")).toEqual([{ id: coder.id }]);
    await act(async () => {
      const { emit } = await import("@tauri-apps/api/event");
      await emit("local-model-progress", { id: coder.id, downloaded: 560_000_000, total: 1_120_000_000, resumedFrom: 0, attempt: 1 });
    });
    expect(await within(row).findByRole("button", { name: "50%" })).toBeDisabled();
    expect(screen.getByTestId(`progress-${coder.id}`)).toHaveAttribute("value", "50");
    const installed = { ...tiny, id: coder.id, name: coder.name, source: `recommended:${coder.id}` };
    await act(async () => finish(view([installed], true)));
    expect(await screen.findByTestId(`installed-${coder.id}`)).toHaveTextContent(`local/${coder.id}`);
    expect(screen.queryByTestId(`recommended-${coder.id}`)).not.toBeInTheDocument();
  });

  it("settings deletes an installed model", async () => {
    const be = backend({
      local_models: () => view([tiny]),
      remove_local_model: () => view([]),
    });
    renderWithStore(<App />);
    await userEvent.click(await screen.findByTestId("nav-settings"));
    const row = await screen.findByTestId(`installed-${tiny.id}`);
    await userEvent.click(within(row).getByRole("button", { name: "Delete" }));
    await waitFor(() => expect(screen.queryByTestId(`installed-${tiny.id}`)).not.toBeInTheDocument());
    expect(be.callsOf("remove_local_model")).toEqual([{ id: tiny.id }]);
    expect(screen.getByText("No local models yet (folder /data/models/gguf).")).toBeInTheDocument();
  });
});
