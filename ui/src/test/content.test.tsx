import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { App } from "../App";
import { ErrorBanner } from "../components/ErrorBanner";
import { MemoryView } from "../components/MemoryView";
import type { MemoryBlock, MemorySearchResult, Plan, Skill } from "../types";
import { backend, chat, embeddingStatus, renderWithStore, sendEvent } from "./backend";

const plan = (statuses: Plan["phases"][number]["status"][], updatedAt = "2026-01-01T00:00:01Z"): Plan => ({
  goal: "Ship the release notes",
  phases: [
    { id: "collect", title: "Collect the merged changes", capabilities: ["shell"], status: statuses[0] },
    { id: "draft", title: "Draft the notes", capabilities: [], status: statuses[1] },
    { id: "review", title: "Review with the user", capabilities: [], status: statuses[2] },
  ],
  updatedAt,
});

const step = (i: number) => screen.getByTestId(`plan-step-${i}`);

describe("plan view", () => {
  it("appears from plan_updated with each step's status, the current one highlighted, and follows an advance", async () => {
    const be = backend({ list_chats: () => [chat()] });
    renderWithStore(<App />);
    await screen.findByTestId("composer-input");
    await waitFor(() => expect(be.callsOf("get_plan")).toEqual([{ chatId: "c1" }]));
    expect(screen.queryByTestId("plan-view")).not.toBeInTheDocument();

    await sendEvent({ name: "plan_updated", value: { chatId: "c1", plan: plan(["in_progress", "pending", "pending"]) } });
    const view = screen.getByTestId("plan-view");
    expect(view).toHaveTextContent("Ship the release notes");
    expect(screen.getByTestId("plan-progress")).toHaveTextContent("0/3 done");
    expect(step(0)).toHaveAttribute("data-status", "in_progress");
    expect(step(0)).toHaveAttribute("aria-current", "step");
    expect(step(0)).toHaveTextContent("Collect the merged changes");
    expect(step(0)).toHaveTextContent("In progress");
    expect(step(1)).toHaveTextContent("Pending");
    expect(step(1)).not.toHaveAttribute("aria-current");
    expect(within(view).getByRole("progressbar")).toHaveAttribute("aria-valuenow", "0");

    await sendEvent({
      name: "plan_updated",
      value: { chatId: "c1", plan: plan(["completed", "in_progress", "pending"], "2026-01-01T00:00:02Z") },
    });
    expect(screen.getByTestId("plan-progress")).toHaveTextContent("1/3 done");
    expect(step(0)).toHaveAttribute("data-status", "completed");
    expect(step(0)).toHaveTextContent("Done");
    expect(step(0)).not.toHaveAttribute("aria-current");
    expect(step(1)).toHaveAttribute("aria-current", "step");

    // Collapsed, it keeps the progress and names the current step.
    await userEvent.click(screen.getByTestId("plan-toggle"));
    expect(screen.queryByTestId("plan-step-0")).not.toBeInTheDocument();
    expect(screen.getByTestId("plan-view")).toHaveTextContent("Now: Draft the notes");
    expect(screen.getByTestId("plan-progress")).toHaveTextContent("1/3 done");
  });

  it("is loaded when a chat opens, and a plan of another chat does not show", async () => {
    backend({
      list_chats: () => [chat()],
      get_plan: (a) => (a.chatId === "c1" ? plan(["completed", "completed", "in_progress"]) : null),
    });
    renderWithStore(<App />);
    expect(await screen.findByTestId("plan-view")).toHaveTextContent("2/3 done");
    expect(step(2)).toHaveAttribute("aria-current", "step");

    await sendEvent({ name: "plan_updated", value: { chatId: "other", plan: plan(["in_progress", "pending", "pending"], "2026-01-02T00:00:00Z") } });
    expect(screen.getByTestId("plan-progress")).toHaveTextContent("2/3 done");
  });

  it("a plan read that an event overtook does not bring the older plan back", async () => {
    let answer: (p: Plan | null) => void = () => {};
    backend({ list_chats: () => [chat()], get_plan: () => new Promise<Plan | null>((r) => (answer = r)) });
    renderWithStore(<App />);
    await screen.findByTestId("composer-input");
    await sendEvent({ name: "plan_updated", value: { chatId: "c1", plan: plan(["completed", "in_progress", "pending"], "2026-01-01T00:00:05Z") } });
    answer(plan(["in_progress", "pending", "pending"], "2026-01-01T00:00:01Z"));
    await waitFor(() => expect(screen.getByTestId("plan-progress")).toHaveTextContent("1/3 done"));
    expect(step(1)).toHaveAttribute("aria-current", "step");
  });

  it("a failed plan read shows why in the error banner and the chat still works", async () => {
    backend({
      list_chats: () => [chat()],
      get_plan: () => {
        throw { kind: "storage", message: "database is locked" };
      },
    });
    renderWithStore(<App />);
    expect(await screen.findByTestId("error-banner")).toHaveTextContent("Could not load the plan: database is locked");
    expect(screen.getByTestId("composer-input")).toBeInTheDocument();
  });
});

describe("deleting a chat", () => {
  it("says it is deleting while the backend deletes the chat, then removes it", async () => {
    let finish: () => void = () => {};
    backend({
      list_chats: () => [chat()],
      delete_chat: () => new Promise<null>((r) => (finish = () => r(null))),
    });
    renderWithStore(<App />);
    await screen.findByTestId("composer-input");
    await userEvent.click(screen.getByTestId("chat-delete"));
    await userEvent.click(screen.getByTestId("chat-delete-confirm"));
    const confirm = screen.getByTestId("chat-delete-confirm");
    expect(confirm).toHaveTextContent("Deleting…");
    expect(confirm).toBeDisabled();
    finish();
    await waitFor(() => expect(screen.queryByTestId("chat-item")).not.toBeInTheDocument());
  });
});

const blocks = (over: Partial<Record<string, string>> = {}): MemoryBlock[] =>
  ["persona", "user", "facts", "context"].map((name) => ({ name, content: over[name] ?? "", maxChars: 2000 }));

const skills: Skill[] = [
  { name: "skill-authoring", description: "How to write a new skill.", dir: "/data/builtin-skills/skill-authoring", source: "built_in", enabled: true },
  { name: "release-notes", description: "Write release notes from git log.", dir: "/cfg/skills/release-notes", source: "user", enabled: false },
];

function memoryBackend(extra: Record<string, (a: Record<string, unknown>) => unknown> = {}) {
  const stored: Record<string, string> = { user: "Name: Mira" };
  const be = backend({
    memory_blocks: () => blocks(stored),
    set_memory_block: (a) => {
      stored[a.name as string] = (a.content as string).trim();
      return { name: a.name, content: stored[a.name as string], maxChars: 2000 };
    },
    list_skills: () => skills,
    ...extra,
  });
  return { be, stored };
}

describe("memory editor", () => {
  it("edits a core block, saves it, and a reopened view shows the stored text", async () => {
    const { be, stored } = memoryBackend();
    const view = renderWithStore(<MemoryView />);
    const user = (await screen.findByTestId("memory-block-user")) as HTMLTextAreaElement;
    expect(user.value).toBe("Name: Mira");
    expect(screen.getByTestId("memory-block-count-user")).toHaveTextContent("10 / 2,000");
    expect(screen.getByTestId("memory-block-save-user")).toBeDisabled();

    await userEvent.clear(user);
    await userEvent.type(user, "Name: Mira. Prefers metric units.");
    await userEvent.click(screen.getByTestId("memory-block-save-user"));
    await screen.findByText("Saved.");
    expect(be.callsOf("set_memory_block")).toEqual([{ name: "user", content: "Name: Mira. Prefers metric units." }]);
    expect(stored.user).toBe("Name: Mira. Prefers metric units.");

    view.unmount();
    renderWithStore(<MemoryView />);
    expect(((await screen.findByTestId("memory-block-user")) as HTMLTextAreaElement).value).toBe("Name: Mira. Prefers metric units.");
  });

  it("shows the backend's reason when a save is refused, next to the block", async () => {
    memoryBackend({
      set_memory_block: () => {
        throw { kind: "invalid_input", message: "invalid block: block 'facts' is read-only right now" };
      },
    });
    renderWithStore(<MemoryView />);
    const facts = await screen.findByTestId("memory-block-facts");
    await userEvent.type(facts, "The office is in Lyon");
    await userEvent.click(screen.getByTestId("memory-block-save-facts"));
    expect(await screen.findByTestId("memory-block-error-facts")).toHaveTextContent(
      "Not saved: invalid block: block 'facts' is read-only right now",
    );
    expect(facts).toHaveAttribute("aria-invalid", "true");
    expect(screen.queryByText("Saved.")).not.toBeInTheDocument();
  });

  it("refuses text over the block's limit before sending it", async () => {
    const { be } = memoryBackend();
    renderWithStore(<MemoryView />);
    const context = (await screen.findByTestId("memory-block-context")) as HTMLTextAreaElement;
    await userEvent.click(context);
    await userEvent.paste("x".repeat(2001));
    expect(screen.getByTestId("memory-block-count-context")).toHaveClass("over");
    await userEvent.click(screen.getByTestId("memory-block-save-context"));
    expect(screen.getByTestId("memory-block-error-context")).toHaveTextContent(
      "The context block holds 2,001 characters; the limit is 2,000.",
    );
    expect(be.callsOf("set_memory_block")).toEqual([]);
  });

  it("searches the archive and shows each hit's score and how it matched", async () => {
    const found: MemorySearchResult = {
      hits: [
        { id: 7, content: "Mira's release is due Friday.", createdAt: "2026-01-03T10:00:00Z", score: 0.0328, matchedBy: ["text", "vector"] },
        { id: 3, content: "The team ships on the last day of the week.", createdAt: "2026-01-02T10:00:00Z", score: 0.0161, matchedBy: ["vector"] },
      ],
      textOnlyReason: null,
    };
    const { be } = memoryBackend({ search_memory: () => found });
    renderWithStore(<MemoryView />);
    await userEvent.type(await screen.findByTestId("memory-search"), "  release Friday {Enter}");
    const hits = await screen.findAllByTestId("memory-hit");
    expect(be.callsOf("search_memory")).toEqual([{ query: "release Friday", limit: 10 }]);
    expect(hits).toHaveLength(2);
    expect(hits[0]).toHaveTextContent("Mira's release is due Friday.");
    expect(hits[0]).toHaveTextContent("score 0.0328");
    expect(within(hits[0]).getAllByTestId("memory-hit-matched").map((b) => b.textContent)).toEqual(["text", "vector"]);
    expect(within(hits[1]).getAllByTestId("memory-hit-matched").map((b) => b.textContent)).toEqual(["vector"]);
    expect(screen.queryByTestId("memory-text-only")).not.toBeInTheDocument();
  });

  it("says plainly when search is full-text only, and when nothing matches", async () => {
    memoryBackend({
      search_memory: () => ({
        hits: [],
        textOnlyReason: "no embedding model at /data/models/all-MiniLM-L6-v2",
      }),
    });
    renderWithStore(<MemoryView />);
    await userEvent.type(await screen.findByTestId("memory-search"), "kitten{Enter}");
    expect(await screen.findByTestId("memory-text-only")).toHaveTextContent(
      "Full-text only (no matches by meaning): no embedding model at /data/models/all-MiniLM-L6-v2",
    );
    expect(screen.getByTestId("memory-results")).toHaveTextContent("No memories match “kitten”.");
  });

  it("shows before any search that search by meaning is off, and downloads the local model", async () => {
    let present = false;
    let finishDownload: () => void = () => {};
    const { be } = memoryBackend({
      embedding_status: () =>
        present
          ? embeddingStatus({ active: true, model: "all-MiniLM-L6-v2 (local)", reason: null, modelPresent: true })
          : embeddingStatus(),
      download_embedding_model: () =>
        new Promise((resolve) => {
          finishDownload = () => {
            present = true;
            resolve({ folder: "/data/models/all-MiniLM-L6-v2", downloaded: true });
          };
        }),
    });
    renderWithStore(<MemoryView />);
    await waitFor(() =>
      expect(screen.getByTestId("memory-semantic-status")).toHaveTextContent(
        "Search by meaning: off: no embedding model yet, so search matches exact words only",
      ),
    );
    expect(screen.getByTestId("memory-download")).toHaveTextContent("stored in /data/models/all-MiniLM-L6-v2");
    const button = screen.getByTestId("memory-download-model");
    expect(button).toHaveTextContent("Download the local model (all-MiniLM-L6-v2, about 90 MB)");
    await userEvent.click(button);
    // Busy while it downloads: the button cannot start a second download.
    expect(button).toBeDisabled();
    expect(button).toHaveTextContent("Downloading…");
    expect(button).toHaveAttribute("aria-busy", "true");
    expect(be.callsOf("download_embedding_model")).toEqual([{}]);
    finishDownload();
    expect(await screen.findByTestId("memory-download-done")).toHaveTextContent("Downloaded to /data/models/all-MiniLM-L6-v2.");
    // The status was read again: search by meaning is on, the download offer is gone.
    expect(screen.getByTestId("memory-semantic-status")).toHaveTextContent("Search by meaning: on (local model)");
    expect(screen.queryByTestId("memory-download")).not.toBeInTheDocument();
    expect(be.callsOf("embedding_status")).toHaveLength(2);
  });

  it("shows why a download failed and keeps the button to try again", async () => {
    memoryBackend({
      download_embedding_model: () => {
        throw { kind: "invalid_input", message: "invalid model: downloading https://huggingface.co/x/config.json failed: 503" };
      },
    });
    renderWithStore(<MemoryView />);
    await userEvent.click(await screen.findByTestId("memory-download-model"));
    expect(await screen.findByTestId("memory-download-error")).toHaveTextContent(
      "Download failed: invalid model: downloading https://huggingface.co/x/config.json failed: 503",
    );
    expect(screen.getByTestId("memory-download-model")).toBeEnabled();
    expect(screen.queryByTestId("memory-download-done")).not.toBeInTheDocument();
  });

  it("follows older memories getting their vectors, and offers no download with a provider's model", async () => {
    let reads = 0;
    memoryBackend({
      embedding_status: () => {
        reads += 1;
        return embeddingStatus({
          active: true,
          provider: true,
          model: "openai/text-embedding-3-small (provider)",
          reason: null,
          entriesWithoutVector: reads === 1 ? 130 : 0,
          backfilling: reads === 1,
        });
      },
    });
    renderWithStore(<MemoryView />);
    await waitFor(() =>
      expect(screen.getByTestId("memory-semantic-status")).toHaveTextContent(
        "Search by meaning: on (provider model openai/text-embedding-3-small)",
      ),
    );
    expect(screen.getByTestId("memory-backfill")).toHaveTextContent("giving vectors to 130 older memories");
    expect(screen.queryByTestId("memory-download")).not.toBeInTheDocument();
    await waitFor(() => expect(screen.queryByTestId("memory-backfill")).not.toBeInTheDocument(), { timeout: 4000 });
    expect(reads).toBe(2);
  });

  it("gives the runtime's reason when a model is there but unusable, without offering a download", async () => {
    memoryBackend({
      embedding_status: () =>
        embeddingStatus({
          modelPresent: true,
          reason: "cannot load the embedding model from /data/models/all-MiniLM-L6-v2/config.json: no hidden_size",
        }),
    });
    renderWithStore(<MemoryView />);
    await waitFor(() =>
      expect(screen.getByTestId("memory-semantic-status")).toHaveTextContent(
        "Search by meaning: off: cannot load the embedding model from /data/models/all-MiniLM-L6-v2/config.json: no hidden_size",
      ),
    );
    expect(screen.queryByTestId("memory-download-model")).not.toBeInTheDocument();
  });

  it("says when the status cannot be read", async () => {
    memoryBackend({
      embedding_status: () => {
        throw { kind: "internal", message: "database is locked" };
      },
    });
    renderWithStore(<MemoryView />);
    await waitFor(() =>
      expect(screen.getByTestId("memory-semantic-status")).toHaveTextContent(
        "Search by meaning: unknown (could not read the status: database is locked)",
      ),
    );
    expect(screen.queryByTestId("memory-download-model")).not.toBeInTheDocument();
  });

  it("an empty query is refused without a search", async () => {
    const { be } = memoryBackend();
    renderWithStore(<MemoryView />);
    await userEvent.click(await screen.findByTestId("memory-search-submit"));
    expect(screen.getByTestId("memory-search-error")).toHaveTextContent("Enter the words to search for.");
    expect(be.callsOf("search_memory")).toEqual([]);
  });
});

describe("skills", () => {
  it("lists each skill with description and source, and the toggle enables or disables it", async () => {
    const { be } = memoryBackend({
      set_skill_enabled: (a) => skills.map((s) => (s.name === a.name ? { ...s, enabled: a.enabled as boolean } : s)),
    });
    renderWithStore(<MemoryView />);
    const builtin = await screen.findByTestId("skill-skill-authoring");
    expect(builtin).toHaveTextContent("How to write a new skill.");
    expect(builtin).toHaveTextContent("built-in");
    const user = screen.getByTestId("skill-release-notes");
    expect(user).toHaveTextContent("user");
    expect(user).toHaveTextContent("off");
    const toggle = screen.getByTestId("skill-toggle-release-notes") as HTMLInputElement;
    expect(toggle.checked).toBe(false);

    await userEvent.click(toggle);
    expect(be.callsOf("set_skill_enabled")).toEqual([{ name: "release-notes", enabled: true }]);
    await waitFor(() => expect(toggle.checked).toBe(true));
    expect(screen.getByTestId("skill-release-notes")).toHaveAttribute("data-enabled", "true");

    await userEvent.click(screen.getByTestId("skill-toggle-skill-authoring"));
    expect(be.callsOf("set_skill_enabled")[1]).toEqual({ name: "skill-authoring", enabled: false });
  });

  it("a refused toggle leaves the skill as it was and says why", async () => {
    memoryBackend({
      set_skill_enabled: () => {
        throw { kind: "invalid_input", message: "invalid skill: no skill named 'release-notes'" };
      },
    });
    renderWithStore(
      <>
        <ErrorBanner />
        <MemoryView />
      </>,
    );
    const toggle = (await screen.findByTestId("skill-toggle-release-notes")) as HTMLInputElement;
    await userEvent.click(toggle);
    expect(await screen.findByTestId("error-banner")).toHaveTextContent(
      "Could not enable the skill “release-notes”: invalid skill: no skill named 'release-notes'",
    );
    expect(toggle.checked).toBe(false);
  });

  it("the Memory page is in the navigation", async () => {
    memoryBackend();
    renderWithStore(<App />);
    await userEvent.click(await screen.findByTestId("nav-memory"));
    expect(await screen.findByTestId("memory-block-persona")).toBeInTheDocument();
    expect(window.location.hash).toBe("#/memory");
  });
});
