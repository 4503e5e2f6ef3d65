/* The book's search results (Sphinx's html_search_scorer: Sphinx writes this file into
 * language_data.js, which the pages load after searchtools.js, so it runs with Search defined).
 *
 * 1. Chapters first: an entry of the API reference (a function's name matches the query) outranks
 *    every page of prose in Sphinx's default scores (an index entry scores up to 100, an object
 *    name up to 26, a title word 15); the API page's results are lowered by API_PENALTY, more
 *    than any score Sphinx gives, so they follow the prose, in their own order.
 * 2. Clean snippets: a snippet is cut from the page's HTML, where a formula is still its TeX
 *    source (MathJax typesets it only in the browser page); formulas are left out of the text a
 *    snippet is cut from, an inline one as an ellipsis. */
var Scorer = Object.assign({}, Scorer, {
  score: function (result) {
    const API_PENALTY = 1000;
    const docname = result[0], score = result[4];
    return docname === "chapters/api" ? score - API_PENALTY : score;
  },
});

(function () {
  "use strict";
  if (typeof Search === "undefined" || Search.bookCleanText) { return; }
  const htmlToText = Search.htmlToText;
  Search.htmlToText = function (htmlString, anchor) {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    page.querySelectorAll("div.math, .math-wrapper").forEach(function (e) { e.remove(); });
    page.querySelectorAll("span.math").forEach(function (e) { e.replaceWith("…"); });
    return htmlToText(page.documentElement.outerHTML, anchor);
  };
  Search.bookCleanText = true;
})();
