import CaskCLIKit
import CipherCask
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// `cask put STORE KEY [--file F]`: stores a value, byte for byte.
enum PutCommand: Subcommand {
  static var spec: CommandSpec { .put }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let key = try KeyText.storeKey(arguments)
    let file = arguments.option("file")
    if (file == nil || file == "-") && arguments.flag("password-stdin") {
      throw CLIError.usage("--password-stdin needs --file with a file: standard input carries the value", spec)
    }
    // Prevents: a password asked for before a missing or unreadable file is named. The file
    // is read first (with the reason it cannot be); standard input after the open, as before.
    let fromFile: Data? = try file.flatMap { $0 == "-" ? nil : try read($0) }
    try StoreAccess.withStore(path, arguments, mode: .readWrite) { store in
      let value = try fromFile ?? StandardStream.input.readAll()
      try store.put(value, forKey: key)
    }
  }

  /// The bytes of `file`, or a failure naming it and the reason.
  private static func read(_ file: String) throws -> Data {
    let descriptor = open(file, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw CLIError.failure("cannot read '\(file)': \(String(cString: strerror(errno)))") }
    defer { close(descriptor) }
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = Glibc.read(descriptor, &buffer, buffer.count)
      if count == 0 { return data }
      if count < 0 {
        if errno == EINTR { continue }
        throw CLIError.failure("cannot read '\(file)': \(String(cString: strerror(errno)))")
      }
      data.append(contentsOf: buffer[0..<count])
    }
  }
}
