/**
 * A request's deadline in emulator ms for a test client on an accelerated emulator clock: ten minutes,
 * 6 s of real time at speed 100. The default 30 s is 0.3 s of real time at speed 100, which a loaded
 * machine's answer can pass (and a start is not retried after a timeout). For tests that are not about
 * deadlines.
 */
export const REQUEST_TIMEOUT_MS = 600_000;
