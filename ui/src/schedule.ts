// The schedule builder's patterns: common schedules as the cron (or `every N minutes`) text the
// backend parses. The backend checks the result and previews it (`preview_schedule`).

export type Preset = "every" | "hourly" | "daily" | "weekdays" | "weekly" | "custom";

export interface BuilderState {
  preset: Preset;
  /** `every`: the interval in minutes. */
  everyMinutes: number;
  /** `hourly`: the minute past the hour. */
  minute: number;
  /** `daily`, `weekdays`, `weekly`: the time of day, `HH:MM`. */
  time: string;
  /** `weekly`: 0 (Sunday) to 6. */
  weekday: number;
  /** `custom`: the pattern as typed. */
  custom: string;
}

export const DEFAULT_BUILDER: BuilderState = {
  preset: "daily",
  everyMinutes: 15,
  minute: 0,
  time: "09:00",
  weekday: 1,
  custom: "",
};

function hm(time: string): [number, number] {
  const m = /^(\d{1,2}):(\d{2})$/.exec(time.trim());
  if (!m) return [9, 0];
  return [Math.min(23, Number(m[1])), Math.min(59, Number(m[2]))];
}

/** The pattern a builder state makes. Intervals that divide an hour become `*\/N` cron. */
export function patternOf(b: BuilderState): string {
  switch (b.preset) {
    case "every": {
      const n = Math.max(1, Math.floor(b.everyMinutes));
      return n < 60 && 60 % n === 0 ? `*/${n} * * * *` : `every ${n} minutes`;
    }
    case "hourly":
      return `${Math.min(59, Math.max(0, Math.floor(b.minute)))} * * * *`;
    case "daily": {
      const [h, m] = hm(b.time);
      return `${m} ${h} * * *`;
    }
    case "weekdays": {
      const [h, m] = hm(b.time);
      return `${m} ${h} * * 1-5`;
    }
    case "weekly": {
      const [h, m] = hm(b.time);
      return `${m} ${h} * * ${Math.min(6, Math.max(0, Math.floor(b.weekday)))}`;
    }
    case "custom":
      return b.custom.trim();
  }
}

/** A builder state that shows `pattern` (for editing a job); unknown shapes are custom. */
export function builderOf(pattern: string): BuilderState {
  const p = pattern.trim();
  let m = /^\*\/(\d+) \* \* \* \*$/.exec(p) ?? /^every (\d+) minutes?$/.exec(p);
  if (m) return { ...DEFAULT_BUILDER, preset: "every", everyMinutes: Number(m[1]) };
  m = /^(\d{1,2}) \* \* \* \*$/.exec(p);
  if (m) return { ...DEFAULT_BUILDER, preset: "hourly", minute: Number(m[1]) };
  m = /^(\d{1,2}) (\d{1,2}) \* \* (\*|1-5|[0-6])$/.exec(p);
  if (m) {
    const time = `${m[2].padStart(2, "0")}:${m[1].padStart(2, "0")}`;
    if (m[3] === "*") return { ...DEFAULT_BUILDER, preset: "daily", time };
    if (m[3] === "1-5") return { ...DEFAULT_BUILDER, preset: "weekdays", time };
    return { ...DEFAULT_BUILDER, preset: "weekly", time, weekday: Number(m[3]) };
  }
  return { ...DEFAULT_BUILDER, preset: "custom", custom: p };
}

/** `2026-03-29T03:00:00+02:00` as `2026-03-29 03:00 (UTC+02:00)`: the zone's own wall clock. */
export function localTime(rfc3339: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.exec(rfc3339);
  if (!m) return rfc3339;
  const offset = m[3] === "Z" ? "+00:00" : m[3];
  return `${m[1]} ${m[2]} (UTC${offset})`;
}

/** The IANA zones this webview knows, for the zone picker (empty where it cannot list them). */
export function timeZones(): string[] {
  const intl = Intl as unknown as { supportedValuesOf?: (key: string) => string[] };
  try {
    return intl.supportedValuesOf?.("timeZone") ?? [];
  } catch {
    return [];
  }
}
