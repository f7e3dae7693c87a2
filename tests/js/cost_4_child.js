'use strict';
// COST-4: the child process of tests/js/cost_4_prefix.test.js's kill test (not a test file):
// `node cost_4_child.js <db> <from> <to>` resumes the session "prefix" in the store,
// runs "task from" … "task to-1", prints READY and waits to be SIGKILLed.

const { prefixRuntime } = require('./cost_4_session');

async function main() {
  const [db, from, to] = process.argv.slice(2);
  const { runtime } = prefixRuntime({ storePath: db });
  for (let i = Number(from); i < Number(to); i++) await runtime.run(`task ${i}`);
  process.stdout.write('READY\n');
  setInterval(() => {}, 1000);
}

main().catch((e) => {
  process.stderr.write(`${e.stack}\n`);
  process.exit(1);
});
