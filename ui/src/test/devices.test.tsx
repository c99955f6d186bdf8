import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { DevicesSettings } from "../components/DevicesSettings";
import type { DeviceView, PairingStatus } from "../types";
import { backend, renderWithStore } from "./backend";

const phone = (over: Partial<DeviceView["device"]> = {}, online = true): DeviceView => ({
  device: {
    id: "phonephonephonephonephonephonephonephonephonephone12",
    shortId: "phonephoneph",
    name: "Phone B",
    platform: "android",
    fingerprint: "9F8E 7D6C 5B4A 3921",
    scope: "send",
    state: "active",
    addrs: ["127.0.0.1:5000"],
    relay: null,
    inboxChat: null,
    remoteNote: null,
    pairedAt: "2026-01-01T00:00:00Z",
    lastSeen: new Date().toISOString(),
    ...over,
  },
  online,
  queued: 0,
  failed: 0,
});

const status = (over: Partial<PairingStatus>): PairingStatus => ({
  state: "waiting",
  wrongCodes: 0,
  peer: null,
  words: [],
  reason: null,
  expiresInSecs: 600,
  ...over,
});

const peer = { id: "x", shortId: "phonephoneph", name: "Phone B", platform: "android", fingerprint: "9F8E 7D6C 5B4A 3921" };

describe("Settings -> Devices", () => {
  it("lists a paired device with its status and pauses and revokes it", async () => {
    let device = phone();
    const b = backend({
      list_devices: () => [device],
      set_device_scope: (a) => {
        device = phone({ scope: a.scope as DeviceView["device"]["scope"] });
        return device.device;
      },
      revoke_device: () => {
        device = phone({ state: "revoked" }, false);
        return device.device;
      },
    });
    renderWithStore(<DevicesSettings />);
    const row = await screen.findByTestId("devices-row-phonephoneph");
    expect(row).toHaveTextContent("Phone B");
    expect(row).toHaveTextContent("android");
    expect(row).toHaveTextContent("9F8E 7D6C 5B4A 3921");
    expect(screen.getByTestId("devices-state-phonephoneph")).toHaveTextContent("online");
    await userEvent.click(screen.getByTestId("devices-pause-phonephoneph"));
    expect(b.callsOf("set_device_scope")).toEqual([{ deviceId: device.device.id, scope: "paused" }]);
    await waitFor(() => expect(screen.getByTestId("devices-pause-phonephoneph")).toHaveTextContent("Resume"));
    await userEvent.click(screen.getByTestId("devices-revoke-phonephoneph"));
    expect(b.callsOf("revoke_device")).toEqual([{ deviceId: device.device.id }]);
    await waitFor(() => expect(screen.getByTestId("devices-state-phonephoneph")).toHaveTextContent("revoked"));
    expect(screen.queryByTestId("devices-revoke-phonephoneph")).toBeNull();
  });

  it("shows a code and QR, then the words, and sends the user's confirmation", async () => {
    const answers: PairingStatus[] = [
      status({ state: "confirming", peer, words: ["acorn", "badge", "cedar", "dolphin"] }),
      status({ state: "paired", peer }),
    ];
    let confirmed = false;
    const b = backend({
      start_pairing: () => ({
        code: "sz1-abcde-fghij",
        link: "suzent://pair?code=sz1-abcde-fghij",
        qrSvg: "<svg xmlns='http://www.w3.org/2000/svg'></svg>",
        qrText: "",
        expiresInSecs: 600,
        thisDevice: peer,
      }),
      pairing_status: () => (confirmed ? answers[1] : answers[0]),
      confirm_pairing: () => {
        confirmed = true;
        return null;
      },
    });
    renderWithStore(<DevicesSettings />);
    await userEvent.click(await screen.findByTestId("devices-pair"));
    expect(await screen.findByTestId("devices-pair-words")).toHaveTextContent("acorn badge cedar dolphin");
    expect(screen.getByTestId("devices-pair-peer")).toHaveTextContent("Phone B");
    await userEvent.click(screen.getByTestId("devices-pair-confirm"));
    expect(b.callsOf("confirm_pairing")).toEqual([{ accept: true }]);
    expect(await screen.findByTestId("devices-pair-done")).toHaveTextContent("Paired with Phone B.");
  });

  it("shows the code and QR while waiting, with the wrong tries", async () => {
    backend({
      start_pairing: () => ({
        code: "sz1-abcde-fghij",
        link: "suzent://pair?code=sz1-abcde-fghij",
        qrSvg: "<svg xmlns='http://www.w3.org/2000/svg'></svg>",
        qrText: "",
        expiresInSecs: 600,
        thisDevice: peer,
      }),
      pairing_status: () => new Promise((r) => setTimeout(() => r(status({ wrongCodes: 2 })), 20)),
    });
    renderWithStore(<DevicesSettings />);
    await userEvent.click(await screen.findByTestId("devices-pair"));
    expect(await screen.findByTestId("devices-pair-code")).toHaveTextContent("sz1-abcde-fghij");
    expect(screen.getByAltText("Pairing QR code").getAttribute("src")).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(await screen.findByTestId("devices-pair-wrong")).toHaveTextContent("2 wrong codes tried");
  });

  it("joins with a code, shows the words and reports a refusal", async () => {
    const b = backend({
      join_device: () => ({ peer, words: ["acorn", "badge", "cedar", "dolphin"] }),
      finish_join: () => {
        throw { kind: "device", message: "pairing failed: the words were not confirmed on this device" };
      },
    });
    renderWithStore(<DevicesSettings />);
    await userEvent.click(await screen.findByTestId("devices-join"));
    await userEvent.type(screen.getByTestId("devices-join-code"), "sz1-abcde");
    await userEvent.click(screen.getByTestId("devices-join-submit"));
    expect(b.callsOf("join_device")).toEqual([{ code: "sz1-abcde" }]);
    expect(await screen.findByTestId("devices-join-words")).toHaveTextContent("acorn badge cedar dolphin");
    await userEvent.click(screen.getByTestId("devices-join-confirm"));
    expect(b.callsOf("finish_join")).toEqual([{ accept: true }]);
    expect(await screen.findByTestId("devices-join-result")).toHaveTextContent("the words were not confirmed on this device");
  });

  it("says so when the device key is not in the OS keychain", async () => {
    backend({
      this_device: () => ({
        id: "a",
        shortId: "a",
        name: "This laptop",
        platform: "linux",
        fingerprint: "1A2B",
        keyStorage: "no OS keychain is available: the device key is in '/home/u/.local/share/suzent/devices/secret/device-key' (readable only by you)",
        keyInKeychain: false,
        relay: false,
        discovery: true,
        running: true,
        addrs: [],
      }),
    });
    renderWithStore(<DevicesSettings />);
    expect(await screen.findByTestId("devices-key-storage")).toHaveTextContent("no OS keychain is available");
    expect(screen.getByTestId("devices-this")).toHaveTextContent("Relays off");
  });
});
