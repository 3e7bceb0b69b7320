/// What a `RecordingFileSystem` saw a workload do: the directory tree it started from, every
/// operation that changes what a crash could leave, in the order the file system took them,
/// and where the workload's steps began and were acknowledged.
///
/// Files and directories are named by node numbers, not paths, so that an operation stays
/// attached to its file when the file (or a directory above it) is renamed later: a write to an
/// open descriptor goes to the inode, and a directory sync makes that directory's entries
/// durable whatever its name is by then. Node 0 is the recording's root directory.
public struct CrashRecording: Sendable {
  /// One operation that a crash can keep, lose or tear.
  public enum Operation: Sendable, Equatable, CustomStringConvertible {
    /// A directory `node` made as `name` in `parent`.
    case makeDirectory(parent: Int, name: String, node: Int)
    /// An empty file `node` made as `name` in `parent` (an `open` with `.createNew`, or the
    /// lock file).
    case create(parent: Int, name: String, node: Int)
    /// `bytes` written at `offset` of file `node`; `mapped` when they were copied into a
    /// shared mapping of the file rather than written with `pwrite`.
    case write(node: Int, offset: Int, bytes: [UInt8], mapped: Bool)
    /// File `node` cut or extended to `length`.
    case truncate(node: Int, length: Int)
    /// `fsync` of file `node`: its bytes and length are durable once it returns.
    case syncFile(node: Int)
    /// `fsync` of directory `node`: its entries are durable once it returns.
    case syncDirectory(node: Int)
    /// `node` moved from `name` in `parent` to `newName` in `newParent`, replacing what was
    /// there.
    case rename(parent: Int, name: String, newParent: Int, newName: String, node: Int)
    /// The names `first` and `second` of directory `parent` swapped in one step.
    case exchange(parent: Int, first: String, second: String, firstNode: Int, secondNode: Int)
    /// The entry `name` (of `node`) removed from `parent`: a file's unlink or a directory's
    /// rmdir.
    case remove(parent: Int, name: String, node: Int)

    /// The directories whose sync makes this operation durable (empty for file data).
    public var directories: [Int] {
      switch self {
      case .makeDirectory(let parent, _, _), .create(let parent, _, _), .exchange(let parent, _, _, _, _),
        .remove(let parent, _, _):
        return [parent]
      case .rename(let parent, _, let newParent, _, _):
        return parent == newParent ? [parent] : [parent, newParent]
      case .write, .truncate, .syncFile, .syncDirectory:
        return []
      }
    }

    /// The file whose bytes this operation changes, if it does.
    public var dataNode: Int? {
      switch self {
      case .write(let node, _, _, _), .truncate(let node, _): return node
      default: return nil
      }
    }

    public var description: String {
      switch self {
      case .makeDirectory(let parent, let name, let node): return "mkdir \(parent)/\(name) (node \(node))"
      case .create(let parent, let name, let node): return "create \(parent)/\(name) (node \(node))"
      case .write(let node, let offset, let bytes, let mapped):
        return "\(mapped ? "mapped write" : "write") node \(node) [\(offset), \(offset + bytes.count))"
      case .truncate(let node, let length): return "truncate node \(node) to \(length)"
      case .syncFile(let node): return "fsync node \(node)"
      case .syncDirectory(let node): return "fsync directory node \(node)"
      case .rename(let parent, let name, let newParent, let newName, let node):
        return "rename \(parent)/\(name) -> \(newParent)/\(newName) (node \(node))"
      case .exchange(let parent, let first, let second, _, _): return "exchange \(parent)/\(first) <-> \(second)"
      case .remove(let parent, let name, let node): return "remove \(parent)/\(name) (node \(node))"
      }
    }
  }

  /// The tree the workload started from, all of it durable: directory node -> name -> node.
  public var baseEntries: [Int: [String: Int]] = [0: [:]]
  /// The bytes of the files the workload started from.
  public var baseFiles: [Int: [UInt8]] = [:]
  /// The operations, in the order the file system took them.
  public var operations: [Operation] = []
  /// For each step of the workload, the number of operations recorded when it began and
  /// when it returned (`nil` while it runs, or when it failed).
  public var steps: [(label: String, begin: Int, end: Int?)] = []

  public init() {}

  /// Operations of each kind, for reports: `writes` counts mapped ones too.
  public var counts: (writes: Int, mappedWrites: Int, fileSyncs: Int, directorySyncs: Int, entries: Int) {
    var result = (writes: 0, mappedWrites: 0, fileSyncs: 0, directorySyncs: 0, entries: 0)
    for operation in operations {
      switch operation {
      case .write(_, _, _, let mapped):
        result.writes += 1
        if mapped { result.mappedWrites += 1 }
      case .truncate: result.writes += 1
      case .syncFile: result.fileSyncs += 1
      case .syncDirectory: result.directorySyncs += 1
      default: result.entries += 1
      }
    }
    return result
  }
}
