import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { ConfigView } from "../components/ConfigView";
import { ErrorBanner } from "../components/ErrorBanner";
import { backend, chat, renderWithStore, settings } from "./backend";

const box = (testId: string) => screen.getByTestId(testId) as HTMLInputElement;

describe("ConfigView", () => {
  it("shows each tool with display name, description, runtime name and an approval badge", async () => {
    backend();
    renderWithStore(<ConfigView />);
    await screen.findByTestId("config-tool-write_file");
    const row = box("config-tool-write_file").closest("label") as HTMLElement;
    expect(row).toHaveTextContent("Write file");
    expect(row).toHaveTextContent("write_file");
    expect(row).toHaveTextContent("Writes a file.");
    expect(row).toHaveTextContent("needs approval");
    expect(box("config-tool-read_file").closest("label")).not.toHaveTextContent("needs approval");
  });

  it("expands the legacy ShellTool selection to the shell capability", async () => {
    backend({ get_settings: () => settings({ tools: ["ReadFileTool", "ShellTool"] }) });
    renderWithStore(<ConfigView />);
    await screen.findByTestId("config-capability-shell");
    expect(box("config-capability-shell").checked).toBe(true);
    expect(box("config-tool-run_command").checked).toBe(true);
  });

  it("the capability header toggles all its tools and is tri-state when partial", async () => {
    const be = backend({
      get_settings: () => settings({ tools: ["read_file", "run_command"] }),
      save_settings: async (a) => {
        // A slow backend: later changes queue behind this save.
        await new Promise((r) => setTimeout(r, 20));
        return settings({ tools: (a.patch as { tools: string[] }).tools });
      },
    });
    renderWithStore(<ConfigView />);
    await screen.findByTestId("config-capability-filesystem");
    const header = box("config-capability-filesystem");
    // One of three selected: mixed.
    expect(header.indeterminate).toBe(true);
    expect(header.checked).toBe(false);
    expect(header).toHaveAttribute("aria-checked", "mixed");

    await userEvent.click(header);
    expect(header.indeterminate).toBe(false);
    expect(header.checked).toBe(true);
    for (const t of ["read_file", "write_file", "edit_file"]) expect(box(`config-tool-${t}`).checked).toBe(true);

    await userEvent.click(header);
    expect(header.checked).toBe(false);
    expect(header.indeterminate).toBe(false);
    for (const t of ["read_file", "write_file", "edit_file"]) expect(box(`config-tool-${t}`).checked).toBe(false);

    // A single tool stays selectable alone.
    await userEvent.click(box("config-tool-edit_file"));
    expect(box("config-tool-edit_file").checked).toBe(true);
    expect(box("config-tool-read_file").checked).toBe(false);
    expect(header.indeterminate).toBe(true);

    // Every change was saved, in order; the last save holds the final selection.
    await waitFor(() => expect(be.callsOf("save_settings").at(-1)).toEqual({ patch: { tools: ["EditFileTool", "RunCommandTool"] } }));
    expect(be.callsOf("save_settings")[0]).toEqual({
      patch: { tools: ["ReadFileTool", "WriteFileTool", "EditFileTool", "RunCommandTool"] },
    });
    await waitFor(() => expect(screen.getByTestId("config-status")).toHaveTextContent("Saved."));
    expect(header.indeterminate).toBe(true);
    expect(box("config-tool-edit_file").checked).toBe(true);
  });

  it("turning the Filesystem capability off saves a selection without filesystem tools", async () => {
    const be = backend({ save_settings: (a) => settings({ tools: (a.patch as { tools: string[] }).tools }) });
    renderWithStore(<ConfigView />);
    await screen.findByTestId("config-capability-filesystem");
    await userEvent.click(box("config-capability-filesystem"));
    await waitFor(() => expect(be.callsOf("save_settings")).toEqual([{ patch: { tools: ["RunCommandTool"] } }]));
    expect(box("config-tool-read_file").checked).toBe(false);
  });

  it("saves a per-chat override with set_chat_tools and can go back to the defaults", async () => {
    const be = backend({
      list_chats: () => [chat()],
      set_chat_tools: (a) => chat({ tools: a.tools as string[] | null }),
    });
    renderWithStore(<ConfigView />);
    await screen.findByTestId("config-capability-shell");
    await userEvent.selectOptions(screen.getByTestId("config-scope"), "c1");
    expect(screen.getByText(/uses the default selection/)).toBeInTheDocument();
    await userEvent.click(box("config-tool-run_command"));
    await waitFor(() =>
      expect(be.callsOf("set_chat_tools")).toEqual([
        { chatId: "c1", tools: ["ReadFileTool", "WriteFileTool", "EditFileTool"] },
      ]),
    );
    await userEvent.click(await screen.findByRole("button", { name: "Use the defaults" }));
    await waitFor(() => expect(be.callsOf("set_chat_tools")[1]).toEqual({ chatId: "c1", tools: null }));
  });

  it("a failed save says why and shows the stored selection again", async () => {
    backend({
      save_settings: () => {
        throw { kind: "config", message: "invalid config value for 'tools': unknown tool 'x'" };
      },
    });
    renderWithStore(
      <>
        <ErrorBanner />
        <ConfigView />
      </>,
    );
    await screen.findByTestId("config-tool-read_file");
    expect(box("config-tool-read_file").checked).toBe(true);
    await userEvent.click(box("config-tool-read_file"));
    expect(await screen.findByTestId("error-banner")).toHaveTextContent(
      "Could not save the tool selection: invalid config value for 'tools': unknown tool 'x'",
    );
    expect(screen.getByTestId("config-status")).toHaveTextContent("Not saved.");
    expect(box("config-tool-read_file").checked).toBe(true);
  });
});
