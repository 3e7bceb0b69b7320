import CaskCLIKit
import CipherCask
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// `encrypt` and `decrypt` whose input or output is a stream (`-`, a device, a pipe), which
/// the library's file helpers (temporary file, rename) cannot take.
enum StreamCrypt {
  private static let chunkSize = 1 << 20

  /// Encrypts `input` (`-`: standard input) to the stream `output` (nil: standard output).
  static func encrypt(_ input: String, to output: String?, password: String) throws {
    let encryptor = try RNCryptor.Encryptor(password: password)
    let reader = try Reader(input)
    defer { reader.close() }
    let writer = try Writer(output)
    defer { writer.close() }
    while true {
      let chunk = try reader.read(upTo: chunkSize)
      if chunk.isEmpty { break }
      try writer.write(encryptor.update(chunk))
    }
    try writer.write(encryptor.finalize())
  }

  /// Decrypts `input` to the stream `output`. A regular file is read twice: once to
  /// authenticate it, then to write the plaintext, so a wrong password or a modified file
  /// writes nothing. Standard input cannot be read twice: its plaintext is written as it
  /// comes, and a failed authentication at its end says so.
  static func decrypt(_ input: String, to output: String?, password: String) throws {
    let rereadable = input != "-" && isRegularFile(input)
    if rereadable { try run(RNCryptor.Decryptor(password: password), input, nil) }
    let writer = try Writer(output)
    defer { writer.close() }
    do {
      try run(RNCryptor.Decryptor(password: password), input, writer)
    } catch RNCryptor.Error.authenticationFailed where !rereadable {
      throw CLIError.failure(
        "cannot decrypt '\(input)': wrong password, or the file was modified; "
          + "what was written to \(writer.name) is not authentic: discard it")
    }
  }

  private static func run(_ decryptor: RNCryptor.Decryptor, _ input: String, _ writer: Writer?) throws {
    let reader = try Reader(input)
    defer { reader.close() }
    while true {
      let chunk = try reader.read(upTo: chunkSize)
      if chunk.isEmpty { break }
      let plaintext = try decryptor.update(chunk)
      try writer?.write(plaintext)
    }
    let last = try decryptor.finalize()
    try writer?.write(last)
  }

  static func isRegularFile(_ path: String) -> Bool {
    var status = stat()
    return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
  }

  /// IN: a file, or standard input for `-`.
  private final class Reader {
    let descriptor: Int32
    let name: String
    private let owned: Bool

    init(_ path: String) throws {
      if path == "-" {
        guard !StandardStream.closedAtStart.contains(STDIN_FILENO) else {
          throw CLIError.failure("standard input is closed")
        }
        (descriptor, name, owned) = (STDIN_FILENO, "standard input", false)
        return
      }
      let opened = Glibc.open(path, O_RDONLY | O_CLOEXEC)
      guard opened >= 0 else { throw CLIError.failure("cannot open '\(path)': \(String(cString: strerror(errno)))") }
      (descriptor, name, owned) = (opened, "'\(path)'", true)
    }

    func read(upTo count: Int) throws -> Data {
      var data = Data(count: count)
      let received = try data.withUnsafeMutableBytes { buffer -> Int in
        while true {
          let result = Glibc.read(descriptor, buffer.baseAddress, count)
          if result >= 0 { return result }
          if errno != EINTR { throw CLIError.failure("cannot read \(name): \(String(cString: strerror(errno)))") }
        }
      }
      data.count = received
      return data
    }

    func close() { if owned { Glibc.close(descriptor) } }
  }

  /// OUT as a stream: standard output, or a device or pipe opened for writing.
  private final class Writer {
    let descriptor: Int32
    let name: String
    private let owned: Bool

    init(_ path: String?) throws {
      guard let path else {
        (descriptor, name, owned) = (STDOUT_FILENO, "standard output", false)
        return
      }
      let opened = Glibc.open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC)
      guard opened >= 0 else { throw CLIError.failure("cannot write '\(path)': \(String(cString: strerror(errno)))") }
      (descriptor, name, owned) = (opened, "'\(path)'", true)
    }

    func write(_ data: Data) throws {
      try data.withUnsafeBytes { bytes in
        guard var cursor = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
          let written = Glibc.write(descriptor, cursor, remaining)
          if written < 0 {
            if errno == EINTR { continue }
            throw CLIError.failure("cannot write to \(name): \(String(cString: strerror(errno)))")
          }
          cursor += written
          remaining -= written
        }
      }
    }

    func close() { if owned { Glibc.close(descriptor) } }
  }
}
