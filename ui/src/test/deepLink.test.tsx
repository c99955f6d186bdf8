import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { emit } from "@tauri-apps/api/event";
import { describe, expect, it, vi } from "vitest";
import type { DeepLinkInboxView, PendingMcpInstall } from "../bindings";
import { DeepLinkDialog } from "../components/DeepLinkDialog";
import { backend, renderWithStore } from "./backend";

const install = (over: Partial<PendingMcpInstall["server"]> = {}): PendingMcpInstall => ({
  id: "req-1",
  server: {
    name: "files",
    command: "npx",
    args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
    env: { TOKEN: "abc", MODE: "ro" },
    url: null,
    ...over,
  },
});

async function linkArrived() {
  await act(async () => {
    await emit("deep-link-received", { pending: 1 });
  });
}

describe("suzent:// links", () => {
  it("shows the full command, arguments and environment and adds the server only on Confirm", async () => {
    let inbox: DeepLinkInboxView = { pending: [install()], notices: [] };
    const b = backend({
      deep_link_inbox: () => inbox,
      confirm_mcp_install: () => {
        inbox = { pending: [], notices: [] };
        return { name: "files", config: {}, state: "idle", lastError: null, tools: [] };
      },
    });
    renderWithStore(<DeepLinkDialog onOpenChat={() => undefined} />);
    const dialog = await screen.findByTestId("mcp-install-dialog");
    expect(within(dialog).getByTestId("mcp-install-command").textContent).toBe("npx");
    expect(within(dialog).getByTestId("mcp-install-args").textContent).toBe(
      "-y@modelcontextprotocol/server-filesystem/tmp",
    );
    expect(within(dialog).getByTestId("mcp-install-env").textContent).toBe("TOKEN=abcMODE=ro");
    expect(b.callsOf("confirm_mcp_install")).toEqual([]);
    await userEvent.click(within(dialog).getByTestId("mcp-install-confirm"));
    await waitFor(() => expect(screen.queryByTestId("mcp-install-dialog")).toBeNull());
    expect(b.callsOf("confirm_mcp_install")).toEqual([{ id: "req-1" }]);
    expect(screen.getByTestId("deep-link-added").textContent).toContain("files");
  });

  it("cancels without adding anything", async () => {
    let inbox: DeepLinkInboxView = { pending: [install({ command: null, args: [], env: {}, url: "https://docs.test/mcp" })], notices: [] };
    const b = backend({
      deep_link_inbox: () => inbox,
      cancel_mcp_install: () => {
        inbox = { pending: [], notices: [] };
        return null;
      },
    });
    renderWithStore(<DeepLinkDialog onOpenChat={() => undefined} />);
    const dialog = await screen.findByTestId("mcp-install-dialog");
    expect(within(dialog).getByTestId("mcp-install-url").textContent).toBe("https://docs.test/mcp");
    await userEvent.click(within(dialog).getByTestId("mcp-install-cancel"));
    await waitFor(() => expect(screen.queryByTestId("mcp-install-dialog")).toBeNull());
    expect(b.callsOf("cancel_mcp_install")).toEqual([{ id: "req-1" }]);
    expect(b.callsOf("confirm_mcp_install")).toEqual([]);
  });

  it("opens a linked chat and shows a refusal when a link arrives", async () => {
    let inbox: DeepLinkInboxView = { pending: [], notices: [] };
    backend({
      deep_link_inbox: () => {
        const now = inbox;
        inbox = { pending: [], notices: [] };
        return now;
      },
    });
    const open = vi.fn();
    renderWithStore(<DeepLinkDialog onOpenChat={open} />);
    await waitFor(() => expect(open).not.toHaveBeenCalled());
    inbox = {
      pending: [],
      notices: [
        { kind: "openChat", chatId: "c42" },
        { kind: "refused", link: "suzent://nope", message: "unknown link kind 'nope'" },
      ],
    };
    await linkArrived();
    await waitFor(() => expect(open).toHaveBeenCalledWith("c42"));
    expect((await screen.findByTestId("deep-link-refused")).textContent).toContain("unknown link kind 'nope'");
  });
});
