#if canImport(Glibc)
  import Glibc
#endif

/// Keeps the files this package's modules open off descriptors 0, 1 and 2.
///
/// In a process started with a standard descriptor closed, `open` hands out that number, and
/// whatever the program (or a library in it) then writes to "standard error" lands in the
/// file: a repair warning once destroyed a store segment's header that way, and a decrypted
/// output would take in stray text after it was authenticated. So a descriptor below 3 is moved
/// above 2 (`F_DUPFD_CLOEXEC`) and `/dev/null` takes the low number, so that it is not handed
/// out again. (SQLite keeps its files off these descriptors the same way.) One rule for the
/// store's files (`Syscall.open` in the engine) and the codec's (`RNCryptor+Files`).
package enum StandardDescriptors {
  /// A step that failed, with its `errno`.
  package struct Failure: Error {
    package var operation: String
    package var code: Int32
  }

  /// `descriptor` itself when it is above 2; otherwise a descriptor above 2 for the same open
  /// file, with `/dev/null` put on the low number.
  ///
  /// - Returns: the descriptor to use, or the step that failed (`descriptor` is closed then).
  package static func keepingOff(_ descriptor: Int32) -> Result<Int32, Failure> {
    guard descriptor >= 0, descriptor <= STDERR_FILENO else { return .success(descriptor) }
    let (moved, code) = SystemCall.retrying { fcntl(descriptor, F_DUPFD_CLOEXEC, STDERR_FILENO + 1) }
    guard moved >= 0 else {
      _ = close(descriptor)
      return .failure(Failure(operation: "fcntl (move off a standard descriptor)", code: code))
    }
    // Not O_CLOEXEC: a standard descriptor is one that child processes inherit.
    let (null, nullCode) = SystemCall.retrying { open("/dev/null", O_RDWR) }
    guard null >= 0 else {
      _ = close(moved)
      _ = close(descriptor)
      return .failure(Failure(operation: "open /dev/null (for a closed standard descriptor)", code: nullCode))
    }
    // dup2 replaces the file's low number with /dev/null in one step. A `null` that itself
    // came out below 3 (two standard descriptors were closed) stays: it is /dev/null. Should
    // dup2 fail, the file must at least not stay on the low number.
    if SystemCall.retrying({ dup2(null, descriptor) }).result < 0 { _ = close(descriptor) }
    if null > STDERR_FILENO { _ = close(null) }
    return .success(moved)
  }

}
