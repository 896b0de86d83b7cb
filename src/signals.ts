/**
 * True as soon as whoever holds `set` calls the callback this puts in it (a connection back, a LISTEN
 * live), false after `ms`; the callback leaves the set either way.
 */
export function signalWithin(set: Set<() => void>, ms: number): Promise<boolean> {
  return new Promise((res) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      set.delete(signal);
      res(ok);
    };
    const signal = () => done(true);
    const timer = setTimeout(() => done(false), ms);
    set.add(signal);
  });
}
