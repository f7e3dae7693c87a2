#!/usr/bin/env node
// REL-6: the N-API module under random call sequences for as long as asked (the CI test
// runs 16 seeds × 200 steps). Needs the host build of the module (scripts/test-js.sh puts it
// at $CARGO_TARGET_DIR/arkagent.node). Prints the seeds, steps and time; a failing seed is
// printed with its error and replays exactly.
//   node scripts/napi-sequences.js [seeds=200] [steps=400] [first-seed=1]
'use strict';
const { runSequence, stats } = require('../tests/js/rel_6_sequences');

(async () => {
  const [seeds = 200, steps = 400, first = 1] = process.argv.slice(2).map(Number);
  const started = Date.now();
  for (let seed = first; seed < first + seeds; seed++) {
    try {
      await runSequence(seed, steps);
    } catch (e) {
      console.error(`napi-sequences: seed ${seed} failed: ${e.stack || e}`);
      process.exit(1);
    }
  }
  console.log(`napi-sequences: ${seeds} seeds × ${steps} steps (${seeds * steps} calls) in ${((Date.now() - started) / 1000).toFixed(1)} s, no failure; calls fulfilled ${stats.fulfilled}, rejected ${stats.rejected} ${JSON.stringify(stats.codes)}; reached ${JSON.stringify(stats.reached)}`);
})();
