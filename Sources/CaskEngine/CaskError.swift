import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Errors of the storage engine.
///
/// No description contains a password, a key, an identifier or a value: corruption is located
/// by file and offset, I/O failures by operation, path and `errno`. (The collection layer's
/// errors, decoding and import failures among them, are its own `CollectionError`.)
public enum CaskError: Error, Sendable, Equatable {
  // MARK: Opening

  /// Thrown when the password (or keys) do not open the store. Nothing was written.
  case wrongPassword
  /// Thrown when the directory holds no CipherCask store (no header, or a header that is not
  /// ours) and `create` was not asked for, or a file at the path is not a directory.
  case notACaskStore(path: String)
  /// Thrown when nothing exists at the path and the open may not create a store there
  /// (`createIfMissing` is false, or the open is read-only). Nothing was created.
  case storeNotFound(path: String)
  /// Thrown when the store (its header or a segment) has a format version this library does
  /// not read: a newer one, or the withdrawn version 1.
  case unsupportedVersion(found: Int, supported: Int)
  /// Thrown when another process has the store open (for writing, or, for a writer, at all).
  case locked(path: String)
  /// Thrown when another `CaskStore` of this process has the store open: use that one (a
  /// `CaskStore` is `Sendable`), or close it first.
  case alreadyOpen(path: String)
  /// Thrown when a store opened with a password is given keys, or the reverse.
  case wrongCredentialType

  // MARK: Using

  /// Thrown when a key is empty or longer than `CaskFormat.maximumKeyLength` UTF-8 bytes (and
  /// by the collection layer for a collection name it cannot use, or a collection of another
  /// store in a batch).
  case invalidKey(reason: String)
  /// Thrown when a value is larger than `CaskFormat.maximumValueLength` bytes.
  case valueTooLarge(length: Int, maximum: Int)
  /// Thrown when the store has been closed. (A write to a store opened read-only throws
  /// `readOnly`.)
  case closed
  /// Thrown when a write is attempted on a store opened read-only.
  case readOnly
  /// Thrown when a transaction body or a change observer calls back into an operation of the
  /// same store that needs its writer (a write, a nested transaction, `sync`, `compact`,
  /// `verify`, a password change, `close`): they run with the writer held, so the call would
  /// wait for itself forever. Reads are fine there. Nothing was done.
  case reentrantCall(operation: String)
  /// Thrown when a write to a group (a collection) is refused before anything is written: a
  /// layer above keeps data derived from the group's keys (a collection's secondary indexes
  /// recorded in the store), and the writing code cannot keep it: a collection handle made
  /// without its indexes in a process where none declared them, a raw `put`, `delete` or
  /// `batch`, a tool. `reason` says what can write it.
  case writeRefused(group: String, reason: String)

  // MARK: Damage

  /// Thrown when a file of the store is damaged where it cannot be skipped: the header, or a
  /// record that `get` was asked for.
  case corrupt(file: String, offset: UInt64, reason: String)

  // MARK: The platform

  /// Thrown by open (and `verify(expecting:)`) when the files disagree with what the store
  /// authenticated (format version 3): a segment missing, cut short, grown, put back from an
  /// older copy or planted, a record not at the place it was sealed for, a damaged manifest,
  /// or a store older than an integrity token. Serving such a log could bring deleted keys
  /// back. `CaskStore.Options.allowIntegrityViolations` opens it read-only for salvage.
  case integrityViolation(file: String, reason: String)
  /// Thrown when a system call fails: `ENOSPC` for a full disk, `EIO` for a failing device.
  /// After `ENOSPC` the store stays consistent and accepts writes again once space is free.
  case io(operation: String, path: String, errno: Int32)
  /// Thrown when the cryptographic layer fails for a reason other than a wrong password.
  case crypto(String)
}

extension CaskError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .wrongPassword:
      return "wrong password or keys for this store"
    case .notACaskStore(let path):
      return "\(path) is not a CipherCask store"
    case .storeNotFound(let path):
      return "\(path) does not exist"
    case .unsupportedVersion(let found, let supported):
      return "store format version \(found) is not one this library reads (it reads version \(supported))"
    case .locked(let path):
      return "store is locked by another process (\(path))"
    case .alreadyOpen(let path):
      return "store is already open in this process (\(path)); use that CaskStore or close it first"
    case .wrongCredentialType:
      return "the store was created with the other kind of credential (password or keys)"
    case .invalidKey(let reason):
      return "invalid key: \(reason)"
    case .valueTooLarge(let length, let maximum):
      return "value of \(length) bytes exceeds the maximum of \(maximum)"
    case .closed:
      return "the store is closed"
    case .readOnly:
      return "the store was opened read-only"
    case .reentrantCall(let operation):
      return
        "\(operation) was called from inside a transaction or change observer of the same store, "
        + "which holds its writer; do it after the transaction or observer has returned"
    case .writeRefused(let group, let reason):
      return "cannot write to '\(group)': \(reason)"
    case .corrupt(let file, let offset, let reason):
      return "corrupt data in \(file) at offset \(offset): \(reason)"
    case .integrityViolation(let file, let reason):
      return "integrity violation in \(file): \(reason)"
    case .io(let operation, let path, let code):
      return "\(operation) failed on \(path): \(String(cString: strerror(code))) (errno \(code))"
    case .crypto(let detail):
      return "cryptographic failure: \(detail)"
    }
  }
}

extension CaskError {
  /// `error` itself when the engine raised it, otherwise an `.io` failure of `operation` on
  /// `path` with `EIO`. Used where a failure is kept rather than thrown (a sticky writer
  /// failure, a background write's record), which holds only `CaskError`s: an error of another
  /// type is never dropped, it becomes the I/O failure it stands for.
  static func converting(_ error: any Error, operation: String, path: String) -> CaskError {
    error as? CaskError ?? .io(operation: operation, path: path, errno: EIO)
  }
}
