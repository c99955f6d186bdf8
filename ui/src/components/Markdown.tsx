import { memo, useRef, type ReactNode } from "react";
import { CopyButton } from "./CopyButton";
import ReactMarkdown, { type Components } from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import remarkGfm from "remark-gfm";

/** A fenced code block with a copy button. */
function CodeBlock({ children }: { children?: ReactNode }) {
  const ref = useRef<HTMLPreElement>(null);
  return (
    <div className="code-wrap">
      <pre ref={ref}>{children}</pre>
      <CopyButton text={() => ref.current?.textContent ?? ""} className="code-copy" />
    </div>
  );
}

// Links must not navigate the app window away; the URL stays visible on hover.
const components: Components = {
  pre: ({ children }) => <CodeBlock>{children}</CodeBlock>,
  a: ({ href, children }) => (
    <a
      href={href}
      title={href}
      onClick={(e) => {
        e.preventDefault();
      }}
    >
      {children}
    </a>
  ),
};

/**
 * Markdown with GitHub extensions; fenced code with a language is highlighted (no guessing, which
 * would be slow to redo on every streamed delta). Re-rendered as text streams in.
 */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      <ReactMarkdown remarkPlugins={[remarkGfm]} rehypePlugins={[[rehypeHighlight, { detect: false }]]} components={components}>
        {text}
      </ReactMarkdown>
    </div>
  );
});
