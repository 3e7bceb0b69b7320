import CaskCLIKit
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Standard input, output and error (and the terminal of a password prompt) as raw file
/// descriptors: byte-exact, unbuffered, with `EINTR` retried here and nowhere else in the tool.
struct StandardStream: Sendable {
  let descriptor: Int32
  /// What the stream is, for error messages.
  let name: String

  static let input = StandardStream(descriptor: STDIN_FILENO, name: "standard input")
  static let output = StandardStream(descriptor: STDOUT_FILENO, name: "standard output")
  static let error = StandardStream(descriptor: STDERR_FILENO, name: "standard error")

  /// The standard descriptors (0, 1, 2) that were closed when the process started; each now
  /// holds `/dev/null`. Evaluated first thing in `main`: a descriptor left closed would be the
  /// next file's (a store's `LOCK`, a segment), and a message to standard error would land in
  /// it, or `put` would read a store file as its value.
  static let closedAtStart: Set<Int32> = {
    var closed = Set<Int32>()
    for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(descriptor, F_GETFD) < 0 {
      guard errno == EBADF else { continue }
      closed.insert(descriptor)
      // The lowest free descriptor, so `descriptor` itself (the lower ones are open by now).
      let null = open("/dev/null", descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY)
      if null >= 0 && null != descriptor {
        dup2(null, descriptor)
        close(null)
      }
    }
    return closed
  }()

  /// Fails when the stream is standard input and that was closed at startup: a command that
  /// needs input must not take `/dev/null`'s nothing for an empty value.
  private func requireOpen() throws {
    guard descriptor == STDIN_FILENO, Self.closedAtStart.contains(STDIN_FILENO) else { return }
    throw CLIError.failure("standard input is closed")
  }

  /// Whether the stream is a terminal.
  var isTerminal: Bool { isatty(descriptor) == 1 }

  /// Writes all of `text` as UTF-8. A failed write ends the process, as `write(_: Data)` says.
  func write(_ text: String) {
    var text = text
    text.withUTF8 { endOnFailure(writeAll(UnsafeRawBufferPointer($0))) }
  }

  /// Writes all of `data`. A failed write (a closed pipe, a full disk) ends the process with
  /// status 1, as there is nowhere left to report it. Only for the main thread: ending the
  /// process from another thread would skip the cleanup of the work under way.
  func write(_ data: Data) {
    data.withUnsafeBytes { endOnFailure(writeAll($0)) }
  }

  /// Writes all of `text` as UTF-8 and says whether that worked, never ending the process:
  /// for what is drawn beside the work (the progress bar, from its own thread), which must
  /// stop quietly when its terminal is gone (`EIO` after a hangup).
  ///
  /// - Returns: `false` when a write failed.
  func writeIfPossible(_ text: String) -> Bool {
    var text = text
    return text.withUTF8 { writeAll(UnsafeRawBufferPointer($0)) } == 0
  }

  private func endOnFailure(_ code: Int32) {
    guard code != 0 else { return }
    if descriptor != STDERR_FILENO {
      StandardStream.error.write("Error: cannot write to \(name): \(String(cString: strerror(code)))\n")
    }
    exit(CLIError.failureStatus)
  }

  /// - Returns: 0, or the `errno` of the write that failed.
  private func writeAll(_ bytes: UnsafeRawBufferPointer) -> Int32 {
    guard var cursor = bytes.baseAddress else { return 0 }
    var remaining = bytes.count
    while remaining > 0 {
      let written = Glibc.write(descriptor, cursor, remaining)
      if written < 0 {
        if errno == EINTR { continue }
        return errno
      }
      cursor += written
      remaining -= written
    }
    return 0
  }

  /// Reads up to `count` bytes; an empty result means end of input.
  ///
  /// - Throws: `CLIError.failure` when the read fails.
  func read(upTo count: Int) throws -> Data {
    try requireOpen()
    var data = Data(count: count)
    let received = try data.withUnsafeMutableBytes { buffer -> Int in
      while true {
        let result = Glibc.read(descriptor, buffer.baseAddress, count)
        if result >= 0 { return result }
        if errno != EINTR {
          throw CLIError.failure("cannot read \(name): \(String(cString: strerror(errno)))")
        }
      }
    }
    data.count = received
    return data
  }

  /// Reads everything up to the end of input.
  func readAll() throws -> Data {
    var data = Data()
    while true {
      let chunk = try read(upTo: 1 << 16)
      if chunk.isEmpty { return data }
      data.append(chunk)
    }
  }

  /// Reads one line byte by byte, so that nothing after its newline is consumed; the newline
  /// (and a `\r` before it, or at the end of input, as `--password-file` reads it) is dropped.
  /// `nil` at end of input before any byte.
  func readLineBytes() throws -> [UInt8]? {
    var line: [UInt8] = []
    line.reserveCapacity(256)  // a password should not leave copies behind as the array grows
    var ended = false
    while let byte = try readByte() {
      ended = byte == UInt8(ascii: "\n")
      if ended { break }
      line.append(byte)
    }
    guard ended || !line.isEmpty else { return nil }
    if line.last == UInt8(ascii: "\r") { line.removeLast() }
    return line
  }

  /// Reads one byte; `nil` at end of input.
  func readByte() throws -> UInt8? {
    try requireOpen()
    var byte: UInt8 = 0
    while true {
      let result = Glibc.read(descriptor, &byte, 1)
      if result == 1 { return byte }
      if result == 0 { return nil }
      if errno != EINTR {
        throw CLIError.failure("cannot read \(name): \(String(cString: strerror(errno)))")
      }
    }
  }
}
