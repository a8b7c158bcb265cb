// Debian's chromium for the console tests, driven by puppeteer-core (no browser download).
import { existsSync } from 'node:fs';
import puppeteer, { type Browser } from 'puppeteer-core';

const CHROMIUM = process.env.TOOLGATE_TEST_CHROMIUM ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: the console test needs Debian's chromium (apt-get install -y chromium; npm test installs it when run as root, see scripts/test-deps.mjs).`);
  }
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}
