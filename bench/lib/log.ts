// Progress lines on stderr, stamped with the time since the run started.
const started = performance.now();

export function progress(message: string): void {
  const s = Math.floor((performance.now() - started) / 1000);
  const stamp = `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
  process.stderr.write(`[bench ${stamp}] ${message}\n`);
}

export function elapsedS(): number {
  return (performance.now() - started) / 1000;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
