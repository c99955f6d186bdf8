import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { App } from "../App";
import i18n, { languageChoice } from "../i18n";
import { backend, chat, renderWithStore } from "./backend";

describe("languages", () => {
  it("the Settings switch turns the whole window into Simplified Chinese and remembers it", async () => {
    backend({ list_chats: () => [chat()] });
    renderWithStore(<App />);
    await userEvent.click(await screen.findByTestId("nav-settings"));
    await userEvent.selectOptions(screen.getByTestId("settings-language"), "zh-CN");
    await waitFor(() => expect(screen.getByRole("heading", { level: 1 })).toHaveTextContent("设置"));
    expect(screen.getByTestId("nav-chat")).toHaveTextContent("聊天");
    expect(screen.getByTestId("chat-new")).toHaveTextContent("+ 新建");
    expect(document.documentElement.lang).toBe("zh-CN");
    expect(languageChoice()).toBe("zh-CN");

    await userEvent.click(screen.getByTestId("nav-chat"));
    expect(await screen.findByTestId("composer-input")).toHaveAttribute("placeholder", "让 Suzent 帮你做点什么…");
    expect(screen.getByTestId("composer-send")).toHaveTextContent("发送");
  });

  it("following the system again forgets the stored choice", async () => {
    backend();
    await i18n.changeLanguage("zh-CN");
    window.localStorage.setItem("suzent.language", "zh-CN");
    renderWithStore(<App />);
    await userEvent.click(await screen.findByTestId("nav-settings"));
    const select = screen.getByTestId("settings-language");
    expect(select).toHaveValue("zh-CN");
    await userEvent.selectOptions(select, "system");
    // jsdom's system language is English.
    await waitFor(() => expect(screen.getByRole("heading", { level: 1 })).toHaveTextContent("Settings"));
    expect(window.localStorage.getItem("suzent.language")).toBeNull();
    expect(languageChoice()).toBe("system");
  });
});
