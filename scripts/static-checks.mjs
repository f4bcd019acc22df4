#!/usr/bin/env node
// `npm test`'s first step: the type check (`npm run typecheck`) and the lint (`npm run lint`) at once.
// Each is one single-threaded process, so on two cores they take the time of the longer one instead of
// the sum. Each one's output is printed whole once it ends, so the two never interleave; the step fails
// when either fails.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';

/** Runs `npm run <script>`, collecting its output; resolves with its exit code. */
function npmRun(script) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('close', (code, signal) => {
      const text = Buffer.concat(output).toString('utf8');
      if (text !== '') process.stdout.write(`> npm run ${script}\n${text}${text.endsWith('\n') ? '' : '\n'}`);
      if (code !== 0) process.stderr.write(`npm run ${script} failed (${signal ?? `exit code ${code}`}).\n`);
      resolve(code ?? 1);
    });
  });
}

const codes = await Promise.all(['typecheck', 'lint'].map(npmRun));
process.exitCode = codes.some((code) => code !== 0) ? 1 : 0;
