/* Native code between managed frames: compiled -O2 -fomit-frame-pointer, keeps k in a
 * callee-saved register across the callback (so its CFI saves one). */
long apply_cb(long (*fn)(void *, long), void *obj, long k) {
  long r = fn(obj, k * 2 + 1);
  return r * 3 + k;
}
