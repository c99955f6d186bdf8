// The model providers the runtime speaks (suzent-core ProvidersConfig), with UI labels.
import { t } from "./i18n";

export const PROVIDERS = [
  { id: "openai", label: "OpenAI (or compatible)", needsKey: true, example: "gpt-4.1", env: "OPENAI_BASE_URL", keyEnv: "OPENAI_API_KEY" },
  { id: "anthropic", label: "Anthropic", needsKey: true, example: "claude-sonnet-4-5", env: "ANTHROPIC_BASE_URL", keyEnv: "ANTHROPIC_API_KEY" },
  { id: "gemini", label: "Google Gemini", needsKey: true, example: "gemini-2.5-pro", env: "GEMINI_BASE_URL", keyEnv: "GEMINI_API_KEY" },
  { id: "ollama", label: "Ollama (local)", needsKey: false, example: "qwen2.5", env: "OLLAMA_HOST", keyEnv: null },
] as const;

export type ProviderId = (typeof PROVIDERS)[number]["id"];

/** A provider's name as the UI shows it, in the current language. */
export function providerLabel(id: ProviderId): string {
  switch (id) {
    case "openai":
      return t("providers.openai");
    case "anthropic":
      return t("providers.anthropic");
    case "gemini":
      return t("providers.gemini");
    case "ollama":
      return t("providers.ollama");
  }
}

/** Says what is wrong with a `provider/model` string, or null when it is fine. */
export function modelError(model: string): string | null {
  const m = model.trim();
  if (!m) return t("providers.modelRequired");
  const slash = m.indexOf("/");
  if (slash <= 0 || slash === m.length - 1) return t("providers.modelShape", { model: m });
  const provider = m.slice(0, slash);
  if (!PROVIDERS.some((p) => p.id === provider))
    return t("providers.unknownProvider", { provider, expected: PROVIDERS.map((p) => p.id).join(", ") });
  return null;
}

/** Says what is wrong with a base URL, or null when it is fine (empty means "not set"). */
export function baseUrlError(label: string, url: string): string | null {
  const u = url.trim();
  if (!u) return null;
  if (!/^https?:\/\/\S+$/.test(u)) return t("providers.baseUrlScheme", { provider: label });
  return null;
}
