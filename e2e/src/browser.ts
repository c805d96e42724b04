// Headless Chromium for the e2e tests, and a watch on what a page of ours must never do: break its
// CSP or Trusted Types, throw an uncaught error, or ask another origin for anything.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { ARTIFACTS_DIR } from './platform';

/** Debian's Chromium (apt-get install chromium); CHROMIUM_PATH overrides. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// As root Chromium needs --no-sandbox; without the background-networking flags it tries to reach
// Google services, which this machine refuses.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** How long an action or a wait for an element may take before the step fails: generous, for a loaded machine. */
export const WAIT_MS = 60_000;

export interface BrowserSession {
  /** Every page opened in it is watched. */
  context: BrowserContext;
  /** CSP and Trusted Types violations and uncaught page errors, in the order they happened. */
  problems: string[];
  /** Every URL asked for outside the session's origin. */
  otherOrigins: string[];
  close(): Promise<void>;
}

/**
 * Chromium with one 1280x900 context for pages of `origin` (the gateway); what they ask of any other
 * origin is recorded. `args`: more command-line switches (a host name mapped to the gateway).
 */
export async function openBrowser(origin: string, args: string[] = []): Promise<BrowserSession> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium (.ci/run does), or set CHROMIUM_PATH`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...args], timeout: 60_000 });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(WAIT_MS);
  const session: BrowserSession = { context, problems: [], otherOrigins: [], close: () => browser.close() };
  context.on('weberror', (error) => session.problems.push(`page error: ${error.error().message}`));
  // Chromium reports a blocked load or inline code as "... violates the following Content Security
  // Policy directive ..." and a Trusted Types one as "This document requires 'TrustedHTML'
  // assignment", also when the page catches the TypeError that comes with it.
  context.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Trusted ?(Type|HTML|Script)|Refused to/i.test(message.text())) {
      session.problems.push(`console: ${message.text()}`);
    }
  });
  context.on('request', (request) => {
    if (!request.url().startsWith(`${origin}/`)) session.otherOrigins.push(request.url());
  });
  return session;
}

/** Saves what the page shows (all of it unless `fullPage` is false) as `name` in the artifacts dir. */
export async function screenshot(page: Page, name: string, { fullPage = true } = {}): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS_DIR, name), fullPage });
}
