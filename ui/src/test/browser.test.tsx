import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { emit } from "@tauri-apps/api/event";
import { describe, expect, it } from "vitest";
import type { BridgeEvent, BrowserStatus, PairingRequest, BrowserPairingStatus } from "../bindings";
import { BrowserModePicker } from "../components/BrowserModePicker";
import { BrowserPairingDialog } from "../components/BrowserPairingDialog";
import { BrowserSettings } from "../components/BrowserSettings";
import { backend, renderWithStore } from "./backend";

const SHIPPED = "mkppgeflpnljcodnkejndlmnggmhgmme";

const status = (over: Partial<BrowserStatus> = {}): BrowserStatus => ({
  state: "notInstalled",
  port: 17345,
  extensionVersion: "0.1.0",
  shippedExtensionId: SHIPPED,
  pairings: [],
  pending: [],
  nativeHosts: ["Chromium"],
  ...over,
});

const pairing = (over: Partial<BrowserPairingStatus["pairing"]> = {}, connected = false): BrowserPairingStatus => ({
  pairing: {
    id: "p1",
    extensionId: SHIPPED,
    browser: "Chrome",
    browserVersion: "156.0",
    extensionVersion: "0.1.0",
    createdAt: "2026-12-01T10:00:00Z",
    lastSeenAt: "2026-12-01T10:05:00Z",
    revokedAt: null,
    ...over,
  },
  connected,
  connectedSince: connected ? "2026-12-01T10:05:00Z" : null,
});

const request = (over: Partial<PairingRequest> = {}): PairingRequest => ({
  id: "r1",
  extensionId: SHIPPED,
  shippedExtension: true,
  browser: "Edge",
  browserVersion: "156.0",
  extensionVersion: "0.1.0",
  code: "482-913",
  requestedAt: "2026-12-01T10:00:00Z",
  ...over,
});

async function bridgeEvent(event: BridgeEvent) {
  await act(async () => {
    await emit("browser-bridge-event", event);
  });
}

describe("Settings → Browser", () => {
  it("says not installed and offers the ZIP and the folder", async () => {
    const b = backend({
      browser_status: () => status(),
      save_browser_extension_zip: () => "/home/u/suzent-browser-extension-0.1.0.zip",
      show_browser_extension_folder: () => "/data/browser/extension-0.1.0",
    });
    renderWithStore(<BrowserSettings />);
    expect(await screen.findByTestId("browser-state")).toHaveTextContent("Not installed — no browser is paired yet");
    expect(screen.getByTestId("browser-no-pairings")).toBeInTheDocument();
    await userEvent.click(screen.getByTestId("browser-download-zip"));
    expect(await screen.findByTestId("browser-note")).toHaveTextContent("Saved to /home/u/suzent-browser-extension-0.1.0.zip");
    await userEvent.click(screen.getByTestId("browser-show-folder"));
    expect(await screen.findByTestId("browser-note")).toHaveTextContent("The extension folder: /data/browser/extension-0.1.0");
    expect(b.callsOf("save_browser_extension_zip")).toHaveLength(1);
  });

  it("shows a connected browser and revokes it", async () => {
    let current = status({ state: "connected", pairings: [pairing({}, true)] });
    const b = backend({
      browser_status: () => current,
      revoke_browser_pairing: () => {
        current = status({ state: "notInstalled", pairings: [pairing({ revokedAt: "2026-12-01T11:00:00Z" })] });
        return true;
      },
    });
    renderWithStore(<BrowserSettings />);
    expect(await screen.findByTestId("browser-state")).toHaveTextContent("Connected");
    expect(screen.getByTestId("browser-pairing-state")).toHaveTextContent("connected");
    await userEvent.click(screen.getByTestId("browser-revoke"));
    await waitFor(() => expect(screen.getByTestId("browser-state")).toHaveTextContent("Not installed"));
    expect(b.callsOf("revoke_browser_pairing")).toEqual([{ pairingId: "p1" }]);
    expect(screen.getByText("Revoked (1)")).toBeInTheDocument();
  });

  it("refreshes when the bridge reports a connection", async () => {
    let current = status({ state: "paired", pairings: [pairing()] });
    backend({ browser_status: () => current });
    renderWithStore(<BrowserSettings />);
    expect(await screen.findByTestId("browser-state")).toHaveTextContent("Paired, not connected");
    current = status({ state: "connected", pairings: [pairing({}, true)] });
    await bridgeEvent({ kind: "connected", pairingId: "p1", browser: "Chrome" });
    await waitFor(() => expect(screen.getByTestId("browser-state")).toHaveTextContent("Connected"));
  });

  it("shows a bridge error instead of a status", async () => {
    backend({
      browser_status: () => {
        throw { kind: "io", message: "the browser bridge is not running: cannot listen on 127.0.0.1:17345" };
      },
    });
    renderWithStore(<BrowserSettings />);
    expect(await screen.findByRole("alert")).toHaveTextContent("the browser bridge is not running");
  });
});

describe("the pairing dialog", () => {
  it("shows the browser, the extension id and the code, and approves", async () => {
    let current = status({ pending: [request()] });
    const b = backend({
      browser_status: () => current,
      approve_browser_pairing: () => {
        current = status({ state: "connected", pairings: [pairing({ browser: "Edge" }, true)] });
        return current.pairings[0].pairing;
      },
    });
    renderWithStore(<BrowserPairingDialog />);
    expect(await screen.findByTestId("browser-pairing-code")).toHaveTextContent("482-913");
    expect(screen.getByTestId("browser-pairing-extension")).toHaveTextContent(SHIPPED);
    expect(screen.getByTestId("browser-pairing-dialog")).toHaveTextContent("Edge 156.0");
    expect(screen.queryByTestId("browser-pairing-foreign")).not.toBeInTheDocument();
    await userEvent.click(screen.getByTestId("browser-pairing-approve"));
    await waitFor(() => expect(screen.queryByTestId("browser-pairing-dialog")).not.toBeInTheDocument());
    expect(b.callsOf("approve_browser_pairing")).toEqual([{ requestId: "r1" }]);
  });

  it("warns about an extension that is not Suzent's and declines it", async () => {
    let current = status({ pending: [request({ extensionId: "ponmlkjihgfedcbaponmlkjihgfedcba", shippedExtension: false })] });
    const b = backend({
      browser_status: () => current,
      reject_browser_pairing: () => {
        current = status();
        return null;
      },
    });
    renderWithStore(<BrowserPairingDialog />);
    expect(await screen.findByTestId("browser-pairing-foreign")).toHaveTextContent("not the extension that comes with Suzent");
    await userEvent.click(screen.getByTestId("browser-pairing-reject"));
    await waitFor(() => expect(screen.queryByTestId("browser-pairing-dialog")).not.toBeInTheDocument());
    expect(b.callsOf("reject_browser_pairing")).toEqual([{ requestId: "r1" }]);
  });

  it("appears when an extension asks, without reloading the page", async () => {
    let current = status();
    backend({ browser_status: () => current });
    renderWithStore(<BrowserPairingDialog />);
    await waitFor(() => expect(screen.queryByTestId("browser-pairing-dialog")).not.toBeInTheDocument());
    current = status({ pending: [request()] });
    await bridgeEvent({ kind: "pairingRequested", request: request() });
    expect(await screen.findByTestId("browser-pairing-code")).toHaveTextContent("482-913");
  });
});

describe("the composer's browser picker", () => {
  it("shows the configured default, sets a chat's own browser and goes back to the default", async () => {
    let chosen: string | null = null;
    const be = backend({
      chat_browser_mode: () => ({ chosen, default: "extension", effective: chosen ?? "extension" }),
      set_chat_browser_mode: (a) => {
        chosen = (a.mode as string | null) ?? null;
        return { chosen, default: "extension", effective: chosen ?? "extension" };
      },
    });
    renderWithStore(<BrowserModePicker chatId="c1" />);
    const select = await screen.findByTestId("browser-mode-select");
    expect(select).toHaveValue("");
    expect(within(select).getByRole("option", { name: "Default (Your browser (extension))" })).toBeInTheDocument();
    await userEvent.selectOptions(select, "managed");
    await waitFor(() => expect(select).toHaveValue("managed"));
    await userEvent.selectOptions(select, "");
    await waitFor(() => expect(select).toHaveValue(""));
    expect(be.callsOf("set_chat_browser_mode")).toEqual([
      { chatId: "c1", mode: "managed" },
      { chatId: "c1", mode: null },
    ]);
  });

  it("shows the backend's refusal next to the picker", async () => {
    backend({
      set_chat_browser_mode: () => {
        throw { kind: "not_found", message: "no chat 'c1'" };
      },
    });
    renderWithStore(<BrowserModePicker chatId="c1" />);
    await userEvent.selectOptions(await screen.findByTestId("browser-mode-select"), "cdp");
    expect(await screen.findByTestId("browser-mode-error")).toHaveTextContent("no chat 'c1'");
  });
});
