// Search results: a snippet shows a formula as text ("η²(‖ g_a ‖² - ‖ g_b ‖²)"), not as raw TeX.  Every formula
// of the book carries its text in data-plain (_ext/book_fixes.py); Sphinx's search cuts its snippets from the
// text of the page it fetched (Search.htmlToText), so that text gets the formulas' data-plain first.
(() => {
  const patch = () => {
    if (typeof Search === "undefined" || !Search.htmlToText || Search.htmlToText.plainMath) return;
    const original = Search.htmlToText;
    Search.htmlToText = (htmlString, anchor) => {
      const page = new DOMParser().parseFromString(htmlString, "text/html");
      page.querySelectorAll(".math[data-plain]").forEach((el) => { el.textContent = el.dataset.plain; });
      return original(page.documentElement.outerHTML, anchor);
    };
    Search.htmlToText.plainMath = true;
  };
  patch();
  document.addEventListener("DOMContentLoaded", patch);
})();
