'use strict';
// REL-6 (issue 42 item 2): the N-API module under random call sequences
// (tests/js/rel_6_sequences.js), a short fixed budget in CI: 48 seeds × 200 steps. Longer
// runs: `node scripts/napi-sequences.js [seeds] [steps]`.

const test = require('node:test');

const assert = require('node:assert/strict');

const { runSequence, stats } = require('./rel_6_sequences');

test('rel_6_napi_random_call_sequences_keep_every_promise', async () => {
  for (let seed = 1; seed <= 48; seed++) {
    await runSequence(seed * 7919, 200);
  }
  // The sequences reach both outcomes (a driver that only ever fails, or never calls, proves
  // nothing), and the steps that need a state to act on find one.
  assert.ok(stats.fulfilled > 100 && stats.rejected > 20, JSON.stringify(stats));
  const { compressions, abandoned, orphanAnswers, approvals } = stats.reached;
  assert.ok(compressions > 0 && abandoned > 0 && orphanAnswers > 0 && approvals > 0, JSON.stringify(stats.reached));
});
