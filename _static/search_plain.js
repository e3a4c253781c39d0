// Search results: a snippet shows a formula as text ("η²(‖ g_a ‖² - ‖ g_b ‖²)"), not as raw TeX.  Every formula
// of the book carries its text in data-plain (_ext/book_fixes.py); Sphinx's search cuts its snippets from the
// text of the page it fetched (Search.htmlToText), so that text gets the formulas' data-plain first, and loses
// the page's furniture, whose words ("Show code cell source", "Contents", "Binder") had filled snippets.
(() => {
  const FURNITURE = [
    ".bd-header-article", ".bd-sidebar-secondary", ".prev-next-area", ".bd-footer-article", ".onlyprint",
    "details.hide > summary", ".tag_hide-input .cell_input", ".tag_remove-input .cell_input",
  ].join(", ");
  const patch = () => {
    if (typeof Search === "undefined" || !Search.htmlToText || Search.htmlToText.plainMath) return;
    const original = Search.htmlToText;
    Search.htmlToText = (htmlString, anchor) => {
      const page = new DOMParser().parseFromString(htmlString, "text/html");
      page.querySelectorAll(".math[data-plain]").forEach((el) => { el.textContent = el.dataset.plain; });
      // the page's furniture is no part of a snippet: the header's buttons, the contents beside the text, the
      // toggles and sources of folded code cells, the links to the previous and next page
      page.querySelectorAll(FURNITURE).forEach((el) => el.remove());
      return original(page.documentElement.outerHTML, anchor);
    };
    Search.htmlToText.plainMath = true;
  };
  patch();
  document.addEventListener("DOMContentLoaded", patch);
})();
