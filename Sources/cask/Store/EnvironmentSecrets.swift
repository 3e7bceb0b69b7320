import CipherCask
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The variables that may hand `cask` a secret: `CASK_PASSWORD`, `CASK_NEW_PASSWORD`,
/// `CASK_EXPORT_PASSWORD` and `CASK_PULL_HEADERS`.
///
/// `captureAtStart()`, the first thing `main` does, copies each into a `SecureBytes` buffer,
/// wipes the bytes where the process received them and removes the variable, whatever the
/// command: the kernel shows that memory in `/proc/PID/environ` for as long as the process
/// runs, and a process `cask` (or a library in it) starts would inherit the variable. The
/// commands that use a value take it from here.
enum EnvironmentSecrets {
  static let names = [
    PasswordSource.environmentVariable, PasswordSource.newEnvironmentVariable,
    PasswordSource.exportEnvironmentVariable, RemoteHeaders.environmentVariable,
  ]

  private static let captured = Mutex<[String: SecureBytes]>([:])

  /// Takes every variable of `names` out of the environment.
  static func captureAtStart() {
    for name in names {
      guard let value = getenv(name) else { continue }
      let count = strlen(value)
      let bytes = SecureBytes(UnsafeRawBufferPointer(start: value, count: count))
      explicit_bzero(value, count)
      unsetenv(name)
      captured.withLock { $0[name] = bytes }
    }
  }

  /// Whether `name` was set when the process started (even to an empty value).
  static func isSet(_ name: String) -> Bool {
    captured.withLock { $0[name] != nil }
  }

  /// The bytes `name` held at start, as the process received them, in a buffer the caller
  /// wipes (`Secret.wipe`); nil when it was not set.
  static func bytes(_ name: String) -> [UInt8]? {
    guard let value = captured.withLock({ $0[name] }) else { return nil }
    return value.withUnsafeBytes { buffer in
      var bytes = [UInt8]()
      bytes.reserveCapacity(buffer.count + 1)  // no copies left behind as the array grows
      bytes.append(contentsOf: buffer)
      return bytes
    }
  }
}
