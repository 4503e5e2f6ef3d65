/* The book's interactive figures (lib/book/interactive.py): draws the frame a slider selects with
   plotly.js (served from this site's _static/, never a CDN). Every frame was computed by lib when
   the book was built; nothing is interpolated here. Without plotly.js (or JavaScript) the static
   image in the same block stays.

   plotly.js (1.5 MB, as much as the rest of a chapter's first load) is fetched only when a figure
   comes within a screen of the viewport: this script's tag names the file in data-plotly, beside
   this script in _static/. Until then, and when printing, the static image shows. */
(function () {
  "use strict";

  const me = document.currentScript;
  const plotlySrc = me && me.dataset.plotly ? new URL(me.dataset.plotly, me.src).href : null;
  let requested = false;

  function loadPlotly() {
    if (requested || window.Plotly || !plotlySrc) return;
    requested = true;
    const tag = document.createElement("script");
    tag.src = plotlySrc;
    tag.addEventListener("load", start);
    document.head.appendChild(tag);
  }

  function dark() {
    return document.documentElement.dataset.theme === "dark";
  }

  function themed(layout, height) {
    const ink = dark() ? "#e6e6e6" : "#222222";
    const grid = dark() ? "rgba(255,255,255,0.15)" : "rgba(0,0,0,0.1)";
    const out = JSON.parse(JSON.stringify(layout));
    out.height = height;
    out.autosize = true;
    out.paper_bgcolor = "rgba(0,0,0,0)";
    out.plot_bgcolor = "rgba(0,0,0,0)";
    out.font = Object.assign({ size: 13, color: ink }, out.font || {});
    out.font.color = ink;
    out.margin = Object.assign({ l: 60, r: 16, t: 40, b: 52 }, out.margin || {});
    out.legend = Object.assign(
      { orientation: "h", x: 0, y: 1.02, yanchor: "bottom", bgcolor: "rgba(0,0,0,0)" },
      out.legend || {}
    );
    out.legend.font = Object.assign({ size: 12 }, out.legend.font || {}, { color: ink });
    for (const key of Object.keys(out)) {
      if (/^[xy]axis\d*$/.test(key)) {
        out[key] = Object.assign({ gridcolor: grid, zerolinecolor: grid, linecolor: ink }, out[key]);
        out[key].gridcolor = grid;
        out[key].tickfont = Object.assign({ size: 12 }, out[key].tickfont || {}, { color: ink });
      }
    }
    if (!out.xaxis) out.xaxis = { gridcolor: grid, tickfont: { size: 12, color: ink } };
    if (!out.yaxis) out.yaxis = { gridcolor: grid, tickfont: { size: 12, color: ink } };
    return out;
  }

  function init(box) {
    if (!window.Plotly || box.dataset.ready) return;
    const spec = JSON.parse(box.querySelector("script.book-interactive-data").textContent);
    const plot = box.querySelector(".book-interactive-plot");
    const controls = box.querySelector(".book-interactive-controls");
    const slider = controls.querySelector("input[type=range]");
    const output = controls.querySelector("output");
    const label = controls.querySelector("label").firstChild.textContent.replace(/:\s*$/, "");
    const config = { responsive: true, displaylogo: false, displayModeBar: false };
    plot.hidden = false;
    controls.hidden = false;
    box.classList.add("is-live");
    box.dataset.ready = "1";

    function draw(i) {
      const start = performance.now();
      output.textContent = spec.labels[i];
      slider.setAttribute("aria-valuetext", label + " " + spec.labels[i]);
      return Plotly.react(plot, spec.frames[i], themed(spec.layout, spec.height), config).then(() => {
        box.dataset.frame = String(i);
        box.dataset.drawMs = (performance.now() - start).toFixed(1);
      });
    }

    slider.addEventListener("input", () => draw(Number(slider.value)));
    new MutationObserver(() => draw(Number(slider.value))).observe(document.documentElement, {
      attributes: true,
      attributeFilter: ["data-theme"],
    });
    draw(Number(slider.value));
  }

  function start() {
    document.querySelectorAll(".book-interactive").forEach(init);
  }

  function watch() {
    const boxes = document.querySelectorAll(".book-interactive");
    if (window.Plotly) return start();
    if (!("IntersectionObserver" in window)) return loadPlotly();
    const seen = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) {
          seen.disconnect();
          loadPlotly();
        }
      },
      { rootMargin: "100% 0px" }
    );
    boxes.forEach((box) => seen.observe(box));
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", watch);
  } else {
    watch();
  }
})();
