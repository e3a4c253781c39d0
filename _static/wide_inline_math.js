// Inline maths cannot break across lines (MathJax 3).  On a narrow screen an inline formula wider than the text
// column is set on a line of its own that scrolls sideways (class sb-wide-inline, _static/book.css), as a display
// formula does, instead of running past the column's edge.  Re-measured when the width changes.
(() => {
  const mark = () => {
    const formulas = document.querySelectorAll('.bd-content mjx-container[jax="CHTML"]:not([display="true"])');
    formulas.forEach((m) => m.classList.remove("sb-wide-inline"));
    formulas.forEach((m) => {
      if (m.closest("table")) return;  // a table scrolls inside its own box
      const box = m.parentElement.closest("p, li, dd, figcaption, div");
      if (box && m.getBoundingClientRect().width > box.clientWidth + 1) m.classList.add("sb-wide-inline");
    });
    document.documentElement.dataset.wideInlineMath = "measured";  // the browser test waits for this
  };
  let timer = null;
  const start = () => {
    const ready = window.MathJax && window.MathJax.startup && window.MathJax.startup.promise;
    if (!ready) { setTimeout(start, 100); return; }
    window.MathJax.startup.promise.then(mark);
    window.addEventListener("resize", () => { clearTimeout(timer); timer = setTimeout(mark, 150); });
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
