/** Where a command writes: the process's stdout and stderr, or a test's buffers. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}
