/** Text whose `backticked` parts show as code (backend sentences quote names that way). */
export function InlineCode({ text }: { text: string }) {
  const parts = text.split("`");
  // An odd number of backticks leaves the text as it is.
  if (parts.length % 2 === 0) return <>{text}</>;
  return <>{parts.map((p, i) => (i % 2 === 1 ? <code key={i}>{p}</code> : p))}</>;
}
