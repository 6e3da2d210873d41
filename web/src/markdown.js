// Model output as markdown, safely: markdown-it with raw HTML off (any tag in the text stays
// text) and its link check (no `javascript:`, `vbscript:`, `file:` or non-image `data:`
// URLs), code highlighted by highlight.js (its output escapes the code), and the result
// passed through DOMPurify before it reaches the page. Links open in a new tab with no
// referrer and no opener.

import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import typescript from "highlight.js/lib/languages/typescript";
import MarkdownIt from "markdown-it";

for (const [name, language] of Object.entries({
  bash,
  diff,
  go,
  javascript,
  json,
  python,
  rust,
  typescript,
})) {
  hljs.registerLanguage(name, language);
}
hljs.registerAliases(["sh", "shell", "zsh"], { languageName: "bash" });
hljs.registerAliases(["js"], { languageName: "javascript" });
hljs.registerAliases(["ts"], { languageName: "typescript" });
hljs.registerAliases(["rs"], { languageName: "rust" });
hljs.registerAliases(["py"], { languageName: "python" });

const markdown = new MarkdownIt({
  html: false,
  linkify: true,
  highlight(code, language) {
    if (language && hljs.getLanguage(language)) {
      return hljs.highlight(code, { language, ignoreIllegals: true }).value;
    }
    return ""; // markdown-it escapes it
  },
});

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

/** `text` as sanitised HTML for a `div`'s innerHTML. */
export function renderMarkdown(text) {
  return DOMPurify.sanitize(markdown.render(text || ""), {
    ALLOWED_URI_REGEXP: /^(?:https?|mailto):/i,
    FORBID_TAGS: ["style", "form", "input", "img"],
  });
}
