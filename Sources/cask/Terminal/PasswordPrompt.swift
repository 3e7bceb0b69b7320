import CaskCLIKit

#if canImport(Glibc)
  import Glibc
#endif

/// Asks for a password on the terminal, without echo.
///
/// The prompt is written to, and the answer read from, `/dev/tty`, so it works while standard
/// input carries data (`cask put STORE KEY < file`). It is only offered when standard input or
/// standard error is a terminal: a command whose streams are all pipes never waits on a prompt.
///
/// The terminal is switched to non-canonical mode with echo and signals off, and restored
/// before returning, also when the user cancels with Ctrl-C or Ctrl-D.
enum PasswordPrompt {
  /// Whether a prompt can be shown.
  static var isAvailable: Bool {
    guard StandardStream.input.isTerminal || StandardStream.error.isTerminal else { return false }
    let terminal = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard terminal >= 0 else { return false }
    close(terminal)
    return true
  }

  /// Shows `prompt` and reads a line without echo.
  ///
  /// - Returns: the bytes typed, or `nil` when there is no terminal.
  /// - Throws: `CLIError.failure` when the user cancels.
  static func read(_ prompt: String) throws -> [UInt8]? {
    guard StandardStream.input.isTerminal || StandardStream.error.isTerminal else { return nil }
    let terminal = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard terminal >= 0 else { return nil }
    defer { close(terminal) }
    var original = termios()
    guard tcgetattr(terminal, &original) == 0 else { return nil }
    var quiet = original
    quiet.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG)
    withUnsafeMutableBytes(of: &quiet.c_cc) { characters in
      characters[Int(VMIN)] = 1
      characters[Int(VTIME)] = 0
    }
    guard tcsetattr(terminal, TCSAFLUSH, &quiet) == 0 else { return nil }
    let stream = StandardStream(descriptor: terminal, name: "the terminal")
    defer {
      _ = tcsetattr(terminal, TCSAFLUSH, &original)
      stream.write("\n")
    }
    // The prompt names a store or file by the path typed: escaped, so that it stays one line.
    stream.write(MessageText.escaped(prompt))
    return try readLine(from: stream)
  }

  private static func readLine(from terminal: StandardStream) throws -> [UInt8] {
    var line: [UInt8] = []
    line.reserveCapacity(256)
    while true {
      guard let byte = try terminal.readByte() else {
        Secret.wipe(&line)
        throw CLIError.failure("cannot read the password from the terminal")
      }
      switch byte {
      case 0x0A, 0x0D:  // Return
        return line
      case 0x03:  // Ctrl-C
        Secret.wipe(&line)
        throw CLIError.failure("cancelled")
      case 0x04 where line.isEmpty:  // Ctrl-D on an empty line
        throw CLIError.failure("cancelled")
      case 0x7F, 0x08:  // Backspace: drop the last UTF-8 character
        while let last = line.popLast(), last & 0xC0 == 0x80 {}
      case 0x15:  // Ctrl-U
        Secret.wipe(&line)
        line.removeAll(keepingCapacity: true)
      default:
        line.append(byte)
      }
    }
  }
}
