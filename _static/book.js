/* One way for every script below to run once the page is parsed (at once if it already is). */
window.bookOnReady = function (fn) {
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", fn);
  } else {
    fn();
  }
};

/* Figures stay legible on phones (every page; jupyter-book loads each script of _static).
 *
 * Every PNG figure of the book has its smallest text SMALLEST_TEXT_PX image pixels high
 * (lib.plotting.figure_png raises the resolution of figures with small text). A phone's column
 * would shrink a full-width figure to a third of its pixel width and its text to 6 CSS px; this
 * gives each figure image a minimum width of 9 / SMALLEST_TEXT_PX of its pixel width, as the CSS
 * variable --book-min-width that book.css applies on narrow screens, where the figure then
 * scrolls sideways inside its own box. Wide figures carry a narrower rendition for phones
 * (lib.book.plotting.phone_png, served by _ext/book_sphinx/phone.py as a <picture> source), which
 * fits the column at that size. The browser check measures the result on every page.
 */
/* Search results: Sphinx's snippet is the start of the page's main block, which holds the
 * print-only table of contents and the header buttons; drop those before it reads the text.
 * Formulas are still TeX source in the fetched HTML (MathJax typesets them only in a browser
 * page): a display formula is dropped, an inline one becomes an ellipsis. (The order of the
 * results is _ext/book_sphinx/static/search.js's.) */
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
      page.querySelectorAll(".onlyprint, .d-print-none, .bd-header-article, div.math")
        .forEach(function (e) { e.remove(); });
      page.querySelectorAll("span.math").forEach(function (e) { e.replaceWith("…"); });
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
      // a <picture> loads its phone or desktop source again when the width crosses the phone's
      // (_ext/book_sphinx/phone.py): every load sizes the image afresh
      img.addEventListener("load", function () { size(img); });
      if (img.complete) { size(img); }
    });
  }

  window.bookOnReady(init);
})();

/* Phones: MathJax 3 does not break inline formulas across lines, so a formula wider than the
 * text column would widen the page. Each such formula gets the class book-wide-math (book.css:
 * it scrolls sideways inside its own box), measured after typesetting and again on resize.
 * Formulas are not Tab stops (MathJax's inTabOrder is off in _config.yml), except one that scrolls
 * sideways in its box: a keyboard reader must be able to reach it to scroll it (tabindex 0). */
(function () {
  "use strict";
  /* A display formula a little wider than a phone's column is set in a smaller font so that it
   * fits, down to MIN_MATH_SCALE of its size (the long ones are written on several lines).
   * MathJax sets its own scale as the container's font-size (e.g. 123.7%): kept in
   * data-book-size and restored before each measurement. */
  const MIN_MATH_SCALE = 0.75;
  const PHONE = window.matchMedia("(max-width: 760px)");
  function fit() {
    document.querySelectorAll(".bd-article mjx-container[display=true]").forEach(function (m) {
      if (m.dataset.bookSize === undefined) { m.dataset.bookSize = m.style.fontSize; }
      m.style.fontSize = m.dataset.bookSize;
      if (!PHONE.matches || m.scrollWidth <= m.clientWidth + 1) { return; }
      const scale = m.clientWidth / m.scrollWidth;
      if (scale >= MIN_MATH_SCALE) {
        m.style.fontSize = (parseFloat(getComputedStyle(m).fontSize) * scale * 0.99) + "px";
      }
    });
  }
  function mark() {
    fit();
    document.querySelectorAll(".bd-article mjx-container:not([display=true])").forEach(function (m) {
      m.classList.remove("book-wide-math");
      const block = m.closest("p, li, dd, td, th, div, figcaption") || m.parentElement;
      if (m.getBoundingClientRect().width > block.clientWidth) { m.classList.add("book-wide-math"); }
    });
    document.querySelectorAll(".bd-article mjx-container").forEach(function (m) {
      if (m.scrollWidth > m.clientWidth + 1) {
        m.setAttribute("tabindex", "0");
      } else if (m.getAttribute("tabindex") === "0") {
        m.removeAttribute("tabindex");
      }
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
  window.bookOnReady(start);
})();

/* The sidebar buttons. pydata-sphinx-theme 0.17 renders its own hamburger buttons in the top bar
 * (.primary-toggle, .secondary-toggle) and binds the dialog that opens a sidebar on a narrow
 * screen to the *first* element of each class, which sphinx-book-theme's header hides: the
 * visible buttons of sphinx-book-theme (the article header's) get no listener, so on a phone the
 * chapter list and the page contents cannot be opened, and on a desktop the button does nothing
 * (pydata-sphinx-theme issue 2451; sphinx-book-theme issue 865). Here every visible toggle works:
 * where its sidebar is laid out beside the article (a wide screen) it hides and shows it; where the
 * sidebar is not laid out (a narrow screen) it forwards the click to the theme's own button, whose
 * handler opens the sidebar as a dialog (Escape or a click outside closes it). The browser test
 * tests/browser/test_browser.py::test_sidebar_buttons_open_and_close presses them at 1280 px and on a
 * phone. */
(function () {
  "use strict";
  const SIDES = [
    { button: ".primary-toggle", sidebar: "pst-primary-sidebar" },
    { button: ".secondary-toggle", sidebar: "pst-secondary-sidebar" },
  ];

  function laidOut(sidebar) { // shown beside the article (on a phone it waits off the screen)
    const style = getComputedStyle(sidebar);
    const box = sidebar.getBoundingClientRect();
    return style.display !== "none" && style.visibility !== "hidden" && box.width > 0 &&
      box.right > 0 && box.left < window.innerWidth;
  }

  function init() {
    SIDES.forEach(function (side) {
      const buttons = Array.from(document.querySelectorAll(side.button));
      const sidebar = document.getElementById(side.sidebar);
      if (buttons.length < 2 || !sidebar) { return; }
      const themed = buttons[0]; // the one the theme bound
      buttons.slice(1).forEach(function (button) {
        button.setAttribute("aria-controls", side.sidebar);
        button.setAttribute("aria-expanded", String(laidOut(sidebar)));
        button.addEventListener("click", function (event) {
          event.preventDefault();
          event.stopPropagation();
          if (sidebar.classList.contains("book-sidebar-hidden")) {
            sidebar.classList.remove("book-sidebar-hidden");
            button.setAttribute("aria-expanded", "true");
          } else if (laidOut(sidebar)) {
            sidebar.classList.add("book-sidebar-hidden");
            button.setAttribute("aria-expanded", "false");
          } else {
            themed.click();
          }
        });
      });
    });
  }
  window.bookOnReady(init);

  // On a phone a sidebar opens as a dialog over the page; a tap on one of its links (the page
  // contents' in-page anchors above all) closes it, so that the reader sees where the link led.
  document.addEventListener("click", function (event) {
    const link = event.target.closest ? event.target.closest("dialog[open] a[href]") : null;
    const dialog = link ? link.closest("dialog") : null;
    if (dialog && /-sidebar-modal$/.test(dialog.id)) { dialog.close(); }
  });
})();

/* MathJax's own menu, Accessibility → Activate: it loads MathJax's explorer and its speech rule
 * engine, whose language maps a page opened from disk cannot fetch (the browser refuses file://
 * requests), and the formulas of the page vanish; MathJax saves the setting in the browser, so
 * every later page fails too, until the site data are cleared (MathJax issue 3124). The book
 * keeps MathJax's assistive MathML (on by default: screen readers read the formulas) and removes
 * the items that load the explorer: a saved setting is dropped before MathJax starts (this script
 * runs before the deferred MathJax), and the Accessibility submenu is hidden once the menu exists.
 * tests/browser/test_browser.py::test_a_saved_mathjax_explorer_setting_cannot_wipe_the_maths sets it in
 * the profile first. */
(function () {
  "use strict";
  const KEY = "MathJax-Menu-Settings";
  const EXPLORER = ["explorer", "collapsible", "autocollapse", "speech", "braille"];
  try {
    const saved = JSON.parse(window.localStorage.getItem(KEY) || "{}");
    if (EXPLORER.some(function (k) { return k in saved; })) {
      EXPLORER.forEach(function (k) { delete saved[k]; });
      window.localStorage.setItem(KEY, JSON.stringify(saved));
    }
  } catch (err) { /* no localStorage (a private window): nothing saved, nothing to drop */ }

  function hideItems() {
    const doc = window.MathJax && MathJax.startup && MathJax.startup.document;
    const menu = doc && doc.menu && doc.menu.menu;
    const item = menu && menu.findID && menu.findID("Accessibility");
    if (item && !item.hidden) { item.hide(); }
  }
  function whenReady() {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(hideItems);
    } else {
      setTimeout(whenReady, 100);
    }
  }
  whenReady();
})();

// The claims page's filter: by chapter, status and kind, over the row classes the book's Sphinx
// extension writes (chapter-N, status-WORD, kind-KIND). Plain <select>s, so it works with the
// keyboard; without script the form stays hidden and every row shows.
(function () {
  "use strict";
  function init() {
    var form = document.querySelector("form.claims-filter");
    var rows = Array.prototype.slice.call(document.querySelectorAll("table.claims-table tr.claims-row"));
    if (!form || !rows.length) return;
    var groups = { chapter: "chapter-", status: "status-", kind: "kind-" };
    var selects = {};
    Object.keys(groups).forEach(function (name) {
      var select = form.querySelector('select[data-filter="' + name + '"]');
      selects[name] = select;
      var values = [];
      rows.forEach(function (row) {
        row.classList.forEach(function (c) {
          if (c.indexOf(groups[name]) === 0 && values.indexOf(c) < 0) values.push(c);
        });
      });
      values.sort(function (a, b) {
        return a.localeCompare(b, undefined, { numeric: true });
      });
      values.forEach(function (c) {
        var option = document.createElement("option");
        option.value = c;
        option.textContent = c.slice(groups[name].length).replace(/-/g, " ");
        select.appendChild(option);
      });
    });
    var output = form.querySelector("output.claims-shown");
    function apply() {
      var shown = 0;
      rows.forEach(function (row) {
        var keep = Object.keys(selects).every(function (name) {
          var value = selects[name].value;
          return !value || row.classList.contains(value);
        });
        row.hidden = !keep;
        if (keep) shown += 1;
      });
      output.textContent = shown + " of " + rows.length + " checks shown";
    }
    Object.keys(selects).forEach(function (name) {
      selects[name].addEventListener("change", apply);
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
    });
    form.hidden = false;
    apply();
  }
  window.bookOnReady(init);
})();

// Print in the light palette: the browser's print of a page shown in dark mode printed pale text
// on white, or whole black pages. While the page is printed (beforeprint, or the print media
// query in an emulated print) the theme is switched to light, and back afterwards.
(function () {
  "use strict";
  var saved = null;
  function toLight() {
    var html = document.documentElement;
    if (saved === null && html.dataset.theme === "dark") {
      saved = html.dataset.theme;
      html.dataset.theme = "light";
    }
  }
  function restore() {
    if (saved !== null) {
      document.documentElement.dataset.theme = saved;
      saved = null;
    }
  }
  window.addEventListener("beforeprint", toLight);
  window.addEventListener("afterprint", restore);
  var query = window.matchMedia && window.matchMedia("print");
  if (query && query.addEventListener) {
    query.addEventListener("change", function (event) {
      if (event.matches) toLight();
      else restore();
    });
  }
})();
