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

  /// Whether the stream is a terminal.
  var isTerminal: Bool { isatty(descriptor) == 1 }

  /// Writes all of `text` as UTF-8.
  func write(_ text: String) {
    var text = text
    text.withUTF8 { writeAll(UnsafeRawBufferPointer($0)) }
  }

  /// Writes all of `data`. A failed write (a closed pipe, a full disk) ends the process with
  /// status 1, as there is nowhere left to report it.
  func write(_ data: Data) {
    data.withUnsafeBytes { writeAll($0) }
  }

  private func writeAll(_ bytes: UnsafeRawBufferPointer) {
    guard var cursor = bytes.baseAddress else { return }
    var remaining = bytes.count
    while remaining > 0 {
      let written = Glibc.write(descriptor, cursor, remaining)
      if written < 0 {
        if errno == EINTR { continue }
        if descriptor != STDERR_FILENO {
          StandardStream.error.write("Error: cannot write to \(name): \(String(cString: strerror(errno)))\n")
        }
        exit(CLIError.failureStatus)
      }
      cursor += written
      remaining -= written
    }
  }

  /// Reads up to `count` bytes; an empty result means end of input.
  ///
  /// - Throws: `CLIError.failure` when the read fails.
  func read(upTo count: Int) throws -> Data {
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
