// A table wider than its column scrolls inside its box (on a phone).  Its cut edge fades out (classes sb-more-right,
// sb-more-left; _static/book.css) while more of the table lies beyond it, so that a reader sees it goes on.
// The caption above the table stays unfaded: the masks of book.css leave the top --sb-caption pixels of the box whole.
// Measured once the formulas in its cells are typeset (they set its width), again on scrolling and on resizing.
(() => {
  const boxes = () => document.querySelectorAll(".bd-content .pst-scrollable-table-container");
  const mark = (box) => {
    const more = box.scrollWidth - box.clientWidth;
    box.classList.toggle("sb-more-right", more > 1 && box.scrollLeft < more - 1);
    box.classList.toggle("sb-more-left", more > 1 && box.scrollLeft > 1);
    const caption = box.querySelector(":scope > table > caption");
    const top = caption ? caption.getBoundingClientRect().bottom - box.getBoundingClientRect().top : 0;
    box.style.setProperty("--sb-caption", `${Math.max(0, Math.ceil(top))}px`);
  };
  const all = () => {
    boxes().forEach(mark);
    document.documentElement.dataset.tableScrollHint = "measured";  // the browser test waits for this
  };
  document.addEventListener("DOMContentLoaded", () => {
    boxes().forEach((box) => box.addEventListener("scroll", () => mark(box), { passive: true }));
    let tries = 0;
    const start = () => {  // a page without formulas loads no MathJax: ask for 10 s at most
      const ready = window.MathJax && window.MathJax.startup && window.MathJax.startup.promise;
      if (!ready) { if (++tries < 100) setTimeout(start, 100); return; }
      window.MathJax.startup.promise.then(all);
    };
    all();
    start();
  });
  window.addEventListener("resize", all);
})();
