// Sphinx's search scorer (html_search_scorer, set by _ext/book_fixes.py): Sphinx's own weights, and a statement
// looked up by its whole label ("thm-exchange", as "How to cite" asks a reader to cite it) listed first.
var Scorer = {
  score: (result) => {
    const [, title, , descr, score] = result;
    const query = (new URLSearchParams(window.location.search).get("q") || "").trim().toLowerCase();
    const statement = typeof descr === "string" && descr.startsWith("statement");
    return statement && typeof title === "string" && title.toLowerCase() === query ? score + 100 : score;
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
