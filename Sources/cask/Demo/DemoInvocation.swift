import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// How the commands `demo` suggests afterwards call this tool, so that they run as printed:
/// `cask` when the `cask` found on `PATH` is this very executable, otherwise the path of the
/// running executable. Prevents: hints that say `cask ...` after `swift run cask demo`, which
/// leaves the binary under `.build` and off `PATH`, so every hint failed with "command not found".
enum DemoInvocation {
  /// The word that runs this executable from the current directory, quoted for a POSIX shell.
  static func command() -> String {
    guard let running = resolved("/proc/self/exe") else { return "cask" }
    let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? ""
    for directory in searchPath.split(separator: ":", omittingEmptySubsequences: false) {
      // An empty entry means the current directory, as for the shell.
      let candidate = (directory.isEmpty ? "." : String(directory)) + "/cask"
      guard access(candidate, X_OK) == 0 else { continue }
      // The first `cask` on PATH is the one the shell runs: this one, or another.
      if resolved(candidate) == running { return "cask" }
      break
    }
    let current = FileManager.default.currentDirectoryPath
    let relative =
      running.hasPrefix(current + "/") && current != "/" ? String(running.dropFirst(current.count + 1)) : running
    return shellWord(relative.contains("/") ? relative : "./" + relative)
  }

  /// `word` as one word of a POSIX shell: as it is when it holds only characters no shell
  /// treats specially, otherwise in single quotes (a quote inside written `'\''`).
  static func shellWord(_ word: String) -> String {
    let plain = word.unicodeScalars.allSatisfy { scalar in
      scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "/._-+=:,@%".unicodeScalars.contains(scalar))
    }
    if plain && !word.isEmpty { return word }
    return "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
  }

  /// The path with every symbolic link resolved, or nil when it cannot be.
  private static func resolved(_ path: String) -> String? {
    guard let pointer = realpath(path, nil) else { return nil }
    defer { free(pointer) }
    return String(cString: pointer)
  }
}
