#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The one place where a system call interrupted by a signal is retried.
///
/// Every module of the package that calls the C library directly (the codec's file helpers,
/// the engine's `Syscall`, the command-line tool's streams) goes through `retrying`, so that
/// `EINTR` is handled by one rule: call again. (`close` is the exception, and is not retried:
/// on Linux the descriptor is released even when `close` reports `EINTR`.)
package enum SystemCall {
  /// Runs `call` until it stops failing with `EINTR`.
  ///
  /// - Returns: the call's result and, when it is negative (the call failed), its `errno`;
  ///   `0` as `errno` otherwise.
  @inline(__always)
  package static func retrying<T: BinaryInteger>(_ call: () -> T) -> (result: T, errno: Int32) {
    while true {
      let result = call()
      if result >= 0 { return (result, 0) }
      let code = errno
      if code != EINTR { return (result, code) }
    }
  }
}
