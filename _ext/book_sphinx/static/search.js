/* The book's search results (Sphinx's html_search_scorer: Sphinx writes this file into
 * language_data.js, which the pages load after searchtools.js, so it runs with Search defined).
 *
 * Chapters first: an entry of the API reference (a function's name matches the query) outranks
 * every page of prose in Sphinx's default scores (an index entry scores up to 100, an object
 * name up to 26, a title word 15); the API page's results are lowered by API_PENALTY, more
 * than any score Sphinx gives, so they follow the prose, in their own order.
 * (The snippets' text is cleaned by _static/book.js, which patches Search.htmlToText.) */
var Scorer = Object.assign({}, Scorer, {
  score: function (result) {
    const API_PENALTY = 1000;
    const docname = result[0], score = result[4];
    return docname === "chapters/api" ? score - API_PENALTY : score;
  },
});

