import CaskCLIKit
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Reading a file that holds a secret (a password file, a header file) whatever it is: a
/// regular file, a pipe or FIFO (`--password-file /dev/stdin`, a shell's `<(...)`), a
/// character device. It is read with `read` until end of input: the size `stat` gives is 0
/// for a pipe, so it is never trusted.
enum SecretFile {
  /// The most a secret file may hold. Prevents: `--password-file /dev/zero` (or a stream
  /// that never ends) filling memory forever instead of failing.
  static let maximumLength = 1 << 20

  /// The bytes of the file at `path`, up to its end of input.
  ///
  /// The bytes are read into one buffer allocated once, wiped and freed before returning, so
  /// no copy of them is left behind by a growing array; the caller wipes the result.
  ///
  /// - Parameter what: how messages name the file, e.g. "the password file".
  /// - Throws: `CLIError.failure` naming the file and the system's reason (`strerror`) when it
  ///   cannot be opened or read, or when it holds more than `maximumLength` bytes. Never
  ///   anything the file holds.
  static func read(_ path: String, what: String) throws -> [UInt8] {
    let named = "\(what) \(MessageText.quoted(path))"
    var descriptor: Int32
    repeat { descriptor = open(path, O_RDONLY | O_CLOEXEC) } while descriptor < 0 && errno == EINTR
    guard descriptor >= 0 else { throw failure("cannot read \(named)", errno) }
    defer { close(descriptor) }
    // One byte more than allowed, to tell a file of exactly the maximum from a longer one.
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: maximumLength + 1, alignment: 1)
    defer {
      if let base = buffer.baseAddress { explicit_bzero(base, buffer.count) }
      buffer.deallocate()
    }
    guard let base = buffer.baseAddress else { return [] }
    var length = 0
    while length < buffer.count {
      let count = Glibc.read(descriptor, base + length, buffer.count - length)
      if count == 0 { break }
      if count < 0 {
        if errno == EINTR { continue }
        throw failure("cannot read \(named)", errno)
      }
      length += count
    }
    guard length <= maximumLength else {
      throw CLIError.failure("\(named) is longer than \(maximumLength >> 20) MiB")
    }
    return [UInt8](UnsafeRawBufferPointer(rebasing: buffer[0..<length]))
  }

  private static func failure(_ message: String, _ code: Int32) -> CLIError {
    CLIError.failure("\(message): \(String(cString: strerror(code)))")
  }
}
