// Every labelled statement (definition, theorem, proposition, …) shows its stable label at the right of its title
// bar, as a link to itself: the label is what "How to cite" asks a reader to cite a result by, with the version.
document.addEventListener("DOMContentLoaded", () => {
  for (const box of document.querySelectorAll(".bd-content div.proof.admonition[id]")) {
    const kinds = [...box.classList].filter((c) => c !== "proof" && c !== "admonition");
    const title = box.querySelector(":scope > p.admonition-title");
    if (!kinds.length || !title || box.id.startsWith("proof")) continue;  // a proof has no label of its own
    const link = document.createElement("a");
    link.className = "sb-label";
    link.href = "#" + box.id;
    link.textContent = box.id;
    link.title = "The stable label of this result: cite it with the book's version";
    title.append(link);
  }
});
