import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { App } from "../App";
import { absolutePath, getAt, initialiseLiterals, parsePointer, resolveContext, setAt } from "../components/canvas/binding";
import { mockConvertFileSrc } from "@tauri-apps/api/mocks";
import { HTML_FRAME_CSP, htmlFrameUrl } from "../components/canvas/components";
import { initialState, reducer, type State } from "../store";
import type { ComponentEntry, JsonValue, Surface } from "../types";
import { backend, chat, renderWithStore, sendEvent } from "./backend";

const lit = (s: string) => ({ literalString: s });
const at = (path: string) => ({ path });

function surface(over: Partial<Surface> & { components: ComponentEntry[] }): Surface {
  return {
    chatId: "c1",
    surfaceId: "s1",
    target: "canvas",
    title: "Test surface",
    root: "root",
    dataModel: {},
    version: 1,
    createdAt: "2026-01-01T00:00:00Z",
    updatedAt: "2026-01-01T00:00:00Z",
    ...over,
  };
}

const PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/** One of every component of the catalog. */
const everything: ComponentEntry[] = [
  {
    id: "root",
    component: {
      Column: {
        children: {
          explicitList: [
            "title", "intro", "caption", "pic", "remote", "row", "stack", "list", "card", "tabs", "div", "badge",
            "progress", "table", "name", "notes", "agree", "color", "size", "when", "frame", "send",
          ],
        },
      },
    },
  },
  { id: "title", component: { Heading: { text: lit("Weekly report"), level: 2 } } },
  { id: "intro", component: { Text: { text: lit("Some **bold** words") } } },
  { id: "caption", component: { Text: { text: lit("A caption"), usageHint: "h3" } } },
  { id: "pic", component: { Image: { url: lit(PNG), altText: "A dot" } } },
  { id: "remote", component: { Image: { url: lit("https://example.com/x.png"), altText: "Remote" } } },
  { id: "row", component: { Row: { children: { explicitList: ["r1", "r2"] }, distribution: "spaceBetween", alignment: "center" } } },
  { id: "r1", component: { Text: { text: lit("left") } } },
  { id: "r2", component: { Text: { text: lit("right") } } },
  { id: "stack", component: { Stack: { children: { explicitList: ["s1"] } } } },
  { id: "s1", component: { Text: { text: lit("layer") } } },
  { id: "list", component: { List: { children: { explicitList: ["l1"] }, direction: "horizontal" } } },
  { id: "l1", component: { Text: { text: lit("item") } } },
  { id: "card", component: { Card: { child: "cardText" } } },
  { id: "cardText", component: { Text: { text: lit("in a card") } } },
  { id: "tabs", component: { Tabs: { tabItems: [{ title: lit("One"), child: "t1" }, { title: lit("Two"), child: "t2" }] } } },
  { id: "t1", component: { Text: { text: lit("first tab") } } },
  { id: "t2", component: { Text: { text: lit("second tab") } } },
  { id: "div", component: { Divider: {} } },
  { id: "badge", component: { Badge: { text: at("/status"), tone: "success" } } },
  { id: "progress", component: { Progress: { value: at("/done"), max: 4, label: lit("Steps") } } },
  {
    id: "table",
    component: { Table: { columns: [{ header: "Name", key: "name" }, { header: "Age", key: "age" }], rows: at("/people") } },
  },
  { id: "name", component: { TextField: { label: lit("Name"), text: at("/form/name") } } },
  { id: "notes", component: { TextField: { label: lit("Notes"), text: at("/form/notes"), textFieldType: "longText" } } },
  { id: "agree", component: { CheckBox: { label: lit("I agree"), value: at("/form/agree") } } },
  {
    id: "color",
    component: {
      MultipleChoice: {
        selections: at("/form/color"),
        options: [{ label: lit("Red"), value: "red" }, { label: lit("Blue"), value: "blue" }],
        maxAllowedSelections: 1,
      },
    },
  },
  { id: "size", component: { Slider: { value: at("/form/size"), minValue: 1, maxValue: 10 } } },
  { id: "when", component: { DateTimeInput: { value: at("/form/when"), enableDate: true } } },
  { id: "frame", component: { HtmlFrame: { html: lit("<p>framed</p><script>parent.alert(1)</script>"), height: 120, title: "Preview" } } },
  {
    id: "send",
    component: {
      Button: { child: "sendText", primary: true, action: { name: "submit", context: [{ key: "name", value: at("/form/name") }] } },
    },
  },
  { id: "sendText", component: { Text: { text: lit("Send") } } },
];

const everythingModel: { [k: string]: JsonValue } = {
  status: "on track",
  done: 1,
  people: [
    { name: "Ada", age: 36 },
    { name: "Alan", age: 41 },
  ],
  form: { name: "", agree: false, color: ["blue"], size: 3, when: "2026-02-03" },
};

/** Renders the app on chat c1 with these surfaces; returns the fake backend. */
async function renderChat(surfaces: Surface[], handlers: Record<string, (a: Record<string, unknown>) => unknown> = {}) {
  const be = backend({ list_chats: () => [chat()], list_surfaces: () => surfaces, ...handlers });
  renderWithStore(<App />);
  await screen.findByTestId("composer-input");
  return be;
}

describe("canvas binding", () => {
  it("JSON Pointers: parse with escapes, resolve relative paths, read and write immutably", () => {
    expect(parsePointer("")).toEqual([]);
    expect(parsePointer("/a~1b/c~0d")).toEqual(["a/b", "c~d"]);
    expect(() => parsePointer("name")).toThrow('"name" is not a JSON Pointer');
    expect(absolutePath("name", "/items/2")).toBe("/items/2/name");
    expect(absolutePath("/top", "/items/2")).toBe("/top");
    const model = { items: [{ name: "a" }, { name: "b" }] };
    expect(getAt(model, "/items/1/name")).toBe("b");
    expect(getAt(model, "/items/7/name")).toBeUndefined();
    const next = setAt(model, "/items/0/name", "z");
    expect(getAt(next, "/items/0/name")).toBe("z");
    expect(model.items[0].name).toBe("a");
    expect(setAt({}, "/form/name", "Ada")).toEqual({ form: { name: "Ada" } });
    expect(setAt({ a: [1] }, "/a/1", 2)).toEqual({ a: [1, 2] });
    expect(setAt({ a: [1] }, "/a/-", 2)).toEqual({ a: [1, 2] });
  });

  it("an index past the end of an array is refused, never filled (a huge index cannot hang the app)", () => {
    expect(() => setAt({ a: [] }, "/a/500000000", "x")).toThrow("past the end of the array");
    const comps: ComponentEntry[] = [
      { id: "t", component: { TextField: { label: lit("T"), text: { literalString: "x", path: "/a/500000000" } } } },
    ];
    expect(initialiseLiterals(comps, { a: [] })).toEqual({ a: [] });
  });

  it("literal plus path initialises the path once, keeping a value already there", () => {
    const comps: ComponentEntry[] = [
      { id: "a", component: { TextField: { label: lit("A"), text: { literalString: "default", path: "/form/a" } } } },
      { id: "b", component: { TextField: { label: lit("B"), text: { literalString: "default", path: "/form/b" } } } },
    ];
    expect(initialiseLiterals(comps, { form: { b: "typed" } })).toEqual({ form: { a: "default", b: "typed" } });
  });

  it("an action context resolves paths, relative paths and literals", () => {
    const action = {
      name: "pick",
      context: [
        { key: "id", value: at("id") },
        { key: "who", value: at("/user") },
        { key: "kind", value: lit("row") },
        { key: "missing", value: at("/nope") },
      ],
    };
    expect(resolveContext(action, { user: "Ada", rows: [{ id: 7 }] }, "/rows/0")).toEqual({ id: 7, who: "Ada", kind: "row", missing: null });
  });
});

describe("canvas components", () => {
  it("renders every component of the catalog with its roles and bound values", async () => {
    await renderChat([surface({ components: everything, dataModel: everythingModel })]);
    const panel = await screen.findByTestId("canvas-panel");
    const s = within(panel).getByTestId("surface-s1");
    expect(within(s).getByRole("heading", { name: "Test surface" })).toBeInTheDocument();
    for (const c of everything) {
      if (["sendText", "t2"].includes(c.id)) continue;
      expect(within(s).getAllByTestId(`a2ui-${c.id}`).length, c.id).toBeGreaterThan(0);
    }
    expect(within(s).getByRole("heading", { level: 2, name: "Weekly report" })).toBeInTheDocument();
    expect(within(s).getByRole("heading", { level: 3, name: "A caption" })).toBeInTheDocument();
    expect(within(s.querySelector('[data-testid="a2ui-intro"]') as HTMLElement).getByText("bold").tagName).toBe("STRONG");
    expect(within(s).getByRole("img", { name: "A dot" })).toHaveAttribute("src", PNG);
    // A remote image is never loaded.
    expect(s.querySelector('img[src^="http"]')).toBeNull();
    expect(within(s).getByTestId("a2ui-remote")).toHaveTextContent("Image not shown");
    expect(within(s).getByTestId("a2ui-row")).toHaveStyle({ justifyContent: "space-between", alignItems: "center" });
    expect(within(s).getByTestId("a2ui-list").tagName).toBe("UL");
    expect(within(s).getByTestId("a2ui-card")).toHaveTextContent("in a card");
    expect(within(s).getByRole("separator")).toHaveAttribute("aria-orientation", "horizontal");
    expect(within(s).getByTestId("a2ui-badge")).toHaveTextContent("on track");
    expect(within(s).getByTestId("a2ui-badge")).toHaveClass("tone-success");
    const bar = within(s).getByRole("progressbar", { name: "Steps" });
    expect(bar).toHaveAttribute("aria-valuenow", "1");
    expect(bar).toHaveAttribute("aria-valuemin", "0");
    expect(bar).toHaveAttribute("aria-valuemax", "4");
    expect(within(s).getByTestId("a2ui-progress").parentElement).toHaveTextContent("25%");
    const table = within(s).getByRole("table");
    expect(within(table).getAllByRole("columnheader").map((h) => h.textContent)).toEqual(["Name", "Age"]);
    expect(within(table).getAllByRole("row")[2]).toHaveTextContent("Alan41");
    expect(within(s).getByLabelText("Name")).toBe(within(s).getByTestId("a2ui-name"));
    expect(within(s).getByLabelText("Notes").tagName).toBe("TEXTAREA");
    expect(within(s).getByLabelText("I agree")).not.toBeChecked();
    expect(within(s).getByRole("radio", { name: "Blue" })).toBeChecked();
    expect(within(s).getByRole("radio", { name: "Red" })).not.toBeChecked();
    const slider = within(s).getByRole("slider");
    expect(slider).toHaveAttribute("aria-valuenow", "3");
    expect(slider).toHaveAttribute("aria-valuemin", "1");
    expect(slider).toHaveAttribute("aria-valuemax", "10");
    expect(within(s).getByLabelText("Date")).toHaveValue("2026-02-03");
    expect(within(s).getByRole("button", { name: "Send" })).toHaveClass("primary");
  });

  it("the HTML frame is staged and loaded from the suzent-frame scheme, with an empty sandbox and its own CSP", async () => {
    const be = await renderChat([surface({ components: everything, dataModel: everythingModel })]);
    const frame = await waitFor(() => {
      const f = screen.getByTestId("a2ui-frame");
      expect(f.tagName).toBe("IFRAME");
      return f as HTMLIFrameElement;
    });
    const staged = be.callsOf("stage_html_frame");
    expect(staged).toHaveLength(1);
    const doc = String(staged[0].html);
    expect(doc).toContain(`<meta http-equiv="Content-Security-Policy" content="${HTML_FRAME_CSP}">`);
    expect(HTML_FRAME_CSP).toBe("default-src 'none'; img-src data:; style-src 'unsafe-inline'");
    expect(doc.indexOf("Content-Security-Policy")).toBeLessThan(doc.indexOf("<p>framed</p>"));
    expect(frame.getAttribute("src")).toBe(`suzent-frame://localhost/frame-1-${doc.length}`);
    // Not a srcdoc frame: that would inherit the app's CSP, which refuses the agent's inline styles.
    expect(frame).not.toHaveAttribute("srcdoc");
    expect(frame.getAttribute("sandbox")).toBe("");
    expect(frame).toHaveAttribute("title", "Preview");
    expect(frame.style.height).toBe("120px");
  });

  it("the HTML frame is staged again when its bound HTML changes, with a placeholder meanwhile", async () => {
    let release: (token: string) => void = () => {};
    const frameSurface = (html: string, version: number) =>
      surface({
        version,
        components: [{ id: "root", component: { HtmlFrame: { html: at("/html"), title: "Report", height: 80 } } }],
        dataModel: { html },
      });
    const be = await renderChat([frameSurface("<p>one</p>", 1)], {
      stage_html_frame: (a) =>
        String(a.html).includes("<p>two</p>") ? new Promise<string>((r) => (release = r)) : "tok-one",
    });
    const first = await waitFor(() => {
      const f = screen.getByTestId("a2ui-root");
      expect(f.tagName).toBe("IFRAME");
      return f;
    });
    expect(first).toHaveAttribute("src", "suzent-frame://localhost/tok-one");

    await sendEvent({ name: "surface_updated", value: { chatId: "c1", surface: frameSurface("<p>two</p>", 2) } });
    const placeholder = await waitFor(() => {
      const f = screen.getByTestId("a2ui-root");
      expect(f.tagName).toBe("DIV");
      return f;
    });
    expect(placeholder).toHaveAttribute("role", "status");
    expect(placeholder).toHaveTextContent("Preparing “Report”…");
    expect(placeholder.style.height).toBe("80px");
    expect(be.callsOf("stage_html_frame").map((a) => String(a.html).includes("<p>two</p>"))).toEqual([false, true]);

    release("tok-two");
    await waitFor(() => expect(screen.getByTestId("a2ui-root")).toHaveAttribute("src", "suzent-frame://localhost/tok-two"));
  });

  it("an HTML frame that cannot be staged says why instead of showing an empty frame", async () => {
    await renderChat(
      [surface({ components: [{ id: "root", component: { HtmlFrame: { html: lit("<p>big</p>"), title: "Report" } } }] })],
      {
        stage_html_frame: () => {
          throw { kind: "invalid_input", field: "html", message: "the HTML frame document is 1048577 bytes, over the limit of 1048576 bytes" };
        },
      },
    );
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveAttribute("data-testid", "a2ui-root");
    expect(alert).toHaveTextContent("Cannot show “Report”: the HTML frame document is 1048577 bytes, over the limit of 1048576 bytes");
    expect(document.querySelector("iframe")).toBeNull();
  });

  it("frame URLs take the custom-scheme form, or Tauri's http://<scheme>.localhost form on Windows", () => {
    expect(htmlFrameUrl("abc", false)).toBe("suzent-frame://localhost/abc");
    expect(htmlFrameUrl("abc", true)).toBe("http://suzent-frame.localhost/abc");
    mockConvertFileSrc("windows");
    expect(htmlFrameUrl("abc")).toBe("http://suzent-frame.localhost/abc");
    mockConvertFileSrc("linux");
    expect(htmlFrameUrl("abc")).toBe("suzent-frame://localhost/abc");
  });

  it("tabs: role tablist, arrow keys move between tabs and show their panel", async () => {
    await renderChat([surface({ components: everything, dataModel: everythingModel })]);
    const tabs = await screen.findByTestId("a2ui-tabs");
    const [one, two] = within(tabs).getAllByRole("tab");
    expect(within(tabs).getByRole("tablist")).toBeInTheDocument();
    expect(one).toHaveAttribute("aria-selected", "true");
    expect(two).toHaveAttribute("tabindex", "-1");
    expect(within(tabs).getByRole("tabpanel")).toHaveTextContent("first tab");
    one.focus();
    await userEvent.keyboard("{ArrowRight}");
    expect(two).toHaveFocus();
    expect(two).toHaveAttribute("aria-selected", "true");
    expect(within(tabs).getByRole("tabpanel")).toHaveTextContent("second tab");
    expect(within(tabs).getByRole("tabpanel")).toHaveAttribute("aria-labelledby", two.id);
    await userEvent.keyboard("{ArrowRight}");
    expect(one).toHaveFocus();
    await userEvent.keyboard("{End}");
    expect(two).toHaveFocus();
  });
});

const signup = (over: Partial<Surface> = {}) =>
  surface({
    surfaceId: "signup",
    title: "Sign up",
    toolCallId: "call_r1",
    components: [
      { id: "root", component: { Column: { children: { explicitList: ["name", "agree", "plan", "progress", "submit"] } } } },
      { id: "name", component: { TextField: { label: lit("Your name"), text: { literalString: "", path: "/form/name" } } } },
      { id: "agree", component: { CheckBox: { label: lit("I agree"), value: { literalBoolean: false, path: "/form/agree" } } } },
      {
        id: "plan",
        component: {
          MultipleChoice: {
            selections: at("/form/plans"),
            options: [{ label: lit("Free"), value: "free" }, { label: lit("Pro"), value: "pro" }, { label: lit("Team"), value: "team" }],
            maxAllowedSelections: 2,
          },
        },
      },
      { id: "progress", component: { Progress: { value: at("/progress"), label: lit("Setup") } } },
      {
        id: "submit",
        component: {
          Button: {
            child: "submitText",
            primary: true,
            action: {
              name: "submit",
              context: [
                { key: "name", value: at("/form/name") },
                { key: "agree", value: at("/form/agree") },
                { key: "plans", value: at("/form/plans") },
                { key: "source", value: lit("canvas") },
              ],
            },
          },
        },
      },
      { id: "submitText", component: { Text: { text: lit("Submit") } } },
    ],
    dataModel: { progress: 0, form: { plans: [] } },
    ...over,
  });

describe("canvas interactions", () => {
  it("inputs write to the local model and the Button sends the resolved values; the user sees what was sent", async () => {
    const be = await renderChat([signup()], {
      submit_surface_action: (a) => {
        const action = a.action as { context: Record<string, JsonValue> };
        return {
          id: "inbox-1",
          target: "c1",
          sender: "canvas",
          kind: "canvas_action",
          text: `[canvas] action "submit" on surface "signup" (button "submit"): ${JSON.stringify(action.context)}`,
        };
      },
    });
    const s = await screen.findByTestId("surface-signup");
    await userEvent.type(within(s).getByLabelText("Your name"), "Ada");
    await userEvent.click(within(s).getByLabelText("I agree"));
    await userEvent.click(within(s).getByLabelText("Pro"));
    await userEvent.click(within(s).getByLabelText("Team"));
    // At most two selections: the third option is disabled.
    expect(within(s).getByLabelText("Free")).toBeDisabled();
    await userEvent.click(within(s).getByRole("button", { name: "Submit" }));
    expect(be.callsOf("submit_surface_action")).toEqual([
      {
        chatId: "c1",
        action: {
          surfaceId: "signup",
          name: "submit",
          sourceComponentId: "submit",
          context: { name: "Ada", agree: true, plans: ["pro", "team"], source: "canvas" },
        },
      },
    ]);
    expect(await within(s).findByTestId("surface-sent-signup")).toHaveTextContent(
      'Sent: submit {name: "Ada", agree: true, plans: ["pro","team"], source: "canvas"}',
    );
    expect(screen.getByTestId("message-canvas-action")).toHaveTextContent('action "submit" on surface "signup"');
    expect(screen.getByTestId("message-canvas-action")).toHaveTextContent('"name":"Ada"');
  });

  it("a refused action shows the backend's error on the surface", async () => {
    await renderChat([signup()], {
      submit_surface_action: () => {
        throw { kind: "invalid_input", message: 'surface "signup" has no button with action "submit"' };
      },
    });
    const s = await screen.findByTestId("surface-signup");
    await userEvent.click(within(s).getByRole("button", { name: "Submit" }));
    expect(await within(s).findByRole("alert")).toHaveTextContent('Not sent: surface "signup" has no button with action "submit"');
    expect(screen.queryByTestId("message-canvas-action")).not.toBeInTheDocument();
  });

  it("template children render once per array element; relative paths and a row's button resolve against it", async () => {
    const be = await renderChat(
      [
        surface({
          surfaceId: "todo",
          components: [
            { id: "root", component: { List: { children: { template: { componentId: "item", dataBinding: "/tasks" } } } } },
            { id: "item", component: { Row: { children: { explicitList: ["label", "done", "open"] } } } },
            { id: "label", component: { Text: { text: at("title") } } },
            { id: "done", component: { CheckBox: { label: at("title"), value: at("done") } } },
            {
              id: "open",
              component: { Button: { child: "openText", action: { name: "open", context: [{ key: "id", value: at("id") }, { key: "done", value: at("done") }] } } },
            },
            { id: "openText", component: { Text: { text: lit("Open") } } },
          ],
          dataModel: {
            tasks: [
              { id: 1, title: "Write tests", done: true },
              { id: 2, title: "Ship it", done: false },
            ],
          },
        }),
      ],
      { submit_surface_action: () => ({ id: "i", target: "c1", sender: "canvas", kind: "canvas_action", text: "[canvas] action" }) },
    );
    const s = await screen.findByTestId("surface-todo");
    const labels = within(s).getAllByTestId("a2ui-label");
    expect(labels.map((l) => l.textContent)).toEqual(["Write tests", "Ship it"]);
    expect(within(s).getByRole("checkbox", { name: "Write tests" })).toBeChecked();
    const second = within(s).getByRole("checkbox", { name: "Ship it" });
    expect(second).not.toBeChecked();
    await userEvent.click(second);
    expect(second).toBeChecked();
    await userEvent.click(within(s).getAllByRole("button", { name: "Open" })[1]);
    expect(be.callsOf("submit_surface_action")[0].action).toEqual({ surfaceId: "todo", name: "open", sourceComponentId: "open", context: { id: 2, done: true } });
  });

  it("an agent update keeps what the user typed where the agent did not change it", async () => {
    await renderChat([signup()]);
    const s = await screen.findByTestId("surface-signup");
    await userEvent.type(within(s).getByLabelText("Your name"), "Ada");
    await sendEvent({ name: "surface_updated", value: { chatId: "c1", surface: signup({ version: 2, dataModel: { progress: 0.5, form: { plans: [] } } }) } });
    expect(within(s).getByRole("progressbar")).toHaveAttribute("aria-valuenow", "0.5");
    expect(within(s).getByLabelText("Your name")).toHaveValue("Ada");
  });
});

describe("canvas state", () => {
  const updated = (s: Surface) => ({ type: "event" as const, event: { name: "surface_updated" as const, value: { chatId: "c1", surface: s } } });
  const progressOf = (state: State) => state.surfaces.c1?.[0]?.dataModel.progress;

  it("a late older version is ignored, a surface created again under the same id replaces the old one", () => {
    let state = reducer(initialState, updated(signup({ version: 3, dataModel: { progress: 0.75 } })));
    state = reducer(state, updated(signup({ version: 2, dataModel: { progress: 0.5 } })));
    expect(progressOf(state)).toBe(0.75);
    state = reducer(state, updated(signup({ version: 1, createdAt: "2026-01-02T00:00:00Z", dataModel: { progress: 0 } })));
    expect(progressOf(state)).toBe(0);
    expect(state.surfaces.c1).toHaveLength(1);
  });

  it("a list read keeps a newer version an event brought during the read, and drops what the read no longer has", () => {
    let state = reducer(initialState, updated(signup({ version: 4, dataModel: { progress: 1 } })));
    state = reducer(state, updated(signup({ surfaceId: "gone" })));
    state = reducer(state, { type: "surfaces/set", chatId: "c1", surfaces: [signup({ version: 3, dataModel: { progress: 0.5 } })] });
    expect(state.surfaces.c1?.map((s) => [s.surfaceId, s.version])).toEqual([["signup", 4]]);
  });
});

describe("canvas panel", () => {
  it("is hidden while the chat has no canvas surfaces and follows surface_updated and surface_deleted", async () => {
    const be = await renderChat([], { delete_surface: () => null });
    await waitFor(() => expect(be.callsOf("list_surfaces")).toEqual([{ chatId: "c1" }]));
    expect(screen.queryByTestId("canvas-panel")).not.toBeInTheDocument();
    expect(screen.getByTestId("canvas-toggle")).toHaveAttribute("aria-expanded", "false");

    await sendEvent({ name: "surface_updated", value: { chatId: "c1", surface: signup() } });
    const panel = await screen.findByTestId("canvas-panel");
    expect(within(panel).getByRole("progressbar")).toHaveAttribute("aria-valuenow", "0");
    expect(screen.getByTestId("canvas-toggle")).toHaveTextContent("Canvas (1)");

    await sendEvent({ name: "surface_updated", value: { chatId: "c1", surface: signup({ version: 2, dataModel: { progress: 1, form: { plans: [] } } }) } });
    expect(within(panel).getByRole("progressbar")).toHaveAttribute("aria-valuenow", "1");
    expect(within(panel).getByTestId("surface-signup")).toHaveAttribute("data-version", "2");
    // A late, older version does not go back.
    await sendEvent({ name: "surface_updated", value: { chatId: "c1", surface: signup() } });
    expect(within(panel).getByRole("progressbar")).toHaveAttribute("aria-valuenow", "1");
    // Another chat's surface is not shown here.
    await sendEvent({ name: "surface_updated", value: { chatId: "c2", surface: signup({ chatId: "c2", surfaceId: "other" }) } });
    expect(screen.queryByTestId("surface-other")).not.toBeInTheDocument();

    await userEvent.click(within(panel).getByRole("button", { name: "Close Sign up" }));
    expect(be.callsOf("delete_surface")).toEqual([{ chatId: "c1", surfaceId: "signup" }]);

    await sendEvent({ name: "surface_updated", value: { chatId: "c1", surface: signup({ surfaceId: "again" }) } });
    expect(await screen.findByTestId("surface-again")).toBeInTheDocument();
    await sendEvent({ name: "surface_deleted", value: { chatId: "c1", surfaceId: "again" } });
    expect(screen.queryByTestId("surface-again")).not.toBeInTheDocument();
  });

  it("the toggle hides and shows the panel; an empty canvas can be opened", async () => {
    await renderChat([signup()]);
    expect(await screen.findByTestId("canvas-panel")).toBeInTheDocument();
    await userEvent.click(screen.getByTestId("canvas-toggle"));
    expect(screen.queryByTestId("canvas-panel")).not.toBeInTheDocument();
    await userEvent.click(screen.getByTestId("canvas-toggle"));
    expect(screen.getByTestId("canvas-panel")).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Hide the canvas" }));
    expect(screen.queryByTestId("canvas-panel")).not.toBeInTheDocument();
  });

  it("resizes with the arrow keys and a drag, and remembers the width", async () => {
    // A wide window: the canvas sits beside the chat (narrower ones overlay it, without a handle).
    window.innerWidth = 1600;
    await renderChat([signup()]);
    const handle = await screen.findByTestId("canvas-resize");
    const panel = screen.getByTestId("canvas-panel");
    expect(handle).toHaveAttribute("role", "separator");
    expect(handle).toHaveAttribute("aria-orientation", "vertical");
    expect(handle).toHaveAttribute("aria-controls", "canvas-panel");
    const start = Number(handle.getAttribute("aria-valuenow"));
    expect(panel.style.width).toBe(`${start}px`);
    handle.focus();
    await userEvent.keyboard("{ArrowRight}");
    expect(handle).toHaveAttribute("aria-valuenow", String(start - 16));
    expect(panel.style.width).toBe(`${start - 16}px`);
    await userEvent.keyboard("{Shift>}{ArrowRight}{/Shift}");
    expect(handle).toHaveAttribute("aria-valuenow", String(start - 80));
    await userEvent.keyboard("{ArrowLeft}");
    expect(handle).toHaveAttribute("aria-valuenow", String(start - 64));
    await userEvent.keyboard("{Home}");
    expect(handle).toHaveAttribute("aria-valuenow", "280");
    // Dragging the handle left widens the panel.
    fireEvent.pointerDown(handle, { clientX: 500, pointerId: 1 });
    fireEvent.pointerMove(handle, { clientX: 460, pointerId: 1 });
    fireEvent.pointerUp(handle, { clientX: 460, pointerId: 1 });
    expect(handle).toHaveAttribute("aria-valuenow", "320");
    expect(window.localStorage.getItem("suzent.canvasWidth")).toBe("320");

    // Hidden and shown again (a new panel): the width is remembered.
    await userEvent.click(screen.getByTestId("canvas-toggle"));
    await userEvent.click(screen.getByTestId("canvas-toggle"));
    expect(screen.getByTestId("canvas-panel").style.width).toBe("320px");
  });

  it("an inline surface shows in the transcript right after the tool call that rendered it", async () => {
    await renderChat([signup({ surfaceId: "inl", target: "inline", toolCallId: "call_r1", title: "Inline one" })], {
      get_messages: () => [
        { seq: 1, runId: "r1", createdAt: "2026-01-01T00:00:00Z", message: { role: "user", text: "show a form" } },
        {
          seq: 2,
          runId: "r1",
          createdAt: "2026-01-01T00:00:00Z",
          message: { role: "assistant", text: "", toolCalls: [{ id: "call_r1", name: "render_ui", arguments: "{}" }] },
        },
        { seq: 3, runId: "r1", createdAt: "2026-01-01T00:00:00Z", message: { role: "tool", toolCallId: "call_r1", toolName: "render_ui", content: "rendered", isError: false } },
        { seq: 4, runId: "r1", createdAt: "2026-01-01T00:00:00Z", message: { role: "assistant", text: "Here it is.", toolCalls: [] } },
      ],
    });
    const inline = await screen.findByTestId("surface-inl");
    expect(screen.queryByTestId("canvas-panel")).not.toBeInTheDocument();
    const card = screen.getByTestId("tool-card");
    expect(card.nextElementSibling).toBe(inline);
    expect(inline.nextElementSibling).toBe(screen.getByTestId("message-assistant"));
  });
});
