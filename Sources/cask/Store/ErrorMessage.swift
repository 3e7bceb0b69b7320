import CaskCLIKit
import CipherCask
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The one-line messages `cask` prints for the libraries' errors. Each names the store or
/// file it is about, and none contains a password, a key, a value or an identifier.
enum ErrorMessage {
  /// A store error, about the store at `path`.
  static func describe(_ error: any Error, store path: String) -> String {
    guard let error = error as? CaskError else { return describe(error) }
    switch error {
    case .wrongPassword:
      return "wrong password for store '\(path)'"
    case .locked:
      return "store '\(path)' is locked: another process has it open"
    case .alreadyOpen:
      return "store '\(path)' is already open in this process"
    case .notACaskStore:
      return "'\(path)' is not a CipherCask store"
    case .storeNotFound:
      return "store '\(path)' does not exist (make one with 'cask create \(path)')"
    case .unsupportedVersion(let found, let supported):
      let newer = found > supported ? " (written by a newer CipherCask)" : ""
      return
        "store '\(path)' has format version \(found)\(newer), which this cask does not read (it reads \(supported))"
    case .wrongCredentialType:
      return "store '\(path)' was created with raw keys, not a password"
    case .corrupt(let file, let offset, let reason):
      let name = (file as NSString).lastPathComponent
      guard name != CaskFormat.headerFileName else {
        return "store '\(path)' is damaged: its header (\(name)) does not read: \(reason)"
      }
      return "store '\(path)' is damaged: \(name) at offset \(offset): \(reason) (run 'cask verify \(path)')"
    case .integrityViolation(let file, let reason):
      let name = (file as NSString).lastPathComponent
      return
        "store '\(path)' does not match what it authenticated (\(name): \(reason)); it may have been "
        + "tampered with or rolled back"
    case .io, .closed, .readOnly, .crypto, .reentrantCall:
      return "store '\(path)': \(error)"
    case .invalidKey, .valueTooLarge:
      return error.description
    case .writeRefused(let group, _):
      return
        "store '\(path)': collection '\(group)' has secondary indexes recorded in the store, which only an "
        + "app that declares them can keep; nothing was written"
    }
  }

  /// An RNCryptor error while encrypting or decrypting the file at `path`.
  static func describe(_ error: any Error, file path: String) -> String {
    guard let error = error as? RNCryptor.Error else { return describe(error) }
    switch error {
    case .authenticationFailed:
      return "cannot decrypt '\(path)': wrong password, or the file was modified"
    case .messageTooShort, .unknownVersion, .unknownOptions, .badPadding:
      return "'\(path)' is not an intact RNCryptor v3 file"
    case .wrongCredentialType(.keys):
      return "'\(path)' is an RNCryptor key message; cask decrypts password messages only"
    default:
      return describe(error)
    }
  }

  /// Any other error.
  static func describe(_ error: any Error) -> String {
    switch error {
    case let error as CLIError:
      switch error {
      case .usage(let message, _), .failure(let message): return message
      }
    case let error as RNCryptor.Error:
      if case .file(let operation, let path, let code) = error {
        return "cannot \(operation) '\(path)': \(String(cString: strerror(code)))"
      }
      if case .emptyPassword = error { return "the password is empty" }
      return error.description
    case let error as CaskError:
      return error.description
    case let error as CollectionError:
      return error.description
    case let error as CocoaError:
      let path = (error.userInfo[NSFilePathErrorKey] as? String).map { " '\($0)'" } ?? ""
      return "file operation failed\(path): \(error.localizedDescription)"
    default:
      return String(describing: error)
    }
  }
}
