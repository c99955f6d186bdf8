// The model providers the runtime speaks (suzent-core ProvidersConfig), with UI labels.
export const PROVIDERS = [
  { id: "openai", label: "OpenAI (or compatible)", needsKey: true, example: "gpt-4.1", env: "OPENAI_BASE_URL" },
  { id: "anthropic", label: "Anthropic", needsKey: true, example: "claude-sonnet-4-5", env: "ANTHROPIC_BASE_URL" },
  { id: "gemini", label: "Google Gemini", needsKey: true, example: "gemini-2.5-pro", env: "GEMINI_BASE_URL" },
  { id: "ollama", label: "Ollama (local)", needsKey: false, example: "qwen2.5", env: "OLLAMA_HOST" },
] as const;

export type ProviderId = (typeof PROVIDERS)[number]["id"];

/** Says what is wrong with a `provider/model` string, or null when it is fine. */
export function modelError(model: string): string | null {
  const m = model.trim();
  if (!m) return "Default model is required, e.g. openai/gpt-4.1.";
  const slash = m.indexOf("/");
  if (slash <= 0 || slash === m.length - 1) return `Default model must look like provider/model (e.g. openai/gpt-4.1), got “${m}”.`;
  const provider = m.slice(0, slash);
  if (!PROVIDERS.some((p) => p.id === provider))
    return `Default model: unknown provider “${provider}” (expected ${PROVIDERS.map((p) => p.id).join(", ")}).`;
  return null;
}

/** Says what is wrong with a base URL, or null when it is fine (empty means "not set"). */
export function baseUrlError(label: string, url: string): string | null {
  const u = url.trim();
  if (!u) return null;
  if (!/^https?:\/\/\S+$/.test(u)) return `${label} base URL must start with http:// or https://.`;
  return null;
}
