/**
 * Graceful shutdown (X4): on SIGTERM or SIGINT, run the stop hooks in order (stop taking work, finish or
 * return what is in flight, close connections), then exit. A second signal exits at once.
 */
export function onShutdown(stop: () => Promise<void>, log: (msg: string) => void, timeoutMs = 25_000): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log(`${signal} received: stopping`);
    const timer = setTimeout(() => {
      log('shutdown timed out');
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    stop()
      .then(() => process.exit(0))
      .catch(() => process.exit(1));
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
}
