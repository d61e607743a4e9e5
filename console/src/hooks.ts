/** Data loading for pages: one request per change of `deps`, optionally repeated while the page is visible. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  /** When the data last arrived. */
  loadedAt: Date | undefined;
  reload(): void;
}

/**
 * Runs `load` now and whenever `deps` change; with `refreshMs`, again after each answer while the tab is
 * visible. Answers to superseded requests are dropped.
 */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[], refreshMs?: number): Loaded<T> {
  const [state, setState] = useState<Omit<Loaded<T>, 'reload'>>({ data: undefined, error: undefined, loading: true, loadedAt: undefined });
  const generation = useRef(0);
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  useEffect(() => {
    const mine = ++generation.current;
    let timer: ReturnType<typeof setTimeout> | undefined;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => mine === generation.current && setState({ data, error: undefined, loading: false, loadedAt: new Date() }),
      (error: Error) => mine === generation.current && setState((s) => ({ ...s, error, loading: false })),
    ).finally(() => {
      if (refreshMs && mine === generation.current) timer = setTimeout(() => !document.hidden && reload(), refreshMs);
    });
    return () => clearTimeout(timer);
  }, [...deps, tick]);
  return { ...state, reload };
}
