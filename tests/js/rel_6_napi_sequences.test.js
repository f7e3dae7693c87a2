'use strict';
// REL-6 (issue 42 item 2): the N-API module under random call sequences
// (tests/js/rel_6_sequences.js), a short fixed budget in CI: 12 seeds × 150 steps. Longer
// runs: `node scripts/napi-sequences.js [seeds] [steps]`.

const test = require('node:test');

const assert = require('node:assert/strict');

const { runSequence, stats } = require('./rel_6_sequences');

test('rel_6_napi_random_call_sequences_keep_every_promise', async () => {
  for (let seed = 1; seed <= 12; seed++) {
    await runSequence(seed * 7919, 150);
  }
  // The sequences reach both outcomes (a driver that only ever fails, or never calls, proves nothing).
  assert.ok(stats.fulfilled > 20 && stats.rejected > 5, JSON.stringify(stats));
});
