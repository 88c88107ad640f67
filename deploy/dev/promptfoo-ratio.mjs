// promptfoo-ratio.mjs: the pieces of promptfoo-ratio.sh that read and write
// JSON. Each command exits 1 with a message naming the file (and line) when
// its input is not what it wants.
//
//   suite REFERENCES.jsonl OUT_DIR BASE_URL
//     turns the prompts a benchline run sends and their references, as
//     deploy/dev/promptfoo-suite prints them (one JSON object per sample,
//     {"messages": [{"role": "user", "content": ...}], "content": ...})
//     into a promptfoo suite that sends the same prompts to the same endpoint:
//       OUT_DIR/tests.jsonl           one test per sample: the prompt as a
//                                     variable and an `equals` assertion on
//                                     the reference (the synthetic task's
//                                     exact match)
//       OUT_DIR/promptfooconfig.json  the prompt "{{prompt}}", the openai:chat
//                                     provider for model "reference" at
//                                     BASE_URL, tests from tests.jsonl
//     and prints the number of tests. Every line must be one user message
//     with a text reference and no Nunjucks tag (promptfoo renders prompts
//     as templates): the comparison needs the same plain chat prompts.
//
//   check-benchline SUMMARY.json N
//     checks that a `benchline eval --json` summary scored N samples with
//     exact = 1.
//
//   check-promptfoo RESULTS.json N
//     checks that a `promptfoo eval -o RESULTS.json` passed N tests, with no
//     failure and no error.
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

function fail(msg) {
  process.stderr.write(`promptfoo-ratio: ${msg}\n`);
  process.exit(1);
}

function readJSON(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    fail(`${file}: ${err.message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    fail(`${file}: not JSON: ${err.message}`);
  }
}

function count(arg) {
  const n = Number(arg);
  if (!Number.isInteger(n) || n <= 0) fail(`N must be a positive integer, got ${JSON.stringify(arg)}`);
  return n;
}

async function suite(refs, out, baseURL) {
  const tests = [];
  let line = 0;
  const input = createReadStream(refs);
  input.on('error', (err) => fail(`${refs}: ${err.message}`));
  for await (const text of createInterface({ input, crlfDelay: Infinity })) {
    line++;
    if (text.trim() === '') continue;
    let ref;
    try {
      ref = JSON.parse(text);
    } catch (err) {
      fail(`${refs}:${line}: not JSON: ${err.message}`);
    }
    const msgs = ref.messages;
    if (!Array.isArray(msgs) || msgs.length !== 1 || msgs[0].role !== 'user' || typeof msgs[0].content !== 'string') {
      fail(`${refs}:${line}: want one user message with string content`);
    }
    if (/\{\{|\{%|\{#/.test(msgs[0].content)) {
      fail(`${refs}:${line}: the prompt holds a Nunjucks tag ({{, {% or {#), which promptfoo would render: it would not send the same prompt`);
    }
    if (typeof ref.content !== 'string' || ref.content === '' || ref.tool_calls || ref.reward) {
      fail(`${refs}:${line}: want a text reference (no tool calls, not a reward reference)`);
    }
    tests.push(JSON.stringify({ vars: { prompt: msgs[0].content }, assert: [{ type: 'equals', value: ref.content }] }));
  }
  if (tests.length === 0) fail(`${refs}: no references`);
  writeFileSync(join(out, 'tests.jsonl'), tests.join('\n') + '\n');
  const config = {
    description: 'benchline promptfoo-ratio: the prompts of a benchline run of baseline/reference',
    prompts: ['{{prompt}}'],
    providers: [{
      id: 'openai:chat:reference',
      label: 'baseline/reference',
      config: { apiBaseUrl: baseURL, apiKey: 'benchline-baseline' },
    }],
    tests: `file://${resolve(out, 'tests.jsonl')}`,
    sharing: false,
  };
  writeFileSync(join(out, 'promptfooconfig.json'), JSON.stringify(config, null, 2) + '\n');
  console.log(tests.length);
}

function checkBenchline(file, n) {
  const s = readJSON(file);
  const exact = (s.metrics || []).find((m) => m.name === 'exact');
  if (s.samples !== n || s.scored !== n || !exact || exact.mean !== 1) {
    fail(`${file}: run ${s.run_id}: want ${n} samples scored with exact = 1, got ${s.samples} samples, ${s.scored} scored, exact ${exact ? exact.mean : 'missing'}`);
  }
}

function checkPromptfoo(file, n) {
  const results = readJSON(file).results;
  const s = results?.stats;
  if (!s) fail(`${file}: no results.stats`);
  if (s.successes !== n || s.failures !== 0 || s.errors !== 0) {
    // Say why the first test that did not pass failed: the file goes with the
    // script's temporary directory.
    const bad = (results.results || []).find((r) => !r.success);
    let why = '';
    if (bad) {
      const reason = bad.error || bad.gradingResult?.reason || 'no reason given';
      const prompt = String(bad.vars?.prompt ?? '').slice(0, 40);
      why = `; the first: test ${bad.testIdx} (prompt ${JSON.stringify(prompt)}...): ${reason}`;
    }
    fail(`${file}: want ${n} tests passed, got ${s.successes} passed, ${s.failures} failed, ${s.errors} errors${why}`);
  }
}

const [cmd, ...args] = process.argv.slice(2);
const usage = 'usage: node promptfoo-ratio.mjs suite REFERENCES.jsonl OUT_DIR BASE_URL | check-benchline SUMMARY.json N | check-promptfoo RESULTS.json N';
switch (cmd) {
  case 'suite':
    if (args.length !== 3) fail(usage);
    await suite(...args);
    break;
  case 'check-benchline':
    if (args.length !== 2) fail(usage);
    checkBenchline(args[0], count(args[1]));
    break;
  case 'check-promptfoo':
    if (args.length !== 2) fail(usage);
    checkPromptfoo(args[0], count(args[1]));
    break;
  default:
    fail(usage);
}
