import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { App } from "../App";
import { ChatAutomation } from "../components/ChatAutomation";
import { SchedulesView } from "../components/SchedulesView";
import { builderOf, DEFAULT_BUILDER, localTime, patternOf } from "../schedule";
import type { GoalRecord, JobRecord, JobView, RunRecord } from "../types";
import { backend, chat, renderWithStore, sendEvent } from "./backend";

const job = (over: Partial<JobRecord> = {}): JobRecord => ({
  id: "job-1",
  name: "Morning digest",
  kind: "prompt",
  schedule: "0 9 * * 1-5",
  timezone: "Europe/Berlin",
  prompt: "Summarize the inbox",
  workspace: "/work/space",
  model: null,
  chatId: "c-job",
  delivery: "notify",
  overlap: "skip",
  catchUp: "run_once",
  timeoutSecs: 1800,
  maxRetries: 0,
  enabled: true,
  cursor: "2026-03-02T08:00:00Z",
  createdAt: "2026-03-01T08:00:00Z",
  updatedAt: "2026-03-01T08:00:00Z",
  ...over,
});

const run = (over: Partial<RunRecord> = {}): RunRecord => ({
  id: "run-1",
  jobId: "job-1",
  slot: "2026-03-02T08:00:00Z",
  attempt: 1,
  trigger: "schedule",
  catchUp: false,
  missed: 0,
  status: "completed",
  owner: "host:1:x",
  pid: 1,
  chatId: "c-job",
  turnRunId: "t1",
  claimedAt: "2026-03-02T08:00:00Z",
  startedAt: "2026-03-02T08:00:00Z",
  endedAt: "2026-03-02T08:00:05Z",
  steps: 2,
  denied: [],
  detail: "Three new messages.",
  quiet: false,
  changes: null,
  ...over,
});

const view = (over: Partial<JobView> = {}): JobView => ({ job: job(), nextRun: "2026-03-03T08:00:00Z", lastRun: run(), ...over });

describe("schedule builder patterns", () => {
  it("makes cron from common schedules and reads them back for editing", () => {
    expect(patternOf({ ...DEFAULT_BUILDER, preset: "every", everyMinutes: 15 })).toBe("*/15 * * * *");
    expect(patternOf({ ...DEFAULT_BUILDER, preset: "every", everyMinutes: 45 })).toBe("every 45 minutes");
    expect(patternOf({ ...DEFAULT_BUILDER, preset: "weekdays", time: "07:30" })).toBe("30 7 * * 1-5");
    expect(patternOf({ ...DEFAULT_BUILDER, preset: "weekly", time: "18:05", weekday: 5 })).toBe("5 18 * * 5");
    expect(builderOf("30 7 * * 1-5")).toEqual({ ...DEFAULT_BUILDER, preset: "weekdays", time: "07:30" });
    expect(builderOf("0 3 1 * *")).toEqual({ ...DEFAULT_BUILDER, preset: "custom", custom: "0 3 1 * *" });
    expect(localTime("2026-03-29T03:00:00+02:00")).toBe("2026-03-29 03:00 (UTC+02:00)");
  });
});

describe("schedules page", () => {
  it("lists jobs with next run and last outcome, and runs, pauses and shows history", async () => {
    const be = backend({
      list_schedules: () => [view()],
      run_schedule_now: () => run({ id: "run-2", status: "requested", trigger: "manual" }),
      pause_schedule: () => job({ enabled: false }),
      schedule_history: () => [
        run({ id: "run-3", status: "completed", denied: [{ tool: "run_command", reasonCode: "headless_ask_denied", reason: "cannot ask" }] }),
        run({ id: "run-4", status: "skipped", detail: "still running", steps: 0 }),
      ],
    });
    renderWithStore(<SchedulesView onOpenChat={() => {}} />);
    const row = await screen.findByTestId("schedule-row-job-1");
    expect(row).toHaveTextContent("Morning digest");
    expect(row).toHaveTextContent("0 9 * * 1-5");
    expect(within(row).getByTestId("schedule-last")).toHaveTextContent("Completed");

    await userEvent.click(within(row).getByTestId("schedule-run-now"));
    await waitFor(() => expect(be.callsOf("run_schedule_now")).toEqual([{ jobId: "job-1" }]));
    await userEvent.click(within(row).getByTestId("schedule-pause"));
    await waitFor(() => expect(be.callsOf("pause_schedule")).toEqual([{ jobId: "job-1", paused: true }]));

    await userEvent.click(within(row).getByTestId("schedule-history"));
    const rows = await screen.findAllByTestId("run-row");
    expect(rows.map((r) => r.getAttribute("data-status"))).toEqual(["completed", "skipped"]);
    expect(rows[0]).toHaveTextContent("Refused run_command: cannot ask");
    expect(rows[1]).toHaveTextContent("Skipped (still running)");
  });

  it("the builder shows the cron it makes and the next five times in the chosen zone, then saves", async () => {
    const next = ["2026-03-30T07:30:00+02:00", "2026-03-31T07:30:00+02:00", "2026-04-01T07:30:00+02:00", "2026-04-02T07:30:00+02:00", "2026-04-03T07:30:00+02:00"];
    const be = backend({
      list_schedules: () => [],
      system_timezone: () => "Europe/Berlin",
      preview_schedule: (a) => ({ schedule: a.schedule, timezone: a.timezone ?? "Europe/Berlin", next }),
      save_schedule: () => job(),
    });
    renderWithStore(<SchedulesView onOpenChat={() => {}} />);
    await userEvent.click(await screen.findByTestId("schedule-new"));
    await userEvent.type(screen.getByTestId("schedule-name"), "Standup notes");
    await userEvent.type(screen.getByTestId("schedule-prompt"), "Write the standup notes");
    await userEvent.selectOptions(screen.getByTestId("schedule-preset"), "weekdays");
    fireEvent.change(screen.getByTestId("schedule-time"), { target: { value: "07:30" } });
    expect(screen.getByTestId("schedule-pattern")).toHaveTextContent("30 7 * * 1-5");
    await waitFor(() => expect(screen.getByTestId("schedule-zone")).toHaveValue("Europe/Berlin"));
    await waitFor(() => expect(be.callsOf("preview_schedule").at(-1)).toEqual({ schedule: "30 7 * * 1-5", timezone: "Europe/Berlin" }));
    const preview = await screen.findByTestId("schedule-preview");
    expect(within(preview).getAllByRole("listitem").map((li) => li.textContent)).toEqual(next.map(localTime));
    await userEvent.click(screen.getByTestId("schedule-save"));
    await waitFor(() => expect(be.callsOf("save_schedule")).toHaveLength(1));
    expect(be.callsOf("save_schedule")[0].input).toMatchObject({
      id: null,
      name: "Standup notes",
      schedule: "30 7 * * 1-5",
      timezone: "Europe/Berlin",
      prompt: "Write the standup notes",
      overlap: "skip",
      catchUp: "run_once",
      delivery: "notify",
    });
  });

  it("a bad custom pattern shows the backend's reason and cannot be previewed", async () => {
    backend({
      list_schedules: () => [],
      system_timezone: () => "UTC",
      preview_schedule: () => {
        throw { kind: "invalid_input", message: "invalid schedule '61 * * * *': minute out of range" };
      },
    });
    renderWithStore(<SchedulesView onOpenChat={() => {}} />);
    await userEvent.click(await screen.findByTestId("schedule-new"));
    await userEvent.selectOptions(screen.getByTestId("schedule-preset"), "custom");
    const custom = screen.getByTestId("schedule-custom");
    await userEvent.clear(custom);
    await userEvent.type(custom, "61 * * * *");
    expect(await screen.findByTestId("schedule-preview-error")).toHaveTextContent("minute out of range");
    expect(screen.queryByTestId("schedule-preview")).not.toBeInTheDocument();
  });
});

const goal = (over: Partial<GoalRecord> = {}): GoalRecord => ({
  chatId: "c1",
  objective: "make the tests pass",
  status: "active",
  reason: null,
  turnsUsed: 1,
  maxTurns: 20,
  tokensUsed: 1200,
  maxTokens: 500000,
  createdAt: "2026-03-02T08:00:00Z",
  updatedAt: "2026-03-02T08:00:00Z",
  ...over,
});

describe("chat header automation", () => {
  it("turns the heartbeat on and shows a goal paused by its judge with the reason", async () => {
    let current = goal();
    const be = backend({
      chat_heartbeat: () => null,
      set_chat_heartbeat: (a) => job({ id: "heartbeat-c1", kind: "heartbeat", schedule: `every ${a.everyMinutes} minutes`, chatId: "c1" }),
      chat_goal: () => current,
      pause_goal: () => (current = goal({ status: "paused", reason: "paused by the user" })),
    });
    renderWithStore(<ChatAutomation chatId="c1" />);
    expect(await screen.findByTestId("goal-status")).toHaveTextContent("Goal working · 1/20 turns");
    await userEvent.selectOptions(screen.getByTestId("heartbeat-select"), "30");
    await waitFor(() => expect(be.callsOf("set_chat_heartbeat")).toEqual([{ chatId: "c1", everyMinutes: 30 }]));

    current = goal({ status: "paused", turnsUsed: 2, reason: "the judge's answer is not a verdict: \"banana\"" });
    await sendEvent({
      name: "goal_updated",
      value: { chatId: "c1", objective: current.objective, status: "paused", reason: current.reason, turnsUsed: 2, maxTurns: 20, tokensUsed: 2000, maxTokens: 500000 },
    });
    expect(await screen.findByTestId("goal-reason")).toHaveTextContent("banana");
    expect(screen.getByTestId("goal-status")).toHaveTextContent("Goal paused · 2/20 turns");
    expect(screen.getByTestId("goal-resume")).toBeInTheDocument();
  });

  it("/goal in the composer starts a goal instead of sending a message, and quiet heartbeat turns are folded", async () => {
    const be = backend({
      list_chats: () => [chat()],
      start_goal: () => goal(),
      quiet_turns: () => ["beat-1"],
      get_messages: () => [
        { seq: 1, runId: "beat-1", message: { role: "user", text: "[heartbeat: a scheduled check of HEARTBEAT.md]" }, createdAt: "2026-03-02T08:00:00Z" },
        { seq: 2, runId: "beat-1", message: { role: "assistant", text: "HEARTBEAT_OK" }, createdAt: "2026-03-02T08:00:01Z" },
        { seq: 3, runId: "r2", message: { role: "user", text: "hello" }, createdAt: "2026-03-02T08:01:00Z" },
      ],
    });
    renderWithStore(<App />);
    const folded = await screen.findByTestId("quiet-run");
    expect(folded).toHaveTextContent("Heartbeat: nothing to do");
    expect(folded).not.toHaveAttribute("open");
    // The bubble's text (each message also has a Copy button).
    expect(screen.getAllByTestId("message-user").map((m) => m.querySelector(".bubble")?.textContent)).toEqual(["hello"]);

    await userEvent.type(screen.getByTestId("composer-input"), "/goal ship the release{Enter}");
    await waitFor(() => expect(be.callsOf("start_goal")).toEqual([{ chatId: "c1", input: { objective: "ship the release", maxTurns: null, maxTokens: null } }]));
    expect(be.callsOf("send_message")).toEqual([]);
  });
});
