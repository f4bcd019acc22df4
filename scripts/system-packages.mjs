#!/usr/bin/env node
// Provides what `npm test` needs from outside npm: Debian's `chromium` (the browser suite drives it;
// Playwright cannot download its own browser here), `redis-server` (a real server for the Redis
// tests, started by a test helper on a unix socket) and util-linux's `script` from `bsdutils` (the
// command's tests run it in a pseudo-terminal, as in a user's terminal). Run by npm before `npm test` (`pretest`), so a
// fresh machine needs only `npm install` then `npm test`. Installs with apt-get when a package is
// missing and this machine allows it (root, or password-less sudo); otherwise it fails with one sentence
// saying what to install. Plain Node, no dependencies: it runs before anything is built.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Each Debian package and the program that shows it is installed. */
const PACKAGES = [
  { name: 'chromium', program: '/usr/bin/chromium' },
  { name: 'redis-server', program: 'redis-server' },
  { name: 'bsdutils', program: 'script' },
];

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Whether `program` (a path, or a name looked up on PATH, sbin folders included) can be run. */
function installed(program) {
  if (program.includes('/')) return executable(program);
  const folders = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/bin', '/sbin', '/bin'];
  return folders.some((folder) => folder !== '' && executable(join(folder, program)));
}

function succeeds(command, args) {
  return spawnSync(command, args, { stdio: 'ignore' }).status === 0;
}

/** How to run apt-get as root here, or undefined when this machine does not let us. */
function aptGet() {
  if (!installed('apt-get')) return undefined;
  if (process.getuid?.() === 0) return ['apt-get'];
  if (installed('sudo') && succeeds('sudo', ['-n', 'true'])) return ['sudo', '-n', 'apt-get'];
  return undefined;
}

function run([command, ...args]) {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const { status } = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], env });
  return status === 0;
}

const missing = PACKAGES.filter((pkg) => !installed(pkg.program)).map((pkg) => pkg.name);
if (missing.length > 0) {
  const names = missing.join(' ');
  const apt = aptGet();
  if (apt === undefined) {
    console.error(`npm test needs Debian's ${names}, which this machine lacks and flowstream cannot install here (no root, no password-less sudo, or no apt-get): run \`sudo apt-get install -y ${names}\` and try again.`);
    process.exit(1);
  }
  console.log(`Installing Debian's ${names} for the tests (apt-get)…`);
  // The package lists of a fresh machine are empty or stale: update them first (apt-get needs it).
  const ok = run([...apt, 'update', '-qq']) && run([...apt, 'install', '-y', '-qq', ...missing]);
  const still = PACKAGES.filter((pkg) => !installed(pkg.program)).map((pkg) => pkg.name);
  if (!ok || still.length > 0) {
    console.error(`npm test needs Debian's ${still.join(' ') || names}, and \`apt-get install -y ${names}\` did not provide it: see apt-get's messages above.`);
    process.exit(1);
  }
}
