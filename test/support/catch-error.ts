/** The error `fn` throws; fails the test when it does not throw. */
export function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error("expected an error");
}
