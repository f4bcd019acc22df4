import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's package (`apt-get install chromium`): Playwright cannot download its own browser here. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

export const hasChromium = (): boolean => existsSync(CHROMIUM_PATH);

/**
 * Headless Chromium as root on a closed network: no sandbox (root), and none of the background
 * connections that this machine refuses. Playwright gives each launch a fresh, empty profile.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
