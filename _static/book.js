/* Figures stay legible on phones (every page; jupyter-book loads each script of _static).
 *
 * Every PNG figure of the book has its smallest text SMALLEST_TEXT_PX image pixels high
 * (lib.plotting.figure_png raises the resolution of figures with small text). A phone's column
 * would shrink a full-width figure to a third of its pixel width and its text to 6 CSS px; this
 * gives each figure image a minimum width of 9 / SMALLEST_TEXT_PX of its pixel width, as the CSS
 * variable --book-min-width that book.css applies on narrow screens, where the figure then
 * scrolls sideways inside its own box. The browser check measures the result on every page.
 */
/* Search results: Sphinx's snippet is the start of the page's main block, which holds the
 * print-only table of contents and the header buttons; drop those before it reads the text. */
(function () {
  "use strict";
  function patch() {
    // searchtools.js declares `const Search`: a global binding, not a property of window
    if (typeof Search === "undefined" || !Search.htmlToText || Search.htmlToText.bookPatched) {
      return;
    }
    const original = Search.htmlToText;
    Search.htmlToText = function (htmlString, anchor) {
      const page = new DOMParser().parseFromString(htmlString, "text/html");
      page.querySelectorAll(".onlyprint, .d-print-none, .bd-header-article")
        .forEach(function (e) { e.remove(); });
      return original(page.documentElement.outerHTML, anchor);
    };
    Search.htmlToText.bookPatched = true;
  }
  patch();
  document.addEventListener("DOMContentLoaded", patch);
})();

(function () {
  "use strict";
  const SMALLEST_TEXT_PX = 8.5 / 72 * 150; // lib.plotting.SMALLEST_TEXT_PX (a test keeps them equal)
  const MIN_TEXT_CSS_PX = 9;

  function size(img) {
    if (img.naturalWidth > 0) {
      const width = Math.ceil(img.naturalWidth * MIN_TEXT_CSS_PX / SMALLEST_TEXT_PX);
      img.style.setProperty("--book-min-width", width + "px");
      img.dataset.bookMinWidth = String(width);
    }
  }

  function init() {
    document.querySelectorAll(
      ".bd-article figure img, .bd-article div.cell_output img:not(.book-interactive-static)"
    ).forEach(function (img) {
      if (img.complete) { size(img); } else { img.addEventListener("load", function () { size(img); }); }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();

/* Phones: MathJax 3 does not break inline formulas across lines, so a formula wider than the
 * text column would widen the page. Each such formula gets the class book-wide-math (book.css:
 * it scrolls sideways inside its own box), measured after typesetting and again on resize. */
(function () {
  "use strict";
  function mark() {
    document.querySelectorAll(".bd-article mjx-container:not([display=true])").forEach(function (m) {
      m.classList.remove("book-wide-math");
      const block = m.closest("p, li, dd, td, th, div, figcaption") || m.parentElement;
      if (m.getBoundingClientRect().width > block.clientWidth) { m.classList.add("book-wide-math"); }
    });
  }
  function start() {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(mark);
      window.addEventListener("resize", mark);
    } else if (document.querySelector("script[src*=mathjax]")) {
      setTimeout(start, 100);
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
