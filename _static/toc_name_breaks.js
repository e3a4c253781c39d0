// The page's contents (the right-hand sidebar) name modules in code ("symbreak.experiments.statistics"): where such
// a name is wider than the sidebar it breaks after a dot, never inside a word ("symbreak.decid|e").
document.addEventListener("DOMContentLoaded", () => {
  for (const code of document.querySelectorAll(".page-toc code")) {
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    const texts = [];
    while (walker.nextNode()) texts.push(walker.currentNode);
    for (const text of texts) {
      const parts = text.data.split(/(?<=\.)/);
      if (parts.length < 2) continue;
      const pieces = document.createDocumentFragment();
      parts.forEach((part, i) => {
        if (i > 0) pieces.append(document.createElement("wbr"));
        pieces.append(part);
      });
      text.replaceWith(pieces);
    }
    code.classList.add("sb-dotted-name");
  }
});
