#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension FaultyFileSystem {
  /// The operations a `Fault` can fail.
  public enum Operation: Sendable, Hashable, CaseIterable {
    case open
    case read
    case write
    case sync
    case size
    case truncate
    case list
    case createDirectory
    case remove
    case rename
    case syncDirectory
    case lock

    /// The system call named in the error, as `PosixFileSystem` names it.
    var systemCall: String {
      switch self {
      case .open: return "open"
      case .read: return "pread"
      case .write: return "pwrite"
      case .sync: return "fdatasync"
      case .size: return "fstat"
      case .truncate: return "ftruncate"
      case .list: return "opendir"
      case .createDirectory: return "mkdir"
      case .remove: return "unlink"
      case .rename: return "rename"
      case .syncDirectory: return "fsync"
      case .lock: return "flock"
      }
    }
  }

  /// A failure to inject: matching operations fail with `errno`, after the first `after` of
  /// them have succeeded, `times` times (or for good when `nil`). A failed operation does
  /// nothing, except a failed `sync`, which loses the file's unsynced writes as Linux does
  /// after a writeback error: reads still see them, but a crash does not keep them.
  public struct Fault: Sendable {
    public var operations: Set<Operation>
    public var errno: Int32
    public var after: Int
    public var times: Int?
    public var paths: @Sendable (String) -> Bool

    /// - Parameters:
    ///   - operations: what to fail.
    ///   - errno: the error, `EIO` by default.
    ///   - after: matching operations let through first.
    ///   - times: how many to fail then; `nil` for every later one.
    ///   - paths: which paths; all by default.
    public init(
      _ operations: Set<Operation>, errno: Int32 = EIO, after: Int = 0, times: Int? = nil,
      paths: @escaping @Sendable (String) -> Bool = { _ in true }
    ) {
      self.operations = operations
      self.errno = errno
      self.after = after
      self.times = times
      self.paths = paths
    }
  }
}
