// Sphinx's search scorer (html_search_scorer, set by _ext/statement_search.py): Sphinx's own weights, and a
// statement listed first where the whole query is its label ("thm-exchange", as "How to cite" asks a reader to cite
// it) or its kind and number ("Theorem 6.1", as the PDF names it).  A statement's result reads
// "thm-exchange — Theorem 6.1 (Exchange symmetry)".
var Scorer = {
  score: (result) => {
    const [, title, , descr, score] = result;
    if (typeof descr !== "string" || !descr.startsWith("statement") || typeof title !== "string") return score;
    const query = (new URLSearchParams(window.location.search).get("q") || "").trim().toLowerCase();
    const [label, named = ""] = title.toLowerCase().split(" — ");
    const numbered = named.startsWith(query) && (named.length === query.length || " (".includes(named[query.length]));
    return query && (label === query || numbered) ? score + 100 : score;
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
