import { act, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { emit } from "@tauri-apps/api/event";
import { describe, expect, it } from "vitest";
import type { UpdateStatus } from "../bindings";
import { DesktopSettings } from "../components/DesktopSettings";
import { UpdateDialog, UpdatesSettings } from "../components/UpdatesSettings";
import { backend, renderWithStore } from "./backend";

const status = (state: UpdateStatus["state"]): UpdateStatus => ({
  currentVersion: "0.1.0",
  endpoint: "https://releases.suzent.dev/desktop/latest.json",
  state,
  checkedAt: "2026-12-01T12:00:00Z",
});

async function statusChanged(s: UpdateStatus) {
  await act(async () => {
    await emit("update-status-changed", s);
  });
}

describe("Settings → Updates", () => {
  it("shows why a manifest was refused after a check", async () => {
    const b = backend({
      check_for_update: () =>
        status({ state: "failed", message: "refused: the manifest announces version 9.9.9, but the download is signed as version 0.0.9" }),
    });
    renderWithStore(<UpdatesSettings />);
    await userEvent.click(await screen.findByTestId("update-check"));
    expect((await screen.findByTestId("update-state")).textContent).toContain("signed as version 0.0.9");
    expect(b.callsOf("check_for_update")).toEqual([{}]);
  });

  it("says an older version is not offered", async () => {
    backend({ update_status: () => status({ state: "upToDate", offered: "0.0.9" }) });
    renderWithStore(<UpdatesSettings />);
    expect((await screen.findByTestId("update-state")).textContent).toBe(
      "The feed offers 0.0.9, which is not newer than 0.1.0: not offered (downgrades are refused).",
    );
  });

  it("follows download progress and offers the restart once verified", async () => {
    backend({ update_status: () => status({ state: "available", version: "0.2.0", notes: "Notes", date: null }) });
    renderWithStore(<UpdatesSettings />);
    await screen.findByTestId("update-download");
    await statusChanged(status({ state: "downloading", version: "0.2.0", received: 50, total: 100 }));
    expect((await screen.findByTestId("update-progress")).getAttribute("value")).toBe("50");
    await statusChanged(status({ state: "ready", version: "0.2.0", installable: true }));
    await screen.findByTestId("update-restart");
  });

  it("saves a new feed and shows a refused one's error", async () => {
    const b = backend({
      save_desktop_prefs: (a) => {
        const prefs = a.prefs as { updateEndpoint: string };
        if (prefs.updateEndpoint.startsWith("http://updates")) {
          throw { kind: "config", message: "update endpoint 'http://updates.evil.test/x' must use https (http only on 127.0.0.1 or localhost)" };
        }
        return prefs;
      },
    });
    renderWithStore(<UpdatesSettings />);
    const input = await screen.findByTestId("update-endpoint");
    await userEvent.clear(input);
    await userEvent.type(input, "http://updates.evil.test/x");
    await userEvent.click(screen.getByTestId("update-endpoint-save"));
    expect((await screen.findByTestId("update-error")).textContent).toContain("must use https");
    expect(b.callsOf("save_desktop_prefs")).toHaveLength(1);
  });
});

describe("the update dialog", () => {
  it("shows the notes of an available version and downloads it", async () => {
    const b = backend({
      update_status: () => status({ state: "available", version: "0.2.0", notes: "What is new in 0.2.0", date: null }),
      download_update: () => status({ state: "ready", version: "0.2.0", installable: false }),
    });
    renderWithStore(<UpdateDialog />);
    expect((await screen.findByTestId("update-notes")).textContent).toBe("What is new in 0.2.0");
    await userEvent.click(screen.getByTestId("update-dialog-download"));
    await waitFor(() => expect(screen.queryByTestId("update-dialog")).toBeNull());
    expect(b.callsOf("download_update")).toEqual([{}]);
  });
});

describe("Settings → Desktop", () => {
  it("turns Start at login on, off by default", async () => {
    let on = false;
    const b = backend({
      autostart_enabled: () => on,
      set_autostart: (a) => {
        on = a.enabled as boolean;
        return on;
      },
    });
    renderWithStore(<DesktopSettings />);
    const toggle = (await screen.findByTestId("autostart-toggle")) as HTMLInputElement;
    await waitFor(() => expect(toggle.disabled).toBe(false));
    expect(toggle.checked).toBe(false);
    await userEvent.click(toggle);
    await waitFor(() => expect(toggle.checked).toBe(true));
    expect(b.callsOf("set_autostart")).toEqual([{ enabled: true }]);
  });

  it("hides Install command-line tool where the packages put suzent on PATH", async () => {
    const b = backend({});
    renderWithStore(<DesktopSettings />);
    await screen.findByTestId("autostart-toggle");
    await waitFor(() => expect(b.callsOf("cli_tool_status")).toEqual([{}]));
    expect(screen.queryByTestId("cli-tool")).toBeNull();
  });

  it("installs the command-line tool and shows where", async () => {
    let installed = false;
    const target = "/usr/local/bin/suzent";
    const b = backend({
      cli_tool_status: () => ({ supported: true, installed, cli: "/Applications/Suzent.app/Contents/MacOS/suzent", target, problem: null }),
      install_cli_tool: () => {
        installed = true;
        return { supported: true, installed, cli: "/Applications/Suzent.app/Contents/MacOS/suzent", target, problem: null };
      },
    });
    renderWithStore(<DesktopSettings />);
    expect((await screen.findByTestId("cli-tool-state")).textContent).toBe(
      "Install the suzent command so terminals can run it (/usr/local/bin/suzent).",
    );
    await userEvent.click(screen.getByTestId("cli-tool-install"));
    await waitFor(() =>
      expect(screen.getByTestId("cli-tool-state").textContent).toBe("The suzent command is installed (/usr/local/bin/suzent)."),
    );
    expect(screen.queryByTestId("cli-tool-install")).toBeNull();
    expect(b.callsOf("install_cli_tool")).toEqual([{}]);
  });

  it("names why the command-line tool cannot be installed", async () => {
    backend({
      cli_tool_status: () => ({
        supported: true,
        installed: false,
        cli: "/Applications/Suzent.app/Contents/MacOS/suzent",
        target: "/usr/local/bin/suzent",
        problem: "/usr/local/bin/suzent is another program's file, not a link; remove it to install Suzent's",
      }),
    });
    renderWithStore(<DesktopSettings />);
    expect((await screen.findByTestId("cli-tool-error")).textContent).toBe(
      "/usr/local/bin/suzent is another program's file, not a link; remove it to install Suzent's",
    );
    expect((screen.getByTestId("cli-tool-install") as HTMLButtonElement).disabled).toBe(true);
  });
});
